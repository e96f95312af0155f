"""Gavel (Narayanan et al., OSDI'20): heterogeneity-aware LP allocation policies.

* :mod:`.model` - notation, effective throughput and the base allocation constraints;
* :mod:`.exact` - each policy's LP (max-min fairness, makespan, finish-time fairness,
  max-sum throughput, min cost with SLOs) through the solver layer;
* :mod:`.policy` - the round mechanism turning an allocation into per-round placements
  in the shared simulator, and Gavel's FIFO.

Policies (``optsched simulate --policy gavel.NAME``; the short names are aliases):
``max_min_fairness`` (heterogeneity-aware LAS), ``max_min_fairness_agnostic``,
``min_total_duration`` (makespan), ``finish_time_fairness``, ``max_sum_throughput``,
``min_cost``, ``min_cost_slo``, ``fifo`` and ``fifo_agnostic``.
"""

from __future__ import annotations

from optsched.gavel.policy import KIND_OPTIONS, SOLVERS, GavelFIFO, GavelPolicy, RoundMechanism
from optsched.registry import PaperSpec, PolicySpec, register

__all__ = ["GavelPolicy", "GavelFIFO", "RoundMechanism", "SPEC"]

_ALL_KIND_OPTIONS = frozenset().union(*KIND_OPTIONS.values())

SPEC = register(PaperSpec(
    name="gavel",
    summary="Gavel (OSDI'20): heterogeneity-aware LP allocations and the round mechanism",
    sense="max",
    objective="min normalised throughput (max-min fairness)",
    policies=(
        *(PolicySpec(kind, factory=GavelPolicy, fixed={"kind": kind},
                     exclude=_ALL_KIND_OPTIONS - KIND_OPTIONS[kind], aliases=(kind,))
          for kind in SOLVERS),
        PolicySpec("fifo", factory=GavelFIFO, fixed={"mode": "perf"}, aliases=("fifo",)),
        PolicySpec("fifo_agnostic", factory=GavelFIFO, fixed={"mode": "base"},
                   aliases=("fifo_agnostic",)),
    ),
    reference="Narayanan et al., Heterogeneity-Aware Cluster Scheduling Policies for Deep "
              "Learning Workloads, OSDI'20",
))
