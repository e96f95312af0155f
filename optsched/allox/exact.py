r"""Exact AlloX: R || sum (C_j - a_j) as a min-cost bipartite matching.

Model (Bruno, Coffman & Sethi, CACM 1974; Horn, Oper. Res. 1973; AlloX, EuroSys'20, §3.1)
------------------------------------------------------------------------------------------
Jobs :math:`j` and machines :math:`m` with processing times :math:`p_{mj}`; machine
:math:`m` is free from :math:`\omega_m`; every job is queued (arrived) by then. A job in
the :math:`k`-th position *from the last* on machine :math:`m` delays itself and the
:math:`k-1` jobs behind it, so

.. math::

    \sum_j (C_j - a_j) = \sum_{j} \sum_{m,k} x_{jmk}\,(k\,p_{mj} + \omega_m - a_j),

and the problem is the assignment

.. math::

    \min \sum_{j,m,k} (k\,p_{mj} + \omega_m - a_j)\,x_{jmk}
    \quad\text{s.t.}\quad \sum_{m,k} x_{jmk} = 1\ \forall j,\quad
    \sum_j x_{jmk} \le 1\ \forall (m,k),\quad x \in \{0,1\},

whose constraint matrix is totally unimodular (bipartite), so its LP relaxation is
integral. Costs increase in :math:`k`, so an optimum uses contiguous positions
:math:`1..n_m` on each machine.

Scaling: positions per machine are limited to :math:`K` and doubled until no machine
uses its :math:`K`-th position. That stopping rule is exact: at an optimum of the
restricted problem an unused slot :math:`(m, K)` has dual :math:`v_{mK} = 0`
(complementary slackness), hence :math:`c_{j,mK} \ge u_j` for all :math:`j`; a new slot
:math:`(m, k' > K)` with :math:`v = 0` has :math:`c_{j,mk'} \ge c_{j,mK} \ge u_j`, so the
extended dual stays feasible with the same objective and the restricted optimum is
optimal for unlimited positions. The matching is a rectangular
``scipy.optimize.linear_sum_assignment`` (modified Jonker-Volgenant) on an
:math:`n \times MK` matrix instead of the naive :math:`n \times Mn` one.

The same model is also stated as an ILP through the solver layer
(``algorithm="ilp"``) and solved by any backend, as an independent cross-check.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from optsched.allox.model import Machines, machines_of
from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.options import declares
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram

__all__ = ["exact", "match", "plan_cost", "plan_schedule", "plan_result"]

Plan = list[list[int]]  # per machine, job indices in run order


def _costs(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray, K: int) -> np.ndarray:
    """Cost matrix ``C[j, m*K + (k-1)] = k p[m, j] + omega[m] - a[j]`` (``inf``: forbidden)."""
    k = np.arange(1, K + 1, dtype=float)
    c = k[None, None, :] * p.T[:, :, None] + (omega[None, :, None] - arrival[:, None, None])
    return c.reshape(p.shape[1], p.shape[0] * K)


def match(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray,
          k0: int | None = None) -> tuple[Plan, float]:
    """Optimal plan for jobs queued on machines free from ``omega``.

    Returns the per-machine run order and the total :math:`\\sum (C_j - a_j)`.
    ``p`` is ``(M, n)``; entries ``inf`` forbid a machine for a job.
    """
    M, n = p.shape
    if n == 0:
        return [[] for _ in range(M)], 0.0
    K = max(1, k0 if k0 is not None else 2 * -(-n // M))
    while True:
        K = min(K, n)
        C = _costs(p, omega, arrival, K)
        try:
            rows, cols = linear_sum_assignment(C)
        except ValueError:  # no complete assignment with K positions per machine
            if K == n:
                raise ModelNotApplicable("jobs", n, "some job can run on no machine") from None
            K *= 2
            continue
        m_of, k_of = np.divmod(cols, K)
        if K == n or not np.any(k_of == K - 1):
            break
        K *= 2
    plan: Plan = [[] for _ in range(M)]
    for m in range(M):
        sel = np.flatnonzero(m_of == m)
        plan[m] = [int(rows[i]) for i in sel[np.argsort(-k_of[sel])]]
    return plan, float(C[rows, cols].sum())


def plan_schedule(instance: Instance, mach: Machines, plan: Plan,
                  omega: np.ndarray) -> tuple[Schedule, dict[str, float]]:
    """Run each machine's jobs back to back from ``omega[m]`` (never before arrival)."""
    allocs, comp = [], {}
    for m, order in enumerate(plan):
        t = float(omega[m])
        for j in order:
            job = instance.jobs[j]
            t = max(t, job.arrival)
            end = t + float(mach.p[m, j])
            allocs.append(Allocation(job.id, t, end, mach.node[m], mach.gpu_type[m], 1))
            comp[job.id] = end
            t = end
    return Schedule(tuple(allocs), comp), comp


