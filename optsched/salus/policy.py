r"""Online GPU sharing with Salus lanes: :class:`SalusPolicy` in the shared simulator.

:class:`SalusPolicy` is an event-driven :class:`optsched.sim.Policy` that declares
``sharing = True``: each running job holds one GPU at a compute ``share`` below 1, and
the shared simulator (:mod:`optsched.sim.simulator`) checks that the shares on every node and
GPU type sum to at most the GPU count and advances each job by the validator's rule
(:func:`optsched.core.progress.gang_rate`: ``min(1, share / u)`` times the rate). GPU memory
(the lanes) is the policy's own state, kept per GPU device (the simulator knows GPUs
only as counts per node and type) and checked by the policy at every decision.

Mechanics (Salus, MLSys'20 §3-4; ``LaneMgr`` and ``executionengine.cpp``)
-------------------------------------------------------------------------
* **Admission.** Arriving jobs join a FIFO pending list. At every arrival and every
  release the list is scanned in order and each job is placed, if it can be, on the first
  GPU (in cluster order, of a type it can run on) that takes it; a job that cannot be
  placed waits and does not block the jobs behind it. ``mode`` decides what takes a job:

  - ``"salus"``: Salus' lane manager (:class:`~optsched.salus.model.GpuLanes`): a new lane
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
* **Events.** The policy is called at every arrival and completion (event-driven) and at
  round boundaries; under ``"fair"`` it also ends an epoch, through ``horizon()``, when
  the least-served jobs of a lane catch up with the next ones. Between calls the shares
  are constant, so a lane's FIFO / SRTF / FAIR time-slicing is expressed as shares over
  each epoch.
* **Memory** is checked at every decision (and the lanes only change at decisions):
  every lane safe, the lanes of a GPU within its memory. ``record=True`` returns every
  lane state in ``extra["lane_states"]`` for independent checking.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.salus.model import MB_PER_GB, GpuLanes, Lane, _le, footprint, salus_view
from optsched.sim.policy import ClusterView
from optsched.sim.simulator import simulate

__all__ = ["simulate_lanes", "run_lanes", "SalusPolicy", "MODES", "POLICIES"]

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


class SalusPolicy:
    """Salus' lanes (``mode``) with in-lane time-slicing ``policy`` (module docstring).

    ``stats()`` (merged into ``Result.extra``): ``mode``, ``policy``, ``events`` (policy
    calls), ``max_lanes`` (most live lanes per GPU device, in device order) and, with
    ``record``, ``lane_states``: ``(time, device, [(capacity, {job: (P, T)})])`` at every
    decision.
    """

    event_driven = True
    sharing = True

    def __init__(self, mode: str = "salus", policy: str = "fifo", *, record: bool = False):
        if mode not in MODES:
            raise InvalidOption("mode", mode, f"must be one of {list(MODES)}")
        if policy not in POLICIES:
            raise InvalidOption("policy", policy, f"must be one of {list(POLICIES)}")
        self.mode, self.policy, self.record = mode, policy, record
        self.name = f"salus-{mode}-{policy}"
        self.needs_work = policy == "srtf"
        self.reset()

    def reset(self) -> None:
        self.gpus: list[_Gpu] = []
        self.devices: list[tuple[str, str]] = []
        self.pending: list[str] = []
        self.seen: set[str] = set()
        self.where: dict[str, tuple[int, Lane]] = {}
        self.order: dict[str, int] = {}
        self.used: dict[str, float] = {}
        self.dgpu: dict[str, float] = {}
        self.frac: dict[str, float] = {}
        self.last = 0.0
        self.wake: float | None = None
        self.events = 0
        self.max_lanes: list[int] = []
        self.states: list = []

    def stats(self) -> dict:
        out = {"mode": self.mode, "policy": self.policy, "events": self.events,
               "max_lanes": list(self.max_lanes)}
        if self.record:
            out["lane_states"] = self.states
        return out

    def horizon(self) -> float | None:
        return self.wake

    def _devices(self, view: ClusterView) -> None:
        for nd in view.cluster.nodes:  # the device order of salus_view
            for t in sorted(nd.gpus):
                for _ in range(nd.gpus[t] if nd.gpus[t] > 0 else 0):
                    self.devices.append((nd.name, t))
                    self.gpus.append(_Gpu(float(nd.gpu_memory[t]) * MB_PER_GB, self.mode))
        self.max_lanes = [0] * len(self.gpus)

    def allocate(self, view: ClusterView) -> list[Placement]:
        if not self.gpus:
            self._devices(view)
        t = view.time
        self.events += 1
        for j, p in self.frac.items():       # used running time: wall time in the lane
            self.used[j] += p * (t - self.last)
        self.last = t
        live = set(view.ids)
        for j in [j for j in self.where if j not in live]:   # completed: free its lane
            g, _ = self.where.pop(j)
            self.gpus[g].release(j)
        jobs = view.by_id
        for jid in view.ids:
            if jid not in self.seen:
                self.seen.add(jid)
                self.pending.append(jid)
                self.used[jid] = 0.0
        still = []
        for jid in self.pending:                            # FIFO admission scan
            job = jobs[jid]
            for g, gpu in enumerate(self.gpus):
                rate = job.rate(self.devices[g][1])
                if rate <= 0:
                    continue
                mem = footprint(job)
                lane = gpu.place(jid, float(mem.persistent), float(mem.ephemeral))
                if lane is not None:
                    self.where[jid] = (g, lane)
                    self.order[jid] = len(self.order)
                    self.dgpu[jid] = 1.0 / rate
                    break
            else:
                still.append(jid)
        self.pending = still
        for g, gpu in enumerate(self.gpus):
            gpu.check()
            self.max_lanes[g] = max(self.max_lanes[g], sum(1 for ln in gpu.lanes.lanes
                                                           if ln.jobs))
            if self.record:
                self.states.append((t, g, [(ln.capacity, dict(ln.jobs))
                                           for ln in gpu.lanes.lanes]))
        remaining = ({j: float(r) for j, r in zip(view.ids, view.remaining)}
                     if self.needs_work else {})
        out: list[Placement] = []
        self.frac = {}
        self.wake = None
        for g, gpu in enumerate(self.gpus):
            phi: dict[str, float] = {}
            for lane in gpu.lanes.lanes:
                fr = _fractions(lane, self.policy, self.order, remaining, self.dgpu, self.used)
                phi.update(fr)
                if self.policy == "fair" and len(fr) < len(lane.jobs):
                    low = self.used[next(iter(fr))]
                    above = min(self.used[j] for j in lane.jobs if j not in fr)
                    w = t + (above - low) * len(fr)
                    self.wake = w if self.wake is None else min(self.wake, w)
            u = {j: 1.0 if (cs := jobs[j].compute_share) is None else cs for j in phi}
            demand = sum(p * u[j] for j, p in phi.items())
            f = min(1.0, 1.0 / demand) if demand > 0 else 1.0
            self.frac.update(phi)
            node, typ = self.devices[g]
            for j, p in phi.items():
                out.append(Placement(j, node, typ, 1, share=min(1.0, p * f * u[j])))
        return out


def simulate_lanes(instance: Instance, *, mode: str = "salus", policy: str = "fifo",
                   record: bool = False) -> Result:
    """Simulate Salus lanes online (module docstring); return a validated Result.

    A thin wrapper: ``optsched.sim.simulate(instance, SalusPolicy(mode, policy))`` after
    checking that the instance fits Salus' model (single-GPU jobs with a memory
    footprint, each fitting some GPU alone). ``objective`` is the mean JCT (s);
    ``extra`` has :meth:`SalusPolicy.stats` and the simulator's counters.
    """
    sp = SalusPolicy(mode, policy, record=record)
    view = salus_view(instance, common_release=False)
    for i in range(view.n_jobs):
        if not any(view.fits(i, g) for g in range(view.n_gpus)):
            raise ModelNotApplicable(f"jobs[{i}].memory", footprint(instance.jobs[i]).to_dict(),
                                     "P + T exceeds the memory of every GPU it can run on")
    wall = _time.perf_counter()
    res = simulate(instance, sp, progress=False)
    for gpu in sp.gpus:
        gpu.check()
    jct = res.metrics.jct if res.metrics is not None else {}
    return res.replace(model="salus", method=f"sim-{mode}-{policy}",
                       objective=float(np.mean(list(jct.values()))) if jct else None,
                       extra={**res.extra, "wall_seconds": _time.perf_counter() - wall})


def run_lanes(instance: Instance, *, seed: int = 0, max_time: float | None = None,
                    progress: bool | None = None, mode: str = "salus",
                    policy: str = "fifo") -> Result:
    """The runner of ``optsched simulate --policy salus.lanes [--option mode=... policy=...]``."""
    if max_time is not None:
        raise InvalidOption("max_time", max_time, "the lane simulation runs every job to "
                            "completion")
    return simulate_lanes(instance, mode=mode, policy=policy)
