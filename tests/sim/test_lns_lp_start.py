"""The LP-guided constructive start (optsched.sim.lns_lp_start): its schedules validate
under strict rules on random instances and on a trace prefix, their mean JCT is the
metrics' of the schedule and never below the certified bound, jobs run only on the
types the LP allows, and bad options raise typed errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched import Cluster, Instance, Job, Node
from optsched.catalog import read_trace
from optsched.core.metrics import compute_metrics
from optsched.core.validate import Capabilities, validate_schedule
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.sim.bounds import lower_bounds
from optsched.sim.lns import FastestSrpt, improve
from optsched.sim.lns_lp_start import LP_KEYS, ORDERS, LpList, lp_guide, lp_guided_start

STRICT = Capabilities(source="strict rules")


def _check(inst: Instance, res) -> None:
    validate_schedule(inst, res.schedule, STRICT)
    m = compute_metrics(inst, res.schedule)
    assert m.n_completed == inst.n_jobs
    assert res.metrics.mean_jct == pytest.approx(m.mean_jct, rel=1e-12)
    assert lower_bounds(inst, methods=("per_job", "pooled")).mean_jct <= \
        m.mean_jct * (1 + 1e-9)


@st.composite
def instances(draw):
    gpus = {"a": draw(st.integers(1, 3)), "b": draw(st.integers(1, 3))}
    nodes = tuple(Node(f"n{i}", {t: c}) for i, (t, c) in enumerate(gpus.items())) + (
        (Node("n9", {"a": 1, "b": 1}),) if draw(st.booleans()) else ())
    cap = {t: sum(n.gpus.get(t, 0) for n in nodes) for t in gpus}
    jobs = []
    for i in range(draw(st.integers(1, 7))):
        rates = {t: draw(st.sampled_from([0.0, 0.3, 1.0, 2.5])) for t in gpus}
        if not any(rates.values()):
            rates["a"] = 1.0
        fit = min(cap[t] for t, r in rates.items() if r > 0)
        rates = {t: r for t, r in rates.items() if r > 0}
        jobs.append(Job(f"j{i}", draw(st.sampled_from([0.0, 0.0, 12.0, 31.5])),
                        draw(st.integers(1, fit)), draw(st.floats(5.0, 90.0)), rates))
    return Instance(Cluster(nodes), tuple(jobs), slot=10.0)


@settings(max_examples=examples(30), deadline=None)
@given(instances(), st.sampled_from(ORDERS), st.sampled_from([0.0, 0.15, 0.5, 1.0]),
       st.integers(0, 2), st.integers(0, 1), st.booleans(), st.sampled_from([0.0, 1.0, 2.5]))
def test_every_start_validates_on_random_instances(inst, order, share_min, tangents, squash,
                                                   fill, share_weight):
    guide = lp_guide(inst, tangents=tangents, squash=squash)
    res = lp_guided_start(inst, order=order, share_min=share_min, guide=guide, fill=fill,
                          share_weight=share_weight if order == "srpt" else None)
    _check(inst, res)
    if share_min == 1.0 and not (fill and order == "srpt"):
        # every job only on its LP main type(s)
        main = guide.shares >= guide.shares.max(axis=1, keepdims=True) - 1e-9
        types = inst.cluster.gpu_types
        for a in res.schedule.allocations:
            j = inst.job_index[a.job]
            assert main[j, types.index(a.gpu_type)], (a.job, a.gpu_type, guide.shares[j])


@pytest.mark.slow  # about 20-30 s: the LP guide and a window MILP on a trace prefix
def test_trace_prefix_start_validates_and_is_improved_validly():
    inst = read_trace("gavel-philly-2000", "gavel-108", jobs=20, load=20)
    guide = lp_guide(inst, tangents=1)
    assert guide.shares.shape == (20, 3)
    assert np.allclose(guide.shares.sum(axis=1), 1.0, atol=1e-6)
    assert np.all(guide.completion >= np.array([j.arrival for j in inst.jobs]))
    for order in ORDERS:
        res = lp_guided_start(inst, order=order, guide=guide)
        _check(inst, res)
        assert res.extra["lp_guide"]["order"] == order
    best = improve(inst, res, policy=STRICT, time_limit=None, max_windows=1, seed=0)
    validate_schedule(inst, best.schedule, STRICT)
    assert best.value == pytest.approx(compute_metrics(inst, best.schedule).mean_jct)
    assert best.value <= res.metrics.mean_jct


def test_the_lp_type_choice_uses_comparative_advantage():
    """Two jobs, one fast and one slow GPU. Job x is 10x faster on the fast GPU, job y
    only 1.25x: the LP sends y to the slow GPU; area-SRPT over all types puts the
    shorter job, y, on the fast GPU and x on the slow one."""
    nodes = (Node("n0", {"fast": 1}), Node("n1", {"slow": 1}))
    jobs = (Job("x", 0.0, 1, 100.0, {"fast": 1.0, "slow": 0.1}),
            Job("y", 0.0, 1, 60.0, {"fast": 1.0, "slow": 0.8}))
    inst = Instance(Cluster(nodes), jobs, slot=10.0)
    free = lp_guided_start(inst, share_min=0.0, share_weight=0.0)
    guided = lp_guided_start(inst)
    for res in (free, guided):
        _check(inst, res)
    on = {a.job: a.gpu_type for a in guided.schedule.allocations}
    assert on == {"x": "fast", "y": "slow"}
    assert guided.schedule.completion == pytest.approx({"x": 100.0, "y": 75.0})
    assert guided.metrics.mean_jct < free.metrics.mean_jct


def test_lp_list_follows_its_key():
    nodes = (Node("n0", {"a": 1}),)
    jobs = (Job("p", 0.0, 1, 50.0, {"a": 1.0}), Job("q", 0.0, 1, 20.0, {"a": 1.0}))
    inst = Instance(Cluster(nodes), jobs, slot=10.0)
    from optsched.core.validate import producing
    from optsched.sim.simulator import simulate

    with producing(STRICT):
        res = simulate(inst, LpList([1.0, 0.0]))
    assert res.schedule.completion == pytest.approx({"q": 20.0, "p": 70.0})


def test_bad_options_are_refused():
    inst = read_trace("gavel-philly-2000", "gavel-108", jobs=5, load=20)
    with pytest.raises(InvalidOption, match="order"):
        lp_guided_start(inst, order="fifo")
    with pytest.raises(InvalidOption, match="share_min"):
        lp_guided_start(inst, share_min=1.5)
    for bad in (-0.5, float("nan"), float("inf"), True, "1"):
        with pytest.raises(InvalidOption, match="share_weight"):
            lp_guided_start(inst, share_weight=bad)
    with pytest.raises(InvalidOption, match="share_weight"):
        lp_guided_start(inst, order="completion", share_weight=1.0)
    g5 = lp_guide(inst)
    assert lp_guided_start(inst, guide=g5).extra["lp_guide"]["share_weight"] == 1.0
    assert lp_guided_start(inst, order="completion",
                           guide=g5).extra["lp_guide"]["share_weight"] == 0.0
    with pytest.raises(InvalidOption, match="alpha"):
        lp_guide(inst, alpha=0.0)
    g = lp_guide(inst)
    with pytest.raises(InvalidOption, match="key"):
        g.key("nope")
    other = read_trace("gavel-philly-2000", "gavel-108", jobs=6, load=20)
    with pytest.raises(InvalidOption, match="guide"):
        lp_guided_start(other, guide=g)
    with pytest.raises(InvalidOption, match="priority"):
        LpList([np.nan])
    from optsched.sim.simulator import simulate
    with pytest.raises(ModelNotApplicable, match="allowed"):
        simulate(inst, FastestSrpt(allowed=np.ones((2, 3), dtype=bool)))
    with pytest.raises(ModelNotApplicable, match="weights"):
        simulate(inst, FastestSrpt(weights=np.ones((2, 3))))
    for bad in (np.ones(3), -np.ones((5, 3)), np.full((5, 3), np.nan)):
        with pytest.raises(InvalidOption, match="weights"):
            FastestSrpt(weights=bad)
    with pytest.raises(InvalidOption, match="weights"):
        FastestSrpt(rule="fastest", weights=np.ones((5, 3)))
    assert set(LP_KEYS) < set(ORDERS)


def test_fill_gives_idle_gpus_to_waiting_jobs_only():
    """Both jobs allowed only on the fast GPU: without fill the longer one waits while
    the slow GPU idles; with fill it starts on the slow GPU, and the shorter job keeps
    the fast one."""
    from optsched.core.validate import producing
    from optsched.sim.simulator import simulate

    nodes = (Node("n0", {"fast": 1}), Node("n1", {"slow": 1}))
    jobs = (Job("x", 0.0, 1, 100.0, {"fast": 1.0, "slow": 0.5}),
            Job("y", 0.0, 1, 40.0, {"fast": 1.0, "slow": 0.5}))
    inst = Instance(Cluster(nodes), jobs, slot=10.0)
    mask = np.array([[True, False], [True, False]])  # types in the cluster's order
    assert inst.cluster.gpu_types == ("fast", "slow")
    runs = {}
    for fill in (False, True):
        with producing(STRICT):
            runs[fill] = simulate(inst, FastestSrpt(allowed=mask, fill=fill))
        _check(inst, runs[fill])
    assert runs[False].schedule.completion == pytest.approx({"y": 40.0, "x": 140.0})
    assert runs[True].schedule.completion["y"] == pytest.approx(40.0)
    # x: 40 s on slow (20 iterations), then 80 on fast
    assert runs[True].schedule.completion["x"] == pytest.approx(120.0)
    with pytest.raises(InvalidOption, match="fill"):
        FastestSrpt(fill=1)


def test_share_weight_follows_the_lp_preference_among_allowed_types():
    """Job x is a little faster on "fast" but the weights prefer "slow": weighted, x
    takes the slow GPU and the other job, y, the fast one; unweighted both score the
    fast GPU first and x, shorter, takes it. The LP-guided start passes the LP's
    normalised shares as these weights."""
    from optsched.core.validate import producing
    from optsched.sim.simulator import simulate

    nodes = (Node("n0", {"fast": 1}), Node("n1", {"slow": 1}))
    jobs = (Job("x", 0.0, 1, 40.0, {"fast": 1.0, "slow": 0.8}),
            Job("y", 0.0, 1, 100.0, {"fast": 1.0, "slow": 0.1}))
    inst = Instance(Cluster(nodes), jobs, slot=10.0)
    assert inst.cluster.gpu_types == ("fast", "slow")
    weights = np.array([[0.2, 1.0], [1.0, 0.1]])
    runs = {}
    for name, w in (("plain", None), ("weighted", weights)):
        with producing(STRICT):
            runs[name] = simulate(inst, FastestSrpt(weights=w))
        _check(inst, runs[name])
    first = {name: {a.job: a.gpu_type for a in r.schedule.allocations if a.start == 0.0}
             for name, r in runs.items()}
    assert first["plain"]["x"] == "fast"
    assert first["weighted"] == {"x": "slow", "y": "fast"}
    assert runs["weighted"].schedule.completion == pytest.approx({"x": 50.0, "y": 100.0})
    assert runs["weighted"].metrics.mean_jct < runs["plain"].metrics.mean_jct
    # through the LP: y's work all on "fast", x's share recorded with the option
    res = lp_guided_start(inst, share_min=0.0, share_weight=1.0)
    _check(inst, res)
    assert res.extra["lp_guide"]["share_weight"] == 1.0
