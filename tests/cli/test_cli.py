"""The command line: outputs, exit codes (0 ok, 1 solver failure, 2 bad input)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from paths import REPO

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

    from optsched.registry import get_model, models

    assert main(["demo", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in rows} == {n for n, s in models().items() if s.demo_instance}
    allox = [r["method"] for r in rows if r["model"] == "allox"]
    assert allox == ["exact", "exact-ilp", "bound", "online", "sjf", "sjf_fastest", "jsq"]
    for r in rows:
        assert r["sense"] in ("min", "max") and r["objective"]
        assert r["status"] in ("optimal", "feasible"), r
        if r["kind"] == "bound":
            assert r["bound"] is not None and r["value"] is None, r
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
    # every heuristic row says what is proved: its ratio here, or its method's bound,
    # or "none known" (with the reason below the table); never "-"
    heuristic = {(r["model"], r["method"]) for r in rows if r["kind"] == "heuristic"}
    assert len(heuristic) == 22
    shown = _proved_column(text)
    for model, method in heuristic:
        cell = shown[model, method]
        assert cell not in ("", "-"), (model, method)
        declared = get_model(model).method(method).proved
        assert cell == declared.partition(": ")[0] or re.fullmatch(r"\(?[\d.]+\)?", cell)
        if cell == "none known":
            assert f"  {method}: none known: " in text
    # no number printed with more than 4 significant digits (thousands aside)
    table = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    for tok in re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", table):
        assert len(tok.replace(".", "").lstrip("0")) <= 5, tok


def _proved_column(text: str) -> dict[tuple[str, str], str]:
    """(model, method) -> the cell of the "proved" column in ``optsched demo``'s tables."""
    import re

    out: dict[tuple[str, str], str] = {}
    model, span, lines = "", None, text.splitlines()
    for k, line in enumerate(lines):
        head = re.match(r"# (\w+): ", line)
        if head:
            model, span = head.group(1), None
        elif line.startswith("method ") and "proved" in line:
            dashes = lines[k + 1]
            starts = [i for i, c in enumerate(dashes) if c == "-" and (i == 0 or
                                                                      dashes[i - 1] == " ")]
            col = line.index("proved")
            i = max(j for j, st in enumerate(starts) if st <= col + len("proved") - 1)
            end = dashes.index(" ", starts[i]) if " " in dashes[starts[i]:] else len(dashes)
            span = (starts[i], end)
        elif span is not None and line and not line.startswith((" ", "-")) \
                and not line.startswith("proved"):
            name = line.split()[0]
            out[model, name] = line[span[0]:span[1]].strip()
        elif not line.strip():
            span = None
    return out


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


