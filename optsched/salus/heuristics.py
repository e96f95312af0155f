r"""Salus heuristics: the lane manager, first-fit(-decreasing) and LPT over lanes.

All build a lane plan for the same objectives as :func:`optsched.salus.exact` (option
``objective``: ``"makespan"``, ``"admitted"`` or ``"gpus"``) and realise it with the
same schedule (option ``realize``), so they compare with the exact optimum directly.
A job a static plan cannot place (Salus would queue it until a lane frees) is left out
for ``"admitted"``; for the other objectives the result is ``infeasible`` with a
message naming the job.

* :func:`lane_manager`: Salus' ``GpuControlBlock::bestFitFor`` per job in FIFO order, on
  the first GPU that takes it: a new lane of exactly :math:`P+T` while un-laned memory
  allows, else the first existing lane (ascending available memory) that stays safe.
  Lanes are freed when empty (:class:`~optsched.salus.lanes.GpuLanes`).
* :func:`ffd`: first-fit decreasing by peak :math:`P+T` into **one** lane per GPU (the
  memory-optimal layout, by the merging lemma); ``order="fifo"`` is plain first fit.
* :func:`lpt`: longest serial work :math:`n_i d_i` first; each job goes where the
  resulting GPU makespan :math:`\max(\max_l S_l, W_g)` is smallest, into an existing
  lane or a new one, as long as the GPU's lanes stay within its memory.

Bound (GPUs used, identical GPUs of memory :math:`M`; proved in ``docs/salus.md``)
-------------------------------------------------------------------------------------
First fit into one lane per GPU, in **any** job order (so ``ffd`` with either order),
opens :math:`k` GPUs with

.. math::

    k \;\le\; \max\Big(1,\; 2\Big\lceil \frac{\sum_i P_i}{M - T_{\max}} \Big\rceil - 1\Big)
    \;\le\; \frac{2}{1-\theta}\,\mathrm{OPT} + 1,
    \qquad \theta = T_{\max}/M,

because the first job of GPU :math:`m+1` did not fit GPU :math:`m`:
:math:`\sum_{B_m} P + P_j + \max(\cdot) > M`, so
:math:`P(B_m) + P(B_{m+1}) > M - T_{\max}` for consecutive GPUs; and
:math:`\mathrm{OPT} \ge (\sum_i P_i + T_{\max}) / M`. The dependence on :math:`\theta` is
necessary for first fit in arbitrary order: jobs alternating :math:`(\varepsilon,
\theta M)` and :math:`((1-\theta)M - \varepsilon, 0)` make it open one GPU per pair while
the optimum needs about :math:`1 + k(1-\theta)` GPUs. The lane manager has **no** bound
of this kind: jobs :math:`(\varepsilon, T)` with :math:`T = M/3` each get a lane of their
own (3 per GPU) while one lane holds :math:`(M - T)/\varepsilon` of them.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..instance import Instance
from ..options import declares
from ..registry import finalize
from ..result import Result, Status
from .exact import check_objective, check_realize, result_of_plan
from .lanes import GpuLanes, LanePlan, SalusView, _le, lane_need, salus_view

__all__ = ["lane_manager", "ffd", "lpt", "ff_gpu_bound"]

NO_RATIO = "no constant ratio against the exact optimum is known for this rule"


def ff_gpu_bound(view: SalusView) -> int | None:
    r"""The first-fit bound on GPUs, :math:`\max(1, 2\lceil \sum P/(M - T_{\max})\rceil - 1)`.

    ``None`` when the GPUs differ in memory or :math:`T_{\max} \ge M`.
    """
    if view.n_gpus == 0 or view.n_jobs == 0 or np.ptp(view.memory) > 0:
        return None
    M = float(view.memory[0])
    tmax = float(view.T.max())
    if tmax >= M:
        return None
    return max(1, 2 * math.ceil(float(view.P.sum()) / (M - tmax) - 1e-12) - 1)


def _unplaced(instance: Instance, view: SalusView, i: int, method: str, objective: str,
              seconds: float) -> Result:
    return finalize(instance, None, status=Status.INFEASIBLE, model="salus", method=method,
                    solve_seconds=seconds,
                    message=f"job {view.ids[i]!r} fits no GPU in this plan (P+T = "
                            f"{view.peak[i]:g} MB); Salus would queue it until a lane frees",
                    extra={"objective_kind": objective})


@declares()
def lane_manager(instance: Instance, *, objective: str = "makespan", realize: str = "fluid",
                 shared_lanes: bool = True) -> Result:
    """Salus' lane manager (module docstring), jobs in instance (FIFO) order."""
    check_objective(objective)
    check_realize(realize)
    t0 = time.perf_counter()
    view = salus_view(instance)
    gpus = [GpuLanes(float(m), shared_lanes=shared_lanes) for m in view.memory]
    where: dict[int, tuple[int, int]] = {}
    for i in range(view.n_jobs):
        for g, gl in enumerate(gpus):
            if not np.isfinite(view.d[i, g]):
                continue
            lane = gl.best_fit_for(str(i), float(view.P[i]), float(view.T[i]))
            if lane is not None:
                where[i] = (g, id(lane))
                break
        else:
            if objective != "admitted":
                return _unplaced(instance, view, i, "lane_manager", objective,
                                 time.perf_counter() - t0)
    plan: LanePlan = [[[int(j) for j in lane.jobs] for lane in gl.lanes] for gl in gpus]
    assert all(gl.safe() for gl in gpus)
    return result_of_plan(instance, view, plan, objective, realize, method="lane_manager",
                          solve_seconds=time.perf_counter() - t0, ratio=None,
                          ratio_note=NO_RATIO,
                          extra={"lane_capacity_mb": [[l.capacity for l in gl.lanes]
                                                      for gl in gpus]})


