"""Salus: lane safety, exact MILP vs brute force, heuristics vs exact, the FFD bound."""

from __future__ import annotations

import pytest

from optsched import (
    Allocation,
    Cluster,
    Instance,
    InvalidInstance,
    Job,
    Node,
    Schedule,
    validate_schedule,
)
from optsched.core.instance import instance_json_schema


# ------------------------------------------------------------------ core: compute_share
def test_compute_share_field_round_trip_and_checks():
    j = Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.25)
    d = j.to_dict()
    assert d["compute_share"] == 0.25
    assert Job.from_dict(d) == j
    assert "compute_share" not in Job("b", 0.0, 1, 10.0, {"v100": 1.0}).to_dict()
    assert "compute_share" in instance_json_schema()["$defs"]["job"]["properties"]
    for bad in (0.0, 1.5, -1.0, "x"):
        with pytest.raises(InvalidInstance, match="compute_share"):
            Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=bad)


def test_validator_progress_is_capped_by_compute_share():
    """A job with u = 0.5 runs at full speed on half a GPU, and no faster on a whole one."""
    cl = Cluster((Node("n", {"v100": 1}),))
    inst = Instance(cl, (Job("a", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.5),
                         Job("b", 0.0, 1, 10.0, {"v100": 1.0}, compute_share=0.5)))
    half = Schedule((Allocation("a", 0, 10, "n", "v100", 1, share=0.5),
                     Allocation("b", 0, 10, "n", "v100", 1, share=0.5)),
                    {"a": 10, "b": 10}, sharing=True)
    assert validate_schedule(inst, half, "salus").done == pytest.approx({"a": 10.0, "b": 10.0})
    quarter = Schedule((Allocation("a", 0, 10, "n", "v100", 1, share=0.25),), {"a": 10},
                       sharing=True)
    with pytest.raises(Exception, match="iterations"):
        validate_schedule(inst, quarter, "salus")   # 0.25 / 0.5 of the speed: 5 of 10 iterations
    whole = Schedule((Allocation("a", 0, 9, "n", "v100", 1),), {"a": 9})
    with pytest.raises(Exception, match="iterations"):
        validate_schedule(inst, whole, "salus")     # a whole GPU is no faster than u of it
    plain = Instance(cl, (Job("c", 0.0, 1, 10.0, {"v100": 1.0}),))
    s = Schedule((Allocation("c", 0, 20, "n", "v100", 1, share=0.5),), {"c": 20},
                 sharing=True)
    # unchanged: s * rate
    assert validate_schedule(plain, s, "salus").done["c"] == pytest.approx(10.0)


# ------------------------------------------------------------------ Salus model
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from strategies import examples  # noqa: E402

import optsched  # noqa: E402
from optsched import GpuMemory, ModelNotApplicable, Status  # noqa: E402
from optsched.errors import InvalidOption  # noqa: E402
from optsched.salus import (  # noqa: E402
    GpuLanes,
    exact,
    ff_gpu_bound,
    ffd,
    footprints,
    inference_models,
    lane_manager,
    lpt,
    training_job,
)
from optsched.salus.model import persistent_from_peaks, salus_view  # noqa: E402

HEURISTICS = (lane_manager, ffd, lpt)
SENSE = {"makespan": "min", "admitted": "max", "gpus": "min"}


def make(jobs, gpus=(16.0,), horizon=None):
    """``jobs``: tuples (P MB, T MB, iterations, seconds/iteration, u); ``gpus``: GB each."""
    nodes = tuple(Node(f"g{k}", {"v100": 1}, gpu_memory={"v100": m}) for k, m in
                  enumerate(gpus))
    js = tuple(Job(f"j{i}", 0.0, 1, float(n), {"v100": 1.0 / d}, memory=GpuMemory(P, T),
                   compute_share=u) for i, (P, T, n, d, u) in enumerate(jobs))
    return Instance(Cluster(nodes), js, horizon=horizon)


