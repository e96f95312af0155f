"""Gavel's further policies (agnostic finish-time fairness and makespan, isolated,
water-filling max-min) in optsched and in Gavel's own simulator, job by job.

For each pair (Gavel's policy name, optsched's) and each size N, both simulators run the
first N jobs of Gavel's shipped 2,000-job Philly-derived trace (``read_gavel_trace()``)
on 36 V100 + 36 P100 + 36 K80 (4 GPUs per server), 360 s rounds, seed 0. Gavel's side
is its unmodified code (``benchmarks/peers/gavel_run.py`` under Gavel's interpreter; the
checkout from ``GAVEL_HOME``, the interpreter from ``GAVEL_PYTHON``); its run JSONs are
kept in ``--peer-dir`` and reused when present. Without either the script says so and
stops.

Per pair: mean JCT and makespan on both sides and their ratios (ours / Gavel's), and the
per-job agreement: the share of jobs whose completion time is within one round (360 s)
of Gavel's, and within 10 % of Gavel's JCT. CPU seconds of each side's run are recorded
(the machine may be shared).

    GAVEL_HOME=... GAVEL_PYTHON=... python benchmarks/gavel_policies_peer.py \
        --jobs 100 --peer-dir /tmp/gavel-runs [--pairs isolated ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from common import write_results

from optsched.catalog import profiles, read_gavel_trace
from optsched.registry import get_policy
from optsched.sim import simulate

PEER = "stanford-futuredata/gavel"
PEER_COMMIT = "c4fa40097339e9608ab71fd64c8bdea96a5e4a4c"
ROUND = 360.0
H = 3600.0
#: (Gavel's policy name, optsched's registered name, its options). Gavel's unsuffixed
#: names are its heterogeneity-agnostic variants, ``_perf`` the aware ones. The makespan
#: policies run with both answers (``point``: the exact vertex or Gavel's code's kind of
#: interior point; the agnostic one's default is the interior point).
PAIRS = [
    ("finish_time_fairness", "gavel.finish_time_fairness_agnostic", {}),
    ("min_total_duration", "gavel.min_total_duration_agnostic", {}),   # interior
    ("min_total_duration", "gavel.min_total_duration_agnostic", {"point": "vertex"}),
    ("min_total_duration_perf", "gavel.min_total_duration", {}),
    ("min_total_duration_perf", "gavel.min_total_duration", {"point": "interior"}),
    ("isolated", "gavel.isolated", {}),
    ("max_min_fairness_water_filling_perf", "gavel.max_min_fairness_water_filling", {}),
    ("max_min_fairness_water_filling", "gavel.max_min_fairness_water_filling_agnostic", {}),
    # space sharing ("NAME@INPUT": Gavel's policy NAME on another input, see INPUTS),
    # each beside its unpacked form on the same input
    ("fifo_packed@measured", "gavel.fifo_packed", {}),
    ("fifo_perf@measured", "gavel.fifo", {}),
    ("max_min_fairness_packed@measured_sf1", "gavel.max_min_fairness_packed", {}),
    ("max_min_fairness_packed@measured_sf1", "gavel.max_min_fairness_packed",
     {"point": "interior"}),
    ("max_min_fairness_perf@measured_sf1", "gavel.max_min_fairness", {}),
    ("fifo_packed@measured_physical", "gavel.fifo_packed", {}),
    ("fifo_perf@measured_physical", "gavel.fifo", {}),
    ("max_min_fairness_packed@measured_sf1_physical", "gavel.max_min_fairness_packed", {}),
    ("max_min_fairness_packed@measured_sf1_physical", "gavel.max_min_fairness_packed",
     {"point": "interior"}),
    ("max_min_fairness_perf@measured_sf1_physical", "gavel.max_min_fairness", {}),
    ("min_total_duration_packed@measured_sf1", "gavel.min_total_duration_packed", {}),
    ("min_total_duration_packed@measured_sf1", "gavel.min_total_duration_packed",
     {"point": "interior"}),
    ("min_total_duration_perf@measured_sf1", "gavel.min_total_duration", {}),
    ("finish_time_fairness_packed@measured_sf1", "gavel.finish_time_fairness_packed", {}),
    ("finish_time_fairness_perf@measured_sf1", "gavel.finish_time_fairness", {}),
    ("max_min_fairness_water_filling_packed@measured_sf1",
     "gavel.max_min_fairness_water_filling_packed", {}),
    ("max_min_fairness_water_filling_perf@measured_sf1",
     "gavel.max_min_fairness_water_filling", {}),
    ("max_min_fairness_water_filling_perf@measured_sf1",
     "gavel.max_min_fairness_water_filling", {"rounds": "original"}),
    # Gavel's simulator gives it no prices and no SLOs (price 1 per type, no SLO rows):
    # the defaults here. Gavel's own run stops at its first allocation (GAVEL_STOPS);
    # "+empty_SLOs" supplies the missing state entry from the driver (peers/gavel_run.py)
    ("max_sum_throughput_normalized_by_cost_packed_SLOs@measured_sf1",
     "gavel.max_sum_throughput_normalized_by_cost_packed_SLOs", {}),
    ("max_sum_throughput_normalized_by_cost_packed_SLOs+empty_SLOs@measured_sf1",
     "gavel.max_sum_throughput_normalized_by_cost_packed_SLOs", {}),
    # Gandiva's random pairs (Gavel's GandivaPolicy(seed=0)): the same pairing seed
    ("gandiva@measured", "gavel.gandiva", {"pairing_seed": 0}),
    ("gandiva@measured", "gavel.gandiva", {"pairing_seed": 0, "queue": "per_type"}),
    ("gandiva@measured_physical", "gavel.gandiva", {"pairing_seed": 0}),
    ("gandiva@measured_physical", "gavel.gandiva", {"pairing_seed": 0, "queue": "per_type"}),
    # the round mechanism walking per-type queues as Gavel's code does
    ("isolated", "gavel.isolated", {"queue": "per_type"}),
    ("finish_time_fairness", "gavel.finish_time_fairness_agnostic", {"queue": "per_type"}),
    ("min_total_duration_perf", "gavel.min_total_duration", {"queue": "per_type"}),
    ("max_min_fairness_water_filling_perf", "gavel.max_min_fairness_water_filling",
     {"queue": "per_type"}),
    ("max_min_fairness_packed@measured_sf1", "gavel.max_min_fairness_packed",
     {"queue": "per_type"}),
    ("max_min_fairness_perf@measured_sf1", "gavel.max_min_fairness", {"queue": "per_type"}),
    ("max_min_fairness_packed@measured_sf1_physical", "gavel.max_min_fairness_packed",
     {"queue": "per_type"}),
    ("max_min_fairness_perf@measured_sf1_physical", "gavel.max_min_fairness",
     {"queue": "per_type"}),
    ("max_min_fairness_water_filling_packed@measured_sf1",
     "gavel.max_min_fairness_water_filling_packed", {"queue": "per_type"}),
    ("max_min_fairness_water_filling_perf@measured_sf1",
     "gavel.max_min_fairness_water_filling", {"queue": "per_type"}),
    ("max_sum_throughput_normalized_by_cost_packed_SLOs+empty_SLOs@measured_sf1",
     "gavel.max_sum_throughput_normalized_by_cost_packed_SLOs", {"queue": "per_type"}),
    # the packed policies under Gavel's simulator's round mechanics (--with rounds=original)
    ("max_min_fairness_packed@measured_sf1", "gavel.max_min_fairness_packed",
     {"rounds": "original"}),
    ("max_min_fairness_packed@measured_sf1", "gavel.max_min_fairness_packed",
     {"rounds": "original", "point": "interior"}),
    ("max_min_fairness_packed@measured_sf1_physical", "gavel.max_min_fairness_packed",
     {"rounds": "original"}),
    ("max_min_fairness_packed@measured_sf1_physical", "gavel.max_min_fairness_packed",
     {"rounds": "original", "point": "interior"}),
    ("min_total_duration_packed@measured_sf1", "gavel.min_total_duration_packed",
     {"rounds": "original"}),
    ("min_total_duration_packed@measured_sf1", "gavel.min_total_duration_packed",
     {"rounds": "original", "point": "interior"}),
    ("max_min_fairness_water_filling_packed@measured_sf1",
     "gavel.max_min_fairness_water_filling_packed", {"rounds": "original"}),
    ("max_sum_throughput_normalized_by_cost_packed_SLOs+empty_SLOs@measured_sf1",
     "gavel.max_sum_throughput_normalized_by_cost_packed_SLOs", {"rounds": "original"}),
    # Gavel's FIFO policies, by default and under its round mechanics
    ("fifo_perf", "gavel.fifo", {}),
    ("fifo_perf", "gavel.fifo", {"rounds": "original"}),
    ("fifo", "gavel.fifo_agnostic", {}),
    ("fifo", "gavel.fifo_agnostic", {"rounds": "original"}),
    ("fifo_perf@measured", "gavel.fifo", {"rounds": "original"}),
    ("fifo_perf@measured_physical", "gavel.fifo", {"rounds": "original"}),
    ("fifo_packed@measured", "gavel.fifo_packed", {"rounds": "original"}),
    ("fifo_packed@measured_physical", "gavel.fifo_packed", {"rounds": "original"}),
    ("gandiva@measured", "gavel.gandiva", {"pairing_seed": 0, "rounds": "original"}),
    ("gandiva@measured_physical", "gavel.gandiva", {"pairing_seed": 0, "rounds": "original"}),
]
#: The inputs a pair may name after "@" (default "all": the first n jobs of the trace).
#: "measured": the first n jobs whose (job type, scale factor) Gavel measured, so that
#: both sides have the same co-located rates (Gavel's code reads a pair's rates for any
#: two keys of one scale factor and has none for the keys it never measured);
#: "measured_sf1": the first n of those with one worker (Gavel's packed LP policies need
#: every job to have as many combinations, see the results' notes); a suffix
#: "_physical" runs them on Gavel's physical cluster (8 V100 + 16 P100 + 24 K80), where
#: they queue (on gavel-108 the first 100 hardly ever do, so FIFO never packs).
INPUTS = ("all", "measured", "measured_sf1", "measured_physical", "measured_sf1_physical")


#: Why Gavel's own run stops on a pair, where it does (said in the results' notes).
GAVEL_STOPS = {
    "max_sum_throughput_normalized_by_cost_packed_SLOs@measured_sf1":
        "KeyError: 'SLOs' in Scheduler._compute_allocation at the first allocation (t = 0, "
        "one job): without price data the simulator has no SLOs (Scheduler._SLOs is None "
        "whatever assign_SLOs), so _get_allocation_state writes no 'SLOs' entry for a "
        "ThroughputNormalizedByCostSum policy with 'SLO' in its name, and "
        "_compute_allocation reads it; the '+empty_SLOs' row gives it {} from the "
        "driver (no SLO rows, price 1 per type: the program optsched's defaults state)",
}


def split(gp: str) -> tuple[str, str]:
    """Gavel's policy name and the input of a pair's Gavel label ``NAME[@INPUT]``."""
    name, _, subset = gp.partition("@")
    return name, subset or "all"
DRIVER = Path(__file__).resolve().parent / "peers" / "gavel_run.py"


def instance(n: int, subset: str = "all"):
    """The first ``n`` jobs of the trace of input ``subset`` (:data:`INPUTS`)."""
    if subset not in INPUTS:
        raise SystemExit(f"unknown input {subset!r}; known: {INPUTS}")
    physical = subset.endswith("_physical")
    trace = read_gavel_trace(cluster="gavel-physical" if physical else None)
    if subset == "all":
        return trace.replace(jobs=trace.jobs[:n], name=f"{trace.name}-first{n}")
    table = profiles()
    jobs = [j for j in trace.jobs if j.workers in table[j.profile].scale_factors
            and ("sf1" not in subset or j.workers == 1)][:n]
    return trace.replace(jobs=tuple(jobs), name=f"{trace.name}-{subset}-first{n}")


def jobs_spec(inst) -> dict:
    """The jobs and each (job type, scale factor) key's gang rates, for Gavel's side."""
    jobs, rates = [], {}
    for j in inst.jobs:
        jobs.append({"job_type": j.profile, "scale_factor": j.workers,
                     "total_steps": j.work, "arrival": j.arrival})
        key = json.dumps([j.profile, j.workers])
        rates[key] = {t: j.workers * r for t, r in j.throughput.items()}
    return {"jobs": jobs, "rates": rates, "cluster": inst.cluster.gpus_per_type}


def run_gavel(n: int, gp: str, peer_dir: Path) -> dict:
    gpolicy, subset = split(gp)
    tag = "" if subset == "all" else f"_{subset}"
    out = peer_dir / f"gavel_{n}_{gpolicy}{tag}.json"
    failed = out.with_suffix(".failed")
    if failed.exists():  # the original stopped on this input before: not run again
        raise subprocess.CalledProcessError(int(failed.read_text() or 1), "gavel_run.py")
    if not out.exists():
        spec = peer_dir / (f"jobs_{subset}_{n}.json" if tag else f"jobs_{n}.json")
        if not spec.exists():
            spec.write_text(json.dumps(jobs_spec(instance(n, subset))))
        home, python = os.environ["GAVEL_HOME"], os.environ["GAVEL_PYTHON"]
        done = subprocess.run([python, str(DRIVER), str(spec), gpolicy, str(out)],
                              cwd=Path(home) / "scheduler", stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            failed.write_text(str(done.returncode))
            raise subprocess.CalledProcessError(done.returncode, done.args)
    return json.loads(out.read_text())


def run_ours(n: int, policy: str, options: dict | None = None,
             subset: str = "all") -> dict:
    inst = instance(n, subset)
    t0 = time.process_time()
    res = simulate(inst, get_policy(policy, **(options or {})), seed=0, progress=False)
    m = res.metrics
    return {"mean_jct": m.mean_jct, "makespan": m.makespan, "cpu_s": time.process_time() - t0,
            # by position in the instance, as Gavel numbers the jobs it is given
            "jct": {str(i): float(m.jct[j.id]) for i, j in enumerate(inst.jobs)
                    if j.id in m.jct}}


def compare(n: int, gpolicy: str, policy: str, g: dict, o: dict) -> dict:
    ids = [j for j, v in g["jobs"].items() if v["jct"] is not None and j in o["jct"]]
    gj = np.array([g["jobs"][j]["jct"] for j in ids])
    oj = np.array([o["jct"][j] for j in ids])
    return {"n": n, "gavel_policy": gpolicy, "ours_policy": policy,
            "gavel_mean_jct_h": g["mean_jct"] / H, "ours_mean_jct_h": o["mean_jct"] / H,
            "mean_ratio": o["mean_jct"] / g["mean_jct"],
            "gavel_makespan_h": g["makespan"] / H, "ours_makespan_h": o["makespan"] / H,
            "makespan_ratio": o["makespan"] / g["makespan"],
            "within_one_round": float(np.mean(np.abs(oj - gj) <= ROUND)),
            "within_10pct": float(np.mean(np.abs(oj / gj - 1) <= 0.10)),
            "compared_jobs": len(ids), "gavel_dropped": len(g.get("dropped_jobs") or []),
            "gavel_allocations": g["n_allocation_computations"],
            "gavel_cpu_s": g["cpu_s"], "ours_cpu_s": o["cpu_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, nargs="+", default=[100])
    ap.add_argument("--pairs", nargs="+", default=sorted({g for g, _, _ in PAIRS}),
                    choices=sorted({g for g, _, _ in PAIRS}), help="Gavel policy names")
    ap.add_argument("--peer-dir", type=Path, required=True,
                    help="where Gavel's run JSONs are kept (and reused)")
    ap.add_argument("--ours-dir", type=Path,
                    help="keep optsched's run summaries here and reuse them")
    ap.add_argument("--ours-only", action="store_true",
                    help="run (and keep) optsched's side only; needs --ours-dir")
    ap.add_argument("--with", dest="with_", nargs="+", default=[], metavar="KEY=VALUE",
                    help="only the pairs whose optsched options include these")
    ap.add_argument("--name", default="gavel_policies_peer")
    args = ap.parse_args()
    wanted = dict(kv.split("=", 1) for kv in args.with_)
    if args.ours_only and args.ours_dir is None:
        ap.error("--ours-only needs --ours-dir")
    if not args.ours_only and not (os.environ.get("GAVEL_HOME")
                                   and os.environ.get("GAVEL_PYTHON")):
        print("GAVEL_HOME / GAVEL_PYTHON not set (Gavel's checkout and its interpreter): "
              "skipped.", file=sys.stderr)
        return
    args.peer_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    failed: list[str] = []
    for n in args.jobs:
        for gp, ours, options in PAIRS:
            if gp not in args.pairs or any(str(options.get(k)) != v
                                           for k, v in wanted.items()):
                continue
            label = ours + "".join(f" {k}={v}" for k, v in options.items())
            subset = split(gp)[1]
            if subset != "all":
                label += f" @{subset}"
            kept = (args.ours_dir / f"{n}_{label.replace(' ', '_')}.json"
                    if args.ours_dir else None)
            if kept is not None and kept.exists():
                o = json.loads(kept.read_text())
            else:
                o = run_ours(n, ours, options, subset)
                if kept is not None:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    kept.write_text(json.dumps(o))
            if args.ours_only:
                print(n, label, f"mean {o['mean_jct'] / H:.2f} h", flush=True)
                continue
            try:
                g = run_gavel(n, gp, args.peer_dir)
            except subprocess.CalledProcessError as exc:
                # the original stops on this input: said in the notes, no row
                failed.append(f"{gp} (n={n}): Gavel's run exited with status "
                              f"{exc.returncode}"
                              + (f" ({GAVEL_STOPS[gp]})" if gp in GAVEL_STOPS else ""))
                print("Gavel failed:", failed[-1], flush=True)
                continue
            rows.append(compare(n, gp, label, g, o))
            print({k: (round(v, 4) if isinstance(v, float) else v)
                   for k, v in rows[-1].items()}, flush=True)
    if args.ours_only:
        return
    write_results(
        args.name, rows,
        ["n", "gavel_policy", "ours_policy", "gavel_mean_jct_h", "ours_mean_jct_h",
         "mean_ratio", "gavel_makespan_h", "ours_makespan_h", "makespan_ratio",
         "within_one_round", "within_10pct", "compared_jobs", "gavel_allocations",
         "gavel_cpu_s", "ours_cpu_s"],
        title="Gavel's further policies: optsched vs Gavel's own simulator, job by job",
        params={"peer": f"{PEER} {PEER_COMMIT} (unmodified; Scheduler.simulate, ECOS)",
                "inputs": "first n jobs of read_gavel_trace() (a label NAME@measured: "
                          "the first n whose (job type, scale factor) Gavel measured; "
                          "@measured_sf1: those of them with one worker), gavel-108 (36 "
                          "V100 + 36 P100 + 36 K80, 4 GPUs per server), 360 s rounds, seed 0",
                "machine_note": "shared machine: CPU seconds, not wall time"},
        notes="mean_ratio, makespan_ratio: ours / Gavel's. within_one_round: share of "
              "jobs whose completion is within 360 s of Gavel's; within_10pct: share "
              "whose JCT is within 10 % of Gavel's (jobs Gavel dropped are left out). "
              "gavel_allocations: the policy's get_allocation calls over Gavel's run. "
              + (f"Gavel's own run stopped, no row: {'; '.join(failed)}. " if failed else "")
              + "Gavel's packed LP policies stop on the first 100 jobs of measured keys at "
              "their first allocation with pairs: PolicyWithPacking.get_base_constraints "
              "(and MaxMinFairnessPolicyWithPacking's objective) reshape per-job terms to "
              "(jobs, terms / jobs), which assumes every job has as many combinations; "
              "with pairs only between jobs of one scale factor they differ (cvxpy: "
              "'Invalid reshape dimensions (5, 7)'); they run on jobs of one scale factor "
              "(@measured_sf1).")


if __name__ == "__main__":
    main()
