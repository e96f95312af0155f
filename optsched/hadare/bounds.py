r"""Bounds on HadarE's optimum.

:func:`lp_bound`: the LP relaxation of the forking MILP (:mod:`optsched.hadare.exact`,
all integrality dropped) is a bound on the slot model's optimum: an upper bound for the
total utility (:math:`\mathrm{LP} \ge \mathrm{OPT}`), a lower bound for the makespan
and the total JCT (:math:`\mathrm{LP} \le \mathrm{OPT}`).
"""

from __future__ import annotations

from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.options import declares

__all__ = ["lp_bound"]


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", *, slots: int | None = None,
             slot: float | None = None, max_slots: int | None = None,
             max_columns: int | None = None, objective: str = "utility",
             consolidation: Any = None, consolidation_slots: Any = None,
             max_copies: Any = None, **options: Any) -> Result:
    r"""The LP relaxation of HadarE's MILP as ``bound``: :func:`optsched.hadare.exact.exact` with
    ``relax=True`` and the same options.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    backend : str
        Solver backend.
    slots, slot, max_slots, max_columns, objective, consolidation, consolidation_slots, max_copies
        As :func:`optsched.hadare.exact.exact`.
    **options
        Solver options.

    Returns
    -------
    Result
        ``bound`` the LP optimum, ``objective=None``.

    Guarantee
    ---------
    :math:`\mathrm{LP} \ge \mathrm{OPT}` for ``"utility"``, :math:`\mathrm{LP} \le
    \mathrm{OPT}` for ``"makespan"`` and ``"jct"``.

    Complexity
    ----------
    One LP, polynomial; size as :func:`optsched.hadare.exact.exact`.

    References
    ----------
    * Sultana et al., arXiv:2503.10918, 2025 (HadarE).
    """
    from optsched.hadare.exact import exact

    grid = {k: v for k, v in (("max_slots", max_slots), ("max_columns", max_columns))
            if v is not None}
    return exact(instance, backend=backend, slots=slots, slot=slot, objective=objective,
                 consolidation=consolidation, consolidation_slots=consolidation_slots,
                 max_copies=max_copies, relax=True, **grid, **options)
