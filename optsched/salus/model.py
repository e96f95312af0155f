r"""Salus GPU lanes: the safety condition, the lane manager's state, plans and schedules.

Memory model (Yu & Chowdhury, MLSys'20, §3; ``GpuLane::tryFit`` in Salus' lane manager)
----------------------------------------------------------------------------------------
Job :math:`i` holds :math:`P_i` MB of *persistent* memory (model and framework state)
for its whole run and needs :math:`T_i` MB of *ephemeral* memory only while one of its
iterations runs. Jobs in one lane run one iteration at a time (they time-slice at
iteration boundaries), so a lane of capacity :math:`C_l` is **safe** iff

.. math::

    \sum_{i \in l} P_i + \max_{i \in l} T_i \;\le\; C_l,

and the lanes of a GPU partition (part of) its memory: :math:`\sum_l C_l \le M_g`.
The smallest safe capacity of a lane is :math:`\mathrm{need}(l) = \sum_l P + \max_l T`.

Merging lemma. For two lanes :math:`a, b`:
:math:`\mathrm{need}(a \cup b) = \sum P + \max(T_a, T_b) \le \mathrm{need}(a) +
\mathrm{need}(b)`. Hence one lane per GPU admits every job set that any lane layout
admits: for the pure packing objectives (admitted jobs, GPUs used) one lane per GPU is
optimal. More lanes only buy parallelism, paid for with one ephemeral peak per lane.

Units: :math:`P, T` in MB (``Job.memory``), GPU memory in GB on the node
(``Node.gpu_memory``), converted with 1 GB = 1024 MB.

Concurrency model (fluid iteration interleaving)
------------------------------------------------
Job :math:`i` needs :math:`n_i` iterations (``Job.work``) of :math:`d_{ig} = 1 /
\text{throughput}_i[\text{type}(g)]` seconds each when alone on GPU :math:`g`, and keeps
a fraction :math:`u_i \in (0, 1]` of the GPU's compute busy while it runs
(``Job.compute_share``; unset means 1). A job holding compute share :math:`s \le u_i`
runs at speed :math:`s / u_i` (iterations take :math:`d_{ig} u_i / s`); the shares of
the jobs on a GPU sum to at most 1; the jobs of a lane run one at a time, interleaved
at iteration granularity, so a lane's jobs together use at most one unit of lane time:
:math:`\sum_{i \in l} s_i / u_i \le 1`. With serial lane work
:math:`S_l = \sum_{i \in l} n_i d_{ig}` and GPU compute work
:math:`W_g = \sum_{i \text{ on } g} n_i d_{ig} u_i`, every schedule needs

.. math::

    C_g \;\ge\; \max\Big(\max_{l \text{ on } g} S_l,\; W_g\Big),

and the *fluid* schedule attains it: every job :math:`i` of GPU :math:`g` holds the
constant share :math:`s_i = u_i n_i d_{ig} / C_g` over :math:`[0, C_g)`. Its lane uses
:math:`\sum_{i\in l} s_i/u_i = S_l / C_g \le 1` of its time and the GPU
:math:`\sum_i s_i = W_g / C_g \le 1` of its compute, and job :math:`i` does
:math:`(s_i/u_i)\,C_g / d_{ig} = n_i` iterations. That is the schedule the validator
checks (``Allocation.share`` = :math:`s_i`, progress :math:`\min(1, s/u)` times the
rate). With :math:`u_i = 1` for all jobs, :math:`W_g \ge S_l` for every lane, so lanes
never shorten a GPU's makespan.

:func:`serial_schedule` realises a plan differently, closer to Salus' FIFO/SRTF lane
queues: each lane runs its jobs one after another (shortest first); lanes run at once
and, when the running jobs' :math:`\sum u` exceeds 1, all slow down in proportion
(processor sharing of compute). Its makespan can exceed the fluid bound (a lane may end
early and leave compute idle), but jobs finish one by one, which is what mean JCT
measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from optsched.core.instance import GpuMemory, Instance
from optsched.core.result import Result, finalize
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.errors import InvalidOption, ModelNotApplicable

__all__ = ["MB_PER_GB", "TOL", "lane_need", "is_safe", "Lane", "GpuLanes", "SalusView",
           "salus_view", "LanePlan", "gpu_makespans", "gpu_end", "fluid_schedule",
           "serial_schedule", "least_squares_line", "persistent_from_peaks", "split_peak",
           "OBJECTIVES", "SENSE", "check_objective", "check_realize", "plan_objective",
           "result_of_plan"]

MB_PER_GB = 1024.0
TOL = 1e-9  # relative tolerance of memory comparisons


class _WithMemory(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def memory(self) -> GpuMemory | None: ...


def footprint(job: _WithMemory) -> GpuMemory:
    """The job's GPU memory footprint (P, T); every Salus model needs one."""
    if job.memory is None:
        raise ModelNotApplicable(f"job {job.id!r}.memory", None,
                                 "Salus needs the job's GPU memory footprint (P, T)")
    return job.memory


