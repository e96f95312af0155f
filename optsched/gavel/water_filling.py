r"""Gavel's hierarchical max-min fairness by water filling (Narayanan et al., OSDI'20,
§4, hierarchical policies, and Gavel's ``max_min_fairness_water_filling.py``).

Max-min fairness (:func:`optsched.gavel.exact.max_min_fairness`) raises the smallest
normalised throughput :math:`y_m(X) = \sum_k a_{mk} X_{mk}` (:func:`normalised_rates`)
and says nothing about the other jobs. Water filling raises every job's level together
until some jobs cannot rise further (the *bottleneck* jobs), freezes those at their
level and goes on with the rest, until every job is frozen: the leximin (max-min fair in
the strong sense) allocation. Iteration :math:`i`, with frozen jobs :math:`F` at levels
:math:`f_m` and the common level :math:`L` of the others:

1. the level LP

   .. math::
       t^* = \max t \quad\text{s.t.}\quad y_m(X) \ge L + t \ (m \notin F), \quad
       y_m(X) \ge f_m \ (m \in F), \quad \text{Gavel's (1)-(3)};

   then :math:`L \leftarrow L + t^*`;
2. the bottleneck MILP (Gavel's ``_get_bottleneck_jobs``): with binaries
   :math:`z_m` (:math:`m \notin F`),

   .. math::
       \max \sum_{m \notin F} z_m \quad\text{s.t.}\quad
       y_m(X) \ge L + \delta L z_m \ (m \notin F), \quad y_m(X) \ge f_m \ (m \in F),
       \quad \text{(1)-(3)},

   the most jobs that can rise a relative :math:`\delta` (Gavel's ``slack = 1.0001``,
   :math:`\delta = 10^{-4}`) above :math:`L` together while no job falls below its
   level; the jobs with :math:`z_m = 0` are frozen at :math:`f_m = L`.

The row :math:`y_m \ge L + \delta L z_m` is the big-M pair of Gavel's code without its
big M (with :math:`z_m = 0` it is the level row; Gavel's extra row forcing :math:`y_m`
below the threshold when :math:`z_m = 0` only removes solutions that count fewer
jobs). Identical jobs (same throughput row, workers and weight) are one class, each
class counted with its size in the MILP's objective: exact, because the leximin values
are unique and the programs are symmetric under permuting identical jobs.

The answer is the last level LP's :math:`X`. Guarantee: when every job is frozen, no
job's :math:`y_m` can be raised by more than a relative :math:`\delta` without lowering a
job already at a level no higher (each bottleneck test), the leximin order up to
:math:`\delta`; the first level is exactly the max-min optimum :math:`z^*`.
Complexity: at most one LP and one MILP per distinct level (at most :math:`C`, the job
classes), each with :math:`CK + 1` columns (+ C binaries) and :math:`2C + K` rows.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.core.result import Status
from optsched.errors import InvalidOption
from optsched.gavel.model import (
    LPAllocation,
    _arrays,
    allocation_program,
    job_classes,
    normalised_rates,
    proportional_split,
    repair_allocation,
)
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram, VarBlock

__all__ = ["max_min_fairness_water_filling", "SLACK"]

#: Gavel's relative slack for "can rise above the level" (``slack=1.0001``).
SLACK = 1e-4
#: Relative margin below a level that a later program's row allows: the X that reached
#: the level met its row only to the solver's feasibility tolerance (HiGHS: 1e-7 on
#: scaled rows), and a row at exactly the level can make the next program infeasible.
#: 1e-6 is 100x below SLACK, so no bottleneck test changes its answer through it.
_MARGIN = 1e-6


def _level_rows(lp: LinearProgram, X: VarBlock, A: np.ndarray, lower: np.ndarray,
                name: str, *, extra_col: int | None = None, extra: np.ndarray | None = None,
                extra_rows: np.ndarray | None = None) -> None:
    """Rows ``sum_k A[m, k] X[m, k] - extra[m] * v_m >= lower[m]`` (v one column, or one
    column per row given by ``extra_rows``)."""
    n, K = A.shape
    rows = np.repeat(np.arange(n), K)
    cols = X.index.ravel()
    vals = A.ravel()
    keep = vals != 0
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    if extra is not None:
        sel = np.flatnonzero(extra != 0)
        rows = np.concatenate([rows, sel])
        ecols = (np.full(sel.size, extra_col) if extra_rows is None else extra_rows[sel])
        cols = np.concatenate([cols, ecols])
        vals = np.concatenate([vals, -extra[sel]])
    lp.add_constraints(name, rows=rows, cols=cols, vals=vals, lb=lower, n_rows=n)


def max_min_fairness_water_filling(T, workers, capacity, weights=None, *,
                                   agnostic: bool = False, slack: float = SLACK,
                                   max_levels: int | None = None, backend: str = "highs",
                                   **solve_options: Any) -> LPAllocation:
    r"""The water-filling (leximin) max-min allocation (module docstring).

    Parameters
    ----------
    T, workers, capacity, weights
        As :func:`optsched.gavel.exact.max_min_fairness`.
    agnostic : bool
        :math:`T = 1` on every usable type (Gavel's ``MaxMinFairnessWaterFillingPolicy``;
        the default is its ``..._Perf``, heterogeneity-aware); the rows are then spread
        over the usable types in proportion to their GPUs where that fits
        (:func:`_proportional_split`, ``info["type_split"]``).
    slack : float
        Relative rise :math:`\delta > 0` a job must reach to count as not a bottleneck.
    max_levels : int, optional
        Most levels (iterations); default the number of job classes, which always
        suffices (each iteration freezes at least one class, or stops).
    backend : str
        Solver-layer backend (the MILP needs one with integer support).
    **solve_options
        Options for :func:`optsched.solvers.solve_program` (every LP and MILP).

    Returns
    -------
    LPAllocation
        ``X`` (repaired to (1)-(3)); ``objective`` the first level :math:`z^*` (the
        max-min value); ``info["levels"]`` the final level of every job,
        ``info["iterations"]`` and ``info["classes"]``.
    """
    if not (isinstance(slack, (int, float)) and slack > 0):
        raise InvalidOption("slack", slack, "must be a number > 0")
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    Te = (T > 0).astype(float) if agnostic else T
    first, inv, counts = job_classes(Te, W, w)
    C = len(first)
    A = normalised_rates(Te[first], W[first], c, w[first], n=n)
    cap_W = W[first] * counts
    frozen = np.zeros(C, bool)
    level = np.zeros(C)          # frozen classes: their final level
    L = 0.0
    zstar: float | None = None
    start = time.perf_counter()
    solves, seconds, presolve_off = 0, 0.0, 0
    Xc: np.ndarray | None = None
    res = None
    limit = C if max_levels is None else int(max_levels)
    iterations = 0
    for _ in range(limit):
        iterations += 1
        # 1. the level LP
        lp, X = allocation_program(Te[first], cap_W, c, sense="max", name="gavel_wf_level")
        t = lp.add_variables("t", 1, lb=-np.inf, ub=np.inf, cost=1.0)
        # frozen rows a hair below their level: the previous X met them to the
        # solver's tolerance only, and must stay feasible
        lower = np.where(frozen, level * (1 - _MARGIN), L)
        _level_rows(lp, X, A, lower, "level", extra_col=int(t.index[0]),
                    extra=np.where(frozen, 0.0, 1.0))
        res = solve_program(lp.freeze(), backend, **solve_options)
        solves += 1
        seconds += res.seconds
        if not res.success:
            break
        Xc = res.values["X"]
        tstar = max(float(res.values["t"][0]), 0.0)
        L += tstar
        if zstar is None:
            zstar = L
        # 2. the bottleneck MILP
        open_ = np.flatnonzero(~frozen)
        mp, X2 = allocation_program(Te[first], cap_W, c, sense="max", name="gavel_wf_bottleneck")
        z = mp.add_variables("z", open_.size, lb=0.0, ub=1.0, cost=counts[open_],
                             integer=True)
        zcol = np.full(C, -1, dtype=np.int64)
        zcol[open_] = z.index
        lower = np.where(frozen, level, L)
        _level_rows(mp, X2, A, lower * (1 - _MARGIN), "level",
                    extra=np.where(frozen, 0.0, slack * L), extra_rows=zcol)
        data = mp.freeze()
        res_b = solve_program(data, backend, **solve_options)
        solves += 1
        seconds += res_b.seconds
        if res_b.status is Status.INFEASIBLE and backend == "highs":
            # The level LP's X with every z = 0 is a feasible point of this MILP, so an
            # "infeasible" is HiGHS's MIP presolve misjudging rows whose level is
            # 1e-3 of their coefficients (seen on Gavel's trace, 16 jobs): check the
            # point, then solve again without presolve.
            known = np.concatenate([Xc.ravel(), np.zeros(open_.size)])
            if data.max_violation(known) <= 1e-9:
                opts = dict(solve_options)
                opts["options"] = {**dict(opts.get("options") or {}), "presolve": "off"}
                res_b = solve_program(data, backend, **opts)
                solves += 1
                seconds += res_b.seconds
                presolve_off += 1
        if not res_b.success:
            res = res_b
            break
        rise = np.zeros(C, bool)
        rise[open_] = res_b.values["z"] > 0.5
        stuck = ~frozen & ~rise
        if not stuck.any():
            break   # nobody is a bottleneck: the level LP has no more to give (t* ~ 0)
        frozen |= stuck
        level[stuck] = L
        if frozen.all():
            break
    if Xc is None or res is None or zstar is None:
        return LPAllocation(np.zeros((n, K)), None, res.status if res else Status.ERROR,
                            res, lp_solves=solves, seconds=seconds)
    levels = np.where(frozen, level, L)
    Xout = repair_allocation(Xc[inv], T, W, c)
    split = None
    if agnostic:
        Xout, split = proportional_split(Xout, T > 0, W, c)
    return LPAllocation(Xout, zstar, Status.OPTIMAL if res.success else res.status, res,
                        lp_solves=solves, seconds=seconds,
                        info={"levels": levels[inv], "iterations": iterations, "classes": C,
                              "milp_presolve_off": presolve_off, "type_split": split,
                              "wall_seconds": time.perf_counter() - start})
