"""Large-neighbourhood search (optsched.sim.lns): every schedule it returns validates
under the start's rules and is never worse than the start; on tiny instances one window
over everything reaches the round-based optimum (brute force), which the certified
bound never exceeds; bad input raises typed errors."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched import Cluster, Instance, Job, Node
from optsched.core.metrics import compute_metrics
from optsched.core.schedule import Allocation, Schedule
from optsched.core.validate import validate_schedule
from optsched.errors import InvalidOption, InvalidSchedule, ModelNotApplicable
from optsched.registry import capabilities, simulate
from optsched.sim.bounds import Setting, lower_bounds
from optsched.sim.lns import FastestSrpt, fastest_srpt_start, improve
from optsched.sim.lns_window import Window, WindowJob, build_window

SLOT = 10.0


def _inst(jobs, gpus=(("a", 2),), slot=SLOT) -> Instance:
    nodes = tuple(Node(f"n{i}", {t: c}) for i, (t, c) in enumerate(gpus))
    return Instance(Cluster(nodes), tuple(jobs), slot=slot)


def _round_optimum(inst: Instance) -> float:
    """Brute force: the least total completion time of round-based schedules of 1-GPU
    jobs released at 0 (each round every job runs on one GPU of one type or waits; a
    job completes inside a round at the instant its work is done, its GPU idle after)."""
    types = inst.cluster.gpu_types
    cap = inst.cluster.gpus_per_type
    jobs = inst.jobs
    assert all(j.workers == 1 and j.arrival == 0 for j in jobs)

    @functools.cache
    def best(t: int, rem: tuple[float, ...]) -> float:
        live = [i for i, x in enumerate(rem) if x > 1e-9]
        if not live:
            return 0.0
        out = math.inf
        for choice in itertools.product([None, *types], repeat=len(live)):
            if any(sum(c == k for c in choice) > cap[k] for k in types):
                continue
            if all(c is None for c in choice):
                continue
            new = list(rem)
            cost = 0.0
            for i, k in zip(live, choice):
                if k is None:
                    continue
                rate = jobs[i].rate(k)
                if rate * SLOT >= rem[i] - 1e-9:
                    cost += t * SLOT + rem[i] / rate
                    new[i] = 0.0
                else:
                    new[i] = round(rem[i] - rate * SLOT, 9)
            out = min(out, cost + best(t + 1, tuple(new)))
        return out

    return best(0, tuple(j.work for j in jobs))


TINY = [
    # one type, three jobs on two GPUs
    [Job("a", 0.0, 1, 40.0, {"a": 1.0}), Job("b", 0.0, 1, 35.0, {"a": 1.0}),
     Job("c", 0.0, 1, 5.0, {"a": 1.0})],
    # two types of one GPU each, rates differ per job
    [Job("a", 0.0, 1, 30.0, {"a": 2.0, "b": 1.0}), Job("b", 0.0, 1, 18.0, {"a": 1.0, "b": 1.0}),
     Job("c", 0.0, 1, 22.0, {"a": 3.0, "b": 0.5})],
]


@pytest.mark.parametrize("case", range(len(TINY)))
def test_one_window_over_everything_reaches_the_round_optimum(case):
    gpus = (("a", 2),) if case == 0 else (("a", 1), ("b", 1))
    inst = _inst(TINY[case], gpus=gpus)
    start = simulate(inst, "gavel.fifo", bounds=False)
    opt = _round_optimum(inst)
    n = inst.n_jobs
    res = improve(inst, start, time_limit=None, max_windows=1, window_jobs=n,
                  window_blocks=60, patience=10)
    validate_schedule(inst, res.schedule, "gavel.fifo")
    assert sum(start.schedule.completion.values()) > opt + 1  # FIFO is not optimal here
    total = res.value * n + sum(j.arrival for j in inst.jobs)
    assert total == pytest.approx(opt, rel=1e-7)
    assert res.value <= res.start_value
    assert lower_bounds(inst).mean_jct <= res.value * (1 + 1e-9)


def test_window_milp_start_is_feasible_with_the_incumbents_value():
    """The incumbent's window, written as a start, satisfies every row and has the
    incumbent's objective (so a solve never returns worse than the incumbent)."""
    inst = _inst(TINY[0])
    start = simulate(inst, "gavel.fifo", bounds=False)
    res = improve(inst, start, time_limit=None, max_windows=3, window_jobs=3,
                  window_blocks=8)
    assert res.extra["mip_start_used"] >= 1


def _random_instance(data) -> Instance:
    n = data.draw(st.integers(2, 5))
    jobs = []
    for i in range(n):
        w = data.draw(st.sampled_from([1, 1, 2]))
        work = data.draw(st.floats(5.0, 60.0))
        ra = data.draw(st.floats(0.5, 3.0))
        rb = data.draw(st.floats(0.2, 3.0))
        arr = data.draw(st.sampled_from([0.0, 0.0, 7.0, 20.0, 35.5]))
        jobs.append(Job(f"j{i}", arr, w, work, {"a": ra, "b": rb}))
    return _inst(jobs, gpus=(("a", 2), ("b", 2)))


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None)
@given(st.data(), st.sampled_from(["gavel.fifo", "gavel.max_min_fairness", "tiresias.las"]),
       st.integers(0, 3))
