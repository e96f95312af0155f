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
* :func:`improve_plan`: iterated local search (moves and swaps of the jobs of a GPU of
  largest makespan) that lowers a plan's makespan; the exact model starts from it.
* :func:`lpt`: longest serial work :math:`n_i d_i` first; each job goes where the
  resulting GPU makespan :math:`\max(\max_l S_l, W_g)` is smallest, into an existing
  lane or a new one, as long as the GPU's lanes stay within its memory and the GPU's
  realised end within the horizon.

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
    """Per-lane serial time, persistent sum and ephemeral peak; per-GPU compute work and
    memory in use, kept in step with the plan."""

    def __init__(self, view: SalusView, plan: list[list[list[int]]]):
        self.v = view
        self.lanes = [[list(l) for l in lanes if l] for lanes in plan]
        self.where: dict[int, tuple[int, int]] = {}
        for g, lanes in enumerate(self.lanes):
            for k, lane in enumerate(lanes):
                for i in lane:
                    self.where[i] = (g, k)

    # ---------------------------------------------------------------- measures
    def nd(self, i: int, g: int) -> float:
        return float(self.v.n[i] * self.v.d[i, g])

    def lane_need(self, lane: list[int]) -> float:
        if not lane:
            return 0.0
        return float(sum(self.v.P[i] for i in lane) + max(self.v.T[i] for i in lane))

    def gpu_mem(self, g: int, lanes: list[list[int]]) -> float:
        return sum(self.lane_need(l) for l in lanes)

    def gpu_c(self, g: int, lanes: list[list[int]]) -> float:
        serial = max((sum(self.nd(i, g) for i in l) for l in lanes if l), default=0.0)
        work = sum(self.nd(i, g) * float(self.v.u[i]) for l in lanes for i in l)
        return max(serial, work)

    def makespans(self) -> np.ndarray:
        return np.array([self.gpu_c(g, lanes) for g, lanes in enumerate(self.lanes)])

    def fits(self, g: int, lanes: list[list[int]]) -> bool:
        return self.gpu_mem(g, lanes) <= self.v.memory[g] * (1 + 1e-12)

    def plan(self) -> list[list[list[int]]]:
        return [[list(l) for l in lanes if l] for lanes in self.lanes]


def _without(lanes: list[list[int]], k: int, i: int) -> list[list[int]]:
    out = [list(l) for l in lanes]
    out[k].remove(i)
    return [l for l in out if l]


def _with(lanes: list[list[int]], k: int, i: int) -> list[list[int]]:
    """``lanes`` with job i added to lane k (k == len(lanes): a new lane)."""
    out = [list(l) for l in lanes]
    if k == len(out):
        out.append([i])
    else:
        out[k].append(i)
    return out


def _targets(st: _State, i: int, g: int, lanes: list[list[int]], L: np.ndarray):
    """Lanes of GPU g job i may join (existing ones, and a new one if the limit allows)."""
    if not st.v.fits(i, g):
        return []
    return list(range(len(lanes) + (1 if len(lanes) < L[g] else 0)))


def _best_step(st: _State, a: int, L: np.ndarray):
    """The move or swap from critical GPU ``a`` that lowers the larger of the changed
    GPUs' makespans most, below ``C_a``; ``None`` if none does."""
    v = st.v
    ca = st.gpu_c(a, st.lanes[a])
    best: tuple[float, list] | None = None
    for ka, lane_a in enumerate(st.lanes[a]):
        for i in lane_a:
            rest_a = _without(st.lanes[a], ka, i)
            # move within GPU a (lane serial times only)
            for k in _targets(st, i, a, rest_a, L):
                new_a = _with(rest_a, k, i)
                if new_a == st.lanes[a] or not st.fits(a, new_a):
                    continue
                c = st.gpu_c(a, new_a)
                if c < ca - _EPS * max(1.0, ca) and (best is None or c < best[0]):
                    best = (c, [(a, new_a)])
            c_rest = st.gpu_c(a, rest_a)
            for b in range(v.n_gpus):
                if b == a:
                    continue
                # move to GPU b
                for k in _targets(st, i, b, st.lanes[b], L):
                    new_b = _with(st.lanes[b], k, i)
                    if not st.fits(b, new_b):
                        continue
                    c = max(c_rest, st.gpu_c(b, new_b))
                    if c < ca - _EPS * max(1.0, ca) and (best is None or c < best[0]):
                        best = (c, [(a, rest_a), (b, new_b)])
                # swap with a job of GPU b
                if not v.fits(i, b):
                    continue
                for kb, lane_b in enumerate(st.lanes[b]):
                    for j in lane_b:
                        if not v.fits(j, a):
                            continue
                        na = [list(l) for l in st.lanes[a]]
                        nb = [list(l) for l in st.lanes[b]]
                        na[ka][na[ka].index(i)] = j
                        nb[kb][nb[kb].index(j)] = i
                        if not (st.fits(a, na) and st.fits(b, nb)):
                            continue
                        c = max(st.gpu_c(a, na), st.gpu_c(b, nb))
                        if c < ca - _EPS * max(1.0, ca) and (best is None or c < best[0]):
                            best = (c, [(a, na), (b, nb)])
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
        for g, lanes in step[1]:
            st.lanes[g] = [l for l in lanes if l]