def lanes_of(res):
    """Plan of a result as {gpu index: [[job ids]...]} with the lane memory it needs."""
    return res.extra["plan"]


def independent_check(inst, res):
    """Memory safety of a result's plan, recomputed from the instance only."""
    jobs = {j.id: j for j in inst.jobs}
    mems = [n.gpu_memory["v100"] * 1024 for n in inst.cluster.nodes for _ in range(n.gpus["v100"])]
    seen = set()
    for g, lanes in enumerate(lanes_of(res)):
        total = 0.0
        for lane in lanes:
            assert lane, "empty lane reported"
            P = [jobs[j].memory.persistent for j in lane]
            T = [jobs[j].memory.ephemeral for j in lane]
            total += sum(P) + max(T)
            assert not seen & set(lane)
            seen |= set(lane)
        assert total <= mems[g] * (1 + 1e-9), (g, total, mems[g])
    # every GPU's jobs in the schedule match the plan, and shares never exceed u
    for a in res.schedule.allocations:
        assert a.share <= (jobs[a.job].compute_share or 1.0) + 1e-12
    return seen


def fluid_makespan(inst, lanes_by_gpu):
    """max over GPUs of max(max lane serial work, compute work) (the model's makespan)."""
    out = 0.0
    for lanes in lanes_by_gpu:
        jobs = [inst.jobs[i] for lane in lanes for i in lane]
        if not jobs:
            continue
        serial = max(sum(inst.jobs[i].work / inst.jobs[i].throughput["v100"] for i in lane)
                     for lane in lanes if lane)
        work = sum(j.work / j.throughput["v100"] * (j.compute_share or 1.0) for j in jobs)
        out = max(out, serial, work)
    return out


def set_partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in set_partitions(rest):
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]
        yield [[first]] + p


def brute_force(inst, objective):
    """Best objective over every assignment (GPU or none) and lane partition per GPU."""
    n = inst.n_jobs
    mems = [nd.gpu_memory["v100"] * 1024 for nd in inst.cluster.nodes]
    G = len(mems)
    choices = range(-1, G) if objective == "admitted" else range(G)
    best = None
    for assign in itertools.product(choices, repeat=n):
        per = [[i for i in range(n) if assign[i] == g] for g in range(G)]
        for parts in itertools.product(*(list(set_partitions(p)) for p in per)):
            ok = True
            for g, lanes in enumerate(parts):
                need = sum(sum(inst.jobs[i].memory.persistent for i in ln)
                           + max(inst.jobs[i].memory.ephemeral for i in ln) for ln in lanes)
                ok &= need <= mems[g] * (1 + 1e-12)
            if not ok:
                continue
            mk = fluid_makespan(inst, parts)
            if inst.horizon is not None and mk > inst.horizon * (1 + 1e-9):
                continue
            val = {"makespan": mk, "admitted": float(sum(a >= 0 for a in assign)),
                   "gpus": float(sum(1 for p in per if p))}[objective]
            if best is None or (val < best if SENSE[objective] == "min" else val > best):
                best = val
    return best


@st.composite
def tiny(draw, max_jobs=4, max_gpus=2, horizon=False):
    n = draw(st.integers(1, max_jobs))
    G = draw(st.integers(1, max_gpus))
    gpus = tuple(float(draw(st.sampled_from([2, 3, 4]))) for _ in range(G))
    jobs = []
    for _ in range(n):
        P = float(draw(st.integers(0, 12)) * 100)
        T = float(draw(st.integers(1, 16)) * 100)
        jobs.append((P, T, float(draw(st.integers(1, 9)) * 10), 1.0,
                     draw(st.sampled_from([0.25, 0.5, 1.0]))))
    hz = float(draw(st.integers(5, 40)) * 10) if horizon else None
    return make(jobs, gpus, horizon=hz)


def _solve_or_none(inst, objective, **kw):
    res = exact(inst, objective=objective, **kw)
    if res.status is Status.INFEASIBLE:
        return res, None
    assert res.status is Status.OPTIMAL, res.message
    return res, res.objective


