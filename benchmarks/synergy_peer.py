"""optsched's Synergy policies next to Synergy's own simulator on the same jobs.

Peer: msr-fiddle/synergy (``simulator/runner.py``, Python 3.8), run through
``peers/synergy_run.py``. Set ``SYNERGY_HOME`` (a checkout) and ``SYNERGY_PYTHON`` (its
Python 3.8 interpreter); without them the peer is not run (a message says so) and its
committed results (``results/synergy_peer/``) are used, so the optsched side can still
be re-measured offline. The Philly job table the peer's trace stand-in is built from
is ``PHILLY_CSV`` (default ``../shared/data/philly/philly_jobs.csv`` next to the
repository); it is only read when the peer builds its job pickle.

Inputs: Synergy's Philly mode with its defaults (seed 42, single-GPU jobs, Poisson
arrivals at 9 jobs/h, 16 servers x 8 GPUs / 24 cores / 500 GB, 300 s rounds), splits
20/70/10 and 50/0/50 (image/language/speech %). Every run of a split draws the same
job stream (checked), committed once as ``results/synergy_peer/jobs_<split>.csv.gz``
(the longest prefix any run generated); each pair's instance is the prefix its run
generated.

* ``stream_*``: Synergy's measurement, an endless stream measured on jobs 4000-4999
  (Runner's ``series_id_filter``; the run stops once they have all finished). optsched
  simulates the same jobs up to 1.1 x the last arrival; a window job unfinished by then
  is counted, never dropped silently.
* ``n600_*``: the first 600 jobs only, all measured, from an empty cluster.

Pairs (Synergy scheduler -> optsched): ``FIFO+fair`` / ``FIFO+tune`` / ``FIFO`` ->
``simulate_synergy(inst, proportional|tune|greedy, "fifo")``; ``SRTF+fair`` / ``SRTF+tune``
-> order ``srtf`` (default: Synergy's remaining-time estimate and 1000 h starvation
guard), and beside them the previous SRTF (``starvation=None``; for TUNE also
``remaining_at="fair"``). ``DRF`` / ``TETRIS`` (``+fair``, ``+tune``) -> orders ``drf`` /
``tetris`` (``synergy.drf`` / ``synergy.tetris``); ``<ORDER>+place`` -> ``place=True``;
``FIFO+opt`` -> allocator ``opt`` (``synergy.opt``) on the first 60 jobs only (Synergy
solves its ILPs with GLPK every round: 716 s for those 60 jobs). ``SRSF`` and
``DRF+opt`` raise in Synergy (the runs are recorded with the error); ``synergy.srsf``
is compared with ``SRTF+fair``, which is the same scheduler on these single-GPU jobs
(same sort key: remaining iterations x iteration time x GPUs, GPUs = 1; the
proportional allocation SRSF's ``cluster.allocate`` call defaults to).

    SYNERGY_HOME=... SYNERGY_PYTHON=... python benchmarks/synergy_peer.py [--only NAME]
    python benchmarks/synergy_peer.py --quick      # n600 pairs only: synergy_peer_quick
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from common import RESULTS, write_results

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
from synergy_run import jobs_path, peer_env, read_jobs, run, to_instance, write_jobs  # noqa: E402

from optsched.synergy import simulate_synergy  # noqa: E402

DATA = RESULTS / "synergy_peer"
REPO = Path(__file__).resolve().parents[1]
SPLITS = ("20,70,10", "50,0,50")
ALLOCS = ("proportional", "tune", "greedy")


def settings() -> dict[str, tuple]:
    """name -> (order, allocator, split, num_jobs[, place]); num_jobs 0 = the endless
    stream; place: Synergy's placement-sensitive mode (default off)."""
    out: dict[str, tuple] = {}
    for n, kind in ((600, "n600"), (0, "stream")):
        for split in SPLITS:
            for alloc in ALLOCS:
                out[f"{kind}_fifo_{alloc}_{split.replace(',', '-')}"] = ("fifo", alloc, split, n)
    for alloc in ("proportional", "tune"):
        out[f"stream_srtf_{alloc}_20-70-10"] = ("srtf", alloc, "20,70,10", 0)
    for order in ("drf", "tetris"):
        for split in SPLITS:
            for alloc in ALLOCS:
                out[f"n600_{order}_{alloc}_{split.replace(',', '-')}"] = (order, alloc, split, 600)
        # the steady state, where the order decides who waits (Synergy's own run takes
        # about 25 min of CPU each)
        out[f"stream_{order}_tune_20-70-10"] = (order, "tune", "20,70,10", 0)
    for alloc in ALLOCS:
        out[f"n600_fifo_{alloc}_place_20-70-10"] = ("fifo", alloc, "20,70,10", 600, True)
    out["n600_srtf_proportional_20-70-10"] = ("srtf", "proportional", "20,70,10", 600)
    out["n600_srsf_proportional_20-70-10"] = ("srsf", "proportional", "20,70,10", 600)
    out["n60_fifo_opt_20-70-10"] = ("fifo", "opt", "20,70,10", 60)
    out["n60_drf_opt_20-70-10"] = ("drf", "opt", "20,70,10", 60)
    return out


