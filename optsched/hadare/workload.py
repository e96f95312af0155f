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
    """Gavel-profile jobs (1-4 workers) arriving over about an hour on one node of 4 GPUs
    of each of V100/P100/K80, 30-minute slots, OASiS-style sigmoid utilities, 12 slots."""
    from optsched.catalog import generate_philly
    from optsched.hadar import assign_utilities

    inst = generate_philly(n_jobs, cluster=aws_like_cluster(), seed=seed, max_workers=4,
                           jobs_per_hour=4.0, slot=1800.0)
    inst = inst.replace(name=f"hadare-demo-{n_jobs}", horizon=12 * 1800.0)
    return assign_utilities(inst, "sigmoid", seed=seed)
