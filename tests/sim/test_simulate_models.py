"""``optsched simulate`` runs every model's online policy in the shared simulator."""

from __future__ import annotations

import json

import pytest

import optsched
from optsched.cli import main
from optsched.registry import simulate, simulation_names


def _instances():
    from optsched.hadar import demo_instance as hadar_demo
    from optsched.hadare import demo_instance as hadare_demo
    from optsched.salus.policy import simulate_lanes  # noqa: F401  (module exists)
    from optsched.synergy import synergy_workload

    salus = optsched.get_model("salus").demo_instance()
    synergy = synergy_workload(12, cluster="synergy-128", seed=0, jobs_per_hour=20)
    return {"hadar": hadar_demo(), "hadare": hadare_demo(), "salus_lanes": salus,
            "synergy_tune": synergy, "synergy_greedy": synergy,
            "synergy_proportional": synergy}


@pytest.mark.parametrize("name", ["hadar", "hadare", "salus_lanes", "synergy_tune",
                                  "synergy_greedy", "synergy_proportional"])
def test_model_policy_through_cli(name, tmp_path, capsys):
    assert name in simulation_names()
    inst = _instances()[name]
    path = tmp_path / "inst.json"
    inst.to_json(path)
    out = tmp_path / "res.json"
    assert main(["simulate", "--policy", name, "--instance", str(path), "--out", str(out),
                 "--no-progress"]) == 0
    res = json.loads(out.read_text())
    direct = simulate(inst, name)
    assert res["metrics"]["n_completed"] == direct.metrics.n_completed > 0
    assert res["metrics"]["mean_jct"] == pytest.approx(direct.metrics.mean_jct)
    assert f"jobs {direct.metrics.n_completed}/" in capsys.readouterr().out


def test_model_policy_options_and_errors(tmp_path, capsys):
    inst = _instances()["synergy_tune"]
    path = tmp_path / "inst.json"
    inst.to_json(path)
    assert main(["simulate", "--policy", "synergy_tune", "--instance", str(path),
                 "--option", "order=\"las\"", "--no-progress"]) == 0
    assert main(["simulate", "--policy", "synergy_tune", "--instance", str(path),
                 "--option", "colour=1", "--no-progress"]) == 2
    assert "colour" in capsys.readouterr().err
    assert main(["simulate", "--policy", "hadarr", "--instance", str(path)]) == 2
    assert "did you mean ['hadar'" in capsys.readouterr().err
