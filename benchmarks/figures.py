"""The pictures of the documentation site (docs/img/), regenerated from scratch.

* ``gantt_exact_vs_heuristic.png``: AlloX's 4-job talk example, the exact schedule (and
  the talk's equally optimal one) next to SJF's;
* ``jct_cdf.png`` and ``utilization.png``: Gavel's heterogeneity-aware vs -agnostic
  max-min fairness in the simulator on the first 100 jobs of Gavel's trace;
* ``sweep_seconds.png``: solve time against instance size from a small sweep.

The plotting helpers are :mod:`optsched.studies.reproduce` (Gantt, CDF, utilisation overlays,
built on :mod:`optsched.plotting`) and :func:`optsched.studies.sweep.plot_sweep`.

    python benchmarks/figures.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from optsched import allox
from optsched.allox.workload import talk_instance, talk_schedule
from optsched.catalog import read_gavel_trace
from optsched.plotting import gantt_by_device, jct_cdf, utilization
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.studies.sweep import SweepConfig, plot_sweep, run_sweep

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    inst = talk_instance()
    print(gantt_by_device(inst, {"exact (matching)": allox.exact(inst).schedule,
                             "exact (the talk's tie)": talk_schedule(),
                             "heuristic: SJF": allox.sjf(inst).schedule},
                      IMG / "gantt_exact_vs_heuristic.png",
                      title="AlloX talk example: exact vs heuristic"))

    trace = read_gavel_trace()
    trace = trace.replace(jobs=trace.jobs[:100], name=f"{trace.name}-first100")
    runs = {"heterogeneity-aware": simulate(trace, get_policy("max_min_fairness"),
                                            progress=False),
            "heterogeneity-agnostic": simulate(trace, get_policy("max_min_fairness_agnostic"),
                                               progress=False)}
    title = f"Gavel max-min fairness, {trace.name} on gavel-108"
    print(jct_cdf({k: list(r.metrics.jct.values()) for k, r in runs.items()},
                        IMG / "jct_cdf.png", title=title))
    print(utilization({k: r.schedule for k, r in runs.items()},
                           trace.cluster.total_gpus, IMG / "utilization.png", title=title))

    cfg = SweepConfig.from_dict({"name": "docs", "models": ["allox", "synergy"],
                                 "methods": {"allox": ["exact", "online", "sjf"],
                                             "synergy": ["exact", "tune"]},
                                 "sizes": [8, 16, 32, 64], "seeds": [0, 1, 2]})
    with tempfile.TemporaryDirectory() as tmp:
        rows, _ = run_sweep(cfg, tmp, workers=2, progress=False)
    print(plot_sweep(rows, "wall_seconds", IMG / "sweep_seconds.png", logy=True,
                     title="wall seconds per cell (mean and min-max over 3 seeds)"))


if __name__ == "__main__":
    main()
