"""An independent schedule validator: knows the instance, never a model or a solver.

:func:`validate_schedule` checks, and raises :class:`~optsched.errors.InvalidSchedule`
naming the first violated rule and the allocation it concerns:

1. each allocation names a known job, node and GPU type on that node, a positive integer
   GPU count, ``start < end``, ``start >= arrival``, a type the job can run on, and
   ``0 < share <= 1`` (``share < 1`` only if the schedule declares sharing);
2. capacity: at every instant, per node and GPU type, the GPUs held (weighted by share
   when sharing) do not exceed the node's count; CPU cores and DRAM per node likewise;
   without sharing each GPU is held by at most one job (count-wise);
3. gangs: without forking, a job's concurrently active allocations sum to exactly its
   ``workers`` (to 1..``workers`` under the ``"partial"`` progress rule; an
   ``"additive"`` gang runs at the sum of its workers' rates instead of ``workers``
   times the slowest: :mod:`optsched.core.progress`); with forking each copy holds
   1..workers GPUs on one node and no two copies of a job share a node at once (with
   ``copy_efficiency`` e < 1 the copy of largest rate counts in full at every instant,
   every other copy at e of its rate).
   With ``colocation`` (space sharing, :mod:`optsched.core.colocation`) an allocation
   may name a ``partner``: the instance has a positive co-located rate of the job with
   it on the type; while both are unfinished the partner holds the mirror allocation
   (same node, type and GPUs, naming this job), and an allocation never starts after
   its partner completed; every allocation of a job active at one instant names the
   same partner (or none); each allocation of a pair counts for half its GPUs against
   capacity (the pair's GPUs count once, so a third job on them is over capacity); the
   job runs at its co-located per-worker rate in place of its isolated one.
   Progress at ``share`` s of a GPU is
   ``min(1, s / u)`` times the gang's rate, u the job's ``compute_share``
   (1 when unset: s alone); in a ``resource_sensitive`` schedule the rate is further
   multiplied by the job's CPU/DRAM sensitivity at the allocation's per-GPU cores and
   memory (:meth:`optsched.core.instance.Sensitivity.relative`);
4. work: each job declared complete did at least its ``work`` iterations by
   ``completion - consolidation``, and holds nothing after its completion;
5. completion time: a completion is when the work got done (plus ``consolidation``),
   within the time granularity of the rules (:class:`Capabilities`): in
   ``"continuous"`` time no later than that instant; in ``"slots"`` time no later than
   the end of the slot it falls in (on the grid ``0, slot, 2 slot, ...`` of the
   model's planning slot, by default ``instance.slot``), or than the end of the job's
   last allocation (a slotted model holds whole slots);
6. every job is accounted for: a job that did all its ``work`` but is absent from
   ``completion`` is refused (absent from ``completion`` means *unfinished*).

Which relaxed rules apply (sharing, forking, consolidation, resource sensitivity,
progress rule, time granularity) comes from the model or policy that produced the
schedule, never from the schedule itself: :func:`validate_schedule` takes its name (the
registry knows its :class:`Capabilities`) or the capabilities, and refuses a schedule
that declares a rule they do not have. Without either, the strict rules apply (gang
progress, no sharing, no forking, no consolidation, not resource-sensitive, continuous
time).

Returns a :class:`Progress` record (iterations done per job) that metrics reuse.

The checks run on columns of the schedule (numpy arrays, one entry per allocation), so
that a simulation's half a million allocations validate in about a second: the
per-allocation rules as one mask; capacity as one sweep over the sorted interval
endpoints of every (node, type) and every node at once; gangs by cutting each
(job, copy) into its elementary intervals (between consecutive endpoints, a constant
set of allocations is active) and aggregating over them. Where the arrays flag a
possible violation, the allocation, (node, type) or node is checked once more
one at a time, which writes the error message: the error raised (rule, path, value,
message) is the one a loop over the allocations in order raises. Only the schedule
and the instance are read, never a simulator's or a model's own bookkeeping.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from optsched.core.coerce import as_instance, as_schedule
from optsched.core.instance import Instance
from optsched.core.progress import PROGRESS_RULES
from optsched.core.rules import (
    PAIR_AMOUNT,
    copies_error,
    gang_error,
    gpu_overload,
    partner_error,
    placement_error,
    resource_overload,
)
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption, InvalidSchedule

__all__ = ["validate_schedule", "Progress", "job_progress", "work_done_at", "Capabilities",
           "STRICT", "producing", "current_producer", "rules_of"]

REL_TOL = 1e-6
TIME_TOL = 1e-6


@dataclass(frozen=True)
class Progress:
    """Iterations done by each job (over the whole schedule and by its completion)."""

    done: dict[str, float]

    def fraction(self, instance: Instance) -> dict[str, float]:
        return {j.id: self.done.get(j.id, 0.0) / j.work for j in instance.jobs}


STRICT_SOURCE = "strict rules"
#: Time granularities a model or policy may declare (see :class:`Capabilities`).
TIME_GRANULARITIES = ("continuous", "slots")


@dataclass(frozen=True)
class Capabilities:
    """The relaxed rules a model or policy may use, which the validator then applies.

    Each flag licenses the schedule flag of the same name (:class:`Schedule`):
    ``sharing`` (shares below 1), ``forking`` (copies other than 0),
    ``consolidation`` (a positive ``consolidation`` delay), ``resource_sensitive``
    (CPU/DRAM-dependent rates), ``colocation`` (two jobs on the same GPUs at their
    measured co-located rates); ``progress_rules`` the progress rules it may declare
    (:data:`optsched.core.progress.PROGRESS_RULES`). ``time`` is the granularity of its
    completions: ``"continuous"`` (a job completes when its work is done) or
    ``"slots"`` (a job may keep the slot it finished in). ``source`` names who declares
    them (``"model allox"``, ``"policy gavel.max_min_fairness"``).
    """

    sharing: bool = False
    forking: bool = False
    consolidation: bool = False
    resource_sensitive: bool = False
    progress_rules: tuple[str, ...] = ("gang",)
    time: str = "continuous"
    source: str = "strict rules"  # STRICT_SOURCE
    colocation: bool = False

    def __post_init__(self) -> None:
        rules = tuple(self.progress_rules)
        object.__setattr__(self, "progress_rules", rules)
        bad = [r for r in rules if r not in PROGRESS_RULES]
        if bad or not rules:
            raise InvalidOption("progress_rules", list(rules),
                                f"must be a non-empty list of {', '.join(PROGRESS_RULES)}")
        if self.time not in TIME_GRANULARITIES:
            raise InvalidOption("time", self.time,
                                f"must be one of {', '.join(TIME_GRANULARITIES)}")

    @classmethod
    def declared_by(cls, schedule: Schedule, source: str = "the producing method",
                    time: str = "slots") -> Capabilities:
        """Exactly the rules ``schedule`` declares: for code that built the schedule
        itself (:func:`optsched.core.result.finalize`), never for a schedule read from
        elsewhere."""
        return cls(sharing=schedule.sharing, forking=schedule.forking,
                   consolidation=schedule.consolidation > 0,
                   resource_sensitive=schedule.resource_sensitive,
                   progress_rules=(schedule.progress_rule,), time=time, source=source,
                   colocation=schedule.colocation)

    def describe(self) -> str:
        """The rules in words, e.g. ``"gang progress, no forking, no sharing, ...
        (model allox)"``."""
        parts = [" or ".join(self.progress_rules) + " progress",
                 ("forking" + (" with consolidation" if self.consolidation else ""))
                 if self.forking else "no forking",
                 "sharing" if self.sharing else "no sharing",
                 "resource-sensitive" if self.resource_sensitive else "not resource-sensitive",
                 "slotted time" if self.time == "slots" else "continuous time"]
        if self.colocation:
            parts.insert(3, "co-location")
        if self.consolidation and not self.forking:
            parts.insert(2, "consolidation")
        return f"{', '.join(parts)} ({self.source})"

    def admit(self, schedule: Schedule) -> None:
        """Raise :class:`~optsched.errors.InvalidSchedule` naming the first rule
        ``schedule`` declares that these capabilities do not license."""
        for flag, allowed in (("sharing", self.sharing), ("forking", self.forking),
                              ("resource_sensitive", self.resource_sensitive),
                              ("colocation", self.colocation)):
            if getattr(schedule, flag) and not allowed:
                self._refuse(flag, True, flag)
        if schedule.consolidation > 0 and not self.consolidation:
            self._refuse("consolidation", schedule.consolidation, "a consolidation delay")
        if schedule.progress_rule not in self.progress_rules:
            self._refuse("progress_rule", schedule.progress_rule,
                         f"progress rule {schedule.progress_rule!r}")

    def _refuse(self, flag: str, value: Any, what: str) -> None:
        if self.source == STRICT_SOURCE:
            why = ("no model or policy is named, so the strict rules apply: name the one "
                   "that produced the schedule")
        else:
            why = f"{self.source} does not have it"
        raise InvalidSchedule(flag, value, f"the schedule declares {what}, but {why} "
                              f"(rules: {self.describe()})")


