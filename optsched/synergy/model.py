r"""The Synergy round model: sensitivities, configurations, admission, schedules.

Synergy (Mohan et al., "Looking Beyond GPUs for DNN Scheduling on Multi-Tenant
Clusters", OSDI'22; code ``msr-fiddle/synergy``) allocates CPU cores and DRAM to the GPU
jobs of one scheduling round according to each job's profiled sensitivity.

Round model
-----------
* Servers :math:`s` with :math:`G_s` GPUs, :math:`C_s` cores and :math:`M_s` GB of DRAM,
  all of one GPU type and with the same CPU and DRAM per GPU. The **GPU-proportional
  (fair) share** per GPU is :math:`f = (f_c, f_m) = (C_s / G_s, M_s / G_s)` (3 cores and
  62.5 GB on Synergy's 8-GPU / 24-core / 500 GB servers).
* Job :math:`j` is a gang of :math:`g_j` GPUs. A *configuration* :math:`q = (c_q, m_q)`
  gives every one of its GPUs :math:`c_q` cores and :math:`m_q` GB; a gang spread over
  several servers takes :math:`k\,c_q` cores and :math:`k\,m_q` GB on a server that holds
  :math:`k` of its GPUs (Synergy's per-GPU slices, ``_top_synergy_gpus``).
* :math:`T_j(c, m)` is the job's per-GPU throughput relative to the proportional share
  on Synergy's servers (the profile matrix, :class:`~optsched.core.instance.Sensitivity`).
  Its **fair throughput** is :math:`T^{f}_j = T_j(f_c, f_m)` (1.0 for every catalog
  profile on the preset servers). A job without a sensitivity is insensitive: its only
  configuration is the fair share, with :math:`T = 1`.
* The **objective** of a round allocation is the *total normalized throughput*
  :math:`\sum_j T_j(c_j, m_j)` over the jobs it places (Synergy-OPT's objective,
  ``synergy_opt.py``: unweighted by :math:`g_j`), maximised.
* **Admission.** Eligible jobs (arrived by the round start) are taken in policy order
  (FIFO by default: arrival, then instance order) and admitted while their GPU demand
  fits the free GPUs, skipping a job that does not fit (Synergy's scheduler loop). Every
  method except GREEDY allocates exactly the admitted set; the GPU-proportional
  allocation always fits it.
* **Fairness.** A job must not run slower than under the proportional share:
  :math:`T_j(c_j, m_j) \ge T^{f}_j`.

Off-grid queries (interpolation)
--------------------------------
:func:`relative_throughput` evaluates :math:`T_j` anywhere:

* on a grid point it returns the profiled value;
* inside the grid box it interpolates **bilinearly** between the four surrounding grid
  points; if any of them is 0 (Synergy writes 0 for configurations it did not profile,
  e.g. 12 cores per GPU for 2-GPU ResNet-18), the point counts as unprofiled (0);
* above the largest grid value of an axis it **clamps** to that value (the profile has
  saturated: more of a resource never costs throughput);
* below the smallest grid value of an axis it returns 0 (nothing was measured there; a
  configuration with throughput 0 is never chosen).

The declared best-case demand is **snapped up** to the grid per axis (the language
models' 20 GB becomes 20.83 GB, the smallest profiled memory), so the best case is always
a profiled point. A declared best case whose throughput is below the fair throughput
(none in the catalog) is no best case: the fair share replaces it. A fair share that
falls below a profile's grid (throughput 0) makes the model inapplicable to that job
(:class:`~optsched.errors.ModelNotApplicable`).

**Comparable best case** (:func:`comparable_best`). Synergy-TUNE needs every demand to
be comparable with the fair share (at least :math:`f` in both resources or at most
:math:`f` in both; see :mod:`optsched.synergy.heuristics` for why). A best case
:math:`b = (b_c, b_m)` above :math:`f` in one resource and below it in the other is
therefore raised to :math:`\tilde b = (\max(b_c, f_c), \max(b_m, f_m))`, which is off
the profile grid when :math:`f` is; if :math:`T_j(\tilde b) < T^f_j` the fair share is
used instead. Otherwise :math:`\tilde b = b`.

Configurations
--------------
The configurations of job :math:`j` (``SynergyRound.configs[j]``) are

.. math::

    \bar Q_j = \{(c, m) \text{ on the profile grid} : T_j(c, m) > 0\}
      \cup \{f,\ b_j,\ \tilde b_j\},

i.e. every profiled point plus the three off-grid points a round allocator can ask for:
the fair share (proportional, TUNE's fallback and peer reduction), the snapped best case
(GREEDY) and the comparable best case (TUNE). An insensitive job has only :math:`f`.

What a round schedule is
------------------------
The round runs over :math:`[t_0, t_0 + \text{slot})`, :math:`t_0` = ``start`` (default:
the latest arrival, so every job is queued). Every placed job holds, on each of its
servers, :math:`k` GPUs with ``cpus`` :math:`= k c_j` and ``memory`` :math:`= k m_j`, so the
independent validator checks GPU, CPU and DRAM capacity per server. ``Job.work`` is read
as the iterations still to do at :math:`t_0` and ``Job.throughput`` as the per-worker
rate at :math:`T = 1`. A job progresses at :math:`g_j \cdot r_j \cdot T_j(c_j, m_j)`
iterations/s; it is declared complete (and releases its resources) only if it truly
finishes inside the round. The schedule is validated against the round's *effective
instance* (:func:`effective_instance`): the same instance with each placed job's
throughput multiplied by :math:`T_j(c_j, m_j)`, so the validator's work check sees the
real progress; ``Result.extra["iterations"]`` lists the iterations done this round.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from optsched.core.instance import Cluster, Instance, Job, Node, Sensitivity
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption, ModelNotApplicable

__all__ = ["relative_throughput", "best_case", "comparable_best", "round_points",
           "SynergyRound", "Configuration", "prepare", "round_result", "effective_instance",
           "TOL"]

TOL = 1e-9

# --------------------------------------------------------------------------- profiles
def relative_throughput(sens: Sensitivity | None, cpu: float, memory: float) -> float:
    """:math:`T(c, m)` per GPU relative to the proportional share (module docstring).

    ``sens=None`` (an insensitive job) gives 1.0 everywhere; otherwise
    :meth:`optsched.core.instance.Sensitivity.relative`.
    """
    return 1.0 if sens is None else sens.relative(cpu, memory)


def _snap_up(grid: Sequence[float], x: float) -> float:
    for g in grid:
        if g >= x - TOL:
            return float(g)
    return float(grid[-1])


def best_case(sens: Sensitivity | None, fair: tuple[float, float]) -> tuple[float, float]:
    """Best-case demand per GPU, snapped up to the profile grid (fair share if ``None``)."""
    if sens is None:
        return fair
    return _snap_up(sens.cpu_grid, sens.best_cpu), _snap_up(sens.memory_grid, sens.best_memory)


def comparable_best(sens: Sensitivity | None, fair: tuple[float, float],
                    best: tuple[float, float, float], fair_rel: float
                    ) -> tuple[float, float, float]:
    r"""TUNE's demand :math:`(\tilde b_c, \tilde b_m, T_j(\tilde b))` (module docstring).

    ``best`` is the snapped best case with its throughput, ``fair_rel`` is
    :math:`T^f_j`. A best case above the fair share in one resource and below it in the
    other is raised to :math:`\max(b, f)` per resource, falling back to the fair share
    when that point runs slower than :math:`T^f_j`; any other best case is returned as
    it is.
    """
    c, m, t = best
    fc, fm = fair
    if (c > fc + TOL and m < fm - TOL) or (m > fm + TOL and c < fc - TOL):
        c, m = max(c, fc), max(m, fm)
        t = relative_throughput(sens, c, m)
        if t < fair_rel - TOL:
            c, m, t = fc, fm, fair_rel
    return float(c), float(m), float(t)


def round_points(sens: Sensitivity | None, fair: tuple[float, float]
                 ) -> tuple[float, tuple[float, float, float], tuple[float, float, float]]:
    r"""The three points a round allocator asks for: :math:`T^f`, the snapped best case
    :math:`(b_c, b_m, T(b))` (GREEDY) and the comparable best case (TUNE).

    A best case slower than the fair share is replaced by the fair share (module
    docstring). :math:`T^f \le 0` (the profile misses the fair share) is returned as
    it is; :func:`prepare` rejects such a job.
    """
    tf = relative_throughput(sens, *fair)
    bc, bm = best_case(sens, fair)
    bt = relative_throughput(sens, bc, bm)
    b = (bc, bm, bt) if bt >= tf - TOL else (fair[0], fair[1], tf)
    return tf, b, comparable_best(sens, fair, b, tf)


# --------------------------------------------------------------------------- round data
@dataclass(frozen=True)
class Configuration:
    """A job's choice for one round: CPU cores ``cpu`` and GB of DRAM ``memory`` per GPU,
    its relative throughput ``rel`` there, and how many GPUs on which servers (``parts``,
    server index and GPUs). :func:`round_schedule` turns the round's configurations into
    the shared :class:`~optsched.core.schedule.Placement` records."""

    job: int
    cpu: float
    memory: float
    rel: float
    parts: tuple[tuple[int, int], ...]


@dataclass
class SynergyRound:
    """Everything a round allocator needs, computed once by :func:`prepare`.

    Arrays are indexed by *server* (nodes with GPUs, in cluster order) and configuration
    lists are per instance job index. ``configs[j]`` is an ``(n, 3)`` array of
    (cpu per GPU, memory per GPU, T) over :math:`\bar Q_j` (module docstring): the
    profile grid points with T > 0, the fair share, the best case ``best[j]`` and the
    comparable best case ``comparable[j]`` that TUNE asks for.
    """

    instance: Instance
    gpu_type: str
    nodes: list[Node]
    G: np.ndarray
    C: np.ndarray
    M: np.ndarray
    fair: tuple[float, float]
    start: float
    order: list[int]
    admitted: list[int]
    fair_rel: dict[int, float]
    best: dict[int, tuple[float, float, float]]
    configs: dict[int, np.ndarray] = field(default_factory=dict)
    comparable: dict[int, tuple[float, float, float]] = field(default_factory=dict)

    @property
    def n_servers(self) -> int:
        return len(self.nodes)

    def gpus(self, j: int) -> int:
        return self.instance.jobs[j].workers

    def rel(self, j: int, cpu: float, memory: float) -> float:
        return relative_throughput(self.instance.jobs[j].sensitivity, cpu, memory)

    def candidates(self, j: int, *, prune: bool = True) -> np.ndarray:
        """Fair configurations of job j (T >= fair T, fitting a server), Pareto-pruned.

        A configuration is dominated if another uses no more CPU and memory and has no
        lower T; dropping dominated ones never changes an optimum of a packing model.
        """
        cfg = self.configs[j]
        ok = (cfg[:, 2] >= self.fair_rel[j] - TOL) & (cfg[:, 0] <= self.C.max() + TOL) \
            & (cfg[:, 1] <= self.M.max() + TOL)
        cfg = cfg[ok]
        if not prune:
            return cfg
        keep = []
        for i, (c, m, t) in enumerate(cfg):
            dom = ((cfg[:, 0] <= c + TOL) & (cfg[:, 1] <= m + TOL) & (cfg[:, 2] >= t - TOL)
                   & ((cfg[:, 0] < c - TOL) | (cfg[:, 1] < m - TOL) | (cfg[:, 2] > t + TOL)))
            if not dom.any():
                keep.append(i)
        out = cfg[keep]
        # identical rows (e.g. fair point on the grid): keep one
        return np.unique(np.round(out, 9), axis=0)


#: the last cluster checked by :func:`_homogeneous` and its answer: a simulated run asks
#: for its one (frozen) cluster at every round
_HOMOGENEOUS_SEEN: list = [None, None]


def _homogeneous(cluster: Cluster) -> tuple[str, list[Node], tuple[float, float]]:
    """The cluster's GPU type, its servers with GPUs and their CPU and DRAM per GPU, or
    :class:`~optsched.errors.ModelNotApplicable`; remembered for the last cluster (an
    identity test: a :class:`Cluster` is frozen)."""
    seen = _HOMOGENEOUS_SEEN
    if seen[0] is cluster:
        gtype, nodes, fair = seen[1]
        return gtype, list(nodes), fair
    got = _check_homogeneous(cluster)
    seen[0], seen[1] = cluster, (got[0], tuple(got[1]), got[2])
    return got


def _check_homogeneous(cluster: Cluster) -> tuple[str, list[Node], tuple[float, float]]:
    types = cluster.gpu_types
    if len(types) != 1:
        raise ModelNotApplicable("cluster.gpu_types", list(types),
                                 "Synergy's model has one GPU type; this cluster has several")
    nodes = [n for n in cluster.nodes if n.total_gpus > 0]
    ratios = {(n.cpus / n.total_gpus, n.memory / n.total_gpus) for n in nodes}
    f = next(iter(ratios))
    for i, n in enumerate(nodes):
        r = (n.cpus / n.total_gpus, n.memory / n.total_gpus)
        if not (math.isclose(r[0], f[0], rel_tol=1e-9) and math.isclose(r[1], f[1], rel_tol=1e-9)):
            raise ModelNotApplicable(
                f"cluster.nodes[{i}]", n.name,
                f"the GPU-proportional share needs the same CPU and DRAM per GPU on every "
                f"server; {n.name!r} has {r[0]:g} cores and {r[1]:g} GB per GPU, "
                f"{nodes[0].name!r} has {f[0]:g} and {f[1]:g}")
    if f[0] <= 0 or f[1] <= 0:
        raise ModelNotApplicable("cluster.nodes[0]", nodes[0].name,
                                 "Synergy allocates CPU and DRAM: servers need cpus > 0 "
                                 "and memory > 0")
    return types[0], nodes, (float(f[0]), float(f[1]))


def prepare(instance: Instance, *, start: float | None = None,
            order: Sequence[str] | None = None) -> SynergyRound:
    """Check applicability, fix the round start and policy order, admit jobs.

    ``order`` lists job ids in policy order (default FIFO: arrival, then instance
    index); jobs not listed are not considered. Raises
    :class:`~optsched.errors.ModelNotApplicable` for clusters outside the model.
    """
    gtype, nodes, fair = _homogeneous(instance.cluster)
    if start is None:
        start = float(instance.arrivals.max()) if instance.n_jobs else 0.0
    elif isinstance(start, bool) or not isinstance(start, (int, float)) \
            or not math.isfinite(start) or start < 0:
        raise InvalidOption("start", start, "must be a finite number >= 0 (seconds)")
    if order is None:
        idx = sorted(range(instance.n_jobs), key=lambda j: (instance.jobs[j].arrival, j))
    else:
        if isinstance(order, str):
            raise InvalidOption("order", order, "must be a list of job ids")
        idx = []
        seen = set()
        for k, jid in enumerate(order):
            if jid not in instance.job_index:
                raise InvalidOption(f"order[{k}]", jid, "unknown job id")
            if jid in seen:
                raise InvalidOption(f"order[{k}]", jid, "job listed twice")
            seen.add(jid)
            idx.append(instance.job_index[jid])
    eligible = [j for j in idx if instance.jobs[j].arrival <= start + TOL]
    G = np.array([n.total_gpus for n in nodes], dtype=np.int64)
    C = np.array([n.cpus for n in nodes], dtype=float)
    M = np.array([n.memory for n in nodes], dtype=float)
    free = int(G.sum())
    admitted = []
    for j in eligible:
        if instance.jobs[j].workers <= free:
            admitted.append(j)
            free -= instance.jobs[j].workers
    fair_rel, best, comparable, configs = {}, {}, {}, {}
    per_profile: dict[int, tuple[float, tuple[float, float, float],
                                 tuple[float, float, float], np.ndarray]] = {}
    for j in eligible:
        job = instance.jobs[j]
        if job.rate(gtype) <= 0:
            raise ModelNotApplicable(f"jobs[{j}].throughput", dict(job.throughput),
                                     f"job cannot run on the cluster's GPU type {gtype!r}")
        s = job.sensitivity
        key = id(s)
        if key not in per_profile:  # jobs of one catalog profile share its Sensitivity
            tf, b, cb = round_points(s, fair)
            if tf <= 0:
                raise ModelNotApplicable(
                    f"jobs[{j}].sensitivity", job.profile or job.id,
                    f"the profile does not cover the proportional share {fair[0]:g} cores, "
                    f"{fair[1]:g} GB per GPU (throughput 0 there)")
            # TUNE may ask for cb, which is off the grid when f is: the exact models
            # must offer it, or TUNE could score above their optimum
            rows = np.array([(fair[0], fair[1], tf), b, cb], dtype=float)
            if s is not None:
                mat = s.matrix
                ci, mi = np.nonzero(mat > 0)
                grid = np.column_stack([np.asarray(s.cpu_grid)[ci],
                                        np.asarray(s.memory_grid)[mi], mat[ci, mi]])
                rows = np.vstack([rows, grid])
            per_profile[key] = (tf, b, cb, rows)
        fair_rel[j], best[j], comparable[j], configs[j] = per_profile[key]
    return SynergyRound(instance=instance, gpu_type=gtype, nodes=nodes, G=G, C=C, M=M,
                        fair=fair, start=float(start), order=eligible, admitted=admitted,
                        fair_rel=fair_rel, best=best, configs=configs,
                        comparable=comparable)


# --------------------------------------------------------------------------- results
def effective_instance(instance: Instance, placements: Sequence[Configuration],
                       gpu_type: str) -> Instance:
    """The instance with each placed job's throughput scaled by its relative throughput."""
    scale = {p.job: p.rel for p in placements}
    jobs = []
    for j, job in enumerate(instance.jobs):
        if j in scale:
            job = Job(id=job.id, arrival=job.arrival, workers=job.workers, work=job.work,
                      throughput={k: (v * scale[j] if k == gpu_type else v)
                                  for k, v in job.throughput.items()},
                      weight=job.weight, user=job.user, profile=job.profile,
                      sensitivity=job.sensitivity, memory=job.memory, utility=job.utility)
        jobs.append(job)
    return instance.replace(jobs=tuple(jobs), name=f"{instance.name}-effective")


