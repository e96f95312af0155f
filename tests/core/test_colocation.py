"""Space sharing in the core: the co-location table, partnered allocations in the
validator, and the simulator's decision check."""

from __future__ import annotations

import json

import pytest

from optsched.core.instance import Cluster, Colocation, Instance, Job, Node, PairRate
from optsched.core.schedule import Allocation, Placement, Schedule
from optsched.core.validate import Capabilities, validate_schedule
from optsched.errors import InvalidInstance, InvalidSchedule
from optsched.sim import simulate
from optsched.sim.policy import PolicyViolation

CO = Capabilities(colocation=True)


def _instance(gpus: int = 1) -> Instance:
    cl = Cluster((Node("n0", {"v100": gpus}),))
    jobs = (Job("a", 0, 1, 100.0, {"v100": 10.0}), Job("b", 0, 1, 50.0, {"v100": 10.0}),
            Job("c", 0, 1, 100.0, {"v100": 10.0}))
    return Instance(cl, jobs, colocation=Colocation.of({"v100": [("a", "b", None, 6.0, 5.0)]}))


def _pair(end_a: float = 5.0, end_b: float = 5.0, **kw) -> list[Allocation]:
    return [Allocation("a", 0, end_a, "n0", "v100", 1, partner="b", **kw),
            Allocation("b", 0, end_b, "n0", "v100", 1, partner="a", **kw)]


def test_table_round_trips_through_the_instance_file():
    inst = _instance()
    back = Instance.from_json(inst.to_json())
    assert back.colocation is not None
    assert back.colocation.to_dict() == {"v100": [["a", "b", None, 6.0, 5.0]]}
    assert back.colocated_rate("a", "b", "v100") == 6.0
    assert back.colocated_rate("b", "a", "v100") == 5.0  # the pair is unordered
    assert back.colocated_rate("a", "c", "v100") is None


@pytest.mark.parametrize(("rows", "path"), [
    ({"v100": [["a", "b", None, -1.0, 5.0]]}, "colocation.v100[0].rate_a"),
    ({"v100": [["a", "b", 0, 1.0, 5.0]]}, "colocation.v100[0].workers"),
    ({"v100": [["a", "a", None, 1.0, 5.0]]}, "colocation.v100[0]"),
    ({"v100": [["a", "b", None, 1.0, 5.0], ["b", "a", None, 5.0, 1.0]]},
     "colocation.v100[1]"),
    ({"v100": [["a", "b", 1.0]]}, "colocation.v100[0]"),
    ({"k80": [["a", "b", None, 1.0, 5.0]]}, "colocation.k80"),
])
def test_bad_tables_name_the_field(rows, path):
    d = _instance().to_dict()
    d["colocation"] = rows
    with pytest.raises(InvalidInstance) as e:
        Instance.from_dict(d)
    assert e.value.path == path


def test_rows_per_gang_size_apply_to_equal_gangs_only():
    table = Colocation((PairRate("v100", "x", "y", 2, 1.0, 2.0),))
    assert table.rate("v100", "y", "x", 2) == 2.0
    assert table.rate("v100", "x", "y", 1) is None


def test_a_pair_progresses_at_its_co_located_rates():
    inst = _instance()
    s = Schedule(tuple(_pair()), colocation=True)
    done = validate_schedule(inst, s, CO).done
    assert done == {"a": pytest.approx(30.0), "b": pytest.approx(25.0)}


def test_a_job_keeps_the_gpus_alone_after_its_partner_completed():
    inst = _instance()
    # b completes at 10 s (50 / 5); a holds the GPU alone until 12 s at its co-located rate
    s = Schedule((Allocation("a", 0, 12, "n0", "v100", 1, partner="b"),
                  Allocation("b", 0, 10, "n0", "v100", 1, partner="a")),
                 {"b": 10.0}, colocation=True)
    assert validate_schedule(inst, s, CO).done["a"] == pytest.approx(72.0)


@pytest.mark.parametrize(("allocs", "completion", "declared", "message"), [
    (_pair()[:1], {}, True, "does not hold them"),
    ([Allocation("a", 0, 10, "n0", "v100", 1, partner="c"),
      Allocation("c", 0, 10, "n0", "v100", 1, partner="a")], {}, True,
     "no co-located rate"),
    (_pair() + [Allocation("c", 0, 10, "n0", "v100", 1)], {}, True, "capacity 1"),
    (_pair(), {}, False, "needs co-location to be declared"),
    ([Allocation("a", 0, 12, "n0", "v100", 1, partner="b"),
      Allocation("b", 0, 10, "n0", "v100", 1, partner="a")], {}, True,
     "does not hold them"),  # b unfinished: it must hold the GPU as long as a does
    ([Allocation("a", 0, 5, "n0", "v100", 1, partner="b"),
      Allocation("b", 0, 5, "n0", "v100", 1, partner="a"),
      Allocation("a", 6, 8, "n0", "v100", 1, partner="b")], {"b": 5.5}, True,
     "after its partner"),
    ([Allocation("a", 0, 5, "n0", "v100", 1, partner="zz")], {}, True, "unknown partner"),
    ([Allocation("a", 0, 5, "n0", "v100", 1, partner="a")], {}, True, "its own partner"),
])
def test_invalid_pairs_are_refused(allocs, completion, declared, message):
    inst = _instance(gpus=2)
    if message == "capacity 1":
        inst = _instance(gpus=1)
    s = Schedule(tuple(allocs), completion, colocation=declared)
    with pytest.raises(InvalidSchedule, match=message):
        validate_schedule(inst, s, CO)


