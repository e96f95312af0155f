"""Gavel (Narayanan et al., OSDI'20): heterogeneity-aware LP allocation policies.

* :mod:`optsched.gavel.model` - notation, effective throughput, the base allocation constraints and
  the objectives of one round's allocation;
* :mod:`optsched.gavel.exact` - each policy's LP (max-min fairness, makespan, finish-time fairness,
  max-sum throughput, min cost with SLOs, water filling; the makespan as Gavel's code
  answers it) through the solver layer;
* :mod:`optsched.gavel.bounds` - closed-form bounds on the round's optimum;
* :mod:`optsched.gavel.heuristics` - the allocations Gavel is compared with (isolated, agnostic,
  FIFO) and the fractions the round mechanism realises;
* :mod:`optsched.gavel.policy` - the round mechanism turning an allocation into per-round placements
  in the shared simulator, and Gavel's FIFO;
* :mod:`optsched.gavel.workload` - the demo instance (the shipped trace is in
  :mod:`optsched.catalog`).

As a ``solve`` model the instance's jobs are one round's active jobs; ``objective``
chooses the policy's objective (default max-min fairness).

Policies (``optsched simulate --policy gavel.NAME``; the short names are aliases):
``max_min_fairness`` (heterogeneity-aware LAS), ``max_min_fairness_agnostic``,
``max_min_fairness_water_filling`` and ``..._agnostic`` (hierarchical max-min, a level
LP and a bottleneck MILP per level), ``min_total_duration`` (makespan) and
``min_total_duration_agnostic``, ``finish_time_fairness`` and
``finish_time_fairness_agnostic``, ``isolated``, ``max_sum_throughput``, ``min_cost``,
``min_cost_slo``, ``fifo`` and ``fifo_agnostic``; the space-sharing policies
``max_min_fairness_packed``, ``min_total_duration_packed``,
``finish_time_fairness_packed``, ``max_sum_throughput_normalized_by_cost_packed_SLOs``,
``max_min_fairness_water_filling_packed`` and ``fifo_packed`` (pairs of jobs on the same
GPUs at the instance's measured co-located rates: the model in
:mod:`optsched.gavel.model`, "Space sharing", the programs in :mod:`optsched.gavel.exact`,
the policies in :mod:`optsched.gavel.policy`), and ``gandiva`` (Gandiva's random pairs as
Gavel's allocation, :class:`optsched.gavel.policy.GavelGandivaPolicy`).
"""

from __future__ import annotations

from optsched.core.validate import Capabilities
from optsched.gavel.bounds import bound
from optsched.gavel.exact import exact
from optsched.gavel.heuristics import agnostic, fifo, isolated, rounds
from optsched.gavel.model import OBJECTIVES, objective_value, round_state
from optsched.gavel.policy import (
    AGNOSTIC,
    KIND_OPTIONS,
    PACKED_KIND_OPTIONS,
    PACKED_KINDS,
    SOLVERS,
    GavelFIFO,
    GavelFIFOPolicy,
    GavelGandivaPolicy,
    GavelPackedFIFOPolicy,
    GavelPackedPolicy,
    GavelPolicy,
    RoundMechanism,
    realised_fractions,
    tied_types,
)
from optsched.gavel.workload import demo_instance
from optsched.registry import Method, PaperSpec, PolicySpec, register

__all__ = ["exact", "bound", "isolated", "agnostic", "fifo", "rounds", "GavelPolicy",
           "GavelFIFOPolicy", "GavelPackedPolicy", "GavelPackedFIFOPolicy", "GavelFIFO",
           "GavelGandivaPolicy",
           "RoundMechanism", "realised_fractions", "round_state", "objective_value",
           "OBJECTIVES", "demo_instance", "SPEC"]

_ALL_KIND_OPTIONS = frozenset().union(*KIND_OPTIONS.values())
_ALL_PACKED_OPTIONS = frozenset().union(*PACKED_KIND_OPTIONS.values())
#: The rules of the packed policies' schedules: Gavel's, plus two jobs on one GPU at
#: their measured co-located rates.
_PACKED = Capabilities(colocation=True, source="Gavel's packed policies")

SPEC = register(PaperSpec(
    name="gavel",
    summary="Gavel (OSDI'20): heterogeneity-aware LP allocations and the round mechanism",
    sense="max",
    objective=OBJECTIVES["max_min_fairness"][1],
    methods=(
        Method("exact", exact, "exact", backend=True),
        Method("bound", bound, "bound"),
        Method("rounds", rounds, backend=True,
               proved="none known: the round mechanism's time fractions are feasible for "
                      "Gavel's LP, so never better than its optimum; Gavel claims they "
                      "converge to the LP allocation as rounds grow, with no rate proved"),
        Method("agnostic", agnostic, backend=True,
               proved="none known: a feasible allocation of Gavel's LP; Gavel proves no "
                      "ratio (it reports up to 3.5x in mean JCT over a whole trace)"),
        Method("isolated", isolated,
               proved="none known: a feasible allocation (each job an equal share of the "
                      "cluster); Gavel proves no ratio for it"),
        Method("fifo", fifo,
               proved="none known: a feasible allocation (jobs in arrival order on the "
                      "fastest free type); Gavel proves no ratio for it"),
    ),
    default_heuristic="rounds",
    demo_instance=demo_instance,
    objectives=OBJECTIVES,
    policies=(
        *(PolicySpec(kind, factory=GavelPolicy, fixed={"kind": kind},
                     exclude=_ALL_KIND_OPTIONS - KIND_OPTIONS[kind], aliases=(kind,),
                     draws="the order of a job's GPU types of equal priority, every round",
                     draws_if=None if kind in AGNOSTIC else tied_types)
          for kind in SOLVERS),
        PolicySpec("fifo", factory=GavelFIFOPolicy, fixed={"mode": "perf"}, aliases=("fifo",)),
        PolicySpec("fifo_agnostic", factory=GavelFIFOPolicy, fixed={"mode": "base"},
                   aliases=("fifo_agnostic",),
                   draws="each job's GPU type among the free types it can use"),
        # space sharing: two jobs on the same GPUs, validated with co-location
        *(PolicySpec(kind, factory=GavelPackedPolicy, fixed={"kind": kind},
                     exclude=_ALL_PACKED_OPTIONS - PACKED_KIND_OPTIONS[kind],
                     aliases=(kind,), declared=_PACKED,
                     draws="the order of a combination's GPU types of equal priority, "
                           "every round",
                     draws_if=tied_types)
          for kind in PACKED_KINDS),
        PolicySpec("fifo_packed", factory=GavelPackedFIFOPolicy, aliases=("fifo_packed",),
                   declared=_PACKED),
        PolicySpec("gandiva", factory=GavelGandivaPolicy, declared=_PACKED,
                   draws="the pairs of jobs packed together, at each allocation of an "
                         "over-subscribed cluster (unless pairing_seed is given); the order of a "
                         "combination's GPU types of equal priority, every round",
                   draws_if=None),
    ),
    reference="Narayanan et al., Heterogeneity-Aware Cluster Scheduling Policies for Deep "
              "Learning Workloads, OSDI'20",
))
