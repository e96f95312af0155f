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

from optsched.core.instance import Cluster, Instance
from optsched.errors import ModelNotApplicable

__all__ = ["Machines", "machines_of", "machine_slots", "processing_times",
           "single_worker"]


@dataclass(frozen=True)
class Machines:
    """Machines of an instance: ``node[m]``, ``gpu_type[m]`` and ``p[m, j]`` (seconds)."""

    node: tuple[str, ...]
    gpu_type: tuple[str, ...]
    p: np.ndarray

    @property
    def count(self) -> int:
        return len(self.node)


def machine_slots(cluster: Cluster) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Node and GPU type of each machine: nodes in cluster order, each node's types in
    sorted order, one machine per GPU. The heuristics, the exact matching and the
    simulator policy all number machines this way, so their tie-breaks agree."""
    nodes: list[str] = []
    types: list[str] = []
    for n in cluster.nodes:
        for t in sorted(n.gpus):
            nodes += [n.name] * n.gpus[t]
            types += [t] * n.gpus[t]
    return tuple(nodes), tuple(types)


def processing_times(work: np.ndarray | float, rate: np.ndarray) -> np.ndarray:
    """``p = work / rate`` elementwise (broadcast), ``inf`` where ``rate <= 0``.

    One formula for the offline matrix and the online policy, so both compute the same
    floating-point processing times.
    """
    rate = np.asarray(rate, dtype=float)
    return np.where(rate > 0, work / np.where(rate > 0, rate, 1.0), np.inf)


def single_worker(instance: Instance) -> None:
    """Raise :class:`~optsched.errors.ModelNotApplicable` naming ``jobs[i].workers`` for
    the first job with more than one worker."""
    for i, j in enumerate(instance.jobs):
        if j.workers != 1:
            raise ModelNotApplicable(
                f"jobs[{i}].workers", j.workers,
                "AlloX places each job on one machine (one GPU); gang jobs are outside its "
                "model (Le et al., EuroSys'20, §3)")


def machines_of(instance: Instance) -> Machines:
    """AlloX's machines of ``instance``: one per GPU, nodes in cluster order and each
    node's types sorted (:func:`machine_slots`), with ``p[m, j] = work_j /
    throughput_j[type(m)]`` seconds (``inf`` where job ``j`` cannot run on that type).

    Raises :class:`~optsched.errors.ModelNotApplicable` naming ``jobs[i].workers`` for a
    gang job: AlloX runs each job on one GPU. :math:`O(Mn)` for :math:`M` GPUs and
    :math:`n` jobs. A heuristic of your own plans on these machines and returns
    :func:`optsched.allox.plan_result` of its plan.
    """
    single_worker(instance)
    nodes, types = machine_slots(instance.cluster)
    rate = np.array([[j.rate(t) for j in instance.jobs] for t in types], dtype=float)
    p = processing_times(instance.work[None, :], rate)
    return Machines(nodes, types, p.reshape(len(types), instance.n_jobs))
