"""Tiresias' gandiva scheduler: node sets per gang size, 10 s steps, 60 s time slices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.core.validate import validate_schedule
from optsched.errors import ModelNotApplicable
from optsched.registry import get_policy
from optsched.sim import simulate

POLICY = "tiresias.gandiva"


def _inst(jobs, nodes=1, gpus=1, types=("p100",)):
    cl = Cluster(tuple(Node(f"n{h}", {types[h % len(types)]: gpus}) for h in range(nodes)))
    return Instance(cl, tuple(jobs), slot=60.0)


def _job(jid, seconds, workers=1, arrival=0.0):
    return Job(jid, arrival, workers, seconds * workers, {"p100": 1.0})


def _run(inst):
    res = simulate(inst, get_policy(POLICY), progress=False)
    validate_schedule(inst, res.schedule, POLICY)
    return res


def test_jobs_beyond_a_node_sets_capacity_take_turns_every_60_s():
    # one 1-GPU server: a node set of capacity 1; the second and third job share it by
    # time slicing, the running job moving to the end of the list at t = 60, 120, ...
    res = _run(_inst([_job(j, 100.0) for j in "abc"]))
    done = res.schedule.completion
    assert done["a"] == pytest.approx(220.0)  # 0-60, 180-220
    assert done["b"] == pytest.approx(300.0)  # 60-120, 220-240 (a's slice), 280-300
    assert done["c"] == pytest.approx(280.0)  # 120-180, 240-280


def test_a_class_shrinks_to_the_gpus_its_jobs_need():
    # four 1-GPU jobs on 2 x 4 GPUs: the fourth opens a second set (a set takes a job only
    # while its load + 1 < capacity 4), then the class needs 4 GPUs and holds 8, so the
    # least loaded set (n1's) is dissolved onto n0's: every job runs on n0
    res = _run(_inst([_job(j, 100.0) for j in "abcd"], nodes=2, gpus=4))
    first = [a for a in res.schedule.allocations if a.start == 0.0]
    assert sorted(a.job for a in first) == list("abcd")
    assert {a.node for a in first} == {"n0"}
    later = [a for a in res.schedule.allocations if a.start > 0.0]
    assert {a.node for a in later} <= {"n0"}
    assert all(c == pytest.approx(100.0) for c in res.schedule.completion.values())


def test_a_multi_server_gang_gets_a_node_set_of_whole_servers():
    res = _run(_inst([_job("a", 50.0, workers=8), _job("b", 50.0, workers=1)],
                     nodes=3, gpus=4))
    held = {(a.job, a.node) for a in res.schedule.allocations}
    assert {n for j, n in held if j == "a"} == {"n0", "n1"}
    assert res.schedule.completion["a"] == pytest.approx(50.0)


@pytest.mark.parametrize("jobs,nodes,field", [
    ([Job("a", 0.0, 3, 1.0, {"p100": 1.0})], 1, "jobs[0].workers"),       # no class of 3
    ([Job("a", 0.0, 1, 1.0, {"p100": 1.0, "v100": 0.0})], 2, "jobs[0].throughput"),
])
def test_inputs_outside_the_original_are_refused(jobs, nodes, field):
    inst = _inst(jobs, nodes=nodes, gpus=4, types=("p100", "v100"))
    with pytest.raises(ModelNotApplicable, match=field.replace("[", r"\[").replace("]", r"\]")):
        simulate(inst, get_policy(POLICY), progress=False)


def test_servers_of_different_sizes_are_refused():
    cl = Cluster((Node("n0", {"p100": 4}), Node("n1", {"p100": 2})))
    with pytest.raises(ModelNotApplicable, match="cluster.nodes"):
        simulate(Instance(cl, (_job("a", 1.0),)), get_policy(POLICY), progress=False)


def test_within_one_step_of_tiresias_simulator():
    """Pinned per-job JCTs of Tiresias' ``gandiva`` (benchmarks/tiresias_peer.py) on its
    60-job trace over 2 x 4 P100: the same node sets and slices; the original completes a
    job at the first 10 s step at or after its work is done, the simulator at that
    instant, so each job ends at most one step earlier and never later."""
    from optsched.catalog import read_tiresias_trace

    peer = json.loads((Path(__file__).parent / "peer_t60_n2g4.json").read_text())
    inst = read_tiresias_trace(cluster=Cluster(tuple(Node(f"n{i}", {"p100": 4})
                                                     for i in range(2))))
    ours = simulate(inst, get_policy(POLICY), progress=False).metrics.jct
    want = peer["jct"]["gandiva"]
    assert set(ours) == set(want)
    assert all(-10.0 <= want[k] - ours[k] <= 10.0 for k in want)
    assert sum(want[k] - ours[k] for k in want) >= 0.0