def lane_need(P: Sequence[float] | np.ndarray, T: Sequence[float] | np.ndarray) -> float:
    """Smallest safe lane capacity for jobs with persistent ``P`` and ephemeral ``T``."""
    return float(sum(P)) + (float(max(T)) if len(T) else 0.0)


def _le(a: float, b: float) -> bool:
    return a <= b + TOL * max(1.0, abs(b))


def is_safe(P: Sequence[float], T: Sequence[float], capacity: float) -> bool:
    r"""Salus' safety condition :math:`\sum P + \max T \le C_l`."""
    return _le(lane_need(P, T), capacity)


# =========================================================================== lane state
@dataclass
class Lane:
    """One lane: a fixed capacity (MB) and the jobs in it (``job -> (P, T)``)."""

    capacity: float
    jobs: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def persistent(self) -> float:
        return float(sum(p for p, _ in self.jobs.values()))

    @property
    def peak(self) -> float:
        return max((t for _, t in self.jobs.values()), default=0.0)

    @property
    def available(self) -> float:
        """Salus' ``m_availableMemory``: capacity minus the persistent memory held."""
        return self.capacity - self.persistent

    def fits(self, P: float, T: float) -> bool:
        """``GpuLane::tryFit``: ``P + max(T, peak) <= available``."""
        return _le(P + max(T, self.peak), self.available)

    def safe(self) -> bool:
        return is_safe([p for p, _ in self.jobs.values()], [t for _, t in self.jobs.values()],
                       self.capacity)


@dataclass
class GpuLanes:
    """The lanes of one GPU of ``memory`` MB, managed as Salus' ``GpuControlBlock``.

    ``shared_lanes=False`` is Salus' ``SALUS_DISABLE_SHARED_LANE`` (step 2 off).
    Every lane formed is safe by construction; :meth:`safe` re-checks it.
    """

    memory: float
    lanes: list[Lane] = field(default_factory=list)
    shared_lanes: bool = True

    @property
    def free(self) -> float:
        """Memory not partitioned into lanes."""
        return self.memory - sum(l.capacity for l in self.lanes)

    def best_fit_for(self, job: str, P: float, T: float) -> Lane | None:
        """Place ``job`` as Salus' ``bestFitFor``; return its lane, or ``None`` (wait).

        1. if un-laned memory >= P + T: a new lane of exactly P + T;
        2. else the first lane, in ascending order of available memory, where it fits;
        3. else ``None``.
        """
        if _le(P + T, self.free):
            lane = Lane(P + T, {job: (P, T)})
            self.lanes.append(lane)
            return lane
        if not self.shared_lanes:
            return None
        for lane in sorted(self.lanes, key=lambda l: l.available):
            if lane.fits(P, T):
                lane.jobs[job] = (P, T)
                return lane
        return None

    def release(self, job: str) -> None:
        """Remove ``job``; a lane left empty is removed (its memory returns to the pool)."""
        for lane in self.lanes:
            if job in lane.jobs:
                del lane.jobs[job]
                if not lane.jobs:
                    self.lanes.remove(lane)
                return
        raise KeyError(job)

    def safe(self) -> bool:
        return all(l.safe() for l in self.lanes) and _le(
            sum(l.capacity for l in self.lanes), self.memory)


