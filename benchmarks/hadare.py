"""HadarE vs Hadar vs Gavel, with the simulator's semantics, and exact vs heuristic.

Scenarios (all policies run on the same instance, same round length):

* ``gavel``: Gavel's Philly-derived trace on gavel-108 (36 V100 + 36 P100 + 36 K80 in
  nodes of 4 GPUs of one type), its first ``--jobs`` jobs;
* ``aws``: a small cluster shaped like the paper's AWS testbed as we read the abstract
  (one node of 4 V100, one of 4 P100, one of 4 K80), Philly-style jobs of 1-4 workers,
  all submitted at once (a batch, whose "total time duration" is the makespan) and as a
  Poisson stream; several seeds.

Policies: HadarE (``simulate_hadare``) under its forking assumption (copies add up
perfectly, up to one copy per node) and with that assumption weakened (``hadare-e0.8``,
``hadare-e0.5``: every copy but the main one counts at a copy efficiency of 0.8 / 0.5;
``hadare-F2``: at most 2 copies per job), Hadar (its plans replayed in the same rounds,
``forking=False``), Gavel's max-min fairness, makespan (min total duration) and FIFO
policies, all in ``optsched.sim.simulate``. Every row carries the no-fork lower bound on
the makespan (``optsched.hadare.bounds.time_bounds``: no schedule without forking finishes
earlier) and the row's makespan over it: a HadarE makespan below 1x of it is a gain that
only the forking assumption can give. Hadar/HadarE need utilities: OASiS-style step
utilities (value until a deadline, a tenth of it after; ``assign_utilities(..., "step")``),
whose positive floor keeps Hadar's price parameter L usable on long horizons.

Exact vs heuristic: small instances solved by the HadarE MILP (utility), its LP bound,
HadarE online, Hadar online and Hadar's MILP.

    python benchmarks/hadare.py                 # everything, gavel subsample of 200 jobs
    python benchmarks/hadare.py --jobs 2000 --skip-exact  # the full trace
    python benchmarks/hadare.py --only-consolidation      # consolidation-cost sweep
    python benchmarks/hadare.py --only-exact              # exact vs heuristic, e = 1 and 0.5

Results: ``results/hadare_sim_<jobs>.md``, ``results/hadare_ratios_<jobs>.md``,
``results/hadare_exact.md``.
"""

from __future__ import annotations

import argparse
import math
import time

from common import write_results

import optsched.hadar as hadar
from optsched.catalog import generate_philly, read_gavel_trace
from optsched.hadar import assign_utilities, build_model
from optsched.hadar.heuristics import online_model, run_online
from optsched.hadare import (
    aws_like_cluster,
    exact,
    lp_bound,
    online,
    simulate_hadare,
)
from optsched.hadare.bounds import time_bounds
from optsched.registry import get_policy
from optsched.sim import simulate

H = 3600.0
GAVEL = ["max_min_fairness", "min_total_duration", "fifo"]
#: HadarE variants: name -> (copy efficiency, max copies per job; None: one per node)
HADARE = {"hadare": (1.0, None), "hadare-e0.8": (0.8, None), "hadare-e0.5": (0.5, None),
          "hadare-F2": (1.0, 2)}


def quanta_for(inst) -> int:
    """Hadar's progress quanta: at least 4x the slots the longest job needs (so safe
    rounding loses at most a quarter of a slot's progress), at least 360."""
    m = build_model(inst)
    return int(max(360, min(8000, 4 * int(m.nmin.max()))))


