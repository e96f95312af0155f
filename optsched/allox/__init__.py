"""AlloX (Le, Sun, Chowdhury, Liu; EuroSys'20): min-cost matching on interchangeable resources.

* :func:`exact`: R || sum (C_j - a_j) as an assignment problem (Bruno-Coffman-Sethi /
  Horn), by the matching algorithm or as an ILP through the solver layer;
* heuristics :func:`sjf`, :func:`sjf_fastest`, :func:`jsq` and :func:`online` (AlloX's
  online re-solving with the fairness filter alpha).

Objective: total job completion time :math:`\\sum_j (C_j - a_j)` in seconds (minimised);
mean JCT is that divided by the number of jobs.
"""

from __future__ import annotations

from optsched.allox.exact import exact, match
from optsched.allox.heuristics import jsq, online, sjf, sjf_fastest
from optsched.allox.machines import Machines, machines_of
from optsched.core.instance import Instance
from optsched.registry import Method, ModelSpec, register

__all__ = ["exact", "match", "sjf", "sjf_fastest", "jsq", "online", "machines_of",
           "Machines", "demo_instance", "SPEC"]


def demo_instance(n_jobs: int = 24, seed: int = 0) -> Instance:
    """Single-GPU jobs from Gavel's measured profiles on 2 V100 + 2 P100 + 2 K80 GPUs.

    Durations follow Gavel's Philly-derived mixture; all jobs are queued at time 0.
    """
    from optsched.catalog import generate_philly
    from optsched.core.instance import Cluster, Node

    cluster = Cluster(tuple(Node(f"{t}-node", {t: 2}, cpus=16, memory=128)
                            for t in ("v100", "p100", "k80")))
    inst = generate_philly(n_jobs, cluster=cluster, seed=seed, max_workers=1)
    return inst.replace(name=f"allox-demo-{n_jobs}")


SPEC = register(ModelSpec(
    name="allox",
    summary="AlloX (EuroSys'20): jobs to (machine, position) min-cost matching",
    sense="min",
    objective="total JCT (s)",
    methods=(
        Method("exact", exact, "exact", fixed={"algorithm": "matching"}),
        Method("exact-ilp", exact, "exact", fixed={"algorithm": "ilp"}, backend=True),
        Method("online", online), Method("sjf", sjf), Method("sjf_fastest", sjf_fastest),
        Method("jsq", jsq),
    ),
    default_heuristic="online",
    demo_instance=demo_instance,
))