# ------------------------------------------------------------------ lanes ever formed
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3000), st.integers(0, 6000)),
                min_size=1, max_size=40), st.sampled_from([4096.0, 8192.0, 16384.0]))
def test_every_lane_ever_formed_is_safe(ops, memory):
    """Random arrivals and departures through Salus' lane manager; check after each op."""
    gpu = GpuLanes(memory)
    live: list[str] = []
    for k, (leave, P, T) in enumerate(ops):
        if leave and live:
            gpu.release(live.pop(P % len(live)))
        elif P + T > 0:
            lane = gpu.best_fit_for(f"x{k}", float(P), float(T))
            if lane is not None:
                live.append(f"x{k}")
                if len(lane.jobs) == 1:
                    assert lane.capacity == P + T     # new lanes are exactly P + T
        total = 0.0
        for lane in gpu.lanes:           # independent re-check of the safety condition
            assert lane.jobs, "an empty lane was kept"
            ps = [p for p, _ in lane.jobs.values()]
            ts = [t for _, t in lane.jobs.values()]
            assert sum(ps) + max(ts) <= lane.capacity * (1 + 1e-12)
            total += lane.capacity
        assert total <= memory * (1 + 1e-12)
        assert sorted(j for lane in gpu.lanes for j in lane.jobs) == sorted(live)


# ------------------------------------------------------------------ exact vs brute force
@settings(max_examples=examples(12))
@given(tiny())
def test_exact_equals_brute_force_every_objective(inst):
    for objective in ("makespan", "admitted", "gpus"):
        res, val = _solve_or_none(inst, objective)
        bf = brute_force(inst, objective)
        if bf is None:
            assert val is None, objective
            continue
        assert val == pytest.approx(bf, rel=1e-6, abs=1e-6), objective
        independent_check(inst, res)
        if objective == "makespan":   # the validator-checked fluid schedule attains it
            assert res.metrics.makespan == pytest.approx(val, rel=1e-6)


@settings(max_examples=examples(8))
@given(tiny(max_jobs=3, horizon=True))
def test_exact_equals_brute_force_with_horizon(inst):
    for objective in ("admitted", "gpus"):
        res, val = _solve_or_none(inst, objective)
        bf = brute_force(inst, objective)
        assert (val is None) == (bf is None), objective
        if bf is not None:
            assert val == pytest.approx(bf, rel=1e-6, abs=1e-6), objective
            # nothing admitted (no job fits any GPU) has no makespan
            if res.metrics.makespan is not None:
                assert res.metrics.makespan <= inst.horizon * (1 + 1e-9)


# ------------------------------------------------------------------ exact vs heuristics
@settings(max_examples=examples(15))
@given(tiny(max_jobs=6, max_gpus=3))
def test_no_heuristic_beats_exact(inst):
    for objective in ("makespan", "admitted", "gpus"):
        res, val = _solve_or_none(inst, objective)
        for h in HEURISTICS:
            r = h(inst, objective=objective)
            if not r.success:
                assert r.status in (Status.INFEASIBLE, Status.NOT_FOUND), r.status
                assert r.schedule is None
                # a heuristic's "infeasible" is a proof: the exact model agrees
                assert r.status is Status.NOT_FOUND or val is None, (h.__name__, objective)
                continue
            assert val is not None, (h.__name__, objective)   # exact found it infeasible
            independent_check(inst, r)
            if SENSE[objective] == "min":
                assert r.objective >= val * (1 - 1e-6) - 1e-9, (h.__name__, objective)
            else:
                assert r.objective <= val + 1e-9, (h.__name__, objective)
            for realize in ("serial",):
                s = h(inst, objective=objective, realize=realize)
                if objective == "makespan":
                    assert s.metrics.makespan >= val * (1 - 1e-6)


