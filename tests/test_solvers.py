"""The solver layer: three backends agree with each other and with scipy, report statuses,
follow one dual sign convention, export files HiGHS can read back, and validate options."""

import dataclasses
import itertools

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, linear_sum_assignment, linprog, milp

from optsched.core.result import Status
from optsched.errors import InvalidOption, UnknownName
from optsched.solvers import (
    BACKENDS,
    LinearProgram,
    available_backends,
    solve_program,
    write_program,
)

TOL = 1e-6


def close(a, b, tol=TOL):
    return a is not None and b is not None and abs(a - b) <= tol * max(1.0, abs(b))


def check_solution(data, r):
    """Common invariants of an optimal Result."""
    assert r.status is Status.OPTIMAL, (r.backend, r.status, r.message)
    assert r.build_seconds >= 0 and r.solve_seconds >= 0
    x = np.concatenate([r.values[b.name].ravel() for b in data.var_blocks])
    assert data.max_violation(x) <= 1e-6
    assert close(r.objective, data.objective_value(x))
    assert close(r.bound, r.objective, 1e-4)  # HiGHS's default mip_rel_gap is 1e-4
    if data.is_mip:
        assert r.duals is None and "col_duals" not in r.extra
    else:
        check_dual_certificate(data, r)


def check_dual_certificate(data, r, tol=1e-6):
    """Duals in the package convention: signs match the active bound, ``z = c - A.T y``
    and the objective equals the dual objective (so every dual is d obj / d bound)."""
    y = np.concatenate([r.duals[b.name] for b in data.row_blocks]) if data.n_rows else []
    z = np.concatenate([r.extra["col_duals"][b.name].ravel() for b in data.var_blocks])
    y = np.asarray(y, dtype=float)
    assert np.allclose(z, data.c - data.A.T @ y, atol=tol)
    up = 1.0 if data.sense == "max" else -1.0  # sign of a dual whose upper bound is active
    total = data.offset
    for duals, lo, hi in ((y, data.row_lb, data.row_ub), (z, data.col_lb, data.col_ub)):
        at_hi, at_lo = up * duals > tol, up * duals < -tol
        assert np.all(np.isfinite(hi[at_hi])) and np.all(np.isfinite(lo[at_lo]))
        total += duals[at_hi] @ hi[at_hi] + duals[at_lo] @ lo[at_lo]
    assert close(total, r.objective, 1e-5)


def solve_all(data, **kw):
    results = {b: solve_program(data, b, **kw) for b, ok in available_backends().items() if ok}
    assert "highs" in results
    return results


def oracle(data):
    """scipy's optimum (``milp`` for MILPs, ``linprog`` for LPs), in the program's sense."""
    sign = -1.0 if data.sense == "max" else 1.0
    bounds = list(zip(np.where(np.isinf(data.col_lb), None, data.col_lb),
                      np.where(np.isinf(data.col_ub), None, data.col_ub)))
    if data.is_mip:
        cons = [LinearConstraint(data.A, data.row_lb, data.row_ub)] if data.n_rows else []
        res = milp(sign * data.c, integrality=data.integer.astype(int), constraints=cons,
                   bounds=Bounds(data.col_lb, data.col_ub), options={"mip_rel_gap": 0})
        assert res.status == 0
        return sign * res.fun + data.offset
    A = data.A.tocsr()
    eq = data.row_lb == data.row_ub
    le, ge = ~eq & np.isfinite(data.row_ub), ~eq & np.isfinite(data.row_lb)
    A_ub = sp.vstack([A[le], -A[ge]]) if (le | ge).any() else None
    b_ub = np.concatenate([data.row_ub[le], -data.row_lb[ge]])
    res = linprog(sign * data.c, A_ub=A_ub, b_ub=b_ub if A_ub is not None else None,
                  A_eq=A[eq] if eq.any() else None, b_eq=data.row_ub[eq] if eq.any() else None,
                  bounds=bounds, method="highs")
    assert res.status == 0
    return sign * res.fun + data.offset


def assert_agree(data, expected=None, **kw):
    results = solve_all(data, mip_gap=0.0, **kw)
    want = oracle(data) if expected is None else expected
    if expected is not None:
        assert close(oracle(data), expected)
    for r in results.values():
        check_solution(data, r)
        assert close(r.objective, want), (r.backend, r.objective, want)
    return results


# ---------------------------------------------------------------------------------------
# (1) Agreement on hand-written programs with known optima.

