"""Synergy's job orders in the simulator: SRTF's remaining-time estimate and the
starvation guard, pinned on small instances worked out by hand."""

from __future__ import annotations

import pytest

from optsched import Cluster, Instance, InvalidOption, Job, Node, Sensitivity
from optsched.synergy import servers
from optsched.synergy.policy import STARVATION, SynergyPolicy, simulate_synergy

H = 3600.0


def hours_job(i: str, arrival_h: float, workers: int, hours: float,
              sens: Sensitivity | None = None) -> Job:
    """A gang that needs ``hours`` at the fair share (per-worker rate 1 / (g h))."""
    return Job(i, arrival_h * H, workers, hours, {"v100": 1.0 / (workers * H)},
               sensitivity=sens)


def jct_h(res) -> dict[str, float]:
    return {k: v / H for k, v in res.metrics.jct.items()}


# --------------------------------------------------------------------------- starvation
def starved_instance() -> Instance:
    """One 8-GPU server, 1 h rounds. A 20 h single-GPU job arrives at 0 together with a
    stream of 10 h 8-GPU jobs, one every 9 h for 1206 h: there is always a shorter job
    that takes the whole server."""
    stream = [hours_job(f"s{k}", 9.0 * k, 8, 10.0) for k in range(135)]
    return Instance(servers(1), (hours_job("long", 0.0, 1, 20.0), *stream), slot=H)


def test_srtf_starvation_guard_pinned():
    inst = starved_instance()
    r = simulate_synergy(inst, "proportional", "srtf")
    # flagged at the first boundary more than 1000 h after its arrival (1001 h), put
    # ahead from the next one (Synergy sets the priority after sorting): runs 1002-1022 h
    assert jct_h(r)["long"] == pytest.approx(1022.0)
    assert r.extra["starved"] >= 1 and r.extra["starvation"] == STARVATION
    # pure SRTF: the long job runs only once the stream's backlog is gone
    pure = simulate_synergy(inst, "proportional", "srtf", starvation=None)
    done = pure.schedule.completion
    assert max(v for k, v in done.items() if k != "long") / H == pytest.approx(1350.0)
    assert jct_h(pure)["long"] == pytest.approx(1350.0 + 20.0)
    # a shorter threshold moves the start: flagged at 101 h, runs 102-122 h
    short = simulate_synergy(inst, "tune", "srtf", starvation=100 * H)
    assert jct_h(short)["long"] == pytest.approx(122.0)


def test_las_and_ftf_have_the_guard_fifo_does_not():
    inst = starved_instance()
    for order in ("las", "ftf"):
        assert SynergyPolicy("proportional", order).starvation == STARVATION
        SynergyPolicy("proportional", order, starvation=None)
    with pytest.raises(InvalidOption, match="starvation"):
        SynergyPolicy("proportional", "fifo", starvation=None)
    for bad in (0, -1.0, True, "1000h", float("nan")):
        with pytest.raises(InvalidOption, match="starvation"):
            SynergyPolicy("proportional", "srtf", starvation=bad)
    assert simulate_synergy(inst, "proportional", "fifo").extra["starved"] == 0


# --------------------------------------------------------------------------- SRTF estimate
def node4() -> Cluster:
    """4 GPUs, 24 cores, 250 GB: fair share 6 cores and 62.5 GB per GPU."""
    return Cluster((Node("n0", {"v100": 4}, cpus=24.0, memory=250.0),))


FLAT = Sensitivity((6.0, 8.0), (62.5,), ((1.0,), (1.0,)), 6.0, 62.5)
FAST = Sensitivity((6.0, 8.0), (62.5,), ((1.0,), (2.0,)), 8.0, 62.5)  # 2x at 8 cores