# ------------------------------------------------------------------ the horizon
def latest_end(res) -> float:
    """When the result's last allocation ends (its schedule, not its own makespan)."""
    return max((a.end for a in res.schedule.allocations), default=0.0)


def test_heuristics_honour_the_horizon_pinned():
    """One 1 GB GPU, two jobs of P = T = 100 MB and 100 s alone, horizon 150 s.

    Memory takes both (one lane: 300 MB), but with u = 1 they need 200 s of compute:
    only one job fits the horizon.
    """
    inst = make([(100.0, 100.0, 100.0, 1.0, None)] * 2, (1.0,), horizon=150.0)
    assert exact(inst, objective="admitted").objective == 1
    for objective in ("makespan", "gpus"):
        assert exact(inst, objective=objective).status is Status.INFEASIBLE
    for h in HEURISTICS:
        for realize in ("fluid", "serial"):
            r = h(inst, objective="admitted", realize=realize)
            assert r.success and r.objective == 1 and r.extra["admitted"] == 1, h.__name__
            assert r.metrics.makespan == pytest.approx(100.0)
            assert latest_end(r) <= 150.0
            assert r.extra["horizon_refused"] == ["j1"]
            for objective in ("makespan", "gpus"):
                r = h(inst, objective=objective, realize=realize)
                # each job alone meets the horizon: the rule's failure, not a proof
                assert r.status is Status.NOT_FOUND and r.schedule is None, h.__name__
                assert "'j1'" in r.message and "horizon 150 s" in r.message, r.message
                assert "200 s" in r.message, r.message
    # no horizon: both jobs fit as before
    free = inst.replace(horizon=None)
    for h in HEURISTICS:
        assert h(free, objective="admitted").objective == 2
        assert h(free).objective == pytest.approx(200.0)


@st.composite
def timed(draw):
    """A tiny instance with a horizon that binds: a fraction of the total serial work."""
    inst = draw(tiny(max_jobs=5, max_gpus=2))
    total = sum(j.work / j.throughput["v100"] for j in inst.jobs)
    frac = draw(st.sampled_from([0.25, 0.4, 0.6, 0.8, 1.0, 1.5]))
    return inst.replace(horizon=round(frac * total, 3))


@settings(max_examples=examples(25))
@given(timed())
def test_no_heuristic_ends_after_the_horizon(inst):
    """Every heuristic result ends within the horizon; exact admits at least as many."""
    best = {o: _solve_or_none(inst, o)[1] for o in ("admitted", "makespan", "gpus")}
    assert best["admitted"] is not None
    for h in HEURISTICS:
        for realize in ("fluid", "serial"):
            for objective in ("admitted", "makespan", "gpus"):
                r = h(inst, objective=objective, realize=realize)
                if not r.success:
                    assert r.status in (Status.INFEASIBLE, Status.NOT_FOUND)
                    assert objective != "admitted"
                    # "infeasible" is proved: no plan within the horizon exists
                    assert r.status is Status.NOT_FOUND or best[objective] is None
                    continue
                independent_check(inst, r)
                assert latest_end(r) <= inst.horizon * (1 + 1e-9), (h.__name__, realize)
                assert (r.metrics.makespan or 0.0) <= inst.horizon * (1 + 1e-9)
                if objective == "admitted":
                    assert r.objective <= best["admitted"] + 1e-9, (h.__name__, realize)
                else:   # a plan within the horizon exists, so exact is feasible
                    assert best[objective] is not None, (h.__name__, objective)
                    assert r.objective >= best[objective] * (1 - 1e-6) - 1e-9


# ------------------------------------------------------------------ the FF bound
@st.composite
def identical_gpus(draw):
    n = draw(st.integers(1, 6))
    jobs = [(float(draw(st.integers(0, 20)) * 100), float(draw(st.integers(1, 30)) * 100),
             10.0, 1.0, 1.0) for _ in range(n)]
    return make(jobs, (4.0,) * n)


