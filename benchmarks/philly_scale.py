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

``--policies all`` runs every policy of ``optsched.registry.policies()``: a policy that
refuses the trace (a typed ``OptschedError``, e.g. AlloX and Salus take no gangs) is a
row ``refuses`` with its error, an untyped failure a row ``failed``; the results then
add, per policy, the exponent ``b`` of ``cpu_s ~ N^b`` on each step, between the smallest
and the largest size run and fitted over all of them, and one figure of CPU seconds
against jobs (one panel per paper, a line of slope 1). ``--clock cpu`` extrapolates in
CPU seconds (on a shared machine wall seconds are inflated); ``--merge --resume`` keeps
the cells already in the result file, so a stopped run goes on where it stopped, and
several invocations on disjoint ``--papers`` may write one file (each write re-reads it
under a lock).

    python benchmarks/philly_scale.py                       # 1k, 5k, then as far as fits
    python benchmarks/philly_scale.py --sizes 1000 --policies tiresias.las
    python benchmarks/philly_scale.py --policies all --clock cpu --budget 120 \
        --sizes 1000 2000 4000 8000 16000 32000 64000 82247 --name philly_scale_all \
        --merge --resume
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

from common import RESULTS, markdown_table, pyplot, save_figure, write_result_file, write_results

POLICIES = ["tiresias.yarn_fifo", "tiresias.las", "tiresias.gittins",
            "gavel.max_min_fairness_agnostic"]
FULL = 82247


