r"""A bound on AlloX's optimum: the LP relaxation of the assignment.

The assignment ILP of :mod:`optsched.allox.exact` has a totally unimodular constraint
matrix (a bipartite matching: jobs to (machine, position) slots), so its LP relaxation
has an integral optimal vertex and

.. math::

    \mathrm{LP} = \mathrm{OPT} = \min \sum_j (C_j - a_j).

:func:`lp_bound` solves the relaxation through the solver layer; that it equals the
exact optimum is a check of the model (tested), and its duals price each job and slot.
Complexity: one LP of :math:`nMK` columns (:math:`K` positions per machine, as the
matching fixes them).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.allox.exact import _common_release, _ilp, match
from optsched.allox.model import machines_of
from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.options import declares
from optsched.solvers import solve_program

__all__ = ["lp_bound"]


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", **options: Any) -> Result:
    r"""The assignment LP's optimum as ``bound`` (equal to the exact optimum).

    Parameters
    ----------
    instance : Instance
        Single-worker jobs all arriving at one time, as :func:`optsched.allox.exact.exact`.
    backend : str
        Solver backend (``"highs"``, ``"pyomo"``, ``"cvxpy"``).
    **options
        Solver options (``time_limit``, ``threads``, ``seed``, ``solver``, ``verbose``).

    Returns
    -------
    Result
        ``bound`` = the LP optimum (``None`` unless the LP is solved to optimality),
        ``objective=None``, no schedule; the LP's duals; ``extra["positions"]``.

    Guarantee
    ---------
    :math:`\mathrm{LP} \le \mathrm{OPT}` for a relaxation, and here
    :math:`\mathrm{LP} = \mathrm{OPT}`: the constraint matrix of a bipartite assignment
    is totally unimodular, so the LP has an integral optimal vertex (tested against
    :func:`optsched.allox.exact.exact`).

    Complexity
    ----------
    One LP of :math:`nMK` columns and :math:`n + MK` rows (:math:`K` positions per
    machine, fixed by one matching first), polynomial.

    References
    ----------
    * J. Bruno, E. G. Coffman, R. Sethi, "Scheduling independent tasks to reduce mean
      finishing time", CACM 17(7), 1974 (the assignment).
    * A. Schrijver, "Theory of Linear and Integer Programming", Wiley, 1986, §19
      (total unimodularity; bipartite incidence matrices).
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §3.1.
    """
    t0 = time.perf_counter()
    release = _common_release(instance)
    mach = machines_of(instance)
    omega = np.full(mach.count, release)
    plan, _ = match(mach.p, omega, instance.arrivals)
    K = min(instance.n_jobs, max(1, max(len(o) for o in plan)) + 1)
    data = _ilp(mach.p, omega, instance.arrivals, K).freeze().relaxed()
    build = time.perf_counter() - t0
    res = solve_program(data, backend=backend, spent=build, **options)
    return Result(status=res.status, bound=res.objective if res.status is Status.OPTIMAL
                  else None, model="allox", method="bound", backend=res.backend,
                  solver=res.solver, build_seconds=build + res.build_seconds,
                  solve_seconds=res.solve_seconds, duals=res.duals, message=res.message,
                  ratio_note="LP relaxation of the assignment (integral: equals the optimum)",
                  extra={"positions": K, "time_limit": res.extra.get("time_limit")})
