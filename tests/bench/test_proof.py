"""Proofs of results (optsched.bench.proof): every model's exact method and heuristics
give a proof that validates and reproduces their objective; tampered proofs, proofs of
another instance and malformed proofs are refused naming the record."""

from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from paths import BENCHMARKS

from optsched.bench._checks import one_machine, one_type_per_gang
from optsched.bench.proof import evaluate, evaluate_simulation, objectives, proof_of
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption, InvalidRecord, InvalidSchedule
from optsched.registry import get_model, models, simulate, solve

MODELS = ("allox", "gavel", "hadar", "hadare", "salus", "synergy", "tiresias")
#: per model: (demo sizes, family size); small enough for every exact method in seconds
SIZES = {"allox": ((6, 12), 8), "gavel": ((8, 20), 12), "hadar": ((6, 10), 6),
         "hadare": ((5, 8), 5), "salus": ((8,), 8), "synergy": ((8, 16), 8),
         "tiresias": ((6, 10), 6)}
#: (model, method) whose proofs are refused by the model's own rules, and why
REFUSED = {("synergy", "greedy"): "admitted but not placed"}


@cache
def _families():
    spec = importlib.util.spec_from_file_location("reach_families",
                                                  BENCHMARKS / "reach_families.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _instances(model: str, demo: tuple[int, ...], family: int | None):
    spec = get_model(model)
    out = [spec.demo_instance(n, seed=n) for n in demo]
    if family is not None:
        out.append(_families().family(model, family))
    return out


def _solve(inst, model: str, method: str, **options):
    m = get_model(model).method(method)
    if m.backend:
        options.setdefault("time_limit", 60)
    return solve(inst, model, method, **options)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isfinite(b) and abs(a - b) <= 1e-9 * max(1.0, abs(b)))


def _check_every_method(model: str, demo: tuple[int, ...], family: int | None) -> int:
    checked = 0
    for inst in _instances(model, demo, family):
        for m in get_model(model).methods:
            if m.kind == "bound":
                continue
            res = _solve(inst, model, m.name)
            if not res.success:  # e.g. a Salus heuristic that packs nothing: no proof
                assert res.schedule is None and "X" not in res.values
                continue
            # the proof goes through JSON, as a library file holds it
            proof = json.loads(json.dumps(proof_of(model, res, instance=inst)))
            where = f"{model}/{inst.name}"
            why = REFUSED.get((model, m.name))
            if why is not None:
                try:
                    value = evaluate(model, inst, proof, where=where)
                except InvalidRecord as e:
                    assert e.path == where and why in str(e)
                    continue
            else:
                value = evaluate(model, inst, proof, where=where)
            assert _same(value, res.objective), (where, m.name, value, res.objective)
            checked += 1
    return checked


@pytest.mark.parametrize("model", MODELS)
def test_every_method_proof_reproduces_its_objective(model):
    demo, family = SIZES[model]
    assert _check_every_method(model, demo[:1], family) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
def test_every_method_proof_reproduces_its_objective_larger(model):
    demo, family = SIZES[model]
    assert _check_every_method(model, demo[1:], 2 * family) >= 2


def test_objectives_cover_the_registry():
    assert set(models()) == set(MODELS)
    for model in MODELS:
        declared = list(get_model(model).objectives)
        assert set(declared) <= set(objectives(model))
        if declared:  # the registry's first objective is the model's default
            assert objectives(model)[0] == declared[0]
    with pytest.raises(InvalidOption):
        objectives("nope")


@pytest.mark.parametrize("objective", ["makespan", "max_sum_throughput",
                                       "finish_time_fairness"])
def test_gavel_other_objectives(objective):
    inst = _families().family("gavel", 12)
    for method in ("exact", "rounds", "agnostic", "isolated", "fifo"):
        res = _solve(inst, "gavel", method, objective=objective)
        value = evaluate("gavel", inst, proof_of("gavel", res, instance=inst),
                         objective=objective)
        assert _same(value, res.objective), (method, value, res.objective)


def test_hadare_makespan_and_jct():
    inst = _families().family("hadare", 5)
    for objective in ("makespan", "jct"):
        res = _solve(inst, "hadare", "exact", objective=objective)
        assert res.success
        proof = proof_of("hadare", res)
        assert _same(evaluate("hadare", inst, proof, objective=objective), res.objective)
    # the utility of the same proof is recomputed too (every job completes in it)
    assert evaluate("hadare", inst, proof) > 0


def test_salus_admitted_and_gpus():
    inst = _families().family("salus", 8)
    for objective in ("admitted", "gpus"):
        for method in ("exact", "ffd", "lpt"):
            res = _solve(inst, "salus", method, objective=objective)
            value = evaluate("salus", inst, proof_of("salus", res), objective=objective)
            assert _same(value, res.objective), (objective, method)


