r"""A lower bound on Tiresias' total JCT, valid for every continuous-time schedule.

The *mean-busy-time* interval LP (after Goemans' mean busy time relaxation for
:math:`\sum C_j` scheduling, extended to gangs on a pool of GPUs). Pool the :math:`M`
GPUs and give job :math:`j` its fastest service time :math:`d_j = \min_k d_{jk}`
(:mod:`optsched.tiresias.model`). Cut time into intervals :math:`I_t = [b_t, b_{t+1})`,
:math:`t = 0..T-1`, of :math:`\Delta` seconds up to :math:`H \le T\Delta`, plus
a last interval :math:`[H, \infty)`; job :math:`j` may use :math:`I_t` from
:math:`s_{jt} = \max(b_t, r_j)` on.

Variables: :math:`y_{jt} \ge 0`, the fraction of job :math:`j`'s work done in
:math:`I_t`; :math:`C_j`, its completion time.

.. math::

    \mathrm{LB} = \min \sum_j (C_j - r_j) \quad\text{s.t.}\quad
    \sum_t y_{jt} = 1, \qquad
    y_{jt}\, d_j \le b_{t+1} - s_{jt}, \qquad
    \sum_j g_j d_j\, y_{jt} \le M (b_{t+1} - b_t) \ (t < T),

    C_j \;\ge\; \sum_t s_{jt}\, y_{jt} + \frac{d_j}{2}, \qquad C_j \ge r_j + d_j.

Validity. Take any feasible schedule and let :math:`y_{jt}` be the fraction of job
:math:`j` done in :math:`I_t` and :math:`C_j` its completion. A job progresses at rate at
most :math:`1/d_j` and only after :math:`r_j`, which gives the second constraint; while
it runs it holds :math:`g_j` GPUs, and it runs at least :math:`d_j y_{jt}` seconds in
:math:`I_t`, which gives the capacity row. Its mean busy time
:math:`\mu_j = \int t\, \dot w_j(t)\, dt` (:math:`w_j` the fraction done) is at least
:math:`\sum_t s_{jt} y_{jt}`, and since the rate is at most :math:`1/d_j` the work is
done no earlier than if it were packed at full rate just before :math:`C_j`:
:math:`\mu_j \le C_j - d_j/2`. So the schedule's point is feasible with its own total
JCT, and

.. math::

    \mathrm{LB} \;\le\; \mathrm{OPT}_{\text{continuous}} \;\le\;
    \mathrm{OPT}_{\text{slotted}} \;\le\; \text{any heuristic's total JCT}.

The last interval needs no capacity row, so no schedule is cut off whatever :math:`H`
is; a finer grid (option ``slot``) gives a tighter bound.

Size: :math:`\sum_j |\{t : b_{t+1} > r_j\}| + n` columns, :math:`2n + T` rows.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.errors import InvalidOption
from optsched.options import declares
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram
from optsched.tiresias.model import (
    DEFAULT_MAX_COLUMNS,
    TiresiasModel,
    build_model,
    check_size,
    slotted,
)

__all__ = ["lp_bound", "build_bound_program", "DEFAULT_LP_SLOTS"]


def _check_grid(slot, max_slots) -> None:
    if slot is not None and (isinstance(slot, bool) or not isinstance(
            slot, (int, float, np.integer, np.floating)) or not math.isfinite(slot)
            or slot <= 0):
        raise InvalidOption("slot", slot, "must be a finite number of seconds > 0")
    if isinstance(max_slots, bool) or not isinstance(max_slots, (int, np.integer)) \
            or max_slots < 1:
        raise InvalidOption("max_slots", max_slots, "must be an integer >= 1")

#: Target number of intervals of the bound's grid when ``slot`` is not given (an LP, so
#: a finer grid than the exact MILP's costs little and tightens the bound).
DEFAULT_LP_SLOTS = 400


def build_bound_program(model: TiresiasModel, delta: float, T: int) -> LinearProgram:
    """The LP of the module docstring on intervals of ``delta`` seconds up to ``T * delta``
    plus the open last interval."""
    n = model.n_jobs
    b = np.arange(T + 1, dtype=float) * delta
    ends = np.append(b[1:], np.inf)          # b_{t+1}; the last interval is open
    starts = b
    # usable (job, interval) pairs: the interval ends after the arrival
    jj, tt = np.nonzero(ends[None, :] > model.r[:, None] + 1e-9)
    s = np.maximum(starts[tt], model.r[jj])
    d = model.d_min
    lp = LinearProgram(sense="min", name="tiresias-bound")
    with np.errstate(invalid="ignore"):
        y_ub = np.minimum(1.0, (ends[tt] - s) / d[jj])
    y = lp.add_variables("y", jj.size, lb=0.0, ub=y_ub)
    C = lp.add_variables("C", n, lb=model.r + d, cost=1.0)
    lp.offset = -float(model.r.sum())
    lp.add_constraints("work", rows=jj, cols=y.index, vals=1.0, lb=1.0, ub=1.0, n_rows=n)
    fin = np.flatnonzero(tt < T)
    lp.add_constraints("capacity", rows=tt[fin], cols=y.index[fin],
                       vals=(model.g[jj[fin]] * d[jj[fin]]).astype(float),
                       ub=model.M * delta, n_rows=T)
    # C_j - sum_t s_jt y_jt >= d_j / 2
    lp.add_constraints("mean_busy", rows=np.concatenate([np.arange(n), jj]),
                       cols=np.concatenate([C.index, y.index]),
                       vals=np.concatenate([np.ones(n), -s]), lb=d / 2.0, n_rows=n)
    return lp


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", *, slot: float | None = None,
             max_slots: int = DEFAULT_LP_SLOTS, max_columns: int = DEFAULT_MAX_COLUMNS,
             **options: Any) -> Result:
    r"""The mean-busy-time interval LP's optimum as ``bound`` on the total JCT.

    Parameters
    ----------
    instance : Instance
        Jobs (arrival, gang size, work, rates) and cluster.
    backend : {"highs", "pyomo", "cvxpy"}
        Solver backend (:mod:`optsched.solvers`); the same optimum from each.
    slot : float, optional
        Interval length :math:`\Delta` in seconds (default: the horizon :math:`H` of the
        greedy slotted schedule, :func:`optsched.tiresias.model.slotted`, cut into
        ``max_slots`` intervals).
    max_slots : int
        Number of intervals up to :math:`H` when ``slot`` is not given.
    max_columns : int
        Refuse (:class:`~optsched.errors.ModelTooLarge`) a larger LP before it is built.
    **options
        Solver options (``time_limit``, ``solver``, ``threads``, ...).

    Returns
    -------
    Result
        ``bound`` the LP optimum (total JCT, s) when the LP solved to optimality, else
        ``None`` with the solver's status; ``extra`` the grid and the LP's size.

    Guarantee
    ---------
    :math:`\mathrm{LB} \le \mathrm{OPT}_{\text{continuous}} \le \mathrm{OPT}_{\text{slotted}}
    \le` the total JCT of any schedule (module docstring: every schedule maps to a
    feasible point of the LP with the same value).

    Complexity
    ----------
    One LP of :math:`O(nT)` columns and :math:`2n + T` rows (polynomial; interior point
    or simplex).

    References
    ----------
    * Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, NSDI'19,
      §2-3 (gangs, preemption, total JCT).
    * Goemans, Queyranne, Schulz, Skutella, Wang, Single machine scheduling with release
      dates, SIAM J. Discrete Math. 15(2), 2002 (mean busy time relaxations).
    """
    t0 = time.perf_counter()
    model = build_model(instance)
    _check_grid(slot, max_slots)
    # the greedy slotted schedule's horizon H: past it only the open interval is needed
    base = slotted(model)
    H = base.T * base.delta
    delta = float(slot) if slot is not None else max(H / max_slots, 1e-9)
    T = max(1, math.ceil(H / delta - 1e-9))
    columns = int((np.arange(1, T + 2)[None, :] * delta > model.r[:, None] + 1e-9)
                  .sum()) + model.n_jobs
    check_size("tiresias LP bound", columns, max_columns, n_jobs=model.n_jobs, slots=T,
               slot=delta)
    data = build_bound_program(model, delta, T).freeze()
    build = time.perf_counter() - t0
    res = solve_program(data, backend=backend, spent=build, **options)
    return Result(status=res.status,
                  bound=res.objective if res.status is Status.OPTIMAL else None,
                  model="tiresias", method="bound", backend=res.backend,
                  solver=res.solver, build_seconds=build + res.build_seconds,
                  solve_seconds=res.solve_seconds, duals=res.duals, message=res.message,
                  ratio_note="mean-busy-time interval LP: a lower bound on the total JCT "
                             "of every schedule (preemption anywhere)",
                  extra={"slot": delta, "slots": T, "horizon": H, "columns": data.n_cols,
                         "rows": data.n_rows, "time_limit": res.extra.get("time_limit")})
