"""Gavel's ``gandiva`` policy: equal split, random pairs kept while they pay off."""

from __future__ import annotations

import random

import numpy as np
import pytest

from optsched.core.instance import Cluster, Colocation, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.gavel.policy import GavelGandivaPolicy
from optsched.registry import get_policy
from optsched.sim import simulate


def _instance(n: int = 4, gpus: int = 2, rate_ab: float = 6.0, work: float = 3600.0,
              colocation: bool = True) -> Instance:
    """``n`` one-GPU jobs on ``gpus`` V100s and ``gpus`` K80s; every pair measured on
    both types at ``rate_ab`` (isolated 10 on V100, 5 on K80)."""
    cl = Cluster((Node("n0", {"v100": gpus, "k80": gpus}),))
    ids = [f"j{i}" for i in range(n)]
    jobs = tuple(Job(j, 0.0, 1, work, {"v100": 10.0, "k80": 5.0}) for j in ids)
    rows = {t: [(a, b, None, r, r) for i, a in enumerate(ids) for b in ids[i + 1:]]
            for t, r in (("v100", rate_ab), ("k80", rate_ab / 2))}
    return Instance(cl, jobs, slot=60.0,
                    colocation=Colocation.of(rows) if colocation else None)


def _first_view(inst, policy):
    seen = []

    class Spy(GavelGandivaPolicy):
        def allocate(self, state):
            if not seen:
                seen.append(self.allocation(state))
            return super().allocate(state)

    spy = Spy(**policy)
    res = simulate(inst, spy, seed=0, progress=False)
    return seen[0], res, spy


def test_no_packing_when_the_jobs_fit():
    (X, pairs, Y), res, pol = _first_view(_instance(n=4, gpus=2), {"pairing_seed": 0})
    assert len(pairs) == 0 and pol.stats()["packed_allocations"] == 0
    # each job c_k / (n W) of each type, rows scaled to 1: 2/4 + 2/4 = 1
    np.testing.assert_allclose(X, 0.5)
    assert not any(a.partner for a in res.schedule.allocations)


def test_over_subscribed_jobs_are_paired_with_gavels_draws():
    inst = _instance(n=6, gpus=1)
    (X, pairs, Y), res, pol = _first_view(inst, {"pairing_seed": 3})
    # the same draws as Gavel's GandivaPolicy(seed=3) on jobs 0..5 of one gang size
    rng, pool, expect = random.Random(3), list(range(6)), []
    for _ in range(6):
        if len(pool) < 2:
            break
        a, b = rng.sample(pool, 2)
        pool.remove(a)
        pool.remove(b)
        expect.append((min(a, b), max(a, b)))
    assert sorted(map(tuple, pairs.rows.tolist())) == sorted(expect)
    # 3 combinations share 1 + 1 GPUs: each pair 1/3 of each type, no single rows
    np.testing.assert_allclose(Y, 1 / 3)
    assert not X.any()
    partnered = [a for a in res.schedule.allocations if a.partner is not None]
    assert partnered
    for a in partnered:
        assert inst.colocated_rate(a.job, a.partner, a.gpu_type) > 0


@pytest.mark.parametrize(("rate", "kept"), [(0.04, False), (6.0, True)])
def test_pairs_are_kept_only_while_they_pay_off(rate, kept):
    """nu = 2 x rate / 10 + 2 x (rate / 2) / 5: 0.016 drops every pair at the next
    allocation, 2.4 keeps it while both jobs are there."""
    from optsched.gavel.policy import normalised_pair_throughput

    survivors = []

    class Spy(GavelGandivaPolicy):
        def _drop_stale_pairs(self, view, pos):
            super()._drop_stale_pairs(view, pos)
            survivors.append(dict(self._partner))
            for a, b in self._partner.items():
                assert normalised_pair_throughput(view, pos[a], pos[b]) == pytest.approx(
                    4 * rate / 10)

    inst = _instance(n=6, gpus=1, rate_ab=rate)
    pol = Spy(pairing_seed=0)
    simulate(inst, pol, seed=0, progress=False)
    assert pol.stats()["pairs_drawn"] >= 3
    assert any(survivors) is kept


def test_without_a_colocation_table_nothing_is_drawn():
    inst = _instance(n=6, gpus=1, colocation=False)
    (X, pairs, Y), res, pol = _first_view(inst, {})
    assert len(pairs) == 0 and pol.stats()["pairs_drawn"] == 0
    np.testing.assert_allclose(X, 1 / 6)  # 6 combinations share 1 + 1 GPUs
    assert len(res.schedule.completion) == 6


