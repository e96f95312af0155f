"""Claim ``hadare_vs_hadar``: HadarE vs Hadar: cluster resource utilisation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.studies.reproduce._hadar import hadar_plots, hadar_runs
from optsched.studies.reproduce.claim import SEED, Claim, run_gaps

__all__ = ["CLAIM", "run"]


def run(quick: bool, img: Path) -> dict[str, Any]:
    inst, runs = hadar_runs(quick)
    e, h = runs["HadarE"].metrics, runs["Hadar"].metrics
    ratio = e.cru / h.cru
    return {
        "measured": ratio,
        "measured_text": f"{ratio:.2f}x CRU ({e.cru:.3f} vs {h.cru:.3f}); total time "
                         f"{h.makespan / e.makespan:.2f}x shorter",
        "instance": f"{inst.name}: {inst.n_jobs} jobs, {inst.cluster.gpus_per_type}, "
                    "30-min rounds",
        "seed": SEED,
        "notes": "CRU = busy GPU-seconds / (GPUs x makespan). HadarE and Hadar run in the "
                 "shared simulator as HadarEPolicy (optsched.hadare.simulate_pair) and "
                 "differ only by "
                 "forking: HadarE offers every idle GPU to a copy of an admitted unfinished "
                 "job. Only HadarE's abstract is public; optsched.hadare.model states our "
                 "reading (copies per node, additive progress, consolidation cost).",
        # CRU has no bound (a ratio of busy time to makespan); total time and utility do
        "bounds": run_gaps(inst, runs, ("makespan", "utility"), inst.name),
        "bounds_note": "CRU itself has no certified bound; the total time and utility do",
        "plots": hadar_plots(inst, runs, img, ["HadarE", "Hadar"], "hadare_hadar"),
    }


CLAIM = Claim("hadare_vs_hadar", "HadarE vs Hadar: cluster resource utilisation (CRU)", "1.45x",
          1.45, "Sultana et al., HadarE", run, full_verdict="larger factor")
