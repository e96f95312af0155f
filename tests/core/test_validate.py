"""The independent validator and the metrics module."""

from __future__ import annotations

import pytest

from optsched import (
    Allocation,
    Cluster,
    Instance,
    InvalidSchedule,
    Job,
    Node,
    Schedule,
    compute_metrics,
    validate_schedule,
)
from optsched.core.validate import job_progress


@pytest.fixture
def inst() -> Instance:
    cluster = Cluster((Node("n0", {"v100": 2, "k80": 2}, cpus=8, memory=64),
                       Node("n1", {"k80": 2}, cpus=8, memory=64)))
    jobs = (Job("a", 0, 2, 100, {"v100": 10, "k80": 5}),
            Job("b", 5, 1, 50, {"k80": 5}),
            Job("c", 0, 1, 30, {"v100": 3}))
    return Instance(cluster, jobs, slot=10)


def good(inst) -> Schedule:
    return Schedule((Allocation("a", 0, 5, "n0", "v100", 2),
                     Allocation("b", 5, 15, "n1", "k80", 1),
                     Allocation("c", 5, 15, "n0", "v100", 1)),
                    {"a": 5, "b": 15, "c": 15})


def test_valid_schedule_progress_and_metrics(inst):
    s = good(inst)
    p = validate_schedule(inst, s)
    assert p.done == {"a": 100.0, "b": 50.0, "c": 30.0}
    m = compute_metrics(inst, s)
    assert m.jct == {"a": 5, "b": 10, "c": 15}
    assert m.mean_jct == pytest.approx(10)
    assert m.makespan == 15
    assert m.busy_gpu_seconds == pytest.approx(2 * 5 + 10 + 10)
    assert m.cru == pytest.approx(30 / (6 * 15))
    assert m.queueing_delay == {"a": 0, "b": 0, "c": 5}
    assert m.utility == 3.0


def bad(inst, *allocs, completion=None, **kw) -> Schedule:
    return Schedule(tuple(allocs), completion if completion is not None else {}, **kw)


@pytest.mark.parametrize("sched,match", [
    (lambda i: bad(i, Allocation("zz", 0, 1, "n0", "v100", 2)), "unknown job"),
    (lambda i: bad(i, Allocation("a", 0, 1, "n9", "v100", 2)), "unknown node"),
    (lambda i: bad(i, Allocation("a", 0, 1, "n1", "v100", 2)), "no GPU of type"),
    (lambda i: bad(i, Allocation("a", 3, 3, "n0", "v100", 2)), "start < end"),
    (lambda i: bad(i, Allocation("b", 0, 3, "n0", "k80", 1)), "before job"),
    (lambda i: bad(i, Allocation("c", 0, 3, "n0", "k80", 1)), "cannot run"),
    (lambda i: bad(i, Allocation("c", 0, 3, "n0", "v100", 1, share=0.5)), "share"),
    (lambda i: bad(i, Allocation("a", 0, 3, "n0", "v100", 1)), "gang of 2"),
    (lambda i: bad(i, Allocation("a", 0, 3, "n0", "v100", 2),
                   Allocation("c", 1, 2, "n0", "v100", 1)), "capacity 2"),
    (lambda i: bad(i, Allocation("c", 0, 3, "n0", "v100", 1, cpus=9)), "capacity 8"),
    (lambda i: bad(i, Allocation("a", 0, 4, "n0", "v100", 2), completion={"a": 4}),
     "iterations"),
    (lambda i: bad(i, Allocation("a", 0, 6, "n0", "v100", 2), completion={"a": 5}),
     "after completing"),
    (lambda i: bad(i, Allocation("c", 0, 3, "n0", "v100", 1, copy=1)), "forking"),
    (lambda i: bad(i, Allocation("a", 0, 3, "n0", "v100", 2),
                   Allocation("a", 0, 3, "n1", "k80", 1, copy=1),
                   Allocation("a", 0, 3, "n1", "k80", 1, copy=2), forking=True), "share node"),
])
def test_violations_are_named(inst, sched, match):
    with pytest.raises(InvalidSchedule, match=match):
        s = sched(inst)
        validate_schedule(inst, s, "hadare" if s.forking else None)


