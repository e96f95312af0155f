"""Synergy's decisions on its endless job stream, next to optsched's: the stream variant
of ``synergy_trace.py`` (whose functions it reuses), for the ``stream_*`` pairs of
``benchmarks/synergy_peer.py`` (window jobs 4000-4999).

    SYNERGY_HOME=... SYNERGY_PYTHON=... python benchmarks/peers/synergy_stream_trace.py \
        ORDER ALLOCATOR SPLIT --out DIR [--align] [--exact-iterations] \
        [--philly-csv CSV] [--skip-peer]

Synergy runs under ``synergy_trace``'s wrapper (``--exact-iterations``: fractional
iterations per round instead of its floor; ``--align``: optsched's arrivals moved up to
Synergy's 300-s grid). Unlike ``synergy_trace.main``, optsched is simulated once, traced,
with the stream horizon of ``synergy_peer.ours`` (1.1 x the last arrival) and stopped
once the window's jobs are done (an epoch depends only on the past, so their completions
are those of the full run); the first differing round is found by merging the two
time-sorted traces, which are too large to load whole. Writes ``DIR/summary.json``
(window mean JCT and ratio, makespans, the share within one round on Synergy's grid and
raw, Pearson r, the first difference, CPU seconds of each side) and
``DIR/optsched_completions.json``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks" / "peers"))
import synergy_run  # noqa: E402
import synergy_trace  # noqa: E402


def rows(path):
    """(t, last record at t) in file order (traces are written in increasing t)."""
    prev = None
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if prev is not None and r["t"] != prev["t"]:
                yield prev["t"], prev
            prev = r
    if prev is not None:
        yield prev["t"], prev


def first_difference_stream(syn, ours):
    """synergy_trace.first_difference, merging the two time-sorted traces."""
    S, O = rows(syn), rows(ours)
    s_item, o_item = next(S, None), next(O, None)
    while s_item is not None or o_item is not None:
        ts = s_item[0] if s_item else math.inf
        to = o_item[0] if o_item else math.inf
        t = min(ts, to)
        s = s_item[1] if ts == t else None
        o = o_item[1] if to == t else None
        if ts == t:
            s_item = next(S, None)
        if to == t:
            o_item = next(O, None)
        if s is not None and not s["pre"] and o is None:
            continue
        if s is None or o is None:
            return {"t": t, "only_in": "optsched" if s is None else "synergy"}
        sp = {r[0]: (r[1], round(r[2], 6), round(r[3], 6)) for r in s["post"]}
        op = {r[0]: (r[1], round(r[2], 6), round(r[3], 6)) for r in o["post"]}
        if sp != op:
            return {"t": t, "synergy_order": s["order"], "optsched_order": o["order"],
                    "synergy_pre": s["pre"], "optsched_pre": o["pre"],
                    "synergy_post": s["post"], "optsched_post": o["post"],
                    "only_synergy": sorted(set(sp) - set(op)),
                    "only_optsched": sorted(set(op) - set(sp)),
                    "differ": {j: [sp[j], op[j]] for j in sorted(set(sp) & set(op))
                               if sp[j] != op[j]}}
    return None


def main():
    import numpy as np

    ap = argparse.ArgumentParser()
    ap.add_argument("order", choices=list(synergy_run.SCHED))
    ap.add_argument("allocator", choices=list(synergy_run.SUFFIX))
    ap.add_argument("split")
    ap.add_argument("--align", action="store_true")
    ap.add_argument("--exact-iterations", action="store_true")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--philly-csv", type=Path, default=None)
    ap.add_argument("--skip-peer", action="store_true")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    syn_log, ours_log = a.out / "synergy.jsonl", a.out / "optsched.jsonl"
    peer = a.out / "peer.json"
    summary = {"setting": vars(a) | {"out": str(a.out), "philly_csv": str(a.philly_csv)}}
    if not a.skip_peer:
        os.environ["SYNERGY_TRACE_LOG"] = str(syn_log)
        os.environ["SYNERGY_EXACT_ITERATIONS"] = "1" if a.exact_iterations else "0"
        synergy_run.DRIVER = Path(synergy_trace.__file__).resolve()
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.time()
        synergy_run.run(a.order, a.allocator, a.split, peer, num_jobs=0,
                        workdir=a.out / "work", philly_csv=a.philly_csv)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        summary["synergy_cpu_s"] = round(c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime, 1)
        summary["synergy_wall_s"] = round(time.time() - w0, 1)
        print(f"Synergy: {summary['synergy_cpu_s']} s CPU (incl. trace wrapper)", flush=True)
    res = json.loads(peer.read_text())
    jobs = synergy_run.read_jobs(synergy_run.jobs_path(peer))
    lo, hi = res["window"]
    win_ids = [str(j["id"]) for j in jobs if lo <= j["id"] < hi]
    arrival = {str(j["id"]): j["arrival"] for j in jobs}
    sim_jobs = [dict(j, arrival=300.0 * math.ceil(j["arrival"] / 300.0)) for j in jobs] \
        if a.align else jobs
    horizon = 1.1 * max(j["arrival"] for j in sim_jobs)

    import optsched.synergy as OS
    captured = {}
    orig_sim = OS.simulate_synergy

    def sim(*args, **kw):
        captured["res"] = orig_sim(*args, **kw)
        return captured["res"]

    OS.simulate_synergy = sim
    p0 = time.process_time()
    try:
        synergy_trace.trace_optsched(sim_jobs, a.order, a.allocator, str(ours_log),
                                     align=False, max_time=horizon, until=win_ids)
    finally:
        OS.simulate_synergy = orig_sim
    summary["optsched_cpu_s"] = round(time.process_time() - p0, 1)
    summary["horizon_s"] = horizon
    done = captured["res"].schedule.completion
    print(f"optsched: {summary['optsched_cpu_s']} s CPU (traced)", flush=True)

    fd = first_difference_stream(str(syn_log), str(ours_log))
    (a.out / "first_difference.json").write_text(json.dumps(fd))
    short = None if fd is None else {k: v for k, v in fd.items()
                                     if not k.endswith(("_order", "_pre", "_post"))}
    summary["first_difference"] = short
    print("first difference:", json.dumps(short)[:1500], flush=True)

    rs = res["round_s"]
    W = res["window_jobs"]
    unfinished = [k for k in W if k not in done]
    ks = [k for k in W if k in done]
    sj = np.array([W[k][1] - W[k][0] for k in W]) / 3600
    oj = np.array([done[k] - arrival[k] for k in ks]) / 3600
    grid = [k in done and abs(W[k][1] - rs * math.ceil(done[k] / rs - 1e-9)) <= rs for k in W]
    d = np.abs(np.array([W[k][1] - done[k] for k in ks]))
    x = np.array([W[k][1] - W[k][0] for k in ks])
    y = np.array([done[k] - arrival[k] for k in ks])
    summary.update({
        "jobs_generated": res["jobs_generated"], "synergy_end_h": res["end_time_s"] / 3600,
        "window_jobs": len(W), "unfinished_optsched": unfinished,
        "within_one_round_on_grid": float(np.mean(grid)),
        "within_300s_raw": float((d <= 300).mean()), "within_1h": float((d <= 3600).mean()),
        "pearson_r": float(np.corrcoef(x, y)[0, 1]),
        "mean_jct_h_synergy": float(sj.mean()), "mean_jct_h_optsched": float(oj.mean()),
        "mean_ratio": float(oj.mean() / sj.mean()),
        "p50_h": [float(np.median(sj)), float(np.median(oj))],
        "p99_h": [float(np.percentile(sj, 99)), float(np.percentile(oj, 99))],
        "makespan_h_synergy": (max(c for _, c in W.values())
                               - min(s for s, _ in W.values())) / 3600,
        "makespan_h_optsched": (max(done[k] for k in ks) - min(arrival[k] for k in W)) / 3600,
        "synergy_reported_window_mean_jct_h": res["synergy_window_mean_jct_h"],
    })
    if "4733" in W:
        summary["job_4733"] = {"arrival": arrival["4733"], "synergy_completion": W["4733"][1],
                               "optsched_completion": done.get("4733")}
    worst = sorted(ks, key=lambda k: -abs(W[k][1] - done[k]))[:10]
    summary["largest_diffs"] = [[k, W[k][0], W[k][1], done[k]] for k in worst]
    (a.out / "summary.json").write_text(json.dumps(summary, indent=1))
    (a.out / "optsched_completions.json").write_text(json.dumps(dict(done)))
    print(f"within one round on Synergy's grid: {np.mean(grid):.3f} of {len(grid)} jobs")
    print(json.dumps({k: v for k, v in summary.items() if k not in ("first_difference",)},
                     indent=1))


if __name__ == "__main__":
    main()
