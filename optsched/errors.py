"""One exception hierarchy for every failure optsched reports.

Everything raised on purpose derives from :class:`OptschedError`, so callers can catch
the whole family at once. Errors about the *input* (a malformed instance, an invalid
schedule, a bad option) carry the field path and the offending value; solver outcomes
are never raised but reported as a :class:`optsched.core.result.Status` on the result.
"""

from __future__ import annotations

import reprlib
from typing import Any


class OptschedError(Exception):
    """Base class of all optsched errors."""


class InvalidInput(OptschedError, ValueError):
    """Input rejected; ``path`` names the offending field, ``value`` is what was given.

    ``path`` uses JSON-pointer-like dotted notation, e.g. ``jobs[3].throughput.v100``.
    """

    def __init__(self, path: str, value: Any, reason: str):
        self.path = path
        self.value = value
        self.reason = reason
        super().__init__(f"{path}: {reason} (got {_short(value)})")


class InvalidInstance(InvalidInput):
    """A cluster, job or instance description is malformed."""


class InvalidSchedule(InvalidInput):
    """A schedule violates the instance (capacity, gang size, arrival, work, ...)."""


class InvalidOutput(InvalidInput):
    """An output path cannot be written: it is an input of the same command, its folder
    is missing, it is a folder, the place is not writable or the disk is full.

    Unlike other input errors the path (``value``) is never shortened in the message.
    """

    def __init__(self, path: str, value: Any, reason: str):
        super().__init__(path, value, reason)
        Exception.__init__(self, f"{path}: {reason} (got {str(value)!r})")


class InvalidOption(InvalidInput):
    """A keyword option (method, backend, time limit, ...) has a bad value."""


class InvalidRecord(InvalidInput):
    """A benchmark-library record is refused: its best-known value has no proof, or its
    proof (a schedule or an allocation) fails the validator or does not reproduce the
    value it claims; ``path`` names the instance (and the objective)."""


class ModelNotApplicable(InvalidInput):
    """The instance is well formed but outside the model's assumptions.

    Example: AlloX assigns each job to one machine, so a job with several workers
    is outside its model.
    """


class ModelTooLarge(InvalidOption):
    """The options would build a program too large to hold or solve; the message names
    its size and the options that shrink it."""


class SolverFailed(OptschedError):
    """A method that must solve a program to run as named got no solution (e.g. a Gavel
    LP policy whose LP failed); ``status`` is the solver's outcome. Never replaced by a
    fallback that would run another method under the same name."""

    def __init__(self, where: str, status: Any, message: str = ""):
        self.where = where
        self.status = status
        super().__init__(f"{where}: solver status {status}" + (f": {message}" if message
                                                                 else ""))


class UnknownName(InvalidInput, KeyError):
    """A model, method, backend, policy, preset or profile name is not known."""

    def __str__(self) -> str:  # KeyError would quote the message otherwise
        return Exception.__str__(self)


class _BoundedRepr(reprlib.Repr):
    def repr_int(self, x: int, level: int) -> str:
        try:
            return super().repr_int(x, level)
        except ValueError:  # more digits than int -> str conversion allows
            return f"<{x.bit_length()}-bit integer>"


_BOUNDED = _BoundedRepr()
_BOUNDED.maxlevel = 4


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        # a value from hostile input (nested past the recursion limit, or an integer of
        # thousands of digits) must not turn the error report into a crash
        text = _BOUNDED.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
