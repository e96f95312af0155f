"""Pyomo backend: :func:`to_pyomo` builds a ``ConcreteModel`` researchers can extend, and
:func:`solve` runs any Pyomo solver on it through the legacy ``SolverFactory`` interface
(with ``load_solutions=False``, so infeasible or stopped solves never raise).

The model has ``model.x`` (one variable per column, bounds and Integers/Reals domain),
``model.rows`` (one constraint per row, indexed by row number; rows with no finite bound
are skipped) and ``model.obj`` (including the program's constant offset).

Options: ``time_limit`` is Pyomo's ``timelimit``; for HiGHS solvers (``appsi_highs``,
``highs``) ``mip_gap``/``threads``/``seed`` become the HiGHS options ``mip_rel_gap``,
``threads``, ``random_seed``; for a few other solvers the MIP-gap and thread option names
are known (see ``_GAP_KEYS``); otherwise they are not forwarded (noted in ``message``).

Duals (LPs only) come from a ``dual`` import suffix. With the HiGHS interfaces they are
already d(objective)/d(active bound) in the program's sense; other solvers' suffixes are
taken as the same (Pyomo's convention), unverified. Column duals are ``c - A.T @ y``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

import numpy as np

from optsched.core.result import Result, Status
from optsched.solvers.common import Capabilities, make_result, missing, reset_highs_threads
from optsched.solvers.common import installed as _installed
from optsched.solvers.program import ProgramData

NAME = BACKEND = "pyomo"
PACKAGE = "pyomo"
#: A MIP start reaches the solver only through ``appsi_highs`` (its ``warmstart`` hands the
#: variables' values to ``Highs.setSolution``); the legacy ``highs`` interface has no
#: start, and other solvers' start options are not wired here.
CAPABILITIES = Capabilities(mip=True, duals=True, mip_bound=True, solvers=True, write=False,
                            mip_start=True, mip_start_solvers=("appsi_highs",))
#: Pyomo termination condition -> Status; ``infeasibleOrUnbounded`` is decided by a
#: zero-objective re-solve, anything else not listed is an error.
STATUS: dict[str, Status] = {
    "optimal": Status.OPTIMAL, "globallyOptimal": Status.OPTIMAL,
    "locallyOptimal": Status.OPTIMAL, "infeasible": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    **{k: Status.TIME_LIMIT for k in ("maxTimeLimit", "maxIterations", "maxEvaluations",
                                      "userInterrupt", "resourceInterrupt")},
}
DEFAULT_SOLVERS = ("appsi_highs", "highs")
_HIGHS_SOLVERS = ("appsi_highs", "highs")
_GAP_KEYS = {"glpk": "mipgap", "cbc": "ratioGap", "appsi_cbc": "ratioGap",
             "gurobi": "MIPGap", "gurobi_direct": "MIPGap", "gurobi_persistent": "MIPGap",
             "appsi_gurobi": "MIPGap", "cplex": "mipgap", "cplex_direct": "mipgap",
             "appsi_cplex": "mipgap", "scip": "limits/gap"}
_THREAD_KEYS = {"cbc": "threads", "appsi_cbc": "threads", "gurobi": "Threads",
                "gurobi_direct": "Threads", "gurobi_persistent": "Threads",
                "appsi_gurobi": "Threads", "cplex": "threads", "cplex_direct": "threads",
                "appsi_cplex": "threads"}


def installed() -> bool:
    """Pyomo can be imported (found without importing it)."""
    return _installed(PACKAGE)


def available() -> bool:
    """The backend can run here: Pyomo and one of its HiGHS interfaces are installed."""
    if not installed():
        return False
    return any(_solver(name) is not None for name in DEFAULT_SOLVERS)


@contextlib.contextmanager
def _quiet(verbose: bool = False):
    """Silence Pyomo's logged warnings (unknown solver, loading a stopped solve)."""
    log = logging.getLogger("pyomo")
    old = log.level
    if not verbose:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(old)


def _solver(name: str):
    """The Pyomo solver object for ``name`` if it is available here, else ``None``."""
    import pyomo.environ as pyo

    with _quiet():
        try:
            opt = pyo.SolverFactory(name)
            return opt if opt is not None and opt.available(exception_flag=False) else None
        except Exception:  # noqa: BLE001 - any failure means "not available"
            return None


