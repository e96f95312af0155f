r"""The one round-based cluster simulator shared by every online policy.

Mechanics (Gavel OSDI'20 §5 round mechanism; Tiresias NSDI'19 §4 event-driven scheduler)
-----------------------------------------------------------------------------------
* Time advances in *decision epochs*. A round-based policy (``event_driven = False``) is
  called at round boundaries ``t, t + slot, t + 2 slot, ...`` with ``slot =
  instance.slot``; a job arriving inside a round becomes visible at the next boundary.
  An event-driven policy is also called at every arrival and completion instant (the
  epoch ends at ``min(t + slot, next arrival, first completion)``).
* When no job is waiting or running, the simulator jumps to the next arrival, which
  starts a new round grid (no empty rounds are looped over).
* During an epoch the allocation is fixed. A gang of :math:`W_j` workers using GPU types
  :math:`K_j` progresses at :math:`W_j \min_{k \in K_j} T_{jk}` iterations/s (synchronous
  data parallelism waits for the slowest worker). A job whose remaining work
  :math:`r_j` runs out inside the epoch completes at the exact instant
  :math:`t + r_j / (W_j \min_k T_{jk})`; its GPUs stay idle for the rest of the round
  (round-based policies) or are re-assigned at once (event-driven ones).
* A *preemption* is counted when a job that ran in the previous epoch is unfinished and
  gets no GPU in the next; a *migration* when it keeps running on a different placement.
* Every decision is checked before it is executed: known node and type, positive
  integer GPU counts, no node/type over-allocation, each gang exactly ``workers`` wide,
  only arrived unfinished jobs, only types the job can run on. A violation raises
  :class:`~optsched.sim.policy.PolicyViolation` naming the policy.
* The schedule (back-to-back identical allocations merged) goes through
  :func:`optsched.registry.finalize` (independent validator + metrics).

Determinism: the only randomness is ``ClusterView.rng``, a ``numpy`` generator seeded
with ``seed``; iteration orders are fixed (arrival, then instance order).
"""

from __future__ import annotations

import math
import sys
import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidOption
from ..instance import Instance
from ..registry import finalize
from ..result import Result, Status
from ..schedule import Allocation, Schedule
from .policy import ClusterView, Placement, Policy, PolicyViolation

__all__ = ["simulate", "SimStats"]

_EPS = 1e-9


@dataclass
class SimStats:
    """Counters reported in ``Result.extra``."""

    epochs: int = 0
    policy_calls: int = 0
    policy_seconds: float = 0.0
    idle_jumps: int = 0


