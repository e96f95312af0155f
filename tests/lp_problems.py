"""Standard LP/MILP test problems and the optimality checks every solve is held to.

Used by the solver layer's tests and by every paper's tests:

* problems with known optima (:data:`PROBLEMS`), a hard MILP for time limits
  (:func:`market_split`), small programs with pinned duals (:data:`DUAL_CASES`) and a
  Hypothesis strategy of random programs feasible by construction (:func:`programs`);
* :func:`oracle`, scipy's optimum of a program;
* :func:`check_solution`: primal feasibility, objective, bound, and for an LP the dual
  certificate (:func:`check_dual_certificate`) and complementary slackness
  (:func:`check_complementarity`);
* :func:`record_programs`: every program a paper's method hands to the solver layer,
  with the backend's answer, so the same checks run on the papers' own LPs.

Dual convention (the package's): a dual is d(optimal objective) / d(bound), in the
program's own sense; row duals ``y``, column (reduced-cost) duals ``z = c - A^T y``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st
from scipy.optimize import Bounds, LinearConstraint, linear_sum_assignment, linprog, milp

from optsched.core.result import Result, Status
from optsched.solvers import BACKENDS, LinearProgram, ProgramData, backend_module

TOL = 1e-6
INF = np.inf


def close(a, b, tol=TOL) -> bool:
    """``|a - b| <= tol * max(1, |b|)``, up to the rounding of that product (a solver
    result exactly at its tolerance, e.g. HiGHS's MIP feasibility tolerance of 1e-6
    buying 1e-6 of objective through a unit dual, must count as close)."""
    return a is not None and b is not None and \
        abs(a - b) <= tol * max(1.0, abs(b)) * (1 + 1e-9)


# --------------------------------------------------------------------------- checks
def flat_values(data: ProgramData, r: Result) -> np.ndarray:
    return np.concatenate([np.ravel(r.values[b.name]) for b in data.var_blocks])


def flat_duals(data: ProgramData, r: Result) -> tuple[np.ndarray, np.ndarray]:
    """Row duals ``y`` and column duals ``z`` of an LP result, as flat arrays."""
    y = (np.concatenate([r.duals[b.name] for b in data.row_blocks]) if data.n_rows
         else np.zeros(0))
    z = np.concatenate([np.ravel(r.extra["col_duals"][b.name]) for b in data.var_blocks])
    return np.asarray(y, dtype=float), np.asarray(z, dtype=float)


def check_solution(data: ProgramData, r: Result, *, gap: float = 1e-4) -> None:
    """Invariants of an optimal result: status, timings, feasibility, objective, bound
    (within HiGHS's default relative MIP gap ``gap``); for an LP also the dual
    certificate and complementary slackness; a MILP carries no duals."""
    assert r.status is Status.OPTIMAL, (r.backend, r.status, r.message)
    assert r.build_seconds >= 0 and r.solve_seconds >= 0
    x = flat_values(data, r)
    # HiGHS's MIP feasibility tolerance (1e-6), plus the rounding of computing A x here:
    # a point HiGHS accepts at exactly its tolerance must pass
    rounding = 16 * np.finfo(float).eps * float((abs(data.A) @ np.abs(x)).max(initial=1.0))
    assert data.max_violation(x) <= 1e-6 + rounding, data.max_violation(x)
    assert close(r.objective, data.objective_value(x))
    assert close(r.bound, r.objective, gap)
    if data.is_mip:
        assert r.duals is None and "col_duals" not in r.extra
    else:
        check_dual_certificate(data, r)
        check_complementarity(data, r)


def check_dual_certificate(data: ProgramData, r: Result, tol: float = 1e-6) -> None:
    """Duals in the package convention: signs match a finite bound, ``z = c - A^T y``,
    and the dual objective equals the primal one (strong duality), so every dual is
    d obj / d bound."""
    y, z = flat_duals(data, r)
    scale = max(1.0, float(np.abs(data.c).max(initial=0.0)))
    assert np.allclose(z, data.c - data.A.T @ y, atol=tol * scale)
    up = 1.0 if data.sense == "max" else -1.0  # sign of a dual whose upper bound is active
    total = data.offset
    for duals, lo, hi in ((y, data.row_lb, data.row_ub), (z, data.col_lb, data.col_ub)):
        at_hi, at_lo = up * duals > tol, up * duals < -tol
        assert np.all(np.isfinite(hi[at_hi])) and np.all(np.isfinite(lo[at_lo]))
        total += duals[at_hi] @ hi[at_hi] + duals[at_lo] @ lo[at_lo]
    assert close(total, r.objective, 1e-5), (total, r.objective)


def check_complementarity(data: ProgramData, r: Result, tol: float = 1e-6) -> None:
    """Complementary slackness: a row or column with a non-zero dual sits at the bound
    its sign names (``y_i (a_i x - b_i) = 0`` for the active side), so no dual prices
    a slack constraint."""
    x = flat_values(data, r)
    y, z = flat_duals(data, r)
    up = 1.0 if data.sense == "max" else -1.0
    ax = data.A @ x
    for what, duals, act, lo, hi in (("row", y, ax, data.row_lb, data.row_ub),
                                     ("column", z, x, data.col_lb, data.col_ub)):
        for side, mask, bound in (("upper", up * duals > tol, hi),
                                  ("lower", up * duals < -tol, lo)):
            idx = np.flatnonzero(mask)
            slack = np.abs(act[idx] - bound[idx])
            limit = 1e-6 * np.maximum(1.0, np.abs(bound[idx]))
            bad = idx[slack > limit]
            assert bad.size == 0, (f"{what}s {bad[:5].tolist()} have a non-zero dual on "
                                   f"their {side} bound but are slack there "
                                   f"(slack {slack[slack > limit][:5].tolist()})")


def _highspy_milp(data: ProgramData) -> float:
    """The MILP's optimum from a plain highspy model (tight tolerances, no presolve)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for k, v in (("mip_rel_gap", 0.0), ("mip_feasibility_tolerance", 1e-9),
                 ("presolve", "off")):
        h.setOptionValue(k, v)
    inf = highspy.kHighsInf
    lo = np.where(np.isinf(data.col_lb), -inf, data.col_lb)
    hi = np.where(np.isinf(data.col_ub), inf, data.col_ub)
    for j in range(data.n_cols):
        h.addVar(float(lo[j]), float(hi[j]))
        h.changeColCost(j, float(data.c[j]))
        if data.integer[j]:
            h.changeColIntegrality(j, highspy.HighsVarType.kInteger)
    A = data.A.tocsr()
    for i in range(data.n_rows):
        cols, vals = A.indices[A.indptr[i]:A.indptr[i + 1]], A.data[A.indptr[i]:A.indptr[i + 1]]
        h.addRow(float(max(data.row_lb[i], -inf)), float(min(data.row_ub[i], inf)),
                 len(cols), cols.astype(np.int32), vals.astype(float))
    if data.sense == "max":
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.getModelStatus()
    return float(h.getInfo().objective_function_value) + data.offset