def test_mixed_type_gang_runs_at_slowest_rate(inst):
    # 1 V100 + 1 K80 for job a: rate 2 workers x min(10, 5) = 10 it/s -> 10 s for 100 it.
    s = Schedule((Allocation("a", 0, 10, "n0", "v100", 1),
                  Allocation("a", 0, 10, "n0", "k80", 1)), {"a": 10})
    assert validate_schedule(inst, s).done["a"] == pytest.approx(100)
    with pytest.raises(InvalidSchedule):
        validate_schedule(inst, Schedule(s.allocations, {"a": 9.9}))


def test_forked_copies_add_up_and_consolidation_delays_completion(inst):
    # two copies of a on different nodes, 1 K80 each: 5 + 5 it/s -> 100 it in 10 s
    allocs = (Allocation("a", 0, 10, "n0", "k80", 1, copy=0),
              Allocation("a", 0, 10, "n1", "k80", 1, copy=1))
    s = Schedule(allocs, {"a": 12}, forking=True, consolidation=2)
    assert validate_schedule(inst, s, "hadare").done["a"] == pytest.approx(100)
    with pytest.raises(InvalidSchedule, match="iterations"):
        validate_schedule(inst, Schedule(allocs, {"a": 11}, forking=True, consolidation=2),
                          "hadare")


def test_sharing_weighs_gpus_by_share(inst):
    # c: 3 it/s x 0.5 for 20 s = 30 it; a: 2 x 10 it/s x 0.5 = 10 it/s for 10 s = 100 it
    allocs = (Allocation("c", 0, 20, "n0", "v100", 1, share=0.5),
              Allocation("a", 0, 10, "n0", "v100", 2, share=0.5))
    s = Schedule(allocs, {"c": 20, "a": 10}, sharing=True)
    assert validate_schedule(inst, s, "salus").done == pytest.approx({"c": 30, "a": 100})
    over = allocs + (Allocation("b", 5, 6, "n0", "k80", 1),
                     Allocation("c", 0, 1, "n0", "v100", 1, share=0.6, copy=0))
    with pytest.raises(InvalidSchedule):
        validate_schedule(inst, Schedule(over, {}, sharing=True), "salus")


def test_schedule_json_round_trip(inst):
    s = good(inst)
    again = Schedule.from_dict(__import__("json").loads(s.to_json()))
    assert again == s
    with pytest.raises(InvalidSchedule, match="allocations\\[0\\].gpus"):
        Schedule.from_dict({"allocations": [{"job": "a", "start": 0, "end": 1, "node": "n0",
                                             "gpu_type": "v100", "gpus": "two"}]})


_NAN, _INF = float("nan"), float("inf")


@pytest.mark.parametrize("keys,value", [
    (["sharing"], "no"), (["forking"], "false"), (["resource_sensitive"], 1),
    (["sharing"], None), (["consolidation"], _NAN), (["consolidation"], _INF),
    (["completion", "a"], _NAN), (["completion", "b"], -_INF),
    (["allocations", 0, "start"], _NAN), (["allocations", 0, "end"], _INF),
    (["allocations", 0, "share"], _NAN), (["allocations", 0, "cpus"], _INF),
])
def test_schedule_reader_takes_only_json_booleans_and_finite_numbers(inst, keys, value,
                                                                     tmp_path, capsys):
    import json

    from optsched.cli import main

    d = good(inst).to_dict()
    target = d
    for k in keys[:-1]:
        target = target[k]
    target[keys[-1]] = value
    path = ".".join(map(str, keys)).replace(".0.", "[0].")
    with pytest.raises(InvalidSchedule) as err:
        Schedule.from_dict(d)
    assert err.value.path == path, str(err.value)
    inst_file, sched_file = tmp_path / "i.json", tmp_path / "s.json"
    inst.to_json(inst_file)
    sched_file.write_text(json.dumps(d))
    assert main(["validate", str(inst_file), str(sched_file)]) == 2
    assert path in capsys.readouterr().err


