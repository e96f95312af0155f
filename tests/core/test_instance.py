"""Instance format: validation on construction, JSON round trip, schema."""

from __future__ import annotations

import copy
import json
import math

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched import Cluster, Instance, InvalidInstance, Job, Node, Utility
from optsched.core.instance import instance_json_schema


def base() -> dict:
    return {
        "name": "tiny",
        "slot": 60,
        "cluster": {"nodes": [
            {"name": "a", "gpus": {"v100": 2, "k80": 2}, "cpus": 16, "memory": 64,
             "gpu_memory": {"v100": 16, "k80": 12}},
            {"name": "b", "gpus": {"k80": 4}, "cpus": 8, "memory": 32},
        ]},
        "jobs": [
            {"id": "j1", "arrival": 0, "workers": 2, "work": 1000,
             "throughput": {"v100": 4.0, "k80": 1.0}, "weight": 2, "user": "u1",
             "utility": {"kind": "sigmoid", "gamma1": 5, "gamma2": 0.01, "gamma3": 300}},
            {"id": "j2", "arrival": 10.5, "workers": 4, "work": 50, "throughput": {"k80": 0.5},
             "memory": {"persistent": 300, "ephemeral": 900}},
        ],
    }


def mutate(path: list, value):
    d = base()
    target = d
    for p in path[:-1]:
        target = target[p]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


_DELETE = object()

# (mutation path, new value, expected field path in the error)
MALFORMED = [
    (["jobs", 0, "arrival"], -1, "jobs[0].arrival"),
    (["jobs", 0, "arrival"], math.nan, "jobs[0].arrival"),
    (["jobs", 0, "work"], math.inf, "jobs[0].work"),
    (["jobs", 0, "work"], 0, "jobs[0].work"),
    (["jobs", 0, "workers"], 0, "jobs[0].workers"),
    (["jobs", 0, "workers"], 2.5, "jobs[0].workers"),
    (["jobs", 0, "workers"], "2", "jobs[0].workers"),
    (["jobs", 0, "throughput"], {"v100": 1, "a100": 3}, "jobs[0].throughput.a100"),
    (["jobs", 0, "throughput"], {"v100": 0, "k80": 0}, "jobs[0].throughput"),
    (["jobs", 0, "throughput"], {"v100": -1}, "jobs[0].throughput.v100"),
    (["jobs", 0, "throughput"], {}, "jobs[0].throughput"),
    (["jobs", 0, "workers"], 9, "jobs[0].workers"),          # wider than the cluster
    (["jobs", 1, "workers"], 7, "jobs[1].workers"),          # only 6 K80s exist
    (["jobs", 1, "id"], "j1", "jobs[1].id"),                 # duplicate id
    (["cluster", "nodes"], [], "cluster.nodes"),             # empty cluster
    (["cluster", "nodes", 1, "name"], "a", "cluster.nodes[1].name"),
    (["cluster", "nodes", 0, "gpus", "v100"], -2, "cluster.nodes[0].gpus.v100"),
    (["cluster", "nodes", 0, "gpu_memory"], {"p100": 16}, "cluster.nodes[0].gpu_memory.p100"),
    (["cluster", "nodes", 0, "cpus"], "many", "cluster.nodes[0].cpus"),
    (["horizon"], 5.0, "jobs[1].arrival"),                   # arrival after horizon
    (["slot"], 0, "slot"),
    (["jobs"], {"j1": {}}, "jobs"),                          # wrong JSON type
    (["jobs", 0, "weight"], 0, "jobs[0].weight"),
    (["jobs", 0, "utility", "kind"], "quadratic", "jobs[0].utility.kind"),
    (["jobs", 0, "memory"], {"persistent": -1, "ephemeral": 2}, "jobs[0].memory.persistent"),
    (["jobs", 0, "colour"], "red", "jobs[0].colour"),        # unknown field
    (["jobs", 0, "id"], _DELETE, "jobs[0].id"),              # missing field
    (["cluster"], [], "cluster"),
    (["jobs", 0, "arrival"], True, "jobs[0].arrival"),       # bool is not a number
]


def test_base_is_valid():
    inst = Instance.from_dict(base())
    assert inst.n_jobs == 2
    assert inst.cluster.gpu_types == ("k80", "v100")
    assert inst.cluster.gpus_per_type == {"k80": 6, "v100": 2}
    assert inst.throughput_matrix.tolist() == [[1.0, 4.0], [0.5, 0.0]]


@pytest.mark.parametrize("path,value,field", MALFORMED,
                         ids=[m[2] + f"={m[1]!r}"[:30] for m in MALFORMED])
def test_malformed_instance_names_field(path, value, field):
    with pytest.raises(InvalidInstance) as err:
        Instance.from_dict(mutate(path, value))
    assert err.value.path == field, str(err.value)
    assert field in str(err.value)


def test_at_least_fifteen_distinct_malformed_inputs():
    assert len({m[2] for m in MALFORMED}) >= 15


def test_invalid_json_text_and_constants():
    with pytest.raises(InvalidInstance, match="not valid JSON"):
        Instance.from_json("{\"cluster\": ")
    text = json.dumps(base()).replace("\"arrival\": 0", "\"arrival\": NaN")
    with pytest.raises(InvalidInstance, match="NaN"):
        Instance.from_json(text)


def test_json_round_trip_is_identity():
    inst = Instance.from_dict(base())
    again = Instance.from_json(inst.to_json())
    assert again.to_dict() == inst.to_dict()
    assert again.jobs[0].utility == inst.jobs[0].utility


def test_schema_accepts_valid_and_rejects_type_errors():
    schema = instance_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(base(), schema)
    bad = mutate(["jobs", 0, "workers"], "2")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_objects_are_immutable():
    inst = Instance.from_dict(base())
    with pytest.raises(AttributeError):
        inst.slot = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        inst.jobs[0].throughput["v100"] = 9  # type: ignore[index]


def test_utility_is_non_increasing_and_non_negative():
    for u in (Utility("linear", value=10, slope=0.5), Utility("sigmoid", gamma1=3, gamma2=0.1,
              gamma3=20), Utility("step", value=4, deadline=30, late_value=1),
              Utility("constant", value=2)):
        d = [0, 1, 10, 29, 30, 31, 100, 1e6]
        vals = [u(x) for x in d]
        assert all(v >= 0 for v in vals)
        assert all(a >= b - 1e-12 for a, b in zip(vals, vals[1:]))
    with pytest.raises(InvalidInstance, match="late_value"):
        Utility("step", value=1, deadline=3, late_value=2)


@given(st.lists(st.tuples(st.floats(0, 1e6), st.integers(1, 4), st.floats(1, 1e9),
                          st.floats(0.01, 100)), min_size=1, max_size=8))
def test_round_trip_generated(specs):
    cluster = Cluster((Node("n", {"v100": 4}),))
    jobs = tuple(Job(f"j{i}", a, w, e, {"v100": r}) for i, (a, w, e, r) in enumerate(specs))
    inst = Instance(cluster, jobs)
    again = Instance.from_json(inst.to_json())
    assert again.to_dict() == inst.to_dict()


def test_schema_example_matches_constructor_on_valid_copies():
    d = copy.deepcopy(base())
    d["jobs"][1]["throughput"] = {"k80": 0.5, "v100": 0.0}
    Instance.from_dict(d)
    jsonschema.validate(d, instance_json_schema())