def to_pyomo(data: ProgramData):
    """The Pyomo ``ConcreteModel`` of ``data`` (``model.x``, ``model.rows``, ``model.obj``)."""
    import pyomo.environ as pyo
    from pyomo.core.expr.numeric_expr import LinearExpression

    n = data.n_cols
    lb = [None if np.isneginf(v) else float(v) for v in data.col_lb]
    ub = [None if np.isposinf(v) else float(v) for v in data.col_ub]
    integer = data.integer.tolist()
    m = pyo.ConcreteModel(name=data.name)
    m.x = pyo.Var(range(n), bounds=lambda _, j: (lb[j], ub[j]),
                  domain=lambda _, j: pyo.Integers if integer[j] else pyo.Reals)
    x = [m.x[j] for j in range(n)]
    A = data.A.tocsr()
    ptr, idx, val = A.indptr, A.indices.tolist(), A.data.tolist()
    rlb, rub = data.row_lb.tolist(), data.row_ub.tolist()

    def row(_, i):
        lo, hi = rlb[i], rub[i]
        if lo == -np.inf and hi == np.inf:
            return pyo.Constraint.Skip
        s, e = ptr[i], ptr[i + 1]
        expr = LinearExpression(constant=0.0, linear_coefs=val[s:e],
                                linear_vars=[x[j] for j in idx[s:e]])
        if lo == hi:
            return expr == lo
        return (None if lo == -np.inf else lo, expr, None if hi == np.inf else hi)

    m.rows = pyo.Constraint(range(data.n_rows), rule=row)
    nz = np.flatnonzero(data.c)
    m.obj = pyo.Objective(
        expr=LinearExpression(constant=float(data.offset), linear_coefs=data.c[nz].tolist(),
                              linear_vars=[x[j] for j in nz]),
        sense=pyo.maximize if data.sense == "max" else pyo.minimize)
    return m


def _solver_options(name, mip_gap, threads, seed, extra) -> tuple[dict, list[str]]:
    opts, skipped = {}, []
    if name in _HIGHS_SOLVERS:
        opts["random_seed"] = seed
        if mip_gap is not None:
            opts["mip_rel_gap"] = mip_gap
        if threads is not None:
            opts["threads"] = threads
    else:
        for value, keys, label in ((mip_gap, _GAP_KEYS, "mip_gap"),
                                   (threads, _THREAD_KEYS, "threads")):
            if value is None:
                continue
            if name in keys:
                opts[keys[name]] = value
            else:
                skipped.append(label)
    opts.update(extra)
    return opts, skipped


def solve(data: ProgramData, *, solver: str | None = None, time_limit=None, mip_gap=None,
          threads=None, seed=0, verbose=False, options=None,
          start: np.ndarray | None = None) -> Result:
    """Solve ``data`` through Pyomo with ``solver`` (default ``appsi_highs``, else ``highs``).

    ``start`` (a full column vector) becomes the variables' values, handed to the solver
    with ``warmstart=True`` when it is ``appsi_highs``; it is ignored otherwise (the
    solver layer passes it only to ``appsi_highs``)."""
    try:
        import pyomo.environ as pyo
    except ImportError as exc:  # pragma: no cover
        return missing(BACKEND, solver, f"pyomo is not installed: {exc}")
    names = DEFAULT_SOLVERS if solver is None else (solver,)
    name, opt = next(((n, o) for n in names if (o := _solver(n)) is not None), (None, None))
    if opt is None:
        return missing(BACKEND, solver or DEFAULT_SOLVERS[0],
                       f"Pyomo solver(s) {', '.join(names)} not available")

    constrained = np.isfinite(data.row_lb) | np.isfinite(data.row_ub)
    if data.A[constrained].nnz == 0 and not data.c.any():
        return _trivial(data, str(name))
    t0 = time.perf_counter()
    model = to_pyomo(data)
    if not data.is_mip:  # never on a MIP: the HiGHS interfaces raise for MIP duals
        model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    build = time.perf_counter() - t0
    opts, skipped = _solver_options(name, mip_gap, threads, seed, options or {})
    kwargs: dict[str, Any] = {"load_solutions": False, "tee": verbose}
    if start is not None and name == "appsi_highs":
        for j, value in enumerate(np.asarray(start, dtype=float).tolist()):
            model.x[j].set_value(value, skip_validation=True)
        kwargs["warmstart"] = True
    if time_limit is not None:
        kwargs["timelimit"] = time_limit
    if opts:
        kwargs["options"] = opts
    if name in _HIGHS_SOLVERS:
        reset_highs_threads(threads)
    common: dict[str, Any] = dict(backend=BACKEND, solver=name, build_seconds=build)
    t0 = time.perf_counter()
    try:
        with _quiet(verbose):
            results = opt.solve(model, **kwargs)
            status, message = _status(results, model, opt, kwargs)
            loaded = status.has_solution and _load(model, results)
    except Exception as exc:  # noqa: BLE001 - a solver failure is reported, not raised
        return make_result(data, Status.ERROR, solve_seconds=time.perf_counter() - t0,
                           message=f"{type(exc).__name__}: {exc}", **common)
    solve_seconds = time.perf_counter() - t0
    if skipped:
        note = f"{', '.join(skipped)} not forwarded to {name}"
        message = f"{message}; {note}" if message else note
    x = _values(data, model) if loaded else None
    row_duals = _duals(data, model) if loaded and not data.is_mip else None
    bound = _bound(data, results) if data.is_mip else None
    return make_result(data, status, x=x, bound=bound, row_duals=row_duals,
                       solve_seconds=solve_seconds, message=message, **common)


