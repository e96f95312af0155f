"""A second, plain statement of the schedule rules: the reference the vectorised
validator (:mod:`optsched.core.validate`) is held to in
tests/core/test_validate_equivalence.py.

It imports nothing that states a rule: not :mod:`optsched.core.rules`, not
:mod:`optsched.core.progress`, not the validator. It reads only the instance (its jobs'
``rate``, ``arrival``, ``workers``, ``work``, ``compute_share`` and the sensitivity's
``relative``) and the schedule, loops over allocations and elementary intervals one at
a time, and writes every rule and every message out again, so that a change to one of
the package's rules (a comparison, a tolerance, a message) makes the two disagree.

The rules, in the order they are checked (the first broken one raises
:class:`~optsched.errors.InvalidSchedule` with the path, value and message below):

1. **Allocations**, in order: known job; known node; finite ``start < end``; no start
   before the job's arrival (tolerance :data:`TIME_TOL`); then :func:`placement_reason`:
   the node has GPUs of the type; ``gpus`` a positive ``int`` (not ``bool``); the job
   runs on the type; ``cpus``, ``memory`` finite and ``>= 0``; ``0 < share <= 1`` and
   ``share < 1`` only with sharing; ``copy`` an ``int`` (not ``bool``), other than 0
   only with forking.
2. **Capacity**: per (node, type), in order of first allocation, the GPUs held
   (times ``share`` with sharing) never exceed the node's count by more than
   :data:`GPU_TOL`; then per node, in order of first allocation, CPU cores and then
   DRAM never exceed the node's by more than :data:`RESOURCE_TOL` (relative and
   absolute). Allocations are half-open ``[start, end)``.
3. **Gangs**: per (job, copy), in order of first allocation, and per elementary
   interval in time order (:func:`gang_reason`): without forking exactly ``workers``
   GPUs (1..``workers`` under the ``"partial"`` progress rule); with forking a copy
   holds 1..``workers`` GPUs on one node; then, with forking, no two copies of a job on
   one node at once (:func:`copies_reason`).
   Speed of an interval (:func:`gang_speed`): share factor ``min(1, s / u)`` (``s``
   alone when ``compute_share`` is unset; ``s`` the least share of the gang) times
   ``g x`` the slowest per-worker rate (``"gang"``, ``"partial"``) or the summed
   per-worker rates (``"additive"``), times the least CPU/DRAM sensitivity factor in a
   resource-sensitive schedule. With forking the copies' speeds add up; with
   ``copy_efficiency`` e < 1 the fastest copy counts in full at every instant and the
   others at e.
4. **Completion**, per declared job in order: a known job; finite and not before
   arrival; nothing held after it; and at least ``work`` iterations (relative
   tolerance :data:`REL_TOL`) by ``completion - consolidation``.
5. **Every finished job declared**, in instance order: a job that did its ``work`` but
   is absent from ``completion`` is refused.
6. **Completion when the work is done**, per declared job: no later than the instant
   its work (or what it did by its cutoff) was reached, plus ``consolidation``; in
   ``"slots"`` time no later than the end of the slot that instant falls in, or than
   the end of the job's last allocation.

To extend it with a new rule: add the check at its place in this order, with the
message the package uses, and a case drawing it in the test's strategy.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from optsched.core.instance import Instance
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidSchedule

REL_TOL = 1e-6
TIME_TOL = 1e-6
GPU_TOL = 1e-9
RESOURCE_TOL = 1e-9


@dataclass(frozen=True)
class Done:
    """Iterations done per job (the part of the validator's ``Progress`` compared)."""

    done: dict[str, float]


def _fail(i: int, a: Allocation, reason: str) -> None:
    raise InvalidSchedule(f"allocations[{i}]", a.to_dict(), reason)


# --------------------------------------------------------------------------- rule 1
def placement_reason(a: Allocation, node_gpus: int, rate: float, sharing: bool,
                     forking: bool) -> str | None:
    """Rule 1 past the names and the interval: the first broken part, or ``None``."""
    job = a.job
    if node_gpus <= 0:
        return f"node {a.node!r} has no GPU of type {a.gpu_type!r}"
    if isinstance(a.gpus, bool) or not isinstance(a.gpus, int) or a.gpus < 1:
        return f"job {job!r}: gpus must be a positive integer, got {a.gpus!r}"
    if not rate > 0:
        return f"job {job!r} cannot run on {a.gpu_type!r}"
    if not (math.isfinite(a.cpus) and math.isfinite(a.memory)) or a.cpus < 0 or a.memory < 0:
        return f"job {job!r}: cpus and memory must be finite numbers >= 0"
    if not 0 < a.share <= 1 or (a.share < 1 and not sharing):
        return (f"job {job!r}: share {a.share!r} must be in (0, 1], and below 1 only where "
                "sharing is declared")
    if isinstance(a.copy, bool) or not isinstance(a.copy, int):
        return f"job {job!r}: copy must be an integer, got {a.copy!r}"
    if a.copy != 0 and not forking:
        return f"job {job!r}: copy {a.copy} (other than 0) needs forking to be declared"
    return None


def check_allocation(instance: Instance, schedule: Schedule, i: int, a: Allocation) -> None:
    nodes = {n.name: n for n in instance.cluster.nodes}
    if a.job not in instance.job_index:
        _fail(i, a, f"unknown job {a.job!r}")
    j = instance.job(a.job)
    if a.node not in nodes:
        _fail(i, a, f"unknown node {a.node!r}")
    if not (math.isfinite(a.start) and math.isfinite(a.end)) or not a.end > a.start:
        _fail(i, a, "interval must satisfy start < end (finite)")
    if a.start < j.arrival - TIME_TOL:
        _fail(i, a, f"starts at {a.start:g} before job {a.job!r} arrives at {j.arrival:g}")
    reason = placement_reason(a, nodes[a.node].gpus.get(a.gpu_type, 0), j.rate(a.gpu_type),
                              schedule.sharing, schedule.forking)
    if reason is not None:
        _fail(i, a, reason)


# --------------------------------------------------------------------------- rule 2
def peak_use(spans: list[tuple[float, float, float]]) -> tuple[float, float]:
    """The largest summed amount held at one instant by ``(start, end, amount)`` spans,
    half-open, and the first instant it is reached."""
    best, when = -math.inf, 0.0
    for t in sorted({s for s, _, _ in spans}):
        level = 0.0
        for s, e, amount in spans:
            if s <= t < e:
                level += amount
        if level > best:
            best, when = level, t
    return best, when


def check_capacity(instance: Instance, schedule: Schedule) -> None:
    nodes = {n.name: n for n in instance.cluster.nodes}
    groups: dict[tuple[str, str], list[Allocation]] = defaultdict(list)
    per_node: dict[str, list[Allocation]] = defaultdict(list)
    for a in schedule.allocations:
        groups[(a.node, a.gpu_type)].append(a)
        per_node[a.node].append(a)
    for (node, typ), allocs in groups.items():
        held = [(a.start, a.end, a.gpus * (a.share if schedule.sharing else 1.0))
                for a in allocs]
        peak, when = peak_use(held)
        cap = nodes[node].gpus[typ]
        if peak > cap + GPU_TOL:
            raise InvalidSchedule(f"node {node!r} type {typ!r}", peak,
                                  f"{peak:g} GPUs in use at t={when:g}, capacity {cap}")
    for node, allocs in per_node.items():
        for attr in ("cpus", "memory"):
            if not any(getattr(a, attr) for a in allocs):
                continue
            limit = getattr(nodes[node], attr)
            peak, when = peak_use([(a.start, a.end, float(getattr(a, attr))) for a in allocs])
            if peak > limit * (1 + RESOURCE_TOL) + RESOURCE_TOL:
                raise InvalidSchedule(f"node {node!r} {attr}", peak,
                                      f"{peak:g} in use at t={when:g}, capacity {limit:g}")


# --------------------------------------------------------------------------- rule 3
def gang_reason(job: str, workers: int, copy: int, gpus: int, nodes: set[str],
                forking: bool, progress_rule: str) -> str | None:
    if forking:
        if len(nodes) != 1 or not 1 <= gpus <= workers:
            return (f"job {job!r} copy {copy}: a copy must hold 1..{workers} GPUs on one "
                    f"node, holds {gpus} on {sorted(nodes)}")
        return None
    if progress_rule == "partial":
        if not 1 <= gpus <= workers:
            return (f"job {job!r}: a gang must hold 1..{workers} GPUs (progress rule "
                    f"partial), holds {gpus}")
        return None
    if gpus != workers:
        return f"job {job!r}: gang of {workers} GPUs required, holds {gpus}"
    return None


def copies_reason(job: str, node: str, first: int, second: int) -> str:
    return f"job {job!r}: copies {first} and {second} share node {node!r}"


def gang_speed(instance: Instance, schedule: Schedule, jid: str,
               parts: list[Allocation]) -> float:
    """Iterations per second of one gang during an elementary interval."""
    job = instance.job(jid)
    share = min(a.share for a in parts)
    if job.compute_share is not None:
        share = min(1.0, share / job.compute_share)
    sens = job.sensitivity if schedule.resource_sensitive else None
    if schedule.progress_rule == "additive":
        speed = float(sum(a.gpus * job.rate(a.gpu_type) for a in parts))
        if sens is not None:
            speed *= min(sens.relative(a.cpus / a.gpus, a.memory / a.gpus) for a in parts)
        return share * speed
    g = sum(a.gpus for a in parts)
    rate = min(job.rate(a.gpu_type) for a in parts)
    if sens is not None:
        rate *= min(sens.relative(a.cpus / a.gpus, a.memory / a.gpus) for a in parts)
    return share * g * rate


def elementary(allocs: list[Allocation]) -> list[tuple[float, float, list[Allocation]]]:
    """The intervals between consecutive endpoints where some allocation is active, with
    the active ones, in time order."""
    pts = sorted({a.start for a in allocs} | {a.end for a in allocs})
    out = []
    for t0, t1 in zip(pts, pts[1:]):
        act = [a for a in allocs if a.start <= t0 and a.end >= t1]
        if act:
            out.append((t0, t1, act))
    return out


def job_progress(instance: Instance, schedule: Schedule,
                 until: dict[str, float] | None = None) -> Done:
    """Rule 3 and the iterations each job does, counting time up to ``until[job]``.

    As the package's ``job_progress``, the allocations are taken to pass rule 1 except
    for names: the first allocation naming an unknown job, node or GPU type is checked
    (and raises)."""
    types = set(instance.cluster.gpu_types)
    nodes = {n.name for n in instance.cluster.nodes}
    for i, a in enumerate(schedule.allocations):
        if a.job not in instance.job_index or a.node not in nodes or a.gpu_type not in types:
            check_allocation(instance, schedule, i, a)
            break
    return _progress(instance, schedule, until)


def _runs(instance: Instance, schedule: Schedule
          ) -> dict[str, list[tuple[float, float, float]]]:
    """Per job, its (start, end, iterations per second) runs, copies at their efficiency;
    rule 3 checked on the way."""
    gangs: dict[tuple[str, int], list[Allocation]] = defaultdict(list)
    for a in schedule.allocations:
        gangs[(a.job, a.copy)].append(a)
    # (t0, t1, speed) per copy interval, per job in order of its first gang
    pieces: dict[str, list[tuple[float, float, float, str, int]]] = defaultdict(list)
    for (jid, copy), allocs in gangs.items():
        job = instance.job(jid)
        for t0, t1, act in elementary(allocs):
            g = sum(a.gpus for a in act)
            node_set = {a.node for a in act}
            reason = gang_reason(jid, job.workers, copy, g, node_set, schedule.forking,
                                 schedule.progress_rule)
            if reason is not None:
                raise InvalidSchedule(f"job {jid!r}", g, f"{reason} during [{t0:g}, {t1:g})")
            pieces[jid].append((t0, t1, gang_speed(instance, schedule, jid, act),
                                next(iter(node_set)), copy))
    if schedule.forking:
        for jid, spans in pieces.items():
            active: dict[str, tuple[float, int]] = {}
            for t0, t1, _, node, copy in sorted(spans, key=lambda p: (p[0], p[1], p[3], p[4])):
                prev = active.get(node)
                if prev is not None and prev[0] > t0 + TIME_TOL and prev[1] != copy:
                    raise InvalidSchedule(f"job {jid!r}", node,
                                          f"{copies_reason(jid, node, prev[1], copy)} at "
                                          f"t={t0:g}")
                active[node] = (t1, copy)
    e = schedule.copy_efficiency
    runs_of: dict[str, list[tuple[float, float, float]]] = {}
    for jid, spans in pieces.items():
        runs = [(t0, t1, v) for t0, t1, v, _, _ in spans]
        if schedule.forking and e < 1:
            runs = _with_efficiency(runs, e)
        runs_of[jid] = runs
    return runs_of


def _progress(instance: Instance, schedule: Schedule, until: dict[str, float] | None) -> Done:
    done: dict[str, float] = {}
    for jid, runs in _runs(instance, schedule).items():
        cut = math.inf if until is None else until.get(jid, math.inf)
        for t0, t1, v in runs:
            hi = min(t1, cut)
            if hi > t0:
                done[jid] = done.get(jid, 0.0) + v * (hi - t0)
    return Done(done)


def done_time(runs: list[tuple[float, float, float]], target: float) -> float:
    """The first instant the runs' iterations reach ``target`` (``inf`` if never, or if
    the target is not positive): runs that overlap (copies) add up."""
    if target <= 0:
        return math.inf
    pts = sorted({t for t0, t1, _ in runs for t in (t0, t1)})
    got = 0.0
    for lo, hi in zip(pts, pts[1:]):
        rate = sum(v for t0, t1, v in runs if t0 <= lo and t1 >= hi)
        if rate <= 0:
            continue
        if got + rate * (hi - lo) >= target:
            return min(max(lo + (target - got) / rate, lo), hi)
        got += rate * (hi - lo)
    return math.inf


def _with_efficiency(runs: list[tuple[float, float, float]], e: float
                     ) -> list[tuple[float, float, float]]:
    """One job's copy intervals as pieces where the fastest copy running counts in full
    and every other at ``e``."""
    pts = sorted({t for t0, t1, _ in runs for t in (t0, t1)})
    out = []
    for lo, hi in zip(pts, pts[1:]):
        on = [v for t0, t1, v in runs if t0 <= lo and t1 >= hi]
        if on:
            top = max(on)
            out.append((lo, hi, top + e * (sum(on) - top)))
    return out


# --------------------------------------------------------------------------- rules 4-6
def check_completion(instance: Instance, schedule: Schedule, done: Done, time: str,
                     source: str, grid: float | None) -> None:
    last_end: dict[str, float] = defaultdict(lambda: -math.inf)
    for a in schedule.allocations:
        last_end[a.job] = max(last_end[a.job], a.end)
    cutoff = {}
    for jid, c in schedule.completion.items():
        if jid not in instance.job_index:
            raise InvalidSchedule(f"completion.{jid}", c, "unknown job")
        j = instance.job(jid)
        if not math.isfinite(c) or c < j.arrival:
            raise InvalidSchedule(f"completion.{jid}", c, "completion before arrival")
        if last_end[jid] > c + TIME_TOL * max(1.0, abs(c)):
            raise InvalidSchedule(f"completion.{jid}", c,
                                  f"job holds resources until {last_end[jid]:g}, after completing")
        cutoff[jid] = c - schedule.consolidation
    by_done = _progress(instance, schedule, cutoff) if schedule.consolidation > 0 else done
    for jid, c in schedule.completion.items():
        work = instance.job(jid).work
        got = by_done.done.get(jid, 0.0)
        if got < work * (1 - REL_TOL):
            raise InvalidSchedule(f"completion.{jid}", c,
                                  f"job did {got:.6g} of its {work:.6g} iterations by then")
    # rule 6: a job that did its work is declared complete
    for j in instance.jobs:
        if j.id not in schedule.completion and done.done.get(j.id, 0.0) >= j.work * (1 - REL_TOL):
            raise InvalidSchedule(f"completion.{j.id}", None,
                                  f"job {j.id!r} did all its {j.work:.6g} iterations but has no "
                                  "completion time (a job absent from completion is "
                                  "unfinished): declare when it completed")
    # rule 5: the completion is when the work got done (continuous), or by the end of
    # the slot it got done in or of the job's last allocation (slots)
    runs = _runs(instance, schedule) if schedule.completion else {}
    cons = schedule.consolidation
    for jid, c in schedule.completion.items():
        j = instance.job(jid)
        target = min(j.work, by_done.done.get(jid, 0.0)) * (1 - 1e-9)
        t_done = done_time(runs.get(jid, []), target)
        if not math.isfinite(t_done):
            continue
        latest = t_done + cons
        if time == "slots":
            d = float(grid or instance.slot)
            latest = max(math.ceil(t_done / d + 1e-6) * d, last_end[jid]) + cons
        tol = TIME_TOL * max(1.0, abs(c)) + 1e-6 * max(0.0, c - j.arrival)
        if c > latest + tol:
            grain = ("at the end of its slot, or when it releases its last allocation"
                     if time == "slots" else "in continuous time")
            raise InvalidSchedule(
                f"completion.{jid}", c,
                f"job {jid!r} did its work by t={t_done:g}"
                + (f" (+ consolidation {cons:g} s)" if cons else "")
                + f": a completion must be when the work is done ({grain}, {source}), "
                f"at most {latest:g}")


def validate_schedule(instance: Instance, schedule: Schedule, *, time: str = "slots",
                      source: str = "the producing method", grid: float | None = None
                      ) -> Done:
    """Rules 1-6 in order under the rules ``schedule`` declares and the time granularity
    ``time``; the iterations done per job, or the first broken rule."""
    for i, a in enumerate(schedule.allocations):
        check_allocation(instance, schedule, i, a)
    check_capacity(instance, schedule)
    done = _progress(instance, schedule, None)
    check_completion(instance, schedule, done, time, source, grid)
    return done
