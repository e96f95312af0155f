"""A bound asked for an objective, a method or a setting it does not cover exits 2 (or
raises a typed error) and says which; nothing falls back silently to a weaker bound."""

from __future__ import annotations

import json

import pytest

import optsched
from optsched import Cluster, Instance, Job, Node
from optsched.cli import main
from optsched.errors import InvalidInput, InvalidOption
from optsched.sim.bounds import Setting, lower_bounds
from optsched.sim.gaps import gap_report
from optsched.sim.utility_bounds import utility_upper_bound

ONE_JOB = (Job("a", 0.0, 1, 100.0, {"a": 1.0}),)


def _inst(jobs=ONE_JOB) -> Instance:
    return Instance(Cluster((Node("n0", {"a": 2}),)), tuple(jobs), slot=10.0)


@pytest.fixture
def files(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(_inst(()).to_dict()))
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_inst().to_dict()))
    return {"empty": empty, "one": one}


@pytest.mark.parametrize("argv,words", [
    (["--objective", "nope"], ["--objective", "nope"]),
    (["--method", "nope"], ["--method", "nope"]),
    (["--objective", "utility", "--method", "interval_lp"],
     ["--method", "interval_lp", "mean_jct", "utility"]),
    (["--objective", "makespan", "--method", "utility_lp"], ["--method", "utility_lp",
                                                            "makespan"]),
    (["--policy", "no.such"], ["policy", "no.such"]),
])
def test_bound_refuses_what_it_does_not_cover(argv, words, files, capsys):
    try:
        code = main(["bound", "--instance", str(files["one"]), *argv])
    except SystemExit as exc:  # a choice the parser refuses
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
    assert "Traceback" not in err


def test_bound_of_no_jobs_exits_2_naming_the_field(files, capsys):
    assert main(["bound", "--instance", str(files["empty"])]) == 2
    assert "instance.jobs" in capsys.readouterr().err


def test_bound_objective_limits_what_is_printed(files, capsys):
    assert main(["bound", "--instance", str(files["one"]), "--objective", "utility"]) == 0
    out = capsys.readouterr().out
    assert "total utility <=" in out and "mean JCT" not in out
    assert main(["bound", "--instance", str(files["one"]), "--objective", "makespan",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["objectives"] == ["makespan"] and "utility_bound" not in d


def test_simulate_of_no_jobs_says_there_is_no_bound(files, capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main(["simulate", "--policy", "gavel.fifo", "--instance", str(files["empty"]),
                 "--out", str(out)]) == 0
    assert "no certified bound: the instance has no jobs" in capsys.readouterr().out
    d = json.loads(out.read_text())
    assert "bounds" not in d and "no jobs" in d["gaps_note"]


def test_api_names_what_a_bound_does_not_cover():
    inst = _inst()
    with pytest.raises(InvalidOption, match="name at least one"):
        lower_bounds(inst, methods=())
    with pytest.raises(InvalidOption, match="bounds total utility"):
        lower_bounds(inst, methods=("utility_lp",))
    with pytest.raises(InvalidOption, match="setting"):
        lower_bounds(inst, "gang")
    with pytest.raises(InvalidOption, match="upper bound"):
        lower_bounds(inst).value("utility")
    with pytest.raises(InvalidOption, match="objective"):
        lower_bounds(inst).value("p99_jct")
    with pytest.raises(InvalidOption, match="utility bound"):
        utility_upper_bound(inst, methods=("pooled",))
    with pytest.raises(InvalidOption, match="name at least one"):
        utility_upper_bound(inst, methods=())
    with pytest.raises(InvalidOption, match="setting"):
        utility_upper_bound(inst, {"forking": True})
    with pytest.raises(InvalidInput, match="instance.jobs"):
        lower_bounds(_inst(()))
    with pytest.raises(InvalidOption, match="progress_rule"):
        Setting(progress_rule="teleport")
    res = optsched.simulate(inst, "gavel.fifo", bounds=False)
    with pytest.raises(InvalidOption, match="setting"):
        gap_report(inst, res, "gang")
    with pytest.raises(InvalidOption, match="bounds"):
        optsched.simulate(inst, "gavel.fifo", bounds="yes")
    empty = optsched.simulate(_inst(()), "gavel.fifo")
    assert "bounds" not in empty.extra and "no jobs" in empty.extra["gaps_note"]
