"""AlloX's online rules take one simulator epoch per event, whatever the throughputs.

The rules are non-preemptive: a decision changes only at an arrival or a release, so
the policy declares ``periodic = False`` and is not called at round boundaries. Before,
a 2-job instance at 1e-6 iterations/s took one epoch per 60 s round of a 2e6 s run
(9 s for 1 iteration per job, minutes for more).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import optsched
from optsched import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption
from optsched.sim import simulate


def _two_jobs(rate: float, work: float = 1.0) -> Instance:
    return Instance(Cluster((Node("n0", {"a": 1}),)),
                    (Job("j0", 0.0, 1, work, {"a": rate}),
                     Job("j1", 0.25 * work / rate, 1, work, {"a": rate})), slot=60.0)


@pytest.mark.parametrize("method", ["online", "sjf", "sjf_fastest", "jsq"])
def test_epochs_do_not_depend_on_the_throughput(method):
    runs = {rate: optsched.solve(_two_jobs(rate), "allox", method=method)
            for rate in (1.0, 1e-3, 1e-6)}
    epochs = {rate: r.extra["epochs"] for rate, r in runs.items()}
    # j0 starts at 0, j1 arrives a quarter into it (an event), j0 ends, j1 runs and ends
    assert set(epochs.values()) == {3}, epochs
    for rate, r in runs.items():
        assert r.schedule.completion["j1"] == pytest.approx(2.0 / rate, rel=1e-12)


def test_cli_online_on_a_slow_instance_finishes_quickly(tmp_path):
    path = tmp_path / "slow.json"
    _two_jobs(1e-6, work=100.0).to_json(path)   # 2e8 s of work: 3.3 million rounds
    out = subprocess.run([sys.executable, "-m", "optsched.cli", "solve", "allox", str(path),
                          "--method", "online"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "online  feasible" in out.stdout


class _RoundBased:
    name, needs_work, event_driven, periodic = "rounds", False, False, False

    def allocate(self, view):
        return []


def test_periodic_false_needs_an_event_driven_policy():
    with pytest.raises(InvalidOption, match="periodic"):
        simulate(_two_jobs(1.0), _RoundBased())
