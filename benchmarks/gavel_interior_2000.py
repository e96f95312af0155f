"""How much an interior optimum changes Gavel's policies on the whole 2,000-job trace.

Gavel's own simulator (stanford-futuredata/gavel ``c4fa400``, ECOS) and optsched disagree
at 2,000 jobs in two aggregate ways that the per-job comparisons at 100 and 300 jobs
(``gavel_rounds_interior*.md``) cannot show:

* the heterogeneity gain of max-min fairness (LAS): mean JCT of the agnostic policy over
  the aware one is 1.85x in Gavel's runs and about 2.0x in optsched's default;
* the makespan policy: Gavel's run aborts at 847 h (an ECOS failure), having finished
  766 jobs; optsched's vertex, every job paced to end at the optimal makespan, has
  finished far fewer by then.

ECOS returns an interior point of each program's optimal face, HiGHS's simplex a vertex.
This benchmark runs optsched on the same instance (``read_gavel_trace()``: the first
2,000 jobs, 36 V100 + 36 P100 + 36 K80, 6-minute rounds, seed 0) with each combination
of the point (``"vertex"``, the default, or ``point="interior"``) and the round mechanism
(the paper's Alg. 1, the default, or Gavel's simulator's, ``rounds="original"``), and
sets the figures beside Gavel's, read from the committed ``gavel_peer.json`` (Gavel's
per-job completions at 2,000 jobs were not kept, so only aggregates are compared).

Every run is written to ``results/gavel_interior_2000.json`` as soon as it ends, and a
restarted benchmark keeps the runs already there (``--fresh`` starts over).

    python benchmarks/gavel_interior_2000.py            # 12 runs, about 20-40 min CPU
    python benchmarks/gavel_interior_2000.py --only max_min_fairness
    python benchmarks/gavel_interior_2000.py --only min_total_duration \
        --settings original+interior alg1+vertex
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from common import RESULTS, machine_info, write_result_file, write_results
from gavel_peer import PEER, PEER_COMMIT

from optsched.catalog import read_gavel_trace
from optsched.registry import get_policy
from optsched.sim import simulate

NAME = "gavel_interior_2000"
H = 3600.0
N = 2000
#: optsched policy -> Gavel's policy of the same program (gavel_peer.PAIRS)
GAVEL_NAME = {"max_min_fairness": "max_min_fairness_perf",
              "max_min_fairness_agnostic": "max_min_fairness",
              "min_total_duration": "min_total_duration_perf"}
#: (rounds, point) in the order they are run and shown
SETTINGS = [("alg1", "vertex"), ("alg1", "interior"), ("original", "vertex"),
            ("original", "interior")]
COLUMNS = ["policy", "gavel_policy", "rounds", "point", "mean_jct_h", "gavel_mean_jct_h",
           "mean_ratio", "makespan_h", "gavel_makespan_h", "done_by_t", "gavel_done_by_t",
           "done_by_t_mean_h", "gavel_done_by_t_mean_h", "allocation_solves",
           "gavel_allocation_solves", "cpu_s"]


def gavel_figures() -> tuple[dict[str, dict], dict]:
    """Gavel's measured aggregates at 2,000 jobs from the committed ``gavel_peer.json``:
    per Gavel policy its row, and the aborted makespan run (finished jobs by then)."""
    peer = json.loads((RESULTS / "gavel_peer.json").read_text())
    if peer["peer_commit"] != PEER_COMMIT:
        raise SystemExit(f"gavel_peer.json is of Gavel {peer['peer_commit']}, "
                         f"not {PEER_COMMIT}")
    rows = {r["gavel_policy"]: r for r in peer["rows"] if int(r["n"]) == N}
    aborted = [r for r in peer["aborted_peer_runs"] if int(r["n"]) == N]
    if len(aborted) != 1:
        raise SystemExit("gavel_peer.json: expected Gavel's one aborted 2,000-job run")
    return rows, aborted[0]


def run(policy: str, rounds: str, point: str, t_cut: float) -> dict:
    """One optsched simulation; aggregates and the jobs finished by ``t_cut``."""
    trace = read_gavel_trace()
    inst = trace.replace(jobs=trace.jobs[:N], name=f"{trace.name}-first{N}")
    options: dict = {}
    if rounds != "alg1":
        options["rounds"] = rounds
    if point != "vertex":
        options["point"] = point
    pol = get_policy(f"gavel.{policy}", **options)
    c0 = time.process_time()
    res = simulate(inst, pol, seed=0, progress=False)
    cpu = time.process_time() - c0
    m = res.metrics
    arrival = {j.id: float(j.arrival) for j in inst.jobs}
    done = [v for j, v in m.jct.items() if arrival[j] + v <= t_cut]
    return {"policy": policy, "gavel_policy": GAVEL_NAME[policy], "rounds": rounds,
            "point": point, "mean_jct_h": m.mean_jct / H, "makespan_h": m.makespan / H,
            "completed": m.n_completed, "done_by_t": len(done),
            "done_by_t_mean_h": float(np.mean(done)) / H if done else None,
            "allocation_solves": res.extra.get("allocation_solves"), "cpu_s": cpu,
            "commit": machine_info()["commit"]}


def gains(rows: list[dict], gavel: dict[str, dict]) -> list[dict]:
    """Agnostic over aware mean JCT per setting, and Gavel's."""
    by = {(r["policy"], r["rounds"], r["point"]): r for r in rows}
    g = float(gavel["max_min_fairness"]["gavel_mean_h"]) / \
        float(gavel["max_min_fairness_perf"]["gavel_mean_h"])
    out = []
    for rounds, point in SETTINGS:
        a = by.get(("max_min_fairness", rounds, point))
        b = by.get(("max_min_fairness_agnostic", rounds, point))
        if a and b:
            out.append({"rounds": rounds, "point": point,
                        "las_gain": b["mean_jct_h"] / a["mean_jct_h"], "gavel_las_gain": g})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", choices=list(GAVEL_NAME), default=list(GAVEL_NAME))
    ap.add_argument("--fresh", action="store_true", help="ignore the runs already recorded")
    ap.add_argument("--settings", nargs="+", default=[f"{r}+{p}" for r, p in SETTINGS],
                    choices=[f"{r}+{p}" for r, p in SETTINGS],
                    help="ROUNDS+POINT settings to run, in this order")
    a = ap.parse_args()
    gavel, aborted = gavel_figures()
    t_cut = float(aborted["gavel_failed_at_h"]) * H
    path = RESULTS / f"{NAME}.json"
    kept = [] if a.fresh or not path.exists() else json.loads(path.read_text())["runs"]
    runs = {(r["policy"], r["rounds"], r["point"]): r for r in kept}
    for policy in a.only:
        for rounds, point in (tuple(x.split("+")) for x in a.settings):
            if (policy, rounds, point) in runs:
                continue
            r = run(policy, rounds, point, t_cut)
            runs[(policy, rounds, point)] = r
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()},
                  flush=True)
            write(list(runs.values()), gavel, aborted)


