"""HadarE (Sultana et al., arXiv 2503.10918): Hadar with job forking across nodes.

* :func:`exact`: the time-indexed MILP of the forking model (per-node, per-type copies,
  additive progress, consolidation cost) with Hadar's utility, makespan or total-JCT
  objective, through the solver layer; ``relax=True`` (variant ``exact-lp``) gives the
  LP relaxation's bound;
* heuristic :func:`online`: Hadar's primal-dual pricing (imported from
  :mod:`optsched.hadar`) for admission and main placement, then every idle GPU offered to
  a copy of an admitted unfinished job (best marginal progress per price first);
  ``hadar-replay``: the same rounds without forking (the Hadar baseline);
* :class:`HadarEPolicy` (in the shared simulator) and :func:`simulate_hadare`: both with
  the simulator's semantics (exact completion instants);
* :func:`utilization_violations`: the maximal-utilization property checked on a schedule.

Objective: total utility :math:`\\sum_j f_j(C_j - a_j)` over completed jobs, maximised
(Hadar's). Only the paper's abstract is public: :mod:`optsched.hadare.model` states the
model and where it is our own reading.
"""

from __future__ import annotations

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.errors import InvalidOption
from optsched.hadare.exact import build_program, exact, lp_bound
from optsched.hadare.model import (
    OBJECTIVES,
    completion_values,
    consolidation_seconds,
    max_copies_of,
    utilization_violations,
)
from optsched.hadare.online import hadar_replay, online
from optsched.hadare.policy import HadarEPolicy, simulate_hadare, simulate_pair
from optsched.policies.base import register_runner
from optsched.registry import Method, ModelSpec, register

__all__ = ["exact", "lp_bound", "build_program", "online", "hadar_replay", "HadarEPolicy",
           "simulate_hadare", "simulate_pair", "utilization_violations", "consolidation_seconds",
           "max_copies_of", "completion_values", "OBJECTIVES", "demo_instance",
           "aws_like_cluster", "SPEC"]


def aws_like_cluster(v100: int = 1, p100: int = 1, k80: int = 1, gpus_per_node: int = 4):
    """A small heterogeneous cluster shaped like the paper's AWS testbed (our reading of
    the abstract: nodes of one GPU type each, V100 / P100 / K80): ``v100`` nodes of
    ``gpus_per_node`` V100 (p3.8xlarge-like), likewise P100 and K80 (p2.xlarge-like)."""
    from optsched.core.instance import Cluster, Node

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


SPEC = register(ModelSpec(
    name="hadare",
    summary="HadarE (arXiv 2503.10918): Hadar with job forking across nodes",
    sense="max",
    objective="total utility",
    methods=(
        Method("exact", exact, "exact", fixed={"relax": False}, backend=True),
        Method("exact-lp", exact, "bound", fixed={"relax": True}, backend=True),
        Method("online", online, fixed={"forking": True}),
        Method("hadar-replay", online, fixed={"forking": False}),
    ),
    default_heuristic="online",
    demo_instance=demo_instance,
    objectives={"utility": ("max", "total utility"), "makespan": ("min", "makespan (s)"),
                "jct": ("min", "total weighted JCT (s)")},
))


def _simulate(instance: Instance, *, seed: int = 0, max_time: float | None = None,
              progress: bool | None = None, **options) -> Result:
    """``optsched simulate --policy hadare``: :func:`simulate_hadare` (deterministic; its
    horizon is the slot model's T, so ``max_time`` is not an option here)."""
    if max_time is not None:
        raise InvalidOption("max_time", max_time, "HadarE runs to its slot model's horizon; "
                            "set the instance horizon instead")
    return simulate_hadare(instance, **options)


register_runner("hadare", _simulate, takes=online, exclude=frozenset({"hadar_run"}))
