"""Tiresias: Gittins index vs brute force, 2D-LAS queue semantics, promotion, placement."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from optsched import Cluster, Instance, Job, Node
from optsched.core.schedule import Placement
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.sim.policy import ClusterView
from optsched.tiresias.policy import (
    GittinsIndex,
    Tiresias,
    TiresiasPolicy,
    gittins_index,
    gittins_index_fixed,
)


def brute_gittins(samples, a, deltas):
    s = np.asarray(samples, float)
    alive = s[s > a]
    if alive.size == 0:
        return 0.0
    best = 0.0
    for D in deltas:
        P = np.mean(alive - a <= D)
        E = np.mean(np.minimum(alive - a, D))
        best = max(best, P / E)
    return best


@given(st.lists(st.integers(1, 60), min_size=1, max_size=12),
       st.sampled_from([0.0, 0.5, 3.0, 10.0, 25.0, 59.0]))
def test_gittins_exact_supremum_vs_brute_force(samples, a):
    s = np.sort(np.array(samples, float))
    exact = gittins_index(s, a)
    # candidates D = s_i - a and a dense grid: the exact value is the max and >= the grid
    cand = s[s > a] - a
    grid = np.linspace(1e-3, s.max() + 5, 4001)
    assert exact == pytest.approx(brute_gittins(s, a, cand), rel=1e-12)
    assert exact >= brute_gittins(s, a, grid) * (1 - 1e-12)
    assert exact == pytest.approx(brute_gittins(s, a, np.concatenate([cand, grid])),
                                  rel=1e-12)


def test_gittins_fixed_delta_and_code_quirk():
    s = np.array([10.0, 20.0, 40.0, 80.0])
    a, D = 15.0, 30.0
    alive = s[s > a]
    P = np.mean(alive - a <= D)
    E = np.mean(np.minimum(alive - a, D))
    assert gittins_index_fixed(s, a, D) == pytest.approx(P / E)
    # the public simulator's E sums s_i (not s_i - a): E_code = E + a P
    assert gittins_index_fixed(s, a, D, code_quirk=True) == pytest.approx(P / (E + a * P))
    assert gittins_index(s, 100.0) == 0.0
    g = GittinsIndex(s, delta=D)
    assert g(a) == pytest.approx(P / E)


def _attained_values(samples, rng, k=300):
    """Random attained services, the samples themselves, values just below them
    (where the index spikes) and values past the largest sample (index 0)."""
    s = np.asarray(samples, float)
    top = float(s.max())
    return np.concatenate([rng.uniform(0, 1.1 * top, k), rng.choice(s, k),
                           np.nextafter(s, -np.inf), s - rng.uniform(0, 1e-3, s.size) * top,
                           [0.0, top, 1.5 * top, 2.0 * top]]).clip(0.0)


def _same_order(keys, direct):
    """Same ranking (stable, ties by position) and the same ties."""
    keys, direct = np.asarray(keys), np.asarray(direct)
    assert np.array_equal(np.argsort(-keys, kind="stable"), np.argsort(-direct, kind="stable"))
    assert np.array_equal(keys[:, None] == keys[None, :], direct[:, None] == direct[None, :])


@pytest.mark.parametrize("seed", range(4))
def test_gittins_fast_path_matches_direct_formula(seed):
    """The envelope form gives the direct formula's values to rounding, and the ranking
    keys order and tie as the direct values do, on the catalog's samples and on random
    sample sets with repeated values."""
    rng = np.random.default_rng(seed)
    sets = [None] + [np.sort(rng.integers(1, 30, rng.integers(1, 50)).astype(float)
                             * rng.choice([1e-3, 1.0, 1e5]) * rng.uniform(0.5, 2.0))
                     for _ in range(20)]
    for samples in sets:
        g = GittinsIndex(samples)
        a = _attained_values(g.samples, rng)
        direct = np.array([gittins_index(g.samples, x) for x in a])
        fast = np.array([g.fast(x) for x in a])
        # all values at once: the very same floats, in any order of first use
        assert np.array_equal(g.fast_many(a), fast)
        assert np.array_equal(GittinsIndex(samples).fast_many(a[::-1]), fast[::-1])
        assert np.all((fast == 0) == (direct == 0))
        assert np.abs(fast - direct).max() <= 1e-13 * direct.max()
        assert np.all(np.abs(fast - direct) <= 1e-13 * direct)
        _same_order(g.ranking_keys(a), direct)
        # the direct fallback of near ties: with a wide margin most keys take it
        wide = GittinsIndex(samples)
        wide.tie_margin = 0.05
        keys = wide.ranking_keys(a)
        _same_order(keys, direct)
        assert len(wide._memo) > 0 and len(g._memo) < len(wide._memo)  # direct values


def test_gittins_fast_path_takes_the_same_decisions(monkeypatch):
    """2D-Gittins with the fast keys and with the direct formula on each job: the same
    schedule, on a contended run (preemptions, several jobs ranked at once)."""
    from optsched import catalog

    inst = catalog.read_trace("gavel-philly-2000", jobs=60, load=20.0,
                              cluster="gavel-physical")
    ranked = []
    keys = GittinsIndex.ranking_keys

    def counted(self, a):
        ranked.append(len(set(np.asarray(a).tolist())))
        return keys(self, a)

    monkeypatch.setattr(GittinsIndex, "ranking_keys", counted)
    fast = simulate(inst, get_policy("tiresias.gittins"), progress=False)
    assert max(ranked) >= 5 and fast.extra["total_preemptions"] > 0
    monkeypatch.setattr(GittinsIndex, "ranking_keys", lambda self, a: np.array(
        [gittins_index(self.samples, x) for x in np.asarray(a, float).tolist()]))
    direct = simulate(inst, get_policy("tiresias.gittins"), progress=False)
    assert fast.schedule.to_dict() == direct.schedule.to_dict()
    assert fast.extra["preemptions"] == direct.extra["preemptions"]


def test_catalog_samples_give_decreasing_then_varying_index():
    g = GittinsIndex()
    vals = [g(a) for a in (0.0, 100.0, 1000.0, 1e4, 1e5)]
    assert all(v > 0 for v in vals)


# --------------------------------------------------------------------------- queues
def view_of(attained, arrivals, workers, cluster, executed=None, prev=(), time=1000.0):
    n = len(attained)
    executed = np.asarray(attained, float) / np.asarray(workers) if executed is None \
        else np.asarray(executed, float)
    return ClusterView(
        time=time, slot=60.0, cluster=cluster, ids=tuple(f"j{m}" for m in range(n)),
        index=np.arange(n), throughput_matrix=np.ones((n, len(cluster.gpu_types))),
        workers=np.asarray(workers), arrivals=np.asarray(arrivals, float),
        weights=np.ones(n), attained=np.asarray(attained, float), executed=executed,
        time_on_types=np.zeros((n, 1)), rounds_received=np.zeros(n, int),
        preemptions=np.zeros(n, int), previous=tuple(prev), needs_work=False,
        rng=np.random.default_rng(0), throughput_maps=tuple({"a": 1.0} for _ in range(n)))


CL = Cluster((Node("n0", {"a": 4}), Node("n1", {"a": 4})))


def test_one_queue_no_threshold_is_fifo_order():
    # one queue: everyone is in queue 0, so 2D-LAS orders by arrival (FIFO within a queue)
    pol = TiresiasPolicy("las", thresholds=())
    v = view_of([500.0, 0.0, 90.0], [0.0, 5.0, 2.0], [1, 1, 1], CL)
    assert list(pol.ranking(v)) == [0, 2, 1]
    # continuous LAS (thresholds=None): least attained service first, by definition
    las = TiresiasPolicy("las", thresholds=None)
    assert list(las.ranking(v)) == [1, 2, 0]


def test_original_gittins_scheme_indexes_a_waiting_gang_by_its_executed_seconds():
    """``gittins_scheme="original"`` (Tiresias' ``--schedule=gittins``): lowest index
    first, a running job's index from its GPU-seconds, a waiting one's from its executed
    seconds. j0, a waiting 4-GPU gang, ran 300 s (1,200 GPU-s); j1, running on one GPU,
    has 500 s. On Tiresias' samples index(300) > index(500) > index(1200), so j1 goes
    first; read by GPU-seconds j0 would, and the paper's order (highest first) puts j0
    first on either service."""
    pol = TiresiasPolicy("gittins", thresholds=None, promote_knob=None, gittins_grid=True,
                         gittins_scheme="original")
    assert pol.periodic is False
    g = pol._gittins.ranking_keys(np.array([300.0, 500.0, 1200.0]))
    assert g[0] > g[1] > g[2]
    v = view_of([1200.0, 500.0], [0.0, 1.0], [4, 1], CL, executed=[300.0, 500.0],
                prev=(Placement("j1", "n0", "a", 1),))
    assert list(v.ran_before) == [False, True]
    assert list(pol.ranking(v)) == [1, 0]
    running = view_of([1200.0, 500.0], [0.0, 1.0], [4, 1], CL, executed=[300.0, 500.0],
                      prev=(Placement("j0", "n0", "a", 4), Placement("j1", "n1", "a", 1)))
    assert list(pol.ranking(running)) == [0, 1]  # j0 running: read by its 1,200 GPU-s


def test_queues_demote_by_gpu_time_and_1d_uses_time():
    pol = TiresiasPolicy("las", thresholds=(100.0,))
    # j0: 2 GPUs x 60 s = 120 GPU-s -> queue 1; j1: 1 GPU x 90 s -> queue 0
    v = view_of([120.0, 90.0], [0.0, 1.0], [2, 1], CL)
    assert list(pol.queues(v)) == [1, 0]
    assert list(pol.ranking(v)) == [1, 0]
    one_d = TiresiasPolicy("las", dims=1, thresholds=(100.0,))
    assert list(one_d.queues(v)) == [0, 0]


def test_gang_skipping_lets_smaller_jobs_run():
    pol = TiresiasPolicy("las", thresholds=None)
    v = view_of([0.0, 10.0, 20.0], [0.0, 1.0, 2.0], [6, 8, 2], CL)
    placed = {p.job for p in pol.allocate(v)}
    assert placed == {"j0", "j2"}  # the 8-GPU job does not fit after j0 and is skipped


def test_consolidated_placement_refuses_fragmented_gangs():
    cl = Cluster((Node("n0", {"a": 4}), Node("n1", {"a": 4}), Node("n2", {"a": 4})))
    prev = [Placement("j0", "n0", "a", 2), Placement("j1", "n1", "a", 2)]
    v = view_of([0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [2, 2, 4], cl, prev=prev)
    spread = TiresiasPolicy("las", thresholds=None, placement="spread").allocate(v)
    assert {p.node for p in spread if p.job == "j2"} == {"n2"}
    # j0..j2 keep 2 GPUs on each node; the 4-GPU j3 only fits fragmented (2 nodes)
    prev3 = prev + [Placement("j2", "n2", "a", 2)]
    v2 = view_of([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0], [2, 2, 2, 4], cl, prev=prev3)
    cons = TiresiasPolicy("las", thresholds=None, placement="consolidated").allocate(v2)
    assert "j3" not in {p.job for p in cons}
    sp = TiresiasPolicy("las", thresholds=None, placement="spread").allocate(v2)
    assert sum(p.gpus for p in sp if p.job == "j3") == 4
    assert len({p.node for p in sp if p.job == "j3"}) == 2


def _one_gpu_inst(jobs):
    return Instance(Cluster((Node("n0", {"a": 1}),)), tuple(jobs), slot=10.0)


def test_las_preempts_and_fifo_does_not():
    jobs = [Job("long", 0.0, 1, 1000.0, {"a": 1.0}), Job("short", 100.0, 1, 10.0, {"a": 1.0})]
    inst = _one_gpu_inst(jobs)
    las = simulate(inst, get_policy("tiresias_las", thresholds=(50.0,)))
    assert las.schedule.completion["short"] == pytest.approx(110.0)
    assert las.extra["total_preemptions"] >= 1
    fifo = simulate(inst, get_policy("fifo_yarn"))
    assert fifo.schedule.completion["short"] == pytest.approx(1010.0)
    assert fifo.extra["total_preemptions"] == 0


def test_srtf_needs_work_and_runs_shortest_first():
    pol = get_policy("srtf")
    assert pol.needs_work
    jobs = [Job("a", 0.0, 1, 500.0, {"a": 1.0}), Job("b", 0.0, 1, 50.0, {"a": 1.0})]
    res = simulate(_one_gpu_inst(jobs), pol)
    assert res.schedule.completion["b"] == pytest.approx(50.0)


def test_promotion_knob_lifts_starving_jobs():
    jobs = [Job("old", 0.0, 1, 400.0, {"a": 1.0})] + [
        Job(f"n{i}", 60.0 + 30.0 * i, 1, 30.0, {"a": 1.0}) for i in range(20)]
    inst = _one_gpu_inst(jobs)
    off = simulate(inst, TiresiasPolicy("las", thresholds=(50.0,)))
    on = simulate(inst, TiresiasPolicy("las", thresholds=(50.0,), promote_knob=1.0))
    assert on.extra["promotions"] >= 1 and off.extra["promotions"] == 0
    assert on.schedule.completion["old"] < off.schedule.completion["old"]


def test_gittins_policy_prefers_likely_short_jobs():
    samples = np.array([10.0] * 9 + [1000.0])
    pol = TiresiasPolicy("gittins", thresholds=(), gittins_samples=samples)
    # attained 5 (likely to finish within 5 more) beats attained 20 (survivor: long)
    v = view_of([20.0, 5.0], [0.0, 1.0], [1, 1], CL)
    assert list(pol.ranking(v))[0] == 1


def test_tiresias_trace_runs_2d_las_and_gittins():
    from optsched.catalog import read_tiresias_trace

    inst = read_tiresias_trace()
    for name in ("tiresias_las", "tiresias_gittins", "tiresias_gittins_fixed", "las_1d",
                 "srtf", "fifo_yarn"):
        r = simulate(inst, get_policy(name))
        assert r.metrics.n_completed == inst.n_jobs, name


def _two_gpu(jobs):
    """Jobs ``(arrival, gang, seconds)`` at rate 1 per worker on one 2-GPU server."""
    return Instance(cluster=Cluster((Node("n0", {"p100": 2}),)), slot=60.0, jobs=tuple(
        Job(str(i), arrival=float(r), workers=g, work=float(d * g), throughput={"p100": 1.0})
        for i, (r, g, d) in enumerate(jobs)))


def test_las_keeps_a_queues_running_jobs_ahead_of_its_waiting_ones():
    """Job 1 (2 GPUs) waits behind job 0; job 2 (1 GPU) starts around it. When job 0
    ends, job 1 is older than job 2 but waiting, job 2 is running and in the same queue:
    Tiresias keeps job 2 running; ordering by arrival alone preempts it."""
    inst = _two_gpu([(0, 1, 100), (5, 2, 100), (6, 1, 300)])
    kept = simulate(inst, get_policy("tiresias.las"))
    moved = simulate(inst, get_policy("tiresias.las", queue_order="arrival"))
    assert kept.extra["preemptions"]["2"] == 0
    assert moved.extra["preemptions"]["2"] >= 1
    assert kept.schedule.completion["2"] == pytest.approx(306.0)


def test_yarn_fifo_blocks_at_the_head_and_backfill_does_not():
    """Job 1 needs both GPUs while job 0 holds one: YARN-CS holds job 2 behind it,
    the backfilling FIFO starts job 2 at once."""
    inst = _two_gpu([(0, 1, 100), (1, 2, 50), (2, 1, 10)])
    yarn = simulate(inst, get_policy("tiresias.yarn_fifo"))
    back = simulate(inst, get_policy("tiresias.fifo_backfill"))
    assert yarn.schedule.completion["2"] == pytest.approx(160.0)  # after job 1 (100-150)
    assert back.schedule.completion["2"] == pytest.approx(12.0)
    assert yarn.schedule.completion["1"] == pytest.approx(150.0)


def test_queue_order_and_skip_are_checked():
    from optsched.errors import InvalidOption

    with pytest.raises(InvalidOption, match="queue_order"):
        TiresiasPolicy("las", queue_order="random")
    with pytest.raises(InvalidOption, match="queue_order"):
        TiresiasPolicy("gittins", queue_order="arrival")
    with pytest.raises(InvalidOption, match="skip"):
        TiresiasPolicy("fifo", skip="no")


@pytest.mark.parametrize("scheme,policy,options", [
    ("yarn", "tiresias.yarn_fifo", {}), ("dlas-gpu", "tiresias.las", {}),
    ("dlas-gpu", "tiresias.las", {"queue_order": "original", "demotion": "original"}),
    ("dlas-gpu-pack", "tiresias.dlas_gpu_pack",
     {"queue_order": "original", "demotion": "original"}),
    ("dlas-gpu-gittins", "tiresias.gittins", {"gittins_grid": True, "demotion": "original"}),
    ("fjf", "tiresias.fjf", {}), ("sjf-count", "tiresias.sjf", {}),
    ("shortest-count", "tiresias.shortest", {}),
    ("shortest-gpu-count", "tiresias.shortest_gpu", {})])
def test_same_decisions_as_tiresias_simulator(scheme, policy, options):
    """Pinned per-job JCTs of Tiresias' own simulator (benchmarks/tiresias_peer.py) on
    its 60-job trace over 2 x 4 P100: YARN-CS, 2D-LAS (and dlas-gpu-pack, whose memory
    shares are all 1), 2D-Gittins with the simulator's index and queue checks, fjf, and
    (with GPU counting) sjf, shortest and shortest-gpu take the same decisions (its
    times are whole seconds, hence the 1 s tolerance)."""
    import json
    from pathlib import Path

    from optsched.catalog import read_tiresias_trace

    peer = json.loads((Path(__file__).parent / "peer_t60_n2g4.json").read_text())
    inst = read_tiresias_trace(cluster=Cluster(tuple(Node(f"n{i}", {"p100": 4})
                                                     for i in range(2))))
    res = simulate(inst, get_policy(policy, **options))
    ours = res.metrics.jct
    want = peer["jct"][scheme]
    assert set(ours) == set(want)
    assert max(abs(ours[k] - want[k]) for k in want) <= 1.0


@pytest.mark.parametrize("name", ["tiresias.las", "tiresias.gittins", "tiresias.yarn_fifo"])
def test_keeping_every_lease_shortcut_decides_as_the_full_pass(name, monkeypatch):
    """When every visible job ran before, the policy returns the previous placements
    without trying each job; the full two passes must give the same decisions."""
    from optsched import catalog

    # 40 jobs arriving 20x faster on 48 GPUs: both kinds of decision, and preemptions
    inst = catalog.read_trace("gavel-philly-2000", jobs=40, load=20.0,
                              cluster="gavel-physical")
    pol = get_policy(name)
    kinds = []
    keep = pol._all_keep

    def counted(view):
        got = keep(view)
        kinds.append(got is None)
        return got

    monkeypatch.setattr(pol, "_all_keep", counted)
    fast = simulate(inst, pol, progress=False)
    assert 0 < sum(kinds) < len(kinds)
    assert name == "tiresias.yarn_fifo" or fast.extra["total_preemptions"] > 0
    pol = get_policy(name)
    monkeypatch.setattr(pol, "_all_keep", lambda view: None)
    slow = simulate(inst, pol, progress=False)
    assert fast.schedule.to_dict() == slow.schedule.to_dict()
    assert fast.extra["preemptions"] == slow.extra["preemptions"]


@pytest.mark.parametrize("name", ["tiresias.las",
                                  pytest.param("tiresias.gittins", marks=pytest.mark.slow),
                                  pytest.param("tiresias.srtf", marks=pytest.mark.slow)])
def test_counting_first_pass_decides_as_the_node_level_passes(name, monkeypatch):
    """On one GPU type with spread placement the policy selects jobs from GPU counts and
    places only the jobs that start; the node-level two passes must give the same
    decisions, preemptions and migrations included."""
    from optsched import catalog

    # Philly jobs 30x faster on 128 GPUs (32 nodes of 4): queueing, preemptions, gangs
    # over several nodes
    inst = catalog.read_philly_trace(jobs=60, load=30.0, cluster="tiresias-n32g4")
    pol = get_policy(name)
    kinds = []
    count = pol._decide_by_counts

    def counted(view, order=None):
        got = count(view, order)
        kinds.append(got is not None)
        return got

    monkeypatch.setattr(pol, "_decide_by_counts", counted)
    fast = simulate(inst, pol, progress=False)
    assert sum(kinds) > 10
    assert fast.extra["total_preemptions"] > 0
    pol = get_policy(name)
    monkeypatch.setattr(pol, "_decide_by_counts", lambda view, order=None: None)
    slow = simulate(inst, pol, progress=False)
    assert fast.schedule.to_dict() == slow.schedule.to_dict()
    assert fast.extra["preemptions"] == slow.extra["preemptions"]
    assert fast.extra["migrations"] == slow.extra["migrations"]


@pytest.mark.parametrize("name", ["tiresias.gittins",
                                  pytest.param("tiresias.las", marks=pytest.mark.slow)])
def test_ranking_of_some_jobs_is_the_whole_ranking_restricted(name, monkeypatch):
    """When every usable gang fits, only the starting jobs are ranked: at every decision
    of a run with both cases (a quiet start, then queueing), the ranking of any subset
    of the visible jobs is the whole ranking with the others left out, and the run
    decides as the node-level passes do."""
    from optsched import catalog

    inst = catalog.read_philly_trace(jobs=60, load=12.0, cluster="tiresias-n32g4")
    pol = get_policy(name)
    rank = pol.ranking
    seen = {"subsets": 0, "all_fit": 0}
    rng = np.random.default_rng(5)

    def ranking(view, rows=None):
        full = rank(view)
        if rows is None:
            return full
        seen["all_fit"] += 1
        for sub in (rows, np.flatnonzero(rng.random(len(view.ids)) < 0.5)):
            got = rank(view, sub)
            assert got.tolist() == [m for m in full.tolist() if m in set(sub.tolist())]
            seen["subsets"] += 1
        return rank(view, rows)

    monkeypatch.setattr(pol, "ranking", ranking)
    fast = simulate(inst, pol, progress=False)
    assert seen["all_fit"] > 10, seen
    pol = get_policy(name)
    monkeypatch.setattr(pol, "_decide_by_counts", lambda view, order=None: None)
    slow = simulate(inst, pol, progress=False)
    assert fast.extra["total_preemptions"] > 0
    assert fast.schedule.to_dict() == slow.schedule.to_dict()
    assert fast.extra["preemptions"] == slow.extra["preemptions"]


def test_former_policy_class_names_are_aliases():
    """Code that constructs the policies by their former class names keeps working."""
    from optsched.gavel import GavelFIFO, GavelFIFOPolicy

    assert Tiresias is TiresiasPolicy and GavelFIFO is GavelFIFOPolicy
    assert type(Tiresias("las")) is TiresiasPolicy
    assert type(get_policy("tiresias.las")) is TiresiasPolicy
    assert type(get_policy("gavel.fifo")) is GavelFIFOPolicy


# ---------------------------------------------------------------- the simulator's own rules
def test_grid_index_is_the_simulators_step_function():
    """Values of Tiresias' ``get_gittins_index`` on its own samples (run under Python 2.7
    at 959f9b0): constant below the first sample (121), stepping at each sample, not
    monotone (13,935 -> 14,159), and 0 from the largest sample on."""
    from optsched.catalog import tiresias_gpu_time_samples
    from optsched.tiresias.policy import gittins_index_grid

    s = np.sort(tiresias_gpu_time_samples())
    want = {0: 299.701, 120: 299.701, 121: 299.2165, 13934: 19.575, 13935: 18.6735,
            14158: 18.6735, 14159: 19.5633, 199896: 2.4128, 10**7: 0.0881,
            53294623: 0.0, 53294624: 0.0}
    assert {a: gittins_index_grid(s, a) for a in want} == want


def test_grid_index_ties_jobs_between_two_samples_by_arrival():
    """Samples 100, 200, 1000. By the supremum, attained 50 (G = 1/150) ranks above
    attained 0 (G = 1/250); on the grid both are below the first sample, so they tie and
    the earlier arrival (attained 0) goes first."""
    samples = np.array([100.0, 200.0, 1000.0])
    v = view_of([0.0, 50.0], [0.0, 1.0], [1, 1], CL)
    sup = Tiresias("gittins", thresholds=(), gittins_samples=samples)
    grid = Tiresias("gittins", thresholds=(), gittins_samples=samples, gittins_grid=True)
    assert list(sup.ranking(v)) == [1, 0]
    assert list(grid.ranking(v)) == [0, 1]


def test_original_queue_order_puts_a_demoted_job_behind_the_waiting_one():
    """One GPU, threshold 100 GPU-s, rounds of 10 s. J0 (1,000 s) runs 0-100 and drops
    to queue 1; J1 (arrives 50, 1,000 s) runs 100-200 and drops too, while J0 waits in
    queue 1. Running first: J1 ran last, so it keeps the GPU (done 1,100; J0 2,000).
    The simulator's lists: J1 joins queue 1 behind the waiting J0, which runs (J0 done
    1,100; J1 2,000)."""
    inst = Instance(Cluster((Node("n0", {"a": 1}),)), (
        Job("0", 0.0, 1, 1000.0, {"a": 1.0}), Job("1", 50.0, 1, 1000.0, {"a": 1.0})),
        slot=10.0)
    for opts, want in (({}, {"1": 1100.0, "0": 2000.0}),
                       ({"queue_order": "original"}, {"0": 1100.0, "1": 2000.0}),
                       ({"queue_order": "original", "demotion": "original"},
                        {"0": 1100.0, "1": 2000.0})):
        res = simulate(inst, get_policy("tiresias.las", thresholds=(100.0,), **opts))
        assert res.schedule.completion == pytest.approx(want), opts


def test_original_demotion_checks_at_the_simulators_instants():
    """One 4-GPU server, threshold 3,250 GPU-s, rounds of 10 s; J0 and J1 (4 GPUs each,
    3,000 s and 100 s) arrive at 0 and J0 runs. J0 reaches 3,250 GPU-s at 812.5 s: the
    paper's rule sees it at the next round (820), and J1 runs 820-920. The simulator
    checks at 0 + floor(3250 / 4) = 812 (3,248 GPU-s: stays), then at 812 +
    floor((3250 - 812) / 4) = 1,421: J1 runs 1,421-1,521."""
    inst = Instance(Cluster((Node("n0", {"a": 4}),)), (
        Job("0", 0.0, 4, 12000.0, {"a": 1.0}), Job("1", 0.0, 4, 400.0, {"a": 1.0})),
        slot=10.0)
    paper = simulate(inst, get_policy("tiresias.las"))
    orig = simulate(inst, get_policy("tiresias.las", demotion="original"))
    assert paper.schedule.completion == pytest.approx({"1": 920.0, "0": 3100.0})
    assert orig.schedule.completion == pytest.approx({"1": 1521.0, "0": 3100.0})
    assert orig.extra["policy_calls"] < paper.extra["policy_calls"]  # no round boundaries


def test_original_options_are_checked():
    from optsched.errors import InvalidOption

    with pytest.raises(InvalidOption, match="demotion"):
        Tiresias("las", demotion="late")
    with pytest.raises(InvalidOption, match="demotion"):
        Tiresias("srtf", thresholds=None, demotion="original")
    with pytest.raises(InvalidOption, match="gittins_grid"):
        Tiresias("las", gittins_grid=True)
    with pytest.raises(InvalidOption, match="gittins_code_quirk"):
        Tiresias("gittins", gittins_grid=True, gittins_code_quirk=True)
    with pytest.raises(InvalidOption, match="order"):
        Tiresias("lifo")
    with pytest.raises(InvalidOption, match="rounds"):  # queues move between events
        Tiresias("las", rounds=False)
    assert not get_policy("tiresias.shortest").periodic  # decides at events only
    assert get_policy("tiresias.srtf").periodic


def _on(gpus, jobs, slot=10.0):
    """Jobs ``(arrival, gang, seconds)`` at rate 1 per worker on one server."""
    return Instance(cluster=Cluster((Node("n0", {"a": gpus}),)), slot=slot, jobs=tuple(
        Job(str(i), arrival=float(r), workers=g, work=float(d * g), throughput={"a": 1.0})
        for i, (r, g, d) in enumerate(jobs)))


def test_fjf_starts_any_fitting_job_and_lpjf_blocks():
    """4 GPUs: J0 (2 GPUs, 100 s) at 0, J1 (4 GPUs, 100 s) at 1, J2 (1 GPU, 50 s) at 2.
    fjf starts J2 around the waiting J1 (done 52; J1 100-200); lpjf (longest waiting
    first = arrival order, blocking) holds J2 behind J1 (J1 100-200, J2 200-250)."""
    inst = _on(4, [(0, 2, 100), (1, 4, 100), (2, 1, 50)])
    fjf = simulate(inst, get_policy("tiresias.fjf")).schedule.completion
    lpjf = simulate(inst, get_policy("tiresias.lpjf")).schedule.completion
    assert fjf == pytest.approx({"0": 100.0, "1": 200.0, "2": 52.0})
    assert lpjf == pytest.approx({"0": 100.0, "1": 200.0, "2": 250.0})


def test_sjf_preempts_the_larger_gang():
    """2 GPUs: J0 (2 GPUs, 100 s) at 0, J1 (1 GPU, 50 s) at 10, J2 (1 GPU, 30 s) at 20.
    At 10 the 1-GPU J1 goes first and J0 no longer fits (preempted after 10 s); J2
    joins at 20 (done 50), J1 ends at 60, then J0 runs its last 90 s (done 150)."""
    res = simulate(_on(2, [(0, 2, 100), (10, 1, 50), (20, 1, 30)]), get_policy("tiresias.sjf"))
    assert res.schedule.completion == pytest.approx({"0": 150.0, "1": 60.0, "2": 50.0})
    assert res.extra["preemptions"]["0"] == 1


def test_shortest_orders_by_time_and_shortest_gpu_by_gpu_time():
    """2 GPUs: J0 (2 GPUs, 60 s: 120 GPU-s) and J1 (1 GPU, 100 s: 100 GPU-s) at 0.
    shortest runs J0 first (60 < 100; J1 60-160); shortest_gpu runs J1 first (100 <
    120), and J0 cannot start beside it (J0 100-160)."""
    inst = _on(2, [(0, 2, 60), (0, 1, 100)])
    short = simulate(inst, get_policy("tiresias.shortest")).schedule.completion
    gpu = simulate(inst, get_policy("tiresias.shortest_gpu")).schedule.completion
    assert short == pytest.approx({"0": 60.0, "1": 160.0})
    assert gpu == pytest.approx({"0": 160.0, "1": 100.0})


def test_shortest_expected_uses_the_samples_above_the_executed_time():
    """Samples 100, 200, 1000, 5000: the key is the mean of the samples above the
    executed time without the largest: 433.33 below 100, 600 from 100 to 200. One GPU:
    J0 (150 s) at 0 has run 120 s (600) when J1 (50 s, 433.33) arrives at 120 and
    preempts it (J1 done 170); J0 ends at 200."""
    from optsched.tiresias.policy import expected_remaining

    s = np.array([100.0, 200.0, 1000.0, 5000.0])
    assert [expected_remaining(s, a) for a in (0, 99, 100, 250, 1000, 5000)] == \
        [433.33, 433.33, 600.0, 1000.0, 5000.0, 0.0]
    res = simulate(_on(1, [(0, 1, 150), (120, 1, 50)]),
                   get_policy("tiresias.shortest_expected", gittins_samples=s))
    assert res.schedule.completion == pytest.approx({"0": 200.0, "1": 170.0})


def test_random_placements_draw_from_the_view_and_crandom_consolidates():
    """3 servers x 4 GPUs, one 6-GPU job: crandom takes a whole server and 2 GPUs of
    another; random places each GPU on the first free server from a random start.
    A run is a function of its seed (ClusterView.rng)."""
    cl = Cluster(tuple(Node(f"n{i}", {"a": 4}) for i in range(3)))
    v = view_of([0.0], [0.0], [6], cl)
    for mode in ("random", "crandom"):
        pol = Tiresias("fifo", thresholds=None, preemptive=False, placement=mode)
        got = pol.allocate(v)
        assert sum(p.gpus for p in got) == 6
        if mode == "crandom":
            assert sorted(p.gpus for p in got) == [2, 4]
    inst = Instance(cl, tuple(Job(str(i), float(i), 3, 300.0, {"a": 1.0}) for i in range(6)),
                    slot=10.0)
    runs = [simulate(inst, get_policy("tiresias.yarn_fifo", placement="crandom"), seed=0)
            for _ in range(2)]
    assert runs[0].schedule.to_dict() == runs[1].schedule.to_dict()
