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
    x_{igl} \le y_{gl},\quad y_{g,l+1} &\le y_{gl}
        && \text{(open lanes first)}\\
    \sum_i n_i d_{ig}\,x_{igl} &\le C
        && \text{(a lane is serial)}\\
    \sum_{i,l} n_i d_{ig} u_i\,x_{igl} &\le C
        && \text{(the GPU's compute)}

Symmetry breaking (:func:`_symmetry_rows`; ``tighten=False`` leaves it out and keeps
only :math:`x_{igl} = 0` for :math:`l > i`). Jobs are ordered by :func:`job_rank`, GPUs
grouped into classes of interchangeable GPUs (:func:`gpu_classes`, :math:`r(g)` the
rank of g in its class, :math:`g'` the one before it):

.. math::

    x_{igl} &\le \textstyle\sum_{\mathrm{rank}\,j < \mathrm{rank}\,i} x_{j,g,l-1}
        && \text{(lane\_lead: lanes in order of their first job)}\\
    \textstyle\sum_l x_{igl} &\le \textstyle\sum_{\mathrm{rank}\,j < \mathrm{rank}\,i}
        \sum_l x_{jg'l}
        && \text{(gpu\_lead: a class's GPUs in order of their first job)}\\
    \textstyle\sum_s s\,x_{is} &\le \textstyle\sum_s s\,x_{i's}
        && \text{(twin\_order: identical jobs, rank } i < \text{rank } i')

with :math:`x_{igl}` not stated for :math:`\mathrm{rank}\,i < r(g) + l`. Every class of
equivalent plans (renumbered lanes, interchangeable GPUs, identical jobs) keeps its
lexicographically least member, which meets all three, so the optimum is unchanged.
For the makespan :math:`C \ge` :func:`c_bound` (longest job, compute over the GPUs).

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
lane limit: :math:`L_g`, the largest :math:`k` whose :math:`k` smallest peaks
:math:`P_i + T_i` fit :math:`M_g` (:func:`lane_limits`), bounds the number of non-empty
lanes any safe plan can have. For ``"admitted"`` and ``"gpus"``
without a horizon, ``None`` uses one lane per GPU, which the merging lemma of
:mod:`optsched.salus.model` proves optimal. An explicit ``lanes=k`` is exact for the
restricted problem (at most k lanes per GPU).

Size: :math:`O(n \sum_g L_g)` binaries; the problem contains bin packing, so it is
strongly NP-hard and solved by branch and bound (``time_limit``, ``mip_gap``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, relative_gap
from optsched.errors import InvalidOption
from optsched.options import declares
from optsched.salus.bounds import makespan_bound
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
from optsched.solvers import DEFAULT_TIME_LIMIT, START_TOLERANCE, solve_program, start_fields
from optsched.solvers.program import LinearProgram, ProgramData

#: perturbations of the local search that improves the makespan start
KICKS = 30
#: share of the time limit the makespan start's local search may take at most
START_SHARE = 0.25

#: the values of a program's auxiliary columns, given its x columns (for a MIP start)
Derived = Callable[[np.ndarray], dict[str, np.ndarray]]

__all__ = ["exact", "OBJECTIVES", "SENSE", "check_objective", "check_realize", "heuristic_start",
           "lane_limits", "plan_objective", "result_of_plan"]

def lane_limits(view: SalusView, objective: str, lanes: int | None,
                timed: bool, tighten: bool = True) -> np.ndarray:
    r"""Candidate lanes per GPU (see module docstring).

    Without a limit (``lanes=None``) and when time matters, :math:`L_g` is the largest
    :math:`k` whose :math:`k` smallest peaks :math:`P_i + T_i` (of the jobs that fit
    :math:`g`) sum to at most :math:`M_g`: a lane needs
    :math:`\sum_{i \in l} P_i + \max_{i \in l} T_i \ge P_j + T_j` for each of its jobs
    :math:`j`, and lanes hold disjoint jobs, so :math:`k` non-empty lanes need at least
    the :math:`k` smallest peaks. ``tighten=False`` gives the coarser
    :math:`\lfloor M_g / \min_i (P_i + T_i) \rfloor` (the same optimum, more columns).
    """
    if lanes is not None:
        if isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)) or lanes < 1:
            raise InvalidOption("lanes", lanes, "must be a positive integer or None")
        return np.full(view.n_gpus, min(int(lanes), max(view.n_jobs, 1)))
    if objective != "makespan" and not timed:
        return np.ones(view.n_gpus, dtype=int)
    if not tighten:
        smallest = float(view.peak.min()) if view.n_jobs else 1.0
        return np.array([max(1, min(view.n_jobs, int(math.floor(m / smallest * (1 + 1e-12)))))
                         for m in view.memory], dtype=int)
    out = np.ones(view.n_gpus, dtype=int)
    for g in range(view.n_gpus):
        peaks = np.sort([view.peak[i] for i in range(view.n_jobs) if view.fits(i, g)])
        within = np.cumsum(peaks) <= view.memory[g] * (1 + 1e-12)
        out[g] = max(1, int(within.sum()))
    return out


def job_rank(view: SalusView) -> np.ndarray:
    r"""``rank[i]``: job i's place in the order the symmetry-breaking rows use: decreasing
    least serial time :math:`\min_g n_i d_{ig}`, then ephemeral and persistent memory,
    then index (so identical jobs are consecutive)."""
    serial = np.where(np.isfinite(view.d), view.n[:, None] * view.d, np.inf).min(axis=1)
    order = sorted(range(view.n_jobs),
                   key=lambda i: (-serial[i], -view.T[i], -view.P[i], i))
    rank = np.empty(view.n_jobs, dtype=np.int64)
    rank[order] = np.arange(view.n_jobs)
    return rank


def gpu_classes(view: SalusView) -> tuple[np.ndarray, np.ndarray]:
    """``(rank, prev)``: GPU g is the ``rank[g]``-th of its class of interchangeable GPUs
    (same type, memory and every job's iteration time), ``prev[g]`` the one before it in
    the class (-1 for the first)."""
    rank = np.zeros(view.n_gpus, dtype=np.int64)
    prev = np.full(view.n_gpus, -1, dtype=np.int64)
    last: dict[tuple, int] = {}
    count: dict[tuple, int] = {}
    for g in range(view.n_gpus):
        key = (view.gpu_type[g], float(view.memory[g]), view.d[:, g].tobytes())
        rank[g] = count.get(key, 0)
        prev[g] = last.get(key, -1)
        count[key] = rank[g] + 1
        last[key] = g
    return rank, prev


def identical_pairs(view: SalusView, rank: np.ndarray, objective: str) -> list[tuple[int, int]]:
    """Consecutive jobs (in ``rank`` order) that no objective tells apart: same
    :math:`P, T, n, u`, iteration times and, for ``"admitted"``, weight."""
    order = np.argsort(rank)
    key = [(view.P[i], view.T[i], view.n[i], view.u[i], view.d[i].tobytes(),
            view.w[i] if objective == "admitted" else 0.0) for i in order]
    return [(int(order[k]), int(order[k + 1])) for k in range(len(order) - 1)
            if key[k] == key[k + 1]]


def _program(view: SalusView, objective: str, L: np.ndarray, horizon: float | None,
             tighten: bool = True
             ) -> tuple[LinearProgram, list[tuple[int, int, int]], Derived]:
    n, G = view.n_jobs, view.n_gpus
    slots = [(g, l) for g in range(G) for l in range(int(L[g]))]
    sidx = {s: k for k, s in enumerate(slots)}
    if tighten:
        rank = job_rank(view)
        grank, gprev = gpu_classes(view)
        trip = [(i, g, l) for i in range(n) for (g, l) in slots
                if rank[i] >= grank[g] + l and view.fits(i, g)]
    else:
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
    # the makespan bound (longest job, compute over the GPUs) as the lower bound of C;
    # the lane rows then prove a horizon shorter than it infeasible, as without it
    lb_c = c_bound(view) if objective == "makespan" else 0.0
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
    if tighten:
        derived = _symmetry_rows(lp, view, objective, trip, slots, x, rank, gprev)
    else:
        def derived(xv: np.ndarray) -> dict[str, np.ndarray]:
            return {}
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
    return lp, trip, derived


def _positions(key: np.ndarray, n: int) -> list[np.ndarray]:
    """``out[k]``: the positions p with ``key[p] == k``, in increasing order."""
    order = np.argsort(key, kind="stable")
    return np.split(order, np.searchsorted(key[order], np.arange(1, n)))


def _lead_rows(lp: LinearProgram, name: str, groups: list[tuple[np.ndarray, np.ndarray]],
               job: np.ndarray, x: np.ndarray, rank: np.ndarray) -> Derived:
    r"""For each ``(before, after)`` pair of column sets (positions in ``x``) and every job
    :math:`i` of ``after``: :math:`\sum_{c \in \text{after},\,\text{job}(c)=i} x_c
    \le \sum_{c \in \text{before},\,\mathrm{rank}\,\text{job}(c) < \mathrm{rank}\,i}
    x_c`.

    The right side is a prefix sum in rank order, stated once per ``before`` set with
    continuous columns :math:`q_k = q_{k-1} + \sum (\text{the } k\text{-th job's
    columns})`, so the rows take :math:`O(|\text{before}| + |\text{after}|)` non-zeros
    instead of :math:`O(|\text{before}|\,|\text{after}|)`. :math:`q` is determined by
    :math:`x`, so the rows are exactly the ones stated. Returns the function giving
    :math:`q` from :math:`x` (for a MIP start).
    """
    groups = [(b, a) for b, a in groups if len(a)]
    before_jobs = []
    for before, _ in groups:
        bj = np.unique(job[before])
        before_jobs.append(bj[np.argsort(rank[bj], kind="stable")])
    n_q = sum(len(bj) for bj in before_jobs)
    q = lp.add_variables(f"{name}_count", n_q, lb=0.0).index if n_q else np.zeros(0, int)
    pr, pc, pv = [], [], []   # prefix rows: q_k - q_{k-1} - x(k-th job) = 0
    parts = []                # (offset, count, before positions, k of each)
    lr, lc, lv = [], [], []   # lead rows: x(job i, after) - q_{k(i)-1} <= 0
    off = n_lead = 0
    for (before, after), bj in zip(groups, before_jobs, strict=True):
        k_of = np.searchsorted(rank[bj], rank[job[before]])
        parts.append((off, len(bj), before, k_of))
        pr += [off + k_of, off + np.arange(len(bj)), off + np.arange(1, len(bj))]
        pc += [x[before], q[off:off + len(bj)], q[off:off + len(bj) - 1]]
        pv += [-np.ones(len(before)), np.ones(len(bj)), -np.ones(max(len(bj) - 1, 0))]
        aj, row_of = np.unique(job[after], return_inverse=True)
        below = np.searchsorted(rank[bj], rank[aj], side="left")  # jobs ranked before
        has = below > 0
        lr += [n_lead + row_of, n_lead + np.flatnonzero(has)]
        lc += [x[after], q[off + below[has] - 1]]
        lv += [np.ones(len(after)), -np.ones(int(has.sum()))]
        off += len(bj)
        n_lead += len(aj)
    if n_q:
        lp.add_constraints(f"{name}_prefix", rows=np.concatenate(pr), cols=np.concatenate(pc),
                           vals=np.concatenate(pv), lb=0, ub=0, n_rows=n_q)
    if n_lead:
        lp.add_constraints(name, rows=np.concatenate(lr), cols=np.concatenate(lc),
                           vals=np.concatenate(lv), ub=0, n_rows=n_lead)

    def counts(xv: np.ndarray) -> dict[str, np.ndarray]:
        out = np.zeros(n_q)
        for o, k, before, k_of in parts:
            out[o:o + k] = np.cumsum(np.bincount(k_of, weights=xv[before], minlength=k))
        return {f"{name}_count": out} if n_q else {}

    return counts


def _symmetry_rows(lp: LinearProgram, view: SalusView, objective: str,
                   trip: list[tuple[int, int, int]], slots: list[tuple[int, int]],
                   x: np.ndarray, rank: np.ndarray, gprev: np.ndarray) -> Derived:
    r"""The rows that keep only the canonical plan of each class of equivalent plans.

    Equivalent plans: renumbering the lanes of a GPU, the GPUs of a class
    (:func:`gpu_classes`) or identical jobs (:func:`identical_pairs`) changes neither
    memory, nor lane serial time, nor compute, nor any objective. Order jobs by ``rank``
    and slots by (GPU, lane). Among the plans equivalent to a given one, the one whose
    vector (slot of the rank-0 job, slot of the rank-1 job, ...) is lexicographically
    least is *canonical*; it satisfies

    * **lane_lead**: the lanes of a GPU are in increasing order of their first job (least
      rank), so a job in lane :math:`l \ge 1` has a job of smaller rank in lane
      :math:`l-1`: :math:`x_{igl} \le \sum_{\mathrm{rank}\,j < \mathrm{rank}\,i}
      x_{j,g,l-1}` (renumbering lanes by first job never increases the vector);
    * **gpu_lead**: the GPUs of a class are in increasing order of their first job, so a
      job on GPU :math:`g` has a job of smaller rank on the class's previous GPU
      :math:`g'`: :math:`\sum_l x_{igl} \le \sum_{\mathrm{rank}\,j < \mathrm{rank}\,i}
      \sum_l x_{jg'l}`; with the lane order this also gives
      :math:`x_{igl} = 0` for :math:`\mathrm{rank}\,i < \mathrm{rank}(g) + l` (columns
      not stated);
    * **twin_order** (every job placed): identical jobs :math:`i, i'` with
      :math:`\mathrm{rank}\,i < \mathrm{rank}\,i'` have
      :math:`\mathrm{slot}(i) \le \mathrm{slot}(i')`, stated as
      :math:`\sum_s s\,x_{is} \le \sum_s s\,x_{i's}`. If a plan sorted as above had
      :math:`\mathrm{slot}(i) > \mathrm{slot}(i')`, exchanging the two jobs and sorting
      again leaves the slots of every job ranked before :math:`i` unchanged (their lanes'
      and GPUs' first jobs rank before :math:`i`) and moves :math:`i` to the earlier slot:
      a lexicographically smaller equivalent plan.

    So every class of equivalent plans keeps its canonical plan: the optimum is unchanged
    (tests: ``tests/salus/test_salus.py``, against the program without these rows and
    against brute force). :math:`O(n^2 \sum_g L_g)` non-zeros at most.
    """
    t = np.array(trip, dtype=np.int64).reshape(-1, 3)
    if not len(t):
        return lambda xv: {}
    slot_of = {sl: k for k, sl in enumerate(slots)}
    ts = np.array([slot_of[(g, l)] for _, g, l in trip], dtype=np.int64)
    in_slot = _positions(ts, len(slots))
    in_gpu = _positions(t[:, 1], view.n_gpus)
    # lane_lead: the jobs of slot (g, l) against those of slot (g, l - 1)
    lead = [(in_slot[slot_of[(g, l - 1)]], in_slot[slot_of[(g, l)]])
            for g, l in slots if l > 0]
    lane = _lead_rows(lp, "lane_lead", lead, t[:, 0], x, rank)
    # gpu_lead: the jobs of GPU g (over its lanes) against those of the class's previous
    lead = [(in_gpu[gprev[g]], in_gpu[g]) for g in range(view.n_gpus) if gprev[g] >= 0]
    gpu = _lead_rows(lp, "gpu_lead", lead, t[:, 0], x, rank)
    _twin_rows(lp, view, objective, trip, slots, x, rank)
    return lambda xv: {**lane(xv), **gpu(xv)}


def _twin_rows(lp: LinearProgram, view: SalusView, objective: str,
               trip: list[tuple[int, int, int]], slots: list[tuple[int, int]],
               x: np.ndarray, rank: np.ndarray) -> None:
    """The twin_order rows of :func:`_symmetry_rows` (every job placed)."""
    t = np.array(trip, dtype=np.int64).reshape(-1, 3)
    if objective == "admitted":
        return
    pairs = identical_pairs(view, rank, objective)
    if pairs and len(t):
        sidx = {s: k for k, s in enumerate(slots)}
        pos = np.array([sidx[(g, l)] for _, g, l in trip], dtype=float) + 1.0
        R, C, V = [], [], []
        for k, (a, b) in enumerate(pairs):
            ca, cb = t[:, 0] == a, t[:, 0] == b
            R += [np.full(int(ca.sum()), k), np.full(int(cb.sum()), k)]
            C += [x[ca], x[cb]]
            V += [pos[ca], -pos[cb]]
        lp.add_constraints("twin_order", rows=np.concatenate(R), cols=np.concatenate(C),
                           vals=np.concatenate(V), ub=0, n_rows=len(pairs))


def c_bound(view: SalusView) -> float:
    r"""The lower bound the makespan program states for :math:`C`:
    :func:`optsched.salus.bounds.makespan_bound` (longest job, and the jobs' least
    compute over the :math:`G` GPUs) when every job fits some GPU alone, else
    :func:`longest_job` (the program is then infeasible). Valid for every plan that
    places every job, so the optimum is unchanged; the LP relaxation implies the compute
    part but not the longest job's."""
    if all(any(view.fits(i, g) for g in range(view.n_gpus)) for i in range(view.n_jobs)):
        return makespan_bound(view)
    return longest_job(view)


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


def canonical_plan(view: SalusView, plan: LanePlan, objective: str) -> LanePlan:
    """The canonical plan equivalent to ``plan`` (job indices), the one the
    symmetry-breaking rows keep (:func:`_symmetry_rows`): lanes of each GPU in order of
    their first job (least :func:`job_rank`), GPUs of each class (:func:`gpu_classes`) in
    order of their first job, empty ones last, and identical jobs exchanged until each
    pair sits in slots of increasing order (when every job is placed). Each exchange
    makes the plan's slot vector lexicographically smaller, so the loop ends. Memory,
    serial times, compute and every objective are those of ``plan``."""
    rank = job_rank(view)
    # members of each class of interchangeable GPUs (gpu_classes), in index order
    members: dict[tuple, list[int]] = {}
    for g in range(view.n_gpus):
        key = (view.gpu_type[g], float(view.memory[g]), view.d[:, g].tobytes())
        members.setdefault(key, []).append(g)
    pairs = identical_pairs(view, rank, objective) if objective != "admitted" else []
    big = view.n_jobs + 1

    def lead(lanes: list[list[int]]) -> int:
        return min((int(rank[i]) for lane in lanes for i in lane), default=big)

    cur = [[list(lane) for lane in lanes if lane] for lanes in plan]
    for _ in range(view.n_jobs ** 2 + 1):
        out: LanePlan = [[] for _ in range(view.n_gpus)]
        for gs in members.values():
            sets = sorted((sorted((sorted(l, key=lambda i: rank[i]) for l in cur[g]),
                                  key=lambda l: rank[l[0]]) for g in gs), key=lead)
            for g, lanes in zip(gs, sets, strict=True):
                out[g] = lanes
        cur = out
        slot = {i: (g, l) for g, lanes in enumerate(cur) for l, lane in enumerate(lanes)
                for i in lane}
        bad = next(((a, b) for a, b in pairs if slot[a] > slot[b]), None)
        if bad is None:
            return cur
        a, b = bad
        (ga, la), (gb, lb) = slot[a], slot[b]
        cur[ga][la][cur[ga][la].index(a)] = b
        cur[gb][lb][cur[gb][lb].index(b)] = a
    raise AssertionError("canonical_plan did not settle")  # the lexicographic argument


def plan_point(view: SalusView, plan: LanePlan, L: np.ndarray,
               trip: list[tuple[int, int, int]], objective: str,
               derived: Derived | None = None) -> dict[str, np.ndarray] | None:
    """The program's point of a lane plan (job indices; lane ``l`` of GPU ``g`` is slot
    ``(g, l)``), every variable block given; ``None`` when the plan uses a column the
    program does not state (a plan not in the form its rows keep, or a lane past
    ``L[g]``). ``tau`` is each lane's largest ephemeral need, ``C`` the largest lane or
    GPU work (for the makespan, at least :func:`c_bound`)."""
    slots = [(g, ll) for g in range(view.n_gpus) for ll in range(int(L[g]))]
    sidx = {sl: k for k, sl in enumerate(slots)}
    col = {t: c for c, t in enumerate(trip)}
    x = np.zeros(len(trip))
    y = np.zeros(len(slots))
    z = np.zeros(view.n_gpus)
    tau = np.zeros(len(slots))
    lane_work = np.zeros(len(slots))
    gpu_work = np.zeros(view.n_gpus)
    for g, lanes in enumerate(plan):
        for ll, lane in enumerate(l for l in lanes if l):
            if ll >= L[g]:
                return None
            k = sidx[(g, ll)]
            y[k] = z[g] = 1.0
            for i in lane:
                c = col.get((i, g, ll))
                if c is None:
                    return None
                x[c] = 1.0
                tau[k] = max(tau[k], float(view.T[i]))
                lane_work[k] += float(view.n[i] * view.d[i, g])
                gpu_work[g] += float(view.n[i] * view.d[i, g] * view.u[i])
    C = max(float(lane_work.max(initial=0.0)), float(gpu_work.max(initial=0.0)))
    C = max(C, c_bound(view)) if objective == "makespan" else C
    aux = derived(x) if derived is not None else {}
    return {"x": x, "y": y, "z": z, "tau": tau, "C": np.array([C]), **aux}


def heuristic_start(instance: Instance, view: SalusView, objective: str, L: np.ndarray,
                    realize: str, trip: list[tuple[int, int, int]],
                    horizon: float | None, tighten: bool = True,
                    derived: Derived | None = None, deadline: float = math.inf
                    ) -> tuple[dict[str, np.ndarray], str] | None:
    """The MILP point of a heuristic's lane plan, with the heuristic's name; ``None`` if
    none fits. For the makespan, the best of LPT, first-fit decreasing (one lane per GPU)
    and :func:`balanced_plan`, each improved by local search
    (:func:`optsched.salus.search.improve_plan`, which never worsens a plan); otherwise
    first-fit decreasing, or LPT if it finds no plan or uses more lanes than the program
    offers.

    The plan is stated in its canonical form (:func:`canonical_plan`), which meets the
    symmetry-breaking rows (``tighten=False``: lanes of a GPU numbered in order of their
    smallest job index, so lane ``l`` holds only jobs ``i >= l``); ``tau`` is each lane's
    largest ephemeral need, ``C`` the largest lane or GPU work.
    """
    from optsched.salus import heuristics
    from optsched.salus.heuristics import improve_plan

    names = ("lpt", "ffd") if objective == "makespan" else ("ffd", "lpt")
    pos = {vid: i for i, vid in enumerate(view.ids)}
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
    usable = [(name, [[sorted(pos[j] for j in lane) for lane in lanes if lane]
                      for lanes in gpus])
              for name, gpus in plans
              if len(gpus) == view.n_gpus and all(len(lanes) <= L[g]
                                                  for g, lanes in enumerate(gpus))]
    if objective == "makespan" and usable:
        # a descent from every plan (the best first, in case the deadline comes), then
        # perturbations from the best one
        usable.sort(key=lambda u: plan_objective(view, u[1], "makespan"))
        usable = [(f"{name}+local search", improve_plan(view, plan, L, kicks=0,
                                                        deadline=deadline))
                  for name, plan in usable]
        best = min(range(len(usable)),
                   key=lambda k: plan_objective(view, usable[k][1], "makespan"))
        name, plan = usable[best]
        usable[best] = (name, improve_plan(view, plan, L, kicks=KICKS, deadline=deadline))
    for name, plan in usable:
        if tighten:
            plan = canonical_plan(view, plan, objective)
        else:
            plan = [sorted(lanes, key=lambda m: m[0]) for lanes in plan]
        point = plan_point(view, plan, L, trip, objective, derived)
        if point is None:
            continue
        C = float(point["C"][0])
        if horizon is not None and C > horizon:
            continue
        found.append((point, name))
        if objective != "makespan":
            break
    # for the makespan, the plan of least makespan; otherwise the first that fits
    return min(found, key=lambda f: float(f[0]["C"][0])) if found else None


def _check_serial(instance: Instance, view: SalusView, plan: LanePlan, realize: str) -> None:
    """Refuse a serial realisation of a plan that ends after the horizon."""
    if instance.horizon is None or realize != "serial":
        return
    end = max((gpu_end(view, g, lanes, "serial") for g, lanes in enumerate(plan)),
              default=view.release)
    if end > instance.horizon * (1 + 1e-9):
        # the MILP bounds the fluid realisation; serial lanes may leave compute idle
        raise InvalidOption("realize", realize, f"the exact plan meets the horizon in "
                            f"its fluid realisation only; run one lane at a time it "
                            f"ends at {end:g} s, after the horizon "
                            f"{instance.horizon:g} s (use realize='fluid')")


def _start_attains_bound(instance: Instance, view: SalusView, L: np.ndarray, realize: str,
                         trip: list[tuple[int, int, int]], data: ProgramData,
                         found: tuple[dict[str, np.ndarray], str], backend: str,
                         build: float) -> Result | None:
    r"""The start's plan as the optimum when its makespan equals the lower bound of
    :func:`c_bound`: :math:`\text{bound} \le C^* \le C_{\text{start}} = \text{bound}`,
    so no search can improve it and HiGHS is not run. ``None`` otherwise."""
    plan: LanePlan = [[[] for _ in range(int(L[g]))] for g in range(view.n_gpus)]
    for k in np.flatnonzero(found[0]["x"] > 0.5):
        i, g, l = trip[k]
        plan[g][l].append(i)
    value = plan_objective(view, plan, "makespan")
    bound = c_bound(view)
    x0 = data.start_vector(found[0])
    violation = data.max_violation(x0)
    if value > bound * (1 + 1e-9) or violation > START_TOLERANCE:
        return None
    _check_serial(instance, view, plan, realize)
    report = {"objective": data.objective_value(x0), "max_violation": violation,
              "feasible": True, "passed": False,
              "not_passed": "the start attains the lower bound: no solve was run"}
    # bound <= unrestricted optimum <= restricted optimum <= value = bound: optimal
    # whatever the lane limit
    return result_of_plan(
        instance, view, plan, "makespan", realize, status=Status.OPTIMAL, objective=value,
        bound=bound, gap=0.0, backend=backend, solver=None, build_seconds=build,
        solve_seconds=0.0, values=found[0], ratio=1.0,
        ratio_note="optimal for the fluid lane model",
        message=(f"the start ({found[1]}) attains the makespan lower bound {bound:.6g} s "
                 f"(longest job, compute over the GPUs): optimal, no search run"),
        extra={"milp_objective": value, "lanes": L.tolist(), "start_heuristic": found[1],
               "mip_start": report, "incumbent": "start",
               "proved_by": "start attains the lower bound"})


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, objective: str = "makespan",
          lanes: int | None = None, realize: str = "fluid", mip_start: bool = True,
          tighten: bool = True, **options) -> Result:
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
        :math:`L_g` of :func:`lane_limits` (the most lanes whose smallest peaks fit
        :math:`M_g`), or one lane per GPU
        for ``"gpus"``/``"admitted"`` without a horizon (optimal by the merging lemma).
    realize : {"fluid", "serial"}
        The schedule built from the plan: fluid (attains the model's makespan exactly) or
        lanes running their jobs one at a time (refused when it would end after the
        horizon).
    mip_start : bool
        Start the MILP from a heuristic's lane plan (:func:`heuristic_start`), so a solve
        stopped by ``time_limit`` returns at least that plan. For the makespan the plan
        is improved by local search for at most :data:`START_SHARE` of ``time_limit``;
        a start whose makespan meets the lower bound (:func:`c_bound`) is returned as
        optimal without a solve.
    tighten : bool
        State the program with the symmetry-breaking rows and the lane limits of
        :func:`lane_limits` (default); ``False`` states the plain slot program (lanes
        ordered by smallest job index only, :math:`L_g = \lfloor M_g / \min_i (P_i +
        T_i) \rfloor`). Both have the same optimum (the rows keep one plan of every
        class of equivalent plans); ``False`` is for comparison.
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
    L = lane_limits(view, objective, lanes, objective == "makespan" or horizon is not None,
                    tighten)
    lp, trip, derived = _program(view, objective, L, horizon, tighten)
    data = lp.freeze()
    limit = options.get("time_limit", DEFAULT_TIME_LIMIT)
    deadline = t0 + START_SHARE * limit if limit is not None else math.inf
    found = heuristic_start(instance, view, objective, L, realize, trip, horizon, tighten,
                            derived, deadline) \
        if mip_start else None
    build = time.perf_counter() - t0
    if found is not None and objective == "makespan":
        proved = _start_attains_bound(instance, view, L, realize, trip, data, found, backend,
                                      build)
        if proved is not None:
            return proved
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
    _check_serial(instance, view, plan, realize)
    # ratio 1 only when the lane limit is not a restriction (lanes=None is exact)
    ratio = 1.0 if res.status is Status.OPTIMAL and lanes is None else None
    bound, gap = res.bound, res.gap
    if objective == "makespan" and res.status is not Status.OPTIMAL:
        # a stopped solve keeps the better of HiGHS's bound (if any) and the model's own
        # (c_bound); both bound every plan, so their maximum does
        bound = max(c_bound(view), -math.inf if bound is None else float(bound))
        gap = relative_gap(obj, bound)
    return result_of_plan(
        instance, view, plan, objective, realize, status=res.status, objective=obj,
        bound=bound, gap=gap, backend=res.backend, solver=res.solver,
        build_seconds=res.build_seconds + build, solve_seconds=res.solve_seconds,
        values=res.values, ratio=ratio,
        ratio_note=("optimal for the fluid lane model" if ratio else
                    f"optimal only for at most {int(L.max())} lanes per GPU"
                    if res.status is Status.OPTIMAL else ""),
        message=res.message,
        extra={"milp_objective": res.objective, "lanes": L.tolist(), **started}, **common)