def _feasible(data: ProgramData, x: np.ndarray | None, tol: float = 1e-6) -> bool:
    """Whether ``x`` is a point of the program: bounds, integrality and rows within
    ``tol``."""
    if x is None or x.shape != data.c.shape or not np.isfinite(x).all():
        return False
    if (x < data.col_lb - tol).any() or (x > data.col_ub + tol).any():
        return False
    if (np.abs(x - np.round(x))[data.integer] > tol).any():
        return False
    ax = data.A @ x if data.n_rows else np.zeros(0)
    return bool((ax >= data.row_lb - tol).all() and (ax <= data.row_ub + tol).all())


def oracle(data: ProgramData) -> float:
    """scipy's optimum (``milp`` for MILPs, ``linprog`` for LPs), in the program's sense.

    A MILP is solved twice by scipy, with and without presolve, and the better of the
    points that are feasible (checked here) is taken, since every feasible point bounds
    the optimum from its side: scipy 1.17.1's HiGHS with presolve has returned a
    suboptimal point as optimal (objective -1 where 0 is feasible, a 5-column MILP; see
    ``test_random_milps_agree``). When neither solve gives a point, a plain highspy model
    decides.
    """
    sign = -1.0 if data.sense == "max" else 1.0
    bounds = list(zip(np.where(np.isinf(data.col_lb), None, data.col_lb),
                      np.where(np.isinf(data.col_ub), None, data.col_ub)))
    if data.is_mip:
        cons = [LinearConstraint(data.A, data.row_lb, data.row_ub)] if data.n_rows else []
        kw = dict(integrality=data.integer.astype(int), constraints=cons,
                  bounds=Bounds(data.col_lb, data.col_ub))
        found = []
        # scipy's bundled HiGHS also reports "Solve error" from its presolve on some tiny
        # feasible MILPs (seen with 5-6 columns), and once "infeasible" on a 3-column
        # MILP feasible by construction (every program here is)
        for presolve in (True, False):
            res = milp(sign * data.c, options={"mip_rel_gap": 0, "presolve": presolve}, **kw)
            if res.status == 0 and _feasible(data, res.x):
                found.append(float(res.fun))
        if not found:  # highspy itself, outside optsched's code
            return _highspy_milp(data)
        return sign * min(found) + data.offset
    A = data.A.tocsr()
    eq = data.row_lb == data.row_ub
    le, ge = ~eq & np.isfinite(data.row_ub), ~eq & np.isfinite(data.row_lb)
    A_ub = sp.vstack([A[le], -A[ge]]) if (le | ge).any() else None
    b_ub = np.concatenate([data.row_ub[le], -data.row_lb[ge]])
    res = linprog(sign * data.c, A_ub=A_ub, b_ub=b_ub if A_ub is not None else None,
                  A_eq=A[eq] if eq.any() else None, b_eq=data.row_ub[eq] if eq.any() else None,
                  bounds=bounds, method="highs")
    assert res.status == 0
    return sign * res.fun + data.offset


