"""How far from optimal against the load: every policy, the certified bound and the best
schedule found, on the first 300 jobs of Gavel's trace.

The policies' mean JCT and the certified lower bound per load come from the committed
sweep ``results/bounds_load`` (``benchmarks/bounds_load.toml``: gavel-108, 6-minute
rounds, arrivals 1-50x faster). For each load this script then searches for a better
schedule: the clairvoyant constructive start (``optsched.sim.lns.fastest_srpt_start``)
and the best policy's simulated schedule, whichever is better, improved by the
large-neighbourhood search (``optsched.sim.lns.improve``) for ``--budget`` CPU seconds.
The optimum lies between the bound and that schedule. Figure: every policy's mean JCT
against the load with the bound (dashed) and the best schedule (dotted) drawn in
(``results/img/gap_load.png``, also ``docs/img/gap_load.png``).

    python benchmarks/gap_load.py                  # 60 CPU s of search per load
    python benchmarks/gap_load.py --budget 5 --loads 1 50
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

from common import RESULTS, pyplot, save_figure, write_results

H = 3600.0


def _sweep() -> dict[float, dict[str, dict]]:
    by_load: dict[float, dict[str, dict]] = {}
    with (RESULTS / "bounds_load" / "results.csv").open() as f:
        for r in csv.DictReader(f):
            by_load.setdefault(float(r["load"]), {})[r["method"]] = r
    return by_load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=60.0, help="CPU seconds of search per load")
    ap.add_argument("--loads", type=float, nargs="*", default=None)
    ap.add_argument("--jobs", type=int, default=300)
    args = ap.parse_args()

    from optsched.catalog import read_trace
    from optsched.core.files import write_bytes
    from optsched.registry import simulate
    from optsched.sim.lns import fastest_srpt_start, improve

    sweep = _sweep()
    loads = sorted(sweep) if args.loads is None else args.loads
    rows = []
    for load in loads:
        cells = sweep[load]
        bound = float(next(iter(cells.values()))["bound_mean_jct"])
        for name, r in sorted(cells.items()):
            rows.append({"load": load, "kind": "policy", "name": name,
                         "mean_jct_h": float(r["mean_jct"]) / H,
                         "gap": float(r["mean_jct"]) / bound})
        rows.append({"load": load, "kind": "bound", "name": "certified lower bound",
                     "mean_jct_h": bound / H, "gap": 1.0})
        inst = read_trace("gavel-philly-2000", "gavel-108", jobs=args.jobs, load=load)
        best_policy = min(cells, key=lambda m: float(cells[m]["mean_jct"]))
        c0 = time.process_time()
        starts = {"lns.fastest_srpt": fastest_srpt_start(inst),
                  best_policy: simulate(inst, best_policy, bounds=False)}
        name, start = min(starts.items(), key=lambda kv: kv[1].metrics.mean_jct)
        res = improve(inst, start, time_limit=args.budget, clock="cpu", seed=0,
                      target=bound)
        cpu = time.process_time() - c0
        rows.append({"load": load, "kind": "search", "name": f"LNS from {name}",
                     "start_h": res.start_value / H, "mean_jct_h": res.value / H,
                     "gap": res.value / bound, "cpu_s": round(cpu, 1),
                     "windows": f"{res.windows_improved}/{res.windows_tried}",
                     "stop": res.stop})
        print(load, best_policy, name, res.start_value / H, res.value / H, bound / H, flush=True)

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    for name in sorted({r["name"] for r in rows if r["kind"] == "policy"}):
        pts = [(r["load"], r["mean_jct_h"]) for r in rows if r["name"] == name]
        ax.plot(*zip(*pts), marker="o", ms=3, lw=1, label=name)
    for kind, style, label in (("search", ":", "best schedule found (LNS)"),
                               ("bound", "--", "certified lower bound")):
        pts = [(r["load"], r["mean_jct_h"]) for r in rows if r["kind"] == kind]
        ax.plot(*zip(*pts), ls=style, color="black", lw=2, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("arrivals sped up by (load)")
    ax.set_ylabel("mean JCT (h)")
    ax.set_title(f"First {args.jobs} jobs of Gavel's trace, gavel-108: the optimum lies "
                 "between the dashed and the dotted line", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    img = save_figure(fig, RESULTS / "img" / "gap_load.png")
    docs_img = Path(__file__).resolve().parent.parent / "docs" / "img" / "gap_load.png"
    write_bytes(docs_img, img.read_bytes())  # atomically, as every result file
    write_results(
        "gap_load", rows,
        ["load", "kind", "name", "start_h", "mean_jct_h", "gap", "cpu_s", "windows", "stop"],
        title=f"How far from optimal against the load: first {args.jobs} jobs of Gavel's trace",
        params={"policies_and_bound": "results/bounds_load (sweep benchmarks/bounds_load.toml)",
                "search": f"optsched.sim.lns.improve, {args.budget:g} CPU s per load, seed 0, "
                          "from the better of fastest_srpt_start and the best policy"},
        notes="gap = mean JCT / certified lower bound. The optimum lies between the bound "
              "and the best schedule found. CPU seconds include simulating both starts.")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
