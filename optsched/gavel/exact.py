r"""Gavel's heterogeneity-aware allocation LPs (Narayanan et al., OSDI'20, §4), exactly.

Notation and the base constraints are in :mod:`optsched.gavel.model`. Policies (§4),
each one LP (or a short sequence) built with
:class:`~optsched.solvers.program.LinearProgram` and solved by
:func:`~optsched.solvers.solve_program` on any backend:

* :func:`max_min_fairness` (LAS): :math:`\max_X \min_m \frac{W_m}{w_m}
  \frac{\sum_k T_{mk}X_{mk}}{\sum_k T_{mk}X^{eq}_{mk}}` as the epigraph LP
  :math:`\max z` s.t. :math:`z \le \sum_k a_{mk} X_{mk}` (Gavel code
  ``MaxMinFairnessPolicyWithPerf``: normalised by the equal-share throughput and multiplied
  by the scale factor). ``agnostic=True`` sets :math:`T = 1` on every usable type
  (``MaxMinFairnessPolicy``) and returns an allocation symmetric under relabelling the
  types (rows spread in proportion to capacity where that fits). A vertex solver may
  leave GPUs idle that an interior-point solver like Gavel's ECOS would spread, so
  ``pareto="greedy"`` hands idle capacity to jobs with spare time (keeps :math:`z^*`)
  and ``pareto="lp"`` solves a second LP that keeps every job at :math:`\ge z^*` and
  maximises :math:`\sum_{mk} a_{mk}X_{mk}`.
  Identical jobs are aggregated into classes (exact, see :func:`max_min_fairness`).
* :func:`min_total_duration` (makespan): exact, not bisected. ``aggregate=False``: ONE
  LP, :math:`\max \tau` s.t. :math:`\mathrm{thr}_m(X) \ge r_m \tau` with :math:`r_m`
  the *remaining* iterations; the makespan of the allocation is :math:`1/\tau^*`
  (exact because for fixed X the makespan is
  :math:`\max_m r_m/\mathrm{thr}_m(X) = 1/\min_m(\mathrm{thr}_m/r_m)`); rows are scaled
  by :math:`1/r_m` and by the largest rate so coefficients lie in (0, 1]. Default
  (``aggregate=True``): the same optimum from the work form (iterations per type, as
  Lawler-Labetoulle's preemptive unrelated-machine LP) with jobs of one throughput row
  aggregated and per-job time rows generated only where they bind; on Gavel's 2,000-job
  trace one LP of 80 classes and 40 jobs. (Gavel's code bisects on the makespan with
  feasibility LPs and stops within 5 %.)
* :func:`finish_time_fairness` (Themis, §4): minimise :math:`\max_m \rho_m` with
  :math:`\rho_m(X) = (t_m + r_m/\mathrm{thr}_m(X)) / d_m`, :math:`t_m` the time since
  arrival and :math:`d_m` the job's run time on an isolated 1/n share of the cluster
  (:func:`optsched.core.metrics.isolated_runtime` with n = visible jobs). For fixed
  :math:`\rho`, :math:`\rho_m \le \rho` is the linear constraint
  :math:`\mathrm{thr}_m(X) \ge r_m / (\rho d_m - t_m)` (needs :math:`\rho d_m > t_m`), so we
  bisect on :math:`\rho` over LP feasibility checks. Each check is the makespan-type LP
  :math:`\max\lambda` s.t. :math:`\mathrm{thr}_m \ge \lambda b_m(\rho)`; feasible iff
  :math:`\lambda^* \ge 1`; by default it is solved as the makespan's class LPs
  (:func:`min_total_duration`). The bracket is :math:`[\max_m t_m/d_m, \rho(X^{iso})]`
  (the isolated allocation is feasible). No single LP is known to us: :math:`\rho_m` is a
  ratio whose numerator is a reciprocal of a linear function, so the problem is
  quasi-convex, not linear.
* :func:`max_sum_throughput`: :math:`\max \sum_m \mathrm{thr}_m(X)` (Gavel
  ``ThroughputSumWithPerf``), over classes of identical jobs by default.
* :func:`min_cost_slo`: the paper's linear-fractional program
  :math:`\max \sum_m \mathrm{thr}_m(X) / \sum_{mk} p_k W_m X_{mk}` (throughput per dollar,
  :math:`p_k` $ per GPU-hour) subject to SLO rates :math:`\mathrm{thr}_m(X) \ge b_m`,
  solved exactly as ONE LP by the Charnes-Cooper transform (:math:`Y = sX`, :math:`s \ge 0`,
  :math:`\sum p_k W_m Y_{mk} = 1`, constraints homogenised by s, :math:`X = Y/s`). Gavel's
  code instead maximises :math:`\sum T_{mk}/p_k X_{mk}`; we follow the paper. If the SLO
  rates are jointly infeasible they are scaled by the largest feasible common factor.
* :func:`max_min_fairness_water_filling` (hierarchical max-min, §4): a level LP and
  Gavel's bottleneck MILP per level until every job is frozen (leximin up to a relative
  ``slack``).
* :func:`min_total_duration_interior`: the makespan allocation as Gavel's code returns
  it, an interior point of the feasibility LP at the makespan where its bisection stops
  (:func:`gavel_bisection_makespan`), up to 5 % above the optimum.

Every function takes arrays and returns :class:`LPAllocation` (``X``, ``objective``, the
solver :class:`~optsched.core.result.Result`). The returned ``X`` satisfies the base
constraints exactly (up to float rounding), not merely within the solver's tolerance:
:func:`repair_allocation` is applied to every returned allocation.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, relative_gap
from optsched.errors import InvalidOption
from optsched.gavel.model import (
    AWS_PRICES,
    OBJECTIVES,
    LPAllocation,
    Pairs,
    _arrays,
    allocation_program,
    equal_share,
    fill_idle,
    gpu_loads,
    isolated_share,
    job_classes,
    normalised_rates,
    objective_value,
    packed_program,
    packed_throughput,
    proportional_split,
    repair_allocation,
    round_state,
    row_sums,
)
from optsched.options import declares
from optsched.solvers import solve_program
from optsched.solvers.program import (
    LinearProgram,
    ProgramData,
    RowBlock,
    VarBlock,
    program_from_csr,
)

__all__ = [
    "exact", "max_min_fairness", "max_min_program", "agnostic_split_program",
    "sum_throughput_program",
    "min_total_duration",
    "finish_time_fairness", "max_sum_throughput",
    "min_cost_slo", "max_min_fairness_water_filling", "min_total_duration_interior",
    "gavel_bisection_makespan", "WATER_FILLING_SLACK", "INTERIOR_OPTIONS",
    "INTERIOR_METHODS", "gavel_rates", "gavel_max_min_program", "max_min_fairness_interior",
    "finish_time_fairness_interior",
    # the model's names, re-exported for the policies that import them from here
    "LPAllocation", "allocation_program", "equal_share", "isolated_share", "AWS_PRICES",
    "job_classes", "fill_idle", "repair_allocation",
    # space sharing
    "max_min_fairness_packed", "min_total_duration_packed", "finish_time_fairness_packed",
    "max_sum_throughput_packed", "max_min_fairness_water_filling_packed",
]

def _rate_entries(X: VarBlock, A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row, column and value of every non-zero ``A[m, k] X[m, k]`` (row m per job)."""
    n, K = A.shape
    rows = np.repeat(np.arange(n), K)
    cols = X.index.ravel()
    vals = A.ravel()
    keep = vals != 0
    return rows[keep], cols[keep], vals[keep]


def _add_rate_rows(lp: LinearProgram, X: VarBlock, A: np.ndarray, name: str, *,
                   z_col: int | None = None, z_coef=None, lb=-np.inf, ub=np.inf) -> None:
    """Rows ``lb <= sum_k A[m, k] X[m, k] + z_coef[m] * z <= ub`` for every job m."""
    n = A.shape[0]
    rows, cols, vals = _rate_entries(X, A)
    if z_col is not None:
        rows = np.concatenate([rows, np.arange(n)])
        cols = np.concatenate([cols, np.full(n, z_col)])
        vals = np.concatenate([vals, np.broadcast_to(np.asarray(z_coef, float), (n,))])
    lp.add_constraints(name, rows=rows, cols=cols, vals=vals, lb=lb, ub=ub, n_rows=n)