# =========================================================================== instance view
@dataclass(frozen=True)
class SalusView:
    """Salus' view of an instance: per job P, T (MB), n, u, weight; per GPU memory (MB).

    ``d[i, g]`` is job i's seconds per iteration alone on GPU g (``inf``: cannot run).
    """

    ids: tuple[str, ...]
    P: np.ndarray
    T: np.ndarray
    n: np.ndarray
    u: np.ndarray
    w: np.ndarray
    d: np.ndarray
    node: tuple[str, ...]
    gpu_type: tuple[str, ...]
    memory: np.ndarray
    release: float

    @property
    def n_jobs(self) -> int:
        return len(self.ids)

    @property
    def n_gpus(self) -> int:
        return len(self.node)

    @property
    def peak(self) -> np.ndarray:
        return self.P + self.T

    def fits(self, i: int, g: int) -> bool:
        """Job i can run on GPU g alone: its type is usable and P + T fits its memory."""
        return bool(np.isfinite(self.d[i, g]) and _le(self.peak[i], self.memory[g]))


def salus_view(instance: Instance, *, common_release: bool = True) -> SalusView:
    """Build the :class:`SalusView`; raise :class:`ModelNotApplicable` outside the model.

    The model needs single-worker jobs with a ``memory`` footprint, GPUs with a known
    memory (``Node.gpu_memory``) and, for the offline methods, one common arrival time.
    """
    jobs = instance.jobs
    for i, j in enumerate(jobs):
        if j.workers != 1:
            raise ModelNotApplicable(f"jobs[{i}].workers", j.workers,
                                     "Salus lanes hold single-GPU jobs")
        if j.memory is None:
            raise ModelNotApplicable(f"jobs[{i}].memory", None,
                                     "Salus needs the job's GPU memory footprint (P, T)")
    a = instance.arrivals
    if common_release and a.size and not np.all(a == a[0]):
        i = int(np.argmax(a != a[0]))
        raise ModelNotApplicable(f"jobs[{i}].arrival", float(a[i]),
                                 "the offline Salus models place all jobs at one time; "
                                 "use optsched.salus.policy for arrivals over time")
    node, typ, mem = [], [], []
    for h, nd in enumerate(instance.cluster.nodes):
        for t in sorted(nd.gpus):
            if nd.gpus[t] <= 0:
                continue
            if t not in nd.gpu_memory:
                raise ModelNotApplicable(f"cluster.nodes[{h}].gpu_memory.{t}", None,
                                         "Salus needs the memory of every GPU type")
            for _ in range(nd.gpus[t]):
                node.append(nd.name)
                typ.append(t)
                mem.append(nd.gpu_memory[t] * MB_PER_GB)
    rate = np.array([[j.rate(t) for t in typ] for j in jobs], dtype=float).reshape(
        len(jobs), len(typ))
    with np.errstate(divide="ignore"):
        d = np.where(rate > 0, 1.0 / np.where(rate > 0, rate, 1.0), np.inf)
    return SalusView(
        ids=tuple(j.id for j in jobs),
        P=np.array([footprint(j).persistent for j in jobs], dtype=float),
        T=np.array([footprint(j).ephemeral for j in jobs], dtype=float),
        n=np.array([j.work for j in jobs], dtype=float),
        u=np.array([1.0 if j.compute_share is None else j.compute_share for j in jobs]),
        w=np.array([j.weight for j in jobs], dtype=float),
        d=d, node=tuple(node), gpu_type=tuple(typ), memory=np.array(mem, dtype=float),
        release=float(a[0]) if a.size else 0.0)


# =========================================================================== plans
#: ``plan[g]`` is the list of lanes of GPU g, each a list of job indices.
LanePlan = list[list[list[int]]]


def gpu_makespans(view: SalusView, plan: LanePlan) -> np.ndarray:
    r""":math:`C_g = \max(\max_l S_l, W_g)` per GPU (0 for an unused GPU)."""
    out = np.zeros(view.n_gpus)
    for g, lanes in enumerate(plan):
        for lane in lanes:
            if lane:
                out[g] = max(out[g], float(sum(view.n[i] * view.d[i, g] for i in lane)))
        work = sum(view.n[i] * view.d[i, g] * view.u[i] for lane in lanes for i in lane)
        out[g] = max(out[g], float(work))
    return out


