"""AlloX's view of an instance: single machines and a processing-time matrix.

AlloX (Le et al., EuroSys'20) schedules jobs on *interchangeable* resources: each job
runs on exactly one machine and takes ``p[m, j]`` seconds there. In optsched a machine
is one GPU (node, GPU type, index) and ``p[m, j] = work_j / throughput_j[type(m)]``
(``inf`` where the job cannot run on that type). Jobs are therefore single-worker; a
gang job is outside the model (:class:`~optsched.errors.ModelNotApplicable`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optsched.core.instance import Instance
from optsched.errors import ModelNotApplicable

__all__ = ["Machines", "machines_of"]


@dataclass(frozen=True)
class Machines:
    """Machines of an instance: ``node[m]``, ``gpu_type[m]`` and ``p[m, j]`` (seconds)."""

    node: tuple[str, ...]
    gpu_type: tuple[str, ...]
    p: np.ndarray

    @property
    def count(self) -> int:
        return len(self.node)


def machines_of(instance: Instance) -> Machines:
    for i, j in enumerate(instance.jobs):
        if j.workers != 1:
            raise ModelNotApplicable(
                f"jobs[{i}].workers", j.workers,
                "AlloX places each job on one machine (one GPU); gang jobs are outside its "
                "model (Le et al., EuroSys'20, §3)")
    nodes: list[str] = []
    types: list[str] = []
    for n in instance.cluster.nodes:
        for t in sorted(n.gpus):
            nodes += [n.name] * n.gpus[t]
            types += [t] * n.gpus[t]
    rate = np.array([[j.rate(t) for j in instance.jobs] for t in types], dtype=float)
    work = instance.work[None, :]
    with np.errstate(divide="ignore"):
        p = np.where(rate > 0, work / np.where(rate > 0, rate, 1.0), np.inf)
    return Machines(tuple(nodes), tuple(types), p.reshape(len(types), instance.n_jobs))
