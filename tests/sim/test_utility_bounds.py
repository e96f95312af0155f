"""The certified upper bound on total utility (optsched.sim.utility_bounds): at least the
exact optimum of Hadar's slotted model, at least what every utility-aware policy
achieves, and certified whatever duals the solver returns."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import examples

import optsched
from optsched import Cluster, Instance, Job, Node
from optsched.catalog import shipped_trace
from optsched.cli import main
from optsched.core.job_profiles import Utility
from optsched.errors import InvalidInput, InvalidOption, ModelNotApplicable
from optsched.hadar import assign_utilities
from optsched.sim.bounds import Setting, _data, _grid, certified_lp_bound
from optsched.sim.utility_bounds import _utility_lp, has_utilities, utility_upper_bound
from optsched.solvers import solve_program

REL = 1e-9


def _ge(bound: float, value: float) -> bool:
    return bound >= value * (1 - REL) - 1e-6


def _inst(jobs, gpus=(("a", 2),), slot=10.0) -> Instance:
    nodes = tuple(Node(f"n{i}", {t: c}) for i, (t, c) in enumerate(gpus))
    return Instance(Cluster(nodes), tuple(jobs), slot=slot)


def test_by_hand_two_jobs_one_gpu():
    # two 100 s jobs at t=0 on one GPU, utility 1 until a deadline of 150 s then 0:
    # only one can make it; per-job credits both; the LP credits a completion in
    # [150, 160) at 150 s (the interval's earliest instant, still on time) and sees that
    # the GPU does at most 1.6 jobs' work by 160 s
    u = Utility("step", value=1.0, deadline=150.0, late_value=0.0)
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0}, utility=u),
                  Job("b", 0.0, 1, 100.0, {"a": 1.0}, utility=u)], gpus=(("a", 1),))
    b = utility_upper_bound(inst, step=10.0, window=400.0)
    assert b.by_method["per_job"] == pytest.approx(2.0)
    assert b.by_method["utility_lp"] == pytest.approx(1.6)
    assert b.utility >= 1.0 and b.source == "utility_lp"


@st.composite
def utility_instances(draw):
    two = draw(st.booleans())
    gpus = (("a", draw(st.integers(1, 3))),) + ((("b", draw(st.integers(1, 2))),) if two else ())
    jobs = []
    for i in range(draw(st.integers(1, 5))):
        rate = {"a": draw(st.sampled_from([0.5, 1.0, 2.0]))}
        if two:
            rate["b"] = rate["a"] if draw(st.booleans()) else draw(st.sampled_from([0.25, 1.0]))
        kind = draw(st.sampled_from(["sigmoid", "linear", "step", "constant"]))
        u = {"sigmoid": Utility("sigmoid", gamma1=draw(st.sampled_from([1.0, 3.0])),
                                gamma2=draw(st.sampled_from([0.02, 0.2])),
                                gamma3=draw(st.sampled_from([10.0, 40.0, 80.0]))),
             "linear": Utility("linear", value=draw(st.sampled_from([1.0, 4.0])),
                               slope=draw(st.sampled_from([0.005, 0.02]))),
             "step": Utility("step", value=3.0, deadline=draw(st.sampled_from([20.0, 60.0])),
                             late_value=draw(st.sampled_from([0.0, 0.5]))),
             "constant": Utility("constant", value=2.0)}[kind]
        jobs.append(Job(f"j{i}", draw(st.sampled_from([0.0, 10.0, 25.0])),
                        draw(st.integers(1, gpus[0][1])),
                        draw(st.sampled_from([10.0, 30.0, 60.0])), rate,
                        weight=draw(st.sampled_from([1.0, 2.0])), utility=u))
    return _inst(jobs, gpus=gpus)


@settings(max_examples=examples(30), deadline=None)
@given(utility_instances(), st.sampled_from([None, 10.0]))
def test_bound_above_the_exact_hadar_optimum(inst, step):
    """Hadar's model credits a completion at its slot's end and progress at the slot's
    threshold rate, so its optimum is the utility of a schedule of the setting, measured
    no earlier: the bound is at least it, for any grid."""
    try:
        exact = optsched.solve(inst, model="hadar", method="exact", time_limit=20,
                               mip_start=False)
    except ModelNotApplicable:
        exact = None
    assume(exact is not None and exact.status.value == "optimal")
    b = utility_upper_bound(inst, step=step)
    for method, v in b.by_method.items():
        assert _ge(v, exact.objective), (method, v, exact.objective)
    # the schedule's own utility, completions at the instants the simulator's metrics
    # record, is bounded too
    assert _ge(b.utility, exact.metrics.utility)


def _contended(n: int) -> Instance:
    inst = shipped_trace("gavel-philly-2000", cluster="gavel-108")
    inst = inst.replace(jobs=tuple(dataclasses.replace(j, arrival=j.arrival / 50)
                                   for j in inst.jobs[:n]))
    return assign_utilities(inst, "sigmoid", seed=0)


UTILITY_POLICIES = ("hadar.online", "hadare.online")


@pytest.mark.parametrize("policy", UTILITY_POLICIES)
def test_bound_above_utility_policies_on_a_trace_prefix(policy):
    inst = _contended(30)
    res = optsched.simulate(inst, policy, seed=0, bounds=False)
    b = utility_upper_bound(inst, Setting.of(res.schedule))
    for method, v in b.by_method.items():
        assert _ge(v, res.metrics.utility), (policy, method, v, res.metrics.utility)


@pytest.mark.slow
@pytest.mark.parametrize("trace,cluster,kind", [("gavel-philly-2000", "gavel-108", "sigmoid"),
                                                ("gavel-artifact-15", None, "step"),
                                                ("tiresias-60", None, "linear"),
                                                ("philly", "tiresias-n32g4", "sigmoid")])
def test_bound_above_every_policy_on_shipped_prefixes(trace, cluster, kind):
    inst = assign_utilities(optsched.catalog.read_trace(trace, cluster, jobs=25), kind, seed=0)
    ran = 0
    for name in optsched.policies():
        try:
            res = optsched.simulate(inst, name, seed=0, bounds=False)
        except (ModelNotApplicable, InvalidInput):
            continue
        ran += 1
        b = utility_upper_bound(inst, Setting.of(res.schedule))
        assert _ge(b.utility, res.metrics.utility), (name, b.utility, res.metrics.utility)
    assert ran >= 10


def test_certificate_holds_for_any_duals():
    inst = _contended(30)
    d = _data(inst, Setting())
    H = 8 * float(d.p.mean())
    data = _utility_lp(inst, d, _grid(d, H / 12, H), H).freeze()
    res = solve_program(data)
    y = np.concatenate([np.asarray(res.duals[k.name]).ravel() for k in data.row_blocks])
    exact = certified_lp_bound(data, y)
    assert exact <= res.objective and exact == pytest.approx(res.objective, rel=1e-7)
    rng = np.random.default_rng(0)
    for scale in (1e-6, 1e-2, 1.0):
        v = certified_lp_bound(data, y * (1 + scale * rng.standard_normal(y.size)))
        assert v <= res.objective * (1 - 1e-12) + 1e-12 or v <= res.objective


@pytest.mark.slow
def test_capacity_tightens_a_contended_prefix():
    b = utility_upper_bound(_contended(200), max_columns=30_000)
    assert b.by_method["utility_lp"] < 0.99 * b.by_method["per_job"]
    assert b.source == "utility_lp"


def test_bad_input_is_named():
    inst = _inst([Job("a", 0.0, 1, 100.0, {"a": 1.0})])
    with pytest.raises(InvalidOption, match="utility bound"):
        utility_upper_bound(inst, methods=("interval_lp",))
    with pytest.raises(InvalidOption, match="intervals"):
        utility_upper_bound(inst, intervals=0)
    with pytest.raises(InvalidInput, match="instance.jobs"):
        utility_upper_bound(inst.replace(jobs=()))
    b = utility_upper_bound(inst, max_columns=3)
    assert "utility_lp" in b.skipped and b.source == "per_job"
    assert not has_utilities(inst)


@pytest.mark.slow
def test_simulate_reports_the_utility_gap(capsys, tmp_path):
    inst = _contended(20)
    res = optsched.simulate(inst, "hadar.online", seed=0)
    b, g = res.extra["bounds"], res.extra["gaps"]
    assert b["utility"] >= res.metrics.utility and g["utility"] >= 1.0
    assert g["utility"] == pytest.approx(b["utility"] / res.metrics.utility)
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(inst.to_dict()))
    out = tmp_path / "r.json"
    assert main(["simulate", "--policy", "hadar.online", "--instance", str(path),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "total utility" in text and "of the best possible" in text
    d = json.loads(out.read_text())
    assert d["bounds"]["utility"] == pytest.approx(b["utility"])
    assert d["gaps"]["utility"] == pytest.approx(g["utility"])
    # no utility functions: no utility figure (a weighted count of completed jobs)
    plain = optsched.simulate(inst.replace(jobs=tuple(dataclasses.replace(j, utility=None)
                                                      for j in inst.jobs)), "gavel.fifo")
    assert "utility" not in plain.extra["bounds"]
