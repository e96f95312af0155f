r"""Gavel's heterogeneity-aware allocation LPs (Narayanan et al., OSDI'20, §3-4).

Notation (per *visible* job m and GPU type k): :math:`T_{mk}` per-worker iterations/s
(0 = cannot run), :math:`W_m` workers (Gavel's scale factor), :math:`c_k` GPUs of type k,
:math:`X_{mk}` the fraction of wall-clock time job m holds :math:`W_m` GPUs of type k.

Effective throughput (§3.1, job iterations/s):
:math:`\mathrm{thr}_m(X) = W_m \sum_k T_{mk} X_{mk}`.

Base constraints (§3.1 (1)-(3)), written once in :func:`allocation_program`:

.. math::
    0 \le X_{mk} \ (X_{mk} = 0 \text{ if } T_{mk} = 0), \quad
    \sum_k X_{mk} \le 1, \quad \sum_m W_m X_{mk} \le c_k.

Policies (§4), each one LP (or a short sequence) built with
:class:`~optsched.solvers.program.LinearProgram` and solved by
:func:`~optsched.solvers.solve_program` on any backend:

* :func:`max_min_fairness` (LAS): :math:`\max_X \min_m \frac{W_m}{w_m}
  \frac{\sum_k T_{mk}X_{mk}}{\sum_k T_{mk}X^{eq}_{mk}}` as the epigraph LP
  :math:`\max z` s.t. :math:`z \le \sum_k a_{mk} X_{mk}` (Gavel code
  ``MaxMinFairnessPolicyWithPerf``: normalised by the equal-share throughput and multiplied
  by the scale factor). ``agnostic=True`` sets :math:`T = 1` on every usable type
  (``MaxMinFairnessPolicy``). A vertex solver may leave GPUs idle that an interior-point
  solver like Gavel's ECOS would spread, so ``pareto="greedy"`` hands idle capacity to
  jobs with spare time (keeps :math:`z^*`) and ``pareto="lp"`` solves a second LP that
  keeps every job at :math:`\ge z^*` and maximises :math:`\sum_{mk} a_{mk}X_{mk}`.
  Identical jobs are aggregated into classes (exact, see :func:`max_min_fairness`).
* :func:`min_total_duration` (makespan): ONE LP, :math:`\max \tau` s.t.
  :math:`\mathrm{thr}_m(X) \ge r_m \tau` with :math:`r_m` the *remaining* iterations; the
  makespan of the allocation is :math:`1/\tau^*`. (Gavel's code bisects on the makespan
  with feasibility LPs; the single LP is exact because for fixed X the makespan is
  :math:`\max_m r_m/\mathrm{thr}_m(X) = 1/\min_m(\mathrm{thr}_m/r_m)`.) Rows are scaled
  by :math:`1/r_m` and by the largest rate so coefficients lie in (0, 1].
* :func:`finish_time_fairness` (Themis, §4): minimise :math:`\max_m \rho_m` with
  :math:`\rho_m(X) = (t_m + r_m/\mathrm{thr}_m(X)) / d_m`, :math:`t_m` the time since
  arrival and :math:`d_m` the job's run time on an isolated 1/n share of the cluster
  (:func:`optsched.core.metrics.isolated_runtime` with n = visible jobs). For fixed
  :math:`\rho`, :math:`\rho_m \le \rho` is the linear constraint
  :math:`\mathrm{thr}_m(X) \ge r_m / (\rho d_m - t_m)` (needs :math:`\rho d_m > t_m`), so we
  bisect on :math:`\rho` over LP feasibility checks. Each check is the makespan-type LP
  :math:`\max\lambda` s.t. :math:`\mathrm{thr}_m \ge \lambda b_m(\rho)`; feasible iff
  :math:`\lambda^* \ge 1`. The bracket is :math:`[\max_m t_m/d_m, \rho(X^{iso})]` (the
  isolated allocation is feasible). No single LP is known to us: :math:`\rho_m` is a
  ratio whose numerator is a reciprocal of a linear function, so the problem is
  quasi-convex, not linear.
* :func:`max_sum_throughput`: :math:`\max \sum_m \mathrm{thr}_m(X)` (Gavel
  ``ThroughputSumWithPerf``).
* :func:`min_cost_slo`: the paper's linear-fractional program
  :math:`\max \sum_m \mathrm{thr}_m(X) / \sum_{mk} p_k W_m X_{mk}` (throughput per dollar,
  :math:`p_k` $ per GPU-hour) subject to SLO rates :math:`\mathrm{thr}_m(X) \ge b_m`,
  solved exactly as ONE LP by the Charnes-Cooper transform (:math:`Y = sX`, :math:`s \ge 0`,
  :math:`\sum p_k W_m Y_{mk} = 1`, constraints homogenised by s, :math:`X = Y/s`). Gavel's
  code instead maximises :math:`\sum T_{mk}/p_k X_{mk}`; we follow the paper. If the SLO
  rates are jointly infeasible they are scaled by the largest feasible common factor.

Every function takes arrays and returns :class:`LPAllocation` (``X``, ``objective``, the
solver :class:`~optsched.core.result.Result`). The returned ``X`` satisfies the base
constraints exactly (up to float rounding), not merely within the solver's tolerance:
:func:`repair_allocation` is applied to every returned allocation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.errors import InvalidOption
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram, VarBlock

__all__ = [
    "LPAllocation", "allocation_program", "equal_share", "isolated_share", "max_min_fairness",
    "min_total_duration", "finish_time_fairness", "max_sum_throughput", "min_cost_slo",
    "AWS_PRICES", "job_classes", "fill_idle", "repair_allocation",
]

#: On-demand $/GPU-hour used by default for :func:`min_cost_slo`: AWS p3.2xlarge
#: (1 V100) $3.06, p2.xlarge (1 K80) $0.90; P100 is not sold by AWS, Google Cloud's
#: $1.46/h P100 price is used (the same three numbers as Gavel's cost experiments).
AWS_PRICES = {"v100": 3.06, "p100": 1.46, "k80": 0.90}


@dataclass(frozen=True)
class LPAllocation:
    """Solution of one Gavel LP: ``X[m, k]`` time fractions and the policy objective."""

    X: np.ndarray
    objective: float | None
    status: Status
    result: Result | None = None
    lp_solves: int = 1
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status.has_solution and self.objective is not None


def _arrays(T, workers, capacity) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    T = np.asarray(T, dtype=float)
    if T.ndim != 2:
        raise InvalidOption("T", T.shape, "throughput matrix must be 2-D (jobs x types)")
    W = np.asarray(workers, dtype=float).reshape(-1)
    c = np.asarray(capacity, dtype=float).reshape(-1)
    if W.shape[0] != T.shape[0] or c.shape[0] != T.shape[1]:
        raise InvalidOption("shapes", (T.shape, W.shape, c.shape),
                            "need T (n, K), workers (n,), capacity (K,)")
    if np.any(T < 0) or np.any(W < 1) or np.any(c < 0):
        raise InvalidOption("T/workers/capacity", None, "must be >= 0 (workers >= 1)")
    return T, W, c


def allocation_program(T, workers, capacity, *, sense: str = "max",
                       name: str = "gavel") -> tuple[LinearProgram, VarBlock]:
    """The shared LP skeleton: variables ``X`` and Gavel's base constraints (1)-(3)."""
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    lp = LinearProgram(sense=sense, name=name)
    X = lp.add_variables("X", (n, K), lb=0.0, ub=np.where(T > 0, 1.0, 0.0))
    idx = X.index
    lp.add_constraints("time_fraction", rows=np.repeat(np.arange(n), K), cols=idx.ravel(),
                       vals=1.0, ub=1.0, n_rows=n)
    lp.add_constraints("capacity", rows=np.tile(np.arange(K), n), cols=idx.ravel(),
                       vals=np.repeat(W, K), ub=c, n_rows=K)
    return lp, X