def plan_cost(instance: Instance, completion: dict[str, float]) -> float:
    """Total JCT :math:`\\sum_j (C_j - a_j)` (s) of the completions given."""
    return float(sum(c - instance.job(j).arrival for j, c in completion.items()))


def plan_result(instance: Instance, plan: Sequence[Sequence[int | str]], *,
                method: str = "", **fields: Any) -> Result:
    r"""The validated :class:`~optsched.core.result.Result` of an AlloX plan: what a
    heuristic of your own returns.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs (:func:`~optsched.allox.model.machines_of` refuses others).
    plan : sequence of sequences
        Per machine, in the order of :func:`~optsched.allox.model.machines_of` (one per
        GPU), the jobs it runs, first to last, as job indices or ids. Every job appears
        exactly once, on a machine whose GPU type it can run on.
    method : str
        The method's name in the result.
    **fields
        Further :class:`~optsched.core.result.Result` fields (``ratio``,
        ``ratio_note``, ``extra``, ...).

    Returns
    -------
    Result
        Each machine runs its jobs back to back from time 0, a job never before its
        arrival (the schedule :func:`optsched.allox.exact.exact` builds from its
        matching); ``objective`` is the total JCT :math:`\sum_j (C_j - a_j)` (s),
        ``status`` feasible, the schedule validated with the model's rules and its
        metrics attached (:func:`optsched.core.result.finalize`).

    Raises
    ------
    InvalidOption
        ``plan`` has the wrong number of machines, names an unknown job, leaves a job
        out or runs one twice, or puts a job on a GPU type it cannot run on.

    Complexity
    ----------
    :math:`O(M n)` for the machines plus :math:`O(n)` for the plan, then the
    validator's cost.
    """
    mach = machines_of(instance)
    if isinstance(plan, (str, bytes)) or len(plan) != mach.count:
        raise InvalidOption("plan", f"{len(plan)} machines", f"must list the jobs of each "
                            f"of the {mach.count} machines (one per GPU, machines_of order)")
    index = instance.job_index
    order: Plan = []
    seen: dict[int, int] = {}
    for m, jobs in enumerate(plan):
        row = []
        for j in jobs:
            i = index.get(j) if isinstance(j, str) else j
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) \
                    or not 0 <= i < instance.n_jobs:
                raise InvalidOption(f"plan[{m}]", j, "not a job index or id of the instance")
            i = int(i)
            if i in seen:
                raise InvalidOption(f"plan[{m}]", instance.jobs[i].id,
                                    f"also on machine {seen[i]}: each job runs once")
            if not np.isfinite(mach.p[m, i]):
                raise InvalidOption(f"plan[{m}]", instance.jobs[i].id,
                                    f"cannot run on machine {m} ({mach.gpu_type[m]})")
            seen[i] = m
            row.append(i)
        order.append(row)
    if len(seen) < instance.n_jobs:
        left = next(j.id for i, j in enumerate(instance.jobs) if i not in seen)
        raise InvalidOption("plan", left, "a job of the instance is on no machine")
    sched, comp = plan_schedule(instance, mach, order, np.zeros(mach.count))
    return finalize(instance, sched, status=fields.pop("status", Status.FEASIBLE),
                    objective=plan_cost(instance, comp), model="allox", method=method,
                    **fields)


