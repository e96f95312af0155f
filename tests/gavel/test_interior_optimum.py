"""Max-min and finish-time fairness as Gavel's code answers them (``point="interior"``):
an interior point of the optimal face instead of a vertex, on a case derived by hand
whose optimum is not unique."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.solvers import solve_program

glp = importlib.import_module("optsched.gavel.exact")  # the module, not exact()

# Two jobs, two types of one GPU each. Gavel's proportional share is p = c / sum(c) =
# (1/2, 1/2), so job a (rates 2 and 1) has thr_prop = 3/2 and A_a = (4/3, 2/3); job b
# (rates 1 and 1) has A_b = (1, 1). b's rate is its row sum, at most 1, so z* <= 1; and
# x_a1 = x_b2 = 1 reaches 1: z* = 1. The optimal face is every X with b's row full
# (x_b1 + x_b2 = 1), a's rate 4/3 x_a1 + 2/3 x_a2 >= 1 and both types within 1; it is
# not one point (x_a1 = alpha, x_a2 = 1 - alpha, x_b1 = 1 - alpha, x_b2 = alpha is
# optimal for every alpha in [1/2, 1]). A vertex of it needs four independent tight
# constraints besides z = 1; the two row sums and two capacities have rank 3 (rows and
# columns sum alike), so every vertex has an entry at 0 or a's rate exactly 1. An
# interior-point method stops inside: every entry > 0 and a's rate > 1.
T = np.array([[2.0, 1.0], [1.0, 1.0]])
W = np.array([1, 1])
C = np.array([1.0, 1.0])


def _face_slack(X: np.ndarray) -> float:
    """How far X is inside the optimal face: the least of its entries and of a's rate
    above z* = 1 (both 0 at either end of the face)."""
    return float(min(X.min(), 4 / 3 * X[0, 0] + 2 / 3 * X[0, 1] - 1.0))


def test_gavel_program_is_the_formula_by_hand():
    A = glp.gavel_rates(T, W, C)
    np.testing.assert_allclose(A, [[4 / 3, 2 / 3], [1.0, 1.0]], rtol=1e-15)
    # agnostic: rate 1 on every type, thr_prop = sum(p) = 1, so A = W / w = 1
    np.testing.assert_array_equal(glp.gavel_rates(T, W, C, agnostic=True), np.ones((2, 2)))
    data = glp.gavel_max_min_program(T, W, C)
    assert data.sense == "max" and data.n_cols == 5 and data.n_rows == 2 * 2 + 2
    # a variable on every entry, X >= 0 only (the rows bound it), z free
    np.testing.assert_array_equal(data.col_lb, [0, 0, 0, 0, -np.inf])
    assert np.all(np.isinf(data.col_ub))
    dense = data.A.toarray()
    np.testing.assert_allclose(dense[:2, :4], [[1, 1, 0, 0], [0, 0, 1, 1]])  # row sums
    np.testing.assert_allclose(dense[2:4, :4], [[1, 0, 1, 0], [0, 1, 0, 1]])  # capacity
    np.testing.assert_allclose(dense[4:, :], [[-4 / 3, -2 / 3, 0, 0, 1],
                                              [0, 0, -1, -1, 1]])  # z <= A x
    np.testing.assert_array_equal(data.row_ub, [1, 1, 1, 1, 0, 0])


def test_interior_point_is_inside_the_face_the_vertex_ends():
    vertex = solve_program(glp.gavel_max_min_program(T, W, C), "highs")
    inner = glp.max_min_fairness_interior(T, W, C)
    assert vertex.success and inner.ok
    # both are optima of the same program: z* = 1 by hand
    assert inner.objective == pytest.approx(vertex.objective, rel=1e-7)
    assert vertex.objective == pytest.approx(1.0, rel=1e-9)
    # and of optsched's own max-min program (its equal share is Gavel's here)
    ours = glp.max_min_fairness(T, W, C, pareto=False, aggregate=False)
    assert ours.objective == pytest.approx(inner.objective, rel=1e-7)
    assert _face_slack(vertex.values["X"]) == pytest.approx(0.0, abs=1e-7)
    assert _face_slack(inner.X) > 1e-3  # 4 orders above the solvers' tolerances
    assert inner.info["method"] == "clarabel"


def test_highs_interior_point_is_inside_too():
    inner = glp.max_min_fairness_interior(T, W, C, method="highs-ipm")
    assert inner.ok and inner.objective == pytest.approx(1.0, rel=1e-7)
    assert _face_slack(inner.X) > 1e-3


def test_unusable_type_gets_nothing():
    # job b cannot use type 2: Gavel's program still has its variable (rate 0 there);
    # the returned X is 0 there, as Gavel's round mechanism never runs it there
    T0 = np.array([[2.0, 1.0], [1.0, 0.0]])
    data = glp.gavel_max_min_program(T0, W, C)
    assert data.n_cols == 5 and np.all(np.isinf(data.col_ub))
    inner = glp.max_min_fairness_interior(T0, W, C)
    assert inner.ok and inner.X[1, 1] == 0.0
    vertex = solve_program(data, "highs")
    assert inner.objective == pytest.approx(vertex.objective, rel=1e-7)


def test_bad_model_options_raise():
    with pytest.raises(InvalidOption, match="method"):
        glp.max_min_fairness_interior(T, W, C, method="ecos")
    with pytest.raises(InvalidOption, match="solver"):
        glp.max_min_fairness_interior(T, W, C, solver="SCS")


@pytest.mark.parametrize("options, field", [
    ({"pareto": "lp"}, "pareto"),
    ({"aggregate": True}, "aggregate"),
    ({"backend": "pyomo"}, "backend"),
    ({"backend": "cvxpy", "solver": "SCS"}, "solver"),
    ({"solve_options": {"solver": "SCS"}}, "solve_options.solver"),
])
def test_bad_policy_combinations_raise(options, field):
    with pytest.raises(InvalidOption) as err:
        get_policy("gavel.max_min_fairness", point="interior", rounds="original", **options)
    assert err.value.path == field


def test_point_is_refused_where_it_is_not_an_option():
    with pytest.raises(InvalidOption) as err:
        get_policy("gavel.finish_time_fairness_agnostic", point="interior")
    assert err.value.path == "point"
    with pytest.raises(InvalidOption) as err:
        get_policy("gavel.finish_time_fairness", point="interior", backend="cvxpy")
    assert err.value.path == "backend"
    with pytest.raises(InvalidOption) as err:
        glp.finish_time_fairness_interior(T, W, C, [100.0, 100.0], [0.0, 0.0],
                                          backend="cvxpy")
    assert err.value.path == "backend"


def test_policy_methods_by_backend():
    assert get_policy("gavel.max_min_fairness", point="interior"
                      ).options["interior_method"] == "clarabel"
    assert get_policy("gavel.max_min_fairness_agnostic", point="interior", backend="highs"
                      ).options["interior_method"] == "highs-ipm"
    # the default is untouched: HiGHS, the vertex
    pol = get_policy("gavel.max_min_fairness")
    assert pol.options == {"backend": "highs", "solve_options": {}}


@pytest.mark.parametrize("kind", ["gavel.max_min_fairness", "gavel.max_min_fairness_agnostic",
                                  "gavel.finish_time_fairness"])
def test_runs_in_the_simulator_with_original_rounds(kind):
    # the hand case as a cluster: one V100, one P100; b's work ends first
    cl = Cluster((Node("n0", {"v100": 1}), Node("n1", {"p100": 1})))
    jobs = (Job("a", arrival=0.0, workers=1, work=7200.0,
                throughput={"v100": 2.0, "p100": 1.0}),
            Job("b", arrival=0.0, workers=1, work=3600.0,
                throughput={"v100": 1.0, "p100": 1.0}))
    inst = Instance(cl, jobs, slot=360.0)
    pol = get_policy(kind, point="interior", rounds="original")
    first: list[np.ndarray] = []
    res = simulate(inst, pol, seed=0, progress=False,
                   on_epoch=lambda t, ps: first.append(pol._X.copy()) if not first else None)
    assert set(res.schedule.completion) == {"a", "b"}
    assert pol.stats()["lp_solves"] >= 1
    # X at t = 0 is the interior optimum: every entry of both jobs strictly positive
    assert first[0].min() > 1e-3


# Finish-time fairness on the same jobs, 100 steps each, both just arrived. The isolated
# share gives each job half of each type: a runs at 1.5, b at 1, so d_a = 100/1.5 and
# d_b = 100 s, and rho_a = 1.5/thr_a, rho_b = 1/thr_b. b's rate is at most its row sum,
# 1, so rho* >= 1; thr_b = 1 with thr_a = 2 x_a1 + x_a2 >= 1.5 reaches 1: rho* = 1. The
# optimal face is the max-min one with a's bound 1.5 in place of z* (b's row full, a's
# rate >= 1.5); every vertex of it has an entry at 0 or a's rate exactly 1.5.
R = np.array([100.0, 100.0])
ELAPSED = np.zeros(2)


def _ftf_slack(X: np.ndarray) -> float:
    return float(min(X.min(), 2 * X[0, 0] + X[0, 1] - 1.5))


def test_finish_time_fairness_interior_is_inside_the_face():
    vertex = glp.finish_time_fairness(T, W, C, R, ELAPSED)
    inner = glp.finish_time_fairness_interior(T, W, C, R, ELAPSED)
    assert vertex.ok and inner.ok
    assert vertex.objective == pytest.approx(1.0, rel=1e-4)  # the bisection's rel_tol
    # the interior point is no worse than the value it was asked for
    assert inner.info["rho_hat"] == vertex.objective
    assert inner.info["lower"] <= inner.objective <= vertex.objective * (1 + 1e-7)
    assert _ftf_slack(vertex.X) == pytest.approx(0.0, abs=1e-7)
    assert _ftf_slack(inner.X) > 1e-3
