"""Hadar's simulator policy pinned on small traces: per-job completion instants of the
first 60 and 100 jobs of the shipped Gavel trace (gavel-108, 6-minute rounds, the
benchmark's JCT-sensitive sigmoid utility). A change that keeps decisions keeps these;
a change that alters them re-pins the file (``python tests/hadar/test_policy_pinned.py``)
and states the measured change in its commit and in ``docs/hadar.md``."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from optsched.catalog import read_gavel_trace
from optsched.core.instance import Utility
from optsched.hadar.policy import HadarPolicy
from optsched.sim import simulate

PINNED = Path(__file__).parent / "data" / "policy_pinned.json"
#: Policy options of the pinned runs (the benchmark's, benchmarks/hadar_sim.py).
OPTIONS = {"quanta": 120, "retry_every": 20}


def trace(n: int):
    inst = read_gavel_trace()
    inst = inst.replace(jobs=inst.jobs[:n], name=f"gavel-first{n}")
    jobs = []
    for j in inst.jobs:  # the JCT-sensitive utility of benchmarks/hadar_sim.py
        g3 = 2.0 * j.min_duration()
        jobs.append(replace(j, utility=Utility("sigmoid", gamma1=1.0, gamma2=2.0 / g3,
                                               gamma3=g3)))
    return inst.replace(jobs=tuple(jobs))


def run(n: int) -> dict:
    inst = trace(n)
    pol = HadarPolicy(inst, **OPTIONS)
    res = simulate(inst, pol, progress=False)
    return {"completion": dict(res.schedule.completion), "admitted": pol.stats()["admitted"]}


@pytest.mark.parametrize("n", [60, 100])
def test_decisions_are_pinned(n):
    pinned = json.loads(PINNED.read_text())[str(n)]
    got = run(n)
    assert got["admitted"] == pinned["admitted"]
    assert got["completion"].keys() == pinned["completion"].keys()
    moved = {j: (pinned["completion"][j], c) for j, c in got["completion"].items()
             if abs(c - pinned["completion"][j]) > 1e-6 * max(1.0, c)}
    assert not moved, f"{len(moved)} completions moved, e.g. {list(moved.items())[:3]}"


if __name__ == "__main__":  # re-pin
    out = {str(n): run(n) for n in (60, 100)}
    PINNED.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    sys.exit(0)
