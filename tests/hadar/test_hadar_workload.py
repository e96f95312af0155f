"""The demo instances of Hadar and HadarE for every size: the horizon grows with the
arrivals (:func:`optsched.hadar.workload.demo_horizon`), and the sizes that worked with
the fixed horizon keep their instance."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import examples

from optsched.hadar.workload import demo_horizon
from optsched.hadar.workload import demo_instance as hadar_demo
from optsched.hadare.workload import demo_instance as hadare_demo

SLOT = 1800.0
#: (generator, the fixed horizon in slots it had, the largest n_jobs that fitted it at seed 0)
DEMOS = ((hadar_demo, 16, 33), (hadare_demo, 12, 26))


@pytest.mark.parametrize("demo, slots, last_fitting", DEMOS)
def test_sizes_that_fitted_the_fixed_horizon_keep_it(demo, slots, last_fitting):
    """Up to the last size whose arrivals fell within the old fixed horizon the horizon is
    that fixed one (so those instances are unchanged); the next size, which raised
    InvalidInstance before, gets a longer one."""
    for n in (1, 2, last_fitting // 2, last_fitting):
        assert demo(n).horizon == slots * SLOT, n
    longer = demo(last_fitting + 1)
    assert longer.horizon > slots * SLOT
    assert longer.arrivals.max() >= slots * SLOT   # the fixed horizon refused it


@pytest.mark.parametrize("demo, slots, last_fitting", DEMOS)
@settings(max_examples=examples(8))
@given(n=st.integers(1, 3000), seed=st.integers(0, 3))
def test_demo_builds_for_every_size(demo, slots, last_fitting, n, seed):
    """Every size and seed builds (Instance checks every arrival precedes the horizon):
    the horizon is the stated rule, a whole number of slots, at least the old fixed one
    and at most one slot past the last arrival."""
    inst = demo(n, seed=seed)
    assert inst.n_jobs == n
    a_max = float(inst.arrivals.max())
    H = inst.horizon
    assert H == SLOT * max(slots, math.floor(a_max / SLOT) + 1)
    assert a_max < H
    assert H == slots * SLOT or H - SLOT <= a_max


def test_demo_horizon_rule():
    import numpy as np

    assert demo_horizon(np.array([]), 10.0, 3) == 30.0
    assert demo_horizon(np.array([0.0, 29.9]), 10.0, 3) == 30.0
    assert demo_horizon(np.array([30.0]), 10.0, 3) == 40.0   # an arrival on the boundary
    assert demo_horizon(np.array([55.0, 1.0]), 10.0, 3) == 60.0
