"""HadarE's node-class program: the same optimum as the per-node program (property),
schedules that validate, where it applies, and the LP-rounded start."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples, slotted_utility_instance

from optsched import Cluster, Instance, InvalidOption, Job, Node, Status, validate_schedule
from optsched import Utility as Ut
from optsched.hadare import exact
from optsched.hadare.exact import classes_exact, node_classes


def make(jobs, caps, *, T):
    nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(caps))
    js = tuple(Job(f"J{i}", a, W, E, r, utility=u) for i, (W, E, a, r, u) in enumerate(jobs))
    return Instance(Cluster(nodes), js, slot=1.0, horizon=float(T))


@st.composite
def class_instances(draw):
    """Single-type nodes drawn from few (type, size) shapes, so that classes of two or
    three identical nodes are common; gangs of 1-3 workers, contended."""
    shapes = [("v100", 2), ("k80", 2), ("k80", 3)]
    caps = [dict([draw(st.sampled_from(shapes))]) for _ in range(draw(st.integers(1, 4)))]
    return slotted_utility_instance(draw, caps, max_work=16)


@pytest.mark.slow
@settings(max_examples=examples(25), deadline=None)
@given(inst=class_instances(), kappa=st.sampled_from([0.0, 1.0]),
       objective=st.sampled_from(["utility", "jct", "makespan"]))
def test_classes_optimum_equals_nodes_optimum(inst, kappa, objective):
    """The node-class program (with and without cumulative work rows) has the per-node
    program's optimum, and its wrap-around schedule validates and is worth it."""
    assert classes_exact(inst, [len(inst.cluster.nodes)] * inst.n_jobs, 1.0)
    ref = exact(inst, formulation="nodes", objective=objective, consolidation=kappa,
                mip_gap=1e-9)
    for cuts in (True, False):
        new = exact(inst, formulation="classes", objective=objective, consolidation=kappa,
                    work_cuts=cuts, mip_gap=1e-9)
        assert new.extra["formulation"] == "classes"
        assert new.status is ref.status
        if ref.status is not Status.OPTIMAL:
            continue
        tol = 1e-6 * max(1.0, abs(ref.objective))
        assert new.extra["milp_objective"] == pytest.approx(ref.extra["milp_objective"],
                                                            abs=tol)
        validate_schedule(inst, new.schedule, "hadare")
        # the schedule is worth at least the program's value (completions may only move
        # earlier when read off the schedule)
        if objective == "utility":
            assert new.objective >= new.extra["milp_objective"] - tol
        else:
            assert new.objective <= new.extra["milp_objective"] + tol


def test_wrap_around_splits_a_class_into_copies():
    """Two jobs that together fill three identical nodes of 2 GPUs: one gets 4 GPUs in
    two copies, the other 2, no node over capacity, one copy per node."""
    inst = make([(2, 4.0, 0.0, {"k80": 1.0}, Ut("constant", value=5)),
                 (2, 2.0, 0.0, {"k80": 1.0}, Ut("constant", value=4))],
                [{"k80": 2}] * 3, T=1)
    r = exact(inst)
    assert r.extra["formulation"] == "classes" and r.status is Status.OPTIMAL
    assert r.objective == pytest.approx(9.0)
    validate_schedule(inst, r.schedule, "hadare")
    per_node: dict[str, int] = {}
    for a in r.schedule.allocations:
        per_node[a.node] = per_node.get(a.node, 0) + a.gpus
    assert sum(per_node.values()) == 6 and max(per_node.values()) <= 2


def test_classes_only_where_exact():
    mixed = make([(1, 2.0, 0.0, {"v100": 1.0}, None)], [{"v100": 1, "k80": 1}], T=3)
    assert node_classes(mixed) is None
    assert exact(mixed).extra["formulation"] == "nodes"
    with pytest.raises(InvalidOption, match="formulation"):
        exact(mixed, formulation="classes")
    single = make([(1, 2.0, 0.0, {"v100": 1.0}, None)], [{"v100": 1}, {"v100": 1}], T=3)
    assert exact(single).extra["formulation"] == "classes"
    for kw in ({"copy_efficiency": 0.5}, {"max_copies": 1}):
        assert exact(single, **kw).extra["formulation"] == "nodes"
        with pytest.raises(InvalidOption, match="formulation"):
            exact(single, formulation="classes", **kw)
    with pytest.raises(InvalidOption, match="formulation"):
        exact(single, formulation="racks")


def test_lp_rounded_start_is_feasible_and_keeps_the_optimum():
    inst = make([(2, 6.0, 0.0, {"v100": 2.0, "k80": 1.0}, Ut("linear", value=10, slope=1)),
                 (1, 2.0, 1.0, {"k80": 1.0}, Ut("constant", value=3)),
                 (3, 9.0, 0.0, {"k80": 1.0}, Ut("sigmoid", gamma1=8, gamma2=0.5, gamma3=2))],
                [{"v100": 1}, {"k80": 2}, {"k80": 2}], T=4)
    plain = exact(inst, mip_gap=1e-9)
    warm = exact(inst, lp_start=True, mip_gap=1e-9)
    assert warm.status is Status.OPTIMAL and warm.extra["lp_start_value"] is not None
    assert warm.extra["lp_start_value"] <= plain.objective + 1e-9
    if warm.extra["start_source"].startswith("LP"):
        assert warm.extra["mip_start"]["feasible"]
    assert warm.objective == pytest.approx(plain.objective, rel=1e-9)


@settings(max_examples=examples(10), deadline=None)
@given(inst=class_instances())
def test_list_schedule_start_is_a_feasible_point(inst):
    """Each fork-aware order's list schedule is a point of the node-class program (every
    row and bound holds) whose objective is its utility."""
    import numpy as np

    from optsched.hadar.model import model_slots
    from optsched.hadare.exact import build_program, placed_start
    from optsched.hadare.heuristics import fork_orders, list_schedule_classes
    from optsched.hadare.model import completion_values

    T = model_slots(inst)
    lp, index = build_program(inst, T, formulation="classes", work_cuts=True)
    data = lp.freeze()
    values = completion_values(inst, T, 0.0)
    blocks = tuple(b.name for b in data.var_blocks)
    for jobs in fork_orders(inst, T, values, index["classes"]).values():
        placed = list_schedule_classes(inst, T, values, index["classes"], jobs)
        start, value = placed_start(inst, T, placed, values, index, blocks)
        x = data.start_vector(start)
        act = data.A @ x
        tol = 1e-7
        assert np.all(act >= data.row_lb - tol) and np.all(act <= data.row_ub + tol)
        assert np.all(x >= data.col_lb - tol) and np.all(x <= data.col_ub + tol)
        assert float(data.c @ x) == pytest.approx(value, abs=1e-9)
    r = exact(inst, mip_gap=1e-9)
    if r.status is Status.OPTIMAL:
        assert r.extra["start_value"] <= r.extra["milp_objective"] + 1e-6
