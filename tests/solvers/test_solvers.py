"""The solver layer: three backends agree with each other and with scipy, report statuses,
follow one dual sign convention, export files HiGHS can read back, and validate options."""

import dataclasses
import subprocess
import sys

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given
from hypothesis import strategies as st
from lp_problems import (
    DUAL_CASES,
    INF,
    PROBLEMS,
    assignment,
    assignment_best,
    check_complementarity,
    check_recorded_lps,
    check_solution,
    close,
    knapsack,
    knapsack_best,
    market_split,
    oracle,
    programs,
    record_programs,
    small,
    transportation,
)
from paths import REPO

from optsched.core.result import Status
from optsched.errors import InvalidOption, UnknownName
from optsched.solvers import (
    BACKENDS,
    LinearProgram,
    available_backends,
    solve_program,
    write_program,
)


def solve_all(data, **kw):
    results = {b: solve_program(data, b, **kw) for b, ok in available_backends().items() if ok}
    assert "highs" in results
    return results


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
# (1) Agreement on the standard problems, whose optima are known independently.

@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_standard_problems(name):
    problem = PROBLEMS[name]
    assert_agree(problem.build(), expected=problem.optimum())


def test_transportation_lp():
    results = assert_agree(transportation(), expected=465.0)
    for r in results.values():
        assert np.allclose(r.values["ship"], [[0, 20, 0], [10, 5, 15]], atol=1e-7)


def test_knapsack_milp_with_offset():
    assert knapsack_best() == 29
    assert_agree(knapsack(offset=2.5), expected=knapsack_best() + 2.5)


def test_assignment_milp():
    results = assert_agree(assignment(), expected=assignment_best())
    for r in results.values():
        assert r.values["assign"].shape == (4, 4)
        assert np.allclose(r.values["assign"].sum(axis=0), 1)


# (1b) Hypothesis: random bounded programs, feasible by construction.

@given(programs(mip=False))
def test_random_lps_agree(data):
    assert_agree(data)


#: HiGHS's default MIP feasibility tolerance (1e-6) lets its point violate a row by 1e-6,
#: which buys up to 1e-6 times that row's dual of objective: past the 1e-6 agreement
#: tolerance whenever the dual exceeds 1 (seen: -2e-6 against an optimum of 0). The
#: agreement of optima is checked with the tolerance tightened.
TIGHT_MIP = {"mip_feasibility_tolerance": 1e-9}


#: found by the long profile: scipy 1.17.1's HiGHS with presolve calls x4 = 1 (objective
#: -1) optimal, though x = 0 is feasible (objective 0); the oracle now takes the better
#: feasible point of its solves
def _scipy_presolve_suboptimal():
    lp = LinearProgram(sense="max")
    for j, integer in enumerate([False, False, True, True, False]):
        lp.add_variables(f"v{j}", 1, lb=0.0, ub=1.0, cost=-1.0 if j == 4 else 0.0,
                         integer=integer)
    lp.add_dense_rows("rows", np.array([[1, 0, 0, 0, -1], [0, 2, 0, 0, -1], [0, 0, 0, 0, 0],
                                        [1, 2, 1, -1, -1], [-1, 1, 0, 0, 0]], dtype=float),
                      lb=[-INF, 0, -INF, 0, 0], ub=[0, 0, 0, 0, INF])
    return lp.freeze()


SCIPY_PRESOLVE_SUBOPTIMAL = _scipy_presolve_suboptimal()


@example(SCIPY_PRESOLVE_SUBOPTIMAL)
@given(programs(mip=True))
def test_random_milps_agree(data):
    assert_agree(data, options=TIGHT_MIP)


# ---------------------------------------------------------------------------------------
# (2) Statuses.

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


# ---------------------------------------------------------------------------------------
# (9) The optimality checks the papers' tests rely on can fail, and recording sees every
# program a method solves.

def test_complementarity_check_fails_on_a_priced_slack_row():
    spec, *_ = DUAL_CASES["max_le_rows"]  # row 1 (x + 3y <= 9) is slack at (3, 1)
    data = small(**spec)
    r = solve_program(data, "highs")
    check_complementarity(data, r)
    tampered = r.replace(duals={"r": r.duals["r"] + np.array([0.0, 0.5, 0.0])})
    with pytest.raises(AssertionError, match="slack"):
        check_complementarity(data, tampered)


