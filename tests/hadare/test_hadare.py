"""HadarE: schedules validate, maximal utilization in every round, HadarE vs Hadar
dominance (and its pinned counterexamples), exact >= heuristic, LP >= exact, backends."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from strategies import examples

import optsched
import optsched.cli
from optsched import Cluster, Instance, InvalidOption, Job, Node, Status, validate_schedule
from optsched import Utility as Ut
from optsched.core.schedule import Allocation, Schedule
from optsched.hadare import (
    exact,
    hadar_replay,
    lp_bound,
    online,
    simulate_hadare,
    simulate_pair,
    utilization_violations,
)

TYPES = ("v100", "p100", "k80")


def make(jobs, caps, *, slot=1.0, T=None, name="t"):
    """``jobs``: (W, E, arrival, {type: rate}, utility); ``caps``: per node {type: n}."""
    nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(caps))
    js = tuple(Job(f"J{i}", a, W, E, r, utility=u) for i, (W, E, a, r, u) in enumerate(jobs))
    return Instance(Cluster(nodes), js, slot=slot, horizon=None if T is None else T * slot,
                    name=name)


@st.composite
def instances(draw, single_type=True, max_jobs=4, max_T=6):
    """Small instances; ``single_type``: every node has one GPU type (the paper's
    testbeds). Utilities stay positive over the horizon (Hadar's L > 0)."""
    n_nodes = draw(st.integers(1, 3))
    caps = []
    for _ in range(n_nodes):
        if single_type:
            caps.append({draw(st.sampled_from(TYPES)): draw(st.integers(1, 3))})
        else:
            ks = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=2, unique=True))
            caps.append({k: draw(st.integers(1, 2)) for k in ks})
    present = sorted({k for c in caps for k in c})
    per_type = {k: sum(c.get(k, 0) for c in caps) for k in present}
    T = draw(st.integers(3, max_T))
    jobs = []
    for _ in range(draw(st.integers(1, max_jobs))):
        usable = draw(st.lists(st.sampled_from(present), min_size=1, unique=True))
        rates = {k: float(draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))) for k in usable}
        W = draw(st.integers(1, min(3, sum(per_type[k] for k in usable))))
        E = float(draw(st.integers(1, 12)))
        arr = float(draw(st.integers(0, T - 2))) + draw(st.sampled_from([0.0, 0.5]))
        kind = draw(st.sampled_from(["constant", "linear", "sigmoid"]))
        v = float(draw(st.integers(1, 20)))
        if kind == "constant":
            u = Ut("constant", value=v)
        elif kind == "linear":
            u = Ut("linear", value=v, slope=v / (4.0 * T))
        else:
            u = Ut("sigmoid", gamma1=v, gamma2=0.5, gamma3=float(draw(st.integers(1, T))))
        jobs.append((W, E, arr, rates, u))
    return make(jobs, caps, T=T)


# --------------------------------------------------------------------------- validity
@given(inst=instances(single_type=False), kappa=st.sampled_from([0.0, 0.5, 2.0]),
       completion=st.sampled_from(["slot", "exact"]),
       F=st.sampled_from([None, 1, 2]))
def test_every_schedule_validates_and_fills_idle_gpus(inst, kappa, completion, F):
    res = online(inst, consolidation=kappa, completion=completion, max_copies=F)
    sched = res.schedule
    assert sched.forking and sched.consolidation == kappa
    validate_schedule(inst, sched, "hadare")  # finalize did too; checked again independently
    # maximal utilization in every round, checked from the schedule alone
    assert utilization_violations(inst, sched, res.extra["admitted"], max_copies=F,
                                  rounds=res.extra["slots"]) == []
    # copies: one node and one type per (job, copy); at most F copies at once
    for a in sched.allocations:
        assert a.node == inst.cluster.nodes[a.copy].name
    starts = sorted({a.start for a in sched.allocations})
    for t in starts:
        live = [a for a in sched.allocations if a.start <= t < a.end]
        for jid in {a.job for a in live}:
            mine = [a for a in live if a.job == jid]
            assert len({a.node for a in mine}) == len(mine)  # one copy of one type per node
            assert all(1 <= a.gpus <= inst.job(jid).workers for a in mine)
            if F is not None:
                assert len(mine) <= F
    # completion = work done (+ slot rounding) + consolidation
    for jid, c in sched.completion.items():
        done = res.extra["done_at"][jid]
        if completion == "exact":
            assert c == pytest.approx(done + kappa)
        else:
            assert done <= c - kappa + 1e-9 and c - kappa - done < inst.slot + 1e-9
    # only admitted jobs ever run
    assert {a.job for a in sched.allocations} <= set(res.extra["admitted"])


