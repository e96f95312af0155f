r"""Salus heuristics: the lane manager, first-fit(-decreasing) and LPT over lanes.

All build a lane plan for the same objectives as :func:`optsched.salus.exact` (option
``objective``: ``"makespan"``, ``"admitted"`` or ``"gpus"``) and realise it with the
same schedule (option ``realize``), so they compare with the exact optimum directly.

**Horizon.** With ``instance.horizon`` set, the exact model requires
:math:`C \le \text{horizon} - \text{release}` for every objective. Every heuristic
honours it as a second fit condition next to memory: a placement of job i on GPU g is
kept only if the GPU's realised end with i, :func:`~optsched.salus.model.gpu_end` in the
realisation the result uses (``"fluid"``: :math:`\text{release} + \max(\max_l S_l,
W_g)`; ``"serial"``: the last completion of the serial schedule), stays within the
horizon. A GPU's end depends on its own jobs only, and it was checked when its last job
was added, so the final plan ends within the horizon, in the realisation reported.
For ``"admitted"`` a job is therefore admitted only if the plan stays within the
horizon with it.

A job a static plan cannot place (memory, or the horizon; Salus would queue it until a
lane frees) is left out for ``"admitted"``. For the other objectives the result has no
plan, with a message naming the job and, when the horizon refused it, the horizon and
the earliest end its memory-safe placements would give the plan. Its status is
``infeasible`` only when that is proved: the job fits no GPU even alone (memory, or the
horizon alone), so no plan exists, as the exact model finds. Otherwise it is
``not_found``: the rule's earlier choices left no room, while the exact model may well
find a plan (the lane manager does so often: lanes of exactly each first job's
:math:`P+T` leave too little room for a later job with a larger :math:`T`).
``extra["horizon_refused"]`` lists the jobs for which the horizon refused at least one
memory-safe placement.

* :func:`lane_manager`: Salus' ``GpuControlBlock::bestFitFor`` per job in FIFO order, on
  the first GPU that takes it: a new lane of exactly :math:`P+T` while un-laned memory
  allows, else the first existing lane (ascending available memory) that stays safe.
  Lanes are freed when empty (:class:`~optsched.salus.model.GpuLanes`). If the lane
  ``bestFitFor`` picks on a GPU would end that GPU after the horizon, the job is taken
  off again and the next GPU is tried (Salus' lane choice on a GPU is not revised).
* :func:`ffd`: first-fit decreasing by peak :math:`P+T` into **one** lane per GPU (the
  memory-optimal layout, by the merging lemma); ``order="fifo"`` is plain first fit.
  A GPU takes the job if memory and the horizon allow.
* :func:`lpt`: longest serial work :math:`n_i d_i` first; each job goes where the
  resulting GPU makespan :math:`\max(\max_l S_l, W_g)` is smallest, into an existing
  lane or a new one, as long as the GPU's lanes stay within its memory and the GPU's
  realised end within the horizon.
* :func:`improve_plan`: iterated local search (moves and swaps of the jobs of a GPU of
  largest makespan, balancing moves between GPUs) that lowers a plan's makespan; the
  exact model starts from it.

Bound (GPUs used, identical GPUs of memory :math:`M`; proved in ``docs/salus.md``)
-------------------------------------------------------------------------------------
First fit into one lane per GPU, in **any** job order (so ``ffd`` with either order),
without a horizon that refuses a placement, opens :math:`k` GPUs with

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
own (3 per GPU) while one lane holds :math:`(M - T)/\varepsilon` of them. The bound
counts memory only: once the horizon refuses a placement (``extra["horizon_refused"]``
non-empty), time decides too (two jobs with :math:`u = 1` and serial work above half
the horizon cannot share a GPU) and ``ffd`` reports no ratio.
"""

from __future__ import annotations

import math
import time

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize
from optsched.options import declares
from optsched.salus.bounds import ff_gpu_bound
from optsched.salus.model import (
    GpuLanes,
    LanePlan,
    SalusView,
    _le,
    check_objective,
    check_realize,
    gpu_end,
    lane_need,
    result_of_plan,
    salus_view,
)

__all__ = ["lane_manager", "ffd", "lpt", "improve_plan"]

