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
  :math:`g \min_k T_{jk}`, or ``"additive"`` gangs at :math:`\sum_a g_a T_{jk_a}`; a
  placement naming a ``partner``, under a policy that declares ``colocation``, runs at
  the instance's co-located rate, :mod:`optsched.core.colocation`). With
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
  A decision is checked through what changed since the one checked before
  (:class:`~optsched.sim.decisions.DecisionChecker`); any violation, and any case that
  path does not decide exactly, is checked again in full, in the decision's order, so
  the error raised is that of the first rule broken.
* The schedule (back-to-back identical allocations merged, declaring the policy's
  ``sharing``, ``forking``, ``consolidation`` and ``resource_sensitive``) goes through
  :func:`optsched.core.result.finalize` (independent validator + metrics).

Determinism: the only randomness is ``ClusterView.rng``, a ``numpy`` generator seeded
with ``seed``; iteration orders are fixed (arrival, then instance order).
"""

from __future__ import annotations

import math
import operator
import time as _time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from itertools import chain
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
from optsched.sim.rows import PROFILE_COLUMNS, VisibleRows

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


class _Gang:
    """What executing one job's gang takes, for as long as the checker hands back the
    same gang (the same ``copies`` object: its placements did not change)."""

    __slots__ = ("copies", "rate", "held", "ids", "types", "gpus", "sig")

    def __init__(self, copies: dict[int, list[int]], checker: DecisionChecker,
                 job: Any, rate_memo: dict[tuple, float], sensitive: bool, rule: str,
                 pair_rate: Any = None) -> None:
        P, amount = checker.placement, checker.amount
        r = h = 0.0
        ids: list[int] = []
        for copy in copies.values():
            key = tuple(copy)
            v = rate_memo.get(key)
            if v is None:  # gang_rate is pure: memoised per (job's) placements
                if len(rate_memo) > 200_000:
                    rate_memo.clear()
                v = rate_memo[key] = gang_rate(job, [P[p] for p in copy], sensitive, rule,
                                               pair_rate)
            r += v  # the validator's rule per (job, copy), copies adding up
            for p in copy:
                h += amount[p]
            ids += copy
        self.copies, self.rate, self.held, self.ids = copies, r, h, ids
        self.types = [checker.type_index[p] for p in ids]
        self.gpus = [checker.gpus[p] for p in ids]
        #: its placement ids, sorted: a change between epochs is a migration
        self.sig = (ids[0],) if len(ids) == 1 else tuple(sorted(ids))


class _Epoch:
    """One checked decision and what executing it takes: per gang (in job-index order)
    its job, rate, GPUs held and placement count; per placement (by
    :class:`DecisionChecker` id, gang by gang) its gang, job, type and GPU count; per job
    its :class:`_Gang` (``book``). Kept while the policy returns the same decision, which
    is then neither checked nor grouped again.

    Built in full (:meth:`build`: :math:`O(P)` Python steps for :math:`P` placements), or
    from the epoch of the decision checked just before, when the checker says which jobs'
    gangs changed (:meth:`derive`: Python steps for the changed gangs only, the rest
    copied by numpy indexing; the same arrays, value for value)."""

    g_ix: np.ndarray
    g_rate: np.ndarray
    held: np.ndarray
    counts: np.ndarray
    p_ids: np.ndarray
    p_type: np.ndarray
    p_gpus: np.ndarray
    p_w: np.ndarray  # per placement its job's gang size (set by the run)

    def __init__(self, placements: list, gangs: dict[int, dict[int, list[int]]],
                 book: dict[int, _Gang], serial: int, changed_jobs: set[int] | None) -> None:
        self.placements, self.gangs, self.book = placements, gangs, book
        #: the check that made the epoch, and the jobs whose gangs it found changed
        self.serial, self.changed_jobs = serial, changed_jobs
        self._set: set | None = None
        self._objects: set[int] | None = None
        self._canon: bool | None = None
        self._starts: np.ndarray | None = None

    @classmethod
    def build(cls, placements: list, gangs: dict[int, dict[int, list[int]]],
              checker: DecisionChecker, make: Callable[[int, dict], _Gang],
              old: dict[int, _Gang]) -> _Epoch:
        """The epoch of checked ``gangs``, each job's :class:`_Gang` taken from ``old``
        when its gang is the same object, else made by ``make(i, copies)``."""
        book: dict[int, _Gang] = {}
        parts = []
        for i, copies in gangs.items():
            g = old.get(i)
            if g is None or g.copies is not copies:
                g = make(i, copies)
            book[i] = g
            parts.append(g)
        ep = cls(placements, gangs, book, checker.serial, checker.changed_jobs)
        G = len(parts)
        ep.g_ix = np.fromiter(gangs, dtype=np.int64, count=G)
        ep.g_rate = np.array([g.rate for g in parts], dtype=float)
        ep.held = np.array([g.held for g in parts], dtype=float)
        ep.counts = np.array([len(g.ids) for g in parts], dtype=np.int64)
        ep.p_ids = np.array(list(chain.from_iterable([g.ids for g in parts])), dtype=np.int64)
        ep.p_type = np.array(list(chain.from_iterable([g.types for g in parts])),
                             dtype=np.int64)
        ep.p_gpus = np.array(list(chain.from_iterable([g.gpus for g in parts])), dtype=float)
        return ep._finish(checker)

    @classmethod
    def derive(cls, base: _Epoch, placements: list, gangs: dict[int, dict[int, list[int]]],
               checker: DecisionChecker, make: Callable[[int, dict], _Gang]) -> _Epoch:
        """The epoch of checked ``gangs``, which differ from those of ``base`` (the epoch
        of the decision checked just before) only for ``checker.changed_jobs``."""
        changed = checker.changed_jobs
        assert changed is not None
        book = dict(base.book)
        fresh_jobs = []
        for i in changed:
            copies = gangs.get(i)
            if copies is None:
                book.pop(i, None)
            else:
                book[i] = make(i, copies)
                fresh_jobs.append(i)
        ep = cls(placements, gangs, book, checker.serial, changed)
        G = len(gangs)
        g_ix = ep.g_ix = np.fromiter(gangs, dtype=np.int64, count=G)
        # every fresh job has a gang, and g_ix is increasing: its position is found
        fresh = np.zeros(G, dtype=bool)
        if fresh_jobs:
            fresh[np.searchsorted(g_ix, np.array(fresh_jobs, dtype=np.int64))] = True
        kept = ~fresh
        pos = np.searchsorted(base.g_ix, g_ix[kept])  # an unchanged gang was in base
        fg = [book[i] for i in g_ix[fresh].tolist()]
        ep.g_rate = np.empty(G)
        ep.g_rate[kept] = base.g_rate[pos]
        ep.g_rate[fresh] = [g.rate for g in fg]
        ep.held = np.empty(G)
        ep.held[kept] = base.held[pos]
        ep.held[fresh] = [g.held for g in fg]
        counts = ep.counts = np.empty(G, dtype=np.int64)
        counts[kept] = base.counts[pos]
        counts[fresh] = [len(g.ids) for g in fg]
        # per placement: the kept gangs' runs of base's arrays, the fresh ones' appended
        f_counts = counts[fresh]
        src = np.empty(G, dtype=np.int64)
        src[kept] = base.starts()[pos]
        src[fresh] = len(base.p_ids) + np.cumsum(f_counts) - f_counts
        starts = ep._starts = np.cumsum(counts) - counts
        idx = np.repeat(src - starts, counts) + np.arange(int(counts.sum()), dtype=np.int64)
        for name, dtype, key in (("p_ids", np.int64, "ids"), ("p_type", np.int64, "types"),
                                 ("p_gpus", float, "gpus")):
            extra = np.array(list(chain.from_iterable([getattr(g, key) for g in fg])),
                             dtype=dtype)
            setattr(ep, name, np.concatenate([getattr(base, name), extra])[idx])
        return ep._finish(checker)

    def starts(self) -> np.ndarray:
        """Per gang the position of its first placement in the per-placement arrays."""
        if self._starts is None:
            self._starts = np.cumsum(self.counts) - self.counts
        return self._starts

    def _finish(self, checker: DecisionChecker) -> _Epoch:
        """The arrays that follow from the per-gang and per-placement ones."""
        G = len(self.g_ix)
        self.p_gang = np.repeat(np.arange(G, dtype=np.int64), self.counts)
        self.p_job = np.repeat(self.g_ix, self.counts)
        self.placed = tuple(map(checker.placement.__getitem__, self.p_ids.tolist()))
        return self

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
        if all(map(operator.is_, placements, self.placed)):
            return True  # the checked placements themselves, in their order
        if self._objects is None:
            self._objects = set(map(id, old))  # alive with ``old``: ids are not reused
        same = set(map(id, placements))
        if len(same) == len(placements) and same == self._objects:
            # the very objects of this decision in another order, none twice: as
            # canonical as they were
            if self._canon is None:
                self._canon = all(map(_canonical, old))
            return self._canon
        if placements != old:  # the cheaper tests that say no come first
            if self._set is None:
                self._set = set(old)
            new = set(placements)
            if len(new) != len(placements) or new != self._set:
                return False
        return all(map(_canonical, placements))


def _canonical(p: Any) -> bool:
    """Whether ``p`` is a :class:`Placement` of ``int`` counts and ``float`` amounts."""
    return type(p) is Placement and type(p[3]) is int and type(p[6]) is int \
        and type(p[4]) is float and type(p[5]) is float and type(p[7]) is float


class _Segments:
    """Per placement id its open interval ``[start, end)``; intervals a placement stops
    holding are closed. An interval is extended when the placement is held again from
    the very instant it ended: an epoch can be as short as ``_EPS`` (an event-driven
    policy called again right after a tiny job completes), so a gap of that length
    is a real gap, in which another job may hold the GPUs. Kept in numpy arrays by id
    (``nan``: never held), so that an epoch costs numpy operations, not a Python step
    per placement."""

    def __init__(self) -> None:
        self.start = np.full(64, np.nan)
        self.end = np.full(64, np.nan)
        self.first: list[np.ndarray] = []  # ids in the order their first interval opened
        self.closed: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def record(self, t: float, ids: np.ndarray, stops: np.ndarray) -> None:
        """The placements ``ids`` (distinct) held from ``t`` to ``stops``."""
        if len(ids) == 0:
            return
        top = int(ids.max()) + 1
        if top > len(self.end):
            grow = np.full(max(top, 2 * len(self.end)) - len(self.end), np.nan)
            self.start = np.concatenate([self.start, grow])
            self.end = np.concatenate([self.end, grow])
        start, end = self.start, self.end
        last = end[ids]
        opens = last != t  # nan (never held) included
        if opens.any():
            never = np.isnan(last)
            reopen = opens & ~never
            if reopen.any():
                r = ids[reopen]
                self.closed.append((r, start[r], last[reopen]))
            if never.any():
                self.first.append(ids[never])
            start[ids[opens]] = t
        end[ids] = stops

    def all(self) -> list[tuple[int, float, float]]:
        """Closed intervals, then the open ones (in the order they first opened)."""
        out: list[tuple[int, float, float]] = []
        for ids, s, e in self.closed:
            out += zip(ids.tolist(), s.tolist(), e.tolist())
        if self.first:
            ids = np.concatenate(self.first)
            out += zip(ids.tolist(), self.start[ids].tolist(), self.end[ids].tolist())
        return out


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

    Notes
    -----
    Besides the policy's call, an epoch costs Python steps in the decision's placements
    (one hash look-up each), the rule checks and grouping of the placements and jobs that
    changed since the decision checked before (:class:`DecisionChecker`), and numpy
    steps over the running gangs. The view's per-job rows are kept up to date by what
    changed (:class:`~optsched.sim.rows.VisibleRows`: arrivals appended, completed jobs
    removed, the rows of the jobs that ran or were preempted read again), so the jobs
    that only wait cost one ``memcpy``-like copy of each view array per epoch (and one
    tuple of ids per arrival or completion), no Python step each.
    """
    check_policy(policy)  # a missing, mistyped or misspelt member fails here
    if max_time is not None and not (max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    waiting = _until_jobs(instance, until)
    wall0 = _time.perf_counter()
    check = getattr(policy, "check", None)
    if callable(check):  # the policy's own model may exclude the instance
        check(instance)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    run = _Run(instance, policy, _declared(policy), seed, max_time, waiting, on_epoch)
    # the bar's ETA: simulated time against the span from first to last arrival
    span = (run.t, min(float(run.arrival.max(initial=run.t)), max_time or math.inf))
    with ProgressBar(run.n, f"simulate {run.decl.name}", progress, span=span) as bar:
        while run.step(bar):
            pass
    return run.result(_time.perf_counter() - wall0)


def _until_jobs(instance: Instance, until: Collection[str] | None) -> set[int] | None:
    """The indices of the ``until`` jobs (``None`` without ``until``), checked."""
    if until is None:
        return None
    if isinstance(until, str):
        raise InvalidOption("until", until, "must be a collection of job ids, not one id")
    known = instance.job_index
    missing = [k for k in until if k not in known]
    if missing:
        raise InvalidOption("until", missing[0], f"not a job of {instance.name!r}")
    waiting = {known[k] for k in until}
    if not waiting:
        raise InvalidOption("until", list(until), "must name at least one job")
    return waiting


@dataclass(frozen=True)
class _Declared:
    """What a policy declared about itself, read and checked once before a run."""

    name: str
    needs_work: bool
    event_driven: bool
    periodic: bool
    caps: Caps
    kappa: float
    horizon: Callable[[], float | None] | None


def _declared(policy: Policy) -> _Declared:
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
                                                  "policy.progress_rule"),
                colocation=bool(getattr(policy, "colocation", False)))
    kappa = float(getattr(policy, "consolidation", 0.0) or 0.0)
    if not (math.isfinite(kappa) and kappa >= 0):
        raise InvalidOption("policy.consolidation", kappa, "must be a finite number >= 0")
    horizon = getattr(policy, "horizon", None)
    return _Declared(str(policy.name), bool(policy.needs_work), event_driven, periodic, caps,
                     kappa, horizon if callable(horizon) else None)