def check_plan(view: SalusView, plan: LanePlan) -> None:
    """Raise ``AssertionError`` if a plan is not memory safe (used by the methods)."""
    seen: set[int] = set()
    for g, lanes in enumerate(plan):
        need = 0.0
        for lane in lanes:
            if not lane:
                continue
            for i in lane:
                assert i not in seen, f"job {view.ids[i]} placed twice"
                assert np.isfinite(view.d[i, g]), f"job {view.ids[i]} cannot run on GPU {g}"
                seen.add(i)
            need += lane_need(view.P[lane], view.T[lane])
        assert _le(need, view.memory[g]), f"GPU {g}: lanes need {need} > {view.memory[g]} MB"


def fluid_schedule(view: SalusView, plan: LanePlan) -> Schedule:
    """The fluid schedule of a plan (module docstring): makespan exactly ``gpu_makespans``."""
    cg = gpu_makespans(view, plan)
    allocs, comp = [], {}
    r = view.release
    for g, lanes in enumerate(plan):
        for lane in lanes:
            for i in lane:
                share = view.u[i] * view.n[i] * view.d[i, g] / cg[g]
                allocs.append(Allocation(view.ids[i], r, r + cg[g], view.node[g],
                                         view.gpu_type[g], 1, share=min(1.0, float(share))))
                comp[view.ids[i]] = r + float(cg[g])
    return Schedule(tuple(allocs), comp, sharing=True)


def _serial_gpu(view: SalusView, g: int, lanes: Sequence[Sequence[int]]
                ) -> tuple[list[Allocation], dict[str, float]]:
    """The serial realisation of GPU g's lanes (see :func:`serial_schedule`)."""
    allocs: list[Allocation] = []
    comp: dict[str, float] = {}
    queues = [sorted(l, key=lambda i: (view.n[i] * view.d[i, g], i)) for l in lanes if l]
    left = {i: float(view.n[i]) for q in queues for i in q}
    t = view.release
    while any(queues):
        heads = [q[0] for q in queues if q]
        f = min(1.0, 1.0 / float(sum(view.u[i] for i in heads)))
        dt = float(min(left[i] * view.d[i, g] / f for i in heads))
        for i in heads:
            allocs.append(Allocation(view.ids[i], t, t + dt, view.node[g],
                                     view.gpu_type[g], 1, share=float(view.u[i] * f)))
            left[i] -= dt * f / view.d[i, g]
        t += dt
        for q in queues:
            if q and left[q[0]] <= 1e-9 * max(1.0, view.n[q[0]]):
                comp[view.ids[q[0]]] = float(t)
                q.pop(0)
    return allocs, comp


def serial_schedule(view: SalusView, plan: LanePlan) -> Schedule:
    """Lanes run their jobs one by one (shortest first); compute shared in proportion."""
    allocs: list[Allocation] = []
    comp: dict[str, float] = {}
    for g, lanes in enumerate(plan):
        a, c = _serial_gpu(view, g, lanes)
        allocs.extend(a)
        comp.update(c)
    return Schedule(tuple(merge_intervals(allocs)), comp, sharing=True)


def gpu_end(view: SalusView, g: int, lanes: Sequence[Sequence[int]], realize: str) -> float:
    r"""When GPU g's last job ends (absolute time) if its lanes are ``lanes``.

    ``realize="fluid"``: :math:`\text{release} + C_g` with
    :math:`C_g = \max(\max_l S_l, W_g)` (:func:`gpu_makespans`, attained by
    :func:`fluid_schedule`); ``"serial"``: the last completion of
    :func:`serial_schedule` on that GPU, which is never earlier (:math:`C_g` bounds every
    schedule). An unused GPU ends at the release time. GPUs are realised independently,
    so a plan's end is the largest of its GPUs' ends.
    """
    if not any(lanes):
        return view.release
    if realize == "serial":
        return max(_serial_gpu(view, g, lanes)[1].values())
    serial = max(float(sum(view.n[i] * view.d[i, g] for i in lane)) for lane in lanes if lane)
    work = float(sum(view.n[i] * view.d[i, g] * view.u[i] for lane in lanes for i in lane))
    return view.release + max(serial, work)


