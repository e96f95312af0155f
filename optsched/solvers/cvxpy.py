"""cvxpy backend: one ``Variable`` (integer on the integer columns, bounds from the
program) and at most three vectorised sparse constraints: ``A_eq x == b``,
``A_le x <= u`` and ``A_ge x >= l`` (a ranged row appears in the last two).

Options go to the solver as keywords; for HIGHS they are the HiGHS option names
``time_limit``, ``mip_rel_gap``, ``threads``, ``random_seed``; other solvers get only a
time limit where its keyword is known (CLARABEL, SCIPY) and ``message`` names the options
that were not forwarded. ``build_seconds`` is the time to state the problem plus cvxpy's
``compilation_time``; ``solve_seconds`` is ``solver_stats.solve_time`` when reported.
For a MILP solved by HIGHS the bound is HiGHS's ``mip_dual_bound`` (mapped back to the
program's sense and offset); other cvxpy solvers report no bound.

cvxpy's ``dual_value`` is the non-negative multiplier of the constraint as written (for
``==`` the multiplier of ``A x - b``), for the problem cvxpy minimises. With ``s = +1`` for
``max`` and ``-1`` for ``min``, the package convention is ``s * dual`` for ``<=`` and ``==``
rows and ``-s * dual`` for ``>=`` rows.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.solvers.common import Capabilities, make_result, missing, reset_highs_threads
from optsched.solvers.common import installed as _installed
from optsched.solvers.program import ProgramData

NAME = BACKEND = "cvxpy"
PACKAGE = "cvxpy"
#: No MIP start: cvxpy warm-starts HiGHS only from its own previous solve of the same
#: problem, never from values the caller gives.
CAPABILITIES = Capabilities(mip=True, duals=True, mip_bound=True, solvers=True, write=False,
                            mip_start=False)
#: cvxpy problem status -> Status; ``infeasible_or_unbounded`` is decided by a
#: zero-objective re-solve (None here), anything else not listed is an error.
STATUS: dict[str, Status | None] = {
    "optimal": Status.OPTIMAL, "optimal_inaccurate": Status.FEASIBLE,
    "infeasible": Status.INFEASIBLE, "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED, "unbounded_inaccurate": Status.UNBOUNDED,
    "user_limit": Status.TIME_LIMIT, "infeasible_or_unbounded": None,
}
DEFAULT_SOLVER = "HIGHS"


def installed() -> bool:
    """cvxpy can be imported (found without importing it)."""
    return _installed(PACKAGE)


def available() -> bool:
    """The backend can run here: cvxpy and its HiGHS interface are installed."""
    if not installed():
        return False
    import cvxpy as cp

    return DEFAULT_SOLVER in cp.installed_solvers()


def to_cvxpy(data: ProgramData):
    """``(problem, x, constraints)`` where ``constraints`` maps ``"eq"``/``"le"``/``"ge"``
    to ``(cvxpy constraint, row indices)``."""
    import cvxpy as cp

    n = data.n_cols
    mask = data.integer
    integer = bool(mask.all()) or (np.flatnonzero(mask),)  # np.unravel_index form
    x = cp.Variable(n, name="x", integer=integer if mask.any() else False,
                    bounds=[data.col_lb.astype(float), data.col_ub.astype(float)])
    A, lo, hi = data.A.tocsr(), data.row_lb, data.row_ub
    eq = lo == hi
    groups = {"eq": (np.flatnonzero(eq), lambda e, i: e == hi[i]),
              "le": (np.flatnonzero(~eq & np.isfinite(hi)), lambda e, i: e <= hi[i]),
              "ge": (np.flatnonzero(~eq & np.isfinite(lo)), lambda e, i: e >= lo[i])}
    cons = {k: (make(A[rows] @ x, rows), rows) for k, (rows, make) in groups.items() if rows.size}
    sense = cp.Maximize if data.sense == "max" else cp.Minimize
    problem = cp.Problem(sense(data.c @ x + data.offset), [c for c, _ in cons.values()])
    return problem, x, cons


def _solver_kwargs(name, time_limit, mip_gap, threads, seed, extra) -> tuple[dict, list]:
    """Keywords for ``problem.solve`` and the options that could not be forwarded."""
    kw: dict[str, Any] = {}
    skipped: list[str] = []
    if name == "HIGHS":
        kw["random_seed"] = seed
        for key, value in (("time_limit", time_limit), ("mip_rel_gap", mip_gap),
                           ("threads", threads)):
            if value is not None:
                kw[key] = value
        return {**kw, **extra}, skipped
    if time_limit is not None:
        if name == "CLARABEL":
            kw["time_limit"] = time_limit
        elif name == "SCIPY":
            kw["scipy_options"] = {"time_limit": time_limit}
        else:
            skipped.append("time_limit")
    skipped += [k for k, v in (("mip_gap", mip_gap), ("threads", threads)) if v is not None]
    return {**kw, **extra}, skipped


def solve(data: ProgramData, *, solver: str | None = None, time_limit=None, mip_gap=None,
          threads=None, seed=0, verbose=False, options=None,
          start: np.ndarray | None = None) -> Result:
    """Solve ``data`` through cvxpy with ``solver`` (default ``HIGHS``); ``start`` is not
    accepted (``CAPABILITIES.mip_start`` is false)."""
    if start is not None:
        raise TypeError("the cvxpy backend takes no MIP start (Capabilities.mip_start)")
    try:
        import cvxpy as cp
    except ImportError as exc:  # pragma: no cover
        return missing(BACKEND, solver, f"cvxpy is not installed: {exc}")
    name = (solver or DEFAULT_SOLVER).upper()
    if name not in cp.installed_solvers():
        return missing(BACKEND, name, f"cvxpy solver {name} is not installed "
                       f"(installed: {', '.join(cp.installed_solvers())})")
    t0 = time.perf_counter()
    problem, x, cons = to_cvxpy(data)
    state = time.perf_counter() - t0
    kwargs, skipped = _solver_kwargs(name, time_limit, mip_gap, threads, seed, options or {})
    if name == "HIGHS":
        reset_highs_threads(threads)
    common: dict[str, Any] = dict(backend=BACKEND, solver=name)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():  # both outcomes are reported on the Result
            warnings.filterwarnings("ignore", message="(?s).*infeasible or unbounded")
            warnings.filterwarnings("ignore", message="(?s).*Solution may be inaccurate")
            problem.solve(solver=name, verbose=verbose, **kwargs)
    except (cp.error.SolverError, ValueError, TypeError) as exc:
        return make_result(data, Status.ERROR, build_seconds=state,
                           solve_seconds=time.perf_counter() - t0,
                           message=f"{type(exc).__name__}: {exc}", **common)
    wall = time.perf_counter() - t0
    compile_s = problem.compilation_time or 0.0
    stats = problem.solver_stats
    solve_s = stats.solve_time if stats.solve_time is not None else wall - compile_s
    common.update(build_seconds=state + compile_s, solve_seconds=solve_s)

    status, message = _status(problem.status)
    if status is None:  # infeasible or unbounded: decide with a zero objective
        status, message = _feasibility_check(problem, name, kwargs)
    if skipped:
        note = f"{', '.join(skipped)} not forwarded to {name}"
        message = f"{message}; {note}" if message else note
    info = stats.extra_stats if name == "HIGHS" else None
    xv = x.value if status.has_solution else None
    if info is not None and status is Status.TIME_LIMIT and info.primal_solution_status != 2:
        xv = None  # HiGHS stopped without an incumbent
    bound = None
    if data.is_mip and info is not None and status.has_solution:
        # cvxpy hands HiGHS "minimise (+/-) c x" without the offset.
        flip = -1.0 if data.sense == "max" else 1.0
        bound = flip * float(info.mip_dual_bound) + data.offset
    row_duals = None
    if status is Status.OPTIMAL and not data.is_mip:
        row_duals = _row_duals(data, cons)
    return make_result(data, status, x=xv, bound=bound, row_duals=row_duals, message=message,
                       **common)


def _status(status: str) -> tuple[Status | None, str]:
    mapped = STATUS.get(status, Status.ERROR)
    plain = ("optimal", "infeasible", "unbounded", "infeasible_or_unbounded")
    return mapped, "" if status in plain else f"cvxpy status {status}"


def _feasibility_check(problem, name, kwargs) -> tuple[Status, str]:
    import cvxpy as cp

    feas = cp.Problem(cp.Minimize(0), problem.constraints)
    kwargs = {k: v for k, v in kwargs.items() if k != "mip_rel_gap"}
    feas.solve(solver=name, **kwargs)
    note = "infeasible-or-unbounded; a zero-objective re-solve "
    if feas.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return Status.UNBOUNDED, note + "found a feasible point, so unbounded"
    if feas.status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return Status.INFEASIBLE, note + "proved infeasibility"
    return Status.ERROR, note + f"ended with {feas.status}"


def _row_duals(data: ProgramData, cons) -> np.ndarray | None:
    s = 1.0 if data.sense == "max" else -1.0
    signs = {"eq": s, "le": s, "ge": -s}
    y = np.zeros(data.n_rows)
    for key, (con, rows) in cons.items():
        if con.dual_value is None:
            return None
        y[rows] += signs[key] * np.asarray(con.dual_value, dtype=float).ravel()
    return y
