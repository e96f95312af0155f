"""Synergy's measurement against the load: window mean JCT, TUNE vs GPU-proportional.

Synergy (OSDI'22 §6, Fig. 8; its ``runner.py``) streams single-GPU jobs as a Poisson
process at a given load (jobs/h) onto 16 servers of 8 GPUs / 24 cores / 500 GB
(``synergy-128``) and reports the mean JCT of jobs 4000-4999 (its loads: 9 jobs/h by
default, 0.5-8 jobs/h in its sweep). Each cell here is the reproduction's measurement
(:func:`optsched.studies.reproduce.synergy_tune.window_jcts`: a prefix of the stream
simulated up to its last arrival, so every window job has its endless-stream JCT) at one
load; the split and the job order (FIFO or SRTF) are options.

    python benchmarks/synergy_load.py                      # FIFO, 20/70/10, 3 5 7 9 jobs/h
    python benchmarks/synergy_load.py --loads 4 --order srtf --stream 26000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from common import RESULTS, write_results

from optsched.studies.reproduce.synergy_tune import window_jcts


def main() -> None:
    from optsched.synergy import servers, synergy_workload

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", nargs="+", type=float, default=[3.0, 5.0, 7.0, 9.0])
    ap.add_argument("--split", nargs=3, type=int, default=[20, 70, 10])
    ap.add_argument("--order", default="fifo", choices=["fifo", "srtf"])
    ap.add_argument("--servers", type=int, default=16)
    ap.add_argument("--stream", type=int, default=8000, help="jobs in the stream prefix")
    ap.add_argument("--window", nargs=2, type=int, default=[4000, 5000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="synergy_load")
    args = ap.parse_args()
    cluster, window, split = servers(args.servers), tuple(args.window), tuple(args.split)
    rows = []
    for load in args.loads:
        inst = synergy_workload(args.stream, cluster, seed=args.seed, split=split,
                                jobs_per_hour=load, multigpu=False)
        means = {}
        for alloc in ("proportional", "tune"):
            t0 = time.perf_counter()
            jct = np.array(list(window_jcts(inst, alloc, args.order, window).values())) / 3600
            means[alloc] = float(jct.mean())
            rows.append({"load": load, "allocator": alloc, "order": args.order,
                         "split": "/".join(map(str, split)), "gpus": 8 * args.servers,
                         "window": f"{window[0]}-{window[1] - 1}",
                         "mean_jct_h": means[alloc], "p50_jct_h": float(np.median(jct)),
                         "p99_jct_h": float(np.quantile(jct, 0.99)),
                         "sim_s": time.perf_counter() - t0})
            print(rows[-1], flush=True)
        for r in rows[-2:]:
            r["proportional_over_tune"] = means["proportional"] / means["tune"]
    write_results(args.name, rows, ["load", "allocator", "order", "split", "gpus", "window",
                                    "mean_jct_h", "p50_jct_h", "p99_jct_h",
                                    "proportional_over_tune", "sim_s"],
                  title="Synergy: window mean JCT against the load, TUNE vs proportional",
                  params={"servers": args.servers, "stream": args.stream,
                          "seed": args.seed, "round_s": 300},
                  notes="load: jobs per hour (Poisson, single-GPU jobs from "
                        "synergy_workload). proportional_over_tune: the claim's factor "
                        "(paper: up to 3.4x). Each stream prefix is simulated up to its "
                        "last arrival; a window job unfinished by then is an error.")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for alloc in ("proportional", "tune"):
        pts = [(r["load"], r["mean_jct_h"]) for r in rows if r["allocator"] == alloc]
        ax.plot(*zip(*pts), marker="o", label=alloc)
    ax.set_xlabel("load (jobs/h)")
    ax.set_ylabel(f"mean JCT of jobs {window[0]}-{window[1] - 1} (h)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"Synergy, {8 * args.servers} GPUs, {'/'.join(map(str, split))} "
                 f"{args.order.upper()}", fontsize=9)
    fig.tight_layout()
    (RESULTS / "img").mkdir(exist_ok=True)
    fig.savefig(RESULTS / "img" / f"{args.name}.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
