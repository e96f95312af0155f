"""AlloX: exact matching vs brute force, ILP on every backend, heuristics vs exact."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import optsched
from optsched import Cluster, Instance, Job, ModelNotApplicable, Node, Status
from optsched.allox import exact, jsq, machines_of, match, online, sjf, sjf_fastest

HEURISTICS = (sjf, sjf_fastest, jsq, online)


def make(ptimes: list[list[float]], machines: list[str], arrivals=None, users=None) -> Instance:
    """Jobs with given processing time per machine *type* (``inf``: cannot run there).

    ``machines`` lists the type of each machine; each machine is its own node.
    """
    types = sorted(set(machines))
    nodes = tuple(Node(f"m{i}", {t: 1}) for i, t in enumerate(machines))
    jobs = []
    for j, row in enumerate(ptimes):
        tp = {t: (100.0 / p if math.isfinite(p) else 0.0) for t, p in zip(types, row)}
        jobs.append(Job(f"J{j + 1}", 0.0 if arrivals is None else arrivals[j], 1, 100.0, tp,
                        user=None if users is None else users[j]))
    return Instance(Cluster(nodes), tuple(jobs))


def brute_force(inst: Instance) -> float:
    """min sum C_j over every assignment of jobs to machines and every order on each."""
    p = machines_of(inst).p
    M, n = p.shape
    best = math.inf
    for perm in itertools.permutations(range(n)):
        for assign in itertools.product(range(M), repeat=n):
            t = np.zeros(M)
            total = 0.0
            for j in perm:
                m = assign[j]
                t[m] += p[m, j]
                total += t[m]
            best = min(best, total)
    return best


def test_talk_example_ratios():
    """AlloX talk: SJF on each free resource is 2.53x worse in mean JCT and 4x in makespan."""
    inst = make([[10, 20], [15, 25], [20, 100], [20, 90]], ["x", "x", "y", "y"])
    opt = exact(inst)
    base = sjf(inst)
    assert opt.status is Status.OPTIMAL
    assert opt.metrics.mean_jct == pytest.approx(21.25)
    # sum C = 85 has ties: the talk's optimum (J3, J4 on X; J1, J2 on Y) has makespan 25,
    # the matching may return another optimum with the same total JCT.
    assert opt.objective == pytest.approx(85)
    assert opt.metrics.makespan <= 30
    assert base.metrics.mean_jct == pytest.approx(53.75)
    assert base.metrics.makespan == pytest.approx(100)
    assert base.metrics.mean_jct / opt.metrics.mean_jct == pytest.approx(2.5294, rel=1e-3)


def test_jsq_example_from_allox_repository():
    inst = make([[40, 50], [40, 50], [40, 80], [40, 80]], ["gpu", "gpu", "cpu", "cpu"])
    # types sort as (cpu, gpu): rows above are (gpu, cpu) -> swap
    inst = make([[50, 40], [50, 40], [80, 40], [80, 40]], ["gpu", "gpu", "cpu", "cpu"])
    assert jsq(inst).metrics.mean_jct == pytest.approx(60)
    assert exact(inst).metrics.mean_jct == pytest.approx(45)


def test_three_jobs_one_machine_spt():
    inst = make([[3], [4], [5]], ["x"])
    res = exact(inst)
    assert res.objective == pytest.approx(3 * 3 + 2 * 4 + 1 * 5)
    assert res.metrics.completion == {"J1": 3, "J2": 7, "J3": 12}


@st.composite
def small_instances(draw, max_jobs=5, max_machines=3):
    n = draw(st.integers(1, max_jobs))
    m = draw(st.integers(1, max_machines))
    types = draw(st.lists(st.sampled_from(["k80", "p100", "v100"]), min_size=m, max_size=m))
    nt = len(set(types))
    rows = []
    for _ in range(n):
        row = draw(st.lists(st.one_of(st.integers(1, 30).map(float), st.just(math.inf)),
                            min_size=nt, max_size=nt))
        if all(math.isinf(x) for x in row):
            row[0] = float(draw(st.integers(1, 30)))
        rows.append(row)
    return make(rows, types)


@given(small_instances())
@example(make([[3, 7], [2, 9], [8, 1], [5, 5], [4, 6], [6, 2]], ["k80", "v100"]))
def test_exact_equals_brute_force(inst):
    assert exact(inst).objective == pytest.approx(brute_force(inst), rel=1e-9)


@given(small_instances(max_jobs=7, max_machines=4))
def test_no_heuristic_beats_exact_and_online_equals_exact(inst):
    opt = exact(inst).objective
    for h in HEURISTICS:
        res = h(inst)
        assert res.schedule is not None and res.metrics.n_completed == inst.n_jobs
        assert res.objective >= opt * (1 - 1e-9), h.__name__
    assert online(inst).objective == pytest.approx(opt, rel=1e-9)


def test_ilp_equals_matching_on_every_backend(backend):
    rng = np.random.default_rng(3)
    rows = rng.integers(1, 40, size=(9, 3)).astype(float).tolist()
    rows[0][1] = math.inf
    inst = make(rows, ["k80", "k80", "p100", "v100"])
    m = exact(inst)
    i = exact(inst, backend=backend, algorithm="ilp")
    assert i.status is Status.OPTIMAL
    assert i.backend == backend
    assert i.objective == pytest.approx(m.objective, rel=1e-6)
    assert i.extra["ilp_objective"] == pytest.approx(m.objective, rel=1e-6)


def test_position_doubling_matches_full_matrix():
    """The certificate-based doubling equals the naive n x (M n) matching."""
    rng = np.random.default_rng(7)
    p = rng.uniform(1, 50, size=(5, 60))
    p[:, :20] *= rng.uniform(1, 10, size=(5, 1))
    omega = np.zeros(5)
    a = np.zeros(60)
    _, fast = match(p, omega, a)
    _, full = match(p, omega, a, k0=60)
    assert fast == pytest.approx(full, rel=1e-12)


def test_online_with_staggered_arrivals_and_fairness_filter():
    rng = np.random.default_rng(11)
    rows = rng.integers(5, 60, size=(12, 2)).astype(float).tolist()
    arrivals = sorted(rng.uniform(0, 100, size=12).tolist())
    users = [f"u{i % 3}" for i in range(12)]
    inst = make(rows, ["k80", "v100", "v100"], arrivals=arrivals, users=users)
    for alpha in (0.1, 0.5, 1.0):
        res = online(inst, alpha=alpha)
        assert res.metrics.n_completed == 12
        assert res.ratio is None
    capped = online(inst, max_jobs=3)
    assert capped.metrics.n_completed == 12


def test_fairness_filter_changes_order():
    """alpha restricts the matching to the users with least progress."""
    rows = [[10.0], [10.0], [10.0], [1.0]]
    inst = make(rows, ["v100"], users=["a", "a", "a", "b"])
    pure = online(inst, alpha=1.0)
    fair = online(inst, alpha=0.5)
    assert pure.metrics.completion["J4"] == pytest.approx(1.0)   # SPT first
    assert fair.objective >= pure.objective


def test_exact_rejects_gangs_and_staggered_arrivals():
    cl = Cluster((Node("n", {"v100": 2}),))
    with pytest.raises(ModelNotApplicable, match="workers"):
        exact(Instance(cl, (Job("a", 0, 2, 10, {"v100": 1}),)))
    inst = make([[1], [2]], ["v100"], arrivals=[0, 5])
    with pytest.raises(ModelNotApplicable, match="arrival"):
        exact(inst)
    assert sjf(inst).metrics.n_completed == 2


def test_solve_dispatch_and_unknown_names():
    inst = make([[3, 4], [5, 1]], ["k80", "v100"])
    assert optsched.solve(inst, model="allox").objective == exact(inst).objective
    assert optsched.solve(inst, model="allox", method="heuristic").method == "online"
    with pytest.raises(optsched.UnknownName, match="allox"):
        optsched.solve(inst, model="alox")
    with pytest.raises(optsched.UnknownName, match="offers"):
        optsched.solve(inst, model="allox", method="magic")
    with pytest.raises(optsched.InvalidOption):
        online(inst, alpha=0)


def test_demo_instance_from_catalog():
    inst = optsched.get_model("allox").demo_instance()
    assert all(j.profile for j in inst.jobs)
    res = exact(inst)
    assert res.status is Status.OPTIMAL
    for h in HEURISTICS:
        assert h(inst).objective >= res.objective * (1 - 1e-9)
