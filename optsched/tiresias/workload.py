r"""Tiresias jobs from its own trace: the demo instance of the exact-vs-heuristic table.

Data: the 60-job trace shipped with Tiresias' simulator (``tiresias-60``,
:func:`optsched.catalog.read_tiresias_trace`): arrival (s), gang size (1-8 GPUs) and the
job's duration alone on its gang, which the reader turns into work and a per-worker
rate on one GPU type (P100), so that the gang's service time is the trace's duration.

The demo keeps the trace's first 12 jobs and the first two servers of its cluster
(``tiresias-n32g4``: 4 P100, 40 cores, 256 GB each), 8 GPUs: the largest gang of the
trace (8 GPUs) fits, and the jobs contend for GPUs (on the trace's own 128 GPUs, or on
16, they run side by side and every order is optimal). Nothing else is changed. The
exact MILP solves it in about 2 s.
"""

from __future__ import annotations

from optsched.core.instance import Cluster, Instance

__all__ = ["demo_instance", "DEMO_NODES"]

#: The demo cluster: the trace cluster's first servers.
DEMO_NODES = 2


def demo_instance(n_jobs: int = 12, seed: int = 0) -> Instance:
    """``n_jobs`` jobs of Tiresias' 60-job trace on its first two servers (8 P100).

    Parameters
    ----------
    n_jobs : int
        Jobs kept (1-60).
    seed : int
        0: the first ``n_jobs`` jobs of the trace (the default demo); otherwise
        ``n_jobs`` of its jobs drawn with ``numpy.random.default_rng(seed)``, at their
        recorded arrivals, in trace order (with 60 jobs every seed gives the whole
        trace).

    Returns
    -------
    Instance
        Named ``tiresias-demo-<n_jobs>`` (``-<seed>`` appended for a seed); round length
        (``slot``) 60 s as in the trace.
    """
    import numpy as np

    from optsched.catalog import shipped_trace
    from optsched.errors import InvalidOption

    trace = shipped_trace("tiresias-60")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or \
            not 1 <= n_jobs <= trace.n_jobs:
        raise InvalidOption("n_jobs", n_jobs, f"must be an integer in 1..{trace.n_jobs}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidOption("seed", seed, "must be an integer >= 0")
    cluster = Cluster(trace.cluster.nodes[:DEMO_NODES])
    if seed == 0:
        jobs = trace.jobs[:n_jobs]
    else:
        pick = np.sort(np.random.default_rng(seed).choice(trace.n_jobs, n_jobs,
                                                          replace=False))
        jobs = tuple(trace.jobs[int(i)] for i in pick)
    return trace.replace(jobs=jobs, cluster=cluster,
                         name=f"tiresias-demo-{n_jobs}" + (f"-{seed}" if seed else ""))