def transportation():
    supply, demand = [20, 30], [10, 25, 15]
    cost = np.array([[8, 6, 10], [9, 12, 13]], dtype=float)
    lp = LinearProgram(sense="min", name="transport")
    x = lp.add_variables("ship", (2, 3), lb=0, cost=cost)
    i, j = np.indices((2, 3))
    lp.add_constraints("supply", rows=i, cols=x.index, vals=1.0, ub=supply, n_rows=2)
    lp.add_constraints("demand", rows=j, cols=x.index, vals=1.0, lb=demand, n_rows=3)
    return lp.freeze()


def knapsack(values=(10, 13, 7, 8, 6), weights=(5, 6, 4, 5, 3), cap=14, offset=0.0):
    lp = LinearProgram(sense="max", name="knapsack")
    x = lp.add_variables("take", len(values), lb=0, ub=1, cost=values, integer=True)
    lp.add_constraints("cap", rows=0, cols=x.index, vals=weights, ub=cap, n_rows=1)
    lp.offset = offset
    return lp.freeze()


def assignment(cost):
    n = cost.shape[0]
    lp = LinearProgram(sense="min", name="assignment")
    x = lp.add_variables("assign", (n, n), lb=0, ub=1, cost=cost, integer=True)
    i, j = np.indices((n, n))
    lp.add_constraints("worker", rows=i, cols=x.index, vals=1.0, lb=1, ub=1, n_rows=n)
    lp.add_constraints("job", rows=j, cols=x.index, vals=1.0, lb=1, ub=1, n_rows=n)
    return lp.freeze()


def test_transportation_lp():
    results = assert_agree(transportation(), expected=465.0)
    for r in results.values():
        assert np.allclose(r.values["ship"], [[0, 20, 0], [10, 5, 15]], atol=1e-7)


def knapsack_best(values=(10, 13, 7, 8, 6), weights=(5, 6, 4, 5, 3), cap=14):
    """Brute force over all subsets."""
    return max(sum(v for v, t in zip(values, take) if t)
               for take in itertools.product((0, 1), repeat=len(values))
               if sum(w for w, t in zip(weights, take) if t) <= cap)


def test_knapsack_milp_with_offset():
    assert knapsack_best() == 29
    assert_agree(knapsack(offset=2.5), expected=knapsack_best() + 2.5)


def test_assignment_milp():
    cost = np.array([[9, 2, 7, 8], [6, 4, 3, 7], [5, 8, 1, 8], [7, 6, 9, 4]], dtype=float)
    rows, cols = linear_sum_assignment(cost)
    results = assert_agree(assignment(cost), expected=cost[rows, cols].sum())
    for r in results.values():
        assert r.values["assign"].shape == (4, 4)
        assert np.allclose(r.values["assign"].sum(axis=0), 1)


# (1b) Hypothesis: random bounded programs, feasible by construction.

@st.composite
def programs(draw, mip: bool):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(0, 5))
    ints = st.integers(-5, 5)
    lb = np.array(draw(st.lists(st.integers(-4, 0), min_size=n, max_size=n)), dtype=float)
    width = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    ub = lb + width
    # x0 within the bounds; half-integral for LPs, integral for MILPs.
    step = 1.0 if mip else 0.5
    frac = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    x0 = lb + np.floor(frac * width / step) * step
    A = np.array(draw(st.lists(ints, min_size=m * n, max_size=m * n)), dtype=float)
    A = A.reshape(m, n)
    ax = A @ x0
    kinds = draw(st.lists(st.sampled_from(["le", "ge", "eq", "range", "free"]),
                          min_size=m, max_size=m))
    slack = np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)), dtype=float)
    rlb = np.array([ax[i] - slack[i] if k in ("ge", "range") else
                    ax[i] if k == "eq" else -np.inf for i, k in enumerate(kinds)])
    rub = np.array([ax[i] + slack[i] if k in ("le", "range") else
                    ax[i] if k == "eq" else np.inf for i, k in enumerate(kinds)])
    lp = LinearProgram(sense=draw(st.sampled_from(["min", "max"])))
    integer = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if mip else [False] * n
    for j in range(n):  # one block per column, integer or not
        lp.add_variables(f"v{j}", 1, lb=lb[j], ub=ub[j], cost=draw(ints),
                         integer=integer[j])
    if m:
        lp.add_dense_rows("rows", A, lb=rlb, ub=rub)
    lp.offset = draw(st.sampled_from([0.0, 1.5, -3.0]))
    return lp.freeze()


@given(programs(mip=False))
def test_random_lps_agree(data):
    assert_agree(data)


@given(programs(mip=True))
def test_random_milps_agree(data):
    assert_agree(data)


