"""Jobs of tiny work (1e-9 to 1e-6 iterations) arriving off a round boundary late in a
run: every registered policy's own schedule passes the validator.

The instant a job's work runs out is a float; rounded to the nearest, the interval it
closes can credit less than the work by up to rate x ulp(t) / 2, which for 1e-6
iterations at t = 1e5 s is a relative 1e-5 of the work (past the validator's 1e-6). An
event-driven policy can also be called again ``1e-9`` s after such a job completes; a
gap that short is still a gap, and another job's allocation must not be stretched over
it.
"""

from __future__ import annotations

import warnings

import pytest

import optsched
from optsched import Cluster, GpuMemory, Instance, Job, Node, validate_schedule
from optsched.registry import simulate

POLICIES = sorted(optsched.policies())
_MEM = GpuMemory(1000.0, 500.0)  # Salus' footprint; every other policy ignores it


def _node() -> Node:
    # a priced GPU type (Gavel's cost policies), CPU and DRAM (Synergy), GPU memory (Salus)
    return Node("n0", {"v100": 2}, cpus=16.0, memory=128.0, gpu_memory={"v100": 16.0})


def _late_tiny() -> Instance:
    """A 1e-6-iteration job arriving at 123456.789 s, inside a round."""
    return Instance(Cluster((_node(),)),
                    (Job("big", 0.0, 1, 100.0, {"v100": 1.0}, memory=_MEM),
                     Job("tiny", 123456.789, 1, 1e-6, {"v100": 1.0}, memory=_MEM)),
                    slot=60.0)


def _short_epoch() -> Instance:
    """A 1e-9-iteration job that completes 1e-11 s after it starts, while a 2-GPU job
    waits for its GPU: an event-driven policy's next epoch starts 1e-9 s later."""
    return Instance(Cluster((_node(),)),
                    (Job("wide", 1000.3, 2, 50.0, {"v100": 0.001}, memory=_MEM),
                     Job("tiny", 1000.3, 1, 1e-9, {"v100": 100.0}, memory=_MEM),
                     Job("early", 0.3, 1, 3e-7, {"v100": 10000.0}, memory=_MEM)),
                    slot=360.0)


CASES = {"late_tiny": _late_tiny, "short_epoch": _short_epoch}
# outside their models (ModelNotApplicable): a 2-worker job for AlloX's machines and
# Salus' lanes (single GPUs); for HadarE, jobs whose default utility is 0 in the last slot
OUTSIDE = {"short_epoch": ("allox.", "salus.", "hadare.")}
PAIRS = [(name, case) for case in sorted(CASES) for name in POLICIES
         if not name.startswith(OUTSIDE.get(case, ()))]


@pytest.mark.parametrize(("name", "case"), PAIRS)
def test_tiny_work_off_round_boundary(name, case):
    inst = CASES[case]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = simulate(inst, name)
    assert res.schedule is not None
    assert set(res.schedule.completion) == {j.id for j in inst.jobs}
    validate_schedule(inst, res.schedule, name)  # the independent referee agrees
    assert all(res.schedule.completion[j.id] >= j.arrival for j in inst.jobs)


def test_every_registered_policy_is_covered():
    assert len(POLICIES) >= 27 and "allox.online" in POLICIES and "salus.lanes" in POLICIES