def test_record_programs_sees_every_backend(monkeypatch):
    with record_programs(monkeypatch) as seen:
        for b in BACKENDS:
            solve_program(transportation(), b)
    assert [s.result.backend for s in seen] == list(BACKENDS)
    assert check_recorded_lps(seen) == len(BACKENDS)


# ---------------------------------------------------------------------------------------
# (9) The fast paths of the highs backend and of freeze() change nothing but time.

@given(st.integers(0, 2**32 - 1), st.booleans())
def test_freeze_builds_scipys_canonical_matrix(seed, duplicates):
    from optsched.solvers.program import _csr

    rng = np.random.default_rng(seed)
    m, n = (int(v) for v in rng.integers(0, 12, 2))
    k = int(rng.integers(0, 40)) if m and n else 0
    r, c = rng.integers(0, max(m, 1), k), rng.integers(0, max(n, 1), k)
    v = rng.choice([0.0, 1.0, -2.5, 1e-3], k) * rng.random(k)
    if not duplicates:
        _, first = np.unique(r * n + c, return_index=True)
        r, c, v = r[first], c[first], v[first]
    want = sp.csr_matrix((v, (r, c)), shape=(m, n))
    want.sum_duplicates()
    want.eliminate_zeros()
    got = _csr(r, c, v, (m, n))
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
        assert getattr(got, name).dtype == getattr(want, name).dtype
    assert got.shape == want.shape and got.has_canonical_format


def _solve_through_highslp(data):
    from optsched.solvers.highs import to_highs_lp

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("random_seed", 0)
    h.passModel(to_highs_lp(data))
    h.run()
    return np.asarray(h.getSolution().col_value)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_highs_array_model_is_the_highslp_model(name):
    # the backend hands HiGHS numpy arrays, not a HighsLp filled element by element; the
    # model, and so the point HiGHS returns, is the one a HighsLp carries
    data = PROBLEMS[name].build()
    got = solve_program(data, "highs", time_limit=None)
    assert got.status is Status.OPTIMAL
    np.testing.assert_array_equal(np.concatenate([np.ravel(v) for v in got.values.values()]),
                                  _solve_through_highslp(data))


@given(programs(mip=False))
def test_highs_array_model_is_the_highslp_model_on_random_lps(data):
    got = solve_program(data, "highs", time_limit=None)
    np.testing.assert_array_equal(np.concatenate([np.ravel(v) for v in got.values.values()]),
                                  _solve_through_highslp(data))


def test_a_time_limit_counts_one_solve_only():
    # HiGHS measures time_limit against a Highs object's run clock, which adds up over the
    # object's runs (clear() does not reset it): solves must not share an object, or a
    # limit the whole sequence outgrows stops the later ones at once
    rng = np.random.default_rng(0)
    n = 400
    A = sp.random(n, n, density=8 / n, random_state=2, format="csr")
    lp = LinearProgram(sense="max")
    lp.add_variables("x", n, lb=0, ub=1, cost=rng.random(n))
    lp.add_dense_rows("r", A, ub=A @ rng.random(n))
    data = lp.freeze()
    one = solve_program(data, "highs")
    limit = max(20 * one.solve_seconds, 0.05)
    spent = 0.0
    while spent < 3 * limit:
        r = solve_program(data, "highs", time_limit=limit)
        assert r.status is Status.OPTIMAL, (spent, limit)
        spent += r.solve_seconds


def test_options_of_one_call_do_not_reach_the_next():
    data = transportation()
    fresh = solve_program(data, "highs")
    stopped = solve_program(data, "highs", options={"simplex_iteration_limit": 0})
    assert stopped.status is Status.TIME_LIMIT
    again = solve_program(data, "highs")
    assert again.status is Status.OPTIMAL
    for key in fresh.values:
        np.testing.assert_array_equal(again.values[key], fresh.values[key])


def test_highs_writes_nothing_to_standard_output_after_the_banner_is_quieted():
    """The banner is once per process, so the check runs in a fresh one; the bytes that
    reach descriptor 1 are what a shell redirection would capture."""
    code = ("from optsched.solvers.common import quiet_highs_banner\n"
            "quiet_highs_banner()\n"
            "import highspy\n"
            "h = highspy.Highs()\n"
            "h.setOptionValue('output_flag', False)\n"
            "h.run()\n"
            "print('end')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "end\n"