def test_resource_sensitive_progress_uses_cpu_and_memory_per_gpu():
    from optsched import Sensitivity

    sens = Sensitivity(cpu_grid=(1, 3, 6), memory_grid=(20, 60),
                       throughput=((0.5, 0.5), (0.8, 1.0), (0.8, 2.0)), best_cpu=6,
                       best_memory=60)
    cluster = Cluster((Node("s", {"v100": 2}, cpus=12, memory=120),))
    inst = Instance(cluster, (Job("a", 0, 2, 100, {"v100": 5}, sensitivity=sens),))
    # 2 GPUs with 6 cores and 60 GB each: 2 x 5 x 2.0 = 20 it/s -> 5 s
    fast = (Allocation("a", 0, 5, "s", "v100", 2, cpus=12, memory=120),)
    s = Schedule(fast, {"a": 5}, resource_sensitive=True)
    assert validate_schedule(inst, s, "synergy").done["a"] == pytest.approx(100)
    # the same allocation without the flag runs at the proportional rate: not done
    with pytest.raises(InvalidSchedule, match="iterations"):
        validate_schedule(inst, Schedule(fast, {"a": 5}), "synergy")
    # 4.5 cores per GPU interpolates between 0.8/1.0 and 0.8/2.0 at 60 GB: 1.5
    mid = (Allocation("a", 0, 10, "s", "v100", 2, cpus=9, memory=120),)
    done = job_progress(inst, Schedule(mid, {}, resource_sensitive=True)).done["a"]
    assert done == pytest.approx(2 * 5 * 1.5 * 10)
    assert sens.relative(0.5, 60) == 0.0          # below the profiled grid
    assert sens.relative(100, 1000) == 2.0        # above it: the last point
    again = Schedule.from_dict(__import__("json").loads(s.to_json()))
    assert again.resource_sensitive


# ------------------------------------------------------------------ progress rules
def test_progress_rule_partial_gang_runs_at_its_width(inst):
    # job a (W=2) on 1 V100 for 10 s: 1 x 10 it/s -> 100 it; a 1-GPU gang is a violation
    # under the default rule and a valid, half-speed gang under "partial"
    allocs = (Allocation("a", 0, 10, "n0", "v100", 1),)
    s = Schedule(allocs, {"a": 10}, progress_rule="partial")
    assert validate_schedule(inst, s, "hadar").done["a"] == pytest.approx(100)
    with pytest.raises(InvalidSchedule, match="gang of 2"):
        validate_schedule(inst, Schedule(allocs, {"a": 10}))
    with pytest.raises(InvalidSchedule, match="iterations"):
        validate_schedule(inst, Schedule((Allocation("a", 0, 9.9, "n0", "v100", 1),),
                                         {"a": 9.9}, progress_rule="partial"), "hadar")
    # mixed types: the slowest still paces the gang
    mixed = (Allocation("a", 0, 10, "n0", "v100", 1), Allocation("a", 10, 20, "n0", "k80", 1))
    assert job_progress(inst, Schedule(mixed, {}, progress_rule="partial")
                        ).done["a"] == pytest.approx(150)
    with pytest.raises(InvalidSchedule, match=r"1\.\.2 GPUs"):
        validate_schedule(inst, Schedule((Allocation("a", 0, 10, "n0", "v100", 2),
                                          Allocation("a", 0, 10, "n0", "k80", 1)), {},
                                         progress_rule="partial"), "hadar")


def test_progress_rule_additive_sums_workers_rates(inst):
    # 1 V100 + 1 K80: additive 10 + 5 = 15 it/s -> 100 it in 20/3 s; gang: 2 x 5 = 10
    allocs = (Allocation("a", 0, 20 / 3, "n0", "v100", 1),
              Allocation("a", 0, 20 / 3, "n0", "k80", 1))
    s = Schedule(allocs, {"a": 20 / 3}, progress_rule="additive")
    assert validate_schedule(inst, s, "hadar").done["a"] == pytest.approx(100)
    # the same schedule does not hold under the slowest-type rule
    with pytest.raises(InvalidSchedule, match="iterations"):
        validate_schedule(inst, Schedule(allocs, {"a": 20 / 3}))
    # the width is still W under "additive"
    with pytest.raises(InvalidSchedule, match="gang of 2"):
        validate_schedule(inst, Schedule(allocs[:1], {}, progress_rule="additive"), "hadar")


