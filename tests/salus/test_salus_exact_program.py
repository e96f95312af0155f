"""Salus' makespan program, tightened: every new row and limit against all plans of small
instances, the optimum against the plain program, the local-search start."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched import Cluster, GpuMemory, Instance, Job, Node, Status
from optsched.salus import exact, ffd, lpt
from optsched.salus.bounds import makespan_bound
from optsched.salus.exact import (
    _program,
    balanced_plan,
    c_bound,
    canonical_plan,
    lane_limits,
    plan_point,
)
from optsched.salus.heuristics import improve_plan
from optsched.salus.model import check_plan, gpu_makespans, plan_objective, salus_view

OBJECTIVES = ("makespan", "admitted", "gpus")


def make(jobs, gpus, horizon=None):
    """``jobs``: (P MB, T MB, iterations, u); ``gpus``: (type, GB) per GPU, one node each."""
    nodes = tuple(Node(f"g{k}", {t: 1}, gpu_memory={t: m}) for k, (t, m) in enumerate(gpus))
    rate = {t: {"v100": 1.0, "k80": 0.5}[t] for t, _ in gpus}
    js = tuple(Job(f"j{i}", 0.0, 1, float(n), rate, memory=GpuMemory(P, T), compute_share=u)
               for i, (P, T, n, u) in enumerate(jobs))
    return Instance(Cluster(nodes), js, horizon=horizon)


@st.composite
def with_twins(draw, max_jobs=4, max_gpus=3):
    """Jobs drawn from at most three templates (so identical jobs are common) on GPUs of
    at most two types and memories (so classes of interchangeable GPUs are common)."""
    templates = draw(st.lists(st.tuples(
        st.integers(0, 10).map(lambda p: p * 100.0), st.integers(1, 14).map(lambda t: t * 100.0),
        st.integers(1, 6).map(lambda n: n * 10.0), st.sampled_from([0.5, 1.0])),
        min_size=1, max_size=3))
    n = draw(st.integers(1, max_jobs))
    jobs = [templates[draw(st.integers(0, len(templates) - 1))] for _ in range(n)]
    gpus = [(draw(st.sampled_from(["v100", "k80"])), float(draw(st.sampled_from([2, 3]))))
            for _ in range(draw(st.integers(1, max_gpus)))]
    return make(jobs, gpus)


def set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]
        yield [[first]] + p


def every_safe_plan(view, admitted=False):
    """Every memory-safe lane plan (job indices); with ``admitted``, jobs may be left out."""
    choices = range(-1 if admitted else 0, view.n_gpus)
    for assign in itertools.product(choices, repeat=view.n_jobs):
        if any(g >= 0 and not view.fits(i, g) for i, g in enumerate(assign)):
            continue
        per = [[i for i in range(view.n_jobs) if assign[i] == g] for g in range(view.n_gpus)]
        for parts in itertools.product(*(list(set_partitions(p)) for p in per)):
            need = [sum(view.P[l].sum() + view.T[l].max() for l in lanes) for lanes in parts]
            if all(nd <= m * (1 + 1e-12) for nd, m in zip(need, view.memory, strict=True)):
                yield [[list(l) for l in lanes] for lanes in parts]


def row_violations(data, point):
    """The largest violation of each row block by ``point`` (blocks violated only)."""
    x = data.start_vector(point)
    ax = data.A @ x
    out = {}
    for b in data.row_blocks:
        rows = slice(b.start, b.start + b.size)
        v = max(np.max(data.row_lb[rows] - ax[rows], initial=0.0),
                np.max(ax[rows] - data.row_ub[rows], initial=0.0))
        if v > 1e-7:
            out[b.name] = float(v)
    lo = np.max(data.col_lb - x, initial=0.0)
    hi = np.max(x - data.col_ub, initial=0.0)
    if max(lo, hi) > 1e-7:
        out["column bounds"] = float(max(lo, hi))
    return out


def plan_signature(view, plan):
    """What no renumbering of lanes, interchangeable GPUs or identical jobs changes: per
    GPU class, the multiset of GPUs as multisets of lanes of job templates."""
    def template(i):
        return (view.P[i], view.T[i], view.n[i], view.u[i], view.d[i].tobytes())

    sig = {}
    for g, lanes in enumerate(plan):
        key = (view.gpu_type[g], float(view.memory[g]), view.d[:, g].tobytes())
        gpu = tuple(sorted(tuple(sorted(template(i) for i in l)) for l in lanes if l))
        sig.setdefault(key, []).append(gpu)
    return {k: sorted(v) for k, v in sig.items()}


# ------------------------------------------------------------ every plan, every new row
@settings(max_examples=examples(25))
@given(with_twins())
def test_every_safe_plan_has_an_equivalent_the_tightened_rows_keep(inst):
    """For every memory-safe plan of the instance, its canonical form has the same
    objective, is memory-safe, and satisfies every row of the tightened program, for each
    objective: so lane_lead, gpu_lead, twin_order and the lane limits cut off no plan's
    class, and no optimum. A wrong row (e.g. ``<=`` in place of ``<`` in the lead rows,
    or the twin order reversed) fails here, naming the row."""
    view = salus_view(inst)
    for objective in OBJECTIVES:
        L = lane_limits(view, objective, None, True, True)
        lp, trip, derived = _program(view, objective, L, None, True)
        data = lp.freeze()
        for plan in every_safe_plan(view, admitted=objective == "admitted"):
            if objective != "makespan":
                # one lane per GPU without a horizon: merging a GPU's lanes keeps it safe
                # (the merging lemma), so the merged plan stands for the plan
                plan = [[sum(lanes, [])] if lanes else [] for lanes in plan]
            assert all(sum(1 for l in lanes if l) <= L[g] for g, lanes in enumerate(plan)), \
                ("lane limit", plan, L)
            canon = canonical_plan(view, plan, objective)
            check_plan(view, canon)
            assert plan_signature(view, canon) == plan_signature(view, plan)
            assert plan_objective(view, canon, objective) == pytest.approx(
                plan_objective(view, plan, objective))
            point = plan_point(view, canon, L, trip, objective, derived)
            assert point is not None, ("a column the canonical plan needs is missing", plan)
            assert row_violations(data, point) == {}, (objective, plan, canon)


# ------------------------------------------------------------ optimum unchanged
@settings(max_examples=examples(20))
@given(with_twins(max_jobs=5))
def test_tightened_program_has_the_plain_programs_optimum(inst):
    """The optimum with the new rows, limits, bound and start equals the plain program's
    (``tighten=False``, no start), for every objective."""
    for objective in OBJECTIVES:
        new = exact(inst, objective=objective)
        old = exact(inst, objective=objective, tighten=False, mip_start=False)
        assert new.status is old.status, objective
        if old.status is Status.OPTIMAL:
            assert new.objective == pytest.approx(old.objective, rel=1e-6, abs=1e-6), objective


def test_lane_limit_is_the_count_of_smallest_peaks_that_fit():
    """Peaks 1, 2, 3, 4, 5 GB on a 10 GB GPU: four lanes hold 1+2+3+4 = 10 GB, five would
    need 15; the old limit floor(10/1) = 10 was loose."""
    jobs = [(0.0, k * 1024.0, 10.0, 1.0) for k in range(1, 6)]
    view = salus_view(make(jobs, [("v100", 10.0)]))
    assert lane_limits(view, "makespan", None, True, True).tolist() == [4]
    assert lane_limits(view, "makespan", None, True, False).tolist() == [5]


# ------------------------------------------------------------ the bound and the start
@settings(max_examples=examples(20))
@given(with_twins(max_jobs=6))
def test_makespan_bound_is_below_the_optimum_and_the_start_above(inst):
    res = exact(inst, tighten=False, mip_start=False)
    if res.status is not Status.OPTIMAL:
        return
    view = salus_view(inst)
    assert makespan_bound(view) <= res.objective * (1 + 1e-9)
    assert c_bound(view) <= res.objective * (1 + 1e-9)
    tight = exact(inst)
    start = tight.extra.get("mip_start")
    if start is not None:
        assert start["feasible"] and start["objective"] >= res.objective * (1 - 1e-9)


@settings(max_examples=examples(25))
@given(with_twins(max_jobs=7, max_gpus=3))
def test_local_search_never_worsens_a_plan_and_keeps_it_safe(inst):
    view = salus_view(inst)
    L = lane_limits(view, "makespan", None, True, True)
    pos = {vid: i for i, vid in enumerate(view.ids)}
    plans = [balanced_plan(view, L, t) for t in (False, True)]
    for h in (ffd, lpt):
        r = h(inst)
        plans.append(r.extra["plan"] if r.success else None)
    for p in plans:
        if p is None:
            continue
        plan = [[[pos[j] for j in lane] for lane in g] for g in p]
        if any(len(lanes) > L[g] for g, lanes in enumerate(plan)):
            continue
        better = improve_plan(view, plan, L, kicks=5)
        check_plan(view, better)
        assert sorted(i for g in better for l in g for i in l) == list(range(view.n_jobs))
        assert all(len([l for l in lanes if l]) <= L[g] for g, lanes in enumerate(better))
        assert gpu_makespans(view, better).max() <= \
            gpu_makespans(view, plan).max() * (1 + 1e-12)


def test_start_at_the_bound_is_returned_as_optimal_without_a_solve():
    """Two jobs of 100 s on two GPUs: the start puts one on each, makespan 100 s = the
    longest job, so it is optimal; HiGHS is not run and the plain program agrees."""
    inst = make([(100.0, 100.0, 100.0, 1.0)] * 2, [("v100", 2.0)] * 2)
    res = exact(inst)
    assert res.status is Status.OPTIMAL and res.solver is None
    assert res.extra["proved_by"] == "start attains the lower bound"
    assert res.objective == pytest.approx(100.0) and res.bound == pytest.approx(100.0)
    assert res.extra["mip_start"]["feasible"]
    assert res.objective == pytest.approx(exact(inst, tighten=False, mip_start=False).objective)
    assert res.metrics.makespan == pytest.approx(100.0)


def test_improve_plan_leaves_the_critical_gpu():
    """All four jobs on GPU 0 (makespan 40 s): the search spreads them, 20 s."""
    inst = make([(0.0, 100.0, 10.0, 1.0)] * 4, [("v100", 2.0)] * 2)
    view = salus_view(inst)
    L = lane_limits(view, "makespan", None, True, True)
    better = improve_plan(view, [[[0, 1, 2, 3]], []], L, kicks=0)
    assert gpu_makespans(view, better).max() == pytest.approx(20.0)


def test_admitted_optimum_with_a_horizon_and_a_mip_start():
    """A case where HiGHS reported the optimum (2 jobs within the horizon) but handed back
    the MIP start (1 job) as its solution: the solver layer solves again without the start,
    so the exact answer admits both jobs the lane manager admits."""
    from optsched.core.instance import Cluster, GpuMemory, Instance, Job, Node
    from optsched.salus import exact, lane_manager

    def job(i, w, p, e, c):
        return Job(id=f"j{i}", arrival=0.0, workers=1, work=w, throughput={"v100": 1.0},
                   memory=GpuMemory(persistent=p, ephemeral=e), compute_share=c)

    inst = Instance(cluster=Cluster((Node("g0", {"v100": 1}, gpu_memory={"v100": 2.0}),)),
                    jobs=(job(0, 30.0, 0.0, 400.0, 0.25), job(1, 20.0, 300.0, 100.0, 0.25),
                          job(2, 30.0, 0.0, 100.0, 1.0)), slot=360.0, horizon=32.0)
    res = exact(inst, objective="admitted")
    assert res.objective == 2.0 and res.bound == 2.0
    assert lane_manager(inst, objective="admitted", realize="fluid").objective <= res.objective
