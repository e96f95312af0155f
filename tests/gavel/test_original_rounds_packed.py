"""Gavel's simulator's round mechanics over job combinations (``rounds="original"`` for
the packed policies; optsched.gavel.policy.OriginalRounds with ``packing``)."""

from __future__ import annotations

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.core.colocation import Colocation, PairRate
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate


def _pair_instance(work_a: float = 20.0, work_b: float = 30.0, *, alone: float = 1.25,
                   together: float = 0.96, slot: float = 10.0) -> Instance:
    # one V100, two jobs of `alone` steps/s each; together each runs at `together`
    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = (Job("a", arrival=0.0, workers=1, work=work_a, throughput={"v100": alone},
                profile="x"),
            Job("b", arrival=0.0, workers=1, work=work_b, throughput={"v100": alone},
                profile="y"))
    table = Colocation((PairRate("v100", "x", "y", 1, together, together),))
    return Instance(cl, jobs, slot=slot, colocation=table)


def _run(inst, policy):
    placed: list[tuple[float, tuple]] = []
    res = simulate(inst, policy, seed=0, progress=False,
                   on_epoch=lambda t, ps: placed.append(
                       (t, tuple(sorted((p.job, p.partner) for p in ps)))))
    return res, placed


def test_a_pair_runs_whole_steps_and_ends_with_its_slower_job_by_hand():
    # max-min over the pair: each job 0.96 / 1.25 = 0.768 of its exclusive rate together,
    # at most 0.5 + 0.268 y alone, so X puts the pair on the GPU all the time (Y = 1).
    # A round runs int(0.96 * 10) = 9 whole steps of each job in 9.375 s and ends then.
    # t=0, 9.375: 9 steps each. t=18.75: a has 2 steps left (2.083 s), b 9 of its 12;
    # the pair's round ends at 28.125 with b's ninth step, where Gavel completes a. Here a
    # completes when its own work runs out (20.833): its partner's credit is not held
    # back for it. t=28.125: a reset (the job set changed; the first one was at t = 0),
    # b alone with X = 1: its last 3 steps at 1.25/s end at 30.525.
    inst = _pair_instance()
    pol = get_policy("gavel.max_min_fairness_packed", rounds="original")
    res, placed = _run(inst, pol)
    assert [t for t, _ in placed] == pytest.approx([0.0, 9.375, 18.75, 28.125])
    together = (("a", "b"), ("b", "a"))
    assert [ps for _, ps in placed] == [together, together, together, (("b", None),)]
    assert res.schedule.completion["a"] == pytest.approx(20.0 / 0.96)
    assert res.schedule.completion["b"] == pytest.approx(30.525)
    assert pol.rounds.resets == 2
    # the paper's Alg. 1 over full 10 s rounds: b shares its GPU until t = 30 and ends
    # its last 1.2 steps alone at 30.96
    alg1 = simulate(inst, get_policy("gavel.max_min_fairness_packed"), seed=0,
                    progress=False)
    assert alg1.schedule.completion["b"] == pytest.approx(30.96)


def test_a_pair_ending_together_completes_at_gavels_instant():
    # a: 19 steps, b: 27, at 0.96 together: two rounds of 9 steps each, then a's last
    # step (1.04 s) and b's last 9 (9.375 s) in the third round, which ends at 28.125:
    # Gavel completes both then. One start serves both: the earlier of the two that
    # match, here b's (the round's start), so a ends after its own step, earlier.
    inst = _pair_instance(19.0, 27.0)
    res, _ = _run(inst, get_policy("gavel.max_min_fairness_packed", rounds="original"))
    assert res.schedule.completion["b"] == pytest.approx(28.125)
    assert res.schedule.completion["a"] == pytest.approx(18.75 + 1 / 0.96)