def _trivial(data: ProgramData, name: str) -> Result:
    """No variable appears anywhere: Pyomo would hand the solver an empty model."""
    lb = np.where(data.integer, np.ceil(data.col_lb), data.col_lb)
    ub = np.where(data.integer, np.floor(data.col_ub), data.col_ub)
    feasible = bool(np.all(data.row_lb <= 0) and np.all(data.row_ub >= 0) and np.all(lb <= ub))
    x = np.clip(0.0, lb, ub)
    return make_result(data, Status.OPTIMAL if feasible else Status.INFEASIBLE, x=x,
                       bound=data.offset if feasible else None,
                       row_duals=np.zeros(data.n_rows), backend=BACKEND, solver=name,
                       message="no variable appears in the objective or a row: solved "
                               "without calling the solver")


def _status(results, model, opt, kwargs) -> tuple[Status, str]:
    from pyomo.opt import TerminationCondition as TC

    tc = results.solver.termination_condition
    if tc == TC.infeasibleOrUnbounded:
        return _feasibility_check(model, opt, kwargs)
    outcome = STATUS.get(tc.name if hasattr(tc, "name") else str(tc))
    if outcome is None:
        return Status.ERROR, (f"termination condition {tc}: "
                              f"{results.solver.termination_message}")
    return outcome, f"stopped: {tc}" if outcome is Status.TIME_LIMIT else ""


def _feasibility_check(model, opt, kwargs) -> tuple[Status, str]:
    """Tell infeasible from unbounded by solving with the objective fixed at zero."""
    import pyomo.environ as pyo
    from pyomo.opt import TerminationCondition as TC

    model.obj.deactivate()
    model._zero_obj = pyo.Objective(expr=0.0)
    try:
        tc = opt.solve(model, **kwargs).solver.termination_condition
    finally:
        model.del_component(model._zero_obj)
        model.obj.activate()
    note = "infeasible-or-unbounded; a zero-objective re-solve "
    if tc in (TC.optimal, TC.globallyOptimal, TC.locallyOptimal, TC.feasible):
        return Status.UNBOUNDED, note + "found a feasible point, so unbounded"
    if tc == TC.infeasible:
        return Status.INFEASIBLE, note + "proved infeasibility"
    return Status.ERROR, note + f"ended with {tc}"


def _load(model, results) -> bool:
    if len(results.solution) == 0:
        return False
    try:
        model.solutions.load_from(results)
    except ValueError:
        return False
    return True


def _values(data: ProgramData, model) -> np.ndarray:
    x = np.array([model.x[j].value for j in range(data.n_cols)], dtype=float)
    # Columns in no row and with zero cost may be left unset: any value in bounds is optimal.
    unset = np.isnan(x)
    x[unset] = np.clip(0.0, data.col_lb[unset], data.col_ub[unset])
    return x


def _duals(data: ProgramData, model) -> np.ndarray | None:
    if not hasattr(model, "dual"):
        return None
    y = np.zeros(data.n_rows)
    for i, con in model.rows.items():
        y[i] = model.dual.get(con, 0.0) or 0.0
    return y


def _bound(data: ProgramData, results) -> float | None:
    prob = results.problem
    value = prob.upper_bound if data.sense == "max" else prob.lower_bound
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) else None