# --------------------------------------------------------------------------- recording
@dataclass
class Solved:
    """One program a method handed to the solver layer, and the backend's answer."""

    data: ProgramData
    result: Result


@contextlib.contextmanager
def record_programs(monkeypatch) -> Iterator[list[Solved]]:
    """Record every program solved inside the block, on every backend.

    The solver layer resolves a backend module by name and calls its ``solve``; wrapping
    that function sees exactly what a paper's method asked for, without knowing it.
    """
    seen: list[Solved] = []
    for name in BACKENDS:
        mod = backend_module(name)
        inner = mod.solve

        def wrapped(data, *args, _inner=inner, **kw):
            res = _inner(data, *args, **kw)
            seen.append(Solved(data, res))
            return res

        monkeypatch.setattr(mod, "solve", wrapped)
    yield seen


def check_recorded_lps(seen: list[Solved]) -> int:
    """Hold every optimal LP in ``seen`` to :func:`check_solution` (certificate and
    complementarity); returns how many were checked."""
    lps = [s for s in seen if not s.data.is_mip and s.result.status is Status.OPTIMAL]
    for s in lps:
        check_solution(s.data, s.result)
    return len(lps)


# --------------------------------------------------------------------------- problems
def transportation() -> ProgramData:
    """Two plants, three markets: optimum 465 (ship [[0, 20, 0], [10, 5, 15]])."""
    supply, demand = [20, 30], [10, 25, 15]
    cost = np.array([[8, 6, 10], [9, 12, 13]], dtype=float)
    lp = LinearProgram(sense="min", name="transport")
    x = lp.add_variables("ship", (2, 3), lb=0, cost=cost)
    i, j = np.indices((2, 3))
    lp.add_constraints("supply", rows=i, cols=x.index, vals=1.0, ub=supply, n_rows=2)
    lp.add_constraints("demand", rows=j, cols=x.index, vals=1.0, lb=demand, n_rows=3)
    return lp.freeze()