#: The rules when nobody names the producer: nothing relaxed.
STRICT = Capabilities()

_PRODUCER: ContextVar[Capabilities | None] = ContextVar("optsched_producer", default=None)


@contextmanager
def producing(capabilities: Capabilities) -> Iterator[None]:
    """Within the block, :func:`optsched.core.result.finalize` validates with
    ``capabilities`` (the registry wraps each method and policy run in it)."""
    token = _PRODUCER.set(capabilities)
    try:
        yield
    finally:
        _PRODUCER.reset(token)


def current_producer() -> Capabilities | None:
    """The capabilities set by the innermost :func:`producing` block, if any."""
    return _PRODUCER.get()


#: How a model or policy name becomes its :class:`Capabilities`. The registry, which sits
#: above this module (core never imports it), installs its lookup when it is imported,
#: and ``import optsched`` imports it.
_named_capabilities: Callable[[str], Capabilities] | None = None


def set_capability_lookup(lookup: Callable[[str], Capabilities]) -> None:
    """Install how :func:`validate_schedule` resolves a model or policy name (the
    registry's :func:`optsched.registry.capabilities`)."""
    global _named_capabilities
    _named_capabilities = lookup


def _capabilities(model: str | Capabilities | None) -> Capabilities:
    if model is None:
        return STRICT
    if isinstance(model, Capabilities):
        return model
    if not isinstance(model, str):
        raise InvalidOption("model", model, "must be a model or policy name, or "
                            "Capabilities")
    if _named_capabilities is None:  # pragma: no cover - import optsched installs it
        raise InvalidOption("model", model, "no registry to name models from: import "
                            "optsched, or pass the Capabilities")
    return _named_capabilities(model)


def rules_of(model: str | Capabilities | None) -> Capabilities:
    """The :class:`Capabilities` :func:`validate_schedule` applies for ``model`` (a
    registered model or policy name, the capabilities themselves, or ``None``: the
    strict rules), for code below the registry that holds schedules to a named
    producer's rules."""
    return _capabilities(model)


def _fail(i: int | None, a: Allocation | None, reason: str, value=None) -> None:
    path = f"allocations[{i}]" if i is not None else "schedule"
    raise InvalidSchedule(path, value if value is not None else (a.to_dict() if a else None),
                          reason)


