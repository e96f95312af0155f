#!/usr/bin/env python3
"""Run the original Synergy simulator (msr-fiddle/synergy) on one setting and turn its
jobs into an optsched instance.

    synergy_run.py --order fifo --allocator tune --split 20,70,10 --out OUT.json \\
        [--num-jobs 0] [--window 4000,5000] [--load 9] [--seed 42] [--servers 16]

Environment: ``SYNERGY_HOME`` (a checkout of msr-fiddle/synergy) and ``SYNERGY_PYTHON``
(its Python 3.8 interpreter with Synergy's requirements). Synergy runs in a subprocess
(``synergy_driver.py``); nothing of it is copied.

Workload: Synergy's Philly mode (its default for the paper): single-GPU jobs taken in
order from the parsed Philly trace, durations redrawn by its parser, models drawn per
the class ``--split``, Poisson arrivals at ``--load`` jobs/h. ``--num-jobs 0`` is
Synergy's endless stream, measured on ``--window`` (Runner's ``series_id_filter``,
default jobs 4000-4999; the run stops once they have all finished); ``--num-jobs N``
generates N jobs and measures all of them. Synergy's snapshot lacks its
``cluster_job_log`` blob, so the trace is a stand-in built from a Philly job table
(:func:`build_trace`, ``--philly-csv``); in single-GPU mode the parser keeps the jobs of
duration 10^1.5-10^4 min and redraws every duration, so only the number of kept jobs
depends on the stand-in. ``--workload synthetic`` runs Synergy's generator without a
trace instead (``Runner(cluster_job_log=None)``: 1/2/4/8 GPUs w.p. 0.7/0.1/0.15/0.05).

Writes ``OUT.json`` (setting, Synergy's commit, window, per-window-job arrival and
completion, simulated end, wall time) and ``OUT`` stem + ``.jobs.csv.gz`` (every job
Synergy generated, :data:`JOB_FIELDS`).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import gzip
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from optsched.catalog import synergy_profiles
from optsched.core.instance import Instance, Job, Sensitivity
from optsched.synergy import servers

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "synergy_driver.py"
SCHED = {"fifo": "FIFO", "srtf": "SRTF", "las": "LAS", "ftf": "FTF", "drf": "DRF",
         "tetris": "TETRIS", "srsf": "SRSF"}
SUFFIX = {"proportional": "+fair", "greedy": "", "tune": "+tune", "opt": "+opt"}
#: one row per generated job in the committed job lists
JOB_FIELDS = ("id", "model", "gpus", "arrival", "iterations", "iter_time", "speedup",
              "cpu_demand", "mem_demand", "placement_penalty")
#: the GPU-proportional share per GPU on Synergy's servers (24 cores, 500 GB, 8 GPUs)
FAIR = (3.0, 62.5)


# --------------------------------------------------------------------------- inputs
def build_trace(philly_csv: Path, out: Path) -> int:
    """A ``cluster_job_log`` stand-in from a Philly job table (``timestamp``,
    ``duration`` s, ``num_gpus``, ``cluster`` per row): one passed job per row with one
    attempt [submit, submit + duration] on ``num_gpus`` GPUs, in table order."""
    fmt = "%Y-%m-%d %H:%M:%S"
    jobs = []
    with open(philly_csv) as f:
        for i, row in enumerate(csv.DictReader(f)):
            sub = datetime.datetime.strptime(row["timestamp"], fmt)
            end = sub + datetime.timedelta(seconds=float(row["duration"]))
            g = int(row["num_gpus"])
            detail = [{"ip": f"m{k}", "gpus": [f"gpu{x}" for x in range(min(8, g - 8 * k))]}
                      for k in range((g + 7) // 8)]
            jobs.append({"status": "Pass", "vc": row["cluster"], "jobid": f"csv_{i}",
                         "user": row["cluster"], "submitted_time": sub.strftime(fmt),
                         "attempts": [{"start_time": sub.strftime(fmt),
                                       "end_time": end.strftime(fmt), "detail": detail}]})
    out.write_text(json.dumps(jobs))
    return len(jobs)


def write_jobs(jobs: list[dict], path: Path) -> None:
    with gzip.open(path, "wt", newline="") as f:
        w = csv.writer(f)
        w.writerow(JOB_FIELDS)
        for j in sorted(jobs, key=lambda j: j["id"]):
            w.writerow([repr(j[k]) if isinstance(j[k], float) else j[k] for k in JOB_FIELDS])


def read_jobs(path: Path) -> list[dict]:
    kinds = {"id": int, "model": str, "gpus": int, "iterations": int}
    with gzip.open(path, "rt", newline="") as f:
        return [{k: kinds.get(k, float)(v) for k, v in row.items()}
                for row in csv.DictReader(f)]


# --------------------------------------------------------------------------- conversion
def _sensitivity(j: dict) -> tuple[str, Sensitivity]:
    """What Synergy's simulator uses for the job: it loads ``<model>_1`` for every GPU
    count (``jobs/model.py``), then caps the best case at one server and interpolates
    the speedup (``jobs/workload.py``). Synergy's speed model has two points only: the
    fair share (iteration time) and the best case (iteration time / speedup)."""
    p1 = synergy_profiles()[f"{j['model']}_1"]
    g = j["gpus"]
    c, m, s = j["cpu_demand"] / g, j["mem_demand"] / g, j["speedup"]
    sens = p1.sensitivity
    if math.isclose(c, sens.best_cpu) and math.isclose(m, sens.best_memory) \
            and math.isclose(s, p1.speedup):
        return p1.name, sens
    if c < FAIR[0] - 1e-9 or m < FAIR[1] - 1e-9:
        raise ValueError(f"job {j['id']}: capped best case {c}, {m} below the fair share")
    cg = [FAIR[0]] + ([c] if c > FAIR[0] + 1e-9 else [])
    mg = [FAIR[1]] + ([m] if m > FAIR[1] + 1e-9 else [])
    if len(cg) == len(mg) == 1 and not math.isclose(s, 1.0):
        raise ValueError(f"job {j['id']}: best case = fair share but speedup {s}")
    thr = tuple(tuple(s if (i == len(cg) - 1 and k == len(mg) - 1) else 1.0
                      for k in range(len(mg))) for i in range(len(cg)))
    return (f"{p1.name}-capped-g{g}",
            Sensitivity(tuple(cg), tuple(mg), thr, best_cpu=c, best_memory=m))


def to_instance(jobs: list[dict], n_servers: int = 16, *, name: str = "synergy-peer",
                slot: float = 300.0) -> Instance:
    """Synergy's jobs as an optsched instance on ``n_servers`` Synergy servers.

    ``work`` = Synergy's total iterations; per-worker throughput ``1 / (g iter_time)``, so
    a gang at the fair share needs ``iterations x iter_time`` s, Synergy's duration there
    (``Job.allocate`` credits ``floor(300 / iter_time)`` iterations per 300 s round).
    """
    out = []
    for j in sorted(jobs, key=lambda j: j["id"]):
        if j["gpus"] > 1 and not math.isclose(j.get("placement_penalty", 1.0), 1.0):
            raise ValueError(f"job {j['id']}: Synergy's placement penalty is not modelled")
        prof, sens = _sensitivity(j)
        g = j["gpus"]
        out.append(Job(id=str(j["id"]), arrival=float(j["arrival"]), workers=g,
                       work=float(j["iterations"]), throughput={"v100": 1.0 / (g * j["iter_time"])},
                       profile=prof, sensitivity=sens))
    return Instance(servers(n_servers), tuple(out), slot=slot, name=name)


# --------------------------------------------------------------------------- the peer
def peer_env() -> tuple[Path, Path] | None:
    """(checkout, interpreter) from SYNERGY_HOME / SYNERGY_PYTHON, or None if unset."""
    home, py = os.environ.get("SYNERGY_HOME"), os.environ.get("SYNERGY_PYTHON")
    if not home or not py:
        return None
    if not (Path(home) / "simulator" / "runner.py").is_file():
        raise SystemExit(f"SYNERGY_HOME={home}: no simulator/runner.py there")
    return Path(home), Path(py)


def run(order: str, allocator: str, split: str, out: Path, *, num_jobs: int = 0,
        window: str | None = None, load: float = 9.0, seed: int = 42, n_servers: int = 16,
        workdir: Path | None = None, trace: Path | None = None,
        philly_csv: Path | None = None, workload: str = "philly",
        place: bool = False) -> dict:
    env = peer_env()
    if env is None:
        raise SystemExit("set SYNERGY_HOME and SYNERGY_PYTHON to run Synergy's simulator")
    home, py = env
    window = window or (f"0,{num_jobs}" if num_jobs else "4000,5000")
    workdir = workdir or out.parent / "work" / f"seed{seed}"
    workdir.mkdir(parents=True, exist_ok=True)
    if workload == "philly":
        # the trace path selects Synergy's Philly mode; it is read only to build the pickle
        trace = trace or workdir / "cluster_job_log.json"
        pickle = workdir / "philly_jobs_sum_attempts_exp_single.pickle"
        if not pickle.exists() and not trace.exists():
            if philly_csv is None:
                raise SystemExit("no job pickle and no trace: give --philly-csv to build it")
            build_trace(philly_csv, trace)
    base = [str(py), str(DRIVER), "--home", str(home), "--workdir", str(workdir),
            "--seed", str(seed), "--load", str(load), "--split", split,
            "--servers", str(n_servers), "--workload", workload] + \
        (["--trace", str(trace)] if workload == "philly" else [])
    with tempfile.TemporaryDirectory() as tmp:
        dump_path = Path(tmp) / "dump.json"
        subprocess.run(base + ["--scheduler", SCHED[order], "--allocator", allocator,
                               "--window", window, "--num-jobs", str(num_jobs),
                               "--out", str(dump_path)] + (["--place"] if place else []),
                       check=True)
        dump = json.loads(dump_path.read_text())
    commit = subprocess.run(["git", "-C", str(home), "rev-parse", "HEAD"],
                            capture_output=True, text=True, check=True).stdout.strip()
    if "error" in dump:  # the peer raised: keep what it said, there are no results
        res = {"peer": "msr-fiddle/synergy", "commit": commit,
               "scheduler": dump["scheduler_name"], "order": order, "allocator": allocator,
               "place": place, "split": split, "num_jobs": num_jobs,
               **{k: dump[k] for k in ("error", "message", "where")}}
        out.write_text(json.dumps(res, indent=1) + "\n")
        return res
    res = summarise(dump, commit, order=order, allocator=allocator)
    res["place"] = place
    res["scheduler"] = dump["scheduler_name"]
    out.write_text(json.dumps(res, indent=1) + "\n")
    write_jobs(dump["jobs_generated"], jobs_path(out))
    return res


def jobs_path(out: Path) -> Path:
    return out.with_name(out.name.removesuffix(".json") + ".jobs.csv.gz")


def summarise(dump: dict, commit: str, *, order: str, allocator: str) -> dict:
    lo, hi = dump["window"]
    comp = {str(k): v for k, v in dump["completions"].items() if lo <= int(k) < hi}
    return {
        "peer": "msr-fiddle/synergy", "commit": commit,
        "scheduler": SCHED[order] + SUFFIX[allocator], "order": order, "allocator": allocator,
        "workload": dump.get("workload", dump.get("workload_type")),
        "load_jobs_per_hour": dump["load"], "split": dump["split"], "seed": dump["seed"],
        "servers": dump["servers"], "num_jobs": dump.get("num_jobs", dump.get("num_jobs_default")),
        "window": [lo, hi], "round_s": dump["round_duration"],
        "jobs_generated": len(dump["jobs_generated"]), "end_time_s": dump["end_time"],
        "wall_seconds": dump["wall_seconds"],
        "synergy_window_mean_jct_h": dump["window_mean_jct_h"],
        "window_jobs": {k: [v["arrival"], v["completion"]]
                        for k, v in sorted(comp.items(), key=lambda kv: int(kv[0]))},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--order", choices=list(SCHED), default="fifo")
    ap.add_argument("--allocator", choices=list(SUFFIX), default="tune")
    ap.add_argument("--split", default="20,70,10", help="image,language,speech percent")
    ap.add_argument("--num-jobs", type=int, default=0, help="0 = endless stream")
    ap.add_argument("--window", default=None, help="job ids lo,hi (default 4000,5000)")
    ap.add_argument("--load", type=float, default=9.0, help="jobs per hour")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--servers", type=int, default=16)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--trace", type=Path, default=None, help="cluster_job_log JSON")
    ap.add_argument("--philly-csv", type=Path, default=None,
                    help="Philly job table to build the trace stand-in from")
    ap.add_argument("--workload", choices=["philly", "synthetic"], default="philly",
                    help="synthetic: Synergy's generator without a trace (1/2/4/8 GPUs)")
    ap.add_argument("--place", action="store_true", help="placement-sensitive mode")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    res = run(a.order, a.allocator, a.split, a.out.resolve(), num_jobs=a.num_jobs,
              window=a.window, load=a.load, seed=a.seed, n_servers=a.servers,
              workdir=a.workdir, trace=a.trace, philly_csv=a.philly_csv,
              workload=a.workload, place=a.place)
    if "error" in res:
        sys.exit(f"{res['scheduler']}: {res['error']}: {res['message']} ({res['where']})")
    print(f"{res['scheduler']} {a.split}: window mean JCT "
          f"{res['synergy_window_mean_jct_h']:.3f} h, {res['jobs_generated']} jobs generated",
          file=sys.stderr)


if __name__ == "__main__":
    main()
