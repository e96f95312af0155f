r"""Exact offline Hadar: the compact time-indexed MILP and its LP relaxation.

All arrivals are known; the MILP is the integer primal (OASiS (14)-(18) with the schedule
sets of :mod:`optsched.hadar.model`) written compactly over slots. Index sets: jobs
:math:`j`, slots :math:`t \in [a_j, T)`, GPU types :math:`k` with :math:`\tau_{jk} > 0`,
and resource columns :math:`b` (``placement="nodes"``: the buckets :math:`(h,k)`;
``placement="types"``, the default: one column per type, see below).

Variables

* :math:`y_{jtb} \in \mathbb Z_{\ge 0}`: GPUs of column :math:`b` held in slot :math:`t`;
* :math:`z_{jtk} \in \{0,1\}`: the job runs in slot :math:`t` with *threshold type*
  :math:`k` (its slowest allowed type); :math:`\sum_k z_{jtk}` is the run binary;
* :math:`u_{jt} \in \{0,1\}`: :math:`t` is the completion slot;
  :math:`v_{jt} = \sum_{t' \ge t} u_{jt'} \in [0,1]` ("not yet complete").

.. math::

    \max \sum_{j,t} f_j(t)\, u_{jt} \quad\text{s.t.}

    \sum_b y_{jtb} = W_j \sum_k z_{jtk}
        \qquad\text{(gang: all } W_j \text{ or nothing)}

    \sum_{b:\,k(b)=k'} y_{jtb} \le \min(W_j, C_{k'}) \sum_{k:\ \tau_{jk} \le \tau_{jk'}} z_{jtk}
        \qquad\text{(type } k' \text{ only if at least as fast as the threshold)}

    \sum_k z_{jtk} \le v_{jt}, \qquad v_{jt} = u_{jt} + v_{j,t+1},\ v_{jT} = 0

    \sum_{t,k} \min\!\big(1, W_j \tau_{jk}\Delta / E_j\big) z_{jtk} \ge v_{j a_j}
        \qquad\text{(work done by completion, normalised by } E_j)

    \sum_j y_{jtb} \le c_b \qquad\text{(capacity per slot and column)}

Linearisation of the slowest-type rule: a slot's progress is
:math:`W_j \tau_{jk}\Delta` for the selected threshold :math:`k`, and GPUs of type
:math:`k'` are allowed only when :math:`\tau_{jk'} \ge \tau_{jk}`. Every type used is
then at least as fast as the threshold, so the credited progress never exceeds the
true progress (``min`` over used types); conversely any slot allocation is representable
with the threshold equal to its slowest used type, crediting exactly its progress. So
the MILP optimum equals the model's optimum. Capping the per-slot fraction at 1 only
tightens the relaxation.

``placement="types"`` aggregates nodes: :math:`Y_{jtk} = \sum_h y_{jthk}` with capacity
:math:`C_k = \sum_h c_{hk}`. It is exact because progress does not depend on the node
(task-level placement): integral per-type totals with :math:`\sum_j Y_{jtk} \le C_k`
always split into integral per-node counts within :math:`c_{hk}` (fill nodes in turn),
which :func:`exact` does when it builds the schedule. ``placement="nodes"`` states the
:math:`y_{jthk}` model literally (same optimum, more columns).

``relax=True`` solves the LP relaxation (all integrality dropped): an upper bound on the
optimum, returned as ``bound`` with ``objective=None`` and no schedule. By default
(``lp_form="projected"``) it solves the relaxation projected onto per-type GPUs
:math:`Y_{jtk}` and :math:`v_{jt}` (:func:`build_projected_lp`), which has the same
optimum: from a relaxed point, :math:`(Y, v)` is feasible for the projection, because
the cumulative speed rows and :math:`\sum_k Y = W\sum_k z` give, by Abel summation
over the job's rates in increasing order, credited progress
:math:`\sum_k c_k z_k \le \sum_k c_k Y_k / W_j` (:math:`c_k` non-decreasing);
conversely :math:`z_{jtk} = Y_{jtk}/W_j`, :math:`u_{jt} = v_{jt} - v_{j,t+1}` satisfies
every relaxed row. ``lp_form="compact"`` solves the unprojected relaxation. On the
``highs`` backend the LP uses the interior-point solver (with crossover) unless
``options`` are given.

By default (``work_cuts``) the MILP states the work row per slot
(:func:`add_cumulative_work`): the same integer points, a tighter relaxation. Its MIP start
is the better of the online algorithm's plans and a list schedule
(:func:`optsched.hadar.heuristics.best_list_schedule`), both feasible points of the program.

Size: :math:`N = \sum_j (T - a_j)` job-slots; :math:`N(2K' + 2)` columns with
:math:`K'` usable types (types placement) and about :math:`N(K'+3)` rows, plus :math:`N`
columns and :math:`N` rows with ``work_cuts``. The build is vectorised (numpy coordinate
arrays).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize, relative_gap
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.core.validate import work_done_at
from optsched.errors import InvalidOption
from optsched.hadar.model import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_MAX_SLOTS,
    HadarModel,
    build_model,
    check_size,
    job_slots,
    model_slots,
    planning_instance,
)
from optsched.options import declares
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram

__all__ = ["exact", "lp_bound", "build_program", "build_projected_lp", "heuristic_start",
           "utility_ceiling"]


def _job_slots(model: HadarModel):
    """The (job, slot) pairs with variables, flattened: ``a`` (first slots, capped at T),
    ``cnt`` (slots per job), ``N`` (pairs), each pair's job ``jt_j`` and slot ``jt_t``, and
    ``start`` (each job's first pair).

    A job that cannot finish alone by slot T (:math:`a_j + n^{min}_j > T`) gets none.
    """
    T, n = model.T, model.n_jobs
    a = np.minimum(model.a, T)
    cnt = np.where(model.a + model.nmin <= T, T - a, 0)
    N = int(cnt.sum())
    jt_j = np.repeat(np.arange(n), cnt)
    start = np.concatenate(([0], np.cumsum(cnt)[:-1])) if n else np.zeros(0, np.int64)
    jt_t = np.arange(N) - np.repeat(start, cnt) + np.repeat(a, cnt)
    return a, cnt, N, jt_j, jt_t, start


def build_program(model: HadarModel, placement: str = "types", relax: bool = False,
                  work_cuts: bool = False):
    """The MILP (or its relaxation) as a :class:`LinearProgram` plus its index arrays;
    ``work_cuts`` states the work row per slot (:func:`add_cumulative_work`)."""
    if placement not in ("types", "nodes"):
        raise InvalidOption("placement", placement, "must be 'types' or 'nodes'")
    T, n = model.T, model.n_jobs
    K = len(model.types)
    a, cnt, N, jt_j, jt_t, start = _job_slots(model)
    rates = model.rates
    # (job-slot, type) pairs with a usable type: threshold binaries z
    zi, zk = np.nonzero(rates[jt_j] > 0)
    nz = zi.size
    # resource columns
    if placement == "types":
        col_type = np.arange(K)
        col_cap = model.type_capacity
    else:
        col_type = model.bucket_type
        col_cap = model.bucket_cap
    R = col_type.size
    yi, yr = np.nonzero(rates[jt_j][:, col_type] > 0)
    ny = yi.size
    Wjt = model.W[jt_j].astype(float)

    lp = LinearProgram(sense="max", name="hadar" + ("-lp" if relax else ""))
    integer = not relax
    yv = lp.add_variables("y", ny, lb=0, ub=np.minimum(Wjt[yi], col_cap[yr]), integer=integer)
    zv = lp.add_variables("z", nz, lb=0, ub=1, integer=integer)
    uv = lp.add_variables("u", N, lb=0, ub=1, cost=model.values[jt_j, jt_t], integer=integer)
    vv = lp.add_variables("v", N, lb=0, ub=1)
    # gang
    lp.add_constraints("gang", rows=np.concatenate([yi, zi]),
                       cols=np.concatenate([yv.index, zv.index]),
                       vals=np.concatenate([np.ones(ny), -Wjt[zi]]), lb=0, ub=0, n_rows=N)
    # speed rule (cumulative form), rows per (job-slot, type k') with k' usable:
    #   sum_{b: tau_{k(b)} <= tau_k'} y_b <= W_j sum_{k: tau_k <= tau_k'} z_k
    row_of = np.full((N, K), -1, dtype=np.int64)
    row_of[zi, zk] = np.arange(nz)
    ri, ci, vi = [], [], []
    jy = jt_j[yi]
    jz = jt_j[zi]
    for kp in range(K):
        # y columns of types no faster than k' (for this job), into row (jt, k')
        sel = (rates[jy, kp] > 0) & (rates[jy, col_type[yr]] <= rates[jy, kp])
        ri.append(row_of[yi[sel], kp])
        ci.append(yv.index[sel])
        vi.append(np.ones(int(sel.sum())))
        sel = (rates[jz, kp] > 0) & (rates[jz, zk] <= rates[jz, kp])
        ri.append(row_of[zi[sel], kp])
        ci.append(zv.index[sel])
        vi.append(-Wjt[zi[sel]])
    lp.add_constraints("speed", rows=np.concatenate(ri), cols=np.concatenate(ci),
                       vals=np.concatenate(vi), ub=0, n_rows=nz)
    # run only before completion
    lp.add_constraints("alive", rows=np.concatenate([zi, np.arange(N)]),
                       cols=np.concatenate([zv.index, vv.index]),
                       vals=np.concatenate([np.ones(nz), -np.ones(N)]), ub=0, n_rows=N)
    # v_t = u_t + v_{t+1}
    nxt = np.arange(N) + 1
    has_next = np.ones(N, dtype=bool)
    if n:
        has_next[(start + cnt - 1)[cnt > 0]] = False
    rows = np.concatenate([np.arange(N), np.arange(N), np.flatnonzero(has_next)])
    cols = np.concatenate([vv.index, uv.index, vv.index[nxt[has_next]]])
    vals = np.concatenate([np.ones(N), -np.ones(N), -np.ones(int(has_next.sum()))])
    lp.add_constraints("completion", rows=rows, cols=cols, vals=vals, lb=0, ub=0, n_rows=N)
    # work, normalised by E_j
    frac = np.minimum(1.0, model.W[jt_j[zi]] * rates[jt_j[zi], zk] * model.delta
                      / model.E[jt_j[zi]])
    first = start[cnt > 0]
    jobs_with = np.flatnonzero(cnt > 0)
    work = None
    if work_cuts:
        work = add_cumulative_work(lp, zi, zv.index, frac, vv.index, start, cnt)
    else:
        lp.add_constraints("work", rows=np.concatenate([jt_j[zi], jobs_with]),
                           cols=np.concatenate([zv.index, vv.index[first]]),
                           vals=np.concatenate([frac, -np.ones(first.size)]), lb=0,
                           n_rows=n)
    # capacity per (slot, column)
    lp.add_constraints("capacity", rows=jt_t[yi] * R + yr, cols=yv.index, vals=1.0,
                       ub=np.tile(col_cap.astype(float), T), n_rows=T * R)
    index = {"jt_j": jt_j, "jt_t": jt_t, "yi": yi, "yr": yr, "zi": zi, "zk": zk,
             "col_type": col_type, "placement": placement, "work": work}
    return lp, index


def add_cumulative_work(lp: LinearProgram, rows: np.ndarray, cols: np.ndarray,
                        frac: np.ndarray, v_index: np.ndarray, start: np.ndarray,
                        cnt: np.ndarray) -> dict[str, np.ndarray] | None:
    r"""The work rows in cumulative form, one per job-slot (replacing one per job);
    returns what :func:`cumulative_work_values` needs (``None``, adding nothing, when
    no job has a slot).

    With :math:`\omega_{jt} = \sum_{t' \le t} \sum_i \phi_{it'} x_{it'}` the work
    (normalised by :math:`E_j`) credited in slots :math:`a_j..t` (``frac`` :math:`\phi`
    of the columns ``cols`` of job-slot ``rows``), it states

    .. math::

        \omega_{jt} \ \ge\ v_{j a_j} - v_{j,t+1} = \sum_{t' \le t} u_{jt'}
        \qquad (t = a_j..T-1,\ v_{jT} = 0),

    through continuous :math:`\omega_{jt} = \omega_{j,t-1} + \sum_i \phi_{it} x_{it}`
    (:math:`N` columns, :math:`2N` rows). Valid: a job completed in slot
    :math:`\hat t \le t` has all its work done by :math:`\hat t` (credited work only
    counts up to completion), so :math:`\omega_{jt} \ge 1`; before completion the right
    side is 0. At :math:`t = T-1` it is the aggregated row
    :math:`\omega_{j,T-1} \ge v_{ja_j}`, so the integer points are unchanged; the
    relaxation loses its points that credit utility at an early completion slot while
    the work is done later."""
    N = int(cnt.sum())
    if N == 0:
        return None
    info = {"rows": rows, "frac": frac, "start": start, "cnt": cnt}
    w = lp.add_variables("work_done", N, lb=0)
    first = np.zeros(N, dtype=bool)
    first[start[cnt > 0]] = True
    last = np.zeros(N, dtype=bool)
    last[(start + cnt - 1)[cnt > 0]] = True
    prev = np.flatnonzero(~first)
    r = np.arange(N)
    # w_t - w_{t-1} - sum_i frac_i x_i = 0 (an inequality <= has the same projection, but
    # HiGHS closed its bound far more slowly with it: 636 vs 481.4 at 240 contended jobs)
    lp.add_constraints("work_sum", rows=np.concatenate([r, prev, rows]),
                       cols=np.concatenate([w.index, w.index[prev - 1], cols]),
                       vals=np.concatenate([np.ones(N), -np.ones(prev.size), -frac]),
                       lb=0, ub=0, n_rows=N)
    # w_t - v_a + v_{t+1} >= 0
    job_first = np.repeat(start, cnt)
    nxt = np.flatnonzero(~last)
    lp.add_constraints("work", rows=np.concatenate([r, r, nxt]),
                       cols=np.concatenate([w.index, v_index[job_first], v_index[nxt + 1]]),
                       vals=np.concatenate([np.ones(N), -np.ones(N), np.ones(nxt.size)]),
                       lb=0, n_rows=N)
    return info


def cumulative_work_values(work: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """The ``work_done`` column values of :func:`add_cumulative_work` at the point whose
    work columns hold ``x``; ``work`` is that call's ``rows``, ``frac``, ``start``,
    ``cnt``."""
    cnt = work["cnt"]
    N = int(cnt.sum())
    per = np.bincount(work["rows"], weights=work["frac"] * x, minlength=N)
    total = np.cumsum(per)
    before = np.concatenate(([0.0], total))[np.repeat(work["start"], cnt)]
    return total - before


def exact_work_start(data, x: np.ndarray, passes: int = 256) -> np.ndarray:
    """``x`` with its ``work_done`` columns (:func:`add_cumulative_work`) corrected for
    the floating-point residue of their running sums, so that the ``work_sum``
    equalities hold exactly as evaluated (``A @ x``) wherever a float allows it: each
    pass moves every :math:`\\omega_{jt}` whose row is off by its residue (at least one
    ulp). Other columns are not touched."""
    blocks = {b.name: b for b in data.var_blocks}
    rows = {b.name: b for b in data.row_blocks}
    if "work_done" not in blocks:
        return x
    wb, rs = blocks["work_done"], rows["work_sum"]
    x = x.copy()
    for _ in range(passes):
        res = (data.A @ x)[rs.start:rs.start + rs.size]
        off = res != 0
        if not off.any():
            break
        w = x[wb.start:wb.start + wb.size]
        moved = w[off] - res[off]
        same = moved == w[off]
        moved[same] = np.nextafter(w[off][same], np.where(res[off][same] > 0, -np.inf,
                                                           np.inf))
        w[off] = moved
        x[wb.start:wb.start + wb.size] = w
    return x


def utility_ceiling(values: np.ndarray, earliest: np.ndarray) -> float:
    r"""A valid upper bound on total utility: every job that can complete at all
    (``earliest[j] < T``) completes at its best slot from ``earliest[j]`` on,
    :math:`\sum_j \max_{t \ge e_j} f_j(t)`. Reported when a stopped solver gives no bound
    of its own."""
    T = values.shape[1] if values.ndim == 2 else 0
    tt = np.arange(T)
    ok = tt[None, :] >= np.asarray(earliest)[:, None]
    return float(np.where(ok, values, -np.inf).max(axis=1, initial=-np.inf)
                 .clip(min=0.0).sum()) if values.size else 0.0


def _with_ceiling(res: Result, objective: float, ceiling: float) -> dict[str, Any]:
    """``bound``, ``gap`` and a note for a MILP result: the solver's bound, or the utility
    ceiling when a stopped solve gave none."""
    if res.bound is not None or res.status is not Status.TIME_LIMIT:
        return {"bound": res.bound, "gap": relative_gap(objective, res.bound),
                "bound_source": "solver" if res.bound is not None else None}
    return {"bound": ceiling, "gap": relative_gap(objective, ceiling),
            "bound_source": "utility ceiling: every job at its best completion slot (the "
                            "solver stopped without a bound)"}


def build_projected_lp(model: HadarModel):
    r"""The LP relaxation projected onto :math:`(Y, v)` (see :func:`exact`): per
    job-slot, GPUs per type :math:`Y_{jtk} \in [0, \min(W_j, C_k)]` and
    :math:`v_{jt} \in [0,1]` non-increasing in :math:`t`.

    .. math::

        \max \sum_{j,t} (f_j(t) - f_j(t-1))\, v_{jt} \ \text{s.t.}\
        \sum_k Y_{jtk} \le W_j v_{jt},\ v_{j,t+1} \le v_{jt},\
        \sum_{t,k} \min(1/W_j, \tau_{jk}\Delta/E_j) Y_{jtk} \ge v_{ja_j},\
        \sum_j Y_{jtk} \le C_k

    with :math:`f_j(a_j - 1) = 0`.
    """
    T, n = model.T, model.n_jobs
    K = len(model.types)
    a, cnt, N, jt_j, jt_t, start = _job_slots(model)
    rates = model.rates
    yi, yk = np.nonzero(rates[jt_j] > 0)
    W = model.W[jt_j].astype(float)
    f = model.values[jt_j, jt_t]
    first = np.zeros(N, dtype=bool)
    first[start[cnt > 0]] = True
    fprev = np.where(first, 0.0, np.concatenate(([0.0], f[:-1])))
    lp = LinearProgram(sense="max", name="hadar-lp")
    capk = model.type_capacity
    yv = lp.add_variables("Y", yi.size, lb=0, ub=np.minimum(W[yi], capk[yk]))
    vv = lp.add_variables("v", N, lb=0, ub=1, cost=f - fprev)
    lp.add_constraints("gang", rows=np.concatenate([yi, np.arange(N)]),
                       cols=np.concatenate([yv.index, vv.index]),
                       vals=np.concatenate([np.ones(yi.size), -W]), ub=0, n_rows=N)
    nxt = np.flatnonzero(~first)  # v_t - v_{t-1} <= 0 for t > a_j
    lp.add_constraints("monotone", rows=np.concatenate([np.arange(nxt.size)] * 2),
                       cols=np.concatenate([vv.index[nxt], vv.index[nxt - 1]]),
                       vals=np.concatenate([np.ones(nxt.size), -np.ones(nxt.size)]), ub=0,
                       n_rows=nxt.size)
    coef = np.minimum(1.0 / W[yi], rates[jt_j[yi], yk] * model.delta / model.E[jt_j[yi]])
    jobs_with = np.flatnonzero(cnt > 0)
    lp.add_constraints("work", rows=np.concatenate([jt_j[yi], jobs_with]),
                       cols=np.concatenate([yv.index, vv.index[start[cnt > 0]]]),
                       vals=np.concatenate([coef, -np.ones(jobs_with.size)]), lb=0, n_rows=n)
    lp.add_constraints("capacity", rows=jt_t[yi] * K + yk, cols=yv.index, vals=1.0,
                       ub=np.tile(capk.astype(float), T), n_rows=T * K)
    return lp


def heuristic_start(model: HadarModel, index: dict, plans: dict) -> dict[str, np.ndarray]:
    """The MILP point of the online algorithm's plans (:func:`optsched.hadar.heuristics.
    run_online` on the same slotted model): ``y`` the GPUs per job-slot and column,
    ``z`` the slowest type used in each slot run, ``u``/``v`` the completion slot.

    Every plan holds all :math:`W_j` GPUs in each slot it runs, no column over its
    capacity, and completes when its work (at the slowest type's rate, capped at the
    job's remaining work as the ``work`` row's ``min(1, .)``) reaches :math:`E_j`; so the
    point satisfies every row and its objective is the heuristic's utility.
    """
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    N = jt_j.size
    n = model.n_jobs
    cnt = np.bincount(jt_j, minlength=n)
    first = np.concatenate(([0], np.cumsum(cnt)[:-1])) if n else np.zeros(0, np.int64)
    a0 = np.full(n, -1, dtype=np.int64)
    a0[cnt > 0] = jt_t[first[cnt > 0]]
    R = int(index["col_type"].size)
    K = len(model.types)
    ypos = np.full((N, R), -1, dtype=np.int64)
    ypos[index["yi"], index["yr"]] = np.arange(index["yi"].size)
    zpos = np.full((N, K), -1, dtype=np.int64)
    zpos[index["zi"], index["zk"]] = np.arange(index["zi"].size)
    y = np.zeros(index["yi"].size)
    z = np.zeros(index["zi"].size)
    u = np.zeros(N)
    v = np.zeros(N)
    for j, pl in plans.items():
        if cnt[j] == 0:
            continue
        for t in np.unique(pl.slots):
            jt = first[j] + int(t) - a0[j]
            sel = pl.slots == t
            kinds = model.bucket_type[pl.buckets[sel]]
            cols = kinds if index["placement"] == "types" else pl.buckets[sel]
            np.add.at(y, ypos[jt, cols], pl.gpus[sel])
            slowest = kinds[np.argmin(model.rates[j, kinds])]
            z[zpos[jt, slowest]] = 1.0
        done = first[j] + pl.t_hat - a0[j]
        u[done] = 1.0
        v[first[j]:done + 1] = 1.0
    out = {"y": y, "z": z, "u": u, "v": v}
    if index.get("work") is not None:
        out["work_done"] = cumulative_work_values(index["work"], z)
    return out


def _schedule(model: HadarModel, values: dict[str, np.ndarray], index: dict) -> Schedule:
    inst = model.instance
    nodes = inst.cluster.nodes
    types = inst.cluster.gpu_types
    d = model.delta
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    u = np.rint(values["u"]).astype(bool)
    comp_slot = {int(jt_j[i]): int(jt_t[i]) for i in np.flatnonzero(u)}
    y = np.rint(values["y"]).astype(np.int64)
    nzy = np.flatnonzero(y > 0)
    allocs, comp = [], {}
    if index["placement"] == "types":
        residual = np.tile(model.bucket_cap, (model.T, 1))
        for i in nzy:
            jti, r = index["yi"][i], index["yr"][i]
            j, t = int(jt_j[jti]), int(jt_t[jti])
            if j not in comp_slot or t > comp_slot[j]:
                continue  # GPUs of a job that is never completed: not part of the schedule
            need = int(y[i])
            for b in np.flatnonzero(model.bucket_type == r):
                g = min(need, int(residual[t, b]))
                if g > 0:
                    residual[t, b] -= g
                    need -= g
                    allocs.append(Allocation(inst.jobs[j].id, t * d, (t + 1) * d,
                                             nodes[model.bucket_node[b]].name, types[r], g))
                if need == 0:
                    break
    else:
        for i in nzy:
            jti, b = index["yi"][i], index["yr"][i]
            j, t = int(jt_j[jti]), int(jt_t[jti])
            if j not in comp_slot or t > comp_slot[j]:
                continue
            allocs.append(Allocation(inst.jobs[j].id, t * d, (t + 1) * d,
                                     nodes[model.bucket_node[b]].name,
                                     types[model.bucket_type[b]], int(y[i])))
    allocs = merge_intervals(allocs)
    # a job completes at the end of the slot its work is done in: the program's
    # completion slot may be later where the utility does not tell them apart
    # (never before it releases its GPUs)
    done = work_done_at(inst, Schedule(tuple(allocs)))
    held: dict[str, float] = {}
    for a in allocs:
        held[a.job] = max(held.get(a.job, 0.0), a.end)
    for j, t in comp_slot.items():
        jid = inst.jobs[j].id
        first = math.ceil(done[jid] / d - 1e-9) - 1 if jid in done else t
        comp[jid] = max(model.completion_time(min(t, max(first, 0))), held.get(jid, 0.0))
    return Schedule(tuple(allocs), comp)


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, slots: int | None = None,
          slot: float | None = None, max_slots: int = DEFAULT_MAX_SLOTS,
          max_columns: int = DEFAULT_MAX_COLUMNS, placement: str = "types",
          relax: bool = False, lp_form: str = "projected", mip_start: bool = True,
          work_cuts: bool = True, **options: Any) -> Result:
    r"""Hadar's offline optimum (total utility, all arrivals known) as the compact
    time-indexed MILP, or its LP relaxation with ``relax=True``.

    Parameters
    ----------
    instance : Instance
        Jobs (utility functions, gangs, throughputs, arrivals) and cluster.
    backend : str
        Solver backend.
    slots, slot, max_slots : int or float, optional
        The planning grid (:func:`optsched.hadar.model.planning_instance`): number of slots
        :math:`T`, slot length :math:`\Delta`, or the cap on :math:`T` (default 64) from
        which the slot is coarsened.
    max_columns : int
        Refuse a program with more columns (:class:`~optsched.errors.ModelTooLarge`, before
        it is built; :func:`optsched.hadar.model.check_size`).
    placement : {"types", "nodes"}
        Aggregate nodes per GPU type (default; same optimum) or state the per-node model.
    relax : bool
        Solve the LP relaxation and return it as ``bound``.
    lp_form : {"projected", "compact"}
        Which relaxation is solved (same optimum; module docstring).
    mip_start : bool
        Start the MILP from the online algorithm's schedule on the same grid
        (:func:`heuristic_start`; its run counts against ``time_limit``), so a solve
        stopped by the limit returns at least the heuristic's utility.
    **options
        Solver options (``time_limit``, which covers the model build, ``mip_gap``,
        ``threads``, ``solver``, ``seed``, ``verbose``).

    Returns
    -------
    Result
        The MILP's total utility, its bound and gap and the schedule; with ``relax=True``
        ``objective=None`` and ``bound`` the LP optimum. ``extra`` holds the program size.

    Guarantee
    ---------
    :math:`\mathrm{OPT} = \max_{\text{schedules}} \sum_j f_j(C_j)` of the slotted model
    (exact; module docstring for the linearisation), :math:`\mathrm{LP} \ge \mathrm{OPT}`;
    a time-limited MILP returns :math:`P \le \mathrm{OPT} \le \text{bound}`.

    Complexity
    ----------
    NP-hard (it contains multiple-choice knapsack); the program has
    :math:`N(2K' + 2)` columns and about :math:`N(K' + 3)` rows for
    :math:`N = \sum_j (T - a_j)` job-slots and :math:`K'` usable types; the LP is
    polynomial.

    References
    ----------
    * Y. Bao, Y. Peng, C. Wu, Z. Li, "Online Job Scheduling in Distributed Machine
      Learning Clusters" (OASiS), INFOCOM 2018, problem (14)-(18).
    * A. Sultana, F. Xu, X. Yuan, L. Chen, N.-F. Tzeng, "Hadar: Heterogeneity-Aware
      Optimization-Based Online Scheduling for Deep Learning Cluster", IPDPS 2024.
    """
    if lp_form not in ("projected", "compact"):
        raise InvalidOption("lp_form", lp_form, "must be 'projected' or 'compact'")
    if placement not in ("types", "nodes"):
        raise InvalidOption("placement", placement, "must be 'types' or 'nodes'")
    tb = time.perf_counter()
    plan = planning_instance(instance, slot, slots, max_slots)
    T = model_slots(plan, slots)
    usable = (plan.throughput_matrix > 0).sum(axis=1)
    buckets = (plan.throughput_matrix > 0).astype(float) @ \
        (plan.cluster.capacity > 0).sum(axis=0)
    width = 2 * usable + 2 if placement == "types" else usable + buckets + 2
    if work_cuts and not relax:
        width = width + 1
    if relax and lp_form == "projected":
        width = usable + 1
    check_size("hadar " + ("LP relaxation" if relax else "MILP"),
               int((job_slots(plan, T) * width).sum()), max_columns, n_jobs=plan.n_jobs,
               slots=T, slot=plan.slot)
    model = build_model(plan, T)
    if relax and lp_form == "projected":
        lp, index = build_projected_lp(model), {}
    else:
        lp, index = build_program(model, placement, relax, work_cuts=work_cuts and not relax)
    data = lp.freeze()
    start = None
    start_source, value = "", 0.0
    if not relax and mip_start:
        from optsched.hadar.heuristics import best_list_schedule, run_online

        online_plans = run_online(model).plans
        online_value = float(sum(model.values[j, p.t_hat] for j, p in online_plans.items()))
        plans, value, kind = best_list_schedule(model)
        if value > online_value:
            start_source = f"list schedule ({kind} order)"
        else:
            plans, value, start_source = online_plans, online_value, "online algorithm"
        start = exact_work_start(data, data.start_vector(heuristic_start(model, index,
                                                                          plans)))
    build = time.perf_counter() - tb
    if relax and backend == "highs" and "options" not in options:
        # interior point (with crossover) is several times faster than simplex here
        options = {**options, "options": {"solver": "ipm"}}
    res = solve_program(data, backend=backend, spent=build, start=start, **options)
    extra: dict[str, Any] = {"slots": model.T, "slot": model.delta, "placement": placement,
             **({"start_source": start_source, "start_value": value} if start is not None
                else {}),
             "columns": data.n_cols, "rows": data.n_rows, "nonzeros": int(data.A.nnz),
             "model_build_seconds": build, "time_limit": res.extra.get("time_limit"),
             **start_fields(res)}
    common: dict[str, Any] = {"model": "hadar", "method": "bound" if relax else "exact",
              "backend": res.backend, "solver": res.solver,
              "build_seconds": build + res.build_seconds, "solve_seconds": res.solve_seconds}
    if relax:
        status = res.status
        return Result(status=status, objective=None, bound=res.bound if status.has_solution
                      else None, duals=res.duals, values=res.values, message=res.message,
                      ratio_note="LP relaxation: an upper bound on the optimum",
                      extra={**extra, "lp_objective": res.objective}, **common)
    if not res.success:
        return res.replace(extra={**res.extra, **extra}, **common)
    sched = _schedule(model, res.values, index)
    obj = float(sum(instance.job(jid).value(c - instance.job(jid).arrival)
                    for jid, c in sched.completion.items()))
    earliest = np.where(model.a + model.nmin <= model.T, model.a + model.nmin - 1, model.T)
    bound = _with_ceiling(res, obj, utility_ceiling(model.values, earliest))
    return finalize(instance, sched, status=res.status, objective=obj, bound=bound["bound"],
                    gap=bound["gap"], values=res.values,
                    ratio=1.0 if res.status is Status.OPTIMAL else None,
                    ratio_note="exact optimum of the slotted model (MILP)",
                    message=res.message, extra={**extra, "milp_objective": res.objective,
                                                "bound_source": bound["bound_source"]},
                    **common)


@declares(solver=True)
def lp_bound(instance: Instance, backend: str = "highs", *, slots: int | None = None,
             slot: float | None = None, max_slots: int | None = None,
             max_columns: int | None = None, lp_form: str = "projected",
             **options: Any) -> Result:
    r"""The LP relaxation of Hadar's MILP as ``bound``: :func:`optsched.hadar.exact.exact` with
    ``relax=True`` and the same options.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    backend : str
        Solver backend.
    slots, slot, max_slots, max_columns, lp_form
        As :func:`optsched.hadar.exact.exact`.
    **options
        Solver options.

    Returns
    -------
    Result
        ``bound`` the LP optimum, ``objective=None``.

    Guarantee
    ---------
    :math:`\text{bound} = \mathrm{LP} \ge \mathrm{OPT}` of the slotted model.

    Complexity
    ----------
    One LP, polynomial; size as :func:`optsched.hadar.exact.exact`.

    References
    ----------
    * OASiS (Bao et al., INFOCOM 2018), the relaxation of (14)-(18).
    """
    grid = {k: v for k, v in (("max_slots", max_slots), ("max_columns", max_columns))
            if v is not None}
    return exact(instance, backend=backend, slots=slots, slot=slot, lp_form=lp_form,
                 relax=True, **grid, **options)