KNAPSACK = dict(values=(10, 13, 7, 8, 6), weights=(5, 6, 4, 5, 3), cap=14)


def knapsack(values=KNAPSACK["values"], weights=KNAPSACK["weights"], cap=KNAPSACK["cap"],
             offset=0.0) -> ProgramData:
    lp = LinearProgram(sense="max", name="knapsack")
    x = lp.add_variables("take", len(values), lb=0, ub=1, cost=values, integer=True)
    lp.add_constraints("cap", rows=0, cols=x.index, vals=weights, ub=cap, n_rows=1)
    lp.offset = offset
    return lp.freeze()


def knapsack_best(values=KNAPSACK["values"], weights=KNAPSACK["weights"],
                  cap=KNAPSACK["cap"]) -> float:
    """Brute force over all subsets."""
    return max(sum(v for v, t in zip(values, take) if t)
               for take in itertools.product((0, 1), repeat=len(values))
               if sum(w for w, t in zip(weights, take) if t) <= cap)


ASSIGNMENT_COST = np.array([[9, 2, 7, 8], [6, 4, 3, 7], [5, 8, 1, 8], [7, 6, 9, 4]],
                           dtype=float)


def assignment(cost=ASSIGNMENT_COST) -> ProgramData:
    n = cost.shape[0]
    lp = LinearProgram(sense="min", name="assignment")
    x = lp.add_variables("assign", (n, n), lb=0, ub=1, cost=cost, integer=True)
    i, j = np.indices((n, n))
    lp.add_constraints("worker", rows=i, cols=x.index, vals=1.0, lb=1, ub=1, n_rows=n)
    lp.add_constraints("job", rows=j, cols=x.index, vals=1.0, lb=1, ub=1, n_rows=n)
    return lp.freeze()


def assignment_best(cost=ASSIGNMENT_COST) -> float:
    rows, cols = linear_sum_assignment(cost)
    return float(cost[rows, cols].sum())


#: Edges (tail, head, capacity) of a 6-node network; the cut {0, 1, 2, 4} | {3, 5} has
#: capacity 12 + 7 + 4 = 23 and a flow of 23 exists, so both are optimal.
MAX_FLOW_EDGES = ((0, 1, 16), (0, 2, 13), (1, 2, 10), (2, 1, 4), (1, 3, 12), (3, 2, 9),
                  (2, 4, 14), (4, 3, 7), (3, 5, 20), (4, 5, 4))


def max_flow() -> ProgramData:
    """s = 0 to t = 5 on :data:`MAX_FLOW_EDGES` (CLRS Fig. 26.1): optimum 23."""
    e = np.array(MAX_FLOW_EDGES)
    lp = LinearProgram(sense="max", name="max_flow")
    f = lp.add_variables("flow", len(e), lb=0, ub=e[:, 2].astype(float),
                         cost=(e[:, 1] == 5).astype(float) - (e[:, 0] == 5))
    inner = [1, 2, 3, 4]
    rows, cols, vals = [], [], []
    for r, v in enumerate(inner):
        for k, (a, b, _) in enumerate(MAX_FLOW_EDGES):
            if b == v:
                rows.append(r), cols.append(f.index[k]), vals.append(1.0)
            if a == v:
                rows.append(r), cols.append(f.index[k]), vals.append(-1.0)
    lp.add_constraints("conservation", rows=rows, cols=cols, vals=vals, lb=0, ub=0,
                       n_rows=len(inner))
    return lp.freeze()


#: Nutrients (rows) per unit of three foods and the daily minimum; costs per unit.
DIET = dict(cost=[0.6, 0.35, 0.45], content=[[5, 3, 4], [2, 6, 1], [3, 1, 5]],
            minimum=[40, 30, 35])


