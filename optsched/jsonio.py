"""Reading JSON files a user hands over, with typed errors for hostile content."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InvalidInput

__all__ = ["read_json_file", "parse_json"]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def parse_json(text: str | bytes, error: type[InvalidInput] = InvalidInput,
               where: str = "(root)") -> Any:
    """Parse JSON text; any failure raises ``error(where, ...)``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(where, f"byte {exc.start}", "not UTF-8 text") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise error(where, text[:60], f"not valid JSON: {exc.msg} at line {exc.lineno} "
                    f"column {exc.colno}") from None
    except RecursionError:
        raise error(where, text[:60], "JSON nested too deeply") from None
    except ValueError as exc:
        raise error(where, text[:60], f"not valid JSON: {exc}") from None


def read_json_file(path: str | Path, error: type[InvalidInput] = InvalidInput,
                   where: str = "(file)") -> Any:
    """Read and parse a JSON file; unreadable, non-UTF-8 or malformed content raises
    ``error`` naming ``where`` and the file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise error(where, str(p), f"cannot read: {exc.strerror or exc}") from None
    return parse_json(data, error, f"{where} {p.name}" if where == "(file)" else where)
