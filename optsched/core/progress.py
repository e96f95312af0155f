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

Progress rules
--------------
A schedule (and a simulator policy) declares one ``progress_rule``
(:data:`PROGRESS_RULES`); the validator and the simulator apply the same one.

* ``"gang"`` (default): the rule above. Without forking a gang holds exactly
  :math:`W_j` GPUs; it runs at :math:`W_j \min_a \tau_{j,k_a}`.
* ``"partial"`` (fewer-than-:math:`W` gangs): a gang may hold any
  :math:`1 \le g \le W_j` GPUs (over any nodes and types) and runs at
  :math:`g \min_a \tau_{j,k_a}`: each worker processes its own mini-batch at the
  per-worker rate of the slowest type used, so a gang of :math:`g` workers makes
  :math:`g/W_j` of the full gang's progress (linear weak scaling; the job's total
  batch and its statistical efficiency per iteration are taken as unchanged).
* ``"additive"`` (OASiS's rule, Bao et al., INFOCOM 2018, §III: a job's training
  progress in a slot is the sum of what each of its workers processes): a gang of
  exactly :math:`W_j` GPUs runs at :math:`\sum_a g_a \tau_{j,k_a}`, each worker at its
  own type's rate, nobody waiting for the slowest (asynchronous updates). OASiS also
  lets the number of workers vary per slot; here the width stays :math:`W_j` so that
  only the rate differs from ``"gang"``.

Co-location
-----------
A part that names a ``partner`` (space sharing, :mod:`optsched.core.colocation`) runs at
the job's co-located per-worker rate with that partner on its type in place of
:math:`\tau_{j,k_a}`, in every rule above.

The share factor and the CPU/DRAM sensitivity multiply every rule alike. With forking
each copy's rate follows the rule and the copies' rates add up (a copy then holds
1..:math:`W_j` GPUs on one node under every rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from optsched.core.instance import Job
from optsched.errors import InvalidOption

__all__ = ["gang_rate", "PROGRESS_RULES", "check_progress_rule"]

#: The progress rules a schedule or a policy may declare (module docstring).
PROGRESS_RULES = ("gang", "partial", "additive")


def check_progress_rule(rule: Any, name: str = "progress_rule") -> str:
    """``rule`` if it is one of :data:`PROGRESS_RULES`, else
    :class:`~optsched.errors.InvalidOption` naming ``name`` and the value."""
    if not isinstance(rule, str) or rule not in PROGRESS_RULES:
        raise InvalidOption(name, rule, f"must be one of {', '.join(PROGRESS_RULES)}")
    return rule


#: ``pair_rate(job_id, partner_id, gpu_type)``: a co-located per-worker rate, or None.
PairRateFn = Callable[[str, str, str], "float | None"]


def gang_rate(job: Job, parts: Sequence[Any], resource_sensitive: bool = False,
              rule: str = "gang", pair_rate: PairRateFn | None = None) -> float:
    """Iterations/s of ``job``'s gang ``parts`` (objects with ``gpus``, ``gpu_type``,
    ``share``, ``cpus``, ``memory`` and ``partner``:
    :class:`~optsched.core.schedule.Allocation` or
    :class:`~optsched.sim.policy.Placement`) under progress rule ``rule``; see the
    module docstring. A part naming a partner runs at ``pair_rate(job.id, partner,
    gpu_type)`` per worker (0 when ``pair_rate`` is not given or has no rate: the
    caller's checks refuse such a part first). The gang's width is not checked here
    (:func:`optsched.core.rules.gang_error`)."""
    if rule not in PROGRESS_RULES:
        check_progress_rule(rule, "rule")
    if any(getattr(p, "partner", None) is not None for p in parts):
        return _colocated_rate(job, parts, resource_sensitive, rule, pair_rate)
    share = min(p.share for p in parts)
    if job.compute_share is not None:
        share = min(1.0, share / job.compute_share)
    if rule == "additive":
        speed = float(sum(p.gpus * job.rate(p.gpu_type) for p in parts))
        if resource_sensitive and job.sensitivity is not None:
            speed *= min(job.sensitivity.relative(p.cpus / p.gpus, p.memory / p.gpus)
                         for p in parts)
        return share * speed
    # this order of operations keeps "gang" rates bit-identical to earlier runs
    g = sum(p.gpus for p in parts)
    rate = min(job.rate(p.gpu_type) for p in parts)
    if resource_sensitive and job.sensitivity is not None:
        rate *= min(job.sensitivity.relative(p.cpus / p.gpus, p.memory / p.gpus)
                    for p in parts)
    return share * g * rate


def _colocated_rate(job: Job, parts: Sequence[Any], resource_sensitive: bool, rule: str,
                    pair_rate: PairRateFn | None) -> float:
    """:func:`gang_rate` of a gang some of whose parts share their GPUs with a partner."""
    def tau(p: Any) -> float:
        if p.partner is None:
            return job.rate(p.gpu_type)
        r = pair_rate(job.id, p.partner, p.gpu_type) if pair_rate is not None else None
        return 0.0 if r is None else float(r)

    share = min(p.share for p in parts)
    if job.compute_share is not None:
        share = min(1.0, share / job.compute_share)
    rho = 1.0
    if resource_sensitive and job.sensitivity is not None:
        rho = min(job.sensitivity.relative(p.cpus / p.gpus, p.memory / p.gpus) for p in parts)
    if rule == "additive":
        return share * float(sum(p.gpus * tau(p) for p in parts)) * rho
    g = sum(p.gpus for p in parts)
    return share * g * (min(tau(p) for p in parts) * rho)
