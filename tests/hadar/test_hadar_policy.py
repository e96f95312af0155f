"""Hadar's simulator policy: admission of every job (per-job resolution, trimmed plans),
prices that rise with use, retries with backoff, and the skip of offers that cannot
succeed (same decisions)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from optsched import Cluster, Instance, InvalidOption, Job, Node
from optsched import Utility as Ut
from optsched.hadar.policy import HadarPolicy, density_price_params, rolling_price_params
from optsched.sim import simulate


def one_job(rounds: float, *, W: int = 1, caps=None, utility=None) -> Instance:
    """A job needing ``rounds`` rounds of its whole gang on a V100 (twice as many on a
    K80), alone on the cluster."""
    caps = caps or [{"v100": 4}, {"k80": 4}]
    nodes = tuple(Node(f"n{i}", c) for i, c in enumerate(caps))
    job = Job("J0", 0.0, W, rounds * W * 2.0 * 10.0, {"v100": 2.0, "k80": 1.0},
              utility=utility)
    return Instance(Cluster(nodes), (job,), slot=10.0)


def run(inst: Instance, **options):
    pol = HadarPolicy(inst, **options)
    res = simulate(inst, pol, progress=False)
    return pol, res


@pytest.mark.parametrize("rounds", [5000.0, 4321.5])
def test_a_job_longer_than_any_fixed_cap_is_admitted(rounds):
    """quanta=120 alone would credit 0 units per round to a job needing thousands of
    rounds; the per-job resolution admits it and it runs entirely from its plan."""
    inst = one_job(rounds)
    pol, res = run(inst, quanta=120, plan_slots=64)
    st = pol.stats()
    assert st["admitted"] == 1 and st["rejections"] == 0
    assert st["fill_job_rounds"] == 0 and st["planned_share"] == 1.0
    # alone on an empty cluster it runs on its fastest type, every round, no over-booking
    assert res.metrics.completion["J0"] == pytest.approx(rounds * 10.0)
    assert {a.gpu_type for a in res.schedule.allocations} == {"v100"}


def test_plans_reserve_at_most_one_round_beyond_the_work():
    """Trimmed plans: total planned progress minus the last round's is below the work,
    for jobs of every length (coarse planning slots included)."""
    for rounds in (1.0, 2.5, 37.2, 130.0, 999.9):
        for W in (1, 3):
            inst = one_job(rounds, W=W)
            pol = HadarPolicy(inst, quanta=8, plan_slots=32)
            plans = {}

            def keep(t, placements, pol=pol, plans=plans):
                for jid, segs in pol._plans.items():  # (first, end, items) segments
                    plans.setdefault(jid, {r: items for r0, r1, items in segs
                                           for r in range(r0, r1)})

            simulate(inst, pol, progress=False, on_epoch=keep)
            plan = plans["J0"]
            job = inst.jobs[0]
            prog = [W * 10.0 * min(job.rate(pol._bnames[b][1]) for b, _ in items)
                    for _, items in sorted(plan.items())]
            assert sum(prog) >= job.work * (1 - 1e-12)
            assert sum(prog) - prog[-1] < job.work
            assert all(sum(g for _, g in items) == W for items in plan.values())


def test_prices_rise_as_capacity_fills():
    inst = one_job(10.0)
    pol = HadarPolicy(inst, U=8.0, L=0.5)
    simulate(inst, pol, progress=False)
    for b in range(pol._bc.size):
        c = int(pol._bc[b])
        p = pol.price(np.arange(c + 1), np.full(c + 1, b))
        assert p[0] == pytest.approx(0.5) and p[-1] == pytest.approx(8.0)
        assert np.all(np.diff(p) > 0)
    # the incremental prices are the price function of the reservations, everywhere
    assert np.allclose(pol.book.p, pol.price(pol.book.g, np.arange(pol._bc.size)[None, :]))


def _gavel(n: int) -> Instance:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_policy_pinned import trace

    return trace(n)


def test_density_prices_move_over_real_allocations_and_oasis_ones_do_not():
    """On the Gavel trace with JCT-sensitive utilities, OASiS (25) taken literally gives a
    vanishing L (prices inert until a bucket is full); the density estimate keeps U/L
    within the range of the jobs' values per GPU-round: a 4-GPU bucket with 1, 2 or 3
    GPUs reserved charges between the 5th and 95th percentiles of the jobs' densities,
    where the literal estimate charges 50 orders of magnitude less than the 5th
    percentile."""
    inst = _gavel(300)
    U, L, _ = rolling_price_params(inst)
    assert L < 1e-300  # a denormal
    Ud, Ld = density_price_params(inst)
    assert 1e-6 < Ld < min(Ud.values())
    assert all(math.log(u / Ld) < 20 for u in Ud.values())
    need = np.ceil(inst.work / (inst.workers * inst.throughput_matrix.max(axis=1)
                                * inst.slot) - 1e-9)
    dens = np.array([j.value(n * inst.slot) for j, n in zip(inst.jobs, need)]) / (
        inst.workers * need)
    lo, hi = np.quantile(dens, [0.05, 0.95])
    for u, uo in zip(Ud.values(), U.values()):
        for share in (0.25, 0.5, 0.75):  # 1, 2, 3 of a 4-GPU bucket's GPUs reserved
            assert lo < Ld * (u / Ld) ** share < hi
            # in logs: U/L overflows a double here
            assert math.log(L) + share * (math.log(uo) - math.log(L)) < math.log(lo) - 115


def test_price_defers_a_low_density_job_while_capacity_is_free():
    """Two 2-GPU jobs on one 4-GPU bucket: a dense job books 2 GPUs for 20 rounds; a job
    of a tenth of its density arriving then fits the 2 free GPUs at once. Under the
    density estimate the half-full bucket costs more than that job's utility, so its plan
    waits for the dense job's reservation to end; with a flat price (U = L, prices that
    do not rise) it runs beside it at once."""
    cl = Cluster((Node("n0", {"v100": 4}),))
    dense = Job("A", 0.0, 2, 2.0 * 2 * 10 * 20, {"v100": 2.0},
                utility=Ut("constant", value=1.0))
    sparse = Job("B", 5.0, 2, 2.0 * 2 * 10 * 20, {"v100": 2.0},
                 utility=Ut("sigmoid", gamma1=0.1, gamma2=0.05, gamma3=600.0))
    inst = Instance(cl, (dense, sparse), slot=10.0)
    d, rd = run(inst, retry_every=0)
    f, rf = run(inst, retry_every=0, U=d.L, L=d.L)
    assert d.stats()["admitted"] == f.stats()["admitted"] == 2
    assert rd.metrics.completion["A"] == rf.metrics.completion["A"] == 200.0
    assert rf.metrics.completion["B"] == 210.0  # from round 1, beside A
    assert rd.metrics.completion["B"] >= 200.0 + 20 * 10.0  # after A's 20 rounds
    half = d.price(np.array([2]), np.array([0]))[0] + d.price(np.array([3]), np.array([0]))[0]
    assert half * 20 > sparse.value(205.0)  # two GPUs of a half-full bucket for 20 rounds
    assert 2 * d.L * 20 < sparse.value(rd.metrics.completion["B"] - 5.0)  # empty: admitted


def test_skip_gives_the_same_decisions():
    """The O(1) payoff bound only rejects offers the subroutine rejects: the same run
    with the bound switched off takes the same decisions, with more subroutine calls."""
    inst = _gavel(100)
    on, r_on = run(inst, retry_every=5)
    off = HadarPolicy(inst, retry_every=5)
    off._skip = False
    r_off = simulate(inst, off, progress=False)
    assert on.stats()["skipped"] > 0 and off.stats()["skipped"] == 0
    assert dict(r_on.schedule.completion) == dict(r_off.schedule.completion)
    assert off.stats()["subroutine_calls"] == \
        on.stats()["subroutine_calls"] + on.stats()["skipped"]
    for k in ("admitted", "rejections"):
        assert on.stats()[k] == off.stats()[k]


def test_retries_back_off():
    """A job that never fits (the other holds every GPU for long) is offered at gaps
    1, 2, 4, 8, 8, ... rounds (retry_every=1, backoff=2, max_retry_gap=8)."""
    cl = Cluster((Node("n0", {"v100": 1}),))
    a = Job("A", 0.0, 1, 2.0 * 10 * 40, {"v100": 2.0}, utility=Ut("constant", value=5.0))
    b = Job("B", 1.0, 1, 2.0 * 10 * 2, {"v100": 2.0}, utility=Ut("constant", value=5.0))
    inst = Instance(cl, (a, b), slot=10.0)
    pol = HadarPolicy(inst, retry_every=1, backoff=2.0, max_retry_gap=8, window_slack=0,
                      window_factor=1.0)
    offers = []
    real = pol._offer

    def spy(view, m, jid, cur, work):
        if jid == "B":
            offers.append(cur)
        real(view, m, jid, cur, work)

    pol._offer = spy
    simulate(inst, pol, progress=False)
    gaps = np.diff(offers).tolist()
    assert gaps[:5] == [1, 2, 4, 8, 8]
    assert pol.stats()["no_fit"] >= 5


def test_fill_is_counted_apart_from_plans():
    inst = _gavel(60)
    pol = HadarPolicy(inst, retry_every=20)
    given = []
    simulate(inst, pol, progress=False,
             on_epoch=lambda t, ps: given.append(sum(p.gpus for p in ps)))
    st = pol.stats()
    assert st["planned_job_rounds"] > 0 and st["fill_job_rounds"] > 0
    assert st["planned_share"] == pytest.approx(
        st["planned_job_rounds"] / (st["planned_job_rounds"] + st["fill_job_rounds"]))
    assert st["planned_gpu_rounds"] + st["fill_gpu_rounds"] == sum(given)


@pytest.mark.parametrize("bad", [{"quanta": 0}, {"resolution": 0}, {"plan_slots": 0},
                                 {"window_factor": 0.5}, {"window_slack": -1},
                                 {"retry_every": -1}, {"backoff": 0.5},
                                 {"max_retry_gap": 0}, {"prices": "flat"},
                                 {"density_quantiles": (0.9, 0.1)},
                                 {"density_quantiles": 0.5}, {"planning": "never"},
                                 {"planning": None}])
def test_options_are_checked(bad):
    with pytest.raises(InvalidOption):
        HadarPolicy(one_job(3.0), **bad)


# ------------------------------------------------------------------ progress rules
def _steep() -> Ut:
    return Ut("linear", value=100.0, slope=0.1)


def test_progress_rule_additive_is_planned_credited_and_validated_as_oasis():
    """A 4-worker job on 2 V100 (2 it/s) + 2 K80 (1 it/s): the slowest-type gang makes
    4 it/s, OASiS's additive rule 6 it/s; the schedule holds only under its own rule."""
    from dataclasses import replace

    from optsched import InvalidSchedule, validate_schedule

    inst = Instance(Cluster((Node("n0", {"v100": 2, "k80": 2}),)),
                    (Job("A", 0.0, 4, 400.0, {"v100": 2.0, "k80": 1.0}, utility=_steep()),),
                    slot=10.0)
    _, gang = run(inst)
    _, add = run(inst, progress_rule="additive")
    assert gang.metrics.completion["A"] == pytest.approx(100.0)
    assert add.metrics.completion["A"] == pytest.approx(400.0 / 6.0)
    assert add.schedule.progress_rule == "additive" and gang.schedule.progress_rule == "gang"
    assert validate_schedule(inst, add.schedule, "hadar").done["A"] == pytest.approx(400.0)
    with pytest.raises(InvalidSchedule, match="iterations"):
        validate_schedule(inst, replace(add.schedule, progress_rule="gang"))


