"""highspy backend: the program's arrays go straight into a ``HighsLp`` (no Python loops
over non-zeros), solved by one ``Highs`` instance.

HiGHS's ``row_dual`` and ``col_dual`` already are d(objective)/d(active bound) in the
program's own sense (checked for min and max), so they are returned unchanged.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.solvers.common import (
    Capabilities,
    abandon_solve,
    make_result,
    missing,
    quiet_highs_banner,
    reset_highs_threads,
)
from optsched.solvers.common import installed as _installed
from optsched.solvers.program import ProgramData

NAME = BACKEND = "highs"
PACKAGE = "highspy"
CAPABILITIES = Capabilities(mip=True, duals=True, mip_bound=True, solvers=False, write=True,
                            mip_start=True)
#: Seconds past ``time_limit`` (plus 2 % of it) that a solve is waited for before it is
#: abandoned (:func:`optsched.solvers.common.abandon_solve`). In branch and bound and
#: simplex HiGHS reads its clock every few iterations and returns well within this;
#: presolve and the MIP set-up read it only between their steps (measured: a 141k-column
#: HadarE MILP spent 7.6 s in presolve under a 3 s limit).
DEADLINE_GRACE = 0.25
#: HiGHS model status -> Status (a work limit of any kind is ``time_limit``).
STATUS: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL, "kModelEmpty": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE, "kUnbounded": Status.UNBOUNDED,
    **{k: Status.TIME_LIMIT for k in (
        "kTimeLimit", "kIterationLimit", "kSolutionLimit", "kInterrupt", "kHighsInterrupt",
        "kObjectiveBound", "kObjectiveTarget", "kMemoryLimit")},
}


def installed() -> bool:
    """highspy can be imported (found without importing it)."""
    return _installed(PACKAGE)


def available() -> bool:
    """The backend can run here: highspy is installed."""
    return installed()


def to_highs_lp(data: ProgramData, *, names: bool = False):
    """Build the ``highspy.HighsLp`` of ``data`` (row-wise CSR matrix, sense, offset)."""
    import highspy

    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = data.n_cols, data.n_rows
    lp.col_cost_ = np.ascontiguousarray(data.c, dtype=float)
    lp.col_lower_ = np.where(np.isneginf(data.col_lb), -inf, data.col_lb)
    lp.col_upper_ = np.where(np.isposinf(data.col_ub), inf, data.col_ub)
    lp.row_lower_ = np.where(np.isneginf(data.row_lb), -inf, data.row_lb)
    lp.row_upper_ = np.where(np.isposinf(data.row_ub), inf, data.row_ub)
    A = data.A.tocsr()
    mat = lp.a_matrix_
    mat.format_ = highspy.MatrixFormat.kRowwise
    mat.num_col_, mat.num_row_ = data.n_cols, data.n_rows
    mat.start_ = A.indptr.astype(np.int32)
    mat.index_ = A.indices.astype(np.int32)
    mat.value_ = A.data.astype(float)
    lp.offset_ = float(data.offset)
    lp.sense_ = highspy.ObjSense.kMaximize if data.sense == "max" else highspy.ObjSense.kMinimize
    if data.is_mip:
        kinds = (highspy.HighsVarType.kContinuous, highspy.HighsVarType.kInteger)
        lp.integrality_ = [kinds[i] for i in data.integer.astype(int)]
    if names:
        cols, rows = _file_names(data.col_names()), _file_names(data.row_names())
        if cols is not None and rows is not None:
            lp.col_names_, lp.row_names_ = cols, rows
    return lp


def _pass_model(h, data: ProgramData):
    """Hand ``data`` to ``h`` through highspy's array form of ``passModel``.

    The same model as ``h.passModel(to_highs_lp(data))`` (the solves agree bit for bit),
    without copying every array element by element into a ``HighsLp`` first, which
    takes longer than a small LP's whole set-up. The integrality array is always passed
    in full: highspy reads past an empty one.
    """
    import highspy

    A = data.A.tocsr()
    return h.passModel(
        int(data.n_cols), int(data.n_rows), int(A.nnz), int(highspy.MatrixFormat.kRowwise),
        int(highspy.ObjSense.kMaximize if data.sense == "max" else highspy.ObjSense.kMinimize),
        float(data.offset), np.ascontiguousarray(data.c, dtype=float),
        np.ascontiguousarray(data.col_lb, dtype=float),
        np.ascontiguousarray(data.col_ub, dtype=float),
        np.ascontiguousarray(data.row_lb, dtype=float),
        np.ascontiguousarray(data.row_ub, dtype=float),
        np.ascontiguousarray(A.indptr[:-1], dtype=np.int32),
        np.ascontiguousarray(A.indices, dtype=np.int32),
        np.ascontiguousarray(A.data, dtype=float),
        np.ascontiguousarray(data.integer, dtype=np.int32))


def _file_names(names: list[str]) -> list[str] | None:
    """``x[0,1]`` -> ``x(0,1)``, other unsafe characters -> ``_``; None if not unique."""
    out = [re.sub(r"[^A-Za-z0-9_().,]", "_", n.replace("[", "(").replace("]", ")"))
           for n in names]
    out = [n if n[:1].isalpha() or n[:1] == "_" else "_" + n for n in out]
    return out if len(set(out)) == len(out) else None


def _new_highs(verbose: bool, time_limit, mip_gap, threads, seed, options: dict):
    """A new ``Highs`` object with the call's options.

    Never a reused one: HiGHS measures ``time_limit`` against the object's run clock,
    which adds up over every run of the object and which ``clear()`` does not reset, so a
    reused object would stop later solves at once.
    """
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", bool(verbose))
    h.setOptionValue("random_seed", int(seed))
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    if mip_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_gap))
    if threads is not None:
        h.setOptionValue("threads", int(threads))
    for key, value in options.items():
        if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
            raise ValueError(f"HiGHS rejected option {key}={value!r}")
    return h


def _set_start(h, data: ProgramData, start: np.ndarray, verbose: bool) -> list[str]:
    """Hand ``start`` to HiGHS (``setSolution``) and collect its log, where HiGHS says
    whether it found the start feasible and whether it used it."""
    import highspy

    log: list[str] = []
    # the log is needed, the console output only when asked for
    h.setOptionValue("output_flag", True)
    h.setOptionValue("log_to_console", bool(verbose))
    h.cbLogging.subscribe(lambda event: log.append(str(event.message)))
    status = h.setSolution(int(data.n_cols), np.arange(data.n_cols, dtype=np.int32),
                           np.ascontiguousarray(start, dtype=float))
    if status == highspy.HighsStatus.kError:
        log.append("setSolution returned kError")
    return log


class _MipWatch:
    """What HiGHS reports of a MIP while it runs: the last improving solution (in the
    original space and sense, offset included) and the last dual bound.

    A solve abandoned at its deadline (:func:`_run`) cannot be asked for its state any
    more (the ``Highs`` object is still running in its thread), so its incumbent and
    bound are taken from these reports: both are HiGHS's own, valid when reported (an
    incumbent is feasible; a dual bound only tightens), so the gap they give is a
    certified, if slightly stale, one. HiGHS reports the dual bound through its MIP log
    callback, which runs only with ``output_flag``; the log goes to the console only
    when ``verbose``.
    """

    def __init__(self, h, verbose: bool) -> None:
        self._x: np.ndarray | None = None
        self._bound: float | None = None
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", bool(verbose))
        h.cbMipImprovingSolution.subscribe(self._improving)
        h.cbMipLogging.subscribe(self._logging)

    def _improving(self, event) -> None:
        out = event.data_out
        self._x = np.array(out.mip_solution, dtype=float)  # replaced whole: never torn
        self._bound = float(out.mip_dual_bound)

    def _logging(self, event) -> None:
        self._bound = float(event.data_out.mip_dual_bound)

    def seen(self) -> tuple[np.ndarray | None, float | None]:
        """The last incumbent and dual bound reported (``None`` where none was)."""
        return self._x, self._bound


def start_report(log: list[str]) -> dict[str, Any]:
    """What HiGHS's log says of a MIP start: ``checked`` (its own feasibility check of the
    start as given: ``"feasible"``, ``"infeasible"`` or ``None`` when not reached),
    ``used`` (it became an incumbent, possibly after HiGHS repaired it), ``repaired``."""
    checked = None
    log = list(log)  # an abandoned solve may still be appending
    for line in log:
        if "Assessing feasibility of MIP solution" in line:
            checked = "feasible" if line.rstrip().endswith(": feasible") else "infeasible"
    used = any("MIP start solution is feasible" in line for line in log)
    repaired = any("Attempting to find feasible solution" in line for line in log)
    return {"checked": checked, "used": used, "repaired": repaired}


def solve(data: ProgramData, *, solver: str | None = None, time_limit=None, mip_gap=None,
          threads=None, seed=0, verbose=False, options=None,
          start: np.ndarray | None = None) -> Result:
    """Solve ``data`` with highspy (``solver`` may only be ``None`` or ``"highs"``).

    ``start`` (a full column vector, MILPs only) is handed to HiGHS as a MIP start;
    ``extra["start_report"]`` says what HiGHS made of it (:func:`start_report`).
    """
    name = "highs"
    if solver is not None and solver.lower() != name:
        return missing(BACKEND, solver, "the highs backend runs HiGHS only; use the pyomo or "
                       "cvxpy backend for other solvers")
    try:
        import highspy
    except ImportError as exc:  # pragma: no cover
        return missing(BACKEND, name, f"highspy is not installed: {exc}")
    t0 = time.perf_counter()
    try:
        h = _new_highs(verbose, time_limit, mip_gap, threads, seed, options or {})
    except ValueError as exc:
        return make_result(data, Status.ERROR, backend=BACKEND, solver=name, message=str(exc))
    if _pass_model(h, data) == highspy.HighsStatus.kError:
        return make_result(data, Status.ERROR, backend=BACKEND, solver=name,
                           message="HiGHS rejected the model (passModel returned kError)")
    log = _set_start(h, data, start, verbose) if start is not None and data.is_mip else None
    watch = _MipWatch(h, verbose) if data.is_mip and _long(data) else None
    build = time.perf_counter() - t0

    reset_highs_threads(threads)
    t0 = time.perf_counter()
    if not _run(h, time_limit, _long(data)):
        waited = time.perf_counter() - t0
        x, bound = watch.seen() if watch is not None else (None, None)
        kept = ("its incumbent and dual bound are the last HiGHS reported before the "
                "deadline" if x is not None or bound is not None else
                "HiGHS had reported no incumbent or bound by then")
        res = make_result(data, Status.TIME_LIMIT, backend=BACKEND, solver=name, x=x,
                          bound=bound, build_seconds=build, solve_seconds=waited,
                          message=f"HiGHS did not return within {waited:.3g} s of its "
                                  f"{time_limit:g} s limit (presolve, the MIP set-up and "
                                  "some node work read the clock only between steps): the "
                                  f"solve was abandoned ({kept}) and stops by itself in "
                                  "the background")
        if log is not None:
            res = res.replace(extra={"start_report": start_report(log)})
        return res
    status = h.getModelStatus().name
    message = ""
    if status == "kUnboundedOrInfeasible":
        left = None if time_limit is None else max(0.0, time_limit -
                                                   (time.perf_counter() - t0))
        status, message = _feasibility_check(data, verbose, left, threads, seed, options)
    solve_seconds = time.perf_counter() - t0

    info, sol = h.getInfo(), h.getSolution()
    if status == "kOptimal" and start is not None and data.is_mip \
            and not (_gap_closed(info, mip_gap) and _solution_matches(data, sol, info)):
        # HiGHS has been seen to report the optimum of a program given a MIP start while
        # handing back the start as its solution (a 6-column program of the Salus model,
        # highspy 1.16): not the proved point, so the program is solved again without it
        left = None if time_limit is None else max(0.0, time_limit - solve_seconds)
        again = solve(data, solver=solver, time_limit=left, mip_gap=mip_gap,
                      threads=threads, seed=seed, verbose=verbose, options=options)
        note = (f"HiGHS reported the optimum {info.objective_function_value:g} (dual bound "
                f"{info.mip_dual_bound:g}) with a solution that does not attain it; solved "
                "again without the MIP start")
        return again.replace(build_seconds=again.build_seconds + build,
                             solve_seconds=again.solve_seconds + solve_seconds,
                             message=(again.message + "; " if again.message else "") + note,
                             extra={**again.extra, "start_report": start_report(log or []),
                                    "start_discarded": note})
    has_x = info.primal_solution_status == highspy.kSolutionStatusFeasible
    x = np.asarray(sol.col_value, dtype=float) if has_x else None
    bound = float(info.mip_dual_bound) if data.is_mip else None
    common: dict[str, Any] = dict(backend=BACKEND, solver=name, build_seconds=build,
                                  solve_seconds=solve_seconds)
    res = _outcome(data, status, message, x, bound, sol, common)
    if log is not None:
        res = res.replace(extra={**res.extra, "start_report": start_report(log)})
    return res


def _gap_closed(info, mip_gap: float | None) -> bool:
    """Whether HiGHS's incumbent and dual bound are within its gap tolerances (the relative
    ``mip_gap``, default HiGHS's 1e-4, or its absolute 1e-6)."""
    obj, bound = float(info.objective_function_value), float(info.mip_dual_bound)
    if not (math.isfinite(obj) and math.isfinite(bound)):
        return False
    diff = abs(obj - bound)
    rel = 1e-4 if mip_gap is None else float(mip_gap)
    return diff <= max(1e-6, rel * max(abs(obj), abs(bound))) * (1 + 1e-9)


