"""Claim ``gavel_hetero``: Gavel: heterogeneity-aware vs -agnostic LAS.

Gavel's experiment shape (OSDI'20 §7.2): jobs from its Philly-derived generator arrive
as a Poisson stream at a swept input rate (jobs/h) on 36 V100 + 36 P100 + 36 K80 with
6-minute rounds; the mean JCT of a window of job ids (its scripts: jobs 4000-5000) is
plotted against the rate. "Up to 3.5x" is the agnostic/aware LAS ratio of the
continuous-single workload (single-GPU jobs) at 5.6 jobs/h (2.2x for continuous-multiple
at 2.6 jobs/h). The full run measures that shape: single-GPU jobs, :data:`RATES`, the
window :data:`WINDOW` of a :data:`STREAM`-job stream. :func:`rate_cell` is also what
``benchmarks/gavel_rate.py`` runs (with FIFO and the multi-GPU workload).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from optsched.plotting import can_plot as _can_plot
from optsched.studies.reproduce.claim import SEED, Claim

__all__ = ["CLAIM", "run", "rate_cell", "RATES", "STREAM", "WINDOW"]

#: Input rates of the full run (jobs/h), a stream of STREAM jobs, measured on WINDOW
#: (Gavel's jobs 4000-4999), single-GPU jobs (continuous-single)
RATES = (2.0, 4.0, 5.6, 7.0)
STREAM = 5500
WINDOW = (4000, 5000)
#: The rate of the paper's 3.5x (continuous-single): the measured factor is the one there
PAPER_RATE = 5.6
AWARE, AGNOSTIC = "gavel.max_min_fairness", "gavel.max_min_fairness_agnostic"


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
    from optsched.errors import InvalidOption
    from optsched.registry import simulate

    lo, hi = window
    if not 0 <= lo < hi <= jobs:
        raise InvalidOption("window", window, f"must satisfy 0 <= lo < hi <= jobs = {jobs}")
    inst = generate_philly(jobs, cluster="gavel-108", seed=seed, jobs_per_hour=rate,
                           max_workers=max_workers,
                           name=f"philly-{jobs}-at-{rate:g}-jobs-per-h")
    t0 = time.perf_counter()
    res = simulate(inst, policy, seed=seed, progress=False)
    wall = time.perf_counter() - t0
    done = res.schedule.completion if res.schedule is not None else {}
    ids = [j.id for j in inst.jobs[lo:hi]]
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


def run(quick: bool, img: Path) -> dict[str, Any]:
    rates, jobs, window = ((2.0, 5.6), 300, (100, 200)) if quick else (RATES, STREAM, WINDOW)
    cells = {(p, r): rate_cell(p, r, jobs, window, max_workers=1)
             for r in rates for p in (AWARE, AGNOSTIC)}
    ratio = {r: cells[(AGNOSTIC, r)]["mean_jct_h"] / cells[(AWARE, r)]["mean_jct_h"]
             for r in rates}
    top = max(rates)
    at = PAPER_RATE if PAPER_RATE in ratio else max(rates, key=lambda r: ratio[r])
    lines = [f"{r:g}/h: aware {cells[(AWARE, r)]['mean_jct_h']:.1f} h, agnostic "
             f"{cells[(AGNOSTIC, r)]['mean_jct_h']:.1f} h, {ratio[r]:.2f}x" for r in rates]
    drained = [f"{r:g}/h {p.removeprefix('gavel.')}: {c['before_last_arrival']}/"
               f"{window[1] - window[0]}" for (p, r), c in cells.items()
               if c["before_last_arrival"] < window[1] - window[0]]
    knee = [r for r in rates if ratio[r] >= 3.5]
    plots = []
    if _can_plot():
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        for p, label in ((AWARE, "heterogeneity-aware LAS"),
                         (AGNOSTIC, "heterogeneity-agnostic LAS")):
            ax.plot(rates, [cells[(p, r)]["mean_jct_h"] for r in rates], marker="o",
                    label=label)
        ax.set_xlabel("input job rate (jobs/h)")
        ax.set_ylabel(f"mean JCT of jobs {window[0]}-{window[1] - 1} (h)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("Gavel LAS on gavel-108, continuous arrivals", fontsize=9)
        fig.tight_layout()
        path = img / "reproduce_gavel_rate.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        plots.append(path)
    return {
        "measured": ratio[at],
        "measured_text": f"{ratio[at]:.2f}x window mean JCT at {at:g} jobs/h (agnostic "
                         f"{cells[(AGNOSTIC, at)]['mean_jct_h']:.3g} h vs aware "
                         f"{cells[(AWARE, at)]['mean_jct_h']:.3g} h); {ratio[top]:.2f}x at "
                         f"{top:g} jobs/h",
        "instance": f"continuous-single: generate_philly stream of {jobs} single-GPU jobs "
                    f"at {', '.join(f'{r:g}' for r in rates)} jobs/h on gavel-108 "
                    f"(36 V100 + 36 P100 + 36 K80), jobs {window[0]}-{window[1] - 1} measured",
        "seed": SEED,
        "notes": "Paper's shape: mean JCT of a window of job ids against the input job "
                 "rate, continuous Poisson arrivals, Gavel's Philly-derived single-GPU jobs "
                 "(continuous-single, where the paper's 3.5x is, at 5.6 jobs/h), "
                 "gavel-108, 6-minute rounds (module "
                 "optsched.studies.reproduce.gavel_hetero; benchmarks/gavel_rate.py adds "
                 "FIFO). Policies gavel.max_min_fairness (LAS, aware) and "
                 "gavel.max_min_fairness_agnostic (type-symmetric, as Gavel's). Per rate: "
                 + "; ".join(lines) + ". The factor is taken at the paper's rate, 5.6 jobs/h; "
                 + (f"it reaches 3.5x at {knee[0]:g} jobs/h, past the knee of our agnostic "
                    "curve: the agnostic policy saturates at a higher rate here than in "
                    "the paper's figure, so the same factor appears at a higher load. "
                    if knee else "it stays below 3.5x at every rate measured. ")
                 + "Window jobs that finished while the stream was still arriving, where "
                 "not all did (the others finished while the cluster drained, so the "
                 "window mean understates the steady state): "
                 + ("; ".join(drained) or "all did") + ". Past the "
                 "agnostic policy's saturation its queue, and so the window's JCT, grows "
                 "with the job index, so the factor depends on where the window sits "
                 "(benchmarks/results/gavel_rate_single*.md: 5.6 jobs/h, jobs 1000-1499 "
                 "of 2,000: 1.74x; jobs 4000-4999 of 5,500: 2.56x).",
        "plots": plots,
    }


CLAIM = Claim("gavel_hetero", "Gavel heterogeneity-aware vs -agnostic LAS: mean JCT",
          "up to 3.5x", 3.5, "Narayanan et al., OSDI'20", run, up_to=True,
          full_verdict="same direction, smaller factor")
