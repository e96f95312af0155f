"""A frozen copy of AlloX's online rules: the reference the default ``online`` rule must
agree with, decision for decision (``test_allox_replan.py``).

:class:`ReferenceAlloXPolicy` is :class:`optsched.allox.policy.AlloXPolicy` and
:func:`match` is :func:`optsched.allox.exact.match` as of commit 98ef3c5, copied
verbatim (only renamed), before the option ``replan`` existed: every event at which a
machine is idle and jobs wait solves a fresh matching with
``scipy.optimize.linear_sum_assignment``. Slow (a matching of :math:`O(q^2 M K)` per
event); kept here, not in the package, to compare against.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict, deque
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from optsched.allox.model import machine_slots, processing_times, single_worker
from optsched.core.instance import Cluster, Instance
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.sim.policy import ClusterView

RULES = ("online", "sjf", "sjf_fastest", "jsq")
Plan = list[list[int]]


def _costs(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray, K: int) -> np.ndarray:
    """Cost matrix ``C[j, m*K + (k-1)] = k p[m, j] + omega[m] - a[j]`` (``inf``: forbidden)."""
    k = np.arange(1, K + 1, dtype=float)
    c = k[None, None, :] * p.T[:, :, None] + (omega[None, :, None] - arrival[:, None, None])
    return c.reshape(p.shape[1], p.shape[0] * K)


def match(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray,
          k0: int | None = None) -> tuple[Plan, float]:
    """Optimal plan for jobs queued on machines free from ``omega``.

    Returns the per-machine run order and the total :math:`\\sum (C_j - a_j)`.
    ``p`` is ``(M, n)``; entries ``inf`` forbid a machine for a job.
    """
    M, n = p.shape
    if n == 0:
        return [[] for _ in range(M)], 0.0
    K = max(1, k0 if k0 is not None else 2 * -(-n // M))
    while True:
        K = min(K, n)
        C = _costs(p, omega, arrival, K)
        try:
            rows, cols = linear_sum_assignment(C)
        except ValueError:  # no complete assignment with K positions per machine
            if K == n:
                raise ModelNotApplicable("jobs", n, "some job can run on no machine") from None
            K *= 2
            continue
        m_of, k_of = np.divmod(cols, K)
        if K == n or not np.any(k_of == K - 1):
            break
        K *= 2
    plan: Plan = [[] for _ in range(M)]
    for m in range(M):
        sel = np.flatnonzero(m_of == m)
        plan[m] = [int(rows[i]) for i in sel[np.argsort(-k_of[sel])]]
    return plan, float(C[rows, cols].sum())



class ReferenceAlloXPolicy:
    """AlloXPolicy as of commit 98ef3c5 (module docstring).

    Parameters
    ----------
    rule : {"online", "sjf", "sjf_fastest", "jsq"}
        The rule applied at each event.
    alpha : float
        ``online`` only: the fairness filter, in :math:`(0, 1]` (1: pure total JCT).
    max_jobs : int or None
        ``online`` only: at most this many jobs enter each matching (``None``: all).

    Raises
    ------
    InvalidOption
        An unknown rule, ``alpha`` outside :math:`(0, 1]`, ``max_jobs`` not a positive
        integer, or ``alpha``/``max_jobs`` set for a rule other than ``online``.

    Notes
    -----
    ``stats()`` (merged into ``Result.extra``): ``rule``, ``decisions`` (events at which
    the rule ran) and, for ``online``, ``alpha``, ``max_jobs`` and ``solves`` (matchings
    solved).
    """

    event_driven = True
    #: non-preemptive: a decision changes only at an arrival or a release, so the
    #: simulator need not call it at round boundaries (a run takes one epoch per event,
    #: however long the jobs run)
    periodic = False
    needs_work = True

    def __init__(self, rule: str = "online", *, alpha: float = 1.0,
                 max_jobs: int | None = None):
        if rule not in RULES:
            raise InvalidOption("rule", rule, f"must be one of {list(RULES)}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
                or not 0 < alpha <= 1:
            raise InvalidOption("alpha", alpha, "must be a number in (0, 1]")
        if max_jobs is not None and (isinstance(max_jobs, bool)
                                     or not isinstance(max_jobs, int) or max_jobs < 1):
            raise InvalidOption("max_jobs", max_jobs, "must be a positive integer or None")
        if rule != "online":
            for k, v, default in (("alpha", alpha, 1.0), ("max_jobs", max_jobs, None)):
                if v != default:
                    raise InvalidOption(k, v, f"only the online rule takes it (rule is "
                                        f"{rule!r})")
        self.rule, self.alpha, self.max_jobs = rule, float(alpha), max_jobs
        self.name = f"allox_{rule}"
        self.reset()

    def reset(self) -> None:
        """Forget every job and machine (the simulator calls it before a run)."""
        self._node: tuple[str, ...] = ()
        self._type: tuple[str, ...] = ()
        self._on: list[int | None] | None = None   # machine -> running job (instance index)
        self._free = np.zeros(0)                   # machine -> predicted release
        self._queue: list[int] = []                # arrived, not started, arrival order
        self._p: dict[int, np.ndarray] = {}        # job -> p[:, j]
        self._fastest: dict[int, float] = {}       # job -> min_m p[m, j]
        self._a: dict[int, float] = {}
        self._user: dict[int, str] = {}
        self._id: dict[int, str] = {}
        # jsq: each machine's FIFO, the predicted ends of its jobs, its predicted tail
        self._fifo: list[deque[int]] = []
        self._ends: list[list[float]] = []
        self._tail = np.zeros(0)
        # online: users' progress scores and the running jobs' (end, job, score) terms
        self._score: dict[str, float] = {}
        self._running: list[tuple[float, int, float]] = []
        self._per_type: dict[str, int] = {}
        self._first: dict[str, int] = {}
        self.solves = 0
        self.decisions = 0

    def stats(self) -> dict[str, Any]:
        """Counters for ``Result.extra`` (class docstring)."""
        out: dict[str, Any] = {"rule": self.rule, "decisions": self.decisions}
        if self.rule == "online":
            out.update(alpha=self.alpha, max_jobs=self.max_jobs, solves=self.solves)
        return out

    def check(self, instance: Instance) -> None:
        """Refuse gang jobs: a machine is one GPU (``jobs[i].workers`` named)."""
        single_worker(instance)

    # ------------------------------------------------------------------ state
    def _machines(self, cluster: Cluster) -> None:
        self._node, self._type = machine_slots(cluster)
        M = len(self._node)
        self._on = [None] * M
        self._free = np.zeros(M)
        self._fifo = [deque() for _ in range(M)]
        self._ends = [[] for _ in range(M)]
        self._tail = np.zeros(M)
        types = sorted(set(self._type))
        self._per_type = {k: self._type.count(k) for k in types}
        self._first = {k: self._type.index(k) for k in types}

    def _arrive(self, view: ClusterView) -> list[int]:
        """Record the jobs ``view`` shows for the first time; their indices, in view
        (arrival) order."""
        new = [r for r, j in enumerate(view.index.tolist()) if j not in self._p]
        if not new:
            return []
        tindex = {t: k for k, t in enumerate(view.gpu_types)}
        cols = [tindex[t] for t in self._type]
        work, T = view.work, view.throughput_matrix
        out = []
        for r in new:
            j = int(view.index[r])
            self._p[j] = processing_times(work[r], T[r, cols])
            self._fastest[j] = float(self._p[j].min())
            self._a[j] = float(view.arrivals[r])
            user = view.users[r] if view.users else None
            self._user[j] = user if user is not None else view.ids[r]
            self._id[j] = view.ids[r]
            out.append(j)
        return out

    def _start(self, j: int, m: int, t: float) -> None:
        assert self._on is not None
        self._on[m] = j
        # later matchings of this event see the machine busy until then
        self._free[m] = t + self._p[j][m]
        if self.rule != "jsq":
            self._queue.remove(j)

    # ------------------------------------------------------------------ the simulator's call
    def allocate(self, view: ClusterView) -> list[Placement]:
        """Handle the events ``view`` shows (module docstring); every running job's
        placement, one GPU of its machine's node and type."""
        if self._on is None:
            self._machines(view.cluster)
        assert self._on is not None
        # Every event shown is handled now, at its own instant, even one a rounding error
        # ahead of view.time: waiting for it would make the simulator step past it.
        live = set(view.index.tolist())
        releases: dict[float, list[int]] = defaultdict(list)
        for m, j in enumerate(self._on):
            if j is not None and j not in live:
                releases[float(self._free[m])].append(m)   # finished: released at f_m
        arrivals: dict[float, list[int]] = defaultdict(list)   # each in arrival order
        for j in self._arrive(view):
            arrivals[self._a[j]].append(j)
        for tau in sorted(arrivals.keys() | releases.keys()):
            for j in arrivals.get(tau, ()):
                if self.rule == "jsq":
                    self._join_shortest_queue(j)
                else:
                    self._queue.append(j)
            for m in releases.get(tau, ()):
                self._on[m] = None
            self._decide(tau)
        return [Placement(self._id[j], self._node[m], self._type[m], 1)
                for m, j in enumerate(self._on) if j is not None]

    def _decide(self, t: float) -> None:
        assert self._on is not None
        idle = [m for m, j in enumerate(self._on) if j is None]
        if self.rule == "jsq":
            for m in idle:
                if self._fifo[m]:
                    self._start(self._fifo[m].popleft(), m, t)
            self.decisions += 1
            return
        if not (idle and self._queue):
            return
        self.decisions += 1
        if self.rule == "online":
            self._online(t, idle)
            return
        left = list(self._queue)
        for m in idle:
            ok = [j for j in left if self._eligible(m, j)]
            if ok:
                j = min(ok, key=lambda j: (self._p[j][m], j))
                left.remove(j)
                self._start(j, m, t)

    def _eligible(self, m: int, j: int) -> bool:
        p = self._p[j][m]
        if self.rule == "sjf":
            return bool(np.isfinite(p))
        return bool(p <= self._fastest[j] * (1 + 1e-12))   # sjf_fastest: its fastest type

    # ------------------------------------------------------------------ jsq
    def _join_shortest_queue(self, j: int) -> None:
        a, p = self._a[j], self._p[j]
        ok = [m for m in range(len(self._node)) if np.isfinite(p[m])]
        # arrivals come in time order: an end at or before a is finished for every later one
        self._ends = [[e for e in ends if e > a] for ends in self._ends]
        m = min(ok, key=lambda m: (len(self._ends[m]), max(self._tail[m], a), m))
        s = max(self._tail[m], a)
        self._tail[m] = s + p[m]
        self._ends[m].append(self._tail[m])
        self._fifo[m].append(j)

    # ------------------------------------------------------------------ online AlloX
    def _capped(self, pool: list[int]) -> list[int]:
        """At most ``max_jobs`` of ``pool``: round-robin over the GPU types (sorted), the
        shortest job left on each type's first machine."""
        assert self.max_jobs is not None
        left = list(pool)
        chosen: list[int] = []
        while left and len(chosen) < self.max_jobs:
            for row in self._first.values():
                if not left or len(chosen) >= self.max_jobs:
                    break
                j = min(left, key=lambda j: (self._p[j][row], j))
                chosen.append(j)
                left.remove(j)
        return chosen

    def _online(self, t: float, idle: list[int]) -> None:
        score, user = self._score, self._user
        # jobs ended by t stop counting, in the order they ended (float sums in that order)
        while self._running and self._running[0][0] <= t:
            _, j, v = heapq.heappop(self._running)
            score[user[j]] -= v
        left, idle_set = list(self._queue), set(idle)
        a = self.alpha
        while left and idle_set:
            active = sorted({user[j] for j in left}, key=lambda u: (score.get(u, 0.0), u))
            keep = set(active[: math.ceil(a * len(active) - 1e-12)])
            pool = [j for j in left if user[j] in keep]
            if self.max_jobs is not None and len(pool) > self.max_jobs:
                pool = self._capped(pool)
            omega = np.maximum(self._free, t)
            plan, _ = match(np.stack([self._p[j] for j in pool], axis=1), omega,
                            np.array([self._a[j] for j in pool]))
            self.solves += 1
            started = [(pool[plan[m][0]], m) for m in sorted(idle_set) if plan[m]]
            if not started:
                if a >= 1:
                    break
                a = min(1.0, 2 * a)   # nothing can start: widen the filter for this event
                continue
            for j, m in started:
                left.remove(j)
                idle_set.discard(m)
                self._start(j, m, t)
                p = self._p[j]
                best = int(np.argmin(p))
                v = (p[best] / p[m]) / self._per_type[self._type[best]]
                score[user[j]] = score.get(user[j], 0.0) + v
                heapq.heappush(self._running, (t + p[m], j, v))
