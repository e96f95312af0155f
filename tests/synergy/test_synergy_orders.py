"""Synergy's DRF, TETRIS and SRSF orders and the Synergy-OPT allocator in the simulator,
on instances of 2-4 jobs whose rounds are worked out by hand in the comments."""

from __future__ import annotations

import pytest

from optsched import Cluster, Instance, InvalidOption, Job, Node, Sensitivity
from optsched.registry import simulate
from optsched.synergy.policy import SynergyPolicy, simulate_synergy

SLOT = 100.0


def flat(best_cpu: float, best_memory: float) -> Sensitivity:
    """A job that runs at the fair speed in every configuration, declaring a best case."""
    return Sensitivity((3.0, 6.0), (62.5, 187.5), ((1.0, 1.0), (1.0, 1.0)),
                       best_cpu=best_cpu, best_memory=best_memory)


def four_jobs() -> Instance:
    """One server of 4 GPUs, 12 cores, 250 GB (fair share 3 cores, 62.5 GB per GPU),
    100 s rounds, every job arriving at 0 at per-GPU rate 1 iteration/s.

    ====  ====  ======  ==============  ======================  ==================
    job   GPUs  work    best (c, m)     DRF share max(g,c,m)    TETRIS rt x sum
    ====  ====  ======  ==============  ======================  ==================
    D     2     180     (3, 62.5)/GPU   max(.5, .5, .5) = .5    90 x 1.5 = 135
    A     1     150     (6, 62.5)       max(.25, .5, .25) = .5  150 x 1.0 = 150
    B     1     100     (3, 187.5)      max(.25, .25, .75)=.75  100 x 1.25 = 125
    C     1     100     (3, 62.5)       .25                     100 x .75 = 75
    ====  ====  ======  ==============  ======================  ==================

    SRSF's remaining service (GPU-seconds) is D 180, A 150, B 100, C 100.
    """
    node = Node("s0", {"v100": 4}, cpus=12.0, memory=250.0)
    jobs = (Job("D", 0.0, 2, 180.0, {"v100": 1.0}, sensitivity=flat(3.0, 62.5)),
            Job("A", 0.0, 1, 150.0, {"v100": 1.0}, sensitivity=flat(6.0, 62.5)),
            Job("B", 0.0, 1, 100.0, {"v100": 1.0}, sensitivity=flat(3.0, 187.5)),
            Job("C", 0.0, 1, 100.0, {"v100": 1.0}, sensitivity=flat(3.0, 62.5)))
    return Instance(Cluster((node,)), jobs, slot=SLOT)


# Round 0 admits jobs in the order while their GPUs fit (4 GPUs); the proportional share
# always fits. A job whose work runs out inside a round completes there (D alone on 2
# GPUs needs 90 s); the next round at 100 s runs what is left.
EXPECTED = {
    # D, A, B (C does not fit); at 100: A (50 left) and C
    "fifo": {"D": 90.0, "A": 150.0, "B": 100.0, "C": 200.0},
    # C, then D before A (tie .5, D first by index), B waits; at 100: A and B
    "drf": {"C": 100.0, "D": 90.0, "A": 150.0, "B": 200.0},
    # C 75, B 125, D 135: A waits; at 100: A alone
    "tetris": {"C": 100.0, "B": 100.0, "D": 90.0, "A": 250.0},
    # B, C (100, by index), A 150: D's 2 GPUs do not fit; at 100: A (50 left) and D
    "srsf": {"B": 100.0, "C": 100.0, "A": 150.0, "D": 190.0},
}


@pytest.mark.parametrize("order", sorted(EXPECTED))
def test_orders_first_rounds_by_hand(order):
    res = simulate_synergy(four_jobs(), "proportional", order)
    assert res.schedule.completion == pytest.approx(EXPECTED[order])


def test_drf_greedy_skips_what_does_not_fit_by_hand():
    """``synergy.drf`` runs GREEDY (the original's plain ``DRF``). Round 0 in DRF order
    C, D, A, B: C (3, 62.5) and D 2 x (3, 62.5) take 9 cores; A asks 6 cores, 3 are
    free: skipped; B asks 187.5 GB, 62.5 are free: skipped. At 100: A (6, 62.5) and B
    (3, 187.5) both fit (9 cores, 250 GB) and run 150 and 100 s at the fair speed."""
    res = simulate(four_jobs(), "synergy.drf", progress=False)
    assert res.schedule.completion == pytest.approx({"C": 100.0, "D": 90.0, "A": 250.0,
                                                     "B": 200.0})
    assert res.extra["order"] == "drf" and res.extra["allocator"] == "greedy"


