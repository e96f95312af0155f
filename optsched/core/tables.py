"""Tables to pandas: every table optsched produces converts to a :class:`pandas.DataFrame`.

* a :class:`~optsched.core.result.Result`: :meth:`Result.to_frame
  <optsched.core.result.Result.to_frame>` (one row per job, per allocation, or a
  one-row summary);
* a comparison (:func:`optsched.compare.compare`, what ``optsched compare`` and
  ``optsched demo`` print), a sweep table (:func:`optsched.studies.sweep.run_sweep`,
  :func:`~optsched.studies.sweep.load_table`) and a benchmark's result file
  (:func:`read_benchmark`) are each a :class:`Table`: a plain list of rows (every
  list operation works as before) with the table's column order and
  :meth:`Table.to_frame`.

pandas is optional (the ``pandas`` extra: ``pip install 'optsched[pandas]'``) and
imported only by ``to_frame``; without it :class:`PandasMissing` names the extra to
install. Every column of the rows is kept (the declared columns first, in order, then
any other key in the order first met); a row without a column has a missing value
there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from optsched.core.jsonio import load_json
from optsched.errors import InvalidInput

__all__ = ["PandasMissing", "require_pandas", "to_frame", "Table", "read_benchmark"]


class PandasMissing(InvalidInput):
    """pandas is not installed (install the ``pandas`` extra)."""


def require_pandas() -> Any:
    """The :mod:`pandas` module, or :class:`PandasMissing` naming the extra to install."""
    try:
        import pandas
    except ImportError:
        raise PandasMissing("pandas", None, "to_frame needs pandas: install the 'pandas' "
                            "extra (pip install 'optsched[pandas]')") from None
    return pandas


def _as_dict(row: Any) -> Mapping[str, Any]:
    if isinstance(row, Mapping):
        return row
    to_dict = getattr(row, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    raise InvalidInput("rows", row, "a table row must be a mapping or have to_dict()")


def to_frame(rows: Iterable[Any], columns: Sequence[str] | None = None) -> Any:
    """A :class:`pandas.DataFrame` with one row per item of ``rows`` (mappings, or
    objects with ``to_dict()`` such as :class:`optsched.compare.Row`): the ``columns``
    first, in order, then every other key in the order first met (module docstring).

    Raises
    ------
    PandasMissing
        pandas is not installed.
    InvalidInput
        a row is neither a mapping nor has ``to_dict()``.
    """
    pd = require_pandas()
    dicts = [_as_dict(r) for r in rows]
    order = dict.fromkeys(columns or ())
    for d in dicts:
        order.update(dict.fromkeys(d))
    names = list(order)
    return pd.DataFrame([[d.get(c) for c in names] for d in dicts], columns=names)


class Table(list):
    """A list of rows (mappings or objects with ``to_dict()``) that knows its column
    order: a plain list for every other purpose (indexing, iteration, ``==``, JSON).

    Attributes
    ----------
    columns : tuple of str
        The table's columns in order (empty: the rows' keys in the order first met).
    meta : dict
        What the table came with (a benchmark's machine, parameters and notes).
    """

    def __init__(self, rows: Iterable[Any] = (), columns: Sequence[str] = (),
                 meta: Mapping[str, Any] | None = None):
        super().__init__(rows)
        self.columns = tuple(columns)
        self.meta = dict(meta or {})

    def to_frame(self) -> Any:
        """The rows as a :class:`pandas.DataFrame` (:func:`to_frame`)."""
        return to_frame(self, self.columns)


def read_benchmark(path: str | Path) -> Table:
    """The rows of a benchmark's result file (``benchmarks/results/<name>.json``, as
    ``benchmarks/common.py`` writes it) as a :class:`Table`; ``meta`` holds the file's
    ``benchmark``, ``title``, ``machine``, ``params`` and ``notes``.

    Raises
    ------
    InvalidInput
        the file is missing or not JSON, or is not a benchmark result (no list of
        ``rows``).
    """
    data = load_json(path, InvalidInput, str(path))
    rows = data.get("rows") if isinstance(data, Mapping) else None
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise InvalidInput(str(path), type(data).__name__,
                           "not a benchmark result (needs a list of 'rows')")
    columns = data.get("columns")
    if not (isinstance(columns, list) and all(isinstance(c, str) for c in columns)):
        columns = []
    meta = {k: data[k] for k in ("benchmark", "title", "machine", "params", "notes")
            if k in data}
    return Table(rows, columns, meta)
