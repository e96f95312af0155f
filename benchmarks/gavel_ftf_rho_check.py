"""Does Gavel's finish-time-fairness allocation solve optsched's program? Allocation by
allocation, under ``rounds="original"``, for each ``isolated_time``.

Both simulators run the first N jobs of Gavel's trace (the inputs of
``benchmarks/gavel_rounds_peer.py``; Gavel's run, with every allocation it computed, is
read from ``--peer-dir`` or made there by that script's runner). Until the first round
whose decision differs, both programs are given the same state at the same instants.
At each such allocation, Gavel's X (ECOS's answer to its own program) is evaluated
under optsched's ratios

    rho_m(X) = (t_m + r_m / thr_m(X)) / d_m

with optsched's inputs (the program's ``T``, ``W``, remaining steps ``r``, elapsed ``t``
and denominators ``d``, recorded from outside as the policy passes them to
``finish_time_fairness``), and compared with optsched's optimum: ``rho_gap`` =
max_m rho_m(X_Gavel) / rho* - 1. The two programs are the same when the gap is within
the bisection's tolerance (1e-4) at every allocation: a gap > 0 says Gavel's answer is
worse under optsched's denominators (they differ from Gavel's), < 0 by more than the
tolerance that optsched's bisection stopped above Gavel's optimum.

    python benchmarks/gavel_ftf_rho_check.py --jobs 100 --peer-dir /work/runs/gavel-trace
"""

from __future__ import annotations

import argparse
from pathlib import Path

import gavel_policies_peer as gp
import gavel_rounds_peer as grp
import numpy as np
from common import write_results

import optsched.gavel.policy as gavel_policy

PAIRS = [("finish_time_fairness_perf", "gavel.finish_time_fairness"),
         ("finish_time_fairness", "gavel.finish_time_fairness_agnostic")]


def _recording(records: list[dict]):
    """Wrap the policy module's finish-time-fairness solvers to record their inputs."""
    saved = {}
    for name in ("finish_time_fairness", "finish_time_fairness_interior"):
        inner = getattr(gavel_policy, name)
        saved[name] = inner

        def wrapped(T, W, c, r, t, isolated_time=None, _inner=inner, **kw):
            sol = _inner(T, W, c, r, t, isolated_time=isolated_time, **kw)
            records.append({"T": np.array(T, float), "W": np.array(W, float),
                            "r": np.array(r, float), "t": np.array(t, float),
                            "d": np.array(isolated_time, float), "rho": sol.objective})
            return sol
        setattr(gavel_policy, name, wrapped)
    return saved


def check(n: int, gname: str, ours: str, isolated_time: str, peer_dir: Path) -> dict:
    g = grp.run_gavel(n, gname, peer_dir)
    types = list(gp.instance(n).cluster.gpu_types)
    records: list[dict] = []
    saved = _recording(records)
    try:
        o = grp.run_ours(n, ours, "original", {"isolated_time": isolated_time})
    finally:
        for name, fn in saved.items():
            setattr(gavel_policy, name, fn)
    if len(records) != len(o["allocations"]):
        raise RuntimeError(f"{len(records)} solves but {len(o['allocations'])} allocations")
    first = grp.first_difference(g, o)
    # up to the first differing round both runs are in the same state at the same instants
    until = (first["first_diff_t_h"] * gp.H + 1e-6 if first["first_diff_t_h"] is not None
             else np.inf)
    g_times = np.array([a[0] for a in g["allocations"]])
    gaps: list[tuple[float, float]] = []
    for (t, ours_x), rec in zip(o["allocations"], records):
        if t > until:
            break
        i = int(np.argmin(np.abs(g_times - t)))
        GX = g["allocations"][i][1]
        ids = list(ours_x)  # the program's job order
        if abs(g_times[i] - t) > 1e-3 or any(j not in GX for j in ids):
            raise RuntimeError(f"no allocation of Gavel's at t = {t} for the same jobs")
        X = np.clip(np.array([[GX[j].get(ty, 0.0) for ty in types] for j in ids]), 0, 1)
        thr = rec["W"] * (rec["T"] * X).sum(axis=1)
        rho_g = float(np.max((rec["t"] + rec["r"] / np.maximum(thr, 1e-300)) / rec["d"]))
        gaps.append((t, rho_g / float(rec["rho"]) - 1.0))
    worst = max(gaps, key=lambda x: abs(x[1])) if gaps else (None, None)
    return {"n": n, "gavel_policy": gname, "ours_policy": ours,
            "isolated_time": isolated_time, "first_diff_round": first["first_diff_round"],
            "first_diff_t_h": first["first_diff_t_h"], "common_allocations": len(gaps),
            "max_abs_rho_gap": abs(worst[1]) if gaps else None,
            "worst_t_h": worst[0] / gp.H if gaps else None,
            "over_1e-3": sum(abs(x) > 1e-3 for _, x in gaps),
            "last_rho_gap": gaps[-1][1] if gaps else None,
            "mean_ratio": o["mean_jct"] / g["mean_jct"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--peer-dir", type=Path, required=True)
    ap.add_argument("--pairs", nargs="+", default=[p for p, _ in PAIRS],
                    choices=[p for p, _ in PAIRS])
    ap.add_argument("--name", default="gavel_ftf_reference_rho")
    args = ap.parse_args()
    rows = []
    for gname, ours in PAIRS:
        if gname not in args.pairs:
            continue
        for iso in gavel_policy.ISOLATED_TIMES:
            row = check(args.jobs, gname, ours, iso, args.peer_dir)
            rows.append(row)
            print(row, flush=True)
    write_results(
        args.name, rows,
        ["n", "gavel_policy", "ours_policy", "isolated_time", "first_diff_round",
         "first_diff_t_h", "common_allocations", "max_abs_rho_gap", "worst_t_h",
         "over_1e-3", "last_rho_gap", "mean_ratio"],
        title="Gavel's finish-time-fairness allocations under optsched's ratios",
        params={"peer": f"{gp.PEER} {gp.PEER_COMMIT} (unmodified; its allocations logged "
                        "by benchmarks/peers/gavel_trace.py)",
                "inputs": f"first {args.jobs} jobs of read_gavel_trace(), gavel-108, 360 s "
                          "rounds, seed 0, optsched with rounds='original'"},
        notes="first_diff_round, first_diff_t_h: the first round whose decision differs "
              "from Gavel's (benchmarks/gavel_rounds_peer.py); common_allocations: the "
              "allocations computed up to it (both runs in the same state). "
              "rho_gap = max_m rho_m(X_Gavel) / rho* - 1 with optsched's inputs and "
              "denominators of that isolated_time (optsched's bisection stops within 1e-4 "
              "of rho*); max_abs_rho_gap the largest |rho_gap| over them (at worst_t_h), "
              "over_1e-3 how many exceed 1e-3, last_rho_gap the gap at the last common "
              "allocation.")


if __name__ == "__main__":
    main()
