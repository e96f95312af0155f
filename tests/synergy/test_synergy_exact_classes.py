"""Synergy's joint ILP over classes of identical jobs has the per-job ILP's optimum."""

from __future__ import annotations

import pytest

from optsched.core.result import Status
from optsched.solvers import solve_program
from optsched.synergy import demo_instance, exact
from optsched.synergy.exact import job_classes, joint_program
from optsched.synergy.model import prepare


@pytest.mark.slow
@pytest.mark.parametrize("n_jobs", [16, 24])
def test_class_aggregation_keeps_the_optimum(n_jobs):
    inst = demo_instance(n_jobs, seed=0)
    rnd = prepare(inst)
    classes = job_classes(rnd)
    assert sorted(j for c in classes for j in c) == sorted(rnd.admitted)
    assert len(classes) < len(rnd.admitted)  # the mix repeats jobs
    per_job = solve_program(joint_program(rnd)[0].freeze(), time_limit=60)
    agg_lp, _, _ = joint_program(rnd, classes)
    agg = solve_program(agg_lp.freeze(), time_limit=60)
    assert per_job.status is agg.status is Status.OPTIMAL
    assert agg.objective == pytest.approx(per_job.objective, abs=1e-6)
    # the method splits the classes back into gangs: a validated schedule with that total
    res = exact(inst)
    assert res.status is Status.OPTIMAL and res.extra["job_classes"] == len(classes)
    assert res.objective == pytest.approx(per_job.objective, abs=1e-6)
    assert res.schedule is not None