def test_salus_serial_realisation_is_worth_its_schedules_makespan():
    """With realize='serial' a Salus result reports its plan's fluid makespan while its
    schedule (lanes run their jobs one by one) ends later: the proof is worth what the
    schedule reaches, never less."""
    inst = _families().family("salus", 8)
    res = _solve(inst, "salus", "lpt", realize="serial")
    value = evaluate("salus", inst, proof_of("salus", res))
    assert res.metrics is not None and value == res.metrics.makespan
    assert value > res.objective * (1 + 1e-3)


# --------------------------------------------------------------------------- tampering
def _allox_case():
    inst = get_model("allox").demo_instance(8, seed=1)
    res = _solve(inst, "allox", "exact")
    return inst, res, proof_of("allox", res)


def test_overbooked_node_is_refused():
    inst, res, proof = _allox_case()
    sched = proof["schedule"]
    a, b = sched["allocations"][0], sched["allocations"][1]
    # every GPU of b's node and type busy at once: move copies of a onto it, overlapping
    node = next(n for n in inst.cluster.nodes if n.name == b["node"])
    extra = [{**b, "job": a["job"], "start": b["start"], "end": b["end"]}
             for _ in range(node.gpus[b["gpu_type"]])]
    bad = {**proof, "schedule": {**sched, "allocations": sched["allocations"] + extra}}
    with pytest.raises(InvalidRecord, match="allox/demo-8") as e:
        evaluate("allox", inst, bad, where="allox/demo-8")
    assert e.value.path == "allox/demo-8" and "validator" in str(e.value)


def test_missing_job_is_refused():
    inst, res, proof = _allox_case()
    sched = proof["schedule"]
    gone = sched["allocations"][0]["job"]
    bad = {**proof, "schedule": {
        **sched, "allocations": [a for a in sched["allocations"] if a["job"] != gone],
        "completion": {k: v for k, v in sched["completion"].items() if k != gone}}}
    with pytest.raises(InvalidRecord, match="not completed") as e:
        evaluate("allox", inst, bad, where="allox/x")
    assert e.value.path == "allox/x"
    # left in completion without the work: the validator refuses it
    bad["schedule"]["completion"] = sched["completion"]
    with pytest.raises(InvalidRecord, match="validator"):
        evaluate("allox", inst, bad, where="allox/x")


def test_earlier_completion_is_refused():
    inst, res, proof = _allox_case()
    sched = proof["schedule"]
    job, c = next(iter(sched["completion"].items()))
    bad = {**proof, "schedule": {**sched, "completion": {**sched["completion"],
                                                         job: c * 0.5}}}
    with pytest.raises(InvalidRecord, match="validator"):
        evaluate("allox", inst, bad, where="allox/x")


def test_allox_preemption_is_refused():
    """A job split in two with a pause validates under the strict rules (same machine,
    work done by its completion) but lies outside AlloX's non-preemptive model."""
    inst, res, proof = _allox_case()
    allocs = [Allocation(**a) for a in proof["schedule"]["allocations"]]
    last = max(allocs, key=lambda a: a.end)   # nothing follows it on its machine
    mid, pause = (last.start + last.end) / 2, 100.0
    pieces = [replace(last, end=mid), replace(last, start=mid + pause, end=last.end + pause)]
    comp = {**proof["schedule"]["completion"], last.job: last.end + pause}
    sched = Schedule(tuple(a for a in allocs if a is not last) + tuple(pieces), comp)
    bad = {**proof, "schedule": sched.to_dict()}
    assert evaluate_simulation(inst, bad, "makespan") > res.metrics.makespan  # valid
    with pytest.raises(InvalidRecord, match="without preemption"):
        evaluate("allox", inst, bad, where="allox/x")


def test_structure_checks_on_small_schedules():
    a = Allocation("j", 0.0, 10.0, "n0", "v100", 1)
    one_machine(Schedule((a, replace(a, start=10.0, end=20.0)), {}))
    with pytest.raises(InvalidSchedule, match="one machine"):
        one_machine(Schedule((a, replace(a, start=10.0, end=20.0, node="n1")), {}))
    g = Allocation("j", 0.0, 10.0, "n0", "v100", 2)
    one_type_per_gang(Schedule((g, replace(g, start=10.0, end=20.0, gpu_type="k80")), {}))
    with pytest.raises(InvalidSchedule, match="one type"):
        one_type_per_gang(Schedule((replace(g, gpus=1),
                                    replace(g, gpus=1, gpu_type="k80", start=5.0)), {}))


