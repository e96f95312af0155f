"""Claim ``gavel_hetero``: Gavel: heterogeneity-aware vs -agnostic LAS, on Gavel's curve.

Gavel (Narayanan et al., OSDI'20, §7.2, the "continuous-single" figure) plots the mean
JCT of LAS (max-min fairness) heterogeneity-aware and -agnostic, and of FIFO, against
the input job rate (jobs/h): a continuous Poisson stream of single-GPU jobs from its
Philly-derived generator on its simulated cluster (36 V100 + 36 P100 + 36 K80, 6-minute
rounds), each point the mean JCT of jobs 4000-4999 of the stream
(``scripts/sweeps/run_sweep_continuous.py -s 4000 -e 5000``; the run stops once they
are done). It reports the aware policy up to 3.5x better, at 5.6 jobs/h.

Here the same curve is a simulation sweep (:mod:`optsched.studies.sweep`, a
``[simulate]`` table with ``window = [4000, 5000]``: :data:`CURVE`, also shipped as
``benchmarks/gavel_las_rate.toml``): policies x rates on a 12,000-job prefix of one
seeded stream, every run stopped once the window's jobs are done and refused (status
``window_unfinished``) if one of them is still running at the prefix's last arrival.
The claim's factor is the agnostic/aware mean-JCT ratio at the paper's rate
(:data:`PAPER_RATE`), pooled over seed 0 (the curve) and seed 1 (:data:`CHECKS`: one
seed's factor on the knee of the agnostic curve moves with the stream); the notes give
the ratio at every rate and the checks on the stream's earlier windows. The sweep's cells are
stored next to the report (``OUT/gavel_las_rate/cells.jsonl``), so a report written where
``benchmarks/gavel_las_rate.py`` already ran resumes its cells instead of recomputing
them (likewise ``OUT/gavel_las_rate_checks/``). ``--quick`` measures a shrunken window
at two rates, one seed, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from optsched.plotting import can_plot as _can_plot
from optsched.studies.reproduce.claim import SEED, Claim

__all__ = ["CLAIM", "CURVE", "QUICK_CURVE", "CHECKS", "PAPER_RATE", "POLICIES", "run",
           "curve_table", "las_rate_curve", "paper_rate_checks", "plot_curve"]

#: the rate (jobs/h) at which the paper reports 3.5x for LAS (continuous-single)
PAPER_RATE = 5.6
#: the policies of the curve: (label, registered name)
POLICIES = (("LAS aware", "gavel.max_min_fairness"),
            ("LAS agnostic", "gavel.max_min_fairness_agnostic"),
            ("FIFO aware", "gavel.fifo"), ("FIFO agnostic", "gavel.fifo_agnostic"))

#: the sweep of the full curve (``benchmarks/gavel_las_rate.toml`` is the same config)
CURVE: dict[str, Any] = {
    "name": "gavel-las-rate",
    "seeds": [SEED],
    "simulate": {
        "policies": [p for _, p in POLICIES],
        "traces": ["generate"],
        "jobs": [12000],
        "rates": [0.5, 1.5, 3.0, 4.0, 5.0, 5.6, 6.5, 7.5],
        "window": [4000, 5000],
        "cluster": "gavel-108",
        "trace_options": {"max_workers": 1},
    },
}

#: ``--quick``: LAS only, jobs 200-299 of a 1,400-job stream at 1 and 3 jobs/h (at 5.6
#: jobs/h so short a stream ends before the agnostic window is done); its factor is the
#: one at the higher rate
QUICK_CURVE: dict[str, Any] = {
    "name": "gavel-las-rate-quick",
    "seeds": [SEED],
    "simulate": {**CURVE["simulate"], "policies": [p for _, p in POLICIES[:2]],
                 "jobs": [1400], "rates": [1.0, 3.0], "window": [200, 300]},
}


#: LAS at the paper's rate on other samples of the measurement: another seed on the same
#: window, and the same stream's first windows (the start-up a finite instance sees)
CHECKS: tuple[tuple[int, tuple[int, int]], ...] = ((1, (4000, 5000)), (0, (0, 1000)),
                                                   (0, (1000, 2000)))


def paper_rate_checks(out: str | Path, *, workers: int = 1) -> list[dict[str, Any]]:
    """LAS aware and agnostic at :data:`PAPER_RATE` for each (seed, window) of
    :data:`CHECKS`, run (or resumed) into ``out``: one row each with the window mean JCTs
    (hours) and their ratio."""
    from optsched.studies.sweep import SweepConfig, run_sweep

    got = []
    for seed, window in CHECKS:
        cfg = {**CURVE, "name": f"gavel-las-check-{seed}-{window[0]}", "seeds": [seed],
               "simulate": {**CURVE["simulate"], "policies": [p for _, p in POLICIES[:2]],
                            "rates": [PAPER_RATE], "window": list(window)}}
        rows, _ = run_sweep(SweepConfig.from_dict(cfg), out, workers=workers, progress=False)
        (t,) = curve_table(rows)
        got.append({"seed": seed, "window": f"{window[0]}-{window[1] - 1}",
                    "LAS aware": t["LAS aware"], "LAS agnostic": t["LAS agnostic"],
                    "LAS ratio": t["LAS ratio"]})
    return got


def las_rate_curve(out: str | Path, *, quick: bool = False,
                   workers: int = 1) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run (or resume) the curve's sweep into ``out``; return its rows and
    :func:`curve_table`."""
    from optsched.studies.sweep import SweepConfig, run_sweep

    cfg = SweepConfig.from_dict(QUICK_CURVE if quick else CURVE)
    rows, _ = run_sweep(cfg, out, workers=workers, progress=False)
    return rows, curve_table(rows)


