"""Declared options: one rule for every method, policy and runner.

A callable *declares* its options by its signature: the keyword parameters it names
(keyword-only, or positional-or-keyword with a default) are its options. A callable
that hands a program to the solver layer also takes the solver options
(:data:`SOLVER_OPTIONS`), which it forwards to :func:`optsched.solvers.solve_program`
through ``**options``. Anything else is rejected by :func:`check_options` with an
:class:`~optsched.errors.InvalidOption` that names the option and lists the known ones
(exit code 2 at the command line): nothing is silently dropped.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from optsched.errors import InvalidOption

__all__ = ["SOLVER_OPTIONS", "declared_options", "check_options", "declares"]

#: Options every solver-backed method accepts and forwards to the solver layer.
SOLVER_OPTIONS = frozenset({"solver", "time_limit", "mip_gap", "threads", "seed", "verbose",
                            "options"})

def declared_options(fn: Callable[..., Any], *, exclude: Iterable[str] = ()) -> frozenset[str]:
    """The keyword options ``fn`` names in its signature (``**kwargs`` not included),
    without ``self``, ``instance`` and those in ``exclude``."""
    out = set()
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.KEYWORD_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD
                                        and p.default is not p.empty):
            out.add(p.name)
    return frozenset(out - {"self", "instance"} - set(exclude))


def check_options(where: str, given: Mapping[str, Any], known: Iterable[str]) -> None:
    """Raise :class:`InvalidOption` for the first option of ``given`` not in ``known``."""
    known = sorted(set(known))
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return
    k = unknown[0]
    close = difflib.get_close_matches(k, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(known) if known else "none"
    raise InvalidOption(k, given[k], f"not an option of {where}; its options: {listed}{hint}")


def declares(*, solver: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a method so that a keyword it does not declare raises
    :class:`InvalidOption` (not a ``TypeError``); ``solver=True`` adds
    :data:`SOLVER_OPTIONS`, which the method forwards to the solver layer."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        params = inspect.signature(fn).parameters
        known = declared_options(fn) | {n for n in params if n in ("backend",)}
        if solver:
            known |= SOLVER_OPTIONS

        @functools.wraps(fn)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not kwargs.keys() <= known:
                check_options(f"{fn.__module__.removeprefix('optsched.')}.{fn.__name__}",
                              kwargs, known)
            return fn(*args, **kwargs)

        return checked

    return wrap