# ---------------------------------------------------------------------------------------
# (2) Statuses.

def small(sense, cost, A, *, lb=0.0, integer=False, rlb=-np.inf, rub=np.inf):
    lp = LinearProgram(sense=sense)
    lp.add_variables("x", len(cost), lb=lb, cost=cost, integer=integer)
    lp.add_dense_rows("r", A, lb=rlb, ub=rub)
    return lp.freeze()


@pytest.mark.parametrize("case, expected", [
    (dict(sense="min", cost=[1, 1], A=[[1, 1]], rub=-1), Status.INFEASIBLE),
    (dict(sense="max", cost=[1, 1], A=[[1, -1]], rub=1), Status.UNBOUNDED),
    (dict(sense="min", cost=[1], A=[[2]], rlb=1, rub=1, integer=True), Status.INFEASIBLE),
    (dict(sense="min", cost=[1, 1], A=[[1, 1]], rub=-1, integer=True), Status.INFEASIBLE),
    # HiGHS says "unbounded or infeasible" here; the feasibility re-solve settles it.
    (dict(sense="min", cost=[1, 1], A=[[1, 1]], rub=-1, lb=-np.inf, integer=True),
     Status.UNBOUNDED),
    (dict(sense="max", cost=[1, 1], A=[[1, -1]], rub=1, integer=True), Status.UNBOUNDED),
])
def test_infeasible_and_unbounded(backend, case, expected):
    r = solve_program(small(**case), backend)
    assert r.status is expected, r.message
    assert r.objective is None and r.values == {} and r.duals is None


