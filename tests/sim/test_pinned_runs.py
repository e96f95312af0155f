"""Pinned simulations: per-job completion times and preemptions of existing policies on
prefixes of the shipped traces, recorded in ``pinned_runs.json``.

Work on the simulator's speed (its loop, the per-decision check, the validator,
placement) must leave every decision unchanged; these pins make that checkable. A
change of a policy's own decisions is a behaviour change: regenerate the pins with ::

    PYTHONPATH=. python tests/sim/test_pinned_runs.py

and explain the change in the commit message. Cells marked ``slow`` (a few hundred
jobs, tens of seconds each) run in CI's second step (``pytest -m slow``); the small
cells run in the default suite.

Pins hold for one solver. An LP with many optimal points (the agnostic max-min LP is
one) may be answered by another HiGHS release with another of them, or the same one off
by 1e-10; a simulation turns such a difference into other decisions (recorded before the
GPU loads below left BLAS: HiGHS 1.15.1 against 1.16.0 on Gavel's first 300 jobs under
the agnostic policy, 186 of 300 completion times moved, mean JCT +0.14 %; since then, on
one machine, every cell is the same under both releases). So the file records the solver
stack of its ``cells`` (``solver_stack``; CI installs those versions,
``.ci/constraints.txt``), and under ``other_solvers`` the cells that come out otherwise
under another HiGHS release, each recorded under it. Run under a release with no record,
a moved cell fails with a message that says so: the cause may be the release, not the
code. Regenerating under the ``cells``' release rewrites them and drops the other
releases' records (re-record those under their releases); regenerating under another
release records what differs, and ``--base`` makes the installed release the one of
``cells`` (as when CI's versions move).

Pins hold on every CPU: no simulated decision goes through BLAS, whose kernel (and with
it the last bits of a dot product) OpenBLAS picks by CPU. Gavel's policies sum GPU loads
with :func:`optsched.gavel.model.gpu_loads`; with ``W @ X`` the agnostic cell on Gavel's
first 300 jobs moved 198 of 300 completion times between an AVX-512 and an AVX2
machine. Check a change with ``OPENBLAS_CORETYPE=Nehalem`` and ``=Haswell``: the cells
must not move.
"""

from __future__ import annotations

import json
import math
from importlib.metadata import version
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


#: the packages whose releases can change a simulation's decisions
STACK = ("highspy", "numpy", "scipy")


def solver_stack() -> dict[str, str]:
    return {p: version(p) for p in STACK}


def _file() -> dict[str, Any]:
    return json.loads(PINS.read_text())


def pin_for(cell_name: str) -> tuple[dict[str, Any], str]:
    """The pin of a cell for the installed HiGHS, and what it was recorded under."""
    f = _file()
    release = version("highspy")
    other = f.get("other_solvers", {}).get(release)
    if other is not None and cell_name in other["cells"]:
        return other["cells"][cell_name], f"highspy {release}"
    base = f["solver_stack"]["highspy"]
    if release == base or other is not None:
        return f["cells"][cell_name], f"highspy {base}" + (
            f" (the same under {release})" if other is not None else "")
    return f["cells"][cell_name], (
        f"highspy {base}; installed highspy {release} has no record, so a moved cell may "
        "be that release's choice among equal optima, not the code (see this module's "
        "docstring)")


@pytest.mark.parametrize(
    "cell", [pytest.param(c, id=cell_id(c), marks=[pytest.mark.slow] if c[-1] else [])
             for c in CELLS])
def test_simulation_matches_its_pin(cell):
    pin, under = pin_for(cell_id(cell))
    got = run_cell(cell)
    assert _differences(got, pin) == [], f"pinned under {under}"


def _differences(got: dict[str, Any], pin: dict[str, Any]) -> list[str]:
    if got["completion"].keys() != pin["completion"].keys():
        return ["other jobs completed"]
    out = []
    off = {j: (got["completion"][j], c) for j, c in pin["completion"].items()
           if not math.isclose(got["completion"][j], c, rel_tol=1e-9, abs_tol=1e-6)}
    if off:
        out.append(f"{len(off)} completion times moved, e.g. {sorted(off.items())[:3]}")
    if got["preemptions"] != pin["preemptions"]:
        out.append("preemptions differ")
    for k in ("total_migrations", "epochs", "allocations"):
        if got[k] != pin[k]:
            out.append(f"{k}: {got[k]} (pinned {pin[k]})")
    return out


def test_every_cell_is_pinned():
    f = _file()
    assert set(f["cells"]) == {cell_id(c) for c in CELLS}
    assert set(f["solver_stack"]) == set(STACK)
    # CI installs the release the cells were recorded under
    lock = (PINS.parents[2] / ".ci" / "constraints.txt").read_text().splitlines()
    assert f"highspy=={f['solver_stack']['highspy']}" in lock
    for release, other in f.get("other_solvers", {}).items():
        assert other["solver_stack"]["highspy"] == release
        assert set(other["cells"]) <= set(f["cells"])


def test_a_pin_is_chosen_for_the_installed_highs(monkeypatch):
    import test_pinned_runs as mod

    f = _file()
    name = next(iter(f["cells"]))
    monkeypatch.setattr(mod, "version", lambda p: "0.0.1")  # a release with no record
    pin, under = pin_for(name)
    assert pin == f["cells"][name] and "has no record" in under
    for release, other in f.get("other_solvers", {}).items():
        monkeypatch.setattr(mod, "version", lambda p, r=release: r)
        for n in f["cells"]:
            pin, under = pin_for(n)
            assert pin == other["cells"].get(n, f["cells"][n])
            assert under.startswith(f"highspy {release}" if n in other["cells"] else
                                    f"highspy {f['solver_stack']['highspy']} (the same")


if __name__ == "__main__":  # regenerate the pins (see the module docstring)
    import subprocess
    import sys

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=PINS.parent).stdout.strip()
    stack = solver_stack()
    f = _file() if PINS.exists() else {"solver_stack": stack}
    base = f["solver_stack"]["highspy"] == stack["highspy"] or "--base" in sys.argv[1:]
    cells = {}
    for c in CELLS:
        name = cell_id(c)
        cells[name] = run_cell(c)
        moved = "" if base else _differences(cells[name], f["cells"][name])
        print(name, cells[name]["epochs"], "moved" if moved else "", flush=True)
    if base:
        f = {"commit": commit, "solver_stack": stack, "cells": cells}
    else:
        others = f.setdefault("other_solvers", {})
        others[stack["highspy"]] = {
            "commit": commit, "solver_stack": stack,
            "cells": {n: r for n, r in cells.items() if _differences(r, f["cells"][n])}}
    PINS.write_text(json.dumps(f, indent=0, sort_keys=True) + "\n")
