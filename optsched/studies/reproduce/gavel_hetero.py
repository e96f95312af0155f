"""Claim ``gavel_hetero``: Gavel: heterogeneity-aware vs -agnostic LAS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.plotting import can_plot as _can_plot
from optsched.plotting import jct_cdf, utilization
from optsched.studies.reproduce.claim import SEED, Claim, finished

__all__ = ["CLAIM", "run"]


def run(quick: bool, img: Path) -> dict[str, Any]:
    from optsched.catalog import generate_philly, read_gavel_trace
    from optsched.registry import get_policy
    from optsched.sim import simulate

    trace = read_gavel_trace()
    n = 60 if quick else 400
    insts = [trace.replace(jobs=trace.jobs[:n], name=f"{trace.name}-first{n}")]
    if not quick:
        insts += [generate_philly(300, cluster="gavel-108", seed=SEED, jobs_per_hour=jph,
                                  name=f"philly-300-at-{jph:g}-jobs-per-h")
                  for jph in (4.0, 8.0)]
    best, lines = None, []
    for inst in insts:
        res = {p: simulate(inst, get_policy(p), seed=SEED, progress=False)
               for p in ("max_min_fairness", "max_min_fairness_agnostic")}
        aware, agn = finished(res["max_min_fairness"]), finished(res["max_min_fairness_agnostic"])
        r = agn.mean_jct / aware.mean_jct
        lines.append(f"{inst.name}: {r:.2f}x")
        if best is None or r > best[0]:
            best = (r, inst, res)
    assert best is not None  # every claim measures at least one setting
    ratio, inst, res = best
    aware, agn = finished(res["max_min_fairness"]), finished(res["max_min_fairness_agnostic"])
    plots = []
    if _can_plot():
        plots.append(jct_cdf(
            {"heterogeneity-aware LAS": list(aware.jct.values()),
             "heterogeneity-agnostic LAS": list(agn.jct.values())},
            img / "reproduce_gavel_jct_cdf.png", title=f"Gavel max-min fairness, {inst.name}"))
        plots.append(utilization(
            {"heterogeneity-aware LAS": aware.schedule,
             "heterogeneity-agnostic LAS": agn.schedule},
            inst.cluster.total_gpus, img / "reproduce_gavel_utilization.png",
            title=f"Gavel max-min fairness, {inst.name}"))
    return {
        "measured": ratio,
        "measured_text": f"{ratio:.2f}x mean JCT (agnostic {agn.mean_jct / 3600:.3g} h vs "
                         f"aware {aware.mean_jct / 3600:.3g} h)",
        "instance": f"{inst.name} on gavel-108 (36 V100 + 36 P100 + 36 K80)",
        "seed": SEED,
        "notes": "Policies max_min_fairness vs max_min_fairness_agnostic (Gavel's LAS) in "
                 "the round-based simulator, gavel-108, 6-minute rounds. All instances: "
                 + "; ".join(lines) + ". Gavel's 3.5x is measured at high steady-state "
                 "load on a continuous-arrival trace (jobs/h swept, a window of job ids); "
                 "here the first jobs of its static 2,000-job trace and, in the full run, "
                 "its Philly-derived generator at 4 and 8 jobs/h are used, without a "
                 "steady-state window; at these loads the gap stays well below 3.5x.",
        "plots": plots,
    }


CLAIM = Claim("gavel_hetero", "Gavel heterogeneity-aware vs -agnostic LAS: mean JCT",
          "up to 3.5x", 3.5, "Narayanan et al., OSDI'20", run, up_to=True,
          full_verdict="same direction, smaller factor")
