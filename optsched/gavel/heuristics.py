r"""Allocations Gavel is compared with, scored under the same objective as the LP.

Each returns a feasible allocation :math:`X` of one round (Gavel's constraints (1)-(3),
:mod:`optsched.gavel.model`) and its value under ``objective``
(:func:`~optsched.gavel.model.objective_value`), so that the exact LP optimum
(:func:`optsched.gavel.exact.exact`) bounds each of them: for a maximised objective
:math:`v(X) \le v^*`, for a minimised one :math:`v(X) \ge v^*`.

* :func:`isolated` - Gavel's ``IsolatedPolicy``: every job a :math:`1/n` slice of each
  type it can use, :math:`X_{mk} = (c_k/n)/W_m`, rows scaled to :math:`\le 1`.
* :func:`agnostic` - the same objective's LP solved heterogeneity-agnostic (every usable
  type counted as throughput 1), the allocation then scored with the true throughputs:
  what ignoring heterogeneity costs (Gavel §7.2).
* :func:`fifo` - Gavel's FIFO as an allocation: jobs in arrival order each take the
  fastest type with :math:`W_m` free GPUs (:math:`X_{mk} = 1`), the first that fits no
  type stops the pass.
* :func:`rounds` - the round mechanism (:mod:`optsched.gavel.policy`) run for ``rounds``
  rounds on the LP's :math:`X`: the time fractions it realises, scored. How closely the
  mechanism tracks :math:`X` (Gavel §5).

No approximation ratio is proved for any of them. Complexity: :func:`isolated` and
:func:`fifo` :math:`O(nK)`; :func:`agnostic` one LP; :func:`rounds` one LP plus
``rounds`` passes of the mechanism, :math:`O(\text{rounds} \cdot nK \log(nK))`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.gavel.exact import (
    exact,
    finish_time_fairness,
    max_min_fairness,
    max_sum_throughput,
    min_total_duration,
)
from optsched.gavel.model import OBJECTIVES, isolated_share, objective_value, round_state
from optsched.gavel.policy import realised_fractions
from optsched.options import declares

__all__ = ["isolated", "agnostic", "fifo", "rounds"]

NO_RATIO = "no approximation ratio against the LP optimum is proved"


def _result(state, X: np.ndarray, objective: str, method: str, seconds: float,
            **extra: Any) -> Result:
    return Result(status=Status.FEASIBLE, objective=objective_value(state, X, objective),
                  model="gavel", method=method, solve_seconds=seconds, values={"X": X},
                  ratio_note=NO_RATIO, extra={"objective_kind": objective, **extra})


def _check(objective: str) -> None:
    from optsched.errors import InvalidOption

    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {sorted(OBJECTIVES)}")


@declares()
def isolated(instance: Instance, *, objective: str = "max_min_fairness") -> Result:
    r"""Gavel's isolated allocation (every job a :math:`1/n` slice), scored under ``objective``.

    Parameters
    ----------
    instance : Instance
        The round's active jobs and cluster.
    objective : str
        The objective it is scored under (:data:`optsched.gavel.model.OBJECTIVES`).

    Returns
    -------
    Result
        ``objective`` the allocation's value, ``values["X"]`` the allocation.

    Guarantee
    ---------
    Feasible for (1)-(3), so :math:`v(X^{iso}) \le v^*` (maximised) or
    :math:`v(X^{iso}) \ge v^*` (minimised). No approximation ratio is proved.

    Complexity
    ----------
    :math:`O(nK)`.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4 (:math:`X^{isolated}`); Gavel's
      ``IsolatedPolicy``.
    """
    _check(objective)
    t0 = time.perf_counter()
    s = round_state(instance)
    return _result(s, isolated_share(s.T, s.W, s.c), objective, "isolated",
                   time.perf_counter() - t0)


@declares()
def fifo(instance: Instance, *, objective: str = "max_min_fairness") -> Result:
    r"""Gavel's FIFO as a 0/1 allocation, scored under ``objective``.

    Jobs in arrival order each take the fastest GPU type with :math:`W_m` free GPUs; the
    first job that fits no type ends the pass.

    Parameters
    ----------
    instance : Instance
        The round's active jobs and cluster.
    objective : str
        The objective it is scored under (:data:`optsched.gavel.model.OBJECTIVES`).

    Returns
    -------
    Result
        ``objective`` the allocation's value, ``values["X"]`` the allocation.

    Guarantee
    ---------
    Feasible for (1)-(3), so :math:`v(X^{fifo}) \le v^*` (maximised) or
    :math:`v(X^{fifo}) \ge v^*` (minimised). No approximation ratio is proved.

    Complexity
    ----------
    :math:`O(nK)`.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4 (FIFO); Gavel's ``fifo.py`` (``perf`` mode).
    """
    _check(objective)
    t0 = time.perf_counter()
    s = round_state(instance)
    X = np.zeros_like(s.T)
    free = s.c.copy()
    for m in np.argsort(instance.arrivals, kind="stable"):
        usable = np.flatnonzero((s.T[m] > 0) & (free >= s.W[m]))
        if usable.size == 0:
            break  # head-of-line blocking
        k = int(usable[np.argmax(s.T[m, usable])])
        X[m, k] = 1.0
        free[k] -= s.W[m]
    return _result(s, X, objective, "fifo", time.perf_counter() - t0)


@declares(solver=True)
def agnostic(instance: Instance, backend: str = "highs", *,
             objective: str = "max_min_fairness", **options: Any) -> Result:
    r"""The objective's LP solved heterogeneity-agnostic, its allocation scored with the true
    throughputs: what ignoring heterogeneity costs.

    Every usable GPU type counts as throughput 1 in the LP; the resulting allocation is then
    scored with the instance's real throughputs.

    Parameters
    ----------
    instance : Instance
        The round's active jobs and cluster.
    backend : str
        Solver backend of the LP.
    objective : str
        The objective (:data:`optsched.gavel.model.OBJECTIVES`).
    **options
        Solver options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    Result
        ``objective`` the allocation's true value, ``values["X"]`` the allocation.

    Guarantee
    ---------
    Feasible for (1)-(3), so :math:`v(X^{agn}) \le v^*` (maximised) or
    :math:`v(X^{agn}) \ge v^*` (minimised). No ratio is proved; Gavel reports the gap as
    up to 3.5x in mean JCT over a whole trace.

    Complexity
    ----------
    One LP of the size of :func:`exact`'s (max-min: a second of the same size when the
    type-symmetric proportional split does not fit, see
    :func:`optsched.gavel.exact.max_min_fairness`).

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §7.2 (heterogeneity-agnostic baselines).
    """
    _check(objective)
    t0 = time.perf_counter()
    s = round_state(instance)
    blind = (s.T > 0).astype(float)
    if objective == "max_min_fairness":
        sol = max_min_fairness(s.T, s.W, s.c, s.w, agnostic=True, backend=backend,
                                  **options)
    elif objective == "makespan":
        sol = min_total_duration(blind, s.W, s.c, s.r, backend=backend, **options)
    elif objective == "max_sum_throughput":
        sol = max_sum_throughput(blind, s.W, s.c, backend=backend, **options)
    else:
        iso = s.W * (blind * isolated_share(blind, s.W, s.c)).sum(axis=1)
        sol = finish_time_fairness(blind, s.W, s.c, s.r, s.elapsed,
                                      isolated_time=s.r / iso, backend=backend, **options)
    if not sol.ok:
        return Result(status=sol.status, model="gavel", method="agnostic",
                      message=sol.result.message if sol.result is not None else "")
    return _result(s, sol.X, objective, "agnostic", time.perf_counter() - t0)


@declares(solver=True)
def rounds(instance: Instance, backend: str = "highs", *,
           objective: str = "max_min_fairness", rounds: int = 200,
           **options: Any) -> Result:
    r"""The time fractions Gavel's round mechanism realises for the LP's allocation, scored
    under ``objective``.

    The mechanism (:mod:`optsched.gavel.policy`) runs ``rounds`` rounds on the optimal
    :math:`X^*` of :func:`exact`, placing jobs by priority :math:`X^*_{mk}/f_{mk}`; the
    realised fractions :math:`f` are the allocation scored.

    Parameters
    ----------
    instance : Instance
        The round's active jobs and cluster.
    backend : str
        Solver backend of the LP.
    objective : str
        The objective (:data:`optsched.gavel.model.OBJECTIVES`).
    rounds : int
        Number of rounds simulated (default 200).
    **options
        Solver options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    Result
        ``objective`` the value of :math:`f`, ``values["X"]`` the fractions,
        ``extra["max_deviation"]`` :math:`\max_{mk} |f_{mk} - X^*_{mk}|`.

    Guarantee
    ---------
    :math:`f` is feasible for (1)-(3), so :math:`v(f) \le v^*` (maximised) or
    :math:`v(f) \ge v^*` (minimised). The paper claims :math:`f \to X^*` as rounds grow; no
    rate is proved, and gangs that cannot share a round's GPUs may not converge (measured
    by ``max_deviation``).

    Complexity
    ----------
    One LP plus :math:`O(\text{rounds} \cdot nK \log(nK))` for the mechanism.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §3.2 and §5 (Algorithm 1, the round-based
      mechanism).
    """
    t0 = time.perf_counter()
    ex = exact(instance, backend=backend, objective=objective, **options)
    if not ex.success:
        return ex.replace(method="rounds", objective=None, bound=None)
    X = ex.values["X"]
    f = realised_fractions(instance, X, rounds)
    s = round_state(instance)
    return _result(s, f, objective, "rounds", time.perf_counter() - t0, rounds=rounds,
                   max_deviation=float(np.abs(f - X).max(initial=0.0)))