#: a pair whose Synergy scheduler raises -> the Synergy run that is the same scheduler
#: on these inputs (module docstring)
STAND_IN = {"n600_srsf_proportional_20-70-10": "n600_srtf_proportional_20-70-10"}
#: the pairs of ``--policies`` (every pair after the FIFO and SRTF ones of the first table)
POLICY_PAIRS = frozenset(k for k in settings()
                         if k.split("_")[1] in ("drf", "tetris", "srsf") or "place" in k
                         or "opt" in k or k == "n600_srtf_proportional_20-70-10")


#: optsched variants per (order, allocator): label -> simulate_synergy options; the
#: SRTF extras are the previous orders (no starvation guard; TUNE ranked at the fair share)
VARIANTS = {("srtf", "proportional"): {"": {}, "starvation=None": {"starvation": None}},
            ("srtf", "tune"): {"": {}, "starvation=None remaining_at=fair":
                               {"starvation": None, "remaining_at": "fair"}}}


def peer(name: str, setting: tuple) -> dict | None:
    out = DATA / f"{name}.synergy.json"
    order, alloc, split, n = setting[:4]
    if peer_env() is not None:
        philly = Path(os.environ.get("PHILLY_CSV",
                                     REPO.parent / "shared/data/philly/philly_jobs.csv"))
        res = run(order, alloc, split, out, num_jobs=n, workdir=DATA / "work",
                  philly_csv=philly, place=len(setting) > 4 and setting[4])
        if "error" not in res:
            merge_jobs(split, jobs_path(out))
            jobs_path(out).unlink()
    elif not out.exists():
        print(f"skip {name}: no committed Synergy result")
        return None
    return json.loads(out.read_text())


def merge_jobs(split: str, new: Path) -> None:
    """Keep the longest job list of a split; all runs must draw the same stream."""
    path = DATA / f"jobs_{split.replace(',', '-')}.csv.gz"
    fresh = read_jobs(new)
    if path.exists():
        old = read_jobs(path)
        k = min(len(old), len(fresh))
        if old[:k] != fresh[:k]:
            raise SystemExit(f"{new}: Synergy drew a different job stream for split {split}")
        if len(old) >= len(fresh):
            return
    write_jobs(fresh, path)


def window_stats(jct: dict[str, float], arrival: dict[str, float], done: dict[str, float]
                 ) -> dict:
    a = np.array(list(jct.values())) / 3600
    span = (max(done.values()) - min(arrival.values())) / 3600 if done else None
    return {"n": len(a), "mean": float(a.mean()), "p50": float(np.percentile(a, 50)),
            "p99": float(np.percentile(a, 99)), "makespan": span}


