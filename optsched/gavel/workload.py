"""Gavel's workload: the Philly-derived trace and clusters of its evaluation, and the
demo instance (the shipped trace and throughputs are in :mod:`optsched.catalog`)."""

from __future__ import annotations

from dataclasses import replace

from optsched.core.instance import Cluster, Instance, Job
from optsched.errors import InvalidOption

__all__ = ["demo_instance", "fits_one_type"]


def fits_one_type(job: Job, cluster: Cluster) -> bool:
    """Whether some GPU type the job can use (positive throughput) has at least
    ``job.workers`` GPUs in ``cluster``: Gavel runs a gang on one GPU type
    (:meth:`optsched.gavel.model.RoundState.check_fits` refuses any other job)."""
    pool = cluster.gpus_per_type
    return any(job.workers <= pool.get(t, 0) for t, rate in job.throughput.items()
               if rate > 0)


def demo_instance(n_jobs: int = 30, seed: int = 0) -> Instance:
    r"""One round of Gavel's allocation: ``n_jobs`` jobs of Gavel's 2,000-job
    Philly-derived trace, all active at once, on Gavel's physical cluster (8 V100,
    16 P100, 24 K80).

    The jobs are taken in trace order from job ``seed * n_jobs`` on, skipping the jobs
    whose gang fits no GPU type of the cluster (:func:`fits_one_type`: the trace's five
    32-worker jobs, more than the 24 K80), which Gavel's model refuses. The walk wraps
    around the trace: the job at position :math:`k \ge N` of the walk (counted from the
    trace's first job; :math:`N` = 2,000) is a copy of job :math:`k \bmod N` with its
    id suffixed ``"-r{k // N}"``, so any ``n_jobs`` gives ``n_jobs`` distinct jobs (the
    trace holds 1,995 that fit). A window of the trace holding no skipped job is the same
    instance as a plain slice of the trace, as before.

    Raises
    ------
    InvalidOption
        ``n_jobs`` not a positive integer or ``seed`` negative.

    Complexity: :math:`O(n + N)` for the trace's :math:`N` jobs.
    """
    from optsched.catalog import read_gavel_trace

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise InvalidOption("n_jobs", n_jobs, "must be a positive integer")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidOption("seed", seed, "must be a non-negative integer")
    trace = read_gavel_trace(cluster="gavel-physical")
    N = len(trace.jobs)
    fits = [fits_one_type(j, trace.cluster) for j in trace.jobs]
    if not any(fits):   # not so for the shipped trace; guards the walk below
        raise InvalidOption("trace", trace.name, "no job fits one GPU type of the cluster")
    jobs: list[Job] = []
    k = seed * n_jobs
    while len(jobs) < n_jobs:
        i = k % N
        if fits[i]:
            job = trace.jobs[i]
            r = k // N
            jobs.append(job if r == 0 else replace(job, id=f"{job.id}-r{r}"))
        k += 1
    return trace.replace(jobs=tuple(jobs),
                         name=f"gavel-demo-{n_jobs}" + (f"-{seed}" if seed else ""))