def diet() -> ProgramData:
    """Stigler-style diet LP: the cheapest mix meeting every minimum (ranged rows: at
    most twice the minimum)."""
    lp = LinearProgram(sense="min", name="diet")
    lp.add_variables("food", 3, lb=0, cost=DIET["cost"])
    lp.add_dense_rows("nutrient", np.array(DIET["content"], float),
                      lb=DIET["minimum"], ub=2 * np.array(DIET["minimum"], float))
    return lp.freeze()


#: Subsets of {0..7} with costs; the cheapest cover is found by brute force.
SET_COVER = (((0, 1, 2), 3.0), ((2, 3), 1.5), ((3, 4, 5), 3.0), ((5, 6, 7), 2.5),
             ((0, 4, 7), 2.0), ((1, 6), 1.0), ((1, 3, 5, 7), 3.5))


def set_cover() -> ProgramData:
    lp = LinearProgram(sense="min", name="set_cover")
    x = lp.add_variables("pick", len(SET_COVER), lb=0, ub=1,
                         cost=[c for _, c in SET_COVER], integer=True)
    rows = [e for s, _ in SET_COVER for e in s]
    cols = [x.index[k] for k, (s, _) in enumerate(SET_COVER) for _ in s]
    lp.add_constraints("cover", rows=rows, cols=cols, vals=1.0, lb=1, n_rows=8)
    return lp.freeze()


def set_cover_best() -> float:
    best = INF
    for pick in itertools.product((0, 1), repeat=len(SET_COVER)):
        covered = {e for k, (s, _) in enumerate(SET_COVER) if pick[k] for e in s}
        if covered == set(range(8)):
            best = min(best, sum(c for k, (_, c) in enumerate(SET_COVER) if pick[k]))
    return best


@dataclass(frozen=True)
class Problem:
    build: Callable[[], ProgramData]
    optimum: Callable[[], float]


#: Every standard problem with an optimum computed independently of any LP solver
#: where one exists (brute force, the Hungarian method, a hand-checked cut).
PROBLEMS: dict[str, Problem] = {
    "transportation": Problem(transportation, lambda: 465.0),
    "knapsack": Problem(lambda: knapsack(offset=2.5), lambda: knapsack_best() + 2.5),
    "assignment": Problem(assignment, assignment_best),
    "max_flow": Problem(max_flow, lambda: 23.0),
    "diet": Problem(diet, lambda: oracle(diet())),
    "set_cover": Problem(set_cover, set_cover_best),
}


