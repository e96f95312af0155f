"""The simulator's own cost on Philly at 6x arrivals, before and after, side by side.

Trace: the first N jobs of Microsoft's Philly trace (``read_philly_trace(jobs=N,
load=6)``: arrivals six times as dense, so that jobs queue) on the trace's cluster
(256 nodes of 8 P100). Each run is a child process that times the ``simulate`` call
(``time.process_time``: CPU seconds of the child, so the waiting for a core on a shared
machine is not counted), with the policy's own ``allocate`` timed apart
(``policy_cpu_s``); ``sim_cpu_s = cpu_s - policy_cpu_s`` is the simulator's part (the
per-decision check, the epochs' bookkeeping, the final validation and metrics).
Children alternate between BEFORE (``git archive`` of ``--base``, extracted to a
temporary directory) and AFTER (this checkout), so a drift in the machine's load hits
both. Every run records a digest of every job's completion time and of the whole
recorded schedule (every allocation: job, interval, node, type, GPUs); the report says
whether BEFORE and AFTER agree on both (they must: the decisions may not change).

    python benchmarks/sim_incremental.py --base ea7278a            # AFTER: this checkout
    python benchmarks/sim_incremental.py --base ea7278a --after HEAD
    python benchmarks/sim_incremental.py --sizes 2000 --policies tiresias.las --repeat 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from common import RESULTS, markdown_table, write_result_file, write_results

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ["tiresias.las", "gavel.max_min_fairness_agnostic"]


def child(out: Path, policy: str, jobs: int, load: float) -> None:
    """One simulation in this process (optsched from PYTHONPATH); a JSON to ``out``."""
    import optsched
    from optsched import catalog
    from optsched.registry import get_policy
    from optsched.sim import simulate

    inst = catalog.read_philly_trace(jobs=jobs, load=load)
    pol = get_policy(policy)
    inner = pol.allocate
    spent = [0.0]

    def allocate(view):
        c0 = time.process_time()
        try:
            return inner(view)
        finally:
            spent[0] += time.process_time() - c0

    pol.allocate = allocate  # type: ignore[method-assign]
    load0 = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(inst, pol, seed=0, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    comp = sorted((k, float(v)) for k, v in res.schedule.completion.items())
    allocs = [(a.job, a.start, a.end, a.node, a.gpu_type, a.gpus, a.copy)
              for a in res.schedule.allocations]
    data = {
        "optsched_path": str(Path(optsched.__file__).parent), "jobs": inst.n_jobs,
        "wall_s": wall, "cpu_s": cpu, "policy_cpu_s": spent[0], "sim_cpu_s": cpu - spent[0],
        "epochs": res.extra["epochs"], "allocations": len(allocs),
        "mean_jct_s": res.metrics.mean_jct,
        "preemptions": res.extra["total_preemptions"],
        "migrations": res.extra["total_migrations"],
        "completion_sha256": hashlib.sha256(repr(comp).encode()).hexdigest()[:16],
        "schedule_sha256": hashlib.sha256(repr(allocs).encode()).hexdigest()[:16],
        "loadavg_1min": (round(load0, 2), round(os.getloadavg()[0], 2)),
    }
    out.write_text(json.dumps(data))


def base_tree(base: str, into: Path) -> Path:
    """The source tree of commit ``base`` (``git archive``), extracted under ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    tar = into / "base.tar"
    with tar.open("wb") as fh:
        subprocess.run(["git", "archive", base], cwd=ROOT, stdout=fh, check=True)
    with tarfile.open(tar) as tf:
        tf.extractall(into / "tree", filter="data")
    return into / "tree"


