"""The decision check through what changed (``DecisionChecker._check_changes``) against
the full check: for every decision, a checker that saw the previous decisions returns
the same gangs, or raises the same :class:`PolicyViolation` (same message), as a fresh
checker that checks the decision alone, placement by placement."""

from __future__ import annotations

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.sim import Placement, PolicyViolation
from optsched.sim.decisions import Caps, DecisionChecker

NODES = (Node("n0", {"a": 4}, cpus=8.0, memory=64.0),
         Node("n1", {"a": 4, "b": 2}, cpus=8.0, memory=64.0),
         Node("n2", {"b": 2}, cpus=4.0, memory=32.0))
INST = Instance(Cluster(NODES),
                tuple(Job(f"j{i}", 0.0, w, 100.0, {"a": 1.0, "b": 2.0})
                      for i, w in enumerate((1, 2, 4, 1, 2, 1, 3, 2))), slot=60.0)
ALL = set(range(INST.n_jobs))


def P(job, node, typ, gpus, cpus=0.0, memory=0.0, copy=0, share=1.0):
    return Placement(job, node, typ, gpus, cpus, memory, copy, share)


def outcome(checker: DecisionChecker, decision: list, active: set[int]):
    """The gangs as placements (ids differ between checkers), or the violation's text."""
    try:
        gangs = checker.check(0.0, decision, active)
    except PolicyViolation as e:
        return "violation", str(e)
    pl = checker.placement
    return "gangs", {i: {c: [pl[p] for p in ids] for c, ids in copies.items()}
                     for i, copies in gangs.items()}


PLAIN = Caps()


def fresh(decision: list, active: set[int], caps: Caps = PLAIN):
    """The full check of ``decision`` alone (a checker that saw nothing before)."""
    return outcome(DecisionChecker.for_instance("p", INST, caps), decision, active)


BASE = [P("j0", "n0", "a", 1), P("j1", "n0", "a", 2), P("j2", "n1", "a", 4),
        P("j4", "n1", "b", 2)]


def after_base(decision: list, active: set[int] = ALL, caps: Caps = PLAIN):
    """``decision`` checked right after ``BASE`` (so through its changes), and alone."""
    checker = DecisionChecker.for_instance("p", INST, caps)
    assert outcome(checker, BASE, ALL)[0] == "gangs"
    assert checker._last is not None  # the next check may start from this one
    return outcome(checker, decision, active), fresh(decision, active, caps)


def test_a_new_placement_over_capacity_raises_the_full_checks_error():
    got, want = after_base(BASE + [P("j3", "n0", "a", 1), P("j5", "n0", "a", 1)])
    assert want[0] == "violation" and "over-allocation: 5 GPUs of type 'a' on node 'n0'" \
        in want[1]
    assert got == want


def test_an_earlier_placement_error_is_reported_before_a_later_overload():
    # the overload is new (j3 on n0); the full check meets j7's wrong width only after
    decision = [P("j3", "n0", "a", 2)] + BASE + [P("j7", "n2", "b", 1)]
    got, want = after_base(decision)
    assert want[0] == "violation" and "over-allocation" in want[1]
    assert got == want


def test_a_changed_placement_on_a_full_node_raises_the_full_checks_error():
    moved = [P("j0", "n1", "a", 1)] + BASE[1:]  # j0 moves onto n1, which j2 fills
    got, want = after_base(moved)
    assert want[0] == "violation" and "node 'n1'" in want[1]
    assert got == want


def test_a_duplicate_is_merged_or_refused_as_by_the_full_check():
    # j1 (2 workers) as two 1-GPU placements on n0 that the full check merges
    split = [BASE[0], P("j1", "n0", "a", 1), P("j1", "n0", "a", 1)] + BASE[2:]
    got, want = after_base(split)
    assert want[0] == "gangs" and want[1][1] == {0: [P("j1", "n0", "a", 2)]}
    assert got == want
    # the same placement twice makes j0 two GPUs wide
    twice = BASE + [BASE[0]]
    got, want = after_base(twice)
    assert want[0] == "violation" and "j0" in want[1]
    assert got == want


def test_a_finished_job_left_in_the_decision_raises_the_full_checks_error():
    got, want = after_base(BASE, active=ALL - {1})
    assert want == ("violation", "policy 'p' at t=0: job 'j1' has not arrived or is "
                    "finished")
    assert got == want
    # without it, the decision passes through its changes
    got, want = after_base([p for p in BASE if p.job != "j1"], active=ALL - {1})
    assert want[0] == "gangs" and got == want


def test_a_wrong_width_and_a_non_placement_raise_the_full_checks_error():
    for decision in (BASE[:-1] + [P("j4", "n1", "b", 1)],
                     BASE + [("j3", "n2")],
                     BASE + [P("j3", "n2", "a", 1)],
                     BASE + [P("j3", "n2", "b", True)],
                     BASE + [P("j3", "n2", "b", 1.0)]):
        got, want = after_base(decision)
        assert want[0] == "violation"
        assert got == want, decision


