r"""Gavel's makespan allocation as its own code returns it: an interior point of the
feasibility LP at the makespan where its bisection stops.

:func:`optsched.gavel.exact.min_total_duration` returns an exact optimum, a vertex in
which every job runs at just the rate that ends it at the optimal makespan :math:`M^*`.
Gavel's ``MinTotalDurationPolicyWithPerf`` does something else: it bisects on the
makespan :math:`M` over the feasibility LP

.. math::
    \text{find } X \quad\text{s.t.}\quad W_m \sum_k T_{mk} X_{mk} \ge r_m / M
    \ (\forall m), \quad \text{(1)-(3)}

from the bracket :math:`[100, 10^6]` s (widened tenfold while nothing is feasible)
until the bracket is within 5 %, and keeps the point its interior-point solver (ECOS)
returned at the smallest feasible :math:`M` it tried. That :math:`M_G` is up to 5 %
above :math:`M^*`, and an interior point of a feasibility problem spreads the slack over
every job: jobs off the critical path run faster than the vertex's pacing, and finish
earlier.

:func:`gavel_bisection_makespan` replays Gavel's bisection on the exact :math:`M^*`
(its feasibility test is :math:`M \ge M^*`), and :func:`min_total_duration_interior`
solves the feasibility LP at :math:`M_G` with HiGHS's interior-point method, no
objective, no crossover and no presolve, so the point returned is on the way to the
analytic centre of the feasible set rather than a vertex. Which interior point an
interior-point method stops at is not specified by either solver; this one is the same
kind of point, not ECOS's to the digit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.core.result import Status
from optsched.errors import InvalidOption
from optsched.gavel.exact import min_total_duration
from optsched.gavel.model import LPAllocation, _arrays, allocation_program, repair_allocation
from optsched.solvers import solve_program

__all__ = ["gavel_bisection_makespan", "min_total_duration_interior", "INTERIOR_OPTIONS"]

#: HiGHS options for an interior point of a feasibility LP.
INTERIOR_OPTIONS = {"solver": "ipm", "run_crossover": "off", "presolve": "off"}


def gavel_bisection_makespan(optimum: float, lo: float = 100.0, hi: float = 1e6,
                             ratio: float = 1.05) -> float:
    r"""The makespan at which Gavel's bisection stops when the optimum is ``optimum``.

    Gavel's loop (``min_total_duration.py``): while ``ratio * lo < hi``, try
    :math:`M = (lo + hi)/2`; feasible (here: :math:`M \ge M^*`) sets ``hi = M`` and keeps
    the point, otherwise ``lo = M``; with no feasible point the bracket moves to
    ``[hi, 10 hi]``. Returns the smallest feasible :math:`M` tried. Guarantee:
    :math:`M^* \le M_G`, and :math:`M_G < 1.05\, M^*` when :math:`M^* > 100` s (the
    loop ends with an infeasible ``lo`` < :math:`M^*` and ``hi`` = :math:`M_G \le`
    1.05 ``lo``; below 100 s every point tried is feasible and :math:`M_G` ends within
    5 % of 100 s).
    """
    if not (np.isfinite(optimum) and optimum > 0):
        raise InvalidOption("optimum", optimum, "must be a finite number > 0")
    last_hi, found = hi, None
    while found is None:
        while ratio * lo < hi:
            mid = 0.5 * (lo + hi)
            if mid >= optimum:
                found, hi = mid, mid
            else:
                lo = mid
        lo, hi, last_hi = last_hi, 10.0 * last_hi, 10.0 * last_hi
    return float(found)


def min_total_duration_interior(T, workers, capacity, remaining, *, backend: str = "highs",
                                **solve_options: Any) -> LPAllocation:
    r"""Gavel's makespan allocation: an interior point of the feasibility LP at the
    makespan :math:`M_G` where Gavel's bisection stops (module docstring).

    Parameters
    ----------
    T, workers, capacity, remaining
        As :func:`optsched.gavel.exact.min_total_duration`.
    backend : str
        Must be ``"highs"`` (the interior-point options are HiGHS's).
    **solve_options
        Options for :func:`optsched.solvers.solve_program` (both LPs).

    Returns
    -------
    LPAllocation
        ``objective`` the makespan :math:`\max_m r_m/\mathrm{thr}_m(\hat X)` of the
        point returned (at most :math:`M_G`, up to the solver's tolerance);
        ``info["optimum"]`` :math:`M^*`, ``info["bisection_makespan"]`` :math:`M_G`.

    Guarantee
    ---------
    :math:`M^* \le \max_m r_m/\mathrm{thr}_m(\hat X) \le M_G`, and
    :math:`M_G < 1.05\,M^*` when :math:`M^* > 100` s (within the solver's feasibility
    tolerance; :func:`gavel_bisection_makespan`).

    Complexity
    ----------
    The exact makespan program (:func:`min_total_duration`), then one LP with
    :math:`nK` columns and :math:`2n + K` rows, solved by interior point.
    """
    if backend != "highs":
        raise InvalidOption("backend", backend, "the interior point is HiGHS's ipm: 'highs'")
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    exact = min_total_duration(T, W, c, remaining, backend=backend, **solve_options)
    if not exact.ok or n == 0:
        return exact
    r = np.asarray(remaining, dtype=float).reshape(n)
    M_star = float(exact.objective)   # type: ignore[arg-type]
    M_g = gavel_bisection_makespan(M_star)
    R = (W[:, None] * T) * (M_g / r)[:, None]     # rows: R X >= 1, scaled per row
    rmax = R.max(axis=1)
    lp, X = allocation_program(T, W, c, sense="max", name="gavel_makespan_interior")
    m_i, k_i = np.nonzero(R > 0)
    lp.add_constraints("finish_by", rows=m_i, cols=X.index[m_i, k_i],
                       vals=(R / rmax[:, None])[m_i, k_i], lb=1.0 / rmax, n_rows=n)
    opts = dict(solve_options)
    opts["options"] = {**dict(opts.get("options") or {}), **INTERIOR_OPTIONS}
    res = solve_program(lp.freeze(), backend, **opts)
    seconds = exact.seconds + res.seconds
    if not res.success:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            lp_solves=exact.lp_solves + 1, seconds=seconds)
    Xs = repair_allocation(res.values["X"], T, W, c)
    thr = W * (T * Xs).sum(axis=1)
    value = float(np.max(r / np.maximum(thr, 1e-300)))
    return LPAllocation(Xs, value, Status.OPTIMAL, res, lp_solves=exact.lp_solves + 1,
                        seconds=seconds,
                        info={"optimum": M_star, "bisection_makespan": M_g})
