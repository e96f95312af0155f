"""Gavel's demo instance draws only jobs Gavel's model takes, for any size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched.catalog import read_gavel_trace
from optsched.errors import InvalidOption
from optsched.gavel.model import round_state
from optsched.gavel.workload import demo_instance, fits_one_type

TRACE = read_gavel_trace(cluster="gavel-physical")


def test_the_trace_holds_gangs_no_type_can_host():
    """Why the generator skips jobs: five 32-worker gangs, more GPUs than any type of the
    physical cluster has (24 K80), which the model refuses by name."""
    big = [i for i, j in enumerate(TRACE.jobs) if not fits_one_type(j, TRACE.cluster)]
    assert [TRACE.jobs[i].workers for i in big] == [32] * 5
    assert big[0] == 1644
    from optsched.errors import ModelNotApplicable

    with pytest.raises(ModelNotApplicable, match=r"jobs\[1644\]\.workers"):
        round_state(TRACE.replace(jobs=TRACE.jobs[:1645])).check_fits()


@settings(max_examples=examples(6))
@given(n=st.integers(1, 5000), seed=st.integers(0, 3))
def test_demo_fits_the_model_for_every_size(n, seed):
    """n distinct jobs, every gang on one GPU type (the model's own check passes)."""
    inst = demo_instance(n, seed=seed)
    assert inst.n_jobs == n
    assert len({j.id for j in inst.jobs}) == n
    round_state(inst).check_fits()


def test_demo_2048_and_windows_without_a_skipped_job_are_unchanged():
    inst = demo_instance(2048)
    round_state(inst).check_fits()
    assert inst.jobs[:1644] == TRACE.jobs[:1644]
    assert inst.jobs[1644] == TRACE.jobs[1645]
    assert inst.jobs[-1].id.endswith("-r1")
    # the default and any window before the first skipped job: a plain slice, as before
    assert demo_instance().jobs == TRACE.jobs[:30]
    assert demo_instance(30, seed=3).jobs == TRACE.jobs[90:120]
    assert demo_instance(1644).jobs == TRACE.jobs[:1644]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_demo_refuses_a_bad_size(bad):
    with pytest.raises(InvalidOption, match="n_jobs"):
        demo_instance(bad)
