"""Salus (Yu & Chowdhury, MLSys'20): GPU lanes, memory safety and the parallelism trade-off.

* :mod:`optsched.salus.model` - the safety condition, the lane manager's state
  (:class:`GpuLanes`), the fluid concurrency model and the schedules the validator checks;
* :mod:`optsched.salus.exact` - MILP over (GPU, lane) slots: ``objective`` = ``"makespan"``
  (default), ``"admitted"`` (inference packing) or ``"gpus"``; ``lanes`` bounds the lanes per GPU;
* :mod:`optsched.salus.bounds` - the first-fit GPU bound and lower bounds on each objective;
* :mod:`optsched.salus.heuristics` - Salus' lane manager (``bestFitFor``), first-fit decreasing,
  LPT;
* :mod:`optsched.salus.policy` - lanes over time in the shared simulator (GPU sharing), with
  arrivals, FIFO / SRTF / FAIR inside a lane and memory checked at every decision;
* :mod:`optsched.salus.workload` - jobs from Salus' data (P/T split, compute shares), the demo.

Jobs carry ``memory = GpuMemory(P, T)`` in MB and optionally ``compute_share`` u; GPUs
carry ``Node.gpu_memory`` in GB.
"""

from __future__ import annotations

from optsched.registry import Method, PaperSpec, PolicySpec, register
from optsched.salus.bounds import ff_gpu_bound, lower_bound
from optsched.salus.exact import OBJECTIVES, exact
from optsched.salus.heuristics import ffd, lane_manager, lpt
from optsched.salus.model import GpuLanes, Lane, SalusView, is_safe, lane_need, salus_view
from optsched.salus.policy import SalusPolicy, run_lanes, simulate_lanes
from optsched.salus.workload import (
    demo_instance,
    footprints,
    inference_job,
    inference_models,
    training_job,
)

__all__ = ["exact", "lane_manager", "ffd", "lpt", "ff_gpu_bound", "lower_bound", "OBJECTIVES",
           "GpuLanes", "Lane", "SalusView", "is_safe", "lane_need", "salus_view", "footprints",
           "training_job", "inference_job", "inference_models", "simulate_lanes", "SalusPolicy",
           "demo_instance", "SPEC"]

SPEC = register(PaperSpec(
    name="salus",
    summary="Salus (MLSys'20): jobs to safe GPU lanes; makespan / packing / GPUs",
    sense="min",
    objective="makespan (s)",
    methods=(
        Method("exact", exact, "exact", backend=True),
        Method("exact-1-lane", exact, "exact", fixed={"lanes": 1}, backend=True),
        Method("bound", lower_bound, "bound", aliases=("lower-bound",)),
        Method("lane_manager", lane_manager,
               proved="none known: memory-safe, but jobs (ε, M/3) each get a lane of "
                      "their own while one lane could hold (M - T)/ε of them, so the GPU "
                      "count exceeds the optimum's by an unbounded factor"),
        Method("ffd", ffd,
               proved="2/(1-θ)+1 if gpus: with objective 'gpus', first fit uses at most "
                      "max(1, 2 ceil(sum P/(M - Tmax)) - 1) <= 2 OPT/(1-θ) + 1 GPUs, "
                      "θ = Tmax/M (memory only: not when the horizon refused a placement); "
                      "none known for makespan"),
        Method("lpt", lpt,
               proved="none known: memory-safe and never below the optimum; Graham's "
                      "4/3 - 1/(3G) for identical machines does not carry over to lanes "
                      "with memory"),
    ),
    policies=(PolicySpec("lanes", runner=run_lanes, aliases=("salus_lanes",)),),
    default_heuristic="lane_manager",
    demo_instance=demo_instance,
    objectives={"makespan": ("min", "makespan (s)"), "admitted": ("max", "admitted weight"),
                "gpus": ("min", "GPUs used")},
    reference="Yu & Chowdhury, Fine-Grained GPU Sharing Primitives for Deep Learning "
              "Applications, MLSys'20",
))