def test_progress_rule_partial_runs_a_narrower_gang_beside_a_full_one():
    """Two 2-worker jobs on 3 V100: under the gang rule B waits for A (done at 200 s);
    under "partial" it plans the third GPU beside A and finishes at 150 s."""
    from dataclasses import replace

    from optsched import InvalidSchedule, validate_schedule

    jobs = tuple(Job(n, 0.0, 2, 400.0, {"v100": 2.0}, utility=_steep()) for n in "AB")
    inst = Instance(Cluster((Node("n0", {"v100": 3}),)), jobs, slot=10.0)
    _, gang = run(inst, U=1.0, L=0.01)
    pol, part = run(inst, U=1.0, L=0.01, progress_rule="partial")
    assert gang.metrics.completion == {"A": 100.0, "B": 200.0}
    assert part.metrics.completion == pytest.approx({"A": 100.0, "B": 150.0})
    assert pol.stats()["fill_job_rounds"] == 0  # from the plan, not the fill
    assert {a.gpus for a in part.schedule.allocations if a.job == "B"} == {1, 2}
    validate_schedule(inst, part.schedule, "hadar")
    with pytest.raises(InvalidSchedule, match="gang of 2"):
        validate_schedule(inst, replace(part.schedule, progress_rule="gang"))


def test_progress_rule_partial_fill_starts_a_job_on_what_is_free():
    """No plans (retry off, prices above any payoff): in the fill, X takes 2 of 3 GPUs;
    under "partial" Y starts at once on the third (half speed) and finishes at 150 s,
    under the gang rule it waits for X and finishes at 200 s."""
    jobs = tuple(Job(n, 0.0, 2, 400.0, {"v100": 2.0}) for n in "XY")
    inst = Instance(Cluster((Node("n0", {"v100": 3}),)), jobs, slot=10.0)
    pol, part = run(inst, U=1e6, L=1e5, retry_every=0, progress_rule="partial")
    assert pol.stats()["admitted"] == 0 and pol.stats()["planned_job_rounds"] == 0
    assert part.metrics.completion == pytest.approx({"X": 100.0, "Y": 150.0})
    _, gang = run(inst, U=1e6, L=1e5, retry_every=0)
    assert gang.metrics.completion == pytest.approx({"X": 100.0, "Y": 200.0})


