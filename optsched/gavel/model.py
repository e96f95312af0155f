r"""Gavel's model: one round's allocation of GPU types to jobs (Narayanan et al.,
OSDI'20, §3).

Notation (per *visible* job m and GPU type k): :math:`T_{mk}` per-worker iterations/s
(0 = cannot run), :math:`W_m` workers (Gavel's scale factor), :math:`w_m` the job's
weight, :math:`c_k` GPUs of type k, :math:`X_{mk}` the fraction of wall-clock time job m
holds :math:`W_m` GPUs of type k.

Effective throughput (§3.1, job iterations/s):
:math:`\mathrm{thr}_m(X) = W_m \sum_k T_{mk} X_{mk}`.

Base constraints (§3.1 (1)-(3)), written once in :func:`allocation_program`:

.. math::
    0 \le X_{mk} \ (X_{mk} = 0 \text{ if } T_{mk} = 0), \quad
    \sum_k X_{mk} \le 1, \quad \sum_m W_m X_{mk} \le c_k.

An allocation is turned into rounds by the round mechanism
(:mod:`optsched.gavel.policy`). As a ``solve`` model, the instance's jobs are the active
jobs of one round (:func:`round_state`): the policies' objectives
(:mod:`optsched.gavel.exact`) are optimised over X, and any allocation is scored under
an objective by :func:`objective_value`.

Space sharing (§3.1, Gavel's ``*PolicyWithPacking``)
----------------------------------------------------
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
two mirrored placements naming each other as ``partner``
(:class:`optsched.gavel.policy.PackedRounds`).

:class:`Pairs`, :func:`packed_program` and :func:`packed_throughput` write this once for
the packed programs of :mod:`optsched.gavel.exact`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.solvers.program import LinearProgram, VarBlock

__all__ = ["AWS_PRICES", "OBJECTIVES", "LPAllocation", "RoundState", "round_state",
           "allocation_program", "equal_share", "isolated_share", "job_classes",
           "repair_allocation", "gpu_loads", "proportional_split", "fill_idle",
           "normalised_rates",
           "objective_value", "check_allocation", "Pairs", "packed_program",
           "packed_throughput"]

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


def row_sums(X: np.ndarray) -> np.ndarray:
    """``X.sum(axis=1)`` of a 2-D array, added column by column from the left.

    The same numbers as numpy's row reduction (which adds a short row from the left too),
    in a fraction of its time on the tall, narrow matrices of the Gavel LPs (n jobs by
    K types), where numpy's per-row loop costs more than the additions.
    """
    X = np.asarray(X, dtype=float)
    if X.shape[1] == 0:
        return np.zeros(X.shape[0])
    total = X[:, 0].copy()
    for k in range(1, X.shape[1]):
        total += X[:, k]
    return total


def gpu_loads(W: np.ndarray, X: np.ndarray) -> np.ndarray:
    r"""The GPUs each type holds under ``X``: :math:`\sum_m W_m X_{mk}` per column.

    ``W @ X`` gives the same sums up to the last bits, but BLAS picks its kernel by CPU
    (SSE, AVX2, AVX-512), and each kernel orders the additions its own way: a load that
    lands a bit over :math:`c_k` on one machine and not on another makes the two
    simulations part (measured on Gavel's first 300 jobs under the agnostic max-min
    policy: against the run recorded on an AVX-512 machine, OpenBLAS's Nehalem and
    Sandybridge kernels on one AVX2 machine moved 198 and 230 of the 300 completion
    times). numpy's own reduction adds the rows in job order on every CPU. ``O(nK)``.
    """
    return np.add.reduce(np.asarray(W, dtype=float)[:, None] * X, axis=0)


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
    rows = row_sums(X)
    over = rows > 1.0
    if over.any():
        X[over] /= rows[over, None]
    load = gpu_loads(W, X)
    over = load > c
    if over.any():
        X[:, over] *= c[over] / load[over]
    return X


def equal_share(T, capacity, n: int | None = None) -> np.ndarray:
    r"""Gavel's ``ProportionalPolicy``: :math:`X^{eq}_{mk} = c_k / n` on usable types, rows
    scaled down to sum to at most 1.

    ``n`` is the number of jobs sharing the cluster, by default the rows of ``T``; give
    it to compute the share of a subset of them (e.g. one row per class of identical
    jobs)."""
    T = np.asarray(T, dtype=float)
    n = max(T.shape[0] if n is None else int(n), 1)
    x = np.broadcast_to(np.asarray(capacity, float) / n, T.shape) * (T > 0)
    s = row_sums(x)[:, None]
    return np.where(s > 1, x / np.maximum(s, 1e-300), x)


def isolated_share(T, workers, capacity) -> np.ndarray:
    r"""Gavel's ``IsolatedPolicy``: :math:`X^{iso}_{mk} = (c_k/n)/W_m` on usable types, rows
    scaled down to sum to at most 1 (a 1/n slice of the cluster)."""
    T, W, c = _arrays(T, workers, capacity)
    n = max(T.shape[0], 1)
    x = (c[None, :] / n) / W[:, None] * (T > 0)
    s = x.sum(axis=1, keepdims=True)
    return np.where(s > 1, x / np.maximum(s, 1e-300), x)


def proportional_split(X: np.ndarray, U: np.ndarray, W: np.ndarray,
                        c: np.ndarray) -> tuple[np.ndarray, str]:
    r"""An agnostic allocation's rows spread over each job's usable types ``U`` in
    proportion to their GPUs, :math:`X_{mk} = s_m c_k / \sum_{k' \in U_m} c_{k'}`, when
    that fits every type; otherwise ``X`` as the program returned it.

    When a program sees one rate per job on all its usable types (:math:`T = 1`, or each
    job's reference rate, :func:`optsched.gavel.policy.reference_throughputs`), its
    objective depends on the row sums :math:`s_m` alone, and a vertex solver splits a row
    by the column order. The proportional split keeps every row sum, so the objective,
    and does not depend on how the types are labelled; with equal capacities it is the
    symmetric point an interior-point solver such as Gavel's ECOS returns. It always fits
    when every job can use every type: the loads become
    :math:`c_k \sum_m W_m s_m / \sum_{k'} c_{k'} \le c_k`.
    """
    s = X.sum(axis=1)
    cap_m = (U * c[None, :]).sum(axis=1)
    P = np.where(U, s[:, None] * c[None, :] / np.maximum(cap_m, 1e-300)[:, None], 0.0)
    if np.all(gpu_loads(W, P) <= c * (1 + 1e-9) + 1e-12):
        return repair_allocation(P, U.astype(float), W, c), "proportional"
    return X, "solver's"


def job_classes(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group jobs with identical rows of ``columns`` (e.g. T, W, w).

    Returns ``(first, inverse, counts)``: a representative row per class (its first job),
    each job's class, and the class sizes; classes are numbered in lexicographic order of
    their rows (what ``np.unique(key, axis=0, return_index/inverse/counts)`` returns).
    """
    key = np.column_stack([np.asarray(c, dtype=float).reshape(len(columns[0]), -1)
                           for c in columns])
    grouped = _classes_by_hash(key)
    if grouped is not None:
        return grouped
    n = key.shape[0]
    # lexsort instead of np.unique(axis=0), which sorts rows as structured records (the
    # larger part of a class LP's time at 2,000 jobs). lexsort is stable, so the first
    # of a run is the class's first job.
    order = np.lexsort(key.T[::-1])
    ks = key[order]
    new = np.ones(n, bool)
    new[1:] = (ks[1:] != ks[:-1]).any(axis=1)
    starts = np.flatnonzero(new)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, n))
    return order[starts], inverse, counts