def test_a_change_takes_the_incremental_path_and_keeps_unchanged_gangs():
    checker = DecisionChecker.for_instance("p", INST)
    first = checker.check(0.0, BASE, ALL)
    second = checker.check(1.0, BASE[:-1] + [P("j5", "n2", "b", 1)], ALL)
    assert checker.changed_jobs == {4, 5}  # checked through the change
    for i in (0, 1, 2):
        assert second[i] is first[i]  # the unchanged gangs are the same objects
    assert list(second) == [0, 1, 2, 5]


def _random_decision(rng, caps: Caps) -> list:
    """A random decision near the rules: some break them (capacity, width, resources)."""
    out = []
    for job in INST.jobs:
        if rng.random() < 0.4:
            continue
        w = int(job.workers) + (rng.random() < 0.05)
        node = NODES[int(rng.integers(len(NODES)))]
        typ = sorted(node.gpus)[int(rng.integers(len(node.gpus)))]
        share = float(rng.choice([0.5, 1.0])) if caps.sharing else 1.0
        cpus = float(rng.choice([0.0, 1.5, 3.0])) if caps.resource_sensitive else 0.0
        if w > 1 and rng.random() < 0.3:  # split over two placements
            out.append(P(job.id, node.name, typ, 1, cpus, 0.0, 0, share))
            out.append(P(job.id, node.name, typ, w - 1, cpus, 0.0, 0, share))
        else:
            out.append(P(job.id, node.name, typ, w, cpus, 0.0, 0, share))
    rng.shuffle(out)
    return out


@pytest.mark.parametrize("caps", [Caps(), Caps(sharing=True), Caps(resource_sensitive=True)],
                         ids=["plain", "sharing", "resources"])
def test_random_decision_sequences_match_the_full_check(caps):
    rng = np.random.default_rng(7)
    checker = DecisionChecker.for_instance("p", INST, caps)
    decision = _random_decision(rng, caps)
    kinds = set()
    for step in range(400):
        if rng.random() < 0.3:
            decision = _random_decision(rng, caps)
        else:  # change one job's placements, keep the others (often the same objects)
            k = int(rng.integers(INST.n_jobs))
            decision = [p for p in decision if p.job != f"j{k}"] + \
                [p for p in _random_decision(rng, caps) if p.job == f"j{k}"]
        active = {i for i in ALL if rng.random() < 0.97}
        remembered = checker._last is not None
        got = outcome(checker, decision, active)
        want = fresh(decision, active, caps)
        assert got == want, (step, decision)
        kinds.add((got[0], remembered, checker.changed_jobs is not None))
    # both paths were taken: changes checked alone, and violations met through them
    assert ("gangs", True, True) in kinds and ("violation", True, False) in kinds


# ---------------------------------------------------------------- whole simulations
def _record(res) -> tuple:
    x = res.extra
    return (res.schedule.completion, res.schedule.allocations, x["preemptions"],
            x["migrations"], x["epochs"], x["queued_jobs"], x["queue_seconds"],
            x["max_queue"])


def _philly_contended():
    """Philly's first 60 jobs at 20x arrivals on 4 nodes of 4 P100: multi-node gangs,
    preemptions, a queue (cut at 2e5 s)."""
    from optsched import catalog
    from optsched.core.instance import Cluster, Node

    cl = Cluster(tuple(Node(f"n{i}", {"p100": 4}) for i in range(4)))
    return catalog.read_philly_trace(jobs=60, load=20.0, cluster=cl), 2e5


def _gavel_prefix():
    """Gavel's trace, first 40 jobs on gavel-108: completions, migrations, and
    co-located pairs at Gavel's measured rates under its packed policies."""
    from optsched import catalog

    inst = catalog.shipped_trace("gavel-philly-2000")
    return inst.replace(jobs=inst.jobs[:40]), None


@pytest.mark.parametrize("case,policy", [
    (_philly_contended, "tiresias.las"), (_philly_contended, "gavel.max_min_fairness_agnostic"),
    (_gavel_prefix, "tiresias.las"), (_gavel_prefix, "gavel.max_min_fairness_packed"),
    (_gavel_prefix, "gavel.gandiva")],
    ids=["philly-las", "philly-gavel", "gavel-las", "gavel-packed", "gavel-gandiva"])
def test_a_simulation_checked_through_changes_is_the_one_checked_in_full(case, policy,
                                                                         monkeypatch):
    """The run whose decisions are checked through their changes, with epochs derived
    from the previous one, records exactly what the run checking every decision in full
    and building every epoch afresh records (schedule, completions, preemptions,
    migrations, queueing)."""
    from optsched.registry import simulate

    inst, max_time = case()
    derived = []
    real = DecisionChecker._check_changes

    def spy(self, t, placements, active, known=None, gone=None):
        out = real(self, t, placements, active, known, gone)
        derived.append(out is not None)
        return out

    monkeypatch.setattr(DecisionChecker, "_check_changes", spy)
    fast = simulate(inst, policy, bounds=False, max_time=max_time)
    assert sum(derived) > 10  # the incremental path was taken
    monkeypatch.setattr(DecisionChecker, "_check_changes", lambda *a: None)
    full = simulate(inst, policy, bounds=False, max_time=max_time)
    assert _record(fast) == _record(full)
    assert fast.extra["total_preemptions"] > 0
    if "packed" in policy or "gandiva" in policy:  # co-located pairs went through it
        assert any(a.partner is not None for a in fast.schedule.allocations)