NO_RATIO = "no constant ratio against the exact optimum is known for this rule"


class _Horizon:
    """``instance.horizon`` as a fit condition: a placement is kept only if its GPU's
    realised end (:func:`~optsched.salus.model.gpu_end`, the realisation the result
    uses) stays within the horizon. ``refused`` records, per job, the earliest end of a
    memory-safe placement the horizon refused."""

    def __init__(self, instance: Instance, view: SalusView, realize: str):
        self.limit = instance.horizon
        self.view = view
        self.realize = realize
        self.refused: dict[int, float] = {}

    def admits(self, i: int, g: int, lanes: list[list[int]]) -> bool:
        """Whether GPU g may run ``lanes`` (job i's candidate placement) in time."""
        if self.limit is None:
            return True
        end = gpu_end(self.view, g, lanes, self.realize)
        if _le(end, self.limit):
            return True
        self.refused[i] = min(end, self.refused.get(i, math.inf))
        return False

    def extra(self) -> dict:
        return {"horizon": self.limit,
                "horizon_refused": sorted(self.view.ids[i] for i in self.refused)}


def _unplaced(instance: Instance, view: SalusView, i: int, method: str, objective: str,
              seconds: float, horizon: _Horizon) -> Result:
    """The result of a rule that could not place job ``i``: ``infeasible`` only when job
    ``i`` has no placement even alone (no GPU it can use holds :math:`P_i + T_i`, or,
    with a horizon, alone it ends after the horizon on every such GPU), which proves that
    no plan exists; otherwise ``not_found``, the rule's failure, no proof."""
    alone = [g for g in range(view.n_gpus) if view.fits(i, g)]
    if horizon.limit is not None:
        alone = [g for g in alone
                 if _le(gpu_end(view, g, [[i]], horizon.realize), horizon.limit)]
    if not alone:
        status = Status.INFEASIBLE
        if any(view.fits(i, g) for g in range(view.n_gpus)):
            msg = (f"job {view.ids[i]!r} ends after the horizon {horizon.limit:g} s on every "
                   f"GPU that holds it, even alone ({horizon.realize} realisation): no plan "
                   f"places every job")
        else:
            msg = (f"job {view.ids[i]!r} fits no GPU it can use, even alone (P+T = "
                   f"{view.peak[i]:g} MB): no plan places every job")
    elif i in horizon.refused:
        # memory would take it, time would not: name the horizon and the end it forces
        status = Status.NOT_FOUND
        msg = (f"job {view.ids[i]!r} fits no GPU within the horizon {horizon.limit:g} s in "
               f"{method}'s plan: placed where memory allows, the plan would end at "
               f"{horizon.refused[i]:g} s at the earliest ({horizon.realize} realisation); "
               f"alone it would fit GPU {alone[0]}, so this is the rule's failure, not a "
               f"proof that no plan exists")
    else:
        status = Status.NOT_FOUND
        msg = (f"job {view.ids[i]!r} fits no GPU in {method}'s plan (P+T = "
               f"{view.peak[i]:g} MB){_WHY.get(method, '')}; alone it would fit GPU "
               f"{alone[0]}, so this is the rule's failure, not a proof that no plan exists")
    return finalize(instance, None, status=status, model="salus", method=method,
                    solve_seconds=seconds, message=msg,
                    extra={"objective_kind": objective, **horizon.extra()})


_WHY = {"lane_manager": (": the lanes opened for the jobs before it, each of exactly its "
                         "first job's P+T, leave no GPU with that much un-laned memory and "
                         "no lane it joins safely; Salus would queue it until a lane frees, "
                         "which a static plan (every job resident at once) cannot")}


