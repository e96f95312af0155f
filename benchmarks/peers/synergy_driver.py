"""Drive msr-fiddle/synergy's simulator for one setting (runs under Synergy's Python 3.8).

Synergy is imported from a checkout (``--home``, the repository root), never copied.
Two of its methods are wrapped to *record* what the simulator does (every generated job,
every job completion); nothing in its logic changes. One JSON dump is written.

Flow (as ``runner.py``'s ``__main__`` and ``benchmark()`` do for one scheduler):

1. Synergy's Philly mode reads ``philly_jobs_sum_attempts_exp_<single|multi>.pickle`` from
   the working directory, or parses ``--trace`` (``helpers/parse_philly_trace_full``) and
   writes that pickle. Parsing draws every kept job's duration from Python's ``random``,
   so it runs once, right after ``random.seed(seed)`` (what a first ``runner.py`` run
   does), and every later run loads the pickle.
2. ``random.seed(seed)`` (twice: ``__main__``, then ``benchmark()`` before each Runner),
   ``Runner(...)`` with ``benchmark()``'s arguments, ``run_simulation()``.

Scheduler names: ``<ORDER>+fair`` = GPU-proportional, ``<ORDER>+tune`` = TUNE,
``<ORDER>+opt`` = Synergy-OPT solved every round, ``<ORDER>`` alone = GREEDY, and
``+place`` the placement-sensitive mode (``runner.py`` 418-427 sets ``placement``,
``fair``, ``tune`` and ``opt`` from the name). A run that raises records the exception
(type, message, last frame) in the dump instead of results.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import sys
import time

CLUSTER_INI = ("[CLUSTER]\nracks = 1\nservers_per_rack = {n}\ngpus_per_server = 8\n"
               "cpus_per_server = 24\ndram_per_server = 500\nsspeed_per_server = 500\n"
               "[SCHEDULER]\npolicy = FIFO\nlease_time = 5\n")


def parse():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, help="Synergy checkout (repository root)")
    ap.add_argument("--workdir", required=True, help="cwd of the run: holds the job pickle")
    ap.add_argument("--workload", choices=["philly", "synthetic"], default="philly",
                    help="philly: Runner(cluster_job_log=TRACE), the paper's (single-GPU "
                    "jobs from the Philly pickle unless --multigpu); synthetic: "
                    "Runner(cluster_job_log=None) (GPUs 1/2/4/8 w.p. 0.7/0.1/0.15/0.05)")
    ap.add_argument("--trace", default=None,
                    help="cluster_job_log JSON: selects Philly mode (Runner tests "
                    "cluster_job_log is not None); read only to build a missing pickle")
    ap.add_argument("--prepare", action="store_true", help="only build the pickle")
    ap.add_argument("--scheduler", default="FIFO",
                    choices=["FIFO", "SRTF", "LAS", "FTF", "DRF", "TETRIS", "SRSF"])
    ap.add_argument("--allocator", default="tune",
                    choices=["proportional", "greedy", "tune", "opt"])
    ap.add_argument("--place", action="store_true",
                    help="the placement-sensitive mode (Runner(placement=True), '+place')")
    ap.add_argument("--load", type=float, default=9.0, help="jobs per hour")
    ap.add_argument("--split", default="20,70,10", help="image,language,speech percent")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--window", default="4000,5000", help="series_id_filter lo,hi")
    ap.add_argument("--num-jobs", type=int, default=0,
                    help="0: endless Poisson stream (Synergy's default); N: only N jobs")
    ap.add_argument("--servers", type=int, default=16)
    ap.add_argument("--multigpu", action="store_true")
    ap.add_argument("--out", required=True)
    return ap.parse_args()


def cluster_config(sim, servers):
    shipped = {16: "default_cluster.ini", 64: "philly_cluster.ini"}.get(servers)
    if shipped is not None:
        return os.path.join(sim, "configs", shipped)
    path = os.path.abspath(f"cluster_{servers}.ini")  # Synergy's .ini format
    with open(path, "w") as f:
        f.write(CLUSTER_INI.format(n=servers))
    return path


def main():
    a = parse()
    sim = os.path.join(os.path.abspath(a.home), "simulator")
    trace = os.path.abspath(a.trace) if a.trace else None
    out = a.out if a.out == "/dev/null" else os.path.abspath(a.out)
    sys.path.insert(0, sim)
    os.makedirs(a.workdir, exist_ok=True)
    os.chdir(a.workdir)
    logging.basicConfig(level=logging.WARNING)

    from jobs.workload import Workload
    from runner import Runner

    config = cluster_config(sim, a.servers)
    split = tuple(int(x) for x in a.split.split(","))
    window = tuple(int(x) for x in a.window.split(","))
    pickle_name = "philly_jobs_sum_attempts_exp_{}.pickle".format(
        "multi" if a.multigpu else "single")
    if a.workload == "synthetic":
        trace = None
    elif trace is None:
        sys.exit("--workload philly needs --trace (it selects Synergy's Philly mode)")
    elif (a.prepare or not os.path.exists(pickle_name)) and not os.path.exists(trace):
        sys.exit(f"no {pickle_name} in {a.workdir} and no {trace} to build it from")
    if trace is not None and (a.prepare or not os.path.exists(pickle_name)):
        from resources.cluster import Cluster

        random.seed(a.seed)
        cl = Cluster(config_file=config, simulate=True)
        Workload(cluster_job_log=trace, jobs_per_hour=a.load, exponential=True,
                 multigpu=a.multigpu, model_class_split=split,
                 per_server_size=cl.per_server_size, series_id_filter=window)
        if a.prepare:
            return

    generated, completions = [], {}
    orig_gen = Workload.generate_next_job

    def gen(self, last_job_arrival_time, arrival=-1):
        job = orig_gen(self, last_job_arrival_time, arrival=arrival)
        generated.append({
            "id": int(job.job_id), "model": job.job_model.model_name,
            "gpus": int(job.job_gpu_demand), "arrival": float(job.job_arrival_time),
            "iterations": int(job.job_total_iteration),
            "iter_time": float(job.job_iteration_time),
            "speedup": float(job.synergy_speedup_orig),
            "cpu_demand": float(job.job_cpu_demand_orig),
            "mem_demand": float(job.job_mem_demand_orig),
            "placement_penalty": float(job.job_placement_penalty),
        })
        return job

    orig_finish = Runner.finish_job

    def finish(self, job):
        completions[int(job.job_id)] = {"arrival": float(job.job_arrival_time),
                                        "completion": float(self.time)}
        return orig_finish(self, job)

    Workload.generate_next_job = gen
    Runner.finish_job = finish

    random.seed(a.seed)
    random.seed(a.seed)
    t0 = time.time()
    name = a.scheduler + {"proportional": "+fair", "tune": "+tune", "greedy": "",
                          "opt": "+opt"}[a.allocator] + ("+place" if a.place else "")
    try:
        r = Runner(cluster_job_log=trace, scheduler=a.scheduler, jobs_per_hour=a.load,
                   series_id_filter=window, model_class_split=split, exponential=True,
                   philly_arrival=False, multigpu=a.multigpu, small_trace=False,
                   placement=a.place, prioritize=False, fair=a.allocator == "proportional",
                   tune=a.allocator == "tune", opt=a.allocator == "opt", simulate=True,
                   config_file=config, num_jobs_default=a.num_jobs)
        _, jct_series = r.run_simulation()
    except Exception as exc:  # the peer's own failure is a result: record it
        import traceback
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        with open(out, "w") as f:
            json.dump({"scheduler_name": name, "error": type(exc).__name__,
                       "message": str(exc), "where": f"{frame.filename}:{frame.lineno}",
                       "simulated_s": None}, f)
        print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return
    wall = time.time() - t0
    df = jct_series.get_df()
    measured = [float(v) for v in df[df.columns[1]]]
    dump = {
        "scheduler_name": name, "scheduler": a.scheduler, "allocator": a.allocator,
        "load": a.load, "split": list(split), "seed": a.seed, "window": list(window),
        "num_jobs": a.num_jobs, "servers": a.servers, "multigpu": a.multigpu,
        "place": a.place,
        "workload": r.workload.workload_type,
        "round_duration": r.round_duration, "end_time": float(r.time), "wall_seconds": wall,
        "jobs_generated": generated, "completions": completions,
        "window_mean_jct_h": sum(measured) / len(measured) / 3600.0 if measured else None,
        "per_server_size": list(r.cluster.per_server_size),
    }
    with open(out, "w") as f:
        json.dump(dump, f)
    print(f"{name} {split}: window mean JCT {dump['window_mean_jct_h']} h over "
          f"{len(measured)} jobs, {len(generated)} generated, end {r.time / 3600:.1f} h, "
          f"wall {wall:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
