r"""The one progress rule shared by the validator and the simulator.

A gang -- the allocations (or simulator placements) of one (job, copy) active at one
instant -- progresses at

.. math::

    \underbrace{\min\Big(1, \frac{\min_a s_a}{u_j}\Big)}_{\text{share factor}}
    \cdot \sum_a g_a \cdot \min_a \tau_{j,k_a}
    \cdot \underbrace{\min_a \rho_j\big(c_a / g_a,\; m_a / g_a\big)}_{\text{if sensitive}}

iterations/s: :math:`g_a` GPUs of type :math:`k_a` at share :math:`s_a` with
:math:`c_a` CPU cores and :math:`m_a` GB of DRAM; :math:`\tau` the per-worker throughput
(synchronous data parallelism waits for the slowest worker); :math:`u_j` the job's
``compute_share`` (the share factor is :math:`s` alone when it is unset);
:math:`\rho_j` the job's :meth:`~optsched.core.instance.Sensitivity.relative` (jobs without
a sensitivity, or schedules that are not resource-sensitive: 1). With forking the
copies' rates add up. :mod:`optsched.core.validate` credits exactly this and
:mod:`optsched.sim.simulator` advances jobs by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from optsched.core.instance import Job

__all__ = ["gang_rate"]


def gang_rate(job: Job, parts: Sequence[Any], resource_sensitive: bool = False) -> float:
    """Iterations/s of ``job``'s gang ``parts`` (objects with ``gpus``, ``gpu_type``,
    ``share``, ``cpus``, ``memory``: :class:`~optsched.core.schedule.Allocation` or
    :class:`~optsched.sim.policy.Placement`); see the module docstring."""
    g = sum(p.gpus for p in parts)
    rate = min(job.rate(p.gpu_type) for p in parts)
    share = min(p.share for p in parts)
    if job.compute_share is not None:
        share = min(1.0, share / job.compute_share)
    if resource_sensitive and job.sensitivity is not None:
        rate *= min(job.sensitivity.relative(p.cpus / p.gpus, p.memory / p.gpus)
                    for p in parts)
    return share * g * rate