def test_property_checker_can_fail():
    inst = make([(1, 4.0, 0.0, {"v100": 1.0}, None), (1, 4.0, 0.0, {"v100": 1.0}, None)],
                [{"v100": 1}, {"v100": 1}], T=6)
    lazy = Schedule((Allocation("J0", 0.0, 4.0, "n0", "v100", 1),
                     Allocation("J1", 0.0, 4.0, "n0", "v100", 1, copy=0)),
                    {"J0": 4.0}, forking=True)
    with pytest.raises(optsched.InvalidSchedule):
        validate_schedule(inst, lazy, "hadare")  # two GPUs on a 1-GPU node
    lazy = Schedule((Allocation("J0", 0.0, 4.0, "n0", "v100", 1),), {"J0": 4.0},
                    forking=True)
    validate_schedule(inst, lazy, "hadare")
    bad = utilization_violations(inst, lazy, ["J0", "J1"])
    # rounds 0..3: node n1 idle while J0 (a second copy) and J1 could use it
    assert {(v["round"], v["job"]) for v in bad} == {(s, j) for s in range(4)
                                                    for j in ("J0", "J1")}
    assert utilization_violations(inst, lazy, ["J0"], max_copies=1) == []


def test_forked_copies_on_the_paper_shape():
    """One job, W=2, on V100 / P100 / K80 nodes: copies on all three, additive rates."""
    inst = make([(2, 30.0, 0.0, {"v100": 3.0, "p100": 2.0, "k80": 1.0},
                  Ut("constant", value=5))],
                [{"v100": 2}, {"p100": 2}, {"k80": 2}], T=10)
    e, h = simulate_hadare(inst), simulate_hadare(inst, forking=False)
    assert h.metrics.completion["J0"] == pytest.approx(5.0)  # 2 x 3 per slot on V100
    assert e.metrics.completion["J0"] == pytest.approx(2.5)  # 2 x (3 + 2 + 1) per slot
    assert {a.copy for a in e.schedule.allocations} == {0, 1, 2}
    assert e.metrics.cru == pytest.approx(1.0)
    assert h.metrics.cru == pytest.approx(2 / 6)


# --------------------------------------------------------------------------- vs Hadar
def _progress_at(inst, sched, jid, t):
    job = inst.job(jid)
    return sum(a.gpus * job.rate(a.gpu_type) * max(0.0, min(a.end, t) - a.start)
               for a in sched.allocations if a.job == jid)


@given(inst=instances(single_type=True))
def test_hadare_dominates_hadar_on_single_type_nodes(inst):
    """Theorem (docs/hadare.md): single-type nodes, kappa = 0, F_j = nodes: same admitted
    set, every admitted job's progress at every round boundary >= Hadar's, so each
    completion <= Hadar's and makespan, mean JCT and utility are at least as good."""
    import optsched.hadar

    e, h = simulate_pair(inst)
    e1 = simulate_hadare(inst)
    assert e1.metrics.completion == e.metrics.completion
    assert e.extra["admitted"] == h.extra["admitted"]
    ce, ch = e.metrics.completion, h.metrics.completion
    assert set(ce) == set(ch) == set(e.extra["admitted"])
    for jid in ch:
        assert ce[jid] <= ch[jid] + 1e-9
        for s in range(int(np.ceil(ch[jid])) + 1):
            pe = min(inst.job(jid).work, _progress_at(inst, e.schedule, jid, s * inst.slot))
            ph = min(inst.job(jid).work, _progress_at(inst, h.schedule, jid, s * inst.slot))
            assert pe >= ph - 1e-9
    if ch:
        assert e.metrics.makespan <= h.metrics.makespan + 1e-9
        assert e.metrics.mean_jct <= h.metrics.mean_jct + 1e-9
        assert e.extra["utility"] >= h.extra["utility"] - 1e-9
    # and against Hadar's own result (slot model): completion slots never later
    hr = optsched.hadar.online(inst, certificate=False)
    es = online(inst)
    for jid, c in hr.metrics.completion.items():
        assert es.metrics.completion[jid] <= c + 1e-9
    assert es.objective >= hr.objective - 1e-9
    if hr.metrics.completion:
        assert es.metrics.makespan <= hr.metrics.makespan + 1e-9


