"""HadarE (Sultana et al., arXiv 2503.10918): Hadar with job forking across nodes.

* :mod:`optsched.hadare.model` - the forking model (our reading of the public abstract), the
  consolidation cost, copies per job and the maximal-utilisation property;
* :mod:`optsched.hadare.exact` - the time-indexed MILP (utility, makespan or total JCT) and its LP;
* :mod:`optsched.hadare.bounds` - the LP relaxation's bound;
* :mod:`optsched.hadare.heuristics` - HadarE online: Hadar's admission and placement, then every
  idle GPU offered to a copy of an admitted job; ``hadar-replay`` without forking;
* :mod:`optsched.hadare.policy` - :class:`HadarEPolicy` in the shared simulator;
* :mod:`optsched.hadare.workload` - the AWS-shaped cluster and the demo instance.

Objective: total utility :math:`\\sum_j f_j(C_j - a_j)` over completed jobs, maximised
(Hadar's); makespan or total JCT with ``objective=``.
"""

from __future__ import annotations

from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.errors import InvalidOption
from optsched.hadare.bounds import lp_bound
from optsched.hadare.exact import build_program, exact
from optsched.hadare.heuristics import hadar_replay, online
from optsched.hadare.model import (
    OBJECTIVES,
    completion_values,
    consolidation_seconds,
    max_copies_of,
    utilization_violations,
)
from optsched.hadare.policy import HadarEPolicy, simulate_hadare, simulate_pair
from optsched.hadare.workload import aws_like_cluster, demo_instance
from optsched.registry import Method, PaperSpec, PolicySpec, register

__all__ = ["exact", "lp_bound", "build_program", "online", "hadar_replay", "HadarEPolicy",
           "simulate_hadare", "simulate_pair", "utilization_violations", "consolidation_seconds",
           "max_copies_of", "completion_values", "OBJECTIVES", "demo_instance",
           "aws_like_cluster", "SPEC"]


def _simulate(instance: Instance, *, seed: int = 0, max_time: float | None = None,
              progress: bool | None = None, **options: Any) -> Result:
    """``optsched simulate --policy hadare.online``: :func:`simulate_hadare`
    (deterministic; it runs to its slot model's horizon, so ``max_time`` is not an option
    here)."""
    if max_time is not None:
        raise InvalidOption("max_time", max_time, "HadarE runs to its slot model's horizon; "
                            "set the instance horizon instead")
    return simulate_hadare(instance, **options)


SPEC = register(PaperSpec(
    name="hadare",
    summary="HadarE (arXiv 2503.10918): Hadar with job forking across nodes",
    sense="max",
    objective="total utility",
    methods=(
        Method("exact", exact, "exact", fixed={"relax": False}, backend=True),
        Method("bound", exact, "bound", fixed={"relax": True}, backend=True,
               aliases=("exact-lp",)),
        Method("online", online, fixed={"forking": True},
               proved="none known: P <= OPT, and every admitted job completes no later "
                      "than under the Hadar replay (single-type nodes, no consolidation "
                      "delay; docs/hadare.md), but no competitive ratio is proved"),
        Method("hadar-replay", online, fixed={"forking": False},
               proved="none known: Hadar's 2α concerns Hadar's own model and admitted "
                      "set, not the optimum of HadarE's model with forking"),
    ),
    policies=(PolicySpec("online", runner=_simulate, takes=online,
                         exclude=frozenset({"hadar_run"}), aliases=("hadare",)),),
    default_heuristic="online",
    demo_instance=demo_instance,
    objectives={"utility": ("max", "total utility"), "makespan": ("min", "makespan (s)"),
                "jct": ("min", "total weighted JCT (s)")},
    reference="Sultana et al., HadarE: Heterogeneity-aware Job Forking for Efficient Deep "
              "Learning Cluster Scheduling, arXiv 2503.10918",
))
