"""AlloX benchmark: exact matching vs every heuristic, quality ratio and seconds.

Instances: single-GPU jobs drawn from Gavel's measured profiles with the Philly-derived
duration mixture (``optsched.catalog.generate_philly(max_workers=1)``), all queued at
time 0, on M GPUs split evenly over V100/P100/K80 nodes. For each (n, M) the table gives
the exact optimum of total JCT, each heuristic's ratio to it, and wall seconds (a
heuristic's seconds are its simulation's: :mod:`optsched.allox.heuristics`); the exact ILP
through the HiGHS backend is timed too up to ``--ilp-max`` jobs.

    python benchmarks/allox.py            # full grid, n = 10..500, M = 2..20
    python benchmarks/allox.py --quick    # a small grid
    python benchmarks/allox.py --quick --methods mymod:ect   # a method of your own too

``--methods`` adds methods to the table by name: any method registered on ``allox``
(a plugin's) or ``module:name`` of one of your own (:mod:`optsched.extend`), run
through :func:`optsched.solve` exactly as the shipped ones are compared.
"""

from __future__ import annotations

import argparse
import time

from common import write_results

from optsched import solve
from optsched.allox import exact, jsq, online, sjf, sjf_fastest
from optsched.catalog import generate_philly
from optsched.core.instance import Cluster, Node

TYPES = ("v100", "p100", "k80")


def cluster(m: int) -> Cluster:
    counts = [m // 3 + (1 if i < m % 3 else 0) for i in range(3)]
    return Cluster(tuple(Node(f"{t}-{i}", {t: 1}) for t, c in zip(TYPES, counts)
                         for i in range(c)))


def run(grid: list[tuple[int, int]], seeds: list[int], ilp_max: int,
        methods: list[str] = ()) -> list[dict]:
    rows = []
    for n, m in grid:
        for seed in seeds:
            inst = generate_philly(n, cluster=cluster(m), seed=seed, max_workers=1)
            t = time.perf_counter()
            ex = exact(inst)
            t_exact = time.perf_counter() - t
            row = {"n": n, "M": m, "seed": seed, "exact_mean_jct_h": ex.objective / n / 3600,
                   "exact_s": t_exact, "positions_K": ex.extra["positions"]}
            if n <= ilp_max:
                t = time.perf_counter()
                ilp = exact(inst, algorithm="ilp", backend="highs")
                row["ilp_s"] = time.perf_counter() - t
                row["ilp_agrees"] = abs(ilp.objective - ex.objective) <= 1e-6 * ex.objective
            for h in (online, sjf, sjf_fastest, jsq):
                t = time.perf_counter()
                r = h(inst)
                row[f"{h.__name__}_ratio"] = r.objective / ex.objective
                row[f"{h.__name__}_s"] = time.perf_counter() - t
            for name in methods:  # registered or module:name: the registry runs them
                t = time.perf_counter()
                r = solve(inst, "allox", name)
                row[f"{name}_ratio"] = r.objective / ex.objective
                row[f"{name}_s"] = time.perf_counter() - t
            rows.append(row)
            print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
                  flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ilp-max", type=int, default=100)
    ap.add_argument("--methods", nargs="+", default=[], metavar="NAME",
                    help="further allox methods: registered names or module:name")
    ap.add_argument("--name", default=None, help="result file name (default allox or "
                    "allox_quick)")
    args = ap.parse_args()
    if args.quick:
        grid, seeds = [(10, 2), (50, 5), (100, 10)], [0]
    else:
        grid = [(10, 2), (20, 4), (50, 5), (100, 10), (200, 10), (300, 15), (500, 20)]
        seeds = [0, 1, 2]
    rows = run(grid, seeds, args.ilp_max, args.methods)
    cols = ["n", "M", "seed", "exact_mean_jct_h", "exact_s", "positions_K", "ilp_s",
            "ilp_agrees", "online_ratio", "online_s", "sjf_ratio", "sjf_s",
            "sjf_fastest_ratio", "sjf_fastest_s", "jsq_ratio", "jsq_s",
            *(f"{m}_{c}" for m in args.methods for c in ("ratio", "s"))]
    write_results(args.name or ("allox" + ("_quick" if args.quick else "")), rows, cols,
                  title="AlloX: exact matching vs heuristics "
                        "(total JCT; ratio = heuristic / exact)",
                  params={"grid": grid, "seeds": seeds, "ilp_max": args.ilp_max},
                  notes="Ratios >= 1 by optimality of the matching. `online` re-solves the "
                        "matching at every release (alpha = 1, no cap); with all jobs queued "
                        "at time 0 it equals the exact optimum (ratio 1). The heuristics run "
                        "AlloX's policies in the shared simulator (`optsched.allox.policy`), "
                        "so their seconds include the simulator's calls at every round "
                        "boundary (360 s of simulated time), which change no decision.")


if __name__ == "__main__":
    main()
