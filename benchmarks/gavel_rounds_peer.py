"""Gavel's policies with the paper's round mechanism (Alg. 1, optsched's default) and with
Gavel's simulator's (``rounds="original"``), job by job against Gavel's own run.

For each pair (Gavel's policy name, optsched's) both simulators run the first N jobs of
Gavel's shipped trace (the inputs of ``benchmarks/gavel_policies_peer.py``: gavel-108,
360 s rounds, seed 0). Gavel's side is its unmodified code run by
``benchmarks/peers/gavel_trace.py`` (``gavel_run.py`` plus a log of every round's
decision and of each allocation it computed), kept in ``--peer-dir`` and reused.

Per pair and mechanics: mean JCT and makespan ratios (ours / Gavel's), the share of
jobs completing within one round (360 s) of Gavel's completion and within 10 % of its
JCT, and the first round whose decision (which job runs on which GPU type) differs from
Gavel's, with its time and whether X at that round differs (the largest difference
between a share of ours and Gavel's at the last allocation, over the jobs present).

    GAVEL_HOME=... GAVEL_PYTHON=... python benchmarks/gavel_rounds_peer.py \\
        --jobs 100 --peer-dir /tmp/gavel-trace [--pairs isolated ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import gavel_policies_peer as gp
from common import write_results

from optsched.registry import get_policy
from optsched.sim import simulate

DRIVER = Path(__file__).resolve().parent / "peers" / "gavel_trace.py"
#: (Gavel's policy name, optsched's registered name)
PAIRS = [
    ("isolated", "gavel.isolated"),
    ("max_min_fairness_perf", "gavel.max_min_fairness"),
    ("max_min_fairness", "gavel.max_min_fairness_agnostic"),
    ("finish_time_fairness_perf", "gavel.finish_time_fairness"),
    ("finish_time_fairness", "gavel.finish_time_fairness_agnostic"),
    ("min_total_duration_perf", "gavel.min_total_duration"),
    ("min_total_duration", "gavel.min_total_duration_agnostic"),
    ("max_min_fairness_water_filling_perf", "gavel.max_min_fairness_water_filling"),
    ("max_min_fairness_water_filling", "gavel.max_min_fairness_water_filling_agnostic"),
]
MECHANICS = ("alg1", "original")
#: Variants beyond the two mechanics: ``rounds="original"`` with the policy's
#: ``point="interior"`` (Gavel's program solved to an interior optimum), for the
#: policies that take it.
VARIANTS = {"alg1": ("alg1", {}), "original": ("original", {}),
            "original+interior": ("original", {"point": "interior"}),
            "original+interior-highs": ("original", {"point": "interior", "backend": "highs"}),
            "alg1+accumulated": ("alg1", {"isolated_time": "accumulated"}),
            "original+accumulated": ("original", {"isolated_time": "accumulated"}),
            "original+interior+accumulated": ("original", {"point": "interior",
                                                           "isolated_time": "accumulated"})}
INTERIOR_POLICIES = frozenset({"gavel.max_min_fairness", "gavel.max_min_fairness_agnostic",
                               "gavel.min_total_duration", "gavel.finish_time_fairness"})
#: The policies of the ``...accumulated`` variants (``isolated_time="accumulated"``: the
#: finish-time-fairness denominator Gavel's code accumulates, allocation by allocation).
ACCUMULATED_POLICIES = frozenset({"gavel.finish_time_fairness",
                                  "gavel.finish_time_fairness_agnostic"})


def run_gavel(n: int, policy: str, peer_dir: Path) -> dict:
    out = peer_dir / f"gavel_trace_{n}_{policy}.json"
    if not out.exists():
        spec = peer_dir / f"jobs_{n}.json"
        if not spec.exists():
            spec.write_text(json.dumps(gp.jobs_spec(gp.instance(n))))
        home, python = os.environ["GAVEL_HOME"], os.environ["GAVEL_PYTHON"]
        subprocess.run([python, str(DRIVER), str(spec), policy, str(out)], check=True,
                       cwd=Path(home) / "scheduler", stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def run_ours(n: int, policy: str, rounds: str, options: dict | None = None) -> dict:
    """optsched's run with a log of each round's decision and each X computed."""
    inst = gp.instance(n)
    pos = {j.id: str(i) for i, j in enumerate(inst.jobs)}
    pol = get_policy(policy, rounds=rounds, **(options or {}))
    orig = getattr(pol, "_original", None)
    log: list[list] = []
    xs: list[list] = []
    end = [None]

    def on_epoch(t, placements):
        if orig is None:
            log.append([t, {pos[p.job]: p.gpu_type for p in placements}])
        elif end[0] is None or t >= end[0] - 1e-9:  # a round's start, not a late start
            log.append([t, {pos[j]: v for j, v in orig.decision.items()}])
            end[0] = orig._round_end
        ids = pol._ids
        if ids is not None and (not xs or xs[-1][2] is not pol._X):
            xs.append([t, {pos[j]: pol._X[m].tolist() for m, j in enumerate(ids)}, pol._X])

    t0 = time.process_time()
    res = simulate(inst, pol, seed=0, progress=False, on_epoch=on_epoch)
    m = res.metrics
    return {"mean_jct": m.mean_jct, "makespan": m.makespan,
            "cpu_s": time.process_time() - t0,
            "jct": {str(i): float(m.jct[j.id]) for i, j in enumerate(inst.jobs)
                    if j.id in m.jct},
            "rounds": log, "allocations": [x[:2] for x in xs],
            "types": list(inst.cluster.gpu_types)}


def first_difference(g: dict, o: dict) -> dict:
    """The first round whose decision differs, and X's largest gap there."""
    for i, (a, b) in enumerate(zip(o["rounds"], g["rounds"])):
        if abs(a[0] - b[0]) > 1e-3 or a[1] != b[1]:
            ga = [x for x in g["allocations"] if x[0] <= b[0] + 1e-6]
            oa = [x for x in o["allocations"] if x[0] <= a[0] + 1e-6]
            gap = None
            if ga and oa:
                gx, ox = ga[-1][1], oa[-1][1]
                gap = max((abs(gx[j][t] - ox[j][k]) for j in ox if j in gx
                           for k, t in enumerate(o["types"])), default=0.0)
            return {"first_diff_round": i, "first_diff_t_h": b[0] / gp.H,
                    "x_gap_there": gap}
    return {"first_diff_round": None, "first_diff_t_h": None, "x_gap_there": None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--pairs", nargs="+", default=[p for p, _ in PAIRS],
                    choices=[p for p, _ in PAIRS], help="Gavel policy names")
    ap.add_argument("--peer-dir", type=Path, required=True)
    ap.add_argument("--name", default="gavel_rounds_peer")
    ap.add_argument("--variants", nargs="+", default=list(MECHANICS), choices=list(VARIANTS),
                    help="original+interior: rounds='original' with point='interior' "
                         f"(only {', '.join(sorted(INTERIOR_POLICIES))}); ...+accumulated: "
                         "with isolated_time='accumulated' (only "
                         f"{', '.join(sorted(ACCUMULATED_POLICIES))})")
    args = ap.parse_args()
    if not (os.environ.get("GAVEL_HOME") and os.environ.get("GAVEL_PYTHON")):
        print("GAVEL_HOME / GAVEL_PYTHON not set (Gavel's checkout and its interpreter): "
              "skipped.", file=sys.stderr)
        return
    args.peer_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for gname, ours in PAIRS:
        if gname not in args.pairs:
            continue
        g = run_gavel(args.jobs, gname, args.peer_dir)
        for variant in args.variants:
            if variant.startswith("original+interior") and ours not in INTERIOR_POLICIES:
                continue
            if variant == "original+interior-highs" and "max_min" not in ours:
                continue  # the makespan's interior point is HiGHS's already
            if variant.endswith("accumulated") and ours not in ACCUMULATED_POLICIES:
                continue
            rounds, options = VARIANTS[variant]
            o = run_ours(args.jobs, ours, rounds, options)
            row = gp.compare(args.jobs, gname, ours, g, o)
            row.update(rounds=variant, **first_difference(g, o),
                       gavel_rounds=len(g["rounds"]), ours_rounds=len(o["rounds"]))
            rows.append(row)
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
                  flush=True)
    write_results(
        args.name, rows,
        ["n", "gavel_policy", "ours_policy", "rounds", "mean_ratio", "makespan_ratio",
         "within_one_round", "within_10pct", "first_diff_round", "first_diff_t_h",
         "x_gap_there", "gavel_rounds", "ours_rounds", "gavel_cpu_s", "ours_cpu_s"],
        title="Gavel's policies, the paper's rounds and Gavel's simulator's, job by job",
        params={"peer": f"{gp.PEER} {gp.PEER_COMMIT} (unmodified; Scheduler.simulate, "
                        "ECOS; rounds logged from outside by benchmarks/peers/gavel_trace.py)",
                "inputs": f"first {args.jobs} jobs of read_gavel_trace(), gavel-108 (36 V100 "
                          "+ 36 P100 + 36 K80, 4 GPUs per server), 360 s rounds, seed 0",
                "machine_note": "shared machine: CPU seconds, not wall time"},
        notes="rounds: alg1 = the paper's Alg. 1 (optsched's default), original = Gavel's "
              "simulator's mechanics (optsched.gavel.policy.OriginalRounds), "
              "original+interior = those with point='interior' (max-min: Gavel's program "
              "solved by Clarabel, optsched.gavel.exact.max_min_fairness_interior; "
              "finish-time fairness: finish_time_fairness_interior; makespan: "
              "min_total_duration_interior), original+interior-highs = the "
              "max-min program solved by HiGHS's ipm without crossover instead; "
              "...+accumulated = finish-time fairness with isolated_time='accumulated' "
              "(Gavel's code's denominator, optsched.gavel.policy.IsolatedClock). "
              "mean_ratio, "
              "makespan_ratio: ours / Gavel's. within_one_round: share of jobs completing "
              "within 360 s of Gavel's completion; within_10pct: JCT within 10 % of "
              "Gavel's. first_diff_round: index of the first round whose decision (job -> "
              "GPU type) differs from Gavel's (none: every round the same), at "
              "first_diff_t_h hours; x_gap_there: the largest |X_ours - X_Gavel| over the "
              "jobs of the last allocation before it (0: the same X, so the mechanics "
              "differ; > 0: the program's answer differs).")


if __name__ == "__main__":
    main()
