r"""Gavel's space-sharing ("packed") policies (Narayanan et al., OSDI'20, §3.1 "Space
sharing", §4; Gavel's ``scheduler/policies``: ``*PolicyWithPacking``).

Job combinations
----------------
A *combination* :math:`C` is a single job or a pair of jobs sharing the same GPUs (Gavel
considers pairs only). Gavel pairs two jobs of equal scale factor :math:`W`; a pair
runs on :math:`W` GPUs of one type, both jobs on all of them, each at its measured
co-located rate (:mod:`optsched.core.colocation`). Here a pair of visible jobs
:math:`\{m, m'\}` is a combination on type :math:`k` when the instance has both jobs'
co-located per-worker rates :math:`T^{m'}_{mk} > 0` and :math:`T^{m}_{m'k} > 0` on
:math:`k` (and both can run there alone): a pair the instance does not measure is never
formed. :math:`X_{Ck}` is the fraction of time combination :math:`C` holds :math:`W_C`
GPUs of type :math:`k`.

The allocation (§3.1, space sharing)

.. math::

    \mathrm{thr}_m(X) = W_m \Big(\sum_k T_{mk} X_{mk}
        + \sum_{C = \{m, m'\}} \sum_k T^{m'}_{mk} X_{Ck}\Big),\qquad
    \sum_{C \ni m} \sum_k X_{Ck} \le 1 \ \forall m,\qquad
    \sum_C W_C X_{Ck} \le c_k \ \forall k,\qquad X \ge 0,

where a pair's :math:`W_C` GPUs count once (both jobs hold the same GPUs). Gavel's
packed max-min fairness maximises :math:`\min_m \mathrm{thr}_m(X) / (w_m\,
\mathrm{thr}^{eq}_m)` (:math:`\mathrm{thr}^{eq}_m` the job's throughput under the equal
isolated share, as in :func:`optsched.gavel.model.normalised_rates`).

The round mechanism (§5) runs over combinations: priority :math:`X_{Ck}/f_{Ck}` with
:math:`f_{Ck}` the fraction of rounds :math:`C` received on :math:`k`, a job scheduled
at most once per round (through whichever combination comes first), a pair placed as
two mirrored placements naming each other as ``partner``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.core.result import Status
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, SolverFailed
from optsched.gavel.exact import _MARGIN, INTERIOR_OPTIONS, WATER_FILLING_SLACK
from optsched.gavel.model import LPAllocation, _arrays, equal_share, isolated_share, row_sums
from optsched.sim.placement import check_single_type_gangs, choose_nodes
from optsched.sim.policy import ClusterView
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram, VarBlock

__all__ = ["Pairs", "candidate_pairs", "packed_program", "packed_throughput",
           "max_min_fairness_packed", "min_total_duration_packed",
           "finish_time_fairness_packed", "max_sum_throughput_packed",
           "max_min_fairness_water_filling_packed", "PackedRounds",
           "GavelPackedPolicy", "GavelPackedFIFOPolicy", "PACKING_THRESHOLD",
           "PACKED_KINDS", "PACKED_KIND_OPTIONS"]

#: Gavel's ``FIFOPolicyWithPacking`` packs a job only when the pair's summed normalised
#: throughput exceeds this (its ``packing_threshold``).
PACKING_THRESHOLD = 1.5


class Pairs:
    """Pairs of visible jobs: ``rows[p] = (m, m')`` with :math:`m < m'` and
    ``R[p, 0, k]``, ``R[p, 1, k]`` the two jobs' co-located per-worker rates on type k
    (0 where the pair cannot be placed on k)."""

    def __init__(self, rows: np.ndarray, R: np.ndarray) -> None:
        self.rows, self.R = rows.reshape(-1, 2).astype(np.int64), R

    def __len__(self) -> int:
        return len(self.rows)

    @classmethod
    def empty(cls, K: int) -> Pairs:
        return cls(np.zeros((0, 2), dtype=np.int64), np.zeros((0, 2, K)))


class _RateCache:
    """The view's co-located rates, memoised per (job, job, type): they never change."""

    def __init__(self) -> None:
        self.memo: dict[tuple[str, str, str], float] = {}

    def __call__(self, view: ClusterView, a: str, b: str, t: str) -> float:
        key = (a, b, t)
        r = self.memo.get(key)
        if r is None:
            v = view.colocated_rate(a, b, t)
            r = self.memo[key] = 0.0 if v is None else float(v)
        return r


def candidate_pairs(view: ClusterView, rate: Any = None) -> Pairs:
    r"""Every pair of visible jobs of equal gang size that some GPU type can hold as a
    pair: both jobs can run there alone and the instance has both co-located rates,
    positive (module docstring).

    Complexity: :math:`O(n^2 K)` rate look-ups for :math:`n` visible jobs (only jobs of
    equal gang size are paired); none when the instance has no co-location table.
    """
    T, W, ids, types = view.throughput_matrix, view.workers, view.ids, view.gpu_types
    n, K = T.shape
    if view.pair_rates is None or n < 2:
        return Pairs.empty(K)
    rate = rate or _RateCache()
    rows, rates = [], []
    by_w: dict[int, list[int]] = {}
    for m in range(n):
        by_w.setdefault(int(W[m]), []).append(m)
    for ms in by_w.values():
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                r = np.zeros((2, K))
                for k, t in enumerate(types):
                    if T[a, k] > 0 and T[b, k] > 0:
                        ra, rb = rate(view, ids[a], ids[b], t), rate(view, ids[b], ids[a], t)
                        if ra > 0 and rb > 0:
                            r[0, k], r[1, k] = ra, rb
                if r.any():
                    rows.append((a, b))
                    rates.append(r)
    if not rows:
        return Pairs.empty(K)
    return Pairs(np.array(rows, dtype=np.int64), np.array(rates))


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


def _values(res: Any, n: int, P: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    v = res.values
    return (np.clip(np.asarray(v["X"], dtype=float).reshape(n, K), 0.0, 1.0),
            np.clip(np.asarray(v["Y"], dtype=float).reshape(P, K), 0.0, 1.0))


def packed_program(T: np.ndarray, W: np.ndarray, c: np.ndarray, pairs: Pairs, name: str
                   ) -> tuple[LinearProgram, VarBlock, VarBlock, np.ndarray, np.ndarray,
                              np.ndarray]:
    r"""The program skeleton shared by the packed policies: columns ``X`` (n, K) and
    ``Y`` (P, K), each job's time row and each type's capacity row (module docstring),
    and the entries of every job's throughput: ``(rows, cols, rate)`` with
    :math:`\mathrm{thr}_m = \sum_{e: rows_e = m} rate_e\, v_{cols_e}` in job
    iterations/s (:math:`W_m T_{mk}` for its single columns, :math:`W_m R_{p,m,k}` for
    its pairs' columns; zero entries left out)."""
    n, K = T.shape
    P = len(pairs)
    lp = LinearProgram(sense="max", name=name)
    X = lp.add_variables("X", (n, K), lb=0.0, ub=np.where(T > 0, 1.0, 0.0))
    R = pairs.R
    ok = (R[:, 0, :] > 0) & (R[:, 1, :] > 0) if P else np.zeros((0, K), dtype=bool)
    Y = lp.add_variables("Y", (P, K), lb=0.0, ub=np.where(ok, 1.0, 0.0))
    xi, yi = X.index, Y.index
    a, b = pairs.rows[:, 0], pairs.rows[:, 1]
    # per job: its single columns, then its pairs' columns (as either member)
    rows = np.concatenate([np.repeat(np.arange(n), K), np.repeat(a, K), np.repeat(b, K)])
    cols = np.concatenate([xi.ravel(), yi.ravel(), yi.ravel()])
    lp.add_constraints("time_fraction", rows=rows, cols=cols, vals=1.0, ub=1.0, n_rows=n)
    Wp = W[a] if P else np.zeros(0)
    lp.add_constraints("capacity", rows=np.concatenate([np.tile(np.arange(K), n),
                                                        np.tile(np.arange(K), P)]),
                       cols=np.concatenate([xi.ravel(), yi.ravel()]),
                       vals=np.concatenate([np.repeat(W, K), np.repeat(Wp, K)]),
                       ub=c, n_rows=K)
    rate = np.concatenate([(T * W[:, None]).ravel(), (R[:, 0, :] * Wp[:, None]).ravel(),
                           (R[:, 1, :] * Wp[:, None]).ravel()])
    keep = rate != 0
    return lp, X, Y, rows[keep], cols[keep], rate[keep]


def packed_throughput(T, workers, pairs: Pairs, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    r"""Each job's iterations/s under ``(X, Y)``: :math:`\mathrm{thr}_m` of the module
    docstring."""
    W = np.asarray(workers, dtype=float)
    thr = W * (np.asarray(T, dtype=float) * X).sum(axis=1)
    if len(pairs):
        a, b = pairs.rows[:, 0], pairs.rows[:, 1]
        np.add.at(thr, a, W[a] * (pairs.R[:, 0, :] * Y).sum(axis=1))
        np.add.at(thr, b, W[b] * (pairs.R[:, 1, :] * Y).sum(axis=1))
    return thr


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
    load = (W[:, None] * X).sum(axis=0)
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


def min_total_duration_packed(T, workers, capacity, pairs: Pairs, remaining, *,
                              backend: str = "highs", **solve_options: Any
                              ) -> tuple[LPAllocation, np.ndarray]:
    r"""Gavel's packed makespan policy (``MinTotalDurationPolicyWithPacking``) as one LP:
    the smallest :math:`M` with :math:`\mathrm{thr}_m(X, Y) \ge r_m / M` for every job is
    :math:`1/\lambda^*`, :math:`\lambda^* = \max \lambda` s.t.
    :math:`\mathrm{thr}_m(X, Y) \ge \lambda r_m` and the packed constraints (module
    docstring).

    Gavel's code bisects on :math:`M` with feasibility programs and stops within 5 %
    (an interior point of the last feasible one); this returns the exact optimum.

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
    lam, Xv, Yv, res = _common_rate(T, W, c, pairs, r, backend, solve_options,
                                    "gavel_makespan_packed")
    if lam is None or not lam > 0:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            seconds=res.seconds), np.zeros((len(pairs), K))
    return LPAllocation(Xv, 1.0 / lam, res.status, res, seconds=res.seconds), Yv


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


class PackedRounds:
    r"""Gavel's round mechanism (§5, Alg. 1) over job combinations (module docstring).

    Per combination :math:`C` (a job id, or a pair of job ids) and type :math:`k`: rounds
    received :math:`R_{Ck}` and rounds present :math:`N_C` since the last reset,
    :math:`f_{Ck} = (R_{Ck} + \tfrac12)/(N_C + \tfrac12)` and priority
    :math:`X_{Ck} / f_{Ck}`. Entries are taken in decreasing priority (ties: larger
    deficit :math:`X_{Ck} N_C - R_{Ck}`, larger :math:`X_{Ck}`, the combination's first
    job in arrival order, the faster type, a random rank drawn every round); an entry is
    skipped when one of its jobs is already scheduled this round or its :math:`W_C`
    GPUs of type k are no longer free. With ``fill_leftover`` single jobs with
    :math:`X_{mk} = 0` on usable types then take the GPUs still free. Placement as
    :class:`optsched.gavel.policy.RoundMechanism` (lease extension, larger gangs
    first); a pair's two jobs get the same GPUs, each placement naming the other as
    ``partner``.
    """

    def __init__(self, reset_interval: float = 1920.0, *, fill_leftover: bool = True):
        self.reset_interval = float(reset_interval)
        self.fill_leftover = bool(fill_leftover)
        self.reset()

    def reset(self) -> None:
        self._recv: dict[Any, np.ndarray] = {}
        self._present: dict[Any, int] = {}
        self._last_reset = -np.inf

    def reset_counters(self, now: float, force: bool = False) -> None:
        if force or now - self._last_reset >= self.reset_interval:
            self._recv.clear()
            self._present.clear()
            self._last_reset = now

    def allocate(self, view: ClusterView, X: np.ndarray, pairs: Pairs,
                 Y: np.ndarray) -> list[Placement]:
        n, K = X.shape
        ids, T, W = view.ids, view.throughput_matrix, view.workers
        keys: list[Any] = list(ids) + [(ids[a], ids[b]) for a, b in pairs.rows.tolist()]
        members = [(m,) for m in range(n)] + [tuple(r) for r in pairs.rows.tolist()]
        A = np.vstack([X, Y]) if len(pairs) else X
        speed = np.vstack([T, pairs.R.sum(axis=1)]) if len(pairs) else T
        C = len(keys)
        recv = np.array([self._recv.get(key, np.zeros(K)) for key in keys]).reshape(C, K)
        pres = np.array([self._present.get(key, 0) for key in keys], dtype=float)
        f = (recv + 0.5) / (pres[:, None] + 0.5)
        pos = A > 1e-9
        prio = np.where(pos, A / f, 0.0)
        deficit = A * pres[:, None] - recv
        eligible = pos.copy()
        if self.fill_leftover:
            eligible[:n] |= T > 0
        c_idx, k_idx = np.nonzero(eligible)
        rank = view.rng.permutation(K)[k_idx] if np.any(
            np.bincount(c_idx, minlength=C) > 1) else np.zeros(len(k_idx), dtype=np.int64)
        first = np.array([min(mm) for mm in members], dtype=np.int64)[c_idx]
        order = np.lexsort((rank, -speed[c_idx, k_idx], first, -A[c_idx, k_idx],
                            -deficit[c_idx, k_idx], -prio[c_idx, k_idx]))
        free_k = view.gpus_per_type.astype(np.int64).copy()
        busy: set[int] = set()
        chosen: dict[int, int] = {}
        for e in order.tolist():
            cc, k = int(c_idx[e]), int(k_idx[e])
            mm = members[cc]
            g = int(W[mm[0]])
            if any(m in busy for m in mm) or g > free_k[k]:
                continue
            chosen[cc] = k
            busy.update(mm)
            free_k[k] -= g
        prev = view.previous_by_job
        sel = sorted(chosen.items(), key=lambda ck: (ids[members[ck[0]][0]] not in prev,
                                                     -W[members[ck[0]][0]], ck[0]))
        cols = [view.capacity[:, k].tolist() for k in range(K)]
        nodes, types = view.cluster.nodes, view.gpu_types
        out: list[Placement] = []
        for cc, k in sel:
            mm = members[cc]
            lead = ids[mm[0]]
            hs = choose_nodes(view, cols[k], lead, int(W[mm[0]]), k, mode="spread")
            if hs is None:  # cannot happen: counts were checked per type
                continue
            if len(mm) == 1:
                out.extend(Placement(lead, nodes[h].name, types[k], g) for h, g in hs)
            else:
                other = ids[mm[1]]
                for h, g in hs:
                    out.append(Placement(lead, nodes[h].name, types[k], g, partner=other))
                    out.append(Placement(other, nodes[h].name, types[k], g, partner=lead))
        for cc, key in enumerate(keys):
            self._present[key] = self._present.get(key, 0) + 1
            if cc in chosen:
                r = self._recv.setdefault(key, np.zeros(K))
                r[chosen[cc]] += 1
        return out


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


def _ftf_isolated_time(view: ClusterView) -> np.ndarray:
    """:math:`d_m`: the job's total work over its isolated share's throughput (the
    denominator of :class:`optsched.gavel.policy.GavelPolicy`'s finish-time fairness)."""
    T, W, c = view.throughput_matrix, view.workers, view.gpus_per_type
    return view.work / (W * row_sums(T * isolated_share(T, W, c)))


def _solve_kind(kind: str, view: ClusterView, pairs: Pairs, o: dict
                ) -> tuple[LPAllocation, np.ndarray]:
    T, W, c = view.throughput_matrix, view.workers, view.gpus_per_type
    if kind == "max_min_fairness_packed":
        return max_min_fairness_packed(T, W, c, pairs, view.weights if o["weighted"] else None,
                                       point=o["point"], backend=o["backend"],
                                       **o["solve_options"])
    if kind == "min_total_duration_packed":
        return min_total_duration_packed(T, W, c, pairs, view.remaining,
                                         backend=o["backend"], **o["solve_options"])
    if kind == "max_min_fairness_water_filling_packed":
        return max_min_fairness_water_filling_packed(
            T, W, c, pairs, view.weights if o["weighted"] else None, backend=o["backend"],
            **o["solve_options"])
    if kind == "max_sum_throughput_normalized_by_cost_packed_SLOs":
        prices = o.get("prices")
        p = None
        if prices is not None:
            missing = [t for t in view.gpu_types if t not in prices]
            if missing:
                raise InvalidOption("prices", sorted(prices),
                                    f"no price for GPU type(s) {missing}")
            p = np.array([prices[t] for t in view.gpu_types], dtype=float)
        b = None
        factor = o.get("slo_factor")
        if factor is not None:
            # deadline = arrival + factor x (exclusive run time on the fastest type), as
            # the unpacked min_cost_slo
            best = W * T.max(axis=1)
            left = view.arrivals + factor * view.work / best - view.time
            b = np.minimum(np.where(left > 0, view.remaining / np.maximum(left, 1e-9),
                                    best), best)
        return max_sum_throughput_packed(T, W, c, pairs, p, b, backend=o["backend"],
                                         **o["solve_options"])
    return finish_time_fairness_packed(T, W, c, pairs, view.remaining,
                                       view.time - view.arrivals, _ftf_isolated_time(view),
                                       backend=o["backend"], **o["solve_options"])


#: The packed LP policies and whether each reads the jobs' work (clairvoyant).
PACKED_KINDS = {"max_min_fairness_packed": False, "min_total_duration_packed": True,
                "finish_time_fairness_packed": True,
                "max_sum_throughput_normalized_by_cost_packed_SLOs": False,
                "max_min_fairness_water_filling_packed": False}
#: The options only some packed kinds take.
PACKED_KIND_OPTIONS = {"max_min_fairness_packed": frozenset({"weighted", "point"}),
                       "min_total_duration_packed": frozenset(),
                       "finish_time_fairness_packed": frozenset(),
                       "max_sum_throughput_normalized_by_cost_packed_SLOs":
                           frozenset({"prices", "slo_factor"}),
                       "max_min_fairness_water_filling_packed": frozenset({"weighted"})}


class GavelPackedPolicy:
    """Gavel's packed LP policies: the program of ``kind`` over the visible jobs and their
    :func:`candidate_pairs`, recomputed when the set of visible jobs changes, run by
    :class:`PackedRounds`. ``event_driven = False``; declares ``colocation``.

    Kinds (:data:`PACKED_KINDS`): ``"max_min_fairness_packed"``
    (:func:`max_min_fairness_packed`), ``"min_total_duration_packed"``
    (:func:`min_total_duration_packed`, every job's remaining work), and
    ``"finish_time_fairness_packed"`` (:func:`finish_time_fairness_packed`, with
    :math:`d_m` the job's work over its isolated share's throughput, as the unpacked
    ``finish_time_fairness``; Gavel's code accumulates the isolated time of past rounds
    instead), ``"max_sum_throughput_normalized_by_cost_packed_SLOs"``
    (:func:`max_sum_throughput_packed`) and ``"max_min_fairness_water_filling_packed"``
    (:func:`max_min_fairness_water_filling_packed`).

    Parameters
    ----------
    kind : str
        One of :data:`PACKED_KINDS`.
    backend, solver, time_limit, threads, solve_options
        Solver layer, as :class:`optsched.gavel.policy.GavelPolicy`.
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1920 s).
    fill_leftover : bool
        Let single jobs take GPUs the allocation leaves free (default True).
    prices : dict, optional
        ``max_sum_throughput_normalized_by_cost_packed_SLOs`` only: price per GPU type
        (default 1 each, as Gavel's simulator without price data).
    slo_factor : float, optional
        ``max_sum_throughput_normalized_by_cost_packed_SLOs`` only: SLO = arrival +
        ``slo_factor`` x the job's exclusive run time on its fastest type (default: no
        SLOs); the policy then reads the jobs' work.
    weighted : bool
        ``max_min_fairness_packed`` and ``max_min_fairness_water_filling_packed`` only:
        use job weights (default True).
    point : "vertex" or "interior"
        ``max_min_fairness_packed`` only: the optimum the program returns (default
        ``"vertex"``; ``"interior"`` for the kind Gavel's code gets, see
        :func:`max_min_fairness_packed`).
    """

    event_driven = False
    colocation = True

    def __init__(self, kind: str = "max_min_fairness_packed", *, backend: str = "highs",
                 solver: str | None = None, time_limit: float | None = None,
                 threads: int | None = None, solve_options: dict | None = None,
                 reset_interval: float = 1920.0, fill_leftover: bool = True,
                 weighted: bool | None = None, point: str | None = None,
                 prices: dict | None = None, slo_factor: float | None = None,
                 name: str | None = None):
        if kind not in PACKED_KINDS:
            raise InvalidOption("kind", kind, f"must be one of {sorted(PACKED_KINDS)}")
        for key, given in (("weighted", weighted), ("point", point), ("prices", prices),
                           ("slo_factor", slo_factor)):
            if given is not None and key not in PACKED_KIND_OPTIONS[kind]:
                raise InvalidOption(key, given, f"not an option of the {kind} policy")
        if slo_factor is not None and (isinstance(slo_factor, bool) or not isinstance(
                slo_factor, (int, float)) or not np.isfinite(slo_factor) or slo_factor <= 0):
            raise InvalidOption("slo_factor", slo_factor, "must be a finite number > 0")
        if point is not None and point not in ("vertex", "interior"):
            raise InvalidOption("point", point, "must be 'vertex' or 'interior'")
        if point == "interior" and backend != "highs":
            raise InvalidOption("backend", backend, "point='interior' is HiGHS's ipm: "
                                "'highs'")
        if not isinstance(fill_leftover, bool):
            raise InvalidOption("fill_leftover", fill_leftover, "must be true or false")
        if weighted is not None and not isinstance(weighted, bool):
            raise InvalidOption("weighted", weighted, "must be true or false")
        if not (isinstance(reset_interval, (int, float)) and reset_interval >= 0):
            raise InvalidOption("reset_interval", reset_interval, "must be a number >= 0")
        self.kind = kind
        self.name = name or kind
        self.needs_work = PACKED_KINDS[kind] or slo_factor is not None
        opts: dict[str, Any] = dict(solve_options or {})
        for key, val in (("solver", solver), ("time_limit", time_limit), ("threads", threads)):
            if val is not None:
                opts[key] = val
        self.options = {"backend": backend, "solve_options": opts,
                        "weighted": True if weighted is None else weighted,
                        "point": point or "vertex", "prices": prices,
                        "slo_factor": slo_factor}
        self.rounds = PackedRounds(reset_interval, fill_leftover=fill_leftover)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._ids: tuple[str, ...] | None = None
        self._alloc: tuple[np.ndarray, Pairs, np.ndarray] | None = None
        self._rate = _RateCache()
        self._solves, self._lp_solves, self._seconds = 0, 0, 0.0

    def stats(self) -> dict[str, Any]:
        return {"allocation_solves": self._solves, "lp_solves": self._lp_solves,
                "lp_seconds": self._seconds}

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocation(self, view: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        """``(X, pairs, Y)`` for the visible jobs (recomputed on reset events)."""
        if self._ids != view.ids or self._alloc is None:
            pairs = candidate_pairs(view, self._rate)
            sol, Y = _solve_kind(self.kind, view, pairs, self.options)
            self._solves += 1
            self._lp_solves += sol.lp_solves
            self._seconds += sol.seconds
            if not sol.ok:
                res = sol.result
                raise SolverFailed(f"policy {self.name!r} at t={view.time:g} "
                                   f"({len(view.ids)} jobs)", sol.status.value,
                                   res.message if res is not None else "")
            self._ids, self._alloc = view.ids, (sol.X, pairs, Y)
            self.rounds.reset_counters(view.time)
        return self._alloc

    def allocate(self, state: ClusterView) -> list[Placement]:
        X, pairs, Y = self.allocation(state)
        return self.rounds.allocate(state, X, pairs, Y)


class GavelPackedFIFOPolicy:
    """Gavel's FIFO with packing (``fifo_packed``; ``FIFOPolicy(mode="packing")``).

    Every round, from scratch: jobs in arrival order each take the fastest GPU type
    with ``workers`` free GPUs (Gavel's FIFO with Perf) until the first job that fits
    no type, which stops the pass (and, as in Gavel's code, is not packed either).
    Then each further waiting job, in arrival order, is packed with the scheduled job
    (not already in a pair, of its gang size) whose pair on that job's type has the
    largest summed normalised throughput :math:`T^{m'}_{mk}/T_{mk} +
    T^{m}_{m'k}/T_{m'k}` above ``packing_threshold`` (1.5, Gavel's); the first waiting
    job that packs with nobody stops the packing (no job jumps ahead in the queue).
    Only pairs whose co-located rates the instance has, both positive, are formed.
    The 0/1 allocation over combinations goes through :class:`PackedRounds` without
    leftover fill, as Gavel's FIFO. Declares ``colocation``.
    """

    event_driven = False
    needs_work = False
    colocation = True

    def __init__(self, *, packing_threshold: float = PACKING_THRESHOLD,
                 name: str | None = None):
        if isinstance(packing_threshold, bool) or not isinstance(packing_threshold,
                                                                 (int, float)) \
                or not np.isfinite(packing_threshold):
            raise InvalidOption("packing_threshold", packing_threshold,
                                "must be a finite number")
        self.threshold = float(packing_threshold)
        self.name = name or "fifo_packed"
        self.rounds = PackedRounds(fill_leftover=False)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._rate = _RateCache()

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocate(self, state: ClusterView) -> list[Placement]:
        T, W, ids, types = state.throughput_matrix, state.workers, state.ids, state.gpu_types
        n, K = T.shape
        free = state.gpus_per_type.astype(np.int64).copy()
        X = np.zeros((n, K))
        scheduled: dict[int, int] = {}  # job row -> type, in the order scheduled
        queue = [int(m) for m in np.argsort(state.arrivals, kind="stable")]
        while queue:
            m = queue.pop(0)
            usable = np.flatnonzero((T[m] > 0) & (free >= W[m]))
            if usable.size == 0:
                break  # head-of-line blocking; this job is not packed either (Gavel)
            k = int(usable[np.argmax(T[m, usable])])
            scheduled[m] = k
            free[k] -= W[m]
            X[m, k] = 1.0
        rows, rates = [], []
        paired: set[int] = set()
        for m in queue:
            best, partner = self.threshold, None
            for s, k in scheduled.items():
                if s in paired or W[s] != W[m] or not (T[m, k] > 0):
                    continue
                rs = self._rate(state, ids[s], ids[m], types[k])
                rm = self._rate(state, ids[m], ids[s], types[k])
                if not (rs > 0 and rm > 0):
                    continue
                gain = rs / T[s, k] + rm / T[m, k]
                if gain > best:
                    best, partner = gain, s
            if partner is None:
                break
            k = scheduled[partner]
            X[partner, k] = 0.0
            paired.update((partner, m))
            a, b = min(partner, m), max(partner, m)
            r = np.zeros((2, K))
            r[0, k] = self._rate(state, ids[a], ids[b], types[k])
            r[1, k] = self._rate(state, ids[b], ids[a], types[k])
            rows.append((a, b, k))
            rates.append(r)
        pairs = Pairs(np.array([(a, b) for a, b, _ in rows], dtype=np.int64),
                      np.array(rates).reshape(len(rows), 2, K))
        Y = np.zeros((len(rows), K))
        for p, (_, _, k) in enumerate(rows):
            Y[p, k] = 1.0
        return self.rounds.allocate(state, X, pairs, Y)