def two_sensitive() -> Instance:
    """One server of 4 GPUs, 12 cores, 250 GB; two 1-GPU jobs whose speed grows with
    cores (3, 6 or 9 per GPU; memory 62.5 GB): X runs 1, 2, 2.2 times the fair speed and
    declares 6 cores as its best case; Y runs 1, 1.5, 3 times and declares 9."""
    def sens(t6: float, t9: float, best: float) -> Sensitivity:
        return Sensitivity((3.0, 6.0, 9.0), (62.5,), ((1.0,), (t6,), (t9,)),
                           best_cpu=best, best_memory=62.5)
    node = Node("s0", {"v100": 4}, cpus=12.0, memory=250.0)
    return Instance(Cluster((node,)),
                    (Job("X", 0.0, 1, 200.0, {"v100": 1.0}, sensitivity=sens(2.0, 2.2, 6.0)),
                     Job("Y", 0.0, 1, 300.0, {"v100": 1.0}, sensitivity=sens(1.5, 3.0, 9.0))),
                    slot=SLOT)


def test_opt_allocator_by_hand():
    """Round 0: the cores per GPU (c_X, c_Y) with c_X + c_Y <= 12 maximising
    T_X + T_Y: (3, 9) gives 1 + 3 = 4, (6, 6) 3.5, (9, 3) 3.2, (6, 3) 3 -- OPT takes
    (3, 9): Y finishes its 300 iterations at 100 s, X has 100 left. At 100 X is alone
    and takes 9 cores (2.2): done at 100 + 100 / 2.2. TUNE instead gives X its declared
    6 cores (2), then Y's 9 do not fit and Y falls back to the fair share (1): X done at
    100, Y has 200 left and runs alone at 9 cores (3): done at 100 + 200 / 3."""
    opt = simulate(two_sensitive(), "synergy.opt", progress=False)
    assert opt.schedule.completion == pytest.approx({"Y": 100.0, "X": 100.0 + 100.0 / 2.2})
    assert opt.extra["opt_status"] == {"optimal": 2}
    assert opt.extra["opt_failed_rounds"] == 0
    tune = simulate_synergy(two_sensitive(), "tune", "fifo")
    assert tune.schedule.completion == pytest.approx({"X": 100.0, "Y": 100.0 + 200.0 / 3.0})


def test_new_options_are_checked():
    with pytest.raises(InvalidOption, match="time_limit"):
        SynergyPolicy("tune", "fifo", time_limit=5.0)
    with pytest.raises(InvalidOption, match="time_limit"):
        SynergyPolicy("opt", "fifo", time_limit=0.0)
    with pytest.raises(InvalidOption, match="remaining_at"):
        SynergyPolicy("tune", "drf", remaining_at="fair")
    assert SynergyPolicy("tune", "tetris", remaining_at="fair").remaining_at == "fair"
    with pytest.raises(InvalidOption, match="allocator"):
        simulate(four_jobs(), "synergy.srsf", allocator="fast", progress=False)


def test_place_mode_packs_by_hand():
    """Two servers of 4 GPUs; gangs of 3 and 2 GPUs and a single GPU, in that order, at
    the fair share. First fit: G3 on s0 (3), G2 on s0 (1) + s1 (1), B on s1. Placement-
    sensitive: G3 on s0 (both have 4 free: lowest index); G2 whole on the only server
    holding 2 GPUs, s1; B on the server with the fewest free GPUs, s0 (1 against 2)."""
    nodes = tuple(Node(f"s{i}", {"v100": 4}, cpus=12.0, memory=250.0) for i in range(2))
    inst = Instance(Cluster(nodes), (Job("G3", 0.0, 3, 30.0, {"v100": 1.0}),
                                     Job("G2", 0.0, 2, 20.0, {"v100": 1.0}),
                                     Job("B", 0.0, 1, 10.0, {"v100": 1.0})), slot=SLOT)

    def first_round(place: bool) -> dict[str, dict[str, int]]:
        res = simulate_synergy(inst, "proportional", "fifo", place=place)
        out: dict[str, dict[str, int]] = {}
        for a in res.schedule.allocations:
            if a.start == 0.0:
                out.setdefault(a.job, {})[a.node] = a.gpus
        return out

    assert first_round(False) == {"G3": {"s0": 3}, "G2": {"s0": 1, "s1": 1}, "B": {"s1": 1}}
    assert first_round(True) == {"G3": {"s0": 3}, "G2": {"s1": 2}, "B": {"s0": 1}}
    with pytest.raises(InvalidOption, match="place"):
        SynergyPolicy("opt", "fifo", place=True)
