"""Every metric against a hand computation, on small schedules with arrivals and sharing.

The numbers are written out so that a changed formula (an operator, a constant, a
statistic) fails here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from optsched import (
    Allocation,
    Cluster,
    Instance,
    InvalidSchedule,
    Job,
    Node,
    Schedule,
    compute_metrics,
    validate_schedule,
)
from optsched.core.metrics import isolated_runtime
from optsched.core.validate import Capabilities


@pytest.fixture
def shared() -> tuple[Instance, Schedule]:
    """One node with one V100 and one K80; three jobs arriving at 10, 20 and 30 s.

    * A (W=1, 100 it, V100 10/s, K80 5/s): V100 alone over [10, 20): 100 it, done at 20;
    * B (W=1, 60 it, V100 4/s, K80 2/s): half the V100 (share 0.5) over [20, 50):
      4 x 0.5 x 30 = 60 it, done at 50;
    * C (W=1, 30 it, K80 3/s only): the K80 over [35, 40) and [42, 47): 15 + 15 it,
      done at 47 (first start 35: 5 s of queueing).
    """
    cl = Cluster((Node("n0", {"v100": 1, "k80": 1}),))
    jobs = (Job("A", 10, 1, 100, {"v100": 10, "k80": 5}),
            Job("B", 20, 1, 60, {"v100": 4, "k80": 2}),
            Job("C", 30, 1, 30, {"k80": 3}))
    sched = Schedule((Allocation("A", 10, 20, "n0", "v100", 1),
                      Allocation("B", 20, 50, "n0", "v100", 1, share=0.5),
                      Allocation("C", 35, 40, "n0", "k80", 1),
                      Allocation("C", 42, 47, "n0", "k80", 1)),
                     {"A": 20, "B": 50, "C": 47}, sharing=True)
    return Instance(cl, jobs, slot=10), sched


def test_jct_statistics_by_hand(shared):
    inst, s = shared
    validate_schedule(inst, s, "salus")
    m = compute_metrics(inst, s)
    # JCT: A 20-10 = 10, B 50-20 = 30, C 47-30 = 17
    assert m.jct == {"A": 10, "B": 30, "C": 17}
    assert m.mean_jct == pytest.approx(57 / 3)
    assert m.p50_jct == pytest.approx(17)
    # p99 of (10, 17, 30), linear between order statistics: rank 0.99 x 2 = 1.98,
    # 17 + 0.98 x (30 - 17) = 29.74
    assert m.p99_jct == pytest.approx(29.74)
    # queueing: first start minus arrival: A 0, B 0, C 35 - 30 = 5 (not 42 - 30)
    assert m.queueing_delay == {"A": 0, "B": 0, "C": 5}
    assert m.mean_queueing_delay == pytest.approx(5 / 3)
    assert m.utility == 3.0


def test_waiting_time_by_hand(shared):
    inst, s = shared
    m = compute_metrics(inst, s)
    # time in the system holding no GPU: A 10 - 10 = 0, B 30 - 30 = 0 (a shared GPU is
    # held), C 17 - (5 + 5) = 7: 5 s before its first start and 2 s between [35, 40) and
    # [42, 47); its queueing delay is 5
    assert m.waiting_time == {"A": 0, "B": 0, "C": 7}
    assert m.mean_waiting_time == pytest.approx(7 / 3)
    for jid, w in m.waiting_time.items():
        assert m.queueing_delay[jid] <= w <= m.jct[jid]
    assert m.to_dict()["mean_waiting_time"] == m.mean_waiting_time
    assert m.to_dict()["waiting_time"] == m.waiting_time


def test_waiting_time_counts_overlapping_allocations_once():
    # a 2-worker gang over two nodes ([0, 10) on both), then one copy on [8, 14) of a
    # forked job: the union is [0, 14), so 20 - 14 = 6 s of waiting
    cl = Cluster((Node("n0", {"k80": 1}), Node("n1", {"k80": 1})))
    inst = Instance(cl, (Job("A", 0, 1, 140, {"k80": 5}),), slot=1)
    allocs = (Allocation("A", 0, 10, "n0", "k80", 1, copy=0),
              Allocation("A", 0, 10, "n1", "k80", 1, copy=1),
              Allocation("A", 8, 14, "n0", "k80", 1, copy=0))
    m = compute_metrics(inst, Schedule(allocs, {"A": 20}, forking=True))
    assert m.waiting_time == {"A": pytest.approx(6)}
    # a job that never held a GPU is not in the average (it has no JCT either)
    assert compute_metrics(inst, Schedule((), {})).mean_waiting_time is None


def test_makespan_and_cru_with_arrivals_and_sharing(shared):
    inst, s = shared
    m = compute_metrics(inst, s)
    # makespan from the first arrival (10), not from 0: 50 - 10 = 40
    assert m.makespan == pytest.approx(40)
    # busy GPU-seconds, a shared GPU by its share: A 1 x 10, B 0.5 x 30, C 1 x (5 + 5)
    assert m.busy_gpu_seconds == pytest.approx(10 + 15 + 10)
    # CRU = 35 / (2 GPUs x 40 s)
    assert m.cru == pytest.approx(35 / 80)


def test_isolated_runtime_finish_time_fairness_and_slowdown_by_hand(shared):
    inst, s = shared
    # equal share of 3 jobs: each type (1 GPU) for a time fraction 1/3 per worker
    # A: 10/3 + 5/3 = 5 it/s -> 100/5 = 20 s; B: 4/3 + 2/3 = 2 it/s -> 30 s;
    # C: K80 only, 3/3 = 1 it/s -> 30 s
    assert isolated_runtime(inst) == pytest.approx([20, 30, 30])
    m = compute_metrics(inst, s)
    # FTF = JCT / t_iso: A 10/20, B 30/30, C 17/30
    assert m.mean_ftf == pytest.approx((0.5 + 1 + 17 / 30) / 3)
    assert m.max_ftf == pytest.approx(1.0)
    # slowdown = JCT / (work / (W x fastest rate)): A 10/10, B 30/15, C 17/10
    assert m.mean_slowdown == pytest.approx((1 + 2 + 1.7) / 3)


def test_isolated_runtime_scales_rows_and_divides_by_workers():
    # one job alone on 4 V100 + 4 K80: fractions (4/1)/1 = 4 per type, rows scaled to
    # sum 1: 0.5 each -> 10 x 0.5 + 5 x 0.5 = 7.5 it/s -> 100 / 7.5 s
    cl = Cluster((Node("n0", {"v100": 4, "k80": 4}),))
    one = Instance(cl, (Job("A", 0, 1, 100, {"v100": 10, "k80": 5}),))
    assert isolated_runtime(one) == pytest.approx([100 / 7.5])
    # two jobs on 4 V100: a 2-worker job holds (4/2)/2 = 1 -> 2 x 10 x 1 = 20 it/s; a
    # 4-worker job (4/2)/4 = 0.5 -> 4 x 10 x 0.5 = 20 it/s (an equal share is 2 GPUs)
    cl4 = Cluster((Node("n0", {"v100": 4}),))
    two = Instance(cl4, (Job("W2", 0, 2, 200, {"v100": 10}),
                         Job("W4", 0, 4, 400, {"v100": 10})))
    assert isolated_runtime(two) == pytest.approx([10, 20])


def test_weighted_utility_with_a_utility_function():
    from optsched.core.instance import Utility

    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = (Job("A", 5, 1, 10, {"v100": 1}, weight=2.0,
                utility=Utility("step", value=3.0, deadline=12, late_value=1.0)),
            Job("B", 0, 1, 5, {"v100": 1}, weight=0.5))
    inst = Instance(cl, jobs)
    s = Schedule((Allocation("B", 0, 5, "n0", "v100", 1),
                  Allocation("A", 5, 15, "n0", "v100", 1)), {"A": 15, "B": 5})
    validate_schedule(inst, s)
    m = compute_metrics(inst, s)
    # A: JCT 10 <= deadline 12: 2 x 3; B: no utility, its weight 0.5
    assert m.utility == pytest.approx(6.5)
    late = Schedule((Allocation("B", 0, 5, "n0", "v100", 1),
                     Allocation("A", 8, 18, "n0", "v100", 1)), {"A": 18, "B": 5})
    # A: JCT 13 > 12: 2 x 1 (late value)
    assert compute_metrics(inst, late).utility == pytest.approx(2.5)


# ------------------------------------------------------------------ coverage
def test_metrics_say_how_many_jobs_they_cover():
    cl = Cluster((Node("n0", {"v100": 1}),))
    jobs = (Job("A", 0, 1, 10, {"v100": 1}), Job("B", 0, 1, 100, {"v100": 1}))
    inst = Instance(cl, jobs)
    s = Schedule((Allocation("A", 0, 10, "n0", "v100", 1),
                  Allocation("B", 10, 30, "n0", "v100", 1)), {"A": 10})
    validate_schedule(inst, s)  # B did 20 of its 100 iterations: unfinished
    m = compute_metrics(inst, s)
    assert (m.n_jobs, m.n_completed, m.n_unfinished, m.unfinished) == (2, 1, 1, ("B",))
    assert not m.complete
    d = json.loads(json.dumps(m.to_dict()))
    assert (d["n_jobs"], d["n_completed"], d["n_unfinished"], d["unfinished"]) == \
        (2, 1, 1, ["B"])
    assert m.to_dict(per_job=False)["n_unfinished"] == 1


def test_a_finished_job_left_out_of_completion_is_refused(shared):
    """Dropping the slowest job from completion would improve the mean JCT (19 -> 13.5):
    the validator refuses it, naming the job."""
    inst, s = shared
    dropped = Schedule(s.allocations, {"A": 20, "C": 47}, sharing=True)
    with pytest.raises(InvalidSchedule, match="did all its 60 iterations") as err:
        validate_schedule(inst, dropped, "salus")
    assert err.value.path == "completion.B"


# ------------------------------------------------------------------ completion time
def _late(comp: float, end: float = 5.0) -> tuple[Instance, Schedule]:
    cl = Cluster((Node("n0", {"v100": 1}),))
    inst = Instance(cl, (Job("A", 0, 1, 50, {"v100": 10}),), slot=10)
    return inst, Schedule((Allocation("A", 0, end, "n0", "v100", 1),), {"A": comp})


def test_a_completion_long_after_the_work_is_refused():
    # 50 iterations at 10/s: done at 5 s. Declared at 9 s: in continuous time refused
    inst, s = _late(9.0)
    with pytest.raises(InvalidSchedule, match="did its work by t=5") as err:
        validate_schedule(inst, s)
    assert err.value.path == "completion.A"
    validate_schedule(inst, _late(5.0)[1])
    # slotted time (10 s slots): up to the end of the slot the work is done in, no later
    validate_schedule(inst, s, "tiresias")
    validate_schedule(inst, _late(10.0)[1], "tiresias")
    with pytest.raises(InvalidSchedule, match="at most 10"):
        validate_schedule(inst, _late(11.0)[1], "tiresias")
    # a model planning on 30 s slots (declared by the caller)
    validate_schedule(inst, _late(30.0)[1], "hadar", slot=30.0)
    with pytest.raises(InvalidSchedule, match="at most 30"):
        validate_schedule(inst, _late(31.0)[1], "hadar", slot=30.0)
    # holding the GPU to the end of its allocation: completion at its end
    validate_schedule(inst, _late(30.0, end=30.0)[1], "tiresias")
    with pytest.raises(InvalidSchedule, match="did its work by t=5"):
        validate_schedule(inst, _late(30.0, end=30.0)[1])


def test_completion_work_done_at_50_declared_at_90():
    """The reported case: work done at 50 s, completion declared at 90 s."""
    cl = Cluster((Node("n0", {"v100": 1}),))
    inst = Instance(cl, (Job("A", 0, 1, 500, {"v100": 10}),), slot=10)
    s = Schedule((Allocation("A", 0, 50, "n0", "v100", 1),), {"A": 90})
    with pytest.raises(InvalidSchedule, match="completion must be when the work is done"):
        validate_schedule(inst, s)
    # slotted (10 s): work done exactly at a slot boundary may count in either slot
    with pytest.raises(InvalidSchedule, match="at most 60"):
        validate_schedule(inst, s, "hadar")


def test_completion_with_consolidation_and_forked_copies():
    # copies on two nodes at 5/s each: 100 it by t=10; consolidation 2 s -> 12
    cl = Cluster((Node("n0", {"k80": 1}), Node("n1", {"k80": 1})))
    inst = Instance(cl, (Job("A", 0, 1, 100, {"k80": 5}),), slot=1)
    allocs = (Allocation("A", 0, 10, "n0", "k80", 1, copy=0),
              Allocation("A", 0, 10, "n1", "k80", 1, copy=1))
    validate_schedule(inst, Schedule(allocs, {"A": 12}, forking=True, consolidation=2),
                      "hadare")
    with pytest.raises(InvalidSchedule, match="consolidation 2"):
        validate_schedule(inst, Schedule(allocs, {"A": 13.5}, forking=True,
                                         consolidation=2), "hadare")
    # the copies done at different instants: the job is done when their sum reaches
    # its work (copy 1 stops at 5: 25 + 5 x 10 ... = 75 by 10, 100 by 15)
    late = (Allocation("A", 0, 15, "n0", "k80", 1, copy=0),
            Allocation("A", 0, 5, "n1", "k80", 1, copy=1))
    validate_schedule(inst, Schedule(late, {"A": 15}, forking=True), "hadare")
    with pytest.raises(InvalidSchedule, match="did its work by t=15"):
        validate_schedule(inst, Schedule(late + (Allocation("A", 15, 18, "n0", "k80", 1),),
                                         {"A": 18}, forking=True),
                          Capabilities(forking=True, source="test"))


def test_simulated_schedules_complete_when_their_work_is_done():
    """Every simulated completion is exactly when the work is done (continuous time)."""
    from optsched import catalog
    from optsched.registry import simulate

    inst = catalog.shipped_trace("gavel-philly-2000")
    inst = inst.replace(jobs=inst.jobs[:12])
    res = simulate(inst, "gavel.max_min_fairness", progress=False)
    assert res.metrics is not None and res.metrics.complete
    validate_schedule(inst, res.schedule, "gavel.max_min_fairness")
    # shifting one completion later by a few seconds is refused
    jid, c = next(iter(res.schedule.completion.items()))
    moved = dict(res.schedule.completion, **{jid: c + 5.0})
    with pytest.raises(InvalidSchedule, match="completion must be when"):
        validate_schedule(inst, Schedule(res.schedule.allocations, moved),
                          "gavel.max_min_fairness")
    assert np.isfinite(res.metrics.mean_jct)


def test_isolated_runtime_counts_only_usable_types():
    # one job alone on 1 V100 + 1 K80, both usable: fractions (1, 1) sum to 2, scaled to
    # (0.5, 0.5): 0.5 x 10 + 0.5 x 5 = 7.5 it/s
    cl = Cluster((Node("n0", {"v100": 1, "k80": 1}),))
    both = Instance(cl, (Job("A", 0, 1, 75, {"v100": 10, "k80": 5}),))
    assert isolated_runtime(both) == pytest.approx([10])
    # a job that can use the K80 only (at 0.5 it/s): the V100 is no part of its share,
    # so it holds the K80 the whole time: 0.5 it/s -> 100 s for 50 it
    k80 = Instance(cl, (Job("C", 0, 1, 50, {"k80": 0.5}),))
    assert isolated_runtime(k80) == pytest.approx([100])


def test_metrics_of_a_schedule_that_completes_nothing():
    cl = Cluster((Node("n0", {"v100": 1}),))
    inst = Instance(cl, (Job("A", 3, 1, 100, {"v100": 1}),))
    s = Schedule((Allocation("A", 3, 13, "n0", "v100", 1),), {})
    validate_schedule(inst, s)
    m = compute_metrics(inst, s)
    assert (m.n_completed, m.unfinished) == (0, ("A",))
    assert m.mean_jct is m.p50_jct is m.p99_jct is m.makespan is m.cru is None
    assert m.mean_ftf is m.max_ftf is m.mean_slowdown is m.mean_waiting_time is None
    assert m.waiting_time == {}
    assert m.busy_gpu_seconds == 10 and m.utility == 0
    assert m.queueing_delay == {"A": 0} and m.mean_queueing_delay == 0


@pytest.mark.parametrize("bad", ["instance", "schedule"])
def test_metrics_of_something_else_is_a_typed_error_naming_the_argument(bad):
    from optsched.errors import InvalidInput

    inst = Instance(Cluster((Node("n", {"v100": 1}),)),
                    (Job("a", 0.0, 1, 10.0, {"v100": 1.0}),))
    sched = Schedule((Allocation("a", 0.0, 10.0, "n", "v100", 1),), {"a": 10.0})
    args = {"instance": inst, "schedule": sched, bad: [1, 2]}
    with pytest.raises(InvalidInput, match=bad):
        compute_metrics(args["instance"], args["schedule"])
    # the JSON forms are read like the objects
    assert compute_metrics(inst.to_dict(), sched.to_dict()).mean_jct == 10.0
