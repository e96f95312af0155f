"""``optsched bench list | run | update | check``: outputs, totals, resuming, the same
numbers as ``optsched solve``, improvements recorded with their proofs, and bad input
(exit 2 naming the field or the instance)."""

from __future__ import annotations

import json
import shutil

import pytest

from optsched.bench.library import SHIPPED, Library
from optsched.bench.sets import MODELS, SETS
from optsched.cli import main


def _json(capsys):
    return json.loads(capsys.readouterr().out)


def test_list_shows_every_model_and_the_simulation_sets(capsys):
    assert main(["bench", "list"]) == 0
    text = capsys.readouterr().out
    for s in SETS:
        assert s in text
    assert main(["bench", "list", "--json"]) == 0
    sets = _json(capsys)
    assert {s["model"] for s in sets} == {*MODELS, "sim"}
    for s in sets:
        for o in s["objectives"].values():
            assert o["closed"] + o["open"] == s["instances"]
    assert main(["bench", "list", "--model", "salus"]) == 0
    assert {line.split()[0] for line in capsys.readouterr().out.splitlines()[2:5]} == \
        {"salus/small", "salus/medium", "salus/large"}


def test_list_of_a_set_shows_its_records(capsys):
    assert main(["bench", "list", "gavel/small", "--json"]) == 0
    recs = _json(capsys)
    assert [r["instance"] for r in recs] == [i.name for i in SETS["gavel/small"].instances]
    for r in recs:
        o = r["objectives"]["objective"]
        assert o["sense"] == "max" and o["best"]["proof"] and o["status"] in ("open", "closed")


