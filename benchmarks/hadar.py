"""Hadar benchmark: exact MILP vs online primal-dual, certificate D/P, proved 2*alpha.

Instances: Gavel-profile jobs with the Philly-derived size mixture
(``optsched.catalog.generate_philly``, at most ``--max-workers`` workers), Poisson
arrivals, OASiS-style utilities (``optsched.hadar.assign_utilities``), 30-minute slots, on
one node of 8 GPUs per type (V100/P100/K80), so gangs take at most 2/8 of a bucket and
the small-demand assumption (threshold 1/4) holds; congested rows put single-GPU jobs on
4 GPUs per type. For each size the table gives the
MILP optimum (HiGHS, ``--time-limit`` s), the LP bound, the online utility P, its ratio to
OPT, the certificate D and D/P, and 2*alpha.

A scale row measures the LP bound (build vs solve seconds) and the online run with its
certificate on 1,000 jobs x 100 slots (360 s) on gavel-108.

    python benchmarks/hadar.py            # full grid + scale row
    python benchmarks/hadar.py --quick    # small grid, no scale row
"""

from __future__ import annotations

import argparse
import time

from common import write_results

from optsched.catalog import generate_philly
from optsched.core.instance import Cluster, Node
from optsched.hadar import assign_utilities, competitive_ratio, exact, online

# congested rows: single-GPU jobs on 4 GPUs per type (demand share 1/4), many jobs
CONGESTED = [(40, 16, 4, 1), (80, 16, 4, 1)]


def cluster(per_type: int) -> Cluster:
    return Cluster(tuple(Node(f"{t}-0", {t: per_type}) for t in ("v100", "p100", "k80")))


def instance(n, T, seed, utility, max_workers, per_type=8, slot=1800.0):
    rate = n / (T * slot / 3600.0) * 0.7  # arrivals over the first 70% of the horizon
    inst = generate_philly(n, cluster=cluster(per_type), seed=seed, jobs_per_hour=rate,
                           max_workers=max_workers, slot=slot)
    last = max(inst.arrivals.max() + 1.0, T * slot)
    inst = inst.replace(horizon=last, name=f"hadar-{n}-{T}-s{seed}")
    return assign_utilities(inst, utility, seed=seed)


def run_grid(grid, seeds, utilities, time_limit, max_workers):
    rows = []
    for utility in utilities:
        for n, T, per_type, mw in [(n, T, 8, max_workers) for n, T in grid] + CONGESTED:
            for seed in seeds:
                inst = instance(n, T, seed, utility, mw, per_type=per_type)
                rep = competitive_ratio(inst, slots=T)
                t = time.perf_counter()
                ex = exact(inst, slots=T, time_limit=time_limit, threads=2)
                t_ex = time.perf_counter() - t
                lp = exact(inst, slots=T, relax=True, threads=2)
                on = online(inst, slots=T)
                P, D = on.objective, on.bound
                OPT = ex.objective
                row = {"utility": utility, "gpus_per_type": per_type, "max_workers": mw,
                       "n": n, "T": T, "seed": seed,
                       "milp_status": ex.status.value, "OPT": OPT,
                       "milp_gap": ex.gap, "milp_s": t_ex, "LP": lp.bound,
                       "lp_s": lp.seconds, "P": P,
                       "P_over_OPT": P / OPT if OPT else None, "D": D,
                       "D_over_P": D / P if P else None,
                       "D_over_OPT": D / OPT if OPT else None,
                       "two_alpha": rep.ratio, "assumptions_hold": rep.holds,
                       "admitted": on.extra["admitted"],
                       "online_s": on.extra["online_seconds"],
                       "cert_s": on.extra["certificate_seconds"]}
                rows.append(row)
                print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
                      flush=True)
    return rows


def run_scale(n=1000, T=100, seed=0, utility="sigmoid"):
    inst = assign_utilities(generate_philly(n, "gavel-108", seed=seed, jobs_per_hour=90.0),
                            utility, seed=seed)
    rep = competitive_ratio(inst, slots=T)
    lp = exact(inst, slots=T, relax=True, threads=2)
    on = online(inst, slots=T)
    row = {"utility": utility, "n": n, "T": T, "seed": seed, "LP": lp.bound,
           "lp_status": lp.status.value, "lp_build_s": lp.build_seconds,
           "lp_solve_s": lp.solve_seconds, "lp_columns": lp.extra["columns"],
           "lp_rows": lp.extra["rows"], "P": on.objective, "D": on.bound,
           "D_over_P": on.extra["D_over_P"], "P_over_LP": on.objective / lp.bound,
           "two_alpha": rep.ratio, "assumptions_hold": rep.holds,
           "admitted": on.extra["admitted"], "online_s": on.extra["online_seconds"],
           "online_ms_per_job": 1000 * on.extra["seconds_per_job"],
           "cert_s": on.extra["certificate_seconds"]}
    print(row, flush=True)
    return [row]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--max-workers", type=int, default=2)
    args = ap.parse_args()
    if args.quick:
        grid, seeds, utilities = [(10, 12), (20, 16)], [0], ["sigmoid"]
    else:
        grid = [(10, 12), (20, 16), (40, 24)]
        seeds = [0, 1]
        utilities = ["sigmoid", "step"]
    rows = run_grid(grid, seeds, utilities, args.time_limit, args.max_workers)
    cols = ["utility", "gpus_per_type", "max_workers", "n", "T", "seed", "milp_status", "OPT",
            "milp_gap", "milp_s", "LP",
            "lp_s", "P", "P_over_OPT", "D", "D_over_P", "D_over_OPT", "two_alpha",
            "assumptions_hold", "admitted", "online_s", "cert_s"]
    name = "hadar" + ("_quick" if args.quick else "")
    write_results(name, rows, cols,
                  title="Hadar: exact MILP vs online primal-dual (total utility; "
                        "certificate D >= OPT)",
                  params={"grid": grid, "seeds": seeds, "utilities": utilities,
                          "time_limit": args.time_limit, "max_workers": args.max_workers,
                          "cluster": "1 node x 8 GPUs per type (V100/P100/K80)",
                          "slot_s": 1800},
                  notes="P/OPT >= 1/(2 alpha) and D/P <= 2 alpha are OASiS Thm. 4 "
                        "(assumptions listed per row); D >= OPT holds by weak duality. "
                        "OPT is the MILP incumbent (status column; time_limit rows carry "
                        "their gap).")
    if not args.quick:
        srows = run_scale()
        scols = ["utility", "n", "T", "seed", "LP", "lp_status", "lp_build_s", "lp_solve_s",
                 "lp_columns", "lp_rows", "P", "D", "D_over_P", "P_over_LP", "two_alpha",
                 "assumptions_hold", "admitted", "online_s", "online_ms_per_job", "cert_s"]
        write_results("hadar_scale", srows, scols,
                      title="Hadar at scale: LP bound and online run, 1,000 jobs x 100 slots "
                            "on gavel-108",
                      params={"n": 1000, "T": 100, "slot_s": 360, "cluster": "gavel-108",
                              "jobs_per_hour": 90, "threads": 2},
                      notes="LP bound = projected LP relaxation (HiGHS, interior point). "
                            "Jobs that cannot finish alone within 100 slots get no "
                            "variables.")


if __name__ == "__main__":
    main()
