r"""One metrics module, computed from an instance and a validated schedule.

Definitions (time in seconds; :math:`C_j` completion, :math:`a_j` arrival):

* coverage: ``n_jobs`` jobs in the instance, ``n_completed`` of them completed (in the
  schedule's ``completion``), the others listed in ``unfinished``. Every average,
  percentile and maximum below is over the ``n_completed`` completed jobs only, which
  the record states beside them (the validator refuses a schedule that leaves a job that
  did all its work out of ``completion``, so no finished job is skipped);
* JCT :math:`C_j - a_j`; mean, median (p50) and p99 over completed jobs;
* makespan ("total time duration"): :math:`\max_j C_j - \min_j a_j` over completed jobs;
* CRU (cluster resource utilization): busy GPU-seconds / (total GPUs x makespan), with a
  shared GPU counted by its share;
* queueing delay: first start - arrival, for jobs that started;
* waiting time :math:`(C_j - a_j) - |\bigcup_i [s_i, e_i)|`, over the intervals
  :math:`[s_i, e_i)` of the job's allocations (any GPU, any share, any copy): the time a
  completed job spent in the system holding no GPU, so :math:`0 \le` waiting
  :math:`\le` JCT and queueing delay :math:`\le` waiting. The two differ for a
  time-sharing scheduler, which starts a job at once and then parks it between rounds
  (Gavel's rounds), against one that starts a job late and runs it without a break;
* weighted utility :math:`\sum_j w_j f_j(C_j - a_j)` over completed jobs
  (:meth:`optsched.core.instance.Job.value`);
* finish-time fairness :math:`\rho_j = (C_j - a_j) / t^{iso}_j` (Themis, NSDI'20; Gavel
  §4): :math:`t^{iso}_j` is the job's runtime on an equal 1/n share of the cluster with
  n the number of jobs in the instance, i.e. it holds each type k for a time fraction
  :math:`x_k = (c_k / n) / W_j` (rows scaled so :math:`\sum_k x_k \le 1`) and runs at
  :math:`W_j \sum_k T_{jk} x_k`. :math:`\rho \le 1` means no worse than an equal share;
* slowdown :math:`(C_j - a_j) / (E_j / (W_j \max_k T_{jk}))`: JCT over the exclusive
  run time on the fastest type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.schedule import Schedule

__all__ = ["Metrics", "compute_metrics", "isolated_runtime"]


@dataclass(frozen=True)
class Metrics:
    """Metrics of one schedule (module docstring): ``n_completed`` of the ``n_jobs`` jobs
    completed, and every statistic is over those; ``unfinished`` lists the others."""

    n_jobs: int
    n_completed: int
    mean_jct: float | None
    p50_jct: float | None
    p99_jct: float | None
    makespan: float | None
    cru: float | None
    busy_gpu_seconds: float
    mean_queueing_delay: float | None
    utility: float
    mean_ftf: float | None
    max_ftf: float | None
    mean_slowdown: float | None
    mean_waiting_time: float | None = None
    completion: dict[str, float] = field(default_factory=dict)
    jct: dict[str, float] = field(default_factory=dict)
    queueing_delay: dict[str, float] = field(default_factory=dict)
    waiting_time: dict[str, float] = field(default_factory=dict)
    unfinished: tuple[str, ...] = ()

    @property
    def n_unfinished(self) -> int:
        """Jobs of the instance no statistic covers (not completed)."""
        return self.n_jobs - self.n_completed

    @property
    def complete(self) -> bool:
        """Every job of the instance completed: the statistics cover them all."""
        return self.n_completed == self.n_jobs

    def to_dict(self, per_job: bool = True) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in (
            "n_jobs", "n_completed", "n_unfinished", "mean_jct", "p50_jct", "p99_jct",
            "makespan", "cru",
            "busy_gpu_seconds", "mean_queueing_delay", "utility", "mean_ftf", "max_ftf",
            "mean_slowdown", "mean_waiting_time")}
        if per_job:
            d["completion"] = dict(self.completion)
            d["jct"] = dict(self.jct)
            d["queueing_delay"] = dict(self.queueing_delay)
            d["waiting_time"] = dict(self.waiting_time)
            d["unfinished"] = list(self.unfinished)
        return d


def isolated_runtime(instance: Instance) -> np.ndarray:
    """:math:`t^{iso}_j` of every job (see module docstring)."""
    n = max(instance.n_jobs, 1)
    cap = instance.cluster.capacity.sum(axis=0).astype(float)
    T = instance.throughput_matrix
    W = instance.workers.astype(float)
    x = (cap[None, :] / n) / W[:, None] * (T > 0)
    rows = x.sum(axis=1, keepdims=True)
    x = np.where(rows > 1, x / np.maximum(rows, 1e-300), x)
    rate = W * (T * x).sum(axis=1)
    return instance.work / rate


def _covered(intervals: list[tuple[float, float]]) -> float:
    """Length of the union of ``intervals`` (sorted and merged: O(k log k) for k
    intervals)."""
    total, end = 0.0, -np.inf
    for s, e in sorted(intervals):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def compute_metrics(instance: Instance, schedule: Schedule) -> Metrics:
    """Metrics of ``schedule`` (assumed validated by :func:`optsched.validate_schedule`).

    ``instance`` and ``schedule`` may also be their JSON forms (mappings); anything else
    raises :class:`~optsched.errors.InvalidInput` naming the argument.
    """
    from optsched.core.coerce import as_instance, as_schedule

    instance = as_instance(instance)
    schedule = as_schedule(schedule)
    comp = dict(schedule.completion)
    jobs = {j.id: j for j in instance.jobs}
    jct = {jid: c - jobs[jid].arrival for jid, c in comp.items()}
    first: dict[str, float] = {}
    spans: dict[str, list[tuple[float, float]]] = {}
    busy = 0.0
    for a in schedule.allocations:
        first[a.job] = min(first.get(a.job, np.inf), a.start)
        busy += a.gpus * a.share * (a.end - a.start)
        spans.setdefault(a.job, []).append((a.start, a.end))
    qd = {jid: t - jobs[jid].arrival for jid, t in first.items()}
    wait = {jid: d - _covered(spans.get(jid, [])) for jid, d in jct.items()}
    v = np.array(list(jct.values()), dtype=float)
    if comp:
        start = min(j.arrival for j in instance.jobs)
        makespan = max(comp.values()) - start
    else:
        makespan = None
    cru = busy / (instance.cluster.total_gpus * makespan) if makespan else None
    util = float(sum(jobs[jid].value(d) for jid, d in jct.items()))
    idx = instance.job_index
    iso = isolated_runtime(instance)
    ftf = np.array([jct[jid] / iso[idx[jid]] for jid in jct]) if jct else np.zeros(0)
    slow = np.array([jct[jid] / jobs[jid].min_duration() for jid in jct]) if jct else np.zeros(0)
    def stat(f, a: np.ndarray) -> float | None:
        return float(f(a)) if a.size else None

    return Metrics(
        n_jobs=instance.n_jobs, n_completed=len(comp), mean_jct=stat(np.mean, v),
        p50_jct=stat(np.median, v), p99_jct=stat(lambda a: np.percentile(a, 99), v),
        makespan=makespan, cru=cru, busy_gpu_seconds=float(busy),
        mean_queueing_delay=stat(np.mean, np.array(list(qd.values()), dtype=float)),
        utility=util, mean_ftf=stat(np.mean, ftf), max_ftf=stat(np.max, ftf),
        mean_slowdown=stat(np.mean, slow),
        mean_waiting_time=stat(np.mean, np.array(list(wait.values()), dtype=float)),
        completion=comp, jct=jct, queueing_delay=qd, waiting_time=wait,
        unfinished=tuple(j.id for j in instance.jobs if j.id not in comp))
