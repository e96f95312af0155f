"""Field checks of the input format: every bad value raises
:class:`~optsched.errors.InvalidInstance` naming its path (``jobs[3].throughput.v100``)
and the value; nothing is clipped or dropped. Shared by the instance and its job
profiles."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from optsched.errors import InvalidInstance

__all__ = ["MAX_INTEGER"]

#: Largest integer field (GPU counts, gang sizes) accepted: 2**53, beyond which integers
#: are no longer exact as floats, which the LP models and the simulator compute in.
MAX_INTEGER = 2**53


def _num(path: str, value: Any, *, minimum: float | None = 0.0, strict: bool = False,
         allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidInstance(path, value, "must be a number")
    try:
        v = float(value)
    except OverflowError:
        raise InvalidInstance(path, value, "number out of range (does not fit a 64-bit "
                              "float)") from None
    if math.isnan(v):
        raise InvalidInstance(path, value, "must not be NaN")
    if math.isinf(v) and not allow_inf:
        raise InvalidInstance(path, value, "must be finite")
    if minimum is not None:
        if strict and not v > minimum:
            raise InvalidInstance(path, value, f"must be > {minimum:g}")
        if not strict and v < minimum:
            raise InvalidInstance(path, value, f"must be >= {minimum:g}")
    return v


def _int(path: str, value: Any, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        else:
            raise InvalidInstance(path, value, "must be an integer")
    if abs(value) > MAX_INTEGER:
        raise InvalidInstance(path, value, f"number out of range (integers are at most "
                              f"2**53 = {MAX_INTEGER})")
    if value < minimum:
        raise InvalidInstance(path, value, f"must be >= {minimum}")
    return int(value)


def _str(path: str, value: Any, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInstance(path, value, "must be a string")
    if not allow_empty and not value.strip():
        raise InvalidInstance(path, value, "must be a non-empty string")
    return value


def _mapping(path: str, value: Any) -> Mapping:
    if not isinstance(value, Mapping):
        raise InvalidInstance(path, value, "must be an object (mapping)")
    return value


def _frozen(d: Mapping) -> Mapping:
    return MappingProxyType(dict(d))


# --------------------------------------------------------------------------- utility


def _no_unknown(path: str, data: Mapping, allowed: Iterable[str]) -> None:
    extra = sorted(set(data) - set(allowed))
    if extra:
        where = f"{path}.{extra[0]}" if path else extra[0]
        raise InvalidInstance(where, data[extra[0]], f"unknown field; allowed: {sorted(allowed)}")


def _require(path: str, data: Mapping, keys: Iterable[str]) -> None:
    for k in keys:
        if k not in data:
            raise InvalidInstance(f"{path}.{k}" if path else k, None, "required field is missing")
