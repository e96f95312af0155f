"""Append-only JSON-lines stores that long runs resume from.

A sweep keeps its finished cells in ``OUT/cells.jsonl`` and a reproduction its finished
rows in ``OUT/claims.jsonl``: one JSON object per line, appended with
:func:`optsched.core.files.append_line` (flushed and synced) as each piece of work
finishes, so that a run stopped at any moment (Ctrl-C, ``kill``, a power cut) keeps
everything it finished and the next run computes only the rest.

A kill in the middle of an append leaves a *torn* last line: a line without its
newline, or not JSON. :func:`read_records` cuts such a line off (the file is truncated
to the end of the last whole line, and a one-line note says so), and its work is
computed again. A line that is not JSON *before* the last one is not an interrupted
append but corruption, and is an error naming the line: nothing is cut or skipped
silently.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from optsched.errors import InvalidOption

__all__ = ["read_records", "note"]


def note(text: str) -> None:
    """One line on stderr (stdout stays the command's output)."""
    print(f"optsched: {text}", file=sys.stderr, flush=True)


def read_records(path: str | Path, *, field: str, what: str = "its work",
                 log: Callable[[str], None] | None = note) -> list[dict[str, Any]]:
    """The records of the store at ``path`` (none when it does not exist), in file order.

    A torn last line (no trailing newline, or not a JSON object) is removed from the
    file and reported through ``log`` ("... ``what`` is computed again").

    Raises
    ------
    InvalidOption
        naming ``field``, the file and the line, when a line before the last is not a
        JSON object: that is corruption, not an interrupted write, and a run must not
        resume over it.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise InvalidOption(field, str(p), f"cannot be read: {exc.strerror or exc}") from None
    records: list[dict[str, Any]] = []
    pos, n = 0, 0
    while pos < len(data):
        n += 1
        end = data.find(b"\n", pos)
        last = end < 0 or not data[end + 1:].strip()
        rec: Any = None
        whole = end >= 0
        if whole:
            text = data[pos:end]
            if not text.strip():
                pos = end + 1
                continue
            try:
                rec = json.loads(text)
            except (json.JSONDecodeError, UnicodeDecodeError):
                rec = None
        if isinstance(rec, dict):
            records.append(rec)
            pos = end + 1
            continue
        if not last:
            raise InvalidOption(field, str(p), f"line {n} is not a JSON object while later "
                                "lines are whole: the file is damaged (not an interrupted "
                                "write); repair or remove that line")
        size = len(data) - pos
        os.truncate(p, pos)
        if log is not None:
            log(f"{p}: line {n} was cut short by an interrupted write ({size} bytes); "
                f"removed it, {what} is computed again")
        break
    return records
