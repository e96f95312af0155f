"""Simulator invariants (Hypothesis) and the checks it makes on policy decisions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched import Cluster, Instance, Job, Node, compute_metrics, validate_schedule
from optsched.errors import ModelNotApplicable, OptschedError
from optsched.registry import get_policy
from optsched.sim import ClusterView, Placement, PolicyViolation, simulate

CHEAP_POLICIES = ["tiresias_las", "tiresias_gittins", "fifo_yarn", "srtf", "las_1d",
                  "las_2d_continuous", "fifo", "max_min_fairness",
                  "max_min_fairness_agnostic", "min_total_duration", "max_sum_throughput"]
SAMPLES = np.array([50.0, 120.0, 400.0, 900.0, 3000.0, 8000.0])


def make_policy(name: str):
    if name.startswith("tiresias_gittins"):
        return get_policy(name, gittins_samples=SAMPLES)
    return get_policy(name)


@st.composite
def instances(draw):
    types = draw(st.sampled_from([("a",), ("a", "b")]))
    n_nodes = draw(st.integers(1, 3))
    nodes = []
    for h in range(n_nodes):
        gpus = {t: draw(st.integers(0 if len(types) > 1 else 1, 4)) for t in types}
        if sum(gpus.values()) == 0:
            gpus[types[0]] = 1
        nodes.append(Node(f"n{h}", gpus))
    cluster = Cluster(tuple(nodes))
    per_type = cluster.gpus_per_type
    n_jobs = draw(st.integers(1, 6))
    jobs = []
    for i in range(n_jobs):
        tp = {}
        for t in per_type:
            if draw(st.booleans()) or not tp:
                tp[t] = draw(st.sampled_from([0.5, 1.0, 2.0, 3.0]))
        usable = sum(per_type[t] for t in tp)
        w = draw(st.integers(1, max(1, min(usable, 4))))
        jobs.append(Job(f"j{i}", arrival=draw(st.sampled_from([0.0, 5.0, 30.0, 100.0, 1000.0])),
                        workers=w, work=draw(st.sampled_from([10.0, 55.5, 300.0, 1000.0])),
                        throughput=tp, weight=draw(st.sampled_from([1.0, 2.0]))))
    return Instance(cluster, tuple(jobs), slot=draw(st.sampled_from([10.0, 60.0, 360.0])))


class NoFuture:
    """Wraps a policy; asserts it only ever sees arrived jobs (and work only if allowed)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.needs_work = inner.needs_work
        self.event_driven = inner.event_driven
        self.calls: list[tuple[float, tuple[str, ...]]] = []

    def reset(self):
        self.inner.reset()

    def allocate(self, state: ClusterView):
        for j in state.jobs:
            assert j.arrival <= state.time + 1e-9, (j.id, j.arrival, state.time)
            if not self.needs_work:
                assert j.work is None and j.remaining is None
        self.calls.append((state.time, state.ids))
        return self.inner.allocate(state)


@given(inst=instances(), name=st.sampled_from(CHEAP_POLICIES))
def test_simulator_invariants(inst, name):
    epochs: list[tuple[float, list[Placement]]] = []
    per_type = inst.cluster.gpus_per_type
    if any(j.workers > max(per_type[t] for t in j.throughput) for j in inst.jobs):
        # a gang that fits only across types: these policies run a gang on one type
        with pytest.raises(ModelNotApplicable, match=r"jobs\[\d+\]\.workers"):
            simulate(inst, make_policy(name))
        return
    wrapped = NoFuture(make_policy(name))
    res = simulate(inst, wrapped, seed=3, on_epoch=lambda t, ps: epochs.append((t, list(ps))))
    sched = res.schedule
    # every job finishes and did exactly its work (validator's independent accounting)
    assert set(sched.completion) == {j.id for j in inst.jobs}
    done = validate_schedule(inst, sched).done
    for j in inst.jobs:
        assert done[j.id] == pytest.approx(j.work, rel=1e-6)
        assert sched.completion[j.id] >= j.arrival
    # no decision over-allocates a node/type
    cap = {(n.name, t): c for n in inst.cluster.nodes for t, c in n.gpus.items()}
    for _, ps in epochs:
        used: dict = {}
        for p in ps:
            used[(p.node, p.gpu_type)] = used.get((p.node, p.gpu_type), 0) + p.gpus
        assert all(v <= cap[k] for k, v in used.items())
    # metrics are those recomputed from the validated schedule
    assert res.metrics == compute_metrics(inst, sched)
    assert res.objective == pytest.approx(res.metrics.mean_jct)
    # determinism
    again = simulate(inst, make_policy(name), seed=3)
    assert again.schedule.to_dict() == sched.to_dict()
    assert again.extra["preemptions"] == res.extra["preemptions"]