def test_gavel_allocation_over_capacity_is_refused():
    inst = _families().family("gavel", 60)
    res = _solve(inst, "gavel", "exact")
    proof = proof_of("gavel", res, instance=inst)
    X = np.asarray(proof["X"])
    # every job that can use type k holds it all the time: rows within 1, type k over
    usable = inst.throughput_matrix > 0
    load = (inst.workers[:, None] * usable).sum(axis=0)
    k = int(np.argmax(load - inst.cluster.capacity.sum(axis=0)))
    assert load[k] > inst.cluster.capacity.sum(axis=0)[k]
    over = np.zeros_like(X)
    over[:, k] = usable[:, k]
    with pytest.raises(InvalidRecord, match="constraints") as e:
        evaluate("gavel", inst, {**proof, "X": over.tolist()}, where="gavel/g")
    assert e.value.path == "gavel/g" and "GPUs of" in str(e.value)
    # time fractions above 1 for one job
    m = int(np.flatnonzero(usable.sum(axis=1) >= 2)[0])
    rows = X.copy()
    rows[m] = usable[m] * 1.0
    with pytest.raises(InvalidRecord, match="sum above 1"):
        evaluate("gavel", inst, {**proof, "X": rows.tolist()}, where="gavel/g")
    # rows and columns in another order give the same value
    perm, tperm = np.arange(X.shape[0])[::-1], np.arange(X.shape[1])[::-1]
    shuffled = {"kind": "allocation", "jobs": [proof["jobs"][i] for i in perm],
                "types": [proof["types"][k] for k in tperm], "X": X[perm][:, tperm].tolist()}
    assert evaluate("gavel", inst, shuffled) == res.objective
    # without names, X is read in the instance's order
    assert evaluate("gavel", inst, {**proof, "jobs": None, "types": None}) == res.objective


def test_proof_of_another_instance_is_refused():
    model = get_model("allox")
    a, b = model.demo_instance(8, seed=1), model.demo_instance(8, seed=2)
    proof = proof_of("allox", _solve(a, "allox", "exact"))
    with pytest.raises(InvalidRecord, match="allox/b"):
        evaluate("allox", b, proof, where="allox/b")
    g1, g2 = _families().family("gavel", 12), _families().family("gavel", 13)
    gproof = proof_of("gavel", _solve(g1, "gavel", "exact"), instance=g1)
    with pytest.raises(InvalidRecord, match="exactly the instance's 13 jobs"):
        evaluate("gavel", g2, gproof, where="gavel/b")
    t = get_model("tiresias")
    ta, tb = t.demo_instance(6, seed=6), t.demo_instance(6, seed=7)
    with pytest.raises(InvalidRecord, match="tiresias/b"):
        evaluate("tiresias", tb, proof_of("tiresias", _solve(ta, "tiresias", "las")),
                 where="tiresias/b")


def test_synergy_proof_needs_resource_sensitive_rates():
    inst = get_model("synergy").demo_instance(8, seed=8)
    res = _solve(inst, "synergy", "tune")
    proof = proof_of("synergy", res)
    assert proof["schedule"]["resource_sensitive"] is True
    plain = {**proof, "schedule": {k: v for k, v in proof["schedule"].items()
                                   if k != "resource_sensitive"}}
    with pytest.raises(InvalidRecord, match="resource_sensitive"):
        evaluate("synergy", inst, plain, where="synergy/x")
    # a configuration off the model's set is refused: 1% more cores per GPU
    sched = proof["schedule"]
    allocs = [dict(a) for a in sched["allocations"]]
    job = allocs[0]["job"]
    for a in allocs:
        if a["job"] == job:
            a["cpus"] = a["cpus"] * 0.99
    with pytest.raises(InvalidRecord, match="fair configuration|validator"):
        evaluate("synergy", inst, {**proof, "schedule": {**sched, "allocations": allocs}},
                 where="synergy/x")


def test_salus_unsafe_or_foreign_lanes_are_refused():
    inst = _families().family("salus", 8)
    res = _solve(inst, "salus", "exact")
    proof = proof_of("salus", res)
    lanes = proof["lanes"]
    jobs = [j for gpu in lanes for lane in gpu for j in lane]
    assert len(lanes) == 2 and sorted(jobs) == sorted(j.id for j in inst.jobs)

    def refused(plan, match):
        with pytest.raises(InvalidRecord, match=match) as e:
            evaluate("salus", inst, {**proof, "lanes": plan}, where="salus/x")
        assert e.value.path == "salus/x"

    # every job in a lane of its own on the first GPU: more memory than 16 GB
    refused([[[j] for j in jobs], []], "safety condition")
    refused(lanes[:1], "each of the 2 GPUs")
    refused([lanes[0] + [[jobs[-1]]], lanes[1]], "a job is in one lane")
    refused([lanes[0], [lane for lane in lanes[1] if jobs[-1] not in lane]],
            "in no lane")
    refused([lanes[0], lanes[1] + [["ghost"]]], "not a job")
    refused(None, "lanes")
    with pytest.raises(InvalidRecord, match="lane plan"):
        proof_of("salus", res.replace(extra={}))


