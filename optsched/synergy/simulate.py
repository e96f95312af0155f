r"""A round-based Synergy simulator: each round allocator under FIFO, SRTF, LAS or FTF.

The shared simulator (:mod:`optsched.sim`) places GPUs only: its ``Placement`` has no CPU
or DRAM, and a gang progresses at :math:`W_j \min_k T_{jk}` whatever CPU and memory it
holds. Synergy needs both (see ``docs/synergy.md``), so this module drives the Synergy
round allocators itself, with the same round mechanics:

* rounds of ``instance.slot`` seconds (300 s for :func:`~optsched.synergy.synergy_workload`);
  a job arriving inside a round waits for the next boundary; when nothing is queued or
  running the clock jumps to the next arrival;
* at each boundary the arrived, unfinished jobs are sorted by the policy and the round
  allocator (:func:`~optsched.synergy.prepare` + ``tune`` / ``greedy`` /
  ``proportional``) admits and places them (:mod:`optsched.synergy.heuristics`);
* a placed job progresses at :math:`g_j r_j T_j(c_j, m_j)` iterations/s; if its remaining
  work runs out inside the round it completes at that instant and its resources stay
  idle for the rest of the round (as round-based policies in :mod:`optsched.sim`).

Orders (Synergy ``schedulers/*_synergy_new.py``; ties by arrival, then instance index):

* ``fifo``: arrival time;
* ``srtf``: remaining time at the fair share, :math:`\text{rem}_j / (g_j r_j)`
  (clairvoyant);
* ``las``: attained service :math:`g_j \times` seconds run, least first;
* ``ftf``: finish-time fairness :math:`\rho_j = (t - a_j + \text{rem}_j/(g_j r_j)) /
  (E_j / (g_j r_j))`, largest first (Themis; Synergy ``ftf_synergy_new.py``).

Checks. Every round's allocation is validated on its own by the independent validator
against the round's effective instance (remaining work at the round start, throughput
scaled by :math:`T_j`), which checks GPU, CPU and DRAM capacity and that every job
declared complete in the round really did its remaining work. The whole schedule then
goes through :func:`~optsched.registry.finalize` against the instance with each
completed job's ``work`` replaced by the work-equivalent at :math:`T = 1` of its
allocations (:math:`\sum g_j r_j \Delta t`), since the validator knows nothing of
sensitivities; capacity, gangs, arrivals and "nothing held after completion" are checked
there again, and JCT, makespan and utilization come from it. ``Result.objective`` is the
mean JCT (s) of completed jobs.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import InvalidOption
from ..instance import Instance, Job
from ..registry import finalize
from ..result import Result, Status
from ..schedule import Allocation, Schedule, merge_intervals
from ..validate import validate_schedule
from .heuristics import allocate
from .model import prepare

__all__ = ["simulate_synergy", "ORDERS", "ALLOCATORS"]

ORDERS = ("fifo", "srtf", "las", "ftf")
ALLOCATORS = ("tune", "greedy", "proportional")
_EPS = 1e-9


def _order(kind: str, t: float, active: list[int], arrival, rem, fair_rate, work,
           attained) -> list[int]:
    if kind == "fifo":
        return sorted(active, key=lambda i: (arrival[i], i))
    if kind == "srtf":
        return sorted(active, key=lambda i: (rem[i] / fair_rate[i], arrival[i], i))
    if kind == "las":
        return sorted(active, key=lambda i: (attained[i], arrival[i], i))
    rho = {i: (t - arrival[i] + rem[i] / fair_rate[i]) / (work[i] / fair_rate[i])
           for i in active}
    return sorted(active, key=lambda i: (-rho[i], arrival[i], i))


def simulate_synergy(instance: Instance, allocator: str = "tune", order: str = "fifo", *,
                     max_time: float | None = None, check_rounds: bool = True) -> Result:
    """Simulate ``allocator`` with ``order`` over ``instance`` (module docstring).

    ``extra`` holds per-round statistics: ``rounds``, mean total normalized throughput
    per round, rounds in which some admitted job got less than its fair throughput
    (GREEDY), and wall seconds.
    """
    if allocator not in ALLOCATORS:
        raise InvalidOption("allocator", allocator, f"must be one of {ALLOCATORS}")
    if order not in ORDERS:
        raise InvalidOption("order", order, f"must be one of {ORDERS}")
    if max_time is not None and not (isinstance(max_time, (int, float)) and max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    wall = time.perf_counter()
    jobs = instance.jobs
    n = len(jobs)
    prepare(instance.replace(jobs=()))  # cluster applicability, before any work
    gtype = instance.cluster.gpu_types[0]
    arrival = instance.arrivals
    work = instance.work.astype(float)
    rem = work.copy()
    fair_rate = np.array([j.workers * j.rate(gtype) for j in jobs], dtype=float)
    attained = np.zeros(n)
    base_done = np.zeros(n)
    completion: dict[str, float] = {}
    allocs: list[Allocation] = []
    arr_order = sorted(range(n), key=lambda i: (arrival[i], i))
    ptr = 0
    active: list[int] = []
    slot = float(instance.slot)
    t = float(arrival[arr_order[0]]) if n else 0.0
    rounds = below = 0
    total_rel = 0.0
    while True:
        while ptr < n and arrival[arr_order[ptr]] <= t + _EPS:
            active.append(arr_order[ptr])
            ptr += 1
        if max_time is not None and t >= max_time - _EPS:
            break
        if not active:
            if ptr >= n:
                break
            t = float(arrival[arr_order[ptr]])
            continue
        ordered = _order(order, t, active, arrival, rem, fair_rate, work, attained)
        rnd = prepare(instance, start=t, order=[jobs[i].id for i in ordered])
        state, _ = allocate(rnd, allocator)
        end = t + slot if max_time is None else min(t + slot, max_time)
        rounds += 1
        below += any(state.placed.get(j) is None
                     or state.placed[j].rel < rnd.fair_rel[j] - 1e-9 for j in rnd.admitted)
        round_allocs, round_comp, eff_jobs = [], {}, {}
        finished = []
        for j, p in state.placed.items():
            job = jobs[j]
            rate = fair_rate[j] * p.rel
            total_rel += p.rel
            fin = t + rem[j] / rate
            finishes = fin <= end + _EPS * max(1.0, end)
            stop = fin if finishes else end
            if check_rounds:
                eff_jobs[j] = Job(job.id, min(job.arrival, t), job.workers, rem[j],
                                  {gtype: job.rate(gtype) * p.rel})
            if finishes:
                round_comp[job.id] = fin
                completion[job.id] = fin
                finished.append(j)
                rem[j] = 0.0
            else:
                rem[j] -= rate * (end - t)
            attained[j] += job.workers * (stop - t)
            base_done[j] += fair_rate[j] * (stop - t)
            for s, k in p.parts:
                round_allocs.append(Allocation(job.id, t, stop, rnd.nodes[s].name, gtype,
                                               int(k), cpus=k * p.cpu, memory=k * p.memory))
        if check_rounds and round_allocs:
            eff = Instance(instance.cluster, tuple(eff_jobs.values()), slot=slot,
                           name=f"{instance.name}-round{rounds}")
            validate_schedule(eff, Schedule(tuple(round_allocs), round_comp))
        allocs.extend(round_allocs)
        if finished:
            done = set(finished)
            active = [i for i in active if i not in done]
        if not state.placed and ptr >= n:  # pragma: no cover - admission always admits one
            raise RuntimeError("Synergy simulation stalled: nothing placed, nothing arriving")
        t = end
    sched = Schedule(tuple(merge_intervals(allocs)), completion)
    # the validator counts progress at T = 1: completed jobs' work is that equivalent
    vjobs = tuple(
        Job(j.id, j.arrival, j.workers, float(base_done[i]) if j.id in completion else j.work,
            dict(j.throughput), weight=j.weight, user=j.user, profile=j.profile)
        for i, j in enumerate(jobs))
    vinst = instance.replace(jobs=vjobs, name=f"{instance.name}-synergy-{allocator}-{order}")
    seconds = time.perf_counter() - wall
    unfinished = [j.id for j in jobs if j.id not in completion]
    res = finalize(vinst, sched, status=Status.FEASIBLE, model="synergy-sim",
                   method=f"{allocator}+{order}", solve_seconds=seconds,
                   extra={"allocator": allocator, "order": order, "rounds": rounds,
                          "mean_round_throughput": total_rel / rounds if rounds else 0.0,
                          "rounds_below_fair": below, "unfinished": unfinished,
                          "simulation_seconds": seconds, "instance": instance.name},
                   message=f"simulated {len(completion)}/{n} jobs")
    mean = res.metrics.mean_jct if res.metrics is not None else None
    return res.replace(objective=mean if mean is not None and math.isfinite(mean) else None)
