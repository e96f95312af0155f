"""A sweep's table: its columns, written and read back as CSV, JSON lines or Parquet,
and plotted (``docs/sweeps.md``)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optsched.core.files import open_atomic, write_text
from optsched.core.tables import Table
from optsched.errors import InvalidOption, UnknownName

if TYPE_CHECKING:
    from optsched.studies.sweep.config import SweepConfig

__all__ = ["COLUMNS", "FORMATS", "TIMING", "write_table", "load_table", "plot_sweep",
           "default_x"]

FORMATS = ("csv", "jsonl", "parquet")
COLUMNS = ["key", "kind", "model", "method", "trace", "size", "load", "rate", "seed",
           "status", "objective", "bound", "gap", "ratio", "n_jobs", "n_completed", "mean_jct",
           "p50_jct", "p99_jct", "makespan", "cru", "preemptions", "queued_jobs", "epochs",
           "bound_mean_jct", "gap_mean_jct", "bound_makespan", "gap_makespan",
           "build_seconds", "solve_seconds", "policy_seconds", "wall_seconds", "message"]
TIMING = ("build_seconds", "solve_seconds", "policy_seconds", "wall_seconds")


def require_pyarrow():
    """The ``pyarrow.parquet`` module; :class:`~optsched.errors.InvalidOption` on
    ``format`` when pyarrow is not installed (no fallback to another format)."""
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidOption("format", "parquet", "Parquet output needs pyarrow "
                            "(pip install pyarrow); choose csv or jsonl otherwise") from None
    return pq


def write_table(rows: Sequence[Mapping[str, Any]], path: str | Path, fmt: str | None = None
                ) -> Path:
    """Write ``rows`` (columns :data:`COLUMNS`) as CSV, JSON lines or Parquet, atomically
    (a temporary file renamed into place: a failed write leaves the old table whole)."""
    path = Path(path)
    fmt = fmt or path.suffix.lstrip(".")
    if fmt == "csv":
        with open_atomic(path, "w", field="path", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in COLUMNS})
    elif fmt == "jsonl":
        write_text(path, "".join(json.dumps({k: r.get(k) for k in COLUMNS}) + "\n"
                                 for r in rows), field="path")
    elif fmt == "parquet":
        pq = require_pyarrow()
        import pyarrow as pa
        table = pa.Table.from_pylist([{k: r.get(k) for k in COLUMNS} for r in rows])
        with open_atomic(path, "wb", field="path") as fh:
            pq.write_table(table, fh)
    else:
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    return path


_NUMERIC = {"size", "seed", "load", "rate", "objective", "bound", "gap", "ratio", "n_jobs",
            "n_completed", "mean_jct", "p50_jct", "p99_jct", "makespan", "cru", "preemptions",
            "queued_jobs", "epochs", "bound_mean_jct", "gap_mean_jct", "bound_makespan",
            "gap_makespan", *TIMING}
_INTEGER = ("size", "seed", "n_jobs", "n_completed", "preemptions", "queued_jobs", "epochs")


def load_table(path: str | Path) -> Table:
    """Read a sweep table (``.csv``, ``.jsonl`` or ``.parquet``) into a list of rows (a
    :class:`~optsched.core.tables.Table`: ``load_table(path).to_frame()`` for pandas)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".")
    if fmt == "jsonl":
        return Table([json.loads(line) for line in path.read_text().splitlines()
                      if line.strip()], COLUMNS)
    if fmt == "parquet":
        pq = require_pyarrow()
        return Table(pq.read_table(path).to_pylist(), COLUMNS)
    if fmt != "csv":
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    rows = []
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for k, v in r.items():
                if v == "":
                    row[k] = None
                elif k in _NUMERIC:
                    f = float(v)
                    row[k] = int(f) if k in _INTEGER else f
                else:
                    row[k] = v
            rows.append(row)
    return Table(rows, COLUMNS)


def plot_sweep(rows: Iterable[Mapping[str, Any]], y: str, out: str | Path, *,
               x: str = "size", logy: bool = False, logx: bool = False,
               title: str | None = None, group: str | None = None) -> Path:
    """Plot column ``y`` against ``x``: one panel per ``group`` (default: per trace when
    ``x`` is ``load`` or ``rate``, else per model), one line per method or policy (mean
    over seeds, min-max band): :func:`optsched.plotting.sweep_lines`. Rows without a
    number in ``x`` or ``y`` (e.g. solve cells in a plot against load) are left out."""
    from optsched.plotting import sweep_lines

    if x not in COLUMNS:
        raise InvalidOption("x", x, f"not a column of the sweep table ({', '.join(COLUMNS)})")
    if group is None:
        group = "trace" if x in ("load", "rate") else "model"
    return sweep_lines(rows, y, out, x=x, logy=logy, logx=logx, title=title, group=group)


def default_x(config: SweepConfig) -> str:
    """The column a sweep's plots put on the x axis: the arrival rate or load a
    simulation-only sweep varies, else the instance size."""
    sim = config.simulate
    if sim is not None and not config.models:
        if "rates" in sim:
            return "rate"
        if len(sim["loads"]) > 1:
            return "load"
    return "size"
