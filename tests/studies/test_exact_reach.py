"""The exact-reach benchmark's families (benchmarks/reach_families.py) are what
docs/exact-reach.md says, and its ladder (benchmarks/exact_reach.py) stops at the first
size that misses, on real solves."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from paths import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))

import exact_reach  # noqa: E402
import reach_families as fam  # noqa: E402

from optsched.catalog.traces import read_trace  # noqa: E402


def test_trace_families_are_the_first_jobs_at_50x_arrivals():
    plain = read_trace("gavel-philly-2000", "gavel-108", jobs=30)
    for model in ("hadar", "hadare", "tiresias"):
        inst = fam.family(model, 30)
        assert inst.n_jobs == 30 and inst.cluster.total_gpus == 108
        assert inst.slot == 360.0
        assert [j.id for j in inst.jobs] == [j.id for j in plain.jobs]
        np.testing.assert_allclose(inst.arrivals, plain.arrivals / 50.0)
        has_utility = [j.utility is not None for j in inst.jobs]
        assert all(has_utility) if model != "tiresias" else not any(has_utility)
        # contended: more GPU-time arrives than the cluster can serve meanwhile
        assert fam.contention(model, inst) > 1
    # the same (model, n) gives the same instance
    assert fam.family("hadare", 15).to_dict() == fam.family("hadare", 15).to_dict()


def test_own_families_are_contended():
    gavel = fam.family("gavel", 60)
    assert gavel.n_jobs == 60 and gavel.cluster.total_gpus == 108
    assert (gavel.arrivals == 0).all() and fam.contention("gavel", gavel) > 1
    allox = fam.family("allox", 30)
    assert allox.cluster.total_gpus == 6 and (allox.workers == 1).all()
    assert fam.contention("allox", allox) == pytest.approx(5.0)
    salus = fam.family("salus", 30)
    assert salus.cluster.total_gpus == math.ceil(30 / fam.SALUS_JOBS_PER_GPU)
    assert fam.contention("salus", salus) > 1
    synergy = fam.family("synergy", 30)
    # GPUs exactly filled by whole servers, CPU over-asked
    assert synergy.cluster.total_gpus == 8 * math.ceil(synergy.workers.sum() / 8)
    assert fam.contention("synergy", synergy) > 1
    with pytest.raises(ValueError, match="outside"):
        fam.family("tiresias", 2001)


def test_ladder_doubles_to_the_family_end():
    assert exact_reach.ladder("gavel") == [15, 30, 60, 120, 240, 480, 960, 1920, 2000]
    assert exact_reach.ladder("allox")[-1] == 15 * 2 ** 8


@pytest.mark.slow
def test_ladder_stops_at_the_first_miss_and_resumes():
    calls = []

    def runner(model, n, time_limit):
        calls.append((model, n))
        # from 15 jobs on, the fixed 6-minute grid (slot=360): 180,262 columns whose root
        # LP HiGHS does not finish in 3 s on any machine (not in 60 s here), so the miss
        # does not depend on the machine's load; the smaller cells use the default grid
        options = {"slot": 360.0} if n >= 15 else None
        return exact_reach.run_cell(model, n, time_limit, options)

    sizes = {"tiresias": [4, 8, 15, 30]}.__getitem__
    rows = exact_reach.run_ladder(["tiresias"], 1e6, [], time_limit=3.0, sizes=sizes,
                                  runner=runner)
    # the tiny cells are solved; 15 misses, so 30 is never run
    assert calls == [("tiresias", 4), ("tiresias", 8), ("tiresias", 15)]
    assert [exact_reach.reached(r) for r in rows] == [True, True, False]
    miss = rows[-1]
    assert miss["status"] == "time_limit" and not (miss["gap"] or 1.0) <= exact_reach.GAP
    assert miss["columns"] > 0 and miss["highs_s"] > 0 and miss["build_s"] > 0
    # the gap curve of a solved cell: HiGHS's log ends at a zero gap
    curve = rows[1]["curve"]
    assert curve and curve[-1][3] == pytest.approx(0.0, abs=1e-4)
    assert rows[1]["t_1pct"] == next(c[0] for c in curve if c[3] is not None
                                     and c[3] <= 0.01)
    # resumed: nothing left to run
    again = exact_reach.run_ladder(["tiresias"], 1e6, rows, time_limit=3.0, sizes=sizes,
                                   runner=runner)
    assert len(calls) == 3 and again == rows
    # a budget below one time limit starts nothing
    assert exact_reach.run_ladder(["gavel"], 2.0, [], time_limit=3.0, runner=runner) == []
    assert len(calls) == 3
    summ = {s["model"]: s for s in exact_reach.summary(rows)}
    assert summ["tiresias"]["reach"] == 8 and summ["tiresias"]["first_miss"] == 15


def test_method_options_reach_the_exact_method_and_the_row():
    # a column limit below the program's size: the method refuses, so the option got there
    row = exact_reach.run_cell("tiresias", 4, 3.0, {"max_columns": 10})
    assert row["status"] == "ModelTooLarge" and "10" in row["message"]
    assert row["method_options"] == {"max_columns": 10}
    assert not exact_reach.reached(row)
    # a fixed grid: the slot asked for is the slot solved on
    row = exact_reach.run_cell("tiresias", 4, 10.0, {"slot": 7200.0})
    assert row["slot"] == 7200.0 and row["method_options"] == {"slot": 7200.0}
    assert row["status"] == "optimal" and exact_reach.reached(row)
    assert exact_reach.run_cell("tiresias", 4, 10.0)["method_options"] == {}


def test_cell_command_passes_the_options_as_json():
    from optsched.cli.common import parse_options

    opts = {"slot": 360.0, "mip_start": False, "max_columns": 300000}
    cmd = exact_reach.cell_command("tiresias", 15, 60.0, opts)
    assert cmd[2:6] == ["--cell", "tiresias", "15", "--time-limit"]
    given = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--option"]
    assert parse_options(given) == opts
    assert "--option" not in exact_reach.cell_command("tiresias", 15, 60.0)


def test_a_ladder_is_not_resumed_under_other_method_options():
    rows = [{"model": "tiresias", "n": 15, "method_options": {"slot": 360.0}},
            {"model": "hadar", "n": 15}]
    exact_reach.check_resumable(rows, ["tiresias"], {"slot": 360.0}, "x")
    exact_reach.check_resumable(rows, ["hadar"], {}, "x")
    with pytest.raises(SystemExit, match="tiresias n=15 solved with method options"):
        exact_reach.check_resumable(rows, ["tiresias"], {}, "x")
    with pytest.raises(SystemExit, match="hadar n=15"):
        exact_reach.check_resumable(rows, ["hadar"], {"slot": 360.0}, "x")


def test_a_smaller_first_size_runs_only_below_the_recorded_miss():
    assert exact_reach.ladder("tiresias", 1)[:5] == [1, 2, 4, 8, 16]
    assert exact_reach.ladder("tiresias", 1)[-2:] == [1024, 2000]
    calls = []

    def runner(model, n, time_limit):
        calls.append(n)
        return {"model": model, "n": n, "status": "optimal" if n < 4 else "time_limit",
                "gap": 0.0 if n < 4 else 0.5}

    recorded = [{"model": "tiresias", "n": 15, "status": "time_limit", "gap": 1.0}]
    rows = exact_reach.run_ladder(["tiresias"], 1e6, list(recorded), 60.0,
                                  sizes=lambda m: exact_reach.ladder(m, 1), runner=runner)
    assert calls == [1, 2, 4]          # stops at its own miss
    calls.clear()
    rows = exact_reach.run_ladder(["tiresias"], 1e6, list(recorded), 60.0,
                                  sizes=lambda m: [8, 16, 32], runner=lambda m, n, t:
                                  {**runner(m, n, t), "status": "optimal", "gap": 0.0})
    assert calls == [8] and [r["n"] for r in rows] == [15, 8]   # never 16: 15 missed
    summ = exact_reach.summary(rows)[0]
    assert summ["reach"] == 8 and summ["first_miss"] == 15
