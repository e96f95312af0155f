"""Synergy's decisions round by round, next to optsched's (diagnostics of the
side-by-side runs of ``benchmarks/synergy_peer.py``).

Peer side (``main``; runs under Synergy's Python in place of ``synergy_driver.py``, same
arguments): every scheduler class's ``schedule`` is wrapped to append one JSON line per
round to ``$SYNERGY_TRACE_LOG``: the time ``t``, the queue after Synergy's sort
(``order``, job ids), per queued job ``pre`` = [id, job_priority, remaining iterations,
synergy_speedup] and per running job ``post`` = [id, GPUs, cores, GB, synergy_speedup,
servers]. Nothing in Synergy's logic changes, except with
``SYNERGY_EXACT_ITERATIONS=1``: ``Job.allocate`` then credits ``time / iteration
time`` iterations per round instead of its ``floor`` (``jobs/job.py``'s ``math.floor``
is replaced by the identity; that module floors only progress and whole core counts),
an experiment that removes Synergy's whole-iteration progress. The checkout is
imported, never modified.

optsched side (``python benchmarks/peers/synergy_trace.py ORDER ALLOCATOR SPLIT N``
from optsched's Python, with ``SYNERGY_HOME`` / ``SYNERGY_PYTHON`` set; ``--align``,
``--exact-iterations``): runs Synergy through ``synergy_run.run`` with this wrapper,
logs optsched's rounds in the same format (:func:`trace_optsched`) and prints the
first round whose running jobs or their cores and DRAM differ
(:func:`first_difference`) and the share of jobs within one round on Synergy's grid.
``--align`` moves optsched's arrivals up to Synergy's 300-s grid (Synergy's rounds fall
on multiples of the round length from time 0, optsched's start at the first arrival):
a diagnostic of decisions, not a comparison of JCTs.
"""

from __future__ import annotations

import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _wrap(cls, log) -> None:
    orig = cls.schedule

    def schedule(self, jobs, gpus, cluster_copy=None):
        t = type(self).runner.get_time()
        pre = [[int(j.job_id), j.job_priority,
                int(j.job_total_iteration - j.job_executed_iteration),
                float(j.synergy_speedup)] for j in jobs]
        out = orig(self, jobs, gpus, cluster_copy)
        post = [[int(j.job_id), len(j.gpus), float(j.cpus), float(j.mem),
                 float(j.synergy_speedup), sorted({g.machine_id for g in j.gpus})]
                for j in self.running_jobs]
        log.write(json.dumps({"t": t, "order": [int(j.job_id) for j in jobs], "pre": pre,
                              "post": post}) + "\n")
        return out

    cls.schedule = schedule


def peer_main() -> None:
    home = sys.argv[sys.argv.index("--home") + 1]
    sys.path.insert(0, os.path.join(os.path.abspath(home), "simulator"))
    sys.path.insert(0, HERE)
    import synergy_driver
    from schedulers.drf import DRF
    from schedulers.fifo_synergy_new import FIFO
    from schedulers.srtf_synergy_new import SRTF
    from schedulers.tetris import TETRIS

    log = open(os.environ["SYNERGY_TRACE_LOG"], "w")
    for cls in (FIFO, SRTF, DRF, TETRIS):
        _wrap(cls, log)
    if os.environ.get("SYNERGY_EXACT_ITERATIONS") == "1":
        import types

        import jobs.job as job_module
        shim = types.SimpleNamespace(**{k: getattr(math, k) for k in dir(math)
                                        if not k.startswith("_")})
        shim.floor = lambda x: x
        job_module.math = shim
    try:
        synergy_driver.main()
    finally:
        log.close()


