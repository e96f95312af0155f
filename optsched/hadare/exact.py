r"""Exact offline HadarE: the time-indexed MILP of the forking model and its LP relaxation.

All arrivals known. Slots :math:`t \in [a_j, T)` of job :math:`j`; buckets :math:`b =
(h, k)` (node, GPU type) with :math:`c_b > 0` and :math:`\tau_{jk} > 0`; :math:`\kappa`
the consolidation cost (seconds); see :mod:`optsched.hadare.model` for the model and
where it is our reading of the paper.

Variables

* :math:`x_{jtb} \in \{0, .., \min(W_j, c_b)\}`: GPUs of the copy of :math:`j` on bucket
  :math:`b` in slot :math:`t`;
* :math:`o_{jtb} \in \{0,1\}`: :math:`j` has a copy on :math:`b` in slot :math:`t`;
* :math:`u_{jt} \in \{0,1\}`: :math:`t` is the completion slot (work done by its end);
  :math:`v_{jt} = \sum_{t' \ge t} u_{jt'}` ("not yet complete").

.. math::

    o_{jtb} \le x_{jtb} \le \min(W_j, c_b)\, o_{jtb}
        \qquad\text{(a copy holds } 1..W_j \text{ GPUs)}

    \sum_{b \in h} o_{jtb} \le v_{jt} \quad \forall h
        \qquad\text{(one copy of one type per node, only before completion)}

    \sum_b o_{jtb} \le F_j \qquad\text{(at most } F_j \text{ copies; rows only when binding)}

    v_{jt} = u_{jt} + v_{j,t+1}, \quad v_{jT} = 0

    \sum_{t, b} \frac{\tau_{j k(b)} \Delta}{E_j} x_{jtb} \ge v_{j a_j}
        \qquad\text{(additive progress of the copies reaches } E_j)

    \sum_j x_{jtb} \le c_b \qquad\text{(capacity)}

Objectives (``objective``):

* ``"utility"`` (Hadar's): :math:`\max \sum_{j,t} f_j((t+1)\Delta + \kappa -
  \text{arrival}_j)\, u_{jt}`; unfinished jobs count 0;
* ``"makespan"``: every job must complete (:math:`v_{j a_j} = 1`),
  :math:`\min M` with :math:`M \ge \sum_t ((t+1)\Delta + \kappa)\, u_{jt}`; the reported
  objective is :math:`M - \min_j \text{arrival}_j` (the metrics' makespan);
* ``"jct"``: every job must complete, :math:`\min \sum_{j,t} w_j ((t+1)\Delta + \kappa -
  \text{arrival}_j)\, u_{jt}` (total weighted JCT).

Copy efficiency :math:`e < 1` (``copy_efficiency``; the heuristic's model): in each slot
one copy of the job counts in full and every other at :math:`e`. With
:math:`m_{jtb} \in [0, \min(W_j, c_b)]` the GPUs of the *main* copy and
:math:`z_{jtb} \in \{0,1\}` its bucket,

.. math::

    m_{jtb} \le x_{jtb}, \quad m_{jtb} \le \min(W_j, c_b)\, z_{jtb}, \quad
    \sum_b z_{jtb} \le 1, \qquad
    \sum_{t, b} \frac{\tau_{j k(b)} \Delta}{E_j} \big(e\, x_{jtb} + (1 - e)\, m_{jtb}\big)
        \ge v_{j a_j},

so a slot credits :math:`e \sum_b \tau x + (1-e)\,\tau_{b^*} x_{b^*}` for the chosen
copy :math:`b^*`: at most the heuristic's credit (its main copy is the one of largest
rate), and exactly it when the solver picks that copy, which maximises the credit. Hence
every schedule of the heuristic is feasible here under the same :math:`e` and the two
optimise the same model. The schedule declares ``copy_efficiency``, so the validator
credits its copies by the same rule (at every instant, the largest copy in full).
Size: :math:`2NB_j` more columns and rows and :math:`N` more rows.

Unlike Hadar's gang, a copy holds one type, so progress is linear in :math:`x` and no
slowest-type linearisation is needed. ``relax=True`` drops all integrality: for
``"utility"`` the LP value is an upper bound on the optimum, for the min objectives a
lower bound (``Result.bound``, no schedule). Any schedule of the round loop of
:mod:`optsched.hadare.heuristics` with ``completion="slot"`` is feasible here (a copy that
stops inside its completion slot is dominated by holding the slot), so the MILP optimum
is at least the heuristic's utility.

Size: :math:`N = \sum_j (T - a_j)` job-slots; :math:`2 N B_j + 3N` columns (with
:math:`B_j` usable buckets) and about :math:`2NB_j + NH + 2N` rows. Vectorised build.

Node classes (``formulation="classes"``; the default ``"auto"`` uses it where exact).
When every node holds one GPU type, ``copy_efficiency`` is 1 and no job's copy limit
binds (:math:`F_j \ge` the nodes it can use), the program is stated over classes
:math:`g` of identical nodes (:math:`n_g` nodes of :math:`c_g` GPUs of type :math:`k_g`,
:func:`node_classes`) with :math:`X_{jtg} \in \{0..n_g \min(W_j, c_g)\}`,
:math:`X_{jtg} \le n_g \min(W_j, c_g)\, v_{jt}`, :math:`\sum_j X_{jtg} \le n_g c_g` and
the work row over :math:`\tau_{jk_g}\Delta X_{jtg} / E_j`. Same optimum: a per-node point
sums to a class point of the same progress; conversely, laying a slot's class GPUs job
after job and sending unit :math:`i` to node :math:`i \bmod n_g` gives each job at most
:math:`\lceil X_{jtg}/n_g \rceil \le \min(W_j, c_g)` GPUs per node (one copy of one
type, at most one per node it can use, so :math:`F_j` holds) and each node at most
:math:`\lceil \sum_j X_{jtg} / n_g \rceil \le c_g` (:func:`_class_allocations` builds
the schedule so). Size :math:`N(G_j + 2)` columns with :math:`G_j` usable classes
(:math:`N` more with ``work_cuts``, :func:`optsched.hadar.exact.add_cumulative_work`).
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
from optsched.hadar.exact import (
    add_cumulative_work,
    cumulative_work_values,
    exact_work_start,
    utility_ceiling,
)
from optsched.hadar.model import (
    DEFAULT_MAX_SLOTS,
    check_size,
    model_slots,
    planning_instance,
)
from optsched.hadare.model import (
    OBJECTIVES,
    completion_values,
    consolidation_seconds,
    max_copies_of,
)
from optsched.options import declares
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram

#: Default cap on the columns of HadarE's MILP and LP. HadarE has a copy variable per job,
#: node and slot, so a large cluster grows it fast. Measured with HiGHS 1.15 and a 20 s
#: limit: 40 generated Philly jobs on 27 nodes (139,904 columns) stopped at the limit with
#: an incumbent (gap 17.6%); 6 Philly jobs on the 256 nodes of ``tiresias-n256g8``
#: (184,370 columns) spent 67 s in presolve alone, which does not check the limit often.
#: ``max_columns`` raises the cap.
DEFAULT_MAX_COLUMNS = 150_000

#: ``formulation`` values: ``"auto"`` (classes where exact, else nodes), ``"nodes"``,
#: ``"classes"``.
FORMULATIONS = ("auto", "nodes", "classes")

__all__ = ["exact", "build_program", "node_classes", "classes_exact", "FORMULATIONS"]


def node_classes(instance: Instance) -> dict[str, np.ndarray] | None:
    """The classes of identical single-type nodes (same GPU type, same count), or
    ``None`` when some node holds more than one GPU type.

    Returns ``type``, ``cap`` (GPUs per node), ``count`` (nodes) per class and
    ``nodes`` (node indices, class by class, ascending) with ``offset`` (each class's
    first position in ``nodes``)."""
    cap = instance.cluster.capacity
    kinds = (cap > 0).sum(axis=1)
    if (kinds > 1).any():
        return None
    used = np.flatnonzero(kinds == 1)
    k = cap[used].argmax(axis=1)
    c = cap[used, k]
    keys, cls = np.unique(np.stack([k, c], axis=1), axis=0, return_inverse=True)
    cls = cls.ravel()
    order = np.lexsort((used, cls))
    count = np.bincount(cls, minlength=keys.shape[0]).astype(np.int64)
    return {"type": keys[:, 0].astype(np.int64), "cap": keys[:, 1].astype(np.int64),
            "count": count, "nodes": used[order].astype(np.int64),
            "offset": np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.int64)}


def classes_exact(instance: Instance, F: np.ndarray, efficiency: float) -> bool:
    """Whether the node-class program has the per-node program's optimum: every node
    holds one GPU type, copies add up fully (``efficiency == 1``) and no job's copy
    limit binds (:math:`F_j \\ge` the nodes it can use); see the module docstring."""
    if efficiency != 1.0 or node_classes(instance) is None:
        return False
    cap = instance.cluster.capacity
    usable = ((instance.throughput_matrix > 0).astype(np.int64) @ (cap > 0).T.astype(np.int64)
              > 0).sum(axis=1)
    return bool((np.asarray(F) >= usable).all())


def _job_slots(instance: Instance, T: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The (job, slot) pairs both programs index: job :math:`j` may run in slots
    :math:`a_j .. T-1`, :math:`a_j` its arrival rounded up to a slot. Returns ``a``, the
    count per job ``cnt``, each job's first pair ``start``, and the pairs' job ``jt_j``
    and slot ``jt_t``, jobs in order and slots ascending within a job."""
    n = instance.n_jobs
    d = float(instance.slot)
    a = np.ceil(instance.arrivals / d - 1e-9).astype(np.int64) if n else np.zeros(0, int)
    cnt = np.maximum(0, T - a)
    N = int(cnt.sum())
    jt_j = np.repeat(np.arange(n), cnt)
    start = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64) if n else np.zeros(0, int)
    jt_t = np.arange(N) - np.repeat(start, cnt) + np.repeat(a, cnt)
    return a, cnt, start, jt_j, jt_t


