"""Every path a user can take from the command line, on every shipped trace.

Cells: every registered model (``compare`` and ``solve`` with each of its methods, then
``validate`` of the result) and every simulator policy (``simulate``, then ``validate``
and, once per instance, ``plot``) on a short prefix of each shipped trace, on a
generated Philly-like instance and on the models' demo instances (written by
``optsched instance``). Each cell must exit 0 with a result that validates, or exit 2
naming the field that puts the instance outside the model. Which cells exit 2 is pinned
below, so a model that stops applying where it used to fails the test.
"""

from __future__ import annotations

import json
import re

import pytest

from optsched.catalog import SHIPPED_TRACES
from optsched.cli import main
from optsched.registry import models, simulation_names

PREFIX = 6
TRACES = sorted(SHIPPED_TRACES)
MODELS = sorted(models())
DEMOS = [f"{m}-demo" for m in MODELS if models()[m].demo_instance is not None]
INSTANCES = [*TRACES, "generated", *DEMOS]
SIM_INSTANCES = [*TRACES, "generated", "salus-demo", "synergy-demo"]
ALLOX_POLICIES = [p for p in simulation_names(aliases=False) if p.startswith("allox.")]
SYNERGY_POLICIES = [p for p in simulation_names(aliases=False) if p.startswith("synergy.")]

# (model or policy, instance) pairs outside the model: the command exits 2 naming a field
OUTSIDE = {
    **{("allox", i): "arrival|workers" for i in [*TRACES, "generated", "hadar-demo",
                                               "hadare-demo", "gavel-demo"]},
    ("allox", "synergy-demo"): "arrival|workers",
    ("allox", "tiresias-demo"): "arrival|workers",
    **{("salus", i): "memory|workers" for i in INSTANCES if i != "salus-demo"},
    **{("synergy", i): "gpu_types|sensitivity" for i in INSTANCES
       if i not in ("tiresias-60", "tiresias-demo", "philly", "synergy-demo", "salus-demo")},
    **{("salus.lanes", i): "memory|workers" for i in SIM_INSTANCES if i != "salus-demo"},
    **{(p, i): "gpu_types|sensitivity" for p in SYNERGY_POLICIES
       for i in SIM_INSTANCES if i not in ("tiresias-60", "philly", "synergy-demo",
                                           "salus-demo")},
    # AlloX's policies run single-worker jobs: every trace prefix and the synergy demo
    # hold a gang; the salus and allox demos do not
    **{(p, i): "workers" for p in ALLOX_POLICIES
       for i in [*TRACES, "generated", "synergy-demo"]},
    # Tiresias' gandiva forms node sets of any free servers: every job must run on every
    # GPU type (a job of each of these cannot run on k80)
    **{("tiresias.gandiva", i): "throughput" for i in ("gavel-philly-2000", "generated")},
}
FIELD = re.compile(r"optsched: error: ([\w.\[\]]+): ")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Instance files written through the CLI (``optsched instance``)."""
    root = tmp_path_factory.mktemp("matrix")
    out = {}
    for name in [*TRACES, *DEMOS]:
        path = root / f"{name}.json"
        argv = ["instance", name, "--out", str(path)]
        if name in TRACES:
            argv += ["--jobs", str(PREFIX)]
        assert main(argv) == 0, name
        out[name] = path
    from optsched.catalog import generate_philly

    out["generated"] = root / "generated.json"
    generate_philly(PREFIX, seed=1, jobs_per_hour=2.0).to_json(out["generated"])
    return out


def _expect(key, code, err):
    if key in OUTSIDE:
        assert code == 2, (key, err)
        field = FIELD.search(err)
        assert field and re.search(OUTSIDE[key], field.group(1) + err), (key, err)
    else:
        assert code == 0, (key, err)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("instance", INSTANCES)
def test_compare(model, instance, files, capsys):
    code = main(["compare", model, str(files[instance]), "--json", "--time-limit", "20"])
    cap = capsys.readouterr()
    _expect((model, instance), code, cap.err)
    if code == 0:
        rows = json.loads(cap.out)
        assert [r["method"] for r in rows] == list(models()[model].method_names)
        for r in rows:  # the certified bound holds for every row it is given for
            if r["certified_gap"] is not None:
                assert r["certified_gap"] >= 1 - 1e-6, (model, instance, r)
            elif r["value"] is not None and r["kind"] != "bound":
                assert r["bound_note"], (model, instance, r)


@pytest.mark.parametrize("model,method", [(m, x) for m in MODELS
                                          for x in models()[m].method_names])
def test_solve_and_validate_on_demo(model, method, files, tmp_path, capsys):
    inst = files[f"{model}-demo"]
    out = tmp_path / "r.json"
    assert main(["solve", model, str(inst), "--method", method, "--json", "--values",
                 "--out", str(out)]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["method"] == method and res["status"] in ("optimal", "feasible")
    if res.get("schedule") is not None:
        assert main(["validate", str(inst), str(out)]) == 0
        assert json.loads(capsys.readouterr().out)["valid"] is True
    elif model == "gavel" and method != "bound":
        # one round's allocation, checked against Gavel's constraints when it was made
        assert res["values"]["X"] and res["objective"] is not None
    else:  # a bound has no schedule, only the bound
        assert res["bound"] is not None


#: Policies whose cells run in the default suite on one short trace only (the others in
#: CI's slow step): LP policies of Gavel that repeat what the cells of the policies
#: beside them already exercise (the round mechanism, the solver layer), several
#: seconds each on the longer prefixes. Gavel's packed policies run on the 15-job artifact
#: trace in the default suite (its co-location table makes max_min_fairness_packed pair
#: jobs there), on every prefix in the slow step, as does Tiresias' dlas_gpu_pack (its
#: decisions are tiresias.las's unless memory shares below 1 are given).
DEFAULT_ON_ONE = {"gavel.finish_time_fairness_agnostic", "gavel.min_total_duration_agnostic",
                  "gavel.isolated", "gavel.max_min_fairness_water_filling",
                  "gavel.max_min_fairness_water_filling_agnostic",
                  "gavel.min_total_duration_packed", "gavel.finish_time_fairness_packed",
                  "gavel.max_sum_throughput_normalized_by_cost_packed_SLOs",
                  "gavel.max_min_fairness_water_filling_packed", "gavel.fifo_packed",
                  "gavel.max_min_fairness_packed",
                  # with every memory share 1 (the original's) it decides as tiresias.las
                  "tiresias.dlas_gpu_pack"}
#: Synergy's DRF, TETRIS, SRSF and OPT policies run the allocators' code path under
#: another order; on the Philly prefix (9,700 rounds, ~30 s each) they run in the slow step
_SLOW_SIM = {(p, "philly") for p in ("synergy.drf", "synergy.tetris", "synergy.srsf",
                                     "synergy.opt")}


def _slow_cell(instance: str, policy: str) -> bool:
    return ((policy in DEFAULT_ON_ONE and instance != "gavel-artifact-15")
            or (policy, instance) in _SLOW_SIM)


SIM_CELLS = [pytest.param(i, p, marks=[pytest.mark.slow] if _slow_cell(i, p) else [])
             for i in SIM_INSTANCES for p in simulation_names(aliases=False)]


@pytest.mark.parametrize(("instance", "policy"), SIM_CELLS)
def test_simulate_and_validate(policy, instance, files, tmp_path, capsys):
    out = tmp_path / "sim.json"
    code = main(["simulate", "--policy", policy, "--instance", str(files[instance]),
                 "--out", str(out)])
    cap = capsys.readouterr()
    _expect((policy, instance), code, cap.err)
    if code == 0:
        res = json.loads(out.read_text())
        n = len(json.loads(files[instance].read_text())["jobs"])
        assert res["metrics"]["n_jobs"] == n
        assert main(["validate", str(files[instance]), str(out)]) == 0


@pytest.mark.parametrize("policy", ALLOX_POLICIES)
def test_allox_policies_on_their_demo(policy, files, tmp_path, capsys):
    """The AlloX demo (24 single-worker jobs on 6 GPUs, all queued at 0) is not among the
    simulation instances of every policy; AlloX's own policies run on it."""
    out = tmp_path / "sim.json"
    assert main(["simulate", "--policy", policy, "--instance", str(files["allox-demo"]),
                 "--out", str(out)]) == 0
    assert f"policy {policy}" in capsys.readouterr().out
    res = json.loads(out.read_text())
    assert res["metrics"]["n_jobs"] == res["metrics"]["n_completed"] == 24
    assert main(["validate", str(files["allox-demo"]), str(out)]) == 0


