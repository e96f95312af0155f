r"""The one round-based cluster simulator shared by every online policy.

Mechanics (Gavel OSDI'20 §5 round mechanism; Tiresias NSDI'19 §4 event-driven scheduler)
----------------------------------------------------------------------------------------
* Time advances in *decision epochs*. A round-based policy (``event_driven = False``) is
  called at round boundaries ``t, t + slot, t + 2 slot, ...`` with ``slot =
  instance.slot``; a job arriving inside a round becomes visible at the next boundary.
  An event-driven policy is also called at every arrival and completion instant (the
  epoch ends at ``min(t + slot, next arrival, first completion)``).
* When no job is waiting or running, the simulator jumps to the next arrival, which
  starts a new round grid (no empty rounds are looped over).
* During an epoch the allocation is fixed. A gang of :math:`W_j` workers using GPU types
  :math:`K_j` progresses at :math:`W_j \min_{k \in K_j} T_{jk}` iterations/s (synchronous
  data parallelism waits for the slowest worker), times the share factor and the
  CPU/DRAM sensitivity when the policy declares ``sharing`` / ``resource_sensitive``:
  the rule is :func:`optsched.core.progress.gang_rate`, the one the validator credits. With
  ``forking`` each copy is a gang and the copies' rates add up. A job whose remaining
  work :math:`r_j` runs out inside the epoch has its work done at the exact instant
  :math:`t + r_j / R_j` and completes then (plus the policy's ``consolidation`` seconds,
  during which it holds nothing and is no longer shown to the policy); its GPUs
  stay idle for the rest of the round (round-based policies) or are re-assigned at once
  (event-driven ones). An epoch also ends at the policy's ``horizon()`` if it gives one;
  a decision that runs nothing then jumps straight to that instant (or the next arrival).
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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import gang_rate
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption
from optsched.progressbar import ProgressBar
from optsched.sim.policy import ClusterView, Placement, Policy, PolicyViolation

__all__ = ["simulate", "SimStats"]

_EPS = 1e-9


@dataclass
class SimStats:
    """Counters reported in ``Result.extra``."""

    epochs: int = 0
    policy_calls: int = 0
    policy_seconds: float = 0.0
    idle_jumps: int = 0


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
        Show a progress bar of jobs completed (:class:`optsched.progressbar.ProgressBar`:
        ``None`` only when stderr is a terminal, ``True`` always).
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
    check = getattr(policy, "check", None)
    if callable(check):  # the policy's own model may exclude the instance
        check(instance)
    reset = getattr(policy, "reset", None)
    if callable(reset):
        reset()
    pname = str(policy.name)
    needs_work = bool(policy.needs_work)
    event_driven = bool(policy.event_driven)
    caps = _Caps(sharing=bool(getattr(policy, "sharing", False)),
                 forking=bool(getattr(policy, "forking", False)),
                 resource_sensitive=bool(getattr(policy, "resource_sensitive", False)))
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
    rate_memo: dict[tuple, float] = {}

    t = float(arrival[order[0]]) if n else 0.0
    with ProgressBar(n, f"simulate {pname}", progress) as bar:
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
                remaining_=remaining[ix] if needs_work else None,
                sensitivities=tuple(sens[i] for i in active),
                gpu_memories=tuple(gmem[i] for i in active),
                compute_shares=tuple(ushare[i] for i in active))
            c0 = _time.perf_counter()
            placements = list(policy.allocate(view))
            wake = horizon() if horizon is not None else None
            stats.policy_seconds += _time.perf_counter() - c0
            stats.policy_calls += 1
            gangs = _check(pname, t, placements, set(active), idx_of, node_cap, node_res,
                           tindex, W, T, caps)
            if on_epoch is not None:
                on_epoch(t, placements)
            # per-job rate: the validator's rule per (job, copy), copies adding up
            rate: dict[int, float] = {}
            for i, copies in gangs.items():
                r = 0.0
                for ps in copies.values():
                    key = (i, *ps)
                    v = rate_memo.get(key)
                    if v is None:  # gang_rate is pure: memoised per (job, placements)
                        if len(rate_memo) > 200_000:
                            rate_memo.clear()
                        v = rate_memo[key] = gang_rate(jobs[i], ps, caps.resource_sensitive)
                    r += v
                rate[i] = r
            # epoch end
            end = t + slot
            if event_driven:
                end = min(end, next_arrival)
                for i, r in rate.items():
                    if r > 0:
                        end = min(end, t + remaining[i] / r)
            if wake is not None:
                end = min(end, float(wake))
            if event_driven or wake is not None:
                end = max(end, t + _EPS)
            if max_time is not None:
                end = min(end, max_time)
            # preemptions / migrations
            sig = {i: tuple(sorted(p for ps in copies.values() for p in ps))
                   for i, copies in gangs.items()}
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
            for i, copies in gangs.items():
                r = rate[i]
                fin = t + remaining[i] / r if r > 0 else math.inf
                if fin <= end + _EPS * max(1.0, abs(end)):
                    stop = fin
                    remaining[i] = 0.0
                    completion[jobs[i].id] = fin + kappa
                    finished.append(i)
                else:
                    stop = end
                    remaining[i] -= r * (end - t)
                dt = stop - t
                executed[i] += dt
                held = 0.0
                rounds[i] += 1
                for ps in copies.values():
                    for p in ps:
                        held += p.gpus * p.share
                        on_type[i, tindex[p.gpu_type]] += dt * p.gpus / W[i]
                        key = (jobs[i].id, p.node, p.gpu_type, p.gpus, p.cpus, p.memory, p.copy,
                               p.share)
                        seg = open_.get(key)
                        if seg is not None and abs(seg[1] - t) <= _EPS:
                            seg[1] = stop
                        else:
                            if seg is not None:
                                closed.append((key, seg[0], seg[1]))
                            open_[key] = [t, stop]
                attained[i] += held * dt
            stats.epochs += 1
            if finished:
                done = set(finished)
                active = [i for i in active if i not in done]
                bar.advance(len(finished))
            prev = tuple(p for i, copies in gangs.items() if i not in done
                         for ps in copies.values() for p in ps)
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
                continue
            t = end
    closed.extend((k, s[0], s[1]) for k, s in open_.items())
    allocs = [Allocation(k[0], s, e, k[1], k[2], k[3], cpus=k[4], memory=k[5], copy=k[6],
                         share=k[7]) for k, s, e in closed if e > s]
    allocs.sort(key=lambda a: (a.start, a.job, a.node, a.gpu_type, a.copy))
    schedule = Schedule(tuple(allocs), completion, sharing=caps.sharing, forking=caps.forking,
                        consolidation=kappa, resource_sensitive=caps.resource_sensitive)
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


@dataclass(frozen=True)
class _Caps:
    sharing: bool = False
    forking: bool = False
    resource_sensitive: bool = False


def _num(pname: str, t: float, jid: str, what: str, v: Any) -> float:
    if type(v) is float and -math.inf < v < math.inf:  # the common case, fast
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(v):
        raise PolicyViolation(pname, t, f"job {jid!r}: {what} must be a finite number, "
                              f"got {v!r}")
    return float(v)


_DEFAULTS = (0.0, 0.0, 0, 1.0)


def _checked(pname: str, t: float, jid: str, node: str, typ: str, g: int, cpus: Any,
             mem: Any, copy: Any, share: Any, caps: _Caps) -> Placement:
    """Check a placement's CPU, DRAM, copy and share fields; return it canonical."""
    cpus = _num(pname, t, jid, "cpus", cpus)
    mem = _num(pname, t, jid, "memory", mem)
    share = _num(pname, t, jid, "share", share)
    if cpus < 0 or mem < 0:
        raise PolicyViolation(pname, t, f"job {jid!r}: cpus and memory must be >= 0")
    if not (0 < share <= 1) or (share < 1 and not caps.sharing):
        raise PolicyViolation(pname, t, f"job {jid!r}: share {share!r} must be in (0, 1] "
                              "and below 1 only for a policy that declares sharing")
    if type(copy) is not int:
        if isinstance(copy, bool) or not isinstance(copy, np.integer):
            raise PolicyViolation(pname, t, f"job {jid!r}: copy must be an integer, "
                                  f"got {copy!r}")
        copy = int(copy)
    if copy != 0 and not caps.forking:
        raise PolicyViolation(pname, t, f"job {jid!r}: copy {copy} needs a policy that "
                              "declares forking")
    return Placement(jid, node, typ, g, cpus, mem, copy, share)


