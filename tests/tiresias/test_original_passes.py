"""The public simulator's own passes, offered as options: ``scan="original"`` (its
``lpjf`` passes over the job after each one it starts) and ``expected_keys="original"``
(its ``shortest-expected`` keys)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.core.validate import validate_schedule
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias import TiresiasPolicy


def _three_jobs_on_two_gpus():
    cl = Cluster((Node("n0", {"p100": 2}),))
    jobs = tuple(Job(j, 0.0, 1, 100.0, {"p100": 1.0}) for j in "abc")
    return Instance(cl, jobs, slot=60.0)


@pytest.mark.parametrize("scan, want", [
    # a starts, b is looked at next and starts; c waits for a GPU
    ("all", {"a": 100.0, "b": 100.0, "c": 200.0}),
    # a starts, the iterator moves past b, c starts; b waits for a GPU
    ("original", {"a": 100.0, "b": 200.0, "c": 100.0}),
])
def test_the_job_after_a_started_one_is_passed_over(scan, want):
    inst = _three_jobs_on_two_gpus()
    policy = get_policy("tiresias.lpjf", scan=scan)
    res = simulate(inst, policy, progress=False)
    validate_schedule(inst, res.schedule, "tiresias")
    assert dict(res.schedule.completion) == pytest.approx(want)


def test_within_one_second_of_tiresias_simulator():
    """Pinned per-job JCTs of Tiresias' ``lpjf`` (benchmarks/tiresias_peer.py) on its
    60-job trace over 2 x 4 P100: with the original's pass every job completes within
    1 s; with the definition's, 4 of 60 (``tiresias_peer.md``)."""
    from optsched.catalog import read_tiresias_trace

    peer = json.loads((Path(__file__).parent / "peer_t60_n2g4.json").read_text())
    inst = read_tiresias_trace(cluster=Cluster(tuple(Node(f"n{i}", {"p100": 4})
                                                     for i in range(2))))
    want = peer["jct"]["lpjf"]
    for scan, close in (("original", 60), ("all", 4)):
        ours = simulate(inst, get_policy("tiresias.lpjf", scan=scan), progress=False)
        jct = ours.metrics.jct
        assert set(jct) == set(want)
        assert sum(abs(want[k] - jct[k]) <= 1.0 for k in want) == close


def test_a_preemptive_policy_has_no_such_pass():
    with pytest.raises(InvalidOption) as e:
        TiresiasPolicy(order="fifo", thresholds=None, scan="original")
    assert e.value.path == "scan"
    with pytest.raises(InvalidOption) as e:
        get_policy("tiresias.lpjf", scan="skip")
    assert e.value.path == "scan"


def test_expected_keys_original_within_one_second_of_tiresias_simulator():
    """Pinned per-job JCTs of Tiresias' ``shortest-expected`` with GPU counting on its
    60-job trace over 2 x 4 P100: with the original's keys every job completes within
    1 s, with its 31 preemptions; with each job's own key 6 of 60 (``tiresias_peer.md``)."""
    from optsched.catalog import read_tiresias_trace

    peer = json.loads((Path(__file__).parent / "peer_t60_n2g4.json").read_text())
    inst = read_tiresias_trace(cluster=Cluster(tuple(Node(f"n{i}", {"p100": 4})
                                                     for i in range(2))))
    want = peer["jct"]["shortest-expected-count"]
    for keys, close, preempted in (("original", 60, 31), ("own", 6, 63)):
        res = simulate(inst, get_policy("tiresias.shortest_expected", expected_keys=keys),
                       progress=False)
        jct = res.metrics.jct
        assert set(jct) == set(want)
        assert sum(abs(want[k] - jct[k]) <= 1.0 for k in want) == close
        assert res.extra["total_preemptions"] == preempted


def test_expected_keys_belong_to_the_expected_order():
    with pytest.raises(InvalidOption) as e:
        TiresiasPolicy(order="las", expected_keys="original")
    assert e.value.path == "expected_keys"
    with pytest.raises(InvalidOption) as e:
        get_policy("tiresias.shortest_expected", expected_keys="mine")
    assert e.value.path == "expected_keys"
    with pytest.raises(InvalidOption) as e:  # not an option of a policy without the order
        get_policy("tiresias.sjf", expected_keys="original")
    assert e.value.path == "expected_keys"