def _add_rate_rows(lp: LinearProgram, X: VarBlock, A: np.ndarray, name: str, *,
                   z_col: int | None = None, z_coef=None, lb=-np.inf, ub=np.inf) -> None:
    """Rows ``lb <= sum_k A[m, k] X[m, k] + z_coef[m] * z <= ub`` for every job m."""
    n, K = A.shape
    rows = np.repeat(np.arange(n), K)
    cols = X.index.ravel()
    vals = A.ravel()
    keep = vals != 0
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    if z_col is not None:
        rows = np.concatenate([rows, np.arange(n)])
        cols = np.concatenate([cols, np.full(n, z_col)])
        vals = np.concatenate([vals, np.broadcast_to(np.asarray(z_coef, float), (n,))])
    lp.add_constraints(name, rows=rows, cols=cols, vals=vals, lb=lb, ub=ub, n_rows=n)


def _solve(lp: LinearProgram, backend: str, opts: dict) -> tuple[Result, dict]:
    data = lp.freeze()
    res = solve_program(data, backend, **opts)
    return res, res.values


def repair_allocation(X, T, workers, capacity) -> np.ndarray:
    r"""``X`` made to satisfy Gavel's constraints (1)-(3) exactly, up to float rounding.

    An LP solver returns X within its primal feasibility tolerance (HiGHS: 1e-7 on its
    internally scaled rows; capacity rows have come back 4e-7 to 2.8e-6 GPUs over
    :math:`c_k`); used as exact, that over-fills a GPU type. The repair clips X to
    [0, 1] on usable types (0 elsewhere), divides each row with
    :math:`\sum_k X_{mk} = 1 + \delta > 1` by :math:`1 + \delta`, then multiplies each
    column with load :math:`\sum_m W_m X_{mk} = c_k + \epsilon > c_k` by
    :math:`c_k / (c_k + \epsilon)`.
    Column scaling only lowers entries, so the rows stay within 1.

    Why this keeps every objective within the solver tolerance: the excesses
    :math:`\delta, \epsilon` are the solver's own constraint violations, so every entry
    shrinks by at most a relative :math:`\delta + \epsilon / c_k` (:math:`c_k \ge 1`
    for a type that is used). The per-job rates :math:`\sum_k a_{mk} X_{mk}`
    (:math:`a \ge 0`) then fall by at most that relative amount, and with them the
    max-min value, total throughput, makespan and finish-time ratio, which are monotone
    in the rates; the cost objective, a ratio of two such non-negative linear forms,
    moves by at most twice as much. Either way the change is of the order of the
    tolerance the solver already allowed itself on the optimum. A feasible X is
    returned unchanged.
    """
    T = np.asarray(T, dtype=float)
    W = np.asarray(workers, dtype=float).reshape(-1)
    c = np.asarray(capacity, dtype=float).reshape(-1)
    X = np.where(T > 0, np.clip(np.asarray(X, dtype=float), 0.0, 1.0), 0.0)
    rows = X.sum(axis=1)
    over = rows > 1.0
    X[over] /= rows[over, None]
    load = W @ X
    over = load > c
    X[:, over] *= c[over] / load[over]
    return X


