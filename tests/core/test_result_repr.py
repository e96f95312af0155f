"""``repr(Result)`` is one short line however large the run; the content stays reachable."""

from __future__ import annotations

import optsched
from optsched import catalog
from optsched.core.result import REPR_LIMIT, Result, Status


def test_repr_of_a_large_simulation_is_one_short_line():
    inst = catalog.generate_philly(80, seed=1)
    res = optsched.simulate(inst, "fifo", bounds=False)
    text = repr(res)
    assert "\n" not in text and len(text) <= REPR_LIMIT
    assert text.startswith("Result(simulate/fifo, status=feasible, objective=")
    assert f"objective={res.objective:.6g}" in text and "jobs=80" in text
    # what the repr leaves out is all still there
    assert len(res.schedule.allocations) > 80 and len(res.metrics.jct) == 80
    assert len(str(res.to_dict())) > 50 * len(text)
    assert str(res) == text


def test_repr_names_status_gap_and_unfinished_jobs():
    res = optsched.solve(optsched.get_model("allox").demo_instance(), model="allox")
    text = repr(res)
    assert text.startswith("Result(allox/exact, status=optimal, objective=")
    assert f"bound={res.bound:.6g}" in text and f"gap={res.gap:.3g}" in text
    assert f"jobs={res.metrics.n_jobs}" in text
    inst = catalog.generate_philly(12, seed=3)
    full = optsched.simulate(inst, "fifo", bounds=False)
    cut = optsched.simulate(inst, "fifo", bounds=False, max_time=full.metrics.makespan / 2)
    m = cut.metrics
    assert m.n_completed < m.n_jobs and f"jobs={m.n_completed}/{m.n_jobs}" in repr(cut)


def test_repr_stays_short_with_long_names_and_no_solution():
    res = Result(Status.TIME_LIMIT, model="m" * 500, method="x" * 500, message="y" * 10_000)
    text = repr(res)
    assert len(text) <= REPR_LIMIT and "objective=None" in text and "y" not in text
    assert res.model == "m" * 500 and res.message == "y" * 10_000
