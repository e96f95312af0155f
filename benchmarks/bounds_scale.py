"""Certified lower bounds at the papers' scale, and every committed policy's gap to them.

Cases (each bound computed in a child process, timed by ``process_time`` for CPU and
``perf_counter`` for wall, peak memory from ``getrusage``):

* Gavel's 2,000-job trace on gavel-108 at its recorded arrivals (the policies' values
  from ``results/simulate_gavel.json``);
* the whole Philly trace (82,247 jobs, tiresias-n256g8, 2,048 GPUs) at load 1 (values
  from ``results/philly_scale.json``) and at 6x arrivals (values from
  ``results/philly_load6_full.json``);
* its first 20,000 jobs at 6x arrivals (values from ``results/philly_load6.json``);
* on request (``--cases gavel-2000-tight --name bounds_gavel_tight``), Gavel's trace with
  54 intervals, the interval LP's busy-time tangents and squashed-area rows
  (a 1.35-million-column LP).

Per case: each bound method's mean-JCT and makespan bound, the best, CPU seconds, peak
memory; per committed policy run: its value and value / bound (the gap: how far from
the optimum the policy can at most be).

    python benchmarks/bounds_scale.py [--cases CASE ...] [--name NAME] [--keep]

``--keep`` keeps the rows of the cases not run from the result file (e.g. ``--cases
philly-load6 --keep`` after a new committed policy run on that case).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from common import RESULTS, write_results

#: Gavel-2000 policy values: every policy's sweep cell, the older committed runs, and
#: the best schedule the large-neighbourhood search found.
GAVEL_2000 = [("gap_gavel2000", None), ("simulate_gavel", None), ("lns_gavel_best", None),
              ("lns_gavel", None)]

CASES = {
    "gavel-2000": dict(trace="gavel-philly-2000", cluster="gavel-108", jobs=None, load=1.0,
                       policies=GAVEL_2000),
    # the same trace with a longer, finer interval-LP grid: a window of 1,000 h after each
    # release, 36 intervals, 240,000 columns (the default is 8 mean run times, 258 h)
    "gavel-2000-fine": dict(trace="gavel-philly-2000", cluster="gavel-108", jobs=None,
                            load=1.0, policies=GAVEL_2000,
                            options=dict(window=1000 * 3600.0, intervals=36,
                                         max_columns=240_000, time_limit=600.0)),
    # the same window, 54 intervals (18.5 h), and the tightenings of the interval LP:
    # two busy-time tangents per column, one squashed-area row per (type, interval)
    "gavel-2000-tight": dict(trace="gavel-philly-2000", cluster="gavel-108", jobs=None,
                             load=1.0, policies=GAVEL_2000,
                             options=dict(methods=("per_job", "pooled", "interval_lp"),
                                          window=1000 * 3600.0, intervals=54, tangents=2,
                                          squash=1, max_columns=2_000_000,
                                          time_limit=1800.0)),
    # the same over a 1,500-hour window (54 intervals of 27.8 h): fewer long jobs reach
    # their late columns, which have no capacity row
    "gavel-2000-tight-1500": dict(trace="gavel-philly-2000", cluster="gavel-108", jobs=None,
                                  load=1.0, policies=GAVEL_2000,
                                  options=dict(methods=("per_job", "pooled", "interval_lp"),
                                               window=1500 * 3600.0, intervals=54,
                                               tangents=2, squash=1, max_columns=2_000_000,
                                               time_limit=1800.0)),
    # the same with three busy-time tangents per column
    "gavel-2000-tight-1500-t3": dict(trace="gavel-philly-2000", cluster="gavel-108",
                                     jobs=None, load=1.0, policies=GAVEL_2000,
                                     options=dict(methods=("per_job", "pooled", "interval_lp"),
                                                  window=1500 * 3600.0, intervals=54,
                                                  tangents=3, squash=1,
                                                  max_columns=2_500_000, time_limit=3600.0)),
    # and with two squashed-area rows per (type, interval)
    "gavel-2000-tight-1500-t3-s2": dict(trace="gavel-philly-2000", cluster="gavel-108",
                                        jobs=None, load=1.0, policies=GAVEL_2000,
                                        options=dict(methods=("per_job", "pooled",
                                                              "interval_lp"),
                                                     window=1500 * 3600.0, intervals=54,
                                                     tangents=3, squash=2,
                                                     max_columns=2_500_000,
                                                     time_limit=3600.0)),
    "philly-load1": dict(trace="philly", cluster=None, jobs=None, load=1.0,
                         policies=("philly_scale", 82247)),
    "philly-load6": dict(trace="philly", cluster=None, jobs=None, load=6.0,
                         policies=("philly_load6_full", 82247)),
    "philly-20000-load6": dict(trace="philly", cluster=None, jobs=20000, load=6.0,
                               policies=("philly_load6", 20000)),
}


def _child(case: str) -> None:
    from optsched.catalog import read_trace
    from optsched.sim.bounds import lower_bounds

    c = CASES[case]
    inst = read_trace(c["trace"], c["cluster"], jobs=c["jobs"], load=c["load"])
    t0, c0 = time.perf_counter(), time.process_time()
    b = lower_bounds(inst, **c.get("options", {}))
    out = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
           "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
           "n_jobs": inst.n_jobs, "bounds": b.to_dict()}
    print(json.dumps(out))


def _sweep_values(name: str) -> list[dict]:
    """Every finished cell of a committed simulation sweep (results/NAME/cells.jsonl)."""
    path = RESULTS / name / "cells.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r.get("n_jobs") and r.get("n_completed") == r["n_jobs"]:
            out.append({"policy": r["method"], "mean_jct_h": r["mean_jct"] / 3600,
                        "makespan_h": r["makespan"] / 3600})
    return out


def _lns_values(name: str) -> list[dict]:
    """The best schedule of a committed large-neighbourhood search (results/NAME.json)."""
    rows = json.loads((RESULTS / f"{name}.json").read_text())["rows"]
    # the policies it started from were simulated on the whole trace too
    out = [{"policy": r["name"], "mean_jct_h": r["mean_jct_h"], "makespan_h": None}
           for r in rows if r["kind"] == "start" and not r["name"].startswith("lns.")]
    best = min((r for r in rows if r["kind"] == "lns"), key=lambda r: r["mean_jct_h"])
    return out + [{"policy": f"best schedule found ({best['name']})",
                   "mean_jct_h": best["mean_jct_h"], "makespan_h": None}]


def _policy_values(spec) -> list[dict]:
    if spec is None:
        return []
    if isinstance(spec, list):  # several sources: the first one giving a policy wins
        out, seen = [], set()
        for one in spec:
            for p in _policy_values(one):
                if "." not in p["policy"] and not p["policy"].startswith("best"):
                    p["policy"] = "gavel." + p["policy"]  # simulate_gavel's older names
                if p["policy"] not in seen:
                    seen.add(p["policy"])
                    out.append(p)
        return out
    name, jobs = spec
    if not (RESULTS / f"{name}.json").exists() and not (RESULTS / name).is_dir():
        return []
    if name.startswith("gap_"):
        return _sweep_values(name)
    if name.startswith("lns_"):
        return _lns_values(name)
    rows = json.loads((RESULTS / f"{name}.json").read_text())["rows"]
    out = []
    for r in rows:
        if jobs is not None and r.get("jobs") != jobs:
            continue
        if r.get("completed") not in (None, r.get("jobs")) or r.get("mean_jct_h") is None:
            continue  # unfinished or stopped runs (a timeout row has no values)
        out.append({"policy": r["policy"], "mean_jct_h": r["mean_jct_h"],
                    "makespan_h": r["makespan_h"]})
    return out


def keep_rows(name: str, cases: list[str]) -> list[dict]:
    """The rows of ``results/NAME.json`` whose case is not in ``cases``."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return []
    return [r for r in json.loads(path.read_text())["rows"] if r["case"] not in cases]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--cases", nargs="*",
                    default=[c for c in CASES if not c.startswith("gavel-2000-tight")])
    ap.add_argument("--name", default="bounds_scale",
                    help="results file name (another name keeps bounds_scale's)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the result file's rows of the cases not run")
    args = ap.parse_args()
    if args.child:
        _child(args.child)
        return
    rows = []
    for case in args.cases:
        proc = subprocess.run([sys.executable, __file__, "--child", case], capture_output=True,
                              text=True, check=True)
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        b = r["bounds"]
        methods = {m: v for m, v in b["by_method"].items()}
        row = {"case": case, "jobs": r["n_jobs"], "policy": "(bound)",
               "mean_jct_h": b["mean_jct"] / 3600, "makespan_h": b["makespan"] / 3600,
               "mean_jct_from": b["source"]["mean_jct"], "makespan_from": b["source"]["makespan"],
               "cpu_s": round(r["cpu_s"], 2), "wall_s": round(r["wall_s"], 2),
               "peak_rss_mib": round(r["peak_rss_mib"], 1),
               "methods": "; ".join(
                   f"{m} {v['total_completion'] is not None and 'jct' or 'cmax'}"
                   for m, v in methods.items()),
               "skipped": "; ".join(f"{m}: {w}" for m, w in b["skipped"].items()) or "-",
               "options": ", ".join(f"{k}={v}" for k, v in
                                    CASES[case].get("options", {}).items()) or "defaults"}
        rows.append(row)
        for p in _policy_values(CASES[case]["policies"]):
            rows.append({"case": case, "jobs": r["n_jobs"], "policy": p["policy"],
                         "mean_jct_h": p["mean_jct_h"], "makespan_h": p["makespan_h"],
                         "gap_mean_jct": p["mean_jct_h"] / row["mean_jct_h"],
                         "gap_makespan": (p["makespan_h"] / row["makespan_h"]
                                          if p["makespan_h"] is not None else None)})
        print(case, row["mean_jct_h"], row["makespan_h"], row["cpu_s"], flush=True)
    kept = keep_rows(args.name, args.cases) if args.keep else []
    rows = sorted(kept + rows, key=lambda r: list(CASES).index(r["case"])
                  if r["case"] in CASES else len(CASES))
    write_results(
        args.name, rows,
        ["case", "jobs", "policy", "mean_jct_h", "gap_mean_jct", "makespan_h", "gap_makespan",
         "mean_jct_from", "makespan_from", "cpu_s", "wall_s", "peak_rss_mib", "skipped",
         "options"],
        title="Certified lower bounds at scale, and each committed policy's gap",
        params={"bounds": "optsched.sim.bounds.lower_bounds with each case's options "
                          "(column options)",
                "policy_values": "committed results gap_gavel2000 (sweep of every policy), "
                                 "simulate_gavel, lns_gavel (best schedule found), "
                                 "philly_scale, philly_load6_full, philly_load6",
                **({"kept": "rows of the cases not in this run, from the earlier file: "
                            + ", ".join(dict.fromkeys(r["case"] for r in kept))}
                   if kept else {})},
        notes="gap = policy value / certified lower bound: the policy is at most that factor "
              "from the optimum. CPU and memory: the bound's child process (peak RSS with the "
              "interpreter, imports and the trace). Machine: 2 cores shared with other work.")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