def test_counterexample_cru_is_not_monotone():
    """Forking can lower CRU: J0's gang of V100 + K80 waits for the K80 under Hadar (2
    per slot, 4 GPU-seconds); forked copies do 2 + 1 per slot and finish at 4/3 with
    8/3 GPU-seconds. The makespan is set by J1 (K80 only, arrives at 1.5) in both."""
    inst = make([(2, 4.0, 0.0, {"v100": 2.0, "k80": 1.0}, Ut("constant", value=10)),
                 (1, 1.0, 1.5, {"k80": 1.0}, Ut("constant", value=10))],
                [{"v100": 1}, {"k80": 1}], T=4)
    e, h = simulate_hadare(inst), simulate_hadare(inst, forking=False)
    assert e.metrics.makespan == pytest.approx(h.metrics.makespan) == pytest.approx(3.0)
    assert e.metrics.busy_gpu_seconds == pytest.approx(8 / 3 + 1)
    assert h.metrics.busy_gpu_seconds == pytest.approx(5.0)
    assert e.metrics.cru == pytest.approx(11 / 18)
    assert h.metrics.cru == pytest.approx(5 / 6)
    assert e.metrics.mean_jct < h.metrics.mean_jct  # the jobs still finish no later


def test_counterexample_mixed_type_node_slows_hadare():
    """A node with 1 V100 + 1 K80 and a 2-wide job: Hadar's task-level gang runs both
    (2 x 1.0 per slot); a copy holds one type, so HadarE gets max(1.5, 1.0) per slot
    and the K80 cannot host a second copy on the same node: total time 8/3 > 2."""
    inst = make([(2, 4.0, 0.0, {"v100": 1.5, "k80": 1.0}, Ut("constant", value=10))],
                [{"v100": 1, "k80": 1}], T=4)
    e, h = simulate_hadare(inst), simulate_hadare(inst, forking=False)
    assert h.metrics.makespan == pytest.approx(2.0)
    assert e.metrics.makespan == pytest.approx(8 / 3)
    assert e.extra["released_gpu_rounds"] == 2  # the K80 piece, two slots
    assert utilization_violations(inst, e.schedule, e.extra["admitted"]) == []


def test_counterexample_consolidation_cost():
    """kappa > 0 is paid by every job: with nothing to fork onto, HadarE is later by it."""
    inst = make([(1, 2.0, 0.0, {"v100": 1.0}, Ut("constant", value=10))], [{"v100": 1}],
                T=4)
    e = simulate_hadare(inst, consolidation=0.5)
    h = simulate_hadare(inst, forking=False)
    assert e.metrics.makespan == pytest.approx(h.metrics.makespan + 0.5)
    assert online(inst, consolidation_slots=1).metrics.completion["J0"] == pytest.approx(3.0)


# --------------------------------------------------------------------------- exact
@settings(max_examples=examples(15))
@given(inst=instances(single_type=False, max_jobs=3, max_T=5),
       kappa=st.sampled_from([0.0, 1.0]), F=st.sampled_from([None, 1]))
def test_lp_bound_geq_exact_geq_heuristic(inst, kappa, F):
    h = online(inst, consolidation=kappa, max_copies=F)
    x = exact(inst, consolidation=kappa, max_copies=F)
    lp = lp_bound(inst, consolidation=kappa, max_copies=F)
    assert x.status is Status.OPTIMAL and lp.status is Status.OPTIMAL
    tol = 1e-6 * max(1.0, abs(x.objective))
    assert x.objective >= h.objective - tol - 1e-4 * abs(x.objective)  # MILP gap 1e-4
    assert lp.bound >= x.objective - tol
    assert x.schedule.forking and x.schedule.consolidation == kappa
    assert utilization_violations(inst, h.schedule, h.extra["admitted"], max_copies=F,
                                  rounds=h.extra["slots"]) == []