def _solution_matches(data: ProgramData, sol, info) -> bool:
    """Whether the solution HiGHS hands back attains the objective value it reports."""
    x = np.asarray(sol.col_value, dtype=float)
    if x.shape != data.c.shape:
        return False
    obj = float(info.objective_function_value)
    val = float(data.c @ x) + float(data.offset)
    return abs(val - obj) <= 1e-6 * max(1.0, abs(obj))


def _outcome(data: ProgramData, status: str, message: str, x, bound, sol,
             common: dict[str, Any]) -> Result:
    outcome = STATUS.get(status, Status.ERROR)
    if outcome is Status.OPTIMAL:
        if x is None and data.n_cols == 0:
            x = np.zeros(0)
        duals: dict[str, Any] = {}
        if not data.is_mip and sol.dual_valid:
            duals = dict(row_duals=np.asarray(sol.row_dual, dtype=float),
                         col_duals=np.asarray(sol.col_dual, dtype=float))
        return make_result(data, Status.OPTIMAL, x=x, bound=bound, **duals, **common)
    if outcome in (Status.INFEASIBLE, Status.UNBOUNDED):
        return make_result(data, outcome, message=message, **common)
    if outcome is Status.TIME_LIMIT:
        return make_result(data, Status.TIME_LIMIT, x=x, bound=bound,
                           message=f"HiGHS stopped: {status}", **common)
    return make_result(data, Status.ERROR, message=message or f"HiGHS model status {status}",
                       **common)


