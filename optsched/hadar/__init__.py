"""Hadar (Sultana et al., IPDPS'24): heterogeneity-aware online scheduling by the
OASiS primal-dual framework (Bao et al., INFOCOM'18) with price functions.

* :func:`exact`: the compact time-indexed MILP of the slotted model (all arrivals
  known), through the solver layer; ``relax=True`` (variant ``exact-lp``) gives the LP
  relaxation's upper bound;
* heuristic :func:`online`: OASiS Algorithms 1-2 adapted to GPU types and task-level
  placement, with its dual certificate D (``Result.bound``) and the proved ratio
  :math:`2\\alpha` (:func:`competitive_ratio`) when its assumptions hold.

Objective: total utility :math:`\\sum_j f_j(C_j - a_j)` over admitted (completed) jobs,
maximised; :math:`f_j` = ``Job.value`` (``weight x utility``), completion at the end of
the completion slot. See :mod:`optsched.hadar.model` for the model, the adaptation and
every assumption.
"""

from __future__ import annotations

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.hadar.certificate import Certificate, dual_certificate
from optsched.hadar.exact import build_program, exact, lp_bound
from optsched.hadar.model import (
    HadarModel,
    RatioReport,
    assign_utilities,
    build_model,
    competitive_ratio,
    default_slots,
)
from optsched.hadar.online import DEFAULT_QUANTA, dual_subroutine, online, run_online
from optsched.policies.base import register_runner
from optsched.registry import Method, ModelSpec, register

__all__ = ["exact", "lp_bound", "build_program", "online", "run_online", "dual_subroutine",
           "dual_certificate", "Certificate", "competitive_ratio", "RatioReport",
           "HadarModel", "build_model", "default_slots", "assign_utilities", "demo_instance",
           "DEFAULT_QUANTA", "SPEC"]


def demo_instance(n_jobs: int = 8, seed: int = 0) -> Instance:
    """Gavel-profile jobs (Philly-derived sizes, 1-2 workers) arriving over about two
    hours on 2 nodes x 4 GPUs of each of V100/P100/K80, 30-minute slots, OASiS-style
    sigmoid utilities, 16 slots."""
    from optsched.catalog import generate_philly
    from optsched.core.instance import Cluster, Node

    cluster = Cluster(tuple(Node(f"{t}-{i}", {t: 4}) for t in ("v100", "p100", "k80")
                            for i in range(2)))
    inst = generate_philly(n_jobs, cluster=cluster, seed=seed, max_workers=2,
                           jobs_per_hour=4.0, slot=1800.0)
    inst = inst.replace(name=f"hadar-demo-{n_jobs}", horizon=16 * 1800.0)
    return assign_utilities(inst, "sigmoid", seed=seed)


SPEC = register(ModelSpec(
    name="hadar",
    summary="Hadar (IPDPS'24): OASiS primal-dual online scheduling on heterogeneous GPUs",
    sense="max",
    objective="total utility",
    methods=(
        Method("exact", exact, "exact", fixed={"relax": False}, backend=True),
        Method("exact-lp", exact, "bound", fixed={"relax": True}, backend=True),
        Method("online", online),
    ),
    default_heuristic="online",
    demo_instance=demo_instance,
))


def simulate_hadar(instance: Instance, *, seed: int = 0, max_time: float | None = None,
                   progress: bool | None = None, **options) -> Result:
    """Hadar as an online policy in the shared simulator: ``optsched simulate --policy
    hadar``. ``options`` go to :class:`~optsched.hadar.policy.HadarPolicy` (which
    estimates U and L from the instance unless both are given)."""
    from optsched.hadar.policy import HadarPolicy
    from optsched.sim import simulate

    return simulate(instance, HadarPolicy(instance, **options), seed=seed, max_time=max_time,
                    progress=progress)


def _takes_policy_options():
    from optsched.hadar.policy import HadarPolicy

    return HadarPolicy


register_runner("hadar", simulate_hadar, takes=_takes_policy_options())
