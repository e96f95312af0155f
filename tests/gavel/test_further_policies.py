"""Gavel's heterogeneity-agnostic makespan and finish-time fairness, the isolated
policy online and water-filling max-min: each checked on an instance worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.gavel.exact import (
    gavel_bisection_makespan,
    max_min_fairness,
    max_min_fairness_water_filling,
    min_total_duration,
    min_total_duration_interior,
)
from optsched.gavel.policy import GavelPolicy, reference_throughputs
from optsched.registry import get_policy, simulate


def test_reference_throughputs_copy_the_reference_rate_to_usable_types():
    T = np.array([[1.0, 3.0, 4.0],     # k80, p100, v100
                  [0.0, 2.0, 5.0],     # cannot use k80: stays 0
                  [1.0, 2.0, 0.0]])    # cannot use v100: its fastest rate instead
    got = reference_throughputs(T, ("k80", "p100", "v100"))
    np.testing.assert_array_equal(got, [[4, 4, 4], [0, 5, 5], [2, 2, 0]])
    np.testing.assert_array_equal(reference_throughputs(T, ("k80", "p100", "v100"), "p100"),
                                  [[3, 3, 3], [0, 2, 2], [2, 2, 0]])


def test_agnostic_makespan_lp_by_hand():
    # one k80 and one v100; job 0: 2 iterations at 2/s on the k80 but 1/s on the v100
    # (as Gavel's 8-worker Recommendation job is faster on P100 than on V100); job 1: 1
    # iteration at 1/s on both. Believed rates (v100's everywhere): job 0 needs
    # s0 >= 2 tau of GPU time, job 1 s1 >= tau, each s <= 1, so tau* = 1/2: the policy
    # plans a makespan of 2 s. Aware: job 0 on the k80 (rate 2 >= 2 tau), job 1 on the
    # v100 (1 >= tau): tau* = 1, makespan 1 s.
    T = np.array([[2.0, 1.0], [1.0, 1.0]])       # (k80, v100)
    W, c, r = np.ones(2), np.ones(2), np.array([2.0, 1.0])
    agn = min_total_duration(reference_throughputs(T, ("k80", "v100")), W, c, r)
    aware = min_total_duration(T, W, c, r)
    assert agn.objective == pytest.approx(2.0, rel=1e-7)
    assert aware.objective == pytest.approx(1.0, rel=1e-7)
    np.testing.assert_allclose(aware.X, [[1, 0], [0, 1]], atol=1e-7)


def test_agnostic_kinds_take_a_reference_type_and_the_others_refuse_it():
    assert GavelPolicy("finish_time_fairness_agnostic", reference="p100").options[
        "reference"] == "p100"
    with pytest.raises(InvalidOption, match="reference"):
        GavelPolicy("finish_time_fairness", reference="v100")


def test_water_filling_by_hand():
    # two GPU types of one GPU each; jobs 0 and 1 run on type 0 only (rate 1), job 2 at
    # 1 on type 0 and 2 on type 1. Equal share c_k / n = 1/3 on usable types, so
    # a_0 = a_1 = (3, 0) and a_2 = (1, 2). Max-min: jobs 0 and 1 share type 0 (y = 1.5
    # each, the value z*); job 2 can then still take all of type 1 (y = 2), which the
    # second level gives it.
    T = [[1.0, 0.0], [1.0, 0.0], [1.0, 2.0]]
    sol = max_min_fairness_water_filling(T, [1, 1, 1], [1, 1])
    assert sol.ok and sol.objective == pytest.approx(1.5, rel=1e-7)
    np.testing.assert_allclose(sol.info["levels"], [1.5, 1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(sol.X, [[0.5, 0], [0.5, 0], [0, 1]], atol=1e-6)
    # the first level is the max-min optimum
    assert max_min_fairness(T, [1, 1, 1], [1, 1]).objective == pytest.approx(1.5, rel=1e-7)


def test_water_filling_weights_and_classes():
    # one GPU type with 2 GPUs; three identical jobs except weights (1, 1, 2): normalised
    # rates a_m = W / (w_m * 2/3): 1.5, 1.5, 0.75. Max-min equalises a_m x_m subject to
    # sum x = 2, x <= 1: x = (0.5, 0.5, 1) gives 0.75 each, job 2 capped at a full GPU.
    sol = max_min_fairness_water_filling([[1.0]] * 3, [1, 1, 1], [2], weights=[1, 1, 2])
    np.testing.assert_allclose(sol.X.ravel(), [0.5, 0.5, 1.0], atol=1e-6)
    np.testing.assert_allclose(sol.info["levels"], [0.75] * 3, rtol=1e-6)
    assert sol.info["classes"] == 2


def test_agnostic_water_filling_splits_rows_in_proportion_to_capacity():
    # types of 1 and 2 GPUs, both usable by both jobs: with T = 1 the equal share is
    # (1/3, 2/3) (c_k / n = (0.5, 1), row scaled to 1), a_m = (1, 1); both jobs get a
    # whole row (level 1), spread 1 : 2 over the types as their GPUs are.
    sol = max_min_fairness_water_filling([[1.0, 3.0], [2.0, 5.0]], [1, 1], [1, 2],
                                         agnostic=True)
    np.testing.assert_allclose(sol.X, [[1 / 3, 2 / 3]] * 2, atol=1e-9)
    np.testing.assert_allclose(sol.info["levels"], [1.0, 1.0], rtol=1e-6)
    assert sol.info["type_split"] == "proportional"


def test_isolated_policy_shares_time_by_hand():
    # one V100, 60 s rounds; a needs 120 s of it, b 60 s, both at t = 0. Isolated: X = 1/2
    # each. Round 0: a tie, the first arrival (a) runs. Round 1: b's priority
    # 0.5 / ((0 + 1/2)/(1 + 1/2)) = 1.5 beats a's 0.5 / 1 = 0.5, b runs and completes at
    # 120 s. Then a alone: 120-180 s. (FIFO would end a at 120 s and b at 180 s.)
    inst = Instance(Cluster((Node("n0", {"v100": 1}),)),
                    (Job("a", 0.0, 1, 120.0, {"v100": 1.0}),
                     Job("b", 0.0, 1, 60.0, {"v100": 1.0})), slot=60.0)
    res = simulate(inst, "gavel.isolated")
    assert res.schedule.completion == pytest.approx({"a": 180.0, "b": 120.0})
    fifo = simulate(inst, "gavel.fifo")
    assert fifo.schedule.completion == pytest.approx({"a": 120.0, "b": 180.0})


@pytest.mark.parametrize("name", ["gavel.finish_time_fairness_agnostic",
                                  "gavel.min_total_duration_agnostic",
                                  "gavel.max_min_fairness_water_filling",
                                  "gavel.max_min_fairness_water_filling_agnostic",
                                  "gavel.isolated"])
def test_registered_under_gavel(name):
    assert isinstance(get_policy(name), GavelPolicy)


@pytest.mark.parametrize("name", ["gavel.min_total_duration_agnostic",
                                  "gavel.finish_time_fairness_agnostic"])
def test_agnostic_programs_spread_rows_over_types(name):
    # one K80 and one V100 (rates 1 and 2), one job of 180 iterations, 60 s rounds. The
    # agnostic program sees rate 2 on both, so only the row sum (1) matters; spread in
    # proportion to the GPUs it is (1/2, 1/2), and the round mechanism alternates the two
    # types: 60 + 120 iterations, done at 120 s whichever type comes first. (A vertex on
    # one type would end at 90 s or 180 s; the aware makespan takes the V100: 90 s.)
    inst = Instance(Cluster((Node("n0", {"k80": 1, "v100": 1}),)),
                    (Job("a", 0.0, 1, 180.0, {"k80": 1.0, "v100": 2.0}),), slot=60.0)
    assert simulate(inst, name).schedule.completion["a"] == pytest.approx(120.0)
    assert simulate(inst, "gavel.min_total_duration").schedule.completion["a"] == \
        pytest.approx(90.0)


def test_gavel_bisection_replayed_by_hand():
    # M* = 2,843,597 s (the first 100 jobs of Gavel's trace): [100, 1e6] holds nothing
    # feasible, so the bracket moves to [1e6, 1e7]: 5.5e6 yes, 3.25e6 yes, 2.125e6 no,
    # 2.6875e6 no, 2.96875e6 yes, 2.828125e6 no; 1.05 x 2.828125e6 >= 2.96875e6: stop.
    assert gavel_bisection_makespan(2_843_597.0) == 2_968_750.0
    for m in (150.0, 1e4, 3.3e7):
        got = gavel_bisection_makespan(m)
        assert m <= got < 1.05 * m


def test_interior_makespan_point_is_between_the_optimum_and_gavels_stop():
    # the instance of test_agnostic_makespan_lp_by_hand, work scaled so that M* = 1000 s
    T = np.array([[2.0, 1.0], [1.0, 1.0]])
    W, c, r = np.ones(2), np.ones(2), np.array([2000.0, 1000.0])
    sol = min_total_duration_interior(T, W, c, r)
    assert sol.ok and sol.info["optimum"] == pytest.approx(1000.0, rel=1e-7)
    M_g = sol.info["bisection_makespan"]
    assert M_g == gavel_bisection_makespan(sol.info["optimum"])
    assert 1000.0 * (1 - 1e-7) <= sol.objective <= M_g * (1 + 1e-6)
