"""The Philly production trace in the simulator: seconds and peak memory against job count.

Trace: Microsoft's Philly trace (``read_philly_trace()``, 82,247 jobs of 1-128 GPUs
submitted Sep-Dec 2017), its first N jobs at their recorded arrival times, on the
trace's cluster (``tiresias-n256g8``: 256 nodes of 8 P100, 2,048 GPUs); homogeneous
throughputs (a job alone with its gang runs its recorded duration). Policies: Tiresias'
YARN-CS FIFO, 2D-LAS and 2D-Gittins, and Gavel's max-min fairness (heterogeneity-
agnostic).

Each run is a child process timed with ``perf_counter`` (wall) and ``process_time``
(CPU), its peak resident memory from ``getrusage`` (``ru_maxrss``: the interpreter and
imports included). Sizes run in increasing order; after each, the cost of the next size
is extrapolated with the power law through the last two points (``t = a N^b``), and the
next size runs only if the extrapolation is within ``--budget`` seconds (default 600:
the issue's 10 minutes); a run is stopped at ``--timeout`` seconds. Reported per run:
seconds, memory, epochs, the policy's share of the time, mean / p50 / p99 JCT,
makespan, utilisation, preemptions; figures: seconds and memory against jobs
(log-log), and for each policy's largest run the JCT CDF and utilisation over time.
``--profile N`` adds one cProfile run of each policy at N jobs (top functions by own
time), to show where the next bottleneck is.

    python benchmarks/philly_scale.py                       # 1k, 5k, then as far as fits
    python benchmarks/philly_scale.py --sizes 1000 --policies tiresias.las
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import RESULTS, pyplot, save_figure, write_result_file, write_results

POLICIES = ["tiresias.yarn_fifo", "tiresias.las", "tiresias.gittins",
            "gavel.max_min_fairness_agnostic"]
FULL = 82247


def child(out: Path, policy: str, jobs: int | None, profile: bool, load: float = 1.0,
          cluster: str | None = None, servers: int | None = None) -> None:
    import resource

    import numpy as np

    from optsched import catalog
    from optsched.registry import simulate

    t0 = time.perf_counter()
    cl = cluster
    if servers is not None:  # the preset's servers (8 P100 each), as many as asked
        from optsched.core.instance import Cluster, Node
        cl = Cluster(tuple(Node(f"n{i}", {"p100": 8}) for i in range(servers)))
    inst = catalog.read_philly_trace(jobs=jobs, load=load, cluster=cl)
    read_s = time.perf_counter() - t0
    data: dict = {"policy": policy, "jobs": inst.n_jobs, "read_s": read_s,
                  "gpus": inst.cluster.total_gpus, "load": load}
    t0, c0 = time.perf_counter(), time.process_time()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        res = prof.runcall(simulate, inst, policy, seed=0, progress=False)
        st = pstats.Stats(prof)
        top = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:12]  # type: ignore[attr-defined]
        data["top"] = [{"function": f"{Path(f).name}:{line}({fn})", "calls": v[1],
                        "tottime_s": round(v[2], 3), "cumtime_s": round(v[3], 3)}
                       for (f, line, fn), v in top]
    else:
        # the simulation alone is timed (its certified bounds: benchmarks/bounds_scale.py)
        res = simulate(inst, policy, seed=0, progress=False, bounds=False)
    data["wall_s"] = time.perf_counter() - t0
    data["cpu_s"] = time.process_time() - c0
    data["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    m, x = res.metrics, res.extra
    h = 3600.0
    jct = np.sort(np.array(list(m.jct.values()), dtype=float))
    data.update(
        completed=m.n_completed, epochs=x["epochs"], policy_s=x["policy_seconds"],
        allocations=len(res.schedule.allocations),
        mean_jct_h=m.mean_jct / h, p50_jct_h=m.p50_jct / h, p99_jct_h=m.p99_jct / h,
        makespan_h=m.makespan / h, utilization=m.cru, preemptions=x["total_preemptions"],
        loadavg_1min=round(os.getloadavg()[0], 2),
        jct_quantiles_h=(np.quantile(jct, np.linspace(0, 1, 201)) / h).tolist())
    # GPUs busy per hour (time-average over each hour of the run): the GPU-seconds held
    # before instant T are sum_{s<T} g (T - s) - sum_{e<T} g (T - e)
    a = res.schedule.allocations
    s = np.array([x.start for x in a])
    e = np.array([x.end for x in a])
    g = np.array([x.gpus * x.share for x in a])
    edges = np.arange(0.0, (float(e.max()) if len(e) else 0.0) + h, h)

    def held_before(points, weight):
        o = np.argsort(points)
        p, w = points[o], weight[o]
        cw, cpw = np.r_[0.0, np.cumsum(w)], np.r_[0.0, np.cumsum(w * p)]
        k = np.searchsorted(p, edges, side="left")
        return edges * cw[k] - cpw[k]

    cum = held_before(s, g) - held_before(e, g)
    data["hourly_busy_fraction"] = (np.diff(cum) / h / inst.cluster.total_gpus).tolist()
    out.write_text(json.dumps(data))


def run_child(args, policy: str, jobs: int | None, tmp: Path, profile: bool = False,
              servers: int | None = None) -> dict:
    out = tmp / f"{policy}-{jobs}-{int(profile)}-{args.load}-{servers}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(out),
           "--policies", policy]
    cmd += ["--sizes", str(jobs if jobs is not None else FULL), "--load", str(args.load)]
    if args.cluster:
        cmd += ["--cluster", args.cluster]
    if servers:
        cmd += ["--servers", str(servers)]
    if profile:
        cmd.append("--profile-child")
    t0 = time.perf_counter()
    try:
        subprocess.run(cmd, check=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"policy": policy, "jobs": jobs or FULL, "status": "timeout",
                "wall_s": time.perf_counter() - t0}
    data = json.loads(out.read_text())
    data["status"] = "done"
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", nargs="+", default=POLICIES)
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 5000, 20000, FULL])
    ap.add_argument("--budget", type=float, default=600.0,
                    help="run the next size only if extrapolated within this many seconds")
    ap.add_argument("--timeout", type=float, default=600.0, help="stop a run after this")
    ap.add_argument("--profile", type=int, default=None, metavar="N",
                    help="also one cProfile run per policy at N jobs")
    ap.add_argument("--name", default="philly_scale")
    ap.add_argument("--load", type=float, default=1.0,
                    help="divide every arrival time by this (read_philly_trace's load)")
    ap.add_argument("--cluster", default=None,
                    help="cluster preset (default the trace's, tiresias-n256g8)")
    ap.add_argument("--servers", type=int, nargs="+", default=None,
                    help="instead of a preset: this many servers of 8 P100 (several: "
                         "one run per cluster size)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of an earlier run (other policies and sizes) and "
                         "replace those this run measures")
    ap.add_argument("--resume", action="store_true",
                    help="with --merge: skip the runs the result file already has as done "
                         "(a stopped benchmark goes on where it stopped)")
    ap.add_argument("--import-children", type=Path, default=None, metavar="DIR",
                    help="also record the finished runs whose output files are in DIR "
                         "(left by a stopped benchmark's temporary directory)")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--profile-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        jobs = args.sizes[0] if args.sizes and args.sizes[0] < FULL else None
        child(args.child, args.policies[0], jobs, args.profile_child, args.load, args.cluster,
              args.servers[0] if args.servers else None)
        return
    rows, runs, profiles = [], {}, {}
    earlier: dict = {}
    if args.merge and (RESULTS / f"{args.name}.json").exists():
        earlier = json.loads((RESULTS / f"{args.name}.json").read_text())
    finished: set = {(r["policy"], r["jobs"]) for r in earlier.get("rows", [])
                     if r.get("status") == "done"} if args.resume else set()
    if args.import_children is not None:  # runs whose parent was stopped
        for f in sorted(args.import_children.glob("*.json")):
            r = {**json.loads(f.read_text()), "status": "done", "predicted_s": None}
            rows.append(_row(r))
            runs[r["policy"]] = r
            finished.add((r["policy"], r["jobs"]))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for servers, policy in [(sv, p) for sv in (args.servers or [None])
                                for p in args.policies]:
            done: list[dict] = []
            for n in sorted(args.sizes):
                if (policy, n) in finished:
                    print(f"{policy} {n}: done in {args.name}.json, not run again", flush=True)
                    continue
                pred = None
                if len(done) >= 2:
                    (n1, t1), (n2, t2) = [(r["jobs"], r["wall_s"]) for r in done[-2:]]
                    b = math.log(t2 / t1) / math.log(n2 / n1)
                    pred = t2 * (n / n2) ** b
                elif len(done) == 1:
                    pred = done[0]["wall_s"] * n / done[0]["jobs"]  # at least linear
                if pred is not None and pred > args.budget:
                    rows.append({"policy": policy, "jobs": n, "status": "skipped",
                                 "predicted_s": pred, "gpus": 8 * servers if servers else None})
                    print(rows[-1], flush=True)
                    break
                r = run_child(args, policy, n if n < FULL else None, tmp, servers=servers)
                r["predicted_s"] = pred
                rows.append(_row(r))
                print({k: (round(v, 3) if isinstance(v, float) else v)
                       for k, v in rows[-1].items()}, flush=True)
                if r["status"] == "done":
                    done.append(r)
                    runs[policy] = r
                # every finished run is on disk at once: a stopped benchmark keeps it
                record(args, rows, runs, profiles, earlier)
                if r["status"] != "done":
                    break
            if args.profile:
                p = run_child(args, policy, args.profile, tmp, profile=True)
                profiles[policy] = {k: p.get(k) for k in ("jobs", "wall_s", "top")}
                print(policy, "profiled", round(p.get("wall_s", 0), 1), flush=True)
    record(args, rows, runs, profiles, earlier, plots=True)


def _row(r: dict) -> dict:
    return {k: v for k, v in r.items() if k not in ("jct_quantiles_h", "hourly_busy_fraction")}


def record(args, rows: list[dict], runs: dict, profiles: dict, earlier: dict,
           plots: bool = False) -> None:
    """Write ``results/<name>``: this invocation's rows, with an earlier file's other rows
    when merging (atomically, through the common writer)."""
    runs, profiles = dict(runs), dict(profiles)
    if earlier:
        mine = {(r["policy"], r["jobs"]) for r in rows}
        order = {p: i for i, p in enumerate(POLICIES)}
        rows = sorted([r for r in earlier["rows"] if (r["policy"], r["jobs"]) not in mine]
                      + rows, key=lambda r: (order.get(r["policy"], 99), r["jobs"]))
        for k, v in earlier.get("largest_runs", {}).items():
            if k not in runs or runs[k]["jobs"] < v["jobs"]:
                runs[k] = v
        profiles = {**earlier.get("profiles", {}), **profiles}
    cols = ["policy", "jobs", "gpus", "status", "wall_s", "cpu_s", "predicted_s", "peak_rss_mib",
            "read_s", "epochs", "policy_s", "allocations", "completed", "mean_jct_h",
            "p50_jct_h", "p99_jct_h", "makespan_h", "utilization", "preemptions",
            "loadavg_1min"]
    notes = ["wall_s/cpu_s: the simulate() call (policy, simulator, validation, metrics); "
             "read_s: reading the trace. predicted_s: the power law through the two "
             "previous sizes (linear from one). Memory: peak RSS of the child process, "
             "interpreter and imports included. Machine: 2 cores shared with other work."]
    for policy, p in profiles.items():
        notes.append(f"\ncProfile of {policy} at {p['jobs']} jobs ({p['wall_s']:.1f} s under "
                     "the profiler), top functions by own time:\n\n| function | calls | own s "
                     "| cumulative s |\n|---|---|---|---|\n" + "\n".join(
                         f"| {t['function']} | {t['calls']} | {t['tottime_s']} | "
                         f"{t['cumtime_s']} |" for t in p["top"] or []))
    write_results(args.name, rows, cols,
                  title="Philly trace: simulation seconds and peak memory against jobs",
                  params={"trace": "philly (first N jobs, arrivals divided by load)",
                          "load": args.load,
                          "cluster": (f"{args.servers} servers x 8 P100" if args.servers
                                      else args.cluster or "tiresias-n256g8 (2,048 P100)"),
                          "budget_s": args.budget,
                          "timeout_s": args.timeout},
                  notes="\n".join(notes))
    payload = json.loads((RESULTS / f"{args.name}.json").read_text())
    payload["largest_runs"] = runs
    payload["profiles"] = profiles
    write_result_file(RESULTS / f"{args.name}.json", json.dumps(payload, indent=1) + "\n")
    if plots:
        figures(rows, runs, args.name,
                "gpus" if args.servers and len(args.servers) > 1 else "jobs")




def figures(rows: list[dict], runs: dict, name: str, x_key: str = "jobs") -> None:
    plt = pyplot()
    if plt is None:
        return
    import numpy as np

    img = RESULTS / "img"
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        pts = [r for r in rows if r["policy"] == policy and r["status"] == "done"]
        if not pts:
            continue
        n = [r[x_key] for r in pts]
        axes[0].loglog(n, [r["wall_s"] for r in pts], marker="o", label=policy)
        axes[1].loglog(n, [r["peak_rss_mib"] for r in pts], marker="o", label=policy)
        skipped = [r for r in rows if r["policy"] == policy and r["status"] == "skipped"]
        for r in skipped:
            axes[0].loglog([n[-1], r["jobs"]], [pts[-1]["wall_s"], r["predicted_s"]], ls=":",
                           color=axes[0].lines[-1].get_color())
    axes[0].axhline(600, color="grey", ls="--", lw=0.8)
    axes[0].set_ylabel("simulation seconds (dotted: extrapolated)")
    axes[1].set_ylabel("peak memory (MiB)")
    for ax in axes:
        ax.set_xlabel("jobs (first N of the Philly trace)" if x_key == "jobs"
                      else "GPUs (servers of 8 P100)")
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    save_figure(fig, img / f"{name}_loglog.png")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for policy, r in runs.items():
        q = np.array(r["jct_quantiles_h"])
        axes[0].plot(q, np.linspace(0, 1, len(q)), label=f"{policy} ({r['jobs']} jobs)")
        u = np.array(r["hourly_busy_fraction"])
        axes[1].plot(np.arange(len(u)) / 24.0, u, lw=0.7, label=policy)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("JCT (h)")
    axes[0].set_ylabel("fraction of jobs")
    axes[1].set_xlabel("time (days)")
    axes[1].set_ylabel("GPU utilisation (hourly)")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_figure(fig, img / f"{name}_jct_util.png")
    print(img / f"{name}_loglog.png", img / f"{name}_jct_util.png")


if __name__ == "__main__":
    main()