def child(out: Path, policy: str, jobs: int | None, profile: bool, load: float = 1.0,
          cluster: str | None = None, servers: int | None = None) -> None:
    import resource

    import numpy as np

    from optsched import catalog
    from optsched.errors import OptschedError
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
        for key, col in (("top", 2), ("top_cumulative", 3)):
            top = sorted(st.stats.items(), key=lambda kv: -kv[1][col])[:12]  # type: ignore[attr-defined]
            data[key] = [{"function": f"{Path(f).name}:{line}({fn})", "calls": v[1],
                          "tottime_s": round(v[2], 3), "cumtime_s": round(v[3], 3)}
                         for (f, line, fn), v in top]
    else:
        # the simulation alone is timed (its certified bounds: benchmarks/bounds_scale.py)
        try:
            res = simulate(inst, policy, seed=0, progress=False, bounds=False)
        except OptschedError as e:  # a policy refusing the trace says why, in the results
            data.update(status="refuses", error=f"{type(e).__name__}: {e}",
                        cpu_s=time.process_time() - c0)
            out.write_text(json.dumps(data))
            return
    data["wall_s"] = time.perf_counter() - t0
    data["cpu_s"] = time.process_time() - c0
    data["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    m, x = res.metrics, res.extra
    h = 3600.0
    jct = np.sort(np.array(list(m.jct.values()), dtype=float))
    data.update(
        completed=m.n_completed, epochs=x.get("epochs"), policy_s=x.get("policy_seconds"),
        allocations=len(res.schedule.allocations),
        mean_jct_h=m.mean_jct / h, p50_jct_h=m.p50_jct / h, p99_jct_h=m.p99_jct / h,
        makespan_h=m.makespan / h, utilization=m.cru, preemptions=x.get("total_preemptions"),
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
    import resource

    def children_cpu() -> float:
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    t0, c0 = time.perf_counter(), children_cpu()
    try:
        proc = subprocess.run(cmd, timeout=args.timeout, stderr=subprocess.PIPE, text=True)
    except subprocess.TimeoutExpired:  # the child was killed and reaped: its CPU so far
        return {"policy": policy, "jobs": jobs or FULL, "status": "timeout",
                "wall_s": time.perf_counter() - t0, "cpu_s_at_stop": children_cpu() - c0}
    if proc.returncode != 0:  # an untyped failure: recorded with its last line, not hidden
        sys.stderr.write(proc.stderr)
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"policy": policy, "jobs": jobs or FULL, "status": "failed", "error": last,
                "wall_s": time.perf_counter() - t0}
    data = json.loads(out.read_text())
    data.setdefault("status", "done")
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", nargs="+", default=POLICIES,
                    help="registered names, or 'all': every policy of optsched.registry")
    ap.add_argument("--sizes", nargs="+", type=int, default=[1000, 5000, 20000, FULL])
    ap.add_argument("--budget", type=float, default=600.0,
                    help="run the next size only if extrapolated within this many seconds")
    ap.add_argument("--papers", nargs="+", default=None,
                    help="with --policies all: only the policies of these papers, or these "
                         "policies (several invocations on disjoint papers may share one "
                         "--merge file)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="the seconds the extrapolation and the figure use (cpu: the child's "
                         "process_time, for a machine shared with other work)")
    ap.add_argument("--notes-file", type=Path, default=None,
                    help="Markdown appended to the results' notes (e.g. profiled causes), "
                         "kept in the result file by later --merge runs")
    ap.add_argument("--timeout", type=float, default=600.0, help="stop a run after this")
    ap.add_argument("--profile", type=int, default=None, metavar="N",
                    help="also one cProfile run per policy at N jobs")
    ap.add_argument("--profile-policies", nargs="+", default=None, metavar="POLICY",
                    help="with --profile: only these policies (default every one run)")
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
    args.all = args.policies == ["all"]
    if args.papers is not None and not args.all:
        ap.error("--papers selects among --policies all")
    if args.all:
        from optsched.registry import policies
        args.registered = list(policies())
        args.policies = [p for p in args.registered
                         if args.papers is None or p.split(".")[0] in args.papers
                         or p in args.papers]
    clock = f"{args.clock}_s"
    rows, runs, profiles = [], {}, {}
    earlier: dict = {}
    if args.merge and (RESULTS / f"{args.name}.json").exists():
        earlier = json.loads((RESULTS / f"{args.name}.json").read_text())
    # a refusal is a finished cell too: the same policy refuses the same trace again
    finished: set = {(r["policy"], r["jobs"]) for r in earlier.get("rows", [])
                     if r.get("status") in ("done", "refuses")} if args.resume else set()
    if args.import_children is not None:  # runs whose parent was stopped
        for f in sorted(args.import_children.glob("*.json")):
            r = {**json.loads(f.read_text()), "status": "done", "predicted_s": None,
                 "measured_at": f.stat().st_mtime}
            rows.append(_row(r))
            runs[r["policy"]] = r
            finished.add((r["policy"], r["jobs"]))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for servers, policy in [(sv, p) for sv in (args.servers or [None])
                                for p in args.policies]:
            # a resumed run extrapolates from the sizes it kept
            done: list[dict] = [r for r in earlier.get("rows", []) if r["policy"] == policy
                                and r.get("status") == "done"
                                and (policy, r["jobs"]) in finished]
            if any(r["policy"] == policy and r.get("status") == "refuses"
                   and (policy, r["jobs"]) in finished for r in earlier.get("rows", [])):
                print(f"{policy}: refuses the trace ({args.name}.json), not run again")
                continue
            for n in sorted(args.sizes):
                if (policy, n) in finished:
                    print(f"{policy} {n}: done in {args.name}.json, not run again", flush=True)
                    continue
                pred = None
                if len(done) >= 2:
                    (n1, t1), (n2, t2) = [(r["jobs"], r[clock]) for r in done[-2:]]
                    b = math.log(t2 / t1) / math.log(n2 / n1)
                    pred = t2 * (n / n2) ** b
                elif len(done) == 1:
                    pred = done[0][clock] * n / done[0]["jobs"]  # at least linear
                if pred is not None and pred > args.budget:
                    rows.append({"policy": policy, "jobs": n, "status": "skipped",
                                 "predicted_s": pred, "gpus": 8 * servers if servers else None,
                                 "measured_at": time.time()})
                    print(rows[-1], flush=True)
                    break
                r = run_child(args, policy, n if n < FULL else None, tmp, servers=servers)
                r["predicted_s"] = pred
                r["measured_at"] = time.time()
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
            if args.profile and policy not in profiles and (
                    args.profile_policies is None or policy in args.profile_policies):
                p = run_child(args, policy, args.profile, tmp, profile=True)
                profiles[policy] = {k: p.get(k) for k in ("jobs", "wall_s", "cpu_s", "top",
                                                          "top_cumulative")}
                print(policy, "profiled", round(p.get("wall_s", 0), 1), flush=True)
    record(args, rows, runs, profiles, earlier, plots=True)


def _row(r: dict) -> dict:
    return {k: v for k, v in r.items() if k not in ("jct_quantiles_h", "hourly_busy_fraction")}


def record(args, rows: list[dict], runs: dict, profiles: dict, earlier: dict,
           plots: bool = False) -> None:
    """Write ``results/<name>``: this invocation's rows, with the file's other rows when
    merging (atomically, through the common writer). Merging re-reads the file under a
    lock at every write, so two invocations on disjoint policies may share one file."""
    if not args.merge:
        _record(args, rows, runs, profiles, earlier, plots)
        return
    import fcntl

    with open(Path(tempfile.gettempdir()) / f"optsched-{args.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = RESULTS / f"{args.name}.json"
        current = json.loads(path.read_text()) if path.exists() else earlier
        _record(args, rows, runs, profiles, current, plots)


def _record(args, rows: list[dict], runs: dict, profiles: dict, earlier: dict,
            plots: bool) -> None:
    runs, profiles = dict(runs), dict(profiles)
    if args.all:  # one scaling figure for every policy: no per-policy JCT curves kept
        runs = {}
    if earlier:
        # one row per cell: the later measurement wins (another invocation sharing the
        # file may have run a cell again since this one did)
        cell: dict[tuple, dict] = {}
        for r in [*earlier["rows"], *rows]:
            k = (r["policy"], r["jobs"])
            if k not in cell or r.get("measured_at", 0) >= cell[k].get("measured_at", 0):
                cell[k] = r
        order = {p: i for i, p in enumerate(args.registered if args.all else POLICIES)}
        rows = sorted(cell.values(), key=lambda r: (order.get(r["policy"], 99), r["jobs"]))
        for k, v in earlier.get("largest_runs", {}).items():
            if k not in runs or runs[k]["jobs"] < v["jobs"]:
                runs[k] = v
        profiles = {**earlier.get("profiles", {}), **profiles}
    for r in rows:  # per-epoch cost against the jobs in the system (Little's law)
        if r.get("status") == "done" and r.get("epochs") and r.get("makespan_h"):
            r["in_system"] = r["mean_jct_h"] * r["completed"] / r["makespan_h"]
            r["cpu_us_per_epoch"] = 1e6 * r["cpu_s"] / r["epochs"]
    cols = ["policy", "jobs", "gpus", "status", "wall_s", "cpu_s", "predicted_s", "peak_rss_mib",
            "read_s", "epochs", "cpu_us_per_epoch", "in_system", "policy_s", "allocations",
            "completed", "mean_jct_h",
            "p50_jct_h", "p99_jct_h", "makespan_h", "utilization", "preemptions",
            "loadavg_1min", "cpu_s_at_stop", "error"]
    notes = [f"wall_s/cpu_s: the simulate() call (policy, simulator, validation, metrics); "
             f"read_s: reading the trace. predicted_s: the power law through the two "
             f"previous sizes (linear from one), in {args.clock} seconds; cpu_s_at_stop: "
             f"the CPU seconds of a run stopped at the timeout (import and trace reading "
             f"included), a lower bound on its cost. Memory: peak RSS of "
             f"the child process, interpreter and imports included. in_system: the mean "
             f"number of jobs in the system (sum of JCTs / makespan); cpu_us_per_epoch: "
             f"CPU microseconds per epoch. Shared machine: 2 cores "
             f"shared with other work, so CPU seconds (process_time) are the measure; wall "
             f"seconds are inflated."]
    summary = scaling_summary(rows)
    if args.all:
        notes.append("\n## Exponents per policy\n\nb in cpu_s ~ N^b: each step between "
                     "consecutive sizes, from the smallest to the largest size run "
                     "(endpoints), and the least-squares fit over every size run. refuses: "
                     "the policy's typed error on this trace.\n\n" + markdown_table(
                         summary, ["policy", "largest_jobs", "cpu_s_at_largest",
                                   "exponent_endpoints", "exponent_fit", "step_exponents",
                                   "cpu_s_per_size", "peak_rss_mib", "stopped_by", "error"]))
    # the notes given once stay with the file (kept by later merges)
    extra = (args.notes_file.read_text() if args.notes_file is not None
             else earlier.get("notes_extra", "") if earlier else "")
    if extra:
        notes.append("\n" + extra)
    for policy, p in profiles.items():
        for key, what in (("top", "own time"), ("top_cumulative", "cumulative time")):
            if not p.get(key):
                continue
            notes.append(f"\ncProfile of {policy} at {p['jobs']} jobs ({p['wall_s']:.1f} s "
                         f"under the profiler), top functions by {what}:\n\n| function | "
                         "calls | own s | cumulative s |\n|---|---|---|---|\n" + "\n".join(
                             f"| {t['function']} | {t['calls']} | {t['tottime_s']} | "
                             f"{t['cumtime_s']} |" for t in p[key]))
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
    payload["summary"] = summary
    payload["notes_extra"] = extra
    write_result_file(RESULTS / f"{args.name}.json", json.dumps(payload, indent=1) + "\n")
    if plots and args.all:
        figure_all(rows, summary, args.name)
    elif plots:
        figures(rows, runs, args.name,
                "gpus" if args.servers and len(args.servers) > 1 else "jobs")


def scaling_summary(rows: list[dict]) -> list[dict]:
    """Per policy: CPU seconds per size, the exponent ``b`` of ``t ~ N^b`` on each step,
    between the endpoints and fitted by least squares on (log N, log t), the peak memory of
    the largest run, and why the sizes stopped (budget, timeout, failure) or the refusal."""
    out = []
    for policy in dict.fromkeys(r["policy"] for r in rows):
        mine = sorted((r for r in rows if r["policy"] == policy), key=lambda r: r["jobs"])
        pts = [r for r in mine if r["status"] == "done" and r.get("cpu_s", 0) > 0]
        refusal = next((r for r in mine if r["status"] == "refuses"), None)
        stop = next((r for r in mine if r["status"] not in ("done", "refuses")), None)
        row: dict = {"policy": policy, "paper": policy.split(".")[0]}
        if refusal is not None and not pts:
            row.update(stopped_by="refuses", error=refusal.get("error"))
            out.append(row)
            continue
        n = [r["jobs"] for r in pts]
        t = [r["cpu_s"] for r in pts]
        steps = [math.log(t[i + 1] / t[i]) / math.log(n[i + 1] / n[i]) for i in range(len(n) - 1)]
        fit = None
        if len(n) >= 2:
            lx = [math.log(v) for v in n]
            ly = [math.log(v) for v in t]
            mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
            fit = (sum((a - mx) * (b - my) for a, b in zip(lx, ly))
                   / sum((a - mx) ** 2 for a in lx))
        row.update(
            largest_jobs=n[-1] if n else None, cpu_s_at_largest=t[-1] if t else None,
            exponent_endpoints=(math.log(t[-1] / t[0]) / math.log(n[-1] / n[0])
                                if len(n) >= 2 else None),
            exponent_fit=fit,
            step_exponents=" ".join(f"{b:.2f}" for b in steps),
            cpu_s_per_size=" ".join(f"{a // 1000}k:{b:.3g}" for a, b in zip(n, t)),
            peak_rss_mib=pts[-1].get("peak_rss_mib") if pts else None,
            stopped_by=(None if stop is None else
                        f"{stop['status']} at {stop['jobs']}"
                        + (f" (predicted {stop['predicted_s']:.0f} s)"
                           if stop.get("predicted_s") else "")
                        + (f" (stopped after {stop['cpu_s_at_stop']:.0f} s CPU)"
                           if stop.get("cpu_s_at_stop") else "")),
            error=stop.get("error") if stop else None)
        out.append(row)
    return out


def figure_all(rows: list[dict], summary: list[dict], name: str) -> None:
    """CPU seconds against jobs, log-log: one panel per paper (Hadar and HadarE together),
    every policy of it with its fitted exponent, a reference line of slope 1 through the
    panel's cheapest first point, the same axes in every panel."""
    plt = pyplot()
    if plt is None:
        return

    def group(policy: str) -> str:
        return "hadar, hadare" if policy.startswith("hadar") else policy.split(".")[0]

    run = [s["policy"] for s in summary if s.get("largest_jobs") is not None]
    groups = list(dict.fromkeys(group(p) for p in run))
    cols = 2
    nrows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(15.0, 5.2 * nrows), sharex=True,
                             sharey=True, squeeze=False)
    fit = {s["policy"]: s.get("exponent_fit") for s in summary}
    for ax, g in zip(axes.flat, groups):
        first = []
        for i, policy in enumerate(p for p in run if group(p) == g):
            pts = sorted((r for r in rows if r["policy"] == policy and r["status"] == "done"),
                         key=lambda r: r["jobs"])
            b = fit.get(policy)
            label = (policy if g.startswith("hadar") else policy.split(".", 1)[1]) + (
                f" ({b:.2f})" if b is not None else " (one size)")
            ax.loglog([r["jobs"] for r in pts], [r["cpu_s"] for r in pts],
                      marker="os^vD<>px*h"[i % 11], ms=4, lw=1.2,
                      ls=("-", "--", "-.", ":")[(i // 10) % 4], label=label)
            first.append((pts[0]["jobs"], pts[0]["cpu_s"]))
        n0, t0 = min(first, key=lambda q: q[1])
        ax.loglog([n0, FULL], [t0, t0 * FULL / n0], color="black", lw=2.2, alpha=0.35,
                  label="slope 1")
        ax.set_title(g)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  title="policy (fitted exponent)", title_fontsize=7)
    for ax in axes.flat[len(groups):]:
        ax.axis("off")
    for ax in axes.flat:
        ax.set_xlabel("jobs (first N of the Philly trace)")
        ax.xaxis.set_tick_params(labelbottom=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("CPU seconds (simulate)")
    fig.suptitle("Philly trace, 2,048 P100, load 1: CPU seconds of the simulation against "
                 "the number of jobs", fontsize=10)
    save_figure(fig, RESULTS / "img" / f"{name}_loglog.png")
    print(RESULTS / "img" / f"{name}_loglog.png")




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