def _progress_bar(enabled: bool | None, total: int, label: str):
    """A rich progress bar when stderr is a terminal (or forced), else ``None``."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None
    try:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    except ImportError:  # pragma: no cover - rich is a soft dependency
        return None
    from rich.console import Console
    bar = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    bar.start()
    task = bar.add_task(label, total=total)
    return bar, task


def simulate(instance: Instance, policy: Policy, *, seed: int = 0, progress: bool | None = None,
             max_time: float | None = None,
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
        Show a rich progress bar (jobs completed); ``None``: only when stderr is a TTY.
    max_time : float or None
        Stop at this simulated time; unfinished jobs are left out of ``completion``.
    on_epoch : callable, optional
        ``on_epoch(t, placements)`` after each checked decision (for tests/tracing).

    Returns
    -------
    Result
        ``status`` FEASIBLE, ``objective`` = mean JCT of completed jobs, ``schedule``
        (merged intervals), ``metrics``; ``extra`` holds per-job preemptions and
        migrations, epoch/policy-call counts, policy and simulation wall seconds.
    """
    for attr in ("name", "needs_work", "event_driven", "allocate"):
        if not hasattr(policy, attr):
            raise InvalidOption("policy", policy, f"not a Policy: missing {attr!r}")
    if max_time is not None and not (max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    wall0 = _time.perf_counter()
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    pname = str(policy.name)
    needs_work = bool(policy.needs_work)
    event_driven = bool(policy.event_driven)
    rng = np.random.default_rng(seed)

    cl = instance.cluster
    types = cl.gpu_types
    tindex = {t: k for k, t in enumerate(types)}
    node_cap = {(n.name, t): int(c) for n in cl.nodes for t, c in n.gpus.items() if c > 0}
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
    executed = np.zeros(n)
    attained = np.zeros(n)
    on_type = np.zeros((n, len(types)))
    rounds = np.zeros(n, dtype=np.int64)
    preempt = np.zeros(n, dtype=np.int64)
    migrate = np.zeros(n, dtype=np.int64)
    completion: dict[str, float] = {}
    active: list[int] = []  # arrived, unfinished (arrival order)
    ptr = 0
    prev: tuple[Placement, ...] = ()
    prev_sig: dict[int, tuple] = {}
    open_: dict[tuple, list[float]] = {}
    closed: list[tuple[tuple, float, float]] = []
    stats = SimStats()

    bar = _progress_bar(progress, n, f"simulate {pname}")
    t = float(arrival[order[0]]) if n else 0.0
    try:
        while True:
            while ptr < n and arrival[order[ptr]] <= t + _EPS:
                active.append(int(order[ptr]))
                ptr += 1
            if max_time is not None and t >= max_time - _EPS:
                break
            next_arrival = float(arrival[order[ptr]]) if ptr < n else math.inf
            if not active:
                if ptr >= n:
                    break
                t = next_arrival
                stats.idle_jumps += 1
                prev, prev_sig = (), {}
                continue
            ix = np.fromiter(active, dtype=np.int64, count=len(active))
            view = ClusterView(
                time=t, slot=slot, cluster=cl, ids=tuple(job_ids[i] for i in active), index=ix,
                throughput_matrix=T[ix], workers=W[ix], arrivals=arrival[ix],
                weights=weights[ix], attained=attained[ix], executed=executed[ix],
                time_on_types=on_type[ix], rounds_received=rounds[ix],
                preemptions=preempt[ix], previous=prev, needs_work=needs_work, rng=rng,
                policy_name=pname, throughput_maps=tuple(tmaps[i] for i in active),
                work_=work[ix] if needs_work else None,
                remaining_=remaining[ix] if needs_work else None)
            c0 = _time.perf_counter()
            placements = list(policy.allocate(view))
            stats.policy_seconds += _time.perf_counter() - c0
            stats.policy_calls += 1
            gangs = _check(pname, t, placements, set(active), idx_of, node_cap, tindex, W, T)
            if on_epoch is not None:
                on_epoch(t, placements)
            # epoch end
            end = t + slot
            rate = {i: W[i] * min(T[i, tindex[p.gpu_type]] for p in ps) for i, ps in gangs.items()}
            if event_driven:
                end = min(end, next_arrival)
                for i, r in rate.items():
                    end = min(end, t + remaining[i] / r)
                end = max(end, t + _EPS)
            if max_time is not None:
                end = min(end, max_time)
            # preemptions / migrations
            sig = {i: tuple(sorted((p.node, p.gpu_type, p.gpus) for p in ps))
                   for i, ps in gangs.items()}
            for i, s in prev_sig.items():
                if completion.get(jobs[i].id) is not None:
                    continue
                if i not in sig:
                    preempt[i] += 1
                elif sig[i] != s:
                    migrate[i] += 1
            prev_sig = sig
            finished: list[int] = []
            done: set[int] = set()
            for i, ps in gangs.items():
                r = rate[i]
                fin = t + remaining[i] / r
                if fin <= end + _EPS * max(1.0, abs(end)):
                    stop = fin
                    remaining[i] = 0.0
                    completion[jobs[i].id] = fin
                    finished.append(i)
                else:
                    stop = end
                    remaining[i] -= r * (end - t)
                dt = stop - t
                executed[i] += dt
                attained[i] += W[i] * dt
                rounds[i] += 1
                for p in ps:
                    on_type[i, tindex[p.gpu_type]] += dt * p.gpus / W[i]
                    key = (jobs[i].id, p.node, p.gpu_type, p.gpus)
                    seg = open_.get(key)
                    if seg is not None and abs(seg[1] - t) <= _EPS:
                        seg[1] = stop
                    else:
                        if seg is not None:
                            closed.append((key, seg[0], seg[1]))
                        open_[key] = [t, stop]
            stats.epochs += 1
            if finished:
                done = set(finished)
                active = [i for i in active if i not in done]
                if bar is not None:
                    bar[0].update(bar[1], advance=len(finished))
            prev = tuple(Placement(*p) for p in placements if idx_of[p[0]] not in done)
            if not gangs:
                # nothing runs: nothing changes until the next arrival
                if ptr >= n:
                    raise PolicyViolation(pname, t, f"allocated nothing to {len(active)} waiting "
                                          "job(s) on an idle cluster with no future arrival "
                                          "(the simulation would never end)")
                stats.idle_jumps += 1
                t = max(end, next_arrival) if not event_driven else next_arrival
                prev, prev_sig = (), {}
                continue
            t = end
    finally:
        if bar is not None:
            bar[0].stop()
    closed.extend((k, s[0], s[1]) for k, s in open_.items())
    allocs = [Allocation(k[0], s, e, k[1], k[2], k[3]) for k, s, e in closed if e > s]
    allocs.sort(key=lambda a: (a.start, a.job, a.node, a.gpu_type))
    schedule = Schedule(tuple(allocs), completion)
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
        "unfinished": [j.id for j in jobs if j.id not in completion],
        "max_time": max_time,
    }
    extra.update(getattr(policy, "stats", lambda: {})())
    res = finalize(instance, schedule, status=Status.FEASIBLE, model="simulate", method=pname,
                   solve_seconds=wall, extra=extra,
                   message=f"simulated {len(completion)}/{n} jobs with policy {pname!r}")
    mean = res.metrics.mean_jct if res.metrics is not None else None
    return res.replace(objective=mean)