@declares()
def lane_manager(instance: Instance, *, objective: str = "makespan", realize: str = "fluid",
                 shared_lanes: bool = True) -> Result:
    r"""Salus' lane manager (``GpuControlBlock::bestFitFor``), jobs in instance (FIFO) order.

    Each job goes to the first GPU that takes it: a new lane of exactly :math:`P + T` while
    un-laned memory allows, else the first existing lane (ascending available memory) that
    stays safe. With ``instance.horizon`` set, a GPU keeps the job only if its realised end
    stays within the horizon; otherwise the next GPU is tried.

    Parameters
    ----------
    instance : Instance
        Jobs and GPUs, as :func:`optsched.salus.exact.exact`.
    objective : {"makespan", "admitted", "gpus"}
        The objective the plan is scored under.
    realize : {"fluid", "serial"}
        The schedule built from the plan.
    shared_lanes : bool
        Let a job join an existing lane (Salus' rule); ``False`` opens lanes only.

    Returns
    -------
    Result
        The plan's objective and its realised, validated schedule; ``ratio=None``. When
        a job finds no place (objectives ``"makespan"`` and ``"gpus"``): status
        ``infeasible`` if it fits no GPU even alone (proof that no plan exists), else
        ``not_found`` (below), no schedule, a message naming the job.

    Notes
    -----
    The case it cannot handle. The rule fails on job :math:`i` exactly when, after jobs
    :math:`1..i-1` were placed by it, every GPU :math:`g` that job :math:`i` can use has
    un-laned memory :math:`M_g - \sum_{l} C_l < P_i + T_i` and no lane :math:`l` of it (capacity
    :math:`C_l`, jobs :math:`J_l`) with
    :math:`\sum_{J_l} P + P_i + \max(\max_{J_l} T, T_i) \le C_l` (nor, with a
    horizon, one that keeps the GPU's end within it). A lane is opened at exactly its
    first job's :math:`P + T`, so a job joins it only if :math:`P_i + \max(T_1, T_i) \le
    T_1` for its first job 1 (and less once more have joined): lanes are rarely shared, and
    once they have partitioned a GPU's memory, a later job with a larger :math:`T` fits
    nowhere. Salus queues such a job until a lane frees (``LaneMgr::processRequests``);
    a static plan, with every job resident at once, has no such time, so the result is
    ``not_found`` while the exact model, which sizes the lanes together, may find a plan
    (the 11 CNN training jobs of ``workloads.csv`` on 2 x 16 GB, or 16 and 160 random
    ones on 2 and 20 GPUs: ``tests/salus/test_salus_heuristics.py``). Simulating
    :class:`~optsched.salus.policy.SalusPolicy` runs the queueing rule over time.

    Guarantee
    ---------
    Memory-safe: every lane holds :math:`\sum P + \max T \le M`. No approximation ratio:
    jobs :math:`(\varepsilon, M/3)` each get a lane of their own (3 per GPU) while one lane
    holds :math:`(M - T)/\varepsilon` of them, so the GPU count can exceed
    :math:`\mathrm{OPT}` by an unbounded factor.

    Complexity
    ----------
    :math:`O(n G L)` for :math:`L` lanes per GPU.

    References
    ----------
    * Yu and Chowdhury, MLSys 2020 (Salus), §3.2; Salus' ``GpuControlBlock::bestFitFor``.
    """
    check_objective(objective)
    check_realize(realize)
    t0 = time.perf_counter()
    view = salus_view(instance)
    hz = _Horizon(instance, view, realize)
    gpus = [GpuLanes(float(m), shared_lanes=shared_lanes) for m in view.memory]
    for i in range(view.n_jobs):
        for g, gl in enumerate(gpus):
            if not np.isfinite(view.d[i, g]):
                continue
            lane = gl.best_fit_for(str(i), float(view.P[i]), float(view.T[i]))
            if lane is None:
                continue
            if hz.admits(i, g, [[int(j) for j in ln.jobs] for ln in gl.lanes]):
                break
            gl.release(str(i))  # restores the GPU's lanes exactly (an emptied lane goes)
        else:
            if objective != "admitted":
                return _unplaced(instance, view, i, "lane_manager", objective,
                                 time.perf_counter() - t0, hz)
    plan: LanePlan = [[[int(j) for j in lane.jobs] for lane in gl.lanes] for gl in gpus]
    assert all(gl.safe() for gl in gpus)
    return result_of_plan(instance, view, plan, objective, realize, method="lane_manager",
                          solve_seconds=time.perf_counter() - t0, ratio=None,
                          ratio_note=NO_RATIO,
                          extra={"lane_capacity_mb": [[l.capacity for l in gl.lanes]
                                                      for gl in gpus], **hz.extra()})