def test_exact_on_every_backend(backend):
    inst = make([(2, 6.0, 0.0, {"v100": 2.0, "k80": 1.0}, Ut("linear", value=10, slope=1)),
                 (1, 2.0, 1.0, {"k80": 1.0}, Ut("constant", value=3))],
                [{"v100": 1}, {"k80": 2}], T=4)
    r = exact(inst, backend=backend)
    assert r.status is Status.OPTIMAL
    # J0 forks on V100 + K80: 2 + 1 (+1) per slot; best is done in 2 slots (10-2) + 3
    assert r.objective == pytest.approx(11.0, rel=1e-6)
    lp = lp_bound(inst, backend=backend)
    assert lp.bound >= r.objective - 1e-6


def test_makespan_and_jct_objectives():
    inst = make([(2, 6.0, 0.0, {"v100": 2.0, "k80": 1.0}, None),
                 (1, 3.0, 0.0, {"k80": 1.0}, None)],
                [{"v100": 1}, {"k80": 2}], T=6)
    m = exact(inst, objective="makespan")
    j = exact(inst, objective="jct")
    assert m.status is Status.OPTIMAL and j.status is Status.OPTIMAL
    assert m.objective == pytest.approx(m.metrics.makespan)
    # total work 9 on 3 GPUs; J1 runs only on K80 -> 3 slots is a lower bound, reached
    assert m.objective == pytest.approx(3.0)
    assert j.objective == pytest.approx(sum(m_ for m_ in j.metrics.jct.values()))
    h = online(inst)
    assert h.metrics.n_completed == 2
    assert m.objective <= h.metrics.makespan + 1e-9
    assert j.objective <= sum(h.metrics.jct.values()) + 1e-9
    lpm = exact(inst, objective="makespan", relax=True)
    assert lpm.bound <= m.objective + 1e-6
    late = make([(1, 1.0, 5.5, {"k80": 1.0}, None)], [{"k80": 1}], T=6)
    assert exact(late, objective="jct").status is Status.INFEASIBLE


# --------------------------------------------------------------------------- API
def test_options_are_checked():
    inst = make([(1, 2.0, 0.0, {"v100": 1.0}, None)], [{"v100": 1}], T=4)
    for kw in ({"consolidation": -1}, {"consolidation": 1, "consolidation_slots": 1},
               {"consolidation_slots": 0.5}, {"max_copies": 0}, {"max_copies": {"X": 1}},
               {"completion": "late"}, {"forking": "yes"}, {"nonsense": 1}):
        with pytest.raises(InvalidOption):
            online(inst, **kw)
    with pytest.raises(InvalidOption):
        exact(inst, objective="fairness")
    with pytest.raises(InvalidOption):
        hadar_replay(inst, forking=True)
    with pytest.raises(InvalidOption):
        online(inst, hadar_run="not a run")


