r"""HadarE's model: Hadar's slotted model plus job forking across nodes.

HadarE (Sultana et al., arXiv 2503.10918) "forks each job into multiple copies to let a
job train concurrently on heterogeneous GPUs resided on separate available nodes" and
consolidates the copies' results. Only the paper's abstract is public
(``shared/reference/primal_dual.md`` §5); the formal model below is **our reading** of
that sentence, built on Hadar's slotted model (:mod:`optsched.hadar.model`: slots
:math:`t = 0..T-1` of length :math:`\Delta`, first usable slot
:math:`a_j = \lceil \text{arrival}_j / \Delta \rceil`, utility
:math:`f_j = ` ``Job.value`` of the completion delay).

The forking model (our reading)
-------------------------------
* **Copies.** In every slot job :math:`j` may run up to :math:`F_j` copies
  (``max_copies``; default: as many as nodes), **at most one copy per node**; the copy on
  node :math:`h` holds :math:`x_{jthk} \in \{1..W_j\}` GPUs of **one** type :math:`k` of
  that node (:math:`x_{jthk} \le c_{hk}`). A copy is a data-parallel replica of the whole
  job; within a copy the GPUs are of one type, so the slowest-worker rule of Hadar's gang
  is moot inside a copy.
* **Additive progress.** Copies train independently and their results are merged by
  parameter averaging, so in slot :math:`t` the job progresses
  :math:`\Delta \sum_{h,k} \tau_{jk}\, x_{jthk}` iterations (``Job.throughput`` is per
  worker per second). This *credits every iteration of every copy as useful work*: it is
  the optimistic reading (merged copies are as good as the same number of sequential
  iterations); the abstract's "consistently better inference quality" is consistent
  with it, but no statistical-efficiency loss of averaging is modelled.
* **Completion and consolidation.** The job's work is done when the cumulative progress
  reaches :math:`E_j`; it then pays a consolidation cost of :math:`\kappa` seconds
  (``consolidation``, or ``consolidation_slots`` :math:`\times \Delta`) holding no GPU
  (merging happens off the GPUs) and completes at :math:`C_j = \text{done}_j + \kappa`.
  *Every* job pays :math:`\kappa`, forked or not: the core schedule format has one
  ``Schedule.consolidation`` for all jobs and the validator checks
  :math:`\text{work by } C_j - \kappa \ge E_j` (our choice: a job always checkpoints and
  merges at the end).
* **Slot model (exact MILP).** As in Hadar, a job's completion slot :math:`\hat t_j` is
  the slot in which its work is done and :math:`C_j = (\hat t_j + 1)\Delta + \kappa`;
  the objectives are Hadar's total utility :math:`\max \sum_j f_j(C_j - \text{arrival}_j)`
  over completed jobs, or (all jobs must complete) the makespan
  :math:`\max_j C_j - \min_j \text{arrival}_j` or the total weighted JCT
  :math:`\sum_j w_j (C_j - \text{arrival}_j)`.

Copy identifiers: the copy on node :math:`h` carries ``copy = h`` (the node's index in
``cluster.nodes``), so a (job, copy) pair never spans two nodes and two copies of a job
never share a node, which is what :func:`optsched.core.validate.validate_schedule` checks
for ``Schedule(forking=True)``.

Maximal utilization (the abstract's claim, stated exactly)
----------------------------------------------------------
At the start of every round :math:`t`, call a job *eligible* if Hadar's pricing admitted
it, it has arrived (:math:`\text{arrival}_j \le t\Delta`) and its work is not done. A job
*could take a copy* on an idle GPU of type :math:`k` on node :math:`h` iff
:math:`\tau_{jk} > 0` and either it has no copy on :math:`h` and fewer than :math:`F_j`
copies, or its copy on :math:`h` is of type :math:`k` and holds fewer than :math:`W_j`
GPUs. The property: **an idle GPU at a round start implies no eligible job could take a
copy there.** :func:`utilization_violations` checks it from a schedule alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.schedule import Schedule
from optsched.errors import InvalidOption

__all__ = ["consolidation_seconds", "max_copies_of", "completion_values",
           "utilization_violations", "OBJECTIVES"]

OBJECTIVES = ("utility", "makespan", "jct")
_EPS = 1e-9


def consolidation_seconds(instance: Instance, consolidation: Any = None,
                          consolidation_slots: Any = None) -> float:
    r"""The consolidation cost :math:`\kappa` in seconds (``0`` when neither is given).

    ``consolidation`` is seconds (a number :math:`\ge 0`); ``consolidation_slots`` is a
    whole number of slots (:math:`\kappa = s\Delta`). Giving both is an error.
    """
    if consolidation is not None and consolidation_slots is not None:
        raise InvalidOption("consolidation_slots", consolidation_slots,
                            "give either consolidation (seconds) or consolidation_slots")
    if consolidation_slots is not None:
        s = consolidation_slots
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise InvalidOption("consolidation_slots", s, "must be an integer >= 0")
        return float(s) * float(instance.slot)
    if consolidation is None:
        return 0.0
    c = consolidation
    if (isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating))
            or not math.isfinite(float(c)) or c < 0):
        raise InvalidOption("consolidation", c, "must be a finite number of seconds >= 0")
    return float(c)


def max_copies_of(instance: Instance, max_copies: Any = None) -> np.ndarray:
    """:math:`F_j` per job: ``None`` (as many as nodes), an integer for every job, or a
    mapping job id -> integer (others: as many as nodes)."""
    H = len(instance.cluster.nodes)
    F = np.full(instance.n_jobs, H, dtype=np.int64)
    if max_copies is None:
        return F

    def check(path: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InvalidOption(path, v, "must be an integer >= 1")
        return min(int(v), H)

    if isinstance(max_copies, dict):
        for jid, v in max_copies.items():
            if jid not in instance.job_index:
                raise InvalidOption(f"max_copies.{jid}", v, "unknown job id")
            F[instance.job_index[jid]] = check(f"max_copies.{jid}", v)
        return F
    F[:] = check("max_copies", max_copies)
    return F


def completion_values(instance: Instance, T: int, kappa: float) -> np.ndarray:
    r"""``values[j, t]`` = :math:`f_j((t+1)\Delta + \kappa - \text{arrival}_j)` for
    :math:`t \ge a_j`, else 0."""
    d = float(instance.slot)
    n = instance.n_jobs
    a = np.ceil(instance.arrivals / d - _EPS).astype(np.int64) if n else np.zeros(0, int)
    vals = np.zeros((n, T))
    tt = np.arange(T)
    for j, job in enumerate(instance.jobs):
        ok = tt >= a[j]
        if ok.any():
            vals[j, ok] = np.asarray(job.value((tt[ok] + 1) * d + kappa - job.arrival),
                                     dtype=float)
    return vals


def utilization_violations(instance: Instance, schedule: Schedule, admitted: Any,
                           max_copies: Any = None, rounds: int | None = None
                           ) -> list[dict[str, Any]]:
    r"""Every (round, idle GPU bucket, eligible job that could take a copy there).

    Computed from the schedule alone (see the module docstring for the statement):
    GPUs in use and each job's copies are read at each round start :math:`t\Delta`
    (allocations with ``start <= t*slot < end``), a job's progress by then from its
    allocations (:math:`\sum g\,\tau_k \cdot` overlap, copies additive). ``admitted`` is
    the set of admitted job ids. An empty list means the property holds. ``rounds``
    defaults to the last round any allocation or completion touches.
    """
    d = float(instance.slot)
    cl = instance.cluster
    F = max_copies_of(instance, max_copies)
    admitted = set(admitted)
    allocs = schedule.allocations
    if rounds is None:
        end = schedule.end
        rounds = int(math.ceil(end / d - _EPS)) if end > 0 else 0
    node_index = {n.name: h for h, n in enumerate(cl.nodes)}
    by_job: dict[str, list] = defaultdict(list)
    for a in allocs:
        by_job[a.job].append(a)
    out: list[dict[str, Any]] = []
    for s in range(rounds):
        t = s * d
        used: dict[tuple[str, str], int] = defaultdict(int)
        for a in allocs:
            if a.start <= t + _EPS and a.end > t + _EPS:
                used[(a.node, a.gpu_type)] += a.gpus
        idle = [(n.name, k, c - used[(n.name, k)]) for n in cl.nodes
                for k, c in n.gpus.items() if c - used[(n.name, k)] > 0]
        if not idle:
            continue
        for j, job in enumerate(instance.jobs):
            if job.id not in admitted or job.arrival > t + _EPS:
                continue
            done = 0.0
            copies: dict[str, tuple[str, int]] = {}
            for a in by_job.get(job.id, ()):
                ov = min(a.end, t) - a.start
                if ov > 0:
                    done += a.gpus * job.rate(a.gpu_type) * ov
                if a.start <= t + _EPS and a.end > t + _EPS:
                    k, g = copies.get(a.node, (a.gpu_type, 0))
                    copies[a.node] = (a.gpu_type if g == 0 else k, g + a.gpus)
            if done >= job.work * (1 - 1e-9):
                continue
            for node, k, free in idle:
                if job.rate(k) <= 0:
                    continue
                mine = copies.get(node)
                if mine is None:
                    ok = len(copies) < F[j]
                else:
                    ok = mine[0] == k and mine[1] < job.workers
                if ok:
                    out.append({"round": s, "time": t, "node": node, "gpu_type": k,
                                "idle": free, "job": job.id,
                                "node_index": node_index[node]})
    return out