def test_a_job_has_one_partner_at_a_time():
    cl = Cluster((Node("n0", {"v100": 2}),))
    jobs = tuple(Job(i, 0, 1, 100.0, {"v100": 1.0}) for i in "abc")
    inst = Instance(cl, jobs, colocation=Colocation.of(
        {"v100": [("a", "b", None, 1.0, 1.0), ("a", "c", None, 1.0, 1.0)]}))
    s = Schedule((Allocation("a", 0, 5, "n0", "v100", 1, partner="b"),
                  Allocation("b", 0, 5, "n0", "v100", 1, partner="a"),
                  Allocation("a", 0, 5, "n0", "v100", 1, partner="c"),
                  Allocation("c", 0, 5, "n0", "v100", 1, partner="a")), colocation=True)
    with pytest.raises(InvalidSchedule):
        validate_schedule(inst, s, CO)


def test_schedule_json_keeps_partners():
    s = Schedule(tuple(_pair()), colocation=True)
    back = Schedule.from_dict(json.loads(s.to_json()))
    assert back.colocation and [a.partner for a in back.allocations] == ["b", "a"]


class _Pairing:
    """Places a and b on the one GPU as a pair (or, with ``mirror=False``, a alone
    naming b)."""

    name, needs_work, event_driven, colocation = "pairing", False, False, True

    def __init__(self, mirror: bool = True):
        self.mirror = mirror

    def allocate(self, view):
        out = []
        if "a" in view.ids and "b" in view.ids:
            out.append(Placement("a", "n0", "v100", 1, partner="b"))
            if self.mirror:
                out.append(Placement("b", "n0", "v100", 1, partner="a"))
        else:
            out += [Placement(j, "n0", "v100", 1) for j in view.ids[:1]]
        return out


def test_simulator_runs_a_pair_at_its_rates_and_validates():
    inst = _instance()
    inst = inst.replace(jobs=inst.jobs[:2])
    res = simulate(inst, _Pairing(), progress=False)
    # b (50 at 5/s) completes at 10 s, a (100 at 6/s, alone after b at the same rate
    # until the round ends) at 100 / 6 s
    assert res.schedule.completion == {"a": pytest.approx(100 / 6), "b": pytest.approx(10.0)}
    assert res.schedule.colocation


def test_simulator_refuses_a_pair_without_its_mirror():
    inst = _instance()
    with pytest.raises(PolicyViolation, match="does not hold them"):
        simulate(inst.replace(jobs=inst.jobs[:2]), _Pairing(mirror=False), progress=False)


def test_bounds_with_colocation_keep_only_the_per_job_bound_at_the_fastest_rate():
    from optsched.sim.bounds import Setting, lower_bounds

    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = (Job("a", 0, 1, 100.0, {"v100": 10.0}), Job("b", 0, 1, 100.0, {"v100": 10.0}))
    # sharing the one GPU, both run at 8/s: together faster than one at a time
    inst = Instance(cl, jobs, colocation=Colocation.of({"v100": [("a", "b", None, 8.0,
                                                                    8.0)]}))
    pair = Schedule((Allocation("a", 0, 12.5, "n0", "v100", 1, partner="b"),
                     Allocation("b", 0, 12.5, "n0", "v100", 1, partner="a")),
                    {"a": 12.5, "b": 12.5}, colocation=True)
    validate_schedule(inst, pair, CO)
    strict = lower_bounds(inst)  # one job at a time: a mean JCT of 15 s at best
    assert strict.mean_jct == pytest.approx(15.0)
    co = lower_bounds(inst, Setting(colocation=True))
    assert co.mean_jct <= 12.5 and co.makespan <= 12.5  # the pair's schedule is allowed
    assert set(co.skipped) == {"pooled", "interval_lp", "release_lp"}
    faster = Colocation.of({"v100": [("a", "b", None, 20.0, 20.0)]})
    assert lower_bounds(inst.replace(colocation=faster),
                        Setting(colocation=True)).mean_jct == pytest.approx(5.0)
