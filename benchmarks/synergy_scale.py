"""Synergy scale benchmark: exact OPT at 16 servers x 64 jobs, heuristics up to 64 x 5,000.

* OPT: two-step Synergy-OPT and the joint ILP on ``synergy-128`` (16 servers) with 64
  queued jobs (all admitted), HiGHS, ``mip_gap`` 1 %, wall seconds to that gap.
* Heuristics: one round on ``synergy-512`` (64 servers) with 100 .. 5,000 queued jobs;
  ``alloc_s`` is the allocator alone (preparation + allocation: admission, profiles,
  first fit, peer reduction), ``result_s`` the whole call including building, validating
  and measuring the schedule. Median of ``--repeat`` runs.

    python benchmarks/synergy_scale.py
"""

from __future__ import annotations

import argparse
import statistics
import time

from common import write_results

from optsched.synergy import allocate, exact, greedy, prepare, proportional, synergy_workload, tune

HEUR = {"tune": tune, "greedy": greedy, "proportional": proportional}


def opt_rows(seeds, splits, gap, limit) -> list[dict]:
    rows = []
    for split in splits:
        for seed in seeds:
            inst = synergy_workload(64, "synergy-128", seed=seed, split=split)
            for form in ("two-step", "joint"):
                t = time.perf_counter()
                r = exact(inst, formulation=form, mip_gap=gap, time_limit=limit)
                row = {"part": "OPT", "servers": 16, "jobs": 64,
                       "split": "/".join(map(str, split)), "seed": seed, "method": form,
                       "status": r.status.value, "objective": r.objective, "bound": r.bound,
                       "gap": r.gap, "seconds": time.perf_counter() - t}
                rows.append(row)
                print(row, flush=True)
    return rows


def heur_rows(sizes, repeat) -> list[dict]:
    rows = []
    for n in sizes:
        inst = synergy_workload(n, "synergy-512", seed=0)
        for name, f in HEUR.items():
            alloc, full = [], []
            for _ in range(repeat):
                t = time.perf_counter()
                rnd = prepare(inst)
                allocate(rnd, name)
                alloc.append(time.perf_counter() - t)
                t = time.perf_counter()
                r = f(inst)
                full.append(time.perf_counter() - t)
            row = {"part": "heuristic", "servers": 64, "jobs": n, "split": "20/70/10",
                   "seed": 0, "method": name, "admitted": len(rnd.admitted),
                   "objective": r.objective, "alloc_s": statistics.median(alloc),
                   "result_s": statistics.median(full)}
            rows.append(row)
            print(row, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=120.0)
    args = ap.parse_args()
    splits = [(20, 70, 10), (33, 33, 34), (50, 0, 50)]
    rows = opt_rows([0, 1, 2], splits, 0.01, args.time_limit)
    rows += heur_rows([100, 1000, 5000], args.repeat)
    cols = ["part", "servers", "jobs", "split", "seed", "method", "status", "admitted",
            "objective", "bound", "gap", "seconds", "alloc_s", "result_s"]
    opt = [r for r in rows if r["part"] == "OPT"]
    worst = {m: max(r["seconds"] for r in opt if r["method"] == m)
             for m in ("two-step", "joint")}
    t1000 = {r["method"]: (r["alloc_s"], r["result_s"]) for r in rows
             if r["part"] == "heuristic" and r["jobs"] == 1000}
    write_results(
        "synergy_scale", rows, cols,
        title="Synergy: exact OPT at 16 servers x 64 jobs and heuristic rounds at 64 servers",
        params={"mip_gap": 0.01, "time_limit_s": args.time_limit, "repeat": args.repeat},
        notes=(f"Worst OPT wall time to a 1 % gap: two-step {worst['two-step']:.1f} s, joint "
               f"{worst['joint']:.1f} s. TUNE round at 64 servers / 1,000 queued jobs: "
               f"{t1000['tune'][0] * 1e3:.1f} ms allocation, {t1000['tune'][1] * 1e3:.1f} ms "
               "with schedule validation and metrics. Only the jobs that fit the 512 GPUs "
               "are admitted."))


if __name__ == "__main__":
    main()