def curve_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per rate: each policy's window mean JCT in hours (``None`` when its
    window did not finish: past saturation), the agnostic/aware ratios of LAS and FIFO,
    and the per-policy status. A ratio needs both JCTs (no ratio over a survivor mean)."""
    label = {p: lab for lab, p in POLICIES}
    by_rate: dict[float, dict[str, Any]] = {}
    for r in rows:
        if r.get("method") not in label or r.get("rate") is None:
            continue
        t = by_rate.setdefault(float(r["rate"]), {"rate": float(r["rate"])})
        lab = label[r["method"]]
        jct = r.get("mean_jct") if r.get("status") == "feasible" else None
        t[lab] = None if jct is None else float(jct) / 3600.0
        t[f"{lab} status"] = r.get("status")
    out = []
    for rate in sorted(by_rate):
        t = by_rate[rate]
        for kind in ("LAS", "FIFO"):
            a, g = t.get(f"{kind} aware"), t.get(f"{kind} agnostic")
            t[f"{kind} ratio"] = g / a if a and g is not None else None
        out.append(t)
    return out


def plot_curve(table: Sequence[Mapping[str, Any]], path: str | Path, *, title: str = "") -> Path:
    """Mean JCT against the rate, one line per policy (left), and the agnostic/aware
    ratios per rate with the paper's 3.5x at 5.6 jobs/h (right)."""
    from optsched.plotting import _mpl, save_figure

    plt = _mpl()
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    for lab, _ in POLICIES:
        pts = [(t["rate"], t[lab]) for t in table if t.get(lab) is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=lab,
                    ls="-" if "aware" in lab else "--")
    ax.set_xlabel("input job rate (jobs/h)")
    ax.set_ylabel("mean JCT of the window (h)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    for kind in ("LAS", "FIFO"):
        pts = [(t["rate"], t[f"{kind} ratio"]) for t in table
               if t.get(f"{kind} ratio") is not None]
        if pts:
            bx.plot(*zip(*pts), marker="o", label=f"{kind} agnostic / aware")
    bx.plot([PAPER_RATE], [3.5], marker="*", ms=12, ls="", color="k",
            label="paper: LAS 3.5x at 5.6 jobs/h")
    bx.axhline(1.0, color="grey", lw=0.8)
    bx.set_xlabel("input job rate (jobs/h)")
    bx.set_ylabel("mean JCT ratio")
    bx.grid(alpha=0.3)
    bx.legend(fontsize=8)
    return save_figure(fig, path, title=title)


def _cause(at: Mapping[float, Mapping[str, Any]], checks: Sequence[Mapping[str, Any]],
           window: str) -> str:
    """Where the factor differs from the paper's and from the previous measurement, in
    the measured numbers (full run)."""
    knee, paper = at.get(5.0, {}), at[PAPER_RATE]
    seeds = ", ".join(f"{_x(c['LAS ratio'])} on seed {c['seed']}" for c in
                      [{"seed": SEED, "LAS ratio": paper["LAS ratio"]},
                       *[c for c in checks if c["window"] == window]])
    early = ", ".join(f"jobs {c['window']} give {_x(c['LAS ratio'])}" for c in checks
                      if c["seed"] == SEED and c["window"] != window)
    return (f"Where the factor differs. From the paper's 3.5x: its rate sits on the knee "
            f"of the agnostic curve (seed {SEED}, 5 -> {PAPER_RATE:g} jobs/h: agnostic "
            f"{_h(knee.get('LAS agnostic'))} -> {_h(paper['LAS agnostic'])}, aware "
            f"{_h(knee.get('LAS aware'))} -> {_h(paper['LAS aware'])}), so the factor there "
            f"depends on where a stream's agnostic saturation falls: {seeds}; the factor "
            "above pools them. Below the knee the agnostic policy gives each job a third "
            "of its time on K80s even on an idle cluster. From the previous measurement "
            "(1.38x on finite instances from an empty cluster, all jobs averaged): on the "
            f"same seed-{SEED} stream at {PAPER_RATE:g} jobs/h, {early}, against "
            f"{_x(paper['LAS ratio'])} for jobs {window}: a finite instance measures the "
            "start-up, before the agnostic queue has built up.")


def _h(v: float | None) -> str:
    return "unfinished" if v is None else f"{v:.1f} h"


def _x(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.2f}x"


def run(quick: bool, img: Path) -> dict[str, Any]:
    cfg = QUICK_CURVE if quick else CURVE
    sim = cfg["simulate"]
    lo, hi = sim["window"]
    _, table = las_rate_curve(img.parent / ("gavel_las_rate_quick" if quick
                                            else "gavel_las_rate"), quick=quick)
    at = {t["rate"]: t for t in table}
    rate = max(sim["rates"]) if quick else PAPER_RATE
    paper = at[rate]
    if paper["LAS ratio"] is None:
        raise RuntimeError(f"LAS at {rate:g} jobs/h: window unfinished "
                           f"(aware {paper.get('LAS aware status')}, agnostic "
                           f"{paper.get('LAS agnostic status')})")
    # the factor at the paper's rate pools every seed measured on the curve's window (equal
    # windows: the ratio of the mean JCTs over all their jobs)
    samples = [(SEED, paper["LAS aware"], paper["LAS agnostic"])]
    checks: list[dict[str, Any]] = []
    if not quick:
        checks = paper_rate_checks(img.parent / "gavel_las_rate_checks")
        samples += [(c["seed"], c["LAS aware"], c["LAS agnostic"]) for c in checks
                     if c["window"] == f"{lo}-{hi - 1}" and c["LAS ratio"] is not None]
    aware = sum(a for _, a, _ in samples) / len(samples)
    agn = sum(g for _, _, g in samples) / len(samples)
    ratio = agn / aware
    seeds = ", ".join(f"seed {s}: {g / a:.2f}x" for s, a, g in samples)
    shape = (f"{'quick: ' if quick else ''}jobs {lo}-{hi - 1} of a {sim['jobs'][0]}-job "
             "Poisson stream of single-GPU jobs (Gavel's generator) on gavel-108 (36 V100 + "
             "36 P100 + 36 K80), 6-minute rounds")
    per_rate = "; ".join(
        f"{t['rate']:g}/h: LAS {_h(t.get('LAS aware'))} vs {_h(t.get('LAS agnostic'))} "
        f"({_x(t.get('LAS ratio'))})"
        + (f", FIFO {_h(t.get('FIFO aware'))} vs {_h(t.get('FIFO agnostic'))} "
           f"({_x(t.get('FIFO ratio'))})" if "FIFO aware" in t else "")
        for t in table)
    plots = []
    if _can_plot():
        plots.append(plot_curve(table, img / "reproduce_gavel_las_rate.png",
                                title=f"Gavel LAS and FIFO against the job rate (seed {SEED}):"
                                      f" {shape}"))
    checked = "; ".join(f"seed {c['seed']}, jobs {c['window']}: LAS {_h(c['LAS aware'])} vs "
                        f"{_h(c['LAS agnostic'])} ({_x(c['LAS ratio'])})" for c in checks)
    full_notes = "" if quick else (
        f" At {PAPER_RATE:g} jobs/h on other samples: {checked}. "
        + _cause(at, checks, f"{lo}-{hi - 1}")
        + " benchmarks/results/gavel_las_rate.md has the table and the sweep's rows; "
        "python benchmarks/gavel_las_rate.py --checks reproduces them.")
    return {
        "measured": ratio,
        "measured_text": f"{ratio:.2f}x window mean JCT at {rate:g} jobs/h (agnostic "
                         f"{agn:.1f} h vs aware {aware:.1f} h; {seeds})",
        "instance": shape,
        "seed": SEED,
        "notes": "Paper's shape: Gavel's continuous-single curve, mean JCT of a "
                 "steady-state window against the input job rate (module "
                 "optsched.studies.reproduce.gavel_hetero; a simulation sweep with a "
                 "measurement window). Policies gavel.max_min_fairness (aware) and "
                 "gavel.max_min_fairness_agnostic (type-symmetric, as Gavel's)"
                 + ("" if quick else ", gavel.fifo and gavel.fifo_agnostic (FIFO: "
                    "Gavel's own agnostic FIFO allocates a stale loop variable, so it is "
                    "V100-first; ours picks types at random, as its docstring intends)")
                 + f". Window mean JCT, aware vs agnostic (ratio), per rate (seed {SEED}): "
                 + per_rate + ". 'unfinished': a window job was still running at the "
                 "stream's last arrival (past saturation; never averaged over the jobs that "
                 "did finish)." + full_notes,
        "bounds_note": ("the measured mean JCT is over a window of jobs (4000-4999) of an endless "
                        "stream, not over every job of an instance, and no certified bound covers a"
                        " window's mean"),
        "plots": plots,
    }


CLAIM = Claim("gavel_hetero", "Gavel heterogeneity-aware vs -agnostic LAS: mean JCT",
              "up to 3.5x", 3.5, "Narayanan et al., OSDI'20", run, up_to=True,
              full_verdict="reproduced")