def _allocation(X: np.ndarray, T: np.ndarray, W: np.ndarray, c: np.ndarray,
                objective: float | None, status: Status, result: Result | None,
                **fields: Any) -> LPAllocation:
    """Every policy's return: the allocation goes through :func:`repair_allocation` here,
    so no caller ever sees an X that over-fills a type or a job's time."""
    return LPAllocation(repair_allocation(X, T, W, c), objective, status, result, **fields)


def _fail(n: int, K: int, res: Result, **info) -> LPAllocation:
    return LPAllocation(np.zeros((n, K)), None, res.status, res, seconds=res.seconds, info=info)


def equal_share(T, capacity) -> np.ndarray:
    r"""Gavel's ``ProportionalPolicy``: :math:`X^{eq}_{mk} = c_k / n` on usable types, rows
    scaled down to sum to at most 1."""
    T = np.asarray(T, dtype=float)
    n = max(T.shape[0], 1)
    x = np.broadcast_to(np.asarray(capacity, float) / n, T.shape) * (T > 0)
    s = x.sum(axis=1, keepdims=True)
    return np.where(s > 1, x / np.maximum(s, 1e-300), x)


def isolated_share(T, workers, capacity) -> np.ndarray:
    r"""Gavel's ``IsolatedPolicy``: :math:`X^{iso}_{mk} = (c_k/n)/W_m` on usable types, rows
    scaled down to sum to at most 1 (a 1/n slice of the cluster)."""
    T, W, c = _arrays(T, workers, capacity)
    n = max(T.shape[0], 1)
    x = (c[None, :] / n) / W[:, None] * (T > 0)
    s = x.sum(axis=1, keepdims=True)
    return np.where(s > 1, x / np.maximum(s, 1e-300), x)


