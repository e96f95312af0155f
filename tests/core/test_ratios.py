"""``Result.ratio``, the proved ratio a user reads: checked against the theorem's value and
against the exact optimum, and never 1 for an exact result with a gap."""

from __future__ import annotations

import math

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.core.result import Result, Status
from optsched.registry import Method, get_model, solve


def _exact_stub(objective: float, bound: float, gap: float):
    def fn(instance):
        return Result(Status.OPTIMAL, objective=objective, bound=bound, gap=gap, ratio=1.0)
    return Method("exact", fn, kind="exact")


def test_an_exact_result_with_a_gap_does_not_report_ratio_one():
    inst = get_model("allox").demo_instance()
    # minimisation: incumbent 10, bound 8 (gap 0.2) proves objective <= 1.25 x optimum
    res = _exact_stub(10.0, 8.0, 0.2).run(inst)
    assert res.ratio == pytest.approx(1.25) and "gap" in res.ratio_note
    # maximisation (hadar's utility): bound 12 over incumbent 10 proves 1.2
    res = _exact_stub(10.0, 12.0, 0.2).run(inst, model="hadar")
    assert res.ratio == pytest.approx(1.2)
    # a bound of the wrong sign proves no ratio; no gap keeps 1
    assert _exact_stub(10.0, -1.0, 1.1).run(inst).ratio is None
    assert _exact_stub(10.0, 10.0, 0.0).run(inst).ratio == 1.0


def test_time_limited_exact_result_reports_no_ratio_one():
    inst = get_model("tiresias").demo_instance()
    res = solve(inst, "tiresias", "exact", time_limit=0.5)
    if res.gap:  # stopped before proving optimality
        assert res.ratio != 1.0
        if res.ratio is not None:
            assert res.ratio == pytest.approx(res.objective / res.bound)


def test_allox_online_ratio_one_is_the_optimum():
    """AlloX online with every job at time 0 and alpha = 1 is the min-cost matching:
    ratio 1, and its total JCT equals the exact optimum."""
    inst = get_model("allox").demo_instance()
    assert {j.arrival for j in inst.jobs} == {0.0}
    on = solve(inst, "allox", "online")
    ex = solve(inst, "allox", "exact")
    assert on.ratio == 1.0
    assert on.objective <= on.ratio * ex.objective * (1 + 1e-9)
    from dataclasses import replace

    late = inst.replace(jobs=(replace(inst.jobs[0], arrival=5.0), *inst.jobs[1:]))
    assert solve(late, "allox", "online").ratio is None  # arrivals: nothing proved


def test_hadar_online_ratio_is_two_alpha_and_holds():
    from optsched.core.job_profiles import Utility

    jobs = (Job("J0", 0.0, 1, 3.0, {"v100": 1.0},
                utility=Utility("sigmoid", gamma1=10, gamma2=0.5, gamma3=3)),)
    inst = Instance(Cluster((Node("n0", {"v100": 4}),)), jobs, slot=1.0, horizon=5.0)
    on = solve(inst, "hadar", "online")
    rep = on.extra["competitive_ratio"]
    assert on.ratio == pytest.approx(2 * rep["alpha"])
    assert rep["alpha"] == pytest.approx(max(1.0, math.log(rep["U"]["v100"] / rep["L"])))
    ex = solve(inst, "hadar", "exact")
    assert on.objective >= ex.objective / on.ratio * (1 - 1e-9)


def test_salus_ffd_ratio_is_the_first_fit_bound():
    """First fit on GPUs: GPUs <= 2 OPT / (1 - theta) + 1, theta = Tmax / M with Tmax
    the largest ephemeral memory (4000 MB) and M a GPU's memory (16 GB = 16384 MB)."""
    from optsched.core.job_profiles import GpuMemory

    nodes = tuple(Node(f"g{k}", {"v100": 1}, gpu_memory={"v100": 16.0}) for k in range(4))
    jobs = tuple(Job(f"j{i}", 0.0, 1, 10.0, {"v100": 1.0}, memory=GpuMemory(P, T))
                 for i, (P, T) in enumerate([(3000, 4000), (2000, 3000), (4000, 2000),
                                             (1000, 1000), (5000, 4000)]))
    inst = Instance(Cluster(nodes), jobs, horizon=1000.0)
    ffd = solve(inst, "salus", "ffd", objective="gpus")
    theta = 4000 / 16384
    assert ffd.ratio == pytest.approx(2.0 / (1.0 - theta) + 1.0)
    ex = solve(inst, "salus", "exact", objective="gpus")
    assert ffd.objective <= ffd.ratio * ex.objective + 1e-9
    # another objective states no ratio
    assert solve(inst, "salus", "ffd", objective="makespan").ratio is None
