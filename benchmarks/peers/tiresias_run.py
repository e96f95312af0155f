#!/usr/bin/env python3
"""Run the original Tiresias simulator (SymbioticLab/Tiresias, simulator/run_sim.py) on an
optsched instance and write its per-job results as JSON.

    run_peer.py --instance INST.json --scheme SCHEDULE --out OUT.json [--placement yarn]

Environment: TIRESIAS_HOME (checkout, default /work/peers/tiresias/src),
TIRESIAS_PYTHON (Python 2.7 interpreter with numpy, default /work/peers/tiresias/py27/bin/python).

--scheme is Tiresias' *scheduler* (run_sim.py --schedule): fifo, dlas-gpu, gittins,
dlas-gpu-gittins, dlas-gpu-{05,1,2,4,8,10,100,1000}, dlas, ...  "yarn" is accepted as the
name of YARN-CS and means --schedule=fifo with --scheme=yarn placement.
--placement is Tiresias' *placement* (run_sim.py --scheme): yarn (default, as in
run_sim.py), count, random, crandom, ...

Conversion: one GPU type (the cluster's; all nodes must have the same GPU count);
duration = work / (workers * throughput[type]) rounded to the nearest integer second
(>= 1); submit_time = arrival rounded to the nearest integer second (Tiresias keeps
only digit strings as numbers, so times must be integers). The cluster spec is one
switch of the instance's nodes; CPU cores per node = max(node cpus, 6 * GPUs per node)
and memory = max(node memory, 256) GB so that Tiresias' yarn placement (which charges
2 cores per 1-GPU worker and 6 per GPU otherwise, switch.py) is never CPU-bound.

Our code only calls Tiresias through a subprocess; nothing of Tiresias is copied.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import optsched

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_HOME = os.path.join(HERE, "src")
DEFAULT_PY = os.path.join(HERE, "py27", "bin", "python")
# models known to Tiresias' models.py; anything else gets a neutral name (the model only
# changes yarn placement's network bookkeeping, never feasibility or timing)
TIRESIAS_MODELS = {
    "vgg19",
    "vgg16",
    "vgg11",
    "alexnet",
    "resnet152",
    "resnet101",
    "resnet50",
    "inception4",
    "inception3",
}


def convert(inst, gpu_type=None):
    types = inst.cluster.gpu_types
    if gpu_type is None:
        if len(types) != 1:
            raise SystemExit(f"cluster has GPU types {types}; pass --gpu-type")
        gpu_type = types[0]
    per_node = {n.gpus.get(gpu_type, 0) for n in inst.cluster.nodes}
    if len(per_node) != 1 or 0 in per_node:
        raise SystemExit(f"Tiresias needs identical nodes; GPUs of {gpu_type} per node: {per_node}")
    g = per_node.pop()
    rows = []
    for k, j in enumerate(inst.jobs):
        thr = j.throughput.get(gpu_type, 0.0)
        if not thr > 0:
            raise SystemExit(f"job {j.id} cannot run on {gpu_type}")
        dur = j.work / (j.workers * thr)
        rows.append(
            dict(
                oid=j.id,
                k=k,
                arrival=float(j.arrival),
                workers=int(j.workers),
                duration_exact=dur,
                duration=max(1, int(round(dur))),
                submit=int(round(j.arrival)),
                iterations=max(1, int(round(j.work))),
                model=(j.profile if j.profile in TIRESIAS_MODELS else "resnet50"),
            )
        )
    # Tiresias sorts by submit_time with a stable sort: write in (submit, arrival, order)
    rows.sort(key=lambda r: (r["submit"], r["arrival"], r["k"]))
    for idx, r in enumerate(rows):
        r["tid"] = idx
    cpus = max(max(n.cpus for n in inst.cluster.nodes), 6 * g)
    mem = max(max(n.memory for n in inst.cluster.nodes), 256)
    spec = dict(
        num_switch=1,
        num_node_p_switch=len(inst.cluster.nodes),
        num_gpu_p_node=g,
        num_cpu_p_node=int(math.ceil(cpus)),
        mem_p_node=int(math.ceil(mem)),
    )
    return gpu_type, rows, spec


def write_inputs(workdir, rows, spec):
    trace = os.path.join(workdir, "trace.csv")
    with open(trace, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(
            ["job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"]
        )
        for i, r in enumerate(rows):
            nxt = rows[i + 1]["submit"] - r["submit"] if i + 1 < len(rows) else 0
            w.writerow(
                [
                    r["tid"],
                    r["workers"],
                    r["submit"],
                    r["iterations"],
                    r["model"],
                    r["duration"],
                    nxt,
                ]
            )
    cl = os.path.join(workdir, "cluster.csv")
    with open(cl, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        keys = ["num_switch", "num_node_p_switch", "num_gpu_p_node", "num_cpu_p_node", "mem_p_node"]
        w.writerow(keys)
        w.writerow([spec[k] for k in keys])
    return trace, cl


def pct(v, q):
    return float(np.percentile(np.asarray(v, dtype=float), q)) if len(v) else None


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--instance", required=True)
    ap.add_argument(
        "--scheme",
        required=True,
        help="Tiresias scheduler (run_sim.py --schedule); 'yarn' = fifo + yarn placement",
    )
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--placement", default=None, help="Tiresias placement (run_sim.py --scheme); default yarn"
    )
    ap.add_argument("--gpu-type", default=None)
    ap.add_argument(
        "--workdir",
        default=None,
        help="keep Tiresias' inputs/outputs here (default: temp dir, removed)",
    )
    ap.add_argument("--timeout", type=float, default=None, help="seconds")
    ap.add_argument("--extra", nargs="*", default=[], help="extra run_sim.py arguments")
    ap.add_argument(
        "--trace",
        action="store_true",
        help="write WORKDIR/events.jsonl: every job's state after each Tiresias event",
    )
    ap.add_argument(
        "--no-fix",
        action="store_true",
        help="run --schedule=gittins unpatched (it crashes at HEAD 959f9b0)",
    )
    ap.add_argument(
        "--draft-shares",
        action="store_true",
        help="set the models' GPU memory shares to the figures commented out in models.py "
        "(all 1 at HEAD 959f9b0, so dlas-gpu-pack never packs): see launch_tiresias.py",
    )
    a = ap.parse_args(argv)

    home = os.environ.get("TIRESIAS_HOME", DEFAULT_HOME)
    py = os.environ.get("TIRESIAS_PYTHON", DEFAULT_PY)
    sim = os.path.join(home, "simulator")
    if not os.path.isfile(os.path.join(sim, "run_sim.py")):
        raise SystemExit(f"no simulator/run_sim.py under TIRESIAS_HOME={home}")
    try:
        commit = subprocess.run(
            ["git", "-C", home, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except Exception:
        commit = "unknown"

    schedule = a.scheme
    placement = a.placement or "yarn"
    if a.scheme == "yarn":  # YARN-CS = FIFO scheduler + yarn (consolidating) placement
        schedule = "fifo"
        placement = a.placement or "yarn"

    inst = optsched.load_instance(a.instance)
    gpu_type, rows, spec = convert(inst, a.gpu_type)
    by_tid = {r["tid"]: r for r in rows}

    keep = a.workdir is not None
    workdir = os.path.abspath(a.workdir) if keep else tempfile.mkdtemp(prefix="tiresias-")
    os.makedirs(workdir, exist_ok=True)
    trace, cl = write_inputs(workdir, rows, spec)
    # parse_job_dist() reads yarn-gput1000.csv from the *current directory*
    dist = os.path.join(workdir, "yarn-gput1000.csv")
    if not os.path.exists(dist):
        shutil.copyfile(os.path.join(sim, "yarn-gput1000.csv"), dist)
    logdir = os.path.join(workdir, "log")
    if os.path.isdir(logdir):
        shutil.rmtree(logdir)
    sim_args = [
        f"--cluster_spec={cl}",
        f"--scheme={placement}",
        f"--trace_file={trace}",
        f"--schedule={schedule}",
        f"--log_path={logdir}",
    ] + list(a.extra)
    fix_gittins = schedule == "gittins" and not a.no_fix
    if (
        fix_gittins or a.trace or a.draft_shares
    ):  # run_sim.py's own 'gittins' branch crashes at HEAD: see launch_tiresias.py
        cmd = (
            [py, os.path.join(HERE, "launch_tiresias.py"), sim]
            + (["--peer-fix-gittins"] if fix_gittins else [])
            + (["--peer-draft-shares"] if a.draft_shares else [])
            + ([f"--peer-trace={os.path.join(workdir, 'events.jsonl')}"] if a.trace else [])
            + sim_args
        )
    else:
        cmd = [py, os.path.join(sim, "run_sim.py")] + sim_args
    t0 = time.perf_counter()
    with (
        open(os.path.join(workdir, "stdout.txt"), "w") as fo,
        open(os.path.join(workdir, "stderr.txt"), "w") as fe,
    ):
        proc = subprocess.run(cmd, cwd=workdir, stdout=fo, stderr=fe, timeout=a.timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        with open(os.path.join(workdir, "stderr.txt")) as f:
            err = f.read()[-3000:]
        raise SystemExit(f"Tiresias failed (rc={proc.returncode}) in {workdir}:\n{err}")

    jobs = {}
    with open(os.path.join(logdir, "job.csv")) as f:
        for rec in csv.DictReader(f):
            r = by_tid[int(rec["job_id"])]
            end = float(rec["end_time"])
            jobs[r["oid"]] = {
                "arrival": float(r["submit"]),
                "completion": end,
                "jct": float(rec["JCT"]),
                "preemptions": int(rec["preempt"]),
                "start": float(rec["start_time"]),
                "duration": int(rec["duration"]),
                "num_gpu": int(rec["num_gpu"]),
                "promotions": int(rec.get("promote") or 0),
                "instance_arrival": r["arrival"],
                "instance_duration": r["duration_exact"],
            }
    unfinished = [r["oid"] for r in rows if r["oid"] not in jobs]
    jct = [v["jct"] for v in jobs.values()]
    out = {
        "peer": "tiresias",
        "commit": commit,
        "scheme": a.scheme,
        "tiresias_schedule": schedule,
        "tiresias_placement": placement,
        "instance": os.path.abspath(a.instance),
        "gpu_type": gpu_type,
        "cluster_spec": spec,
        "command": cmd,
        "patched_gittins_init": fix_gittins,
        "draft_memory_shares": a.draft_shares,
        "n_jobs": len(rows),
        "n_completed": len(jobs),
        "unfinished": unfinished,
        "jobs": {r["oid"]: jobs[r["oid"]] for r in rows if r["oid"] in jobs},
        "mean_jct": float(np.mean(jct)) if jct else None,
        "p50_jct": pct(jct, 50),
        "p99_jct": pct(jct, 99),
        "makespan": (max(v["completion"] for v in jobs.values()) - min(r["submit"] for r in rows))
        if jobs
        else None,
        "total_preemptions": int(sum(v["preemptions"] for v in jobs.values())),
        "total_promotions": int(sum(v["promotions"] for v in jobs.values())),
        "wall_seconds": wall,
    }
    if keep:
        out["workdir"] = workdir
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    mean_h = "-" if out["mean_jct"] is None else f"{out['mean_jct'] / 3600:.3f}"
    print(
        f"tiresias {a.scheme} ({schedule}/{placement}): {len(jobs)}/{len(rows)} jobs, "
        f"mean JCT {mean_h} h, "
        f"preemptions {out['total_preemptions']}, wall {wall:.1f} s -> {a.out}"
    )
    return 0 if not unfinished else 2


if __name__ == "__main__":
    sys.exit(main())
