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

The other schedulers of Tiresias' public simulator (``run_sim.py --schedule``), under
its names. The non-preemptive ones (``fjf``, ``lpjf``) use the simulator's default
placement ``yarn`` (first fit, :mod:`optsched.sim.placement`); the preemptive ones
place by GPU count (``spread``, the simulator's ``count``), because the simulator's
preemptive schedulers re-place every job at each event and under its ``yarn`` placement
stop starting jobs after the first dozen (measured on its 60-job trace and on 240
Philly-derived jobs); ``placement=`` chooses another (including ``random`` and
``crandom``):

* ``fjf`` (fit job first): arrival order, non-preemptive; every waiting job whose gang
  fits starts, in arrival order (jobs that do not fit are skipped, not blocking).
* ``sjf`` (smallest job first): fewest GPUs first (ties by arrival), preemptive: at each
  event the jobs are taken in that order and each starts or keeps running if its gang
  fits, else waits (a running job that no longer fits is preempted); skipping.
* ``lpjf`` (longest pending job first): non-preemptive; waiting jobs by time waited
  since submission, longest first, i.e. by arrival, and the first that does not fit
  blocks the rest: the order of ``yarn_fifo``. ``scan="original"``: the original's
  pass, which does not look at the job after each one it starts.
* ``shortest`` (shortest remaining time first): remaining time
  :math:`r_j / (W_j \\max_k T_{jk})` ascending, preemptive, skipping (``needs_work``).
* ``shortest_gpu``: remaining GPU-time :math:`W_j \\times` remaining time ascending,
  preemptive, skipping (``needs_work``).
* ``shortest_expected``: :func:`~optsched.tiresias.policy.expected_remaining` of the
  executed seconds ascending (the mean of the GPU-time samples above them),
  preemptive, skipping, evaluated at arrivals and completions (as the simulator's);
  it needs no job sizes. ``expected_keys="original"``: the original's keys (set at
  arrival, updated on the most recently arrived job).
* ``dlas_gpu_pack``: 2D-LAS in which two jobs of equal gangs share the same GPUs when
  their memory shares fit, at the instance's co-located rates
  (:class:`~optsched.tiresias.policy.PackingTiresiasPolicy`; :func:`full_speed_colocation`
  declares the simulator's full-speed assumption).
* ``gandiva``: the simulator's Gandiva, node sets per gang size with 60 s time slices
  on 10 s steps (:class:`~optsched.tiresias.policy.GandivaPolicy`).
"""

from __future__ import annotations

from typing import Any

from optsched.core.validate import Capabilities
from optsched.registry import Method, PaperSpec, PolicySpec, register
from optsched.tiresias.bounds import lp_bound
from optsched.tiresias.exact import exact
from optsched.tiresias.heuristics import OUTSIDE_EXACT, gittins, las, srtf, yarn_fifo
from optsched.tiresias.model import TiresiasModel, build_model
from optsched.tiresias.policy import (
    DEFAULT_THRESHOLDS,
    GandivaPolicy,
    GittinsIndex,
    PackingTiresiasPolicy,
    Tiresias,
    TiresiasPolicy,
    expected_remaining,
    full_speed_colocation,
    gittins_index,
    gittins_index_fixed,
    gittins_index_grid,
)
from optsched.tiresias.workload import demo_instance

__all__ = ["exact", "lp_bound", "las", "gittins", "yarn_fifo", "srtf", "build_model",
           "TiresiasModel", "demo_instance", "TiresiasPolicy", "Tiresias", "GittinsIndex",
           "gittins_index", "gittins_index_fixed", "gittins_index_grid", "expected_remaining",
           "PackingTiresiasPolicy", "full_speed_colocation", "GandivaPolicy", "SPEC"]

_GITTINS_OPTIONS = frozenset({"gittins_samples", "gittins_delta", "gittins_code_quirk",
                              "gittins_grid", "gittins_scheme"})


def _policy(name: str, alias: str, defaults: dict[str, Any] | None = None,
            factory: Any = TiresiasPolicy, declared: Capabilities | None = None,
            **fixed: Any) -> PolicySpec:
    # options that cannot change this policy's decisions are not its options
    exclude = set() if fixed["order"] == "gittins" else set(_GITTINS_OPTIONS)
    if fixed["order"] == "expected":
        exclude.discard("gittins_samples")
    if "thresholds" in fixed and fixed["thresholds"] is None:
        exclude |= {"promote_knob", "demotion"}
    if fixed["order"] in ("fifo", "srtf", "srtf_gpu", "gpus") \
            or fixed.get("gittins_scheme") == "original":
        exclude.add("dims")
    if fixed["order"] != "las" or fixed.get("thresholds", DEFAULT_THRESHOLDS) is None:
        exclude.add("queue_order")
    if fixed["order"] in ("las", "gittins"):
        exclude.add("rounds")
    if fixed.get("preemptive", True):  # the original's pass of a non-preemptive scheduler
        exclude.add("scan")
    if fixed["order"] != "expected":
        exclude.add("expected_keys")
    return PolicySpec(name, factory=factory, fixed=fixed,
                      defaults={"name": alias, **(defaults or {})},
                      exclude=frozenset(exclude), aliases=(alias,), declared=declared)


#: The rules of ``dlas_gpu_pack``'s schedules: Tiresias', plus two jobs on the same GPUs
#: at the instance's co-located rates.
_PACKED = Capabilities(time="slots", colocation=True, source="Tiresias' dlas-gpu-pack")

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
        _policy("dlas_gpu_pack", "tiresias_dlas_gpu_pack", factory=PackingTiresiasPolicy,
                declared=_PACKED, order="las"),
        _policy("gittins", "tiresias_gittins", order="gittins"),
        _policy("gittins_fixed", "tiresias_gittins_fixed", order="gittins",
                gittins_delta=3250.0),
        # the public simulator's --schedule=gittins (one list, lowest index first)
        _policy("gittins_original", "tiresias_gittins_original", order="gittins",
                thresholds=None, gittins_scheme="original", defaults={"gittins_grid": True}),
        _policy("las_continuous", "las_2d_continuous", order="las", thresholds=None),
        _policy("las_1d", "las_1d", order="las", dims=1),
        _policy("yarn_fifo", "fifo_yarn", order="fifo", preemptive=False, thresholds=None,
                skip=False, defaults={"placement": "yarn"}),
        _policy("fifo_backfill", "fifo_backfill", order="fifo", preemptive=False,
                thresholds=None),
        _policy("srtf", "srtf", order="srtf", thresholds=None),
        # the public simulator's other schedulers, deciding at arrivals and completions
        # as it does: the non-preemptive ones with its default placement (yarn), the
        # preemptive ones with GPU counting (spread)
        _policy("fjf", "tiresias_fjf", order="fifo", preemptive=False, thresholds=None,
                rounds=False, defaults={"placement": "yarn"}),
        _policy("sjf", "tiresias_sjf", order="gpus", thresholds=None, rounds=False,
                defaults={"placement": "spread"}),
        _policy("lpjf", "tiresias_lpjf", order="fifo", preemptive=False, thresholds=None,
                skip=False, rounds=False, defaults={"placement": "yarn"}),
        _policy("shortest", "tiresias_shortest", order="srtf", thresholds=None, rounds=False,
                defaults={"placement": "spread"}),
        _policy("shortest_gpu", "tiresias_shortest_gpu", order="srtf_gpu", thresholds=None,
                rounds=False, defaults={"placement": "spread"}),
        _policy("shortest_expected", "tiresias_shortest_expected", order="expected",
                thresholds=None, dims=1, rounds=False, defaults={"placement": "spread"}),
        PolicySpec("gandiva", factory=GandivaPolicy, aliases=("tiresias_gandiva",)),
    ),
    reference="Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, "
              "NSDI'19",
))
