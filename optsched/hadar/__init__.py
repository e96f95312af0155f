"""Hadar (Sultana et al., IPDPS'24): heterogeneity-aware online scheduling by the
OASiS primal-dual framework (Bao et al., INFOCOM'18) with price functions.

* :mod:`optsched.hadar.model` - the slotted model, its price-function parameters and the prices;
* :mod:`optsched.hadar.exact` - the compact time-indexed MILP (all arrivals known) and its LP;
* :mod:`optsched.hadar.bounds` - the dual subroutine, the dual certificate :math:`D \\ge
  \\mathrm{OPT}`, the proved ratio :math:`2\\alpha` and the LP bound;
* :mod:`optsched.hadar.heuristics` - the online algorithm (OASiS Alg. 1);
* :mod:`optsched.hadar.policy` - Hadar as a simulator policy (rolling windows, retries);
* :mod:`optsched.hadar.workload` - OASiS-style utilities and the demo instance.

Objective: total utility :math:`\\sum_j f_j(C_j - a_j)` over admitted (completed) jobs,
maximised; :math:`f_j` = ``Job.value`` (``weight x utility``; a job without a utility is
worth its weight), completion at the end of the completion slot.
"""

from __future__ import annotations

from optsched.hadar.bounds import (
    Certificate,
    RatioReport,
    competitive_ratio,
    dual_certificate,
    dual_subroutine,
)
from optsched.hadar.exact import build_program, exact, lp_bound
from optsched.hadar.heuristics import DEFAULT_QUANTA, online, run_online
from optsched.hadar.model import HadarModel, build_model, default_slots
from optsched.hadar.policy import HadarPolicy, simulate_hadar
from optsched.hadar.workload import assign_utilities, demo_instance
from optsched.registry import Method, PaperSpec, PolicySpec, register

__all__ = ["exact", "lp_bound", "build_program", "online", "run_online", "dual_subroutine",
           "dual_certificate", "Certificate", "competitive_ratio", "RatioReport",
           "HadarModel", "HadarPolicy", "build_model", "default_slots", "assign_utilities",
           "demo_instance", "simulate_hadar", "DEFAULT_QUANTA", "SPEC"]

SPEC = register(PaperSpec(
    name="hadar",
    summary="Hadar (IPDPS'24): OASiS primal-dual online scheduling on heterogeneous GPUs",
    sense="max",
    objective="total utility",
    methods=(
        Method("exact", exact, "exact", fixed={"relax": False}, backend=True),
        Method("bound", exact, "bound", fixed={"relax": True}, backend=True,
               aliases=("exact-lp",)),
        Method("online", online,
               proved="2α: P >= OPT/(2α), α = max_k(1, ln(U_k/L)) (OASiS Thm. 4), under "
                      "its assumptions (small demands: no job takes more than a quarter "
                      "of a (node, type) bucket in one slot; the price bounds U, L); each "
                      "result says whether they hold on its instance"),
    ),
    policies=(PolicySpec("online", runner=simulate_hadar, takes=HadarPolicy,
                         aliases=("hadar",)),),
    default_heuristic="online",
    demo_instance=demo_instance,
    reference="Sultana et al., Hadar: Heterogeneity-Aware Optimization-Based Online "
              "Scheduling for Deep Learning Cluster, IPDPS'24",
))
