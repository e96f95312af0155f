r"""AlloX heuristics: SJF baselines, join-the-shortest-queue and online AlloX.

All are non-preemptive list schedulers over AlloX's machines (one GPU each, processing
times ``p[m, j]``, see :mod:`optsched.allox.model`), respect arrivals, and return a
validated schedule. None of them has a constant approximation ratio for
:math:`R\,||\,\sum C_j` (unrelated machines), which is exactly why AlloX solves the
matching; ``Result.ratio`` is ``None`` except where noted.

* ``sjf``: whenever a machine is idle it takes, among queued jobs, the one shortest
  *on that machine* (greedy SJF on each free resource; the baseline of AlloX's talk,
  which yields 2.53x the optimal mean JCT on its 4-job example).
* ``sjf_fastest``: each job waits for a machine of its fastest GPU type; each idle
  machine takes the shortest queued job whose fastest type is its own.
* ``jsq``: join the shortest queue: at arrival a job joins the machine with the fewest
  unfinished jobs assigned (ties: earliest free, then lowest index); FIFO per machine.
* ``online``: AlloX's online algorithm (``AlloXScheduler.computeResShare``): at every
  arrival or machine release, re-solve the matching of :mod:`optsched.allox.exact`
  over queued jobs with :math:`\omega_m = \max(t, \text{free}_m)`, and start only the
  first planned job on each idle machine; nothing is preempted. ``alpha`` is the
  fairness filter: only jobs of the :math:`\lceil \alpha U \rceil` users (of the U with
  queued jobs) with the least current progress score enter the matching (``alpha=1``
  is pure JCT). A user's score is the sum over its running jobs of
  :math:`(p^{best}_j / p_{mj}) / c_{k^*}`: the share of its best GPU type
  :math:`k^*` (with :math:`c_{k^*}` GPUs) that the job holds, scaled by the speed it
  gets. If no job can start, ``alpha`` doubles (as ``EnableIncreaseAlpha``).
  ``max_jobs`` caps the matrix by taking, round-robin over GPU types, the shortest
  remaining job on each type. With all jobs arriving together, ``alpha=1`` and no cap
  the first matching is already optimal and every re-solve keeps an optimal
  continuation, so the result equals the exact optimum (``ratio=1``).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable

import numpy as np

from optsched.allox.exact import match
from optsched.allox.model import Machines, machines_of
from optsched.core.instance import Instance
from optsched.core.result import Result, finalize
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption
from optsched.options import declares

__all__ = ["sjf", "sjf_fastest", "jsq", "online"]

NO_RATIO = ("no constant approximation ratio is known for this rule on unrelated "
            "machines (R||sum C_j); compare with the exact optimum")


def _result(instance: Instance, mach: Machines, start: dict[int, tuple[int, float]],
            method: str, seconds: float, **extra) -> Result:
    allocs, comp = [], {}
    for j, (m, t) in start.items():
        job = instance.jobs[j]
        end = t + float(mach.p[m, j])
        allocs.append(Allocation(job.id, t, end, mach.node[m], mach.gpu_type[m], 1))
        comp[job.id] = end
    obj = float(sum(c - instance.job(j).arrival for j, c in comp.items()))
    fields = {"ratio": None, "ratio_note": NO_RATIO}
    fields.update(extra.pop("ratio_fields", {}))
    return finalize(instance, Schedule(tuple(allocs), comp), objective=obj, model="allox",
                    method=method, solve_seconds=seconds, extra=extra, **fields)


def _event_loop(instance: Instance, mach: Machines,
                decide: Callable[[float, list[int], np.ndarray, list[int]], list[tuple[int, int]]]
                ) -> dict[int, tuple[int, float]]:
    """Drive arrivals and releases; ``decide(t, idle, free_at, queue)`` returns starts."""
    order = list(np.argsort(instance.arrivals, kind="stable"))
    arrivals = instance.arrivals
    free_at = np.zeros(mach.count)
    busy: list[tuple[float, int]] = []
    queue: list[int] = []
    start: dict[int, tuple[int, float]] = {}
    nxt = 0
    t = float(arrivals[order[0]]) if order else 0.0
    while nxt < len(order) or queue:
        while nxt < len(order) and arrivals[order[nxt]] <= t:
            queue.append(int(order[nxt]))
            nxt += 1
        while busy and busy[0][0] <= t:
            heapq.heappop(busy)
        idle = [m for m in range(mach.count) if free_at[m] <= t]
        if idle and queue:
            for j, m in decide(t, idle, free_at, queue):
                start[j] = (m, t)
                queue.remove(j)
                free_at[m] = t + mach.p[m, j]
                heapq.heappush(busy, (free_at[m], m))
        cand = [busy[0][0]] if busy else []
        if nxt < len(order):
            cand.append(float(arrivals[order[nxt]]))
        if not cand:
            if queue:  # nothing running, nothing arriving, queue stuck: a bug, not input
                raise RuntimeError("AlloX event loop stalled with queued jobs")
            break
        t = max(t, min(cand))
    return start


def _shortest_on_each_free_machine(instance: Instance, method: str,
                                   eligible: Callable[[Machines, int, int], bool]) -> Result:
    """Each idle machine (in index order) takes the shortest queued job it may run."""
    t0 = time.perf_counter()
    mach = machines_of(instance)

    def decide(t, idle, free_at, queue):
        out, left = [], list(queue)
        for m in idle:
            ok = [j for j in left if eligible(mach, m, j)]
            if ok:
                j = min(ok, key=lambda j: (mach.p[m, j], j))
                out.append((j, m))
                left.remove(j)
        return out

    return _result(instance, mach, _event_loop(instance, mach, decide), method,
                   time.perf_counter() - t0)


@declares()
def sjf(instance: Instance) -> Result:
    """Each idle machine (in index order) takes the queued job shortest on it."""
    return _shortest_on_each_free_machine(
        instance, "sjf", lambda mach, m, j: bool(np.isfinite(mach.p[m, j])))


@declares()
def sjf_fastest(instance: Instance) -> Result:
    """Each job waits for its fastest GPU type; shortest job first per machine."""
    def on_fastest(mach: Machines, m: int, j: int) -> bool:
        return bool(mach.p[m, j] <= mach.p[:, j].min() * (1 + 1e-12))

    return _shortest_on_each_free_machine(instance, "sjf_fastest", on_fastest)


@declares()
def jsq(instance: Instance) -> Result:
    """Join the shortest queue at arrival; FIFO on each machine."""
    t0 = time.perf_counter()
    mach = machines_of(instance)
    free_at = np.zeros(mach.count)
    ends: list[list[float]] = [[] for _ in range(mach.count)]
    start: dict[int, tuple[int, float]] = {}
    for j in np.argsort(instance.arrivals, kind="stable"):
        a = float(instance.arrivals[j])
        ok = [m for m in range(mach.count) if np.isfinite(mach.p[m, j])]
        load = {m: sum(e > a for e in ends[m]) for m in ok}
        m = min(ok, key=lambda m: (load[m], max(free_at[m], a), m))
        s = max(free_at[m], a)
        start[int(j)] = (m, s)
        free_at[m] = s + mach.p[m, j]
        ends[m].append(free_at[m])
    return _result(instance, mach, start, "jsq", time.perf_counter() - t0)


def _capped(mach: Machines, queue: list[int], cap: int) -> list[int]:
    types = sorted(set(mach.gpu_type))
    rows = {k: [m for m in range(mach.count) if mach.gpu_type[m] == k][0] for k in types}
    left, chosen = list(queue), []
    while left and len(chosen) < cap:
        for k in types:
            if not left or len(chosen) >= cap:
                break
            j = min(left, key=lambda j: (mach.p[rows[k], j], j))
            chosen.append(j)
            left.remove(j)
    return chosen


@declares()
def online(instance: Instance, *, alpha: float = 1.0, max_jobs: int | None = None) -> Result:
    """Online AlloX (see module docstring): re-solve the matching at every event."""
    if not (isinstance(alpha, (int, float)) and 0 < alpha <= 1):
        raise InvalidOption("alpha", alpha, "must be in (0, 1]")
    if max_jobs is not None and (not isinstance(max_jobs, int) or max_jobs < 1):
        raise InvalidOption("max_jobs", max_jobs, "must be a positive integer or None")
    t0 = time.perf_counter()
    mach = machines_of(instance)
    users = [j.user if j.user is not None else j.id for j in instance.jobs]
    best_m = np.argmin(mach.p, axis=0)
    per_type = {k: mach.gpu_type.count(k) for k in set(mach.gpu_type)}
    score: dict[str, float] = {}
    running: list[tuple[float, int, float]] = []  # (end, job, fairVal)
    solves = [0]

    def decide(t, idle, free_at, queue):
        while running and running[0][0] <= t:
            _, j, v = heapq.heappop(running)
            score[users[j]] -= v
        out: list[tuple[int, int]] = []
        left, idle_set = list(queue), set(idle)
        a = alpha
        while left and idle_set:
            active = sorted({users[j] for j in left}, key=lambda u: (score.get(u, 0.0), u))
            keep = set(active[: math.ceil(a * len(active) - 1e-12)])
            pool = [j for j in left if users[j] in keep]
            if max_jobs is not None and len(pool) > max_jobs:
                pool = _capped(mach, pool, max_jobs)
            omega = np.maximum(free_at, t)
            plan, _ = match(mach.p[:, pool], omega, instance.arrivals[pool])
            solves[0] += 1
            started = []
            for m in sorted(idle_set):
                if plan[m]:
                    j = pool[plan[m][0]]
                    started.append((j, m))
            if not started:
                if a >= 1:
                    break
                a = min(1.0, 2 * a)
                continue
            for j, m in started:
                out.append((j, m))
                left.remove(j)
                idle_set.discard(m)
                free_at[m] = t + mach.p[m, j]  # later solves in this event see it busy
                k = mach.gpu_type[best_m[j]]
                v = (mach.p[best_m[j], j] / mach.p[m, j]) / per_type[k]
                score[users[j]] = score.get(users[j], 0.0) + v
                heapq.heappush(running, (t + mach.p[m, j], j, v))
        return out

    start = _event_loop(instance, mach, decide)
    together = bool(np.all(instance.arrivals == instance.arrivals[0]))
    exact_case = together and alpha >= 1 and max_jobs is None
    rf = ({"ratio": 1.0, "ratio_note": "all jobs arrive together, alpha=1, no cap: equals "
           "the exact optimum"} if exact_case else {})
    return _result(instance, mach, start, "online", time.perf_counter() - t0,
                   solves=solves[0], alpha=alpha, max_jobs=max_jobs, ratio_fields=rf)