@pytest.mark.parametrize("backend", ["highs", "pyomo", "cvxpy"])
def test_solve_json_on_stdout_is_json_alone(backend, tmp_path):
    """Nothing but the result reaches standard output, at the file-descriptor level: a
    solver library printing from C (HiGHS >= 1.16 prints a banner on its first
    construction) would break ``optsched solve --json > out.json``."""
    from optsched.gavel import demo_instance

    path = tmp_path / "gavel.json"
    demo_instance().to_json(path)
    proc = subprocess.run([sys.executable, "-m", "optsched.cli", "solve", "gavel", str(path),
                           "--json", "--backend", backend],
                          cwd=REPO, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "optimal"


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
    root = REPO
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


# --------------------------------------------------------------------------- options
@pytest.fixture
def salus_file(tmp_path):
    from optsched.salus import demo_instance

    path = tmp_path / "salus.json"
    demo_instance().to_json(path)
    return path


def test_compare_options_reach_every_row(salus_file, capsys):
    """objective=gpus goes to the exact rows and every heuristic; the ratios compare
    GPUs with GPUs."""
    assert main(["compare", "salus", str(salus_file), "--option", "objective=gpus",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["objective"] for r in rows} == {"GPUs used"}
    assert all(r["sense"] == "min" and not r["skipped"] for r in rows)
    values = [r["value"] for r in rows if r["kind"] != "bound"]
    assert all(v == int(v) and 1 <= v <= 2 for v in values)
    bound = next(r for r in rows if r["kind"] == "bound")
    assert bound["bound"] <= min(values)
    assert all(r["factor"] >= 1 for r in rows if r["factor"] is not None)


def test_compare_says_which_rows_do_not_take_an_option(instance_file, capsys):
    assert main(["compare", "allox", str(instance_file), "--option", "alpha=0.5"]) == 0
    out = capsys.readouterr().out
    assert "jsq: does not take option(s) alpha" in out
    assert "online: does not take" not in out


@pytest.mark.parametrize("argv,needle", [
    (["compare", "allox", "{inst}", "--option", "alpah=0.5"], "did you mean 'alpha'"),
    (["solve", "allox", "{inst}", "--method", "online", "--option", "alpah=0.5"],
     "its options: alpha, max_jobs"),
    (["solve", "allox", "{inst}", "--backend", "pyomo"], "takes no solver backend"),
    (["solve", "allox", "{inst}", "--method", "sjf", "--time-limit", "5"], "time_limit"),
    (["solve", "hadar", "{inst}", "--option", "nonsense=1"], "nonsense"),
    (["solve", "hadare", "{inst}", "--option", "nonsense=1"], "nonsense"),
    (["solve", "salus", "{inst}", "--option", "nonsense=1"], "nonsense"),
    (["solve", "hadar", "{inst}", "--method", "online", "--option", "time_limit=3"],
     "time_limit"),
    (["simulate", "--policy", "max_min_fairness", "--generate", "4", "--option", "bogus=1"],
     "bogus"),
    (["simulate", "--policy", "max_min_fairness", "--generate", "4", "--option",
      "prices={}"], "prices"),
    (["simulate", "--policy", "fifo_yarn", "--generate", "4", "--option", "promote_knob=2"],
     "promote_knob"),
    (["simulate", "--policy", "tiresias_las", "--generate", "4", "--option",
      "gittins_delta=3"], "gittins_delta"),
    (["simulate", "--policy", "hadar", "--generate", "4", "--option", "bogus=1"], "bogus"),
    (["simulate", "--policy", "synergy_tune", "--generate", "4", "--option", "bogus=1"],
     "bogus"),
    (["simulate", "--policy", "max_min_fairness", "--generate", "4", "--option",
      "reset_interval=NaN"], "reset_interval"),
])
def test_unknown_or_inapplicable_options_exit_2(argv, needle, instance_file, capsys):
    argv = [a.replace("{inst}", str(instance_file)) for a in argv]
    assert main(argv) == 2
    assert needle in capsys.readouterr().err


def test_api_methods_raise_invalid_option_not_type_error(instance_file):
    import optsched
    from optsched import hadar, hadare, salus
    from optsched.errors import InvalidOption

    inst = optsched.load_instance(instance_file)
    for call in (lambda: hadar.exact(inst, nonsense=1), lambda: hadare.exact(inst, nonsense=1),
                 lambda: salus.exact(salus.demo_instance(), nonsense=1),
                 lambda: salus.ffd(salus.demo_instance(), nonsense=1),
                 lambda: optsched.solve(inst, "allox", "sjf", nonsense=1)):
        with pytest.raises(InvalidOption, match="nonsense"):
            call()


def test_gavel_policy_whose_lp_fails_fails_loudly(capsys):
    """No silent fallback: the LP's status, exit 1."""
    assert main(["simulate", "--policy", "max_min_fairness", "--generate", "8", "--option",
                 "solver=glpk"]) == 1
    err = capsys.readouterr().err
    assert "policy 'max_min_fairness'" in err and "solver_missing" in err


def test_simulate_says_when_jobs_did_not_complete(capsys):
    assert main(["simulate", "--policy", "hadare", "--generate", "30", "--seed", "1"]) == 0
    cap = capsys.readouterr()
    assert "jobs 29/30" in cap.out
    assert "1 of 30 jobs did not complete (1 rejected by Hadar's admission" in cap.err


def test_long_exact_solve_reports_limit_bound_and_exit(tmp_path, capsys):
    """A 40-job Philly instance: the planning grid is sized from the instance, the time
    limit (model build included) is stated, rows without an answer exit 1. HadarE's
    per-node program (its node-class one solves this instance in under a second)."""
    from optsched.catalog import generate_philly

    path = tmp_path / "p40.json"
    generate_philly(40, seed=1).to_json(path)
    code = main(["compare", "hadare", str(path), "--time-limit", "1",
                 "--option", "formulation=nodes"])
    cap = capsys.readouterr()
    assert "time limit per solve: 1 s" in cap.out
    assert "hadare exact (time limit 1 s) ..." in cap.err
    rows = {line.split()[0]: line for line in cap.out.splitlines()
            if line.startswith(("exact", "online"))}
    assert "time_limit" in rows["exact"]
    assert code == (1 if "no answer from" in cap.err else 0)
    assert main(["solve", "hadar", str(path), "--json", "--time-limit", "30"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["status"] in ("optimal", "time_limit") and res["objective"] is not None
    assert res["extra"]["slots"] <= 64 and res["extra"]["time_limit"] == 30


def test_model_size_is_guarded_before_building(tmp_path, capsys):
    """A 3-job instance with a 1e-4 s slot and explicit slots: refused before the build,
    naming the size and how to reduce it (exit 2)."""
    from optsched.catalog import generate_philly

    inst = generate_philly(3, seed=0)
    path = tmp_path / "tiny.json"
    inst.replace(slot=1e-4).to_json(path)
    assert main(["solve", "hadar", str(path), "--option", "slots=100000000"]) == 2
    err = capsys.readouterr().err
    assert "columns" in err and "slot=SECONDS" in err
    # without explicit slots the grid is sized from the instance and it solves
    assert main(["solve", "hadar", str(path), "--json"]) == 0
