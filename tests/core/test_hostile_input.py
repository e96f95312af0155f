"""Hostile files (bytes that are not UTF-8, 100,000-deep nesting, numbers no float holds)
give typed errors naming the file or the field, through the API and the CLI (exit 2)."""

from __future__ import annotations

import json

import pytest

from optsched import (
    Instance,
    InvalidInput,
    InvalidInstance,
    InvalidOption,
    Job,
    Node,
    load_instance,
)
from optsched.catalog import read_gavel_trace, read_tiresias_trace
from optsched.cli import main
from optsched.cli.simulate import load_cluster
from optsched.core.jsonio import MAX_DEPTH, load_json, parse_json, parse_toml
from optsched.core.schedule import Schedule, load_schedule
from optsched.errors import InvalidSchedule
from optsched.studies.sweep import load_config


def instance_dict() -> dict:
    return {"name": "tiny", "slot": 60,
            "cluster": {"nodes": [{"name": "n0", "gpus": {"v100": 2}}]},
            "jobs": [{"id": "a", "arrival": 0, "workers": 1, "work": 100,
                      "throughput": {"v100": 1.0}}]}


def schedule_dict() -> dict:
    return {"allocations": [{"job": "a", "start": 0, "end": 100, "node": "n0",
                             "gpu_type": "v100", "gpus": 1}], "completion": {"a": 100}}


def with_literal(doc: dict, keys: list, literal: str) -> bytes:
    """``doc`` as JSON text with the value at ``keys`` replaced by a raw ``literal``."""
    target = doc
    for k in keys[:-1]:
        target = target[k]
    target[keys[-1]] = "@@"
    return json.dumps(doc).replace('"@@"', literal).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000
NOT_UTF8 = b'{"name": "caf\xe9"}'

# (name, instance file bytes, schedule file bytes, what the message must say)
HOSTILE = [
    ("not-utf8", NOT_UTF8, NOT_UTF8, "not UTF-8"),
    ("deep", DEEP, DEEP, f"nested deeper than {MAX_DEPTH} levels"),
    ("int-10^400", with_literal(instance_dict(), ["jobs", 0, "work"], str(10**400)),
     with_literal(schedule_dict(), ["allocations", 0, "end"], str(10**400)),
     "number out of range"),
    ("float-1e400", with_literal(instance_dict(), ["jobs", 0, "arrival"], "1e400"),
     with_literal(schedule_dict(), ["completion", "a"], "1e400"), "number out of range"),
    ("workers-10^400", with_literal(instance_dict(), ["jobs", 0, "workers"], str(10**400)),
     with_literal(schedule_dict(), ["allocations", 0, "gpus"], str(10**400)),
     "number out of range"),
    ("5000-digits", with_literal(instance_dict(), ["slot"], "7" * 5000),
     with_literal(schedule_dict(), ["allocations", 0, "start"], "7" * 5000),
     "number out of range"),
]
IDS = [h[0] for h in HOSTILE]
FIELD = {"int-10^400": ("jobs[0].work", "allocations[0].end"),
         "float-1e400": ("jobs[0].arrival", "completion.a"),
         "workers-10^400": ("jobs[0].workers", "allocations[0].gpus"),
         "5000-digits": ("slot", "allocations[0].start")}


def named(err: InvalidInput, name: str, path, which: int) -> None:
    """The error names the field for a bad number, the file for a bad document."""
    text = str(err)
    if name in FIELD:
        assert err.path == FIELD[name][which], text
    else:
        assert err.value == str(path), text


@pytest.fixture
def files(tmp_path):
    good_inst = tmp_path / "inst.json"
    good_inst.write_text(json.dumps(instance_dict()))
    good_sched = tmp_path / "sched.json"
    good_sched.write_text(json.dumps(schedule_dict()))
    return tmp_path, good_inst, good_sched


