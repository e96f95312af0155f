"""Gavel's workload: the Philly-derived trace and clusters of its evaluation, and the
demo instance (the shipped trace and throughputs are in :mod:`optsched.catalog`)."""

from __future__ import annotations

from optsched.core.instance import Instance

__all__ = ["demo_instance"]


def demo_instance(n_jobs: int = 30, seed: int = 0) -> Instance:
    """One round of Gavel's allocation: the first ``n_jobs`` jobs of Gavel's 2,000-job
    Philly-derived trace (``seed`` shifts the window by ``seed * n_jobs`` jobs), all
    active at once, on Gavel's physical cluster (8 V100, 16 P100, 24 K80)."""
    from optsched.catalog import read_gavel_trace

    trace = read_gavel_trace(cluster="gavel-physical")
    lo = seed * n_jobs
    jobs = trace.jobs[lo:lo + n_jobs]
    return trace.replace(jobs=jobs, name=f"gavel-demo-{n_jobs}" + (f"-{seed}" if seed else ""))
