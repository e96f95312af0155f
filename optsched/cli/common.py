"""What every ``optsched`` command shares: exit codes, ``--option`` parsing, number
formats and the progress line on stderr."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Set as AbstractSet
from typing import Any

from optsched.core.jsonio import check_document
from optsched.errors import InvalidOption

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "parse_options", "num", "pct", "secs",
           "hours", "table", "progress"]

EXIT_OK = 0
#: a solver produced no answer, a method or a policy failed
EXIT_FAILED = 1
#: bad input: malformed file, unknown name, unknown or bad option
EXIT_INPUT = 2


def parse_options(items: list[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` items (values parsed as JSON when they are JSON) to a dict."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise InvalidOption("--option", item, "must be KEY=VALUE")
        k, v = item.split("=", 1)
        k = k.strip()
        if not k:
            raise InvalidOption("--option", item, "the key is empty")
        if k in out:
            raise InvalidOption(k, v, "option given twice")
        try:
            value = json.loads(v)
        except (json.JSONDecodeError, RecursionError):
            value = v  # not JSON: the text itself
        check_document(value, InvalidOption, f"--option {k}")  # NaN, 1e400, ...
        out[k] = value
    return out


def num(x: Any, digits: int = 4) -> str:
    """A number with ``digits`` significant digits, thousands grouped, no noise."""
    if x is None:
        return "-"
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if not math.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 10 ** digits:
        return f"{x:,.0f}"
    if a >= 1e-3:
        decimals = max(0, digits - 1 - math.floor(math.log10(a)))
        text = f"{x:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{x:.{digits - 1}e}"


def pct(g: float | None) -> str:
    """A relative gap as a percentage (``-`` when there is none)."""
    if g is None or not math.isfinite(g):
        return "-"
    if g < 5e-5:
        return "0 %"
    return f"{100 * g:,.0f} %" if g >= 1 else f"{100 * g:.2g} %"


def secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 100 else f"{x:,.0f}"


def hours(x: float | None) -> str:
    return "-" if x is None else f"{x / 3600:.3f}"


def table(rows: list[list[str]], header: list[str],
          right: AbstractSet[int] = frozenset()) -> str:
    """A plain text table; columns in ``right`` are right-aligned (numbers)."""
    width = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
             for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, width))).rstrip()

    return "\n".join([line(header), line(["-" * w for w in width]), *map(line, rows)])


def progress(text: str, *, end: str = "\n") -> None:
    """A progress line on stderr (stdout stays the command's output)."""
    print(text, end=end, file=sys.stderr, flush=True)
