"""The public simulator's ``--schedule=gittins`` (``tiresias.gittins_original``): one list,
the lowest Gittins index first, a running job indexed by GPU-seconds and a waiting one by
executed seconds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from optsched import Cluster, Instance, Job, Node
from optsched.core.validate import validate_schedule
from optsched.errors import InvalidOption
from optsched.registry import get_policy
from optsched.sim import simulate
from optsched.tiresias.policy import TiresiasPolicy

POLICY = "tiresias.gittins_original"


def _one_gpu(*jobs: tuple[str, float, float]) -> Instance:
    cl = Cluster((Node("n0", {"p100": 1}),))
    return Instance(cl, tuple(Job(j, a, 1, s, {"p100": 1.0}) for j, a, s in jobs), slot=60.0)


def _completions(inst: Instance, policy: str) -> dict[str, float]:
    res = simulate(inst, get_policy(policy), progress=False)
    validate_schedule(inst, res.schedule, policy)
    return dict(res.schedule.completion)


def test_the_lowest_index_goes_first():
    """One GPU; A (1,000 s) from 0, B (100 s) from 200 s. At 200 s A has 200 s of
    service, whose index on Tiresias' grid is below that of B's 0 s (checked below): the
    paper's order (highest first) lets B preempt A, the original's keeps A."""
    index = get_policy(POLICY)._gittins
    assert index is not None
    keys = index.ranking_keys(np.array([200.0, 0.0]))
    assert keys[0] < keys[1]
    inst = _one_gpu(("A", 0.0, 1000.0), ("B", 200.0, 100.0))
    assert _completions(inst, POLICY) == pytest.approx({"A": 1000.0, "B": 1100.0})
    # the same grid index, highest first in one queue: B preempts A
    highest = TiresiasPolicy("gittins", thresholds=(1e15,), promote_knob=None,
                             gittins_grid=True)
    res = simulate(inst, highest, progress=False)
    assert dict(res.schedule.completion) == pytest.approx({"A": 1100.0, "B": 300.0})


def test_within_one_second_of_tiresias_simulator():
    """Pinned per-job JCTs of Tiresias' ``gittins`` (run with the launcher's
    ``--peer-fix-gittins``, benchmarks/tiresias_peer.py) on its 60-job trace over
    2 x 4 P100, whose arrivals and durations are whole seconds: every job completes within
    1 s of the original, with the same 20 preemptions (``tiresias_peer.md``). The paper's
    2D-Gittins with one queue completes none of them within 1 s."""
    from optsched.catalog import read_tiresias_trace

    peer = json.loads((Path(__file__).parent / "peer_t60_n2g4.json").read_text())
    inst = read_tiresias_trace(cluster=Cluster(tuple(Node(f"n{i}", {"p100": 4})
                                                     for i in range(2))))
    res = simulate(inst, get_policy(POLICY), progress=False)
    want = peer["jct"]["gittins"]
    ours = res.metrics.jct
    assert set(ours) == set(want)
    assert max(abs(want[k] - ours[k]) for k in want) <= 1.0
    assert res.extra["total_preemptions"] == 20


@pytest.mark.parametrize("options, field", [
    ({"order": "las", "thresholds": None, "promote_knob": None}, "order"),
    ({"order": "gittins"}, "thresholds"),
    ({"order": "gittins", "thresholds": None, "promote_knob": None, "dims": 1}, "dims"),
    ({"order": "gittins", "thresholds": None, "promote_knob": 8.0}, "promote_knob"),
])
def test_the_scheme_refuses_what_it_does_not_have(options, field):
    with pytest.raises(InvalidOption) as e:
        TiresiasPolicy(gittins_scheme="original", **options)
    assert e.value.path == field


def test_an_unknown_scheme_is_named():
    with pytest.raises(InvalidOption) as e:
        TiresiasPolicy(order="gittins", gittins_scheme="origin")
    assert e.value.path == "gittins_scheme"