def build_program(instance: Instance, T: int, *, kappa: float = 0.0,
                  F: np.ndarray | None = None, objective: str = "utility",
                  relax: bool = False, efficiency: float = 1.0,
                  formulation: str = "nodes", work_cuts: bool = False
                  ) -> tuple[LinearProgram, dict[str, Any]]:
    """The MILP (or its LP relaxation) as a :class:`LinearProgram` plus index arrays
    (``efficiency`` :math:`e < 1` adds the main-copy variables of the module
    docstring). ``formulation="classes"`` states it over classes of identical nodes
    (:func:`node_classes`; exact only where :func:`classes_exact` holds, which it
    checks)."""
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {OBJECTIVES}")
    if formulation not in FORMULATIONS[1:]:
        raise InvalidOption("formulation", formulation, f"must be one of {FORMULATIONS[1:]}")
    if formulation == "classes":
        n_ = instance.n_jobs
        F_ = np.full(n_, len(instance.cluster.nodes), dtype=np.int64) if F is None else F
        if not classes_exact(instance, F_, efficiency):
            raise InvalidOption("formulation", formulation, "the node-class program is exact "
                                "only with single-type nodes, copy_efficiency 1 and no "
                                "binding max_copies; use 'nodes'")
        return _build_classes(instance, T, kappa=kappa, objective=objective, relax=relax,
                              work_cuts=work_cuts)
    d = float(instance.slot)
    cl = instance.cluster
    H = len(cl.nodes)
    cap = cl.capacity
    hh, kk = np.nonzero(cap > 0)
    bcap = cap[hh, kk].astype(np.int64)
    n = instance.n_jobs
    if F is None:
        F = np.full(n, H, dtype=np.int64)
    rates = instance.throughput_matrix
    W = instance.workers.astype(np.int64)
    E = instance.work
    a, cnt, start, jt_j, jt_t = _job_slots(instance, T)
    N = jt_j.size
    xi, xb = np.nonzero(rates[jt_j][:, kk] > 0)
    nx = xi.size
    xj = jt_j[xi]
    integer = not relax
    sense = "max" if objective == "utility" else "min"
    lp = LinearProgram(sense=sense, name=f"hadare-{objective}" + ("-lp" if relax else ""))
    x = lp.add_variables("x", nx, lb=0, ub=np.minimum(W[xj], bcap[xb]), integer=integer)
    o = lp.add_variables("o", nx, lb=0, ub=1, integer=integer)
    values = completion_values(instance, T, kappa)
    ucost = values[jt_j, jt_t] if objective == "utility" else 0.0
    if objective == "jct":
        w = np.array([j.weight for j in instance.jobs])
        ucost = w[jt_j] * ((jt_t + 1) * d + kappa - instance.arrivals[jt_j])
    u = lp.add_variables("u", N, lb=0, ub=1, cost=ucost, integer=integer)
    has = cnt > 0
    first = start[has]
    vlb = np.zeros(N)
    if objective != "utility":
        vlb[first] = 1.0  # every job completes
    v = lp.add_variables("v", N, lb=vlb, ub=1)
    # copy size 1..min(W, c) when open
    r = np.arange(nx)
    lp.add_constraints("copy_max", rows=np.concatenate([r, r]),
                       cols=np.concatenate([x.index, o.index]),
                       vals=np.concatenate([np.ones(nx), -np.minimum(W[xj], bcap[xb])]),
                       ub=0, n_rows=nx)
    lp.add_constraints("copy_min", rows=np.concatenate([r, r]),
                       cols=np.concatenate([x.index, o.index]),
                       vals=np.concatenate([np.ones(nx), -np.ones(nx)]), lb=0, n_rows=nx)
    # one copy of one type per node, only before completion
    key = xi * H + hh[xb]
    ukeys, row = np.unique(key, return_inverse=True)
    ujt = ukeys // H
    nr = ukeys.size
    lp.add_constraints("one_per_node", rows=np.concatenate([row, np.arange(nr)]),
                       cols=np.concatenate([o.index, v.index[ujt]]),
                       vals=np.concatenate([np.ones(nx), -np.ones(nr)]), ub=0, n_rows=nr)
    # at most F_j copies, where it can bind
    nodes_usable = np.array([int(np.unique(hh[rates[j, kk] > 0]).size) for j in range(n)],
                            dtype=np.int64) if n else np.zeros(0, int)
    bind = F[jt_j] < nodes_usable[jt_j]
    if bind.any():
        sel = bind[xi]
        rows_jt = np.flatnonzero(bind)
        remap = np.full(N, -1, dtype=np.int64)
        remap[rows_jt] = np.arange(rows_jt.size)
        lp.add_constraints("max_copies", rows=remap[xi[sel]], cols=o.index[sel], vals=1.0,
                           ub=F[jt_j[rows_jt]].astype(float), n_rows=rows_jt.size)
    # v_t = u_t + v_{t+1}
    has_next = np.ones(N, dtype=bool)
    if n:
        has_next[(start + cnt - 1)[has]] = False
    nxt = np.arange(N) + 1
    lp.add_constraints("completion",
                       rows=np.concatenate([np.arange(N), np.arange(N),
                                            np.flatnonzero(has_next)]),
                       cols=np.concatenate([v.index, u.index, v.index[nxt[has_next]]]),
                       vals=np.concatenate([np.ones(N), -np.ones(N),
                                            -np.ones(int(has_next.sum()))]),
                       lb=0, ub=0, n_rows=N)
    # additive work, normalised by E_j
    frac = rates[xj, kk[xb]] * d / E[xj]
    jobs_with = np.flatnonzero(has)
    wrow = np.full(n, -1, dtype=np.int64)
    wrow[jobs_with] = np.arange(jobs_with.size)
    if efficiency < 1.0:
        # the main copy's GPUs m (on the one bucket z picks per job-slot) count in full,
        # every GPU at e: progress e x + (1 - e) m
        m = lp.add_variables("m", nx, lb=0, ub=np.minimum(W[xj], bcap[xb]))
        z = lp.add_variables("z", nx, lb=0, ub=1, integer=integer)
        lp.add_constraints("main_le_copy", rows=np.concatenate([r, r]),
                           cols=np.concatenate([m.index, x.index]),
                           vals=np.concatenate([np.ones(nx), -np.ones(nx)]), ub=0, n_rows=nx)
        lp.add_constraints("main_picked", rows=np.concatenate([r, r]),
                           cols=np.concatenate([m.index, z.index]),
                           vals=np.concatenate([np.ones(nx), -np.minimum(W[xj], bcap[xb])]),
                           ub=0, n_rows=nx)
        lp.add_constraints("one_main", rows=xi, cols=z.index, vals=1.0, ub=1, n_rows=N)
        lp.add_constraints("work", rows=np.concatenate([wrow[xj], wrow[xj],
                                                        np.arange(jobs_with.size)]),
                           cols=np.concatenate([x.index, m.index, v.index[first]]),
                           vals=np.concatenate([efficiency * frac, (1 - efficiency) * frac,
                                                -np.ones(first.size)]), lb=0,
                           n_rows=jobs_with.size)
    else:
        lp.add_constraints("work", rows=np.concatenate([wrow[xj], np.arange(jobs_with.size)]),
                           cols=np.concatenate([x.index, v.index[first]]),
                           vals=np.concatenate([frac, -np.ones(first.size)]), lb=0,
                           n_rows=jobs_with.size)
    B = bcap.size
    lp.add_constraints("capacity", rows=jt_t[xi] * B + xb, cols=x.index, vals=1.0,
                       ub=np.tile(bcap.astype(float), T), n_rows=T * B)
    if objective == "makespan":
        M = lp.add_variables("M", 1, lb=0, cost=1.0)
        lp.add_constraints("makespan",
                           rows=np.concatenate([jt_j, np.flatnonzero(has)]),
                           cols=np.concatenate([u.index, np.full(jobs_with.size, M.index[0])]),
                           vals=np.concatenate([(jt_t + 1) * d + kappa,
                                                -np.ones(jobs_with.size)]),
                           ub=0, n_rows=n)
    index = {"jt_j": jt_j, "jt_t": jt_t, "xi": xi, "xb": xb, "bucket_node": hh,
             "bucket_type": kk, "cnt": cnt}
    return lp, index


