"""``optsched bound``: text and JSON output, the setting of a policy, bad input exits 2."""

from __future__ import annotations

import json

import pytest

from optsched.cli import main


def test_bound_prints_each_method_and_the_best(capsys):
    assert main(["bound", "--trace", "gavel-philly-2000", "--cluster", "gavel-108",
                 "--jobs", "30", "--load", "50"]) == 0
    out = capsys.readouterr().out
    assert "mean JCT  >=" in out and "makespan  >=" in out
    for m in ("per_job", "pooled", "interval_lp", "release_lp"):
        assert m in out


def test_bound_json_and_policy_setting(capsys):
    assert main(["bound", "--trace", "tiresias-60", "--policy", "tiresias.las",
                 "--method", "per_job", "--method", "pooled", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["mean_jct"] > 0 and d["makespan"] > 0
    assert set(d["by_method"]) == {"per_job", "pooled"}
    assert d["setting"]["progress_rule"] == "gang"


@pytest.mark.parametrize("policy,flag", [("salus.lanes", "sharing"),
                                         ("hadare.online", "forking"),
                                         ("synergy.tune", "resource_sensitive")])
def test_bound_takes_a_policys_capabilities_from_the_registry(policy, flag, capsys):
    """--policy bounds the schedules the registry lets that policy produce: a sharing,
    forking or resource-sensitive policy gets the wider setting (a bound for the strict
    one need not hold for its schedules)."""
    assert main(["bound", "--trace", "tiresias-60", "--policy", policy, "--method",
                 "per_job", "--json"]) == 0
    setting = json.loads(capsys.readouterr().out)["setting"]
    assert setting[flag] is True


def test_bound_tighter_interval_lp_from_the_command_line(capsys):
    """--tangents and --squash reach the interval LP: they only tighten the relaxation
    (docs/bounds.md), so its bound can only rise, and on this contended prefix it does."""
    args = ["bound", "--trace", "gavel-philly-2000", "--cluster", "gavel-108", "--jobs", "40",
            "--load", "50", "--objective", "mean_jct", "--method", "interval_lp", "--json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)["by_method"]["interval_lp"]
    assert main(args + ["--tangents", "2", "--squash", "1"]) == 0
    tight = json.loads(capsys.readouterr().out)["by_method"]["interval_lp"]
    assert tight["total_completion"] > plain["total_completion"]


def test_bound_of_a_forking_policy_is_no_larger(capsys):
    args = ["bound", "--trace", "gavel-philly-2000", "--cluster", "gavel-108", "--jobs", "20",
            "--json", "--method", "per_job"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(args + ["--forking"]) == 0
    forked = json.loads(capsys.readouterr().out)
    assert forked["mean_jct"] <= plain["mean_jct"] + 1e-9
    assert forked["setting"]["forking"] is True


@pytest.mark.parametrize("argv,field", [
    (["--trace", "nope-trace"], "--trace"),
    (["--trace", "tiresias-60", "--policy", "tiresias.las", "--forking"], "--policy"),
    (["--trace", "tiresias-60", "--policy", "no.such"], "policy"),
    (["--trace", "tiresias-60", "--time-limit", "0"], "--time-limit"),
    (["--trace", "tiresias-60", "--jobs", "0"], "--jobs"),
    (["--trace", "tiresias-60", "--tangents", "-1"], "--tangents"),
    (["--trace", "tiresias-60", "--squash", "-2"], "--squash"),
    (["--trace", "tiresias-60", "--intervals", "1"], "--intervals"),
    (["--trace", "tiresias-60", "--window", "0"], "--window"),
])
def test_bound_bad_input_exits_2(argv, field, capsys):
    assert main(["bound", *argv]) == 2
    err = capsys.readouterr().err
    assert field in err and "Traceback" not in err
