"""Claim ``tiresias_vs_fifo``: Tiresias (2D-LAS / 2D-Gittins) vs FIFO.

Tiresias (Gu et al., NSDI'19, §6) measures its policies against YARN-CS on a production
trace from Microsoft's Philly clusters. The full run's headline is that experiment's
shape: the Philly trace (``read_philly_trace``, Jeon et al., ATC'19) on the cluster of
Tiresias' public simulator (``tiresias-n256g8``: 256 x 8 P100), its first
:data:`PRODUCTION_JOBS` jobs with arrivals :data:`PRODUCTION_LOAD` times faster. At the
recorded arrivals no job ever waits on 2,048 GPUs and every policy gives the same JCTs
(``benchmarks/results/philly_scale.md``), so that measures nothing; the load factor
stands in for the paper's busier cluster. The other settings (Tiresias' own 60-job
trace, Philly-derived synthetic jobs on 16 GPUs) are reported beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from optsched.core.instance import Cluster, Node
from optsched.plotting import can_plot as _can_plot
from optsched.plotting import jct_cdf
from optsched.studies.reproduce.claim import SEED, Claim, finished, run_gaps

__all__ = ["CLAIM", "PRODUCTION_JOBS", "PRODUCTION_LOAD", "run"]

#: the production setting: the first jobs of the Philly trace, arrivals divided by the load
PRODUCTION_JOBS = 20_000
PRODUCTION_LOAD = 6.0


def run(quick: bool, img: Path) -> dict[str, Any]:
    from optsched.catalog import (
        cluster_preset,
        generate_philly,
        read_philly_trace,
        read_tiresias_trace,
    )
    from optsched.registry import get_policy
    from optsched.sim import simulate

    production = (f"Philly trace, first {PRODUCTION_JOBS:,} jobs at {PRODUCTION_LOAD:g}x "
                  "arrivals on tiresias-n256g8 (2,048 P100)")
    small = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(2)))
    traces = [("tiresias-60 on 2x4 P100", read_tiresias_trace(cluster=small))]
    if not quick:
        c16 = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(4)))
        traces = [(production, read_philly_trace(cluster="tiresias-n256g8",
                                                 jobs=PRODUCTION_JOBS, load=PRODUCTION_LOAD)),
                  *traces,
                  ("tiresias-60 on n32g4 (128 P100)",
                   read_tiresias_trace(cluster=cluster_preset("tiresias-n32g4")))]
        traces += [(f"philly-240 on 4x4 P100 at {jph:g} jobs/h",
                    generate_philly(240, cluster=c16, seed=SEED, jobs_per_hour=jph))
                   for jph in (1.0, 2.0)]
    best = None
    lines = []
    gaps: list[dict[str, Any]] = []
    for label, inst in traces:
        runs = {p: simulate(inst, get_policy(p), seed=SEED, progress=False)
                for p in ("fifo_yarn", "tiresias_las", "tiresias_gittins")}
        fifo = finished(runs["fifo_yarn"]).mean_jct
        gaps += run_gaps(inst, runs, ("mean_jct",), label)
        for p in ("tiresias_las", "tiresias_gittins"):
            r = fifo / finished(runs[p]).mean_jct
            lines.append(f"{label}: {p} {r:.2f}x")
            # the headline: the better Tiresias policy on the first setting (the
            # production trace in the full run)
            if label == traces[0][0] and (best is None or r > best[0]):
                best = (r, label, p, runs)
    assert best is not None  # every claim measures at least one setting
    ratio, label, pol, runs = best
    plots = []
    if _can_plot():
        plots.append(jct_cdf({k: list(finished(v).jct.values()) for k, v in runs.items()},
                                   img / "reproduce_tiresias_jct_cdf.png",
                                   title=f"Tiresias vs FIFO, {label}"))
    return {
        "measured": ratio,
        "measured_text": f"{ratio:.2f}x mean JCT ({pol}, {label})",
        "instance": "; ".join(t[0] for t in traces), "seed": SEED,
        "notes": "FIFO = tiresias.yarn_fifo, YARN-CS as in Tiresias' paper and simulator "
                 "(arrival order, no preemption, a head job that does not fit blocks the "
                 "queue, MS-YARN first-fit placement); 2D-LAS keeps a queue's running jobs "
                 "ahead of its waiting ones. Both take the same decisions as Tiresias' "
                 "simulator on its 60-job trace and agree within 0.4 % on the Philly-derived "
                 "jobs (benchmarks/results/tiresias_peer.md). All ratios: "
                 + "; ".join(lines) + ". The headline is the production trace (Tiresias' "
                 "own experiment shape); at the trace's recorded arrivals no job waits on "
                 "2,048 GPUs and all three policies give the same JCTs "
                 "(benchmarks/results/philly_scale.md), so arrivals are compressed "
                 f"{PRODUCTION_LOAD:g}x. On 128 GPUs the 60-job trace never queues and every "
                 "policy is identical. The synthetic Philly-derived jobs on 16 GPUs give "
                 "larger factors than the production trace: the generator's heavy-tailed "
                 "GPU-time is what attained-service policies exploit.",
        "bounds": gaps,
        "plots": plots,
    }


CLAIM = Claim("tiresias_vs_fifo", "Tiresias (2D-LAS / 2D-Gittins) vs FIFO: mean JCT",
          "up to 5.5x", 5.5, "Gu et al., NSDI'19", run, up_to=True,
          full_verdict="same direction, smaller factor")