@settings(max_examples=examples(20))
@given(identical_gpus(), st.sampled_from(["decreasing", "fifo"]))
def test_first_fit_gpu_bound_holds(inst, order):
    view = salus_view(inst)
    M = float(view.memory[0])
    jobs = [j for j in inst.jobs if j.memory.peak <= M]
    if len(jobs) < inst.n_jobs:
        assert ffd(inst, objective="gpus", order=order).status is Status.INFEASIBLE
        return
    k = ffd(inst, objective="gpus", order=order).objective
    opt = exact(inst, objective="gpus").objective
    bound = ff_gpu_bound(view)
    tmax = max(j.memory.ephemeral for j in inst.jobs)
    if bound is not None:
        assert k <= bound
        assert k <= 2 * opt / (1 - tmax / M) + 1 + 1e-9
    assert opt >= math.ceil((sum(j.memory.persistent for j in inst.jobs) + tmax) / M - 1e-9)


def test_first_fit_in_arbitrary_order_has_no_constant_ratio():
    """Alternating (eps, theta M) and ((1 - theta) M - eps, 0): FF opens one GPU per pair."""
    M, theta, pairs, eps = 1024.0, 0.9, 5, 1.0
    jobs = []
    for _ in range(pairs):
        jobs.append((eps, theta * M, 10.0, 1.0, 1.0))
        jobs.append(((1 - theta) * M - eps, 0.0, 10.0, 1.0, 1.0))
    inst = make(jobs, (1.0,) * (2 * pairs))
    ff = ffd(inst, objective="gpus", order="fifo")
    opt = exact(inst, objective="gpus")
    assert ff.objective == pairs
    assert opt.objective == 1 + math.ceil(pairs * ((1 - theta) * M - eps) / M)   # = 2
    assert ff.objective <= ff_gpu_bound(salus_view(inst))
    # the lane manager behaves like FF here; and FFD (decreasing) finds the optimum
    assert lane_manager(inst, objective="gpus").objective == pairs
    assert ffd(inst, objective="gpus").objective == opt.objective


def test_lane_manager_unbounded_against_one_lane():
    """Jobs (eps, M/3): Salus gives each its own lane (3 per GPU); one lane holds them all."""
    jobs = [(4.0, 1024 / 3 - 5, 10.0, 1.0, 1.0) for _ in range(12)]
    inst = make(jobs, (1.0,) * 4)
    assert lane_manager(inst, objective="gpus").objective == 4
    assert exact(inst, objective="gpus").objective == 1
    assert ffd(inst, objective="gpus").objective == 1


# ------------------------------------------------------------------ lanes and parallelism
@settings(max_examples=examples(10))
@given(tiny(max_jobs=4, max_gpus=2))
def test_with_u_one_extra_lanes_never_help(inst):
    inst = inst.replace(jobs=tuple(Job(j.id, 0.0, 1, j.work, dict(j.throughput),
                                       memory=j.memory) for j in inst.jobs))
    one = exact(inst, lanes=1)
    many = exact(inst)
    if one.status is Status.INFEASIBLE:
        assert many.status is Status.INFEASIBLE   # more lanes need more memory, never less
        return
    assert many.objective == pytest.approx(one.objective, rel=1e-6)


def test_lanes_buy_parallelism_only_when_u_below_one():
    jobs = [(500.0, 1500.0, 100.0, 1.0, 0.5), (500.0, 1500.0, 100.0, 1.0, 0.5)]
    inst = make(jobs, (16.0,))
    assert exact(inst, lanes=1).objective == pytest.approx(200.0)
    two = exact(inst)
    assert two.objective == pytest.approx(100.0)
    assert two.extra["lanes_per_gpu"] == [2]
    # not enough memory for two ephemeral peaks: back to one lane
    tight = make(jobs, (2500 / 1024,))
    assert exact(tight).objective == pytest.approx(200.0)
    # u = 1: two lanes would not help, the model agrees
    full = make([(500.0, 1500.0, 100.0, 1.0, 1.0)] * 2, (16.0,))
    assert exact(full).objective == pytest.approx(200.0)