def _common_release(instance: Instance) -> float:
    a = instance.arrivals
    if a.size and not np.all(a == a[0]):
        i = int(np.argmax(a != a[0]))
        raise ModelNotApplicable(
            f"jobs[{i}].arrival", float(a[i]),
            "the exact AlloX matching solves R||sum C_j: all jobs queued at one time. With "
            "release dates the problem (R|r_j|sum C_j) is strongly NP-hard; use "
            "method='online' for staggered arrivals")
    return float(a[0]) if a.size else 0.0


def _ilp(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray, K: int) -> LinearProgram:
    """The assignment as an ILP over the finite-cost (job, machine, position) triples."""
    M, n = p.shape
    C = _costs(p, omega, arrival, K)
    jj, ss = np.nonzero(np.isfinite(C))
    lp = LinearProgram(sense="min", name="allox")
    x = lp.add_variables("x", jj.size, lb=0, ub=1, cost=C[jj, ss], integer=True)
    cols = x.index
    lp.add_constraints("assign", rows=jj, cols=cols, vals=1.0, lb=1, ub=1, n_rows=n)
    lp.add_constraints("slot", rows=ss, cols=cols, vals=1.0, ub=1, n_rows=M * K)
    return lp


def plan_start(p: np.ndarray, omega: np.ndarray, arrival: np.ndarray, K: int,
               plan: Plan) -> np.ndarray:
    """The ILP point (:func:`_ilp`, ``K`` positions) of a plan: job ``order[i]`` of a
    machine's run order takes position ``len(order) - i`` from the last."""
    C = _costs(p, omega, arrival, K)
    jj, ss = np.nonzero(np.isfinite(C))
    col = {(int(j), int(s)): c for c, (j, s) in enumerate(zip(jj, ss))}
    x = np.zeros(jj.size)
    for m, order in enumerate(plan):
        for i, j in enumerate(order):
            x[col[(j, m * K + len(order) - i - 1)]] = 1.0
    return x