def _check(pname: str, t: float, placements: list, active: set[int], idx_of: dict[str, int],
           node_cap: dict[tuple[str, str], int], tindex: dict[str, int], W: np.ndarray,
           T: np.ndarray) -> dict[int, list[Placement]]:
    """Validate one decision; return the placements grouped by job index."""
    used: dict[tuple[str, str], int] = {}
    gangs: dict[int, list[Placement]] = {}
    for p in placements:
        if type(p) is not Placement:
            if not isinstance(p, tuple) or len(p) != 4:
                raise PolicyViolation(pname, t, f"placement {p!r} is not (job_id, node, "
                                      "gpu_type, gpus)")
            p = Placement(*p)
        jid, node, typ, g = p
        i = idx_of.get(jid)
        if i is None:
            raise PolicyViolation(pname, t, f"unknown job {jid!r}")
        if i not in active:
            raise PolicyViolation(pname, t, f"job {jid!r} has not arrived or is finished")
        key = (node, typ)
        cap = node_cap.get(key)
        if cap is None:
            raise PolicyViolation(pname, t, f"node {node!r} has no GPU of type {typ!r}")
        if type(g) is not int:
            if isinstance(g, bool) or not isinstance(g, np.integer):
                raise PolicyViolation(pname, t, f"job {jid!r}: gpus must be a positive "
                                      f"integer, got {g!r}")
            g = int(g)
            p = Placement(jid, node, typ, g)
        if g < 1:
            raise PolicyViolation(pname, t, f"job {jid!r}: gpus must be a positive integer, "
                                  f"got {g!r}")
        if T[i, tindex[typ]] <= 0:
            raise PolicyViolation(pname, t, f"job {jid!r} cannot run on {typ!r}")
        u = used.get(key, 0) + g
        if u > cap:
            raise PolicyViolation(pname, t, f"over-allocation: {u} GPUs of type "
                                  f"{typ!r} on node {node!r} (capacity {cap})")
        used[key] = u
        gangs.setdefault(i, []).append(p)
    for i, ps in gangs.items():
        g = sum(p.gpus for p in ps)
        if g != W[i]:
            raise PolicyViolation(pname, t, f"job {ps[0].job_id!r}: gang of {int(W[i])} GPUs "
                                  f"required, got {g}")
        if len(ps) == 1:
            continue
        # merge duplicates (same node and type) so the recorded schedule is canonical
        merged: dict[tuple[str, str], int] = {}
        for p in ps:
            merged[(p.node, p.gpu_type)] = merged.get((p.node, p.gpu_type), 0) + p.gpus
        gangs[i] = [Placement(ps[0].job_id, nd, ty, g_) for (nd, ty), g_ in sorted(merged.items())]
    return dict(sorted(gangs.items()))