def one_gpu(jobs, slot=100.0, gpus=1):
    return Instance(Cluster((Node("n0", {"a": gpus}),)), tuple(jobs), slot=slot)


class Fixed:
    """A test policy returning whatever ``fn(state)`` says."""

    def __init__(self, fn, event_driven=False, needs_work=False, name="fixed"):
        self.fn, self.event_driven, self.needs_work, self.name = fn, event_driven, needs_work, name

    def allocate(self, state):
        return self.fn(state)


def test_mid_round_completion_is_exact_and_gpus_idle_until_round_end():
    inst = one_gpu([Job("x", 0.0, 1, 150.0, {"a": 1.0}), Job("y", 0.0, 1, 10.0, {"a": 1.0})])
    first = Fixed(lambda s: [Placement(s.jobs[0].id, "n0", "a", 1)])
    res = simulate(inst, first)
    assert res.schedule.completion["x"] == pytest.approx(150.0)
    # round-based: y starts at the next boundary (200), not at 150
    assert res.schedule.completion["y"] == pytest.approx(210.0)
    ev = Fixed(lambda s: [Placement(s.jobs[0].id, "n0", "a", 1)], event_driven=True)
    res2 = simulate(inst, ev)
    assert res2.schedule.completion["y"] == pytest.approx(160.0)


def test_completion_just_after_a_round_end_at_a_large_time_does_not_overlap_the_next_job():
    # x needs 720.003 s at rate 1: 3 ms past the second round's end, inside the old
    # completion tolerance (1e-9 x t = 4 ms at t = 4e6). It was completed at its finish
    # time while its GPU went to y at the round end: "2 GPUs in use ... capacity 1".
    t0 = 4e6
    inst = one_gpu([Job("x", t0, 1, 720.003, {"a": 1.0}), Job("y", t0, 1, 100.0, {"a": 1.0})],
                   slot=360.0)
    res = simulate(inst, get_policy("fifo"))
    assert res.schedule.completion["x"] == pytest.approx(t0 + 720.003, abs=1e-6)
    assert res.schedule.completion["y"] == pytest.approx(t0 + 1080.0 + 100.0, abs=1e-6)
    ends = {a.job: max(b.end for b in res.schedule.allocations if b.job == a.job)
            for a in res.schedule.allocations}
    starts_y = min(a.start for a in res.schedule.allocations if a.job == "y")
    assert ends["x"] <= starts_y
    # short of its work only by float rounding (a relative 1e-12): done at the round end,
    # its record and its GPU's hand-off both at t0 + 720
    inst = one_gpu([Job("x", t0, 1, 720.0 * (1 + 1e-12), {"a": 1.0}),
                    Job("y", t0, 1, 100.0, {"a": 1.0})], slot=360.0)
    res = simulate(inst, get_policy("fifo"))
    assert res.schedule.completion["x"] == t0 + 720.0
    assert max(a.end for a in res.schedule.allocations if a.job == "x") == t0 + 720.0
    assert res.schedule.completion["y"] == pytest.approx(t0 + 820.0, abs=1e-6)


