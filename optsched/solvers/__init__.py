"""Solve a :class:`~optsched.solvers.program.ProgramData` with one of three backends.

The solver layer knows nothing about scheduling models: a model states its LP/MILP once as
a :class:`LinearProgram`, freezes it, and :func:`solve_program` hands the arrays to

* ``"highs"``: highspy directly (a vectorised ``HighsLp``; the fastest hand-off);
* ``"pyomo"``: a Pyomo ``ConcreteModel`` (:func:`optsched.solvers.pyomo.to_pyomo`) solved
  by any Pyomo solver (default ``appsi_highs``, then ``highs``);
* ``"cvxpy"``: a cvxpy ``Problem`` solved by any installed cvxpy solver (default HIGHS).

Every backend returns the same :class:`~optsched.core.result.Result`:

* ``objective`` is ``c @ x + offset`` of the returned ``x`` (the incumbent), in the
  program's own sense; ``bound`` is the optimum for a solved LP and the solver's dual bound
  for a MILP (``None`` when the solver does not report one); ``gap`` their relative gap.
* ``status``: a MILP solved to the requested ``mip_gap`` is ``optimal``; any work limit
  (time, iterations, nodes, solutions, interrupt) gives ``time_limit`` with the incumbent
  (or ``None``) and the bound. When the solver only proves "infeasible or unbounded" (HiGHS
  ``kUnboundedOrInfeasible``), the backend re-solves the *feasibility* problem (zero
  objective, same constraints): feasible means unbounded, infeasible means infeasible.
  A missing package or solver is ``solver_missing`` (never raised).
* ``start`` (optional, MILPs): a primal vector, by variable block, that the model built
  from one of its heuristics. Backends that can (``Capabilities.mip_start``: highs, and
  pyomo with ``appsi_highs``) hand it to the solver, which searches from it, so a stopped
  solve returns an incumbent at least as good. Whatever the backend, a start that
  satisfies every row, bound and integrality (to :data:`START_TOLERANCE`) is the
  incumbent of a ``time_limit`` result whenever the solver has none or a worse one:
  ``extra["incumbent"]`` says ``"solver"`` or ``"start"``, and ``extra["mip_start"]``
  reports the start (objective, violation, whether it was passed, what the solver said
  of it).
* ``build_seconds`` is the hand-off (building the ``HighsLp``, the Pyomo model, or the
  cvxpy problem including its compilation); ``solve_seconds`` the solver run.

Dual sign convention (all backends, LPs only; ``duals`` is ``None`` for a MILP)
-------------------------------------------------------------------------------
The dual of a row is **d(optimal objective) / d(its active bound)**, in the program's own
sense. So for a ``max`` problem a binding ``<=`` resource row has a dual ``>= 0`` and a
binding ``>=`` row a dual ``<= 0``; for a ``min`` problem a binding ``>=`` row has a dual
``>= 0`` and a binding ``<=`` row a dual ``<= 0``; an equality row's dual has either sign.
``extra["col_duals"]`` (reduced costs, split per variable block) follows the same rule for
the active variable bound, and equals ``c - A.T @ row_duals``.

Raw signs found (and normalised): HiGHS ``row_dual``/``col_dual`` already follow this
convention for both senses; Pyomo's ``dual`` suffix with ``appsi_highs``/``highs`` too;
cvxpy's ``dual_value`` is the non-negative Lagrange multiplier of the constraint as
written, so the backend multiplies by ``+1`` (max) or ``-1`` (min) for ``<=`` and ``==``
rows and by ``-1`` (max) or ``+1`` (min) for ``>=`` rows. Pyomo and cvxpy column duals are
computed as ``c - A.T @ y`` from the normalised row duals.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np

from optsched.core.result import Result, Status, relative_gap
from optsched.errors import InvalidOption, UnknownName
from optsched.solvers.common import Backend, Capabilities, quiet_highs_banner
from optsched.solvers.program import LinearProgram, ProgramData, RowBlock, VarBlock

__all__ = ["BACKENDS", "DEFAULT_TIME_LIMIT", "START_TOLERANCE", "Backend", "Capabilities",
           "backend_module", "backends", "register_backend", "unregister_backend",
           "LinearProgram", "ProgramData", "RowBlock", "VarBlock",
           "available_backends", "solve_program", "start_fields", "write_program"]

BACKENDS = ("highs", "pyomo", "cvxpy")
#: Seconds a solve may take unless the caller says otherwise (``None`` or ``inf``: no
#: limit). Long MILPs stop there with their incumbent, bound and gap (status
#: ``time_limit``) instead of running unannounced for minutes.
DEFAULT_TIME_LIMIT = 60.0
#: Largest violation of a bound, row or integrality for which a start counts as feasible
#: (HiGHS's default primal feasibility and integrality tolerances).
START_TOLERANCE = 1e-6


#: Backends registered by :func:`register_backend`, by name.
_REGISTERED: dict[str, Backend] = {}
_BACKEND_MEMBERS = ("NAME", "PACKAGE", "CAPABILITIES", "STATUS", "installed", "available",
                    "solve")


def backends() -> tuple[str, ...]:
    """Every backend name: the shipped :data:`BACKENDS`, then the registered ones."""
    return (*BACKENDS, *sorted(_REGISTERED))


def register_backend(backend: Any, *, replace: bool = False) -> Backend:
    """Add a solver backend of your own, named ``backend.NAME``.

    ``backend`` is a module or an object with the members of :class:`Backend`:
    ``NAME``, ``PACKAGE``, ``CAPABILITIES`` (:class:`Capabilities`), ``STATUS``,
    ``installed()``, ``available()`` and ``solve(data, *, solver, time_limit, mip_gap,
    threads, seed, verbose, options, start=None) -> Result``, which solves the frozen
    :class:`ProgramData` (``c``, ``A``, row and column bounds, ``integer``, ``sense``)
    and reports as every backend does (:func:`optsched.solvers.common.make_result`).
    :func:`solve_program` then hands it programs as it does the shipped ones, with the
    same time-limit accounting and MIP-start handling, so every solver-backed method
    takes ``backend=NAME``.

    Raises :class:`~optsched.errors.InvalidOption` when a member is missing or not
    callable, or the name is a shipped backend's (or registered, without ``replace``).
    """
    for member in _BACKEND_MEMBERS:
        if not hasattr(backend, member):
            raise InvalidOption("backend", backend, f"a solver backend needs {member!r} "
                                f"(members: {', '.join(_BACKEND_MEMBERS)})")
    for member in ("installed", "available", "solve"):
        if not callable(getattr(backend, member)):
            raise InvalidOption(f"backend.{member}", getattr(backend, member),
                                "must be callable")
    name = backend.NAME
    if not isinstance(name, str) or not name or ":" in name or name in BACKENDS:
        raise InvalidOption("backend.NAME", name, "must be a new name, not one of "
                            f"{', '.join(BACKENDS)}")
    if not isinstance(backend.CAPABILITIES, Capabilities):
        raise InvalidOption("backend.CAPABILITIES", backend.CAPABILITIES,
                            "must be optsched.solvers.Capabilities")
    if name in _REGISTERED and not replace:
        raise InvalidOption("backend.NAME", name, "already registered; pass replace=True")
    _REGISTERED[name] = cast(Backend, backend)
    return _REGISTERED[name]


def unregister_backend(name: str) -> Backend:
    """Remove the backend :func:`register_backend` added as ``name``; return it."""
    if name not in _REGISTERED:
        raise UnknownName("backend", name, "not a registered backend (shipped backends "
                          "cannot be removed)")
    return _REGISTERED.pop(name)


def backend_module(name: str) -> Backend:
    """The module of backend ``name`` (imported on first use; it imports its solver
    package only when it solves), or the backend registered as ``name``."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in BACKENDS:
        raise UnknownName("backend", name, f"known backends: {', '.join(backends())}")
    return cast(Backend, importlib.import_module(f"optsched.solvers.{name}"))