@declares()
def ffd(instance: Instance, *, objective: str = "makespan", realize: str = "fluid",
        order: str = "decreasing") -> Result:
    r"""First fit into one lane per GPU, decreasing by peak :math:`P + T` (or in FIFO order).

    A GPU takes the job if its single lane stays safe and, with ``instance.horizon`` set,
    the GPU's realised end stays within the horizon.

    Parameters
    ----------
    instance : Instance
        Jobs and GPUs, as :func:`optsched.salus.exact.exact`.
    objective : {"makespan", "admitted", "gpus"}
        The objective the plan is scored under.
    realize : {"fluid", "serial"}
        The schedule built from the plan.
    order : {"decreasing", "fifo"}
        Job order.

    Returns
    -------
    Result
        The plan's objective and schedule; ``ratio`` :math:`2/(1-\theta) + 1` when the
        bound below applies (``objective="gpus"``; :math:`k \le 2\,\mathrm{OPT}/(1-\theta) + 1
        \le (2/(1-\theta) + 1)\,\mathrm{OPT}`), else ``None``; ``extra["ff_gpu_bound"]``.

    Guarantee
    ---------
    On identical GPUs of memory :math:`M` and with no placement refused by the horizon, in
    either order, :math:`k \le \max(1, 2\lceil \sum_i P_i/(M - T_{\max})\rceil - 1) \le
    \frac{2}{1-\theta}\mathrm{OPT} + 1`, :math:`\theta = T_{\max}/M`.

    Complexity
    ----------
    :math:`O(n \log n + nG)`.

    References
    ----------
    * Yu and Chowdhury, MLSys 2020 (Salus), §3.2; the bound is proved in
      ``docs/salus.md``.
    """
    from optsched.errors import InvalidOption

    check_objective(objective)
    check_realize(realize)
    if order not in ("decreasing", "fifo"):
        raise InvalidOption("order", order, "must be 'decreasing' or 'fifo'")
    t0 = time.perf_counter()
    view = salus_view(instance)
    hz = _Horizon(instance, view, realize)
    idx = list(range(view.n_jobs))
    if order == "decreasing":
        idx.sort(key=lambda i: (-view.peak[i], i))
    lanes: list[list[int]] = [[] for _ in range(view.n_gpus)]
    for i in idx:
        for g in range(view.n_gpus):
            cand = lanes[g] + [i]
            if np.isfinite(view.d[i, g]) and _le(lane_need(view.P[cand], view.T[cand]),
                                                 view.memory[g]) and hz.admits(i, g, [cand]):
                lanes[g].append(i)
                break
        else:
            if objective != "admitted":
                return _unplaced(instance, view, i, "ffd", objective, time.perf_counter() - t0,
                                 hz)
    plan: LanePlan = [[lane] if lane else [] for lane in lanes]
    bound = ff_gpu_bound(view)
    ratio, note = None, NO_RATIO
    if objective == "gpus" and bound is not None:
        theta = float(view.T.max() / view.memory[0])
        if hz.refused:
            note = (f"no ratio: the horizon refused memory-safe placements, and the "
                    f"first-fit bound {bound} counts memory only")
        else:
            # the horizon refused nothing: this is the memory-only first fit of the theorem
            ratio = 2.0 / (1.0 - theta) + 1.0
            note = (f"first fit, one lane per GPU: GPUs <= max(1, 2 ceil(sum P/(M - Tmax))"
                    f" - 1) = {bound} <= 2 OPT/(1 - theta) + 1, theta = Tmax/M = {theta:.3g}")
    return result_of_plan(instance, view, plan, objective, realize, method="ffd",
                          solve_seconds=time.perf_counter() - t0, ratio=ratio,
                          ratio_note=note, extra={"ff_gpu_bound": bound, "order": order,
                                                  **hz.extra()})


