"""Gavel's policy LPs: optsched against Gavel's own code, side by side in one run.

The state is the LP a policy solves at a reset event with n active jobs: the first n jobs
of Gavel's 2,000-job Philly-derived trace (``read_gavel_trace()``), all active, weights 1,
remaining work = total work, cluster gavel-108 (36 V100 + 36 P100 + 36 K80).

Gavel's side: its own policy classes (``utils.get_policy(name, solver="ECOS")``, its
default solver) and their ``get_allocation`` with the scheduler's signature, run under
Gavel's interpreter in a subprocess; a fresh policy object per call, the whole call timed
(CVXPY build, canonicalisation, ECOS; for the makespan its bisection, which stops when
the bracket is within 5 %). Gang throughputs are passed as Gavel's simulator sees them
(workers x per-worker rate, the ``'null'`` entry of its table). The checkout comes from
``GAVEL_HOME`` and the interpreter from ``GAVEL_PYTHON``; without them the script says so
and stops.

optsched's side: :func:`optsched.gavel.exact.max_min_fairness` (per-job LP and the
default class-aggregated one, with the simulator's greedy Pareto fill),
:func:`~optsched.gavel.exact.min_total_duration` (the one LP over every job, and the
default: classes of one throughput row with generated per-job time rows),
:func:`~optsched.gavel.exact.finish_time_fairness` (bisection on rho, each check one LP
or, by default, the makespan's class LPs; every job just arrived, t = 0, as Gavel's
``times_since_start``) and :func:`~optsched.gavel.exact.max_sum_throughput` (per job and
over classes), HiGHS, the whole call timed. The two sides alternate call by call (one of
Gavel's, then one of each of ours, per repetition; medians over the repetitions), so a
change of the machine's load during the run reaches both. At the largest size the
makespan is also profiled: the one LP's build and HiGHS time under simplex (the
default), interior point with and without crossover, and the default path's LP count,
classes and generated rows.
Optima are compared on each side's own X: max-min value min_m sum_k a_mk X_mk, makespan
max_m r_m / thr_m(X), finish-time fairness max_m iso_m / thr_m(X), total throughput
sum_m thr_m(X). Gavel's cost policies are left out: its code maximises sum T/p X, not the
paper's throughput per dollar that optsched's ``min_cost`` solves, so no optimum is shared.

    GAVEL_HOME=... GAVEL_PYTHON=... python benchmarks/gavel_lp_peer.py [--sizes 100 400 2000]
        [--reps 7]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from common import write_results

from optsched.catalog import read_gavel_trace
from optsched.gavel.model import normalised_rates

glp = importlib.import_module("optsched.gavel.exact")  # the module, not exact()

PEER_COMMIT = "c4fa40097339e9608ab71fd64c8bdea96a5e4a4c"

#: Runs under Gavel's interpreter with cwd = GAVEL_HOME/scheduler: reads the state JSON,
#: prints its versions, then answers one request per line ({"policy", "n", "x"}) with
#: one timed get_allocation (a fresh policy object, as Gavel's scheduler makes one).
DRIVER = r"""
import json, sys, time
import numpy as np
import cvxpy, ecos
import utils
from job_id_pair import JobIdPair
state = json.load(open(sys.argv[1]))
types = state["types"]
cluster = {t: int(c) for t, c in zip(types, state["capacity"])}
print(json.dumps({"cvxpy": cvxpy.__version__, "ecos": ecos.__version__,
                  "numpy": np.__version__, "python": sys.version.split()[0]}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    n, name = req["n"], req["policy"]
    ids = [JobIdPair(i, None) for i in range(n)]
    thr = {j: dict(zip(types, state["gang_T"][i])) for i, j in enumerate(ids)}
    sf = {j: int(state["workers"][i]) for i, j in enumerate(ids)}
    w = {j: 1.0 for j in ids}
    rem = {j: float(state["remaining"][i]) for i, j in enumerate(ids)}
    pol = utils.get_policy(name, solver="ECOS", seed=0)
    out = {"seconds": None, "X": None, "error": None}
    t0 = time.perf_counter()
    try:
        if name.startswith("max_min_fairness"):
            a = pol.get_allocation(thr, sf, w, dict(cluster))
        elif name.startswith("finish_time_fairness"):
            a = pol.get_allocation(thr, sf, w, {j: 0.0 for j in ids}, rem, dict(cluster))
        elif name.startswith("max_sum_throughput"):
            a = pol.get_allocation(thr, sf, dict(cluster))
        else:
            a = pol.get_allocation(thr, sf, rem, dict(cluster))
        out["seconds"] = time.perf_counter() - t0
        if req["x"]:
            out["X"] = [[float(a[j][t]) for t in types] for j in ids]
    except Exception as e:
        out["error"] = repr(e)
    print(json.dumps(out), flush=True)
"""


class Gavel:
    """Gavel's side as a child process under its own interpreter, one call per request,
    so that its calls and ours alternate."""

    def __init__(self, st: dict):
        home, python = os.environ["GAVEL_HOME"], os.environ["GAVEL_PYTHON"]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(st, f)
        self.state_file = f.name
        self.proc = subprocess.Popen([python, "-c", DRIVER, f.name], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     cwd=Path(home) / "scheduler")
        self.versions = json.loads(self._line())

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"Gavel's driver exited (code {self.proc.wait()})")
        return line

    def call(self, policy: str, n: int, x: bool) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"policy": policy, "n": n, "x": x}) + "\n")
        self.proc.stdin.flush()
        return json.loads(self._line())

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()
        os.unlink(self.state_file)


GAVEL = {"max_min_fairness": "max_min_fairness_perf",
         "max_min_fairness_agnostic": "max_min_fairness",
         "min_total_duration": "min_total_duration_perf",
         "finish_time_fairness": "finish_time_fairness_perf",
         "max_sum_throughput": "max_sum_throughput_perf"}


def state(sizes: list[int]) -> dict:
    inst = read_gavel_trace()
    n = max(sizes)
    T = inst.throughput_matrix[:n]
    W = inst.workers[:n].astype(float)
    return {"types": list(inst.cluster.gpu_types), "sizes": sizes,
            "capacity": inst.cluster.capacity.sum(axis=0).tolist(),
            "T": T.tolist(), "gang_T": (W[:, None] * T).tolist(), "workers": W.tolist(),
            "remaining": inst.work[:n].astype(float).tolist(),
            "policies": [GAVEL[p] for p in GAVEL]}


def value(policy: str, X, T, W, c, r, gavel_formula: bool = False) -> float:
    """The policy's objective at ``X``; ``gavel_formula``: max-min normalised as Gavel's
    code does (equal share c_k / sum c on *every* type, usable or not; agnostic: T = 1 on
    every type), which differs from ours only for jobs that cannot use some type."""
    X = np.asarray(X, float)
    thr = W * (T * X).sum(axis=1)
    if policy == "min_total_duration":
        return float(np.max(r / thr))
    if policy == "max_sum_throughput":
        return float(thr.sum())
    if policy == "finish_time_fairness":
        # every job just arrived (t = 0): rho_m = (r_m / thr_m) / (r_m / iso_m)
        if gavel_formula:   # Gavel's isolated share: c_k / n / W_m on every type
            Xi = c[None, :] / len(W) / W[:, None]
            Xi /= np.maximum(Xi.sum(axis=1), 1.0)[:, None]
        else:
            Xi = glp.isolated_share(T, W, c)
        return float(np.max(W * (T * Xi).sum(axis=1) / thr))
    if gavel_formula:
        Te = np.ones_like(T) if policy.endswith("_agnostic") else T
        P = (Te * c).sum(axis=1) / c.sum()
        return float((W * (Te * X).sum(axis=1) / P).min())
    A = normalised_rates(T, W, c, agnostic=policy.endswith("_agnostic"))
    return float((A * X).sum(axis=1).min())


def ours(policy: str, T, W, c, r, aggregate: bool):
    if policy == "min_total_duration":
        return glp.min_total_duration(T, W, c, r, aggregate=aggregate)
    if policy == "finish_time_fairness":
        return glp.finish_time_fairness(T, W, c, r, np.zeros(len(r)), aggregate=aggregate)
    if policy == "max_sum_throughput":
        return glp.max_sum_throughput(T, W, c, aggregate=aggregate)
    return glp.max_min_fairness(T, W, c, agnostic=policy.endswith("_agnostic"),
                                pareto="greedy", aggregate=aggregate)


def makespan_profile(T, W, c, r, reps: int) -> str:
    """Where the makespan's time goes: the one LP under HiGHS' methods (build = our
    model and passModel, solve = run), and the default aggregated path."""
    parts = []
    for label, opts in (("simplex", {}), ("ipm", {"solver": "ipm"}),
                        ("ipm_no_crossover", {"solver": "ipm", "run_crossover": "off"})):
        runs = []
        for _ in range(reps):
            t0 = time.perf_counter()
            sol = glp.min_total_duration(T, W, c, r, aggregate=False, options=opts)
            runs.append((time.perf_counter() - t0, sol.result.build_seconds,
                         sol.result.solve_seconds))
        tot, build, solve = np.median(np.array(runs), axis=0)
        parts.append(f"one LP {label}: {tot:.3g} s (LP build + passModel {build:.3g} s, "
                     f"HiGHS run {solve:.3g} s)")
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        sol = glp.min_total_duration(T, W, c, r)
        runs.append((time.perf_counter() - t0, sol.result.solve_seconds))
    tot, solve = np.median(np.array(runs), axis=0)
    parts.append(f"aggregated: {tot:.3g} s, {sol.lp_solves} LP(s) of {sol.info['classes']} "
                 f"classes + {sol.info['own_time_rows']} jobs with their own time row "
                 f"(last HiGHS run {solve:.3g} s)")
    return "; ".join(parts)


def max_min_profile(T, W, c, reps: int) -> str:
    """Where the default max-min call's time goes: HiGHS, our LP build, the rest."""
    parts = []
    for label, agnostic in (("max-min", False), ("agnostic max-min", True)):
        runs = []
        for _ in range(reps):
            t0 = time.perf_counter()
            sol = glp.max_min_fairness(T, W, c, agnostic=agnostic, pareto="greedy")
            runs.append((time.perf_counter() - t0, sol.result.build_seconds,
                         sol.result.solve_seconds))
        tot, build, solve = np.median(np.array(runs), axis=0)
        parts.append(f"{label} aggregated: {tot:.3g} s = HiGHS run {solve:.3g} s (last of "
                     f"{sol.lp_solves} LP(s), {sol.info['classes']} classes) + LP build and "
                     f"passModel {build:.3g} s + the rest {tot - solve - build:.3g} s")
    return "; ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 400, 2000])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    if not (os.environ.get("GAVEL_HOME") and os.environ.get("GAVEL_PYTHON")):
        print("GAVEL_HOME / GAVEL_PYTHON not set (Gavel's checkout and its interpreter): "
              "skipped.", file=sys.stderr)
        return
    st = state(args.sizes)
    load0 = os.getloadavg()
    peer = Gavel(st)
    Tall, Wall = np.array(st["T"]), np.array(st["workers"])
    c, rall = np.array(st["capacity"], float), np.array(st["remaining"])
    rows = []
    variants = [("per_job", False), ("aggregated", True)]
    try:
        for n in args.sizes:
            for policy, gavel_policy in GAVEL.items():
                T, W, r = Tall[:n], Wall[:n], rall[:n]
                times: dict[str, list[float]] = {"gavel": [], "per_job": [], "aggregated": []}
                gavel_X, error, sols = None, None, {}
                # one repetition = one call of each, in turn, so both see the same load
                for rep in range(args.reps):
                    got = peer.call(gavel_policy, n, x=rep == 0)
                    error = error or got["error"]
                    if got["seconds"] is not None:
                        times["gavel"].append(got["seconds"])
                    if rep == 0:
                        gavel_X = got["X"]
                    for label, agg in variants:
                        t0 = time.perf_counter()
                        sols[label] = ours(policy, T, W, c, r, agg)
                        times[label].append(time.perf_counter() - t0)
                row = {"policy": policy, "gavel_policy": gavel_policy, "jobs": n,
                       "gavel_ecos_s": float(np.median(times["gavel"])) if times["gavel"]
                       else None, "gavel_error": error}
                for label, _ in variants:
                    row[f"ours_{label}_s"] = t = float(np.median(times[label]))
                    if row["gavel_ecos_s"]:
                        row[f"speedup_{label}"] = row["gavel_ecos_s"] / t
                sol = sols["aggregated"]
                row["ours_value"] = value(policy, sol.X, T, W, c, r)
                row["ours_value_gavel_formula"] = value(policy, sol.X, T, W, c, r, True)
                if gavel_X is not None:
                    row["gavel_value"] = value(policy, gavel_X, T, W, c, r)
                    row["gavel_value_gavel_formula"] = value(policy, gavel_X, T, W, c, r, True)
                    row["rel_diff"] = (abs(row["ours_value"] - row["gavel_value"])
                                       / row["gavel_value"])
                rows.append(row)
                print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
                      flush=True)
    finally:
        peer.close()
    n = max(args.sizes)
    profile = makespan_profile(Tall[:n], Wall[:n], c, rall[:n], args.reps)
    mm_profile = max_min_profile(Tall[:n], Wall[:n], c, args.reps)
    print(profile, mm_profile, sep="\n", flush=True)
    short = [f"{r['policy']} {r['speedup_aggregated']:.3g}x" for r in rows
             if r["jobs"] == n and r.get("speedup_aggregated") is not None
             and r["speedup_aggregated"] < 10]
    load1 = os.getloadavg()
    v = peer.versions
    write_results(
        "gavel_lp_vs_peer", rows,
        ["policy", "jobs", "gavel_ecos_s", "ours_per_job_s", "speedup_per_job",
         "ours_aggregated_s", "speedup_aggregated",
         "gavel_value", "ours_value", "rel_diff", "gavel_value_gavel_formula",
         "ours_value_gavel_formula"],
        title="Gavel's policy LPs: optsched (HiGHS) vs Gavel's own code (CVXPY + ECOS)",
        params={"peer": f"stanford-futuredata/gavel {PEER_COMMIT}",
                "peer_env": f"Python {v['python']}, cvxpy {v['cvxpy']}, ECOS {v['ecos']}, "
                            f"numpy {v['numpy']}",
                "repetitions": f"median of {args.reps}",
                "state": "first n jobs of the 2,000-job trace, all active, gavel-108",
                "loadavg_1min_start_end": (round(load0[0], 2), round(load1[0], 2)),
                f"makespan_profile_{n}_jobs": profile,
                f"max_min_profile_{n}_jobs": mm_profile,
                f"below_10x_at_{n}_jobs": ", ".join(short) or "none"},
        notes="gavel_ecos_s: Gavel's get_allocation (fresh policy object; CVXPY build + "
              "ECOS; makespan: its bisection from [100, 1e6] s until the bracket is within "
              "5 %; finish-time fairness: one convex program with inv_pos, every job at "
              "t = 0). finish_time_fairness ours: bisection on rho to 1e-4, per-job LPs or "
              "(aggregated) the makespan's class LPs per check; its value max_m iso_m / "
              "thr_m(X) (lower is better) with our isolated share or Gavel's (c_k / n / W_m "
              "on every type). max_sum_throughput: sum_m thr_m(X) (higher is better). "
              "ours_per_job_s: one row per job as Gavel writes it; ours_aggregated_s: "
              "identical jobs as one class (exact, the default of optsched.gavel.exact and, "
              "for max-min, of the simulator); max-min both "
              "with the simulator's greedy Pareto fill, the agnostic one with its "
              "type-symmetric split; makespan per job: one LP (max common rate), "
              "aggregated: jobs of one throughput row as one class, per-job time rows "
              "generated where they bind (the same optimum). speedup = Gavel / ours "
              "(below 1: "
              "Gavel's code is faster). Values: max-min min_m sum_k a_mk X_mk (higher is "
              "better), makespan max_m r_m/thr_m(X) in seconds (lower is better) from each "
              "side's own X, under our normalisation (gavel_value, ours_value) and under "
              "Gavel's (*_gavel_formula). Gavel's equal share is c_k / sum c on every type, "
              "ours c_k / n on the types a job can use (rows scaled to at most 1); with n >= "
              "sum c and every type usable the two differ by one constant factor, so they "
              "rank allocations alike. They rank differently for jobs that cannot use a "
              "type (40 of the 2,000 have no K80 rate) when n < sum c (here at 100 jobs), "
              "and in the agnostic LP, where Gavel also counts the unusable type as "
              "throughput 1; each side's X is optimal for its own formula. Gavel's makespan "
              "X is the feasibility point at the smallest T its bisection tried, so it is "
              "within 5 % of the optimum, not at it. Target: the default (aggregated) path "
              "at least 10x faster than Gavel's code at the largest size; below_10x lists "
              "the policies under it in this run, and the profiles say where the time goes "
              "(medians over the repetitions). The sides alternate: each repetition makes one "
              "call of Gavel's (in its own process) and then one of each of ours, so "
              "both see the machine's load of the same moments.")


if __name__ == "__main__":
    main()
