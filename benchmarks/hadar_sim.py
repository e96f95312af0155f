"""Hadar vs Gavel in the simulator: the Philly-derived Gavel trace on gavel-108.

Trace: Gavel's Philly-derived trace (``read_gavel_trace()``, first ``--jobs`` jobs),
gavel-108 (36 V100 + 36 P100 + 36 K80), 6-minute rounds. Policies: Hadar
(``optsched.hadar.policy.HadarPolicy``), Gavel max-min fairness (heterogeneity-aware LAS)
and Gavel's makespan policy (``min_total_duration``).

Hadar maximises utility, so the jobs get a JCT-sensitive utility (the trace has none):
``f_j(d) = 1 / (1 + exp(gamma2 (d - gamma3)))`` with ``gamma3 = 2 m_j`` (twice the job's
exclusive run time on its fastest type) and ``gamma2 = 2 / gamma3``; Gavel's policies
ignore it. Reported: total time duration (makespan), mean JCT, utility, and the ratios
Gavel / Hadar (the paper reports 1.20x total time vs Gavel; 2.5x mean JCT in the IPDPS
version).

    python benchmarks/hadar_sim.py --jobs 300
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from common import write_results

from optsched.catalog import read_gavel_trace
from optsched.core.instance import Utility
from optsched.hadar.policy import HadarPolicy
from optsched.registry import get_policy
from optsched.sim import simulate


def with_jct_utility(inst):
    jobs = []
    for j in inst.jobs:
        g3 = 2.0 * j.min_duration()
        jobs.append(replace(j, utility=Utility("sigmoid", gamma1=1.0, gamma2=2.0 / g3,
                                               gamma3=g3)))
    return inst.replace(jobs=tuple(jobs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--retry-every", type=int, default=20)
    ap.add_argument("--max-window", type=int, default=1500)
    ap.add_argument("--quanta", type=int, default=120)
    ap.add_argument("--policies", default="hadar,max_min_fairness,min_total_duration")
    args = ap.parse_args()
    inst = read_gavel_trace()
    inst = inst.replace(jobs=inst.jobs[:args.jobs], name=f"{inst.name}-first{args.jobs}")
    inst = with_jct_utility(inst)
    rows = []
    for name in args.policies.split(","):
        pol = (HadarPolicy(inst, quanta=args.quanta, retry_every=args.retry_every,
                           max_window=args.max_window)
               if name == "hadar" else get_policy(name))
        t = time.perf_counter()
        res = simulate(inst, pol, progress=False)
        wall = time.perf_counter() - t
        m = res.metrics
        row = {"policy": name, "jobs": inst.n_jobs, "completed": m.n_completed,
               "mean_jct_h": m.mean_jct / 3600, "p50_jct_h": m.p50_jct / 3600,
               "makespan_h": m.makespan / 3600, "utility": m.utility, "cru": m.cru,
               "preemptions": res.extra.get("total_preemptions"),
               "admitted": res.extra.get("admitted"), "rejections": res.extra.get("rejections"),
               "policy_s": res.extra.get("policy_seconds"), "wall_s": wall}
        rows.append(row)
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)
    by = {r["policy"]: r for r in rows}
    notes = []
    if "hadar" in by:
        h = by["hadar"]
        for g in ("max_min_fairness", "min_total_duration"):
            if g in by:
                notes.append(f"{g}/hadar: makespan {by[g]['makespan_h'] / h['makespan_h']:.3f}x, "
                             f"mean JCT {by[g]['mean_jct_h'] / h['mean_jct_h']:.3f}x, "
                             f"utility {by[g]['utility'] / h['utility']:.3f}x")
    cols = ["policy", "jobs", "completed", "mean_jct_h", "p50_jct_h", "makespan_h", "utility",
            "cru", "preemptions", "admitted", "rejections", "policy_s", "wall_s"]
    write_results(f"hadar_sim_{args.jobs}", rows, cols,
                  title=f"Hadar vs Gavel, first {args.jobs} jobs of the Philly-derived Gavel "
                        "trace on gavel-108",
                  params={"jobs": args.jobs, "round_s": 360, "cluster": "gavel-108",
                          "retry_every": args.retry_every, "quanta": args.quanta,
                          "max_window": args.max_window,
                          "utility": "sigmoid gamma1=1, gamma3=2 m_j, gamma2=2/gamma3"},
                  notes="Ratios (>1: Hadar better): " + "; ".join(notes) + ". Paper: 1.20x "
                        "total time vs Gavel (arXiv 2503.10918), 2.5x mean JCT (IPDPS'24).")


if __name__ == "__main__":
    main()