def max_min_program(T: np.ndarray, gpus: np.ndarray, c: np.ndarray, A: np.ndarray, *,
                    bounded: bool = True) -> ProgramData:
    r"""The max-min epigraph LP of :func:`max_min_fairness`, written in CSR directly.

    Columns ``X`` (n x K, row-major) and ``z``; rows: time fractions
    :math:`\sum_k X_{mk} \le 1`, capacities :math:`\sum_m g_m X_{mk} \le c_k` and
    epigraph rows :math:`z - \sum_k A_{mk} X_{mk} \le 0`; :math:`\max z`,
    :math:`0 \le X_{mk} \le [T_{mk} > 0]`. The very program the block builder gives
    (:func:`~optsched.gavel.model.allocation_program`, one epigraph block, ``freeze``),
    entry for entry, in one pass over ``(n, K)`` arrays: the simulator solves one per
    change of the job set. ``gpus`` are the GPUs per row (:math:`W_m` times the class
    size when rows stand for classes). ``bounded=False`` drops the column bounds
    :math:`X_{mk} \le [T_{mk} > 0]` (:math:`X \ge 0` only, the time-fraction rows bound
    every entry), as Gavel's own program states it (:func:`gavel_max_min_program`).
    ``O(nK)``.
    """
    n, K = T.shape
    N = n * K
    colX = np.arange(N, dtype=np.int64).reshape(n, K)
    keep = np.ones((n, K + 1), dtype=bool)
    keep[:, :K] = A != 0
    epi_cols = np.empty((n, K + 1), dtype=np.int64)
    epi_cols[:, :K] = colX
    epi_cols[:, K] = N
    epi_vals = np.empty((n, K + 1))
    epi_vals[:, :K] = -A
    epi_vals[:, K] = 1.0
    counts = np.concatenate([np.full(n, K), np.full(K, n), keep.sum(axis=1)])
    indptr = np.zeros(2 * n + K + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.concatenate([colX.ravel(), colX.T.ravel(), epi_cols[keep]])
    data = np.concatenate([np.ones(N), np.tile(np.asarray(gpus, dtype=float), K),
                           epi_vals[keep]])
    cost = np.zeros(N + 1)
    cost[N] = 1.0
    lb = np.zeros(N + 1)
    lb[N] = -np.inf
    ub = np.empty(N + 1)
    ub[:N] = np.where(T > 0, 1.0, 0.0).ravel() if bounded else np.inf
    ub[N] = np.inf
    row_ub = np.concatenate([np.ones(n), np.asarray(c, dtype=float), np.zeros(n)])
    return program_from_csr(
        sense="max", name="gavel_max_min",
        var_blocks=(VarBlock("X", (n, K), 0), VarBlock("z", (1,), N)),
        c=cost, col_lb=lb, col_ub=ub,
        row_blocks=(RowBlock("time_fraction", 0, n), RowBlock("capacity", n, K),
                    RowBlock("epigraph", n + K, n)),
        indptr=indptr, indices=indices, data=data,
        row_lb=np.full(2 * n + K, -np.inf), row_ub=row_ub)


def sum_throughput_program(T: np.ndarray, gpus: np.ndarray, c: np.ndarray) -> ProgramData:
    r"""The total-throughput LP of :func:`max_sum_throughput`, written in CSR directly:
    :math:`\max \sum_{mk} g_m T_{mk} X_{mk}` over ``X`` (n x K, row-major) with the time
    fraction rows :math:`\sum_k X_{mk} \le 1` and capacity rows
    :math:`\sum_m g_m X_{mk} \le c_k`, :math:`0 \le X_{mk} \le [T_{mk} > 0]`
    (``gpus`` :math:`g_m`: the GPUs per row, :math:`W_m` times the class size for a
    class). Entry for entry the block-built program
    (:func:`~optsched.gavel.model.allocation_program` with that cost, ``freeze``).
    ``O(nK)``.
    """
    n, K = T.shape
    N = n * K
    g = np.asarray(gpus, dtype=float)
    colX = np.arange(N, dtype=np.int64).reshape(n, K)
    indptr = np.zeros(n + K + 1, dtype=np.int64)
    np.cumsum(np.concatenate([np.full(n, K), np.full(K, n)]), out=indptr[1:])
    return program_from_csr(
        sense="max", name="gavel_sum_throughput",
        var_blocks=(VarBlock("X", (n, K), 0),),
        c=(g[:, None] * T).ravel(), col_lb=np.zeros(N),
        col_ub=np.where(T > 0, 1.0, 0.0).ravel(),
        row_blocks=(RowBlock("time_fraction", 0, n), RowBlock("capacity", n, K)),
        indptr=indptr, indices=np.concatenate([colX.ravel(), colX.T.ravel()]),
        data=np.concatenate([np.ones(N), np.tile(g, K)]),
        row_lb=np.full(n + K, -np.inf),
        row_ub=np.concatenate([np.ones(n), np.asarray(c, dtype=float)]))


def agnostic_split_program(U: np.ndarray, gpus: np.ndarray, c: np.ndarray, s: np.ndarray,
                           floor: np.ndarray, P: np.ndarray) -> ProgramData:
    r"""The split LP of :func:`_agnostic_max_min` (its step 3), written in CSR directly.

    Columns ``X`` (n x K, row-major) and ``t``; rows, in order: time fractions
    :math:`\sum_k X_{mk} \le 1`; capacities :math:`\sum_m g_m X_{mk} \le c_k`; row sums
    :math:`\sum_k X_{mk} = s_m`; where some ``floor`` is finite, every type kept at
    least that full, :math:`\sum_m g_m X_{mk} \ge \mathrm{floor}_k`; and one row
    :math:`X_{mk} - P_{mk} t \ge 0` per usable entry (:math:`U_{mk}`, in row-major
    order); :math:`\max t`, :math:`0 \le t \le 1`, :math:`0 \le X_{mk} \le U_{mk}`.
    Entry for entry the program the block builder gives
    (:func:`~optsched.gavel.model.allocation_program` and the blocks above, ``freeze``).
    ``O(nK)``.
    """
    n, K = U.shape
    N = n * K
    g = np.asarray(gpus, dtype=float)
    colX = np.arange(N, dtype=np.int64).reshape(n, K)
    m_i, k_i = np.nonzero(U)
    L = m_i.size
    stay = bool(np.isfinite(floor).any())
    p = -P[m_i, k_i]
    has_t = p != 0
    near_cols = np.empty((L, 2), dtype=np.int64)
    near_cols[:, 0] = colX[m_i, k_i]
    near_cols[:, 1] = N
    near_vals = np.empty((L, 2))
    near_vals[:, 0] = 1.0
    near_vals[:, 1] = p
    near_keep = np.ones((L, 2), dtype=bool)
    near_keep[:, 1] = has_t
    cap_cols, cap_vals = colX.T.ravel(), np.tile(g, K)
    parts_cols = [colX.ravel(), cap_cols, colX.ravel()] + ([cap_cols] if stay else [])
    parts_vals = [np.ones(N), cap_vals, np.ones(N)] + ([cap_vals] if stay else [])
    counts = [np.full(n, K), np.full(K, n), np.full(n, K)] + ([np.full(K, n)] if stay else [])
    counts.append(1 + has_t.astype(np.int64))
    n_rows = 2 * n + K + (K if stay else 0) + L
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    indices = np.concatenate(parts_cols + [near_cols[near_keep]])
    data = np.concatenate(parts_vals + [near_vals[near_keep]])
    cost = np.zeros(N + 1)
    cost[N] = 1.0
    ub = np.empty(N + 1)
    ub[:N] = np.where(U > 0, 1.0, 0.0).ravel()
    ub[N] = 1.0
    row_lb = [np.full(n + K, -np.inf), np.asarray(s, dtype=float)]
    row_ub = [np.ones(n), np.asarray(c, dtype=float), np.asarray(s, dtype=float)]
    blocks = [RowBlock("time_fraction", 0, n), RowBlock("capacity", n, K),
              RowBlock("row_sum", n + K, n)]
    start = 2 * n + K
    if stay:
        row_lb.append(np.asarray(floor, dtype=float))
        row_ub.append(np.full(K, np.inf))
        blocks.append(RowBlock("stay_full", start, K))
        start += K
    row_lb.append(np.zeros(L))
    row_ub.append(np.full(L, np.inf))
    blocks.append(RowBlock("near_proportional", start, L))
    return program_from_csr(
        sense="max", name="gavel_agnostic_split",
        var_blocks=(VarBlock("X", (n, K), 0), VarBlock("t", (1,), N)),
        c=cost, col_lb=np.zeros(N + 1), col_ub=ub, row_blocks=tuple(blocks),
        indptr=indptr, indices=indices, data=data,
        row_lb=np.concatenate(row_lb), row_ub=np.concatenate(row_ub))


def _solve(lp: LinearProgram, backend: str, opts: dict) -> tuple[Result, dict]:
    data = lp.freeze()
    res = solve_program(data, backend, **opts)
    return res, res.values


def _allocation(X: np.ndarray, T: np.ndarray, W: np.ndarray, c: np.ndarray,
                objective: float | None, status: Status, result: Result | None,
                **fields: Any) -> LPAllocation:
    """Every policy's return: the allocation goes through :func:`repair_allocation` here,
    so no caller ever sees an X that over-fills a type or a job's time."""
    return LPAllocation(repair_allocation(X, T, W, c), objective, status, result, **fields)


def _fail(n: int, K: int, res: Result, **info) -> LPAllocation:
    return LPAllocation(np.zeros((n, K)), None, res.status, res, seconds=res.seconds, info=info)


def max_min_fairness(T, workers, capacity, weights=None, *, agnostic: bool = False,
                     pareto: bool | str = False, aggregate: bool = True,
                     backend: str = "highs", **solve_options: Any) -> LPAllocation:
    r"""Max-min fairness / LAS as one epigraph LP: :math:`\max z` s.t.
    :math:`z \le \sum_k a_{mk} X_{mk}` for every job and (1)-(3).

    Parameters
    ----------
    T : array_like, shape (n, K)
        Per-worker throughputs (0 where a job cannot run).
    workers : array_like, shape (n,)
        Gang sizes :math:`W_m`.
    capacity : array_like, shape (K,)
        GPUs per type :math:`c_k`.
    weights : array_like, optional
        Priority weights :math:`w_m` (default 1).
    agnostic : bool
        Count every usable type as throughput 1 (``MaxMinFairnessPolicy``). The LP then
        fixes only each job's total share; the answer is made symmetric under relabelling
        the types (each row spread over the job's usable types in proportion to their
        GPUs when that fits, as Gavel's interior-point solver returns; see
        :func:`_agnostic_max_min`), ``info["type_split"]`` says which split was used.
    pareto : bool or str
        ``False``; ``"greedy"`` (:func:`fill_idle`, keeps :math:`z^*`); ``True``/``"lp"``
        (a second LP maximising the sum of normalised throughputs with every job kept at
        :math:`\ge z^*`).
    aggregate : bool
        Solve over classes of identical jobs (same throughput row, workers and weight), one
        row per class with the capacity rows weighted by class sizes. Exact: the LP is
        convex and symmetric under permuting identical jobs, so averaging an optimum over
        those permutations gives one in which identical jobs get identical rows.
    backend : str
        Solver backend.
    **solve_options
        Options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    LPAllocation
        ``X`` (repaired to satisfy (1)-(3) exactly) and ``objective`` :math:`z^*`.

    Guarantee
    ---------
    :math:`\min_m \sum_k a_{mk} \hat X_{mk} \ge \min_m \sum_k a_{mk} X_{mk}` for every
    feasible :math:`X`.

    Complexity
    ----------
    One LP with :math:`nK + 1` columns and :math:`2n + K` rows (:math:`n` = job classes
    when aggregated); two with ``pareto="lp"``; one more (the same size) when an agnostic
    proportional split does not fit.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4.1 (LAS); Gavel's
      ``MaxMinFairnessPolicyWithPerf``.
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    if agnostic:
        return _agnostic_max_min(T, W, c, w, pareto, aggregate, backend, solve_options)
    Te = T
    if aggregate:
        first, inv, counts = job_classes(Te, W, w)
    else:
        first, inv, counts = np.arange(n), np.arange(n), np.ones(n)
    # a_mk depends on a job's own row only: computed per class, then spread to its jobs
    Tc, Wc = Te[first], W[first]
    Ac = normalised_rates(Tc, Wc, c, w[first], n=n)
    A = Ac[inv]
    # class rows: capacity uses counts x W (the class's GPUs)
    res = solve_program(max_min_program(Tc, Wc * counts, c, Ac), backend, **solve_options)
    vals = res.values
    if not res.success:
        return _fail(n, K, res)
    zstar = float(vals["z"][0])
    Xc = vals["X"]
    seconds = res.seconds
    solves = 1
    if pareto in (True, "lp") and zstar > 0:
        lp2, X2 = allocation_program(Tc, Wc * counts, c, sense="max",
                                     name="gavel_max_min_pareto")
        lp2.set_cost(X2, Ac * counts[:, None])
        _add_rate_rows(lp2, X2, Ac, "keep_min", lb=zstar * (1 - 1e-7))
        res2, vals2 = _solve(lp2, backend, solve_options)
        seconds += res2.seconds
        solves += 1
        if res2.success:
            Xc = vals2["X"]
    Xs = repair_allocation(Xc[inv], T, W, c)
    if pareto == "greedy":
        Xs = fill_idle(Xs, Te, W, c, A)
    elif pareto not in (False, True, "lp"):
        raise InvalidOption("pareto", pareto, "must be False, 'greedy', True or 'lp'")
    return _allocation(Xs, T, W, c, zstar, res.status, res, lp_solves=solves,
                       seconds=seconds, info={"normalised": A, "classes": int(len(first))})


def _agnostic_max_min(T, W, c, w, pareto, aggregate, backend, opts) -> LPAllocation:
    r"""The heterogeneity-agnostic max-min allocation, symmetric under relabelling types.

    With :math:`T = 1` on the usable types :math:`U_m`, job m's objective term is
    :math:`a_m s_m` with :math:`s_m = \sum_k X_{mk}` its row sum: the LP fixes the row
    sums it needs and nothing about how a row is split over the types, and a vertex
    solver picks a split by the column order. The answer here depends on the types only
    through what the agnostic LP sees of them, the capacities :math:`c_k` and the
    columns of :math:`U`:

    1. Canonical order. The LP (with its Pareto stage) is solved with the types sorted
       by :math:`(c_k, U_{\cdot k})`. Types that tie on that key are interchangeable in
       the LP, so a relabelled input gives the very same LP and the same solution
       :math:`\hat X` (HiGHS is deterministic), mapped back to the input's labels.
    2. Split. Each row is spread over the job's usable types in proportion to their
       capacity, :math:`X_{mk} = s_m c_k / \sum_{k' \in U_m} c_{k'}` for
       :math:`k \in U_m`. The row sums, hence every :math:`a_m s_m` and :math:`z^*`,
       are unchanged. It is used when it fits every type
       (:math:`\sum_m W_m X_{mk} \le c_k`) and, with a Pareto stage, leaves no type
       idle that a job with spare time can use. When every job can use every type
       (Gavel's setting) both always hold: the loads become
       :math:`c_k \sum_m W_m s_m / \sum_{k'} c_{k'}`, at most :math:`c_k` because the
       capacity rows of :math:`\hat X` sum to :math:`\sum_m W_m s_m \le \sum_k c_k`;
       and a job with spare time after the Pareto stage means no GPU was idle, so after
       the split none is either. With equal capacities this is Gavel's own X (ECOS
       returns equal thirds on 36/36/36 GPUs).
    3. Otherwise (some job cannot use some type, and the proportional split over-fills
       a type) a second LP, in the canonical order, splits the same row sums as close
       to proportional as fits: :math:`\max t` s.t. :math:`X_{mk} \ge t P_{mk}` on
       usable types (:math:`P` the proportional split), :math:`\sum_k X_{mk} = s_m`,
       :math:`\sum_m W_m X_{mk} \le c_k`, and, with a Pareto stage, every type that a
       job with spare time can use at least as full as in :math:`\hat X`;
       :math:`0 \le t \le 1`. :math:`\hat X` with :math:`t = 0` is feasible, so
       :math:`t^*` exists; every job keeps its row sum (so :math:`z^*`), and the
       Pareto property is kept. Its answer, mapped back, has the columns of tied types
       averaged: a permutation of tied types maps this LP to itself, so the average
       over those permutations is again an optimum of it. When the solver does not
       solve this LP (its rows are tight: an infeasible verdict by rounding was seen on
       random instances), :math:`\hat X` itself is used, tied columns averaged: tied
       types have equal capacities and usable sets, so the average keeps every load,
       row sum and the Pareto property; ``info["type_split"]`` says which split was
       used.

    Either way, permuting the input's types permutes the columns of the answer.
    """
    n, K = T.shape
    U = T > 0
    key = [(float(c[k]), U[:, k].tobytes()) for k in range(K)]
    perm = np.array(sorted(range(K), key=lambda k: key[k]), dtype=np.int64)
    Te = U.astype(float)
    sol = max_min_fairness(Te[:, perm], W, c[perm], w, pareto=pareto, aggregate=aggregate,
                           backend=backend, **opts)
    if not sol.ok:
        return sol
    # every sum below runs in the canonical order, then the answer is mapped back: a sum
    # taken in the input's column order differs in its last bits between relabellings,
    # and the split LP turns those bits into differences of the solver's tolerance
    Uc, cc, Xc = U[:, perm], c[perm], sol.X
    s = Xc.sum(axis=1)
    cap_m = (Uc * cc[None, :]).sum(axis=1)
    P = np.where(Uc, s[:, None] * cc[None, :] / np.maximum(cap_m, 1e-300)[:, None], 0.0)
    load = gpu_loads(W, P)
    fits = bool(np.all(load <= cc * (1 + 1e-9) + 1e-12))
    if fits and pareto is not False:
        # (tolerances of the solver's order: only which exact split is used hangs on them)
        idle = cc - load > 1e-6 * np.maximum(cc, 1.0)
        spare = s < 1 - 1e-6
        fits = not bool(np.any(Uc[spare][:, idle]))
    seconds, solves = sol.seconds, sol.lp_solves
    if fits:
        Xout, split, t = P, "proportional", 1.0
    else:
        # the split LP over classes of jobs with the same usable types, gang and row sum
        # (exact by the symmetry argument of max_min_fairness; identical jobs get
        # identical rows)
        first, inv, counts = job_classes(Uc, W, s)
        floor = np.full(K, -np.inf)
        if pareto is not False:
            spare = s < 1 - 1e-6
            keep = Uc[spare].any(axis=0)
            # 1e-9 GPUs below X-hat's load: an exactly tight system (rows fixed, loads
            # fixed) is one HiGHS's presolve has declared infeasible by rounding
            floor[keep] = gpu_loads(W, Xc)[keep] - 1e-9 * np.maximum(cc[keep], 1.0)
        data = agnostic_split_program(Uc[first], W[first] * counts, cc, s[first], floor,
                                      P[first])
        res = solve_program(data, backend, **opts)
        vals = res.values
        seconds += res.seconds
        solves += 1
        if res.success:
            t = float(vals["t"][0])
            Xc = vals["X"][inv]
            split = "near-proportional"
        else:
            # the split LP is only a finer choice among optima of the same LP: when its
            # tight rows defeat the solver (an infeasible verdict by rounding, seen on
            # random instances), the canonical optimum X-hat itself is kept, with tied
            # columns averaged below, which is feasible, optimal and symmetric too
            t, split = 0.0, f"canonical (split LP: {res.status})"
        # tied types sit next to each other in the canonical order; their mean, taken
        # there, is the same floats whatever the input's labels
        Xout = Xc.copy()
        keys = [key[k] for k in perm]
        lo = 0
        while lo < K:
            hi = lo + 1
            while hi < K and keys[hi] == keys[lo]:
                hi += 1
            if hi - lo > 1:
                Xout[:, lo:hi] = Xc[:, lo:hi].mean(axis=1)[:, None]
            lo = hi
    X = np.empty((n, K))
    X[:, perm] = Xout
    A = normalised_rates(T, W, c, w, agnostic=True)
    return _allocation(X, T, W, c, sol.objective, sol.status, sol.result,
                       lp_solves=solves, seconds=seconds,
                       info={**sol.info, "normalised": A, "type_split": split,
                             "proportional_floor": t})


def _max_common_rate(T, W, c, need, backend, opts, name) -> tuple[float | None, np.ndarray,
                                                                Result]:
    """``max lambda`` s.t. ``W_m sum_k T_mk X_mk >= lambda * need_m``.

    Scaling: lambda is measured in units of ``lam_iso``, the value reached by the
    isolated allocation (feasible, so the scaled optimum is >= 1), and each row is divided
    by its largest coefficient. Without it, jobs whose needs differ by orders of
    magnitude put the binding rows' coefficients below the solver's feasibility
    tolerance.
    """
    n, K = T.shape
    R = (W[:, None] * T) / need[:, None]  # 1/s per unit of X
    lam_iso = float(np.min((R * isolated_share(T, W, c)).sum(axis=1)))
    scale = lam_iso if lam_iso > 0 else 1.0
    # row m divided by its largest coefficient: X coefficients in [0, 1], lambda's
    # coefficient -scale / max_k R_mk (binding rows, the slowest jobs, are near -1)
    rmax = R.max(axis=1)
    lp, X = allocation_program(T, W, c, sense="max", name=name)
    lam = lp.add_variables("lam", 1, lb=0.0, ub=np.inf, cost=1.0)
    _add_rate_rows(lp, X, R / rmax[:, None], "rate", z_col=int(lam.index[0]),
                   z_coef=-scale / rmax, lb=0.0)
    res, vals = _solve(lp, backend, opts)
    if not res.success:
        return None, np.zeros((n, K)), res
    Xs = repair_allocation(vals["X"], T, W, c)
    # report the lambda the returned X actually achieves (robust to solver tolerances)
    got = float(np.min((R * Xs).sum(axis=1)))
    return got, Xs, res


#: Jobs whose fastest run takes >= this fraction of the lower bound start with a time row.
_OWN_ROW_SEED = 0.25


def _min_makespan_classes(T, W, c, need, backend, opts, name
                          ) -> tuple[float | None, np.ndarray, Result, dict]:
    r"""``min S`` such that every job m can do ``need_m`` iterations by time S (so
    ``max lambda = 1/S`` in :func:`_max_common_rate`), with jobs of equal throughput rows
    aggregated and per-job time rows generated only where they bind.

    Work form. Let :math:`V_{mk} \ge 0` be the iterations job m does on type k
    (:math:`\sum_k V_{mk} = \mathrm{need}_m`). On type k they take
    :math:`V_{mk}/(W_m T_{mk})` seconds of the job's time and :math:`V_{mk}/T_{mk}`
    GPU-seconds (:math:`W_m` GPUs), so

    .. math::
        \min S \ \text{s.t.}\ \sum_k \frac{V_{mk}}{W_m T_{mk}} \le S \ \forall m, \quad
        \sum_m \frac{V_{mk}}{T_{mk}} \le c_k S \ \forall k.

    This is the rate LP with :math:`X_{mk} = V_{mk}/(W_m T_{mk} S)` (each job at rate
    exactly :math:`\mathrm{need}_m/S`; a job given more in an optimum of the rate LP can
    be scaled down without breaking a row), so :math:`S^* = 1/\lambda^*`.

    Aggregation. The capacity rows depend on job m only through :math:`V_{mk}/T_{mk}`:
    :math:`W_m` cancels. Without its time row, a set of jobs with one throughput row
    :math:`T_c` is exactly one class with work :math:`N_c = \sum \mathrm{need}_m`:
    class fractions :math:`U_{ck}` (:math:`\sum_k U_{ck} = 1`) give every member
    :math:`V_{mk} = \mathrm{need}_m U_{ck}`, and any member split sums to such a class
    split. The reduced LP keeps time rows only for a set :math:`J` of individual jobs
    and aggregates the others by class; it drops constraints, so its optimum
    :math:`S_J \le S^*`. Its solution split proportionally gives each job outside J the
    time :math:`\frac{\mathrm{need}_m}{W_m}\sum_k U_{ck}/T_{ck}`; if none exceeds
    :math:`S_J` the split is feasible for the full LP with value :math:`S_J \le S^*`, hence
    optimal. Otherwise the jobs that exceed it join J and the LP is solved again. J only
    grows, so at most n + 1 LPs are solved and the last is at worst the full work-form LP.
    J starts with the jobs that alone take at least :data:`_OWN_ROW_SEED` of
    :math:`S_0` (below); more rows never change the optimum, only how many LPs it takes.

    The returned X is built from the final split with
    :math:`S = \max(\max_m \text{time}_m, \max_k \text{load}_k / c_k)` computed from it,
    so it meets every row by construction; its makespan exceeds :math:`S_J` only by the
    solver's own residuals. Scaling: S is measured in units of a lower bound
    :math:`S_0` (the longest job on its fastest type, or all work on each job's
    cheapest type spread over the whole cluster) and X-like fractions U are the
    variables, so coefficients are O(1) for the binding rows.
    """
    n, K = T.shape
    usable = (T > 0) & (c[None, :] > 0)
    gs = np.where(usable, need[:, None] / np.where(usable, T, 1.0), 0.0)   # GPU-seconds
    if not usable.any(axis=1).all():
        m = int(np.flatnonzero(~usable.any(axis=1))[0])
        res = Result(status=Status.INFEASIBLE, backend=backend,
                     message=f"job {m} has no GPU type it can use with capacity > 0: "
                             "its rate is 0 under every allocation")
        return None, np.zeros((n, K)), res, {"lp_solves": 0, "seconds": 0.0,
                                             "no_usable_type": m}
    fastest = np.where(usable, gs / W[:, None], np.inf).min(axis=1)
    cheapest = np.where(usable, gs, np.inf).min(axis=1)
    S0 = max(float(fastest.max()), float(cheapest.sum() / c.sum()))
    c_pos = np.where(c > 0, c, 1.0)    # a type without GPUs has no usable entries to scale
    first, cls, _ = job_classes(np.where(usable, T, 0.0))
    C = first.size
    Tc = np.where(usable[first], T[first], 0.0)
    # Seed J with the jobs that alone take at least a quarter of the lower bound: the
    # long jobs whose time rows bind. Seeding only adds rows, so it cannot change the
    # optimum; it saves the LP that would have found them (one LP on Gavel's trace).
    own = fastest >= _OWN_ROW_SEED * S0
    start, solves = time.perf_counter(), 0
    while True:
        J = np.flatnonzero(own)
        Nc = np.bincount(cls[~own], weights=need[~own], minlength=C)
        live = np.flatnonzero(Nc > 0)
        lp = LinearProgram(sense="min", name=name)
        s = int(lp.add_variables("S", 1, lb=0.0, cost=1.0).index[0])
        U = lp.add_variables("U", (live.size, K), lb=0.0, ub=(Tc[live] > 0).astype(float))
        V = lp.add_variables("V", (J.size, K), lb=0.0, ub=usable[J].astype(float))
        lp.add_constraints("class_work", rows=np.repeat(np.arange(live.size), K),
                           cols=U.index.ravel(), vals=1.0, lb=1.0, ub=1.0, n_rows=live.size)
        lp.add_constraints("job_work", rows=np.repeat(np.arange(J.size), K),
                           cols=V.index.ravel(), vals=1.0, lb=1.0, ub=1.0, n_rows=J.size)
        cap_c = np.where(Tc[live] > 0, Nc[live, None] / np.where(Tc[live] > 0, Tc[live], 1.0),
                         0.0) / (c_pos * S0)
        cap_j = gs[J] / (c_pos * S0)
        lp.add_constraints(
            "capacity", rows=np.concatenate([np.tile(np.arange(K), live.size + J.size),
                                             np.arange(K)]),
            cols=np.concatenate([U.index.ravel(), V.index.ravel(), np.full(K, s)]),
            vals=np.concatenate([cap_c.ravel(), cap_j.ravel(), -np.ones(K)]), ub=0.0,
            n_rows=K)
        lp.add_constraints(
            "time", rows=np.concatenate([np.repeat(np.arange(J.size), K), np.arange(J.size)]),
            cols=np.concatenate([V.index.ravel(), np.full(J.size, s)]),
            vals=np.concatenate([(gs[J] / (W[J, None] * S0)).ravel(), -np.ones(J.size)]),
            ub=0.0, n_rows=J.size)
        data = lp.freeze()
        # a time limit bounds the whole method: earlier LPs count against it
        res = solve_program(data, backend, spent=time.perf_counter() - start, **opts)
        solves += 1
        if not res.success:
            return None, np.zeros((n, K)), res, {"lp_solves": solves,
                                                 "seconds": time.perf_counter() - start}
        Uc = np.zeros((C, K))
        Uc[live] = res.values["U"]
        frac = Uc[cls]
        frac[J] = res.values["V"]
        frac = np.where(usable, np.clip(frac, 0.0, None), 0.0)
        frac /= frac.sum(axis=1, keepdims=True)
        busy = (gs * frac).sum(axis=1) / W                         # seconds of the job
        S_J = float(res.values["S"][0]) * S0
        late = ~own & (busy > S_J * (1.0 + 1e-12))
        if not late.any():
            break
        own |= late
    load = (gs * frac).sum(axis=0)
    S = max(float(busy.max()), float((load / c_pos).max()))
    X = gs * frac / (W[:, None] * S)
    return 1.0 / S, X, res, {"lp_solves": solves, "seconds": time.perf_counter() - start,
                             "classes": C,
                             "own_time_rows": int(own.sum()), "reduced_optimum": S_J}


def min_total_duration(T, workers, capacity, remaining, *, aggregate: bool = True,
                       backend: str = "highs", **solve_options: Any) -> LPAllocation:
    r"""Gavel's makespan policy, exactly: the allocation minimising
    :math:`\max_m r_m/\mathrm{thr}_m(X)`.

    ``aggregate=True`` (default) solves the work form with jobs of one throughput row
    aggregated and per-job time rows added only where they bind (a few small LPs, see
    :func:`_min_makespan_classes`); ``aggregate=False`` solves the rate form as ONE LP
    over every job, :math:`\max \tau` s.t. :math:`\mathrm{thr}_m(X) \ge r_m \tau`, with
    makespan :math:`1/\tau^*`. Both are exact and reach the same optimum (to the
    solver's tolerance); they may return different optimal X, as the LP has many. In
    the default's X every job runs at exactly the rate that finishes it at the makespan.

    Parameters
    ----------
    T, workers, capacity
        As :func:`max_min_fairness`.
    remaining : array_like, shape (n,)
        Remaining iterations :math:`r_m > 0`.
    aggregate : bool
        Class aggregation with generated time rows (default) or the per-job single LP.
        The single LP's rate rows :math:`\mathrm{thr}_m \ge r_m\tau` can lose a job
        whose need is ~1e-9 of the others' (its coefficient of :math:`\tau` falls below
        HiGHS's tolerances, X = 0 comes back and the result is not ``ok``; seen on a
        random one-type instance, and whenever one job has 1e-9 iterations left beside
        another's 50); the work form fixes every job's work by an equality row and has no
        such coefficient, so a single LP whose X runs a job at rate 0 is solved again in
        the work form (``info["fallback"]`` says so, naming the job).
    backend : str
        Solver backend.
    **solve_options
        Options for :func:`optsched.solvers.solve_program` (a ``time_limit`` bounds the
        whole call).

    Returns
    -------
    LPAllocation
        ``objective`` the makespan :math:`1/\tau^*` in seconds from now; ``info["tau"]``;
        with ``aggregate``: ``info["classes"]``, ``info["own_time_rows"]`` (jobs whose
        time row was generated) and ``lp_solves``.

    Guarantee
    ---------
    :math:`\max_m r_m/\mathrm{thr}_m(\hat X) \le \max_m r_m/\mathrm{thr}_m(X)` for every
    feasible :math:`X`, up to the solver's tolerance. One LP: for fixed X the makespan
    is :math:`1/\min_m(\mathrm{thr}_m/r_m)`, so maximising the common rate is exact.
    Aggregated: each reduced LP is a relaxation of the work-form LP (time rows of the
    aggregated jobs dropped; aggregation itself is exact without them), and the loop
    stops only when its optimum, split within classes in proportion to the work, meets
    every dropped row, i.e. is feasible for the full LP with a value no larger than its
    optimum (:func:`_min_makespan_classes`). (Gavel's code bisects on the makespan with
    feasibility LPs and stops within 5 %.)

    Complexity
    ----------
    One LP: :math:`nK + 1` columns and :math:`2n + K` rows. Aggregated: at most
    :math:`n + 1` LPs, each with :math:`(C + |J|)K + 1` columns and
    :math:`C + 2|J| + K` rows (C throughput classes, J the jobs with their own time
    row); on Gavel's 2,000-job trace :math:`C = 80`, :math:`|J| = 40` and one LP is
    solved. Without shared throughput rows (C = n) it is no smaller than the single LP.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4 (makespan); Gavel's ``min_total_duration.py``.
    * E. L. Lawler and J. Labetoulle, "On preemptive scheduling of unrelated parallel
      processors by linear programming", J. ACM 25(4), 1978 (the work form: minimum
      makespan of preemptive jobs on unrelated machines as one LP).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    r = np.asarray(remaining, dtype=float).reshape(n)
    if np.any(r <= 0):
        raise InvalidOption("remaining", r.min(), "remaining work must be > 0")
    if aggregate:
        tau, Xs, res, info = _min_makespan_classes(T, W, c, r, backend, solve_options,
                                                   "gavel_makespan")
        solves, seconds = info.pop("lp_solves"), info.pop("seconds")
    else:
        tau, Xs, res = _max_common_rate(T, W, c, r, backend, solve_options, "gavel_makespan")
        solves, seconds, info = 1, res.seconds, {}
        if res.success and not (tau is not None and tau > 0):
            # Solved, yet its X runs some job at rate 0: that job's need is so small next
            # to the others' (1e-9 iterations beside 50 is enough) that its rate row's
            # coefficient of tau is below the solver's tolerances. The work form has no
            # such coefficient and the same optimum: solve that instead.
            lost = int(np.argmin(W * row_sums(T * Xs) / r))
            opts = dict(solve_options)
            if opts.get("time_limit") is not None:   # the limit bounds the whole call
                opts["time_limit"] = max(float(opts["time_limit"]) - seconds, 0.0)
            tau, Xs, res, info = _min_makespan_classes(T, W, c, r, backend, opts,
                                                       "gavel_makespan")
            solves += info.pop("lp_solves")
            seconds += info.pop("seconds")
            info["fallback"] = {"form": "work", "job": lost,
                                "reason": "the rate form's optimal X runs this job at rate 0"}
    if tau is None or tau <= 0:
        if res.status.has_solution:
            # a solution whose allocation leaves a job without progress is no allocation
            res = res.replace(status=Status.ERROR, message=(
                f"the LP solved ({res.status.value}) but its allocation runs job "
                f"{int(np.argmin(W * row_sums(T * Xs) / r))} at rate 0, so no makespan "
                "is finite"))
        return LPAllocation(np.zeros((n, K)), None, res.status, res, lp_solves=solves,
                            seconds=seconds, info=info)
    return _allocation(Xs, T, W, c, 1.0 / tau, res.status, res, lp_solves=solves,
                       seconds=seconds, info={"tau": tau, **info})


def finish_time_fairness(T, workers, capacity, remaining, elapsed, isolated_time=None, *,
                         rel_tol: float = 1e-4, max_iter: int = 60, aggregate: bool = True,
                         backend: str = "highs", **solve_options: Any) -> LPAllocation:
    r"""Finish-time fairness (Themis) by bisection on :math:`\rho` over LP feasibility checks.

    :math:`\rho_m(X) = (t_m + r_m/\mathrm{thr}_m(X))/d_m`; for fixed :math:`\rho`,
    :math:`\rho_m \le \rho` is the linear row :math:`\mathrm{thr}_m(X) \ge
    r_m/(\rho d_m - t_m)`.

    Parameters
    ----------
    T, workers, capacity, remaining
        As :func:`min_total_duration`.
    elapsed : array_like, shape (n,)
        Seconds since arrival :math:`t_m`.
    isolated_time : array_like, optional
        The denominator :math:`d_m` (default: ``remaining`` over the isolated share's
        throughput; pass the total work's to use it).
    rel_tol : float
        Relative width at which the bisection stops.
    max_iter : int
        Bisection steps at most.
    aggregate : bool
        Each feasibility check is the makespan LP with needs :math:`b_m(\rho)`; solve it
        as :func:`min_total_duration` does by default (jobs of one throughput row as one
        class, per-job time rows generated where they bind: a few small LPs) or, with
        ``False``, as the one LP over every job. Both are exact; they may return
        different optimal X.
    backend : str
        Solver backend.
    **solve_options
        Options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    LPAllocation
        ``objective`` :math:`\max_m \rho_m(\hat X)`; ``info["lower"]`` the bracket's proven
        lower end.

    Guarantee
    ---------
    :math:`\text{lower} \le \rho^* \le \max_m \rho_m(\hat X) \le (1 + \text{rel\_tol})\,
    \text{lower}` when the bisection converges within ``max_iter`` steps.

    Complexity
    ----------
    :math:`O(\log(\rho_{hi}/\rho_{lo})/\text{rel\_tol})` feasibility checks; each one LP
    with :math:`nK + 1` columns and :math:`2n + K` rows (``aggregate=False``) or the
    class LPs of :func:`min_total_duration` (on Gavel's 2,000-job trace one LP of about
    120 rows per check).

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4 (finish-time fairness, after Themis,
      Mahajan et al., NSDI 2020).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    r = np.asarray(remaining, dtype=float).reshape(n)
    if np.any(r <= 0):
        raise InvalidOption("remaining", r.min(), "remaining work must be > 0")
    tm = np.asarray(elapsed, dtype=float).reshape(n)
    Xiso = isolated_share(T, W, c)
    thr_iso = W * (T * Xiso).sum(axis=1)
    d = r / thr_iso if isolated_time is None else np.asarray(isolated_time, float).reshape(n)

    def rho_of(thr: np.ndarray) -> float:
        return float(np.max((tm + r / np.maximum(thr, 1e-300)) / d))

    hi = rho_of(thr_iso)
    lo = float(np.max(tm / d))
    best_X, best = Xiso, hi
    solves, seconds = 0, 0.0
    last: Result | None = None
    for _ in range(max_iter):
        if hi - lo <= rel_tol * hi:
            break
        mid = 0.5 * (lo + hi)
        need = r / np.maximum(mid * d - tm, 1e-300)
        if aggregate:
            lam, Xs, res, info = _min_makespan_classes(T, W, c, need, backend,
                                                       solve_options, "gavel_ftf")
            solves += info["lp_solves"]
            if lam is not None:
                Xs = repair_allocation(Xs, T, W, c)
                lam = float(np.min(W * row_sums(T * Xs) / need))
        else:
            lam, Xs, res = _max_common_rate(T, W, c, need, backend, solve_options,
                                            "gavel_ftf")
            solves += 1
        seconds += res.seconds
        last = res
        if lam is None:
            return _allocation(best_X, T, W, c, best, res.status, res, lp_solves=solves,
                               seconds=seconds, info={"fallback": "isolated"})
        if lam >= 1.0 - 1e-9:
            val = rho_of(W * (T * Xs).sum(axis=1))
            hi = min(mid, val) if val >= lo else mid
            if val < best:
                best_X, best = Xs, val
        else:
            lo = mid
    return _allocation(best_X, T, W, c, best, Status.OPTIMAL, last, lp_solves=solves,
                       seconds=seconds, info={"lower": lo, "upper": hi})


def max_sum_throughput(T, workers, capacity, *, aggregate: bool = True,
                       backend: str = "highs", **solve_options: Any) -> LPAllocation:
    r"""Total throughput: :math:`\max \sum_m \mathrm{thr}_m(X)` s.t. (1)-(3).

    Parameters
    ----------
    T, workers, capacity
        As :func:`max_min_fairness`.
    aggregate : bool
        Solve over classes of identical jobs (same throughput row and workers), as
        :func:`max_min_fairness` does; exact for the same reason (a convex problem
        symmetric under permuting identical jobs has an optimum that gives them one row).
    backend : str
        Solver backend.
    **solve_options
        Options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    LPAllocation
        ``objective`` in iterations/s; ``info["classes"]``.

    Guarantee
    ---------
    :math:`\sum_m \mathrm{thr}_m(\hat X) \ge \sum_m \mathrm{thr}_m(X)` for every feasible
    :math:`X`.

    Complexity
    ----------
    One LP with :math:`nK` columns and :math:`n + K` rows (:math:`n` = job classes when
    aggregated).

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4; Gavel's ``ThroughputSumWithPerf``.
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    if aggregate:
        first, inv, counts = job_classes(T, W)
    else:
        first, inv, counts = np.arange(n), np.arange(n), np.ones(n)
    Tc, Wc = T[first], W[first]
    res = solve_program(sum_throughput_program(Tc, Wc * counts, c), backend,
                        **solve_options)
    if not res.success:
        return _fail(n, K, res)
    return _allocation(res.values["X"][inv], T, W, c, res.objective, res.status, res,
                       seconds=res.seconds, info={"classes": int(first.size)})


def min_cost_slo(T, workers, capacity, prices, slo_rate=None, *, backend: str = "highs",
                 **solve_options: Any) -> LPAllocation:
    r"""Throughput per dollar with SLOs, the paper's linear-fractional program, as one LP by
    the Charnes-Cooper transform.

    :math:`\max \sum_m \mathrm{thr}_m(X) / \sum_{mk} p_k W_m X_{mk}` s.t.
    :math:`\mathrm{thr}_m(X) \ge b_m` and (1)-(3); with :math:`Y = sX`, :math:`s \ge 0`,
    :math:`\sum p_k W_m Y_{mk} = 1` and every row homogenised by :math:`s`.

    Parameters
    ----------
    T, workers, capacity
        As :func:`max_min_fairness`.
    prices : array_like, shape (K,)
        $ per GPU-hour :math:`p_k`.
    slo_rate : array_like, optional
        Required iterations/s :math:`b_m` (0 = no SLO).
    backend : str
        Solver backend.
    **solve_options
        Options for :func:`optsched.solvers.solve_program`.

    Returns
    -------
    LPAllocation
        ``objective`` iterations/s per $/h of :math:`\hat X`; ``info["slo_scale"]`` < 1 when
        the SLO rates were scaled down to the largest jointly feasible factor.

    Guarantee
    ---------
    :math:`\hat X` maximises the ratio over every feasible :math:`X` meeting the (scaled)
    SLOs: the transform is exact for :math:`s > 0` (Charnes and Cooper, 1962).

    Complexity
    ----------
    One LP with :math:`nK + 1` columns, preceded by one feasibility LP (the largest
    common SLO scale) when SLOs are given.

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4 (minimum cost with SLOs); A. Charnes and
      W. W. Cooper, "Programming with linear fractional functionals", Naval Research
      Logistics Quarterly 9, 1962. Gavel's code maximises :math:`\sum T_{mk}/p_k X_{mk}`
      instead; this follows the paper.
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    p = np.asarray(prices, dtype=float).reshape(K)
    if np.any(p <= 0):
        raise InvalidOption("prices", p.tolist(), "every GPU type needs a price > 0")
    b = np.zeros(n) if slo_rate is None else np.asarray(slo_rate, float).reshape(n)
    solves, seconds, scale = 0, 0.0, 1.0
    if np.any(b > 0):
        has = b > 0
        lam, _, res0 = _max_common_rate(T[has], W[has], c, b[has], backend, solve_options,
                                        "gavel_slo_check")
        solves += 1
        seconds += res0.seconds
        if lam is None:
            return _fail(n, K, res0)
        if lam < 1.0:
            scale = lam * (1 - 1e-6)
            b = b * scale
    # Charnes-Cooper: Y = s X, s >= 0, sum p_k W_m Y_mk = 1
    lp = LinearProgram(sense="max", name="gavel_min_cost_cc")
    Y = lp.add_variables("Y", (n, K), lb=0.0, ub=np.where(T > 0, np.inf, 0.0),
                         cost=W[:, None] * T)
    s = lp.add_variables("s", 1, lb=0.0, ub=np.inf)
    si = int(s.index[0])
    idx = Y.index
    lp.add_constraints("normalise", rows=np.zeros(n * K), cols=idx.ravel(),
                       vals=(W[:, None] * p[None, :]).ravel(), lb=1.0, ub=1.0, n_rows=1)
    _add_rate_rows(lp, Y, np.ones((n, K)), "time_fraction", z_col=si, z_coef=-1.0, ub=0.0)
    lp.add_constraints("capacity",
                       rows=np.concatenate([np.tile(np.arange(K), n), np.arange(K)]),
                       cols=np.concatenate([idx.ravel(), np.full(K, si)]),
                       vals=np.concatenate([np.repeat(W, K), -c]), ub=0.0, n_rows=K)
    keep = np.flatnonzero(b > 0)
    if keep.size:
        # homogenised SLO rows: W_m sum_k T_mk Y_mk / b_m - s >= 0
        A = (W[keep, None] * T[keep]) / b[keep, None]
        m = keep.size
        lp.add_constraints("slo", rows=np.concatenate([np.repeat(np.arange(m), K),
                                                       np.arange(m)]),
                           cols=np.concatenate([Y.index[keep].ravel(), np.full(m, si)]),
                           vals=np.concatenate([A.ravel(), -np.ones(m)]), lb=0.0, n_rows=m)
    res, vals = _solve(lp, backend, solve_options)
    solves += 1
    seconds += res.seconds
    if not res.success:
        return _fail(n, K, res)
    sv = float(vals["s"][0])
    if sv <= 1e-12:
        return _fail(n, K, res.replace(status=Status.ERROR))
    return _allocation(vals["Y"] / sv, T, W, c, res.objective, res.status, res,
                       lp_solves=solves, seconds=seconds, info={"slo_scale": scale, "s": sv})


# ------------------------------------------------- water filling (hierarchical max-min)
#: Gavel's relative slack for "can rise above the level" (``slack=1.0001``).
WATER_FILLING_SLACK = 1e-4
#: Relative margin below a level that a later program's row allows: the X that reached
#: the level met its row only to the solver's feasibility tolerance (HiGHS: 1e-7 on
#: scaled rows), and a row at exactly the level can make the next program infeasible.
#: 1e-6 is 100x below WATER_FILLING_SLACK, so no bottleneck test changes its answer through it.
_MARGIN = 1e-6


def _level_rows(lp: LinearProgram, X: VarBlock, A: np.ndarray, lower: np.ndarray,
                name: str, *, extra_col: int | None = None, extra: np.ndarray | None = None,
                extra_rows: np.ndarray | None = None) -> None:
    """Rows ``sum_k A[m, k] X[m, k] - extra[m] * v_m >= lower[m]`` (v one column, or one
    column per row given by ``extra_rows``)."""
    n = A.shape[0]
    rows, cols, vals = _rate_entries(X, A)
    if extra is not None:
        sel = np.flatnonzero(extra != 0)
        rows = np.concatenate([rows, sel])
        ecols = (np.full(sel.size, extra_col) if extra_rows is None else extra_rows[sel])
        cols = np.concatenate([cols, ecols])
        vals = np.concatenate([vals, -extra[sel]])
    lp.add_constraints(name, rows=rows, cols=cols, vals=vals, lb=lower, n_rows=n)


def max_min_fairness_water_filling(T, workers, capacity, weights=None, *,
                                   agnostic: bool = False, slack: float = WATER_FILLING_SLACK,
                                   max_levels: int | None = None, backend: str = "highs",
                                   **solve_options: Any) -> LPAllocation:
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

    Parameters
    ----------
    T, workers, capacity, weights
        As :func:`optsched.gavel.exact.max_min_fairness`.
    agnostic : bool
        :math:`T = 1` on every usable type (Gavel's ``MaxMinFairnessWaterFillingPolicy``;
        the default is its ``..._Perf``, heterogeneity-aware); the rows are then spread
        over the usable types in proportion to their GPUs where that fits
        (:func:`~optsched.gavel.model.proportional_split`, ``info["type_split"]``).
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


# ------------------------------------------- the makespan as Gavel's code answers it
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
    res = _interior_feasible_point(T, W, c, R, backend, solve_options,
                                   "gavel_makespan_interior")
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


def finish_time_fairness_interior(T, workers, capacity, remaining, elapsed,
                                  isolated_time=None, *, aggregate: bool = True,
                                  backend: str = "highs", **solve_options: Any
                                  ) -> LPAllocation:
    r"""Finish-time fairness with an interior point of the optimal face, the kind of
    answer Gavel's code returns.

    :func:`finish_time_fairness` returns a vertex of the last feasible check of its
    bisection. Gavel's ``FinishTimeFairnessPolicyWithPerf`` minimises
    :math:`\max_m \rho_m(X)` directly, a cone program, with ECOS, and keeps the point
    an interior-point method stops at: every job's ratio not at the optimum is left
    strictly below it, shares spread over the types. The optimal face is the feasible
    set of the linear rows

    .. math::
        W_m \sum_k T_{mk} X_{mk} \ge \frac{r_m}{\hat\rho\, d_m - t_m}\ (\forall m),
        \quad \text{(1)-(3)}

    at :math:`\hat\rho`, the value :func:`finish_time_fairness` reaches (within its
    ``rel_tol`` of :math:`\rho^*`; :math:`\hat\rho d_m > t_m` for every job since
    :math:`\rho_m > t_m/d_m`). That feasibility LP is solved with no objective by
    HiGHS's interior-point method without crossover or presolve
    (:data:`INTERIOR_OPTIONS`), as :func:`min_total_duration_interior` does at Gavel's
    makespan. Measured under ``rounds="original"`` against Gavel c4fa400 on the first
    100 jobs of its trace (``benchmarks/results/gavel_rounds_interior.md``), against
    the vertex: the largest share gap at the first differing reset 0.52 -> 0.19, mean
    JCT 1.006 -> 1.001 of Gavel's, jobs within 10 % of Gavel's JCT 77 % -> 86 %,
    within one round of its completion 43 % both. On the agnostic policy the same
    construction got further from Gavel's (within one round 26 % -> 17 %), so only the
    aware policy offers it (docs/gavel.md).

    Parameters
    ----------
    T, workers, capacity, remaining, elapsed, isolated_time, aggregate
        As :func:`finish_time_fairness` (``aggregate`` for its bisection).
    backend : str
        Must be ``"highs"`` (the interior-point options are HiGHS's).
    **solve_options
        Options for :func:`optsched.solvers.solve_program` (every LP).

    Returns
    -------
    LPAllocation
        ``objective`` :math:`\max_m \rho_m(\hat X)` of the point returned,
        ``info["rho_hat"]`` :math:`\hat\rho`, ``info["lower"]`` the bisection's lower
        end.

    Guarantee
    ---------
    :math:`\text{lower} \le \rho^* \le \max_m \rho_m(\hat X) \le \hat\rho \le
    (1 + \text{rel\_tol})\,\text{lower}`, within the interior-point solver's
    feasibility tolerance.

    Complexity
    ----------
    :func:`finish_time_fairness`, then one LP with :math:`nK` columns and :math:`2n + K`
    rows, by interior point.
    """
    if backend != "highs":
        raise InvalidOption("backend", backend, "the interior point is HiGHS's ipm: 'highs'")
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    vertex = finish_time_fairness(T, W, c, remaining, elapsed, isolated_time,
                                  aggregate=aggregate, backend=backend, **solve_options)
    if not vertex.ok or n == 0 or "fallback" in vertex.info:
        return vertex
    r = np.asarray(remaining, dtype=float).reshape(n)
    tm = np.asarray(elapsed, dtype=float).reshape(n)
    d = (r / (W * (T * isolated_share(T, W, c)).sum(axis=1)) if isolated_time is None
         else np.asarray(isolated_time, dtype=float).reshape(n))
    rho_hat = float(vertex.objective)   # type: ignore[arg-type]
    R = (W[:, None] * T) * ((rho_hat * d - tm) / r)[:, None]   # rows: R X >= 1
    res = _interior_feasible_point(T, W, c, R, backend, solve_options, "gavel_ftf_interior")
    seconds = vertex.seconds + res.seconds
    if not res.success:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            lp_solves=vertex.lp_solves + 1, seconds=seconds)
    Xs = repair_allocation(res.values["X"], T, W, c)
    thr = W * (T * Xs).sum(axis=1)
    value = float(np.max((tm + r / np.maximum(thr, 1e-300)) / d))
    return LPAllocation(Xs, value, Status.OPTIMAL, res, lp_solves=vertex.lp_solves + 1,
                        seconds=seconds, info={"rho_hat": rho_hat,
                                               "lower": vertex.info.get("lower")})


def _interior_feasible_point(T: np.ndarray, W: np.ndarray, c: np.ndarray, R: np.ndarray,
                             backend: str, solve_options: dict, name: str) -> Result:
    r"""HiGHS's interior point (no objective, crossover or presolve) of (1)-(3) and the
    rows :math:`\sum_k R_{mk} X_{mk} \ge 1`, each row scaled by its largest entry."""
    n = T.shape[0]
    rmax = R.max(axis=1)
    lp, X = allocation_program(T, W, c, sense="max", name=name)
    m_i, k_i = np.nonzero(R > 0)
    lp.add_constraints("finish_by", rows=m_i, cols=X.index[m_i, k_i],
                       vals=(R / rmax[:, None])[m_i, k_i], lb=1.0 / rmax, n_rows=n)
    opts = dict(solve_options)
    opts["options"] = {**dict(opts.get("options") or {}), **INTERIOR_OPTIONS}
    return solve_program(lp.freeze(), backend, **opts)


# ------------------------------------ max-min as Gavel's code states it, interior point
#: The interior-point methods of :func:`max_min_fairness_interior`, as
#: ``(backend, solver)`` of :func:`optsched.solvers.solve_program`.
INTERIOR_METHODS: dict[str, tuple[str, str | None]] = {
    "clarabel": ("cvxpy", "CLARABEL"), "highs-ipm": ("highs", None)}


def gavel_rates(T, workers, capacity, weights=None, *, agnostic: bool = False
                ) -> np.ndarray:
    r"""The coefficients of Gavel's max-min objective as its code forms them:
    :math:`A_{mk} = \frac{W_m}{w_m} \frac{\tilde T_{mk}}{\sum_j \tilde T_{mj} p_j}`.

    :math:`\tilde T = T` (``MaxMinFairnessPolicyWithPerf``) or 1 on every type the job
    has a rate for (``agnostic``, ``MaxMinFairnessPolicy``), and :math:`p` is Gavel's
    ``ProportionalPolicy`` share: :math:`c_k/n` on every entry, usable or not, then every
    row divided by the largest row sum, so :math:`p_k = c_k / \sum_j c_j`.
    :func:`normalised_rates` gives the same rates up to one factor common to every job
    (its equal share is scaled down only when a row exceeds 1, and is 0 on types the job
    cannot use): the same optima, but an interior-point method's stopping point also
    depends on the scale. ``O(nK)``.

    References
    ----------
    Gavel (Narayanan et al., OSDI 2020), ``policies/max_min_fairness.py`` and
    ``policies/proportional.py`` at c4fa40097339e9608ab71fd64c8bdea96a5e4a4c.
    """
    T, W, c = _arrays(T, workers, capacity)
    n = T.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    Te = (T > 0).astype(float) if agnostic else T
    p = c / max(float(c.sum()), 1e-300)
    thr_prop = row_sums(Te * p[None, :])  # not BLAS: the same sums on every CPU
    return Te * (W / (w * np.maximum(thr_prop, 1e-300)))[:, None]


def gavel_max_min_program(T, workers, capacity, weights=None, *, agnostic: bool = False
                          ) -> ProgramData:
    r"""Gavel's max-min program as its code states it (``MaxMinFairnessPolicyWithPerf``;
    ``agnostic``: ``MaxMinFairnessPolicy``), one row per job:

    .. math::
        \max z \quad\text{s.t.}\quad z \le \sum_k A_{mk} X_{mk}\ (\forall m),\quad
        \sum_k X_{mk} \le 1,\quad \sum_m W_m X_{mk} \le c_k,\quad X \ge 0,

    with :math:`A` from :func:`gavel_rates`. It differs from :func:`max_min_program` in
    what does not change the optimal value: a variable on every (job, type), usable or
    not, with no upper bound but the row sums; every job its own row (no classes); and
    Gavel's scaling of :math:`A`. Its optimal value is the max-min optimum (a type a job
    cannot use adds nothing to its rate, only load: an optimum puts 0 there, or moves
    it to the job's row slack). ``O(nK)`` to build: :math:`nK + 1` columns,
    :math:`2n + K` rows.
    """
    T, W, c = _arrays(T, workers, capacity)
    A = gavel_rates(T, W, c, weights, agnostic=agnostic)
    data = max_min_program(T, W, c, A, bounded=False)
    return data


def max_min_fairness_interior(T, workers, capacity, weights=None, *, agnostic: bool = False,
                              method: str = "clarabel", **solve_options: Any) -> LPAllocation:
    r"""Max-min fairness / LAS as Gavel's code answers it: its program
    (:func:`gavel_max_min_program`) solved to an interior point of the optimal face.

    With few jobs on many GPUs the max-min LP has many optima. A simplex method
    (:func:`max_min_fairness`) returns a vertex: some jobs wholly on one type, others
    spread. Gavel's code solves the program with ECOS, an interior-point method, and
    keeps the point it stops at, near the centre of the optimal face: every job spread
    over the types. Under Gavel's round mechanics (``rounds="original"``) which optimum
    is returned decides the rounds that follow. ECOS is not a dependency here; the
    interior point is another interior-point method's:

    * ``"clarabel"`` (default): Clarabel through the cvxpy backend
      (:data:`INTERIOR_METHODS`), a primal-dual interior-point method like ECOS;
    * ``"highs-ipm"``: HiGHS's interior-point method without crossover or presolve
      (:data:`INTERIOR_OPTIONS`).

    Chosen by measurement (``benchmarks/gavel_rounds_peer.py``, Gavel c4fa400, first
    100 jobs of its trace, ``rounds="original"``; share of jobs completing within one
    round of Gavel's completion / within 10 % of its JCT): aware max-min with HiGHS's
    vertex 24 % / 47 %, HiGHS's ipm 34 % / 59 %, Clarabel 52 % / 90 % (mean JCT 0.965,
    0.990, 0.999 of Gavel's); agnostic 24 % / 50 %, 27 % / 68 %, 47 % / 88 %; on the
    first 300 jobs, aware, the vertex 15 % / 46 %, Clarabel 33 % / 80 %
    (``benchmarks/results/gavel_rounds_interior.md``, ``..._300.md``).
    Where each method stops on the optimal face is not specified by any of them, so the
    point is of ECOS's kind, not ECOS's to the digit.

    Parameters
    ----------
    T, workers, capacity, weights
        As :func:`max_min_fairness`.
    agnostic : bool
        Gavel's ``MaxMinFairnessPolicy``: rate 1 on every type the job has a rate for.
        The point is returned as solved (no type split: the interior point spreads rows
        itself).
    method : "clarabel" or "highs-ipm"
        The interior-point method (above).
    **solve_options
        Options for :func:`optsched.solvers.solve_program` (``backend`` and ``solver``
        are the method's).

    Returns
    -------
    LPAllocation
        ``X`` (clipped to [0, 1] and 0 where a job has no rate, as Gavel clips it, then
        :func:`repair_allocation`), ``objective`` :math:`z^*` of the solve,
        ``info["normalised"]`` :math:`A`, ``info["method"]``.

    Guarantee
    ---------
    :math:`\min_m \sum_k A_{mk} \hat X_{mk} \ge z^* (1 - \varepsilon)` with
    :math:`z^*` the max-min optimum and :math:`\varepsilon` of the order of the solver's
    tolerances (interior-point methods stop at a relative gap of about 1e-8).

    Complexity
    ----------
    One LP with :math:`nK + 1` columns and :math:`2n + K` rows, by interior point
    (polynomial; tens of iterations in practice).

    References
    ----------
    * D. Narayanan et al., OSDI 2020, §4.1 (LAS); Gavel's
      ``MaxMinFairnessPolicyWithPerf`` / ``MaxMinFairnessPolicy`` (ECOS).
    """
    if method not in INTERIOR_METHODS:
        raise InvalidOption("method", method, f"must be one of {sorted(INTERIOR_METHODS)}")
    for key in ("backend", "solver"):
        if key in solve_options:
            raise InvalidOption(key, solve_options[key],
                                f"the interior point's method decides it (method={method!r})")
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    backend, solver = INTERIOR_METHODS[method]
    opts = dict(solve_options)
    if backend == "highs":
        opts["options"] = {**dict(opts.get("options") or {}), **INTERIOR_OPTIONS}
    data = gavel_max_min_program(T, W, c, weights, agnostic=agnostic)
    res = solve_program(data, backend, solver=solver, **opts)
    if not res.success:
        return _fail(n, K, res)
    A = gavel_rates(T, W, c, weights, agnostic=agnostic)
    return _allocation(res.values["X"], T, W, c, float(res.values["z"][0]), res.status, res,
                       lp_solves=1, seconds=res.seconds,
                       info={"normalised": A, "method": method})


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, objective: str = "max_min_fairness",
          pareto: bool | str = "greedy", aggregate: bool = True, **options: Any) -> Result:
    r"""One round's optimal allocation for ``objective``, the instance's jobs all active.

    Parameters
    ----------
    instance : Instance
        The round's active jobs (remaining work, workers, weights, throughputs) and cluster.
    backend : str
        Solver backend of the LP (``"highs"``, ``"pyomo"``, ``"cvxpy"``).
    objective : str
        One of :data:`optsched.gavel.model.OBJECTIVES`: ``"max_min_fairness"`` (LAS,
        weighted, :func:`max_min_fairness`), ``"min_total_duration"`` (makespan of the
        remaining work, :func:`min_total_duration`), ``"max_sum_throughput"``
        (:func:`max_sum_throughput`) or ``"finish_time_fairness"``
        (:func:`finish_time_fairness`).
    pareto : bool or str
        Max-min only: how idle capacity is handed out after the max-min LP
        (:func:`max_min_fairness`).
    aggregate : bool
        Max-min and makespan: solve over classes of identical jobs (exact; for the
        makespan, jobs of one throughput row, with per-job time rows where they bind,
        :func:`min_total_duration`).
    **options
        Solver options (``time_limit``, ``solver``, ...) for
        :func:`optsched.solvers.solve_program`.

    Returns
    -------
    Result
        ``objective`` is the returned allocation's value
        (:func:`optsched.gavel.model.objective_value`), ``bound`` the LP optimum (for
        finish-time fairness the bisection's proven lower end), ``values["X"]`` the
        allocation; ``extra["lp_solves"]`` counts the LPs.

    Guarantee
    ---------
    For every allocation :math:`X` feasible for Gavel's constraints (1)-(3):
    :math:`v(\hat X) \ge v(X)` for a maximised objective and :math:`v(\hat X) \le v(X)` for
    a minimised one (up to the solver's tolerance); for finish-time fairness
    :math:`\text{bound} \le \rho^* \le v(\hat X) \le (1 + 10^{-4})\,\text{bound}`.

    Complexity
    ----------
    One LP with :math:`nK + 1` columns and :math:`n + K + n` rows (:math:`n` jobs or job
    classes, :math:`K` GPU types), polynomial; the Pareto LP doubles it; finish-time
    fairness solves :math:`O(\log(1/\varepsilon))` such LPs.

    References
    ----------
    * D. Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for Deep
      Learning Workloads", OSDI 2020, §3.1 (allocation and constraints), §4 (policies).
    """
    import time

    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {sorted(OBJECTIVES)}")
    t0 = time.perf_counter()
    state = round_state(instance)
    T, W, c = state.T, state.W, state.c
    if objective == "max_min_fairness":
        sol = max_min_fairness(T, W, c, state.w, pareto=pareto, aggregate=aggregate,
                               backend=backend, **options)
        bound = sol.objective
    elif objective == "makespan":
        sol = min_total_duration(T, W, c, state.r, aggregate=aggregate, backend=backend,
                                 **options)
        bound = sol.objective
    elif objective == "max_sum_throughput":
        sol = max_sum_throughput(T, W, c, backend=backend, **options)
        bound = sol.objective
    else:
        iso = W * (T * isolated_share(T, W, c)).sum(axis=1)
        sol = finish_time_fairness(T, W, c, state.r, state.elapsed, isolated_time=state.r / iso,
                                   backend=backend, **options)
        bound = sol.info.get("lower") if sol.ok else None
    res = sol.result
    seconds = time.perf_counter() - t0
    common: dict[str, Any] = {"model": "gavel", "method": "exact",
              "backend": res.backend if res is not None else backend,
              "solver": res.solver if res is not None else None,
              "extra": {"objective_kind": objective, "lp_solves": sol.lp_solves,
                        **({"time_limit": res.extra.get("time_limit")} if res else {})}}
    if not sol.ok:
        return Result(status=sol.status, solve_seconds=seconds,
                      message=res.message if res is not None else "", **common)
    value = objective_value(state, sol.X, objective)
    return Result(status=Status.OPTIMAL if sol.status is Status.OPTIMAL else sol.status,
                  objective=value, bound=bound, gap=relative_gap(value, bound),
                  values={"X": sol.X}, solve_seconds=seconds, ratio=1.0,
                  ratio_note="optimal allocation of the round (Gavel's LP)", **common)


# --------------------------------------------------------------------------- space sharing
# Gavel's packed programs (OSDI'20 §3.1, space sharing): single jobs and pairs of jobs on
# the same GPUs (optsched.gavel.model, "Space sharing").


def _values(res: Any, n: int, P: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    v = res.values
    return (np.clip(np.asarray(v["X"], dtype=float).reshape(n, K), 0.0, 1.0),
            np.clip(np.asarray(v["Y"], dtype=float).reshape(P, K), 0.0, 1.0))


def _common_rate(T, W, c, pairs: Pairs, need: np.ndarray, backend: str, opts: dict,
                 name: str) -> tuple[float | None, np.ndarray, np.ndarray, Any]:
    r""":math:`\max \lambda` s.t. :math:`\mathrm{thr}_m(X, Y) \ge \lambda\, need_m` over the
    packed program; the :math:`\lambda` the returned ``(X, Y)`` reach (``None`` if the
    solver fails). Rows are scaled as
    :func:`optsched.gavel.exact._max_common_rate` scales them (each by its largest
    coefficient, :math:`\lambda` in units of the isolated share's value)."""
    n, K = T.shape
    P = len(pairs)
    lp, X, Y, rows, cols, rate = packed_program(T, W, c, pairs, name)
    coef = rate / need[rows]
    rmax = np.zeros(n)
    np.maximum.at(rmax, rows, coef)
    rmax = np.where(rmax > 0, rmax, 1.0)
    lam_iso = float(np.min(W * row_sums(T * isolated_share(T, W, c)) / need))
    scale = lam_iso if lam_iso > 0 else 1.0
    lam = lp.add_variables("lam", 1, lb=0.0, ub=np.inf, cost=1.0)
    lp.add_constraints("rate", rows=np.concatenate([rows, np.arange(n)]),
                       cols=np.concatenate([cols, np.full(n, int(lam.index[0]))]),
                       vals=np.concatenate([coef / rmax[rows], -scale / rmax]), lb=0.0,
                       n_rows=n)
    res = solve_program(lp.freeze(), backend, **opts)
    if not res.success:
        return None, np.zeros((n, K)), np.zeros((P, K)), res
    Xv, Yv = _values(res, n, P, K)
    goal = float(np.asarray(res.values["lam"]).ravel()[0]) * scale * need
    if not _top_up(T, W, c, pairs, Xv, Yv, goal):
        # no time or GPU left to top up with: give up a relative 1e-7 of every share
        Xv *= 1 - 1e-7
        Yv *= 1 - 1e-7
        _top_up(T, W, c, pairs, Xv, Yv, goal * (1 - 1e-7))
    got = float(np.min(packed_throughput(T, W, pairs, Xv, Yv) / need))
    return got, Xv, Yv, res


def _top_up(T: np.ndarray, W: np.ndarray, c: np.ndarray, pairs: Pairs, X: np.ndarray,
            Y: np.ndarray, goal: np.ndarray) -> bool:
    """Give each job whose throughput under ``(X, Y)`` is below ``goal`` (a row the
    solver satisfied only within its feasibility tolerance, e.g. a job of tiny remaining
    work whose row scales to ~1e-16) the missing time on its fastest type, from the
    time and GPUs left free; ``X`` is changed in place. Feasibility is kept exactly.
    Whether every job then reaches its goal."""
    thr = packed_throughput(T, W, pairs, X, Y)
    short = np.flatnonzero(thr < goal * (1 - 1e-9))
    if not len(short):
        return True
    time = X.sum(axis=1)
    load = gpu_loads(W, X)
    if len(pairs):
        a, b = pairs.rows[:, 0], pairs.rows[:, 1]
        np.add.at(time, a, Y.sum(axis=1))
        np.add.at(time, b, Y.sum(axis=1))
        load += (W[a][:, None] * Y).sum(axis=0)
    for m in short.tolist():
        k = int(np.argmax(T[m]))
        if not T[m, k] > 0:
            continue
        dx = (goal[m] - thr[m]) / (W[m] * T[m, k])
        dx = min(dx, max(0.0, 1.0 - time[m]), max(0.0, (c[k] - load[k]) / W[m]))
        if dx > 0:
            X[m, k] += dx
            time[m] += dx
            load[k] += W[m] * dx
    return bool(np.all(packed_throughput(T, W, pairs, X, Y) >= goal * (1 - 1e-9)))


def max_min_fairness_packed(T, workers, capacity, pairs: Pairs, weights=None, *,
                            point: str = "vertex", backend: str = "highs",
                            **solve_options: Any) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed max-min fairness (``MaxMinFairnessPolicyWithPacking``) as one
    epigraph LP over single jobs and pairs:

    .. math::

        \max z \quad\text{s.t.}\quad
        z \le s_m \Big(\sum_k T_{mk} X_{mk} + \sum_{p \ni m} \sum_k R_{p,m,k} Y_{pk}\Big)
        \ \forall m,\qquad
        \sum_k X_{mk} + \sum_{p \ni m} \sum_k Y_{pk} \le 1 \ \forall m,

    .. math::

        \sum_m W_m X_{mk} + \sum_p W_p Y_{pk} \le c_k \ \forall k,\qquad
        0 \le X_{mk} \le [T_{mk} > 0],\ 0 \le Y_{pk} \le [R_{p,\cdot,k} > 0],

    with :math:`s_m = W_m / (w_m\,\mathrm{thr}^{eq}_m)` (the normalisation of
    :func:`optsched.gavel.model.normalised_rates`) and :math:`R_{p,m,k}` job m's
    co-located per-worker rate in pair p on type k.

    Parameters
    ----------
    T, workers, capacity
        Per-worker isolated throughputs (n, K), gang sizes (n,), GPUs per type (K,).
    pairs : Pairs
        The pairs that may be formed (:func:`candidate_pairs`); none gives exactly
        :func:`optsched.gavel.exact.max_min_fairness`'s program.
    weights : array_like, optional
        Priority weights :math:`w_m` (default 1).
    point : "vertex" or "interior"
        Which optimum: the simplex's vertex (``"vertex"``, default), or a point inside
        the optimal face (``"interior"``: HiGHS's interior-point method without
        crossover or presolve, :data:`optsched.gavel.exact.INTERIOR_OPTIONS`), the kind
        of optimum Gavel's code gets from ECOS. The program has many optima (every job
        above the minimum is free within the constraints); a vertex runs few pairs, an
        interior point spreads time over many, and the round mechanism then behaves
        differently (docs/gavel.md, "Space sharing": on the first 100 one-worker jobs
        of measured keys, mean JCT 1.08x Gavel's with the vertex, 1.01x with the
        interior point).
    backend, **solve_options
        Solver layer (:func:`optsched.solvers.solve_program`); ``point="interior"``
        needs ``"highs"``.

    Returns
    -------
    (LPAllocation, ndarray)
        ``X`` (n, K) of the single jobs with ``objective`` :math:`\min_m
        \mathrm{thr}_m / (w_m \mathrm{thr}^{eq}_m)` at the point returned (the optimum
        :math:`z^*` for a vertex; within the solver's tolerance of it for an interior
        point), and ``Y`` (P, K) of the pairs.

    Guarantee
    ---------
    :math:`z^* \ge z^*_{\text{unpacked}}` (``Y = 0`` is feasible), with equality when
    there are no pairs; :math:`z^* \ge \min_m s_m\,\mathrm{thr}_m(X, Y) / W_m` for every
    feasible :math:`(X, Y)`.

    Complexity
    ----------
    One LP with :math:`(n + P)K + 1` columns and :math:`2n + K` rows.

    References
    ----------
    D. Narayanan et al., OSDI 2020, §3.1 (space sharing) and §4.1 (LAS); Gavel's
    ``MaxMinFairnessPolicyWithPacking.get_allocation``.
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    P = len(pairs)
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0), \
            np.zeros((0, K))
    if point not in ("vertex", "interior"):
        raise InvalidOption("point", point, "must be 'vertex' or 'interior'")
    if point == "interior":
        if backend != "highs":
            raise InvalidOption("backend", backend,
                                "the interior point is HiGHS's ipm: 'highs'")
        solve_options = dict(solve_options)
        solve_options["options"] = {**dict(solve_options.get("options") or {}),
                                    **INTERIOR_OPTIONS}
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    thr_eq = row_sums(T * equal_share(T, c, n=n))
    lp, X, Y, rows, cols, rate = packed_program(T, W, c, pairs, "gavel_max_min_packed")
    z = lp.add_variables("z", 1, lb=-np.inf, ub=np.inf, cost=1.0)
    # z <= thr_m / (w_m thr_eq_m): W_m T_mk / (w_m thr_eq_m) = s_m T_mk per unit
    norm = rate / (w * np.maximum(thr_eq, 1e-300))[rows]
    lp.add_constraints("epigraph", rows=np.concatenate([rows, np.arange(n)]),
                       cols=np.concatenate([cols, np.full(n, int(z.index[0]))]),
                       vals=np.concatenate([-norm, np.ones(n)]), ub=0.0, n_rows=n)
    res = solve_program(lp.freeze(), backend, **solve_options)
    if not res.success:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            seconds=res.seconds), np.zeros((P, K))
    Xv, Yv = _values(res, n, P, K)
    zv = float(np.min(packed_throughput(T, W, pairs, Xv, Yv) / (w * np.maximum(thr_eq,
                                                                            1e-300))))
    return LPAllocation(Xv, zv, res.status, res, seconds=res.seconds, info={"point": point}), Yv


def min_total_duration_packed(T, workers, capacity, pairs: Pairs, remaining, *,
                              point: str = "vertex", backend: str = "highs",
                              **solve_options: Any) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed makespan policy (``MinTotalDurationPolicyWithPacking``) as one LP:
    the smallest :math:`M` with :math:`\mathrm{thr}_m(X, Y) \ge r_m / M` for every job is
    :math:`1/\lambda^*`, :math:`\lambda^* = \max \lambda` s.t.
    :math:`\mathrm{thr}_m(X, Y) \ge \lambda r_m` and the packed constraints (module
    docstring).

    Gavel's code bisects on :math:`M` with feasibility programs and stops within 5 %
    (an interior point of the last feasible one); ``point="vertex"`` (default) returns
    the exact optimum, every job paced to end at :math:`M^*`; ``point="interior"``
    returns that kind of answer as :func:`min_total_duration_interior` does without
    pairs: the makespan :math:`M_G` where Gavel's bisection stops on :math:`M^*`
    (:func:`gavel_bisection_makespan`, :math:`M_G < 1.05 M^*`), and a point of the
    feasibility LP :math:`\mathrm{thr}_m(X, Y) \ge r_m / M_G` found by HiGHS's
    interior-point method without crossover (:data:`INTERIOR_OPTIONS`; needs
    ``backend="highs"``).

    Returns
    -------
    (LPAllocation, ndarray)
        ``X`` and ``objective`` :math:`M^* = 1/\lambda^*` (seconds, up to the solver's
        tolerance: the :math:`\lambda` the returned allocation reaches), and ``Y``.

    Guarantee
    ---------
    :math:`\max_m r_m / \mathrm{thr}_m(\hat X, \hat Y) = M^* \le M` for every feasible
    packed allocation whose makespan is :math:`M`; :math:`M^*` is at most the unpacked
    policy's (``Y = 0`` is feasible).

    Complexity
    ----------
    One LP with :math:`(n + P)K + 1` columns and :math:`2n + K` rows.

    References
    ----------
    D. Narayanan et al., OSDI 2020, §3.1 (space sharing), §4.2 (makespan).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0), \
            np.zeros((0, K))
    r = np.asarray(remaining, dtype=float).reshape(n)
    if np.any(r <= 0):
        raise InvalidOption("remaining", float(r.min()), "remaining work must be > 0")
    if point not in ("vertex", "interior"):
        raise InvalidOption("point", point, "must be 'vertex' or 'interior'")
    if point == "interior" and backend != "highs":
        raise InvalidOption("backend", backend, "the interior point is HiGHS's ipm: 'highs'")
    lam, Xv, Yv, res = _common_rate(T, W, c, pairs, r, backend, solve_options,
                                    "gavel_makespan_packed")
    if lam is None or not lam > 0:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            seconds=res.seconds), np.zeros((len(pairs), K))
    if point == "vertex":
        return LPAllocation(Xv, 1.0 / lam, res.status, res, seconds=res.seconds), Yv
    M_star = 1.0 / lam
    M_g = gavel_bisection_makespan(M_star)
    P = len(pairs)
    lp, X, Y, rows, cols, rate = packed_program(T, W, c, pairs, "gavel_makespan_packed_in")
    # rows thr_m >= r_m / M_g, each scaled by its largest coefficient
    coef = rate * (M_g / r)[rows]
    rmax = np.zeros(n)
    np.maximum.at(rmax, rows, coef)
    rmax = np.where(rmax > 0, rmax, 1.0)
    lp.add_constraints("finish_by", rows=rows, cols=cols, vals=coef / rmax[rows],
                       lb=1.0 / rmax, n_rows=n)
    opts = dict(solve_options)
    opts["options"] = {**dict(opts.get("options") or {}), **INTERIOR_OPTIONS}
    res2 = solve_program(lp.freeze(), backend, **opts)
    seconds = res.seconds + res2.seconds
    if not res2.success:
        return LPAllocation(np.zeros((n, K)), None, res2.status, res2, lp_solves=2,
                            seconds=seconds), np.zeros((P, K))
    Xi, Yi = _values(res2, n, P, K)
    value = float(np.max(r / np.maximum(packed_throughput(T, W, pairs, Xi, Yi), 1e-300)))
    return LPAllocation(Xi, value, Status.OPTIMAL, res2, lp_solves=2, seconds=seconds,
                        info={"optimum": M_star, "bisection_makespan": M_g}), Yi


def finish_time_fairness_packed(T, workers, capacity, pairs: Pairs, remaining, elapsed,
                                isolated_time, *, rel_tol: float = 1e-4, max_iter: int = 60,
                                backend: str = "highs", **solve_options: Any
                                ) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed finish-time fairness (``FinishTimeFairnessPolicyWithPacking``):
    :math:`\min \max_m \rho_m`, :math:`\rho_m = (t_m + r_m / \mathrm{thr}_m(X, Y)) / d_m`,
    by bisection on :math:`\rho` over packed feasibility LPs: for fixed :math:`\rho`,
    :math:`\rho_m \le \rho` is the linear row :math:`\mathrm{thr}_m(X, Y) \ge r_m /
    (\rho d_m - t_m)`, checked as :math:`\lambda^* \ge 1` of the common-rate LP (as
    :func:`optsched.gavel.exact.finish_time_fairness` does without pairs).

    Parameters
    ----------
    T, workers, capacity, pairs, remaining
        As :func:`min_total_duration_packed`.
    elapsed : array_like
        Seconds since arrival :math:`t_m`.
    isolated_time : array_like
        :math:`d_m`, the job's time under its isolated share.
    rel_tol, max_iter
        Bisection stop: relative bracket width, steps.

    Returns
    -------
    (LPAllocation, ndarray)
        ``objective`` :math:`\max_m \rho_m(\hat X, \hat Y)`, ``info["lower"]`` the proven
        lower end of the bracket; and ``Y``.

    Guarantee
    ---------
    :math:`\text{lower} \le \rho^* \le \max_m \rho_m(\hat X, \hat Y) \le (1 +
    \text{rel\_tol})\,\text{lower}` when the bisection converges within ``max_iter``.

    Complexity
    ----------
    :math:`O(\log(\rho_{hi}/\rho_{lo}) / \text{rel\_tol})` LPs of :math:`(n + P)K + 1`
    columns and :math:`2n + K` rows.

    References
    ----------
    D. Narayanan et al., OSDI 2020, §3.1 (space sharing), §4 (finish-time fairness,
    after Themis, Mahajan et al., NSDI 2020).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    P = len(pairs)
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0), \
            np.zeros((0, K))
    r = np.asarray(remaining, dtype=float).reshape(n)
    if np.any(r <= 0):
        raise InvalidOption("remaining", float(r.min()), "remaining work must be > 0")
    tm = np.asarray(elapsed, dtype=float).reshape(n)
    d = np.asarray(isolated_time, dtype=float).reshape(n)
    Xiso = isolated_share(T, W, c)

    def rho_of(thr: np.ndarray) -> float:
        return float(np.max((tm + r / np.maximum(thr, 1e-300)) / d))

    hi = rho_of(W * row_sums(T * Xiso))
    lo = float(np.max(tm / d))
    best_X, best_Y, best = Xiso, np.zeros((P, K)), hi
    solves, seconds = 0, 0.0
    last = None
    for _ in range(max_iter):
        if hi - lo <= rel_tol * hi:
            break
        mid = 0.5 * (lo + hi)
        need = r / np.maximum(mid * d - tm, 1e-300)
        lam, Xv, Yv, res = _common_rate(T, W, c, pairs, need, backend, solve_options,
                                        "gavel_ftf_packed")
        solves += 1
        seconds += res.seconds
        last = res
        if lam is None:
            return LPAllocation(best_X, best, res.status, res, lp_solves=solves,
                                seconds=seconds, info={"fallback": "isolated"}), best_Y
        if lam >= 1.0 - 1e-9:
            val = rho_of(packed_throughput(T, W, pairs, Xv, Yv))
            hi = min(mid, val) if val >= lo else mid
            if val < best:
                best_X, best_Y, best = Xv, Yv, val
        else:
            lo = mid
    return LPAllocation(best_X, best, Status.OPTIMAL, last, lp_solves=solves,
                        seconds=seconds, info={"lower": lo, "upper": hi}), best_Y


