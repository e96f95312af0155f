"""Certified lower bounds (optsched.sim.bounds): each bound is at most the exact slotted
optimum, at most what any simulated policy achieves, and the LP certificates hold
whatever duals they are given."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import examples
from test_sim_capabilities import CAPS, RandomPolicy
from test_sim_capabilities import instances as capability_instances

import optsched
from optsched import Cluster, Instance, Job, Node
from optsched.catalog import shipped_trace
from optsched.errors import InvalidInput, InvalidOption, ModelNotApplicable
from optsched.sim import simulate
from optsched.sim.bounds import (
    METHODS,
    Setting,
    _data,
    _grid,
    _interval_lp,
    certified_lp_bound,
    lower_bounds,
)
from optsched.solvers import solve_program

REL = 1e-9


def _le(bound: float, value: float) -> bool:
    return bound <= value * (1 + REL) + 1e-6


def _inst(jobs, gpus=(("a", 2),), slot=10.0) -> Instance:
    nodes = tuple(Node(f"n{i}", {t: c}) for i, (t, c) in enumerate(gpus))
    return Instance(Cluster(nodes), tuple(jobs), slot=slot)


def test_per_job_and_pooled_by_hand():
    # two 1-GPU jobs of 100 s alone, both at t=0, on one GPU: optimum C = 100, 200
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0}), Job("b", 0.0, 1, 100.0, {"a": 1.0})],
                 gpus=(("a", 1),))
    b = lower_bounds(inst, methods=("per_job", "pooled"))
    assert b.by_method["per_job"]["total_completion"] == pytest.approx(200.0)
    # pooled machine of speed 1: mu = 50, 150; + p/2 = 50 each -> 300 = the optimum
    assert b.by_method["pooled"]["total_completion"] == pytest.approx(300.0)
    assert b.mean_jct == pytest.approx(150.0) and b.source["mean_jct"] == "pooled"
    assert b.makespan == pytest.approx(200.0)


def test_pooled_speed_counts_slow_types_at_their_worth():
    # type b runs every job at a quarter of type a's rate: the pool has 1 + 1/4 GPUs
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0, "b": 0.25})], gpus=(("a", 1), ("b", 1)))
    b = lower_bounds(inst, methods=("pooled",))
    assert b.extra["pooled_speed"] == pytest.approx(1.25)


def test_makespan_counts_from_the_first_arrival():
    inst = _inst([Job("a", 50.0, 1, 100.0, {"a": 1.0}), Job("b", 80.0, 2, 100.0, {"a": 1.0})])
    b = lower_bounds(inst)
    # a alone ends at 150 at the earliest (and so do both jobs' 200 GPU-seconds on 2
    # GPUs from t = 50): the metrics' makespan, from the first arrival, is >= 100
    assert b.makespan == pytest.approx(100.0)


@settings(max_examples=examples(40), deadline=None)
@given(capability_instances(), st.sampled_from(CAPS), st.integers(0, 3))
def test_bounds_below_random_policies_of_every_capability(inst, caps, seed):
    policy = RandomPolicy(**caps)
    res = simulate(inst, policy, seed=seed, max_time=5000.0)
    m = res.metrics
    assume(m.n_completed == m.n_jobs)
    b = lower_bounds(inst, Setting.of(policy))
    assert _le(b.mean_jct, m.mean_jct)
    assert _le(b.makespan, m.makespan)
    for method, v in b.by_method.items():
        if v["total_completion"] is not None:
            total = sum(m.completion.values())
            assert _le(v["total_completion"], total), method


@st.composite
def small_instances(draw):
    two = draw(st.booleans())
    gpus = (("a", draw(st.integers(1, 3))),) + ((("b", draw(st.integers(1, 2))),) if two else ())
    jobs = []
    for i in range(draw(st.integers(1, 5))):
        rate = {"a": draw(st.sampled_from([0.5, 1.0, 2.0]))}
        if two:
            rate["b"] = rate["a"] if draw(st.booleans()) else draw(st.sampled_from([0.25, 1.0]))
        w = draw(st.integers(1, gpus[0][1]))
        jobs.append(Job(f"j{i}", draw(st.sampled_from([0.0, 10.0, 25.0])), w,
                        draw(st.sampled_from([10.0, 30.0, 60.0])), rate))
    return _inst(jobs, gpus=gpus)


@settings(max_examples=examples(50), deadline=None)
@given(small_instances())
def test_bounds_below_the_exact_slotted_optimum(inst):
    try:
        exact = optsched.solve(inst, model="tiresias", method="exact", time_limit=20)
    except ModelNotApplicable:
        exact = None
    assume(exact is not None and exact.status.value == "optimal")
    b = lower_bounds(inst)
    assert _le(b.mean_jct * inst.n_jobs, exact.objective)
    assert _le(b.makespan, exact.metrics.makespan)


def test_certificate_holds_for_any_duals():
    inst = shipped_trace("gavel-philly-2000", cluster="gavel-108")
    inst = inst.replace(jobs=inst.jobs[:40])
    d = _data(inst, Setting())
    b = _grid(d, 3600.0, 40 * 3600.0)
    data = _interval_lp(d, np.ones(40), b, 40 * 3600.0).freeze()
    res = solve_program(data)
    y = np.concatenate([np.asarray(res.duals[k.name]).ravel() for k in data.row_blocks])
    exact = certified_lp_bound(data, y)
    assert exact <= res.objective and exact == pytest.approx(res.objective, rel=1e-7)
    rng = np.random.default_rng(0)
    for scale in (1e-6, 1e-2, 1.0):
        noisy = y * (1 + scale * rng.standard_normal(y.size))
        v = certified_lp_bound(data, noisy)
        assert v <= res.objective * (1 + 1e-12)        # weak duality: never above
    assert certified_lp_bound(data, np.zeros_like(y)) <= res.objective


def test_interval_lp_tightens_a_contended_prefix():
    inst = shipped_trace("gavel-philly-2000", cluster="gavel-108")
    from dataclasses import replace
    inst = inst.replace(jobs=tuple(replace(j, arrival=j.arrival / 50) for j in inst.jobs[:60]))
    b = lower_bounds(inst)
    per_job = b.by_method["per_job"]["total_completion"]
    assert b.by_method["interval_lp"]["total_completion"] > per_job * 1.01
    assert b.source["mean_jct"] in ("interval_lp", "pooled")


SHIPPED = [("gavel-philly-2000", "gavel-108"), ("gavel-artifact-15", None),
           ("tiresias-60", None), ("philly", "tiresias-n32g4")]


def _policies_on(trace, cluster, n, names=None):
    inst = optsched.catalog.read_trace(trace, cluster, jobs=n)
    out = []
    for name in names or optsched.policies():
        try:
            res = optsched.simulate(inst, name, seed=0)
        except (ModelNotApplicable, InvalidInput):
            continue
        out.append((name, res))
    return inst, out


def test_bounds_below_policies_on_a_trace_prefix():
    _check_policies("gavel-philly-2000", "gavel-108", 12,
                    ["tiresias.las", "tiresias.yarn_fifo", "gavel.max_min_fairness",
                     "gavel.fifo"])


@pytest.mark.slow
@pytest.mark.parametrize("trace,cluster", SHIPPED)
def test_bounds_below_every_policy_on_every_shipped_trace(trace, cluster):
    _check_policies(trace, cluster, 30)


def _check_policies(trace, cluster, n, names=None):
    inst, runs = _policies_on(trace, cluster, n, names)
    assert len(runs) >= (len(names) if names else 10), [r[0] for r in runs]
    for name, res in runs:
        b = lower_bounds(inst, Setting.of(res.schedule))   # the capabilities the run used
        m = res.metrics
        if m.n_completed < m.n_jobs:
            continue
        assert _le(b.mean_jct, m.mean_jct), (name, b.mean_jct, m.mean_jct)
        assert _le(b.makespan, m.makespan), (name, b.makespan, m.makespan)
        # the interval LP with busy-time tangents and squashed-area rows
        t = lower_bounds(inst, Setting.of(res.schedule), methods=("interval_lp",),
                         tangents=2, squash=2)
        assert _le(t.mean_jct, m.mean_jct), (name, t.mean_jct, m.mean_jct)


def test_bad_options_are_named():
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0})])
    with pytest.raises(InvalidOption, match="methods"):
        lower_bounds(inst, methods=("nope",))
    with pytest.raises(InvalidOption, match="progress_rule"):
        Setting(progress_rule="fast")
    with pytest.raises(InvalidOption, match="intervals"):
        lower_bounds(inst, intervals=0)
    assert set(METHODS) >= set(lower_bounds(inst).by_method)


def test_too_large_lp_is_reported_not_dropped():
    inst = _inst([Job(f"j{i}", float(i), 1, 100.0, {"a": 1.0}) for i in range(20)])
    b = lower_bounds(inst, max_columns=10)
    assert "interval_lp" in b.skipped and "columns" in b.skipped["interval_lp"]
    assert b.by_method.get("interval_lp") is None
    assert math.isfinite(b.mean_jct)


def test_simulate_reports_bounds_and_gaps():
    inst = optsched.catalog.read_trace("gavel-philly-2000", "gavel-108", jobs=30, load=50)
    res = optsched.simulate(inst, "gavel.max_min_fairness")
    ex = res.extra
    assert set(ex["bounds"]) == {"mean_jct", "makespan"}
    b = lower_bounds(inst, time_limit=30.0)
    assert ex["bounds"]["mean_jct"] == pytest.approx(b.mean_jct)
    assert ex["gaps"]["mean_jct"] == pytest.approx(res.metrics.mean_jct / b.mean_jct)
    assert ex["gaps"]["mean_jct"] >= 1 - 1e-9 and ex["gaps"]["makespan"] >= 1 - 1e-9
    plain = optsched.simulate(inst, "gavel.max_min_fairness", bounds=False)
    assert "bounds" not in plain.extra and "gaps" not in plain.extra
    with pytest.raises(InvalidOption, match="bounds"):
        optsched.simulate(inst, "gavel.max_min_fairness", bounds="yes")


def test_simulate_without_every_job_gives_no_gap():
    inst = optsched.catalog.read_trace("gavel-philly-2000", "gavel-108", jobs=10, load=50)
    res = optsched.simulate(inst, "gavel.fifo", max_time=3600.0)
    assert res.metrics.n_completed < res.metrics.n_jobs
    assert res.extra["gaps"] == {"mean_jct": None, "makespan": None}
    assert "not every job" in res.extra["gaps_note"]


def test_simulate_cli_prints_the_gap_and_writes_it(tmp_path, capsys):
    import json

    from optsched.cli import main

    out = tmp_path / "r.json"
    assert main(["simulate", "--trace", "tiresias-60", "--policy", "tiresias.las",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "x the optimum (certified bound" in text
    d = json.loads(out.read_text())
    assert d["gaps"]["mean_jct"] >= 1 - 1e-9 and d["bounds"]["makespan"] > 0
    assert "bounds" not in d.get("extra", {})
    assert main(["simulate", "--trace", "tiresias-60", "--policy", "tiresias.las",
                 "--no-bound", "--out", str(out)]) == 0
    assert "optimum" not in capsys.readouterr().out
    assert "gaps" not in json.loads(out.read_text())


@pytest.mark.parametrize("trace", sorted(optsched.catalog.SHIPPED_TRACES))
def test_simulate_cli_prints_the_gap_on_every_shipped_trace(trace, capsys):
    from optsched.cli import main

    assert main(["simulate", "--trace", trace, "--jobs", "12", "--load", "20",
                 "--policy", "tiresias.las"]) == 0
    text = capsys.readouterr().out
    m = re.search(r"mean JCT at most (\d+\.\d+)x the optimum \(certified bound", text)
    assert m and float(m.group(1)) >= 1.0, text


def test_forked_shared_workers_are_not_capped_by_whole_gpus():
    """With forking and sharing, a copy's workers hold fractions of a GPU: two 1-GPU
    nodes run two copies of 2 workers each (4 workers at share 0.5), 2 iterations/s.
    A bound that took at most one worker per GPU said 20 s where a policy did 14.8."""
    from test_sim_capabilities import RandomPolicy

    nodes = (Node("n0", {"a": 1}, cpus=12.0, memory=100.0),
             Node("n1", {"a": 1}, cpus=12.0, memory=100.0))
    job = Job("j0", 0.0, 2, 20.0, {"a": 0.5}, compute_share=0.25)
    inst = Instance(Cluster(nodes), (job,), slot=5.0)
    policy = RandomPolicy(sharing=True, forking=True, resource_sensitive=True,
                          consolidation=1.5)
    res = simulate(inst, policy, seed=0, max_time=5000.0)
    b = lower_bounds(inst, Setting.of(policy))
    assert b.mean_jct == pytest.approx(10.0)          # 20 iterations at 2 per second
    assert _le(b.mean_jct, res.metrics.mean_jct)
    assert lower_bounds(inst, Setting(forking=True)).mean_jct == pytest.approx(20.0)


def test_column_budget_grows_linearly_with_the_jobs():
    from optsched.sim.bounds import COLUMNS_PER_JOB, DEFAULT_MAX_COLUMNS, column_budget

    assert column_budget(10) == DEFAULT_MAX_COLUMNS
    assert column_budget(82_247) == COLUMNS_PER_JOB * 82_247


@pytest.mark.slow
def test_large_trace_prefix_gets_its_lps_within_the_default_budget():
    """20,000 Philly jobs need 100,000 interval-LP columns: a fixed 60,000-column budget
    skipped both LPs; the per-job budget computes them."""
    inst = optsched.catalog.read_philly_trace(jobs=20_000, load=6)
    b = lower_bounds(inst)
    assert b.skipped == {}
    # the interval LP has C_j >= r_j + p_j among its rows: never below the per-job bound
    # beyond the certificate's rounding
    assert b.by_method["interval_lp"]["total_completion"] >= \
        b.by_method["per_job"]["total_completion"] * (1 - 1e-6)


def test_busy_time_tangents_by_hand():
    """Two 1-GPU jobs of 100 s on one GPU at t = 0, intervals of 100 s. Split half and
    half over the first two intervals, each job's plain busy-time row gives only
    C >= 0.5 * 0 + 0.5 * 100 + 50 = 100 (the per-job bound, 200 in all). With tangents
    at 0.5 and 1, each half adds 100 * 0.5^2 / 2 = 12.5: C >= 125 each, 250 in all
    (the LP's optimum; the schedule's optimum is 300)."""
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0}), Job("b", 0.0, 1, 100.0, {"a": 1.0})],
                 gpus=(("a", 1),))
    kw = dict(methods=("interval_lp",), window=200.0, step=100.0)
    plain = lower_bounds(inst, **kw).by_method["interval_lp"]["total_completion"]
    tang = lower_bounds(inst, tangents=2, **kw).by_method["interval_lp"]["total_completion"]
    assert plain == pytest.approx(200.0, rel=1e-7)
    assert tang == pytest.approx(250.0, rel=1e-7)
    assert lower_bounds(inst, tangents=2, **kw).extra["interval_lp"]["tangents"] == 2
    with pytest.raises(InvalidOption, match="tangents"):
        lower_bounds(inst, tangents=-1)
    with pytest.raises(InvalidOption, match="squash"):
        lower_bounds(inst, squash=1.5)


def test_squashed_area_by_hand():
    """The same two jobs in one interval of 200 s: the plain LP puts both at its start
    (C >= 100 each); the squashed-area row (area 200 on one GPU: sum of area x offset
    >= 200^2 / 2) forces the second job's work later, and the LP reaches the optimum,
    300."""
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0}), Job("b", 0.0, 1, 100.0, {"a": 1.0})],
                 gpus=(("a", 1),))
    kw = dict(methods=("interval_lp",), window=200.0, step=200.0)
    plain = lower_bounds(inst, **kw).by_method["interval_lp"]["total_completion"]
    sq = lower_bounds(inst, squash=1, **kw)
    assert plain == pytest.approx(200.0, rel=1e-7)
    assert sq.by_method["interval_lp"]["total_completion"] == pytest.approx(300.0, rel=1e-7)
    assert sq.extra["interval_lp"]["squash"] == 1


@settings(max_examples=examples(25), deadline=None)
@given(small_instances(), st.integers(0, 3), st.integers(0, 2),
       st.sampled_from([10.0, 20.0, 40.0]))
def test_tangent_bound_below_the_exact_slotted_optimum(inst, tangents, squash, step):
    try:
        exact = optsched.solve(inst, model="tiresias", method="exact", time_limit=20)
    except ModelNotApplicable:
        exact = None
    assume(exact is not None and exact.status.value == "optimal")
    kw = dict(methods=("per_job", "interval_lp"), step=step)
    b = lower_bounds(inst, tangents=tangents, squash=squash, **kw)
    assert _le(b.mean_jct * inst.n_jobs, exact.objective)
    # the parts sum to a point of the plain LP at no higher cost: never below it
    plain = lower_bounds(inst, **kw).by_method["interval_lp"]["total_completion"]
    assert b.by_method["interval_lp"]["total_completion"] >= plain * (1 - 1e-7) - 1e-6


@settings(max_examples=examples(40), deadline=None)
@given(capability_instances(), st.sampled_from(CAPS), st.integers(0, 3), st.integers(0, 3),
       st.integers(0, 2))
def test_tangent_bound_below_random_policies_of_every_capability(inst, caps, seed, tangents,
                                                                   squash):
    policy = RandomPolicy(**caps)
    res = simulate(inst, policy, seed=seed, max_time=5000.0)
    m = res.metrics
    assume(m.n_completed == m.n_jobs)
    b = lower_bounds(inst, Setting.of(policy), methods=("interval_lp",), tangents=tangents,
                     squash=squash, step=float(inst.slot))
    assert _le(b.mean_jct, m.mean_jct)
