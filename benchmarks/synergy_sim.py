"""Synergy simulation benchmark: mean JCT and makespan of TUNE, GREEDY and proportional.

Workload: Synergy's generator (``optsched.synergy.synergy_workload``) on ``synergy-128``,
Poisson arrivals at ``load`` jobs/h, 300 s rounds, job-class splits 20/70/10 and 50/0/50
(image/language/speech), single-GPU jobs (Synergy's default) and, for one setting, the
1/2/4/8-GPU mix. Each allocator runs under FIFO, SRTF, LAS and FTF ordering
(``optsched.synergy.policy``). ``window_jct_h`` is the mean JCT of the middle third of
the jobs by id (Synergy measures a window of job ids to leave out warm-up and drain);
``speedup`` is proportional's mean JCT over this row's, same order and workload.

    python benchmarks/synergy_sim.py            # full grid
    python benchmarks/synergy_sim.py --quick
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import write_results

from optsched.synergy import synergy_workload
from optsched.synergy.policy import ORDERS, simulate_synergy


def run(n, settings, orders, allocators) -> list[dict]:
    rows = []
    for split, load, multigpu in settings:
        inst = synergy_workload(n, "synergy-128", seed=0, split=split, jobs_per_hour=load,
                                multigpu=multigpu)
        window = [str(i) for i in range(n // 3, 2 * n // 3)]
        for order in orders:
            base = None
            for alloc in allocators:
                t = time.perf_counter()
                r = simulate_synergy(inst, alloc, order)
                jct = r.metrics.jct
                row = {"split": "/".join(map(str, split)), "load_per_h": load,
                       "gpus": "1/2/4/8" if multigpu else "1", "order": order,
                       "allocator": alloc, "completed": r.metrics.n_completed,
                       "mean_jct_h": r.metrics.mean_jct / 3600,
                       "window_jct_h": float(np.mean([jct[j] for j in window])) / 3600,
                       "p99_jct_h": r.metrics.p99_jct / 3600,
                       "makespan_h": r.metrics.makespan / 3600,
                       "rounds": r.extra["rounds"],
                       "mean_round_throughput": r.extra["mean_round_throughput"],
                       "rounds_below_fair": r.extra["rounds_below_fair"],
                       "seconds": time.perf_counter() - t}
                if alloc == "proportional":
                    base = row
                if base is not None:
                    row["speedup"] = base["mean_jct_h"] / row["mean_jct_h"]
                    row["window_speedup"] = base["window_jct_h"] / row["window_jct_h"]
                rows.append(row)
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()},
                      flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--jobs", type=int, default=600)
    args = ap.parse_args()
    allocators = ("proportional", "tune", "greedy")
    if args.quick:
        settings, orders, n = [((50, 0, 50), 9.0, False)], ("fifo",), 150
    else:
        settings = [((20, 70, 10), 9.0, False), ((50, 0, 50), 9.0, False),
                    ((20, 70, 10), 16.0, False), ((50, 0, 50), 16.0, False),
                    ((20, 70, 10), 9.0, True)]
        orders, n = ORDERS, args.jobs
    rows = run(n, settings, orders, allocators)
    tune_rows = [r for r in rows if r["allocator"] == "tune"]
    best = max(tune_rows, key=lambda r: r["speedup"])
    worst = min(tune_rows, key=lambda r: r["speedup"])
    cols = ["split", "load_per_h", "gpus", "order", "allocator", "completed", "mean_jct_h",
            "speedup", "window_jct_h", "window_speedup", "p99_jct_h", "makespan_h",
            "mean_round_throughput", "rounds_below_fair", "seconds"]
    write_results(
        "synergy_sim" + ("_quick" if args.quick else ""), rows, cols,
        title="Synergy simulation on synergy-128: mean JCT of TUNE / GREEDY vs proportional",
        params={"jobs": n, "seed": 0, "round_s": 300, "settings": settings,
                "orders": list(orders)},
        notes=(f"TUNE's mean-JCT speedup over proportional ranges from {worst['speedup']:.2f}x "
               f"({worst['split']}, {worst['load_per_h']}/h, {worst['order']}) to "
               f"{best['speedup']:.2f}x ({best['split']}, {best['load_per_h']}/h, "
               f"{best['order']}). The paper reports up to 3.4x on its own trace and "
               "loads; this run does not reproduce that magnitude. `rounds_below_fair` "
               "counts rounds in which some admitted job got less than its fair "
               "throughput (GREEDY only; 0 for TUNE and proportional by construction)."))


if __name__ == "__main__":
    main()
