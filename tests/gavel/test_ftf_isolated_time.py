r"""Finish-time fairness's denominator: the default (the job's whole work at today's
isolated rate) and ``isolated_time="accumulated"`` (Gavel's code: the isolated time
accumulated allocation by allocation, optsched.gavel.policy.IsolatedClock).

The example used throughout, worked by hand. One node of 2 V100s, 10 s rounds; job a
(2 workers, 1 step/s per worker, 40 steps) arrives at t = 0, job b (2 workers, 1 step/s
per worker, 20 steps) at t = 10. Rates are :math:`W_m T_m X_m = 2 X_m`.

* Allocation 1, t = 0, a alone. Its isolated share is the whole cluster,
  :math:`X^{iso} = \min((2/1)/2, 1) = 1`, rate :math:`v = 2`. Both rules:
  :math:`\tau_a = 0`, :math:`d_a = 40/2 = 20`; :math:`\rho_a(x) = (0 + 40/(2x))/20 =
  1/x`, so :math:`X_a = 1`: a runs 20 steps by t = 10.
* Allocation 2, t = 10, a and b. Isolated shares :math:`(2/2)/2 = 1/2`, rates 1 each.
  a has 20 steps left, b 20.

  - accumulated: :math:`\tau_a = 0 + (40 - 20)/2 = 10`, :math:`d_a = 10 + 20/1 = 30`;
    b is new, :math:`\tau_b = 0`, :math:`d_b = 20/1 = 20`.
  - default: :math:`d_a = 40/1 = 40` (a's first 20 steps counted at today's halved
    isolated rate: 20 s instead of 10 s), :math:`d_b = 20`.

  With :math:`x + y \le 1` (2 workers each on 2 GPUs),
  :math:`\rho_a = (10 + 20/(2x))/d_a`, :math:`\rho_b = (0 + 20/(2y))/20 = 1/(2y)`; both
  decrease in their share, so the optimum is the unique point :math:`y = 1 - x` where
  they are equal:

  - accumulated: :math:`(10 + 10/x)/30 = 1/(2 - 2x)` gives :math:`2x^2 + 3x - 2 = 0`,
    :math:`x = 1/2`, :math:`\rho^* = 1` (a ran at its isolated rate so far, and the
    isolated share keeps every ratio at 1);
  - default: :math:`(10 + 10/x)/40 = 1/(2 - 2x)` gives :math:`x^2 + 2x - 1 = 0`,
    :math:`x = \sqrt2 - 1 \approx 0.4142`, :math:`\rho^* = (2 + \sqrt2)/4 \approx 0.8536`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.gavel.exact import finish_time_fairness
from optsched.gavel.policy import GavelPolicy, IsolatedClock
from optsched.registry import get_policy
from optsched.sim import simulate

ROOT2 = math.sqrt(2.0)


def _instance() -> Instance:
    cl = Cluster((Node("n0", {"v100": 2}),))
    jobs = (Job("a", arrival=0.0, workers=2, work=40.0, throughput={"v100": 1.0}),
            Job("b", arrival=10.0, workers=2, work=20.0, throughput={"v100": 1.0}))
    return Instance(cl, jobs, slot=10.0)


def _allocations(policy) -> tuple[object, list[tuple[float, dict[str, float]]]]:
    """The simulation and every X the policy computed: (time, job -> its share)."""
    xs: list[tuple[float, dict[str, float]]] = []

    def on_epoch(t, placements):
        X = policy._X
        if X is not None and (not xs or xs[-1][2] is not X):
            xs.append((t, {j: float(X[m].sum()) for m, j in enumerate(policy._ids)}, X))

    res = simulate(_instance(), policy, seed=0, progress=False, on_epoch=on_epoch)
    return res, [(t, x) for t, x, _ in xs]


def test_clock_accumulates_by_hand_over_two_allocations():
    clock = IsolatedClock()
    # allocation 1: a (index 0) alone, 40 steps left, isolated rate 2
    np.testing.assert_allclose(clock.isolated_times(np.array([0]), [40.0], [2.0]), [20.0])
    assert clock.accumulated == {0: 0.0}
    # allocation 2: a did 20 steps at the previous isolated rate 2 -> tau_a = 10;
    # b (index 1) is new: tau_b = 0
    d = clock.isolated_times(np.array([0, 1]), [20.0, 20.0], [1.0, 1.0])
    np.testing.assert_allclose(d, [30.0, 20.0])
    assert clock.accumulated == {0: 10.0, 1: 0.0}
    # a third call with no work done adds nothing; reset() forgets every job
    np.testing.assert_allclose(clock.isolated_times(np.array([0, 1]), [20.0, 20.0],
                                                    [1.0, 1.0]), [30.0, 20.0])
    clock.reset()
    np.testing.assert_allclose(clock.isolated_times(np.array([0]), [20.0], [1.0]), [20.0])


def test_program_optimum_by_hand_under_both_denominators():
    T, W, c = np.array([[1.0], [1.0]]), np.array([2, 2]), np.array([2.0])
    r, t = np.array([20.0, 20.0]), np.array([10.0, 0.0])
    acc = finish_time_fairness(T, W, c, r, t, [30.0, 20.0], rel_tol=1e-7)
    cur = finish_time_fairness(T, W, c, r, t, [40.0, 20.0], rel_tol=1e-7)
    np.testing.assert_allclose(acc.X[:, 0], [0.5, 0.5], atol=1e-5)
    assert acc.objective == pytest.approx(1.0, rel=1e-6)
    np.testing.assert_allclose(cur.X[:, 0], [ROOT2 - 1, 2 - ROOT2], atol=1e-5)
    assert cur.objective == pytest.approx((2 + ROOT2) / 4, rel=1e-6)


@pytest.mark.parametrize("rounds", ["alg1", "original"])
def test_simulator_run_by_hand(rounds):
    # both round mechanics compute X at t = 0 and at b's arrival, t = 10 (Gavel's
    # simulator recomputes while no reset has happened at a positive time)
    acc = get_policy("gavel.finish_time_fairness", rounds=rounds, isolated_time="accumulated")
    res, xs = _allocations(acc)
    assert [t for t, _ in xs[:2]] == [0.0, 10.0]
    assert xs[0][1] == pytest.approx({"a": 1.0})
    assert xs[1][1]["a"] == pytest.approx(0.5, abs=1e-3)
    assert xs[1][1]["b"] == pytest.approx(0.5, abs=1e-3)
    assert acc._clock.accumulated[0] == pytest.approx(10.0)
    assert set(res.schedule.completion) == {"a", "b"}
    # the default on the same run: a's past counted at today's isolated rate
    res_d, xs_d = _allocations(get_policy("gavel.finish_time_fairness", rounds=rounds))
    assert xs_d[1][1]["a"] == pytest.approx(ROOT2 - 1, abs=1e-3)
    assert xs_d[1][1]["b"] == pytest.approx(2 - ROOT2, abs=1e-3)
    # agnostic: one GPU type, so the V100-copied rates are the rates: the same X
    ag = get_policy("gavel.finish_time_fairness_agnostic", rounds=rounds,
                    isolated_time="accumulated")
    _, xs_ag = _allocations(ag)
    assert xs_ag[1][1]["a"] == pytest.approx(0.5, abs=1e-3)
    # the policy's state is cleared between runs: a second run is the same
    res2, xs2 = _allocations(acc)
    assert xs2 == xs
    assert res2.schedule.completion == res.schedule.completion


def test_default_is_current_and_unchanged():
    # "current" is the default's name: the same decisions and completions
    res_d, xs_d = _allocations(get_policy("gavel.finish_time_fairness"))
    res_c, xs_c = _allocations(get_policy("gavel.finish_time_fairness",
                                          isolated_time="current"))
    assert xs_d == xs_c
    assert res_d.schedule.completion == res_c.schedule.completion
    assert GavelPolicy("finish_time_fairness")._clock is None


def test_bad_value_and_other_policies_raise():
    with pytest.raises(InvalidOption) as e:
        GavelPolicy("finish_time_fairness", isolated_time="paper")
    assert e.value.path == "isolated_time"
    for kind in ("max_min_fairness", "min_total_duration", "isolated"):
        with pytest.raises(InvalidOption) as e:
            GavelPolicy(kind, isolated_time="accumulated")
        assert e.value.path == "isolated_time"
    with pytest.raises(InvalidOption):
        get_policy("gavel.max_min_fairness", isolated_time="accumulated")


def test_accumulated_takes_gavels_isolated_share_of_every_type():
    # one V100 and one K80; a (1 worker, 10 steps at 1 step/s, V100 only) alone. Gavel's
    # isolated share gives it (1/1)/1 = 1 of each type, the row scaled to 1/2 + 1/2, so
    # its isolated rate is 1 x 1/2 = 0.5 (the K80 half counts nothing) and d_a = 10/0.5
    # = 20; the default's share masks the K80 first: 1 of the V100, rate 1, d_a = 10.
    cl = Cluster((Node("n0", {"v100": 1, "k80": 1}),))
    inst = Instance(cl, (Job("a", arrival=0.0, workers=1, work=10.0,
                             throughput={"v100": 1.0}),), slot=10.0)
    for rounds in ("alg1", "original"):
        pol = get_policy("gavel.finish_time_fairness", rounds=rounds,
                         isolated_time="accumulated")
        res = simulate(inst, pol, seed=0, progress=False)
        assert pol._clock._previous == {0: (10.0, 0.5)}
        assert res.schedule.completion["a"] == pytest.approx(10.0)
