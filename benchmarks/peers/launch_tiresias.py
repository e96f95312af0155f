"""Python 2.7 launcher for Tiresias' simulator/run_sim.py (Tiresias is imported, not
copied).

usage: python2.7 launch_tiresias.py SIMULATOR_DIR [--peer-fix-gittins] [--peer-trace=FILE]
       [--peer-draft-shares] run_sim.py-arguments...

--peer-draft-shares: at 959f9b0 models.py sets every model's GPU memory share (m_mem) to
1, with per-model figures commented out beside it (vgg19 0.60, vgg16 0.55, vgg11 0.45,
alexnet 0.13, resnet152 0.85, resnet101 0.70, resnet50 0.50, inception4 0.85,
inception3 0.80); dlas-gpu-pack packs jobs onto GPUs only with shares below 1.  With this
flag the launcher sets m_mem to those figures before the run.  Nothing else changes.

--peer-trace=FILE: after each event (LOG.checkpoint) write one JSON line with every
pending/running job: [job_id, status P/R, q_id, executed_time, total_executed_time, rank,
preempt] and the queue contents (JOBS.queues, in order).

--peer-fix-gittins: at HEAD 959f9b0, main() runs `job_dist_data = parse_job_dist()` for
--schedule=gittins into a local variable, while get_gittins_index() reads
JOBS.job_dist_data (still None), so the scheme crashes at its first event.  With this flag
the launcher wraps parse_job_dist() so that its result is also stored in
JOBS.job_dist_data (what every other Gittins branch of main() does).  Nothing else changes.
"""

import os
import sys

sim = os.path.abspath(sys.argv[1])
args = sys.argv[2:]
fix = "--peer-fix-gittins" in args
draft = "--peer-draft-shares" in args
args = [x for x in args if x not in ("--peer-fix-gittins", "--peer-draft-shares")]
trace_path = None
for x in list(args):
    if x.startswith("--peer-trace="):
        trace_path = x.split("=", 1)[1]
        args.remove(x)
sys.path.insert(0, sim)
sys.argv = [os.path.join(sim, "run_sim.py")] + args

import run_sim  # noqa: E402  (defines the flags; main() is not run on import)

if draft:
    import models  # noqa: E402  (the module run_sim's jobs read get_model from)

    models.m_mem[:] = [0.60, 0.55, 0.45, 0.13, 0.85, 0.70, 0.50, 0.85, 0.80]

if fix:
    _orig = run_sim.parse_job_dist

    def _parse_job_dist_and_store():
        d = _orig()
        run_sim.JOBS.job_dist_data = d
        return d

    run_sim.parse_job_dist = _parse_job_dist_and_store

if trace_path:
    # after every scheduling pass, run_sim calls LOG.checkpoint(event_time): record the state
    # of every submitted job there (one JSON line per event)
    import json

    _fd = open(trace_path, "w")
    _orig_cp = run_sim.LOG.checkpoint

    def _checkpoint(event_time):
        js = []
        for j in run_sim.JOBS.job_list:
            if j["status"] in ("PENDING", "RUNNING"):
                js.append(
                    [
                        j["job_id"],
                        j["status"][0],
                        j.get("q_id", -1),
                        j.get("executed_time", 0),
                        j.get("total_executed_time", 0),
                        j.get("rank", None) if j.get("rank", None) != sys.maxint else None,
                        j["preempt"],
                    ]
                )
        qs = [[q_j["job_id"] for q_j in q] for q in run_sim.JOBS.queues]
        _fd.write(json.dumps({"t": event_time, "jobs": js, "queues": qs}) + "\n")
        return _orig_cp(event_time)

    run_sim.LOG.checkpoint = _checkpoint

run_sim.main()