def available_backends() -> dict[str, bool]:
    """Which backends can run here (package importable and its default solver present)."""
    return {name: backend_module(name).available() for name in backends()}


def solve_program(data: ProgramData, backend: str = "highs", *, solver: str | None = None,
                  time_limit: float | None = DEFAULT_TIME_LIMIT, mip_gap: float | None = None,
                  threads: int | None = None, seed: int = 0, verbose: bool = False,
                  options: dict[str, Any] | None = None, spent: float = 0.0,
                  start: Mapping[str, Any] | np.ndarray | None = None) -> Result:
    """Solve ``data`` with ``backend`` and return a :class:`~optsched.core.result.Result`.

    Parameters
    ----------
    backend : one of :data:`BACKENDS`, or a backend :func:`register_backend` added.
    solver : the concrete solver: a Pyomo ``SolverFactory`` name or a cvxpy solver name
        (the ``"highs"`` backend accepts only ``None``/``"highs"``); ``None`` picks the
        backend's HiGHS interface. A solver that is not installed gives ``solver_missing``.
    time_limit : seconds (``>= 0``) for the whole method, default
        :data:`DEFAULT_TIME_LIMIT`; ``None`` or ``inf`` for no limit. ``spent`` seconds
        (the caller's model build) count against it: the solver gets what is left, and
        when nothing is left no solve starts (status ``time_limit``).
        ``Result.extra["time_limit"]`` records the limit that applied.
    mip_gap : relative MILP gap in ``[0, 1)``; ``None`` keeps the solver default
        (HiGHS: ``1e-4``).
    threads : ``>= 1``; ``None`` keeps the solver default.
    seed : the solver's random seed (``>= 0``).
    options : extra solver options passed verbatim (HiGHS option names for ``"highs"`` and
        cvxpy's HIGHS, the solver's own option names for Pyomo).
    start : a primal start, ``{block name: values}`` for every block or one vector of
        ``n_cols`` values (module docstring). Handed to the solver when the backend can;
        a feasible start is the incumbent of a stopped solve that has none or a worse one.
    """
    module = backend_module(backend)
    x0 = None if start is None else data.start_vector(start)
    opts = _check_options(time_limit, mip_gap, threads, seed)
    opts["verbose"] = bool(verbose)
    opts["options"] = dict(options or {})
    limit = opts["time_limit"]
    if limit is not None:
        left = limit - max(0.0, float(spent))
        if left <= 0:
            res = Result(status=Status.TIME_LIMIT, backend=backend, solver=solver,
                         build_seconds=float(spent), extra={"time_limit": limit},
                         message=f"building the model took {spent:.3g} s of the {limit:g} s "
                                 "time limit; no solve was started")
            return res if x0 is None else _keep_start(data, res, x0, False,
                                                      "no solve was started")
        opts["time_limit"] = left
    quiet_highs_banner()
    passed, why = _start_passed(module, data, solver, x0)
    if passed:
        opts["start"] = x0
    res = module.solve(data, solver=solver, **opts)
    res = res.replace(extra={**res.extra, "time_limit": limit})
    return res if x0 is None else _keep_start(data, res, x0, passed, why)