@declares()
def lpt(instance: Instance, *, objective: str = "makespan", realize: str = "fluid") -> Result:
    r"""Longest serial work first, each job to the lane (new or existing) that leaves its GPU's
    makespan :math:`\max(\max_l S_l, W_g)` smallest.

    Only memory-safe lanes whose GPU's realised end stays within ``instance.horizon`` (if
    set) are candidates.

    Parameters
    ----------
    instance : Instance
        Jobs and GPUs, as :func:`optsched.salus.exact.exact`.
    objective : {"makespan", "admitted", "gpus"}
        The objective the plan is scored under.
    realize : {"fluid", "serial"}
        The schedule built from the plan.

    Returns
    -------
    Result
        The plan's objective and schedule; ``ratio=None``.

    Guarantee
    ---------
    Memory-safe; :math:`C_{LPT} \ge C^*`. No ratio is proved for lanes with memory
    (Graham's :math:`4/3 - 1/(3G)` for identical machines does not carry over once memory
    restricts which jobs share a GPU). In the special case of :math:`G` identical GPUs,
    :math:`u_i = 1` for every job and memory for all jobs in one lane on any GPU, a GPU's
    makespan is its total work :math:`W_g` and the rule is Graham's LPT, so
    :math:`C_{LPT} \le (4/3 - 1/(3G))\,C^*` (tested against the exact optimum).

    Complexity
    ----------
    :math:`O(n \log n + n G L)`.

    References
    ----------
    * R. L. Graham, "Bounds on multiprocessing timing anomalies", SIAM J. Appl. Math.
      17(2), 1969 (LPT); Yu and Chowdhury, MLSys 2020 (Salus), §3.2 (lanes).
    """
    check_objective(objective)
    check_realize(realize)
    t0 = time.perf_counter()
    view = salus_view(instance)
    hz = _Horizon(instance, view, realize)
    G = view.n_gpus
    lanes: list[list[list[int]]] = [[] for _ in range(G)]
    serial: list[list[float]] = [[] for _ in range(G)]  # S_l per lane
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
                if hz.limit is not None:
                    trial = [ln + [i] if q == k else ln for q, ln in enumerate(lanes[g])]
                    if not hz.admits(i, g, trial if k < len(lanes[g]) else trial + [[i]]):
                        continue
                cg = max([s, work[g] + nd * view.u[i]]
                         + [x for q, x in enumerate(serial[g]) if q != k])
                key = (cg, mem, g, k)
                if best is None or key < best[0]:
                    best = (key, g, k, s, nd)
        if best is None:
            if objective == "admitted":
                continue
            return _unplaced(instance, view, i, "lpt", objective, time.perf_counter() - t0, hz)
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
                          ratio_note=NO_RATIO, extra=hz.extra())


# =========================================================================== local search
_EPS = 1e-9