def run_policies(inst, scenario: str, seed: int, policies: list[str],
                 max_slots: int = 512) -> list[dict]:
    Q = quanta_for(inst)
    rows = []
    nofork = time_bounds(inst).makespan / H
    hr, admission = None, 0.0
    if any(p in HADARE or p == "hadar" for p in policies):
        # one pass of Hadar's admission, shared by HadarE's variants and the replay
        t = time.perf_counter()
        hr = run_online(online_model(inst, max_slots=max_slots, quanta=Q), quanta=Q)
        admission = time.perf_counter() - t
    for name in policies:
        t = time.perf_counter()
        eff, F = HADARE.get(name, (None, None))
        if name in HADARE:
            res = simulate_hadare(inst, forking=True, hadar_run=hr, copy_efficiency=eff,
                                  max_copies=F)
        elif name == "hadar":
            res = simulate_hadare(inst, forking=False, hadar_run=hr)
        else:
            res = simulate(inst, get_policy(name), seed=seed, progress=False)
        wall = time.perf_counter() - t + (admission if name in HADARE or name == "hadar"
                                          else 0.0)
        m = res.metrics
        mk = float(m.makespan) / H if m.makespan is not None else None
        row = {"scenario": scenario, "seed": seed, "policy": name, "jobs": m.n_jobs,
               "completed": m.n_completed,
               "mean_jct_h": float(m.mean_jct) / H if m.mean_jct is not None else None,
               "makespan_h": mk, "nofork_lb_h": nofork,
               "over_nofork_lb": mk / nofork if mk is not None and nofork > 0 else None,
               "cru": float(m.cru) if m.cru is not None else None,
               "busy_gpu_h": m.busy_gpu_seconds / H, "utility": m.utility,
               "copy_efficiency": eff, "max_copies": F,
               "fill_gpu_rounds": res.extra.get("fill_gpu_rounds"),
               "cut_gpu_h": res.extra.get("cut_gpu_seconds", 0.0) / H
               if name in HADARE else None,
               "quanta": Q if name in HADARE or name == "hadar" else None,
               "plan_slot_h": hr.model.delta / H if hr is not None and
               (name in HADARE or name == "hadar") else None, "wall_s": wall}
        rows.append(row)
        print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()},
              flush=True)
    return rows


def ratio_rows(rows: list[dict]) -> list[dict]:
    """Per (scenario, seed): HadarE over each baseline."""
    out = []
    keys = sorted({(r["scenario"], r["seed"]) for r in rows})
    for sc, sd in keys:
        by = {r["policy"]: r for r in rows if r["scenario"] == sc and r["seed"] == sd}
        e = by.get("hadare")
        if e is None:
            continue
        for base, b in by.items():
            if base in HADARE:
                continue
            out.append({"scenario": sc, "seed": sd, "baseline": base,
                        "cru_ratio": e["cru"] / b["cru"] if b["cru"] else None,
                        "total_time_change_pct": 100 * (e["makespan_h"] / b["makespan_h"] - 1)
                        if b["makespan_h"] else None,
                        "mean_jct_ratio": e["mean_jct_h"] / b["mean_jct_h"]
                        if b["mean_jct_h"] else None,
                        "completed": f"{e['completed']}/{b['completed']}"})
    return out