def max_sum_throughput_packed(T, workers, capacity, pairs: Pairs, prices=None,
                              slo_rate=None, *, backend: str = "highs",
                              **solve_options: Any) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed cost policy (``ThroughputNormalizedByCostSumWithPackingSLOs``,
    registered as ``max_sum_throughput_normalized_by_cost_packed_SLOs``): the largest
    sum of every job's throughput per unit of its types' prices,

    .. math::

        \max \sum_m \Big(\sum_k \frac{W_m T_{mk}}{p_k} X_{mk}
            + \sum_{p \ni m} \sum_k \frac{W_m R_{p,m,k}}{p_k} Y_{pk}\Big)
        \quad\text{s.t.}\quad \mathrm{thr}_m(X, Y) \ge b_m \ (m \text{ with an SLO})

    and the packed constraints (module docstring); a pair's price counts once per job
    of it, as in Gavel's objective. When the SLO rows make the program infeasible they
    are dropped and it is solved again (Gavel's code does the same);
    ``info["slo_dropped"]`` says so.

    Parameters
    ----------
    T, workers, capacity, pairs
        As :func:`max_min_fairness_packed`.
    prices : array_like, optional
        :math:`p_k` per type (default 1: Gavel's simulator without price data sums raw
        throughputs).
    slo_rate : array_like, optional
        :math:`b_m`, iterations/s each job needs to meet its SLO (NaN: no SLO).

    Returns
    -------
    (LPAllocation, ndarray)
        ``X`` with ``objective`` the optimum, and ``Y``.

    Guarantee
    ---------
    The objective is :math:`\ge` that of every feasible packed allocation meeting the
    SLO rows (of every one, when they were dropped); it is at least the unpacked
    policy's (``Y = 0`` is feasible).

    Complexity
    ----------
    One LP (two when the SLO rows are dropped) with :math:`(n + P)K` columns and
    :math:`n + K + s` rows for :math:`s` SLOs.

    References
    ----------
    D. Narayanan et al., OSDI 2020, §3.1 (space sharing), §4.4 (cost, SLOs).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    P = len(pairs)
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0), \
            np.zeros((0, K))
    p = np.ones(K) if prices is None else np.asarray(prices, dtype=float).reshape(K)
    if np.any(~np.isfinite(p)) or np.any(p <= 0):
        raise InvalidOption("prices", p.tolist(), "must be finite numbers > 0")
    b = None if slo_rate is None else np.asarray(slo_rate, dtype=float).reshape(n)
    solves, seconds = 0, 0.0
    for with_slo in ((True, False) if b is not None and np.isfinite(b).any() else (False,)):
        lp, X, Y, rows, cols, rate = packed_program(T, W, c, pairs, "gavel_cost_packed")
        lp.set_cost(X, W[:, None] * T / p)
        if P:
            Wp = W[pairs.rows[:, 0]][:, None]
            lp.set_cost(Y, Wp * (pairs.R[:, 0, :] + pairs.R[:, 1, :]) / p)
        if with_slo:
            assert b is not None
            has = np.isfinite(b)
            pick = has[rows]
            lp.add_constraints("slo", rows=rows[pick], cols=cols[pick], vals=rate[pick],
                               lb=np.where(has, b, -np.inf), n_rows=n)
        res = solve_program(lp.freeze(), backend, **solve_options)
        solves += 1
        seconds += res.seconds
        if res.success:
            Xv, Yv = _values(res, n, P, K)
            value = float((W[:, None] * T / p * Xv).sum())
            if P:
                value += float((Wp * (pairs.R[:, 0, :] + pairs.R[:, 1, :]) / p * Yv).sum())
            return LPAllocation(Xv, value, res.status, res, lp_solves=solves,
                                seconds=seconds,
                                info={"slo_dropped": b is not None and not with_slo}), Yv
    return LPAllocation(np.zeros((n, K)), None, res.status, res, lp_solves=solves,
                        seconds=seconds), np.zeros((P, K))