def _balance_step(st: _State, L: np.ndarray, cs: np.ndarray, top: float):
    r"""The first move or swap between two GPUs a, b (a from the most loaded down, b
    from the least loaded up, :math:`C_a > C_b`) that keeps both below the plan's
    makespan ``top`` and lowers :math:`C_a^2 + C_b^2`: it leaves the makespan and lowers
    :math:`\sum_g C_g^2`, so descents still end, and it frees room on loaded GPUs for
    the next step on a critical one. ``None`` if there is none."""
    v = st.v
    order = np.argsort(-cs, kind="stable").tolist()
    limit = top - _EPS * max(1.0, top)
    for a in order:
        ca = float(cs[a])
        for b in reversed(order):
            cb = float(cs[b])
            if cb >= ca - _EPS * max(1.0, ca):
                break
            before = ca * ca + cb * cb - _EPS * max(1.0, ca * ca)
            for ka, lane_a in enumerate(st.lanes[a]):
                for i in lane_a:
                    rest_a = _without(st.lanes[a], ka, i)
                    c_rest = st.gpu_c(a, rest_a)
                    for k in _targets(st, i, b, st.lanes[b], L):
                        new_b = _with(st.lanes[b], k, i)
                        if not st.fits(b, new_b):
                            continue
                        c_b = st.gpu_c(b, new_b)
                        if c_b < limit and c_rest * c_rest + c_b * c_b < before:
                            return (max(c_rest, c_b), [(a, rest_a), (b, new_b)])
                    if not v.fits(i, b):
                        continue
                    for kb, lane_b in enumerate(st.lanes[b]):
                        for j in lane_b:
                            if not v.fits(j, a):
                                continue
                            na = [list(l) for l in st.lanes[a]]
                            nb = [list(l) for l in st.lanes[b]]
                            na[ka][na[ka].index(i)] = j
                            nb[kb][nb[kb].index(j)] = i
                            if not (st.fits(a, na) and st.fits(b, nb)):
                                continue
                            c_a, c_b = st.gpu_c(a, na), st.gpu_c(b, nb)
                            if max(c_a, c_b) < limit and c_a * c_a + c_b * c_b < before:
                                return (max(c_a, c_b), [(a, na), (b, nb)])
    return None


def _kick(st: _State, L: np.ndarray, rng: np.random.Generator, jobs: int) -> None:
    """Move up to ``jobs`` random jobs of a critical GPU to random feasible lanes."""
    cs = st.makespans()
    a = int(np.argmax(cs))
    for _ in range(jobs):
        members = [(k, i) for k, l in enumerate(st.lanes[a]) for i in l]
        if len(members) <= 1:
            return
        k, i = members[int(rng.integers(len(members)))]
        rest_a = _without(st.lanes[a], k, i)
        options = []
        for b in range(st.v.n_gpus):
            if b == a:
                continue
            for kb in _targets(st, i, b, st.lanes[b], L):
                nb = _with(st.lanes[b], kb, i)
                if st.fits(b, nb):
                    options.append((b, nb))
        if not options:
            continue
        b, nb = options[int(rng.integers(len(options)))]
        st.lanes[a] = rest_a
        st.lanes[b] = nb


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