def start_fields(res: Result) -> dict[str, Any]:
    """The start report and the incumbent's source of a :func:`solve_program` result
    (``extra["mip_start"]``, ``extra["incumbent"]``), for a model's own ``extra``."""
    return {k: res.extra[k] for k in ("mip_start", "incumbent") if k in res.extra}


def _start_passed(module: Backend, data: ProgramData, solver: str | None,
                  x0: np.ndarray | None) -> tuple[bool, str]:
    """Whether the start goes to the solver, and why not."""
    if x0 is None:
        return False, ""
    if not data.is_mip:
        return False, "an LP takes no MIP start"
    caps = module.CAPABILITIES
    if not caps.mip_start:
        return False, f"the {module.NAME} backend cannot hand a MIP start to its solver"
    allowed = caps.mip_start_solvers
    if allowed and (solver or allowed[0]) not in allowed:
        return False, (f"the {module.NAME} backend hands a MIP start only to "
                       f"{', '.join(allowed)}, not to {solver}")
    return True, ""


def _keep_start(data: ProgramData, res: Result, x0: np.ndarray, passed: bool,
                why: str) -> Result:
    """Report the start; make it the incumbent of a stopped solve that has none or a
    worse one (only when it is feasible)."""
    violation = data.max_violation(x0)
    value = data.objective_value(x0)
    feasible = violation <= START_TOLERANCE
    report: dict[str, Any] = {"objective": value, "max_violation": violation,
                              "feasible": feasible, "passed": passed}
    if why:
        report["not_passed"] = why
    solver_said = res.extra.get("start_report")
    if solver_said is not None:
        report.update({f"solver_{k}": v for k, v in solver_said.items()})
    extra = {k: v for k, v in res.extra.items() if k != "start_report"}
    extra["mip_start"] = report
    better = res.objective is None or (value > res.objective if data.sense == "max"
                                       else value < res.objective)
    if res.status is Status.TIME_LIMIT and feasible and better:
        note = ("the incumbent is the start: the solver stopped without one"
                if res.objective is None else
                f"the incumbent is the start: the solver's ({res.objective:.6g}) is worse")
        return res.replace(objective=value, values=data.split_cols(x0),
                           gap=relative_gap(value, res.bound),
                           message=f"{res.message}; {note}" if res.message else note,
                           extra={**extra, "incumbent": "start"})
    if res.objective is not None:
        extra["incumbent"] = "solver"
    return res.replace(extra=extra)


def _check_options(time_limit, mip_gap, threads, seed) -> dict[str, Any]:
    if time_limit is not None:
        if not isinstance(time_limit, (int, float)) or math.isnan(time_limit) or time_limit < 0:
            raise InvalidOption("time_limit", time_limit, "must be a number >= 0 (seconds)")
        time_limit = None if math.isinf(time_limit) else float(time_limit)
    if mip_gap is not None:
        if not isinstance(mip_gap, (int, float)) or not 0 <= mip_gap < 1:
            raise InvalidOption("mip_gap", mip_gap, "must be in [0, 1)")
        mip_gap = float(mip_gap)
    if threads is not None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InvalidOption("threads", threads, "must be an integer >= 1")
        threads = int(threads)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidOption("seed", seed, "must be an integer >= 0")
    return {"time_limit": time_limit, "mip_gap": mip_gap, "threads": threads, "seed": int(seed)}


def write_program(data: ProgramData, path: str | Path) -> Path:
    """Write ``data`` as an MPS (``.mps``) or CPLEX-LP (``.lp``) file via HiGHS.

    Columns and rows carry the program's names, made file-safe (``x[0,1]`` -> ``x(0,1)``).
    """
    path = Path(path)
    if path.suffix.lower() not in (".mps", ".lp"):
        raise InvalidOption("path", str(path), "suffix must be .mps or .lp")
    from optsched.solvers.highs import write

    write(data, path)
    return path
