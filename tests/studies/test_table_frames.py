"""Sweep tables and benchmark result files to pandas DataFrames (optsched.core.tables)."""

from __future__ import annotations

import json
import sys

import pytest
from paths import BENCHMARKS

from optsched.core.tables import PandasMissing, Table, read_benchmark
from optsched.errors import InvalidInput
from optsched.studies.sweep import COLUMNS, SweepConfig, load_table, run_sweep


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    cfg = SweepConfig.from_dict({"name": "frames", "models": ["allox"],
                                 "methods": ["exact", "sjf"], "sizes": [4, 6], "seeds": [0]})
    rows, computed = run_sweep(cfg, out, fmt="jsonl")
    assert computed == 4
    return out, rows


def test_a_sweep_table_is_a_list_and_a_frame(sweep):
    pytest.importorskip("pandas")
    out, rows = sweep
    assert isinstance(rows, Table) and isinstance(rows[0], dict) and rows.columns == tuple(COLUMNS)
    df = rows.to_frame()
    assert list(df.columns) == COLUMNS and len(df) == 4
    assert list(df["method"]) == [r["method"] for r in rows]
    assert df["objective"].tolist() == pytest.approx([r["objective"] for r in rows])
    again = load_table(out / "results.jsonl")
    assert again == rows and isinstance(again, Table)
    back = again.to_frame()
    assert list(back.columns) == COLUMNS and back["key"].tolist() == df["key"].tolist()
    # JCT against size, method by method: what a researcher does next
    means = df.groupby(["method", "size"])["objective"].mean()
    assert means.loc[("exact", 6)] <= means.loc[("sjf", 6)] * (1 + 1e-9)


def test_a_sweep_table_without_pandas(sweep, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(PandasMissing, match=r"optsched\[pandas\]"):
        sweep[1].to_frame()


def test_a_benchmark_result_file(tmp_path):
    pytest.importorskip("pandas")
    shipped = read_benchmark(BENCHMARKS / "results" / "allox.json")
    assert shipped and shipped.meta["benchmark"] == "allox" and "machine" in shipped.meta
    assert len(shipped.to_frame()) == len(shipped)
    path = tmp_path / "b.json"  # the shape benchmarks/common.py writes
    path.write_text(json.dumps({"benchmark": "b", "title": "t", "columns": ["n", "mean"],
                                "rows": [{"mean": 2.0, "n": 8, "note": "x"},
                                         {"n": 16, "mean": 3.5}]}))
    table = read_benchmark(path)
    assert table.meta == {"benchmark": "b", "title": "t"}
    df = table.to_frame()
    assert list(df.columns) == ["n", "mean", "note"] and df["n"].tolist() == [8, 16]


def test_a_file_that_is_no_benchmark_result(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"note": "n", "row": {}}))
    with pytest.raises(InvalidInput, match="not a benchmark result"):
        read_benchmark(bad)
    with pytest.raises(InvalidInput, match="cannot read"):
        read_benchmark(tmp_path / "missing.json")