@pytest.mark.parametrize("argv, field", [
    (["bench", "list", "--model", "nope"], "--model"),
    (["bench", "list", "gavel/huge"], "set"),
    (["bench", "run", "gavel/huge"], "set"),
    (["bench", "run", "allox/small", "--method", "nope"], "method"),
    (["bench", "run", "allox/small", "--option", "bogus=1"], "bogus"),
    (["bench", "run", "sim/tiresias-60", "--method", "exact"], "--method"),
    (["bench", "run", "sim/tiresias-60", "--time-limit", "3"], "--time-limit"),
    (["bench", "run", "allox/small", "--policy", "nope.nope"], "policy"),
    (["bench", "run", "allox/small", "--workers", "0"], "workers"),
])
def test_bad_input_exits_2_naming_it(argv, field, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert field in capsys.readouterr().err


def test_run_gives_the_numbers_of_optsched_solve_cell_by_cell(capsys, tmp_path):
    """Each instance's value is what ``optsched solve`` gives on the instance file."""
    out = tmp_path / "run"
    assert main(["bench", "run", "allox/small", "--method", "sjf", "--out", str(out),
                 "--json"]) == 0
    rows = _json(capsys)["rows"]
    lib = Library()
    for r in rows:
        path = tmp_path / "inst.json"
        lib.instance(r["instance"]).to_json(path)
        assert main(["solve", "allox", str(path), "--method", "sjf", "--json"]) == 0
        solved = _json(capsys)
        assert r["value"] == pytest.approx(solved["objective"], rel=1e-12)
        rec = lib.records()[r["instance"]].entries["objective"]
        assert r["best_known"] == rec.best.value and r["bound"] == rec.bound.value
        assert r["gap_best"] == pytest.approx((r["value"] - rec.best.value) / rec.best.value)
        assert r["gap_best"] >= -1e-12  # a shipped heuristic never beats a closed record
        assert r["gap_bound"] >= 0


def test_run_totals_and_resume(capsys, tmp_path):
    out = tmp_path / "run"
    assert main(["bench", "run", "gavel/small", "--out", str(out), "--json"]) == 0
    first = _json(capsys)
    t = first["totals"]["objective"]
    assert t["instances"] == 4 and t["solved"] == 4 and t["errors"] == 0
    assert t["mean_gap_bound"] is not None and t["mean_gap_bound"] >= 0
    assert main(["bench", "run", "gavel/small", "--out", str(out), "--json"]) == 0
    assert "0 computed, 4 reused" in capsys.readouterr().err
    # the table and the CSV
    assert main(["bench", "run", "gavel/small", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "4/4 solved (validated)" in text and "gavel/g48-j30-s0" in text
    assert main(["bench", "run", "gavel/small", "--out", str(out), "--csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("key,set,instance") and len(lines) == 5


def test_a_policy_over_a_simulation_set(capsys, tmp_path):
    out = tmp_path / "sim"
    assert main(["bench", "run", "sim/tiresias-60", "--policy", "tiresias.srtf",
                 "--out", str(out), "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert {r["objective"] for r in rows} == {"mean_jct", "makespan"}
    for r in rows:
        assert r["value"] is not None and r["gap_bound"] >= 0
        assert r["own_bound"] is not None and r["own_bound"] <= r["value"]


def test_a_policy_over_a_solve_set_is_measured_by_the_model(capsys, tmp_path):
    out = tmp_path / "p"
    assert main(["bench", "run", "tiresias/small", "--policy", "tiresias.las",
                 "--out", str(out), "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert all(r["value"] is not None and r["kind"] == "policy" for r in rows)


def test_an_outside_method_is_measured_not_recorded(capsys, tmp_path):
    out = tmp_path / "g"
    assert main(["bench", "run", "synergy/small", "--method", "greedy", "--out", str(out),
                 "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert all(r["outside"] and not r["improved"] for r in rows)
    # the record's bound holds for the model's feasible set, not for an outside value
    assert all(r["gap_bound"] is None for r in rows)


def test_your_own_method_runs_by_name(own_code, capsys, tmp_path):
    out = tmp_path / "own"
    assert main(["bench", "run", "allox/small", "--method", "ownsched:ect", "--out",
                 str(out), "--json"]) == 0
    rows = _json(capsys)["rows"]
    assert all(r["value"] is not None and r["gap_best"] >= -1e-12 for r in rows)


# --------------------------------------------------------------------------- update
def _worse_copy(tmp_path, name):
    """A copy of the shipped library whose record of ``name`` lost its best-known value
    and its bound."""
    root = tmp_path / "lib"
    shutil.copytree(SHIPPED, root)
    raw = json.loads((root / "records.json").read_text())
    o = raw[name]["objectives"]["objective"]
    o.update(best=None, bound=None, gap=None, status="open")
    (root / "records.json").write_text(json.dumps(raw))
    return root


def test_update_records_a_better_value_with_its_proof(capsys, tmp_path):
    name = "allox/g6-j15-s0"
    root = _worse_copy(tmp_path, name)
    run = tmp_path / "run"
    assert main(["bench", "run", "allox/small", "--method", "exact", "--out", str(run),
                 "--library", str(root)]) == 0
    capsys.readouterr()
    assert main(["bench", "update", str(run), "--library", str(root)]) == 0
    text = capsys.readouterr().out
    assert f"{name} objective: best none ->" in text and "bound none ->" in text
    e = Library(root).records()[name].entries["objective"]
    shipped = Library().records()[name].entries["objective"]
    assert e.best.value == pytest.approx(shipped.best.value) and e.best.method == "exact"
    assert e.status(1e-4) == "closed"
    assert main(["bench", "check", "allox/small", "--library", str(root)]) == 0
    # nothing new the second time
    assert main(["bench", "update", str(run), "--library", str(root)]) == 0
    assert "nothing to record" in capsys.readouterr().out


def test_update_refuses_a_tampered_proof_naming_the_instance(capsys, tmp_path):
    import gzip

    root = _worse_copy(tmp_path, "allox/g6-j15-s1")
    run = tmp_path / "run"
    assert main(["bench", "run", "allox/small", "--method", "sjf", "--out", str(run),
                 "--library", str(root)]) == 0
    rows = [json.loads(x) for x in (run / "cells.jsonl").read_text().splitlines()]
    target = next(r for r in rows if r["instance"] == "allox/g6-j15-s1")
    path = run / target["proof"]
    proof = json.loads(gzip.decompress(path.read_bytes()))
    proof["schedule"]["allocations"] = proof["schedule"]["allocations"][1:]  # a job lost
    path.write_bytes(gzip.compress(json.dumps(proof).encode()))
    before = (root / "records.json").read_bytes()
    capsys.readouterr()
    assert main(["bench", "update", str(run), "--library", str(root)]) == 2
    assert "allox/g6-j15-s1" in capsys.readouterr().err
    assert (root / "records.json").read_bytes() == before  # nothing written


def test_update_refuses_a_value_without_its_proof(capsys, tmp_path):
    root = _worse_copy(tmp_path, "allox/g6-j15-s2")
    run = tmp_path / "run"
    assert main(["bench", "run", "allox/small", "--method", "sjf", "--out", str(run),
                 "--library", str(root)]) == 0
    lines = (run / "cells.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    for r in rows:
        if r["instance"] == "allox/g6-j15-s2":
            r["proof"] = None
    (run / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["bench", "update", str(run), "--library", str(root)]) == 2
    err = capsys.readouterr().err
    assert "allox/g6-j15-s2" in err and "without a proof" in err


def test_check_refuses_a_tampered_library_with_exit_2(capsys, tmp_path):
    root = tmp_path / "lib"
    shutil.copytree(SHIPPED, root)
    raw = json.loads((root / "records.json").read_text())
    name = "gavel/g48-j30-s1"
    raw[name]["objectives"]["objective"]["best"]["proof"] = ""
    (root / "records.json").write_text(json.dumps(raw))
    assert main(["bench", "check", "gavel/small", "--library", str(root)]) == 2
    assert name in capsys.readouterr().err
    assert main(["bench", "check", "gavel/medium", "--library", str(root)]) == 0


@pytest.mark.slow
def test_run_on_two_workers_and_on_dask(capsys, tmp_path):
    pytest.importorskip("distributed")
    for engine in ("local", "dask"):
        out = tmp_path / engine
        assert main(["bench", "run", "hadar/small", "--workers", "2", "--engine", engine,
                     "--out", str(out), "--json"]) == 0
        t = _json(capsys)["totals"]["objective"]
        assert t["solved"] == 4 and t["errors"] == 0


def test_update_takes_one_schedule_computed_elsewhere(capsys, tmp_path):
    """A result file of ``optsched solve`` on the library's instance is submitted; a
    schedule that fails the validator is refused naming the instance."""
    name = "allox/g6-j15-s3"
    root = _worse_copy(tmp_path, name)
    inst = tmp_path / "inst.json"
    Library().instance(name).to_json(inst)
    res = tmp_path / "res.json"
    assert main(["solve", "allox", str(inst), "--method", "sjf", "--out", str(res)]) == 0
    capsys.readouterr()
    assert main(["bench", "update", "--instance", name, "--schedule", str(res),
                 "--method", "sjf by hand", "--library", str(root)]) == 0
    assert f"{name} objective: best none ->" in capsys.readouterr().out
    e = Library(root).records()[name].entries["objective"]
    assert e.best.method == "sjf by hand" and e.bound is None
    assert main(["bench", "check", "allox/small", "--library", str(root)]) == 0
    bad = json.loads(res.read_text())
    bad["schedule"]["allocations"][0]["end"] += 1e6  # runs past its work: not a schedule
    res.write_text(json.dumps(bad))
    capsys.readouterr()
    assert main(["bench", "update", "--instance", name, "--schedule", str(res),
                 "--library", str(root)]) == 2
    assert name in capsys.readouterr().err
    for argv in (["bench", "update", "--library", str(root)],
                 ["bench", "update", "--instance", name, "--library", str(root)],
                 ["bench", "update", str(tmp_path), "--objective", "x", "--library",
                  str(root)]):
        assert main(argv) == 2