# ----------------------------------------------------------------- optsched's side
def trace_optsched(jobs: list[dict], order: str, allocator: str, path: str, *,
                   servers: int = 16, align: bool = False, **options) -> None:
    """Simulate ``jobs`` (``synergy_run.read_jobs`` rows) with ``SynergyPolicy`` and log
    each round as Synergy's trace does (``pre`` without the speed)."""
    from synergy_run import to_instance

    from optsched.synergy import policy as P
    from optsched.synergy import simulate_synergy

    if align:
        jobs = [dict(j, arrival=300.0 * math.ceil(j["arrival"] / 300.0)) for j in jobs]
    inst = to_instance(jobs, servers)
    orig = P.SynergyPolicy.allocate
    with open(path, "w") as log:
        def allocate(self, view):
            order_ = self._ordered(view, view.gpu_types[0])
            out = orig(self, view)
            post: dict[str, list] = {}
            for p in out:
                q = post.setdefault(p.job, [0, 0.0, 0.0, []])
                q[0] += p.gpus
                q[1] += p.cpus
                q[2] += p.memory
                q[3].append(p.node)
            rem = view.remaining if self.needs_work else [None] * len(view.ids)
            log.write(json.dumps({
                "t": view.time, "order": [int(view.ids[i]) for i in order_],
                "pre": [[int(view.ids[i]), None, None if rem[i] is None else float(rem[i])]
                        for i in order_],
                "post": [[int(j), *v[:3], None, v[3]] for j, v in post.items()]}) + "\n")
            return out

        P.SynergyPolicy.allocate = allocate
        try:
            simulate_synergy(inst, allocator, order, **options)
        finally:
            P.SynergyPolicy.allocate = orig


def first_difference(synergy_trace: str, optsched_trace: str) -> dict | None:
    """The first round (by time; rounds in which Synergy has no job are skipped) whose
    running jobs or their cores and DRAM differ, with both queues; None if none."""
    def load(path):
        return {r["t"]: r for r in map(json.loads, open(path))}

    S, O = load(synergy_trace), load(optsched_trace)
    for t in sorted(set(S) | set(O)):
        s, o = S.get(t), O.get(t)
        if s is not None and not s["pre"] and o is None:
            continue
        if s is None or o is None:
            return {"t": t, "only_in": "optsched" if s is None else "synergy"}
        sp = {r[0]: (r[1], round(r[2], 6), round(r[3], 6)) for r in s["post"]}
        op = {r[0]: (r[1], round(r[2], 6), round(r[3], 6)) for r in o["post"]}
        if sp != op:
            return {"t": t, "synergy_order": s["order"], "optsched_order": o["order"],
                    "only_synergy": sorted(set(sp) - set(op)),
                    "only_optsched": sorted(set(op) - set(sp)),
                    "differ": {j: [sp[j], op[j]] for j in sorted(set(sp) & set(op))
                               if sp[j] != op[j]}}
    return None


def main() -> None:
    import argparse
    import tempfile
    from pathlib import Path

    import numpy as np
    sys.path.insert(0, HERE)
    import synergy_run

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("order", choices=list(synergy_run.SCHED))
    ap.add_argument("allocator", choices=list(synergy_run.SUFFIX))
    ap.add_argument("split", help="image,language,speech percent, e.g. 50,0,50")
    ap.add_argument("num_jobs", type=int)
    ap.add_argument("--align", action="store_true", help="optsched's arrivals on the grid")
    ap.add_argument("--exact-iterations", action="store_true",
                    help="Synergy credits fractional iterations (experiment)")
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp()))
    ap.add_argument("--philly-csv", type=Path, default=None)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    syn_log, ours_log = a.out / "synergy.jsonl", a.out / "optsched.jsonl"
    os.environ["SYNERGY_TRACE_LOG"] = str(syn_log)
    os.environ["SYNERGY_EXACT_ITERATIONS"] = "1" if a.exact_iterations else "0"
    synergy_run.DRIVER = Path(__file__).resolve()
    peer = a.out / "peer.json"
    res = synergy_run.run(a.order, a.allocator, a.split, peer, num_jobs=a.num_jobs,
                          workdir=a.out / "work", philly_csv=a.philly_csv)
    jobs = synergy_run.read_jobs(synergy_run.jobs_path(peer))
    trace_optsched(jobs, a.order, a.allocator, str(ours_log), align=a.align)
    print(json.dumps(first_difference(str(syn_log), str(ours_log)))[:2000])
    inst = synergy_run.to_instance(jobs)
    from optsched.synergy import simulate_synergy
    if a.align:
        inst = synergy_run.to_instance(
            [dict(j, arrival=300.0 * math.ceil(j["arrival"] / 300.0)) for j in jobs])
    done = simulate_synergy(inst, a.allocator, a.order).schedule.completion
    rs = res["round_s"]
    grid = [abs(c - rs * math.ceil(done[k] / rs - 1e-9)) <= rs
            for k, (_, c) in res["window_jobs"].items()]
    print(f"within one round on Synergy's grid: {np.mean(grid):.3f} of {len(grid)} jobs")


if __name__ == "__main__":
    if "--home" in sys.argv:  # started by synergy_run.run under Synergy's Python
        peer_main()
    else:
        main()
