"""AlloX's heuristics run :class:`~optsched.allox.policy.AlloXPolicy` in the shared
simulator; they must give the schedules of the stand-alone event loop they replaced.

``pinned.json`` holds that implementation's figures (``allox_cases.py`` says how they
were made) for every rule and every ``online`` option pair on the AlloX demo, the talk's
example and 30 seeded instances: per job the node (one machine per node on all but the
demo) and the completion time, and the total JCT.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from allox_cases import frozen_demo, instances, key, runs

import optsched.allox as allox

PINNED = json.loads((Path(__file__).parent / "pinned.json").read_text())
INSTANCES = instances()
# the simulator runs the work down in floating point: completion times may differ from
# start + p in the last digits (at most 1.3e-13 relative when pinned), never more
REL = 1e-12


def test_the_frozen_demo_is_what_the_demo_draws():
    """``demo_instance.json`` is :func:`optsched.allox.demo_instance` up to last bits."""
    frozen, fresh = frozen_demo(), allox.demo_instance()
    assert (frozen.name, frozen.cluster, frozen.slot) == (fresh.name, fresh.cluster, fresh.slot)
    assert len(frozen.jobs) == len(fresh.jobs) == 24
    for a, b in zip(frozen.jobs, fresh.jobs):
        assert (a.id, a.arrival, a.workers, a.profile) == (b.id, b.arrival, b.workers,
                                                           b.profile)
        assert a.work == pytest.approx(b.work, rel=1e-12)
        assert a.throughput == pytest.approx(b.throughput, rel=1e-12)


def test_every_case_is_pinned():
    assert set(PINNED) == set(INSTANCES)
    for name in PINNED:
        assert set(PINNED[name]) == {key(r, o) for r, o in runs()}, name


@pytest.mark.parametrize("name", sorted(INSTANCES))
def test_same_schedule_as_the_stand_alone_loop(name):
    inst = INSTANCES[name]
    for rule, options in runs():
        want = PINNED[name][key(rule, options)]
        res = getattr(allox, rule)(inst, **options)
        where = {a.job: a.node for a in res.schedule.allocations}
        label = f"{name} {key(rule, options)}"
        # one allocation per job: nothing preempted or moved
        assert len(res.schedule.allocations) == inst.n_jobs, label
        assert [where[j.id] for j in inst.jobs] == want["where"], label
        got = [res.schedule.completion[j.id] for j in inst.jobs]
        assert got == pytest.approx(want["completion"], rel=REL, abs=REL), label
        assert res.objective == pytest.approx(want["objective"], rel=REL), label
