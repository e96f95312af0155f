"""Synergy's load curve (claim ``synergy_tune``): the stream-prefix measurement it rests
on, its lengthening when a prefix is too short, and resuming an interrupted run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from optsched.studies.reproduce import synergy_tune
from optsched.studies.reproduce.synergy_tune import (
    MEAN_HOURS,
    fair_capacity,
    load_cell,
    load_curve,
    stream_length,
)
from optsched.synergy import servers, synergy_workload

WINDOW = (0, 10)


def test_a_longer_stream_starts_with_the_shorter_one():
    """The measurement simulates a prefix of an endless stream: the first jobs of a
    longer stream must be the shorter stream's jobs, arrivals included."""
    short = synergy_workload(60, servers(2), seed=3, split=(20, 70, 10), jobs_per_hour=9.0,
                             multigpu=False)
    long = synergy_workload(150, servers(2), seed=3, split=(20, 70, 10), jobs_per_hour=9.0,
                            multigpu=False)
    assert long.jobs[:60] == short.jobs


def test_mean_run_time_is_the_generators():
    inst = synergy_workload(20000, servers(16), seed=1, jobs_per_hour=9.0, multigpu=False)
    hours = np.array([j.work / j.throughput["v100"] for j in inst.jobs]) / 3600
    assert hours.mean() == pytest.approx(MEAN_HOURS, rel=0.05)
    assert fair_capacity(128) == pytest.approx(128 / MEAN_HOURS)
    assert 7.6 < fair_capacity(128) < 7.7


def test_stream_length_grows_with_load_and_past_saturation():
    w = (4000, 5000)
    lengths = [stream_length(128, x, w, "fifo") for x in (3.0, 5.0, 7.0, 8.0, 9.0)]
    assert lengths == sorted(lengths) and lengths[0] > 5000
    assert stream_length(128, 7.0, w, "srtf") > stream_length(128, 7.0, w, "fifo")
    # past saturation the backlog term dominates the floor
    assert stream_length(512, 36.0, w, "fifo") > 4 * (stream_length(128, 9.0, w, "fifo") - 5000)


def test_a_short_prefix_is_lengthened_and_gives_the_same_window():
    full = load_cell(1, 0.2, (50, 0, 50), "fifo", "tune", WINDOW)
    short = load_cell(1, 0.2, (50, 0, 50), "fifo", "tune", WINDOW, stream=11)
    assert full["lengthened"] == 0 and short["lengthened"] >= 1 and short["stream"] > 11
    for k in ("mean_jct_h", "p50_jct_h", "p99_jct_h", "fair_runtime_h"):
        assert short[k] == pytest.approx(full[k], rel=1e-12), k


def test_an_interrupted_run_resumes_and_a_finished_one_is_not_read(tmp_path, monkeypatch):
    calls = []

    def cell(srv, load, split, order, alloc, window, *, seed):
        calls.append((load, alloc))
        return {"gpus": 8 * srv, "order": order, "split": "/".join(map(str, split)),
                "load": float(load), "allocator": alloc,
                "window": f"{window[0]}-{window[1] - 1}", "seed": seed,
                "mean_jct_h": 2.0 if alloc == "proportional" else 1.0 + load}

    monkeypatch.setattr(synergy_tune, "load_cell", cell)
    progress = tmp_path / "curve.json"
    curves = [(1, "fifo", (50, 0, 50), (0.2, 0.4))]
    rows = load_curve(curves, WINDOW, progress=progress)
    assert len(calls) == 4 and [r["allocator"] for r in rows] == ["proportional", "tune"] * 2
    assert [r["proportional_over_tune"] for r in rows] == pytest.approx(
        [2 / 1.2, 2 / 1.2, 2 / 1.4, 2 / 1.4])
    assert json.loads(progress.read_text())["partial"] is True
    # interrupted after three cells: only the fourth is simulated again
    progress.write_text(json.dumps({"partial": True, "rows": rows[:3]}))
    again = load_curve(curves, WINDOW, progress=progress)
    assert calls[4:] == [(0.4, "tune")] and again == rows
    # a finished table is never a cache
    progress.write_text(json.dumps({"partial": False, "rows": rows}))
    load_curve(curves, WINDOW, progress=progress)
    assert len(calls) == 9
