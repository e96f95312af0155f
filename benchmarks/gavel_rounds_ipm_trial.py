"""Trial (not an optsched option): how much of the per-job difference left under
``rounds="original"`` for heterogeneity-aware max-min fairness (LAS) comes from which
optimum the LP returns.

Gavel's ``MaxMinFairnessPolicyWithPerf`` solves, with ECOS (an interior-point method),
:math:`\\max \\min_m \\sum_k A_{mk} x_{mk}` over :math:`x \\ge 0`, per-type capacity
:math:`\\sum_m W_m x_{mk} \\le c_k` and row sums :math:`\\sum_k x_{mk} \\le 1`, with a
variable on every (job, type), usable or not, and :math:`A_{mk} = W_m T_{mk} /
\\mathrm{thr}^{prop}_m` (gang rate over the job's rate under the proportional split
:math:`c_k/n` scaled to row sums <= 1); it clips x to [0, 1]. The LP has many optima
when the cluster is lightly loaded, and an interior-point method stops near the centre
of the optimal face where HiGHS's simplex returns a vertex. This trial states that
program in CVXPY (the formula, not Gavel's code) and solves it with Clarabel, another
interior-point solver (ECOS is not installed here), inside optsched's
``gavel.max_min_fairness`` with ``rounds="original"``, against Gavel's own run on the
first 100 jobs of its trace (the run ``benchmarks/gavel_rounds_peer.py`` keeps).

    python benchmarks/gavel_rounds_ipm_trial.py --peer-dir /tmp/gavel-trace
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cvxpy as cp
import gavel_policies_peer as gp
import numpy as np
from common import write_results

from optsched.core.result import Status
from optsched.gavel import policy as gavel_policy
from optsched.gavel.model import LPAllocation


def gavel_form_max_min(view, options) -> LPAllocation:
    T = view.throughput_matrix * view.workers[:, None]  # gang rates, as Gavel's table
    W = view.workers.astype(float)
    c = view.gpus_per_type.astype(float)
    n, K = T.shape
    share = np.tile(c / n, (n, 1))
    share /= share.sum(axis=1).max()
    A = T / (T * share).sum(axis=1)[:, None] * W[:, None]
    x = cp.Variable((n, K))
    prob = cp.Problem(cp.Maximize(cp.min(cp.sum(cp.multiply(A, x), axis=1))),
                      [x >= 0, cp.sum(cp.multiply(np.tile(W[:, None], (1, K)), x), axis=0) <= c,
                       cp.sum(x, axis=1) <= 1])
    prob.solve(solver="CLARABEL")
    return LPAllocation(np.clip(x.value, 0.0, 1.0), prob.value, Status.OPTIMAL, lp_solves=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--peer-dir", type=Path, required=True,
                    help="where benchmarks/gavel_rounds_peer.py kept Gavel's run")
    args = ap.parse_args()
    g = json.loads((args.peer_dir / f"gavel_trace_{args.jobs}_max_min_fairness_perf.json")
                   .read_text())
    rows = []
    for label in ("HiGHS vertex (default)", "Clarabel, Gavel's formulation"):
        if label.startswith("Clarabel"):
            gavel_policy.SOLVERS["max_min_fairness"] = (gavel_form_max_min, False)
        t0 = time.process_time()
        o = gp.run_ours(args.jobs, "gavel.max_min_fairness", {"rounds": "original"})
        row = gp.compare(args.jobs, "max_min_fairness_perf", "gavel.max_min_fairness", g, o)
        row.update(program=label, cpu_s=time.process_time() - t0)
        rows.append(row)
        print(row, flush=True)
    write_results(
        "gavel_rounds_ipm_trial", rows,
        ["n", "program", "mean_ratio", "makespan_ratio", "within_one_round", "within_10pct",
         "cpu_s"],
        title="LAS under Gavel's round mechanics: the LP's vertex or an interior point",
        params={"peer": f"{gp.PEER} {gp.PEER_COMMIT} (unmodified; ECOS)",
                "inputs": f"first {args.jobs} jobs of read_gavel_trace(), gavel-108, 360 s "
                          "rounds, seed 0; optsched's gavel.max_min_fairness, "
                          "rounds='original'",
                "machine_note": "shared machine: CPU seconds, not wall time"},
        notes="A trial, not an optsched option: the Clarabel row swaps the policy's program "
              "for Gavel's formulation solved by Clarabel (cvxpy) in this script only.")


if __name__ == "__main__":
    main()
