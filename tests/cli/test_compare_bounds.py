"""``optsched compare``: each row's factor from the best certified bound valid for it,
where that bound comes from, and why a row has none."""

from __future__ import annotations

import dataclasses
import json

import pytest

import optsched
from optsched.cli import main
from optsched.compare import compare
from optsched.compare_bounds import NOT_COVERED, simulator_bound
from optsched.registry import models
from optsched.sim.bounds import Setting, lower_bounds


def _demo(name):
    return models()[name].demo_instance()


@pytest.mark.slow
def test_tiresias_rows_outside_the_slots_get_the_simulator_bound():
    inst = _demo("tiresias")
    rows = {r.method: r for r in compare(inst, "tiresias", time_limit=20)}
    exact = rows["exact"]
    assert exact.bound_source == "exact method's dual bound"
    sim, src = simulator_bound(inst, "tiresias")
    assert src.startswith("simulator bound")
    assert sim == pytest.approx(lower_bounds(inst).mean_jct * inst.n_jobs)
    for r in rows.values():
        if r.outside_exact and r.value is not None:
            # the slotted MILP's bound need not hold for a continuous-time schedule
            assert r.certified_bound == pytest.approx(sim) and r.bound_source == src
            assert r.certified_gap == pytest.approx(r.value / sim) and r.certified_gap >= 1


@pytest.mark.parametrize("model", ["hadar", "hadare", "allox", "salus"])
def test_every_row_is_within_its_certified_bound(model):
    rows = compare(_demo(model), model, time_limit=20)
    for r in rows:
        if r.value is not None and r.kind != "bound":
            assert r.certified_gap is not None and r.certified_gap >= 1 - 1e-9, r
    sim, src = simulator_bound(_demo(model), model)
    assert sim is not None and src.startswith("simulator bound")
    best = next(r for r in rows if r.method == "exact").value
    if rows[0].sense == "min":
        assert sim <= best * (1 + 1e-9)
    else:
        assert sim >= best * (1 - 1e-9)


@pytest.mark.parametrize("objective", ["jct", "makespan"])
def test_hadare_min_objectives_are_bounded_in_the_forking_setting(objective):
    # every job must complete: no horizon, four of the demo's jobs
    inst = _demo("hadare")
    inst = inst.replace(horizon=None, jobs=inst.jobs[:4])
    res = optsched.solve(inst, model="hadare", method="exact", objective=objective,
                         time_limit=20)
    sim, src = simulator_bound(inst, "hadare", {"objective": objective})
    assert src.startswith("simulator bound")
    assert res.status.value == "optimal" and sim <= res.objective * (1 + 1e-9)
    b = lower_bounds(inst, Setting(forking=True))
    assert sim == pytest.approx(b.makespan if objective == "makespan" else
                                b.weighted_mean_jct * sum(j.weight for j in inst.jobs))


def test_objectives_no_bound_covers_are_named():
    inst = _demo("salus")
    for model, opts, word in [("gavel", {}, "round's allocation"),
                              ("synergy", {}, "normalised throughput"),
                              ("salus", {"objective": "admitted"}, "'admitted'")]:
        value, why = simulator_bound(_demo(model) if model != "salus" else inst, model, opts)
        assert value is None and word in why
    staggered = inst.replace(jobs=tuple(dataclasses.replace(j, arrival=10.0 * i)
                                        for i, j in enumerate(inst.jobs)))
    value, why = simulator_bound(staggered, "salus")
    assert value is None and "different times" in why
    assert set(NOT_COVERED) == {"gavel", "synergy"}


@pytest.mark.slow
def test_compare_prints_the_bound_column_and_its_footnotes(tmp_path, capsys):
    path = tmp_path / "g.json"
    _demo("gavel").to_json(path)
    assert main(["compare", "gavel", str(path), "--time-limit", "20"]) == 0
    out = capsys.readouterr().out
    assert "x bound" in out and "certified upper bound" in out
    assert "no simulator bound: Gavel's objective" in out
    # a row with value 0 has no finite factor, and says so
    assert "no x bound: value 0" in out
    path = tmp_path / "t.json"
    _demo("tiresias").to_json(path)
    assert main(["compare", "tiresias", str(path), "--time-limit", "20", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all({"certified_bound", "certified_gap", "bound_source", "bound_note"} <= set(r)
               for r in rows)
    assert any(r["bound_source"].startswith("simulator bound") for r in rows)
