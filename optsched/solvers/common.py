"""What the backends share: the common :class:`~optsched.core.result.Result` assembly,
reduced costs, and the backend protocol every backend module satisfies.

A backend module (:mod:`optsched.solvers.highs`, :mod:`~optsched.solvers.pyomo`,
:mod:`~optsched.solvers.cvxpy`) defines

* ``NAME`` and ``PACKAGE`` (the Python package it drives);
* ``CAPABILITIES``: a :class:`Capabilities` record of what it can do;
* ``STATUS``: its table from the solver's own outcome names to
  :class:`~optsched.core.result.Status`;
* ``installed()``: whether its package can be imported, found without importing it;
* ``solve(data, *, solver, time_limit, mip_gap, threads, seed, verbose, options,
  start)``; ``start`` (a full column vector) is passed only when ``CAPABILITIES.mip_start``.

:func:`optsched.solvers.solve_program` trusts this shape (:class:`Backend`); it does not
probe a backend for features.
"""

from __future__ import annotations

import atexit
import importlib.util
import math
import os
import sys
import threading
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from optsched.core.result import Result, Status, relative_gap
from optsched.solvers.program import ProgramData

__all__ = ["Backend", "Capabilities", "abandon_solve", "installed", "make_result", "missing",
           "quiet_highs_banner", "reduced_costs", "reset_highs_threads",
           "wait_for_abandoned_solves"]


@dataclass(frozen=True)
class Capabilities:
    """What a backend supports.

    ``mip``: integer columns; ``duals``: LP row and column duals; ``mip_bound``: the dual
    bound of a stopped MILP; ``solvers``: solvers other than HiGHS behind it;
    ``write``: MPS/LP export; ``mip_start``: hands a MILP start (a primal vector) to the
    solver, which begins its search from it (``mip_start_solvers``: the only solvers it
    can hand one to, empty for all).
    """

    mip: bool = True
    duals: bool = True
    mip_bound: bool = True
    solvers: bool = False
    write: bool = False
    mip_start: bool = False
    mip_start_solvers: tuple[str, ...] = ()


class Backend(Protocol):
    """The shape of a backend module (see the module docstring)."""

    NAME: str
    PACKAGE: str
    CAPABILITIES: Capabilities
    STATUS: dict[str, Status]

    def installed(self) -> bool: ...

    def available(self) -> bool: ...

    def solve(self, data: ProgramData, *, solver: str | None, time_limit: float | None,
              mip_gap: float | None, threads: int | None, seed: int, verbose: bool,
              options: dict[str, Any], start: np.ndarray | None = None) -> Result: ...


def installed(package: str) -> bool:
    """Whether ``package`` can be imported, answered without importing it."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False



def make_result(data: ProgramData, status: Status, *, backend: str, solver: str | None,
                x: np.ndarray | None = None, bound: float | None = None,
                row_duals: np.ndarray | None = None, col_duals: np.ndarray | None = None,
                build_seconds: float = 0.0, solve_seconds: float = 0.0,
                message: str = "") -> Result:
    """Assemble the common :class:`Result` (objective from ``x``, duals only for LPs)."""
    objective = None
    values: dict[str, np.ndarray] = {}
    if x is not None and status.has_solution:
        x = np.asarray(x, dtype=float)
        objective = data.objective_value(x)
        values = data.split_cols(x)
    if status is Status.OPTIMAL and not data.is_mip:
        bound = objective
    if bound is not None and not math.isfinite(bound):
        bound = None
    duals = extra = None
    if not data.is_mip and row_duals is not None and status is Status.OPTIMAL:
        row_duals = np.asarray(row_duals, dtype=float) + 0.0  # + 0.0 turns -0.0 into 0.0
        if col_duals is None:
            col_duals = reduced_costs(data, row_duals)
        duals = data.split_rows(row_duals)
        extra = {"col_duals": data.split_cols(np.asarray(col_duals, dtype=float) + 0.0)}
    return Result(status=status, objective=objective, bound=bound,
                  gap=relative_gap(objective, bound), backend=backend, solver=solver,
                  build_seconds=max(0.0, build_seconds), solve_seconds=max(0.0, solve_seconds),
                  values=values, duals=duals, message=message, extra=extra or {})


def missing(backend: str, solver: str | None, message: str) -> Result:
    return Result(status=Status.SOLVER_MISSING, backend=backend, solver=solver, message=message)


def reduced_costs(data: ProgramData, row_duals: np.ndarray) -> np.ndarray:
    """``c - A.T @ y``: column duals in the package convention, given row duals in it."""
    return data.c - data.A.T @ row_duals


_banner_lock = threading.Lock()
_banner_done = False


def quiet_highs_banner() -> None:
    """Let HiGHS write its once-per-process start-up banner to the null device.

    From highspy 1.16 the first ``Highs()`` of a process prints "Running HiGHS ..." to the
    C-level standard output while being constructed, before ``output_flag`` can be set
    to false, so ``optsched solve --json > out.json`` wrote a file that is not JSON.
    The banner is written once per process, so constructing one ``Highs`` with file
    descriptor 1 pointed at the null device keeps it out of every later solve, in every
    backend that drives HiGHS. A no-op once done, and when highspy is not installed.
    """
    global _banner_done
    if _banner_done:
        return
    # other threads wait here until the banner is out of the way: a Highs() of theirs
    # constructed first would print it to the real standard output
    with _banner_lock:
        if _banner_done:
            return
        if installed("highspy"):
            _construct_one_highs_silently()
        _banner_done = True


def _construct_one_highs_silently() -> None:
    import ctypes

    import highspy

    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output to protect
        highspy.Highs()
        return
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        highspy.Highs()
        if os.name == "posix":
            # the banner may sit in the C library's stdout buffer: flush it to the null
            # device before the descriptor is restored
            ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def reset_highs_threads(threads: int | None) -> None:
    """HiGHS refuses a ``threads`` value that differs from its running global scheduler."""
    if threads is not None:
        import highspy
        wait_for_abandoned_solves()  # never reset the scheduler under a running solve
        highspy.Highs.resetGlobalScheduler(True)


#: HiGHS solves given up at their deadline (thread, Highs object), still finishing.
_abandoned: list[tuple[threading.Thread, Any]] = []
_abandoned_lock = threading.Lock()


def abandon_solve(thread: threading.Thread, highs: Any) -> None:
    """Keep a solve that overran its deadline alive until it stops by itself.

    Some phases of HiGHS (presolve, the MIP set-up) look at the clock only between their
    steps, so a large model can run seconds past ``time_limit``; the caller returns at its
    deadline and the solve, which stops at its next check, finishes in the background.
    The process waits for it at exit (a thread inside HiGHS must not outlive the
    interpreter) and before the thread scheduler is reset.
    """
    with _abandoned_lock:
        _abandoned[:] = [(t, h) for t, h in _abandoned if t.is_alive()]
        _abandoned.append((thread, highs))


def abandoned_solves_running() -> bool:
    """Whether a solve given up at its deadline is still running in the background."""
    with _abandoned_lock:
        return any(t.is_alive() for t, _ in _abandoned)


def wait_for_abandoned_solves() -> None:
    """Join every abandoned solve (see :func:`abandon_solve`)."""
    with _abandoned_lock:
        pending = list(_abandoned)
        _abandoned.clear()
    for thread, _ in pending:
        thread.join()


atexit.register(wait_for_abandoned_solves)
