r"""Salus (Yu & Chowdhury, MLSys'20): GPU lanes, memory safety and the parallelism trade-off.

* :func:`exact`: MILP over (GPU, lane) slots through the solver layer; option
  ``objective`` = ``"makespan"`` (default: min makespan under the fluid concurrency
  model), ``"admitted"`` (max admitted weight, inference packing) or ``"gpus"`` (min GPUs
  for the job set); ``lanes`` bounds the lanes per GPU (default: no limit for
  makespan, one lane, provably optimal, for the packing objectives);
* heuristics :func:`lane_manager` (Salus' ``bestFitFor``, the default heuristic),
  :func:`ffd` (first-fit decreasing into one lane per GPU; the proved GPU bound) and
  :func:`lpt` (longest work first to the least-makespan lane);
* :mod:`optsched.salus.lanes`: the safety condition, the lane manager state
  (:class:`GpuLanes`), the concurrency model and the schedules the validator checks;
* :mod:`optsched.salus.workloads`: jobs from Salus' data, with the P/T split and the
  compute-share assumptions stated;
* :class:`SalusPolicy` / :func:`simulate_lanes` (:mod:`optsched.salus.sim`): lanes over
  time in the shared simulator (GPU sharing), with arrivals, FIFO / SRTF / FAIR inside a
  lane and memory checked at every decision.

Jobs carry ``memory = GpuMemory(P, T)`` in MB and optionally ``compute_share`` u; GPUs
carry ``Node.gpu_memory`` in GB. The objective reported by ``solve(..., model="salus")``
is the makespan in seconds unless ``objective`` says otherwise.
"""

from __future__ import annotations

from optsched.core.instance import Cluster, Instance, Node
from optsched.core.result import Result
from optsched.errors import InvalidOption
from optsched.policies.base import register_runner
from optsched.registry import Method, ModelSpec, register
from optsched.salus.exact import OBJECTIVES, exact
from optsched.salus.heuristics import ff_gpu_bound, ffd, lane_manager, lpt
from optsched.salus.lanes import GpuLanes, Lane, SalusView, is_safe, lane_need, salus_view
from optsched.salus.sim import SalusPolicy, simulate_lanes
from optsched.salus.workloads import footprints, inference_job, inference_models, training_job

__all__ = ["exact", "lane_manager", "ffd", "lpt", "ff_gpu_bound", "OBJECTIVES", "GpuLanes",
           "Lane", "SalusView", "is_safe", "lane_need", "salus_view", "footprints",
           "training_job", "inference_job", "inference_models", "simulate_lanes", "SalusPolicy",
           "demo_instance", "SPEC"]

DEMO_WORKLOADS = ("resnet50_25_1min", "googlenet_50_1min", "alexnet_100_1min",
                  "vgg11_25_1min", "inception3_25_1min", "overfeat_25_1min")


def demo_instance() -> Instance:
    """Six 1-minute training runs of ``workloads.csv`` on one node with two 16 GB V100s.

    P/T and the compute shares u follow :mod:`optsched.salus.workloads`.
    """
    jobs = tuple(training_job(w, f"j{k}-{w.split('_')[0]}") for k, w in
                 enumerate(DEMO_WORKLOADS))
    cluster = Cluster((Node("gpu-node", {"v100": 2}, cpus=16, memory=64,
                            gpu_memory={"v100": 16.0}),))
    return Instance(cluster, jobs, name="salus-demo")


SPEC = register(ModelSpec(
    name="salus",
    summary="Salus (MLSys'20): jobs to safe GPU lanes; makespan / packing / GPUs",
    sense="min",
    objective="makespan (s)",
    methods=(
        Method("exact", exact, "exact", backend=True),
        Method("exact-1-lane", exact, "exact", fixed={"lanes": 1}, backend=True),
        Method("lane_manager", lane_manager), Method("ffd", ffd), Method("lpt", lpt),
    ),
    default_heuristic="lane_manager",
    demo_instance=demo_instance,
    objectives={"makespan": ("min", "makespan (s)"), "admitted": ("max", "admitted weight"),
                "gpus": ("min", "GPUs used")},
))


def _simulate_lanes(instance: Instance, *, seed: int = 0, max_time: float | None = None,
                    progress: bool | None = None, mode: str = "salus",
                    policy: str = "fifo") -> Result:
    """``optsched simulate --policy salus_lanes [--option mode=... policy=...]``."""
    if max_time is not None:
        raise InvalidOption("max_time", max_time, "the lane simulation runs every job to "
                            "completion")
    return simulate_lanes(instance, mode=mode, policy=policy)


register_runner("salus_lanes", _simulate_lanes)