class _Queue:
    """The queueing a run measures: jobs visible to the policy but given no GPU."""

    def __init__(self, n: int) -> None:
        self.waited = np.zeros(n, dtype=bool)  # per job: did it ever wait
        self._runs = np.zeros(n, dtype=bool)  # scratch: the jobs of one epoch's gangs
        self.seconds = 0.0  # job-seconds spent waiting
        self.most = 0
        self.n, self.t0 = 0, 0.0  # waiting jobs of the last epoch, and its start
        #: the visible jobs that may never have waited: those arrived since the last
        #: epoch noted and those that ran in it (every other visible job waited then)
        self._fresh: list[np.ndarray] = []
        self._ran = np.zeros(0, dtype=np.int64)

    def close(self, t: float) -> None:
        """The last epoch's waiting jobs waited until ``t``."""
        if self.n:
            self.seconds += self.n * (t - self.t0)
            self.n = 0

    def arrived(self, jobs: np.ndarray) -> None:
        """``jobs`` became visible."""
        self._fresh.append(jobs)

    def note(self, t: float, visible: int, done: np.ndarray, ep: _Epoch) -> None:
        """Epoch ``ep`` starting at ``t`` runs some of the ``visible`` jobs (``done``:
        per job whether it finished).

        A visible job that has not waited yet either arrived since the last epoch noted
        or ran in it (had it been visible and not run, it would have waited then), so
        only those are looked at: :math:`O(\text{arrivals} + \text{gangs})`."""
        if visible > len(ep.gangs):
            self.n, self.t0 = visible - len(ep.gangs), t
            self.most = max(self.most, self.n)
            cand = np.concatenate([self._ran, *self._fresh]) if self._fresh else self._ran
            cand = cand[~done[cand] & ~self.waited[cand]]
            if len(cand):
                runs = self._runs
                runs[ep.g_ix] = True
                self.waited[cand[~runs[cand]]] = True
                runs[ep.g_ix] = False
        # every visible job runs otherwise: none waits in this epoch
        self._fresh = []
        self._ran = ep.g_ix


