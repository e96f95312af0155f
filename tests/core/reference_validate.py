"""The validator as it was before it was vectorised: one Python loop per allocation and
per elementary interval. Kept as the reference the vectorised
:mod:`optsched.core.validate` is held to (tests/core/test_validate_equivalence.py):
same verdict, same error path, value and message, same progress.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import gang_rate
from optsched.core.rules import (
    copies_error,
    gang_error,
    gpu_overload,
    placement_error,
    resource_overload,
)
from optsched.core.schedule import Allocation, Schedule
from optsched.core.validate import Progress
from optsched.errors import InvalidSchedule

REL_TOL = 1e-6
TIME_TOL = 1e-6


def _fail(i: int | None, a: Allocation | None, reason: str, value=None) -> None:
    path = f"allocations[{i}]" if i is not None else "schedule"
    raise InvalidSchedule(path, value if value is not None else (a.to_dict() if a else None),
                          reason)


def validate_schedule(instance: Instance, schedule: Schedule) -> Progress:
    """Check ``schedule`` against ``instance``; return per-job progress or raise."""
    cl = instance.cluster
    nodes = {n.name: n for n in cl.nodes}
    sharing = schedule.sharing
    for i, a in enumerate(schedule.allocations):
        if a.job not in instance.job_index:
            _fail(i, a, f"unknown job {a.job!r}")
        j = instance.job(a.job)
        if a.node not in nodes:
            _fail(i, a, f"unknown node {a.node!r}")
        if not (np.isfinite(a.start) and np.isfinite(a.end)) or not a.end > a.start:
            _fail(i, a, "interval must satisfy start < end (finite)")
        if a.start < j.arrival - TIME_TOL:
            _fail(i, a, f"starts at {a.start:g} before job {a.job!r} arrives at {j.arrival:g}")
        reason = placement_error(a.job, a.node, a.gpu_type, nodes[a.node].gpus.get(a.gpu_type, 0),
                                 j.rate(a.gpu_type), a.gpus, a.cpus, a.memory, a.copy, a.share,
                                 sharing=sharing, forking=schedule.forking)
        if reason is not None:
            _fail(i, a, reason)
    _check_capacity(instance, schedule)
    done = job_progress(instance, schedule)
    _check_completion(instance, schedule, done)
    return done


def _sweep_max(starts: np.ndarray, ends: np.ndarray, amount: np.ndarray) -> tuple[float, float]:
    """Maximum of the summed ``amount`` over time, and an instant where it is reached."""
    t = np.concatenate([starts, ends])
    d = np.concatenate([amount, -amount])
    # at equal times releases come before acquisitions: [s, e) intervals
    order = np.lexsort((d, t))
    level = np.cumsum(d[order])
    k = int(np.argmax(level))
    return float(level[k]), float(t[order][k])


def _check_capacity(instance: Instance, schedule: Schedule) -> None:
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    per_node: dict[str, list[int]] = defaultdict(list)
    allocs = schedule.allocations
    for i, a in enumerate(allocs):
        groups[(a.node, a.gpu_type)].append(i)
        per_node[a.node].append(i)
    nodes = {n.name: n for n in instance.cluster.nodes}
    for (node, typ), idx in groups.items():
        s = np.array([allocs[i].start for i in idx])
        e = np.array([allocs[i].end for i in idx])
        g = np.array([allocs[i].gpus * (allocs[i].share if schedule.sharing else 1.0)
                      for i in idx])
        peak, when = _sweep_max(s, e, g)
        cap = nodes[node].gpus[typ]
        if gpu_overload(peak, cap):
            raise InvalidSchedule(f"node {node!r} type {typ!r}", peak,
                                  f"{peak:g} GPUs in use at t={when:g}, capacity {cap}")
    for node, idx in per_node.items():
        s = np.array([allocs[i].start for i in idx])
        e = np.array([allocs[i].end for i in idx])
        for attr, limit in (("cpus", nodes[node].cpus), ("memory", nodes[node].memory)):
            amt = np.array([getattr(allocs[i], attr) for i in idx], dtype=float)
            if not amt.any():
                continue
            peak, when = _sweep_max(s, e, amt)
            if resource_overload(peak, limit):
                raise InvalidSchedule(f"node {node!r} {attr}", peak,
                                      f"{peak:g} in use at t={when:g}, capacity {limit:g}")


def job_progress(instance: Instance, schedule: Schedule,
                 until: dict[str, float] | None = None) -> Progress:
    """Iterations done per job, checking gang rules (see module docstring).

    ``until`` optionally caps the time counted per job (used for completion checks).
    """
    by_copy: dict[tuple[str, int], list[int]] = defaultdict(list)
    allocs = schedule.allocations
    for i, a in enumerate(allocs):
        by_copy[(a.job, a.copy)].append(i)
    done: dict[str, float] = defaultdict(float)
    copy_nodes: dict[str, list[tuple[float, float, str, int]]] = defaultdict(list)
    for (jid, copy), idx in by_copy.items():
        job = instance.job(jid)
        cut = np.inf if until is None else until.get(jid, np.inf)
        idx = sorted(idx, key=lambda i: (allocs[i].start, allocs[i].end))
        if all(allocs[a].end <= allocs[b].start for a, b in zip(idx, idx[1:])):
            # no two allocations of this gang overlap: each is an elementary interval
            segments = [(allocs[i].start, allocs[i].end, [i]) for i in idx]
        else:
            segments = _elementary(allocs, idx)
        for t0, t1, act in segments:
            g = sum(allocs[i].gpus for i in act)
            speed = gang_rate(job, [allocs[i] for i in act], schedule.resource_sensitive)
            node_set = {allocs[i].node for i in act}
            reason = gang_error(jid, job.workers, copy, g, node_set, forking=schedule.forking)
            if reason is not None:
                raise InvalidSchedule(f"job {jid!r}", g, f"{reason} during [{t0:g}, {t1:g})")
            if schedule.forking:
                copy_nodes[jid].append((t0, t1, next(iter(node_set)), copy))
            lo, hi = t0, min(t1, cut)
            if hi > lo:
                done[jid] += speed * (hi - lo)
    if schedule.forking:
        for jid, spans in copy_nodes.items():
            spans.sort()
            active: dict[str, tuple[float, int]] = {}
            for t0, t1, node, copy in spans:
                prev = active.get(node)
                if prev is not None and prev[0] > t0 + TIME_TOL and prev[1] != copy:
                    raise InvalidSchedule(f"job {jid!r}", node,
                                          f"{copies_error(jid, node, prev[1], copy)} at "
                                          f"t={t0:g}")
                active[node] = (t1, copy)
    return Progress(dict(done))


def _elementary(allocs, idx: list[int]) -> list[tuple[float, float, list[int]]]:
    """Split overlapping allocations into intervals with a constant active set."""
    pts = sorted({allocs[i].start for i in idx} | {allocs[i].end for i in idx})
    starts = np.array([allocs[i].start for i in idx])
    ends = np.array([allocs[i].end for i in idx])
    out = []
    for t0, t1 in zip(pts, pts[1:]):
        if t1 - t0 <= 0:
            continue
        mid = 0.5 * (t0 + t1)
        act = [idx[k] for k in np.flatnonzero((starts <= mid) & (ends > mid))]
        if act:
            out.append((t0, t1, act))
    return out


def _check_completion(instance: Instance, schedule: Schedule, done: Progress) -> None:
    last_end: dict[str, float] = defaultdict(lambda: -np.inf)
    for a in schedule.allocations:
        last_end[a.job] = max(last_end[a.job], a.end)
    cons = schedule.consolidation
    cutoff = {}
    for jid, c in schedule.completion.items():
        if jid not in instance.job_index:
            raise InvalidSchedule(f"completion.{jid}", c, "unknown job")
        j = instance.job(jid)
        if not np.isfinite(c) or c < j.arrival:
            raise InvalidSchedule(f"completion.{jid}", c, "completion before arrival")
        if last_end[jid] > c + TIME_TOL * max(1.0, abs(c)):
            raise InvalidSchedule(f"completion.{jid}", c,
                                  f"job holds resources until {last_end[jid]:g}, after completing")
        cutoff[jid] = c - cons
    by_done = job_progress(instance, schedule, until=cutoff) if cons > 0 else done
    for jid in schedule.completion:
        j = instance.job(jid)
        got = by_done.done.get(jid, 0.0)
        if got < j.work * (1 - REL_TOL):
            raise InvalidSchedule(f"completion.{jid}", schedule.completion[jid],
                                  f"job did {got:.6g} of its {j.work:.6g} iterations by then")
