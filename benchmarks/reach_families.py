"""Contended instance families for the exact-reach benchmark (``exact_reach.py``).

``family(model, n)`` is the instance of size ``n`` on which ``model``'s exact method is
measured; it depends on nothing but ``(model, n)`` (every draw is seeded), so a row of
``results/exact_reach.json`` can be rebuilt and re-solved alone. ``contention(model,
inst)`` states, as a number, why the jobs compete for the resource the model allocates
(the figure is in each result row).

* **hadar, hadare, tiresias**: the first ``n`` jobs of Gavel's 2,000-job Philly-derived
  trace on gavel-108 (36 V100 + 36 P100 + 36 K80), 6-minute rounds, arrivals divided
  by 50 (``read_trace(..., load=50)``, as ``optsched bound --load 50``). Hadar and
  HadarE jobs get the sigmoid utilities of ``assign_utilities(inst, "sigmoid",
  seed=0)`` (those ``optsched reproduce`` uses). Contention: the offered load, the
  GPU-time the jobs need at their best rate over the GPU-time the cluster offers while
  they arrive, ``sum_j g_j m_j / (M * (r_max - r_min))`` (> 1: work piles up).
* **gavel** (its allocation LP, one round): the first ``n`` jobs of the same trace on
  gavel-108, all active. Contention: GPUs asked for over GPUs, ``sum_j g_j / M``.
* **synergy** (one round of its multi-resource packing ILP): ``n`` jobs of Synergy's
  50/0/50 image/speech mix, seed 0, on as many 8-GPU servers as their gangs ask for
  (``optsched.synergy.demo_instance``): GPUs are exactly filled and CPU and memory are
  what the jobs compete for. Contention: the CPU the jobs would take at their best-case
  demand over the cluster's CPUs.
* **salus** (its lane-packing MILP, makespan): ``n`` training jobs cycling through the
  1-minute rows of Salus' ``workloads.csv`` on ``ceil(n / 6)`` 16 GB V100s in one node.
  Contention: the jobs' peak memory over the GPUs' memory (> 1: not all can be resident
  at once, they must share lanes in time).
* **allox** (its min-total-JCT matching): ``n`` single-GPU jobs of Gavel's
  Philly-derived mixture, seed 0, all queued at 0, on 2 V100 + 2 P100 + 2 K80
  (``optsched.allox.demo_instance``). Contention: jobs per GPU, ``n / 6``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from optsched.core.instance import Cluster, Instance, Node

__all__ = ["MODELS", "LOAD", "SALUS_JOBS_PER_GPU", "family", "contention", "describe",
           "max_size"]

MODELS = ("hadar", "hadare", "tiresias", "synergy", "salus", "allox", "gavel")
#: arrivals of the trace families divided by this (Gavel's trace at 50x its rate)
LOAD = 50.0
#: Salus family: jobs per 16 GB GPU
SALUS_JOBS_PER_GPU = 6
#: the shipped trace's length: the trace families end there
TRACE_JOBS = 2000


def max_size(model: str) -> int | None:
    """The largest ``n`` the family of ``model`` has (``None``: unbounded)."""
    return TRACE_JOBS if model in ("hadar", "hadare", "tiresias", "gavel") else None


def _trace(n: int, load: float) -> Instance:
    from optsched.catalog.traces import read_trace

    return read_trace("gavel-philly-2000", "gavel-108", jobs=n, load=load)


def _salus(n: int) -> Instance:
    from optsched.catalog import salus_workloads
    from optsched.salus import training_job

    rows = sorted(w.name for w in salus_workloads() if w.name.endswith("_1min"))
    jobs = tuple(training_job(rows[i % len(rows)], f"j{i}") for i in range(n))
    gpus = max(1, math.ceil(n / SALUS_JOBS_PER_GPU))
    cluster = Cluster((Node("server", {"v100": gpus}, cpus=32, memory=256,
                            gpu_memory={"v100": 16.0}),))
    return Instance(cluster, jobs, name=f"salus-reach-{n}")


def family(model: str, n: int) -> Instance:
    """The contended instance of size ``n`` for ``model`` (module docstring)."""
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; known: {', '.join(MODELS)}")
    if n < 1 or (max_size(model) is not None and n > max_size(model)):
        raise ValueError(f"size {n} outside the {model} family (1..{max_size(model)})")
    if model in ("hadar", "hadare", "tiresias"):
        inst = _trace(n, LOAD)
        if model != "tiresias":
            from optsched.hadar import assign_utilities

            inst = assign_utilities(inst, "sigmoid", seed=0)
        return inst
    if model == "gavel":
        inst = _trace(n, 1.0)
        return inst.replace(jobs=tuple(replace(j, arrival=0.0) for j in inst.jobs),
                            name=f"gavel-reach-{n}")
    if model == "synergy":
        from optsched.synergy import demo_instance

        return demo_instance(n, seed=0).replace(name=f"synergy-reach-{n}")
    if model == "salus":
        return _salus(n)
    from optsched.allox import demo_instance as allox_demo

    return allox_demo(n, seed=0).replace(name=f"allox-reach-{n}")


def contention(model: str, inst: Instance) -> float:
    """The family's contention figure for ``inst`` (module docstring): > 1 means the jobs
    ask for more of the contended resource than the cluster has."""
    M = inst.cluster.total_gpus
    g = inst.workers.astype(float)
    if model in ("hadar", "hadare", "tiresias"):
        need = float(sum(j.workers * j.min_duration() for j in inst.jobs))
        span = float(inst.arrivals.max() - inst.arrivals.min())
        return math.inf if span <= 0 else need / (M * span)
    if model in ("gavel", "allox"):
        return float(g.sum()) / M
    if model == "synergy":
        best = np.array([j.sensitivity.best_cpu if j.sensitivity is not None else 0.0
                         for j in inst.jobs], dtype=float)
        cpus = sum(node.cpus for node in inst.cluster.nodes)
        return float((best * g).sum()) / cpus
    if model == "salus":
        peak = sum((j.memory.persistent + j.memory.ephemeral) for j in inst.jobs
                   if j.memory is not None)
        cap = sum(node.gpus.get(t, 0) * gb * 1024.0 for node in inst.cluster.nodes
                  for t, gb in node.gpu_memory.items())
        return peak / cap
    raise ValueError(f"unknown model {model!r}")


#: what each family's contention figure measures (for the result table's notes)
CONTENTION = {
    "hadar": "offered load: GPU-time at best rate / (GPUs x arrival span)",
    "hadare": "offered load: GPU-time at best rate / (GPUs x arrival span)",
    "tiresias": "offered load: GPU-time at best rate / (GPUs x arrival span)",
    "gavel": "GPUs asked for / GPUs",
    "synergy": "best-case CPU demand / CPUs (GPUs exactly filled)",
    "salus": "peak GPU memory of the jobs / GPU memory",
    "allox": "jobs per GPU",
}


def describe(model: str, inst: Instance) -> dict:
    """Size facts of a family instance: jobs, GPUs, contention."""
    return {"jobs": inst.n_jobs, "gpus": inst.cluster.total_gpus,
            "contention": round(contention(model, inst), 3)}
