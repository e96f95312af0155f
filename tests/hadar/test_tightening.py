"""Hadar's MILP tightening: cumulative work rows keep the optimum (property), and the
list-schedule start is a feasible point worth no more than the optimum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples, slotted_utility_instance

from optsched import Cluster, Instance, Job, Node, Status
from optsched import Utility as Ut
from optsched.hadar import build_model, exact
from optsched.hadar.exact import build_program, heuristic_start
from optsched.hadar.heuristics import LIST_ORDERS as ORDERS
from optsched.hadar.heuristics import best_list_schedule, list_order, list_schedule

TYPES = ("v100", "p100", "k80")


def make(jobs, caps, *, T):
    nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(caps))
    js = tuple(Job(f"J{i}", a, W, E, r, utility=u) for i, (W, E, a, r, u) in enumerate(jobs))
    return Instance(Cluster(nodes), js, slot=1.0, horizon=float(T))


@st.composite
def gang_instances(draw):
    """Gangs of 1-3 workers on 1-3 nodes of one or two types, contended, utilities
    positive over the horizon."""
    caps = []
    for _ in range(draw(st.integers(1, 3))):
        ks = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True))
        caps.append({k: draw(st.integers(1, 2)) for k in ks})
    return slotted_utility_instance(draw, caps, max_work=12)


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None)
@given(inst=gang_instances(), placement=st.sampled_from(["types", "nodes"]))
def test_cumulative_work_rows_keep_the_optimum(inst, placement):
    """Same MILP optimum with and without the cumulative work rows; the list schedule's
    value never exceeds it."""
    old = exact(inst, placement=placement, work_cuts=False, mip_gap=1e-9)
    new = exact(inst, placement=placement, work_cuts=True, mip_gap=1e-9)
    assert old.status is Status.OPTIMAL and new.status is Status.OPTIMAL
    tol = 1e-6 * max(1.0, abs(old.extra["milp_objective"]))
    assert new.extra["milp_objective"] == pytest.approx(old.extra["milp_objective"], abs=tol)
    assert new.extra["start_value"] <= new.extra["milp_objective"] + tol


@settings(max_examples=examples(10), deadline=None)
@given(inst=gang_instances())
def test_list_schedule_is_a_feasible_point(inst):
    """Each order's plans satisfy every row of the MILP (with cumulative work rows) and
    its bounds, and the program's objective there is the plans' utility."""
    model = build_model(inst)
    lp, index = build_program(model, work_cuts=True)
    data = lp.freeze()
    for kind in ORDERS:
        plans = list_schedule(model, list_order(model, kind))
        for j, p in plans.items():
            for t in np.unique(p.slots):
                assert p.gpus[p.slots == t].sum() == model.W[j]  # whole gang or nothing
        x = data.start_vector(heuristic_start(model, index, plans))
        act = data.A @ x
        tol = 1e-7
        assert np.all(act >= data.row_lb - tol) and np.all(act <= data.row_ub + tol)
        assert np.all(x >= data.col_lb - tol) and np.all(x <= data.col_ub + tol)
        value = float(sum(p.payoff for p in plans.values()))
        assert float(data.c @ x) == pytest.approx(value, abs=1e-9)
    assert best_list_schedule(model)[1] >= 0.0


def test_list_schedule_start_is_used():
    """Three single-slot gangs competing for a 2-GPU V100 node and a 2-GPU K80 node: the
    start is the better of the online plans and the list schedule, and it is feasible."""
    inst = make([(2, 2.0, 0.0, {"v100": 1.0, "k80": 0.5}, Ut("constant", value=9)),
                 (2, 1.0, 0.0, {"v100": 1.0, "k80": 1.0}, Ut("constant", value=5)),
                 (2, 2.0, 0.0, {"v100": 1.0}, Ut("linear", value=8, slope=1))],
                [{"v100": 2}, {"k80": 2}], T=3)
    r = exact(inst, mip_gap=1e-9)
    assert r.status is Status.OPTIMAL
    assert r.extra["mip_start"]["feasible"]
    assert r.extra["start_value"] <= r.objective + 1e-9
    assert r.extra["start_source"] in ("online algorithm",) + tuple(
        f"list schedule ({k} order)" for k in ORDERS)