def test_serial_realisation_is_valid_and_finishes_jobs_one_by_one():
    jobs = [(100.0, 100.0, 10.0, 1.0, 0.5), (100.0, 100.0, 30.0, 1.0, 0.5),
            (100.0, 100.0, 20.0, 1.0, 1.0)]
    inst = make(jobs, (16.0,))
    fl = exact(inst)
    se = exact(inst, realize="serial")
    assert fl.objective == se.objective                   # same plan, same model objective
    assert se.metrics.makespan >= fl.metrics.makespan - 1e-9
    assert len(set(se.metrics.completion.values())) > 1
    assert se.metrics.mean_jct <= fl.metrics.mean_jct + 1e-9


def test_every_backend_agrees(backend):
    jobs = [(300.0, 900.0, 50.0, 1.0, 0.5), (200.0, 1200.0, 70.0, 1.0, 0.25),
            (800.0, 400.0, 30.0, 1.0, 1.0), (100.0, 2000.0, 40.0, 1.0, 0.5)]
    inst = make(jobs, (3.0, 2.0))
    ref = {o: exact(inst, objective=o).objective for o in ("makespan", "admitted", "gpus")}
    for o, v in ref.items():
        r = exact(inst, objective=o, backend=backend)
        assert r.status is Status.OPTIMAL and r.backend == backend
        assert r.objective == pytest.approx(v, rel=1e-6)


# ------------------------------------------------------------------ data, API, errors
def test_footprints_from_workloads():
    fp = footprints()
    assert len(fp) == 11
    r50 = fp["resnet50"]
    assert 0 < r50.persistent < min(r50.peak.values())
    assert all(0 < u <= 1 for f in fp.values() for u in f.compute_share.values())
    assert persistent_from_peaks([25, 50, 75], [200 + 10 * b for b in (25, 50, 75)]) == \
        pytest.approx(200.0)
    j = training_job("resnet50_50_5min", "a")
    assert j.memory.peak == pytest.approx(4008.2)
    assert j.work == 1332 and 1 / j.throughput["v100"] == pytest.approx(321.565 / 1332)
    assert len(inference_models()) == 13


def test_least_squares_line_is_numpys_fit_and_refuses_a_point():
    """The closed-form fit agrees with ``np.polyfit`` to rounding, is exact on a line,
    and names its input when ``x`` holds one value or ``y`` another length."""
    from optsched.salus.model import least_squares_line

    rng = np.random.default_rng(5)
    for _ in range(20):
        x = rng.choice(np.arange(1.0, 257.0), size=int(rng.integers(2, 8)), replace=False)
        y = rng.random(x.size) * 1e4
        want = np.polyfit(x, y, 1)
        assert least_squares_line(x, y) == pytest.approx(tuple(want), rel=1e-9, abs=1e-9)
    assert least_squares_line([1, 2, 4], [5, 7, 11]) == (2.0, 3.0)
    for x, y in (([3, 3, 3], [1, 2, 3]), ([1, 2], [1, 2, 3])):
        with pytest.raises(ModelNotApplicable, match="x"):
            least_squares_line(x, y)