# --------------------------------------------------------------------------- API
@pytest.mark.parametrize("name,inst,sched,needle", HOSTILE, ids=IDS)
def test_api_loaders_raise_typed_errors(name, inst, sched, needle, files):
    tmp, _, _ = files
    ipath, spath = tmp / "hostile_inst.json", tmp / "hostile_sched.json"
    ipath.write_bytes(inst)
    spath.write_bytes(sched)
    with pytest.raises(InvalidInstance, match=needle) as err:
        load_instance(ipath)
    named(err.value, name, ipath, 0)
    with pytest.raises(InvalidInstance, match=needle):
        Instance.from_json(inst)
    if name != "not-utf8":  # str input is already decoded
        with pytest.raises(InvalidInstance, match=needle):
            Instance.from_json(inst.decode())
    with pytest.raises(InvalidSchedule, match=needle) as err:
        load_schedule(spath)
    named(err.value, name, spath, 1)
    with pytest.raises(InvalidOption, match=needle):
        load_cluster(str(ipath))
    cfg = tmp / "sweep.json"
    cfg.write_bytes(inst)
    with pytest.raises(InvalidOption, match=needle):
        load_config(cfg)


def test_numbers_beyond_float_or_integer_range_are_typed_errors():
    ok = dict(id="a", arrival=0, workers=1, work=100, throughput={"v100": 1.0})
    for field, value in [("work", 10**400), ("arrival", -(10**400)), ("weight", 10**400),
                         ("workers", 10**400), ("workers", 2**63), ("workers", 1e300)]:
        with pytest.raises(InvalidInstance, match="number out of range") as err:
            Job(**{**ok, field: value})
        assert err.value.path == f"job.{field}"
    with pytest.raises(InvalidInstance, match="number out of range"):
        Job(**{**ok, "throughput": {"v100": 10**400}})
    with pytest.raises(InvalidInstance, match="number out of range") as err:
        Node("n", {"v100": 2**63})
    assert err.value.path == "node.gpus.v100"
    d = instance_dict()
    d["jobs"][0]["work"] = 10**400
    with pytest.raises(InvalidInstance, match="number out of range") as err:
        Instance.from_dict(d)
    assert err.value.path == "jobs[0].work"
    assert Node("n", {"v100": 2**53}).gpus["v100"] == 2**53  # the largest accepted


def test_schedule_from_dict_rejects_numbers_out_of_range():
    for keys, value in [(["allocations", 0, "end"], 10**400),
                        (["allocations", 0, "gpus"], 10**400),
                        (["allocations", 0, "copy"], 2**63),
                        (["completion", "a"], 10**400), (["consolidation"], 10**400)]:
        d = schedule_dict()
        target = d
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
        path = ".".join(str(k) for k in keys).replace(".0.", "[0].")
        with pytest.raises(InvalidSchedule, match="number out of range") as err:
            Schedule.from_dict(d)
        assert err.value.path == path


def test_error_message_survives_values_it_cannot_repr():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidSchedule, match="completion") as err:
        Schedule.from_dict({"allocations": [], "completion": deep})
    assert "[[[" in str(err.value)
    with pytest.raises(InvalidInstance, match="bit integer"):
        Job(id="a", arrival=0, workers=10**5000, work=1, throughput={"v100": 1.0})


def test_document_rules():
    with pytest.raises(InvalidInstance, match="b: key given more than once"):
        parse_json('{"a": 1, "b": 2, "b": 3}', InvalidInstance)
    with pytest.raises(InvalidInstance, match="NaN and Infinity"):
        parse_json('{"a": [Infinity]}', InvalidInstance)
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(nested, InvalidInstance) is not None
    with pytest.raises(InvalidInstance, match="nested deeper"):
        parse_json("[" + nested + "]", InvalidInstance)
    # the float range ends at 1.8e308; below it and at the underflow end all is kept
    assert parse_json("[1.7e308, -1.7e308, 1e-400, 123456789012345678901]",
                      InvalidInstance) == [1.7e308, -1.7e308, 0.0, 123456789012345678901]
    with pytest.raises(InvalidInstance, match="must be text"):
        parse_json(None, InvalidInstance)


