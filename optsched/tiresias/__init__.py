"""Tiresias (Gu et al., NSDI'19): 2D-LAS and 2D-Gittins for distributed DL jobs.

* :mod:`optsched.tiresias.model` - gang jobs on a GPU cluster, total JCT; the slotted model;
* :mod:`optsched.tiresias.exact` - the slotted time-indexed MILP (optimal total JCT);
* :mod:`optsched.tiresias.bounds` - the mean-busy-time interval LP, a lower bound valid for
  every schedule;
* :mod:`optsched.tiresias.heuristics` - 2D-LAS, 2D-Gittins, YARN-CS FIFO and SRTF run over
  the instance;
* :mod:`optsched.tiresias.policy` - the queue-ordered gang scheduler (2D-LAS, 2D-Gittins) and the
  baselines it is compared with (YARN-CS FIFO, SRTF, 1D-LAS), event-driven in the shared
  simulator;
* :mod:`optsched.tiresias.workload` - the demo instance (Tiresias' own trace).

Objective: total JCT :math:`\\sum_j (C_j - r_j)` in seconds (minimised).

Policies (``optsched simulate --policy tiresias.NAME``; older names are aliases):
``las`` (2D-LAS), ``gittins`` (2D-Gittins), ``gittins_fixed`` (fixed-Delta index),
``las_continuous``, ``las_1d``, ``yarn_fifo`` (YARN-CS: head-of-line blocking,
consolidated gangs), ``fifo_backfill`` (FIFO that starts smaller jobs around a blocked
head) and ``srtf``.
"""

from __future__ import annotations

from typing import Any

from optsched.registry import Method, PaperSpec, PolicySpec, register
from optsched.tiresias.bounds import lp_bound
from optsched.tiresias.exact import exact
from optsched.tiresias.heuristics import OUTSIDE_EXACT, gittins, las, srtf, yarn_fifo
from optsched.tiresias.model import TiresiasModel, build_model
from optsched.tiresias.policy import (
    DEFAULT_THRESHOLDS,
    GittinsIndex,
    Tiresias,
    TiresiasPolicy,
    gittins_index,
    gittins_index_fixed,
)
from optsched.tiresias.workload import demo_instance

__all__ = ["exact", "lp_bound", "las", "gittins", "yarn_fifo", "srtf", "build_model",
           "TiresiasModel", "demo_instance", "TiresiasPolicy", "Tiresias", "GittinsIndex",
           "gittins_index", "gittins_index_fixed", "SPEC"]

_GITTINS_OPTIONS = frozenset({"gittins_samples", "gittins_delta", "gittins_code_quirk"})


def _policy(name: str, alias: str, defaults: dict[str, Any] | None = None,
            **fixed: Any) -> PolicySpec:
    # options that cannot change this policy's decisions are not its options
    exclude = set() if fixed["order"] == "gittins" else set(_GITTINS_OPTIONS)
    if "thresholds" in fixed and fixed["thresholds"] is None:
        exclude.add("promote_knob")
    if fixed["order"] in ("fifo", "srtf"):
        exclude.add("dims")
    if fixed["order"] != "las" or fixed.get("thresholds", DEFAULT_THRESHOLDS) is None:
        exclude.add("queue_order")
    return PolicySpec(name, factory=TiresiasPolicy, fixed=fixed,
                      defaults={"name": alias, **(defaults or {})},
                      exclude=frozenset(exclude), aliases=(alias,))


#: What is proved about each rule's total JCT (``Method.proved``): only LB <= OPT <= it.
PROVED = {
    "las": "none known: LAS is not constant-competitive for total JCT",
    "gittins": "none known: the Gittins index is optimal only on one server without gangs "
               "or release dates (Tiresias §3.2)",
    "yarn_fifo": "none known: first come, first served has no constant ratio for total "
                 "JCT (one long job ahead of many short ones)",
    "srtf": "none known: SRPT is optimal on one server without gangs; with gangs it is not",
}

SPEC = register(PaperSpec(
    name="tiresias",
    summary="Tiresias (NSDI'19): 2D-LAS / 2D-Gittins gang scheduling, total JCT",
    sense="min",
    objective="total JCT (s)",
    methods=(
        Method("exact", exact, "exact", backend=True),
        Method("bound", lp_bound, "bound", backend=True, aliases=("exact-lp",)),
        *(Method(fn.__name__, fn, outside_exact=OUTSIDE_EXACT, proved=PROVED[fn.__name__])
          for fn in (las, gittins, yarn_fifo, srtf)),
    ),
    default_heuristic="las",
    demo_instance=demo_instance,
    policies=(
        _policy("las", "tiresias_las", order="las"),
        _policy("gittins", "tiresias_gittins", order="gittins"),
        _policy("gittins_fixed", "tiresias_gittins_fixed", order="gittins",
                gittins_delta=3250.0),
        _policy("las_continuous", "las_2d_continuous", order="las", thresholds=None),
        _policy("las_1d", "las_1d", order="las", dims=1),
        _policy("yarn_fifo", "fifo_yarn", order="fifo", preemptive=False, thresholds=None,
                skip=False, defaults={"placement": "yarn"}),
        _policy("fifo_backfill", "fifo_backfill", order="fifo", preemptive=False,
                thresholds=None),
        _policy("srtf", "srtf", order="srtf", thresholds=None),
    ),
    reference="Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, "
              "NSDI'19",
))
