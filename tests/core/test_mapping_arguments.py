"""The public functions take an instance or a schedule as a mapping in its JSON form
(as ``Instance.from_dict`` / ``Schedule.from_dict`` read it) and refuse anything else
with ``InvalidInput`` naming the argument (before: ``AttributeError``)."""

from __future__ import annotations

import pytest

import optsched
from optsched import InvalidInput, InvalidInstance, InvalidSchedule
from optsched.allox import demo_instance


@pytest.fixture(scope="module")
def solved():
    inst = demo_instance()
    return inst, optsched.solve(inst, "allox", method="sjf")


def test_solve_and_simulate_take_a_mapping(solved):
    inst, res = solved
    from_dict = optsched.solve(inst.to_dict(), model="allox", method="sjf")
    assert from_dict.objective == pytest.approx(res.objective, rel=1e-12)
    sim = optsched.simulate(inst.to_dict(), "allox.sjf")
    assert sim.schedule.completion == pytest.approx(res.schedule.completion, rel=1e-12)


def test_validate_schedule_takes_mappings(solved):
    inst, res = solved
    want = optsched.validate_schedule(inst, res.schedule).done
    for a, b in ((inst.to_dict(), res.schedule), (inst, res.schedule.to_dict()),
                 (inst.to_dict(), res.schedule.to_dict()),
                 (inst, res.to_dict())):   # a result's JSON form holds the schedule
        assert optsched.validate_schedule(a, b).done == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("bad", [None, [1, 2], "inst.json", 3.0])
def test_anything_else_is_invalid_input_naming_the_argument(solved, bad):
    inst, res = solved
    for call, name in ((lambda: optsched.solve(bad, "allox", method="sjf"), "instance"),
                       (lambda: optsched.simulate(bad, "allox.sjf"), "instance"),
                       (lambda: optsched.validate_schedule(bad, res.schedule), "instance"),
                       (lambda: optsched.validate_schedule(inst, bad), "schedule")):
        with pytest.raises(InvalidInput) as e:
            call()
        assert e.value.path == name


def test_a_bad_mapping_says_which_field(solved):
    inst, res = solved
    with pytest.raises(InvalidInstance, match="cluster"):
        optsched.solve({"jobs": []}, "allox", method="sjf")
    bad = res.schedule.to_dict()
    bad["colour"] = 1
    with pytest.raises(InvalidSchedule, match="colour"):
        optsched.validate_schedule(inst, bad)