def test_toml_sweep_config_rules(tmp_path):
    for text, needle in [("a = " + "[" * 100_000 + "]" * 100_000, "nested deeper"),
                         ("sizes = [" + "1" * 5000 + "]", "number out of range"),
                         ("sizes = [" + str(10**400) + "]", "number out of range"),
                         ("options = {time_limit = inf}", "options.time_limit: must be finite"),
                         ("options = {time_limit = nan}", "must be finite")]:
        with pytest.raises(InvalidOption, match=needle):
            parse_toml(text, InvalidOption, "config")
        cfg = tmp_path / "s.toml"
        cfg.write_text(text)
        with pytest.raises(InvalidOption, match=needle):
            load_config(cfg)
    cfg.write_bytes(b"name = 'caf\xe9'")
    with pytest.raises(InvalidOption, match="config: not UTF-8"):
        load_config(cfg)


def test_trace_readers_raise_typed_errors(tmp_path):
    bad = tmp_path / "t.trace"
    bad.write_bytes(b"\xff\xfe\n")
    with pytest.raises(InvalidInstance, match="not UTF-8"):
        read_gavel_trace(bad)
    csv_file = tmp_path / "t.csv"
    csv_file.write_bytes(b"job_id,num_gpu\n\xff\n")
    with pytest.raises(InvalidInstance, match="not UTF-8"):
        read_tiresias_trace(csv_file)
    header = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
    csv_file.write_text(header + "a" * 200_000 + ",1,0,10,m,10,0\n")
    with pytest.raises(InvalidInstance, match="t.csv:line 2: not valid CSV"):
        read_tiresias_trace(csv_file)
    csv_file.write_text(header + "a,1e300,0,10,m,10,0\n")
    with pytest.raises(InvalidInstance, match="line 2.workers: number out of range"):
        read_tiresias_trace(csv_file)


def test_load_json_reports_file_problems(tmp_path):
    with pytest.raises(InvalidInstance, match="cannot read"):
        load_json(tmp_path / "missing.json", InvalidInstance)
    with pytest.raises(InvalidInstance, match="cannot read"):
        load_json(tmp_path, InvalidInstance)


# --------------------------------------------------------------------------- CLI
def cli(argv, capsys) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name,inst,sched,needle", HOSTILE, ids=IDS)
def test_cli_exits_2_on_hostile_files(name, inst, sched, needle, files, capsys):
    tmp, good_inst, good_sched = files
    ipath, spath = tmp / "hostile_inst.json", tmp / "hostile_sched.json"
    ipath.write_bytes(inst)
    spath.write_bytes(sched)
    for argv in (["solve", "allox", ipath],
                 ["validate", ipath, good_sched],
                 ["validate", good_inst, spath],
                 ["simulate", "--policy", "fifo", "--instance", ipath],
                 ["simulate", "--policy", "fifo", "--instance", good_inst, "--cluster", ipath],
                 ["plot", ipath, "--out", tmp / "png"]):
        code, err = cli(argv, capsys)
        assert code == 2, (argv, err)
        assert needle in err and "Traceback" not in err, (argv, err)
    assert cli(["validate", good_inst, good_sched], capsys)[0] == 0


def test_schema_states_the_integer_bound():
    import jsonschema

    from optsched.core.instance import MAX_INTEGER, instance_json_schema

    schema = instance_json_schema()
    d = instance_dict()
    d["cluster"]["nodes"][0]["gpus"]["v100"] = MAX_INTEGER
    d["jobs"][0]["workers"] = MAX_INTEGER
    jsonschema.validate(d, schema)
    for keys in (["cluster", "nodes", 0, "gpus", "v100"], ["jobs", 0, "workers"]):
        bad = instance_dict()
        target = bad
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = MAX_INTEGER + 1
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
        with pytest.raises(InvalidInstance, match="number out of range"):
            Instance.from_dict(bad)