def test_every_result_validates_and_never_gets_worse(data, policy, seed):
    inst = _random_instance(data)
    start = simulate(inst, policy, bounds=False)
    res = improve(inst, start, time_limit=None, max_windows=4, seed=seed, window_jobs=3,
                  window_blocks=6, block=1, max_block=4, patience=1, check_every=1)
    validate_schedule(inst, res.schedule, policy)
    m = compute_metrics(inst, res.schedule)
    assert m.n_completed == inst.n_jobs
    assert res.value == pytest.approx(m.mean_jct, rel=1e-12)
    assert res.value <= res.start_value
    vals = [h[2] for h in res.history]
    assert all(b < a for a, b in zip(vals, vals[1:]))
    assert res.windows_improved == len(vals) - 1
    assert lower_bounds(inst, Setting.of(capabilities(policy)),
                        methods=("per_job", "pooled")).mean_jct <= res.value * (1 + 1e-9)


def test_same_seed_same_search():
    inst = _inst([Job(f"j{i}", 7.0 * i, 1 + i % 2, 20.0 + 9 * i, {"a": 1.0, "b": 0.5})
                  for i in range(6)], gpus=(("a", 2), ("b", 2)))
    start = simulate(inst, "gavel.max_min_fairness", bounds=False)
    runs = [improve(inst, start, time_limit=None, max_windows=6, seed=3, window_jobs=3,
                    window_blocks=5) for _ in range(2)]
    assert [h[2] for h in runs[0].history] == [h[2] for h in runs[1].history]
    assert runs[0].schedule == runs[1].schedule


def test_ctrl_c_returns_the_incumbent():
    inst = _inst([Job(f"j{i}", 0.0, 1, 30.0 + 7 * i, {"a": 1.0}) for i in range(5)])
    start = simulate(inst, "gavel.max_min_fairness", bounds=False)
    seen = []

    def stop(*h):
        seen.append(h)
        raise KeyboardInterrupt

    res = improve(inst, start, time_limit=None, max_windows=20, window_jobs=5,
                  window_blocks=20, on_improve=stop)
    assert res.stop == "interrupted"
    assert len(seen) == 1 and res.value == seen[0][2] < res.start_value
    validate_schedule(inst, res.schedule, "gavel.max_min_fairness")


def test_constructive_start_validates_and_orders_by_remaining_time():
    inst = _inst([Job("long", 0.0, 1, 100.0, {"a": 1.0}), Job("short", 0.0, 1, 10.0,
                                                                {"a": 1.0})], gpus=(("a", 1),))
    res = fastest_srpt_start(inst)
    assert res.schedule.completion["short"] == pytest.approx(10.0)
    assert res.schedule.completion["long"] == pytest.approx(110.0)
    with pytest.raises(InvalidOption, match="min_speed"):
        FastestSrpt(min_speed=2)


def test_bad_input_is_refused():
    inst = _inst(TINY[0])
    start = simulate(inst, "gavel.fifo", bounds=False)
    with pytest.raises(InvalidOption, match="objective"):
        improve(inst, start, objective="makespan")
    with pytest.raises(InvalidOption, match="time_limit"):
        improve(inst, start, time_limit=-1)
    with pytest.raises(InvalidOption, match="window_jobs"):
        improve(inst, start, window_jobs=0)
    other = _inst([Job("x", 0.0, 1, 5.0, {"a": 1.0})])
    with pytest.raises(InvalidSchedule, match="another instance"):
        improve(other, start)
    unfinished = Schedule((Allocation("a", 0.0, 10.0, "n0", "a", 1),), {})
    with pytest.raises(InvalidSchedule, match="unfinished"):
        improve(inst, unfinished)
    shared = Schedule((Allocation("a", 0.0, 50.0, "n0", "a", 1, share=0.5),),
                      {}, sharing=True)
    with pytest.raises(ModelNotApplicable, match="sharing"):
        improve(inst, shared, policy="salus.lanes")
    with pytest.raises(InvalidSchedule):  # the start must pass its own rules
        improve(inst, Schedule((Allocation("a", 0.0, 10.0, "n0", "a", 3),), {"a": 10.0}))


def test_window_milp_columns_respect_arrival_and_types():
    jobs = [WindowJob(0, 1.0, 1, (1.0, 0.0), 10.0, 0.0, 100.0, True, 2),
            WindowJob(1, 1.0, 2, (1.0, 2.0), 10.0, 0.0, 100.0, False, 0, 5.0, 1.0)]
    data, index = build_window(jobs, Window(0.0, 10.0, 4, np.array([[2, 2, 2, 2],
                                                                      [1, 1, 1, 1]])))
    cols = index["cols"]
    assert {ell for (a, _, ell) in cols if a == 0} == {2, 3}      # not before its arrival
    assert {k for (a, k, _) in cols if a == 0} == {0}             # no rate on type 1
    assert {k for (a, k, _) in cols if a == 1} == {0}             # type 1 too small a gang
    assert 1 in index["phi"] and 0 not in index["phi"]


def test_weighted_objective_and_rules_given_as_a_setting_or_capabilities():
    jobs = [Job(f"j{i}", 0.0, 1, 20.0 + 15 * i, {"a": 1.0}, weight=1.0 + 3 * (i == 3))
            for i in range(4)]
    inst = _inst(jobs, gpus=(("a", 1),))
    start = simulate(inst, "gavel.fifo", bounds=False)
    caps = capabilities("gavel.fifo")
    for rules in (Setting(), caps):
        res = improve(inst, start, policy=rules, objective="weighted_mean_jct",
                      time_limit=None, max_windows=2, window_jobs=4, window_blocks=30)
        validate_schedule(inst, res.schedule, caps)
        m = compute_metrics(inst, res.schedule)
        w = np.array([j.weight for j in inst.jobs])
        c = np.array([res.schedule.completion[j.id] - j.arrival for j in inst.jobs])
        assert res.value == pytest.approx(float(w @ c / w.sum()))
        assert res.value < res.start_value  # the heavy job moves ahead
        assert m.n_completed == 4
    with pytest.raises(InvalidOption, match="policy"):
        improve(inst, start, policy=3.5)
