"""The pictures of the documentation site (docs/img/), regenerated from scratch by
optsched's own code (every figure drawn by :mod:`optsched.plotting`).

* ``gantt_exact_vs_heuristic.png`` (allox.md): AlloX's 4-job talk example, the exact
  schedule and the talk's equally optimal one next to SJF's;
* ``gavel_allocation.png``, ``gavel_jct_cdf.png``, ``gavel_utilization.png`` (gavel.md):
  one round's allocation by the exact LP and the compared allocations; aware vs
  agnostic max-min fairness in the simulator;
* ``hadar_prices.png``, ``hadar_schedules.png`` (hadar.md): the price of a GPU as a
  bucket fills; the exact and the online schedule of the worked example;
* ``hadare_schedules.png`` (hadare.md): HadarE's forked copies next to Hadar's plans;
* ``salus_methods.png`` (salus.md): makespan of the exact plan and the heuristics;
* ``synergy_methods.png`` (synergy.md): one round's throughput by method;
* ``simulator_gantt.png``, ``simulator_utilization.png`` (simulator.md): the simulation
  of that page;
* ``sweep_seconds.png`` (sweeps.md): solve time against instance size from a small sweep.
* ``sweep_jct_load.png`` (sweeps.md): mean JCT against load, the shipped simulation sweep
  ``docs/sim_grid.toml``.

    python benchmarks/figures.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import optsched
from optsched import Cluster, Instance, Job, Node, Utility, allox
from optsched.allox.workload import talk_instance, talk_schedule
from optsched.catalog import generate_philly
from optsched.plotting import (
    bars,
    gantt_by_device,
    jct_cdf,
    lines,
    plot_result,
    sweep_lines,
    utilization,
)
from optsched.studies.sweep import SweepConfig, run_sweep

IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def allox_figure() -> None:
    inst = talk_instance()
    print(gantt_by_device(inst, {"exact (matching)": allox.exact(inst).schedule,
                                 "exact (the talk's tie)": talk_schedule(),
                                 "heuristic: SJF": allox.sjf(inst).schedule},
                          IMG / "gantt_exact_vs_heuristic.png",
                          title="AlloX talk example: exact vs heuristic"))


def gavel_figures() -> None:
    from optsched.gavel import demo_instance

    inst = demo_instance()
    values = {m: optsched.solve(inst, "gavel", m).objective
              for m in ("exact", "rounds", "agnostic", "isolated", "fifo")}
    print(bars(values, IMG / "gavel_allocation.png",
               ylabel="min normalised throughput",
               title=f"Gavel max-min fairness, one round: {inst.name}"))
    trace = generate_philly(100, cluster="gavel-108", seed=1)
    runs = {"heterogeneity-aware": optsched.simulate(trace, "gavel.max_min_fairness"),
            "heterogeneity-agnostic": optsched.simulate(trace,
                                                        "gavel.max_min_fairness_agnostic")}
    title = f"Gavel max-min fairness, {trace.name} on gavel-108"
    print(jct_cdf({k: list(r.metrics.jct.values()) for k, r in runs.items()},
                  IMG / "gavel_jct_cdf.png", title=title))
    print(utilization({k: r.schedule for k, r in runs.items()},
                      trace.cluster.total_gpus, IMG / "gavel_utilization.png", title=title))


def hadar_worked_example() -> Instance:
    """The worked example of docs/hadar.md."""
    cluster = Cluster((Node("a", {"v100": 4}), Node("b", {"k80": 4})))
    spec = [(1, 3, 1, 20, 3), (0, 6, 3, 10, 3), (1, 4, 3, 20, 2), (1, 3, 3, 20, 4),
            (0, 9, 2, 10, 3), (0, 6, 3, 10, 4), (0, 4, 3, 10, 4), (1, 6, 3, 20, 4),
            (0, 9, 3, 10, 2)]
    jobs = tuple(Job(f"J{i}", float(a), 1, float(w), {"v100": float(v), "k80": 1.0},
                     utility=Utility("sigmoid", gamma1=float(g), gamma2=1.0,
                                     gamma3=float(m)))
                 for i, (a, w, v, g, m) in enumerate(spec))
    return Instance(cluster, jobs, slot=1.0, horizon=5.0)


def hadar_figures() -> None:
    from optsched.hadar import competitive_ratio, exact, online

    inst = hadar_worked_example()
    rep = competitive_ratio(inst)
    g = np.arange(0, 5)
    series = {f"{t} (U = {u:.3g})": (g, rep.L * (u / rep.L) ** (g / 4))
              for t, u in rep.U.items()}
    print(lines(series, IMG / "hadar_prices.png", xlabel="GPUs allocated in the bucket (of 4)",
                ylabel="price of the next GPU", logy=True,
                title=f"Hadar's price function p(g) = L (U/L)^(g/c), L = {rep.L:.2g}"))
    print(gantt_by_device(inst, {"exact (MILP)": exact(inst).schedule,
                                 "online (Hadar)": online(inst).schedule},
                          IMG / "hadar_schedules.png",
                          title="Hadar worked example: exact vs online"))


def hadare_figure() -> None:
    from optsched import hadare

    inst = hadare.demo_instance()
    print(gantt_by_device(inst, {"HadarE (forked copies)": hadare.online(inst).schedule,
                                 "Hadar's plans (no forking)":
                                     hadare.hadar_replay(inst).schedule},
                          IMG / "hadare_schedules.png",
                          title=f"HadarE vs Hadar on {inst.name}"))


def salus_figure() -> None:
    from optsched import salus

    inst = salus.demo_instance()
    values = {m: optsched.solve(inst, "salus", m).objective
              for m in ("exact", "exact-1-lane", "lane_manager", "ffd", "lpt")}
    values["lower bound"] = optsched.solve(inst, "salus", "bound").bound
    print(bars(values, IMG / "salus_methods.png", ylabel="makespan (s)",
               title=f"Salus lanes on {inst.name}: makespan by method"))


def synergy_figure() -> None:
    from optsched import synergy

    inst = synergy.demo_instance()
    values = {m: optsched.solve(inst, "synergy", m).objective
              for m in ("exact", "exact-two-step", "tune", "proportional", "greedy")}
    values["LP bound"] = optsched.solve(inst, "synergy", "bound").bound
    print(bars(values, IMG / "synergy_methods.png", ylabel="total normalized throughput",
               title=f"Synergy, one round of {inst.name}"))


def simulator_figures() -> None:
    inst = generate_philly(100, cluster="gavel-108", seed=1)
    aware = optsched.simulate(inst, "gavel.max_min_fairness")
    with tempfile.TemporaryDirectory() as tmp:
        files = plot_result(aware.to_dict(), tmp)
        for f in files:
            if f.name in ("gantt.png", "utilization.png"):
                target = IMG / f"simulator_{f.name}"
                target.write_bytes(f.read_bytes())
                print(target)


def sweep_figure() -> None:
    cfg = SweepConfig.from_dict({"name": "docs", "models": ["allox", "synergy"],
                                 "methods": {"allox": ["exact", "online", "sjf"],
                                             "synergy": ["exact", "tune"]},
                                 "sizes": [8, 16, 32, 64], "seeds": [0, 1, 2]})
    with tempfile.TemporaryDirectory() as tmp:
        rows, _ = run_sweep(cfg, tmp, workers=2, progress=False)
    print(sweep_lines(rows, "wall_seconds", IMG / "sweep_seconds.png", logy=True,
                      title="wall seconds per cell (mean and min-max over 3 seeds)"))


def sim_sweep_figure() -> None:
    from optsched.studies.sweep import load_config, plot_sweep

    cfg = load_config(IMG.parent / "sim_grid.toml")
    with tempfile.TemporaryDirectory() as tmp:
        rows, _ = run_sweep(cfg, tmp, workers=2, progress=False)
    for r in rows:
        print(r["method"], r["load"], r["status"], r["mean_jct"], r["wall_seconds"])
    print(plot_sweep(rows, "mean_jct", IMG / "sweep_jct_load.png", x="load", logy=True,
                     title="mean JCT (s) against load: first 300 Philly jobs, tiresias-n32g4"))


def main() -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    for make in (allox_figure, gavel_figures, hadar_figures, hadare_figure, salus_figure,
                 synergy_figure, simulator_figures, sweep_figure, sim_sweep_figure):
        make()


if __name__ == "__main__":
    main()
