"""Gavel's packed (space-sharing) policies: the LP over job combinations and the
simulated runs."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.catalog import read_gavel_trace
from optsched.gavel.exact import max_min_fairness, max_min_fairness_packed
from optsched.gavel.model import Pairs
from optsched.registry import get_policy
from optsched.sim import simulate

T = np.array([[4.0, 2.0], [3.0, 3.0], [1.0, 1.0], [2.0, 1.0]])
W = np.array([1, 1, 1, 2])
C = np.array([1, 2])


def _pairs() -> Pairs:
    # jobs 0 and 1 co-located: 3 + 2.5 of their 4 + 3 on type 0; 0 and 2 on type 1 only
    R = np.zeros((2, 2, 2))
    R[0, :, 0] = (3.0, 2.5)
    R[1, :, 1] = (1.8, 0.9)
    return Pairs(np.array([[0, 1], [0, 2]]), R)


def test_without_pairs_it_is_gavels_max_min_program():
    ref = max_min_fairness(T, W, C, aggregate=False)
    got, Y = max_min_fairness_packed(T, W, C, Pairs.empty(2))
    assert got.objective == pytest.approx(ref.objective, rel=1e-9)
    assert Y.shape == (0, 2)


def test_pairs_never_lower_the_optimum_and_the_answer_is_feasible():
    base, _ = max_min_fairness_packed(T, W, C, Pairs.empty(2))
    got, Y = max_min_fairness_packed(T, W, C, _pairs())
    assert got.objective >= base.objective - 1e-9
    assert got.objective > base.objective + 1e-6  # pairing job 0 with 1 helps here
    X, p = got.X, _pairs()
    time = X.sum(axis=1)
    for q, (a, b) in enumerate(p.rows):
        time[a] += Y[q].sum()
        time[b] += Y[q].sum()
    assert (time <= 1 + 1e-7).all()
    load = (W[:, None] * X).sum(axis=0) + (W[p.rows[:, 0], None] * Y).sum(axis=0)
    assert (load <= C + 1e-7).all()
    assert Y[0, 1] == 0 and Y[1, 0] == 0  # a pair only where both rates are measured


def test_backends_agree_on_the_packed_optimum(backend):
    ref, _ = max_min_fairness_packed(T, W, C, _pairs())
    got, _ = max_min_fairness_packed(T, W, C, _pairs(), backend=backend)
    assert got.objective == pytest.approx(ref.objective, rel=1e-6)


@pytest.fixture(scope="module")
def gavel20():
    t = read_gavel_trace()
    return t.replace(jobs=t.jobs[:20])


@pytest.mark.slow  # 3 s each; the matrix cells run both policies in the default suite
@pytest.mark.parametrize("policy", ["gavel.fifo_packed", "gavel.max_min_fairness_packed"])
def test_packed_policies_simulate_and_validate(policy, gavel20):
    res = simulate(gavel20, get_policy(policy), seed=0, progress=False)
    assert res.schedule.colocation
    assert len(res.schedule.completion) == 20  # validated by the simulator's finalize
    pairs = [a for a in res.schedule.allocations if a.partner is not None]
    if policy == "gavel.max_min_fairness_packed":
        assert pairs  # the trace's measured pairs are used
    for a in pairs:  # every partnered allocation runs at a measured rate
        assert gavel20.colocated_rate(a.job, a.partner, a.gpu_type) > 0


R_WORK = np.array([100.0, 200.0, 50.0, 70.0])


def test_packed_makespan_is_the_unpacked_one_without_pairs_and_never_above_it():
    from optsched.gavel.exact import min_total_duration, min_total_duration_packed
    from optsched.gavel.model import packed_throughput

    ref = min_total_duration(T, W, C, R_WORK)
    base, _ = min_total_duration_packed(T, W, C, Pairs.empty(2), R_WORK)
    assert base.objective == pytest.approx(ref.objective, rel=1e-6)
    got, Y = min_total_duration_packed(T, W, C, _pairs(), R_WORK)
    assert got.objective <= base.objective * (1 + 1e-9)
    # the objective is the makespan the returned allocation reaches
    thr = packed_throughput(T, W, _pairs(), got.X, Y)
    assert np.max(R_WORK / thr) == pytest.approx(got.objective, rel=1e-9)


def test_packed_finish_time_fairness_brackets_the_unpacked_optimum_without_pairs():
    from optsched.gavel.exact import finish_time_fairness, finish_time_fairness_packed

    elapsed = np.array([10.0, 0.0, 30.0, 5.0])
    iso = np.array([80.0, 150.0, 60.0, 90.0])
    ref = finish_time_fairness(T, W, C, R_WORK, elapsed, isolated_time=iso,
                               aggregate=False)
    got, _ = finish_time_fairness_packed(T, W, C, Pairs.empty(2), R_WORK, elapsed, iso)
    assert got.objective == pytest.approx(ref.objective, rel=3e-4)
    paired, _ = finish_time_fairness_packed(T, W, C, _pairs(), R_WORK, elapsed, iso)
    assert paired.objective <= got.objective * (1 + 3e-4)
    assert paired.info["lower"] <= paired.objective


def test_backends_agree_on_the_packed_makespan(backend):
    from optsched.gavel.exact import min_total_duration_packed

    ref, _ = min_total_duration_packed(T, W, C, _pairs(), R_WORK)
    got, _ = min_total_duration_packed(T, W, C, _pairs(), R_WORK, backend=backend)
    assert got.objective == pytest.approx(ref.objective, rel=1e-6)


def test_the_interior_optimum_reaches_the_vertex_value():
    vertex, _ = max_min_fairness_packed(T, W, C, _pairs())
    inside, Y = max_min_fairness_packed(T, W, C, _pairs(), point="interior")
    assert inside.objective == pytest.approx(vertex.objective, rel=1e-5)
    assert inside.info["point"] == "interior" and Y.shape == (2, 2)


def test_packed_policy_options_are_checked():
    from optsched.errors import InvalidOption
    from optsched.gavel.policy import GavelPackedPolicy

    with pytest.raises(InvalidOption, match="point"):
        GavelPackedPolicy("finish_time_fairness_packed", point="interior")
    with pytest.raises(InvalidOption, match="backend"):
        GavelPackedPolicy(point="interior", backend="pyomo")
    with pytest.raises(InvalidOption, match="kind"):
        GavelPackedPolicy("max_min_fairness")


def test_packed_cost_policy_is_max_sum_throughput_without_pairs_and_prices():
    from optsched.gavel.exact import max_sum_throughput, max_sum_throughput_packed
    from optsched.gavel.model import packed_throughput

    ref = max_sum_throughput(T, W, C, aggregate=False)
    base, _ = max_sum_throughput_packed(T, W, C, Pairs.empty(2))
    assert base.objective == pytest.approx(ref.objective, rel=1e-9)
    got, Y = max_sum_throughput_packed(T, W, C, _pairs())
    assert got.objective >= base.objective - 1e-9
    # an SLO row is met; an impossible one is dropped, and said so
    b = np.array([np.nan, np.nan, 0.5, np.nan])
    slo, Y = max_sum_throughput_packed(T, W, C, _pairs(), slo_rate=b)
    assert packed_throughput(T, W, _pairs(), slo.X, Y)[2] >= 0.5 - 1e-7
    assert not slo.info["slo_dropped"]
    assert slo.objective <= got.objective + 1e-9
    none, _ = max_sum_throughput_packed(T, W, C, _pairs(), slo_rate=[np.nan, 1e3, np.nan,
                                                                     np.nan])
    assert none.info["slo_dropped"] and none.objective == pytest.approx(got.objective)


def test_backends_agree_on_the_packed_cost_policy(backend):
    from optsched.gavel.exact import max_sum_throughput_packed

    ref, _ = max_sum_throughput_packed(T, W, C, _pairs(), prices=[3.0, 1.0])
    got, _ = max_sum_throughput_packed(T, W, C, _pairs(), prices=[3.0, 1.0],
                                       backend=backend)
    assert got.objective == pytest.approx(ref.objective, rel=1e-6)


def test_packed_water_filling_is_the_unpacked_one_without_pairs():
    from optsched.gavel.exact import (
        max_min_fairness_water_filling,
        max_min_fairness_water_filling_packed,
    )

    ref = max_min_fairness_water_filling(T, W, C)
    got, _ = max_min_fairness_water_filling_packed(T, W, C, Pairs.empty(2))
    np.testing.assert_allclose(got.info["levels"], ref.info["levels"], rtol=1e-5)
    paired, _ = max_min_fairness_water_filling_packed(T, W, C, _pairs())
    top, _ = max_min_fairness_packed(T, W, C, _pairs())
    assert paired.objective == pytest.approx(top.objective, rel=1e-6)  # first level
    assert (paired.info["levels"] >= paired.objective * (1 - 1e-6)).all()


def test_the_interior_packed_makespan_is_gavels_kind_of_answer():
    from optsched.gavel.exact import gavel_bisection_makespan, min_total_duration_packed

    big = R_WORK * 1e4  # makespans above Gavel's 100 s bisection floor
    vertex, _ = min_total_duration_packed(T, W, C, _pairs(), big)
    inside, _ = min_total_duration_packed(T, W, C, _pairs(), big, point="interior")
    assert inside.info["optimum"] == pytest.approx(vertex.objective)
    bound = gavel_bisection_makespan(vertex.objective)
    assert vertex.objective * (1 - 1e-6) <= inside.objective <= bound * (1 + 1e-6)
    assert bound < 1.05 * vertex.objective