def write(runs: list[dict], gavel: dict[str, dict], aborted: dict) -> None:
    order = {(p, s): i for i, (p, s) in enumerate(
        (p, s) for p in GAVEL_NAME for s in SETTINGS)}
    runs = sorted(runs, key=lambda r: order[(r["policy"], (r["rounds"], r["point"]))])
    rows = []
    for r in runs:
        if r["gavel_policy"] == aborted["gavel_policy"]:  # compare up to Gavel's abort
            row = {**r, "gavel_done_by_t": int(aborted["gavel_done"]),
                   "gavel_done_by_t_mean_h": float(aborted["gavel_done_mean_h"])}
        else:
            g = gavel[r["gavel_policy"]]
            row = {**r, "gavel_mean_jct_h": float(g["gavel_mean_h"]),
                   "gavel_makespan_h": float(g["gavel_makespan_h"]),
                   "mean_ratio": r["mean_jct_h"] / float(g["gavel_mean_h"]),
                   "gavel_allocation_solves": int(g["gavel_x_computations"])}
        rows.append(row)
    gain = gains(runs, gavel)
    notes = (
        "mean_ratio: optsched / Gavel. done_by_t: jobs finished by t = "
        f"{float(aborted['gavel_failed_at_h']):.1f} h, when Gavel's makespan run aborted "
        "(ECOS SolverError), and their mean JCT; Gavel's mean JCT and makespan of its "
        "max-min runs and its makespan run's partial figures are from the committed "
        "gavel_peer.json (Gavel c4fa400, same jobs). rounds: alg1 = the paper's Alg. 1 "
        "(optsched's default), original = Gavel's simulator's mechanics "
        "(optsched.gavel.policy.OriginalRounds); point: vertex = HiGHS's simplex "
        "(default), interior = point='interior' (max-min: Gavel's program solved by "
        "Clarabel; makespan: HiGHS's interior-point method at the makespan where Gavel's "
        "bisection stops). cpu_s: process CPU seconds of the simulation (shared 2-core "
        "machine). allocation_solves: the allocations computed (Gavel: its "
        "x computations, from gavel_peer.json).\n\nHeterogeneity gain of max-min "
        "fairness, agnostic over aware mean JCT:\n\n"
        "| rounds | point | optsched | Gavel |\n|---|---|---|---|\n"
        + "\n".join(f"| {g['rounds']} | {g['point']} | {g['las_gain']:.3f} | "
                    f"{g['gavel_las_gain']:.3f} |" for g in gain))
    write_results(NAME, rows, COLUMNS,
                  title="Gavel's policies at 2,000 jobs: vertex or interior optimum, "
                        "the paper's rounds or Gavel's, next to Gavel's own runs",
                  params={"peer": PEER, "peer_commit": PEER_COMMIT,
                          "inputs": "first 2,000 jobs of read_gavel_trace(), gavel-108 "
                                    "(36 V100 + 36 P100 + 36 K80), 360 s rounds, seed 0"},
                  notes=notes)
    payload = json.loads((RESULTS / f"{NAME}.json").read_text())
    payload["runs"], payload["las_gain"] = runs, gain
    write_result_file(RESULTS / f"{NAME}.json", json.dumps(payload, indent=1) + "\n")


if __name__ == "__main__":
    main()
