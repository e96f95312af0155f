r"""Closed-form bounds on the optimum of one round's allocation (certificates that hold
for every feasible :math:`X` of Gavel's constraints (1)-(3), :mod:`optsched.gavel.model`).

* max-min fairness: with :math:`\bar a_m = \max_k a_{mk}` (the best normalised rate of
  job m), every job needs :math:`\sum_k X_{mk} \ge z / \bar a_m`, so
  :math:`z \le \bar a_m` (one job alone) and, summing the GPU time,
  :math:`\sum_m W_m z / \bar a_m \le \sum_k c_k`:

  .. math:: z^* \le \min\Big(\min_m \bar a_m,\ \frac{\sum_k c_k}{\sum_m W_m / \bar a_m}\Big).

* makespan: with :math:`\bar T_m = \max_k T_{mk}`, a job never runs faster than on its
  best type with its whole gang, and the cluster's GPU-seconds cover the work at best
  speeds:

  .. math:: M^* \ge \max\Big(\max_m \frac{r_m}{W_m \bar T_m},\
            \frac{\sum_m r_m / \bar T_m}{\sum_k c_k}\Big).

* total throughput: :math:`\sum_m \mathrm{thr}_m \le \min\big(\sum_m W_m \bar T_m,\
  \sum_k c_k \max_m T_{mk}\big)`.
* finish-time fairness: :math:`\rho^* \ge \max_m (t_m + r_m/(W_m \bar T_m)) / d_m`.

Complexity :math:`O(nK)`.
"""

from __future__ import annotations

import time

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.errors import InvalidOption
from optsched.gavel.model import OBJECTIVES, isolated_share, normalised_rates, round_state
from optsched.options import declares

__all__ = ["bound"]


@declares()
def bound(instance: Instance, *, objective: str = "max_min_fairness") -> Result:
    r"""A closed-form bound on one round's optimum for ``objective``, without an LP.

    Parameters
    ----------
    instance : Instance
        The round's active jobs and cluster.
    objective : str
        One of :data:`optsched.gavel.model.OBJECTIVES`.

    Returns
    -------
    Result
        ``bound`` holds the bound (``objective`` is ``None``).

    Guarantee
    ---------
    :math:`v^* \le \text{bound}` for the maximised objectives (max-min fairness, total
    throughput) and :math:`v^* \ge \text{bound}` for the minimised ones (makespan,
    finish-time fairness), with :math:`v^*` the LP optimum of :func:`exact`; the formulas
    and their proofs are in the module docstring.

    Complexity
    ----------
    :math:`O(nK)`.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §3.1 (constraints (1)-(3)), §4 (objectives).
    """
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {sorted(OBJECTIVES)}")
    t0 = time.perf_counter()
    s = round_state(instance)
    best = s.T.max(axis=1)
    if s.n == 0:
        value = 0.0
    elif objective == "max_min_fairness":
        a = normalised_rates(s.T, s.W, s.c, s.w).max(axis=1)
        value = float(min(a.min(), s.c.sum() / (s.W / a).sum()))
    elif objective == "makespan":
        value = float(max((s.r / (s.W * best)).max(), (s.r / best).sum() / s.c.sum()))
    elif objective == "max_sum_throughput":
        value = float(min((s.W * best).sum(), (s.c * s.T.max(axis=0)).sum()))
    else:
        iso = s.W * (s.T * isolated_share(s.T, s.W, s.c)).sum(axis=1)
        d = s.r / iso
        value = float(((s.elapsed + s.r / (s.W * best)) / d).max())
    sense = OBJECTIVES[objective][0]
    return Result(status=Status.OPTIMAL, bound=value, model="gavel", method="bound",
                  solve_seconds=time.perf_counter() - t0,
                  ratio_note=f"closed-form {'upper' if sense == 'max' else 'lower'} bound on "
                             f"the round's optimum ({objective})",
                  extra={"objective_kind": objective})