def validate_schedule(instance: Instance, schedule: Schedule,
                      model: str | Capabilities | None = None, *,
                      slot: float | None = None) -> Progress:
    """Check ``schedule`` against ``instance``; return per-job progress or raise.

    Parameters
    ----------
    instance : Instance
        Or a mapping in its JSON form (:mod:`optsched.core.coerce`).
    schedule : Schedule
        Or a mapping in its JSON form.
    model : str, Capabilities or None
        Who produced the schedule: a registered model (``"hadare"``) or policy
        (``"salus.fifo"``) name, whose :class:`Capabilities` the registry knows
        (:func:`optsched.registry.capabilities`), or the capabilities themselves. The
        rules they relax are the only ones applied; a schedule declaring another is
        refused. ``None``: the strict rules (:data:`STRICT`).
    slot : float or None
        The slot (seconds) a slotted model planned on, when it is not ``instance.slot``
        (Hadar and HadarE plan on a multiple of it): the grid of ``"slots"`` time. Not
        read in continuous time.

    Raises
    ------
    InvalidSchedule
        Naming the first rule broken (module docstring) and where.
    """
    instance, schedule = as_instance(instance), as_schedule(schedule)
    caps = _capabilities(model)
    caps.admit(schedule)
    grid = float(instance.slot)
    if slot is not None:
        if isinstance(slot, bool) or not isinstance(slot, (int, float)) \
                or not np.isfinite(slot) or slot <= 0:
            raise InvalidOption("slot", slot, "must be a finite number of seconds > 0")
        grid = float(slot)
    cols = _Columns.of(instance, schedule)
    _check_allocations(instance, schedule, cols)
    cols.finish()
    _check_capacity(instance, schedule, cols)
    if cols.paired.any():
        _check_pairs(instance, schedule, cols)
    gangs = _Gangs(instance, schedule, cols)
    done = gangs.progress()
    _check_completion(instance, schedule, cols, gangs, done, caps, grid)
    return done


