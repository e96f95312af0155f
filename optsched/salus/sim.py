r"""Online GPU sharing with Salus lanes: an event-driven simulator of lanes over time.

The round-based simulator of :mod:`optsched.sim` gives each job whole GPUs (integer
``Placement.gpus``, no two jobs on one GPU), so lane sharing cannot be expressed as a
policy there. This module is a self-contained event simulator of Salus' mechanism; its
schedule goes through the same validator and metrics (:func:`optsched.registry.finalize`).

Mechanics (Salus, MLSys'20 §3-4; ``LaneMgr`` and ``executionengine.cpp``)
------------------------------------------------------------------------
* **Admission.** Arriving jobs join a FIFO pending list. At every arrival and every
  release the list is scanned in order and each job is placed, if it can be, on the first
  GPU (in cluster order, of a type it can run on) that takes it; a job that cannot be
  placed waits and does not block the jobs behind it. ``mode`` decides what takes a job:

  - ``"salus"``: Salus' lane manager (:class:`~optsched.salus.lanes.GpuLanes`): a new lane
    of exactly P+T while un-laned memory allows, else the first existing lane (ascending
    free memory) that stays safe; a lane is freed when its last job leaves;
  - ``"single_lane"``: one lane of the whole GPU memory (``SALUS_DISABLE_LANEMGR``); a job
    joins while :math:`\sum P + \max T \le M`;
  - ``"exclusive"``: no sharing: a GPU holds one job at a time.

* **Inside a lane** one iteration runs at a time (fluid limit of iteration-boundary
  switching), chosen by ``policy``: ``"fifo"`` (earliest admitted job runs to completion),
  ``"srtf"`` (least remaining time alone, :math:`r_i d_i`; preemptive at events), or
  ``"fair"`` (least used running time: the jobs with the least attained lane time share
  the lane equally, the fluid limit of Salus' ``fair``).
* **Across lanes** on a GPU the running jobs demand :math:`D = \sum \phi_i u_i` of the
  compute (:math:`\phi_i` the job's fraction of its lane's time); when :math:`D > 1` every
  job slows down by :math:`1/D`. A job runs at :math:`\phi_i f / d_i` iterations/s and holds
  share :math:`\phi_i f u_i \le u_i` (:math:`f = \min(1, 1/D)`), which is exactly what the
  validator credits (:math:`\min(1, s/u)` times the rate).
* **Memory** is checked at every event (and the state only changes at events): every lane
  safe, the lanes of a GPU within its memory. ``record=True`` returns every lane state in
  ``extra["lane_states"]`` for independent checking.
"""

from __future__ import annotations

import heapq
import math
import time as _time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidOption, ModelNotApplicable
from ..instance import Instance
from ..registry import finalize
from ..result import Result
from ..schedule import Allocation, Schedule, merge_intervals
from .lanes import GpuLanes, Lane, _le, salus_view

__all__ = ["simulate_lanes", "MODES", "POLICIES"]

MODES = ("salus", "single_lane", "exclusive")
POLICIES = ("fifo", "srtf", "fair")
_EPS = 1e-9


@dataclass
class _Gpu:
    memory: float
    mode: str
    lanes: GpuLanes = field(init=False)

    def __post_init__(self) -> None:
        self.lanes = GpuLanes(self.memory)
        if self.mode != "salus":
            self.lanes.lanes.append(Lane(self.memory))

    def place(self, job: str, P: float, T: float) -> Lane | None:
        if self.mode == "salus":
            return self.lanes.best_fit_for(job, P, T)
        lane = self.lanes.lanes[0]
        if self.mode == "exclusive" and lane.jobs:
            return None
        if lane.fits(P, T):
            lane.jobs[job] = (P, T)
            return lane
        return None

    def release(self, job: str) -> None:
        if self.mode == "salus":
            self.lanes.release(job)
        else:
            del self.lanes.lanes[0].jobs[job]

    def check(self) -> None:
        total = 0.0
        for lane in self.lanes.lanes:
            ps = [p for p, _ in lane.jobs.values()]
            ts = [t for _, t in lane.jobs.values()]
            if not _le(sum(ps) + max(ts, default=0.0), lane.capacity):
                raise AssertionError(f"unsafe lane {lane}")
            total += lane.capacity
        if not _le(total, self.memory):
            raise AssertionError(f"lanes hold {total} MB > GPU memory {self.memory} MB")


def _fractions(lane: Lane, policy: str, order: dict[str, int], remaining: dict[str, float],
               d: dict[str, float], used: dict[str, float]) -> dict[str, float]:
    """Fraction of the lane's time each of its jobs gets now."""
    jobs = list(lane.jobs)
    if not jobs:
        return {}
    if policy == "fifo":
        return {min(jobs, key=lambda j: order[j]): 1.0}
    if policy == "srtf":
        return {min(jobs, key=lambda j: (remaining[j] * d[j], order[j])): 1.0}
    low = min(used[j] for j in jobs)
    group = [j for j in jobs if used[j] <= low + _EPS * max(1.0, low)]
    return {j: 1.0 / len(group) for j in group}