def test_solve_dispatch_cli_and_errors(tmp_path, capsys):
    from optsched.cli import main

    spec = optsched.get_model("salus")
    inst = spec.demo_instance()
    ex = optsched.solve(inst, model="salus")
    assert ex.status is Status.OPTIMAL
    assert optsched.solve(inst, model="salus", method="heuristic").method == "lane_manager"
    for h in HEURISTICS:
        assert h(inst).objective >= ex.objective * (1 - 1e-6)
    path = tmp_path / "inst.json"
    inst.to_json(path)
    assert main(["solve", "salus", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["objective"] == pytest.approx(ex.objective, rel=1e-6)
    assert main(["solve", "salus", str(path), "--json", "--option", "objective=gpus"]) == 0
    assert json.loads(capsys.readouterr().out)["objective"] == 1
    with pytest.raises(InvalidOption):
        exact(inst, objective="speed")
    with pytest.raises(InvalidOption):
        exact(inst, lanes=0)
    cl = Cluster((Node("n", {"v100": 2}, gpu_memory={"v100": 16.0}),))
    with pytest.raises(ModelNotApplicable, match="workers"):
        exact(Instance(cl, (Job("a", 0, 2, 10, {"v100": 1}, memory=GpuMemory(1, 1)),)))
    with pytest.raises(ModelNotApplicable, match="memory"):
        lane_manager(Instance(cl, (Job("a", 0, 1, 10, {"v100": 1}),)))
    bare = Cluster((Node("n", {"v100": 1}),))
    with pytest.raises(ModelNotApplicable, match="gpu_memory"):
        ffd(Instance(bare, (Job("a", 0, 1, 10, {"v100": 1}, memory=GpuMemory(1, 1)),)))
    big = make([(20000.0, 1.0, 1.0, 1.0, 1.0)])
    assert exact(big).status is Status.INFEASIBLE
    assert lane_manager(big).status is Status.INFEASIBLE
    assert exact(big, objective="admitted").objective == 0
    assert np.isfinite(ex.bound)


# ------------------------------------------------------------------ lanes over time
from optsched.salus.policy import MODES, POLICIES, simulate_lanes  # noqa: E402


@st.composite
def online(draw):
    n = draw(st.integers(1, 7))
    G = draw(st.integers(1, 2))
    nodes = tuple(Node(f"g{k}", {"v100": 1}, gpu_memory={"v100": 4.0}) for k in range(G))
    jobs = []
    for i in range(n):
        P = float(draw(st.integers(0, 15)) * 100)
        T = float(draw(st.integers(1, 25)) * 100)
        jobs.append(Job(f"j{i}", float(draw(st.integers(0, 5)) * 10), 1,
                        float(draw(st.integers(1, 8)) * 10), {"v100": 1.0},
                        memory=GpuMemory(P, T),
                        compute_share=draw(st.sampled_from([0.25, 0.5, 1.0]))))
    return Instance(Cluster(nodes), tuple(jobs))


@settings(max_examples=examples(15))
@given(online())
def test_simulated_lanes_never_oversubscribe_memory(inst):
    mem = 4.0 * 1024
    jobs = {j.id: j for j in inst.jobs}
    for mode in MODES:
        for policy in POLICIES:
            r = simulate_lanes(inst, mode=mode, policy=policy, record=True)
            assert r.metrics.n_completed == inst.n_jobs          # validated by finalize
            for _, _, lanes in r.extra["lane_states"]:            # independent re-check
                total = 0.0
                for cap, members in lanes:
                    ps = [jobs[j].memory.persistent for j in members]
                    ts = [jobs[j].memory.ephemeral for j in members]
                    assert sum(ps) + max(ts, default=0.0) <= cap * (1 + 1e-9)
                    total += cap
                    if mode == "exclusive":
                        assert len(members) <= 1
                assert total <= mem * (1 + 1e-9)
            for a in r.schedule.allocations:
                assert a.share <= jobs[a.job].compute_share + 1e-12
            # per GPU (one GPU per node here) compute shares never exceed 1
            for node in {a.node for a in r.schedule.allocations}:
                pts = sorted({a.start for a in r.schedule.allocations if a.node == node})
                for t in pts:
                    load = sum(a.share for a in r.schedule.allocations
                               if a.node == node and a.start <= t < a.end)
                    assert load <= 1 + 1e-9


def test_single_lane_srtf_equals_spt_and_alone_runs_at_full_speed():
    jobs = [(100.0, 100.0, 30.0, 1.0, 1.0), (100.0, 100.0, 10.0, 1.0, 1.0),
            (100.0, 100.0, 20.0, 1.0, 1.0)]
    inst = make(jobs, (16.0,))
    srtf = simulate_lanes(inst, mode="single_lane", policy="srtf")
    assert srtf.metrics.completion == pytest.approx({"j1": 10.0, "j2": 30.0, "j0": 60.0})
    fifo = simulate_lanes(inst, mode="exclusive", policy="fifo")
    assert fifo.metrics.completion == pytest.approx({"j0": 30.0, "j1": 40.0, "j2": 60.0})
    fair = simulate_lanes(inst, mode="single_lane", policy="fair")
    assert fair.metrics.completion == pytest.approx({"j1": 30.0, "j2": 50.0, "j0": 60.0})
    one = make([(100.0, 100.0, 30.0, 2.0, 0.5)])
    for mode in MODES:
        assert simulate_lanes(one, mode=mode).metrics.makespan == pytest.approx(60.0)
    # two u = 0.5 jobs in two Salus lanes overlap perfectly; in one lane they serialise
    two = make([(100.0, 100.0, 30.0, 1.0, 0.5)] * 2)
    assert simulate_lanes(two, mode="salus").metrics.makespan == pytest.approx(30.0)
    assert simulate_lanes(two, mode="single_lane").metrics.makespan == pytest.approx(60.0)
    with pytest.raises(InvalidOption):
        simulate_lanes(two, policy="lifo")


def test_exact_serial_realisation_past_the_horizon_is_refused():
    """The MILP bounds the fluid makespan; a serial realisation that ends after the
    horizon is an error naming the realisation, not a schedule past the horizon."""
    from optsched import Cluster, Instance, Job, Node

    cl = Cluster((Node("n", {"v100": 1}, gpu_memory={"v100": 16.0}),))
    jobs = (Job("a", 0.0, 1, 50.0, {"v100": 1.0}, memory=GpuMemory(100, 100)),
            Job("b", 0.0, 1, 100.0, {"v100": 1.0}, memory=GpuMemory(100, 100),
                compute_share=0.5))
    inst = Instance(cl, jobs, horizon=110.0)
    fluid = optsched.solve(inst, "salus")
    assert fluid.status is Status.OPTIMAL and fluid.schedule.end <= 110.0 + 1e-6
    with pytest.raises(InvalidOption, match="realize"):
        optsched.solve(inst, "salus", realize="serial")


def test_makespan_start_and_longest_job_bound():
    """The makespan MILP's lower bound on C (the longest job's serial time) and its
    balanced start: the start is a feasible plan no better than the proved optimum, and
    the optimum is at least the bound (the 7 smallest 1-minute training jobs on one 16 GB
    GPU)."""
    from optsched.catalog import salus_workloads
    from optsched.core.instance import Cluster, Instance, Node
    from optsched.salus import training_job
    from optsched.salus.exact import balanced_plan, exact, lane_limits, longest_job
    from optsched.salus.model import plan_objective, salus_view

    rows = [w.name for w in sorted(salus_workloads(), key=lambda w: w.peak_mem_mb)
            if w.name.endswith("_1min")]
    jobs = tuple(training_job(rows[i], f"j{i}") for i in range(7))
    inst = Instance(Cluster((Node("s", {"v100": 1}, cpus=32, memory=256,
                                  gpu_memory={"v100": 16.0}),)), jobs, name="salus-7")
    view = salus_view(inst)
    res = exact(inst, time_limit=60)
    assert res.status is Status.OPTIMAL
    assert res.objective >= longest_job(view) * (1 - 1e-9)
    start = res.extra["mip_start"]
    assert start["feasible"] and start["objective"] >= res.objective * (1 - 1e-6)
    plan = balanced_plan(view, lane_limits(view, "makespan", None, True), thrifty=True)
    assert plan is not None and sorted(j for g in plan for lane in g for j in lane) == \
        sorted(view.ids)
    pos = {vid: i for i, vid in enumerate(view.ids)}
    as_index = [[[pos[j] for j in lane] for lane in g] for g in plan]
    assert plan_objective(view, as_index, "makespan") >= res.objective * (1 - 1e-6)