def market_split(m: int = 4, seed: int = 1) -> ProgramData:
    """Cornuejols-Dawande market split with slacks: hard for branch and bound, and any
    binary x is feasible (so an incumbent exists)."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    A = rng.integers(0, 100, size=(m, n)).astype(float)
    b = np.floor(A.sum(axis=1) / 2)
    lp = LinearProgram(sense="min", name="market_split")
    lp.add_variables("x", n, lb=0, ub=1, integer=True)
    lp.add_variables("over", m, cost=1.0)
    lp.add_variables("under", m, cost=1.0)
    lp.add_dense_rows("split", np.hstack([A, np.eye(m), -np.eye(m)]), lb=b, ub=b)
    return lp.freeze()


def small(sense, cost, A, *, lb=0.0, ub=INF, integer=False, rlb=-INF, rub=INF) -> ProgramData:
    """A one-block program ``x`` with dense rows ``r``."""
    lp = LinearProgram(sense=sense)
    lp.add_variables("x", len(cost), lb=lb, ub=ub, cost=cost, integer=integer)
    lp.add_dense_rows("r", A, lb=rlb, ub=rub)
    return lp.freeze()


#: name -> (program keywords of :func:`small`, optimum, row duals, column duals).
DUAL_CASES = {
    # max 3x+2y: x+y<=4, x+3y<=9, x<=3 (row): optimum (3,1) = 11.
    "max_le_rows": (dict(sense="max", cost=[3, 2], A=[[1, 1], [1, 3], [1, 0]],
                         rub=[4, 9, 3]), 11.0, [2, 0, 1], [0, 0]),
    # same with x<=3 as a column bound: its reduced cost carries the dual.
    "max_col_bound": (dict(sense="max", cost=[3, 2], A=[[1, 1], [1, 3]], rub=[4, 9],
                           ub=[3, INF]), 11.0, [2, 0], [1, 0]),
    # min 2x+3y: x+y>=4, x+3y>=6: optimum (3,1) = 9.
    "min_ge_rows": (dict(sense="min", cost=[2, 3], A=[[1, 1], [1, 3]], rlb=[4, 6]),
                    9.0, [1.5, 0.5], [0, 0]),
    # min x+2y: x+y==3, x<=1: optimum (1,2) = 5; a binding <= in a min problem is <= 0.
    "min_eq_le": (dict(sense="min", cost=[1, 2], A=[[1, 1], [1, 0]], rlb=[3, -INF],
                       rub=[3, 1]), 5.0, [2, -1], [0, 0]),
    # max x-y: y>=1, x+y<=4: optimum (3,1) = 2; a binding >= in a max problem is <= 0.
    "max_ge_le": (dict(sense="max", cost=[1, -1], A=[[0, 1], [1, 1]], rlb=[1, -INF],
                       rub=[INF, 4]), 2.0, [-2, 1], [0, 0]),
    # max x-y: y>=1 as a column bound.
    "max_col_lower": (dict(sense="max", cost=[1, -1], A=[[1, 1]], rub=[4], lb=[0, 1]),
                      2.0, [1], [0, -2]),
    # min -x, 1 <= x <= 2 ranged row, x free: optimum -2, upper side binding.
    "min_ranged": (dict(sense="min", cost=[-1], A=[[1]], rlb=[1], rub=[2], lb=-INF),
                   -2.0, [-1], [0]),
}


@st.composite
def programs(draw, mip: bool) -> ProgramData:
    """Random bounded programs, feasible by construction (a point ``x0`` inside the
    bounds satisfies every row); half-integral ``x0`` for LPs, integral for MILPs."""
    n = draw(st.integers(1, 6))
    m = draw(st.integers(0, 5))
    ints = st.integers(-5, 5)
    lb = np.array(draw(st.lists(st.integers(-4, 0), min_size=n, max_size=n)), dtype=float)
    width = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    ub = lb + width
    step = 1.0 if mip else 0.5
    frac = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    x0 = lb + np.floor(frac * width / step) * step
    A = np.array(draw(st.lists(ints, min_size=m * n, max_size=m * n)), dtype=float)
    A = A.reshape(m, n)
    ax = A @ x0
    kinds = draw(st.lists(st.sampled_from(["le", "ge", "eq", "range", "free"]),
                          min_size=m, max_size=m))
    slack = np.array(draw(st.lists(st.integers(0, 3), min_size=m, max_size=m)), dtype=float)
    rlb = np.array([ax[i] - slack[i] if k in ("ge", "range") else
                    ax[i] if k == "eq" else -INF for i, k in enumerate(kinds)])
    rub = np.array([ax[i] + slack[i] if k in ("le", "range") else
                    ax[i] if k == "eq" else INF for i, k in enumerate(kinds)])
    lp = LinearProgram(sense=draw(st.sampled_from(["min", "max"])))
    integer = draw(st.lists(st.booleans(), min_size=n, max_size=n)) if mip else [False] * n
    for j in range(n):  # one block per column, integer or not
        lp.add_variables(f"v{j}", 1, lb=lb[j], ub=ub[j], cost=draw(ints),
                         integer=integer[j])
    if m:
        lp.add_dense_rows("rows", A, lb=rlb, ub=rub)
    lp.offset = draw(st.sampled_from([0.0, 1.5, -3.0]))
    return lp.freeze()


def method_lps(monkeypatch, instance, model: str, method: str, **options) -> int:
    """Run one registered method and hold every optimal LP it solved to
    :func:`check_solution` (dual certificate, complementarity); returns their number."""
    import optsched

    with record_programs(monkeypatch) as seen:
        optsched.solve(instance, model, method, **options)
    return check_recorded_lps(seen)
