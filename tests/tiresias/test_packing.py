"""Tiresias' dlas-gpu-pack: 2D-LAS with two jobs on the same GPUs when their memory fits."""

from __future__ import annotations

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.catalog import read_tiresias_trace
from optsched.core.colocation import Colocation, PairRate
from optsched.core.validate import validate_schedule
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias import full_speed_colocation
from optsched.tiresias.policy import TIRESIAS_DRAFT_SHARES

POLICY = "tiresias.dlas_gpu_pack"


def _inst(jobs, gpus=1):
    return Instance(Cluster((Node("n0", {"p100": gpus}),)), tuple(jobs), slot=60.0)


def _job(jid, seconds, workers=1, arrival=0.0, profile=None):
    return Job(jid, arrival, workers, seconds * workers, {"p100": 1.0}, profile=profile)


def _run(inst, shares):
    packed, by_key = full_speed_colocation(inst, shares)
    res = simulate(packed, get_policy(POLICY, memory_shares=by_key), progress=False)
    validate_schedule(packed, res.schedule, POLICY)
    return packed, res


def test_original_shares_never_pack_and_decide_as_las():
    # at Tiresias 959f9b0 every model's share is 1: dlas-gpu-pack is dlas-gpu
    two = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(2)))
    inst = read_tiresias_trace(cluster=two)
    packed, shares = full_speed_colocation(inst)
    assert packed.colocation is None and shares == {}
    for opts in ({}, {"queue_order": "original", "demotion": "original"}):
        a = simulate(inst, get_policy(POLICY, **opts), progress=False)
        b = simulate(inst, get_policy("tiresias.las", **opts), progress=False)
        assert dict(a.schedule.completion) == dict(b.schedule.completion)


def test_two_jobs_whose_memory_fits_share_a_gpu_at_full_speed():
    inst = _inst([_job("a", 100.0, profile="resnet50"), _job("b", 300.0, profile="vgg11")])
    _, res = _run(inst, TIRESIAS_DRAFT_SHARES)  # 0.50 + 0.45 <= 1
    assert res.schedule.completion["a"] == pytest.approx(100.0)
    assert res.schedule.completion["b"] == pytest.approx(300.0)
    assert {a.partner for a in res.schedule.allocations} >= {"a", "b"}


def test_shares_above_one_gpu_do_not_pack():
    inst = _inst([_job("a", 100.0, profile="vgg19"), _job("b", 300.0, profile="resnet50")])
    _, res = _run(inst, TIRESIAS_DRAFT_SHARES)  # 0.60 + 0.50 > 1: one after the other
    assert res.schedule.completion["a"] == pytest.approx(100.0)
    assert res.schedule.completion["b"] == pytest.approx(400.0)
    assert all(a.partner is None for a in res.schedule.allocations)


def test_a_gpu_never_holds_a_third_job():
    # three alexnet jobs (0.13 each) fit one GPU in the original; the core pairs only
    inst = _inst([_job(j, 100.0, profile="alexnet") for j in "abc"])
    _, res = _run(inst, TIRESIAS_DRAFT_SHARES)
    done = sorted(res.schedule.completion.values())
    assert done == pytest.approx([100.0, 100.0, 200.0])


def test_unequal_gangs_do_not_pair():
    inst = _inst([_job("a", 100.0, workers=1, profile="resnet50"),
                  _job("b", 100.0, workers=2, profile="resnet50", arrival=1.0)], gpus=2)
    _, res = _run(inst, {"resnet50": 0.5})
    # b needs both GPUs; a holds one: b waits for a, no pair across gang sizes
    assert all(a.partner is None for a in res.schedule.allocations)
    assert res.schedule.completion["b"] == pytest.approx(200.0)


def test_measured_rates_replace_full_speed():
    jobs = [_job("a", 100.0, profile="x"), _job("b", 100.0, profile="y")]
    table = Colocation((PairRate("p100", "x", "y", None, 0.5, 0.5),))
    inst = _inst(jobs).replace(colocation=table)
    res = simulate(inst, get_policy(POLICY, memory_shares={"x": 0.5, "y": 0.5}),
                   progress=False)
    validate_schedule(inst, res.schedule, POLICY)
    # each job at half its isolated rate: both end at 200 s (alone: 100 s and 200 s)
    assert res.schedule.completion["a"] == pytest.approx(200.0)
    assert res.schedule.completion["b"] == pytest.approx(200.0)


def test_full_speed_table_keys_by_id_when_a_profile_has_several_throughputs():
    jobs = [Job("a", 0.0, 1, 100.0, {"p100": 1.0}, profile="vgg11"),
            Job("b", 0.0, 1, 100.0, {"p100": 2.0}, profile="vgg11"),
            Job("c", 0.0, 1, 100.0, {"p100": 1.0}, profile="resnet50"),
            Job("d", 0.0, 1, 100.0, {"p100": 1.0}, profile="resnet50")]
    packed, shares = full_speed_colocation(_inst(jobs), TIRESIAS_DRAFT_SHARES)
    assert [j.profile for j in packed.jobs] == [None, None, "resnet50", "resnet50"]
    assert shares == {"a": 0.45, "b": 0.45, "resnet50": 0.5}
    assert packed.colocated_rate("b", "c", "p100") == 2.0
    assert packed.colocated_rate("c", "d", "p100") == 1.0


@pytest.mark.parametrize("bad", [{"x": 0.0}, {"x": 1.5}, {"x": "half"}, [0.5]])
def test_bad_memory_shares_are_refused(bad):
    with pytest.raises(InvalidOption, match="memory_shares"):
        get_policy(POLICY, memory_shares=bad)
