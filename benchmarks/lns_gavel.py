"""Large-neighbourhood search on Gavel's 2,000-job trace (gavel-108, 6-minute rounds):
how close to the certified lower bound on the mean JCT a schedule gets, and how fast.

1. Start candidates, each simulated once: the shipped policies that are best for mean
   JCT on this trace (gavel.max_min_fairness, the best in ``simulate_gavel``; Tiresias'
   LAS and SRTF; Gittins, worst of these on the first 120 and 300 jobs, is left out to
   save CPU) and the constructive starts: heterogeneity-aware SRPT
   (``optsched.sim.lns.fastest_srpt_start``) and the LP-guided starts of
   :mod:`optsched.sim.lns_lp_start` (the interval LP's type per job, then area-SRPT or
   the LP completion order).
2. The search (:func:`optsched.sim.lns.improve`) from the best start for ``--budget``
   CPU seconds, and from the best shipped policy for a quarter of it.
3. The certified bound (:func:`optsched.sim.bounds.lower_bounds`) with its defaults (the
   figure ``optsched simulate`` prints), with a wider interval-LP window (the same
   theorem, a larger LP), and the same with busy-time tangents (``tangents``): the gap
   is reported against the defaults and against the best of them.

Everything is timed in CPU seconds of this process (``time.process_time``); wall times
are recorded but inflated on a shared machine. ``--bound-from NAME`` takes the tight
bound from a committed ``bounds_scale.py`` result (``results/NAME.json``, its
``(bound)`` row, computed by the same code with its CPU seconds there) instead of
solving it again; ``--policies`` (none: ``--policies``) chooses the shipped starts.

    python benchmarks/lns_gavel.py [--jobs N] [--budget S] [--tangents M]
        [--share-min T] [--share-weight G] [--policies NAME ...] [--bound-from NAME]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from common import RESULTS, pyplot, save_figure, write_results

POLICIES = ("gavel.max_min_fairness", "tiresias.las", "tiresias.srtf")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2000)
    ap.add_argument("--budget", type=float, default=240.0, help="CPU seconds of the main run")
    ap.add_argument("--wide-window-h", type=float, default=1000.0)
    ap.add_argument("--wide-intervals", type=int, default=36)
    ap.add_argument("--tangents", type=int, default=2,
                    help="busy-time tangents of the wide bound")
    ap.add_argument("--squash", type=int, default=1,
                    help="squashed-area tangent points of the wide bound")
    ap.add_argument("--plain", action="store_true",
                    help="also the wide bound without tangents and squashed rows")
    ap.add_argument("--share-min", type=float, default=0.15,
                    help="share_min of the LP-guided starts")
    ap.add_argument("--share-weight", type=float, default=1.0,
                    help="share_weight of the LP-guided area-SRPT start")
    ap.add_argument("--policies", nargs="*", default=list(POLICIES),
                    help="shipped policies simulated as starts")
    ap.add_argument("--bound-from", default=None,
                    help="take the tight bound from committed results/NAME.json "
                         "(bounds_scale.py) instead of solving it")
    ap.add_argument("--guide-tangents", type=int, default=0,
                    help="tangents of the LP that guides the LP-guided starts")
    ap.add_argument("--name", default="lns_gavel")
    args = ap.parse_args()

    from optsched.catalog import read_trace
    from optsched.registry import simulate
    from optsched.sim.bounds import lower_bounds
    from optsched.sim.lns import fastest_srpt_start, improve
    from optsched.sim.lns_lp_start import lp_guide, lp_guided_start

    inst = read_trace("gavel-philly-2000", "gavel-108", jobs=args.jobs)
    H = 3600.0
    c0 = time.process_time()
    bound = lower_bounds(inst)
    b_cpu = time.process_time() - c0
    rows: list[dict] = [
        {"kind": "bound", "name": f"lower_bounds defaults ({bound.source['mean_jct']})",
         "mean_jct_h": bound.mean_jct / H, "cpu_s": round(b_cpu, 1)}]
    b, bw = bound.mean_jct, bound.mean_jct
    configs = [(args.tangents, args.squash)] + ([(0, 0)] if args.plain else [])
    if args.bound_from:
        import json

        res_b = json.loads((RESULTS / f"{args.bound_from}.json").read_text())
        row_b = next(r for r in res_b["rows"] if r["policy"] == "(bound)")
        bw = max(bw, row_b["mean_jct_h"] * H)
        rows.append({"kind": "bound", "name": f"{row_b['mean_jct_from']}, "
                                              f"{row_b['options']} (from results/"
                                              f"{args.bound_from}, commit "
                                              f"{res_b['machine']['commit']})",
                     "mean_jct_h": row_b["mean_jct_h"], "cpu_s": row_b["cpu_s"],
                     "note": f"peak RSS {row_b['peak_rss_mib']} MiB"})
        print(rows[-1], flush=True)
        configs = []
    for tg, sq in configs:
        c0 = time.process_time()
        wide = lower_bounds(inst, methods=("per_job", "interval_lp"),
                            window=args.wide_window_h * H, intervals=args.wide_intervals,
                            tangents=tg, squash=sq, max_columns=10**7, time_limit=1800.0)
        w_cpu = time.process_time() - c0
        bw = max(bw, wide.mean_jct)
        rows.append({"kind": "bound", "name": f"interval_lp, window {args.wide_window_h:g} h, "
                                              f"{args.wide_intervals} intervals, tangents {tg}, "
                                              f"squash {sq} ({wide.source['mean_jct']})",
                     "mean_jct_h": wide.mean_jct / H, "cpu_s": round(w_cpu, 1),
                     "note": str(wide.extra.get("interval_lp", wide.skipped))})
        print(rows[-1], flush=True)
    starts = {}
    for name in args.policies:
        c0, t0 = time.process_time(), time.perf_counter()
        res = simulate(inst, name, bounds=False)
        starts[name] = res
        rows.append({"kind": "start", "name": name, "mean_jct_h": res.metrics.mean_jct / H,
                     "gap": res.metrics.mean_jct / b, "gap_wide": res.metrics.mean_jct / bw,
                     "cpu_s": round(time.process_time() - c0, 1),
                     "wall_s": round(time.perf_counter() - t0, 1)})
        print(rows[-1], flush=True)
    c0, t0 = time.process_time(), time.perf_counter()
    cons = fastest_srpt_start(inst)
    starts["lns.fastest_srpt"] = cons
    rows.append({"kind": "start", "name": "lns.fastest_srpt (constructive)",
                 "mean_jct_h": cons.metrics.mean_jct / H, "gap": cons.metrics.mean_jct / b,
                 "gap_wide": cons.metrics.mean_jct / bw,
                 "cpu_s": round(time.process_time() - c0, 1),
                 "wall_s": round(time.perf_counter() - t0, 1)})
    print(rows[-1], flush=True)
    c0 = time.process_time()
    guide = lp_guide(inst, window=args.wide_window_h * H, intervals=args.wide_intervals,
                     tangents=args.guide_tangents, time_limit=1200.0)
    g_cpu = time.process_time() - c0
    print(f"LP guide {guide.lp}, {g_cpu:.1f} s CPU", flush=True)
    for order in ("srpt", "completion"):
        c0, t0 = time.process_time(), time.perf_counter()
        res = lp_guided_start(inst, order=order, guide=guide, share_min=args.share_min,
                              share_weight=args.share_weight if order == "srpt" else 0.0)
        name = f"lns.lp_guided ({order})"
        starts[name] = res
        rows.append({"kind": "start", "name": f"{name}, LP type per job (constructive)",
                     "mean_jct_h": res.metrics.mean_jct / H, "gap": res.metrics.mean_jct / b,
                     "gap_wide": res.metrics.mean_jct / bw,
                     "cpu_s": round(time.process_time() - c0 + g_cpu, 1),
                     "wall_s": round(time.perf_counter() - t0, 1),
                     "note": f"CPU includes the guide LP's {g_cpu:.1f} s ({guide.lp})"})
        print(rows[-1], flush=True)
    shipped = min(args.policies, key=lambda n: starts[n].metrics.mean_jct) \
        if args.policies else None
    best = min(starts, key=lambda n: starts[n].metrics.mean_jct)
    runs = [(best, args.budget)]
    if shipped is not None and shipped != best:
        runs.append((shipped, args.budget / 4))
    curves = {}
    for name, budget in runs:
        start = starts[name]
        print(f"search from {name} for {budget:g} CPU s", flush=True)
        res = improve(inst, start, policy=None if name.startswith("lns.") else name,
                      time_limit=budget, clock="cpu", seed=0,
                      on_improve=lambda c, w, v: print(f"  {c:7.1f} s CPU {w:7.1f} s wall "
                                                       f"{v / H:.3f} h", flush=True))
        curves[name] = [[c, w, v / H] for c, w, v in res.history]
        rows.append({"kind": "lns", "name": f"LNS from {name}",
                     "start_h": res.start_value / H, "mean_jct_h": res.value / H,
                     "gap": res.value / b, "gap_wide": res.value / bw,
                     "cpu_s": round(res.cpu_seconds, 1), "wall_s": round(res.seconds, 1),
                     "windows": res.windows_tried, "improved": res.windows_improved,
                     "stop": res.stop,
                     "by_block": "; ".join(
                         f"m={k}: {res.extra['improved_by_block'].get(k, 0)}/{v}"
                         for k, v in res.extra["windows_by_block"].items()),
                     "milp_s": res.extra["milp_seconds"],
                     "no_solution": res.extra["no_solution"],
                     "curve": curves[name]})
        print({k: v for k, v in rows[-1].items() if k != "curve"}, flush=True)
    lns_best = min(r["mean_jct_h"] for r in rows if r["kind"] == "lns")
    wide_desc = (f"interval_lp from results/{args.bound_from}" if args.bound_from else
                 f"interval_lp, window {args.wide_window_h:g} h, {args.wide_intervals} "
                 f"intervals, tangents {args.tangents}, squash {args.squash}")
    write_results(
        args.name, rows,
        ["kind", "name", "start_h", "mean_jct_h", "gap", "gap_wide", "cpu_s", "wall_s",
         "windows", "improved", "by_block", "stop"],
        title=f"Large-neighbourhood search on Gavel's {inst.n_jobs}-job trace (gavel-108, "
              "6-min rounds): best mean JCT against the certified bound",
        params={"trace": "gavel-philly-2000", "jobs": inst.n_jobs, "cluster": "gavel-108",
                "round_s": inst.slot, "budget_cpu_s": args.budget,
                "window": "16 jobs x 24 blocks, block 1..32 rounds (doubling after 8 "
                          "windows without improvement), 10 s per window MILP",
                "seed": 0,
                "wide_bound": wide_desc,
                "lp_guide": f"interval_lp, window {args.wide_window_h:g} h, "
                            f"{args.wide_intervals} intervals, tangents {args.guide_tangents}, "
                            f"share_min {args.share_min}, share_weight {args.share_weight} "
                            "(area-SRPT start), fill",
                "policies": " ".join(args.policies) or "none"},
        notes=(f"gap = mean JCT / certified lower bound ({b / H:.2f} h with the defaults, "
               f"gap_wide: {bw / H:.2f} h, {wide_desc}); the "
               f"best schedule found has mean JCT {lns_best:.2f} h. by_block: windows that "
               "improved / windows tried per block length m (rounds). CPU seconds of this "
               "process; the machine (2 cores) was shared with other work, so wall times "
               "are inflated."))
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        for name, c in curves.items():
            xs = [p[0] for p in c] + [rows[-1]["cpu_s"] if name == runs[-1][0] else
                                      next(r["cpu_s"] for r in rows
                                           if r.get("name") == f"LNS from {name}")]
            ys = [p[2] / (bw / H) for p in c] + [c[-1][2] / (bw / H)]
            ax.step(xs, ys, where="post", label=f"LNS from {name}")
        ax.axhline(1.2, color="red", ls=":", lw=1, label="goal 1.2")
        ax.set_xlabel("CPU seconds")
        ax.set_ylabel(f"best mean JCT / certified bound {bw / H:.2f} h")
        ax.set_title(f"Gavel trace, {inst.n_jobs} jobs, gavel-108")
        ax.legend(fontsize=8)
        save_figure(fig, RESULTS / "img" / f"{args.name}.png")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
