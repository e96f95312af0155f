"""Tiresias reproduction: 2D-LAS and 2D-Gittins vs FIFO (YARN-CS) in the simulator.

Traces:

* ``tiresias-60``: Tiresias' 60-job trace (``read_tiresias_trace()``) on its n32g4
  cluster (32 nodes x 4 P100 = 128 GPUs);
* ``tiresias-60 on 16 GPUs``: the same jobs on 4 nodes x 4 GPUs, so that jobs queue
  (the 60-job trace never fills 128 GPUs);
* ``philly-N``: Gavel's Philly-derived generator (``generate_philly``) on n32g4, at an
  arrival rate that loads the cluster.

Policies: ``fifo_yarn`` (YARN-CS: arrival order, gangs consolidated, no preemption,
head-of-line blocking), ``fifo_backfill`` (the same with backfilling), ``tiresias_las``
(2D-LAS, default queues (3250, 7200) GPU-s), ``tiresias_gittins`` (2D-Gittins, exact
supremum over Delta, distribution = Tiresias' yarn-gput1000 samples),
``tiresias_gittins_fixed`` (the public simulator's fixed Delta = 3250),
``tiresias_las_adaptdl_queues`` (one threshold at 3600x16 GPU-s, the adaptdl port),
``las_2d_continuous`` (LAS on GPU-s without discretisation), ``tiresias_gittins`` with
the distribution learned from the GPU-time of a *different*
generated trace (history, for the Philly trace), ``las_1d`` and ``srtf`` (clairvoyant).
Mean JCT ratio = FIFO mean JCT / policy mean JCT (paper: up to 5.5x vs YARN-CS).

    python benchmarks/simulate_tiresias.py [--philly-jobs 480] [--jobs-per-hour 6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import write_results

from optsched.catalog import cluster_preset, generate_philly, read_tiresias_trace
from optsched.core.instance import Cluster, Node
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias.policy import ADAPTDL_THRESHOLDS


def gpu_time_samples(inst) -> np.ndarray:
    """GPU-seconds each job needs on its fastest type (the 'history' distribution)."""
    return np.array([j.workers * j.min_duration() for j in inst.jobs])


def policies(history: np.ndarray | None):
    out = [("fifo_yarn", {}), ("fifo_backfill", {}), ("tiresias_las", {}),
           ("tiresias_las", {"thresholds": ADAPTDL_THRESHOLDS,
                             "name": "tiresias_las_adaptdl_queues"}),
           ("las_2d_continuous", {}), ("tiresias_gittins", {}),
           ("tiresias_gittins_fixed", {}), ("las_1d", {}), ("srtf", {})]
    if history is not None:
        out.insert(3, ("tiresias_gittins", {"gittins_samples": history,
                                            "name": "tiresias_gittins_history"}))
    return out


def run_trace(label: str, inst, history=None, seed: int = 0) -> list[dict]:
    rows = []
    fifo_jct = fifo_mk = None
    for name, kw in policies(history):
        pol = get_policy(name, **kw)
        t = time.perf_counter()
        res = simulate(inst, pol, seed=seed, progress=False)
        wall = time.perf_counter() - t
        m = res.metrics
        if name == "fifo_yarn":
            fifo_jct, fifo_mk = m.mean_jct, m.makespan
        row = {"trace": label, "policy": pol.name, "jobs": m.n_jobs,
               "completed": m.n_completed, "mean_jct_h": m.mean_jct / 3600,
               "p99_jct_h": m.p99_jct / 3600, "makespan_h": m.makespan / 3600,
               "jct_ratio_vs_fifo": fifo_jct / m.mean_jct,
               "makespan_ratio_vs_fifo": fifo_mk / m.makespan, "utilization": m.cru,
               "preemptions": res.extra["total_preemptions"],
               "promotions": res.extra.get("promotions"), "wall_s": wall}
        rows.append(row)
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--philly-jobs", type=int, default=480)
    ap.add_argument("--jobs-per-hour", type=float, default=6.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    tir = read_tiresias_trace()
    rows += run_trace("tiresias-60 (n32g4, 128 GPUs)", tir, seed=args.seed)
    small = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(4)))
    rows += run_trace("tiresias-60 (4x4 = 16 GPUs)", read_tiresias_trace(cluster=small),
                      seed=args.seed)
    n32 = cluster_preset("tiresias-n32g4")
    phil = generate_philly(args.philly_jobs, cluster=n32, seed=args.seed,
                           jobs_per_hour=args.jobs_per_hour)
    hist = gpu_time_samples(generate_philly(1000, cluster=n32, seed=args.seed + 1000,
                                            jobs_per_hour=args.jobs_per_hour))
    rows += run_trace(f"philly-{args.philly_jobs} (n32g4, {args.jobs_per_hour:g} jobs/h)",
                      phil, history=hist, seed=args.seed)
    write_results(
        "simulate_tiresias", rows,
        ["trace", "policy", "completed", "mean_jct_h", "p99_jct_h", "makespan_h",
         "jct_ratio_vs_fifo", "makespan_ratio_vs_fifo", "utilization", "preemptions",
         "promotions", "wall_s"],
        title="Tiresias 2D-LAS / 2D-Gittins vs FIFO (YARN-CS)",
        params={"philly_jobs": args.philly_jobs, "jobs_per_hour": args.jobs_per_hour,
                "seed": args.seed, "queues": "(3250, 7200) GPU-s", "promote_knob": "off",
                "placement": "spread"},
        notes="jct_ratio_vs_fifo = FIFO mean JCT / policy mean JCT (> 1: better than "
              "FIFO). The 60-job trace is light on 128 GPUs (little queueing), hence the "
              "16-GPU variant. tiresias_gittins uses Tiresias' yarn-gput1000 GPU-time "
              "samples; tiresias_gittins_history uses the GPU-time of 1,000 jobs of another "
              "generated trace (seed + 1000) as the known distribution. Placement affects "
              "queueing only (as in Tiresias' simulator).")


if __name__ == "__main__":
    main()
