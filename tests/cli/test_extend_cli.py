"""Methods and policies of your own on the command line: module:name in solve, compare
and simulate, plugins in catalog; exit code 2 for a reference that does not resolve or
does not fit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from optsched.cli import main


@pytest.fixture
def allox_file(tmp_path):
    from optsched.allox import demo_instance

    path = tmp_path / "allox.json"
    demo_instance(n_jobs=8).to_json(path)
    return path


def test_compare_with_a_method_of_your_own(own_code, allox_file, capsys):
    assert main(["compare", "allox", str(allox_file), "--method", "ownsched:ect",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in rows] == ["exact", "ect"]  # the exact row always runs
    ect = rows[1]
    assert ect["kind"] == "heuristic" and ect["factor"] >= 1 - 1e-9
    assert ect["declared"].startswith("none known")
    # once imported it is registered: every method of the model, and by its name
    assert main(["compare", "allox", str(allox_file), "--method", "ect", "--method",
                 "sjf"]) == 0
    text = capsys.readouterr().out
    assert "ect " in text and "sjf " in text and "jsq" not in text
    assert main(["solve", "allox", str(allox_file), "--method", "ownsched:ect"]) == 0
    assert "ect" in capsys.readouterr().out


def test_simulate_a_policy_of_your_own(own_code, tmp_path, capsys):
    inst, out = tmp_path / "inst.json", tmp_path / "srgt.json"
    assert main(["instance", "gavel-philly-2000", "--jobs", "15", "--out", str(inst)]) == 0
    assert main(["simulate", "--policy", "ownsched:SRGT", "--instance", str(inst),
                 "--cluster", "gavel-108", "--out", str(out), "--option", "name=mine"]) == 0
    text = capsys.readouterr().out
    assert "policy ownsched:SRGT (mine)" in text and "at most" in text
    data = json.loads(out.read_text())
    assert data["extra"]["registered_policy"] == "ownsched:SRGT"
    assert data["gaps"]["mean_jct"] >= 1 - 1e-9
    # the result file names its producer: validate finds its rules by the reference
    assert main(["validate", str(inst), str(out)]) == 0
    assert "policy ownsched:SRGT" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["simulate", "--policy", "nosuchmod:SRGT", "--generate", "4"], "no module 'nosuchmod'"),
    (["simulate", "--policy", "ownsched:Nope", "--generate", "4"], "has no 'Nope'"),
    (["simulate", "--policy", "ownsched:ect", "--generate", "4"], "takes 'instance'"),
    (["simulate", "--policy", "ownsched:Misspelt", "--generate", "4"],
     "did you mean 'sharing'"),
    (["simulate", "--policy", "ownsched:StatTypo", "--generate", "4"],
     "did you mean 'stats'"),
    (["simulate", "--policy", "ownsched:SRGT", "--generate", "4", "--option", "rate=1"],
     "not an option"),
    (["compare", "allox", "ALLOX", "--method", "ownsched:undeclared"],
     "no register_method call declares"),
    (["compare", "allox", "ALLOX", "--method", "nosuchmod:ect"], "no module"),
    (["solve", "allox", "ALLOX", "--method", "ownsched:SRGT"], "register_method"),
])
def test_bad_references_exit_2(own_code, allox_file, capsys, argv, message):
    argv = [str(allox_file) if a == "ALLOX" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("optsched: error:") and message in err


def test_catalog_lists_plugins_and_their_origin(plugin_dist, capsys):
    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    assert "lpt" in out and "[from plugin own (ownplugin)]" in out
    assert "plug.fifo" in out
    assert "plugin broken (ownplugin)" in out and "FAILED: RuntimeError" in out


def test_plugin_in_a_fresh_process(plugin_dist, own_code, allox_file):
    """An installed plugin's method runs from the command line with nothing imported
    by hand: the entry point is found on the path."""
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(plugin_dist), str(own_code), *sys.path])}
    r = subprocess.run([sys.executable, "-m", "optsched.cli", "compare", "allox",
                        str(allox_file), "--method", "lpt", "--json"],
                       capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stderr
    assert [row["method"] for row in json.loads(r.stdout)] == ["exact", "lpt"]
    assert "plugin broken" in r.stderr and "failed to load" in r.stderr
