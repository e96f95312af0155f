r"""Exact Tiresias model: the slotted time-indexed MILP for total JCT.

The slotted model of :mod:`optsched.tiresias.model`: slots of :math:`\Delta` seconds,
preemption and starts only at slot boundaries, job :math:`j` in its window
:math:`a_j \le t \le L_j` (first slot starting at or after its arrival, last slot it may
complete in). Index sets: jobs :math:`j`, window slots :math:`t`, the GPU types
:math:`k \in K_j` the job's gang can use.

Variables

* :math:`x_{jkt} \in \{0,1\}`: job :math:`j` runs on :math:`g_j` GPUs of type :math:`k`
  during slot :math:`t`;
* :math:`z_{jt} \in \{0,1\}`: :math:`t` is the job's completion slot;
  :math:`v_{jt} = \sum_{t' \ge t} z_{jt'} \in [0,1]` ("not yet complete").

.. math::

    \min \sum_j \sum_t \big((t+1)\Delta - s_j - r_j\big)\, z_{jt}
    \quad\text{s.t.}

    \sum_j g_j\, x_{jkt} \le M_k \qquad \forall k, t \qquad\text{(capacity)}

    \sum_{k} x_{jkt} \le v_{jt}, \qquad v_{jt} = z_{jt} + v_{j,t+1},\ v_{j,L_j+1} = 0,
    \ v_{j a_j} = 1 \qquad\text{(one gang, only before completion)}

    \sum_{k,t} x_{jkt} = n_j \ \text{(slot-uniform jobs)},
    \qquad \sum_{k,t} \phi_{jk}\, x_{jkt} \ge 1 \ \text{(others)} \qquad\text{(work)}

with :math:`z_{jt} = 0` for :math:`t < a_j + n_j - 1` (no job completes faster than on
its fastest type). With one GPU type this is the model of the task statement:
:math:`\sum_j g_j x_{jt} \le M`, :math:`\sum_t x_{jt} \ge \lceil d_j/\Delta\rceil` (as an
equality, which loses nothing: a slot beyond :math:`n_j` only holds GPUs), no run before
slot :math:`a_j = \lceil r_j/\Delta \rceil`, completion variables, total JCT. The objective
is each job's JCT in seconds, :math:`C_j - r_j` with :math:`C_j` as in
:mod:`optsched.tiresias.model` (a slot-uniform job completes :math:`s_j` before the end
of its last slot, the others at its end), so the optimum is the slotted model's optimal
total JCT. For a slot-uniform job the *mean-slot* inequality

.. math::

    n_j \sum_t t\, z_{jt} - \sum_{k,t} t\, x_{jkt} \;\ge\; \frac{n_j(n_j - 1)}{2}

is added: its :math:`n_j` run slots are distinct and at most :math:`\hat t_j`, so their
mean is at most :math:`\hat t_j - (n_j-1)/2`. It is valid for every integer point and
tightens the LP relaxation (the demo solves about ten times faster with it).

Exactness. Every feasible point is a slotted schedule (the gang of one type in each slot
it runs, capacity per type, work done by the completion slot) and every slotted schedule
that completes each job inside its window is a feasible point with the same value. The
windows (:func:`optsched.tiresias.model.slotted`) exclude only schedules of total JCT
above the greedy schedule's, so they exclude no optimum. The returned schedule holds
:math:`g_j` GPUs of the chosen type in every slot the job runs, filled node by node
(progress does not depend on the node), and releases a slot-uniform job's gang at
:math:`C_j`; :func:`optsched.core.result.finalize` validates it.

Guarantee:

.. math::

    \mathrm{LB} \;\le\; \mathrm{OPT}_{\text{continuous}} \;\le\;
    \mathrm{OPT}_{\text{slotted}} = \text{this MILP's optimum},

the first by :mod:`optsched.tiresias.bounds`, the second because a slotted schedule is
a continuous-time schedule with the same completion times.

Single-slot classes. A slot-uniform job with :math:`n_j = 1` runs one slot and, in an
optimal schedule, completes in it. Such jobs with the same first slot, gang size and
usable types are interchangeable: their total cost is
:math:`\sum_t (t+1)\Delta\,(\text{jobs completing in } t) - \sum_j (s_j + r_j)`
whichever job takes which slot. Each class :math:`c` (:func:`single_slot_classes`) is
one block of integers :math:`y_{ckt} \in \{0..|c|\}`, the class's jobs run in slot
:math:`t` on type :math:`k`, with :math:`\sum_{k,t} y_{ckt} = |c|`, in the capacity
rows with :math:`g_c`, cost :math:`(t+1)\Delta` and the constant in the offset, over
the union of its members' windows (a larger window cuts off nothing). The optimum is
the per-job MILP's; the schedule gives a class's runs to its members in order.

Size: :math:`N = \sum_j (L_j - a_j + 1)` job-slots, :math:`\sum_j (L_j - a_j + 1)
(|K_j| + 2)` columns, :math:`N + n + TK` rows (plus :math:`N` for :math:`v`). The MILP is
NP-hard in general (it contains :math:`P|r_j|\sum C_j`); HiGHS solves the demo
(12 jobs) in about a second.

Reference: Gu et al., Tiresias, NSDI'19, §2 (gang scheduling, preemption, JCT) and §3
(the objective 2D-LAS and 2D-Gittins approximate); the time-indexed formulation is the
standard one for :math:`\sum C_j` scheduling (Sousa & Wolsey, Math. Prog. 1992).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.options import declares
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram
from optsched.tiresias.model import (
    DEFAULT_MAX_COLUMNS,
    DEFAULT_MAX_SLOTS,
    SlottedModel,
    build_model,
    check_size,
    greedy_slotted,
    slotted,
)

__all__ = ["exact", "build_program", "program_columns", "single_slot_classes"]


def single_slot_classes(sm: SlottedModel) -> tuple[np.ndarray, list[np.ndarray]]:
    """Jobs that need one slot on every type they can use (slot-uniform, :math:`n_j = 1`)
    grouped by (first slot, gang size, usable types): ``(class of each job or -1, the
    members of each class)``. Each class is one block of the MILP (:func:`build_program`)."""
    m = sm.model
    one = np.flatnonzero(sm.uniform & (sm.n == 1) & (sm.last >= sm.a))
    of = np.full(sm.n_jobs, -1, dtype=np.int64)
    groups: dict[tuple, list[int]] = {}
    for j in one.tolist():
        groups.setdefault((int(sm.a[j]), int(m.g[j]), m.usable[j].tobytes()), []).append(j)
    members = [np.array(v, dtype=np.int64) for v in groups.values()]
    for c, mem in enumerate(members):
        of[mem] = c
    return of, members


def program_columns(sm: SlottedModel) -> int:
    """Columns of :func:`build_program`'s MILP, counted before it is built: the
    :meth:`~optsched.tiresias.model.SlottedModel.columns` of the jobs outside the
    single-slot classes plus, per class, its usable types times its window."""
    class_of, members = single_slot_classes(sm)
    width = sm.model.usable.sum(axis=1) + 2
    per_job = np.where(class_of >= 0, 0, np.maximum(0, sm.last - sm.a + 1) * width)
    grouped = sum(int(sm.model.usable[int(mem[0])].sum())
                  * (int(sm.last[mem].max()) - int(sm.a[mem[0]]) + 1) for mem in members)
    return int(per_job.sum()) + grouped


def _pairs(sm: SlottedModel, skip: np.ndarray | None = None):
    """Flattened (job, window slot) pairs: ``jt_j``, ``jt_t``, each job's first pair
    ``start`` and pair count ``cnt`` (none for the jobs of ``skip``)."""
    cnt = np.maximum(0, sm.last - sm.a + 1)
    if skip is not None:
        cnt = np.where(skip, 0, cnt)
    N = int(cnt.sum())
    start = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64) if cnt.size \
        else np.zeros(0, np.int64)
    jt_j = np.repeat(np.arange(sm.n_jobs), cnt)
    jt_t = np.arange(N) - np.repeat(start, cnt) + np.repeat(sm.a, cnt)
    return cnt, N, start, jt_j, jt_t


def build_program(sm: SlottedModel) -> tuple[LinearProgram, dict[str, np.ndarray]]:
    """The MILP of the module docstring as a :class:`LinearProgram`, plus index arrays
    (``x_jt`` pair and ``x_k`` type of each ``x`` column; ``jt_j``, ``jt_t`` per pair;
    ``y_c``, ``y_k``, ``y_t`` class, type and slot of each ``y`` column, ``class_of``
    each job's single-slot class or -1)."""
    m = sm.model
    class_of, members = single_slot_classes(sm)
    cnt, N, start, jt_j, jt_t = _pairs(sm, class_of >= 0)
    K = len(m.types)
    xi, xk = np.nonzero(m.usable[jt_j])  # (pair, type) of every x column
    nx = xi.size
    lp = LinearProgram(sense="min", name="tiresias")
    x = lp.add_variables("x", nx, lb=0, ub=1, integer=True)
    # completion slot: not before a_j + n_j - 1
    cost = (jt_t + 1) * sm.delta - sm.s[jt_j] - m.r[jt_j]
    z_ub = (jt_t >= sm.a[jt_j] + sm.n[jt_j] - 1).astype(float)
    z = lp.add_variables("z", N, lb=0, ub=z_ub, cost=cost, integer=True)
    v = lp.add_variables("v", N, lb=0, ub=1)
    # single-slot classes: y_ckt jobs of class c run (and complete) in slot t on type k
    T = sm.T
    yc, yk, yt = [], [], []
    for c, mem in enumerate(members):
        j0 = int(mem[0])
        ks = np.flatnonzero(m.usable[j0])
        ts = np.arange(int(sm.a[j0]), int(sm.last[mem].max()) + 1)
        yc.append(np.full(ks.size * ts.size, c))
        yk.append(np.repeat(ks, ts.size))
        yt.append(np.tile(ts, ks.size))
    y_c = np.concatenate(yc) if yc else np.zeros(0, np.int64)
    y_k = np.concatenate(yk) if yk else np.zeros(0, np.int64)
    y_t = np.concatenate(yt) if yt else np.zeros(0, np.int64)
    size = np.array([mem.size for mem in members], dtype=float)
    y = lp.add_variables("y", y_c.size, lb=0, ub=size[y_c] if y_c.size else 0.0,
                         cost=(y_t + 1) * sm.delta, integer=True)
    cls = np.flatnonzero(class_of >= 0)
    lp.offset = -float((sm.s[cls] + m.r[cls]).sum())
    lp.add_constraints("class_complete", rows=y_c, cols=y.index, vals=1.0, lb=size, ub=size,
                       n_rows=len(members))
    # capacity per (type, slot)
    g_c = np.array([m.g[int(mem[0])] for mem in members], dtype=float)
    lp.add_constraints("capacity", rows=np.concatenate([xk * T + jt_t[xi], y_k * T + y_t]),
                       cols=np.concatenate([x.index, y.index]),
                       vals=np.concatenate([m.g[jt_j[xi]].astype(float),
                                            g_c[y_c] if y_c.size else np.zeros(0)]),
                       ub=np.repeat(m.capacity.astype(float), T), n_rows=K * T)
    # one gang, only while not complete: sum_k x_jkt - v_jt <= 0
    lp.add_constraints("alive", rows=np.concatenate([xi, np.arange(N)]),
                       cols=np.concatenate([x.index, v.index]),
                       vals=np.concatenate([np.ones(nx), -np.ones(N)]), ub=0, n_rows=N)
    # v_jt - z_jt - v_{j,t+1} = 0 (v past the window is 0)
    has_next = np.ones(N, dtype=bool)
    has_next[(start + cnt - 1)[cnt > 0]] = False
    nxt = np.flatnonzero(has_next)
    lp.add_constraints("completion", rows=np.concatenate([np.arange(N), np.arange(N), nxt]),
                       cols=np.concatenate([v.index, z.index, v.index[nxt + 1]]),
                       vals=np.concatenate([np.ones(N), -np.ones(N), -np.ones(nxt.size)]),
                       lb=0, ub=0, n_rows=N)
    # every job completes: v at its first window slot is 1
    jobs = np.flatnonzero(cnt > 0)
    lp.add_constraints("complete", rows=np.arange(jobs.size), cols=v.index[start[jobs]],
                       vals=1.0, lb=1, ub=1, n_rows=jobs.size)
    # work: = n_j slots (slot-uniform), sum phi x >= 1 (others)
    uni = sm.uniform[jt_j[xi]]
    coef = np.where(uni, 1.0, sm.phi[jt_j[xi], xk])
    lo = np.where(class_of >= 0, 0.0, np.where(sm.uniform, sm.n, 1.0)).astype(float)
    hi = np.where(class_of >= 0, 0.0, np.where(sm.uniform, sm.n, np.inf)).astype(float)
    lp.add_constraints("work", rows=jt_j[xi], cols=x.index, vals=coef, lb=lo, ub=hi,
                       n_rows=m.n_jobs)
    # mean run slot (slot-uniform jobs): n_j distinct slots <= t_hat average at most
    # t_hat - (n_j - 1)/2, so n_j sum_t t z_jt - sum_{k,t} t x_jkt >= n_j (n_j - 1)/2
    sj = np.flatnonzero(sm.uniform & (cnt > 0))
    row_of = np.full(m.n_jobs, -1, dtype=np.int64)
    row_of[sj] = np.arange(sj.size)
    zsel = np.flatnonzero(sm.uniform[jt_j])
    xsel = np.flatnonzero(uni)
    lp.add_constraints("mean_slot", rows=np.concatenate([row_of[jt_j[zsel]],
                                                           row_of[jt_j[xi[xsel]]]]),
                       cols=np.concatenate([z.index[zsel], x.index[xsel]]),
                       vals=np.concatenate([sm.n[jt_j[zsel]] * jt_t[zsel].astype(float),
                                            -jt_t[xi[xsel]].astype(float)]),
                       lb=(sm.n[sj] * (sm.n[sj] - 1) / 2.0).astype(float), n_rows=sj.size)
    return lp, {"x_jt": xi, "x_k": xk, "jt_j": jt_j, "jt_t": jt_t, "y_c": y_c, "y_k": y_k,
                "y_t": y_t, "class_of": class_of}


def greedy_start(sm: SlottedModel, index: dict, slots: int | None,
                 blocks: dict[str, int]) -> dict[str, np.ndarray] | None:
    """The MILP point of the greedy slotted schedule that sets the windows
    (:func:`optsched.tiresias.model.greedy_slotted`), or ``None`` when it does not fit
    ``slots``. The greedy runs each job on one type per slot, a slot-uniform job exactly
    its :math:`n_j` slots and every job to completion inside its window (the windows
    contain the greedy's completions), so the point satisfies every row; its objective
    is ``sm.upper``."""
    runs: list[tuple[int, int, dict[int, int]]] = []
    done, total = greedy_slotted(sm.model, sm.delta, slots, runs=runs)
    if not np.isfinite(total):
        return None
    class_of = index["class_of"]
    cnt = np.where(class_of >= 0, 0, np.maximum(0, sm.last - sm.a + 1))
    first = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64)
    xpos = {(int(p), int(k)): c for c, (p, k) in enumerate(zip(index["x_jt"], index["x_k"]))}
    ypos = {(int(c), int(k), int(t)): i for i, (c, k, t) in
            enumerate(zip(index["y_c"], index["y_k"], index["y_t"]))}
    x = np.zeros(blocks["x"])
    y = np.zeros(blocks["y"])
    z = np.zeros(blocks["z"])
    v = np.zeros(blocks["v"])
    for t0, step, run in runs:
        for j, k in run.items():
            for t in range(t0, min(t0 + step, int(done[j]) + 1)):
                if class_of[j] >= 0:
                    y[ypos[(int(class_of[j]), k, t)]] += 1.0
                else:
                    x[xpos[(int(first[j] + t - sm.a[j]), k)]] = 1.0
    for j in range(sm.n_jobs):
        if cnt[j] > 0:
            end = int(first[j] + done[j] - sm.a[j])
            z[end] = 1.0
            v[first[j]:end + 1] = 1.0
    return {"x": x, "y": y, "z": z, "v": v}


