"""Gavel's makespan LP with a job of tiny remaining work (1e-9 iterations beside 50).

The single rate-form LP (``aggregate=False``, the ``min_total_duration`` policy's
default) scales each rate row by its largest coefficient; a job whose need is ~1e-11 of
another's then has a coefficient of tau below HiGHS's tolerances, the solver returns X
= 0 for it with status optimal, and the policy used to stop with "solver status
optimal". The rate form now falls back to the work form; an allocation that still left
a job at rate 0 would be reported as an error saying so.
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched import Cluster, Instance, Job, Node
from optsched.cli import main
from optsched.core.result import Result, Status
from optsched.registry import simulate

glp = importlib.import_module("optsched.gavel.exact")  # the module, not exact()


def _rates(sol, T, W):
    return W * (T * sol.X).sum(axis=1)


@pytest.mark.parametrize("aggregate", [False, True])
def test_tiny_need_beside_a_large_one(aggregate):
    T, W, c, r = np.array([[1.0], [1.0]]), np.array([1, 1]), np.array([2]), \
        np.array([50.0, 1e-9])
    sol = glp.min_total_duration(T, W, c, r, aggregate=aggregate)
    assert sol.ok and sol.status is Status.OPTIMAL
    assert sol.objective == pytest.approx(50.0, rel=1e-9)
    thr = _rates(sol, T, W)
    assert np.all(thr > 0)
    assert np.max(r / thr) == pytest.approx(50.0, rel=1e-6)
    if not aggregate:   # the rate form lost job 1 and the work form answered
        assert sol.info["fallback"]["form"] == "work" and sol.info["fallback"]["job"] == 1


@st.composite
def tiny_problems(draw):
    n = draw(st.integers(2, 5))
    K = draw(st.integers(1, 2))
    T = np.array([[draw(st.sampled_from([0.0, 1e-3, 1.0, 3.0, 100.0])) for _ in range(K)]
                  for _ in range(n)])
    T[:, 0] = np.where(T[:, 0] == 0, 1.0, T[:, 0])
    W = np.array([draw(st.integers(1, 2)) for _ in range(n)])
    c = np.array([draw(st.integers(2, 4)) for _ in range(K)])
    r = np.array([draw(st.sampled_from([1e-9, 1e-6, 1.0, 50.0, 1e6, 1e12]))
                  for _ in range(n)])
    return T, W, c, r


@settings(max_examples=examples(40))
@given(tiny_problems())
def test_both_forms_give_every_job_a_rate_and_one_makespan(p):
    T, W, c, r = p
    rate_form = glp.min_total_duration(T, W, c, r, aggregate=False)
    work_form = glp.min_total_duration(T, W, c, r, aggregate=True)
    for sol in (rate_form, work_form):
        assert sol.ok, (sol.status, sol.result.message if sol.result else "")
        thr = _rates(sol, T, W)
        assert np.all(thr > 0)
        assert np.max(r / thr) == pytest.approx(sol.objective, rel=1e-6)
    assert rate_form.objective == pytest.approx(work_form.objective, rel=1e-6)


def test_an_allocation_without_progress_is_an_error_that_says_so(monkeypatch):
    """Were the work form to leave a job at rate 0 too, the answer is an error naming the
    job, not a failure reported as "optimal"."""
    def lost(T, W, c, need, backend, opts, name):
        return 0.0, np.zeros(T.shape), Result(status=Status.OPTIMAL), \
            {"lp_solves": 1, "seconds": 0.0}
    monkeypatch.setattr(glp, "_min_makespan_classes", lost)
    sol = glp.min_total_duration([[1.0], [1.0]], [1, 1], [2], [50.0, 1e-9], aggregate=False)
    assert not sol.ok and sol.status is Status.ERROR
    assert "rate 0" in sol.result.message and "job" in sol.result.message


def _instance() -> Instance:
    return Instance(Cluster((Node("n0", {"a": 2}),)),
                    (Job("wide", 1000.3, 2, 50.0, {"a": 0.001}),
                     Job("tiny", 1000.3, 1, 1e-9, {"a": 100.0})), slot=360.0)


def test_policy_runs_with_a_tiny_job():
    res = simulate(_instance(), "gavel.min_total_duration")
    assert set(res.schedule.completion) == {"wide", "tiny"}


def test_cli_simulate_with_a_tiny_job(tmp_path, capsys):
    path = tmp_path / "inst.json"
    _instance().to_json(path)
    out = tmp_path / "res.json"
    assert main(["simulate", "--policy", "min_total_duration", "--instance", str(path),
                 "--out", str(out), "--no-progress"]) == 0
    assert json.loads(out.read_text())["metrics"]["n_completed"] == 2
    assert "solver status" not in capsys.readouterr().err