@pytest.mark.parametrize("instance", SIM_INSTANCES)
def test_plot_every_instance(instance, files, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sim.json"
    policy = {"salus-demo": "salus.lanes", "synergy-demo": "synergy.tune"}.get(
        instance, "gavel.max_min_fairness")
    assert main(["simulate", "--policy", policy, "--instance", str(files[instance]),
                 "--out", str(out)]) == 0
    assert main(["plot", str(out), "--out", str(tmp_path / "png")]) == 0
    for f in ("jct_cdf.png", "utilization.png", "gantt.png"):
        assert (tmp_path / "png" / f).stat().st_size > 1000


def test_generate_source(capsys):
    assert main(["simulate", "--policy", "tiresias_gittins", "--generate", str(PREFIX),
                 "--cluster", "tiresias-n32g4"]) == 0
    assert f"jobs {PREFIX}/{PREFIX}" in capsys.readouterr().out


def test_remaining_commands(tmp_path, capsys):
    assert main(["schema"]) == 0
    assert main(["catalog"]) == 0
    assert main(["instance", "gavel-phily-2000"]) == 2
    assert "gavel-philly-2000" in capsys.readouterr().err
    assert main(["reproduce", "--quick", "--only", "allox_talk", "--out",
                 str(tmp_path / "rep")]) == 0
    config = tmp_path / "grid.json"
    config.write_text(json.dumps({"name": "m", "models": ["allox"],
                                  "methods": ["exact", "sjf"], "sizes": [4], "seeds": [0]}))
    assert main(["sweep", str(config), "--out", str(tmp_path / "s")]) == 0