class _State:
    """A plan under local search, with per-lane serial time :math:`S_l`, persistent sum
    and ephemeral peak, and per-GPU compute work :math:`W_g`, memory in use and
    :math:`C_g`, kept in step with the lanes, so that a move or a swap is evaluated in
    :math:`O(L_g + k)` for :math:`k` jobs in a lane."""

    def __init__(self, view: SalusView, plan: list[list[list[int]]]):
        self.v = view
        G = view.n_gpus
        nd = view.n[:, None] * view.d
        self.P = view.P.tolist()
        self.T = view.T.tolist()
        self.nd = [nd[:, g].tolist() for g in range(G)]
        self.wk = [(nd[:, g] * view.u).tolist() for g in range(G)]
        self.ok = [[view.fits(i, g) for g in range(G)] for i in range(view.n_jobs)]
        self.cap = (view.memory * (1 + 1e-12)).tolist()
        self.lanes = [[list(l) for l in lanes if l] for lanes in plan]
        self.ser: list[list[float]] = [[] for _ in range(G)]
        self.ps: list[list[float]] = [[] for _ in range(G)]
        self.tm: list[list[float]] = [[] for _ in range(G)]
        self.work = [0.0] * G
        self.mem = [0.0] * G
        self.c = [0.0] * G
        self.oser: list[list[float]] = [[] for _ in range(G)]   # max S of the other lanes
        for g in range(G):
            self.refresh(g)

    def refresh(self, g: int) -> None:
        lanes = self.lanes[g] = [l for l in self.lanes[g] if l]
        nd, wk, P, T = self.nd[g], self.wk[g], self.P, self.T
        self.ser[g] = [sum(nd[i] for i in l) for l in lanes]
        self.ps[g] = [sum(P[i] for i in l) for l in lanes]
        self.tm[g] = [max(T[i] for i in l) for l in lanes]
        self.work[g] = sum(wk[i] for l in lanes for i in l)
        self.mem[g] = sum(self.ps[g]) + sum(self.tm[g])
        self.c[g] = max(max(self.ser[g], default=0.0), self.work[g])
        ser = self.ser[g]
        self.oser[g] = [max((s for q, s in enumerate(ser) if q != k), default=0.0)
                        for k in range(len(ser))]

    def peak_without(self, g: int, k: int, i: int) -> float:
        """The ephemeral peak of lane k of GPU g without job i (0 if it empties)."""
        if self.T[i] < self.tm[g][k]:
            return self.tm[g][k]
        return max((self.T[j] for j in self.lanes[g][k] if j != i), default=0.0)

    def other_serial(self, g: int, k: int) -> float:
        return self.oser[g][k]

    # ------------------------------------------------------------ evaluations
    def removed(self, a: int, ka: int, i: int) -> tuple[float, float]:
        """(C_a, memory of a) with job i taken out of lane ka."""
        ps = self.ps[a][ka] - self.P[i]
        tm = self.peak_without(a, ka, i)
        alone = len(self.lanes[a][ka]) == 1
        need = 0.0 if alone else ps + tm
        mem = self.mem[a] - self.ps[a][ka] - self.tm[a][ka] + need
        ser = 0.0 if alone else self.ser[a][ka] - self.nd[a][i]
        return max(self.other_serial(a, ka), ser, self.work[a] - self.wk[a][i]), mem

    def added(self, b: int, k: int, i: int) -> tuple[float, float]:
        """(C_b, memory of b) with job i added to lane k (``len(lanes)``: a new lane)."""
        if k == len(self.lanes[b]):
            ser, mem, other = self.nd[b][i], self.mem[b] + self.P[i] + self.T[i], \
                max(self.ser[b], default=0.0)
        else:
            ser = self.ser[b][k] + self.nd[b][i]
            mem = self.mem[b] + self.P[i] + max(self.tm[b][k], self.T[i]) - self.tm[b][k]
            other = self.other_serial(b, k)
        return max(other, ser, self.work[b] + self.wk[b][i]), mem

    def moved_within(self, a: int, ka: int, i: int, k: int) -> tuple[float, float]:
        """(C_a, memory of a) with job i moved from lane ka to lane k of the same GPU."""
        ser = list(self.ser[a])
        mem = self.mem[a]
        alone = len(self.lanes[a][ka]) == 1
        ser[ka] -= self.nd[a][i]
        mem -= self.P[i] + self.tm[a][ka] - (0.0 if alone else self.peak_without(a, ka, i))
        if k == len(self.lanes[a]):
            ser.append(self.nd[a][i])
            mem += self.P[i] + self.T[i]
        else:
            ser[k] += self.nd[a][i]
            mem += self.P[i] + max(self.tm[a][k], self.T[i]) - self.tm[a][k]
        if alone:
            ser[ka] = 0.0
        return max(max(ser), self.work[a]), mem

    def exchanged(self, a: int, ka: int, i: int, j: int) -> tuple[float, float]:
        """(C_a, memory of a) with job i of lane ka replaced by job j."""
        ps = self.ps[a][ka] - self.P[i] + self.P[j]
        tm = max(self.peak_without(a, ka, i), self.T[j])
        mem = self.mem[a] - self.ps[a][ka] - self.tm[a][ka] + ps + tm
        ser = self.ser[a][ka] - self.nd[a][i] + self.nd[a][j]
        work = self.work[a] - self.wk[a][i] + self.wk[a][j]
        return max(self.other_serial(a, ka), ser, work), mem

    # ------------------------------------------------------------ changes
    def apply(self, step: tuple) -> None:
        if step[0] == "move":
            _, a, ka, i, b, k = step
            if k == len(self.lanes[b]):
                self.lanes[b].append([i])
            else:
                self.lanes[b][k].append(i)
            self.lanes[a][ka].remove(i)
        else:
            _, a, ka, i, b, kb, j = step
            la, lb = self.lanes[a][ka], self.lanes[b][kb]
            la[la.index(i)] = j
            lb[lb.index(j)] = i
        self.refresh(a)
        if b != a:
            self.refresh(b)

    def makespans(self) -> np.ndarray:
        return np.array(self.c)

    def plan(self) -> list[list[list[int]]]:
        return [[list(l) for l in lanes if l] for lanes in self.lanes]


