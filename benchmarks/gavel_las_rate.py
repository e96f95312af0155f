"""Gavel's continuous-single curve: mean JCT of a steady-state window against the job rate.

Gavel (OSDI'20 §7.2) plots LAS heterogeneity-aware and -agnostic (and FIFO) against the
input job rate on its simulated cluster (36 V100 + 36 P100 + 36 K80, 6-minute rounds),
each point the mean JCT of jobs 4000-4999 of a continuous Poisson stream of single-GPU
jobs, and reports the aware LAS 3.5x better at 5.6 jobs/h. The curve is the simulation
sweep ``benchmarks/gavel_las_rate.toml`` (= ``optsched.studies.reproduce.gavel_hetero.CURVE``):

    python benchmarks/gavel_las_rate.py [--workers 2] [--checks]
    # the same cells:
    optsched sweep benchmarks/gavel_las_rate.toml --out benchmarks/results/gavel_las_rate

Outputs: ``results/gavel_las_rate/{cells.jsonl,results.csv}`` (the sweep's tidy table, one
row per policy x rate; resumable: a second run computes nothing),
``results/gavel_las_rate.{md,json}`` (one row per rate: the four window mean JCTs and the
agnostic/aware ratios) and ``results/img/gavel_las_rate.png``. ``--checks`` adds LAS at
5.6 jobs/h on seed 1 (jobs 4000-4999) and on seed 0's earlier windows (jobs 0-999 and
1000-1999) in ``results/gavel_las_rate_checks/``.
"""

from __future__ import annotations

import argparse
import time

from common import RESULTS, markdown_table, write_results

from optsched.studies.reproduce.gavel_hetero import (
    CURVE,
    PAPER_RATE,
    POLICIES,
    las_rate_curve,
    paper_rate_checks,
    plot_curve,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--checks", action="store_true",
                    help="also LAS at 5.6 jobs/h on seed 1 and on the windows 0-999, 1000-1999")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, table = las_rate_curve(RESULTS / "gavel_las_rate", workers=args.workers)
    cpu = sum(r["wall_seconds"] or 0.0 for r in rows)
    sim = CURVE["simulate"]
    lo, hi = sim["window"]
    labels = [lab for lab, _ in POLICIES]
    cols = ["rate", *labels, "LAS ratio", "FIFO ratio"]
    notes = [
        f"Mean JCT (hours) of jobs {lo}-{hi - 1} of a {sim['jobs'][0]}-job Poisson stream "
        f"of single-GPU jobs (Gavel's Philly-derived generator, seed {CURVE['seeds'][0]}; "
        "the same jobs at every rate, only the arrivals scale), gavel-108 (36 V100 + 36 "
        "P100 + 36 K80), 6-minute rounds; each run stops once the window's jobs are done. "
        "Ratios: agnostic / aware. '-' in a JCT column: a window job was still running at "
        "the stream's last arrival (status window_unfinished, past saturation): no mean "
        "over the jobs that finished. Gavel measures the same window of an endless "
        "stream (run_sweep_continuous.py -s 4000 -e 5000); the paper's LAS point is 3.5x "
        f"at {PAPER_RATE:g} jobs/h. Gavel's own agnostic FIFO allocates a stale loop "
        "variable (V100-first, not random): gavel.fifo_agnostic picks types at random.",
        f"Cell seconds (sum of the sweep's wall_seconds, two cells at a time on a 2-core "
        f"machine shared with other jobs): {cpu:.0f} s; this run {time.perf_counter() - t0:.0f}"
        " s (cells already in results/gavel_las_rate/cells.jsonl are not recomputed).",
        "Statuses: " + "; ".join(f"{r['method']} {r['rate']:g}/h {r['status']}" for r in rows
                                 if r["status"] != "feasible") if any(
            r["status"] != "feasible" for r in rows) else "Every cell's window finished.",
    ]
    if args.checks:
        (paper,) = [t for t in table if t["rate"] == PAPER_RATE]
        crows = [{"seed": CURVE["seeds"][0], "window": f"{lo}-{hi - 1}",
                  "LAS aware": paper["LAS aware"], "LAS agnostic": paper["LAS agnostic"],
                  "LAS ratio": paper["LAS ratio"]},
                 *paper_rate_checks(RESULTS / "gavel_las_rate_checks", workers=args.workers)]
        same = [c for c in crows if c["window"] == f"{lo}-{hi - 1}" and c["LAS ratio"]]
        pooled = (sum(c["LAS agnostic"] for c in same) / sum(c["LAS aware"] for c in same))
        notes += [f"LAS at {PAPER_RATE:g} jobs/h on another seed and on earlier windows of "
                  "the same stream (hours; results/gavel_las_rate_checks/); pooled over "
                  f"the seeds on jobs {lo}-{hi - 1}: {pooled:.2f}x (the reproduction's "
                  "factor):",
                  markdown_table(crows, ["seed", "window", "LAS aware", "LAS agnostic",
                                         "LAS ratio"])]
    plot_curve(table, RESULTS / "img" / "gavel_las_rate.png",
               title="Gavel continuous-single: window mean JCT against the job rate")
    write_results("gavel_las_rate", table, cols,
                  title="Gavel LAS and FIFO, heterogeneity-aware vs -agnostic, against the "
                        "input job rate (steady-state window)",
                  params={"config": "benchmarks/gavel_las_rate.toml", "window": f"{lo}-{hi - 1}",
                          "jobs": sim["jobs"][0], "rates": sim["rates"],
                          "seed": CURVE["seeds"][0]},
                  notes="\n\n".join(notes) + "\n\n![curve](img/gavel_las_rate.png)")
    print(markdown_table(table, cols))


if __name__ == "__main__":
    main()