def geo(vals):
    vals = [v for v in vals if v is not None and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def summary(ratios: list[dict]) -> list[dict]:
    out = []
    for sc in sorted({r["scenario"] for r in ratios}):
        for base in sorted({r["baseline"] for r in ratios if r["scenario"] == sc}):
            rs = [r for r in ratios if r["scenario"] == sc and r["baseline"] == base]
            tt = [1 + r["total_time_change_pct"] / 100 for r in rs
                  if r["total_time_change_pct"] is not None]
            g = geo(tt)
            out.append({"scenario": sc, "baseline": base, "instances": len(rs),
                        "cru_ratio_geomean": geo([r["cru_ratio"] for r in rs]),
                        "total_time_change_pct_geomean": 100 * (g - 1) if g else None,
                        "mean_jct_ratio_geomean": geo([r["mean_jct_ratio"] for r in rs])})
    return out


def exact_vs_heuristic(seeds: list[int], n_jobs: int, slots: int,
                       efficiencies: tuple[float, ...] = (1.0, 0.5)) -> list[dict]:
    """Per seed and copy efficiency e: HadarE's MILP, LP bound and online heuristic of the
    same model (the MILP states e exactly), and Hadar's online and MILP."""
    rows = []
    cl = aws_like_cluster(gpus_per_node=2)
    for seed in seeds:
        inst = generate_philly(n_jobs, cluster=cl, seed=seed, max_workers=2,
                               jobs_per_hour=2.0, slot=3600.0)
        inst = assign_utilities(inst.replace(horizon=slots * 3600.0, name=f"small-{seed}"),
                                "sigmoid", seed=seed)
        hd = hadar.online(inst, certificate=False)
        hx = hadar.exact(inst, time_limit=60)
        for e in efficiencies:
            t = time.perf_counter()
            x = exact(inst, time_limit=60, copy_efficiency=e)
            tx = time.perf_counter() - t
            t = time.perf_counter()
            lp = lp_bound(inst, copy_efficiency=e)
            tl = time.perf_counter() - t
            t = time.perf_counter()
            h = online(inst, copy_efficiency=e)
            th = time.perf_counter() - t
            rows.append({"seed": seed, "copy_efficiency": e, "jobs": n_jobs, "slots": slots,
                         "gpus": cl.total_gpus, "hadare_exact": x.objective,
                         "exact_status": str(x.status), "hadare_lp": lp.bound,
                         "hadare_online": h.objective,
                         "online_over_exact": h.objective / x.objective if x.objective
                         else None,
                         "lp_over_exact": lp.bound / x.objective if x.objective else None,
                         "hadar_online": hd.objective, "hadar_exact": hx.objective,
                         "exact_s": tx, "lp_s": tl, "online_s": th})
            print({k: (round(v, 4) if isinstance(v, float) else v)
                   for k, v in rows[-1].items()}, flush=True)
    return rows


def consolidation_sweep(seeds: int, n_jobs: int, slot: float) -> list[dict]:
    """AWS-like batches: HadarE with a consolidation cost of kappa seconds vs Hadar."""
    rows = []
    for seed in range(seeds):
        inst = generate_philly(n_jobs, cluster=aws_like_cluster(), seed=seed, max_workers=4,
                               jobs_per_hour=None, slot=slot)
        inst = assign_utilities(inst, "step", seed=seed)
        Q = quanta_for(inst)
        h = simulate_hadare(inst, forking=False, quanta=Q).metrics
        for kappa in (0.0, 300.0, 1800.0, 3600.0, 4 * 3600.0):
            e = simulate_hadare(inst, quanta=Q, consolidation=kappa).metrics
            rows.append({"seed": seed, "consolidation_s": kappa,
                         "hadare_makespan_h": e.makespan / H, "hadar_makespan_h": h.makespan / H,
                         "total_time_change_pct": 100 * (e.makespan / h.makespan - 1),
                         "mean_jct_ratio": e.mean_jct / h.mean_jct,
                         "cru_ratio": e.cru / h.cru})
            print(rows[-1], flush=True)
    return rows


def write_exact() -> None:
    ex = exact_vs_heuristic(list(range(8)), 8, 12)
    write_results("hadare_exact", ex,
                  ["seed", "copy_efficiency", "jobs", "slots", "gpus", "hadare_exact",
                   "exact_status",
                   "hadare_lp", "hadare_online", "online_over_exact", "lp_over_exact",
                   "hadar_online", "hadar_exact", "exact_s", "lp_s", "online_s"],
                  title="HadarE exact (MILP) vs LP bound vs online heuristic, and Hadar",
                  params={"cluster": "1 node x 2 GPUs each of V100, P100, K80",
                          "slot_s": 3600, "utility": "sigmoid (assign_utilities)",
                          "jobs_per_hour": 2.0, "consolidation_s": 0,
                          "time_limit_s": 60},
                  notes="Total utility (maximised) in the slot model: completion at the "
                        "end of the slot in which the work is done. copy_efficiency e: "
                        "every copy but a job's main one counts at e of its rate, in the "
                        "MILP, its LP and the heuristic alike (1: copies add up); Hadar "
                        "has no copies, so its columns do not depend on e.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200, help="first N jobs of the Gavel trace")
    ap.add_argument("--slot", type=float, default=1800.0, help="round length, s")
    ap.add_argument("--aws-seeds", type=int, default=5)
    ap.add_argument("--aws-jobs", type=int, default=12)
    ap.add_argument("--skip-gavel", action="store_true")
    ap.add_argument("--skip-exact", action="store_true")
    ap.add_argument("--only-consolidation", action="store_true")
    ap.add_argument("--only-exact", action="store_true",
                    help="only the exact vs heuristic comparison (hadare_exact)")
    ap.add_argument("--max-slots", type=int, default=512,
                    help="planning slots of Hadar's admission pass (slot multiple chosen "
                         "to fit, optsched.hadar.model.planning_instance)")
    args = ap.parse_args()
    if args.only_exact:
        write_exact()
        return
    if args.only_consolidation:
        rows = consolidation_sweep(args.aws_seeds, args.aws_jobs, args.slot)
        write_results("hadare_consolidation", rows,
                      ["seed", "consolidation_s", "hadare_makespan_h", "hadar_makespan_h",
                       "total_time_change_pct", "mean_jct_ratio", "cru_ratio"],
                      title="HadarE with a consolidation cost vs Hadar (AWS-like batches)",
                      params={"cluster": "1 node x 4 GPUs each of V100, P100, K80",
                              "jobs": args.aws_jobs, "slot_s": args.slot,
                              "utility": "step"},
                      notes="Every job pays the consolidation cost (seconds, off the GPUs) "
                            "after its work is done; ratios are HadarE over Hadar.")
        return
    policies = [*HADARE, "hadar", *GAVEL]
    rows: list[dict] = []
    if not args.skip_gavel:
        inst = read_gavel_trace(slot=args.slot)
        if args.jobs < inst.n_jobs:
            inst = inst.replace(jobs=inst.jobs[:args.jobs], name=f"gavel-first{args.jobs}")
        inst = assign_utilities(inst, "step", seed=0)
        rows += run_policies(inst, "gavel", 0, policies, args.max_slots)
    for seed in range(args.aws_seeds):
        for mode, rate in (("batch", None), ("poisson", 1.0)):
            inst = generate_philly(args.aws_jobs, cluster=aws_like_cluster(), seed=seed,
                                   max_workers=4, jobs_per_hour=rate, slot=args.slot)
            inst = assign_utilities(inst, "step", seed=seed)
            rows += run_policies(inst, f"aws-{mode}", seed, policies, args.max_slots)
    ratios = ratio_rows(rows)
    summ = summary(ratios)
    params = {"gavel_trace": f"first {args.jobs} of 2,000 jobs" if not args.skip_gavel
              else "skipped", "cluster_gavel": "gavel-108 (9 nodes x 4 GPUs per type)",
              "cluster_aws": "1 node x 4 GPUs each of V100, P100, K80",
              "aws_jobs": args.aws_jobs, "aws_seeds": args.aws_seeds, "slot_s": args.slot,
              "utility": "step (assign_utilities)", "consolidation_s": 0,
              "max_slots": args.max_slots}
    note = ("HadarE and Hadar run in optsched.sim.simulate as optsched.hadare.HadarEPolicy "
            "(forking on / off), Gavel policies in optsched.sim.simulate too; all use "
            "round boundaries every slot_s, completion at the exact instant the work is done "
            "and idle GPUs until the next round. Hadar admits only jobs with positive priced "
            "payoff: 'completed' counts differ from Gavel's, and makespan/mean JCT are over "
            "completed jobs. nofork_lb_h: no schedule without forking has a smaller makespan "
            "(time_bounds: the latest arrival + fastest exclusive run, or the load after any "
            "arrival); over_nofork_lb < 1 is a gain only forking can give. hadare-e0.8/-e0.5: "
            "every copy but a job's main one counts at 0.8/0.5 of its rate (back-loaded: those "
            "copies run only the last 0.8/0.5 of each round); cut_gpu_h: GPU-hours "
            "those copies hold for no progress, counted idle by the simulator (CRU excludes "
            "them). hadare-F2: at most 2 copies per job. Paper (abstract): CRU 1.45x vs Hadar, "
            "total time -50 % (AWS) vs Hadar and Gavel.")
    tag = f"_{args.jobs}" if not args.skip_gavel else ""
    write_results(f"hadare_sim{tag}", rows, ["scenario", "seed", "policy", "jobs", "completed",
                                       "mean_jct_h", "makespan_h", "nofork_lb_h",
                                       "over_nofork_lb", "cru", "busy_gpu_h", "utility",
                                       "copy_efficiency", "max_copies", "fill_gpu_rounds",
                                       "cut_gpu_h", "quanta", "plan_slot_h", "wall_s"],
                  title="HadarE vs Hadar vs Gavel (simulator semantics)", params=params,
                  notes=note)
    write_results(f"hadare_ratios{tag}", summ + ratios,
                  ["scenario", "baseline", "seed", "instances", "cru_ratio_geomean",
                   "total_time_change_pct_geomean", "mean_jct_ratio_geomean", "cru_ratio",
                   "total_time_change_pct", "mean_jct_ratio", "completed"],
                  title="HadarE over each baseline: CRU ratio, total time change, mean JCT "
                        "ratio", params=params,
                  notes="Rows with 'instances' are geometric means over the seeds of a "
                        "scenario; the others are per instance. " + note)
    if not args.skip_exact:
        write_exact()


if __name__ == "__main__":
    main()
