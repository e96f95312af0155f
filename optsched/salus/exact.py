r"""Exact Salus lane planning: a MILP over (GPU, lane) slots through the solver layer.

Model (Salus, Yu & Chowdhury, MLSys'20, §3-4; concurrency model in
:mod:`optsched.salus.model`)
-------------------------------------------------------------------------------------
Jobs :math:`i` (persistent :math:`P_i`, ephemeral :math:`T_i` MB; :math:`n_i`
iterations of :math:`d_{ig}` s; compute share :math:`u_i`; weight :math:`w_i`), GPUs
:math:`g` with :math:`M_g` MB, and :math:`L_g` candidate lanes per GPU. Variables:
:math:`x_{igl} \in \{0,1\}` (job i in lane l of GPU g), :math:`y_{gl} \in \{0,1\}`
(lane open), :math:`z_g \in \{0,1\}` (GPU used), :math:`\tau_{gl} \ge 0` (lane's
ephemeral peak), :math:`C \ge 0` (makespan).

.. math::

    \tau_{gl} &\ge T_i\,x_{igl}
        && \text{(lane peak)}\\
    \sum_l \Big(\sum_i P_i\,x_{igl} + \tau_{gl}\Big) &\le M_g\,z_g
        && \text{(safe lanes } C_{gl} = \textstyle\sum P + \tau
           \text{ within GPU memory)}\\
    x_{igl} \le y_{gl},\quad y_{g,l+1} &\le y_{gl},\quad x_{igl} = 0 \text{ for } l > i
        && \text{(symmetry breaking)}\\
    \sum_i n_i d_{ig}\,x_{igl} &\le C
        && \text{(a lane is serial)}\\
    \sum_{i,l} n_i d_{ig} u_i\,x_{igl} &\le C
        && \text{(the GPU's compute)}

Objectives (option ``objective``):

* ``"makespan"`` (default): every job placed (:math:`\sum_{gl} x_{igl} = 1`),
  :math:`\min C`. Exact for the fluid concurrency model: the fluid schedule of the
  optimal plan attains :math:`C` (:func:`~optsched.salus.model.fluid_schedule`).
* ``"admitted"``: :math:`\sum_{gl} x_{igl} \le 1`, :math:`\max \sum w_i x_{igl}`
  (inference packing; ``Job.weight`` defaults to 1, so it counts jobs).
* ``"gpus"``: every job placed, :math:`\min \sum_g z_g`.

With ``instance.horizon`` set, :math:`C \le \text{horizon} - \text{release}` holds for
every objective (admitted jobs, or the job set, must finish in time); without it the
time rows are only stated for ``"makespan"``.

Lanes per GPU: option ``lanes`` (an int, or ``None``). ``None`` means exact without a
lane limit: :math:`L_g = \min(n, \lfloor M_g / \min_i(P_i + T_i) \rfloor)` bounds the
number of non-empty lanes any safe plan can have. For ``"admitted"`` and ``"gpus"``
without a horizon, ``None`` uses one lane per GPU, which the merging lemma of
:mod:`optsched.salus.model` proves optimal. An explicit ``lanes=k`` is exact for the
restricted problem (at most k lanes per GPU).

Size: :math:`O(n \sum_g L_g)` binaries; the problem contains bin packing, so it is
strongly NP-hard and solved by branch and bound (``time_limit``, ``mip_gap``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.errors import InvalidOption
from optsched.options import declares
from optsched.salus.model import (
    OBJECTIVES,
    SENSE,
    LanePlan,
    SalusView,
    check_objective,
    check_realize,
    gpu_end,
    plan_objective,
    result_of_plan,
    salus_view,
)
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram

__all__ = ["exact", "OBJECTIVES", "SENSE", "check_objective", "check_realize", "heuristic_start",
           "lane_limits", "plan_objective", "result_of_plan"]

def lane_limits(view: SalusView, objective: str, lanes: int | None,
                timed: bool) -> np.ndarray:
    """Candidate lanes per GPU (see module docstring)."""
    if lanes is not None:
        if isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)) or lanes < 1:
            raise InvalidOption("lanes", lanes, "must be a positive integer or None")
        return np.full(view.n_gpus, min(int(lanes), max(view.n_jobs, 1)))
    if objective != "makespan" and not timed:
        return np.ones(view.n_gpus, dtype=int)
    smallest = float(view.peak.min()) if view.n_jobs else 1.0
    return np.array([max(1, min(view.n_jobs, int(math.floor(m / smallest * (1 + 1e-12)))))
                     for m in view.memory], dtype=int)


def _program(view: SalusView, objective: str, L: np.ndarray, horizon: float | None
             ) -> tuple[LinearProgram, list[tuple[int, int, int]]]:
    n, G = view.n_jobs, view.n_gpus
    slots = [(g, l) for g in range(G) for l in range(int(L[g]))]
    sidx = {s: k for k, s in enumerate(slots)}
    trip = [(i, g, l) for i in range(n) for (g, l) in slots if l <= i and view.fits(i, g)]
    lp = LinearProgram(sense=SENSE[objective], name=f"salus-{objective}")
    ti = np.array([t[0] for t in trip], dtype=np.int64)
    tg = np.array([t[1] for t in trip], dtype=np.int64)
    ts = np.array([sidx[(t[1], t[2])] for t in trip], dtype=np.int64)
    cost_x = view.w[ti] if objective == "admitted" else 0.0
    x = lp.add_variables("x", len(trip), lb=0, ub=1, integer=True, cost=cost_x).index
    y = lp.add_variables("y", len(slots), lb=0, ub=1, integer=True).index
    z = lp.add_variables("z", G, lb=0, ub=1, integer=True,
                         cost=1.0 if objective == "gpus" else 0.0).index
    tmax = float(view.T.max()) if n else 0.0
    tau = lp.add_variables("tau", len(slots), lb=0, ub=tmax).index
    timed = objective == "makespan" or horizon is not None
    ub_c = np.inf if horizon is None else horizon
    # the longest job bounds the makespan from below (the lane rows then prove a horizon
    # shorter than it infeasible, as without the bound)
    lb_c = longest_job(view) if objective == "makespan" else 0.0
    cmax = lp.add_variables("C", 1, lb=lb_c if lb_c <= ub_c else 0.0, ub=ub_c,
                            cost=1.0 if objective == "makespan" else 0.0).index
    m = len(trip)
    r = np.arange(m)
    if objective == "admitted":
        lp.add_constraints("assign", rows=ti, cols=x, vals=1.0, ub=1, n_rows=n)
    else:
        lp.add_constraints("assign", rows=ti, cols=x, vals=1.0, lb=1, ub=1, n_rows=n)
    # tau_s - T_i x >= 0
    lp.add_constraints("peak", rows=np.concatenate([r, r]), cols=np.concatenate([tau[ts], x]),
                       vals=np.concatenate([np.ones(m), -view.T[ti]]), lb=0, n_rows=m)
    # x - y_s <= 0
    lp.add_constraints("open", rows=np.concatenate([r, r]), cols=np.concatenate([x, y[ts]]),
                       vals=np.concatenate([np.ones(m), -np.ones(m)]), ub=0, n_rows=m)
    order = [(sidx[(g, l)], sidx[(g, l + 1)]) for (g, l) in slots if l + 1 < L[g]]
    if order:
        a, b = np.array(order).T
        k = np.arange(len(order))
        lp.add_constraints("lane_order", rows=np.concatenate([k, k]),
                           cols=np.concatenate([y[b], y[a]]),
                           vals=np.concatenate([np.ones(len(k)), -np.ones(len(k))]), ub=0,
                           n_rows=len(k))
    # sum_l (sum_i P_i x + tau) - M_g z_g <= 0
    sg = np.array([g for (g, _) in slots], dtype=np.int64)
    lp.add_constraints(
        "memory", rows=np.concatenate([tg, sg, np.arange(G)]),
        cols=np.concatenate([x, tau, z]),
        vals=np.concatenate([view.P[ti], np.ones(len(slots)), -view.memory]), ub=0, n_rows=G)
    if objective == "gpus":
        same = [(g, g + 1) for g in range(G - 1)
                if view.gpu_type[g] == view.gpu_type[g + 1] and view.memory[g] ==
                view.memory[g + 1] and np.array_equal(view.d[:, g], view.d[:, g + 1])]
        if same:
            a, b = np.array(same).T
            k = np.arange(len(same))
            lp.add_constraints("gpu_order", rows=np.concatenate([k, k]),
                               cols=np.concatenate([z[b], z[a]]),
                               vals=np.concatenate([np.ones(len(k)), -np.ones(len(k))]),
                               ub=0, n_rows=len(k))
    if timed:
        nd = view.n[ti] * view.d[ti, tg]
        lp.add_constraints("lane_serial", rows=np.concatenate([ts, np.arange(len(slots))]),
                           cols=np.concatenate([x, np.repeat(cmax, len(slots))]),
                           vals=np.concatenate([nd, -np.ones(len(slots))]), ub=0,
                           n_rows=len(slots))
        lp.add_constraints("gpu_compute", rows=np.concatenate([tg, np.arange(G)]),
                           cols=np.concatenate([x, np.repeat(cmax, G)]),
                           vals=np.concatenate([nd * view.u[ti], -np.ones(G)]), ub=0,
                           n_rows=G)
    return lp, trip


def longest_job(view: SalusView) -> float:
    r"""A lower bound on the makespan of every plan that places every job:
    :math:`C \ge \max_i \min_{g \text{ fits } i} n_i d_{ig}`, as job :math:`i` runs
    alone-or-shared in one lane, whose serial time is at least its own. The LP
    relaxation does not imply it (it may spread a job over several lanes), so it is
    stated as the lower bound of :math:`C`; it holds at every integer point."""
    best = [min((float(view.n[i] * view.d[i, g]) for g in range(view.n_gpus)
                 if view.fits(i, g)), default=0.0) for i in range(view.n_jobs)]
    return max(best, default=0.0)


def balanced_plan(view: SalusView, L: np.ndarray, thrifty: bool = False) -> list | None:
    r"""A lane plan for the makespan, as a MIP start: jobs in decreasing serial time
    :math:`n_i d_{ig}`, each put where the plan's makespan (largest lane serial time or
    GPU compute) grows least, ties to the least loaded GPU and lane (``thrifty``: to the
    least memory taken first): a new lane of a GPU or an existing lane, whichever memory
    admits (each lane holds its jobs' :math:`P` and its largest :math:`T`; at most
    ``L[g]`` lanes). ``None`` when a job fits nowhere. Lanes as lists of job ids, as
    the heuristics' ``extra["plan"]``.
    :math:`O(n \sum_g L_g)`."""
    G = view.n_gpus
    lanes: list[list[list[int]]] = [[] for _ in range(G)]
    lane_t: list[list[float]] = [[] for _ in range(G)]   # serial time per lane
    lane_T: list[list[float]] = [[] for _ in range(G)]   # largest ephemeral per lane
    mem = np.zeros(G)
    compute = np.zeros(G)
    C = 0.0
    serial = np.where(np.isfinite(view.d), view.n[:, None] * view.d, np.inf).min(axis=1)
    for i in np.argsort(-serial, kind="stable").tolist():
        P, T = float(view.P[i]), float(view.T[i])
        best = None
        for g in range(G):
            if not view.fits(i, g):
                continue
            w = float(view.n[i] * view.d[i, g])
            cg = compute[g] + w * float(view.u[i])
            opts = [(-1, P + T)] if len(lanes[g]) < L[g] else []
            opts += [(ll, P + max(0.0, T - lane_T[g][ll])) for ll in range(len(lanes[g]))]
            for ll, extra in opts:
                if mem[g] + extra > view.memory[g] * (1 + 1e-12):
                    continue
                lt = w + (lane_t[g][ll] if ll >= 0 else 0.0)
                key = ((max(C, lt, cg), extra, lt + cg) if thrifty else
                       (max(C, lt, cg), lt + cg, extra))
                if best is None or key < best[0]:
                    best = (key, g, ll, extra, w, cg, lt)
        if best is None:
            return None
        (c_new, _, _), g, ll, extra, w, cg, lt = best
        c_new = max(C, lt, cg)
        if ll < 0:
            lanes[g].append([])
            lane_t[g].append(0.0)
            lane_T[g].append(0.0)
        lanes[g][ll].append(view.ids[i])
        lane_t[g][ll] = lt
        lane_T[g][ll] = max(lane_T[g][ll], T)
        mem[g] += extra
        compute[g] = cg
        C = c_new
    return lanes


def heuristic_start(instance: Instance, view: SalusView, objective: str, L: np.ndarray,
                    realize: str, trip: list[tuple[int, int, int]],
                    horizon: float | None) -> tuple[dict[str, np.ndarray], str] | None:
    """The MILP point of a heuristic's lane plan, with the heuristic's name; ``None`` if
    none fits. For the makespan, the best of LPT, first-fit decreasing (one lane per GPU)
    and :func:`balanced_plan`; otherwise first-fit decreasing, or LPT if it finds no plan
    or uses more lanes than the program offers.

    Lanes of a GPU are numbered in order of their smallest job index, so lane ``l``
    holds only jobs ``i >= l`` and open lanes come first (the symmetry-breaking rows);
    ``tau`` is each lane's largest ephemeral need, ``C`` the largest lane or GPU work.
    """
    from optsched.salus import heuristics

    names = ("lpt", "ffd") if objective == "makespan" else ("ffd", "lpt")
    pos = {vid: i for i, vid in enumerate(view.ids)}
    col = {t: c for c, t in enumerate(trip)}
    plans: list[tuple[str, list]] = []
    for name in names:
        try:
            res = getattr(heuristics, name)(instance, objective=objective, realize=realize)
        except Exception:  # noqa: BLE001 - a heuristic that finds no plan gives no start
            continue
        if res.success and "plan" in res.extra:
            plans.append((name, res.extra["plan"]))
    if objective == "makespan":
        for thrifty in (False, True):
            balanced = balanced_plan(view, L, thrifty)
            if balanced is not None:
                plans.append(("balanced", balanced))
    found = []
    for name, gpus in plans:
        if len(gpus) != view.n_gpus or any(len(lanes) > L[g] for g, lanes in enumerate(gpus)):
            continue
        slots = [(g, ll) for g in range(view.n_gpus) for ll in range(int(L[g]))]
        sidx = {sl: k for k, sl in enumerate(slots)}
        x = np.zeros(len(trip))
        y = np.zeros(len(slots))
        z = np.zeros(view.n_gpus)
        tau = np.zeros(len(slots))
        lane_work = np.zeros(len(slots))
        gpu_work = np.zeros(view.n_gpus)
        ok = True
        for g, lanes in enumerate(gpus):
            members = sorted((sorted(pos[j] for j in lane) for lane in lanes if lane),
                             key=lambda m: m[0])
            for ll, lane in enumerate(members):
                k = sidx[(g, ll)]
                y[k] = z[g] = 1.0
                for i in lane:
                    c = col.get((i, g, ll))
                    if c is None:
                        ok = False
                        break
                    x[c] = 1.0
                    tau[k] = max(tau[k], float(view.T[i]))
                    lane_work[k] += float(view.n[i] * view.d[i, g])
                    gpu_work[g] += float(view.n[i] * view.d[i, g] * view.u[i])
        if not ok:
            continue
        C = max(float(lane_work.max(initial=0.0)), float(gpu_work.max(initial=0.0)))
        if horizon is not None and C > horizon:
            continue
        C = max(C, longest_job(view)) if objective == "makespan" else C
        found.append(({"x": x, "y": y, "z": z, "tau": tau, "C": np.array([C])}, name))
        if objective != "makespan":
            break
    # for the makespan, the plan of least makespan; otherwise the first that fits
    return min(found, key=lambda f: float(f[0]["C"][0])) if found else None


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, objective: str = "makespan",
          lanes: int | None = None, realize: str = "fluid", mip_start: bool = True,
          **options) -> Result:
    r"""Salus' optimal lane plan for ``objective`` (MILP over (GPU, lane) slots, module
    docstring).

    Parameters
    ----------
    instance : Instance
        Single-GPU jobs with a memory footprint (P, T), GPUs with a known memory.
    backend : str
        Solver backend.
    objective : {"makespan", "admitted", "gpus"}
        Makespan of the fluid realisation (training), admitted weight (inference packing)
        or GPUs used.
    lanes : int, optional
        Lanes per GPU at most; ``None`` (default) leaves it unlimited, stated as
        :math:`L_g = \min(n, \lfloor M_g/\min_i(P_i + T_i)\rfloor)`, or one lane per GPU
        for ``"gpus"``/``"admitted"`` without a horizon (optimal by the merging lemma).
    realize : {"fluid", "serial"}
        The schedule built from the plan: fluid (attains the model's makespan exactly) or
        lanes running their jobs one at a time (refused when it would end after the
        horizon).
    mip_start : bool
        Start the MILP from a heuristic's lane plan (:func:`heuristic_start`), so a solve
        stopped by ``time_limit`` returns at least that plan.
    **options
        Solver options (``time_limit``, ``mip_gap``, ``threads``, ``seed``, ``solver``,
        ``verbose``).

    Returns
    -------
    Result
        The MILP's objective, bound and gap; ``extra["plan"]`` the lanes; the realised,
        validated schedule.

    Guarantee
    ---------
    :math:`\mathrm{OPT}` over every memory-safe lane plan (every lane holds
    :math:`\sum P + \max T \le M` on its GPU) of the fluid model;
    :math:`\text{lower\_bound} \le \mathrm{OPT}` for makespan and GPUs and
    :math:`\ge` for admitted weight.

    Complexity
    ----------
    Strongly NP-hard (bin packing); :math:`O(n \sum_g L_g)` binaries, solved by branch
    and bound.

    References
    ----------
    * P. Yu, M. Chowdhury, "Fine-Grained GPU Sharing Primitives for Deep Learning
      Applications" (Salus), MLSys 2020, §3.2 (lanes and the memory safety condition).
    """
    check_objective(objective)
    check_realize(realize)
    t0 = time.perf_counter()
    view = salus_view(instance)
    horizon = None if instance.horizon is None else instance.horizon - view.release
    L = lane_limits(view, objective, lanes, objective == "makespan" or horizon is not None)
    lp, trip = _program(view, objective, L, horizon)
    data = lp.freeze()
    found = heuristic_start(instance, view, objective, L, realize, trip, horizon) \
        if mip_start else None
    build = time.perf_counter() - t0
    res = solve_program(data, backend=backend, spent=build,
                        start=None if found is None else found[0], **options)
    started = {**start_fields(res), "start_heuristic": found[1]} if found else {}
    common = {"model": "salus", "method": "exact"}
    if not res.success:
        return res.replace(build_seconds=res.build_seconds + build,
                           extra={"objective_kind": objective, "lanes": L.tolist(), **started},
                           **common)
    xs = np.round(res.values["x"]).astype(bool)
    plan: LanePlan = [[[] for _ in range(int(L[g]))] for g in range(view.n_gpus)]
    for k in np.flatnonzero(xs):
        i, g, l = trip[k]
        plan[g][l].append(i)
    obj = plan_objective(view, plan, objective)
    if horizon is not None and realize == "serial":
        end = max((gpu_end(view, g, lanes, "serial") for g, lanes in enumerate(plan)),
                  default=view.release)
        assert instance.horizon is not None  # horizon is derived from it
        if end > instance.horizon * (1 + 1e-9):
            # the MILP bounds the fluid realisation; serial lanes may leave compute idle
            raise InvalidOption("realize", realize, f"the exact plan meets the horizon in "
                                f"its fluid realisation only; run one lane at a time it "
                                f"ends at {end:g} s, after the horizon "
                                f"{instance.horizon:g} s (use realize='fluid')")
    # ratio 1 only when the lane limit is not a restriction (lanes=None is exact)
    ratio = 1.0 if res.status is Status.OPTIMAL and lanes is None else None
    return result_of_plan(
        instance, view, plan, objective, realize, status=res.status, objective=obj,
        bound=res.bound, gap=res.gap, backend=res.backend, solver=res.solver,
        build_seconds=res.build_seconds + build, solve_seconds=res.solve_seconds,
        values=res.values, ratio=ratio,
        ratio_note=("optimal for the fluid lane model" if ratio else
                    f"optimal only for at most {int(L.max())} lanes per GPU"
                    if res.status is Status.OPTIMAL else ""),
        message=res.message,
        extra={"milp_objective": res.objective, "lanes": L.tolist(), **started}, **common)