def ours(inst, order: str, alloc: str, window: tuple[int, int], stream: bool,
         options: dict) -> tuple[dict, dict[str, float], float]:
    lo, hi = window
    horizon = 1.1 * float(inst.arrivals.max()) if stream else None
    t0 = time.perf_counter()
    res = simulate_synergy(inst, alloc, order, max_time=horizon, **options)
    wall = time.perf_counter() - t0
    done = {k: v for k, v in res.schedule.completion.items() if lo <= int(k) < hi}
    arr = {j.id: j.arrival for j in inst.jobs if lo <= int(j.id) < hi}
    jct = {k: v - arr[k] for k, v in done.items()}
    st = window_stats(jct, arr, done)
    st["unfinished"] = len(arr) - len(done)
    st["starved"] = res.extra.get("starved", 0)
    if alloc == "opt":
        st["opt"] = {"opt_status": " ".join(f"{k} {v}" for k, v in
                                            sorted(res.extra["opt_status"].items())),
                     "opt_failed_rounds": res.extra["opt_failed_rounds"]}
    return st, jct, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the n600 pairs only")
    ap.add_argument("--policies", action="store_true",
                    help="the DRF, TETRIS, SRSF, OPT and placement-sensitive pairs "
                         "(results: synergy_peer_policies)")
    ap.add_argument("--only", action="append", choices=list(settings()),
                    help="re-measure these pairs; keep the other committed rows")
    a = ap.parse_args()
    if peer_env() is None:
        print("SYNERGY_HOME / SYNERGY_PYTHON not set: Synergy is not run; its committed "
              "results (benchmarks/results/synergy_peer/) are used")
    chosen = {k: v for k, v in settings().items()
              if (k in POLICY_PAIRS) == a.policies
              and (not a.only or k in a.only) and (not a.quick or v[3])}
    name_out = "synergy_peer" + ("_policies" if a.policies else "") + \
        ("_quick" if a.quick else "")
    old = RESULTS / f"{name_out}.json"
    rows = json.loads(old.read_text())["rows"] if a.only and old.exists() else []
    rows = [r for r in rows if r["pair"] not in chosen]
    commit = None
    job_lists: dict[str, list[dict]] = {}
    for name, setting in chosen.items():
        order, alloc, split, n = setting[:4]
        place = len(setting) > 4 and bool(setting[4])
        P = peer(name, setting)
        if P is None:
            continue
        commit = commit or P["commit"]
        ours_label = f"{alloc}+{order}" + (" place" if place else "")
        synergy_label = P["scheduler"]
        if "error" in P:
            stand = STAND_IN.get(name)
            if stand is None or not (DATA / f"{stand}.synergy.json").exists():
                rows.append({"pair": name, "synergy": f"{P['scheduler']}: raises "
                             f"{P['error']} ({P['message']})", "optsched": ours_label,
                             "split": split.replace(",", "/"), "jobs": str(n)})
                print(f"{name}: Synergy raises {P['error']}: {P['message']}", flush=True)
                continue
            S = json.loads((DATA / f"{stand}.synergy.json").read_text())
            synergy_label = f"{P['scheduler']} raises {P['error']}; {S['scheduler']}"
            P = S
        if split not in job_lists:
            job_lists[split] = read_jobs(DATA / f"jobs_{split.replace(',', '-')}.csv.gz")
        jobs = job_lists[split][:P["jobs_generated"]]
        inst = to_instance(jobs, P["servers"], name=f"synergy-peer-{name}")
        win = tuple(P["window"])
        pj = {k: c - s for k, (s, c) in P["window_jobs"].items()}
        parr = {k: s for k, (s, c) in P["window_jobs"].items()}
        pst = window_stats(pj, parr, {k: c for k, (s, c) in P["window_jobs"].items()})
        for label, options in VARIANTS.get((order, alloc), {"": {}}).items():
            cpu0 = time.process_time()
            ost, oj, wall = ours(inst, order, alloc, win, n == 0,
                                 {**options, **({"place": True} if place else {})})
            cpu = time.process_time() - cpu0
            ks = sorted(set(pj) & set(oj), key=int)
            x, y = np.array([pj[k] for k in ks]), np.array([oj[k] for k in ks])
            d = np.abs(x - y)
            # optsched's completions moved up to the end of Synergy's 300-s round
            pc = {k: c for k, (_, c) in P["window_jobs"].items()}
            grid = np.array([abs(pc[k] - P["round_s"] * np.ceil(
                (oj[k] + parr[k]) / P["round_s"] - 1e-9)) for k in ks])
            rows.append({
                "pair": name, "synergy": synergy_label,
                "optsched": ours_label + (f" {label}" if label else ""),
                "split": split.replace(",", "/"), "jobs": "stream" if n == 0 else str(n),
                "window": f"{win[0]}-{win[1] - 1}", "jobs_generated": P["jobs_generated"],
                "mean_jct_h_synergy": pst["mean"], "mean_jct_h_optsched": ost["mean"],
                "mean_ratio": ost["mean"] / pst["mean"],
                "p50_jct_h_synergy": pst["p50"], "p50_jct_h_optsched": ost["p50"],
                "p99_jct_h_synergy": pst["p99"], "p99_jct_h_optsched": ost["p99"],
                "makespan_h_synergy": pst["makespan"], "makespan_h_optsched": ost["makespan"],
                "unfinished_optsched": ost["unfinished"], "starved_optsched": ost["starved"],
                "pearson_r": f"{float(np.corrcoef(x, y)[0, 1]):.5f}",
                "within_300s": f"{(d <= 300).mean():.3f}", "within_1h": f"{(d <= 3600).mean():.3f}",
                "median_abs_diff_s": float(np.median(d)),
                "wall_s_synergy": round(P["wall_seconds"]), "wall_s_optsched": round(wall),
                "cpu_s_optsched": round(cpu, 1), **ost.get("opt", {}),
                "within_300s_on_round_grid": f"{(grid <= 300).mean():.3f}",
            })
            print(f"{name} {label or 'default'}: Synergy {pst['mean']:.3f} h, optsched "
                  f"{ost['mean']:.3f} h, r {rows[-1]['pearson_r']}, within 300 s "
                  f"{rows[-1]['within_300s']}, {cpu:.0f} s CPU", flush=True)
    order_names = list(settings())
    rows.sort(key=lambda r: (order_names.index(r["pair"]), r["optsched"]))
    commit = commit or next((json.loads(p.read_text())["commit"]
                             for p in sorted(DATA.glob("*.synergy.json"))), None)
    columns = ["pair", "synergy", "optsched", "split", "jobs", "window", "mean_jct_h_synergy",
               "mean_jct_h_optsched", "mean_ratio", "p50_jct_h_synergy", "p50_jct_h_optsched",
               "p99_jct_h_synergy", "p99_jct_h_optsched", "makespan_h_synergy",
               "makespan_h_optsched", "unfinished_optsched", "pearson_r", "within_300s",
               "within_1h", "median_abs_diff_s", "wall_s_synergy", "wall_s_optsched"]
    columns += ["within_300s_on_round_grid"]  # rows measured before it have none
    if a.policies:
        columns += ["cpu_s_optsched", "opt_status"]
    write_results(
        name_out, rows, columns,
        title="Synergy's simulator vs optsched on the same jobs" +
              (": DRF, TETRIS, SRSF, OPT, placement-sensitive" if a.policies else ""),
        params={"peer": "msr-fiddle/synergy", "peer_commit": commit,
                "inputs": "results/synergy_peer/jobs_<split>.csv.gz (Synergy's Philly mode, "
                          "seed 42, single-GPU, Poisson 9 jobs/h, 16 x (8 GPUs, 24 cores, "
                          "500 GB), 300 s rounds)"},
        notes=NOTES + (POLICY_NOTES if a.policies else ""))


