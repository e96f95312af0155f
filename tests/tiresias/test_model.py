"""Tiresias' formal model: the slotted MILP, the mean-busy-time lower bound and the
heuristics, side by side (LB <= OPT_continuous <= OPT_slotted; LB <= every heuristic)."""

from __future__ import annotations

import heapq

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import examples

import optsched
from optsched import Cluster, Instance, Job, Node
from optsched.core.result import Status
from optsched.errors import InvalidOption, ModelNotApplicable, ModelTooLarge
from optsched.tiresias import demo_instance, exact, gittins, las, lp_bound, srtf, yarn_fifo
from optsched.tiresias.model import build_model, greedy_slotted, slotted

BACKENDS = ("highs", "pyomo", "cvxpy")
HEURISTICS = (las, gittins, yarn_fifo, srtf)
SLOT = 60.0


def instance(jobs, gpus=(("p100", 4),), slot=SLOT) -> Instance:
    """Jobs ``(arrival s, gang, duration s)`` at rate 1 per worker on one node."""
    node = Node("n0", dict(gpus))
    types = [t for t, _ in gpus]
    return Instance(cluster=Cluster((node,)), slot=slot, name="t",
                    jobs=tuple(Job(str(i), arrival=float(r), workers=g, work=float(d * g),
                                   throughput={t: 1.0 for t in types})
                               for i, (r, g, d) in enumerate(jobs)))


def srpt_total(jobs, slot) -> float:
    """1|r_j, pmtn|sum C_j by SRPT (optimal) in whole slots: an independent oracle."""
    t, total, heap, k = 0, 0.0, [], 0
    order = sorted(range(len(jobs)), key=lambda i: jobs[i][0])
    left = {i: round(jobs[i][2] / slot) for i in range(len(jobs))}
    while k < len(order) or heap:
        if not heap:
            t = max(t, int(jobs[order[k]][0] // slot))
        while k < len(order) and jobs[order[k]][0] / slot <= t:
            i = order[k]
            heapq.heappush(heap, (left[i], i))
            k += 1
        rem, i = heapq.heappop(heap)
        nxt = int(jobs[order[k]][0] / slot) if k < len(order) else t + rem
        run = min(rem, nxt - t) if nxt > t else rem
        t += run
        if run == rem:
            total += t * slot - jobs[i][0]
        else:
            heapq.heappush(heap, (rem - run, i))
    return total


def test_demo_side_by_side_on_every_backend():
    inst = demo_instance()
    lb = lp_bound(inst).bound
    for backend in BACKENDS:
        res = exact(inst, backend=backend)
        assert res.status is Status.OPTIMAL and res.objective == pytest.approx(3697.0)
        assert lp_bound(inst, backend=backend).bound == pytest.approx(lb, rel=1e-6)
    # the bound's grid is the greedy horizon H / max_slots; the busy windows shorten H
    # (2387.26 with the horizon of the total-JCT windows alone): a finer grid, a higher
    # bound, valid for any H
    assert lb == pytest.approx(2390.28, abs=0.01)
    for h in HEURISTICS:
        assert h(inst).objective >= lb - 1e-6


@pytest.mark.parametrize("seed", range(4))
def test_exact_equals_srpt_on_one_gpu(seed):
    """One GPU, single-worker jobs with arrivals and durations on the slot grid: the
    slotted optimum is the preemptive single-machine optimum, which SRPT attains."""
    rng = np.random.default_rng(seed)
    jobs = [(SLOT * int(rng.integers(0, 6)), 1, SLOT * int(rng.integers(1, 5)))
            for _ in range(6)]
    inst = instance(jobs, gpus=(("p100", 1),))
    res = exact(inst, slot=SLOT)
    assert res.status is Status.OPTIMAL
    assert res.objective == pytest.approx(srpt_total(jobs, SLOT))
    # and the clairvoyant heuristic, SRTF, is that optimum here
    assert srtf(inst).objective == pytest.approx(res.objective)


def test_srpt_oracle_itself():
    # two jobs at 0 (3 and 1 slots) and one at slot 1 (1 slot): 1, 2, 5 slots -> 8 slots
    assert srpt_total([(0, 1, 180), (0, 1, 60), (60, 1, 60)], 60) == 60 * (1 + 1 + 5)


def test_gangs_block_the_pool():
    """Two 2-GPU jobs and a 3-GPU job on 4 GPUs: the 3-GPU job cannot share."""
    inst = instance([(0, 3, 120), (0, 2, 60), (0, 2, 60)])
    res = exact(inst)
    # best: both 2-GPU jobs first (60 s each, together), then the 3-GPU job: 60+60+180
    assert res.objective == pytest.approx(300.0)
    assert lp_bound(inst).bound <= 300.0 + 1e-6


grid_jobs = st.lists(st.tuples(st.integers(0, 4), st.sampled_from([1, 2, 4]),
                               st.integers(1, 3)), min_size=1, max_size=5)


@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(grid_jobs)
def test_bound_exact_heuristics_on_the_grid(spec):
    """Arrivals and durations in whole slots: every simulator decision falls on the
    grid, so each heuristic's schedule is a slotted schedule and
    LB <= OPT_slotted <= heuristic."""
    jobs = [(SLOT * a, g, SLOT * d) for a, g, d in spec]
    inst = instance(jobs)
    res = exact(inst, slot=SLOT)
    assert res.status is Status.OPTIMAL
    lb = lp_bound(inst).bound
    assert lb <= res.objective + 1e-6
    sm = slotted(build_model(inst), SLOT)
    assert res.objective <= greedy_slotted(sm.model, SLOT)[1] + 1e-6
    for h in HEURISTICS:
        assert res.objective <= h(inst).objective + 1e-6, h.__name__


@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.floats(0, 300), st.sampled_from([1, 2, 3]),
                          st.floats(5, 400)), min_size=1, max_size=6))
