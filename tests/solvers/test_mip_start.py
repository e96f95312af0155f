"""MILP starts through the solver layer: handed to the solvers that take one, reported,
and the incumbent of a stopped solve whenever the solver has none or a worse one."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from lp_problems import knapsack, market_split

from optsched.core.result import Status
from optsched.errors import InvalidOption
from optsched.solvers import available_backends, backend_module, solve_program
from optsched.solvers.common import wait_for_abandoned_solves


def split_start(data):
    """Market split with every x at 0: the slacks take the right-hand sides (feasible,
    objective sum(b))."""
    x = np.zeros(data.n_cols)
    m = data.n_rows
    blocks = {b.name: b for b in data.var_blocks}
    x[blocks["over"].index] = data.row_lb[:m]
    return x


def start_backends():
    return [b for b, ok in available_backends().items()
            if ok and backend_module(b).CAPABILITIES.mip_start]


def test_backends_declare_whether_they_take_a_start():
    assert backend_module("highs").CAPABILITIES.mip_start
    assert backend_module("pyomo").CAPABILITIES.mip_start_solvers == ("appsi_highs",)
    assert not backend_module("cvxpy").CAPABILITIES.mip_start


@pytest.mark.parametrize("backend", start_backends())
def test_a_start_is_accepted_and_the_incumbent_is_at_least_as_good(backend):
    data = market_split()
    x0 = split_start(data)
    f0 = data.objective_value(x0)
    assert data.max_violation(x0) == 0.0
    # one node: the solver stops at once, with the start or something better
    r = solve_program(data, backend, start=x0, options={"mip_max_nodes": 1})
    assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL), r.message
    assert r.objective is not None and r.objective <= f0 + 1e-9
    report = r.extra["mip_start"]
    assert report["passed"] and report["feasible"] and report["objective"] == pytest.approx(f0)
    if backend == "highs":  # HiGHS says so in its log
        assert report["solver_checked"] == "feasible" and report["solver_used"]
        assert not report["solver_repaired"]


def test_highs_reports_a_start_it_had_to_repair():
    data = market_split()
    x0 = split_start(data)
    x0[0] = 1.0  # the row is off by A[0, 0]: infeasible as given
    r = solve_program(data, "highs", start=x0, options={"mip_max_nodes": 1})
    report = r.extra["mip_start"]
    assert not report["feasible"] and report["max_violation"] > 0
    assert report["solver_checked"] == "infeasible" and report["solver_repaired"]
    # an infeasible start is never returned as the incumbent
    assert r.extra.get("incumbent") != "start"
    if r.objective is not None:
        x = np.concatenate([np.ravel(r.values[b.name]) for b in data.var_blocks])
        assert data.max_violation(x) <= 1e-6


def test_a_backend_without_starts_returns_the_start_when_it_stops_without_an_incumbent():
    if not available_backends()["cvxpy"]:
        pytest.skip("cvxpy not installed")
    data = market_split()
    x0 = split_start(data)
    r = solve_program(data, "cvxpy", start=x0, options={"mip_max_nodes": 0})
    report = r.extra["mip_start"]
    assert not report["passed"] and "cvxpy" in report["not_passed"]
    assert r.status is Status.TIME_LIMIT and r.objective is not None
    if r.extra["incumbent"] == "start":
        assert r.objective == pytest.approx(data.objective_value(x0))
        assert "incumbent is the start" in r.message
        np.testing.assert_array_equal(r.values["x"], x0[:r.values["x"].size])
    else:  # HiGHS found one of its own at the root: never worse than the start
        assert r.objective <= data.objective_value(x0) + 1e-9


def test_a_solve_that_never_starts_returns_the_start():
    data = knapsack()
    x0 = np.zeros(data.n_cols)  # nothing packed: feasible
    r = solve_program(data, "highs", time_limit=0.5, spent=1.0, start=x0)
    assert r.status is Status.TIME_LIMIT
    assert r.objective == pytest.approx(data.objective_value(x0))
    assert r.extra["incumbent"] == "start" and r.bound is None
    assert r.extra["mip_start"]["not_passed"] == "no solve was started"


def test_a_start_given_by_block_or_as_one_vector_is_the_same():
    data = market_split()
    x0 = split_start(data)
    by_block = {b.name: x0[b.index] for b in data.var_blocks}
    np.testing.assert_array_equal(data.start_vector(by_block), x0)
    np.testing.assert_array_equal(data.start_vector(x0), x0)


@pytest.mark.parametrize("bad,field", [
    ({"x": np.zeros(30)}, "over"),                              # a block missing
    ({"x": np.zeros(30), "over": np.zeros(4), "under": np.zeros(4), "y": [0]}, "y"),
    ({"x": np.zeros(29), "over": np.zeros(4), "under": np.zeros(4)}, "start['x']"),
    (np.zeros(5), "start"),
    (np.full(38, np.nan), "start"),
])
def test_a_malformed_start_is_refused(bad, field):
    with pytest.raises(InvalidOption) as err:
        solve_program(market_split(), "highs", start=bad)
    assert field in str(err.value)


class _SlowSolve:
    """Stands in for a Highs object whose run ignores its time limit for a while."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.finished = threading.Event()

    def run(self):
        time.sleep(self.seconds)
        self.finished.set()


def test_a_solve_that_overruns_its_limit_is_abandoned_at_the_deadline():
    from optsched.solvers.highs import DEADLINE_GRACE, _run

    slow = _SlowSolve(1.5)
    t0 = time.perf_counter()
    assert _run(slow, 0.2) is False
    waited = time.perf_counter() - t0
    assert waited <= 0.2 * 1.02 + DEADLINE_GRACE + 0.2
    assert not slow.finished.is_set()
    wait_for_abandoned_solves()  # what the process does at exit
    assert slow.finished.is_set()
    quick = _SlowSolve(0.0)
    assert _run(quick, 0.2) is True and quick.finished.is_set()


def test_a_solve_abandoned_at_its_deadline_keeps_what_highs_last_reported(monkeypatch):
    # HiGHS misses a deadline only where it reads no clock (presolve, the MIP set-up, a
    # long node): stand in for that by giving the solve up after a second, while it runs
    from optsched.solvers import highs
    from optsched.solvers.common import abandon_solve

    def give_up_after_a_second(h, time_limit, interruptible=True):
        thread = threading.Thread(target=h.run, daemon=True)
        thread.start()
        thread.join(1.0)
        assert thread.is_alive()  # market split keeps branch and bound busy for 3 s
        abandon_solve(thread, h)
        return False

    monkeypatch.setattr(highs, "_run", give_up_after_a_second)
    data = market_split(m=5)
    res = solve_program(data, "highs", time_limit=3.0)
    wait_for_abandoned_solves()
    assert res.status is Status.TIME_LIMIT
    assert "last HiGHS reported before the deadline" in res.message
    x = np.concatenate([res.values[b.name].ravel() for b in data.var_blocks])
    # the incumbent is a solution of the original program, in its own column space
    lhs = data.A @ x
    assert np.all(lhs >= data.row_lb - 1e-6) and np.all(lhs <= data.row_ub + 1e-6)
    assert np.allclose(x[data.integer], np.round(x[data.integer]), atol=1e-6)
    assert res.objective == pytest.approx(data.objective_value(x))
    # and the bound is a lower bound below it (costs >= 0: the bound is too)
    assert res.bound is not None and -1e-9 <= res.bound <= res.objective + 1e-9
    assert res.gap is not None and res.gap >= 0
