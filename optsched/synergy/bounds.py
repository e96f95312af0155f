r"""Upper bounds on the optimum of Synergy's round model.

* :func:`step1_bound` - Synergy-OPT's step 1 (Mohan et al., OSDI'22, §4.1): the cluster as
  one super-machine (per-server capacities summed), solved exactly. Every allocation of
  the joint model is feasible for it, so :math:`\mathrm{step1} \ge \mathrm{OPT}`.
* :func:`lp_bound` - the LP relaxation of the joint configuration + placement ILP of
  :mod:`optsched.synergy.exact`: :math:`\mathrm{LP} \ge \mathrm{OPT}`.

Both over the same configuration set as the exact model (grid points, the fair share,
the best case and TUNE's comparable best case).
"""

from __future__ import annotations

import time
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.options import declares
from optsched.solvers import solve_program
from optsched.synergy.exact import joint_program, step1_program
from optsched.synergy.model import prepare

__all__ = ["step1_bound", "lp_bound"]


def _bound(instance: Instance, backend: str, which: str, start, order,
           options: dict[str, Any]) -> Result:
    t0 = time.perf_counter()
    rnd = prepare(instance, start=start, order=order)
    method = "bound-step1" if which == "step1" else "bound"  # the registry's names
    if not rnd.admitted:
        return Result(status=Status.OPTIMAL, bound=0.0, model="synergy", method=method,
                      backend=backend)
    lp = (step1_program(rnd) if which == "step1" else joint_program(rnd))[0]
    data = lp.freeze()
    if which == "lp":
        data = data.relaxed()
    build = time.perf_counter() - t0
    res = solve_program(data, backend=backend, spent=build, **options)
    bound = res.objective if res.status is Status.OPTIMAL else res.bound
    if which == "step1" and res.status is not Status.OPTIMAL:
        bound = res.bound  # a stopped MILP: its dual bound still bounds step 1
    return Result(status=res.status, bound=bound, model="synergy", method=method,
                  backend=res.backend, solver=res.solver,
                  build_seconds=build + res.build_seconds, solve_seconds=res.solve_seconds,
                  message=res.message, ratio_note=f"upper bound on the round's optimum "
                  f"({'super-machine step 1' if which == 'step1' else 'LP relaxation'})",
                  extra={"time_limit": res.extra.get("time_limit")})


@declares(solver=True)
def step1_bound(instance: Instance, backend: str = "highs", *, start: float | None = None,
                order=None, **options: Any) -> Result:
    r"""Synergy-OPT's step 1 (the cluster as one super-machine) as an upper bound.

    Parameters
    ----------
    instance : Instance
        The round's jobs and servers.
    backend : str
        Solver backend.
    start, order
        As :func:`optsched.synergy.exact.exact`.
    **options
        Solver options.

    Returns
    -------
    Result
        ``bound`` the step-1 ILP optimum, ``objective=None``.

    Guarantee
    ---------
    :math:`\text{step 1} \ge \mathrm{OPT}` of the joint ILP: it drops the per-server
    capacity rows.

    Complexity
    ----------
    One ILP with :math:`\sum_j |Q_j|` binaries and :math:`n + 2` rows (a multiple-choice
    knapsack with two resources; NP-hard, small in practice).

    References
    ----------
    * Mohan et al., OSDI 2022 (Synergy), §4.1; ``SolveFirstLP`` in Synergy's code.
    """
    return _bound(instance, backend, "step1", start, order, options)


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", *, start: float | None = None,
             order=None, **options: Any) -> Result:
    r"""The joint ILP's LP relaxation as an upper bound.

    Parameters
    ----------
    instance : Instance
        The round's jobs and servers.
    backend : str
        Solver backend.
    start, order
        As :func:`optsched.synergy.exact.exact`.
    **options
        Solver options.

    Returns
    -------
    Result
        ``bound`` the LP optimum, ``objective=None``.

    Guarantee
    ---------
    :math:`\mathrm{LP} \ge \mathrm{OPT}` of the joint ILP.

    Complexity
    ----------
    One LP with :math:`O(\sum_j |Q_j| S)` columns, polynomial.

    References
    ----------
    * Mohan et al., OSDI 2022 (Synergy), §4.1.
    """
    return _bound(instance, backend, "lp", start, order, options)