def test_bound_below_everything_off_the_grid(spec):
    """Arbitrary arrivals and durations: the LP bound is below the slotted optimum and
    below every heuristic (which may beat the slotted optimum off the grid)."""
    inst = instance(spec)
    lb = lp_bound(inst).bound
    assert lb >= sum(d for _, _, d in spec) - 1e-6  # C_j >= r_j + d_j
    assert lb <= exact(inst).objective + 1e-6
    for h in HEURISTICS:
        assert lb <= h(inst).objective + 1e-6, h.__name__


def test_heuristic_is_the_simulator_policy():
    inst = demo_instance()
    sim = optsched.simulate(inst, "tiresias.las")
    total = sum(c - inst.job(j).arrival for j, c in sim.schedule.completion.items())
    assert las(inst).objective == pytest.approx(total)


def test_several_types_use_the_fastest_pool_in_the_bound():
    node = Node("n0", {"k80": 2, "v100": 2})
    job = Job("0", arrival=0.0, workers=2, work=240.0, throughput={"k80": 1.0, "v100": 2.0})
    inst = Instance(cluster=Cluster((node,)), jobs=(job,), slot=SLOT)
    assert exact(inst).objective == pytest.approx(60.0)
    assert lp_bound(inst).bound == pytest.approx(60.0)


def test_errors_name_the_field():
    inst = demo_instance()
    with pytest.raises(InvalidOption, match="slot"):
        exact(inst, slot=-1.0)
    with pytest.raises(InvalidOption, match="max_slots"):
        lp_bound(inst, max_slots=0)
    with pytest.raises(InvalidOption, match="gap_limit"):
        exact(inst, gap_limit=0.1)
    with pytest.raises(InvalidOption, match="thresholds"):
        las(inst, thresholds=(5.0, 1.0))
    with pytest.raises(ModelTooLarge, match="columns"):
        exact(inst, max_columns=10)
    # 3 GPUs exist (2 K80 + 1 V100) but a gang runs on one type
    big = instance([(0, 3, 60)], gpus=(("k80", 2), ("v100", 1)))
    with pytest.raises(ModelNotApplicable, match=r"jobs\[0\]\.workers"):
        exact(big)
    with pytest.raises(ModelNotApplicable, match=r"jobs\[0\]\.workers"):
        las(big)
    with pytest.raises(InvalidOption, match="n_jobs"):
        demo_instance(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bound_lp_meets_optimality_conditions(monkeypatch, backend):
    from lp_problems import method_lps

    assert method_lps(monkeypatch, demo_instance(8), "tiresias", "bound",
                      backend=backend) == 1


def test_registered_and_cli(tmp_path, capsys):
    from optsched.cli import main

    path = tmp_path / "d.json"
    assert main(["instance", "tiresias-demo", "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["compare", "tiresias", str(path), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"exact"' in out and '"las"' in out and '"bound"' in out


def test_single_slot_classes_keep_the_optimum(monkeypatch):
    """Jobs needing one slot on every usable type, aggregated into classes (same first
    slot, gang and types), give the per-job MILP's optimum and a validated schedule."""
    import importlib

    from optsched.catalog.traces import read_trace
    from optsched.tiresias.model import build_model, slotted

    tx = importlib.import_module("optsched.tiresias.exact")  # the module, not the function
    inst = read_trace("gavel-philly-2000", "gavel-108", jobs=20, load=50)
    slot = 5 * 86400.0  # most jobs fit in one slot
    of, members = tx.single_slot_classes(slotted(build_model(inst), slot))
    assert members and sum(m.size for m in members) > len(members)  # real classes
    grouped = exact(inst, slot=slot)
    monkeypatch.setattr(tx, "single_slot_classes",
                        lambda sm: (np.full(sm.n_jobs, -1, dtype=np.int64), []))
    per_job = exact(inst, slot=slot)
    assert grouped.status is per_job.status is Status.OPTIMAL
    assert grouped.objective == pytest.approx(per_job.objective, rel=1e-9)
    assert grouped.extra["columns"] < per_job.extra["columns"]
    assert grouped.schedule is not None and grouped.extra["mip_start"]["feasible"]
