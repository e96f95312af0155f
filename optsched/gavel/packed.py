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
from optsched.gavel.model import LPAllocation, _arrays, equal_share, row_sums
from optsched.sim.placement import check_single_type_gangs, choose_nodes
from optsched.sim.policy import ClusterView
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram

__all__ = ["Pairs", "candidate_pairs", "max_min_fairness_packed", "PackedRounds",
           "GavelPackedPolicy", "GavelPackedFIFOPolicy", "PACKING_THRESHOLD"]

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
                            backend: str = "highs", **solve_options: Any
                            ) -> tuple[LPAllocation, np.ndarray]:
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
    backend, **solve_options
        Solver layer (:func:`optsched.solvers.solve_program`).

    Returns
    -------
    (LPAllocation, ndarray)
        ``X`` (n, K) of the single jobs with ``objective`` :math:`z^*`, and ``Y`` (P, K)
        of the pairs.

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
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(n)
    thr_eq = row_sums(T * equal_share(T, c, n=n))
    s = W / (w * np.maximum(thr_eq, 1e-300))
    lp = LinearProgram(sense="max", name="gavel_max_min_packed")
    X = lp.add_variables("X", (n, K), lb=0.0, ub=np.where(T > 0, 1.0, 0.0))
    R = pairs.R
    ok = (R[:, 0, :] > 0) & (R[:, 1, :] > 0) if P else np.zeros((0, K), dtype=bool)
    Y = lp.add_variables("Y", (P, K), lb=0.0, ub=np.where(ok, 1.0, 0.0))
    z = lp.add_variables("z", 1, lb=-np.inf, ub=np.inf, cost=1.0)
    xi, yi = X.index, Y.index
    a, b = pairs.rows[:, 0], pairs.rows[:, 1]
    # per job: its single columns, then its pairs' columns (as either member)
    job_rows = np.concatenate([np.repeat(np.arange(n), K), np.repeat(a, K), np.repeat(b, K)])
    cols = np.concatenate([xi.ravel(), yi.ravel(), yi.ravel()])
    lp.add_constraints("time_fraction", rows=job_rows, cols=cols, vals=1.0, ub=1.0,
                       n_rows=n)
    Wp = W[a] if P else np.zeros(0)
    lp.add_constraints("capacity", rows=np.concatenate([np.tile(np.arange(K), n),
                                                        np.tile(np.arange(K), P)]),
                       cols=np.concatenate([xi.ravel(), yi.ravel()]),
                       vals=np.concatenate([np.repeat(W, K), np.repeat(Wp, K)]),
                       ub=c, n_rows=K)
    rate = np.concatenate([(T * s[:, None]).ravel(), (R[:, 0, :] * s[a, None]).ravel(),
                           (R[:, 1, :] * s[b, None]).ravel()])
    keep = rate != 0
    lp.add_constraints("epigraph",
                       rows=np.concatenate([job_rows[keep], np.arange(n)]),
                       cols=np.concatenate([cols[keep], np.full(n, int(z.index[0]))]),
                       vals=np.concatenate([-rate[keep], np.ones(n)]), ub=0.0, n_rows=n)
    res = solve_program(lp.freeze(), backend, **solve_options)
    if not res.success:
        return LPAllocation(np.zeros((n, K)), None, res.status, res,
                            seconds=res.seconds), np.zeros((P, K))
    v = res.values
    Xv = np.clip(np.asarray(v["X"], dtype=float).reshape(n, K), 0.0, 1.0)
    Yv = np.clip(np.asarray(v["Y"], dtype=float).reshape(P, K), 0.0, 1.0)
    return LPAllocation(Xv, float(np.asarray(v["z"]).ravel()[0]), res.status, res,
                        seconds=res.seconds), Yv


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


class GavelPackedPolicy:
    """Gavel's packed max-min fairness (``max_min_fairness_packed``): the LP of
    :func:`max_min_fairness_packed` over the visible jobs and their
    :func:`candidate_pairs`, recomputed when the set of visible jobs changes, run by
    :class:`PackedRounds`. ``event_driven = False``; declares ``colocation``.

    Parameters
    ----------
    backend, solver, time_limit, threads, solve_options
        Solver layer, as :class:`optsched.gavel.policy.GavelPolicy`.
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1920 s).
    fill_leftover : bool
        Let single jobs take GPUs the allocation leaves free (default True).
    weighted : bool
        Use job weights (default True).
    """

    event_driven = False
    needs_work = False
    colocation = True

    def __init__(self, *, backend: str = "highs", solver: str | None = None,
                 time_limit: float | None = None, threads: int | None = None,
                 solve_options: dict | None = None, reset_interval: float = 1920.0,
                 fill_leftover: bool = True, weighted: bool = True,
                 name: str | None = None):
        if not isinstance(fill_leftover, bool):
            raise InvalidOption("fill_leftover", fill_leftover, "must be true or false")
        if not isinstance(weighted, bool):
            raise InvalidOption("weighted", weighted, "must be true or false")
        if not (isinstance(reset_interval, (int, float)) and reset_interval >= 0):
            raise InvalidOption("reset_interval", reset_interval, "must be a number >= 0")
        self.name = name or "max_min_fairness_packed"
        opts: dict[str, Any] = dict(solve_options or {})
        for key, val in (("solver", solver), ("time_limit", time_limit), ("threads", threads)):
            if val is not None:
                opts[key] = val
        self.backend, self.solve_options, self.weighted = backend, opts, weighted
        self.rounds = PackedRounds(reset_interval, fill_leftover=fill_leftover)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._ids: tuple[str, ...] | None = None
        self._alloc: tuple[np.ndarray, Pairs, np.ndarray] | None = None
        self._rate = _RateCache()
        self._solves, self._seconds, self._pairs_run = 0, 0.0, 0

    def stats(self) -> dict[str, Any]:
        return {"allocation_solves": self._solves, "lp_seconds": self._seconds}

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocation(self, view: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        if self._ids != view.ids or self._alloc is None:
            pairs = candidate_pairs(view, self._rate)
            sol, Y = max_min_fairness_packed(
                view.throughput_matrix, view.workers, view.gpus_per_type, pairs,
                view.weights if self.weighted else None, backend=self.backend,
                **self.solve_options)
            self._solves += 1
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