def _build_classes(instance: Instance, T: int, *, kappa: float, objective: str,
                   relax: bool, work_cuts: bool = True
                   ) -> tuple[LinearProgram, dict[str, Any]]:
    r"""The program over classes :math:`g` of identical single-type nodes (module
    docstring): :math:`X_{jtg} \in \{0..n_g \min(W_j, c_g)\}` GPUs of class
    :math:`g` in slot :math:`t`, :math:`u`, :math:`v` as in the per-node program."""
    d = float(instance.slot)
    cls = node_classes(instance)
    assert cls is not None
    ctype, ccap, ccount = cls["type"], cls["cap"], cls["count"]
    n = instance.n_jobs
    rates = instance.throughput_matrix
    W = instance.workers.astype(np.int64)
    E = instance.work
    a, cnt, start, jt_j, jt_t = _job_slots(instance, T)
    N = jt_j.size
    xi, xg = np.nonzero(rates[jt_j][:, ctype] > 0)
    nx = xi.size
    xj = jt_j[xi]
    integer = not relax
    sense = "max" if objective == "utility" else "min"
    lp = LinearProgram(sense=sense, name=f"hadare-{objective}-classes" + ("-lp" if relax else ""))
    top = ccount[xg] * np.minimum(W[xj], ccap[xg])  # one copy of <= min(W, c) per node
    x = lp.add_variables("X", nx, lb=0, ub=top, integer=integer)
    values = completion_values(instance, T, kappa)
    ucost = values[jt_j, jt_t] if objective == "utility" else 0.0
    if objective == "jct":
        w = np.array([j.weight for j in instance.jobs])
        ucost = w[jt_j] * ((jt_t + 1) * d + kappa - instance.arrivals[jt_j])
    u = lp.add_variables("u", N, lb=0, ub=1, cost=ucost, integer=integer)
    has = cnt > 0
    first = start[has]
    vlb = np.zeros(N)
    if objective != "utility":
        vlb[first] = 1.0  # every job completes
    v = lp.add_variables("v", N, lb=vlb, ub=1)
    # GPUs only before completion
    lp.add_constraints("alive", rows=np.concatenate([np.arange(nx), np.arange(nx)]),
                       cols=np.concatenate([x.index, v.index[xi]]),
                       vals=np.concatenate([np.ones(nx), -top.astype(float)]), ub=0,
                       n_rows=nx)
    has_next = np.ones(N, dtype=bool)
    if n:
        has_next[(start + cnt - 1)[has]] = False
    nxt = np.arange(N) + 1
    lp.add_constraints("completion",
                       rows=np.concatenate([np.arange(N), np.arange(N),
                                            np.flatnonzero(has_next)]),
                       cols=np.concatenate([v.index, u.index, v.index[nxt[has_next]]]),
                       vals=np.concatenate([np.ones(N), -np.ones(N),
                                            -np.ones(int(has_next.sum()))]),
                       lb=0, ub=0, n_rows=N)
    frac = rates[xj, ctype[xg]] * d / E[xj]
    jobs_with = np.flatnonzero(has)
    work = None
    if work_cuts:
        work = add_cumulative_work(lp, xi, x.index, frac, v.index, start, cnt)
    else:
        wrow = np.full(n, -1, dtype=np.int64)
        wrow[jobs_with] = np.arange(jobs_with.size)
        lp.add_constraints("work", rows=np.concatenate([wrow[xj], np.arange(jobs_with.size)]),
                           cols=np.concatenate([x.index, v.index[first]]),
                           vals=np.concatenate([frac, -np.ones(first.size)]), lb=0,
                           n_rows=jobs_with.size)
    G = ctype.size
    lp.add_constraints("capacity", rows=jt_t[xi] * G + xg, cols=x.index, vals=1.0,
                       ub=np.tile((ccount * ccap).astype(float), T), n_rows=T * G)
    if objective == "makespan":
        M = lp.add_variables("M", 1, lb=0, cost=1.0)
        lp.add_constraints("makespan",
                           rows=np.concatenate([jt_j, np.flatnonzero(has)]),
                           cols=np.concatenate([u.index, np.full(jobs_with.size, M.index[0])]),
                           vals=np.concatenate([(jt_t + 1) * d + kappa,
                                                -np.ones(jobs_with.size)]),
                           ub=0, n_rows=n)
    index = {"jt_j": jt_j, "jt_t": jt_t, "xi": xi, "xg": xg, "classes": cls, "cnt": cnt,
             "formulation": "classes", "work": work}
    return lp, index