def test_event_driven_sees_arrivals_at_once_round_based_at_boundary():
    inst = one_gpu([Job("x", 0.0, 1, 1000.0, {"a": 1.0}), Job("y", 30.0, 1, 10.0, {"a": 1.0})],
                   slot=100.0, gpus=2)
    times = []

    def run_all(s):
        times.append(s.time)
        return [Placement(j.id, "n0", "a", 1) for j in s.jobs]

    simulate(inst, Fixed(run_all, event_driven=True))
    assert 30.0 in times
    times.clear()
    res = simulate(inst, Fixed(run_all))
    assert 30.0 not in times and res.schedule.completion["y"] == pytest.approx(110.0)


def test_idle_time_is_jumped_over():
    inst = one_gpu([Job("x", 0.0, 1, 10.0, {"a": 1.0}), Job("y", 1e7, 1, 10.0, {"a": 1.0})],
                   slot=1.0)
    res = simulate(inst, get_policy("fifo"))
    assert res.extra["epochs"] <= 30
    assert res.schedule.completion["y"] == pytest.approx(1e7 + 10.0)


def test_gang_spread_over_types_runs_at_slowest_rate():
    inst = Instance(Cluster((Node("n0", {"a": 1, "b": 1}),)),
                    (Job("x", 0.0, 2, 100.0, {"a": 1.0, "b": 4.0}),), slot=1000.0)
    pol = Fixed(lambda s: [Placement("x", "n0", "a", 1), Placement("x", "n0", "b", 1)])
    res = simulate(inst, pol)
    assert res.schedule.completion["x"] == pytest.approx(50.0)  # 2 workers x 1 it/s