def round_schedule(rnd: SynergyRound, placements: Sequence[Configuration]
                   ) -> tuple[Schedule, dict[str, float]]:
    inst = rnd.instance
    t0, t1 = rnd.start, rnd.start + inst.slot
    allocs, comp, iters = [], {}, {}
    for p in placements:
        job = inst.jobs[p.job]
        rate = job.workers * job.rate(rnd.gpu_type) * p.rel
        finish = t0 + job.work / rate if rate > 0 else math.inf
        end = t1
        if finish <= t1:
            end = finish
            comp[job.id] = finish
        iters[job.id] = rate * (end - t0)
        for s, k in p.parts:
            allocs.append(Allocation(job.id, t0, end, rnd.nodes[s].name, rnd.gpu_type, int(k),
                                     cpus=k * p.cpu, memory=k * p.memory))
    return Schedule(tuple(allocs), comp), iters


def round_result(rnd: SynergyRound, placements: Sequence[Configuration], method: str,
                 seconds: float, *, status: Status = Status.FEASIBLE, **fields) -> Result:
    """Validate the round schedule (on the effective instance) and build the Result."""
    placements = sorted(placements, key=lambda p: p.job)
    inst = rnd.instance
    sched, iters = round_schedule(rnd, placements)
    eff = effective_instance(inst, placements, rnd.gpu_type)
    objective = float(sum(p.rel for p in placements))
    ids = [j.id for j in inst.jobs]
    placed = {p.job: p.rel for p in placements}
    extra = dict(fields.pop("extra", {}))
    extra.update({
        "start": rnd.start,
        "fair_share": {"cpus_per_gpu": rnd.fair[0], "memory_per_gpu": rnd.fair[1]},
        "admitted": [ids[j] for j in rnd.admitted],
        "placed": [ids[p.job] for p in placements],
        "not_placed": [ids[j] for j in rnd.admitted if j not in placed],
        "config": {ids[p.job]: (p.cpu, p.memory) for p in placements},
        "relative_throughput": {ids[p.job]: p.rel for p in placements},
        "fair_throughput": {ids[j]: rnd.fair_rel[j] for j in rnd.order},
        "iterations": iters,
        "below_fair": [ids[j] for j in rnd.admitted
                       if placed.get(j, 0.0) < rnd.fair_rel[j] - 1e-9],
    })
    return finalize(eff, sched, status=status, objective=objective, model="synergy",
                    method=method, solve_seconds=fields.pop("solve_seconds", seconds),
                    extra=extra, **fields)