def test_srtf_ranks_at_the_allocators_speed_pinned():
    """A needs 10 h, B 12 h at the fair share but 6 h at its best case (3 GPUs x 8 cores
    fit the server); only one 3-GPU gang fits at a time."""
    inst = Instance(node4(), (hours_job("A", 0, 3, 10.0, FLAT),
                              hours_job("B", 0, 3, 12.0, FAST)), slot=H)
    # Synergy's TUNE ranks by the time at the best case: B (6 h) before A (10 h)
    assert jct_h(simulate_synergy(inst, "tune", "srtf")) == pytest.approx(
        {"B": 6.0, "A": 16.0})
    assert jct_h(simulate_synergy(inst, "greedy", "srtf")) == pytest.approx(
        {"B": 6.0, "A": 16.0})
    # at the fair share A is shorter; B then runs at its best case
    assert jct_h(simulate_synergy(inst, "tune", "srtf", remaining_at="fair")) == \
        pytest.approx({"A": 10.0, "B": 16.0})
    # proportional never runs B faster than the fair share
    assert jct_h(simulate_synergy(inst, "proportional", "srtf")) == pytest.approx(
        {"A": 10.0, "B": 22.0})
    with pytest.raises(InvalidOption, match="remaining_at"):
        SynergyPolicy("tune", "srtf", remaining_at="best")
    with pytest.raises(InvalidOption, match="remaining_at"):
        SynergyPolicy("tune", "las", remaining_at="fair")


def test_srtf_tune_ranks_a_job_cut_to_the_fair_share_at_it_next_round_pinned():
    """Round 0-1 h: C (1 GPU, 0.5 h) takes 6 cores, so TUNE runs B (3 GPUs) at the fair
    share. At 1 h B ranks at the fair share (11 h left) behind D (8 h) and D runs; at 2 h
    B ranks at its best case again (5.5 h < D's 7 h), runs alone at 2x and ends at
    7.5 h; D resumes at the 8 h boundary and ends at 15 h. Ranking B at its best case
    throughout would give B 6.5 h."""
    inst = Instance(node4(), (hours_job("C", 0, 1, 0.5, FLAT),
                              hours_job("B", 0, 3, 12.0, FAST),
                              hours_job("D", 0, 3, 8.0, FLAT)), slot=H)
    assert jct_h(simulate_synergy(inst, "tune", "srtf")) == pytest.approx(
        {"C": 0.5, "B": 7.5, "D": 15.0})


# --------------------------------------------------------------------------- Synergy itself
def peer_small():
    """Synergy's own simulator (benchmarks/peers/synergy_run.py, synthetic workload:
    120 jobs of 1/2/4/8 GPUs, split 50/0/50, 1.125 jobs/h on 2 servers) and the same
    jobs as an optsched instance."""
    import gzip
    import json
    from pathlib import Path

    with gzip.open(Path(__file__).parent / "peer_synthetic_n120.json.gz", "rt") as f:
        data = json.load(f)
    return data, Instance.from_dict(data["instance"])


@pytest.mark.parametrize("scheduler,allocator,order", [("SRTF+tune", "tune", "srtf"),
                                                        ("SRTF+fair", "proportional", "srtf")])
def test_srtf_agrees_with_synergys_simulator(scheduler, allocator, order):
    """Per-job JCTs of Synergy's SRTF on its own jobs, pinned: mean JCT within 0.5 %,
    Pearson r >= 0.9999 (Synergy completes jobs at round ends, optsched inside them)."""
    import numpy as np

    data, inst = peer_small()
    want = data["jct"][scheduler]
    got = simulate_synergy(inst, allocator, order).metrics.jct
    ks = sorted(want, key=int)
    x, y = np.array([want[k] for k in ks]), np.array([got[k] for k in ks])
    assert set(got) == set(want)
    assert abs(y.mean() / x.mean() - 1) <= 0.005
    assert np.corrcoef(x, y)[0, 1] >= 0.9999
    if allocator == "tune":
        # ranking TUNE's jobs at the fair share (the previous estimate) is not Synergy's
        fair = simulate_synergy(inst, allocator, order, remaining_at="fair").metrics.jct
        z = np.array([fair[k] for k in ks])
        assert np.corrcoef(x, z)[0, 1] < 0.995