def test_progress_rule_unknown_is_a_typed_error():
    inst = one_job(3.0)
    with pytest.raises(InvalidOption, match="progress_rule"):
        HadarPolicy(inst, progress_rule="oasis")
    with pytest.raises(InvalidOption, match="progress_rule"):
        HadarPolicy(inst, progress_rule=None)


# ------------------------------------------------------------------ planning
def test_replan_alone_keeps_the_committed_plan():
    """One job on an empty cluster: offered again at its arrival event only, the
    re-planned run is the committed one."""
    inst = one_job(37.2, W=3)
    c_pol, commit = run(inst, quanta=8)
    r_pol, replan = run(inst, quanta=8, planning="replan")
    assert dict(replan.schedule.completion) == dict(commit.schedule.completion)
    assert c_pol.stats()["replan_events"] == 0 and r_pol.stats()["replan_events"] >= 1


def test_replan_offers_every_admitted_job_again_at_each_event():
    """On 100 Gavel jobs every event re-offers the admitted jobs: many more offers than
    under commit, every job completes and the schedule validates (simulate checks it);
    between events the plans are kept, so the policy is not called more often."""
    inst = _gavel(100)
    c_pol, commit = run(inst, retry_every=5)
    r_pol, replan = run(inst, retry_every=5, planning="replan")
    c, r = c_pol.stats(), r_pol.stats()
    assert replan.metrics.n_completed == commit.metrics.n_completed == inst.n_jobs
    assert r["replan_events"] > 0 and c["replan_events"] == 0
    assert r["admitted"] > 2 * c["admitted"]
    assert r["subroutine_calls"] + r["skipped"] > 2 * (c["subroutine_calls"] + c["skipped"])
    assert r["replan_events"] <= replan.extra["policy_calls"]


def test_density_weights_come_from_a_usable_type_when_a_job_is_worth_nothing():
    """A job of value 0 has density 0 on every type; its GPU-round weight must come from a
    type it can use (V100 here), not from the first type (K80, need = inf), which made
    every cumulative weight inf / inf = NaN and L an arbitrary job's density."""
    import warnings

    cl = Cluster((Node("n0", {"k80": 4, "v100": 4}),))
    jobs = (Job("a", 0.0, 1, 200.0, {"v100": 2.0}, utility=Ut("constant", 0.0)),
            Job("b", 0.0, 1, 200.0, {"v100": 2.0, "k80": 1.0}))
    inst = Instance(cl, jobs, slot=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U, L = density_price_params(inst, (0.6, 0.95))
    # 10 V100 rounds each: a (density 0) holds half the weight, so the 0.6 quantile is
    # b's density 1 / (1 GPU x 10 rounds), and L is half of it
    assert L == pytest.approx(0.05)
    assert U["v100"] >= L and U["k80"] == pytest.approx(0.05)
