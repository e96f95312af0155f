"""Gavel's LAS experiment shape: mean JCT of a steady-state window against the input job
rate, heterogeneity-aware vs -agnostic (and FIFO), continuous Poisson arrivals.

Gavel (OSDI'20, §7.2, "continuous-multiple") draws jobs with its Philly-derived
generator (``generate_philly``: 1/2/4/8 workers, Gavel's 26 job types, run times
``60 * 10**U(1.5, 3)`` s w.p. 0.8 else ``60 * 10**U(3, 4)`` s), submits them as a Poisson
stream at a given rate to 36 V100 + 36 P100 + 36 K80 with 6-minute rounds, and reports
the mean JCT of a window of job ids (its scripts: jobs 4000-5000), sweeping the rate up
to where the agnostic policy saturates; the headline "up to 3.5x" is the aware/agnostic
ratio at the high-load end.

Here: a stream of ``--jobs`` jobs per rate (same seed, so only arrivals change with the
rate), the window ``--window`` of job indices (default jobs 1000-1499 of 2,000: smaller
than Gavel's, for the CPU budget; the table says whether each window job finished before
the stream's last arrival, i.e. while the stream still loaded the cluster). Policies:
``gavel.max_min_fairness`` (LAS, aware), ``gavel.max_min_fairness_agnostic`` and
``gavel.fifo``/``gavel.fifo_agnostic``. Every simulation runs in one process, one after
another; mean/p50/p99 window JCT, the aware/agnostic ratio per rate.

    python benchmarks/gavel_rate.py                          # the committed run (~15 min)
    python benchmarks/gavel_rate.py --single --rates 2 4 5 5.6 6 7 --name gavel_rate_single
    python benchmarks/gavel_rate.py --rates 1 2 --policies gavel.max_min_fairness

The reproduction's claim ``gavel_hetero`` measures the single-GPU curve as a simulation
sweep with a window (``benchmarks/gavel_las_rate.py``, a 12,000-job stream, two seeds);
this script keeps the multi-GPU workload and the 5,500-job single-GPU stream, a different
sample of the same generator.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from common import RESULTS, pyplot, save_figure, write_results

POLICIES = ["gavel.max_min_fairness", "gavel.max_min_fairness_agnostic", "gavel.fifo",
            "gavel.fifo_agnostic"]
SEED = 0


def rate_cell(policy: str, rate: float, jobs: int, window: tuple[int, int],
              seed: int = SEED, max_workers: int | None = None) -> dict[str, Any]:
    """Simulate ``jobs`` generated jobs arriving at ``rate`` jobs/h on gavel-108 under
    ``policy`` and measure the jobs whose index lies in ``window`` = [lo, hi).
    ``max_workers=1`` gives Gavel's continuous-single workload (single-GPU jobs), the
    default its continuous-multiple one (1/2/4/8 workers).

    Returns the window's mean/p50/p99 JCT (h), how many window jobs finished and how
    many finished before the stream's last arrival (the rest ran while the stream no
    longer loaded the cluster: the window mean then underestimates the steady state).
    """
    import time

    from optsched.catalog import generate_philly
    from optsched.registry import simulate
    from optsched.sim.window import Window

    lo, hi = window
    inst = generate_philly(jobs, cluster="gavel-108", seed=seed, jobs_per_hour=rate,
                           max_workers=max_workers,
                           name=f"philly-{jobs}-at-{rate:g}-jobs-per-h")
    # Window's checks and job ids; unlike Window.jcts, the whole stream is simulated and
    # window jobs finishing after the last arrival are kept and counted apart (the
    # committed gavel_rate* results were measured so)
    ids = Window.of(list(window)).ids(inst)
    t0 = time.perf_counter()
    res = simulate(inst, policy, seed=seed, progress=False)
    wall = time.perf_counter() - t0
    done = res.schedule.completion if res.schedule is not None else {}
    arrival = {j.id: j.arrival for j in inst.jobs}
    jct = np.array([done[k] - arrival[k] for k in ids if k in done]) / 3600.0
    last = float(inst.arrivals.max())
    if jct.size == 0:
        raise RuntimeError(f"{policy} at {rate:g} jobs/h: no window job finished")
    return {"policy": policy, "workload": "single" if max_workers == 1 else "multiple",
            "rate": rate, "jobs": jobs, "window": f"{lo}-{hi - 1}",
            "seed": seed, "finished": f"{jct.size}/{len(ids)}",
            "before_last_arrival": int(sum(done.get(k, np.inf) <= last for k in ids)),
            "mean_jct_h": float(jct.mean()), "p50_jct_h": float(np.median(jct)),
            "p99_jct_h": float(np.quantile(jct, 0.99)), "last_arrival_h": last / 3600.0,
            "sim_s": wall}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", nargs="+", type=float,
                    default=[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0])
    ap.add_argument("--policies", nargs="+", default=POLICIES)
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--window", nargs=2, type=int, default=[1000, 1500])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--single", action="store_true",
                    help="continuous-single: single-GPU jobs (default continuous-multiple)")
    ap.add_argument("--name", default="gavel_rate")
    ap.add_argument("--merge", action="store_true",
                    help="keep an earlier run's rows (other rates or policies)")
    args = ap.parse_args()
    window = (args.window[0], args.window[1])
    rows = []
    for rate in args.rates:
        for policy in args.policies:
            rows.append(rate_cell(policy, rate, args.jobs, window, args.seed,
                                  1 if args.single else None))
            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in rows[-1].items()},
                  flush=True)
    if args.merge and (RESULTS / f"{args.name}.json").exists():
        import json

        mine = {(r["policy"], r["rate"]) for r in rows}
        earlier = json.loads((RESULTS / f"{args.name}.json").read_text())["rows"]
        rows = sorted([r for r in earlier if (r["policy"], r["rate"]) not in mine] + rows,
                      key=lambda r: (r["rate"], POLICIES.index(r["policy"])
                                     if r["policy"] in POLICIES else 99))
    by = {(r["policy"], r["rate"]): r for r in rows}
    for r in rows:
        aware = by.get(("gavel.max_min_fairness", r["rate"]))
        agn = by.get(("gavel.max_min_fairness_agnostic", r["rate"]))
        r["las_agnostic_over_aware"] = (agn["mean_jct_h"] / aware["mean_jct_h"]
                                        if aware and agn else None)
    cols = ["policy", "workload", "rate", "jobs", "window", "seed", "finished",
            "before_last_arrival", "mean_jct_h", "p50_jct_h", "p99_jct_h",
            "las_agnostic_over_aware", "last_arrival_h", "sim_s"]
    write_results(args.name, rows, cols,
                  title="Gavel LAS: window mean JCT against the input job rate",
                  params={"generator": "generate_philly (Gavel's Philly-derived jobs, "
                                       + ("single-GPU)" if args.single
                                          else "1/2/4/8 workers)"), "cluster": "gavel-108",
                          "round_s": 360, "jobs": args.jobs, "window": list(window),
                          "seed": args.seed},
                  notes="rate: jobs per hour (Poisson). Window JCTs only; finished: window "
                        "jobs completed; before_last_arrival: window jobs completed while "
                        "the stream was still arriving (when below the window size the "
                        "stream stopped loading the cluster before the window drained, so "
                        "the window mean is an underestimate of the steady state). "
                        "las_agnostic_over_aware: the Gavel claim's ratio at that rate.")
    figure(rows, args.name)


def figure(rows: list[dict], name: str) -> None:
    plt = pyplot()
    if plt is None:
        return
    img = RESULTS / "img"
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for policy in dict.fromkeys(r["policy"] for r in rows):
        pts = sorted((r["rate"], r["mean_jct_h"]) for r in rows if r["policy"] == policy)
        axes[0].plot(*zip(*pts), marker="o", label=policy.removeprefix("gavel."))
    ratio = sorted({(r["rate"], r["las_agnostic_over_aware"]) for r in rows
                    if r["las_agnostic_over_aware"] is not None})
    if ratio:
        axes[1].plot(*zip(*ratio), marker="o", color="k")
    axes[1].axhline(3.5, color="grey", ls="--", lw=0.8, label="paper: up to 3.5x")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("window mean JCT (h)")
    axes[1].set_ylabel("LAS agnostic / aware")
    for ax in axes:
        ax.set_xlabel("input job rate (jobs/h)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    save_figure(fig, img / f"{name}.png")


if __name__ == "__main__":
    main()
