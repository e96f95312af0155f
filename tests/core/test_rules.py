"""The placement, gang and capacity rules of :mod:`optsched.core.rules`, one by one (the
validator and the simulator both apply them, so each must hold on its own)."""

from __future__ import annotations

import math

import pytest

from optsched.core.rules import (
    GPU_TOL,
    RESOURCE_TOL,
    copies_error,
    gang_error,
    gpu_overload,
    placement_error,
    resource_overload,
)


def place(**kw):
    args = dict(job="j", node="n0", gpu_type="v100", node_gpus=4, rate=1.0, gpus=1,
                cpus=0.0, memory=0.0, copy=0, share=1.0, sharing=False, forking=False)
    args.update(kw)
    return placement_error(**args)


def test_a_valid_placement_passes():
    assert place() is None
    assert place(share=0.5, sharing=True) is None
    assert place(copy=3, forking=True) is None
    assert place(cpus=8.0, memory=64.0, gpus=4) is None
    assert place(node_gpus=1) is None  # a node with a single GPU of the type


@pytest.mark.parametrize("kw,match", [
    ({"node_gpus": 0}, "has no GPU of type"),
    ({"gpus": 0}, "positive integer"),
    ({"gpus": -1}, "positive integer"),
    ({"gpus": 1.0}, "positive integer"),
    ({"gpus": True}, "positive integer"),
    ({"rate": 0.0}, "cannot run"),
    ({"rate": math.nan}, "cannot run"),
    ({"cpus": -1.0}, "cpus and memory"),
    ({"memory": -0.5}, "cpus and memory"),
    ({"cpus": math.inf}, "cpus and memory"),
    ({"memory": math.nan}, "cpus and memory"),
    ({"share": 0.0, "sharing": True}, "share"),
    ({"share": 1.5, "sharing": True}, "share"),
    ({"share": 0.5}, "share"),
    ({"copy": 1.0, "forking": True}, "copy must be an integer"),
    ({"copy": True, "forking": True}, "copy must be an integer"),
    ({"copy": 1}, "needs forking"),
])
def test_each_placement_rule_is_enforced(kw, match):
    reason = place(**kw)
    assert reason is not None and match in reason


def test_gang_rules():
    # without forking: exactly W
    assert gang_error("j", 2, 0, 2, ["n0", "n1"], forking=False) is None
    assert "gang of 2" in gang_error("j", 2, 0, 1, ["n0"], forking=False)
    assert "gang of 2" in gang_error("j", 2, 0, 3, ["n0"], forking=False)
    # partial: 1..W
    assert gang_error("j", 2, 0, 1, ["n0"], forking=False, progress_rule="partial") is None
    assert gang_error("j", 2, 0, 2, ["n0"], forking=False, progress_rule="partial") is None
    assert "1..2" in gang_error("j", 2, 0, 3, ["n0"], forking=False, progress_rule="partial")
    assert "1..2" in gang_error("j", 2, 0, 0, ["n0"], forking=False, progress_rule="partial")
    # additive keeps the width W
    assert "gang of 2" in gang_error("j", 2, 0, 1, ["n0"], forking=False,
                                     progress_rule="additive")
    # forking: 1..W GPUs on exactly one node
    assert gang_error("j", 2, 1, 1, ["n0"], forking=True) is None
    assert gang_error("j", 2, 1, 2, ["n0", "n0"], forking=True) is None
    two = gang_error("j", 2, 1, 2, ["n0", "n1"], forking=True)
    assert two is not None and "one node" in two and "['n0', 'n1']" in two
    assert "one node" in gang_error("j", 2, 1, 3, ["n0"], forking=True)
    assert "one node" in gang_error("j", 2, 1, 0, ["n0"], forking=True)
    assert copies_error("j", "n0", 0, 1) == "job 'j': copies 0 and 1 share node 'n0'"


def test_capacity_tolerances():
    assert not gpu_overload(4.0, 4)
    assert not gpu_overload(4.0 + GPU_TOL / 2, 4)
    assert gpu_overload(4.0 + 10 * GPU_TOL, 4)
    assert gpu_overload(4.5, 4)
    assert not resource_overload(64.0, 64.0)
    assert not resource_overload(64.0 * (1 + RESOURCE_TOL / 2), 64.0)
    assert resource_overload(64.0 * (1 + 10 * RESOURCE_TOL), 64.0)
    assert resource_overload(10 * RESOURCE_TOL, 0.0)
    assert not resource_overload(RESOURCE_TOL / 2, 0.0)
    # exactly at the tolerance is still within capacity
    assert not gpu_overload(4 + GPU_TOL, 4)
    assert not resource_overload(64.0 * (1 + RESOURCE_TOL) + RESOURCE_TOL, 64.0)
    assert GPU_TOL == 1e-9 and RESOURCE_TOL == 1e-9
