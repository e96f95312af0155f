r"""The one round-based cluster simulator shared by every online policy.

Mechanics (Gavel OSDI'20 §5 round mechanism; Tiresias NSDI'19 §4 event-driven scheduler)
----------------------------------------------------------------------------------------
* Time advances in *decision epochs*. A round-based policy (``event_driven = False``) is
  called at round boundaries ``t, t + slot, t + 2 slot, ...`` with ``slot =
  instance.slot``; a job arriving inside a round becomes visible at the next boundary.
  An event-driven policy is also called at every arrival and completion instant (the
  epoch ends at ``min(t + slot, next arrival, first completion)``); one that also
  declares ``periodic = False`` (its decisions change only at those instants, e.g. a
  non-preemptive list scheduler) is called only then (the epoch ends at ``min(next
  arrival, first completion)``), so a run takes as many epochs as there are events,
  whatever the jobs' durations.
* When no job is waiting or running, the simulator jumps to the next arrival, which
  starts a new round grid (no empty rounds are looped over).
* During an epoch the allocation is fixed. A gang of :math:`W_j` workers using GPU types
  :math:`K_j` progresses at :math:`W_j \min_{k \in K_j} T_{jk}` iterations/s (synchronous
  data parallelism waits for the slowest worker), times the share factor and the
  CPU/DRAM sensitivity when the policy declares ``sharing`` / ``resource_sensitive``:
  the rule is :func:`optsched.core.progress.gang_rate`, the one the validator credits (a
  policy may declare another ``progress_rule``: ``"partial"`` gangs of 1..W_j GPUs at
  :math:`g \min_k T_{jk}`, or ``"additive"`` gangs at :math:`\sum_a g_a T_{jk_a}`). With
  ``forking`` each copy is a gang and the copies' rates add up. A job whose remaining
  work :math:`r_j` runs out inside the epoch has its work done at the exact instant
  :math:`t + r_j / R_j` (as a float, the first one at which the recorded interval
  credits :math:`r_j`: rounding to the nearest could leave a job of tiny work short by
  a relative :math:`10^{-5}` late in a run) and completes then (plus the policy's
  ``consolidation`` seconds, during which it holds nothing and is no longer shown to
  the policy); its GPUs stay idle for the rest of the round (round-based policies) or
  are re-assigned at once (event-driven ones). A job left short at the epoch end only
  by float rounding (at most a relative :math:`10^{-9}` of its work) completes at the
  epoch end: its record never runs past the instant its GPUs are handed on. An epoch
  also ends at the policy's ``horizon()`` if it gives one; a decision that runs nothing
  then jumps straight to that instant (or the next arrival).
* A *preemption* is counted when a job that ran in the previous epoch is unfinished and
  gets no GPU in the next; a *migration* when it keeps running on a different placement.
* Every decision is checked before it is executed: known node and type, positive
  integer GPU counts, no node/type over-allocation (GPUs weighted by ``share``; a share
  below 1 only for ``sharing`` policies, always in (0, 1]), CPU cores and DRAM per node
  within the node's, each gang exactly ``workers`` wide (with ``forking``: each copy
  1..``workers`` GPUs on one node, the copies of a job on distinct nodes; copy ids other
  than 0 only with ``forking``), only arrived unfinished jobs, only types the job can run
  on. A violation raises :class:`~optsched.sim.policy.PolicyViolation` naming the policy.
* The schedule (back-to-back identical allocations merged, declaring the policy's
  ``sharing``, ``forking``, ``consolidation`` and ``resource_sensitive``) goes through
  :func:`optsched.core.result.finalize` (independent validator + metrics).

Determinism: the only randomness is ``ClusterView.rng``, a ``numpy`` generator seeded
with ``seed``; iteration orders are fixed (arrival, then instance order).
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import check_progress_rule, gang_rate
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Placement, Schedule
from optsched.errors import InvalidOption
from optsched.progressbar import ProgressBar
from optsched.sim.decisions import Caps, DecisionChecker
from optsched.sim.policy import ClusterView, Policy, PolicyViolation, check_policy

__all__ = ["simulate", "SimStats", "no_queue_note", "NO_QUEUE"]

_EPS = 1e-9
#: Work left after an epoch, relative to the job's work, that counts as done (rounding).
_DONE = 1e-9


#: The note of a simulation in which no job ever waited (:func:`no_queue_note`).
NO_QUEUE = "no job queued: policies cannot differ"


def no_queue_note(result: Result) -> str:
    """``""``, or the note that the simulation ``result`` measured no queueing.

    When no job ever waited (``result.extra["queued_jobs"] == 0``: every job held GPUs
    from the first decision that saw it until it completed) the cluster never had to
    choose whom to run, so a policy's order is never exercised and comparing
    policies on this instance measures nothing: raise the load or shrink the cluster.
    On a cluster of several GPU types the policies can still place jobs on other types,
    and the note says so. Results without the figure (a policy that does not run in
    the shared simulator) give ``""``.
    """
    x = result.extra
    if x.get("queued_jobs") != 0 or not x.get("epochs"):
        return ""
    types = x.get("gpus_per_type") or {}
    note = f"{NO_QUEUE} (every job ran from the first decision after its arrival"
    if len(types) > 1:
        note += f"; only their choice among the {len(types)} GPU types can"
    return note + ")"


@dataclass
class SimStats:
    """Counters reported in ``Result.extra``."""

    epochs: int = 0
    policy_calls: int = 0
    policy_seconds: float = 0.0
    idle_jumps: int = 0


class _Epoch:
    """One checked decision and what executing it takes: per job (in job-index order)
    its rate and GPUs held, per placement (by :class:`DecisionChecker` id) its job, type
    and GPU count. Kept while the policy returns the same decision, which is then
    neither checked nor grouped again."""

    def __init__(self, placements: list, gangs: dict[int, dict[int, list[int]]],
                 checker: DecisionChecker, jobs: tuple, w_list: list[int],
                 rate_memo: dict[tuple, float], sensitive: bool, rule: str = "gang") -> None:
        self.placements = placements
        self.gangs = gangs
        P, amount = checker.placement, checker.amount
        rate: list[float] = []
        held: list[float] = []
        ids: list[int] = []
        p_gang: list[int] = []
        for e, (i, copies) in enumerate(gangs.items()):
            r = h = 0.0
            for copy in copies.values():
                key = tuple(copy)
                v = rate_memo.get(key)
                if v is None:  # gang_rate is pure: memoised per (job's) placements
                    if len(rate_memo) > 200_000:
                        rate_memo.clear()
                    v = rate_memo[key] = gang_rate(jobs[i], [P[p] for p in copy], sensitive,
                                                           rule)
                r += v  # the validator's rule per (job, copy), copies adding up
                for p in copy:
                    h += amount[p]
                ids += copy
                p_gang += [e] * len(copy)
            rate.append(r)
            held.append(h)
        self.g_ix = np.fromiter(gangs, dtype=np.int64, count=len(gangs))
        self.g_rate = np.array(rate, dtype=float)
        self.held = np.array(held, dtype=float)
        self.ids = ids
        self.gang_of = p_gang
        self.placed = tuple(P[p] for p in ids)
        self.p_gang = np.array(p_gang, dtype=np.int64)
        self.p_job = np.array([checker.job[p] for p in ids], dtype=np.int64)
        self.p_type = np.array([checker.type_index[p] for p in ids], dtype=np.int64)
        self.p_gpus = np.array([checker.gpus[p] for p in ids], dtype=float)
        self.p_w = np.array([w_list[i] for i in self.p_job.tolist()], dtype=float)
        self._set: set | None = None

    def repeats(self, placements: list) -> bool:
        """Whether ``placements`` is this decision again, perhaps in another order.

        Only placements in canonical form (a :class:`Placement` of ``int`` counts and
        ``float`` amounts) count as the same, so that ``True`` or ``1.0`` GPUs are never
        taken for the ``1`` checked before; the checked gangs are a function of the set
        of placements (grouped by job, ordered within a gang), so the order does not
        matter, but a duplicate does (it would be merged).
        """
        old = self.placements
        if len(placements) != len(old):
            return False
        for p in placements:
            if not (type(p) is Placement and type(p[3]) is int and type(p[6]) is int
                    and type(p[4]) is float and type(p[5]) is float
                    and type(p[7]) is float):
                return False
        if placements == old:
            return True
        if self._set is None:
            self._set = set(old)
        new = set(placements)
        return len(new) == len(placements) and new == self._set

    def signatures(self) -> dict[int, tuple]:
        """Per job its placement ids, sorted: a change between epochs is a migration."""
        sig = {}
        for i, copies in self.gangs.items():
            if len(copies) == 1:
                ids = next(iter(copies.values()))
                sig[i] = (ids[0],) if len(ids) == 1 else tuple(sorted(ids))
            else:
                sig[i] = tuple(sorted(p for ids in copies.values() for p in ids))
        return sig


class _Segments:
    """Per placement id its open interval ``[start, end)``; intervals a placement stops
    holding are closed. An interval is extended when the placement is held again from
    the very instant it ended: an epoch can be as short as ``_EPS`` (an event-driven
    policy called again right after a tiny job completes), so a gap of that length
    is a real gap, in which another job may hold the GPUs."""

    def __init__(self) -> None:
        self.start: list[float | None] = []
        self.end: list[float | None] = []
        self.first: list[int] = []  # ids in the order their first interval opened
        self.closed: list[tuple[int, float, float]] = []

    def record(self, t: float, ids: list[int], gang_of: list[int], stops: list[float]) -> None:
        start, end = self.start, self.end
        grow = len(ids) and max(ids) - len(end) + 1
        if grow > 0:
            start += [None] * grow
            end += [None] * grow
        for p, e in zip(ids, gang_of):
            last = end[p]
            if last is not None and last == t:
                end[p] = stops[e]
                continue
            if last is None:
                self.first.append(p)
            else:
                self.closed.append((p, start[p], last))  # type: ignore[arg-type]
            start[p] = t
            end[p] = stops[e]

    def all(self) -> list[tuple[int, float, float]]:
        """Closed intervals, then the open ones (in the order they first opened)."""
        start, end = self.start, self.end
        return self.closed + [(p, start[p], end[p]) for p in self.first]  # type: ignore[misc]


def _covering_stop(t: float, fin: np.ndarray, rem: np.ndarray, rate: np.ndarray,
                   running: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """Finish instants of the gangs started at ``t``, as floats whose intervals credit
    the work.

    ``fin = t + rem / rate`` rounded to the nearest float can fall short of the exact
    instant; the validator then credits the interval ``rate * (fin - t)`` (``fin - t`` is
    exact in floats), which misses ``rem`` by up to ``rate * ulp(t) / 2``. For a job of
    tiny work running late in a simulation (1e-6 iterations at t = 1e5 s, where ulp(t)
    is 1.5e-11 s) that is a relative 1e-5 of its work, past the validator's 1e-6, and
    the run's own schedule would be rejected. Such an instant is moved up to the next
    float: the interval then covers ``rem`` within rounding (``slack`` is the work left
    that counts as done, a relative :data:`_DONE`).
    """
    short = running & (np.where(running, fin - t, 0.0) * rate < rem - slack)
    if short.any():
        fin = np.where(short, np.nextafter(fin, math.inf), fin)
    return fin


def _completion(stop: float, kappa: float) -> float:
    """The completion instant of a job whose work is done at ``stop``, ``kappa`` seconds
    of consolidation later, rounded so that ``completion - kappa`` (the instant up to
    which the validator credits work) is not before ``stop``."""
    c = stop + kappa
    while c - kappa < stop:
        c = math.nextafter(c, math.inf)
    return c


def simulate(instance: Instance, policy: Policy, *, seed: int = 0, progress: bool | None = None,
             max_time: float | None = None, until: Collection[str] | None = None,
             on_epoch: Callable[[float, list[Placement]], None] | None = None) -> Result:
    """Run ``policy`` online over ``instance``; return a validated :class:`Result`.

    Parameters
    ----------
    instance : Instance
        Cluster, jobs (arrival, gang size, work, per-worker throughputs) and the round
        length ``instance.slot``.
    policy : Policy
        Any object satisfying :class:`~optsched.sim.policy.Policy`.
    seed : int
        Seeds ``ClusterView.rng`` (the only randomness a policy may use).
    progress : bool or None
        Show a progress bar of jobs completed (:class:`optsched.progressbar.ProgressBar`:
        ``None`` only when stderr is a terminal, ``True`` always).
    max_time : float or None
        Stop at this simulated time; unfinished jobs are left out of ``completion``.
    until : collection of str, optional
        Job ids: stop at the end of the epoch in which the last of them completes (the
        measurement window of a job stream; the other jobs' records stop there too, as
        with ``max_time``). The jobs' own completions are those of the full run, since an
        epoch depends only on what happened before it.
    on_epoch : callable, optional
        ``on_epoch(t, placements)`` after each checked decision (for tests/tracing).

    Returns
    -------
    Result
        ``status`` FEASIBLE, ``objective`` = mean JCT of completed jobs, ``schedule``
        (merged intervals), ``metrics``; ``extra`` holds per-job preemptions and
        migrations, epoch/policy-call counts, policy and simulation wall seconds, and the
        queueing the run measured: ``queued_jobs`` (jobs that were visible to the policy
        in some epoch and got no GPU in it), ``queue_seconds`` (the job-seconds they
        spent so) and ``max_queue`` (the most such jobs in one epoch). ``queued_jobs ==
        0`` means every job ran from the first decision that saw it to its completion:
        policies that differ only in whom they run first cannot differ on the instance
        (:func:`no_queue_note`).
    """
    check_policy(policy)  # a missing, mistyped or misspelt member fails here
    if max_time is not None and not (max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    waiting: set[int] | None = None
    if until is not None:
        if isinstance(until, str):
            raise InvalidOption("until", until, "must be a collection of job ids, not one id")
        known = instance.job_index
        missing = [k for k in until if k not in known]
        if missing:
            raise InvalidOption("until", missing[0], f"not a job of {instance.name!r}")
        waiting = {known[k] for k in until}
        if not waiting:
            raise InvalidOption("until", list(until), "must name at least one job")
    wall0 = _time.perf_counter()
    check = getattr(policy, "check", None)
    if callable(check):  # the policy's own model may exclude the instance
        check(instance)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    pname = str(policy.name)
    needs_work = bool(policy.needs_work)
    event_driven = bool(policy.event_driven)
    periodic = bool(getattr(policy, "periodic", True))
    if not periodic and not event_driven:
        raise InvalidOption("policy.periodic", False, "a policy that is not event-driven is "
                            "called only at round boundaries: periodic=False needs "
                            "event_driven=True")
    caps = Caps(sharing=bool(getattr(policy, "sharing", False)),
                 forking=bool(getattr(policy, "forking", False)),
                 resource_sensitive=bool(getattr(policy, "resource_sensitive", False)),
                 progress_rule=check_progress_rule(getattr(policy, "progress_rule", "gang"),
                                                   "policy.progress_rule"))
    kappa = float(getattr(policy, "consolidation", 0.0) or 0.0)
    if not (math.isfinite(kappa) and kappa >= 0):
        raise InvalidOption("policy.consolidation", kappa, "must be a finite number >= 0")
    horizon = getattr(policy, "horizon", None)
    if not callable(horizon):
        horizon = None
    rng = np.random.default_rng(seed)

    cl = instance.cluster
    types = cl.gpu_types
    tindex = {t: k for k, t in enumerate(types)}
    node_cap = {(n.name, t): int(c) for n in cl.nodes for t, c in n.gpus.items() if c > 0}
    node_res = {n.name: (float(n.cpus), float(n.memory)) for n in cl.nodes}
    jobs = instance.jobs
    n = len(jobs)
    idx_of = instance.job_index
    T = instance.throughput_matrix
    W = instance.workers
    slot = float(instance.slot)

    arrival = instance.arrivals
    order = np.lexsort((np.arange(n), arrival)) if n else np.zeros(0, dtype=np.int64)
    work = instance.work.astype(float)
    remaining = work.copy()
    weights = np.array([j.weight for j in jobs], dtype=float)
    job_ids = [j.id for j in jobs]
    tmaps = [j.throughput for j in jobs]
    sens = [j.sensitivity for j in jobs]
    gmem = [j.memory for j in jobs]
    ushare = [j.compute_share for j in jobs]
    users = [j.user for j in jobs]
    w_list = W.tolist()
    executed = np.zeros(n)
    attained = np.zeros(n)
    on_type = np.zeros((n, len(types)))
    rounds = np.zeros(n, dtype=np.int64)
    preempt = np.zeros(n, dtype=np.int64)
    migrate = np.zeros(n, dtype=np.int64)
    completion: dict[str, float] = {}
    is_done = [False] * n
    active: list[int] = []  # arrived, unfinished (arrival order)
    ptr = 0
    prev: tuple[Placement, ...] = ()
    prev_sig: dict[int, tuple] = {}
    segments = _Segments()
    stats = SimStats()
    rate_memo: dict[tuple, float] = {}
    checker = DecisionChecker(pname, idx_of, node_cap, node_res, tindex, w_list, T, caps)
    # what the view shows of the visible jobs that changes only when they do
    fixed: dict[str, Any] = {}
    changed = True
    last: _Epoch | None = None  # the previous epoch's decision, while it may be reused

    # queueing: jobs visible to the policy but given no GPU in an epoch
    waited = np.zeros(n, dtype=bool)
    queue_seconds = 0.0  # job-seconds spent waiting
    max_queue = 0
    q_n, q_t0 = 0, 0.0  # waiting jobs of the last epoch, and its start
    q_seen: tuple[Any, Any] = (None, None)  # (job set, decision) last marked

    t = float(arrival[order[0]]) if n else 0.0
    with ProgressBar(n, f"simulate {pname}", progress,
                     span=(t, min(float(arrival.max(initial=t)), max_time or math.inf))) as bar:
        while True:
            if q_n:  # the last epoch's waiting jobs waited until now
                queue_seconds += q_n * (t - q_t0)
                q_n = 0
            while ptr < n and arrival[order[ptr]] <= t + _EPS:
                active.append(int(order[ptr]))
                ptr += 1
                changed = True
            if max_time is not None and t >= max_time - _EPS:
                break
            next_arrival = float(arrival[order[ptr]]) if ptr < n else math.inf
            if not active:
                if ptr >= n:
                    break
                t = next_arrival
                stats.idle_jumps += 1
                prev, prev_sig = (), {}
                last = None
                continue
            if changed:
                ix = np.fromiter(active, dtype=np.int64, count=len(active))
                fixed = dict(
                    ids=tuple(job_ids[i] for i in active), index=ix,
                    throughput_matrix=T[ix], workers=W[ix], arrivals=arrival[ix],
                    weights=weights[ix], throughput_maps=tuple(tmaps[i] for i in active),
                    work_=work[ix] if needs_work else None,
                    sensitivities=tuple(sens[i] for i in active),
                    gpu_memories=tuple(gmem[i] for i in active),
                    compute_shares=tuple(ushare[i] for i in active),
                    users=tuple(users[i] for i in active))
                for a in fixed.values():  # shared by the views until the job set changes
                    if isinstance(a, np.ndarray):
                        a.flags.writeable = False
                active_set = set(active)
                changed = False
            ix = fixed["index"]
            view = ClusterView(
                time=t, slot=slot, cluster=cl, attained=attained[ix], executed=executed[ix],
                time_on_types=on_type[ix], rounds_received=rounds[ix],
                preemptions=preempt[ix], previous=prev, needs_work=needs_work, rng=rng,
                policy_name=pname, remaining_=remaining[ix] if needs_work else None, **fixed)
            c0 = _time.perf_counter()
            placements = list(policy.allocate(view))
            wake = horizon() if horizon is not None else None
            stats.policy_seconds += _time.perf_counter() - c0
            stats.policy_calls += 1
            if last is not None and last.repeats(placements):
                # the decision the previous epoch ran, and none of its jobs finished
                # since: checked then, and nothing the check reads has changed
                ep = last
            else:
                ep = _Epoch(placements, checker.check(t, placements, active_set), checker,
                            jobs, w_list, rate_memo, caps.resource_sensitive,
                            caps.progress_rule)
            if on_epoch is not None:
                on_epoch(t, placements)
            gangs, g_ix, g_rate = ep.gangs, ep.g_ix, ep.g_rate
            if len(ix) > len(gangs):
                q_n, q_t0 = len(ix) - len(gangs), t
                max_queue = max(max_queue, q_n)
                if q_seen[0] is not fixed or q_seen[1] is not ep:
                    waited[ix[~np.isin(ix, g_ix)]] = True
                    q_seen = (fixed, ep)
            g_rem = remaining[g_ix]
            running = g_rate > 0
            with np.errstate(divide="ignore", invalid="ignore"):
                g_fin = np.where(running, t + g_rem / np.where(running, g_rate, 1.0), math.inf)
            g_fin = _covering_stop(t, g_fin, g_rem, g_rate, running, _DONE * work[g_ix])
            # epoch end
            end = t + slot if periodic else math.inf
            if event_driven:
                end = min(end, next_arrival)
                if running.any():
                    end = min(end, float(g_fin[running].min()))
            if wake is not None:
                end = min(end, float(wake))
            if event_driven or wake is not None:
                end = max(end, t + _EPS)
            if max_time is not None:
                end = min(end, max_time)
            # preemptions / migrations (none when the decision is the previous one)
            if ep is not last:
                sig = ep.signatures()
                for i, s in prev_sig.items():
                    if is_done[i]:
                        continue
                    if i not in sig:
                        preempt[i] += 1
                    elif sig[i] != s:
                        migrate[i] += 1
                prev_sig = sig
            # a job whose work runs out inside the epoch completes at that instant; one
            # short of it only by float rounding (a relative 1e-9 of its work, far below
            # the validator's 1e-6) completes at the epoch end, where its GPUs are handed
            # on: its record never runs past the epoch
            g_left = g_rem - g_rate * (end - t)
            fin_mask = (g_fin <= end) | (g_left <= _DONE * work[g_ix])
            g_stop = np.where(fin_mask, np.minimum(g_fin, end), end)
            remaining[g_ix] = np.where(fin_mask, 0.0, g_left)
            g_dt = g_stop - t
            executed[g_ix] += g_dt
            rounds[g_ix] += 1
            attained[g_ix] += ep.held * g_dt
            if len(ep.p_gang):  # in placement order, as the per-placement additions were
                np.add.at(on_type, (ep.p_job, ep.p_type), g_dt[ep.p_gang] * ep.p_gpus / ep.p_w)
            segments.record(t, ep.ids, ep.gang_of, g_stop.tolist())
            finished = g_ix[fin_mask].tolist()
            for e in np.flatnonzero(fin_mask).tolist():
                completion[job_ids[g_ix[e]]] = _completion(float(g_stop[e]), kappa)
            for i in finished:
                is_done[i] = True
            stats.epochs += 1
            if waiting is not None and finished:
                waiting.difference_update(finished)
                if not waiting:
                    queue_seconds += q_n * (end - q_t0)
                    q_n = 0
                    break
            last = ep
            if finished:
                done = set(finished)
                active = [i for i in active if i not in done]
                changed = True
                bar.advance(len(finished), now=end)
                P = checker.placement
                prev = tuple(P[p] for i, copies in gangs.items() if i not in done
                             for ids in copies.values() for p in ids)
                last = None
            else:
                prev = ep.placed
            if not gangs:
                # nothing runs: nothing changes until the next arrival
                if ptr >= n and wake is None:
                    raise PolicyViolation(pname, t, f"allocated nothing to {len(active)} waiting "
                                          "job(s) on an idle cluster with no future arrival "
                                          "(the simulation would never end)")
                if wake is not None and wake < next_arrival:
                    # nothing runs until the policy's own next event
                    t = max(float(wake), t + _EPS)
                    continue
                stats.idle_jumps += 1
                t = max(end, next_arrival) if not event_driven else next_arrival
                prev, prev_sig = (), {}
                last = None
                continue
            t = end
    P = checker.placement
    allocs = [Allocation(k[0], s, e, k[1], k[2], k[3], k[4], k[5], k[6], k[7])
              for k, s, e in ((P[p], s, e) for p, s, e in segments.all()) if e > s]
    allocs.sort(key=lambda a: (a.start, a.job, a.node, a.gpu_type, a.copy))
    schedule = Schedule(tuple(allocs), completion, sharing=caps.sharing, forking=caps.forking,
                        consolidation=kappa, resource_sensitive=caps.resource_sensitive,
                        progress_rule=caps.progress_rule)
    wall = _time.perf_counter() - wall0
    extra: dict[str, Any] = {
        "policy": pname, "seed": seed, "event_driven": event_driven, "needs_work": needs_work,
        "epochs": stats.epochs, "policy_calls": stats.policy_calls,
        "policy_seconds": stats.policy_seconds, "idle_jumps": stats.idle_jumps,
        "simulation_seconds": wall, "total_gpus": cl.total_gpus,
        "gpus_per_type": cl.gpus_per_type, "instance": instance.name,
        "preemptions": {jobs[i].id: int(preempt[i]) for i in range(n)},
        "migrations": {jobs[i].id: int(migrate[i]) for i in range(n)},
        "total_preemptions": int(preempt.sum()), "total_migrations": int(migrate.sum()),
        "unfinished": [j.id for i, j in enumerate(jobs) if not is_done[i]],
        "max_time": max_time, "until_met": None if waiting is None else not waiting,
        "queued_jobs": int(waited.sum()), "queue_seconds": queue_seconds,
        "max_queue": max_queue,
    }
    extra.update(getattr(policy, "stats", lambda: {})())
    res = finalize(instance, schedule, status=Status.FEASIBLE, model="simulate", method=pname,
                   solve_seconds=wall, extra=extra,
                   message=f"simulated {len(completion)}/{n} jobs with policy {pname!r}")
    mean = res.metrics.mean_jct if res.metrics is not None else None
    return res.replace(objective=mean)
