"""Synergy (Mohan et al., OSDI'22): multi-resource (GPU, CPU, DRAM) round allocation.

* :func:`exact`: the joint configuration + placement ILP (default) or the two-step
  Synergy-OPT (``formulation="two-step"``), through the solver layer;
* heuristics :func:`tune` (default), :func:`greedy` and :func:`proportional`;
* :class:`SynergyPolicy` / :func:`simulate_synergy`: each heuristic over many rounds with
  FIFO, SRTF, LAS or FTF ordering in the shared simulator (:mod:`optsched.synergy.simulate`).

Objective: total normalized throughput :math:`\\sum_j T_j(c_j, m_j)` of the round's
placed jobs (maximised), where :math:`T_j` is per-GPU throughput relative to the
GPU-proportional share. See :mod:`optsched.synergy.model` for the round model, the
off-grid interpolation and what a round schedule is.
"""

from __future__ import annotations

from optsched.core.instance import Cluster, Instance, Node
from optsched.core.result import Result
from optsched.policies.base import register_runner
from optsched.registry import Method, ModelSpec, register
from optsched.synergy.heuristics import allocate, greedy, proportional, tune
from optsched.synergy.model import (
    JOB_CLASSES,
    Placement,
    SynergyRound,
    best_case,
    effective_instance,
    prepare,
    relative_throughput,
    synergy_workload,
)
from optsched.synergy.opt import exact, joint, joint_program, step1_program, two_step
from optsched.synergy.simulate import SynergyPolicy, simulate_synergy

__all__ = ["exact", "joint", "two_step", "step1_program", "joint_program", "tune", "greedy",
           "proportional", "allocate", "prepare", "relative_throughput", "best_case",
           "effective_instance", "synergy_workload", "servers", "Placement", "SynergyRound",
           "JOB_CLASSES", "simulate_synergy", "SynergyPolicy", "demo_instance", "SPEC"]


def servers(n: int, gpu_type: str = "v100") -> Cluster:
    """``n`` Synergy servers: 8 GPUs, 24 cores, 500 GB each (as ``synergy-128``)."""
    return Cluster(tuple(Node(f"server-{i:02d}", {gpu_type: 8}, cpus=24.0, memory=500.0)
                         for i in range(n)))


def demo_instance(n_jobs: int = 12, seed: int = 0) -> Instance:
    """One round: 12 jobs of Synergy's 50/0/50 image/speech mix queued on 2 servers."""
    return synergy_workload(n_jobs, servers(2), seed=seed, split=(50, 0, 50),
                            name=f"synergy-demo-{n_jobs}")


SPEC = register(ModelSpec(
    name="synergy",
    summary="Synergy (OSDI'22): CPU and DRAM per GPU job by sensitivity, one round",
    sense="max",
    objective="total normalized throughput of the round's jobs",
    methods=(
        Method("exact", exact, "exact", fixed={"formulation": "joint"}, backend=True),
        Method("exact-two-step", exact, "heuristic", fixed={"formulation": "two-step"},
               backend=True),
        Method("tune", tune), Method("proportional", proportional),
        Method("greedy", greedy,
               outside_exact="GREEDY may skip an admitted job or leave it below its fair "
                             "throughput, which the exact model forbids"),
    ),
    default_heuristic="tune",
    demo_instance=demo_instance,
))


def _runner(allocator: str):
    def run(instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, order: str = "fifo") -> Result:
        return simulate_synergy(instance, allocator, order, max_time=max_time)

    run.__doc__ = (f"``optsched simulate --policy synergy_{allocator} [--option order=...]``: "
                   f"Synergy-{allocator.upper()} rounds in the shared simulator.")
    return run


for _alloc in ("tune", "greedy", "proportional"):
    register_runner(f"synergy_{_alloc}", _runner(_alloc))
