"""The command line: outputs, exit codes (0 ok, 1 solver failure, 2 bad input)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from optsched.cli import main


@pytest.fixture
def instance_file(tmp_path):
    from optsched.allox import demo_instance

    path = tmp_path / "inst.json"
    demo_instance(n_jobs=8).to_json(path)
    return path


def test_demo_rows_read_at_first_glance(capsys):
    """Every model, direction and unit stated, factors >= 1 except marked rows, proved
    ratios as numbers, no noise digits."""
    import re

    from optsched.registry import models

    assert main(["demo", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in rows} == {n for n, s in models().items() if s.demo_instance}
    allox = [r["method"] for r in rows if r["model"] == "allox"]
    assert allox == ["exact", "exact-ilp", "online", "sjf", "sjf_fastest", "jsq"]
    for r in rows:
        assert r["sense"] in ("min", "max") and r["objective"]
        assert r["status"] in ("optimal", "feasible"), r
        if r["factor"] is not None and not r["outside_exact"]:
            assert r["factor"] >= 1 - 1e-9, r
    # a heuristic whose theorem gives a ratio shows it as a number, proved or not
    hadar = {r["method"]: r for r in rows if r["model"] == "hadar"}
    assert isinstance(hadar["online"]["proved"], float)
    greedy = next(r for r in rows if r["model"] == "synergy" and r["method"] == "greedy")
    assert greedy["outside_exact"]
    assert main(["demo"]) == 0
    text = capsys.readouterr().out
    assert "minimised" in text and "maximised" in text and "total JCT (s)" in text
    assert "+ greedy: outside the exact model's feasible set" in text
    # no number printed with more than 4 significant digits (thousands aside)
    table = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    for tok in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", table):
        assert len(tok.replace(".", "").lstrip("0")) <= 5, tok


def test_solve_json_returns_validated_schedule(instance_file, tmp_path, capsys):
    out_file = tmp_path / "res.json"
    assert main(["solve", "allox", str(instance_file), "--json", "--out", str(out_file)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] == "optimal"
    assert len(res["schedule"]["allocations"]) == 8
    assert res["metrics"]["n_completed"] == 8
    assert json.loads(out_file.read_text()) == res
    # the schedule in the result file validates through the CLI as well
    assert main(["validate", str(instance_file), str(out_file)]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_solve_with_backend_method_and_option(instance_file, capsys):
    assert main(["solve", "allox", str(instance_file), "--backend", "cvxpy",
                 "--method", "exact-ilp", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backend"] == "cvxpy"
    assert main(["solve", "allox", str(instance_file), "--method", "online",
                 "--option", "alpha=0.5"]) == 0
    assert "online" in capsys.readouterr().out


def test_compare_lists_every_heuristic(instance_file, capsys):
    assert main(["compare", "allox", str(instance_file), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in rows][:1] == ["exact"]
    assert {"online", "sjf", "sjf_fastest", "jsq"} <= {r["method"] for r in rows}
    assert all(r["factor"] is None or r["factor"] >= 1 - 1e-9 for r in rows)


def test_malformed_instance_exits_2_naming_field(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cluster": {"nodes": [{"name": "n", "gpus": {"v100": 1}}]},
                               "jobs": [{"id": "a", "arrival": 0, "workers": 1, "work": -5,
                                         "throughput": {"v100": 1}}]}))
    assert main(["solve", "allox", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].work" in err and "-5" in err


@pytest.mark.parametrize("argv,needle", [
    (["solve", "nomodel", "X"], "(file)"),
    (["solve", "allox", "{inst}", "--method", "nope"], "method"),
    (["solve", "allox", "{inst}", "--option", "alpha"], "--option"),
    (["solve", "allox", "{inst}", "--time-limit", "-1", "--method", "exact-ilp"],
     "time_limit"),
])
def test_bad_arguments_exit_2(argv, needle, instance_file, capsys):
    argv = [a.replace("{inst}", str(instance_file)) for a in argv]
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_unknown_model_exits_2(instance_file, capsys):
    assert main(["solve", "alox", str(instance_file)]) == 2
    assert "did you mean ['allox']" in capsys.readouterr().err


def test_invalid_schedule_exits_2(instance_file, tmp_path, capsys):
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"allocations": [], "completion": {"0": 5.0}}))
    assert main(["validate", str(instance_file), str(sched)]) == 2
    assert "completion" in capsys.readouterr().err


def test_solver_failure_exits_1(instance_file, capsys):
    assert main(["solve", "allox", str(instance_file), "--backend", "pyomo",
                 "--solver", "no_such_solver", "--method", "exact-ilp"]) == 1
    assert "solver_missing" in capsys.readouterr().out


def test_schema_and_catalog(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "optsched instance"
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    assert "gavel-108" in out and "ResNet-50 (batch size 64)" in out


def test_module_entry_point_from_the_repository_root():
    """``python -m`` in the checkout imports the source tree, whose catalog is models/."""
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    for argv in (["--version"], ["catalog"]):
        proc = subprocess.run([sys.executable, "-m", "optsched.cli", *argv], cwd=root,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
    assert "gavel-108" in proc.stdout


def test_policy_failure_exits_1(monkeypatch, capsys):
    from optsched.sim.policy import PolicyViolation

    def boom(args):
        raise PolicyViolation("p", 3.0, "over-allocation")

    monkeypatch.setattr("optsched.cli.models.cmd_schema", boom)
    assert main(["schema"]) == 1
    assert "policy 'p' at t=3" in capsys.readouterr().err
