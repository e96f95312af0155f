"""The shared simulator's capabilities: GPU sharing, CPU/DRAM sensitivity, forking with
consolidation. Random policies that use them (Hypothesis) never over-allocate, and the
simulator's progress equals the validator's; pinned cases for additive copies and the
consolidation delay; every rule the simulator checks raises PolicyViolation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched import Cluster, Instance, Job, Node, Sensitivity
from optsched.core.progress import gang_rate
from optsched.core.schedule import Allocation
from optsched.core.validate import job_progress
from optsched.errors import InvalidOption
from optsched.sim import ClusterView, Placement, PolicyViolation, simulate

SENS = Sensitivity((1.0, 2.0, 4.0), (10.0, 20.0), ((0.5, 0.6), (0.8, 1.0), (1.0, 1.3)),
                   best_cpu=4.0, best_memory=20.0)


@st.composite
def instances(draw, gpu_memory: bool = False):
    n_nodes = draw(st.integers(1, 3))
    nodes = tuple(Node(f"n{h}", {"a": draw(st.integers(1, 4))}, cpus=12.0, memory=100.0)
                  for h in range(n_nodes))
    cluster = Cluster(nodes)
    jobs = []
    for i in range(draw(st.integers(1, 6))):
        w = draw(st.integers(1, min(4, cluster.total_gpus)))
        jobs.append(Job(f"j{i}", draw(st.sampled_from([0.0, 7.0, 40.0])), w,
                        draw(st.sampled_from([20.0, 100.0, 333.0])),
                        {"a": draw(st.sampled_from([0.5, 1.0, 2.0]))},
                        sensitivity=SENS if draw(st.booleans()) else None,
                        compute_share=draw(st.sampled_from([None, 0.25, 0.5, 1.0]))))
    return Instance(cluster, tuple(jobs), slot=draw(st.sampled_from([5.0, 30.0])))


class RandomPolicy:
    """Random decisions that respect every rule, using the declared capabilities."""

    needs_work = False

    def __init__(self, *, sharing=False, forking=False, resource_sensitive=False,
                 consolidation=0.0, event_driven=False):
        self.sharing, self.forking = sharing, forking
        self.resource_sensitive, self.consolidation = resource_sensitive, consolidation
        self.event_driven = event_driven
        self.name = "random"

    def allocate(self, view: ClusterView) -> list[Placement]:
        rng = view.rng
        free = {n.name: float(n.gpus["a"]) for n in view.cluster.nodes}
        cpu = {n.name: n.cpus for n in view.cluster.nodes}
        mem = {n.name: n.memory for n in view.cluster.nodes}
        out: list[Placement] = []
        for k, j in enumerate(view.jobs):
            if k > 0 and rng.random() < 0.2:  # the first job always gets a try
                continue
            share = float(rng.choice([0.25, 0.5, 1.0])) if self.sharing else 1.0
            pieces = []  # (node, gpus, copy)
            if self.forking:
                cand = [h for h, f in free.items() if f >= share - 1e-12]
                rng.shuffle(cand)
                for c, node in enumerate(cand[:int(rng.integers(1, 4))]):
                    g = int(min(j.workers, math.floor(free[node] / share + 1e-9)))
                    pieces.append((node, int(rng.integers(1, g + 1)), c))
            else:
                need = j.workers
                for node in free:
                    g = min(need, int(math.floor(free[node] / share + 1e-9)))
                    if g > 0:
                        pieces.append((node, g, 0))
                        need -= g
                    if need == 0:
                        break
                if need:
                    continue
            res = self._resources(rng, pieces)
            if not self._fits(pieces, res, cpu, mem):
                if k > 0:
                    continue  # the job waits: its CPU or DRAM does not fit
                # the first job must run (the cluster is empty when it is placed, else
                # the simulation never ends): whole GPUs node by node, the least CPU and
                # DRAM per GPU (at most 4 GPUs, 4 cores and 40 GB per node: always fits)
                share, pieces, need = 1.0, [], j.workers
                for node in free:
                    g = min(need, int(free[node]))
                    if g > 0:  # a forked copy lives on one node
                        pieces.append((node, g, len(pieces) if self.forking else 0))
                        need -= g
                res = [(g * 1.0, g * 10.0) if self.resource_sensitive else (0.0, 0.0)
                       for _, g, _ in pieces]
                assert need == 0 and self._fits(pieces, res, cpu, mem)
            for (node, g, c), (cc, mm) in zip(pieces, res):
                free[node] -= g * share
                cpu[node] -= cc
                mem[node] -= mm
                out.append(Placement(j.id, node, "a", g, cc, mm, c, share))
        return out


    def _resources(self, rng, pieces):
        res = []
        for _node, g, _ in pieces:
            c = m = 0.0
            if self.resource_sensitive:
                c = g * float(rng.choice([1.0, 2.0, 3.0, 5.0]))
                m = g * float(rng.choice([10.0, 15.0, 25.0]))
            res.append((c, m))
        return res

    @staticmethod
    def _fits(pieces, res, cpu, mem) -> bool:
        use_c: dict[str, float] = {}
        use_m: dict[str, float] = {}
        for (node, _, _), (c, m) in zip(pieces, res):
            use_c[node] = use_c.get(node, 0.0) + c
            use_m[node] = use_m.get(node, 0.0) + m
        return all(use_c[h] <= cpu[h] and use_m[h] <= mem[h] for h in use_c)


def _sweep_ok(inst: Instance, allocs) -> None:
    """Independent capacity re-check: shares, CPU and DRAM per node at every start."""
    nodes = {n.name: n for n in inst.cluster.nodes}
    for a in allocs:
        t = a.start
        act = [b for b in allocs if b.node == a.node and b.start <= t < b.end]
        assert sum(b.gpus * b.share for b in act) <= nodes[a.node].gpus["a"] + 1e-9
        assert sum(b.cpus for b in act) <= nodes[a.node].cpus + 1e-9
        assert sum(b.memory for b in act) <= nodes[a.node].memory + 1e-9


def _progress_matches(inst: Instance, res) -> None:
    """Completed jobs did exactly their work by completion - consolidation (validator's
    count); unfinished ones did less."""
    sched = res.schedule
    cut = {j: c - sched.consolidation for j, c in sched.completion.items()}
    done = job_progress(inst, sched, until=cut).done
    for j in inst.jobs:
        if j.id in sched.completion:
            assert done.get(j.id, 0.0) == pytest.approx(j.work, rel=1e-6)
        else:
            assert done.get(j.id, 0.0) < j.work * (1 + 1e-6)


CAPS = [dict(sharing=True), dict(resource_sensitive=True),
        dict(forking=True, consolidation=3.0), dict(sharing=True, event_driven=True),
        dict(sharing=True, forking=True, resource_sensitive=True, consolidation=1.5)]


@settings(max_examples=examples(25))
@given(instances(), st.sampled_from(CAPS), st.integers(0, 3))
def test_random_capability_policies(inst, caps, seed):
    res = simulate(inst, RandomPolicy(**caps), seed=seed, max_time=5000.0)
    sched = res.schedule                                   # finalize validated it
    assert sched.sharing == caps.get("sharing", False)
    assert sched.forking == caps.get("forking", False)
    assert sched.resource_sensitive == caps.get("resource_sensitive", False)
    assert sched.consolidation == caps.get("consolidation", 0.0)
    _sweep_ok(inst, sched.allocations)
    _progress_matches(inst, res)
    if caps.get("consolidation"):
        # nothing held during consolidation: the last allocation ends kappa before
        for j, c in sched.completion.items():
            last = max(a.end for a in sched.allocations if a.job == j)
            assert last == pytest.approx(c - sched.consolidation)


def test_gang_rate_rules():
    job = Job("j", 0.0, 2, 10.0, {"a": 2.0, "b": 1.0}, sensitivity=SENS, compute_share=0.5)
    parts = [Allocation("j", 0, 1, "n", "a", 1, cpus=4.0, memory=40.0, share=0.25),
             Allocation("j", 0, 1, "n", "b", 1, cpus=2.0, memory=20.0, share=0.5)]
    # share factor min(1, 0.25 / 0.5), 2 GPUs, slowest type 1.0
    assert gang_rate(job, parts) == pytest.approx(0.5 * 2 * 1.0)
    # sensitivity: the smaller of T(4, 40) = 1.3 and T(2, 20) = 1.0
    assert gang_rate(job, parts, True) == pytest.approx(0.5 * 2 * 1.0 * 1.0)


def test_forked_copies_add_up_and_consolidation_delays_completion():
    cl = Cluster((Node("x", {"a": 2}), Node("y", {"a": 1})))
    inst = Instance(cl, (Job("j", 0.0, 2, 30.0, {"a": 1.0}),), slot=100.0)

    class Fork:
        name, needs_work, event_driven, forking, consolidation = "fork", False, False, True, 4.0

        def allocate(self, view):
            return [Placement("j", "x", "a", 2, copy=0), Placement("j", "y", "a", 1, copy=1)]

    res = simulate(inst, Fork())
    # 2 + 1 GPUs at 1 it/s each: 30 iterations in 10 s, then 4 s of consolidation
    assert res.schedule.completion["j"] == pytest.approx(14.0)
    assert max(a.end for a in res.schedule.allocations) == pytest.approx(10.0)
    assert {a.copy for a in res.schedule.allocations} == {0, 1}


def test_sharing_progress_and_capacity():
    cl = Cluster((Node("x", {"a": 1}),))
    jobs = (Job("p", 0.0, 1, 10.0, {"a": 1.0}, compute_share=0.5),
            Job("q", 0.0, 1, 10.0, {"a": 1.0}, compute_share=0.5))
    inst = Instance(cl, jobs, slot=100.0)

    class Half:
        name, needs_work, event_driven, sharing = "half", False, True, True

        def allocate(self, view):
            return [Placement(j, "x", "a", 1, share=0.5) for j in view.ids]

    res = simulate(inst, Half())
    # each holds u = 0.5 of the GPU: full speed, both done at 10 s
    assert res.schedule.completion == {"p": pytest.approx(10.0), "q": pytest.approx(10.0)}
    Half.allocate = lambda self, view: [Placement(j, "x", "a", 1, share=0.75) for j in view.ids]
    with pytest.raises(PolicyViolation, match="over-allocation"):
        simulate(inst, Half())


def test_resource_sensitive_speed():
    cl = Cluster((Node("x", {"a": 2}, cpus=8.0, memory=40.0),))
    inst = Instance(cl, (Job("j", 0.0, 2, 26.0, {"a": 1.0}, sensitivity=SENS),), slot=100.0)

    class Rich:
        name, needs_work, event_driven, resource_sensitive = "rich", False, False, True

        def allocate(self, view):
            return [Placement("j", "x", "a", 2, cpus=8.0, memory=40.0)]

    res = simulate(inst, Rich())
    # T(4, 20) = 1.3: 2 GPUs x 1.3 it/s
    assert res.schedule.completion["j"] == pytest.approx(10.0)
    Rich.resource_sensitive = False
    assert simulate(inst, Rich()).schedule.completion["j"] == pytest.approx(13.0)


def _one(policy_attrs, placements, inst=None):
    cl = Cluster((Node("x", {"a": 2}, cpus=4.0, memory=10.0), Node("y", {"a": 2})))
    inst = inst or Instance(cl, (Job("j", 0.0, 2, 10.0, {"a": 1.0}),), slot=10.0)
    P = type("P", (), {"name": "p", "needs_work": False, "event_driven": False,
                       **policy_attrs, "allocate": lambda self, v: placements})
    return simulate(inst, P())


@pytest.mark.parametrize("attrs,placements,match", [
    ({}, [Placement("j", "x", "a", 2, share=0.5)], "share"),
    ({"sharing": True}, [Placement("j", "x", "a", 2, share=1.5)], "share"),
    ({}, [Placement("j", "x", "a", 2, copy=1)], "forking"),
    ({}, [Placement("j", "x", "a", 2, cpus=5.0)], "CPU"),
    ({}, [Placement("j", "x", "a", 2, memory=11.0)], "DRAM"),
    ({}, [Placement("j", "x", "a", 2, cpus=-1.0)], ">= 0"),
    ({"forking": True}, [Placement("j", "x", "a", 1, copy=0),
                         Placement("j", "y", "a", 1, copy=0)], "one node"),
    ({"forking": True}, [Placement("j", "x", "a", 1, copy=0),
                         Placement("j", "x", "a", 1, copy=1)], "share node"),
    ({"forking": True}, [Placement("j", "x", "a", 2, copy=0),
                         Placement("j", "y", "a", 2, copy=0)], "one node"),
    ({}, [Placement("j", "x", "a", 1)], "gang of 2"),
])
def test_capability_violations(attrs, placements, match):
    with pytest.raises(PolicyViolation, match=match):
        _one(attrs, placements)


def test_consolidation_option_checked_and_four_tuples_work():
    with pytest.raises(InvalidOption):
        _one({"consolidation": -1.0}, [("j", "x", "a", 2)])
    res = _one({}, [("j", "x", "a", 2)])
    assert res.schedule.completion["j"] == pytest.approx(5.0)
    assert not (res.schedule.sharing or res.schedule.forking)


def test_view_exposes_profile_data():
    seen = {}
    cl = Cluster((Node("x", {"a": 1}, cpus=4.0, memory=10.0),))
    inst = Instance(cl, (Job("j", 0.0, 1, 1.0, {"a": 1.0}, sensitivity=SENS,
                             compute_share=0.5),), slot=10.0)

    class Look:
        name, needs_work, event_driven = "look", False, False

        def allocate(self, view):
            seen["job"] = view.jobs[0]
            seen["cpus"] = view.cluster.nodes[0].cpus
            return [("j", "x", "a", 1)]

    simulate(inst, Look())
    assert seen["job"].sensitivity is SENS and seen["job"].compute_share == 0.5
    assert seen["job"].remaining is None and seen["cpus"] == 4.0
    assert np.isfinite(seen["job"].arrival)


# ------------------------------------------------------------------ progress rules
class FixedPolicy:
    """Runs every visible job on the same placements each round (one job here)."""

    needs_work = False
    event_driven = False

    def __init__(self, placements, progress_rule=None):
        self.placements, self.name = placements, "fixed"
        if progress_rule is not None:
            self.progress_rule = progress_rule

    def allocate(self, view: ClusterView) -> list[Placement]:
        return [p for p in self.placements if p.job in view.ids]


def _two_types() -> Instance:
    cluster = Cluster((Node("n0", {"fast": 2, "slow": 2}),))
    return Instance(cluster, (Job("j", 0.0, 2, 120.0, {"fast": 3.0, "slow": 1.0}),),
                    slot=10.0)


def test_simulator_credits_the_policys_progress_rule():
    """The same mixed-type gang: 2 x min(3, 1) = 2 it/s by default, 3 + 1 = 4 it/s under
    "additive"; one fast GPU alone (a 1-of-2 gang) only under "partial", at 3 it/s. Each
    schedule validates under its own rule and fails under the default one."""
    from dataclasses import replace

    from optsched import InvalidSchedule, validate_schedule
    from optsched.core.validate import Capabilities

    inst = _two_types()
    mixed = [Placement("j", "n0", "fast", 1), Placement("j", "n0", "slow", 1)]
    gang = simulate(inst, FixedPolicy(mixed), progress=False)
    add = simulate(inst, FixedPolicy(mixed, "additive"), progress=False)
    assert gang.metrics.completion["j"] == pytest.approx(60.0)
    assert add.metrics.completion["j"] == pytest.approx(30.0)
    one = [Placement("j", "n0", "fast", 1)]
    part = simulate(inst, FixedPolicy(one, "partial"), progress=False)
    assert part.metrics.completion["j"] == pytest.approx(40.0)
    assert part.schedule.progress_rule == "partial"
    with pytest.raises(PolicyViolation, match="gang of 2"):
        simulate(inst, FixedPolicy(one), progress=False)
    with pytest.raises(PolicyViolation, match="gang of 2"):
        simulate(inst, FixedPolicy(one, "additive"), progress=False)
    for res in (add, part):
        # the policy's own rule, named by the caller (a schedule's flag licenses nothing)
        with pytest.raises(InvalidSchedule, match="progress_rule"):
            validate_schedule(inst, res.schedule)
        rules = Capabilities(progress_rules=(res.schedule.progress_rule,), source="FixedPolicy")
        validate_schedule(inst, res.schedule, rules)
        with pytest.raises(InvalidSchedule):
            validate_schedule(inst, replace(res.schedule, progress_rule="gang"))
    with pytest.raises(PolicyViolation, match=r"1\.\.2 GPUs"):
        simulate(inst, FixedPolicy([Placement("j", "n0", "fast", 2),
                                    Placement("j", "n0", "slow", 1)], "partial"),
                 progress=False)


def test_unknown_progress_rule_of_a_policy_is_a_typed_error():
    with pytest.raises(InvalidOption, match="progress_rule"):
        simulate(_two_types(), FixedPolicy([Placement("j", "n0", "fast", 2)], "async"),
                 progress=False)


@pytest.mark.parametrize("rule", ["gang", "partial", "additive"])
def test_gang_rate_under_each_progress_rule(rule):
    job = Job("j", 0.0, 3, 1.0, {"fast": 3.0, "slow": 1.0})
    parts = [Allocation("j", 0, 1, "n0", "fast", 2), Allocation("j", 0, 1, "n0", "slow", 1)]
    want = {"gang": 3.0, "partial": 3.0, "additive": 7.0}[rule]
    assert gang_rate(job, parts, rule=rule) == want
    assert gang_rate(job, parts[:1], rule=rule) == 6.0