def test_the_seed_decides_the_run():
    inst = _instance(n=7, gpus=1)
    runs = [simulate(inst, get_policy("gavel.gandiva"), seed=s, progress=False)
            for s in (0, 0, 1, 2, 3)]
    ends = [tuple(sorted(r.schedule.completion.items())) for r in runs]
    assert ends[0] == ends[1]
    assert len(set(ends[1:])) > 1  # the draws move the jobs
    fixed = [simulate(inst, get_policy("gavel.gandiva", pairing_seed=5), seed=s,
                      progress=False) for s in (0, 1)]
    assert fixed[0].schedule.completion == fixed[1].schedule.completion


@pytest.mark.parametrize(("option", "value"), [("pairing_seed", -1), ("pairing_seed", 1.5),
                                               ("pairing_seed", True),
                                               ("fill_leftover", "yes"),
                                               ("reset_interval", -3)])
def test_bad_options_name_the_option(option, value):
    with pytest.raises(InvalidOption) as e:
        get_policy("gavel.gandiva", **{option: value})
    assert e.value.path == option


# ------------------------------------------------------------------ the queue option
def _lone_job() -> Instance:
    """One job on 1 V100 + 3 K80: its equal split is 1/4 V100, 3/4 K80."""
    cl = Cluster((Node("n0", {"v100": 1, "k80": 3}),))
    return Instance(cl, (Job("a", 0.0, 1, 10 * 4 * 60.0, {"v100": 10.0, "k80": 2.0}),),
                    slot=60.0)


def test_global_queue_realises_the_shares_per_type_queue_runs_fastest_first():
    on = {}
    for queue in ("global", "per_type"):
        res = simulate(_lone_job(), get_policy("gavel.gandiva", queue=queue), seed=0,
                       progress=False)
        on[queue] = [a.gpu_type for a in res.schedule.allocations]
    # Gavel's code walks the V100 queue first: the lone job never sees the K80s
    assert set(on["per_type"]) == {"v100"}
    # one global queue over X / f: the K80 share (3/4) comes first and is realised
    assert on["global"][0] == "k80" and "v100" in on["global"]


def test_type_walk_is_fastest_first_or_drawn():
    from optsched.gavel.policy import type_walk

    T = np.array([[1.0, 5.0, 3.0], [0.0, 4.0, 2.0], [2.0, 0.0, 9.0]])

    class V:
        rng = np.random.default_rng(0)

    # medians over the jobs that can use each type: 1.5, 4.5, 3.0
    assert type_walk(V, T, False).tolist() == [2, 0, 1]
    drawn = {tuple(type_walk(V, T, True).tolist()) for _ in range(30)}
    assert len(drawn) > 1 and all(sorted(d) == [0, 1, 2] for d in drawn)


@pytest.mark.parametrize("policy", ["gavel.max_min_fairness", "gavel.isolated",
                                    "gavel.max_min_fairness_packed", "gavel.gandiva"])
def test_bad_queue_names_the_option(policy):
    with pytest.raises(InvalidOption) as e:
        get_policy(policy, queue="per-type")
    assert e.value.path == "queue"


@pytest.mark.slow  # 3 s
def test_pinned_peer_run_of_gandiva_with_gavels_queue():
    """benchmarks/results/gavel_queue_peer.json (Gavel c4fa400's GandivaPolicy(seed=0)
    on the first 100 measured jobs of its trace, gavel-108): with Gavel's per-type queue
    and the same pairing seed our run reproduces the pinned row, mean JCT within 1 % of
    Gavel's."""
    import json

    from paths import BENCHMARKS

    sys_path = str(BENCHMARKS)
    import sys

    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    import gavel_policies_peer as peer

    rows = json.loads((BENCHMARKS / "results/gavel_queue_peer.json").read_text())["rows"]
    row = next(r for r in rows if r["gavel_policy"] == "gandiva@measured"
               and "per_type" in r["ours_policy"])
    o = peer.run_ours(100, "gavel.gandiva", {"pairing_seed": 0, "queue": "per_type"},
                      "measured")
    assert o["mean_jct"] / 3600 == pytest.approx(row["ours_mean_jct_h"], rel=1e-9)
    assert o["mean_jct"] / 3600 == pytest.approx(row["gavel_mean_jct_h"], rel=0.01)
