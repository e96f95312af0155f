"""One run of Gavel's own simulator (``Scheduler.simulate``), for side-by-side figures.

Runs under Gavel's interpreter with the working directory ``<gavel>/scheduler`` of an
unmodified checkout (stanford-futuredata/gavel c4fa40097339e9608ab71fd64c8bdea96a5e4a4c):

    cd $GAVEL_HOME/scheduler && $GAVEL_PYTHON gavel_run.py JOBS.json POLICY OUT.json

``JOBS.json`` (written by ``benchmarks/gavel_policies_peer.py``) holds the jobs -
Gavel job type, scale factor, total steps, arrival - and each (job type, scale factor)
key's gang throughput per GPU type, the ``'null'`` entry Gavel's simulator reads. Keys
Gavel's table measures keep its own numbers; keys it lacks (scale factors it never
measured) get optsched's extrapolated rates, so both sides run the same jobs at the same
rates. Cluster 36 V100 + 36 P100 + 36 K80 (or the spec's "cluster", GPUs per type), 4 GPUs
per server, 360 s rounds, seed 0, ECOS:
the arguments of Gavel's ``scripts/drivers/simulate_scheduler_with_trace.py``.

A POLICY of the form ``NAME+empty_SLOs`` runs Gavel's policy NAME with one entry added
to the scheduler's allocation state from outside, its sources untouched: ``SLOs = {}``.
Gavel's simulator without price data gives its SLO cost policies no SLOs, and then
``_get_allocation_state`` leaves that entry out while ``_compute_allocation`` reads it
(``KeyError: 'SLOs'`` at the first allocation); with the empty entry the policy solves
its program without SLO rows, at price 1 per type, as its code states for that case.

The output holds each job's arrival and JCT (None for a job Gavel dropped), the mean,
median and p99 JCT, the makespan (last completion) and the number of allocations the
policy computed (its ``get_allocation`` calls, counted from outside).
"""

import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.getcwd())  # Gavel's modules import each other by bare name
import scheduler  # noqa: E402
import utils  # noqa: E402
from job import Job  # noqa: E402
from job_id_pair import JobIdPair  # noqa: E402


def main(jobs_file, policy_name, out_file):
    spec = json.load(open(jobs_file))
    table = json.load(open("simulation_throughputs.json"))
    for key, rates in spec["rates"].items():
        job_type, sf = json.loads(key)
        name = str((job_type, sf))
        for t, r in rates.items():
            table[t].setdefault(name, {"null": r})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(table, f)
    jobs, arrivals = [], []
    for j in spec["jobs"]:
        jobs.append(Job(job_id=None, job_type=j["job_type"], command="", working_directory="",
                        num_steps_arg="", total_steps=int(j["total_steps"]), duration=None,
                        scale_factor=int(j["scale_factor"]), priority_weight=1.0, SLO=None,
                        needs_data_dir=False))
        arrivals.append(float(j["arrival"]))
    policy_name, _, fix = policy_name.partition("+")
    if fix not in ("", "empty_SLOs"):
        raise SystemExit(f"unknown addition {fix!r}")
    policy = utils.get_policy(policy_name, solver="ECOS", seed=0)
    calls = [0]
    inner = policy.get_allocation

    def counted(*a, **k):
        calls[0] += 1
        return inner(*a, **k)

    policy.get_allocation = counted
    sched = scheduler.Scheduler(policy, throughputs_file=f.name, simulate=True, seed=0,
                                time_per_iteration=360)
    if fix == "empty_SLOs":
        state_of = sched._get_allocation_state

        def state_with_slos():
            state = state_of()
            state.setdefault("SLOs", {})
            return state

        sched._get_allocation_state = state_with_slos
    t0 = time.process_time()
    cluster = spec.get("cluster") or {"v100": 36, "p100": 36, "k80": 36}
    sched.simulate(cluster, arrivals, jobs,
                   num_gpus_per_server={t: 4 for t in cluster})
    cpu = time.process_time() - t0
    out = {"policy": policy_name + ("+" + fix if fix else ""), "n": len(jobs), "cpu_s": cpu,
           "n_allocation_computations": calls[0], "jobs": {}}
    done = []
    for i, a in enumerate(arrivals):
        jct = sched._job_completion_times.get(JobIdPair(i, None))
        out["jobs"][str(i)] = {"arrival": a, "jct": jct}
        if jct is not None:
            done.append((jct, a + jct))
    jct = np.array([d[0] for d in done])
    out.update(mean_jct=float(jct.mean()), p50_jct=float(np.percentile(jct, 50)),
               p99_jct=float(np.percentile(jct, 99)),
               makespan=float(max(d[1] for d in done) - min(arrivals)),
               dropped_jobs=[i for i, v in out["jobs"].items() if v["jct"] is None])
    sched.shutdown()
    os.unlink(f.name)
    with open(out_file + ".tmp", "w") as g:
        json.dump(out, g)
    os.replace(out_file + ".tmp", out_file)


if __name__ == "__main__":
    main(*sys.argv[1:4])