def lp_rounded_start(instance: Instance, T: int, kappa: float, index: dict,
                     blocks: tuple[str, ...], **options: Any
                     ) -> tuple[dict[str, np.ndarray], float] | None:
    """A start of the node-class program (``objective="utility"``) from its LP
    relaxation (:func:`optsched.hadare.heuristics.lp_order`) and its utility, or ``None`` when the
    LP gives no point (``options`` go to the solver; its time counts against them)."""
    from optsched.hadare.heuristics import list_schedule_classes, lp_order

    lp, _ = _build_classes(instance, T, kappa=kappa, objective="utility", relax=True,
                           work_cuts=True)
    opts = dict(options)
    opts.setdefault("options", {"solver": "ipm"})
    res = solve_program(lp.freeze(), **opts)
    if not res.status.has_solution or res.values is None:
        return None
    order = lp_order(np.asarray(res.values["u"]), index["jt_j"], index["jt_t"],
                     instance.n_jobs)
    values = completion_values(instance, T, kappa)
    placed = list_schedule_classes(instance, T, values, index["classes"], order)
    return placed_start(instance, T, placed, values, index, blocks)


def placed_start(instance: Instance, T: int, placed: dict, values: np.ndarray,
                 index: dict, blocks: tuple[str, ...]
                 ) -> tuple[dict[str, np.ndarray], float]:
    """The node-class program's point of list-scheduled placements
    (:func:`optsched.hadare.heuristics.list_schedule_classes`) and its utility."""
    jt_j = index["jt_j"]
    n = instance.n_jobs
    N = jt_j.size
    cnt = index["cnt"]
    first = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64) if n else cnt
    a = np.where(cnt > 0, T - cnt, 0)
    xpos = {(int(i), int(g)): c for c, (i, g) in enumerate(zip(index["xi"], index["xg"]))}
    X = np.zeros(index["xi"].size)
    u = np.zeros(N)
    v = np.zeros(N)
    total = 0.0
    for j, (done, plan) in placed.items():
        u[first[j] + done - a[j]] = 1.0
        v[first[j]:first[j] + done - a[j] + 1] = 1.0
        total += float(values[j, done])
        for (t, g), x in plan.items():
            X[xpos[(int(first[j] + t - a[j]), g)]] = x
    start = {"X": X, "u": u, "v": v}
    if "work_done" in blocks:
        start["work_done"] = cumulative_work_values(index["work"], X)
    return start, total