def max_min_fairness_water_filling_packed(T, workers, capacity, pairs: Pairs, weights=None,
                                          *, slack: float = WATER_FILLING_SLACK,
                                          max_levels: int | None = None,
                                          backend: str = "highs", **solve_options: Any
                                          ) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed hierarchical max-min fairness by water filling
    (``MaxMinFairnessWaterFillingPolicyWithPacking``): the algorithm of
    :func:`optsched.gavel.exact.max_min_fairness_water_filling` over the packed program
    (module docstring), with :math:`y_m(X, Y) = \mathrm{thr}_m(X, Y) / (w_m\,
    \mathrm{thr}^{eq}_m)`. Iteration :math:`i`, frozen jobs :math:`F` at levels
    :math:`f_m`, common level :math:`L` of the others:

    1. the level LP :math:`t^* = \max t` s.t. :math:`y_m \ge L + t` (:math:`m \notin F`),
       :math:`y_m \ge f_m` (:math:`m \in F`) and the packed constraints;
       :math:`L \leftarrow L + t^*`;
    2. the bottleneck MILP :math:`\max \sum_{m \notin F} z_m` s.t.
       :math:`y_m \ge L + \delta L z_m` (:math:`m \notin F`), :math:`y_m \ge f_m`
       (:math:`m \in F`), :math:`z \in \{0, 1\}`; the jobs with :math:`z_m = 0` are
       frozen at :math:`L`.

    Each job is its own row (a job's pairs make it unlike any other), so there are no
    classes.

    Parameters
    ----------
    T, workers, capacity, pairs, weights
        As :func:`max_min_fairness_packed`.
    slack : float
        Relative rise :math:`\delta > 0` a job must reach to count as not a bottleneck
        (Gavel's 1.0001).
    max_levels : int, optional
        Most iterations (default :math:`n`, which always suffices).
    backend, **solve_options
        Solver layer; the MILP needs a backend with integer support.

    Returns
    -------
    (LPAllocation, ndarray)
        ``X`` with ``objective`` the first level :math:`z^*` (the packed max-min value)
        and ``info["levels"]`` every job's final level; and ``Y``.

    Guarantee
    ---------
    The first level is the optimum of :func:`max_min_fairness_packed`; when every job
    is frozen, no job's :math:`y_m` can rise by more than a relative :math:`\delta`
    without lowering a job already at a level no higher (the leximin order up to
    :math:`\delta`).

    Complexity
    ----------
    At most one LP and one MILP per distinct level (at most :math:`n`), each with
    :math:`(n + P)K + 1` columns (+ :math:`n` binaries) and :math:`2n + K` rows.

    References
    ----------
    D. Narayanan et al., OSDI 2020, §3.1 (space sharing), §4 (hierarchical policies).
    """
    if not (isinstance(slack, (int, float)) and slack > 0):
        raise InvalidOption("slack", slack, "must be a number > 0")
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    P = len(pairs)
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0), \
            np.zeros((0, K))
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    thr_eq = row_sums(T * equal_share(T, c, n=n))
    norm = 1.0 / (w * np.maximum(thr_eq, 1e-300))
    frozen = np.zeros(n, bool)
    level = np.zeros(n)
    L = 0.0
    zstar: float | None = None
    solves, seconds = 0, 0.0
    values: tuple[np.ndarray, np.ndarray] | None = None
    res = None
    limit = n if max_levels is None else int(max_levels)
    for _ in range(limit):
        # 1. the level LP
        lp, X, Y, rows, cols, rate = packed_program(T, W, c, pairs, "gavel_wf_packed_level")
        t = lp.add_variables("t", 1, lb=-np.inf, ub=np.inf, cost=1.0)
        lower = np.where(frozen, level * (1 - _MARGIN), L)
        open_rows = np.flatnonzero(~frozen)
        lp.add_constraints("level", rows=np.concatenate([rows, open_rows]),
                           cols=np.concatenate([cols, np.full(open_rows.size,
                                                               int(t.index[0]))]),
                           vals=np.concatenate([rate * norm[rows],
                                                -np.ones(open_rows.size)]),
                           lb=lower, n_rows=n)
        res = solve_program(lp.freeze(), backend, **solve_options)
        solves += 1
        seconds += res.seconds
        if not res.success:
            break
        values = _values(res, n, P, K)
        L += max(float(np.asarray(res.values["t"]).ravel()[0]), 0.0)
        if zstar is None:
            zstar = L
        # 2. the bottleneck MILP
        mp, X2, Y2, rows, cols, rate = packed_program(T, W, c, pairs,
                                                      "gavel_wf_packed_bottleneck")
        z = mp.add_variables("z", open_rows.size, lb=0.0, ub=1.0, cost=1.0, integer=True)
        lower = np.where(frozen, level, L) * (1 - _MARGIN)
        mp.add_constraints("level", rows=np.concatenate([rows, open_rows]),
                           cols=np.concatenate([cols, z.index]),
                           vals=np.concatenate([rate * norm[rows],
                                                np.full(open_rows.size, -slack * L)]),
                           lb=lower, n_rows=n)
        data = mp.freeze()
        res_b = solve_program(data, backend, **solve_options)
        solves += 1
        seconds += res_b.seconds
        if res_b.status is Status.INFEASIBLE and backend == "highs":
            # the level LP's point with every z = 0 is feasible: HiGHS's MIP presolve
            # misjudged (as in the unpacked water filling); solve again without it
            known = np.concatenate([values[0].ravel(), values[1].ravel(),
                                    np.zeros(open_rows.size)])
            if data.max_violation(known) <= 1e-9:
                opts = dict(solve_options)
                opts["options"] = {**dict(opts.get("options") or {}), "presolve": "off"}
                res_b = solve_program(data, backend, **opts)
                solves += 1
                seconds += res_b.seconds
        if not res_b.success:
            res = res_b
            break
        rise = np.zeros(n, bool)
        rise[open_rows] = np.asarray(res_b.values["z"]) > 0.5
        stuck = ~frozen & ~rise
        if not stuck.any():
            break
        frozen |= stuck
        level[stuck] = L
        if frozen.all():
            break
    if values is None or res is None or zstar is None:
        return LPAllocation(np.zeros((n, K)), None, res.status if res else Status.ERROR,
                            res, lp_solves=solves, seconds=seconds), np.zeros((P, K))
    return LPAllocation(values[0], zstar, Status.OPTIMAL if res.success else res.status, res,
                        lp_solves=solves, seconds=seconds,
                        info={"levels": np.where(frozen, level, L)}), values[1]