def run_child(tree: Path, policy: str, jobs: int, load: float, tmp: Path, tag: str) -> dict:
    out = tmp / f"{tag}.json"
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(out),
                    "--policies", policy, "--sizes", str(jobs), "--load", str(load)],
                   env=env, check=True, cwd=tmp)
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="ea7278a", help="commit measured as BEFORE")
    ap.add_argument("--after", default=None,
                    help="commit measured as AFTER (default: this checkout as it is)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000])
    ap.add_argument("--policies", nargs="+", default=POLICIES)
    ap.add_argument("--load", type=float, default=6.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--name", default="sim_incremental")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        child(args.child, args.policies[0], args.sizes[0], args.load)
        return
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        trees = {"before": base_tree(args.base, tmp / "b"),
                 "after": ROOT if args.after is None else base_tree(args.after, tmp / "a")}
        k = 0
        for jobs in args.sizes:
            for policy in args.policies:
                for r in range(args.repeat):
                    # alternate the order so that a drift in machine load hits both trees
                    for variant in (("before", "after") if k % 2 == 0 else ("after", "before")):
                        data = run_child(trees[variant], policy, jobs, args.load, tmp,
                                         f"{variant}-{policy}-{jobs}-{r}")
                        row = {"policy": policy, "variant": variant, "repeat": r, **data}
                        rows.append(row)
                        print({c: v for c, v in row.items() if c != "optsched_path"},
                              flush=True)
                    k += 1
    checks, speedups = [], []
    for jobs in args.sizes:
        for policy in args.policies:
            b = [x for x in rows if x["policy"] == policy and x["jobs"] == jobs
                 and x["variant"] == "before"]
            a = [x for x in rows if x["policy"] == policy and x["jobs"] == jobs
                 and x["variant"] == "after"]
            same = all(x["completion_sha256"] == b[0]["completion_sha256"]
                       and x["schedule_sha256"] == b[0]["schedule_sha256"] for x in a + b)
            checks.append(same)
            sim_b = min(x["sim_cpu_s"] for x in b)
            sim_a = min(x["sim_cpu_s"] for x in a)
            speedups.append({"policy": policy, "jobs": jobs, "epochs": a[0]["epochs"],
                             "before_cpu_s": min(x["cpu_s"] for x in b),
                             "after_cpu_s": min(x["cpu_s"] for x in a),
                             "before_sim_cpu_s": sim_b, "after_sim_cpu_s": sim_a,
                             "sim_speedup": sim_b / max(sim_a, 1e-9),
                             "identical": same})
    cols = ["policy", "jobs", "variant", "repeat", "cpu_s", "policy_cpu_s", "sim_cpu_s",
            "wall_s", "epochs", "allocations", "mean_jct_s", "preemptions", "migrations",
            "completion_sha256", "schedule_sha256", "loadavg_1min"]
    scols = ["policy", "jobs", "epochs", "before_cpu_s", "after_cpu_s", "before_sim_cpu_s",
             "after_sim_cpu_s", "sim_speedup", "identical"]
    notes = "\n".join([
        "Summary (least CPU seconds of each variant; sim = total - the policy's "
        "allocate):\n\n" + markdown_table(speedups, scols),
        f"\nEvery job's completion time and the whole recorded schedule identical before "
        f"and after, in every cell: {all(checks)}.",
        "Machine: 2 cores shared with other work (see loadavg_1min at each child's start "
        "and end); CPU seconds of each child process; BEFORE and AFTER alternated in one "
        "invocation.",
    ])
    write_results(args.name, rows, cols,
                  title=f"Simulator cost on Philly at {args.load:g}x arrivals: before "
                  f"({args.base}) and after",
                  params={"trace": "philly (first N jobs)", "load": args.load,
                          "cluster": "256 x 8 P100", "base": args.base,
                          "after": args.after or "checkout",
                          "repeat": args.repeat},
                  notes=notes)
    payload = json.loads((RESULTS / f"{args.name}.json").read_text())
    payload["summary"] = speedups
    payload["identical"] = all(checks)
    write_result_file(RESULTS / f"{args.name}.json",
                      json.dumps(payload, indent=1, default=str) + "\n")
    if not all(checks):
        raise SystemExit("BEFORE and AFTER differ: a decision changed")


if __name__ == "__main__":
    main()