def job_classes(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group jobs with identical rows of ``columns`` (e.g. T, W, w).

    Returns ``(first, inverse, counts)``: a representative row per class, each job's
    class, and the class sizes.
    """
    key = np.column_stack([np.asarray(c, dtype=float).reshape(len(columns[0]), -1)
                           for c in columns])
    _, first, inverse, counts = np.unique(key, axis=0, return_index=True, return_inverse=True,
                                          return_counts=True)
    return first, inverse.reshape(-1), counts


def fill_idle(X: np.ndarray, T: np.ndarray, W: np.ndarray, c: np.ndarray,
              A: np.ndarray) -> np.ndarray:
    """Greedy Pareto improvement: hand capacity left idle by X to jobs with spare time.

    Entries are visited in decreasing ``A[m, k]`` (normalised throughput per unit of
    X); each takes ``min(1 - sum_k X_mk, idle_k / W_m)``. No job loses anything, so the
    max-min value is kept; afterwards no usable type has idle GPUs while a job that can
    run on it has spare time.
    """
    X = X.copy()
    idle = c - (W[:, None] * X).sum(axis=0)
    spare = 1.0 - X.sum(axis=1)
    ms, ks = np.nonzero((T > 0) & (spare[:, None] > 1e-9) & (idle[None, :] > 1e-9))
    for e in np.argsort(-A[ms, ks], kind="stable"):
        m, k = ms[e], ks[e]
        add = min(spare[m], idle[k] / W[m])
        if add > 1e-12:
            X[m, k] += add
            spare[m] -= add
            idle[k] -= add * W[m]
    return X


def max_min_fairness(T, workers, capacity, weights=None, *, agnostic: bool = False,
                     pareto: bool | str = False, aggregate: bool = True,
                     backend: str = "highs", **solve_options: Any) -> LPAllocation:
    """Max-min fairness / LAS (Gavel §4.1); see module docstring. Objective: ``z*``.

    ``aggregate=True`` solves the LP over *classes* of identical jobs (same throughput
    row, workers and weight), one variable row per class, the capacity rows weighted
    by class sizes. This is exact: the LP is symmetric under permuting identical jobs
    and convex, so averaging any optimum over those permutations gives an optimum in
    which identical jobs get identical rows. (Gavel's traces draw jobs from 26 job
    types x 4 scale factors, so hundreds of active jobs collapse to a few dozen rows.)

    ``pareto``: ``False``; ``"greedy"`` (:func:`fill_idle`, keeps z*); ``True``/``"lp"``
    (second LP maximising the sum of normalised throughputs subject to every job
    keeping z*).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    Te = (T > 0).astype(float) if agnostic else T
    thr_eq = (Te * equal_share(Te, c)).sum(axis=1)
    A = Te * (W / (w * np.maximum(thr_eq, 1e-300)))[:, None]
    if aggregate:
        first, inv, counts = job_classes(Te, W, w)
    else:
        first, inv, counts = np.arange(n), np.arange(n), np.ones(n)
    Tc, Wc, Ac = Te[first], W[first], A[first]
    # class rows: capacity uses counts x W (the class's GPUs)
    lp, X = allocation_program(Tc, Wc * counts, c, sense="max", name="gavel_max_min")
    z = lp.add_variables("z", 1, lb=-np.inf, ub=np.inf, cost=1.0)
    _add_rate_rows(lp, X, -Ac, "epigraph", z_col=int(z.index[0]), z_coef=1.0, ub=0.0)
    res, vals = _solve(lp, backend, solve_options)
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


def min_total_duration(T, workers, capacity, remaining, *, backend: str = "highs",
                       **solve_options: Any) -> LPAllocation:
    """Makespan policy as ONE LP (see module docstring). Objective: the makespan ``1/tau*``
    (seconds from now); ``info["tau"]`` holds ``tau*``."""
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    r = np.asarray(remaining, dtype=float).reshape(n)
    if np.any(r <= 0):
        raise InvalidOption("remaining", r.min(), "remaining work must be > 0")
    tau, Xs, res = _max_common_rate(T, W, c, r, backend, solve_options, "gavel_makespan")
    if tau is None or tau <= 0:
        return _fail(n, K, res)
    return _allocation(Xs, T, W, c, 1.0 / tau, res.status, res, seconds=res.seconds,
                       info={"tau": tau})


def finish_time_fairness(T, workers, capacity, remaining, elapsed, isolated_time=None, *,
                         rel_tol: float = 1e-4, max_iter: int = 60, backend: str = "highs",
                         **solve_options: Any) -> LPAllocation:
    """Finish-time fairness by bisection on rho (module docstring). Objective: ``max_m rho_m``.

    ``elapsed[m]`` seconds since arrival; ``isolated_time[m]`` the denominator ``d_m``
    (default: the whole job's run time on its isolated share, ``work / thr_iso`` with
    ``work`` taken as ``remaining`` - pass it explicitly to use the total work).
    """
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    r = np.asarray(remaining, dtype=float).reshape(n)
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
        lam, Xs, res = _max_common_rate(T, W, c, need, backend, solve_options, "gavel_ftf")
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


def max_sum_throughput(T, workers, capacity, *, backend: str = "highs",
                       **solve_options: Any) -> LPAllocation:
    """``max sum_m thr_m(X)`` (Gavel ``ThroughputSumWithPerf``). Objective: iterations/s."""
    T, W, c = _arrays(T, workers, capacity)
    n, K = T.shape
    if n == 0:
        return LPAllocation(np.zeros((0, K)), 0.0, Status.OPTIMAL, lp_solves=0)
    lp, X = allocation_program(T, W, c, sense="max", name="gavel_sum_throughput")
    lp.set_cost(X, W[:, None] * T)
    res, vals = _solve(lp, backend, solve_options)
    if not res.success:
        return _fail(n, K, res)
    return _allocation(vals["X"], T, W, c, float(res.objective), res.status, res,
                       seconds=res.seconds)


def min_cost_slo(T, workers, capacity, prices, slo_rate=None, *, backend: str = "highs",
                 **solve_options: Any) -> LPAllocation:
    """Throughput per dollar with SLOs via Charnes-Cooper (module docstring).

    ``prices[k]`` $/GPU-hour; ``slo_rate[m]`` required iterations/s (0 = no SLO).
    Objective: iterations/s per $/h of the returned X; ``info["slo_scale"]`` < 1 when the
    SLOs had to be scaled down to be feasible.
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
    return _allocation(vals["Y"] / sv, T, W, c, float(res.objective), res.status, res,
                       lp_solves=solves, seconds=seconds, info={"slo_scale": scale, "s": sv})