@declares()
def ffd(instance: Instance, *, objective: str = "makespan", realize: str = "fluid",
        order: str = "decreasing") -> Result:
    """First fit (decreasing by P + T, or FIFO) into one lane per GPU."""
    from ..errors import InvalidOption

    check_objective(objective)
    check_realize(realize)
    if order not in ("decreasing", "fifo"):
        raise InvalidOption("order", order, "must be 'decreasing' or 'fifo'")
    t0 = time.perf_counter()
    view = salus_view(instance)
    idx = list(range(view.n_jobs))
    if order == "decreasing":
        idx.sort(key=lambda i: (-view.peak[i], i))
    lanes: list[list[int]] = [[] for _ in range(view.n_gpus)]
    for i in idx:
        for g in range(view.n_gpus):
            cand = lanes[g] + [i]
            if np.isfinite(view.d[i, g]) and _le(lane_need(view.P[cand], view.T[cand]),
                                                 view.memory[g]):
                lanes[g].append(i)
                break
        else:
            if objective != "admitted":
                return _unplaced(instance, view, i, "ffd", objective, time.perf_counter() - t0)
    plan: LanePlan = [[lane] if lane else [] for lane in lanes]
    bound = ff_gpu_bound(view)
    ratio, note = None, NO_RATIO
    if objective == "gpus" and bound is not None:
        theta = float(view.T.max() / view.memory[0])
        ratio = 2.0 / (1.0 - theta) + 1.0
        note = (f"first fit, one lane per GPU: GPUs <= max(1, 2 ceil(sum P/(M - Tmax)) - 1) "
                f"= {bound} <= 2 OPT/(1 - theta) + 1, theta = Tmax/M = {theta:.3g}")
    return result_of_plan(instance, view, plan, objective, realize, method="ffd",
                          solve_seconds=time.perf_counter() - t0, ratio=ratio,
                          ratio_note=note, extra={"ff_gpu_bound": bound, "order": order})


@declares()
def lpt(instance: Instance, *, objective: str = "makespan", realize: str = "fluid") -> Result:
    """Longest serial work first, to the lane (new or existing) with the least makespan."""
    check_objective(objective)
    check_realize(realize)
    t0 = time.perf_counter()
    view = salus_view(instance)
    G = view.n_gpus
    lanes: list[list[list[int]]] = [[] for _ in range(G)]
    serial = [[] for _ in range(G)]          # S_l per lane
    work = np.zeros(G)                        # W_g
    best_nd = np.where(np.isfinite(view.d), view.d, np.inf).min(axis=1) * view.n
    for i in sorted(range(view.n_jobs), key=lambda i: (-best_nd[i], i)):
        best = None
        for g in range(G):
            if not view.fits(i, g):
                continue
            nd = float(view.n[i] * view.d[i, g])
            used = sum(lane_need(view.P[ln], view.T[ln]) for ln in lanes[g])
            for k in range(len(lanes[g]) + 1):
                if k < len(lanes[g]):
                    old = lane_need(view.P[lanes[g][k]], view.T[lanes[g][k]])
                    cand = lanes[g][k] + [i]
                    mem = used - old + lane_need(view.P[cand], view.T[cand])
                    s = serial[g][k] + nd
                else:
                    mem = used + float(view.peak[i])
                    s = nd
                if not _le(mem, view.memory[g]):
                    continue
                cg = max([s, work[g] + nd * view.u[i]]
                         + [x for q, x in enumerate(serial[g]) if q != k])
                key = (cg, mem, g, k)
                if best is None or key < best[0]:
                    best = (key, g, k, s, nd)
        if best is None:
            if objective == "admitted":
                continue
            return _unplaced(instance, view, i, "lpt", objective, time.perf_counter() - t0)
        _, g, k, s, nd = best
        if k == len(lanes[g]):
            lanes[g].append([i])
            serial[g].append(s)
        else:
            lanes[g][k].append(i)
            serial[g][k] = s
        work[g] += nd * view.u[i]
    return result_of_plan(instance, view, lanes, objective, realize, method="lpt",
                          solve_seconds=time.perf_counter() - t0, ratio=None,
                          ratio_note=NO_RATIO)
