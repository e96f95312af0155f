"""The queueing a simulation measures (``queued_jobs``, ``queue_seconds``, ``max_queue``)
and the note that a run without a queue cannot tell policies apart."""

from __future__ import annotations

import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.cli import main
from optsched.registry import simulate
from optsched.sim.simulator import NO_QUEUE, no_queue_note


def _jobs(n: int, gpus: int, slot: float = 60.0) -> Instance:
    """``n`` one-GPU jobs of 100 s each, all arriving at 0, on ``gpus`` GPUs of one type."""
    jobs = tuple(Job(f"j{i}", arrival=0.0, workers=1, work=100.0, throughput={"a": 1.0})
                 for i in range(n))
    return Instance(Cluster((Node("n0", {"a": gpus}),)), jobs, slot=slot)


def test_a_queue_is_measured_by_hand():
    # 3 jobs on 1 GPU under YARN FIFO (event-driven): j0 runs 0-100, j1 100-200,
    # j2 200-300; j1 waits 100 s, j2 200 s; two wait at once during 0-100
    res = simulate(_jobs(3, 1), "tiresias.yarn_fifo", progress=False)
    assert sorted(res.schedule.completion.values()) == pytest.approx([100, 200, 300])
    assert res.extra["queued_jobs"] == 2
    assert res.extra["queue_seconds"] == pytest.approx(300.0)
    assert res.extra["max_queue"] == 2
    assert no_queue_note(res) == ""


def test_a_round_based_queue_counts_the_idle_end_of_a_round():
    # Gavel's FIFO in 60 s rounds, 2 jobs on 1 GPU: j0 done at 100, its GPU idle to the
    # round end at 120, then j1 runs 120-220: j1 waited 120 s
    res = simulate(_jobs(2, 1), "gavel.fifo", progress=False)
    assert res.extra["queued_jobs"] == 1
    assert res.extra["queue_seconds"] == pytest.approx(120.0)
    assert res.extra["max_queue"] == 1


def test_no_queue_says_policies_cannot_differ():
    res = simulate(_jobs(3, 4), "tiresias.las", progress=False)
    assert res.extra["queued_jobs"] == 0 and res.extra["queue_seconds"] == 0
    assert res.extra["max_queue"] == 0
    assert no_queue_note(res).startswith(NO_QUEUE)
    # and indeed: every policy gives the same mean JCT
    other = simulate(_jobs(3, 4), "tiresias.yarn_fifo", progress=False)
    assert other.metrics.mean_jct == res.metrics.mean_jct


def test_simulate_cli_warns_when_no_job_queued(tmp_path, capsys):
    inst = tmp_path / "inst.json"
    inst.write_text(_jobs(3, 4).to_json())
    assert main(["simulate", "--policy", "tiresias.las", "--instance", str(inst),
                 "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "queued jobs 0" in out
    assert f"warning: {NO_QUEUE}" in err
    inst.write_text(_jobs(3, 1).to_json())
    assert main(["simulate", "--policy", "tiresias.las", "--instance", str(inst),
                 "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "queued jobs 2" in out and NO_QUEUE not in err


def test_a_policy_that_declares_no_draws_ignores_the_seed():
    """The sweep refuses several seeds over a cell whose policy declares no draws
    (``PolicySpec.draws``), so such a policy must give the same run for every seed; a
    policy that draws is the one the seed can change."""
    from optsched.catalog import generate_philly
    from optsched.errors import ModelNotApplicable, OptschedError
    from optsched.registry import policies
    from optsched.salus.workload import demo_instance as salus_demo
    from optsched.synergy.workload import demo_instance as synergy_demo

    inst = generate_philly(6, cluster="gavel-physical", seed=3, jobs_per_hour=20.0,
                           max_workers=2)
    single = generate_philly(6, cluster="gavel-physical", seed=3, jobs_per_hour=20.0,
                             max_workers=1)
    checked = set()
    for name, spec in sorted(policies().items()):
        if spec.draws:
            continue
        for case in (inst, single, synergy_demo(6), salus_demo()):
            try:
                a, b = (simulate(case, name, seed=s, progress=False) for s in (0, 7))
            except (ModelNotApplicable, OptschedError):
                continue  # outside the policy's model: nothing to compare
            assert a.schedule.completion == b.schedule.completion, name
            assert a.schedule.allocations == b.schedule.allocations, name
            checked.add(name)
    assert checked == {n for n, s in policies().items() if not s.draws}
    # Gavel's agnostic FIFO draws each job's type: on three types the seed shows
    runs = {tuple(sorted(simulate(inst, "gavel.fifo_agnostic", seed=s,
                                  progress=False).schedule.completion.items()))
            for s in range(4)}
    assert len(runs) > 1