def test_progress_rule_unknown_is_a_typed_error_and_round_trips(inst):
    from optsched.errors import InvalidOption

    with pytest.raises(InvalidOption, match="progress_rule"):
        Schedule((), {}, progress_rule="async")
    s = Schedule((Allocation("a", 0, 10, "n0", "v100", 1),), {"a": 10},
                 progress_rule="partial")
    back = Schedule.from_json(s.to_json()) if hasattr(Schedule, "from_json") else \
        Schedule.from_dict(s.to_dict())
    assert back.progress_rule == "partial" and back == s
    with pytest.raises(InvalidSchedule, match="progress_rule"):
        Schedule.from_dict({**s.to_dict(), "progress_rule": "sum"})


def test_copy_efficiency_credits_the_largest_copy_in_full(inst):
    # copies of a: 2 V100 on n0 (20/s) over [0, 4), 2 K80 on n1 (10/s) over [2, 6)
    allocs = (Allocation("a", 0, 4, "n0", "v100", 2, copy=0),
              Allocation("a", 2, 6, "n1", "k80", 2, copy=1))
    full = job_progress(inst, Schedule(allocs, {}, forking=True)).done["a"]
    assert full == pytest.approx(80 + 40)
    half = Schedule(allocs, {}, forking=True, copy_efficiency=0.5)
    # [0, 2): V100 alone 40; [2, 4): 20 + 0.5 x 10 = 50; [4, 6): K80 alone (main) 20
    assert job_progress(inst, half).done["a"] == pytest.approx(110)
    assert Schedule.from_dict(half.to_dict()) == half
    from optsched.errors import InvalidOption

    with pytest.raises(InvalidOption, match="copy_efficiency"):
        Schedule(allocs, {}, forking=True, copy_efficiency=0.0)
    with pytest.raises(InvalidOption, match="copy_efficiency"):
        Schedule((), {}, copy_efficiency=0.5)  # no forking: one copy
    with pytest.raises(InvalidSchedule, match="copy_efficiency"):
        Schedule.from_dict({**half.to_dict(), "copy_efficiency": 2})


# ------------------------------------------------------------------ defence in depth
def test_a_copy_on_two_nodes_is_an_invalid_schedule(inst, monkeypatch):
    """A forked copy spanning two nodes is named as InvalidSchedule; and should the rule
    module ever fail to name a violation the arrays found, the validator still refuses
    it (no AssertionError, no silent pass)."""
    import optsched.core.validate as v

    two = Schedule((Allocation("a", 0, 3, "n0", "k80", 1, copy=1),
                    Allocation("a", 0, 3, "n1", "k80", 1, copy=1)), {}, forking=True)
    with pytest.raises(InvalidSchedule, match=r"one node, holds 2 on \['n0', 'n1'\]"):
        validate_schedule(inst, two, "hadare")
    monkeypatch.setattr(v, "gang_error", lambda *a, **k: None)
    with pytest.raises(InvalidSchedule, match=r"holds 2 GPUs on \['n0', 'n1'\]"):
        validate_schedule(inst, two, "hadare")


@pytest.mark.parametrize("field,value", [("cpus", -1.0), ("memory", -8.0)])
def test_negative_cpu_or_memory_is_refused_even_if_a_rule_misses_it(inst, monkeypatch,
                                                                     field, value):
    import optsched.core.validate as v

    a = Allocation("c", 0, 10, "n0", "v100", 1, **{field: value})
    s = Schedule((a,), {"c": 10})
    with pytest.raises(InvalidSchedule, match="cpus and memory must be finite numbers >= 0"):
        validate_schedule(inst, s)
    monkeypatch.setattr(v, "placement_error", lambda *a, **k: None)
    with pytest.raises(InvalidSchedule, match="breaks a placement rule") as err:
        validate_schedule(inst, s)
    assert err.value.path == "allocations[0]"