def market_split(m=4, seed=1):
    """Cornuejols-Dawande market split with slacks: hard for branch and bound, and any
    binary x is feasible (so an incumbent exists)."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    A = rng.integers(0, 100, size=(m, n)).astype(float)
    b = np.floor(A.sum(axis=1) / 2)
    lp = LinearProgram(sense="min", name="market_split")
    lp.add_variables("x", n, lb=0, ub=1, integer=True)
    lp.add_variables("over", m, cost=1.0)
    lp.add_variables("under", m, cost=1.0)
    lp.add_dense_rows("split", np.hstack([A, np.eye(m), -np.eye(m)]), lb=b, ub=b)
    return lp.freeze()


def check_stopped(data, r):
    assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL), r.message
    if r.objective is not None:
        x = np.concatenate([r.values[b.name] for b in data.var_blocks])
        assert data.max_violation(x) <= 1e-6
        assert r.bound is None or r.bound <= r.objective + 1e-6
    if r.status is Status.OPTIMAL:
        assert r.objective is not None


def test_time_limit(backend):
    data = market_split()
    check_stopped(data, solve_program(data, backend, time_limit=0.01))


def test_node_limit_is_deterministic_time_limit(backend):
    data = market_split()
    r = solve_program(data, backend, options={"mip_max_nodes": 1})
    assert r.status is Status.TIME_LIMIT, r.message
    check_stopped(data, r)
    assert r.objective is not None and r.bound is not None and r.gap is not None


def test_solver_missing():
    data = knapsack()
    for backend, name in (("pyomo", "no_such_solver"), ("cvxpy", "NO_SUCH_SOLVER"),
                          ("highs", "gurobi")):
        r = solve_program(data, backend, solver=name)
        assert r.status is Status.SOLVER_MISSING and r.message
        assert r.objective is None and not r.success


def test_pyomo_named_solver_is_used():
    r = solve_program(knapsack(), "pyomo", solver="highs")
    assert r.status is Status.OPTIMAL and r.solver == "highs"
    assert solve_program(knapsack(), "pyomo").solver == "appsi_highs"
    assert solve_program(knapsack(), "cvxpy").solver == "HIGHS"


# ---------------------------------------------------------------------------------------
# (3) One dual sign convention: d(optimal objective) / d(active bound), own sense.

INF = np.inf
DUAL_CASES = {
    # max 3x+2y: x+y<=4, x+3y<=9, x<=3 (row): optimum (3,1) = 11.
    "max_le_rows": (dict(sense="max", cost=[3, 2], A=[[1, 1], [1, 3], [1, 0]],
                         rub=[4, 9, 3]), 11.0, [2, 0, 1], [0, 0]),
    # same with x<=3 as a column bound: its reduced cost carries the dual.
    "max_col_bound": (dict(sense="max", cost=[3, 2], A=[[1, 1], [1, 3]], rub=[4, 9],
                           ub=[3, INF]), 11.0, [2, 0], [1, 0]),
    # min 2x+3y: x+y>=4, x+3y>=6: optimum (3,1) = 9.
    "min_ge_rows": (dict(sense="min", cost=[2, 3], A=[[1, 1], [1, 3]], rlb=[4, 6]),
                    9.0, [1.5, 0.5], [0, 0]),
    # min x+2y: x+y==3, x<=1: optimum (1,2) = 5; a binding <= in a min problem is <= 0.
    "min_eq_le": (dict(sense="min", cost=[1, 2], A=[[1, 1], [1, 0]], rlb=[3, -INF],
                       rub=[3, 1]), 5.0, [2, -1], [0, 0]),
    # max x-y: y>=1, x+y<=4: optimum (3,1) = 2; a binding >= in a max problem is <= 0.
    "max_ge_le": (dict(sense="max", cost=[1, -1], A=[[0, 1], [1, 1]], rlb=[1, -INF],
                       rub=[INF, 4]), 2.0, [-2, 1], [0, 0]),
    # max x-y: y>=1 as a column bound.
    "max_col_lower": (dict(sense="max", cost=[1, -1], A=[[1, 1]], rub=[4], lb=[0, 1]),
                      2.0, [1], [0, -2]),
    # min -x, 1 <= x <= 2 ranged row, x free: optimum -2, upper side binding.
    "min_ranged": (dict(sense="min", cost=[-1], A=[[1]], rlb=[1], rub=[2], lb=-INF),
                   -2.0, [-1], [0]),
}


def dual_program(sense, cost, A, *, lb=0.0, ub=INF, rlb=-INF, rub=INF):
    lp = LinearProgram(sense=sense)
    lp.add_variables("x", len(cost), lb=lb, ub=ub, cost=cost)
    lp.add_dense_rows("r", A, lb=rlb, ub=rub)
    return lp.freeze()


@pytest.mark.parametrize("name", sorted(DUAL_CASES))
def test_dual_sign_convention(backend, name):
    spec, objective, row_duals, col_duals = DUAL_CASES[name]
    data = dual_program(**spec)
    r = solve_program(data, backend)
    check_solution(data, r)
    assert close(r.objective, objective)
    assert np.allclose(r.duals["r"], row_duals, atol=1e-7), r.duals
    assert np.allclose(r.extra["col_duals"]["x"], col_duals, atol=1e-7)


@pytest.mark.parametrize("backend_solver", [("pyomo", "highs"), ("cvxpy", "SCIPY"),
                                            ("cvxpy", "CLARABEL")])
def test_dual_sign_convention_other_solvers(backend_solver):
    backend, solver = backend_solver
    for name, (spec, objective, row_duals, col_duals) in DUAL_CASES.items():
        r = solve_program(dual_program(**spec), backend, solver=solver)
        if r.status is Status.SOLVER_MISSING:
            pytest.skip(f"{backend} solver {solver} not installed")
        assert r.status is Status.OPTIMAL and close(r.objective, objective, 1e-6)
        assert np.allclose(r.duals["r"], row_duals, atol=1e-5), (name, r.duals)
        assert np.allclose(r.extra["col_duals"]["x"], col_duals, atol=1e-5), name


@pytest.mark.parametrize("name", sorted(DUAL_CASES))
def test_dual_values_are_finite_differences(name):
    """The pinned values above really are d(objective)/d(active bound): move the bound
    the sign says is active by eps and re-solve."""
    spec, objective, row_duals, col_duals = DUAL_CASES[name]
    n, m = len(spec["cost"]), len(spec["A"])
    full = {k: np.broadcast_to(np.asarray(spec.get(k, d), float), (size,)).copy()
            for k, d, size in (("lb", 0.0, n), ("ub", INF, n), ("rlb", -INF, m),
                               ("rub", INF, m))}
    up = 1.0 if spec["sense"] == "max" else -1.0
    eps = 1e-3
    for (lo, hi), duals in ((("rlb", "rub"), row_duals), (("lb", "ub"), col_duals)):
        for i, dual in enumerate(duals):
            if dual == 0:
                continue
            moved = {k: v.copy() for k, v in full.items()}
            equality = full[lo][i] == full[hi][i]
            for key in (lo, hi) if equality else (hi if up * dual > 0 else lo,):
                moved[key][i] += eps
            r = solve_program(dual_program(**{**spec, **moved}), "highs")
            slope = (r.objective - objective) / eps
            assert close(slope, dual), (name, lo, i, slope, dual)


# (4) MILPs have no duals.
def test_milp_has_no_duals(backend):
    r = solve_program(knapsack(), backend)
    assert r.status is Status.OPTIMAL
    assert r.duals is None and "col_duals" not in r.extra


# ---------------------------------------------------------------------------------------
# (5) File export.

@pytest.mark.parametrize("suffix", [".mps", ".lp"])
@pytest.mark.parametrize("make", [transportation, lambda: knapsack(offset=2.5)])
def test_export_round_trip(tmp_path, suffix, make):
    data = make()
    path = write_program(data, tmp_path / f"program{suffix}")
    assert path.exists() and path.stat().st_size > 0
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert close(h.getInfo().objective_function_value, solve_program(data).objective)
    assert "ship(0,1)" in path.read_text() or "take(0)" in path.read_text()


def test_export_rejects_other_suffix(tmp_path):
    with pytest.raises(InvalidOption):
        write_program(knapsack(), tmp_path / "program.txt")


# ---------------------------------------------------------------------------------------
# (6) Options.

@pytest.mark.parametrize("kw", [dict(time_limit=-1), dict(time_limit=float("nan")),
                                dict(mip_gap=1.0), dict(mip_gap=-0.1), dict(threads=0),
                                dict(threads=1.5), dict(seed=-1)])
def test_invalid_options(kw):
    with pytest.raises(InvalidOption):
        solve_program(knapsack(), "highs", **kw)


def test_unknown_backend():
    with pytest.raises(UnknownName) as err:
        solve_program(knapsack(), "gurobi")
    assert err.value.path == "backend" and isinstance(err.value, KeyError)


def test_options_are_accepted(backend):
    data = knapsack()
    r = solve_program(data, backend, time_limit=30, mip_gap=0.0, threads=1, seed=3)
    assert r.status is Status.OPTIMAL and close(r.objective, knapsack_best())
    r = solve_program(data, backend)  # threads back to the default
    assert r.status is Status.OPTIMAL


def test_available_backends():
    avail = available_backends()
    assert tuple(avail) == BACKENDS and avail["highs"]


# ---------------------------------------------------------------------------------------
# (7) Timings, (8) a larger sparse LP, and the extensible Pyomo model.

def test_timings_non_negative(backend):
    for data in (transportation(), knapsack()):
        r = solve_program(data, backend)
        assert r.build_seconds >= 0 and r.solve_seconds >= 0 and r.seconds >= 0


def test_large_sparse_lp_highs():
    rng = np.random.default_rng(0)
    n = m = 2000
    A = sp.random(m, n, density=5 / n, random_state=1, format="csr")
    x0 = rng.random(n)
    lp = LinearProgram(sense="max")
    lp.add_variables("x", n, lb=0, ub=1, cost=rng.random(n))
    lp.add_dense_rows("r", A, ub=A @ x0)
    r = solve_program(lp.freeze(), "highs")
    assert r.status is Status.OPTIMAL and r.values["x"].shape == (n,)


def test_to_pyomo_is_extensible():
    import pyomo.environ as pyo

    from optsched.solvers.pyomo import to_pyomo

    data = transportation()
    model = to_pyomo(data)
    assert len(model.x) == data.n_cols and len(model.rows) == data.n_rows
    model.extra = pyo.Constraint(expr=model.x[0] >= 1)  # force ship[0,0] >= 1
    pyo.SolverFactory("appsi_highs").solve(model)
    forced = dataclasses.replace(data, col_lb=np.r_[1.0, data.col_lb[1:]])
    assert pyo.value(model.obj) == pytest.approx(solve_program(forced).objective)
    assert pyo.value(model.obj) > 465.0


@pytest.mark.parametrize("name", ["highs", "pyomo", "cvxpy"])
def test_every_backend_module_has_the_protocol_shape(name):
    """One small file per backend: name, package, capabilities, status table, an install
    check and solve (the protocol solve_program trusts)."""
    import subprocess
    import sys

    from optsched.core.result import Status
    from optsched.solvers import Capabilities, backend_module

    mod = backend_module(name)
    assert mod.NAME == name and isinstance(mod.PACKAGE, str)
    assert isinstance(mod.CAPABILITIES, Capabilities)
    assert all(v is None or isinstance(v, Status) for v in mod.STATUS.values())
    assert Status.OPTIMAL in mod.STATUS.values()
    assert callable(mod.solve) and callable(mod.available)
    # the install check imports nothing: the solver package stays unimported
    code = (f"import sys; from optsched.solvers import backend_module; "
            f"m = backend_module({name!r}); ok = m.installed(); "
            f"print(ok, {mod.PACKAGE!r} in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "False"]
