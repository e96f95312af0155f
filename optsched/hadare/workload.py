"""HadarE's workload: the AWS-shaped cluster of its testbed and the demo instance."""

from __future__ import annotations

from optsched.core.instance import Cluster, Instance, Node

__all__ = ["aws_like_cluster", "demo_instance"]


def aws_like_cluster(v100: int = 1, p100: int = 1, k80: int = 1,
                     gpus_per_node: int = 4) -> Cluster:
    """A small heterogeneous cluster shaped like the paper's AWS testbed (our reading of
    the abstract: nodes of one GPU type each, V100 / P100 / K80): ``v100`` nodes of
    ``gpus_per_node`` V100 (p3.8xlarge-like), likewise P100 and K80 (p2.xlarge-like)."""
    nodes = []
    for t, count in (("v100", v100), ("p100", p100), ("k80", k80)):
        nodes += [Node(f"{t}-{i}", {t: gpus_per_node}) for i in range(count)]
    return Cluster(tuple(nodes))


def demo_instance(n_jobs: int = 6, seed: int = 0) -> Instance:
    r"""Gavel-profile jobs (1-4 workers) arriving as a Poisson stream of 4 jobs an hour
    on one node of 4 GPUs of each of V100/P100/K80, 30-minute slots, OASiS-style sigmoid
    utilities.

    The horizon grows with the arrivals: the larger of 12 slots and the first slot
    boundary after the last arrival, :math:`H = \Delta \max(12, \lfloor a_{\max} /
    \Delta \rfloor + 1)` with :math:`\Delta = 1800` s
    (:func:`optsched.hadar.workload.demo_horizon`), so every job arrives before it
    whatever ``n_jobs``: 12 slots (6 h) up to about 24 jobs, about :math:`n/2` slots
    beyond (:math:`a_{\max} \approx n/4` hours). The instances whose arrivals all fall
    within 12 slots (every ``n_jobs <= 26`` at ``seed=0``) are those of a fixed 12-slot
    horizon.

    Complexity: :math:`O(n)` (drawing the jobs).
    """
    from optsched.catalog import generate_philly
    from optsched.hadar import assign_utilities
    from optsched.hadar.workload import demo_horizon

    inst = generate_philly(n_jobs, cluster=aws_like_cluster(), seed=seed, max_workers=4,
                           jobs_per_hour=4.0, slot=1800.0)
    inst = inst.replace(name=f"hadare-demo-{n_jobs}",
                        horizon=demo_horizon(inst.arrivals, 1800.0, 12))
    return assign_utilities(inst, "sigmoid", seed=seed)
