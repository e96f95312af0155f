"""Pinned simulations: per-job completion times and preemptions of existing policies on
prefixes of the shipped traces, recorded in ``pinned_runs.json``.

Work on the simulator's speed (its loop, the per-decision check, the validator,
placement) must leave every decision unchanged; these pins make that checkable. A
change of a policy's own decisions is a behaviour change: regenerate the pins with ::

    PYTHONPATH=. python tests/sim/test_pinned_runs.py

and explain the change in the commit message. Cells marked ``slow`` (a few hundred
jobs, tens of seconds each) run in CI's second step (``pytest -m slow``); the small
cells run in the default suite.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

PINS = Path(__file__).with_name("pinned_runs.json")

#: (trace, jobs, cluster, load, policy, slow)
CELLS: list[tuple[str, int, str | None, float, str, bool]] = [
    # Gavel's 2,000-job trace on gavel-108 (heterogeneous, 4-GPU nodes)
    *[("gavel-philly-2000", 80, None, 1.0, p, False)
      for p in ("gavel.max_min_fairness", "tiresias.las", "tiresias.gittins",
                "tiresias.yarn_fifo")],
    *[("gavel-philly-2000", 300, None, 1.0, p, True)
      for p in ("gavel.max_min_fairness", "gavel.max_min_fairness_agnostic", "tiresias.las",
                "tiresias.gittins", "tiresias.yarn_fifo")],
    # the Philly production trace on 32 nodes of 4 P100 (multi-node gangs, contention)
    ("philly", 60, "tiresias-n32g4", 100.0, "tiresias.las", True),
    *[("philly", 200, "tiresias-n32g4", 20.0, p, True)
      for p in ("gavel.max_min_fairness_agnostic", "tiresias.las", "tiresias.gittins",
                "tiresias.yarn_fifo")],
]


def cell_id(cell: tuple) -> str:
    trace, jobs, cluster, load, policy, _ = cell
    return f"{trace}[:{jobs}]@{cluster or 'default'}x{load:g}:{policy}"


def instance_of(trace: str, jobs: int, cluster: str | None, load: float):
    from optsched import catalog

    if trace == "philly":
        return catalog.read_philly_trace(jobs=jobs, load=load, cluster=cluster)
    inst = catalog.shipped_trace(trace, cluster=cluster)
    assert load == 1.0, "only the Philly reader scales arrivals here"
    return inst.replace(jobs=inst.jobs[:jobs])


def run_cell(cell: tuple) -> dict[str, Any]:
    """The pinned record of one cell: what the simulator decided, not how fast."""
    from optsched.registry import simulate

    trace, jobs, cluster, load, policy, _ = cell
    res = simulate(instance_of(trace, jobs, cluster, load), policy, seed=0, progress=False)
    x = res.extra
    return {"completion": dict(res.schedule.completion),
            "preemptions": {k: v for k, v in x["preemptions"].items() if v},
            "total_migrations": x["total_migrations"], "epochs": x["epochs"],
            "allocations": len(res.schedule.allocations)}


def _pins() -> dict[str, Any]:
    return json.loads(PINS.read_text())["cells"]


@pytest.mark.parametrize(
    "cell", [pytest.param(c, id=cell_id(c), marks=[pytest.mark.slow] if c[-1] else [])
             for c in CELLS])
def test_simulation_matches_its_pin(cell):
    pin = _pins()[cell_id(cell)]
    got = run_cell(cell)
    assert got["completion"].keys() == pin["completion"].keys()
    off = {j: (got["completion"][j], c) for j, c in pin["completion"].items()
           if not math.isclose(got["completion"][j], c, rel_tol=1e-9, abs_tol=1e-6)}
    assert not off, f"{len(off)} completion times moved, e.g. {sorted(off.items())[:3]}"
    assert got["preemptions"] == pin["preemptions"]
    assert (got["total_migrations"], got["epochs"], got["allocations"]) == \
        (pin["total_migrations"], pin["epochs"], pin["allocations"])


def test_every_cell_is_pinned():
    assert set(_pins()) == {cell_id(c) for c in CELLS}


if __name__ == "__main__":  # regenerate the pins (see the module docstring)
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=PINS.parent).stdout.strip()
    cells = {}
    for c in CELLS:
        cells[cell_id(c)] = run_cell(c)
        print(cell_id(c), cells[cell_id(c)]["epochs"], flush=True)
    PINS.write_text(json.dumps({"commit": commit, "cells": cells}, indent=0, sort_keys=True)
                    + "\n")