def test_preemptions_are_counted():
    inst = one_gpu([Job("x", 0.0, 1, 300.0, {"a": 1.0}), Job("y", 0.0, 1, 300.0, {"a": 1.0})])

    def alternate(s):
        k = int(s.time // 100) % len(s.jobs)
        return [Placement(s.jobs[k].id, "n0", "a", 1)]

    res = simulate(inst, Fixed(alternate))
    assert res.extra["total_preemptions"] >= 3
    assert res.metrics.n_completed == 2


@pytest.mark.parametrize("bad, msg", [
    (lambda s: [Placement(j.id, "n0", "a", 1) for j in s.jobs] * 3, "over-allocation"),
    (lambda s: [Placement(s.jobs[0].id, "n0", "a", 2)], "gang"),
    (lambda s: [Placement("late", "n0", "a", 1)], "not arrived"),
    (lambda s: [Placement(s.jobs[0].id, "nope", "a", 1)], "no GPU"),
    (lambda s: [Placement(s.jobs[0].id, "n0", "a", 0)], "positive integer"),
    (lambda s: [], "never end"),
])
def test_bad_decisions_raise_typed_error_naming_policy(bad, msg):
    inst = one_gpu([Job("x", 0.0, 1, 50.0, {"a": 1.0}), Job("late", 1e6, 1, 5.0, {"a": 1.0})],
                   gpus=2)
    pol = Fixed(bad, name="evil")
    if msg == "never end":
        inst = one_gpu([Job("x", 0.0, 1, 50.0, {"a": 1.0})])
    with pytest.raises(PolicyViolation, match=msg) as e:
        simulate(inst, pol)
    assert e.value.policy == "evil" and isinstance(e.value, OptschedError)


def test_remaining_work_hidden_from_non_clairvoyant_policy():
    inst = one_gpu([Job("x", 0.0, 1, 50.0, {"a": 1.0})])

    def peek(s):
        return [Placement(s.jobs[0].id, "n0", "a", 1)] if s.remaining.size else []

    with pytest.raises(PolicyViolation, match="needs_work"):
        simulate(inst, Fixed(peek, name="peeker"))
    res = simulate(inst, Fixed(peek, needs_work=True))
    assert res.metrics.n_completed == 1


def test_view_shows_each_job_its_user():
    """A per-user rule (AlloX's fairness filter) reads the user from the view."""
    inst = one_gpu([Job("x", 0.0, 1, 50.0, {"a": 1.0}, user="alice"),
                    Job("y", 0.0, 1, 50.0, {"a": 1.0})])
    seen: dict[str, str | None] = {}

    def record(s):
        seen.update({j.id: j.user for j in s.jobs})
        return [Placement(s.jobs[0].id, "n0", "a", 1)]

    simulate(inst, Fixed(record, event_driven=True))
    assert seen == {"x": "alice", "y": None}


def test_finishes_within_tolerance_free_their_gpus_at_the_epoch_end():
    """Two jobs finishing a rounding error apart end one epoch; the GPU of the later one
    is re-assigned at that epoch's end, so its interval must end there too."""
    inst = one_gpu([Job("x", 0.0, 1, 35.0, {"a": 1.0}),
                    Job("y", 0.0, 1, 35.0 - 1e-12, {"a": 1.0}),
                    Job("z", 0.0, 1, 10.0, {"a": 1.0})], gpus=2)
    two = Fixed(lambda s: [Placement(j.id, "n0", "a", 1) for j in s.jobs[:2]],
                event_driven=True)
    res = simulate(inst, two)   # validated: no GPU held twice
    x = next(a for a in res.schedule.allocations if a.job == "x")
    z = next(a for a in res.schedule.allocations if a.job == "z")
    assert x.end == z.start == res.schedule.completion["x"]
    assert res.schedule.completion["x"] == pytest.approx(35.0, abs=1e-9)


def test_max_time_leaves_jobs_unfinished():
    inst = one_gpu([Job("x", 0.0, 1, 5000.0, {"a": 1.0})])
    res = simulate(inst, get_policy("fifo"), max_time=1000.0)
    assert res.extra["unfinished"] == ["x"]
    assert math.isclose(res.schedule.end, 1000.0)


def test_progress_bar_forced_does_not_break(capsys):
    inst = one_gpu([Job("x", 0.0, 1, 50.0, {"a": 1.0})])
    res = simulate(inst, get_policy("fifo"), progress=True)
    assert res.metrics.n_completed == 1


def test_catalog_traces_run_with_each_policy_family():
    from optsched.catalog import generate_philly, read_tiresias_trace

    tir = read_tiresias_trace()
    for name in ("tiresias_las", "fifo_yarn"):
        r = simulate(tir, get_policy(name))
        assert r.metrics.n_completed == tir.n_jobs
    gen = generate_philly(25, cluster="gavel-108", seed=2)
    r = simulate(gen, get_policy("max_min_fairness"))
    assert r.metrics.n_completed == gen.n_jobs


@pytest.mark.parametrize("again", [True, 1.0])
def test_a_repeated_decision_is_checked_again_unless_identical_in_type(again):
    # the second decision equals the first as values (True == 1 == 1.0) but not as a
    # placement: it must be checked, and refused, not taken for the first one
    inst = one_gpu([Job("x", 0.0, 1, 500.0, {"a": 1.0})])
    calls = []

    def decide(s):
        calls.append(s.time)
        return [Placement("x", "n0", "a", 1 if len(calls) == 1 else again)]

    with pytest.raises(PolicyViolation, match="positive integer"):
        simulate(inst, Fixed(decide))


def test_a_reordered_decision_runs_as_the_same_decision():
    inst = one_gpu([Job("x", 0.0, 1, 250.0, {"a": 1.0}), Job("y", 0.0, 1, 250.0, {"a": 1.0})],
                   gpus=2)
    flip = Fixed(lambda s: [Placement(j.id, "n0", "a", 1) for j in
                            (s.jobs if int(s.time // 100) % 2 else s.jobs[::-1])])
    res = simulate(inst, flip)
    assert res.schedule.completion == {"x": pytest.approx(250.0), "y": pytest.approx(250.0)}
    assert res.extra["total_preemptions"] == 0 and res.extra["total_migrations"] == 0
    assert len(res.schedule.allocations) == 2  # one interval per job, never split
