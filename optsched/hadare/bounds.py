r"""Bounds on HadarE's optimum.

:func:`lp_bound`: the LP relaxation of the forking MILP (:mod:`optsched.hadare.exact`,
all integrality dropped) is a bound on the slot model's optimum: an upper bound for the
total utility (:math:`\mathrm{LP} \ge \mathrm{OPT}`), a lower bound for the makespan
and the total JCT (:math:`\mathrm{LP} \le \mathrm{OPT}`).

:func:`time_bounds`: closed-form lower bounds on the makespan and the mean JCT of *every*
schedule of an instance in continuous time, without forking (the *no-fork bound*: a job
never runs faster than its whole gang on its fastest type) or with forking under a copy
efficiency and a cap on copies. A HadarE result below the no-fork bound is a gain no
schedule without forking can reach: it comes from the forking assumption.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.options import declares

__all__ = ["lp_bound", "time_bounds", "TimeBounds"]


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", *, slots: int | None = None,
             slot: float | None = None, max_slots: int | None = None,
             max_columns: int | None = None, objective: str = "utility",
             consolidation: Any = None, consolidation_slots: Any = None,
             max_copies: Any = None, copy_efficiency: float = 1.0,
             **options: Any) -> Result:
    r"""The LP relaxation of HadarE's MILP as ``bound``: :func:`optsched.hadare.exact.exact` with
    ``relax=True`` and the same options.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    backend : str
        Solver backend.
    slots, slot, max_slots, max_columns, objective, consolidation, consolidation_slots
        As :func:`optsched.hadare.exact.exact`.
    max_copies, copy_efficiency
        As :func:`optsched.hadare.exact.exact`.
    **options
        Solver options.

    Returns
    -------
    Result
        ``bound`` the LP optimum, ``objective=None``.

    Guarantee
    ---------
    :math:`\mathrm{LP} \ge \mathrm{OPT}` for ``"utility"``, :math:`\mathrm{LP} \le
    \mathrm{OPT}` for ``"makespan"`` and ``"jct"``.

    Complexity
    ----------
    One LP, polynomial; size as :func:`optsched.hadare.exact.exact`.

    References
    ----------
    * Sultana et al., arXiv:2503.10918, 2025 (HadarE).
    """
    from optsched.hadare.exact import exact

    grid = {k: v for k, v in (("max_slots", max_slots), ("max_columns", max_columns))
            if v is not None}
    return exact(instance, backend=backend, slots=slots, slot=slot, objective=objective,
                 consolidation=consolidation, consolidation_slots=consolidation_slots,
                 max_copies=max_copies, copy_efficiency=copy_efficiency, relax=True, **grid,
                 **options)


@dataclass(frozen=True)
class TimeBounds:
    """Lower bounds (seconds): ``makespan`` = max(``critical_path``, ``load``),
    ``mean_jct``; ``fastest[j]`` the least time job ``j`` can take from its arrival."""

    makespan: float
    critical_path: float
    load: float
    mean_jct: float
    fastest: np.ndarray


def time_bounds(instance: Instance, *, forking: bool = False, copy_efficiency: float = 1.0,
                max_copies: Any = None) -> TimeBounds:
    r"""Lower bounds on the makespan (:math:`\max_j C_j - \min_j a_j`) and the mean JCT
    of every schedule of ``instance``, in continuous time.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    forking : bool
        ``False``: schedules without forking (a job runs one gang of at most
        :math:`W_j` GPUs); ``True``: HadarE's forking model with ``copy_efficiency``
        :math:`e` (every copy but one progresses at :math:`e` times its rate) and at most
        :math:`F_j` copies (``max_copies``, as :func:`optsched.hadare.model.max_copies_of`).
    copy_efficiency : float
        :math:`e \in (0, 1]`.
    max_copies : optional
        :math:`F_j`.

    Returns
    -------
    TimeBounds
        With :math:`\tau_j = \max_k\tau_{jk}` and the job's top rate
        :math:`R_j = W_j\tau_j` (no forking) or :math:`W_j\tau_j(1 + e(F_j - 1))`
        (forking): ``fastest`` :math:`E_j/R_j`, ``critical_path``
        :math:`\max_j(a_j + E_j/R_j) - \min_j a_j`, ``load``
        :math:`\max_s\big(s + \sum_{j: a_j \ge s} (E_j/\tau_j)/C\big) - \min_j a_j` over the
        arrival instants :math:`s` (:math:`C` GPUs, each giving job :math:`j` at most
        :math:`\tau_j` iterations per second, forked or not), ``mean_jct`` the mean of
        ``fastest``.

    Guarantee
    ---------
    For every schedule :math:`S` of the model: :math:`\text{makespan}(S) \ge`
    ``makespan`` and :math:`\overline{\text{JCT}}(S) \ge` ``mean_jct``.

    Complexity
    ----------
    :math:`O(nK + n\log n)`.

    References
    ----------
    * Sultana et al., arXiv:2503.10918, 2025 (HadarE: the forking model).
    * The standard critical-path and load bounds of makespan scheduling.
    """
    from optsched.errors import InvalidOption
    from optsched.hadare.model import max_copies_of

    e = copy_efficiency
    if isinstance(e, bool) or not isinstance(e, (int, float, np.integer, np.floating)) \
            or not (0 < float(e) <= 1):
        raise InvalidOption("copy_efficiency", e, "must be a number in (0, 1]")
    n = instance.n_jobs
    if n == 0:
        return TimeBounds(0.0, 0.0, 0.0, 0.0, np.zeros(0))
    tau = instance.throughput_matrix.max(axis=1)
    W = instance.workers.astype(float)
    rate = W * tau
    if forking:
        F = max_copies_of(instance, max_copies).astype(float)
        rate = rate * (1.0 + float(e) * (F - 1.0))
    fastest = instance.work / rate
    a = instance.arrivals.astype(float)
    start = float(a.min())
    crit = float((a + fastest).max()) - start
    order = np.argsort(a, kind="stable")
    gpu_seconds = (instance.work / tau)[order]
    suffix = np.cumsum(gpu_seconds[::-1])[::-1] / instance.cluster.total_gpus
    load = float((a[order] + suffix).max()) - start
    mk = max(crit, load)
    assert math.isfinite(mk)
    return TimeBounds(mk, crit, load, float(fastest.mean()), fastest)