def simulate_lanes(instance: Instance, *, mode: str = "salus", policy: str = "fifo",
                   record: bool = False, max_events: int = 1_000_000) -> Result:
    """Simulate Salus lanes online (module docstring); return a validated Result.

    ``objective`` is the mean JCT (s) of the jobs; ``extra`` has the mode, policy, the
    number of events, the most lanes a GPU held at once and, with ``record``, every lane
    state ``(time, gpu, [(capacity, {job: (P, T)})])``.
    """
    if mode not in MODES:
        raise InvalidOption("mode", mode, f"must be one of {list(MODES)}")
    if policy not in POLICIES:
        raise InvalidOption("policy", policy, f"must be one of {list(POLICIES)}")
    wall = _time.perf_counter()
    view = salus_view(instance, common_release=False)
    for i in range(view.n_jobs):
        if not any(view.fits(i, g) for g in range(view.n_gpus)):
            raise ModelNotApplicable(f"jobs[{i}].memory", instance.jobs[i].memory.to_dict(),
                                     "P + T exceeds the memory of every GPU it can run on")
    gpus = [_Gpu(float(m), mode) for m in view.memory]
    ids = view.ids
    index = {j: i for i, j in enumerate(ids)}
    arrivals = sorted(range(view.n_jobs), key=lambda i: (instance.jobs[i].arrival, i))
    arr_heap = [(instance.jobs[i].arrival, k, i) for k, i in enumerate(arrivals)]
    heapq.heapify(arr_heap)
    pending: list[int] = []
    where: dict[str, tuple[int, Lane]] = {}
    order: dict[str, int] = {}
    remaining = {j: float(view.n[index[j]]) for j in ids}
    used = {j: 0.0 for j in ids}
    dgpu: dict[str, float] = {}
    allocs: list[Allocation] = []
    comp: dict[str, float] = {}
    states: list = []
    max_lanes = [0] * len(gpus)
    t = arr_heap[0][0] if arr_heap else 0.0
    events = 0

    def admit() -> None:
        still = []
        for i in pending:
            jid = ids[i]
            for g, gpu in enumerate(gpus):
                if not np.isfinite(view.d[i, g]):
                    continue
                lane = gpu.place(jid, float(view.P[i]), float(view.T[i]))
                if lane is not None:
                    where[jid] = (g, lane)
                    order[jid] = len(order)
                    dgpu[jid] = float(view.d[i, g])
                    break
            else:
                still.append(i)
        pending[:] = still

    while arr_heap or pending or where:
        events += 1
        if events > max_events:
            raise RuntimeError(f"simulate_lanes: more than {max_events} events")
        while arr_heap and arr_heap[0][0] <= t + _EPS:
            pending.append(heapq.heappop(arr_heap)[2])
        admit()
        for g, gpu in enumerate(gpus):
            gpu.check()
            live = [ln for ln in gpu.lanes.lanes if ln.jobs]
            max_lanes[g] = max(max_lanes[g], len(live))
            if record:
                states.append((t, g, [(ln.capacity, dict(ln.jobs)) for ln in gpu.lanes.lanes]))
        # running fractions and speeds
        speed: dict[str, float] = {}
        share: dict[str, float] = {}
        lane_frac: dict[str, float] = {}
        nxt = arr_heap[0][0] if arr_heap else math.inf
        for gpu in gpus:
            phi: dict[str, float] = {}
            for lane in gpu.lanes.lanes:
                fr = _fractions(lane, policy, order, remaining, dgpu, used)
                phi.update(fr)
                if policy == "fair" and len(fr) < len(lane.jobs):
                    low = used[next(iter(fr))]
                    above = min(used[j] for j in lane.jobs if j not in fr)
                    nxt = min(nxt, t + (above - low) * len(fr))
            demand = sum(p * view.u[index[j]] for j, p in phi.items())
            f = min(1.0, 1.0 / demand) if demand > 0 else 1.0
            lane_frac.update(phi)
            for j, p in phi.items():
                speed[j] = p * f / dgpu[j]
                share[j] = p * f * float(view.u[index[j]])
                nxt = min(nxt, t + remaining[j] / speed[j])
        if not speed:
            if not arr_heap:
                raise RuntimeError("simulate_lanes stalled: pending jobs fit no free GPU")
            t = arr_heap[0][0]
            continue
        dt = max(nxt - t, 0.0)
        for j, v in speed.items():
            if dt > 0:
                g, _ = where[j]
                allocs.append(Allocation(j, t, t + dt, view.node[g], view.gpu_type[g], 1,
                                         share=min(1.0, share[j])))
            remaining[j] -= v * dt
            used[j] += lane_frac[j] * dt      # used running time: wall time in the lane
        t += dt
        for j in list(speed):
            if remaining[j] <= 1e-9 * max(1.0, float(view.n[index[j]])):
                g, _ = where.pop(j)
                gpus[g].release(j)
                comp[j] = t
    for gpu in gpus:
        gpu.check()
    sched = Schedule(tuple(merge_intervals(allocs)), comp, sharing=True)
    jct = [comp[j] - instance.job(j).arrival for j in comp]
    extra = {"mode": mode, "policy": policy, "events": events, "max_lanes": max_lanes,
             "wall_seconds": _time.perf_counter() - wall}
    if record:
        extra["lane_states"] = states
    return finalize(instance, sched, objective=float(np.mean(jct)) if jct else None,
                    model="salus", method=f"sim-{mode}-{policy}", extra=extra)
