"""``optsched improve``: text and JSON output with the bound and the gap, the improved
result written (atomically, never over an input), bad input exits 2."""

from __future__ import annotations

import json

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.cli import main
from optsched.core.schedule import Schedule
from optsched.core.validate import validate_schedule


@pytest.fixture
def files(tmp_path):
    nodes = (Node("n0", {"a": 2}), Node("n1", {"b": 2}))
    jobs = tuple(Job(f"j{i}", 5.0 * i, 1 + i % 2, 30.0 + 11 * i, {"a": 1.0, "b": 0.4})
                 for i in range(6))
    inst = Instance(Cluster(nodes), jobs, slot=10.0)
    ipath = tmp_path / "inst.json"
    inst.to_json(ipath)
    rpath = tmp_path / "fifo.json"
    assert main(["simulate", "--policy", "gavel.fifo", "--instance", str(ipath), "--out",
                 str(rpath), "--no-bound"]) == 0
    return inst, ipath, rpath


def test_improve_prints_start_best_bound_and_writes_a_valid_result(files, tmp_path, capsys):
    inst, ipath, rpath = files
    capsys.readouterr()
    out = tmp_path / "best.json"
    assert main(["improve", str(rpath), "--instance", str(ipath), "--time-limit", "1",
                 "--window-time-limit", "1", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "start mean JCT" in text and "best  mean JCT" in text and "certified bound" in text
    d = json.loads(out.read_text())
    validate_schedule(inst, Schedule.from_dict(d), "gavel.fifo")
    lns = d["extra"]["lns"]
    assert lns["value"] <= lns["start_value"]
    assert d["gaps"]["mean_jct"] >= 1.0


def test_improve_json(files, capsys):
    _, ipath, rpath = files
    capsys.readouterr()
    assert main(["improve", str(rpath), "--instance", str(ipath), "--time-limit", "1",
                 "--window-time-limit", "0.5", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["best"] <= d["start"] and d["bound"] <= d["best"] * (1 + 1e-9)
    assert d["gap_best"] == pytest.approx(d["best"] / d["bound"])
    assert d["stop"] in ("time_limit", "no_window", "target")


def test_improve_refuses_to_write_over_its_input(files, capsys):
    _, ipath, rpath = files
    before = rpath.read_text()
    assert main(["improve", str(rpath), "--instance", str(ipath), "--out", str(rpath)]) == 2
    assert "input" in capsys.readouterr().err
    assert rpath.read_text() == before


@pytest.mark.parametrize("args,what", [(["--time-limit", "0"], "--time-limit"),
                                       (["--window-time-limit", "-1"], "--window-time-limit"),
                                       (["--policy", "no.such"], "no.such")])
def test_improve_bad_input_exits_2(files, args, what, capsys):
    _, ipath, rpath = files
    assert main(["improve", str(rpath), "--instance", str(ipath), *args]) == 2
    assert what in capsys.readouterr().err


def test_improve_refuses_a_result_of_another_instance(files, tmp_path, capsys):
    _, _, rpath = files
    other = Instance(Cluster((Node("n0", {"a": 1}),)), (Job("x", 0.0, 1, 5.0, {"a": 1.0}),),
                     slot=10.0)
    opath = tmp_path / "other.json"
    other.to_json(opath)
    assert main(["improve", str(rpath), "--instance", str(opath)]) == 2
    assert "another instance" in capsys.readouterr().err


def test_improve_ctrl_c_writes_the_best_so_far_and_exits_130(files, tmp_path, monkeypatch,
                                                              capsys):
    import optsched.sim.lns as lns

    inst, ipath, rpath = files
    real = lns._solve_window
    calls = []

    def interrupted_after_one(*args, **kw):
        if calls:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(lns, "_solve_window", interrupted_after_one)
    out = tmp_path / "best.json"
    assert main(["improve", str(rpath), "--instance", str(ipath), "--out", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    d = json.loads(out.read_text())
    assert d["extra"]["lns"]["stop"] == "interrupted"
    validate_schedule(inst, Schedule.from_dict(d), "gavel.fifo")


def test_improve_stops_once_it_reaches_the_bound(tmp_path, capsys):
    """Two jobs, each fast on its own GPU type: heterogeneity-agnostic FIFO puts them on
    the wrong types (mean JCT 300 s); the search swaps them, reaches the per-job bound
    (40 s) and stops there: the schedule is then optimal."""
    inst = Instance(Cluster((Node("n0", {"a": 1}), Node("n1", {"b": 1}))),
                    (Job("x", 0.0, 1, 40.0, {"a": 1.0, "b": 0.1}),
                     Job("y", 0.0, 1, 40.0, {"a": 0.2, "b": 1.0})), slot=10.0)
    ipath = tmp_path / "inst.json"
    inst.to_json(ipath)
    rpath = tmp_path / "r.json"
    assert main(["simulate", "--policy", "gavel.fifo_agnostic", "--instance", str(ipath),
                 "--out", str(rpath), "--no-bound"]) == 0
    capsys.readouterr()
    assert main(["improve", str(rpath), "--instance", str(ipath), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["start"] == pytest.approx(300.0)
    assert d["stop"] == "target" and d["best"] == pytest.approx(40.0)
    assert d["gap_best"] == pytest.approx(1.0)