#: Weights of the row hash in :func:`_classes_by_hash` (any distinct values work; the
#: grouping is verified).
_HASH = (0.6180339887498949, 0.7548776662466927, 0.5698402909980532, 0.4655712318767680,
         0.8191725133961645, 0.3819660112501051, 0.2451223337533073, 0.9275572200530910)


def _classes_by_hash(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """:func:`job_classes` by sorting one hash of each row instead of all its columns.

    Equal rows get equal hashes (the hash is computed element by element, so it does not
    depend on a row's position); every group is then checked to hold equal rows only and
    distinct groups to differ, so a collision cannot merge classes: it returns ``None``
    and the caller sorts the rows themselves, as it does for rows with NaN or infinities.
    """
    n, d = key.shape
    if n == 0 or d == 0 or not np.isfinite(key).all():
        return None
    h = key[:, 0] * _HASH[0]
    for j in range(1, d):
        h = h + key[:, j] * _HASH[j % len(_HASH)] * (1 + j // len(_HASH))
    order = np.argsort(h, kind="stable")
    hs = h[order]
    new = np.empty(n, bool)
    new[0] = True
    new[1:] = hs[1:] != hs[:-1]
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(new) - 1
    rep = order[new]  # stable sort: the first job of each group
    if not (key == key[rep[group]]).all():
        return None
    reps = key[rep]
    rank = np.lexsort(reps.T[::-1])
    ordered = reps[rank]
    if not (ordered[1:] != ordered[:-1]).any(axis=1).all():
        return None
    position = np.empty(rep.size, np.int64)
    position[rank] = np.arange(rep.size)
    inverse = position[group]
    return rep[rank], inverse, np.bincount(inverse, minlength=rep.size)


def fill_idle(X: np.ndarray, T: np.ndarray, W: np.ndarray, c: np.ndarray,
              A: np.ndarray) -> np.ndarray:
    """Greedy Pareto improvement: hand capacity left idle by X to jobs with spare time.

    Entries are visited in decreasing ``A[m, k]`` (normalised throughput per unit of
    X); each takes ``min(1 - sum_k X_mk, idle_k / W_m)``. No job loses anything, so the
    max-min value is kept; afterwards no usable type has idle GPUs while a job that can
    run on it has spare time.
    """
    X = X.copy()
    idle = c - gpu_loads(W, X)
    if not (idle > 1e-9).any():
        return X
    spare = 1.0 - row_sums(X)
    ms, ks = np.nonzero((T > 0) & (spare[:, None] > 1e-9) & (idle[None, :] > 1e-9))
    order = np.argsort(-A[ms, ks], kind="stable")
    # Python floats: the same IEEE double operations as numpy's scalars, without their
    # per-operation cost
    spare_l, idle_l, W_l = spare.tolist(), idle.tolist(), W.tolist()
    for m, k in zip(ms[order].tolist(), ks[order].tolist()):
        add = min(spare_l[m], idle_l[k] / W_l[m])
        if add > 1e-12:
            X[m, k] += add
            spare_l[m] -= add
            idle_l[k] -= add * W_l[m]
    return X




#: The objectives of the ``solve`` model: (sense, label).
OBJECTIVES: dict[str, tuple[str, str]] = {
    "max_min_fairness": ("max", "min normalised throughput (max-min fairness)"),
    "makespan": ("min", "makespan from now (s)"),
    "max_sum_throughput": ("max", "total throughput (iterations/s)"),
    "finish_time_fairness": ("min", "largest finish-time fairness rho"),
}


@dataclass(frozen=True)
class RoundState:
    """The arrays of one round (module docstring): ``T`` (n x K), ``W``, ``c``, weights
    ``w``, remaining work ``r`` (iterations), elapsed time since arrival ``elapsed`` (s)
    and the GPU types."""

    T: np.ndarray
    W: np.ndarray
    c: np.ndarray
    w: np.ndarray
    r: np.ndarray
    elapsed: np.ndarray
    types: tuple[str, ...]

    @property
    def n(self) -> int:
        return int(self.W.size)

    def check_fits(self) -> None:
        """Every job's gang must fit one GPU type (Gavel's X: W_m GPUs of type k)."""
        for m in range(self.n):
            pool = self.c[self.T[m] > 0].max(initial=0.0)
            if self.W[m] > pool:
                raise ModelNotApplicable(f"jobs[{m}].workers", int(self.W[m]),
                                         "Gavel runs a gang on one GPU type; no type this "
                                         f"job can use has {int(self.W[m])} GPUs")


def round_state(instance: Instance, at: float | None = None) -> RoundState:
    """The instance's jobs as the active jobs of one round at time ``at`` (default: the
    last arrival, so every job has arrived; the work is the whole work)."""
    t = float(instance.arrivals.max(initial=0.0)) if at is None else float(at)
    state = RoundState(instance.throughput_matrix.astype(float),
                       instance.workers.astype(float),
                       instance.cluster.capacity.sum(axis=0).astype(float),
                       np.array([j.weight for j in instance.jobs], dtype=float),
                       instance.work.astype(float), np.maximum(0.0, t - instance.arrivals),
                       instance.cluster.gpu_types)
    state.check_fits()
    return state


def check_allocation(state: RoundState, X: np.ndarray, tol: float = 1e-9) -> None:
    """Raise :class:`~optsched.errors.InvalidSchedule` if ``X`` breaks Gavel's constraints
    (1)-(3) by more than ``tol``: every method's allocation passes this before it is
    returned, as every schedule passes the validator."""
    from optsched.errors import InvalidSchedule

    X = np.asarray(X, dtype=float)
    if X.shape != state.T.shape:
        raise InvalidSchedule("X", X.shape, f"must be {state.T.shape} (jobs x GPU types)")
    bad = (X < -tol) | (X > 1 + tol) | ((state.T <= 0) & (X > tol))
    if bad.any():
        m, k = map(int, np.argwhere(bad)[0])
        raise InvalidSchedule(f"X[{m}][{k}]", float(X[m, k]),
                              "must be in [0, 1], and 0 on a type the job cannot use")
    rows = X.sum(axis=1)
    if (rows > 1 + tol).any():
        m = int(np.argmax(rows))
        raise InvalidSchedule(f"X[{m}]", float(rows[m]), "time fractions sum above 1")
    load = gpu_loads(state.W, X)
    if (load > state.c + tol).any():
        k = int(np.argmax(load - state.c))
        raise InvalidSchedule(f"X[:, {k}]", float(load[k]),
                              f"uses more than the {state.c[k]:g} GPUs of {state.types[k]!r}")


def normalised_rates(T, workers, capacity, weights=None, *, agnostic: bool = False,
                     n: int | None = None) -> np.ndarray:
    r""":math:`a_{mk} = \frac{W_m}{w_m} \frac{T_{mk}}{\sum_k T_{mk} X^{eq}_{mk}}`: job m's
    throughput per unit of :math:`X_{mk}`, normalised by its equal-share throughput
    (Gavel's max-min objective is :math:`\min_m \sum_k a_{mk} X_{mk}`); ``agnostic``
    sets :math:`T = 1` on every usable type. ``n``: the jobs sharing the cluster, as in
    :func:`equal_share` (default the rows given; a row depends on its own job only, so
    the rates of class representatives are their jobs' rates)."""
    T, W, c = _arrays(T, workers, capacity)
    rows = T.shape[0]
    w = np.ones(rows) if weights is None else np.asarray(weights, dtype=float).reshape(rows)
    Te = (T > 0).astype(float) if agnostic else T
    thr_eq = row_sums(Te * equal_share(Te, c, n=n))
    return Te * (W / (w * np.maximum(thr_eq, 1e-300)))[:, None]


def objective_value(state: RoundState, X: np.ndarray, objective: str) -> float:
    r"""The value of allocation ``X`` under ``objective`` (:data:`OBJECTIVES`):

    * ``max_min_fairness``: :math:`\min_m \sum_k a_{mk} X_{mk}` (:func:`normalised_rates`);
    * ``makespan``: :math:`\max_m r_m / \mathrm{thr}_m(X)` seconds (inf if a job gets
      nothing);
    * ``max_sum_throughput``: :math:`\sum_m \mathrm{thr}_m(X)`;
    * ``finish_time_fairness``: :math:`\max_m (t_m + r_m/\mathrm{thr}_m(X)) / d_m`,
      :math:`d_m = r_m / \mathrm{thr}_m(X^{iso})` the run time on the isolated share.
    """
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {sorted(OBJECTIVES)}")
    X = np.asarray(X, dtype=float)
    check_allocation(state, X)
    if state.n == 0:
        return 0.0
    thr = state.W * (state.T * X).sum(axis=1)
    if objective == "max_min_fairness":
        A = normalised_rates(state.T, state.W, state.c, state.w)
        return float((A * X).sum(axis=1).min())
    if objective == "max_sum_throughput":
        return float(thr.sum())
    with np.errstate(divide="ignore"):
        finish = np.where(thr > 0, state.r / np.where(thr > 0, thr, 1.0), np.inf)
    if objective == "makespan":
        return float(finish.max())
    iso = state.W * (state.T * isolated_share(state.T, state.W, state.c)).sum(axis=1)
    d = state.r / iso
    return float(((state.elapsed + finish) / d).max())


# --------------------------------------------------------------------------- space sharing
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