def test_solve_cli_and_demo(tmp_path, capsys):
    spec = optsched.get_model("hadare")
    inst = spec.demo_instance()
    res = optsched.solve(inst, "hadare", "heuristic")
    assert res.model == "hadare" and res.method == "online" and res.schedule.forking
    path = tmp_path / "i.json"
    inst.to_json(path)
    assert optsched.cli.main(["solve", "hadare", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["model"] == "hadare"
    assert out["objective"] >= res.objective - 1e-6
    assert optsched.cli.main(["solve", "hadare", str(path), "--method", "online",
                              "--option", "consolidation=60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["extra"]["consolidation"] == 60 and out["schedule"]["consolidation"] == 60


@settings(max_examples=examples(10))
@given(inst=instances(single_type=False, max_jobs=3, max_T=5))
def test_exact_makespan_and_jct_never_worse_than_heuristic(inst):
    """The heuristic's slot-mode schedule is feasible for the MILP, so when it completes
    every job the exact makespan / total JCT are no worse (and the LP no higher)."""
    h = online(inst)
    if h.metrics.n_completed < inst.n_jobs:
        return
    for objective, value in (("makespan", h.metrics.makespan),
                             ("jct", sum(j.weight * h.metrics.jct[j.id] for j in inst.jobs))):
        x = exact(inst, objective=objective)
        assert x.status is Status.OPTIMAL
        assert x.objective <= value * (1 + 1e-4) + 1e-6
        assert exact(inst, objective=objective, relax=True).bound <= x.objective + 1e-6


def test_lp_relaxation_meets_optimality_conditions(monkeypatch, backend):
    """The LP relaxation has a dual certificate and complementary slackness on every
    backend."""
    from lp_problems import method_lps

    from optsched.hadare.workload import demo_instance as demo

    assert method_lps(monkeypatch, demo(), "hadare", "bound", backend=backend) == 1


# --------------------------------------------------------------------------- assumption
def _paper_shape():
    return make([(2, 30.0, 0.0, {"v100": 3.0, "p100": 2.0, "k80": 1.0},
                  Ut("constant", value=5))],
                [{"v100": 2}, {"p100": 2}, {"k80": 2}], T=10)


@pytest.mark.parametrize("eff", [1.0, 0.75, 0.5, 0.2])
def test_copy_efficiency_counts_extra_copies_at_e(eff):
    """The main copy (2 V100, 6/s) counts in full, the P100 and K80 copies (4/s and 2/s)
    at e: per round 6 + 6e; the slot completion is the first slot whose end covers 30,
    exactly as the efficiency model (the extra copies run the last e of each round)."""
    inst = _paper_shape()
    res = online(inst, copy_efficiency=eff)
    per_round = 6.0 + 6.0 * eff
    assert res.metrics.completion["J0"] == pytest.approx(np.ceil(30.0 / per_round - 1e-9))
    ex = simulate_hadare(inst, copy_efficiency=eff)
    # progress at every round boundary is the model's, e.g. after the first round
    assert _progress_at(inst, ex.schedule, "J0", 1.0) == pytest.approx(min(30.0, per_round))
    # within a round progress is back-loaded: never earlier than the model's instant (so
    # never below the fork bound), later by less than one round (slot 1 s)
    c = ex.metrics.completion["J0"]
    assert 30.0 / per_round - 1e-9 <= c < 30.0 / per_round + inst.slot
    assert ex.extra["copy_efficiency"] == eff
    if eff < 1:
        assert ex.extra["cut_gpu_seconds"] > 0
    with pytest.raises(InvalidOption):
        online(inst, copy_efficiency=0.0)
    with pytest.raises(InvalidOption):
        online(inst, copy_efficiency=1.5)


@pytest.mark.parametrize("eff", [1.0, 0.75, 0.5, 0.2])
def test_exact_with_copy_efficiency_is_the_heuristics_model(eff):
    """The MILP credits the main copy in full and the others at e: the paper-shape job
    (6/s main + 6/s extra copies) needs ceil(30 / (6 + 6e)) slots, as the heuristic; the
    schedule declares e and validates under it, and not under a smaller e."""
    from dataclasses import replace

    from optsched import InvalidSchedule

    inst = _paper_shape()
    x = exact(inst, objective="makespan", copy_efficiency=eff)
    slots = np.ceil(30.0 / (6.0 + 6.0 * eff) - 1e-9)
    assert x.status is Status.OPTIMAL and x.objective == pytest.approx(slots)
    assert online(inst, copy_efficiency=eff).metrics.makespan == pytest.approx(slots)
    assert x.schedule.copy_efficiency == eff and x.extra["copy_efficiency"] == eff
    assert lp_bound(inst, objective="makespan", copy_efficiency=eff).bound <= slots + 1e-6
    validate_schedule(inst, x.schedule, "hadare")
    lower = eff * 0.5
    if np.ceil(30.0 / (6.0 + 6.0 * lower) - 1e-9) > slots:  # too few slots at e/2
        with pytest.raises(InvalidSchedule, match="iterations"):
            validate_schedule(inst, replace(x.schedule, copy_efficiency=lower), "hadare")
    with pytest.raises(InvalidOption, match="copy_efficiency"):
        exact(inst, copy_efficiency=0.0)


@settings(max_examples=examples(15))
@given(inst=instances(single_type=False, max_jobs=3, max_T=5),
       eff=st.sampled_from([0.3, 0.7]), F=st.sampled_from([None, 2]))
def test_heuristic_never_beats_exact_or_bound_under_copy_efficiency(inst, eff, F):
    """Under e < 1 the heuristic's slot-mode schedule is feasible for the MILP of the same
    e: its utility is at most the exact optimum, which is at most the LP bound; when it
    completes every job, the exact makespan is no larger."""
    h = online(inst, copy_efficiency=eff, max_copies=F)
    x = exact(inst, copy_efficiency=eff, max_copies=F)
    lp = lp_bound(inst, copy_efficiency=eff, max_copies=F)
    assert x.status is Status.OPTIMAL and lp.status is Status.OPTIMAL
    tol = 1e-6 * max(1.0, abs(x.objective))
    assert x.objective >= h.objective - tol - 1e-4 * abs(x.objective)  # MILP gap 1e-4
    assert lp.bound >= x.objective - tol
    assert x.schedule.copy_efficiency == eff
    validate_schedule(inst, x.schedule, "hadare")
    if h.metrics.n_completed == inst.n_jobs:
        m = exact(inst, objective="makespan", copy_efficiency=eff, max_copies=F)
        assert m.status is Status.OPTIMAL
        assert m.objective <= h.metrics.makespan * (1 + 1e-4) + 1e-6


@given(inst=instances(single_type=False), eff=st.sampled_from([1.0, 0.6, 0.3]),
       F=st.sampled_from([None, 1, 2]))
@settings(max_examples=examples(30))
def test_efficiency_schedules_validate_and_never_beat_the_fork_bound(inst, eff, F):
    from optsched.hadare.bounds import time_bounds

    res = simulate_hadare(inst, copy_efficiency=eff, max_copies=F)
    validate_schedule(inst, res.schedule, "hadare")  # raises on a violation
    fork = time_bounds(inst, forking=True, copy_efficiency=eff, max_copies=F)
    arrival = {j.id: j.arrival for j in inst.jobs}
    for jid, c in res.metrics.completion.items():
        j = inst.job_index[jid]
        assert c - arrival[jid] >= fork.fastest[j] * (1 - 1e-9)


def test_no_fork_bound():
    """Gantt-free lower bounds: the critical path of the paper-shape job (30 / (2 x 3) = 5
    s) bounds every non-forking schedule and is beaten by forking (2.5 s, above the fork
    bound 30 / 18); the load bound binds when many jobs share few GPUs."""
    from optsched.hadare.bounds import time_bounds

    inst = _paper_shape()
    nf, fk = time_bounds(inst), time_bounds(inst, forking=True)
    assert nf.makespan == pytest.approx(5.0) and nf.critical_path == pytest.approx(5.0)
    assert fk.makespan == pytest.approx(30.0 / 18.0)
    assert time_bounds(inst, forking=True, copy_efficiency=0.5).critical_path == \
        pytest.approx(30.0 / 12.0)
    e, h = simulate_hadare(inst), simulate_hadare(inst, forking=False)
    assert h.metrics.makespan >= nf.makespan - 1e-9
    assert fk.makespan <= e.metrics.makespan < nf.makespan
    # four 1-GPU jobs of 10 s on 2 GPUs: load 4 x 10 / 2 = 20 s > critical path 10 s
    many = make([(1, 10.0, 0.0, {"v100": 1.0}, None)] * 4, [{"v100": 2}])
    b = time_bounds(many)
    assert b.load == pytest.approx(20.0) and b.makespan == pytest.approx(20.0)
    assert b.mean_jct == pytest.approx(10.0)
    with pytest.raises(InvalidOption):
        time_bounds(many, copy_efficiency=0)


@given(inst=instances(single_type=False))
@settings(max_examples=examples(25))
def test_no_fork_bound_holds_for_non_forking_policies(inst):
    from optsched.hadar.policy import HadarPolicy
    from optsched.hadare.bounds import time_bounds
    from optsched.sim import simulate

    open_ended = inst.replace(horizon=None)
    b = time_bounds(open_ended)
    try:
        hadar = simulate(open_ended, HadarPolicy(open_ended), progress=False)
    except InvalidOption as exc:  # utilities vanish in the window: outside Hadar's model
        assert exc.path == "L"
        reject()
    for res in (simulate_hadare(inst, forking=False), hadar):
        m = res.metrics
        if m.n_completed == inst.n_jobs:
            assert m.makespan >= b.makespan * (1 - 1e-9)
            assert m.mean_jct >= b.mean_jct * (1 - 1e-9)


def test_fill_ranks_floor_prices_without_nan():
    """Prices that underflowed to zero sit at the float floor, so progress per price is
    +inf for every bucket: the fill still gives each idle GPU, with no inf - inf in its
    tolerance."""
    from optsched.hadar.model import build_model
    from optsched.hadare.policy import fill_idle_gpus

    inst = make([(1, 8e3, 0.0, {"v100": 2e3, "k80": 1e3}, Ut("constant", value=1)),
                 (1, 8e3, 0.0, {"v100": 2e3, "k80": 1e3}, Ut("constant", value=1))],
                [{"v100": 1}, {"k80": 1}], T=8)
    m = build_model(inst)
    idle = m.bucket_cap.copy()
    copies: dict = {}
    with np.errstate(all="raise"):
        given = fill_idle_gpus(m, 0, [0, 1], copies, idle, m.E.copy(), np.ones(2),
                               np.zeros(idle.size))
    assert given == 2 and idle.sum() == 0
    # one copy each (F = 1): both jobs run
    assert copies == {0: {0: [0, 1]}, 1: {1: [1, 1]}}


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fill_gives_the_gpus_the_plain_greedy_gives(seed):
    """The vectorised fill (scores kept up to date per grant) takes the same grants, in
    the same order of preference, as the plain greedy that scores every pair afresh
    (tests/hadare/reference_fill.py), on random clusters, copies, prices and needs."""
    from reference_fill import reference_fill

    from optsched.hadar.model import build_model
    from optsched.hadare.policy import fill_idle_gpus

    rng = np.random.default_rng(seed)
    types = ["k80", "p100", "v100"]
    caps = [{t: int(rng.integers(1, 5)) for t in types}]  # every type somewhere
    caps += [{t: int(rng.integers(1, 5)) for t in types if rng.random() < 0.7} or {"k80": 2}
             for _ in range(int(rng.integers(1, 4)))]
    jobs = [(int(rng.integers(1, 4)), float(rng.uniform(1e3, 2e4)), 0.0,
             {t: float(rng.choice([0.0, 1.0, 2.0, 3.0])) or 0.5 for t in types},
             Ut("constant", value=1)) for _ in range(int(rng.integers(2, 7)))]
    m = build_model(make(jobs, caps, slot=60.0, T=50))
    n = m.n_jobs
    eligible = sorted(rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).tolist())
    F = rng.integers(1, 4, n).astype(float)
    rem = m.E * rng.uniform(0.0, 1.0, n)
    rem[rng.random(n) < 0.2] = 0.0
    price = (rng.choice([1.0, 2.0, 0.5, 1e-320], size=m.bucket_cap.size)
             if rng.random() < 0.8 else None)
    eff = float(rng.choice([1.0, 0.8]))
    idle = m.bucket_cap.copy()
    copies: dict = {}
    if rng.random() < 0.5 and eligible:  # a copy held already
        j, b = eligible[0], 0
        g = int(min(idle[b], m.W[j]))
        copies[j] = {int(m.bucket_node[b]): [b, g]}
        idle[b] -= g
    idle2, copies2 = idle.copy(), {j: {h: list(v) for h, v in c.items()}
                                   for j, c in copies.items()}
    got = fill_idle_gpus(m, 0, eligible, copies, idle, rem, F, price, eff)
    want = reference_fill(m, eligible, copies2, idle2, rem, F, price, eff)
    assert got == want
    assert copies == copies2
    assert np.array_equal(idle, idle2)
