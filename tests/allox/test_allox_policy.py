"""AlloX's simulator policies (``allox.online``, ``allox.sjf``, ``allox.sjf_fastest``,
``allox.jsq``): each rule on the demo through the registry, the options each declares
and refuses, what ``alpha`` and ``max_jobs`` change, feasibility on traces with
staggered arrivals, and, on small instances (Hypothesis), every rule's total JCT against
the exact optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest
from allox_cases import make
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

import optsched
import optsched.allox.policy as allox_policy
from optsched import Cluster, Instance, InvalidOption, Job, ModelNotApplicable, Node
from optsched.allox import AlloXPolicy, exact, machines_of, online, talk_instance
from optsched.registry import get_policy, policy_spec

RULES = ("online", "sjf", "sjf_fastest", "jsq")


def total_jct(inst: Instance, res) -> float:
    return sum(c - inst.job(j).arrival for j, c in res.schedule.completion.items())


@pytest.fixture(scope="module")
def demo():
    return optsched.get_model("allox").demo_instance()


@pytest.fixture(scope="module")
def demo_opt(demo):
    return exact(demo).objective


# ------------------------------------------------------------------ each rule on the demo
@pytest.mark.parametrize("rule", RULES)
def test_each_rule_on_the_demo_through_the_registry(rule, demo, demo_opt):
    res = optsched.simulate(demo, f"allox.{rule}")
    assert res.metrics.n_completed == demo.n_jobs
    assert res.extra["rule"] == rule and res.extra["decisions"] > 0
    assert res.extra["total_preemptions"] == 0 and res.extra["total_migrations"] == 0
    total = total_jct(demo, res)
    # the heuristic of the same name is this simulation, reported as total JCT
    assert getattr(optsched.allox, rule)(demo).objective == pytest.approx(total, rel=1e-12)
    assert total >= demo_opt * (1 - 1e-9)
    if rule == "online":   # every job queued at 0, alpha 1, no cap: the exact optimum
        assert total == pytest.approx(demo_opt, rel=1e-9)
        assert res.extra["solves"] >= res.extra["decisions"]
    else:
        assert total > demo_opt * 1.01


def test_demo_ranking_matches_the_pinned_figures(demo, demo_opt):
    """online = exact < sjf_fastest < sjf < jsq on the demo (ratios 1, 1.064, 2.520,
    8.337, as docs/allox.md prints them)."""
    ratio = {r: total_jct(demo, optsched.simulate(demo, f"allox.{r}")) / demo_opt
             for r in RULES}
    assert ratio["online"] == pytest.approx(1.0, abs=1e-9)
    assert round(ratio["sjf_fastest"], 3) == 1.064
    assert round(ratio["sjf"], 3) == 2.520
    assert round(ratio["jsq"], 3) == 8.337


# ------------------------------------------------------------------ options
def test_declared_options():
    assert policy_spec("allox.online").options == {"alpha", "max_jobs", "replan"}
    for rule in ("sjf", "sjf_fastest", "jsq"):
        assert policy_spec(f"allox.{rule}").options == set()


@pytest.mark.parametrize("policy,options,field", [
    ("allox.sjf", {"alpha": 0.5}, "alpha"),
    ("allox.jsq", {"max_jobs": 3}, "max_jobs"),
    ("allox.sjf_fastest", {"alpha": 1.0}, "alpha"),
    ("allox.online", {"alfa": 0.5}, "alfa"),
    ("allox.online", {"rule": "sjf"}, "rule"),      # fixed by the name
    ("allox.online", {"alpha": 0}, "alpha"),
    ("allox.online", {"alpha": 1.5}, "alpha"),
    ("allox.online", {"alpha": -0.1}, "alpha"),
    ("allox.online", {"alpha": math.nan}, "alpha"),
    ("allox.online", {"alpha": True}, "alpha"),
    ("allox.online", {"alpha": "0.5"}, "alpha"),
    ("allox.online", {"max_jobs": 0}, "max_jobs"),
    ("allox.online", {"max_jobs": 2.5}, "max_jobs"),
    ("allox.online", {"max_jobs": True}, "max_jobs"),
])
def test_bad_options_raise_naming_the_option(policy, options, field):
    with pytest.raises(InvalidOption) as err:
        get_policy(policy, **options)
    assert err.value.path == field


def test_policy_object_refuses_options_of_another_rule():
    with pytest.raises(InvalidOption, match="only the online rule"):
        AlloXPolicy("sjf", alpha=0.5)
    with pytest.raises(InvalidOption, match="only the online rule"):
        AlloXPolicy("jsq", max_jobs=2)
    with pytest.raises(InvalidOption, match="rule"):
        AlloXPolicy("fifo")
    with pytest.raises(InvalidOption, match="alpha"):
        online(talk_instance(), alpha=2.0)


def test_gang_jobs_are_refused_naming_the_field():
    cl = Cluster((Node("n", {"v100": 4}),))
    inst = Instance(cl, (Job("a", 0, 1, 10, {"v100": 1}), Job("b", 0, 2, 10, {"v100": 1})))
    for rule in RULES:
        with pytest.raises(ModelNotApplicable) as err:
            optsched.simulate(inst, f"allox.{rule}")
        assert err.value.path == "jobs[1].workers"


# ------------------------------------------------------------------ alpha and max_jobs
def fairness_instance() -> Instance:
    """docs/allox.md's example: alice queues six short jobs at 0 on two GPUs, bob one
    30 s job at 1 s."""
    cl = Cluster((Node("g1", {"v100": 1}), Node("g2", {"v100": 1})))
    jobs = [Job(f"alice{i}", 0.0, 1, float(w), {"v100": 1.0}, user="alice")
            for i, w in enumerate((8, 9, 10, 11, 12, 13))]
    jobs.append(Job("bob", 1.0, 1, 30.0, {"v100": 1.0}, user="bob"))
    return Instance(cl, tuple(jobs))


def test_alpha_lets_the_user_without_progress_in():
    inst = fairness_instance()
    pure = optsched.simulate(inst, "allox.online")
    fair = optsched.simulate(inst, "allox.online", alpha=0.5)
    # alpha = 1: the matching is pure total JCT, so bob's long job waits for every short
    # one (starts at 30, ends at 60)
    assert total_jct(inst, pure) == pytest.approx(177.0)
    assert pure.schedule.completion["bob"] == pytest.approx(60.0)
    # alpha = 0.5: at alice's first release (t = 8) alice is running a job and bob is
    # not, so only bob's job enters the matching: it starts at 8
    assert total_jct(inst, fair) == pytest.approx(196.0)
    assert fair.schedule.completion["bob"] == pytest.approx(38.0)


def test_alpha_filters_the_matching_to_the_least_served_users(monkeypatch):
    """Every matching holds the jobs of ceil(alpha U') users, U' the users with queued
    jobs (the filter widens only when nothing could start)."""
    seen = []
    real = allox_policy.match

    def spy(p, omega, arrival, *a, **kw):
        seen.append(p.shape[1])
        return real(p, omega, arrival, *a, **kw)

    monkeypatch.setattr(allox_policy, "match", spy)
    # four users with one job each on one machine: alpha 0.25 puts one job in each
    # matching, alpha 1 all that are queued
    inst = make([[5.0], [4.0], [3.0], [2.0]], ["v100"], users=["a", "b", "c", "d"])
    optsched.simulate(inst, "allox.online", alpha=0.25)
    assert seen and max(seen) == 1
    seen.clear()
    optsched.simulate(inst, "allox.online", alpha=0.5)
    assert seen[0] == 2
    seen.clear()
    optsched.simulate(inst, "allox.online")
    assert seen[0] == 4


def test_max_jobs_caps_every_matching(monkeypatch, demo):
    seen = []
    real = allox_policy.match

    def spy(p, omega, arrival, *a, **kw):
        seen.append(p.shape[1])
        return real(p, omega, arrival, *a, **kw)

    monkeypatch.setattr(allox_policy, "match", spy)
    res = optsched.simulate(demo, "allox.online", max_jobs=4)
    assert res.metrics.n_completed == demo.n_jobs
    assert max(seen) == 4 and res.extra["max_jobs"] == 4


def test_max_jobs_changes_the_answer_on_the_talk_example():
    """A cap of 2 keeps the talk's jobs J3 and J4 (long on Y) out of the first matching
    with J1 and J2 (short on X): J1 and J2 take X, J3 and J4 follow there (90 s) instead
    of the optimum's 85 s."""
    inst = talk_instance()
    assert online(inst).objective == pytest.approx(85.0)
    capped = optsched.simulate(inst, "allox.online", max_jobs=2)
    assert total_jct(inst, capped) == pytest.approx(90.0)
    assert {a.node for a in capped.schedule.allocations} == {"x1", "x2"}


# ------------------------------------------------------------------ traces
@pytest.mark.parametrize("trace", ["gavel-philly-2000", "tiresias-60", "gavel-artifact-15"])
@pytest.mark.parametrize("rule", RULES)
def test_single_worker_jobs_of_shipped_traces(trace, rule):
    """The single-worker jobs of each shipped trace (its own cluster and arrivals): every
    job completes, runs once without preemption for exactly its processing time on the
    machine's type, never before it arrives."""
    from optsched.catalog import shipped_trace

    full = shipped_trace(trace)
    inst = full.replace(jobs=tuple(j for j in full.jobs if j.workers == 1)[:12])
    res = optsched.simulate(inst, f"allox.{rule}")
    assert res.metrics.n_completed == inst.n_jobs
    assert len(res.schedule.allocations) == inst.n_jobs
    for a in res.schedule.allocations:
        job = inst.job(a.job)
        assert a.start >= job.arrival - 1e-9
        assert a.end - a.start == pytest.approx(job.work / job.rate(a.gpu_type), rel=1e-9)
    if len(set(inst.arrivals)) == 1:   # gavel-artifact-15: all at 0
        opt = exact(inst).objective
        assert total_jct(inst, res) >= opt * (1 - 1e-9)
        if rule == "online":
            assert total_jct(inst, res) == pytest.approx(opt, rel=1e-9)


# ------------------------------------------------------------------ exact vs every rule
@st.composite
def small_instances(draw, staggered: bool):
    """1-7 jobs on 1-4 machines of up to 3 types, integer processing times (some types
    forbidden), up to 3 users; arrivals all at one instant or integers in [0, 30]."""
    n = draw(st.integers(1, 7))
    machines = draw(st.lists(st.sampled_from(["k80", "p100", "v100"]), min_size=1,
                             max_size=4))
    nt = len(set(machines))
    rows = []
    for _ in range(n):
        row = draw(st.lists(st.one_of(st.integers(1, 30).map(float), st.just(math.inf)),
                            min_size=nt, max_size=nt))
        if all(math.isinf(x) for x in row):
            row[0] = float(draw(st.integers(1, 30)))
        rows.append(row)
    if staggered:
        arrivals = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    else:
        arrivals = [draw(st.integers(0, 100))] * n
    users = draw(st.lists(st.sampled_from(["u0", "u1", "u2"]), min_size=n, max_size=n))
    return make(rows, machines, arrivals=arrivals, users=users)


options = st.tuples(st.sampled_from([1.0, 0.5, 0.3, 0.1]),
                    st.sampled_from([None, 1, 2, 3]))


@settings(max_examples=examples(40))
@given(small_instances(staggered=False), options)
def test_no_rule_beats_exact_and_online_equals_it(inst, opts):
    opt = exact(inst).objective
    for rule in RULES:
        res = optsched.simulate(inst, f"allox.{rule}")
        assert total_jct(inst, res) >= opt * (1 - 1e-9) - 1e-9, rule
    # alpha 1, no cap: the exact optimum, whatever the users
    pure = optsched.simulate(inst, "allox.online")
    assert total_jct(inst, pure) == pytest.approx(opt, rel=1e-9, abs=1e-9)
    alpha, cap = opts
    res = optsched.simulate(inst, "allox.online", alpha=alpha, max_jobs=cap)
    assert total_jct(inst, res) >= opt * (1 - 1e-9) - 1e-9


@settings(max_examples=examples(40))
@given(small_instances(staggered=True), options)
def test_every_rule_is_feasible_and_non_preemptive_with_arrivals(inst, opts):
    """With release dates no optimum is computed; every job runs once, whole, on a type
    it can use, from no earlier than its arrival. ``sjf`` is work-conserving: no machine
    idles while a job it can run waits."""
    p = machines_of(inst).p   # make(): machine m is node f"m{m}"
    alpha, cap = opts
    for rule, kw in [(r, {}) for r in RULES] + [("online", {"alpha": alpha,
                                                            "max_jobs": cap})]:
        res = optsched.simulate(inst, f"allox.{rule}", **kw)
        allocs = res.schedule.allocations
        assert sorted(a.job for a in allocs) == sorted(j.id for j in inst.jobs)
        for a in allocs:
            job = inst.job(a.job)
            assert a.start >= job.arrival - 1e-9
            assert a.end - a.start == pytest.approx(job.work / job.rate(a.gpu_type),
                                                    rel=1e-9)
        if rule != "sjf":
            continue
        busy = {m: sorted((a.start, a.end) for a in allocs if a.node == f"m{m}")
                for m in range(p.shape[0])}
        for a in allocs:
            j = inst.job_index[a.job]
            wait = (inst.jobs[j].arrival, a.start)
            for m in np.flatnonzero(np.isfinite(p[:, j])):
                t = wait[0]   # [arrival, start) must be covered by m's busy intervals
                for s, e in busy[m]:
                    if s <= t + 1e-9 and e > t:
                        t = e
                assert t >= wait[1] - 1e-9, (a.job, int(m), wait, busy[m])