# --------------------------------------------------------------------------- columns
def _codes(values: list, index: dict) -> np.ndarray:
    """``index[v]`` for each value, -1 where the value is not a key."""
    try:
        return np.fromiter(map(index.__getitem__, values), dtype=np.int64, count=len(values))
    except (KeyError, TypeError):
        return np.fromiter(map(index.get, values, repeat(-1)), dtype=np.int64,
                           count=len(values))


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (by sorting: numpy's hash-based unique is slower here)."""
    a = np.sort(a)
    return a[np.r_[True, a[1:] != a[:-1]]] if len(a) else a


class _Columns:
    """The schedule's allocations as arrays (indices into the instance, -1 = unknown).

    ``plain`` says every field has the Python type the vectorised checks assume (ints
    for counts and copy ids, floats or ints for the rest); otherwise the per-allocation
    rules run one allocation at a time, as they are written in
    :mod:`optsched.core.rules`.
    """

    def __init__(self, m: int) -> None:
        self.m = m
        self.plain = True
        self.raw: tuple[Any, ...] = ((),) * 10
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        self.job = self.node = self.typ = self.copy = empty_i
        #: per allocation its partner's job index (-1: none, -2: not a known job)
        self.partner = empty_i
        self.paired = np.zeros(0, dtype=bool)
        self.partners: list[Any] = []
        self.start = self.end = self.cpus = self.memory = self.share = self.gpus = empty_f
        self.times, self.rank_start, self.rank_end = empty_f, empty_i, empty_i

    @classmethod
    def of(cls, instance: Instance, schedule: Schedule) -> _Columns:
        allocs = schedule.allocations
        c = cls(len(allocs))
        cl = instance.cluster
        # one list per field (a list of per-allocation tuples costs several times more)
        c.raw = ([a.job for a in allocs], [a.start for a in allocs], [a.end for a in allocs],
                 [a.node for a in allocs], [a.gpu_type for a in allocs],
                 [a.gpus for a in allocs], [a.cpus for a in allocs],
                 [a.memory for a in allocs], [a.copy for a in allocs],
                 [a.share for a in allocs])
        job, _, _, node, typ, gpus, _, _, copy, _ = c.raw
        c.partners = [a.partner for a in allocs]
        c.paired = np.fromiter((p is not None for p in c.partners), dtype=bool, count=c.m)
        c.partner = np.full(c.m, -1, dtype=np.int64)
        if c.paired.any():
            idx = instance.job_index
            for i in np.flatnonzero(c.paired).tolist():
                p = c.partners[i]
                c.partner[i] = idx.get(p, -2) if isinstance(p, str) else -2
        c.job = _codes(job, instance.job_index)
        c.node = _codes(node, instance.cluster._node_index)
        c.typ = _codes(typ, {t: k for k, t in enumerate(cl.gpu_types)})
        c.plain = all(set(map(type, col)) <= {int} for col in (gpus, copy))
        if c.plain:
            c._numbers()
        return c

    def _numbers(self) -> None:
        _, start, end, _, _, gpus, cpus, mem, copy, share = self.raw
        reals = []
        for col in (start, end, cpus, mem, share):
            # plain Python numbers give a numeric dtype; strings and other objects do not
            a = np.array(col) if col else np.zeros(0)
            if a.dtype.kind not in "fiub":
                self.plain = False
                return
            reals.append(a.astype(float, copy=False))
        self.start, self.end, self.cpus, self.memory, self.share = reals
        # counts above 2**53 lose exactness here, and fail the capacity check anyway
        self.gpus = np.array(gpus, dtype=float) if gpus else np.zeros(0)
        try:
            self.copy = np.array(copy, dtype=np.int64)
        except OverflowError:  # copy ids are compared, never computed with: factorise
            codes: dict[int, int] = {}
            self.copy = np.array([codes.setdefault(k, len(codes)) for k in copy],
                                 dtype=np.int64)

    def finish(self) -> None:
        """Numeric columns of a schedule whose allocations passed their own checks."""
        if not self.plain:
            _, start, end, _, _, gpus, cpus, mem, copy, share = self.raw
            self.raw = (self.raw[0], tuple(map(float, start)), tuple(map(float, end)),
                        self.raw[3], self.raw[4], gpus, tuple(map(float, cpus)),
                        tuple(map(float, mem)), copy, tuple(map(float, share)))
            self._numbers()
            self.plain = True
        ends = np.concatenate([self.start, self.end])
        self.times = _unique(ends)
        #: rank of each allocation's start and end among all endpoints
        rank = np.searchsorted(self.times, ends)
        self.rank_start, self.rank_end = rank[: self.m], rank[self.m:]


def _check_one(instance: Instance, schedule: Schedule, i: int, a: Allocation) -> None:
    """Rule 1 for one allocation (see the module docstring)."""
    nodes = instance.cluster._node_index
    if a.job not in instance.job_index:
        _fail(i, a, f"unknown job {a.job!r}")
    j = instance.job(a.job)
    if a.node not in nodes:
        _fail(i, a, f"unknown node {a.node!r}")
    if not (np.isfinite(a.start) and np.isfinite(a.end)) or not a.end > a.start:
        _fail(i, a, "interval must satisfy start < end (finite)")
    if a.start < j.arrival - TIME_TOL:
        _fail(i, a, f"starts at {a.start:g} before job {a.job!r} arrives at {j.arrival:g}")
    node = instance.cluster.nodes[nodes[a.node]]
    reason = placement_error(a.job, a.node, a.gpu_type, node.gpus.get(a.gpu_type, 0),
                             j.rate(a.gpu_type), a.gpus, a.cpus, a.memory, a.copy, a.share,
                             sharing=schedule.sharing, forking=schedule.forking)
    if reason is not None:
        _fail(i, a, reason)
    if a.partner is not None:
        _check_partner(instance, schedule, i, a)


def _check_partner(instance: Instance, schedule: Schedule, i: int, a: Allocation) -> None:
    """The partner rule (:func:`optsched.core.rules.partner_error`) for allocation ``i``
    of a known job on a known node and type."""
    p = a.partner
    known = isinstance(p, str) and p in instance.job_index
    rate = instance.colocated_rate(a.job, p, a.gpu_type) \
        if isinstance(p, str) and known and schedule.colocation and p != a.job else None
    reason = partner_error(a.job, p, a.gpu_type, known, rate, colocation=schedule.colocation)
    if reason is not None:
        _fail(i, a, reason)


def _check_allocations(instance: Instance, schedule: Schedule, c: _Columns) -> None:
    allocs = schedule.allocations
    if not c.plain or not instance.n_jobs or not instance.cluster.gpu_types:
        for i, a in enumerate(allocs):
            _check_one(instance, schedule, i, a)
        return
    known = (c.job >= 0) & (c.node >= 0)
    j, h, k = np.where(known, c.job, 0), np.where(known, c.node, 0), np.maximum(c.typ, 0)
    with np.errstate(invalid="ignore"):
        bad = ~known | ~(np.isfinite(c.start) & np.isfinite(c.end)) | ~(c.end > c.start)
        bad |= c.start < instance.arrivals[j] - TIME_TOL
        T = instance.throughput_matrix
        cap = instance.cluster.capacity
        bad |= (c.typ < 0) | ~(cap[h, k] > 0) | ~(T[j, k] > 0)
        bad |= c.gpus < 1
        bad |= ~(np.isfinite(c.cpus) & np.isfinite(c.memory)) | (c.cpus < 0) | (c.memory < 0)
        bad |= ~((c.share > 0) & (c.share <= 1))
        if not schedule.sharing:
            bad |= c.share < 1
        if not schedule.forking:
            bad |= c.copy != 0
    # the violations, which the per-allocation rules name: the first one, in allocation
    # order, raises (allocations naming a partner go through the partner rule there)
    for i in np.flatnonzero(bad | c.paired).tolist():
        _check_one(instance, schedule, i, allocs[i])
        if not bad[i]:
            continue
        # the arrays and the rules disagree: a violation is never let through unnamed
        _fail(i, allocs[i], "breaks a placement rule (known job and node, a type the job "
              "runs on, start < end after arrival, a positive integer GPU count, CPU cores "
              "and DRAM finite and >= 0, share in (0, 1], copy 0 unless forking)")


# --------------------------------------------------------------------------- capacity
def _sweep_max(starts: np.ndarray, ends: np.ndarray, amount: np.ndarray) -> tuple[float, float]:
    """Maximum of the summed ``amount`` over time, and an instant where it is reached."""
    t = np.concatenate([starts, ends])
    d = np.concatenate([amount, -amount])
    # at equal times releases come before acquisitions: [s, e) intervals
    order = np.lexsort((d, t))
    level = np.cumsum(d[order])
    k = int(np.argmax(level))
    return float(level[k]), float(t[order][k])


def _over(group: np.ndarray, c: _Columns, amount: np.ndarray, limit: np.ndarray,
          ) -> np.ndarray:
    """Groups (ids into ``limit``) whose summed ``amount`` may exceed ``limit`` at some
    instant: every group that does, and, with fractional amounts, groups within a
    rounding margin of it (which the caller checks again one group at a time)."""
    m = c.m
    R = len(c.times)
    # events sorted by group, then time, releases before acquisitions at equal times
    key = np.concatenate([(group * R + c.rank_start) * 2 + 1, (group * R + c.rank_end) * 2])
    order = np.argsort(key, kind="stable")
    d = np.concatenate([amount, -amount])[order]
    level = np.cumsum(d)
    g = np.concatenate([group, group])[order]
    head = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    base = np.where(head > 0, level[np.maximum(head - 1, 0)], 0.0)
    level -= np.repeat(base, np.diff(np.r_[head, 2 * m]))
    peak = np.maximum.reduceat(level, head)
    lim = limit[g[head]]
    integral = bool(np.all(amount == np.round(amount)))
    # integer amounts sum exactly; fractional ones within 1e-6 are checked again
    margin = 0.0 if integral else 1e-6 * (1.0 + np.abs(lim))
    return g[head][peak > lim - margin]


def _first_seen(group: np.ndarray, candidates: np.ndarray) -> list[int]:
    """``candidates`` ordered by the first allocation of each group."""
    ids, first = np.unique(group, return_index=True)
    pos = dict(zip(ids.tolist(), first.tolist()))
    return sorted(candidates.tolist(), key=pos.__getitem__)


def _check_capacity(instance: Instance, schedule: Schedule, c: _Columns) -> None:
    if c.m == 0:
        return
    cl = instance.cluster
    names = [n.name for n in cl.nodes]
    types = cl.gpu_types
    K = len(types)
    group = c.node * K + c.typ
    amount = c.gpus * (c.share if schedule.sharing else 1.0)
    if c.paired.any():  # a pair's GPUs count once: each of its allocations for half
        amount = amount * np.where(c.paired, PAIR_AMOUNT, 1.0)
    cap = cl.capacity.ravel().astype(float)
    for gk in _first_seen(group, _over(group, c, amount, cap)):
        idx = np.flatnonzero(group == gk)
        peak, when = _sweep_max(c.start[idx], c.end[idx], amount[idx])
        node, typ = names[gk // K], types[gk % K]
        limit = cl.nodes[gk // K].gpus[typ]
        if gpu_overload(peak, limit):
            raise InvalidSchedule(f"node {node!r} type {typ!r}", peak,
                                  f"{peak:g} GPUs in use at t={when:g}, capacity {limit}")
    flagged: list[tuple[int, int]] = []
    for a, (attr, col) in enumerate((("cpus", c.cpus), ("memory", c.memory))):
        if not col.any():
            continue
        limits = np.array([float(getattr(n, attr)) for n in cl.nodes])
        flagged += [(h, a) for h in _over(c.node, c, col, limits).tolist()]
    if not flagged:
        return
    order = {h: i for i, h in enumerate(_first_seen(c.node, np.unique([h for h, _ in flagged])))}
    for h, a in sorted(flagged, key=lambda f: (order[f[0]], f[1])):
        attr = ("cpus", "memory")[a]
        idx = np.flatnonzero(c.node == h)
        amt = (c.cpus, c.memory)[a][idx]
        if not amt.any():
            continue
        limit = getattr(cl.nodes[h], attr)
        peak, when = _sweep_max(c.start[idx], c.end[idx], amt)
        if resource_overload(peak, limit):
            raise InvalidSchedule(f"node {names[h]!r} {attr}", peak,
                                  f"{peak:g} in use at t={when:g}, capacity {limit:g}")


# --------------------------------------------------------------------------- pairs
def _check_pairs(instance: Instance, schedule: Schedule, c: _Columns) -> None:
    r"""The mirror rule of co-located allocations (rule 3): per unordered pair of jobs and
    (node, type), while both jobs are unfinished each holds as many GPUs there naming
    the other as the other holds naming it; an allocation never starts once its
    partner has completed (a job whose partner completed may keep the GPUs alone until
    its allocation ends).

    Complexity: :math:`O(a \log a)` per pair and (node, type) for its :math:`a`
    allocations."""
    jobs, names = instance.jobs, instance.cluster.nodes
    types = instance.cluster.gpu_types
    done = np.full(instance.n_jobs, np.inf)
    for jid, t in schedule.completion.items():
        k = instance.job_index.get(jid)
        if k is not None:
            done[k] = t
    idx = np.flatnonzero(c.paired)
    me, other = c.job[idx], c.partner[idx]
    lo, hi = np.minimum(me, other), np.maximum(me, other)
    groups: dict[tuple[int, int, int, int], list[int]] = defaultdict(list)
    for i, a, b, h, k in zip(idx.tolist(), lo.tolist(), hi.tolist(), c.node[idx].tolist(),
                             c.typ[idx].tolist()):
        groups[(a, b, h, k)].append(i)
    for i in idx.tolist():
        p = int(c.partner[i])
        if c.start[i] >= done[p] - TIME_TOL:
            _fail(i, schedule.allocations[i],
                  f"starts at {c.start[i]:g}, after its partner {jobs[p].id!r} completed "
                  f"at {done[p]:g}")
    for (a, b, h, k), members in groups.items():
        ix = np.array(members)
        side = np.where(c.job[ix] == a, 1.0, -1.0)
        ts = np.concatenate([c.start[ix], c.end[ix]])
        d = np.concatenate([side * c.gpus[ix], -side * c.gpus[ix]])
        order = np.lexsort((d, ts))
        ts, d = ts[order], d[order]
        level = np.cumsum(d)
        cut = np.r_[ts[1:] != ts[:-1], True]  # the level after the last event of an instant
        when, lev = ts[cut], level[cut]
        both_on = when < min(done[a], done[b]) - TIME_TOL
        bad = np.flatnonzero((np.abs(lev) > 1e-9) & both_on)
        if len(bad):
            t0 = float(when[bad[0]])
            more, less = (a, b) if lev[bad[0]] > 0 else (b, a)
            first = next(i for i in members if c.job[i] == more
                         and c.start[i] <= t0 < c.end[i])
            _fail(first, schedule.allocations[first],
                  f"job {jobs[more].id!r} shares GPUs of type {types[k]!r} on node "
                  f"{names[h].name!r} with job {jobs[less].id!r} at t={t0:g}, but "
                  f"{jobs[less].id!r} does not hold them naming {jobs[more].id!r} as its "
                  "partner (a co-located pair holds the same GPUs)")


# --------------------------------------------------------------------------- gangs
def _gang_ids(c: _Columns) -> np.ndarray:
    """Per allocation its (job, copy) gang's number, gangs numbered in order of their
    first allocation."""
    o = np.lexsort((c.copy, c.job))
    jo, co = c.job[o], c.copy[o]
    new = np.r_[True, (jo[1:] != jo[:-1]) | (co[1:] != co[:-1])]
    sorted_id = np.cumsum(new) - 1
    rank = np.empty(int(sorted_id[-1]) + 1, dtype=np.int64)
    rank[np.argsort(o[new], kind="stable")] = np.arange(len(rank))
    gang = np.empty(c.m, dtype=np.int64)
    gang[o] = rank[sorted_id]
    return gang


class _Gangs:
    """The elementary intervals of every (job, copy) gang, their rates, and the gang
    rules (rule 3 of the module docstring) checked on them.

    Gangs are numbered in order of their first allocation and each gang's intervals in
    time order, which is also the order the rules are checked (and the first violation
    raised) in, and the order each job's iterations are summed in.
    """

    def __init__(self, instance: Instance, schedule: Schedule, c: _Columns) -> None:
        self.instance, self.schedule, self.c = instance, schedule, c
        m = c.m
        if m == 0:
            self.seg_job = np.zeros(0, dtype=np.int64)
            self.t0 = self.t1 = self.speed = np.zeros(0)
            return
        gang = _gang_ids(c)
        # elementary intervals: consecutive distinct endpoints of one gang
        R = len(c.times)
        ks, ke = gang * R + c.rank_start, gang * R + c.rank_end
        pts = _unique(np.concatenate([ks, ke]))
        lo = np.searchsorted(pts, ks)
        span = np.searchsorted(pts, ke) - lo  # intervals each allocation covers (>= 1)
        inc_alloc = np.repeat(np.arange(m), span)
        inc_seg = np.repeat(lo - (np.cumsum(span) - span), span) + np.arange(int(span.sum()))
        U = max(len(pts) - 1, 0)
        active = np.bincount(inc_seg, minlength=U)
        seg = np.flatnonzero(active)  # intervals where the gang holds something
        pos = np.full(U, -1, dtype=np.int64)
        pos[seg] = np.arange(len(seg))
        inc = pos[inc_seg]
        S = len(seg)
        self.t0 = c.times[pts[seg] % R]
        self.t1 = c.times[pts[seg + 1] % R]
        seg_gang = pts[seg] // R
        first_alloc = np.full(S, m, dtype=np.int64)
        np.minimum.at(first_alloc, inc, inc_alloc)
        self.seg_job = c.job[first_alloc]
        self.seg_copy = c.copy[first_alloc]
        self.inc, self.inc_alloc, self.first_alloc, self.seg_gang = inc, inc_alloc, \
            first_alloc, seg_gang
        g = np.bincount(inc, weights=c.gpus[inc_alloc], minlength=S)
        W = instance.workers[self.seg_job]
        rule = schedule.progress_rule
        if schedule.forking:
            pairs = _unique(inc * (len(instance.cluster.nodes) + 1) + c.node[inc_alloc])
            n_nodes = np.bincount(pairs // (len(instance.cluster.nodes) + 1), minlength=S)
            bad = (n_nodes != 1) | (g < 1) | (g > W)
        elif rule == "partial":
            bad = (g < 1) | (g > W)
        else:
            bad = g != W
        if bad.any():
            self._raise_gang(int(np.flatnonzero(bad)[0]))
        if c.paired.any():
            self._one_partner(S)
        self.speed = self._speed(g)
        if schedule.forking:
            self._check_copies()
            if schedule.copy_efficiency < 1:
                self._efficiency(float(schedule.copy_efficiency))

    def _one_partner(self, S: int) -> None:
        """Every allocation of a job active at one instant names the same partner (or
        none): a job shares its GPUs with one other job at a time."""
        code = self.c.partner[self.inc_alloc]
        lo = np.full(S, np.iinfo(np.int64).max)
        hi = np.full(S, np.iinfo(np.int64).min)
        np.minimum.at(lo, self.inc, code)
        np.maximum.at(hi, self.inc, code)
        bad = np.flatnonzero(lo != hi)
        if len(bad):
            s = int(bad[0])
            act = self.inc_alloc[self.inc == s].tolist()
            job = self.instance.jobs[int(self.seg_job[s])].id
            named = sorted({str(self.c.partners[i]) for i in act})
            raise InvalidSchedule(f"job {job!r}", named,
                                  f"job {job!r} holds allocations with different partners "
                                  f"(or with and without one) at once during "
                                  f"[{float(self.t0[s]):g}, {float(self.t1[s]):g}): a job "
                                  "shares its GPUs with one other job at a time")

    def _speed(self, g: np.ndarray) -> np.ndarray:
        """The rate of each interval whose gang holds ``g`` GPUs:
        :func:`optsched.core.progress.gang_rate`, vectorised."""
        instance, schedule, c = self.instance, self.schedule, self.c
        jobs, m, S = instance.jobs, c.m, len(g)
        inc, inc_alloc, first_alloc = self.inc, self.inc_alloc, self.first_alloc
        rule = schedule.progress_rule
        rate_a = instance.throughput_matrix[c.job, c.typ]
        if c.paired.any():  # a shared GPU runs the job at its co-located rate
            rate_a = rate_a.copy()
            types = instance.cluster.gpu_types
            for i in np.flatnonzero(c.paired & (c.partner >= 0)).tolist():
                r = instance.colocated_rate(jobs[c.job[i]].id, jobs[c.partner[i]].id,
                                            types[c.typ[i]])
                rate_a[i] = 0.0 if r is None else r
        if rule == "additive":
            # each worker at its own type's rate; "g * rmin" below then is the sum
            rmin = np.bincount(inc, weights=(c.gpus * rate_a)[inc_alloc], minlength=S) / g
        else:
            rmin = np.full(S, np.inf)
            np.minimum.at(rmin, inc, rate_a[inc_alloc])
        if schedule.resource_sensitive and any(j.sensitivity is not None for j in jobs):
            rho = np.ones(m)
            has = np.array([j.sensitivity is not None for j in jobs])[c.job]
            raw_c, raw_m, raw_g = c.raw[6], c.raw[7], c.raw[5]
            for i in np.flatnonzero(has).tolist():
                s = jobs[c.job[i]].sensitivity
                assert s is not None
                rho[i] = s.relative(raw_c[i] / raw_g[i], raw_m[i] / raw_g[i])
            rhomin = np.full(S, np.inf)
            np.minimum.at(rhomin, inc, rho[inc_alloc])
            rmin = np.where(has[first_alloc], rmin * rhomin, rmin)
        smin = np.full(S, np.inf)
        np.minimum.at(smin, inc, c.share[inc_alloc])
        u = np.array([np.nan if j.compute_share is None else float(j.compute_share)
                      for j in jobs])[self.seg_job]
        with np.errstate(invalid="ignore"):
            share = np.where(np.isnan(u), smin, np.minimum(1.0, smin / u))
        return share * g * rmin

    def _raise_gang(self, s: int) -> None:
        c, jobs = self.c, self.instance.jobs
        act = self.inc_alloc[self.inc == s].tolist()
        job = jobs[int(self.seg_job[s])]
        g = sum(c.raw[5][i] for i in act)
        copy = c.raw[8][act[0]]
        nodes = {c.raw[3][i] for i in act}
        reason = gang_error(job.id, job.workers, copy, g, nodes, forking=self.schedule.forking,
                            progress_rule=self.schedule.progress_rule)
        if reason is None:  # the arrays saw a violation: never let it pass unnamed
            reason = (f"job {job.id!r} copy {copy}: holds {g} GPUs on {sorted(nodes)}, not "
                      "a gang the rules allow")
        t0, t1 = float(self.t0[s]), float(self.t1[s])
        raise InvalidSchedule(f"job {job.id!r}", g, f"{reason} during [{t0:g}, {t1:g})")

    def _efficiency(self, e: float) -> None:
        """Replace the per-copy intervals by per-job ones at which, at every instant, the
        job's copy of largest rate counts in full and each other copy at ``e``."""
        jobs, t0s, t1s, rates = [], [], [], []
        for j in np.unique(self.seg_job).tolist():
            idx = np.flatnonzero(self.seg_job == j)
            a, b, r = self.t0[idx], self.t1[idx], self.speed[idx]
            pts = np.unique(np.concatenate([a, b]))
            lo, hi = pts[:-1], pts[1:]
            on = (a[None, :] <= lo[:, None]) & (b[None, :] >= hi[:, None])  # pieces x copies
            live = on.any(axis=1)
            rr = np.where(on, r[None, :], 0.0)
            top = rr.max(axis=1)
            jobs.append(np.full(int(live.sum()), j))
            t0s.append(lo[live])
            t1s.append(hi[live])
            rates.append((top + e * (rr.sum(axis=1) - top))[live])
        self.seg_job = np.concatenate(jobs) if jobs else np.zeros(0, dtype=np.int64)
        self.t0 = np.concatenate(t0s) if t0s else np.zeros(0)
        self.t1 = np.concatenate(t1s) if t1s else np.zeros(0)
        self.speed = np.concatenate(rates) if rates else np.zeros(0)

    def _check_copies(self) -> None:
        """No two copies of a job on one node at once (forking)."""
        c, jobs = self.c, self.instance.jobs
        node_of = [c.raw[3][i] for i in self.first_alloc.tolist()]
        spans: dict[int, list[tuple[float, float, str, int]]] = defaultdict(list)
        copies = [c.raw[8][i] for i in self.first_alloc.tolist()]
        for s, (j, t0, t1) in enumerate(zip(self.seg_job.tolist(), self.t0.tolist(),
                                            self.t1.tolist())):
            spans[j].append((t0, t1, node_of[s], copies[s]))
        for j, sp in spans.items():
            jid = jobs[j].id
            sp.sort()
            active: dict[str, tuple[float, int]] = {}
            for t0, t1, node, copy in sp:
                prev = active.get(node)
                if prev is not None and prev[0] > t0 + TIME_TOL and prev[1] != copy:
                    raise InvalidSchedule(f"job {jid!r}", node,
                                          f"{copies_error(jid, node, prev[1], copy)} at "
                                          f"t={t0:g}")
                active[node] = (t1, copy)

    def done_times(self, target: np.ndarray) -> np.ndarray:
        """Per job, the first instant its iterations reach ``target[j]`` (``inf`` if they
        never do, or if the target is not positive)."""
        n = self.instance.n_jobs
        when = np.full(n, np.inf)
        S = len(self.t0)
        if S == 0 or n == 0:
            return when
        job = np.concatenate([self.seg_job, self.seg_job])
        t = np.concatenate([self.t0, self.t1])
        d = np.concatenate([self.speed, -self.speed])
        o = np.lexsort((d, t, job))  # per job, in time order; releases first at a tie
        job, t, d = job[o], t[o], d[o]
        head = np.flatnonzero(np.r_[True, job[1:] != job[:-1]])
        size = np.diff(np.r_[head, 2 * S])
        rate = np.cumsum(d)
        rate -= np.repeat(np.where(head > 0, rate[np.maximum(head - 1, 0)], 0.0), size)
        same = np.r_[job[1:] == job[:-1], False]  # the next event is the same job's
        dt = np.where(same, np.r_[t[1:], 0.0] - t, 0.0)
        inc = np.where(same, np.maximum(rate, 0.0) * dt, 0.0)
        cum = np.cumsum(inc)
        base = np.where(head > 0, cum[np.maximum(head - 1, 0)], 0.0)
        after = cum - np.repeat(base, size)      # iterations done by the next event
        before = after - inc                     # iterations done at this event
        goal = target[job]
        hit = same & (after >= goal) & (goal > 0) & (inc > 0)
        rows = np.flatnonzero(hit)
        # the first hit of each job (rows are grouped by job, in time order)
        jobs_hit, pos = np.unique(job[rows], return_index=True)
        r = rows[pos]
        w = t[r] + (goal[r] - before[r]) / rate[r]
        when[jobs_hit] = np.minimum(np.maximum(w, t[r]), t[r + 1])
        return when

    def progress(self, until: dict[str, float] | None = None) -> Progress:
        """Iterations done per job, counting time up to ``until[job]`` if given."""
        jobs = self.instance.jobs
        if until is None:
            hi = self.t1
        else:
            cut = np.array([until.get(j.id, np.inf) for j in jobs])
            hi = np.minimum(self.t1, cut[self.seg_job]) if len(jobs) else self.t1
        keep = hi > self.t0
        who = self.seg_job[keep]
        # summed in gang, then time order: the order a loop over the intervals adds them
        done = np.bincount(who, weights=self.speed[keep] * (hi[keep] - self.t0[keep]),
                           minlength=len(jobs))
        ids, first = np.unique(who, return_index=True)
        order = ids[np.argsort(first, kind="stable")].tolist()
        return Progress({jobs[j].id: float(done[j]) for j in order})


def job_progress(instance: Instance, schedule: Schedule,
                 until: dict[str, float] | None = None) -> Progress:
    """Iterations done per job, checking gang rules (see module docstring).

    ``until`` optionally caps the time counted per job (used for completion checks).
    The schedule's allocations are assumed to pass rule 1 (known jobs, nodes and types).
    """
    c = _Columns.of(instance, schedule)
    for i in np.flatnonzero((c.job < 0) | (c.node < 0) | (c.typ < 0)).tolist()[:1]:
        _check_one(instance, schedule, i, schedule.allocations[i])
    c.finish()
    return _Gangs(instance, schedule, c).progress(until)


def work_done_at(instance: Instance, schedule: Schedule) -> dict[str, float]:
    """The instant each job's iterations reach its ``work`` under ``schedule`` (jobs that
    never get there are left out); progress as :func:`job_progress` counts it, under the
    rules the schedule declares (a helper for code that builds schedules, not a check).
    """
    c = _Columns.of(instance, schedule)
    for i in np.flatnonzero((c.job < 0) | (c.node < 0) | (c.typ < 0)).tolist()[:1]:
        _check_one(instance, schedule, i, schedule.allocations[i])
    c.finish()
    when = _Gangs(instance, schedule, c).done_times(instance.work * (1 - REL_TOL))
    return {j.id: float(t) for j, t in zip(instance.jobs, when.tolist()) if np.isfinite(t)}


# --------------------------------------------------------------------------- completion
def _check_completion(instance: Instance, schedule: Schedule, c: _Columns, gangs: _Gangs,
                      done: Progress, caps: Capabilities = STRICT,
                      grid: float | None = None) -> None:
    """Rules 5 and 6 of the module docstring, and the completion times' own sense."""
    last = np.full(instance.n_jobs, -np.inf)
    np.maximum.at(last, c.job, c.end)
    cutoff = _completions_recorded(instance, schedule, last)
    by_done = gangs.progress(until=cutoff) if schedule.consolidation > 0 else done
    _work_done_by_completion(instance, schedule, by_done)
    # rule 6: a job that did all its work is completed, or the metrics would skip it
    for j in instance.jobs:
        if j.id not in schedule.completion and done.done.get(j.id, 0.0) >= j.work * (1 - REL_TOL):
            raise InvalidSchedule(f"completion.{j.id}", None,
                                  f"job {j.id!r} did all its {j.work:.6g} iterations but has no "
                                  "completion time (a job absent from completion is "
                                  "unfinished): declare when it completed")
    if not schedule.completion:
        return
    _completion_when_done(instance, schedule, gangs, by_done, last, caps, grid)


def _completions_recorded(instance: Instance, schedule: Schedule, last: np.ndarray
                          ) -> dict[str, float]:
    """Each completion names a job, is after its arrival and after its last allocation;
    per job the instant up to which its work counts (completion - consolidation)."""
    idx = instance.job_index
    cutoff = {}
    for jid, comp in schedule.completion.items():
        if jid not in idx:
            raise InvalidSchedule(f"completion.{jid}", comp, "unknown job")
        j = instance.jobs[idx[jid]]
        if not np.isfinite(comp) or comp < j.arrival:
            raise InvalidSchedule(f"completion.{jid}", comp, "completion before arrival")
        held = float(last[idx[jid]])
        if held > comp + TIME_TOL * max(1.0, abs(comp)):
            raise InvalidSchedule(f"completion.{jid}", comp,
                                  f"job holds resources until {held:g}, after completing")
        cutoff[jid] = comp - schedule.consolidation
    return cutoff


def _work_done_by_completion(instance: Instance, schedule: Schedule, by_done: Progress
                             ) -> None:
    """A completed job did all its work by its completion (less consolidation)."""
    idx = instance.job_index
    for jid in schedule.completion:
        j = instance.jobs[idx[jid]]
        got = by_done.done.get(jid, 0.0)
        if got < j.work * (1 - REL_TOL):
            raise InvalidSchedule(f"completion.{jid}", schedule.completion[jid],
                                  f"job did {got:.6g} of its {j.work:.6g} iterations by then")


def _completion_when_done(instance: Instance, schedule: Schedule, gangs: _Gangs,
                          by_done: Progress, last: np.ndarray, caps: Capabilities,
                          grid: float | None) -> None:
    """Rule 5: the completion is when the work got done, within the time granularity."""
    idx = instance.job_index
    cons = schedule.consolidation
    target = np.zeros(instance.n_jobs)
    for jid in schedule.completion:
        k = idx[jid]
        target[k] = min(instance.jobs[k].work, by_done.done.get(jid, 0.0)) * (1 - 1e-9)
    when = gangs.done_times(target)
    for jid, comp in schedule.completion.items():
        k = idx[jid]
        t_done = float(when[k])
        if not np.isfinite(t_done):
            continue  # a job with no work to do (work is > 0: never here)
        latest = t_done + cons
        if caps.time == "slots":
            # the end of the slot the work got done in (generous by one slot exactly at
            # a boundary, where rounding may put it either side); a slotted model holds
            # whole slots: the job may keep GPUs it was planned (its last allocation) and
            # complete when it releases them
            d = float(grid or instance.slot)
            latest = max(math.ceil(t_done / d + 1e-6) * d, float(last[k])) + cons
        tol = TIME_TOL * max(1.0, abs(comp)) + 1e-6 * max(0.0, comp - instance.jobs[k].arrival)
        if comp > latest + tol:
            grain = ("at the end of its slot, or when it releases its last allocation"
                     if caps.time == "slots"
                     else "in continuous time")
            raise InvalidSchedule(
                f"completion.{jid}", comp,
                f"job {jid!r} did its work by t={t_done:g}"
                + (f" (+ consolidation {cons:g} s)" if cons else "")
                + f": a completion must be when the work is done ({grain}, {caps.source}), "
                f"at most {latest:g}")
