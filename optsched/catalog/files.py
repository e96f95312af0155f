"""Where the catalog's data live and how its files are read: the shipped files
(``optsched.catalog_data``, the repository's ``models/``), user files, and the errors
they give."""

from __future__ import annotations

import csv
import difflib
import io
import math
from collections.abc import Iterable, Iterator
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.jsonio import read_text
from optsched.errors import InvalidInstance, InvalidOption, UnknownName

__all__ = ['DATA_PACKAGE', 'data_files']


DATA_PACKAGE = "optsched.catalog_data"


# =========================================================================== data access
def data_files() -> Traversable:
    """The folder of shipped catalog files (``importlib.resources.files(DATA_PACKAGE)``).

    When optsched is imported from a source checkout (``python -m optsched.cli`` run in
    the repository root puts the checkout first on ``sys.path``) the catalog is that
    checkout's ``models/`` folder, the very files its installation ships: the code and
    its data always come from one tree, even when ``optsched.catalog_data`` is installed
    from another (an editable install of a second checkout), or not at all.
    """
    checkout = Path(__file__).resolve().parents[2] / "models"
    if (checkout / "README.md").is_file() and (checkout / "__init__.py").is_file() \
            and (checkout / "gavel_throughputs.json").is_file():
        return checkout
    return resources.files(DATA_PACKAGE)


def _read_shipped(name: str) -> str:
    return (data_files() / name).read_text(encoding="utf-8")


def _read_user_file(path: str | Path) -> str:
    return read_text(path, InvalidInstance)


def _close(value: Any, choices: Iterable[str]) -> str:
    """'did you mean ...' text from difflib (case-insensitive), plus the known names."""
    choices = list(choices)
    lower = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(str(value).lower(), list(lower), n=3, cutoff=0.5)
    text = ""
    if hits:
        text = "did you mean " + " or ".join(repr(lower[h]) for h in hits) + "? "
    shown = ", ".join(repr(c) for c in choices[:30])
    more = f", ... ({len(choices)} in all)" if len(choices) > 30 else ""
    return f"{text}known: {shown}{more}"


def _unknown(field: str, value: Any, choices: Iterable[str]) -> UnknownName:
    return UnknownName(field, value, f"unknown {field}; {_close(value, choices)}")


def _parse_number(where: str, text: str, *, integer: bool = False, positive: bool = False
                  ) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InvalidInstance(where, text, "not a number") from None
    if not math.isfinite(value):
        raise InvalidInstance(where, text, "must be finite")
    if integer and not value.is_integer():
        raise InvalidInstance(where, text, "must be an integer")
    if positive and value <= 0:
        raise InvalidInstance(where, text, "must be > 0")
    if value < 0:
        raise InvalidInstance(where, text, "must be >= 0")
    return value


def _csv_rows(text: str, src: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each CSV record; a malformed record (e.g. a field past
    the csv module's size limit) raises InvalidInstance naming its line."""
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InvalidInstance(f"{src}:line {reader.line_num}", src,
                                  f"not valid CSV: {exc}") from None
        yield reader.line_num, fields


def _check_count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidOption(name, value, f"must be an integer >= {minimum}")
    return int(value)