def _targets(st: _State, i: int, g: int, L: np.ndarray) -> range:
    """Lanes of GPU g job i may join (existing ones, and a new one if the limit allows)."""
    if not st.ok[i][g]:
        return range(0)
    return range(len(st.lanes[g]) + (1 if len(st.lanes[g]) < L[g] else 0))


def _steps(st: _State, a: int, b: int, L: np.ndarray, limit: float):
    """Every move of a job of GPU a to GPU b (a lane of b, or another lane of a when
    ``a == b``) and every swap of a job of a with one of b: ``(step, C_a, C_b)`` for
    those memory admits and that leave GPU a below ``limit``."""
    cap_a, cap_b = st.cap[a], st.cap[b]
    for ka, lane_a in enumerate(st.lanes[a]):
        for i in lane_a:
            if a == b:
                for k in _targets(st, i, a, L):
                    if k == ka or (k == len(st.lanes[a]) and len(lane_a) == 1):
                        continue
                    c, mem = st.moved_within(a, ka, i, k)
                    if mem <= cap_a:
                        yield ("move", a, ka, i, a, k), c, c
                continue
            c_rest, mem_rest = st.removed(a, ka, i)
            if mem_rest > cap_a:
                continue
            for k in _targets(st, i, b, L) if c_rest < limit else ():
                c_b, mem_b = st.added(b, k, i)
                if mem_b <= cap_b:
                    yield ("move", a, ka, i, b, k), c_rest, c_b
            if not st.ok[i][b]:
                continue
            for kb, lane_b in enumerate(st.lanes[b]):
                for j in lane_b:
                    if not st.ok[j][a]:
                        continue
                    c_a, mem_a = st.exchanged(a, ka, i, j)
                    if mem_a > cap_a or c_a >= limit:
                        continue
                    c_b, mem_b = st.exchanged(b, kb, j, i)
                    if mem_b <= cap_b:
                        yield ("swap", a, ka, i, b, kb, j), c_a, c_b


def _best_step(st: _State, a: int, L: np.ndarray):
    """The move or swap from critical GPU ``a`` that lowers the larger of the changed
    GPUs' makespans most, below ``C_a``; ``None`` if none does."""
    ca = st.c[a]
    limit = ca - _EPS * max(1.0, ca)
    best = None
    for b in range(st.v.n_gpus):
        for step, c_a, c_b in _steps(st, a, b, L, limit):
            c = max(c_a, c_b)
            if c < limit and (best is None or c < best[0]):
                best = (c, step)
    return best


def _descend(st: _State, L: np.ndarray, max_steps: int, deadline: float) -> None:
    for _ in range(max_steps):
        if time.perf_counter() >= deadline:
            return
        cs = st.makespans()
        top = float(cs.max(initial=0.0))
        step = None
        for a in np.flatnonzero(cs >= top - _EPS * max(1.0, top)).tolist():
            step = _best_step(st, a, L)
            if step is not None:
                break
        if step is None:
            step = _balance_step(st, L, cs, top)
        if step is None:
            return
        st.apply(step[1])


def _balance_step(st: _State, L: np.ndarray, cs: np.ndarray, top: float):
    r"""The first move or swap between two GPUs a, b (a from the most loaded down, b
    from the least loaded up, :math:`C_a > C_b`) that keeps both below the plan's
    makespan ``top`` and lowers :math:`C_a^2 + C_b^2`: it leaves the makespan and lowers
    :math:`\sum_g C_g^2`, so descents still end, and it frees room on loaded GPUs for
    the next step on a critical one. ``None`` if there is none."""
    order = np.argsort(-cs, kind="stable").tolist()
    limit = top - _EPS * max(1.0, top)
    for a in order:
        ca = float(cs[a])
        for b in reversed(order):
            cb = float(cs[b])
            if cb >= ca - _EPS * max(1.0, ca):
                break
            before = ca * ca + cb * cb - _EPS * max(1.0, ca * ca)
            for step, c_a, c_b in _steps(st, a, b, L, limit):
                if max(c_a, c_b) < limit and c_a * c_a + c_b * c_b < before:
                    return (max(c_a, c_b), step)
    return None