@pytest.mark.parametrize("bad", [
    [], {"kind": "nope"}, {"kind": "schedule"}, {"kind": "schedule", "schedule": {}},
    {"kind": "schedule", "schedule": {"allocations": [{"job": 1}]}},
    {"kind": "schedule", "schedule": {"allocations": [], "completion": {}}, "slot": -1},
    {"kind": "allocation", "X": [[0.0]]}])
def test_malformed_proofs_are_refused(bad):
    inst = get_model("allox").demo_instance(6, seed=6)
    with pytest.raises(InvalidRecord) as e:
        evaluate("allox", inst, bad, where="allox/m")
    assert e.value.path == "allox/m"


@pytest.mark.parametrize("bad", [
    {"kind": "schedule"}, {"kind": "allocation", "X": "x"},
    {"kind": "allocation", "X": [[math.nan]]}, {"kind": "allocation", "X": [1, 2]},
    {"kind": "allocation", "X": [[0.0]], "jobs": ["a", "a"]}])
def test_malformed_gavel_proofs_are_refused(bad):
    inst = get_model("gavel").demo_instance(4, seed=4)
    with pytest.raises(InvalidRecord):
        evaluate("gavel", inst, bad)


def test_unknown_objective_and_result_without_proof():
    inst = get_model("allox").demo_instance(6, seed=6)
    res = _solve(inst, "allox", "exact")
    with pytest.raises(InvalidOption, match="objective"):
        evaluate("allox", inst, proof_of("allox", res), objective="makespan")
    with pytest.raises(InvalidRecord, match="no schedule"):
        proof_of("allox", res.replace(schedule=None))
    with pytest.raises(InvalidRecord, match="no allocation"):
        proof_of("gavel", res.replace(schedule=None))


# --------------------------------------------------------------------------- simulation
@cache
def _trace():
    from optsched.catalog import read_trace

    return read_trace("gavel-philly-2000", "gavel-108", jobs=30, load=50)


@pytest.mark.parametrize("policy", ["tiresias.srtf", "gavel.max_min_fairness"])
def test_simulated_schedules_reproduce_mean_jct_and_makespan(policy):
    inst = _trace()
    res = simulate(inst, policy, bounds=False)
    assert res.metrics is not None and res.metrics.complete
    proof = json.loads(json.dumps(proof_of(policy, res)))
    for rules in ("strict", policy):
        assert evaluate_simulation(inst, proof, "mean_jct", rules=rules) \
            == res.metrics.mean_jct
        assert evaluate_simulation(inst, proof, "makespan", rules=rules) \
            == res.metrics.makespan
    sched = proof["schedule"]
    gone = next(iter(sched["completion"]))
    bad = {**proof, "schedule": {**sched, "completion": {
        k: v for k, v in sched["completion"].items() if k != gone}}}
    with pytest.raises(InvalidRecord, match="sim/cell") as e:
        evaluate_simulation(inst, bad, "mean_jct", where="sim/cell")
    assert e.value.path == "sim/cell"
    with pytest.raises(InvalidOption):
        evaluate_simulation(inst, proof, "utility")


def test_simulation_rules_refuse_what_they_do_not_license():
    """A Salus schedule shares GPUs: the strict rules refuse it, Salus' rules accept it."""
    inst = _families().family("salus", 8)
    res = _solve(inst, "salus", "exact")
    proof = proof_of("salus", res)
    with pytest.raises(InvalidRecord, match="sharing"):
        evaluate_simulation(inst, proof, "makespan", where="sim/salus")
    assert evaluate_simulation(inst, proof, "makespan", rules="salus") == res.objective


def test_unknown_job_ids_are_refused():
    inst, res, proof = _allox_case()
    sched = proof["schedule"]
    old = sched["allocations"][0]["job"]
    rename = {old: "ghost"}
    bad = {**proof, "schedule": {
        **sched, "allocations": [{**a, "job": rename.get(a["job"], a["job"])}
                                 for a in sched["allocations"]],
        "completion": {rename.get(k, k): v for k, v in sched["completion"].items()}}}
    with pytest.raises(InvalidRecord, match="allox/x") as e:
        evaluate("allox", inst, bad, where="allox/x")
    assert "validator" in str(e.value)



def test_synergy_proof_is_of_the_default_round():
    """A round started later than the instance's (the latest arrival) is another round
    of the model, not a proof for this instance's."""
    inst = get_model("synergy").demo_instance(8, seed=8)
    res = _solve(inst, "synergy", "exact", start=float(inst.arrivals.max()) + 100.0)
    with pytest.raises(InvalidRecord, match="round allocation holds"):
        evaluate("synergy", inst, proof_of("synergy", res), where="synergy/x")
