"""Reading JSON (and TOML) documents that may be hostile: the one reader every loader uses.

A user file can be anything: bytes that are not UTF-8, brackets nested 100,000 deep, a
number literal no float can hold. Python's own readers answer those with
``UnicodeDecodeError``, ``RecursionError``, ``ValueError`` or a silent ``inf``; here each
becomes the caller's :class:`~optsched.errors.InvalidInput` subclass, naming the file
(or, for a bad number, the field inside the document).

Rules for a document, on top of the JSON grammar:

* text is UTF-8, decoded strictly;
* nesting is at most :data:`MAX_DEPTH` levels. The limit is a constant rather than
  "whatever the interpreter's recursion limit allows", so a file is accepted or rejected
  the same way from every call site;
* every number fits a 64-bit float: ``NaN``/``Infinity`` are not JSON and ``1e400`` or a
  400-digit integer would overflow (the models compute in floats);
* an object names each key once: Python keeps the last of repeated keys, silently
  dropping the others.
"""

from __future__ import annotations

import json
import math
import sys
import tomllib
from pathlib import Path
from typing import Any

from optsched.errors import InvalidInput

__all__ = ["MAX_DEPTH", "read_text", "parse_json", "load_json", "parse_toml", "check_document"]

#: Deepest nesting accepted: far above any optsched file (an instance nests 6 levels).
MAX_DEPTH = 100

# A float has at most 309 integer digits; longer literals need no conversion to reject
# (and beyond 4,300 digits int() itself refuses them).
_MAX_INT_DIGITS = 309


class _Bad(str):
    """Placeholder the parser leaves where a value is unacceptable; ``check_document``
    reports it with its path. ``str`` so that ``repr`` shows the literal."""

    reason: str

    def __new__(cls, literal: str, reason: str) -> _Bad:
        self = super().__new__(cls, literal)
        self.reason = reason
        return self


class _Pairs(dict):
    """An object whose text repeated a key (``duplicate`` is the first repeated one)."""

    duplicate: str


_OUT_OF_RANGE = "number out of range (does not fit a 64-bit float)"


def _float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _Bad(text, _OUT_OF_RANGE)


def _int(text: str) -> Any:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        return _Bad(text[:40] + "...", _OUT_OF_RANGE)
    value = int(text)
    try:
        float(value)
    except OverflowError:
        return _Bad(text[:40] + "...", _OUT_OF_RANGE)
    return value


def _constant(text: str) -> Any:
    return _Bad(text, "NaN and Infinity are not valid JSON numbers")


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    flagged = _Pairs(out)
    flagged.duplicate = key
    return flagged


def _where(source: str | None) -> str:
    return f" in {source}" if source else ""


def read_text(path: str | Path, error: type[InvalidInput], field: str = "(file)") -> str:
    """The text of file ``path``, decoded as strict UTF-8; ``error(field, path, ...)``
    if it cannot be read or is not UTF-8."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise error(field, str(p), f"cannot read: {exc.strerror or exc}") from None
    return _decode(data, error, field, str(p))


def _decode(data: bytes, error: type[InvalidInput], field: str, what: Any) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(field, what, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start})") from None


def parse_json(text: str | bytes, error: type[InvalidInput], field: str = "(root)",
               source: str | None = None) -> Any:
    """Parse JSON ``text`` (``bytes`` must be UTF-8) under the module's rules.

    A problem with the whole text is reported as ``error(field, source or an excerpt,
    ...)``; a bad value inside it as ``error(<path of the value>, literal, ...)`` with
    ``source`` (a file name, when there is one) in the reason.
    """
    text = _text(text, error, field, source)
    what = source if source is not None else text[:60]
    try:
        data = json.loads(text, parse_float=_float, parse_int=_int,
                          parse_constant=_constant, object_pairs_hook=_pairs)
    except RecursionError:
        raise error(field, what, f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise error(field, what, f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                    f"{exc.colno}") from None
    check_document(data, error, source)
    return data


def load_json(path: str | Path, error: type[InvalidInput], field: str = "(file)") -> Any:
    """:func:`read_text` then :func:`parse_json` of file ``path``."""
    return parse_json(read_text(path, error, field), error, field, source=str(path))


def parse_toml(text: str | bytes, error: type[InvalidInput], field: str = "(root)",
               source: str | None = None) -> dict[str, Any]:
    """Parse TOML ``text`` under the same rules (TOML's own ``nan``/``inf`` included)."""
    text = _text(text, error, field, source)
    what = source if source is not None else text[:60]
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise error(field, what, f"nested deeper than {MAX_DEPTH} levels") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(field, what, f"not valid TOML: {exc}") from None
    except ValueError:  # only int() refusing a literal of over 4,300 digits gets here
        raise error(field, what, _OUT_OF_RANGE + " (an integer of over 4,300 digits)") \
            from None
    check_document(data, error, source)
    return data


def _text(text: Any, error: type[InvalidInput], field: str, source: str | None) -> str:
    if isinstance(text, (bytes, bytearray)):
        return _decode(bytes(text), error, field, source or bytes(text[:60]))
    if not isinstance(text, str):
        raise error(field, text, "must be text (str or UTF-8 bytes)")
    return text


def check_document(data: Any, error: type[InvalidInput], source: str | None = None) -> None:
    """Raise ``error`` at the first value breaking the module's rules.

    Iterative, so that depth is measured rather than met as a ``RecursionError``; paths
    are only spelled out for the value reported. Only containers go on the stack and
    scalars are told apart by exact type: result files hold 10**6 values.
    """
    _check_value(data, None, error, source)
    stack: list[tuple[Any, int, tuple | None]] = [(data, 1, None)]
    while stack:
        value, depth, trail = stack.pop()
        if type(value) is not dict and type(value) is not list:
            if isinstance(value, _Pairs):
                raise error(_path((trail, value.duplicate)), value[value.duplicate],
                            f"key given more than once{_where(source)}")
            continue
        if depth > MAX_DEPTH:
            raise error(_path(trail), source or "...", f"nested deeper than {MAX_DEPTH} "
                        f"levels{_where(source)}")
        for key, v in (value.items() if type(value) is dict else enumerate(value)):
            t = type(v)
            if t is dict or t is list or t is _Pairs:
                stack.append((v, depth + 1, (trail, key)))
            elif t is not str and t is not bool and v is not None:
                _check_value(v, (trail, key), error, source)


_FLOAT_MAX = sys.float_info.max


def _check_value(v: Any, trail: tuple | None, error: type[InvalidInput],
                 source: str | None) -> None:
    t = type(v)
    if t is float:
        if not math.isfinite(v):
            raise error(_path(trail), v, f"must be finite{_where(source)}")
    elif t is int:
        if v > _FLOAT_MAX or v < -_FLOAT_MAX:
            try:  # a few integers above the largest float still round down to it
                float(v)
            except OverflowError:
                raise error(_path(trail), v, _OUT_OF_RANGE + _where(source)) from None
    elif t is _Bad:
        raise error(_path(trail), str(v), v.reason + _where(source))


def _path(trail: tuple | None) -> str:
    """``jobs[0].work`` from the linked (parent, key) pairs ``check_document`` keeps."""
    parts: list[str | int] = []
    while trail is not None:
        trail, key = trail
        parts.append(key)
    text = ""
    for key in reversed(parts):
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
        if len(text) > 80:  # only a too-deep value has such a path; its start locates it
            return text[:80] + "..."
    return text or "(root)"