def test_rounds_option_of_the_packed_policies_is_checked():
    with pytest.raises(InvalidOption) as e:
        get_policy("gavel.max_min_fairness_packed", rounds="gavel")
    assert e.value.path == "rounds"
    with pytest.raises(InvalidOption) as e:
        get_policy("gavel.min_total_duration_packed", rounds="original", fill_leftover=False)
    assert e.value.path == "fill_leftover"
    with pytest.raises(InvalidOption) as e:
        get_policy("gavel.gandiva", rounds="original", fill_leftover=False)
    assert e.value.path == "fill_leftover"
    with pytest.raises(InvalidOption) as e:
        get_policy("gavel.fifo_packed", rounds="alg2")
    assert e.value.path == "rounds"


def test_gandiva_under_gavels_rounds_draws_pairs_only_at_resets():
    # two K80s, four one-worker jobs with measured pairs: over-subscribed, so Gandiva
    # draws pairs; under Gavel's mechanics only at counter resets (the first at t = 0,
    # then at the first change of the job set, then 1,920 s apart)
    cl = Cluster((Node("n0", {"k80": 2}),))
    jobs = tuple(Job(j, arrival=0.0, workers=1, work=2000.0, throughput={"k80": 1.0},
                     profile=j) for j in "abcd")
    table = Colocation(tuple(PairRate("k80", x, y, 1, 0.8, 0.8)
                             for i, x in enumerate("abcd") for y in "abcd"[i + 1:]))
    inst = Instance(cl, jobs, slot=360.0, colocation=table)
    pol = get_policy("gavel.gandiva", pairing_seed=0, rounds="original")
    res = simulate(inst, pol, seed=0, progress=False)
    assert len(res.schedule.completion) == 4
    assert any(a.partner is not None for a in res.schedule.allocations)
    assert pol.stats()["allocation_solves"] == pol.rounds.resets


@pytest.mark.parametrize("kind", ["max_min_fairness_packed", "min_total_duration_packed"])
def test_on_gavels_trace_pairs_run_at_measured_rates(kind):
    # the first 12 one-worker jobs of Gavel's trace whose keys Gavel measured (its
    # co-located rates): the run validates, and the pairs it forms are measured ones
    from optsched.catalog import profiles, read_gavel_trace

    trace, table = read_gavel_trace(), profiles()
    jobs = tuple(j for j in trace.jobs if j.workers == 1
                 and 1 in table[j.profile].scale_factors)[:12]
    inst = trace.replace(jobs=jobs)
    pol = get_policy(f"gavel.{kind}", rounds="original")
    res = simulate(inst, pol, seed=0, progress=False)
    assert len(res.schedule.completion) == 12
    pairs = [a for a in res.schedule.allocations if a.partner is not None]
    assert pairs
    for a in pairs:
        assert inst.colocated_rate(a.job, a.partner, a.gpu_type) > 0
    assert pol.rounds.resets >= 2


def test_fifo_packed_packs_the_next_job_when_no_gpu_is_free_as_gavels_code():
    # one V100; a (720 steps) and b (360) at 1 step/s alone, 0.9 each together (the
    # pair's normalised throughput 1.8 > 1.5). Gavel's pass takes a, then stops before b
    # because no GPU is free, and packs b with a: 324 whole steps each per round. In the
    # second round b's last 36 steps end at 400 and a's 324 at 720; at 720 a runs alone
    # (a reset: the first one was at t = 0) its last 72 steps, ending at 792. The
    # default stops at b without packing it: b runs only after a, from 720 to 1080.
    inst = _pair_instance(720.0, 360.0, alone=1.0, together=0.9, slot=360.0)
    res = simulate(inst, get_policy("gavel.fifo_packed", rounds="original"), seed=0,
                   progress=False)
    assert res.schedule.completion["b"] == pytest.approx(400.0)
    assert res.schedule.completion["a"] == pytest.approx(792.0)
    alg1 = simulate(inst, get_policy("gavel.fifo_packed"), seed=0, progress=False)
    assert alg1.schedule.completion["b"] == pytest.approx(1080.0)
