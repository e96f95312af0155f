r"""AlloX's online rules in the shared simulator: :class:`AlloXPolicy`.

:class:`AlloXPolicy` is an event-driven, clairvoyant (``needs_work``)
:class:`optsched.sim.Policy` over AlloX's machines: one GPU each, numbered as
:func:`~optsched.allox.model.machine_slots`, with processing times
:math:`p_{mj} = E_j / T_{j,k(m)}` (:func:`~optsched.allox.model.processing_times`; every
rule reads them, hence ``needs_work``). It is non-preemptive: a started job keeps its
machine until it finishes. The simulator (:mod:`optsched.sim.simulator`) places by
(node, GPU type, count), not by GPU identity, so the policy keeps which machine runs
which job and returns every running job's placement at every call; the simulator runs
each at :math:`T_{j,k(m)}` iterations/s, so a job started at :math:`t` completes at
:math:`t + p_{mj}`.

Events (Le et al., AlloX, EuroSys'20, §3.2-3.3)
-----------------------------------------------
The policy decides only at an *event*: an arrival (the simulator shows a job at its
arrival instant) or a release (a running job has left the view: it finished at its
predicted end :math:`f_m`, start plus :math:`p_{mj}`). Calls at round boundaries with no
event change nothing. Events are handled in time order at their own instants (the
arrival :math:`a_j`, the predicted :math:`f_m`), one decision per distinct instant, and
all at the call that shows them, even one whose instant is a rounding error after the
view's time (the simulator shows arrivals and completions within its tolerance), so the
decisions are those of an event loop over the exact instants. At an event at time
:math:`t`, with the idle machines in index order and the queued jobs in arrival order
(ties by instance index), ``rule`` decides:

* ``"sjf"``: each idle machine takes the queued job shortest *on that machine*
  (smallest :math:`p_{mj}`, ties by job index);
* ``"sjf_fastest"``: the same, among the jobs whose fastest GPU type is the machine's
  (:math:`p_{mj} \le (1 + 10^{-12}) \min_{m'} p_{m'j}`);
* ``"jsq"``: at its arrival :math:`a_j` a job joins the machine with the fewest assigned
  unfinished jobs, ties by the earliest predicted free time :math:`\max(f_m, a_j)`, then
  by machine index; each machine runs its jobs first in, first out;
* ``"online"``: AlloX's online algorithm (``AlloXScheduler.computeResShare``): solve the
  matching of :func:`optsched.allox.exact.match` over the queued jobs with
  :math:`\omega_m = \max(t, f_m)` (:math:`f_m` the predicted release of machine
  :math:`m`) and start the first planned job of each idle machine, re-solving while
  machines stay idle and jobs wait. ``alpha`` is the fairness filter: only the jobs of
  the :math:`\lceil \alpha U \rceil` users (of the :math:`U` with queued jobs) with the
  least progress score enter the matching, where a user's score is the sum over its
  running jobs of :math:`(p^{best}_j / p_{mj}) / c_{k^*}` (the share of its best GPU type
  :math:`k^*`, with :math:`c_{k^*}` GPUs, that the job holds, scaled by the speed it gets;
  users ranked by score, then name; a job without a user is its own). When nothing can
  start, the filter's :math:`\alpha` doubles (``EnableIncreaseAlpha``) up to 1 for the
  rest of the event. ``max_jobs`` caps the matrix: round-robin over the GPU types in
  sorted order, the shortest remaining job on each type's first machine.

Guarantees. Every rule starts a job only on an idle machine that can run it, so the
schedule is feasible. ``sjf``, ``sjf_fastest`` and ``jsq`` have no constant
approximation ratio for :math:`R\,||\,\sum_j C_j` (unrelated machines), and none is
known for ``online`` with staggered arrivals. With every job arriving at one time,
``alpha=1`` and no cap, ``online``'s first matching is optimal and each re-solve keeps an
optimal continuation, so :math:`\sum_j (C_j - a_j) = \mathrm{OPT}` of
:func:`optsched.allox.exact.exact`.

Complexity per event, for :math:`q` queued jobs and :math:`M` machines: ``sjf`` and
``sjf_fastest`` :math:`O(Mq)` (each job's fastest time is kept from its arrival);
``jsq`` :math:`O(M + u)` per arrival (:math:`u` the assigned unfinished jobs) and
:math:`O(M)` per release; ``online`` at most
:math:`M + \lceil\log_2(1/\alpha)\rceil + 1` matchings of :math:`O(q^2 M K)` each
(:func:`~optsched.allox.exact.match`; :math:`MK \approx 2q`, so :math:`O(q^3)`), which
over the :math:`\approx n` releases of a batch of :math:`n` jobs is
:math:`\sum_q O(q^3) = O(n^4)` in the worst case (measured: exponent 3.1-3.8 per
doubling from 128 to 512 jobs, ``benchmarks/results/allox_scale.md``). That is AlloX's own
algorithm: its ``computeResShare`` re-solves the matching from scratch at every release (a Hungarian
algorithm on the :math:`nM \times n` matrix).

Re-planning only at arrivals (``replan="arrival"``). With ``alpha=1`` and no cap the
policy may instead solve the matching at the first event after an arrival only and, until
the next arrival, start on each idle machine the head of its remaining plan. This loses
nothing: a plan's continuation is an optimal plan of the jobs still queued. If jobs
:math:`S` start at :math:`t` on machines now busy until :math:`t + p_{mj}`, the cost of
any plan of the rest, plus the started jobs' own terms, is the cost of the whole plan
that starts :math:`S` first; so the old plan minus :math:`S` is optimal for the rest;
a machine left idle, whose :math:`\omega_m` grows with :math:`t`, has no planned job,
and a higher :math:`\omega_m` only raises the cost of plans that use it. So with a
common arrival the schedule is the first matching's plan and
:math:`\sum_j (C_j - a_j) = \mathrm{OPT}`, as with re-planning at every event, from
one matching: :math:`O(n^2 M K)` in all instead of :math:`O(n^4)` (1,024 jobs on 6
GPUs in seconds). In general it solves one matching at the first event with an idle
machine after each arrival instant (at most one per arrival instant) and spends
:math:`O(M)` on every other event; with a queue that never empties that is still one
matching per arrival.

The decisions of the two modes differ where the matching has several optima: the
default takes the one ``scipy.optimize.linear_sum_assignment`` returns for each new
matrix, ``"arrival"`` keeps the first. Two GPUs of one type always give such ties (jobs
at the same position on the two swap at no cost, ``tests/allox``), so on such clusters
no faster rule can promise the default's decisions without reproducing that solver's
internal tie-breaking; ``replan`` is therefore an option and the default stays AlloX's
rule, decision for decision (tested against a frozen copy of it).

Reference: T. N. Le, X. Sun, M. Chowdhury, Z. Liu, AlloX: Compute Allocation in Hybrid
Clusters, EuroSys'20 (§2 and §5.1 for the baselines, §3.2 online arrivals, §3.3
fairness).
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict, deque
from typing import Any

import numpy as np

from optsched.allox.exact import match
from optsched.allox.model import machine_slots, processing_times, single_worker
from optsched.core.instance import Cluster, Instance
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.sim.policy import ClusterView

__all__ = ["AlloXPolicy", "RULES", "REPLAN"]

RULES = ("online", "sjf", "sjf_fastest", "jsq")
REPLAN = ("event", "arrival")


class AlloXPolicy:
    """One of AlloX's online rules as a simulator policy (module docstring).

    Parameters
    ----------
    rule : {"online", "sjf", "sjf_fastest", "jsq"}
        The rule applied at each event.
    alpha : float
        ``online`` only: the fairness filter, in :math:`(0, 1]` (1: pure total JCT).
    max_jobs : int or None
        ``online`` only: at most this many jobs enter each matching (``None``: all).
    replan : {"event", "arrival"}
        ``online`` only: re-solve the matching at every event (``"event"``, AlloX's
        ``computeResShare``, the default) or only at the first event after an arrival,
        following the last plan in between (``"arrival"``; needs ``alpha=1`` and no
        cap). The module docstring compares the two.

    Raises
    ------
    InvalidOption
        An unknown rule or ``replan``, ``alpha`` outside :math:`(0, 1]`, ``max_jobs`` not
        a positive integer, ``alpha``/``max_jobs``/``replan`` set for a rule other than
        ``online``, or ``replan="arrival"`` with ``alpha < 1`` or a cap.

    Notes
    -----
    ``stats()`` (merged into ``Result.extra``): ``rule``, ``decisions`` (events at which
    the rule ran) and, for ``online``, ``alpha``, ``max_jobs``, ``replan``, ``solves``
    (matchings solved) and ``followed`` (decisions taken from the last plan).
    """

    event_driven = True
    #: non-preemptive: a decision changes only at an arrival or a release, so the
    #: simulator need not call it at round boundaries (a run takes one epoch per event,
    #: however long the jobs run)
    periodic = False
    needs_work = True

    def __init__(self, rule: str = "online", *, alpha: float = 1.0,
                 max_jobs: int | None = None, replan: str = "event"):
        if rule not in RULES:
            raise InvalidOption("rule", rule, f"must be one of {list(RULES)}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
                or not 0 < alpha <= 1:
            raise InvalidOption("alpha", alpha, "must be a number in (0, 1]")
        if max_jobs is not None and (isinstance(max_jobs, bool)
                                     or not isinstance(max_jobs, int) or max_jobs < 1):
            raise InvalidOption("max_jobs", max_jobs, "must be a positive integer or None")
        if replan not in REPLAN:
            raise InvalidOption("replan", replan, f"must be one of {list(REPLAN)}")
        if rule != "online":
            for k, v, default in (("alpha", alpha, 1.0), ("max_jobs", max_jobs, None),
                                  ("replan", replan, "event")):
                if v != default:
                    raise InvalidOption(k, v, f"only the online rule takes it (rule is "
                                        f"{rule!r})")
        if replan == "arrival" and (alpha < 1 or max_jobs is not None):
            what, v = ("alpha", alpha) if alpha < 1 else ("max_jobs", max_jobs)
            raise InvalidOption(what, v, "replan='arrival' follows a plan of every queued "
                                "job, so it needs alpha=1 and max_jobs=None")
        self.rule, self.alpha, self.max_jobs = rule, float(alpha), max_jobs
        self.replan = replan
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
        # replan="arrival": the last matching's plan (per machine, jobs in run order),
        # its started jobs removed; None once a job has arrived since
        self._plan: list[deque[int]] | None = None
        self.solves = 0
        self.followed = 0
        self.decisions = 0

    def stats(self) -> dict[str, Any]:
        """Counters for ``Result.extra`` (class docstring)."""
        out: dict[str, Any] = {"rule": self.rule, "decisions": self.decisions}
        if self.rule == "online":
            out.update(alpha=self.alpha, max_jobs=self.max_jobs, replan=self.replan,
                       solves=self.solves, followed=self.followed)
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
                    self._plan = None   # the last plan does not hold the new job
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
            if self._plan is not None:
                # no arrival since the plan was made: its continuation is an optimal
                # plan of the queued jobs (module docstring); follow it
                self.followed += 1
                started = [(self._plan[m][0], m) for m in sorted(idle_set) if self._plan[m]]
            else:
                omega = np.maximum(self._free, t)
                plan, _ = match(np.stack([self._p[j] for j in pool], axis=1), omega,
                                np.array([self._a[j] for j in pool]))
                self.solves += 1
                started = [(pool[plan[m][0]], m) for m in sorted(idle_set) if plan[m]]
                if self.replan == "arrival":
                    self._plan = [deque(pool[i] for i in order) for order in plan]
            if not started:
                if a >= 1:
                    break
                a = min(1.0, 2 * a)   # nothing can start: widen the filter for this event
                continue
            for j, m in started:
                left.remove(j)
                idle_set.discard(m)
                self._start(j, m, t)
                if self._plan is not None:
                    self._plan[m].popleft()   # j, the head of m's plan
                p = self._p[j]
                best = int(np.argmin(p))
                v = (p[best] / p[m]) / self._per_type[self._type[best]]
                score[user[j]] = score.get(user[j], 0.0) + v
                heapq.heappush(self._running, (t + p[m], j, v))