#: an LP with fewer non-zeros solves in well under a second: run it directly (the
#: thread :func:`_run` starts otherwise costs about a millisecond, which simulations
#: solving thousands of small LPs would feel)
SMALL_LP_NNZ = 20_000


def _long(data: ProgramData) -> bool:
    """Whether a solve may last long enough to be interrupted: a MIP, or a large LP."""
    return data.is_mip or data.A.nnz >= SMALL_LP_NNZ


def _run(h, time_limit: float | None, interruptible: bool = True) -> bool:
    """``h.run()``, returning by its deadline and stopped by Ctrl-C within a second.

    A small LP (``interruptible`` false) runs directly: it ends in well under a second.
    Otherwise HiGHS runs in a thread while this one waits in short steps, so that

    * a time limit is honoured even where HiGHS reads the clock only between steps
      (presolve, the MIP set-up): past ``time_limit * 1.02 + DEADLINE_GRACE`` the solve
      is abandoned (:func:`~optsched.solvers.common.abandon_solve`: it finishes in the
      background, and the process waits for it at exit) and ``False`` is returned;
    * a :class:`KeyboardInterrupt` (raised only in the main thread, between Python
      instructions) arrives at once: HiGHS is told to stop (its user-interrupt
      callback) and the interrupt is re-raised once it has, or after half a second
      (presolve does not look at the flag; the command line then ends the process
      without waiting, :func:`unstopped`).
    """
    if not interruptible:
        h.run()
        return True
    if hasattr(h, "HandleUserInterrupt"):
        h.HandleUserInterrupt = True
    thread = threading.Thread(target=h.run, name=THREAD_NAME, daemon=True)
    deadline = (None if time_limit is None
                else time.perf_counter() + time_limit * 1.02 + DEADLINE_GRACE)
    try:
        # started inside the try: an interrupt arriving as it starts still stops it
        thread.start()
        while thread.is_alive():
            step = 0.1 if deadline is None else min(0.1, deadline - time.perf_counter())
            thread.join(max(step, 0.0))
            if deadline is not None and thread.is_alive() and time.perf_counter() >= deadline:
                abandon_solve(thread, h)
                return False
    except KeyboardInterrupt:
        if hasattr(h, "cancelSolve"):
            h.cancelSolve()
        if thread.ident is not None:
            thread.join(0.5)
        _INTERRUPTED.append(thread)
        if thread.is_alive():
            _UNSTOPPED.append(thread)
        raise
    return True