def _check(pname: str, t: float, placements: list, active: set[int], idx_of: dict[str, int],
           node_cap: dict[tuple[str, str], int], node_res: dict[str, tuple[float, float]],
           tindex: dict[str, int], W: np.ndarray, T: np.ndarray,
           caps: _Caps = _Caps()) -> dict[int, dict[int, list[Placement]]]:
    """Validate one decision; return placements grouped by job index, then copy id."""
    used: dict[tuple[str, str], float] = {}
    res_used: dict[str, list[float]] = {}
    gangs: dict[int, dict[int, list[Placement]]] = {}
    for p in placements:
        if type(p) is not Placement:
            if not isinstance(p, tuple) or not 4 <= len(p) <= 8:
                raise PolicyViolation(pname, t, f"placement {p!r} is not (job_id, node, "
                                      "gpu_type, gpus[, cpus, memory, copy, share])")
            p = Placement(*p)
        jid, node, typ, g, cpus, mem, copy, share = p
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
        if g < 1:
            raise PolicyViolation(pname, t, f"job {jid!r}: gpus must be a positive integer, "
                                  f"got {g!r}")
        if T[i, tindex[typ]] <= 0:
            raise PolicyViolation(pname, t, f"job {jid!r} cannot run on {typ!r}")
        if (cpus, mem, copy, share) == _DEFAULTS and type(copy) is int:  # whole GPUs only
            cpus, mem, copy, share = _DEFAULTS
            if type(p) is not Placement or type(p.gpus) is not int:
                p = Placement(jid, node, typ, g)
        else:
            p = _checked(pname, t, jid, node, typ, g, cpus, mem, copy, share, caps)
            cpus, mem, copy, share = p[4:]
        u = used.get(key, 0.0) + g * share
        if u > cap + 1e-9:
            raise PolicyViolation(pname, t, f"over-allocation: {u:g} GPUs of type "
                                  f"{typ!r} on node {node!r} (capacity {cap})")
        used[key] = u
        if cpus or mem:
            r = res_used.setdefault(node, [0.0, 0.0])
            r[0] += cpus
            r[1] += mem
            for k, what in ((0, "CPU cores"), (1, "GB of DRAM")):
                c = node_res[node][k]
                if r[k] > c * (1 + 1e-9) + 1e-9:
                    raise PolicyViolation(pname, t, f"over-allocation: {r[k]:g} {what} on "
                                          f"node {node!r} (capacity {c:g})")
        gangs.setdefault(i, {}).setdefault(copy, []).append(p)
    for i, copies in gangs.items():
        jid = next(iter(copies.values()))[0].job_id
        if caps.forking:
            nodes_of: dict[str, int] = {}
            for c, ps in copies.items():
                g = sum(p.gpus for p in ps)
                nd = {p.node for p in ps}
                if len(nd) != 1 or g > W[i]:
                    raise PolicyViolation(pname, t, f"job {jid!r} copy {c}: a copy must hold "
                                          f"1..{int(W[i])} GPUs on one node, got {g} on "
                                          f"{sorted(nd)}")
                h = next(iter(nd))
                if h in nodes_of:
                    raise PolicyViolation(pname, t, f"job {jid!r}: copies {nodes_of[h]} and "
                                          f"{c} on one node {h!r}")
                nodes_of[h] = c
        else:
            g = sum(p.gpus for p in copies[0])
            if g != W[i]:
                raise PolicyViolation(pname, t, f"job {jid!r}: gang of {int(W[i])} GPUs "
                                      f"required, got {g}")
        for c, ps in copies.items():
            if len(ps) == 1:
                continue
            # merge duplicates (same node, type, share and per-GPU CPU/DRAM) so the
            # recorded schedule is canonical and the gang's rate unchanged
            merged: dict[tuple, list[float]] = {}
            for p in ps:
                k = (p.node, p.gpu_type, p.share, p.cpus / p.gpus, p.memory / p.gpus)
                m = merged.setdefault(k, [0, 0.0, 0.0])
                m[0] += p.gpus
                m[1] += p.cpus
                m[2] += p.memory
            copies[c] = [Placement(jid, k[0], k[1], int(m[0]), m[1], m[2], c, k[2])
                         for k, m in sorted(merged.items())]
        gangs[i] = dict(sorted(copies.items()))
    return dict(sorted(gangs.items()))
