"""A schedule cannot relax its own referee: the rules come from the model or policy."""

from __future__ import annotations

import json

import pytest

from optsched import (
    Allocation,
    Cluster,
    Instance,
    InvalidSchedule,
    Job,
    Node,
    Schedule,
    validate_schedule,
)
from optsched.registry import capabilities


@pytest.fixture
def inst() -> Instance:
    cl = Cluster((Node("n0", {"v100": 2}), Node("n1", {"v100": 2})))
    return Instance(cl, (Job("a", 0, 2, 100, {"v100": 10}),), slot=10)


def forked() -> Schedule:
    # two 1-GPU copies of a 2-worker job on two nodes: 10 + 10 it/s, 100 it by t=5
    return Schedule((Allocation("a", 0, 5, "n0", "v100", 1, copy=0),
                     Allocation("a", 0, 5, "n1", "v100", 1, copy=1)), {"a": 5}, forking=True)


def partial() -> Schedule:
    # a 1-GPU gang of a 2-worker job: only valid under the "partial" progress rule
    return Schedule((Allocation("a", 0, 10, "n0", "v100", 1),), {"a": 10},
                    progress_rule="partial")


@pytest.mark.parametrize("sched,flag", [(forked, "forking"), (partial, "progress_rule")])
def test_self_declared_flags_are_refused_without_a_model(inst, sched, flag):
    with pytest.raises(InvalidSchedule, match="strict rules") as err:
        validate_schedule(inst, sched())
    assert err.value.path == flag


def test_flags_the_named_model_lacks_are_refused(inst):
    with pytest.raises(InvalidSchedule, match="model allox does not have it") as err:
        validate_schedule(inst, forked(), "allox")
    assert err.value.path == "forking"
    with pytest.raises(InvalidSchedule, match="policy gavel.max_min_fairness") as err:
        validate_schedule(inst, partial(), "gavel.max_min_fairness")
    assert err.value.path == "progress_rule"
    assert validate_schedule(inst, forked(), "hadare").done["a"] == pytest.approx(100)
    assert validate_schedule(inst, partial(), "hadar").done["a"] == pytest.approx(100)
    sharing = Schedule((Allocation("a", 0, 20, "n0", "v100", 2, share=0.5),), {"a": 10},
                       sharing=True)
    with pytest.raises(InvalidSchedule, match="sharing"):
        validate_schedule(inst, sharing, "hadare")


def test_capabilities_of_models_and_policies():
    assert capabilities("hadare").forking and not capabilities("allox").forking
    assert capabilities("salus").sharing and capabilities("synergy").resource_sensitive
    assert capabilities("hadar").progress_rules == ("gang", "partial", "additive")
    assert capabilities("allox").describe() == (
        "gang progress, no forking, no sharing, not resource-sensitive, continuous time "
        "(model allox)")
    pol = capabilities("max_min_fairness")  # an alias
    assert pol.source == "policy gavel.max_min_fairness" and pol.time == "continuous"
    from optsched.errors import UnknownName

    with pytest.raises(UnknownName):
        capabilities("no-such-model")


def test_cli_validate_names_the_rules_and_refuses_flags(inst, tmp_path, capsys):
    from optsched.cli import main

    i, s = tmp_path / "i.json", tmp_path / "s.json"
    inst.to_json(i)
    s.write_text(json.dumps(forked().to_dict()))
    assert main(["validate", str(i), str(s)]) == 2
    err = capsys.readouterr().err
    assert "forking" in err and "strict rules" in err
    assert main(["validate", str(i), str(s), "--model", "allox"]) == 2
    assert "model allox does not have it" in capsys.readouterr().err
    assert main(["validate", str(i), str(s), "--model", "hadare"]) == 0
    out = capsys.readouterr()
    assert "rules: gang progress, forking with consolidation, no sharing" in out.err
    assert json.loads(out.out)["rules"].endswith("(model hadare); slot 10 s")
    # a result file names its model: its capabilities bound the flags
    r = tmp_path / "r.json"
    r.write_text(json.dumps({"model": "hadare", "method": "exact",
                             "schedule": forked().to_dict()}))
    assert main(["validate", str(i), str(r)]) == 0
    assert "named by the result file" in capsys.readouterr().err
    # work done at 5 s, completion at 9 s: within the 10 s slot, not within a 2 s one
    late = dict(forked().to_dict(), completion={"a": 9.0})
    s.write_text(json.dumps(late))
    assert main(["validate", str(i), str(s), "--model", "hadare"]) == 0
    capsys.readouterr()
    assert main(["validate", str(i), str(s), "--model", "hadare", "--slot", "2"]) == 2
    assert "at most 6" in capsys.readouterr().err
    r.write_text(json.dumps({"model": "allox", "method": "exact",
                             "schedule": forked().to_dict()}))
    assert main(["validate", str(i), str(r)]) == 2


def test_capabilities_are_checked_on_construction():
    from optsched.core.validate import Capabilities
    from optsched.errors import InvalidOption

    with pytest.raises(InvalidOption, match="progress_rules"):
        Capabilities(progress_rules=("async",))
    with pytest.raises(InvalidOption, match="progress_rules"):
        Capabilities(progress_rules=())
    with pytest.raises(InvalidOption, match="time"):
        Capabilities(time="rounds")


def test_a_simulation_result_file_names_its_registered_policy(tmp_path, capsys):
    """optsched simulate's result names the policy under its registry name, whose rules
    (here Synergy's CPU/DRAM-sensitive rates) optsched validate then applies."""
    from optsched.cli import main
    from optsched.registry import get_model, simulate

    inst = get_model("salus").demo_instance()
    res = simulate(inst, "synergy.greedy", progress=False)
    assert res.extra["registered_policy"] == "synergy.greedy"
    assert res.schedule.resource_sensitive
    i, r = tmp_path / "i.json", tmp_path / "r.json"
    inst.to_json(i)
    r.write_text(json.dumps(res.to_dict()))
    assert main(["validate", str(i), str(r)]) == 0
    assert "(policy synergy.greedy), named by the result file" in capsys.readouterr().err
    assert main(["validate", str(i), str(r), "--model", "gavel"]) == 2
    assert "model gavel does not have it" in capsys.readouterr().err
