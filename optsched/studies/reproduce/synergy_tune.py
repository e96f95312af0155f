"""Claim ``synergy_tune``: Synergy-TUNE vs GPU-proportional."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.plotting import can_plot as _can_plot
from optsched.plotting import jct_cdf
from optsched.studies.reproduce.claim import SEED, Claim, finished

__all__ = ["CLAIM", "run"]


def run(quick: bool, img: Path) -> dict[str, Any]:
    from optsched.synergy import simulate_synergy, synergy_workload

    if quick:
        settings = [((50, 0, 50), 9.0)]
        n = 100
    else:
        settings = [((20, 70, 10), 9.0), ((50, 0, 50), 9.0), ((20, 70, 10), 16.0),
                    ((50, 0, 50), 16.0)]
        n = 600
    best = None
    lines = []
    for split, load in settings:
        inst = synergy_workload(n, "synergy-128", seed=SEED, split=split, jobs_per_hour=load,
                                multigpu=False)
        prop = simulate_synergy(inst, "proportional", "fifo")
        tune = simulate_synergy(inst, "tune", "fifo")
        r = finished(prop).mean_jct / finished(tune).mean_jct
        label = f"{n} jobs, split {'/'.join(map(str, split))}, {load:g} jobs/h"
        lines.append(f"{label}: {r:.2f}x")
        if best is None or r > best[0]:
            best = (r, label, prop, tune)
    assert best is not None  # every claim measures at least one setting
    ratio, label, prop, tune = best
    plots = []
    if _can_plot():
        plots.append(jct_cdf({"GPU-proportional": list(finished(prop).jct.values()),
                                    "Synergy-TUNE": list(finished(tune).jct.values())},
                                   img / "reproduce_synergy_jct_cdf.png",
                                   title=f"Synergy on synergy-128 (FIFO), {label}"))
    return {
        "measured": ratio,
        "measured_text": f"{ratio:.2f}x mean JCT ({label})",
        "instance": "synergy_workload on synergy-128 (16 servers x 8 V100, 24 cores, 500 GB), "
                    "single-GPU jobs, 300 s rounds, FIFO",
        "seed": SEED,
        "notes": "All settings: " + "; ".join(lines) + ". Synergy's 3.4x is on its own "
                 "trace and loads; its simulator is not the one used here (this one is "
                 "optsched.synergy.policy: the same allocators, round by round, each "
                 "round validated). The gain is larger where more jobs are CPU-sensitive "
                 "(image and speech models) than with the language-heavy split.",
        "plots": plots,
    }


CLAIM = Claim("synergy_tune", "Synergy-TUNE vs GPU-proportional: mean JCT", "up to 3.4x", 3.4,
          "Mohan et al., OSDI'22", run, up_to=True,
          full_verdict="same direction, smaller factor")