#: the name of the threads :func:`_run` runs HiGHS in
THREAD_NAME = "highs-solve"


def running() -> bool:
    """Whether a HiGHS solve of this process is still running in a thread of its own,
    whatever stopped the caller (an interrupt may land outside :func:`_run`'s wait,
    between two solves of one method, while a solve it does not know of runs on)."""
    return any(t.name == THREAD_NAME and t.is_alive() for t in threading.enumerate())


#: solves an interrupt could not stop (their threads still run): the command line
#: then ends the process without the interpreter's teardown, which would wait for them
_UNSTOPPED: list[Any] = []


def unstopped() -> bool:
    """Whether an interrupted HiGHS solve is still running in its thread."""
    return any(t.is_alive() for t in _UNSTOPPED)


#: every solve an interrupt stopped, finished or not: HiGHS's worker threads may outlive
#: a cancelled run, and tearing the interpreter down over them can abort the process
#: (``terminate called without an active exception``, exit -6 instead of 130)
_INTERRUPTED: list[Any] = []


def interrupted() -> bool:
    """Whether a HiGHS solve of this process was stopped by an interrupt."""
    return bool(_INTERRUPTED)


def _feasibility_check(data: ProgramData, verbose, time_limit, threads, seed,
                       options) -> tuple[str, str]:
    """Tell infeasible from unbounded: solve with a zero objective (never unbounded)."""
    h = _new_highs(verbose, time_limit, None, threads, seed, options or {})
    _pass_model(h, replace(data, c=np.zeros_like(data.c), offset=0.0))
    _run(h, time_limit, _long(data))
    status = h.getModelStatus().name
    note = "HiGHS reported infeasible-or-unbounded; a zero-objective re-solve "
    if status == "kOptimal":
        return "kUnbounded", note + "found a feasible point, so the program is unbounded"
    if status == "kInfeasible":
        return "kInfeasible", note + "proved infeasibility"
    return "kUnboundedOrInfeasible", note + f"ended with {status}: infeasible or unbounded"


def write(data: ProgramData, path: Path) -> None:
    """Write ``data`` to ``path`` (format by suffix: .mps or .lp) with ``Highs.writeModel``."""
    import highspy

    quiet_highs_banner()
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(to_highs_lp(data, names=True))
    if h.writeModel(str(path)) != highspy.HighsStatus.kOk:
        raise OSError(f"HiGHS could not write {path}")
