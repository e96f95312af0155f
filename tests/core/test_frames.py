"""Results and comparisons to pandas DataFrames (optsched.core.tables); pandas is optional and
its absence is a typed error naming the extra."""

from __future__ import annotations

import sys

import pytest

import optsched
from optsched import catalog
from optsched.compare import ROW_COLUMNS, Row, compare
from optsched.core.result import Result, Status
from optsched.core.tables import PandasMissing, Table, to_frame
from optsched.errors import InvalidInput, InvalidOption


@pytest.fixture(scope="module")
def run():
    inst = catalog.generate_philly(14, seed=2, jobs_per_hour=4)
    full = optsched.simulate(inst, "fifo", bounds=False)
    cut = optsched.simulate(inst, "fifo", bounds=False, max_time=full.metrics.makespan / 3)
    return inst, full, cut


def test_a_result_per_job(run):
    pytest.importorskip("pandas")
    inst, res, _ = run
    df = res.to_frame()
    assert list(df.columns) == ["job", "completed", "arrival", "start", "completion", "jct",
                                "queueing_delay", "gpu_seconds"]
    assert sorted(df["job"]) == sorted(j.id for j in inst.jobs) and df["completed"].all()
    assert df["jct"].mean() == pytest.approx(res.metrics.mean_jct)
    assert df["gpu_seconds"].sum() == pytest.approx(res.metrics.busy_gpu_seconds)
    arrival = {j.id: j.arrival for j in inst.jobs}
    for r in df.itertuples():
        assert r.arrival == pytest.approx(arrival[r.job], abs=1e-6)
        assert r.jct == pytest.approx(r.completion - arrival[r.job])
        assert r.start >= r.arrival - 1e-9


def test_unfinished_jobs_have_missing_times(run):
    pd = pytest.importorskip("pandas")
    inst, _, cut = run
    df = cut.to_frame()
    left = df[~df["completed"]]
    assert len(df) == inst.n_jobs and len(left) == cut.metrics.n_unfinished > 0
    assert list(left["job"]) == list(cut.metrics.unfinished)
    assert left["completion"].isna().all() and left["jct"].isna().all()
    assert pd.isna(df.set_index("job").loc[list(cut.metrics.completion)]["jct"]).sum() == 0


def test_allocations_and_summaries(run):
    pd = pytest.importorskip("pandas")
    _, res, cut = run
    alloc = res.to_frame("allocations")
    assert len(alloc) == len(res.schedule.allocations)
    assert {"job", "start", "end", "node", "gpu_type", "gpus", "share"} <= set(alloc.columns)
    assert ((alloc["end"] - alloc["start"]) * alloc["gpus"] * alloc["share"]).sum() == \
        pytest.approx(res.metrics.busy_gpu_seconds)
    both = pd.concat([res.to_frame("summary"), cut.to_frame("summary")], ignore_index=True)
    assert list(both["n_completed"]) == [res.metrics.n_completed, cut.metrics.n_completed]
    assert list(both["status"]) == [res.status.value, cut.status.value]
    assert both.loc[0, "mean_jct"] == pytest.approx(res.metrics.mean_jct)
    assert both.loc[0, "instance"] == res.extra["instance"]  # scalar extras come along
    with pytest.raises(InvalidOption, match="table"):
        res.to_frame("per_job")


def test_a_result_without_schedule_has_only_a_summary():
    pytest.importorskip("pandas")
    res = Result(Status.TIME_LIMIT, bound=3.0, model="gavel", method="exact")
    with pytest.raises(InvalidOption, match="no schedule.*summary"):
        res.to_frame()
    (row,) = res.to_frame("summary").to_dict("records")
    assert row["status"] == "time_limit" and row["bound"] == 3.0


def test_a_comparison_is_a_list_and_a_frame():
    pytest.importorskip("pandas")
    inst = optsched.get_model("allox").demo_instance(n_jobs=6)
    rows = compare(inst, "allox", methods=["sjf"])
    assert isinstance(rows, list) and all(isinstance(r, Row) for r in rows)
    assert rows.columns == ROW_COLUMNS
    df = rows.to_frame()
    assert tuple(df.columns) == ROW_COLUMNS and list(df["method"]) == [r.method for r in rows]
    assert df.set_index("method").loc["exact", "factor"] == pytest.approx(1.0)


def test_to_frame_keeps_every_column_in_order():
    pytest.importorskip("pandas")
    df = to_frame([{"b": 1, "a": 2}, {"c": 3}], columns=["a", "z"])
    assert list(df.columns) == ["a", "z", "b", "c"]
    assert df["a"].tolist()[0] == 2 and df["c"].isna().tolist() == [True, False]
    assert Table([{"x": 1}]).to_frame()["x"].tolist() == [1]
    with pytest.raises(InvalidInput, match="mapping"):
        to_frame([3])


def test_without_pandas_the_error_names_the_extra(run, monkeypatch):
    _, res, _ = run
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    for convert in (res.to_frame, Table([{"x": 1}]).to_frame):
        with pytest.raises(PandasMissing, match=r"pip install 'optsched\[pandas\]'"):
            convert()
    assert issubclass(PandasMissing, InvalidInput)