# =========================================================================== data
def least_squares_line(x: Iterable[float], y: Iterable[float]) -> tuple[float, float]:
    r"""``(slope, intercept)`` of the least-squares line :math:`y \approx a + s x`:
    :math:`s = \sum (x_i - \bar x)(y_i - \bar y) / \sum (x_i - \bar x)^2`,
    :math:`a = \bar y - s \bar x`.

    The closed form with correctly rounded sums (:func:`math.fsum`), not ``np.polyfit``:
    LAPACK's least squares runs the BLAS kernel of the CPU, whose last bits differ
    between machines (seen: the fitted Salus footprints, 3e-15 relative between an
    AVX-512 and an AVX2 machine), and an instance drawn from a seed should be the same
    everywhere. Raises :class:`~optsched.errors.ModelNotApplicable` unless ``x`` and
    ``y`` have the same length and ``x`` holds two distinct values.
    """
    xs, ys = [float(v) for v in x], [float(v) for v in y]
    n = len(xs)
    if n != len(ys) or len(set(xs)) < 2:
        raise ModelNotApplicable("x", xs, f"a line needs two distinct x and one y per x "
                                 f"(got {len(ys)} y)")
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    sxx = math.fsum((a - mx) * (a - mx) for a in xs)
    slope = math.fsum((a - mx) * (b - my) for a, b in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def persistent_from_peaks(batch_sizes: Sequence[float], peaks: Sequence[float]) -> float:
    r"""Persistent memory P estimated from peaks measured at several batch sizes.

    Peak memory grows with the batch (activations, workspace) on top of a
    batch-independent part (weights, gradients, optimizer state, framework). The
    least-squares line :math:`\text{peak}(b) \approx P + b\,t` gives P as its intercept,
    clipped to :math:`[0, \min \text{peak}]`; then :math:`T(b) = \text{peak}(b) - P`.
    """
    b = np.asarray(batch_sizes, dtype=float)
    y = np.asarray(peaks, dtype=float)
    if b.size < 2 or np.ptp(b) == 0:
        raise ModelNotApplicable("batch_sizes", list(batch_sizes),
                                 "need peaks at two or more batch sizes")
    _, icept = least_squares_line(b, y)
    return float(min(max(icept, 0.0), y.min()))


def split_peak(peak_mb: float, persistent_fraction: float) -> tuple[float, float]:
    """``(P, T) = (f peak, (1 - f) peak)`` when only a peak is published."""
    if not (0 <= persistent_fraction <= 1) or not math.isfinite(peak_mb) or peak_mb <= 0:
        raise ModelNotApplicable("persistent_fraction", persistent_fraction,
                                 "needs 0 <= f <= 1 and a positive peak")
    return peak_mb * persistent_fraction, peak_mb * (1 - persistent_fraction)


# ======================================================= plans as results
OBJECTIVES = ("makespan", "admitted", "gpus")
SENSE = {"makespan": "min", "admitted": "max", "gpus": "min"}


def check_objective(objective: str) -> str:
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {list(OBJECTIVES)}")
    return objective


def check_realize(realize: str) -> str:
    if realize not in ("fluid", "serial"):
        raise InvalidOption("realize", realize, "must be 'fluid' or 'serial'")
    return realize


def plan_objective(view: SalusView, plan: LanePlan, objective: str) -> float:
    if objective == "makespan":
        return float(gpu_makespans(view, plan).max(initial=0.0))
    if objective == "admitted":
        return float(sum(view.w[i] for lanes in plan for lane in lanes for i in lane))
    return float(sum(1 for lanes in plan if any(lanes)))


def result_of_plan(instance: Instance, view: SalusView, plan: LanePlan, kind: str,
                   realize: str, **fields) -> Result:
    """Validated :class:`Result` of a lane plan (fluid or serial realisation)."""
    check_plan(view, plan)
    sched = fluid_schedule(view, plan) if realize == "fluid" else serial_schedule(view, plan)
    extra = dict(fields.pop("extra", {}))
    extra.update({
        "objective_kind": kind, "realize": realize,
        "plan": [[[view.ids[i] for i in lane] for lane in lanes if lane] for lanes in plan],
        "lanes_per_gpu": [sum(1 for lane in lanes if lane) for lanes in plan],
        "gpu_makespan": gpu_makespans(view, plan).tolist(),
        "admitted": sum(len(lane) for lanes in plan for lane in lanes),
        "gpus_used": sum(1 for lanes in plan if any(lanes)),
        "lane_memory_mb": [[float(view.P[lane].sum() + view.T[lane].max())
                            for lane in lanes if lane] for lanes in plan],
    })
    fields.setdefault("objective", plan_objective(view, plan, kind))
    fields["model"] = "salus"
    return finalize(instance, sched, extra=extra, **fields)