class _Run:
    """The state of one simulation and its steps, in the order an epoch takes them:
    :meth:`_arrivals`, :meth:`_decide`, :meth:`_checked`, :meth:`_progress`,
    :meth:`_completions`, :meth:`_hand_on`; :meth:`result` builds the validated
    result."""

    def __init__(self, instance: Instance, policy: Policy, decl: _Declared, seed: int,
                 max_time: float | None, waiting: set[int] | None,
                 on_epoch: Callable[[float, list[Placement]], None] | None) -> None:
        self.instance, self.policy, self.decl = instance, policy, decl
        self.seed, self.max_time, self.waiting, self.on_epoch = seed, max_time, waiting, \
            on_epoch
        self.rng = np.random.default_rng(seed)
        cl = self.cluster = instance.cluster
        jobs = self.jobs = instance.jobs
        n = self.n = len(jobs)
        self.T, self.W, self.slot = instance.throughput_matrix, instance.workers, \
            float(instance.slot)
        arrival = self.arrival = instance.arrivals
        self.order = np.lexsort((np.arange(n), arrival)) if n else np.zeros(0, dtype=np.int64)
        self.work = instance.work.astype(float)
        self.remaining = self.work.copy()
        self.weights = np.array([j.weight for j in jobs], dtype=float)
        self.job_ids = [j.id for j in jobs]
        # what the view shows of each job, as lists by job index
        per_job: dict[str, list[Any]] = {
            "ids": self.job_ids, "throughput_maps": [j.throughput for j in jobs],
            "sensitivities": [j.sensitivity for j in jobs],
            "gpu_memories": [j.memory for j in jobs],
            "compute_shares": [j.compute_share for j in jobs], "users": [j.user for j in jobs]}
        # profile fields no job of the instance has: a view shows None for each
        for k in PROFILE_COLUMNS:
            if all(v is None for v in per_job[k]):
                del per_job[k]
        self.executed, self.attained = np.zeros(n), np.zeros(n)
        self.on_type = np.zeros((n, len(cl.gpu_types)))
        self.rounds = np.zeros(n, dtype=np.int64)
        self.preempt = np.zeros(n, dtype=np.int64)
        self.migrate = np.zeros(n, dtype=np.int64)
        self.completion: dict[str, float] = {}
        self.done_mask = np.zeros(n, dtype=bool)
        rank = np.empty(n, dtype=np.int64)
        rank[self.order] = np.arange(n, dtype=np.int64)
        fixed = dict(throughput_matrix=self.T, workers=self.W, arrivals=self.arrival,
                     weights=self.weights)
        live = dict(attained=self.attained, executed=self.executed,
                    time_on_types=self.on_type, rounds_received=self.rounds,
                    preemptions=self.preempt)
        if decl.needs_work:
            fixed["work_"] = self.work
            live["remaining_"] = self.remaining
        #: the visible (arrived, unfinished) jobs: their view rows, kept up to date
        self.visible = VisibleRows(rank, fixed, live, per_job)
        self.ptr = 0  # arrivals admitted, in arrival order
        self.prev: tuple[Placement, ...] = ()
        # the previous decision as arrays (its jobs, its GPUs per node and type) and
        # grouped by job (once a view asked for it), kept while it stays the same
        self.prev_jobs = np.zeros(0, dtype=np.int64)
        self.prev_ids = self.prev_jobs  # the checker's ids of the placements in prev
        self.prev_held = np.zeros(cl.capacity.shape, dtype=np.int64)
        self.prev_held.flags.writeable = False
        self.prev_mask = np.zeros(n, dtype=bool)
        self._prev_grouping: tuple[tuple, Mapping[str, tuple[Placement, ...]]] | None = None
        self._pid_node = np.zeros(0, dtype=np.int64)  # node index per placement id
        self.prev_book: dict[int, _Gang] = {}  # the gangs that ran in the last epoch
        self.prev_serial = -1  # the check whose decision prev_book holds
        self.built: _Epoch | None = None  # the last epoch built (of the last check)
        self.segments = _Segments()
        self.stats = SimStats()
        self.queue = _Queue(n)
        self.rate_memo: dict[tuple, float] = {}
        self.checker = DecisionChecker.for_instance(decl.name, instance, decl.caps)
        self.last: _Epoch | None = None  # the previous epoch's decision, while reusable
        self.gone: list[int] = []  # jobs finished since the last decision checked
        self.t = float(arrival[self.order[0]]) if n else 0.0

    # ------------------------------------------------------------------ one epoch
    def step(self, bar: ProgressBar) -> bool:
        """Run one decision epoch (or one jump over idle time); ``False`` when the run
        is over."""
        self.queue.close(self.t)
        self._arrivals()
        if self.max_time is not None and self.t >= self.max_time - _EPS:
            return False
        next_arrival = float(self.arrival[self.order[self.ptr]]) if self.ptr < self.n \
            else math.inf
        if not len(self.visible):
            if self.ptr >= self.n:
                return False
            self._idle(next_arrival)
            return True
        placements, wake = self._decide()
        ep = self._checked(placements)
        if self.on_epoch is not None:
            self.on_epoch(self.t, placements)
        self.queue.note(self.t, len(self.visible), self.done_mask, ep)
        g_rem = self.remaining[ep.g_ix]
        g_fin = self._finish_times(ep, g_rem)
        end = self._epoch_end(ep, g_fin, next_arrival, wake)
        if ep is not self.last:  # none when the decision is the previous one
            self._count_moves(ep)
        fin_mask, g_stop = self._progress(ep, g_rem, g_fin, end)
        finished = self._completions(ep, fin_mask, g_stop)
        self.stats.epochs += 1
        if self.waiting is not None and finished:
            self.waiting.difference_update(finished)
            if not self.waiting:
                self.queue.close(end)
                return False
        self._hand_on(ep, finished, bar, end)
        if not ep.gangs:
            self._nothing_runs(end, next_arrival, wake)
            return True
        self.t = end
        return True

    def _arrivals(self) -> None:
        """Admit the jobs arrived by now (in arrival, then instance order)."""
        arrival, order, n, t = self.arrival, self.order, self.n, self.t
        first = self.ptr
        while self.ptr < n and arrival[order[self.ptr]] <= t + _EPS:
            self.ptr += 1
        if self.ptr > first:
            new = order[first:self.ptr]
            self.visible.admit(new)
            self.queue.arrived(new)

    def _idle(self, next_arrival: float) -> None:
        """Nothing is visible: jump to the next arrival (a new round grid)."""
        self.t = next_arrival
        self.stats.idle_jumps += 1
        self._set_prev(None)
        self.prev_book = {}
        self.last = None

    def _decide(self) -> tuple[list, float | None]:
        """The policy's decision at ``t`` and its ``horizon()``."""
        decl, rows = self.decl, self.visible
        view = ClusterView(
            time=self.t, slot=self.slot, cluster=self.cluster,
            previous=self.prev, previous_grouped=self._grouped_prev(),
            previous_jobs=self.prev_jobs, previous_held=self.prev_held,
            previous_mask=self.prev_mask,
            needs_work=decl.needs_work, rng=self.rng, policy_name=decl.name,
            pair_rates=self.instance.colocated_rate
            if self.instance.colocation is not None else None,
            **rows.shown(), **rows.live())
        c0 = _time.perf_counter()
        placements = list(self.policy.allocate(view))
        if "previous_by_job" in view.__dict__ and self._grouped_prev() is None:
            self._prev_grouping = (self.prev, view.__dict__["previous_by_job"])
        wake = decl.horizon() if decl.horizon is not None else None
        self.stats.policy_seconds += _time.perf_counter() - c0
        self.stats.policy_calls += 1
        return placements, wake

    def _grouped_prev(self) -> Mapping[str, tuple[Placement, ...]] | None:
        """The previous decision grouped by job, if a view grouped it since it changed."""
        memo = self._prev_grouping
        return memo[1] if memo is not None and memo[0] is self.prev else None

    def _set_prev(self, ep: _Epoch | None, finished: bool = False) -> None:
        """The previous decision: ``ep``'s placements (``finished``: those of the jobs
        that have not finished since it started), or none."""
        held = np.zeros(self.cluster.capacity.shape, dtype=np.int64)
        if ep is None or not len(ep.p_ids):
            self.prev, self.prev_jobs = (), np.zeros(0, dtype=np.int64)
            self.prev_ids = self.prev_jobs
        else:
            p_ids, p_type, p_gpus = ep.p_ids, ep.p_type, ep.p_gpus
            if finished:
                # the epoch's jobs were unfinished when it started: done now means
                # finished in it
                keep = ~self.done_mask[ep.p_job]
                p_ids, p_type, p_gpus = p_ids[keep], p_type[keep], p_gpus[keep]
                self.prev = tuple(map(self.checker.placement.__getitem__, p_ids.tolist()))
            else:
                self.prev = ep.placed
            self.prev_ids = p_ids
            # an epoch's gangs come one per job, in increasing job index, each with at
            # least one placement: its jobs are g_ix (those kept, when some finished)
            jobs = ep.g_ix[~self.done_mask[ep.g_ix]] if finished else ep.g_ix
            jobs.flags.writeable = False  # a view shows it (g_ix itself, when unchanged)
            self.prev_jobs = jobs
            # GPU counts are whole numbers, so a float sum is exact in any order
            shape = self.cluster.capacity.shape  # (nodes, types)
            held = np.bincount(self._node_of(p_ids) * shape[1] + p_type, weights=p_gpus,
                               minlength=held.size).astype(np.int64).reshape(shape)
        held.flags.writeable = False
        self.prev_held = held
        # a new mask each time: a view keeps the one it was given
        mask = np.zeros(self.n, dtype=bool)
        mask[self.prev_jobs] = True
        mask.flags.writeable = False
        self.prev_mask = mask

    def _node_of(self, p_ids: np.ndarray) -> np.ndarray:
        """Node index of each placement id (the table grows with the checker's ids)."""
        known = len(self._pid_node)
        P = self.checker.placement
        if len(P) > known:
            node_index = self.cluster.node_index
            more = np.fromiter((node_index(P[q].node) for q in range(known, len(P))),
                               dtype=np.int64, count=len(P) - known)
            self._pid_node = np.concatenate([self._pid_node, more])
        return self._pid_node[p_ids]

    def _checked(self, placements: list) -> _Epoch:
        """The decision checked and grouped, or the previous epoch's when it repeats."""
        last = self.last
        if last is not None and last.repeats(placements):
            # the decision the previous epoch ran, and none of its jobs finished since:
            # checked then, and nothing the check reads has changed
            return last
        checker, base = self.checker, self.built
        gangs = checker.check(self.t, placements, self.visible.members,
                              (self.prev, self.prev_ids), self.gone)
        self.gone = []
        if checker.changed_jobs is not None and base is not None \
                and base.serial == checker.serial - 1 \
                and 8 * len(checker.changed_jobs) < len(gangs):
            # few gangs changed among many: numpy copies the rest
            ep = _Epoch.derive(base, placements, gangs, checker, self._gang)
        else:
            ep = _Epoch.build(placements, gangs, checker, self._gang,
                              base.book if base is not None else {})
        ep.p_w = self.W[ep.p_job].astype(float)
        self.built = ep
        return ep

    def _gang(self, i: int, copies: dict[int, list[int]]) -> _Gang:
        caps = self.decl.caps
        return _Gang(copies, self.checker, self.jobs[i], self.rate_memo,
                     caps.resource_sensitive, caps.progress_rule,
                     self.instance.colocated_rate if caps.colocation else None)

    def _finish_times(self, ep: _Epoch, g_rem: np.ndarray) -> np.ndarray:
        """Per gang the instant its work runs out (``inf`` for a gang that does not run)."""
        t, g_rate = self.t, ep.g_rate
        running = g_rate > 0
        if running.all():  # the common case: the same values, without the masking
            g_fin = t + g_rem / g_rate
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                g_fin = np.where(running, t + g_rem / np.where(running, g_rate, 1.0),
                                 math.inf)
        return _covering_stop(t, g_fin, g_rem, g_rate, running, _DONE * self.work[ep.g_ix])

    def _epoch_end(self, ep: _Epoch, g_fin: np.ndarray, next_arrival: float,
                   wake: float | None) -> float:
        t, decl = self.t, self.decl
        end = t + self.slot if decl.periodic else math.inf
        if decl.event_driven:
            end = min(end, next_arrival)
            running = ep.g_rate > 0
            if running.any():
                end = min(end, float(g_fin[running].min()))
        if wake is not None:
            end = min(end, float(wake))
        if decl.event_driven or wake is not None:
            end = max(end, t + _EPS)
        if self.max_time is not None:
            end = min(end, self.max_time)
        return end

    def _count_moves(self, ep: _Epoch) -> None:
        """Preemptions and migrations of the jobs that ran in the previous epoch."""
        book = ep.book
        is_done, preempt, migrate, prev = self.done_mask, self.preempt, self.migrate, \
            self.prev_book
        jobs: Any = prev
        if ep.changed_jobs is not None and self.prev_serial == ep.serial - 1:
            # the previous gangs are those of the decision checked just before: only
            # the jobs whose placements changed can have moved
            jobs = [i for i in ep.changed_jobs if i in prev]
        preempted: list[int] = []
        for i in jobs:
            if is_done[i]:
                continue
            g = book.get(i)
            if g is None:
                preempt[i] += 1
                preempted.append(i)
            elif g.sig != prev[i].sig:
                migrate[i] += 1
        self.prev_book, self.prev_serial = book, ep.serial
        if preempted:
            self.visible.touch(np.array(preempted, dtype=np.int64))

    def _progress(self, ep: _Epoch, g_rem: np.ndarray, g_fin: np.ndarray, end: float
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Execute the epoch up to ``end``: per gang whether it finished, and when it
        stopped.

        A job whose work runs out inside the epoch completes at that instant; one short
        of it only by float rounding (a relative 1e-9 of its work, far below the
        validator's 1e-6) completes at the epoch end, where its GPUs are handed on: its
        record never runs past the epoch."""
        t, g_ix, g_rate = self.t, ep.g_ix, ep.g_rate
        g_left = g_rem - g_rate * (end - t)
        fin_mask = (g_fin <= end) | (g_left <= _DONE * self.work[g_ix])
        g_stop = np.where(fin_mask, np.minimum(g_fin, end), end)
        self.remaining[g_ix] = np.where(fin_mask, 0.0, g_left)
        g_dt = g_stop - t
        self.executed[g_ix] += g_dt
        self.rounds[g_ix] += 1
        self.attained[g_ix] += ep.held * g_dt
        if len(ep.p_gang):  # in placement order, as the per-placement additions were
            np.add.at(self.on_type, (ep.p_job, ep.p_type),
                      g_dt[ep.p_gang] * ep.p_gpus / ep.p_w)
        self.segments.record(t, ep.p_ids, g_stop[ep.p_gang])
        self.visible.touch(g_ix)
        return fin_mask, g_stop

    def _completions(self, ep: _Epoch, fin_mask: np.ndarray, g_stop: np.ndarray) -> list[int]:
        """Record the completions of the gangs that finished; their job indices."""
        g_ix, kappa = ep.g_ix, self.decl.kappa
        finished = g_ix[fin_mask].tolist()
        for e in np.flatnonzero(fin_mask).tolist():
            self.completion[self.job_ids[g_ix[e]]] = _completion(float(g_stop[e]), kappa)
        self.done_mask[finished] = True
        self.gone += finished
        return finished

    def _hand_on(self, ep: _Epoch, finished: list[int], bar: ProgressBar,
                 end: float) -> None:
        """What the next epoch starts from: the visible jobs, the previous decision."""
        self.last = ep
        if finished:
            self.visible.remove(finished)
            bar.advance(len(finished), now=end)
            self._set_prev(ep, finished=True)
            self.last = None
        elif ep.placed is not self.prev:
            self._set_prev(ep)

    def _nothing_runs(self, end: float, next_arrival: float, wake: float | None) -> None:
        """A decision that runs nothing: jump to the next event."""
        if self.ptr >= self.n and wake is None:
            raise PolicyViolation(self.decl.name, self.t,
                                  f"allocated nothing to {len(self.visible)} waiting "
                                  "job(s) on an idle cluster with no future arrival "
                                  "(the simulation would never end)")
        if wake is not None and wake < next_arrival:
            # nothing runs until the policy's own next event
            self.t = max(float(wake), self.t + _EPS)
            return
        self.stats.idle_jumps += 1
        self.t = max(end, next_arrival) if not self.decl.event_driven else next_arrival
        self._set_prev(None)
        self.prev_book = {}
        self.last = None

    # ------------------------------------------------------------------ the result
    def result(self, wall: float) -> Result:
        """The run's schedule, validated, with its counters in ``extra``."""
        decl, caps, P = self.decl, self.decl.caps, self.checker.placement
        allocs = [Allocation(k[0], s, e, k[1], k[2], k[3], k[4], k[5], k[6], k[7], k[8])
                  for k, s, e in ((P[p], s, e) for p, s, e in self.segments.all()) if e > s]
        allocs.sort(key=lambda a: (a.start, a.job, a.node, a.gpu_type, a.copy))
        # the run is over: what only the epochs needed goes before the validator (on the
        # whole Philly trace the checker's tables alone are hundreds of MiB)
        del P
        self._release()
        schedule = Schedule(tuple(allocs), self.completion, sharing=caps.sharing,
                            forking=caps.forking, consolidation=decl.kappa,
                            resource_sensitive=caps.resource_sensitive,
                            progress_rule=caps.progress_rule, colocation=caps.colocation)
        extra = self._extra(wall)
        extra.update(getattr(self.policy, "stats", lambda: {})())
        res = finalize(self.instance, schedule, status=Status.FEASIBLE, model="simulate",
                       method=decl.name, solve_seconds=wall, extra=extra,
                       message=f"simulated {len(self.completion)}/{self.n} jobs with policy "
                       f"{decl.name!r}")
        mean = res.metrics.mean_jct if res.metrics is not None else None
        return res.replace(objective=mean)

    def _release(self) -> None:
        """Drop the epochs' working state (the run cannot step after this)."""
        self.checker = DecisionChecker.for_instance(self.decl.name, self.instance,
                                                    self.decl.caps)
        self.segments = _Segments()
        self.rate_memo = {}
        self.built = self.last = None
        self.prev_book = {}
        self.prev = ()

    def _extra(self, wall: float) -> dict[str, Any]:
        decl, stats, cl, jobs, q = self.decl, self.stats, self.cluster, self.jobs, self.queue
        preempt, migrate = self.preempt, self.migrate
        return {
            "policy": decl.name, "seed": self.seed, "event_driven": decl.event_driven,
            "needs_work": decl.needs_work, "epochs": stats.epochs,
            "policy_calls": stats.policy_calls, "policy_seconds": stats.policy_seconds,
            "idle_jumps": stats.idle_jumps, "simulation_seconds": wall,
            "total_gpus": cl.total_gpus, "gpus_per_type": cl.gpus_per_type,
            "instance": self.instance.name,
            "preemptions": {jobs[i].id: int(preempt[i]) for i in range(self.n)},
            "migrations": {jobs[i].id: int(migrate[i]) for i in range(self.n)},
            "total_preemptions": int(preempt.sum()), "total_migrations": int(migrate.sum()),
            "unfinished": [j.id for i, j in enumerate(jobs) if not self.done_mask[i]],
            "max_time": self.max_time,
            "until_met": None if self.waiting is None else not self.waiting,
            "queued_jobs": int(self.queue.waited.sum()), "queue_seconds": q.seconds,
            "max_queue": q.most,
        }
