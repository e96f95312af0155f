"""benchmarks/bounds_scale.py keeps, with ``--keep``, the rows of the cases it does not
run, and takes a committed policy run's values as they are recorded."""

from __future__ import annotations

import json
import sys

from paths import BENCHMARKS

sys.path.insert(0, str(BENCHMARKS))

import bounds_scale  # noqa: E402


def test_keep_rows_drops_only_the_cases_run(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds_scale, "RESULTS", tmp_path)
    assert bounds_scale.keep_rows("b", ["philly-load6"]) == []      # no file yet
    rows = [{"case": "gavel-2000", "policy": "(bound)"},
            {"case": "philly-load6", "policy": "(bound)"},
            {"case": "philly-load6", "policy": "tiresias.srtf"},
            {"case": "philly-load1", "policy": "(bound)"}]
    (tmp_path / "b.json").write_text(json.dumps({"rows": rows}))
    assert bounds_scale.keep_rows("b", ["philly-load6"]) == [rows[0], rows[3]]
    assert bounds_scale.keep_rows("b", []) == rows


def test_policy_values_skip_unfinished_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds_scale, "RESULTS", tmp_path)
    rows = [{"policy": "tiresias.srtf", "jobs": 10, "completed": 10, "mean_jct_h": 2.0,
             "makespan_h": 9.0},
            {"policy": "hadar.online", "jobs": 10, "status": "timeout"},
            {"policy": "tiresias.las", "jobs": 5, "completed": 5, "mean_jct_h": 1.0,
             "makespan_h": 3.0}]
    (tmp_path / "runs.json").write_text(json.dumps({"rows": rows}))
    assert bounds_scale._policy_values(("runs", 10)) == [
        {"policy": "tiresias.srtf", "mean_jct_h": 2.0, "makespan_h": 9.0}]