def _class_allocations(instance: Instance, xv: np.ndarray, index: dict,
                       comp_slot: dict[int, int]) -> list[Allocation]:
    r"""Per-node copies of the class totals by wrap-around: in each (slot, class), the
    jobs' GPUs are laid out one after another and unit :math:`i` goes to the class's
    node :math:`i \bmod n_g`. A job with :math:`X \le n_g \min(W_j, c_g)` GPUs gets at
    most :math:`\lceil X / n_g\rceil \le \min(W_j, c_g)` on a node (one copy per
    node) and a node at most :math:`\lceil \sum_j X / n_g \rceil \le c_g`."""
    nodes = instance.cluster.nodes
    types = instance.cluster.gpu_types
    d = float(instance.slot)
    cls = index["classes"]
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    allocs: list[Allocation] = []
    keep = [i for i in np.flatnonzero(xv > 0)
            if int(jt_j[index["xi"][i]]) in comp_slot
            and jt_t[index["xi"][i]] <= comp_slot[int(jt_j[index["xi"][i]])]]
    cells: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i in keep:
        jti = index["xi"][i]
        cells.setdefault((int(jt_t[jti]), int(index["xg"][i])), []).append(
            (int(jt_j[jti]), int(xv[i])))
    for (t, g), jobs in cells.items():
        ng, o = int(cls["count"][g]), int(cls["offset"][g])
        members = cls["nodes"][o:o + ng]
        pos = 0
        for j, gpus in jobs:
            per = np.bincount((pos + np.arange(gpus)) % ng, minlength=ng)
            pos += gpus
            for h_pos in np.flatnonzero(per):
                h = int(members[h_pos])
                allocs.append(Allocation(instance.jobs[j].id, t * d, (t + 1) * d,
                                         nodes[h].name, types[cls["type"][g]],
                                         int(per[h_pos]), copy=h))
    return allocs