@declares(solver=True)
def exact(instance: Instance, backend: str | None = None, *, algorithm: str = "matching",
          **options) -> Result:
    r"""Optimal total JCT of AlloX's model (all jobs queued at one common time).

    ``algorithm="matching"`` (default) runs the assignment algorithm, which solves no
    LP, so it takes no backend or solver option; ``algorithm="ilp"`` states the same
    model as an ILP and solves it through the solver layer. In the registry these are
    the methods ``exact`` and ``exact-ilp``.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs (:class:`~optsched.errors.ModelNotApplicable` naming
        ``jobs[i].workers`` otherwise), all arriving at one time (naming
        ``jobs[i].arrival`` otherwise).
    backend : str or None
        ``algorithm="ilp"`` only: the solver backend (default ``"highs"``).
    algorithm : {"matching", "ilp"}
        The assignment algorithm (``scipy.optimize.linear_sum_assignment``) or the ILP
        through the solver layer (an independent cross-check).
    **options
        ``algorithm="ilp"`` only: solver options (``time_limit``, ``mip_gap``,
        ``threads``, ``seed``, ``solver``, ``verbose``).

    Returns
    -------
    Result
        ``status`` OPTIMAL, ``objective`` = ``bound`` = total JCT
        :math:`\sum_j (C_j - a_j)` (s), the validated schedule (each machine's jobs back
        to back in the matching's order), ``ratio=1``; ``extra["positions"]`` the
        positions per machine used. With ``"ilp"`` also the ILP's bound, gap and values.

    Guarantee
    ---------
    :math:`\sum_j (C_j - a_j) = \mathrm{OPT} \le \sum_j (C_j - a_j)` of every schedule
    of :math:`R\,||\,\sum_j C_j` (the assignment's LP is integral; the doubling of
    positions stops with a dual certificate, module docstring); a time-limited ILP
    returns :math:`\text{bound} \le \mathrm{OPT} \le` its objective.

    Complexity
    ----------
    Matching: :math:`O(n^2 M K)` for Jonker-Volgenant on the :math:`n \times MK`
    matrix, with :math:`K` doubled at most :math:`\log_2 n` times. ILP: :math:`nMK`
    binaries, solved by branch and bound (the LP is integral).

    References
    ----------
    * J. Bruno, E. G. Coffman, R. Sethi, "Scheduling independent tasks to reduce mean
      finishing time", CACM 17(7), 1974.
    * W. A. Horn, "Minimizing average flow time with parallel machines", Operations
      Research 21(3), 1973.
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §3.1 (the matching for queued-up jobs).
    * D. F. Crouse, "On implementing 2D rectangular assignment algorithms", IEEE
      Trans. Aerospace and Electronic Systems 52(4), 2016 (the solver SciPy uses).
    """
    if algorithm not in ("matching", "ilp"):
        raise InvalidOption("algorithm", algorithm, "must be 'matching' or 'ilp'")
    if algorithm == "matching" and (backend is not None or options):
        what = "backend" if backend is not None else sorted(options)[0]
        raise InvalidOption(what, backend if backend is not None else options[what],
                            "the AlloX matching solves no LP, so it takes no solver backend "
                            "or solver option; use algorithm='ilp' (method 'exact-ilp')")
    t0 = time.perf_counter()
    release = _common_release(instance)
    mach = machines_of(instance)
    omega = np.full(mach.count, release)
    arrival = instance.arrivals
    plan, cost = match(mach.p, omega, arrival)
    t1 = time.perf_counter()
    common = {"model": "allox", "ratio": 1.0, "ratio_note": "exact optimum of R||sum C_j"}
    if algorithm == "matching":
        sched, comp = plan_schedule(instance, mach, plan, omega)
        obj = plan_cost(instance, comp)
        return finalize(instance, sched, status=Status.OPTIMAL, objective=obj, bound=obj,
                        gap=0.0, method="exact", solver="scipy.linear_sum_assignment",
                        solve_seconds=t1 - t0, extra={"positions": max(map(len, plan))},
                        **common)
    # The matching fixed K with a proof of sufficiency; the ILP uses the same slots.
    K = max(1, max(len(o) for o in plan))
    K = min(instance.n_jobs, K + 1)
    tb = time.perf_counter()
    data = _ilp(mach.p, omega, arrival, K).freeze()
    # the matching's plan is the start (optimal: a stopped solve still returns it)
    start = {"x": plan_start(mach.p, omega, arrival, K, plan)}
    build = time.perf_counter() - tb
    res = solve_program(data, backend=backend or "highs", spent=build, start=start,
                        **options)
    if not res.success:
        return res.replace(model="allox", method="exact",
                           build_seconds=res.build_seconds + build)
    xs = np.round(res.values["x"]).astype(bool)
    C = _costs(mach.p, omega, arrival, K)
    jj, ss = np.nonzero(np.isfinite(C))
    m_of, k_of = np.divmod(ss[xs], K)
    plan = [[] for _ in range(mach.count)]
    for m in range(mach.count):
        sel = np.flatnonzero(m_of == m)
        plan[m] = [int(jj[xs][i]) for i in sel[np.argsort(-k_of[sel])]]
    sched, comp = plan_schedule(instance, mach, plan, omega)
    return finalize(instance, sched, status=res.status, objective=plan_cost(instance, comp),
                    bound=res.bound, gap=res.gap, method="exact", backend=res.backend,
                    solver=res.solver, build_seconds=res.build_seconds + build,
                    solve_seconds=res.solve_seconds, values=res.values, duals=res.duals,
                    message=res.message,
                    extra={"positions": K, "ilp_objective": res.objective,
                           **start_fields(res)},
                    # a stopped ILP proves nothing by itself
                    **{**common, "ratio": 1.0 if res.status is Status.OPTIMAL else None})