NOTES = (
    "JCTs over the measured jobs (stream: Synergy's window, jobs 4000-4999; n600: all 600); "
    "makespan = last completion minus first arrival of those jobs; mean_ratio = optsched / "
    "Synergy; pearson_r, within_300s / within_1h (share of jobs whose JCTs differ by at "
    "most one round / one hour) and median_abs_diff_s compare per job. Synergy completes a "
    "job at the end of the round in which it finishes and credits whole iterations per "
    "round (floor(300 / iteration time)); optsched completes it inside the round. "
    "SRTF: Synergy's srtf_synergy_new.py sorts by (-job_priority, remaining_duration, "
    "arrival) and sets job_priority = 1 for good once a job has not run for 1000 h; "
    "without that guard (starvation=None, optsched's previous SRTF) the starved jobs of "
    "the window wait until the stream's end. wall_s: simulated on a shared 2-core "
    "machine, Synergy's walls from its own runs. within_300s_on_round_grid: the share "
    "within one round once optsched's completion is moved up to the end of Synergy's "
    "300-s round (Synergy completes a job there; rows measured before this column have "
    "none). ")

POLICY_NOTES = (
    " DRF and TETRIS are Synergy's orders (drf.py, tetris.py) over its three allocators: "
    "plain name = GREEDY, +fair = proportional, +tune = TUNE. SRSF: Synergy's srsf.py "
    "raises TypeError in Runner (its constructor takes no fair/tune/opt/simulate); "
    "synergy.srsf is set against Synergy's SRTF+fair, the same scheduler on these "
    "single-GPU jobs. FIFO+opt: Synergy-OPT solved every round (Synergy: cvxpy + GLPK, "
    "step-1 configuration credited, placement not enforced; optsched: HiGHS, two-step "
    "with the placement ILP, 10 s per round), first 60 jobs (the 16 servers are never "
    "full then). DRF+opt raises in Synergy: drf.py builds its solver with the GPUs per "
    "server as cores and GB, so the fair share (1 core, 1 GB) is not in the profile "
    "grid. +place: Synergy's placement-sensitive allocation (fewest free GPUs first). "
    "cpu_s_optsched: process CPU seconds of the optsched simulation (shared 2-core "
    "machine); opt_status: rounds per solver status.")


if __name__ == "__main__":
    main()