def _kick(st: _State, L: np.ndarray, rng: np.random.Generator, jobs: int) -> None:
    """Move up to ``jobs`` random jobs of a critical GPU to random feasible lanes."""
    a = int(np.argmax(st.makespans()))
    for _ in range(jobs):
        members = [(k, i) for k, l in enumerate(st.lanes[a]) for i in l]
        if len(members) <= 1:
            return
        ka, i = members[int(rng.integers(len(members)))]
        if st.removed(a, ka, i)[1] > st.cap[a]:
            continue
        options = [(b, k) for b in range(st.v.n_gpus) if b != a
                   for k in _targets(st, i, b, L) if st.added(b, k, i)[1] <= st.cap[b]]
        if not options:
            continue
        b, k = options[int(rng.integers(len(options)))]
        st.apply(("move", a, ka, i, b, k))


def improve_plan(view: SalusView, plan: list[list[list[int]]], L: np.ndarray, *,
                 kicks: int = 30, max_steps: int = 2000, seed: int = 0,
                 deadline: float = math.inf) -> list[list[list[int]]]:
    r"""A plan of makespan at most ``plan``'s, by iterated local search (the exact
    model's MIP start).

    A lane plan has makespan :math:`\max_g C_g`, :math:`C_g = \max(\max_{l \text{ on }
    g} S_l, W_g)` (:func:`~optsched.salus.model.gpu_makespans`). The search lowers it by
    steps that keep every GPU memory-safe (:math:`\sum_{l \text{ on } g} (\sum_{i\in l}
    P_i + \max_{i\in l} T_i) \le M_g`) with at most ``L[g]`` lanes:

    * **move** a job of a GPU of largest :math:`C_g` to another lane of its GPU, to a
      lane of another GPU, or to a new lane;
    * **swap** it with a job of another GPU (each takes the other's lane).

    A step is taken when it lowers the larger of the changed GPUs' :math:`C` below the
    critical GPU's, the best such step first; a plan none of whose critical GPUs has
    one is a local optimum. From it, ``kicks`` perturbations (one to three jobs of a
    critical GPU moved to random feasible lanes, then the descent again) are tried,
    each kept only if it ends below the best plan so far. Seeded: reproducible.

    Parameters
    ----------
    view : SalusView
        The jobs and GPUs.
    plan : list
        A memory-safe lane plan (job indices), at most ``L[g]`` lanes on GPU g.
    L : numpy.ndarray
        Lanes per GPU at most.
    kicks : int
        Perturbations after the first local optimum (0: plain descent).
    max_steps : int
        Improving steps per descent at most.
    seed : int
        Seed of the perturbations.
    deadline : float
        ``time.perf_counter()`` value at which the search stops and returns its best
        plan (every step keeps the plan valid); without it (``inf``) the search is
        deterministic, with it the number of steps taken depends on the machine.

    Returns
    -------
    list
        The best plan found.

    Guarantee
    ---------
    The plan returned is memory-safe, places the jobs ``plan`` places, has at most
    ``L[g]`` lanes on GPU g and makespan :math:`\le` that of ``plan``. A heuristic: no
    bound on its distance to the optimum.

    Complexity
    ----------
    One step examines :math:`O(k(\sum_g L_g + n))` moves and swaps, :math:`k` the jobs
    of the critical GPU, each evaluated in :math:`O(k)`; at most ``max_steps`` steps per
    descent and ``kicks + 1`` descents.
    """
    rng = np.random.default_rng(seed)
    st = _State(view, plan)
    _descend(st, L, max_steps, deadline)
    best, best_c = st.plan(), float(st.makespans().max(initial=0.0))
    for _ in range(kicks):
        if time.perf_counter() >= deadline:
            break
        _kick(st, L, rng, int(rng.integers(1, 4)))
        _descend(st, L, max_steps, deadline)
        c = float(st.makespans().max(initial=0.0))
        if c < best_c - _EPS * max(1.0, best_c):
            best, best_c = st.plan(), c
        else:
            st = _State(view, best)
    return best
