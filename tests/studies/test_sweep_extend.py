"""Sweeps over methods and policies of your own: module:name in a sweep config, a
plugin's registered names, errors before anything runs."""

from __future__ import annotations

import pytest

from optsched.cli import main
from optsched.errors import InvalidOption, UnknownName
from optsched.studies.sweep import SweepConfig, run_sweep

CONFIG = {
    "name": "own",
    "models": ["allox"],
    "methods": ["exact", "ownsched:ect"],
    "sizes": [6],
    "seeds": [0, 1],
    "simulate": {"policies": ["ownsched:SRGT", "tiresias.las"], "traces": ["generate"],
                 "jobs": [10], "loads": [20.0]},
}


def _check(rows):
    by = {(r["method"], r["seed"], r["kind"]): r for r in rows}
    assert len(rows) == 8 and all(r["status"] in ("optimal", "feasible") for r in rows), \
        [(r["method"], r["status"], r["message"]) for r in rows]
    for seed in (0, 1):
        exact = by["exact", seed, "solve"]["objective"]
        assert by["ownsched:ect", seed, "solve"]["objective"] >= exact * (1 - 1e-9)
        own = by["ownsched:SRGT", seed, "simulate"]
        assert own["n_completed"] == 10 and own["gap_mean_jct"] >= 1 - 1e-9


def test_sweep_runs_methods_and_policies_of_your_own(own_code, tmp_path):
    rows, computed = run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, progress=False)
    assert computed == 8
    _check(rows)


@pytest.mark.slow
def test_sweep_workers_import_them_too(own_code, tmp_path):
    """Spawned worker processes resolve the references themselves."""
    rows, computed = run_sweep(SweepConfig.from_dict(CONFIG), tmp_path, workers=2,
                               progress=False)
    assert computed == 8
    _check(rows)


def test_sweep_of_plugin_names(plugin_dist, tmp_path):
    config = {"name": "plug", "models": ["allox"], "methods": ["lpt"], "sizes": [5],
              "seeds": [0],
              "simulate": {"policies": ["plug.fifo"], "traces": ["generate"], "jobs": [6]}}
    rows, _ = run_sweep(SweepConfig.from_dict(config), tmp_path, progress=False)
    assert [(r["method"], r["status"]) for r in rows] == [("lpt", "feasible"),
                                                          ("plug.fifo", "feasible")]
    assert rows[1]["model"] == "plug"


@pytest.mark.parametrize("change,error,match", [
    ({"methods": ["nosuchmod:ect"]}, UnknownName, "no module"),
    ({"methods": ["ownsched:undeclared"]}, InvalidOption, "register_method"),
    ({"simulate": {**CONFIG["simulate"], "policies": ["ownsched:Misspelt"]}},
     InvalidOption, "did you mean 'sharing'"),
    ({"simulate": {**CONFIG["simulate"], "policies": ["ownsched:Nope"]}},
     UnknownName, "has no 'Nope'"),
])
def test_bad_references_fail_when_the_config_is_read(own_code, change, error, match):
    with pytest.raises(error, match=match):
        SweepConfig.from_dict({**CONFIG, **change})


def test_sweep_command_exit_2_on_a_bad_reference(own_code, tmp_path, capsys):
    cfg = tmp_path / "own.toml"
    cfg.write_text('name = "own"\nseeds = [0]\n[simulate]\npolicies = ["ownsched:StatTypo"]\n'
                   'traces = ["generate"]\njobs = [4]\n')
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "out")]) == 2
    assert "did you mean 'stats'" in capsys.readouterr().err