def _schedule(sm: SlottedModel, x: np.ndarray, index: dict,
              y: np.ndarray | None = None) -> Schedule:
    """Gangs filled node by node in each slot; completion in (slot-uniform jobs) or at
    the end of the last slot run. A single-slot class's ``y`` jobs of a (type, slot) are
    its members in order (any order: they are interchangeable)."""
    m = sm.model
    inst = m.instance
    d = sm.delta
    on = np.flatnonzero(np.rint(x) > 0)
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    runs = sorted((int(jt_t[index["x_jt"][c]]), int(jt_j[index["x_jt"][c]]),
                   int(index["x_k"][c])) for c in on)
    if y is not None and y.size:
        _, members = single_slot_classes(sm)
        waiting = [list(mem.tolist()) for mem in members]
        for i in np.flatnonzero(np.rint(y) > 0):
            c, k, t = int(index["y_c"][i]), int(index["y_k"][i]), int(index["y_t"][i])
            for _ in range(int(np.rint(y[i]))):
                runs.append((t, waiting[c].pop(0), k))
        runs.sort()
    last: dict[int, int] = {}
    for t, j, _ in runs:
        last[j] = max(last.get(j, -1), t)
    nodes = [(node.name, node.gpus) for node in inst.cluster.nodes]
    allocs = []
    for t in sorted({t for t, _, _ in runs}):
        free = {(name, typ): c for name, gpus in nodes for typ, c in gpus.items()}
        for tt, j, k in runs:
            if tt != t:
                continue
            typ = m.types[k]
            end = sm.completion(j, t) if t == last[j] else (t + 1) * d
            need = int(m.g[j])
            for name, _ in nodes:
                take = min(need, free.get((name, typ), 0))
                if take > 0:
                    free[(name, typ)] -= take
                    need -= take
                    allocs.append(Allocation(inst.jobs[j].id, t * d, end, name, typ, take))
                if need == 0:
                    break
    comp = {inst.jobs[j].id: sm.completion(j, t) for j, t in last.items()}
    return Schedule(tuple(merge_intervals(allocs)), comp)


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, slot: float | None = None,
          slots: int | None = None, max_slots: int = DEFAULT_MAX_SLOTS,
          max_columns: int = DEFAULT_MAX_COLUMNS, mip_start: bool = True,
          **options: Any) -> Result:
    r"""Optimal total JCT of the slotted Tiresias model (time-indexed MILP).

    Parameters
    ----------
    instance : Instance
        Jobs (arrival, gang size, work, per-worker rates) and cluster.
    backend : {"highs", "pyomo", "cvxpy"}
        Solver backend (:mod:`optsched.solvers`); the same optimum from each.
    slot : float, optional
        Slot length :math:`\Delta` in seconds (default: the planning grid of
        :func:`optsched.tiresias.model.slotted`).
    slots : int, optional
        Horizon :math:`T`: every job must complete by :math:`T\Delta` (default: the
        windows, which cut off no optimum).
    max_slots : int
        Target number of slots when ``slot`` is not given.
    max_columns : int
        Refuse (:class:`~optsched.errors.ModelTooLarge`) a larger program before it is
        built.
    mip_start : bool
        Start the MILP from the greedy slotted schedule that sets the windows
        (:func:`greedy_start`), so a solve stopped by ``time_limit`` returns at most its
        total JCT (``extra["greedy_upper"]``).
    **options
        Solver options (``time_limit``, which covers the model build, ``mip_gap``,
        ``threads``, ``solver``, ``seed``, ``verbose``, ``options``).

    Returns
    -------
    Result
        ``objective`` the total JCT :math:`\sum_j (C_j - r_j)` of the validated schedule,
        ``bound`` the solver's dual bound, ``gap``, ``ratio`` 1 when proved optimal;
        ``extra`` the grid (``slot``, ``slots``), the greedy upper bound and the size.
        On a time limit without an incumbent, ``objective`` is ``None`` and the status
        says why.

    Guarantee
    ---------
    :math:`\mathrm{LB} \le \mathrm{OPT}_{\text{continuous}} \le
    \mathrm{OPT}_{\text{slotted}} =` ``objective`` when ``status`` is optimal (LB from
    :func:`optsched.tiresias.bounds.lp_bound`); on a time limit
    ``bound`` :math:`\le \mathrm{OPT}_{\text{slotted}} \le` ``objective``.

    Complexity
    ----------
    NP-hard (it contains :math:`P|r_j|\sum C_j`); the program has
    :math:`\sum_j (L_j - a_j + 1)(|K_j| + 2)` columns, checked before it is built.

    References
    ----------
    * Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, NSDI'19,
      §2-3 (gangs, preemption, total JCT).
    * Sousa and Wolsey, A time indexed formulation of non-preemptive single machine
      scheduling problems, Math. Programming 54, 1992.
    """
    tb = time.perf_counter()
    sm = slotted(build_model(instance), slot, slots, max_slots)
    check_size("tiresias MILP", program_columns(sm), max_columns, n_jobs=sm.n_jobs,
               slots=sm.T, slot=sm.delta)
    lp, index = build_program(sm)
    data = lp.freeze()
    start = greedy_start(sm, index, slots, {b.name: b.size for b in data.var_blocks}) \
        if mip_start else None
    build = time.perf_counter() - tb
    res = solve_program(data, backend=backend, spent=build, start=start, **options)
    extra = {"slot": sm.delta, "slots": sm.T, "greedy_upper": sm.upper,
             "columns": data.n_cols, "rows": data.n_rows, "nonzeros": int(data.A.nnz),
             "model_build_seconds": build, "time_limit": res.extra.get("time_limit"),
             **start_fields(res)}
    common = {"model": "tiresias", "method": "exact", "backend": res.backend,
              "solver": res.solver, "build_seconds": build + res.build_seconds,
              "solve_seconds": res.solve_seconds}
    if not res.success:
        return res.replace(extra={**res.extra, **extra}, **common)
    sched = _schedule(sm, res.values["x"], index, res.values.get("y"))
    obj = sm.model.total_jct(sched.completion)
    return finalize(instance, sched, status=res.status, objective=obj, bound=res.bound,
                    gap=res.gap, values=res.values,
                    ratio=1.0 if res.status is Status.OPTIMAL else None,
                    ratio_note="exact optimum of the slotted model (preemption only at "
                               "slot boundaries): LB <= OPT_continuous <= this",
                    message=res.message, extra={**extra, "milp_objective": res.objective},
                    **common)
