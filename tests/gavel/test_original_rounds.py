"""Gavel's simulator's round mechanics (``rounds="original"``) on instances small enough
to follow by hand (optsched.gavel.policy.OriginalRounds)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate


def _run(inst, policy):
    placed: list[tuple[float, tuple]] = []
    res = simulate(inst, policy, seed=0, progress=False,
                   on_epoch=lambda t, ps: placed.append(
                       (t, tuple(sorted((p.job, p.gpu_type) for p in ps)))))
    return res, placed


def test_whole_steps_and_time_priorities_by_hand():
    # one GPU, two jobs of 24 steps at 1.25 steps/s, 10 s rounds, isolated (X = 1/2 each).
    # A round runs int(1.25 * 10) = 12 whole steps in 9.6 s and ends then.
    # t=0: reset, both at half a round (5 s) of 10 s: equal priority -> a (arrival).
    # t=9.6: a has 14.6 of 19.6 s: 0.5/(14.6/19.6) < 0.5/(5/19.6) -> b.
    # t=19.2: 14.6 s each, equal -> a, which completes at 28.8.
    # t=28.8: a reset (the last one was at t = 0): b alone runs, completes at 38.4.
    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = tuple(Job(j, arrival=0.0, workers=1, work=24.0, throughput={"v100": 1.25})
                 for j in ("a", "b"))
    inst = Instance(cl, jobs, slot=10.0)
    pol = get_policy("gavel.isolated", rounds="original")
    res, placed = _run(inst, pol)
    assert res.schedule.completion["a"] == pytest.approx(28.8)
    assert res.schedule.completion["b"] == pytest.approx(38.4)
    starts = [t for t, _ in placed]
    np.testing.assert_allclose(starts, [0.0, 9.6, 19.2, 28.8])
    assert [ps for _, ps in placed] == [(("a", "v100"),), (("b", "v100"),),
                                        (("a", "v100"),), (("b", "v100"),)]
    # b's deficit at the reset of t = 28.8: 0.5 x 28.8 s owed, 9.6 s received
    assert pol.rounds._deficit[1] == pytest.approx([4.8])
    assert pol.rounds.resets == 2
    # the paper's Alg. 1 credits the rate over full 10 s rounds: a ends at 29.2
    alg1 = simulate(inst, get_policy("gavel.isolated"), seed=0, progress=False)
    assert alg1.schedule.completion["a"] == pytest.approx(29.2)


def test_new_job_waits_for_the_reset_holding_an_idle_gpu():
    # two GPUs; a arrives at t=10 (reset there), b at t=100. b is not in X until the
    # next reset, at the first round start >= 10 + 1920 s: rounds start at 10, 370, ...,
    # 1810, 2170. Until then the walk gives b a GPU it does not run on (idle). From 2170
    # both run; b's 360 steps at 1 step/s end at 2530.
    cl = Cluster((Node("n0", {"v100": 2}),))
    jobs = (Job("a", arrival=10.0, workers=1, work=1e5, throughput={"v100": 1.0}),
            Job("b", arrival=100.0, workers=1, work=360.0, throughput={"v100": 1.0}))
    inst = Instance(cl, jobs, slot=360.0)
    pol = get_policy("gavel.isolated", rounds="original")
    res, placed = _run(inst, pol)
    first_b = min(t for t, ps in placed if any(j == "b" for j, _ in ps))
    assert first_b == pytest.approx(2170.0)
    assert res.schedule.completion["b"] == pytest.approx(2530.0)
    assert pol.rounds.idle_gpu_rounds == 5  # rounds 370 ... 1810
    # the paper's Alg. 1 recomputes X at once: b runs from t = 370
    alg1 = simulate(inst, get_policy("gavel.isolated"), seed=0, progress=False)
    assert alg1.schedule.completion["b"] == pytest.approx(730.0)


def test_agnostic_walk_is_gavels_shuffle_and_share_counts_every_type():
    # one job, one GPU of each type: its isolated share is 1/3 of every type, and it runs
    # each round on the first type of the walk: Gavel's list v100, p100, k80 shuffled by
    # random.Random(seed + 5), once per round
    cl = Cluster((Node("n0", {"k80": 1, "p100": 1, "v100": 1}),))
    job = Job("a", arrival=0.0, workers=1, work=360.0 * 6,
              throughput={"k80": 1.0, "p100": 1.0, "v100": 1.0})
    inst = Instance(cl, (job,), slot=360.0)
    res, placed = _run(inst, get_policy("gavel.isolated", rounds="original"))
    shuffler = random.Random(5)
    expected = []
    for _ in range(6):
        walk = ["v100", "p100", "k80"]
        shuffler.shuffle(walk)
        expected.append(walk[0])
    assert [ps[0][1] for _, ps in placed] == expected
    # a job that cannot use k80 still gets Gavel's share of it (1/3 of each type)
    two = Job("b", arrival=0.0, workers=1, work=100.0,
              throughput={"p100": 1.0, "v100": 1.0})
    inst2 = Instance(cl, (two,), slot=360.0)
    pol = get_policy("gavel.isolated", rounds="original")
    simulate(inst2, pol, seed=0, progress=False, max_time=1.0)
    np.testing.assert_allclose(pol._X, [[1 / 3, 1 / 3, 1 / 3]])


def test_rounds_option_is_checked():
    with pytest.raises(InvalidOption, match="rounds"):
        get_policy("gavel.max_min_fairness", rounds="gavel")
    with pytest.raises(InvalidOption, match="fill_leftover"):
        get_policy("gavel.isolated", rounds="original", fill_leftover=False)


def test_round_running_nothing_forces_a_reset_at_once():
    # one GPU: a (t=10, reset there) runs 360 steps to t=370; b arrives at t=100, outside
    # X, and its entry does not fit while a runs. At t=370 only b is left, outside X, and
    # 370 - 10 < 1920 s: the round runs nothing. Gavel's simulator (no job running, none
    # to arrive) then sets its last reset time to 0 and resets at once: b runs from 370
    # and completes at 730 (a tick later here: the simulator's smallest epoch).
    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = (Job("a", arrival=10.0, workers=1, work=360.0, throughput={"v100": 1.0}),
            Job("b", arrival=100.0, workers=1, work=360.0, throughput={"v100": 1.0}))
    inst = Instance(cl, jobs, slot=360.0)
    pol = get_policy("gavel.isolated", rounds="original")
    res, placed = _run(inst, pol)
    assert res.schedule.completion["a"] == pytest.approx(370.0)
    assert res.schedule.completion["b"] == pytest.approx(730.0, abs=1e-6)
    assert pol.rounds.resets == 2
    assert [ps for _, ps in placed if ps] == [(("a", "v100"),), (("b", "v100"),)]


def test_fifo_recomputes_its_allocation_only_at_gavels_resets():
    # two V100s, 1 step/s, 360 s rounds (each round runs 360 whole steps in 360 s).
    # t=0: the first reset: a and b run. b's 360 steps end at 360 (round end).
    # t=360: c (arrived at 10) is new and the last reset was at t = 0: a reset; c runs
    # and ends at 460. d arrives at 400. t=720: c is gone and d is new, but the last
    # reset was at 360: X stays until the first round start >= 360 + 1920 = 2280, i.e.
    # 2520; FIFO runs nothing outside X, so c's GPU stays idle and d ends at 2570.
    cl = Cluster((Node("n0", {"v100": 2}),))
    jobs = (Job("a", arrival=0.0, workers=1, work=1e5, throughput={"v100": 1.0}),
            Job("b", arrival=0.0, workers=1, work=360.0, throughput={"v100": 1.0}),
            Job("c", arrival=10.0, workers=1, work=100.0, throughput={"v100": 1.0}),
            Job("d", arrival=400.0, workers=1, work=50.0, throughput={"v100": 1.0}))
    inst = Instance(cl, jobs, slot=360.0)
    res = simulate(inst, get_policy("gavel.fifo", rounds="original"), seed=0,
                   progress=False)
    assert res.schedule.completion["c"] == pytest.approx(460.0)
    assert res.schedule.completion["d"] == pytest.approx(2570.0)
    alg1 = simulate(inst, get_policy("gavel.fifo"), seed=0, progress=False)
    assert alg1.schedule.completion["d"] == pytest.approx(770.0)


def test_agnostic_fifo_assigns_the_last_open_type_by_name_as_gavels_code():
    # V100 x2, K80 x2. Gavel's FIFOPolicy(mode="base") draws a type index (Python's
    # Random(0): 1, then 0) but assigns the type left in its loop variable: the last open
    # type by name. a -> v100 (1 left); b (2 GPUs) fits only the K80s, yet gets v100
    # too. The round runs a alone (b's gang does not fit), and b waits with both K80s
    # idle until a's reset at 360, then runs on the V100s: 360 steps at 2/s, 180 s.
    cl = Cluster((Node("n0", {"v100": 2, "k80": 2}),))
    jobs = (Job("a", arrival=0.0, workers=1, work=360.0,
                throughput={"v100": 1.0, "k80": 0.5}),
            Job("b", arrival=0.0, workers=2, work=360.0,
                throughput={"v100": 1.0, "k80": 0.5}))
    inst = Instance(cl, jobs, slot=360.0)
    res, placed = _run(inst, get_policy("gavel.fifo_agnostic", rounds="original"))
    assert placed[0][1] == (("a", "v100"),)
    assert res.schedule.completion["a"] == pytest.approx(360.0)
    assert res.schedule.completion["b"] == pytest.approx(540.0)
    assert all(typ == "v100" for _, ps in placed for _, typ in ps)