def heuristic_start(instance: Instance, sched: Schedule, index: dict, T: int, kappa: float,
                    blocks: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The MILP point of a schedule of the online round loop (``completion="slot"``)
    on the planning grid of ``instance``.

    A job completed in slot :math:`t` (``completion - kappa`` is the end of :math:`t`)
    gets ``u`` there and ``v`` up to it; each (slot, bucket) it held GPUs in before or in
    that slot becomes a copy with the most GPUs it held there (a copy that stops inside
    its completion slot holds it to the end: the round loop never hands a GPU to another
    job within a round). Jobs that never complete get nothing (a copy needs ``v = 1``).
    ``m``/``z`` (copy efficiency below 1) pick the copy of largest rate x GPUs, the one
    the heuristic credits in full.
    """
    d = float(instance.slot)
    jt_j = index["jt_j"]
    N, n = jt_j.size, instance.n_jobs
    cnt = index["cnt"]
    first = np.concatenate(([0], np.cumsum(cnt)[:-1])).astype(np.int64) if n else cnt
    a = np.where(cnt > 0, T - cnt, 0)
    node_of = {nd.name: h for h, nd in enumerate(instance.cluster.nodes)}
    type_of = {t: k for k, t in enumerate(instance.cluster.gpu_types)}
    job_of = {job.id: j for j, job in enumerate(instance.jobs)}
    u = np.zeros(N)
    v = np.zeros(N)
    done: dict[int, int] = {}
    for jid, c in sched.completion.items():
        j = job_of[jid]
        t = int(round((c - kappa) / d)) - 1
        if cnt[j] > 0 and a[j] <= t < T:
            done[j] = t
            u[first[j] + t - a[j]] = 1.0
            v[first[j]:first[j] + t - a[j] + 1] = 1.0
    held: dict[tuple[int, int, int], int] = {}  # (job-slot, node, type) -> GPUs
    for al in sched.allocations:
        j = job_of[al.job]
        if j not in done:
            continue
        h, k = node_of[al.node], type_of[al.gpu_type]
        for t in range(int(np.floor(al.start / d + 1e-9)), int(np.ceil(al.end / d - 1e-9))):
            if a[j] <= t <= done[j]:
                key = (int(first[j] + t - a[j]), h, k)
                held[key] = max(held.get(key, 0), al.gpus)
    if index.get("formulation") == "classes":
        cls = index["classes"]
        group = np.full(len(instance.cluster.nodes), -1, dtype=np.int64)
        for g in range(cls["type"].size):
            o = cls["offset"][g]
            group[cls["nodes"][o:o + cls["count"][g]]] = g
        xpos = {(int(i), int(g)): c for c, (i, g) in enumerate(zip(index["xi"], index["xg"]))}
        X = np.zeros(index["xi"].size)
        for (i, h, _k), g_ in held.items():
            X[xpos[(i, int(group[h]))]] += g_
        out = {"X": X, "u": u, "v": v}
        if "work_done" in blocks:
            out["work_done"] = cumulative_work_values(index["work"], X)
        if "M" in blocks:
            out["M"] = np.array([max([(t + 1) * d + kappa for t in done.values()],
                                     default=0.0)])
        return out
    hh, kk = index["bucket_node"], index["bucket_type"]
    bucket = {(int(h), int(k)): b for b, (h, k) in enumerate(zip(hh, kk))}
    xpos = {(int(i), int(b)): c for c, (i, b) in enumerate(zip(index["xi"], index["xb"]))}
    x = np.zeros(index["xi"].size)
    for (i, h, k), g_ in held.items():
        x[xpos[(i, bucket[(h, k)])]] = g_
    start = {"x": x, "o": (x > 0).astype(float), "u": u, "v": v}
    if "m" in blocks:
        rate = instance.throughput_matrix[jt_j[index["xi"]], kk[index["xb"]]]
        credit = rate * x
        z = np.zeros_like(x)
        for i in np.unique(index["xi"][x > 0]):
            cols = np.flatnonzero(index["xi"] == i)
            z[cols[np.argmax(credit[cols])]] = 1.0
        start.update(m=x * z, z=z)
    if "M" in blocks:
        ends = [(t + 1) * d + kappa for t in done.values()]
        start["M"] = np.array([max(ends, default=0.0)])
    return start


def _schedule(instance: Instance, values: dict[str, np.ndarray], index: dict,
              kappa: float, efficiency: float = 1.0) -> Schedule:
    d = float(instance.slot)
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    u = np.rint(values["u"]).astype(bool)
    comp_slot = {int(jt_j[i]): int(jt_t[i]) for i in np.flatnonzero(u)}
    if index.get("formulation") == "classes":
        allocs = _class_allocations(instance, np.rint(values["X"]).astype(np.int64), index,
                                    comp_slot)
    else:
        allocs = _node_allocations(instance, np.rint(values["x"]).astype(np.int64), index,
                                   comp_slot)
    allocs = merge_intervals(allocs)
    # a job completes (plus kappa) at the end of the slot its work is done in, never
    # before it releases its GPUs: the program's completion slot may be later where the
    # objective does not tell them apart
    done = work_done_at(instance, Schedule(tuple(allocs), forking=True,
                                           copy_efficiency=efficiency))
    held: dict[str, float] = {}
    for a in allocs:
        held[a.job] = max(held.get(a.job, 0.0), a.end)
    comp = {}
    for j, t in comp_slot.items():
        jid = instance.jobs[j].id
        first = math.ceil(done[jid] / d - 1e-9) - 1 if jid in done else t
        comp[jid] = max((min(t, max(first, 0)) + 1) * d, held.get(jid, 0.0)) + kappa
    return Schedule(tuple(allocs), comp, forking=True, consolidation=kappa,
                    copy_efficiency=efficiency)


def _node_allocations(instance: Instance, xv: np.ndarray, index: dict,
                      comp_slot: dict[int, int]) -> list[Allocation]:
    nodes = instance.cluster.nodes
    types = instance.cluster.gpu_types
    d = float(instance.slot)
    jt_j, jt_t = index["jt_j"], index["jt_t"]
    allocs = []
    for i in np.flatnonzero(xv > 0):
        jti, b = index["xi"][i], index["xb"][i]
        j, t = int(jt_j[jti]), int(jt_t[jti])
        if j not in comp_slot or t > comp_slot[j]:
            continue
        h = int(index["bucket_node"][b])
        allocs.append(Allocation(instance.jobs[j].id, t * d, (t + 1) * d, nodes[h].name,
                                 types[index["bucket_type"][b]], int(xv[i]), copy=h))
    return allocs


def _objective(instance: Instance, sched: Schedule, objective: str) -> float:
    jobs = {j.id: j for j in instance.jobs}
    comp = sched.completion
    if objective == "utility":
        return float(sum(jobs[k].value(c - jobs[k].arrival) for k, c in comp.items()))
    if objective == "jct":
        return float(sum(jobs[k].weight * (c - jobs[k].arrival) for k, c in comp.items()))
    return float(max(comp.values()) - min(j.arrival for j in instance.jobs)) if comp else 0.0


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, slots: int | None = None,
          slot: float | None = None, max_slots: int = DEFAULT_MAX_SLOTS,
          max_columns: int = DEFAULT_MAX_COLUMNS, objective: str = "utility",
          consolidation: Any = None, consolidation_slots: Any = None, max_copies: Any = None,
          copy_efficiency: float = 1.0, relax: bool = False, mip_start: bool = True,
          formulation: str = "auto", work_cuts: bool = False, lp_start: bool = False,
          **options: Any) -> Result:
    r"""HadarE's offline optimum of the slotted forking model (MILP), or its LP relaxation with
    ``relax=True``.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    backend : str
        Solver backend.
    slots, slot, max_slots, max_columns
        The planning grid and the size cap, as :func:`optsched.hadar.exact.exact`; the cap
        defaults to :data:`DEFAULT_MAX_COLUMNS` (150,000: HiGHS's presolve overran a 20 s
        limit by 47 s at 184k columns).
    objective : {"utility", "makespan", "jct"}
        Total utility (Hadar's, maximised; unfinished jobs count 0), or makespan or total
        weighted JCT (minimised, every job must complete).
    consolidation, consolidation_slots : optional
        The consolidation cost :math:`\kappa` after a job's work is done, in seconds or in
        slots.
    max_copies : int or mapping, optional
        :math:`F_j`, copies per job (default: as many as nodes).
    copy_efficiency : float
        :math:`e \in (0, 1]`: in each slot one copy of a job (the solver picks it; the
        largest is best) counts in full and every other copy at :math:`e` of its rate, the
        model of :func:`optsched.hadare.heuristics.online`'s ``copy_efficiency``
        (1: copies add up perfectly). The schedule declares it, so the validator credits
        the same rule.
    relax : bool
        Solve the LP relaxation and return it as ``bound``.
    mip_start : bool
        Start the MILP from the online heuristic's schedule (same grid, consolidation,
        copies and efficiency; :func:`heuristic_start`; its run counts against
        ``time_limit``), so a solve stopped by the limit returns at least its value.
    formulation : {"auto", "nodes", "classes"}
        ``"nodes"``: one copy variable per job, slot and node (the program above);
        ``"classes"``: GPUs per job, slot and class of identical single-type nodes (same
        optimum where :func:`classes_exact` holds; an error elsewhere); ``"auto"``
        (default): classes where exact, else nodes. ``extra["formulation"]`` says which.
    work_cuts : bool
        With ``"classes"``, state the work row cumulatively per slot
        (:func:`optsched.hadar.exact.add_cumulative_work`: same integer points, a tighter
        relaxation); ``False`` (default) keeps one work row per job.
    lp_start : bool
        With ``"classes"`` and ``"utility"``, also solve the LP relaxation, round it into
        a schedule (:func:`optsched.hadare.heuristics.lp_order`) and start from it when it
        is worth more than the other starts (``extra["start_source"]`` says which; the
        LP's time counts against ``time_limit``).
    **options
        Solver options (``time_limit``, which covers the model build, ``mip_gap``, ...).

    Returns
    -------
    Result
        The objective, bound, gap and schedule (forked copies); with ``relax=True``
        ``objective=None`` and ``bound`` the LP optimum.

    Guarantee
    ---------
    :math:`\mathrm{OPT}` of the slotted forking model; for ``"utility"``
    :math:`\mathrm{LP} \ge \mathrm{OPT} \ge P_{HadarE}` (every schedule of the online round
    loop with ``completion="slot"`` and the same ``copy_efficiency`` is feasible here),
    for the min objectives :math:`\mathrm{LP} \le \mathrm{OPT}`.

    Complexity
    ----------
    NP-hard; :math:`2NB_j + 3N` columns and about :math:`2NB_j + NH + 2N` rows for
    :math:`N = \sum_j (T - a_j)` job-slots, :math:`B_j` usable buckets, :math:`H` nodes; the
    LP is polynomial.

    References
    ----------
    * A. Sultana, N. Pakka, F. Xu, X. Yuan, L. Chen, N.-F. Tzeng, "Resource
      Heterogeneity-Aware and Utilization-Enhanced Scheduling for Deep Learning
      Clusters", arXiv:2503.10918, 2025 (HadarE: forking jobs across nodes).
    """
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, f"must be one of {OBJECTIVES}")
    e = copy_efficiency
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not 0 < e <= 1:
        raise InvalidOption("copy_efficiency", e, "must be a number in (0, 1]")
    e = float(e)
    tb = time.perf_counter()
    plan = planning_instance(instance, slot, slots, max_slots)
    kappa = consolidation_seconds(plan, consolidation, consolidation_slots)
    F = max_copies_of(plan, max_copies)
    T = model_slots(plan, slots)
    common: dict[str, Any] = {"model": "hadare", "method": "bound" if relax else "exact"}
    extra: dict[str, Any] = {"slots": T, "slot": plan.slot, "objective": objective,
                             "consolidation": kappa, "copy_efficiency": e,
                             "sense": "max" if objective == "utility" else "min"}
    if formulation not in FORMULATIONS:
        raise InvalidOption("formulation", formulation, f"must be one of {FORMULATIONS}")
    if formulation == "auto":
        formulation = "classes" if classes_exact(plan, F, e) else "nodes"
    extra["formulation"] = formulation
    a = np.ceil(plan.arrivals / plan.slot - 1e-9).astype(np.int64)
    if formulation == "classes":
        cls = node_classes(plan)
        width = (plan.throughput_matrix[:, cls["type"]] > 0).sum(axis=1) + 2 if cls else 0
    else:
        usable = (plan.throughput_matrix[:, plan.cluster.capacity.nonzero()[1]] > 0).sum(axis=1)
        width = (2 if e == 1 else 4) * usable + 3
    check_size("hadare " + ("LP relaxation" if relax else "MILP"),
               int((np.maximum(0, T - a) * width).sum()), max_columns,
               n_jobs=plan.n_jobs, slots=T, slot=plan.slot)
    if objective in ("makespan", "jct"):
        late = [j.id for j, aj in zip(instance.jobs, a) if aj >= T]
        if late:
            return Result(status=Status.INFEASIBLE, message=f"jobs {late[:5]} arrive after "
                          f"the last of {T} slots, so not every job can complete",
                          extra=extra, **common)
    lp, index = build_program(plan, T, kappa=kappa, F=F, objective=objective, relax=relax,
                              efficiency=e, formulation=formulation,
                              work_cuts=work_cuts and formulation == "classes")
    data = lp.freeze()
    start: Any = None
    if not relax and mip_start:
        from optsched.hadare.heuristics import online

        heur = online(instance, slots=T, slot=plan.slot, consolidation=kappa,
                      max_copies=max_copies, copy_efficiency=e)
        assert heur.schedule is not None  # the heuristic always returns its schedule
        blocks = tuple(b.name for b in data.var_blocks)
        start = heuristic_start(plan, heur.schedule, index, T, kappa, blocks)
        extra["start_source"] = "online heuristic"
        start_value = heur.objective or 0.0
        if formulation == "classes" and objective == "utility":
            from optsched.hadare.heuristics import best_list_schedule_classes

            vals = completion_values(plan, T, kappa)
            placed, value, kind = best_list_schedule_classes(plan, T, vals, index["classes"])
            if value > start_value:
                start, start_value = placed_start(plan, T, placed, vals, index, blocks)
                extra["start_source"] = f"list schedule ({kind} order)"
        if formulation == "classes" and objective == "utility" and lp_start:
            left = {k: v for k, v in options.items() if k in ("threads", "seed", "verbose")}
            if options.get("time_limit") is not None:
                left["time_limit"] = options["time_limit"]
            rounded = lp_rounded_start(plan, T, kappa, index, blocks, spent=time.perf_counter()
                                       - tb, **left)
            if rounded is not None and rounded[1] > start_value:
                start, start_value = rounded
                extra["start_source"] = "LP relaxation, rounded by list scheduling"
            extra["lp_start_value"] = None if rounded is None else rounded[1]
        extra["start_value"] = start_value
        if "work_done" in blocks:
            start = exact_work_start(data, data.start_vector(start))
    build = time.perf_counter() - tb
    res = solve_program(data, backend=backend, spent=build, start=start, **options)
    extra.update({"columns": data.n_cols, "rows": data.n_rows, "nonzeros": int(data.A.nnz),
                  "model_build_seconds": build, "time_limit": res.extra.get("time_limit"),
                  **start_fields(res)})
    common.update({"backend": res.backend, "solver": res.solver,
                   "build_seconds": build + res.build_seconds,
                   "solve_seconds": res.solve_seconds})
    shift = 0.0
    if objective == "makespan" and instance.n_jobs:
        shift = -min(j.arrival for j in instance.jobs)
    if relax:
        bound = res.bound + shift if res.status.has_solution and res.bound is not None else None
        return Result(status=res.status, objective=None, bound=bound, duals=res.duals,
                      values=res.values, message=res.message,
                      ratio_note="LP relaxation: a bound on the optimum of the slot model",
                      extra={**extra, "lp_objective": res.objective}, **common)
    if not res.success:
        return res.replace(extra={**res.extra, **extra}, **common)
    sched = _schedule(plan, res.values, index, kappa, e)
    obj = _objective(instance, sched, objective)
    bound = res.bound + shift if res.bound is not None else None
    source = "solver" if bound is not None else None
    if bound is None and objective == "utility" and res.status is Status.TIME_LIMIT:
        # copies may finish a job in its arrival slot: every completion slot counts
        a = np.ceil(plan.arrivals / plan.slot - 1e-9).astype(np.int64)
        bound = utility_ceiling(completion_values(plan, T, kappa), a)
        source = ("utility ceiling: every job at its best completion slot (the solver "
                  "stopped without a bound)")
    return finalize(instance, sched, status=res.status, objective=obj, bound=bound,
                    gap=relative_gap(obj, bound), values=res.values,
                    ratio=1.0 if res.status is Status.OPTIMAL else None,
                    ratio_note="exact optimum of the HadarE slot model (MILP)",
                    message=res.message, extra={**extra, "milp_objective": res.objective,
                                                "bound_source": source},
                    **common)
