"""Synergy (Mohan et al., OSDI'22): multi-resource (GPU, CPU, DRAM) round allocation.

* :mod:`optsched.synergy.model` - the round model: sensitivities, the fair share, configurations;
* :mod:`optsched.synergy.exact` - the joint configuration + placement ILP (default) and the two-step
  Synergy-OPT;
* :mod:`optsched.synergy.bounds` - Synergy-OPT's step 1 and the joint ILP's LP relaxation as upper
  bounds;
* :mod:`optsched.synergy.heuristics` - TUNE (default), GREEDY and GPU-proportional;
* :mod:`optsched.synergy.policy` - each allocator (and Synergy-OPT solved every round) over
  many rounds with FIFO, SRTF, LAS, FTF, DRF, TETRIS or SRSF ordering in the shared
  simulator;
* :mod:`optsched.synergy.workload` - Synergy's job classes, workload generator, servers and the
  demo.

Objective: total normalized throughput :math:`\\sum_j T_j(c_j, m_j)` of the round's
placed jobs (maximised), where :math:`T_j` is per-GPU throughput relative to the
GPU-proportional share.
"""

from __future__ import annotations

from optsched.registry import Method, PaperSpec, PolicySpec, register
from optsched.synergy.bounds import lp_bound, step1_bound
from optsched.synergy.exact import exact, joint, joint_program, step1_program, two_step
from optsched.synergy.heuristics import allocate, greedy, proportional, tune
from optsched.synergy.model import (
    Configuration,
    SynergyRound,
    best_case,
    effective_instance,
    prepare,
    relative_throughput,
)
from optsched.synergy.policy import SynergyPolicy, order_runner, runner, simulate_synergy
from optsched.synergy.workload import JOB_CLASSES, demo_instance, servers, synergy_workload

__all__ = ["exact", "joint", "two_step", "step1_program", "joint_program", "step1_bound",
           "lp_bound", "tune", "greedy", "proportional", "allocate", "prepare",
           "relative_throughput", "best_case", "effective_instance", "synergy_workload",
           "servers", "Configuration", "SynergyRound", "JOB_CLASSES", "simulate_synergy",
           "SynergyPolicy", "demo_instance", "SPEC"]

SPEC = register(PaperSpec(
    name="synergy",
    summary="Synergy (OSDI'22): CPU and DRAM per GPU job by sensitivity, one round",
    sense="max",
    objective="total normalized throughput of the round's jobs",
    methods=(
        Method("exact", exact, "exact", fixed={"formulation": "joint"}, backend=True),
        Method("bound", lp_bound, "bound", backend=True, aliases=("exact-lp",)),
        Method("bound-step1", step1_bound, "bound", backend=True, aliases=("step1",)),
        Method("exact-two-step", exact, "heuristic", fixed={"formulation": "two-step"},
               backend=True,
               proved="none known: two-step <= OPT <= step 1 (Synergy-OPT), but the "
                      "placement step may fall back to the fair share, with no ratio "
                      "proved"),
        Method("tune", tune,
               proved="none known: every admitted job gets at least its fair throughput, "
                      "so proportional <= TUNE <= OPT; no ratio to the optimum is proved"),
        Method("proportional", proportional,
               proved="none known: the fair-share baseline (every admitted job at its "
                      "fair throughput), <= OPT with no ratio proved"),
        Method("greedy", greedy,
               proved="none known: not fair and outside the exact model (it may skip an "
                      "admitted job), so no ratio to the optimum is proved",
               outside_exact="GREEDY may skip an admitted job or leave it below its fair "
                             "throughput, which the exact model forbids"),
    ),
    policies=tuple(PolicySpec(a, runner=runner(a), aliases=(f"synergy_{a}",))
                   for a in ("tune", "greedy", "proportional", "opt"))
    + tuple(PolicySpec(o, runner=order_runner(o), aliases=(f"synergy_{o}",))
            for o in ("drf", "tetris", "srsf")),
    default_heuristic="tune",
    demo_instance=demo_instance,
    reference="Mohan et al., Looking Beyond GPUs for DNN Scheduling on Multi-Tenant "
              "Clusters, OSDI'22",
))
