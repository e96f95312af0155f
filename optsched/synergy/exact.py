r"""Exact Synergy: the two-step Synergy-OPT and the joint multi-resource packing ILP.

Notation (see :mod:`optsched.synergy.model`): admitted jobs :math:`j \in A` with
:math:`g_j` GPUs; servers :math:`s` with :math:`(G_s, C_s, M_s)`; fair share
:math:`f = (f_c, f_m)`; fair configurations :math:`Q_j` of job j.

Configurations (the feasible set, per job)
------------------------------------------
:math:`Q_j` is built from the model's configurations
:math:`\bar Q_j = \{\text{profile grid points with } T > 0\} \cup \{f, b_j, \tilde b_j\}`
(:mod:`optsched.synergy.model`: :math:`b_j` the best case snapped to the grid,
:math:`\tilde b_j` TUNE's comparable best case, off the grid when :math:`f` is) by
keeping the points :math:`q = (c_q, m_q)` with :math:`T_{jq} \ge T^f_j` (fairness),
:math:`c_q \le \max_s C_s` and :math:`m_q \le \max_s M_s`, then dropping every point
that another point dominates (no more CPU, no more memory, no less :math:`T`, and not
equal). Every admitted job gets exactly one configuration of :math:`Q_j`, the same on
each of its GPUs. Values between the points of :math:`\bar Q_j` are not offered: the
models are exact over this finite set, not over the continuum of interpolated
configurations.

Two-step Synergy-OPT (Mohan et al., OSDI'22, §4.1; ``opt_algo/synergy_opt.py``)
-------------------------------------------------------------------------------
**Step 1** (``SolveFirstLP`` with ``ilp=True``): the cluster as one super-machine,

.. math::

    \max \sum_{j, q} T_{jq}\, y_{jq} \quad \text{s.t.}\quad
    \sum_q y_{jq} = 1\ \forall j,\quad
    \sum_{j,q} g_j c_q y_{jq} \le \textstyle\sum_s C_s,\quad
    \sum_{j,q} g_j m_q y_{jq} \le \textstyle\sum_s M_s,\quad
    \sum_q T_{jq} y_{jq} \ge T^f_j\ \forall j,\quad y \in \{0,1\}.

Configurations below the fair throughput are left out of :math:`Q_j` (for binary
:math:`y` this is the fairness row; the row is kept as stated). Its optimum is an
**upper bound** on the joint optimum below (it relaxes per-server capacity).

**Step 2** (placement): Synergy solves a feasibility LP over fractional
:math:`X_{sj}` and rounds, falling back towards the fair share for jobs it cannot
place (``RoundRobin``). Here the placement and the fallback are one ILP that keeps as
much step-1 throughput as possible: job j either keeps its step-1 configuration
:math:`(c_j, m_j)` (:math:`k_j = 1`, GPUs :math:`u_{js}`) or falls back to the exact fair
share (:math:`k_j = 0`, GPUs :math:`v_{js}`),

.. math::

    \max \sum_j T^f_j + (T_j - T^f_j) k_j \quad\text{s.t.}\quad
    \sum_s u_{js} = g_j k_j,\ \sum_s v_{js} = g_j (1 - k_j),\\
    \sum_j (u_{js} + v_{js}) \le G_s,\
    \sum_j (c_j u_{js} + f_c v_{js}) \le C_s,\
    \sum_j (m_j u_{js} + f_m v_{js}) \le M_s\ \forall s,\quad
    u, v \in \mathbb{Z}_{\ge 0},\ k \in \{0, 1\}.

All-fallback is always feasible, so the two-step method always returns a fair
allocation of every admitted job. Synergy's own fallback caps each resource at the fair
share separately, which can leave a job below its fair throughput; the exact fair share
is used here instead.

Joint multi-resource bin-packing ILP
------------------------------------
Configuration and placement together; :math:`w_{jqs}` GPUs of job j on server s in
configuration q:

.. math::

    \max \sum_{j,q} T_{jq} y_{jq} \quad\text{s.t.}\quad \sum_q y_{jq} = 1,\quad
    \sum_s w_{jqs} = g_j y_{jq},\\
    \sum_{j,q} w_{jqs} \le G_s,\ \sum_{j,q} c_q w_{jqs} \le C_s,\
    \sum_{j,q} m_q w_{jqs} \le M_s\ \forall s,\quad
    y \in \{0,1\},\ w \in \mathbb{Z}_{\ge 0}.

This is the exact optimum of the round model over :math:`Q_j`. The two-step result is a
feasible point of it (one configuration per job, integral per-server slices, fair), so
**step 1 >= joint >= two-step (realised)**. Identical jobs are aggregated into
classes in the solved ILP (:func:`joint_program`), which is exact.

**Why joint >= TUNE >= proportional.** Both heuristics place every admitted job (and no
other) in integral per-server slices within each server's GPUs, cores and DRAM, each job
at one fair configuration: proportional at :math:`f`; TUNE at :math:`\tilde b_j`, or at
:math:`f` when it falls back or reduces the job as a peer (``_tune`` asks for nothing
else; :math:`T_j(\tilde b_j) \ge T^f_j` by construction). Both :math:`f` and
:math:`\tilde b_j` lie in :math:`\bar Q_j`, so before pruning these allocations are
feasible points of the joint ILP. Pruning keeps, for every dropped configuration, an
undominated one that dominates it (dominance is a strict partial order on a finite
set); swapping it in keeps the placement feasible and the objective no lower. Hence the
joint optimum is at least TUNE's and the proportional total. GREEDY's per-job choice
:math:`b_j` is in :math:`\bar Q_j` too, but GREEDY may skip admitted jobs and place jobs
that the admission did not admit, so its allocation is in general **not** a feasible
point, and its total can exceed the joint optimum.

Both are NP-hard (they contain multi-dimensional knapsack); sizes are
:math:`|A|\cdot\bar Q` binaries for step 1, :math:`|A|(2S + 1)` variables for step 2 and
:math:`|A|\bar Q (S + 1)` for the joint ILP, with :math:`\bar Q \le 10` after pruning for
the catalog profiles.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, relative_gap
from optsched.errors import InvalidOption
from optsched.options import declares
from optsched.solvers import solve_program, start_fields
from optsched.solvers.program import LinearProgram
from optsched.synergy.model import TOL, Configuration, SynergyRound, prepare, round_result

__all__ = ["exact", "two_step", "two_step_solve", "TwoStepSolution", "joint", "step1_program",
           "joint_program", "job_classes"]

FORMULATIONS = ("joint", "two-step")
_SOLVER_KEYS = ("solver", "time_limit", "mip_gap", "threads", "seed", "verbose", "options")


def _pairs(rnd: SynergyRound) -> tuple[np.ndarray, np.ndarray]:
    """Flattened (job, c, m, T) rows over admitted jobs' configurations :math:`Q_j`."""
    jobs, rows = [], []
    for j in rnd.admitted:
        cand = rnd.candidates(j)
        jobs.extend([j] * len(cand))
        rows.append(cand)
    return np.array(jobs, dtype=np.int64), (np.vstack(rows) if rows else np.zeros((0, 3)))


def step1_program(rnd: SynergyRound) -> tuple[LinearProgram, np.ndarray, np.ndarray]:
    """Synergy-OPT step 1 as a :class:`LinearProgram` (returns it with its pairs)."""
    pj, cfg = _pairs(rnd)
    pos = {j: i for i, j in enumerate(rnd.admitted)}
    row = np.array([pos[j] for j in pj], dtype=np.int64)
    g = np.array([rnd.gpus(j) for j in pj], dtype=float)
    lp = LinearProgram(sense="max", name="synergy-opt-step1")
    y = lp.add_variables("y", len(pj), lb=0, ub=1, cost=cfg[:, 2], integer=True)
    n = len(rnd.admitted)
    lp.add_constraints("one_config", rows=row, cols=y.index, vals=1.0, lb=1, ub=1, n_rows=n)
    lp.add_constraints("cpu", rows=0, cols=y.index, vals=g * cfg[:, 0], ub=rnd.C.sum(),
                       n_rows=1)
    lp.add_constraints("memory", rows=0, cols=y.index, vals=g * cfg[:, 1], ub=rnd.M.sum(),
                       n_rows=1)
    lp.add_constraints("fair", rows=row, cols=y.index, vals=cfg[:, 2],
                       lb=np.array([rnd.fair_rel[j] for j in rnd.admitted]) - 1e-9,
                       n_rows=n)
    return lp, pj, cfg


def _placement_program(rnd: SynergyRound, cfg: np.ndarray) -> LinearProgram:
    """Step 2: keep-or-fall-back placement; ``cfg[i]`` = (c, m, T) of admitted job i."""
    A, S = len(rnd.admitted), rnd.n_servers
    g = np.array([rnd.gpus(j) for j in rnd.admitted], dtype=float)
    tf = np.array([rnd.fair_rel[j] for j in rnd.admitted])
    fc, fm = rnd.fair
    ub = np.minimum(g[:, None], rnd.G[None, :].astype(float))
    lp = LinearProgram(sense="max", name="synergy-opt-step2")
    lp.offset = float(tf.sum())
    k = lp.add_variables("keep", A, lb=0, ub=1, cost=cfg[:, 2] - tf, integer=True)
    u = lp.add_variables("u", (A, S), lb=0, ub=ub, integer=True)
    v = lp.add_variables("v", (A, S), lb=0, ub=ub, integer=True)
    jj = np.repeat(np.arange(A), S)
    ss = np.tile(np.arange(S), A)
    lp.add_constraints("keep_gpus", rows=np.concatenate([jj, np.arange(A)]),
                       cols=np.concatenate([u.index.ravel(), k.index]),
                       vals=np.concatenate([np.ones(A * S), -g]), lb=0, ub=0, n_rows=A)
    lp.add_constraints("fallback_gpus", rows=np.concatenate([jj, np.arange(A)]),
                       cols=np.concatenate([v.index.ravel(), k.index]),
                       vals=np.concatenate([np.ones(A * S), g]), lb=g, ub=g, n_rows=A)
    both_rows = np.concatenate([ss, ss])
    both_cols = np.concatenate([u.index.ravel(), v.index.ravel()])
    lp.add_constraints("server_gpus", rows=both_rows, cols=both_cols, vals=1.0,
                       ub=rnd.G.astype(float), n_rows=S)
    lp.add_constraints("server_cpu", rows=both_rows, cols=both_cols,
                       vals=np.concatenate([np.repeat(cfg[:, 0], S), np.full(A * S, fc)]),
                       ub=rnd.C, n_rows=S)
    lp.add_constraints("server_memory", rows=both_rows, cols=both_cols,
                       vals=np.concatenate([np.repeat(cfg[:, 1], S), np.full(A * S, fm)]),
                       ub=rnd.M, n_rows=S)
    return lp


def job_classes(rnd: SynergyRound) -> list[list[int]]:
    """The admitted jobs grouped into classes of identical jobs (same gang size and the
    same configurations :math:`Q_j`, hence the same throughputs), in admission order."""
    classes: dict[tuple[int, bytes], list[int]] = {}
    for j in rnd.admitted:
        cand = np.ascontiguousarray(rnd.candidates(j), dtype=float)
        classes.setdefault((rnd.gpus(j), cand.tobytes()), []).append(j)
    return list(classes.values())


def _class_pairs(rnd: SynergyRound, classes: list[list[int]]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Flattened (class, c, m, T) rows: each class's configurations once."""
    cls, rows = [], []
    for c, members in enumerate(classes):
        cand = rnd.candidates(members[0])
        cls.extend([c] * len(cand))
        rows.append(cand)
    return np.array(cls, dtype=np.int64), (np.vstack(rows) if rows else np.zeros((0, 3)))


def joint_program(rnd: SynergyRound, classes: list[list[int]] | None = None
                  ) -> tuple[LinearProgram, np.ndarray, np.ndarray]:
    r"""The joint configuration + placement ILP over job classes (returns it with its
    pairs: the class of each configuration row, and the rows).

    Identical jobs (:func:`job_classes`; default: every job its own class) are
    aggregated: :math:`y_{cq} \in \{0..|c|\}` jobs of class :math:`c` in configuration
    :math:`q`, :math:`\sum_q y_{cq} = |c|`, and :math:`w_{cqs}` their GPUs on server
    :math:`s`, :math:`\sum_s w_{cqs} = g_c y_{cq}`. Exact: a job's GPUs may be split
    over servers in any integers, so any :math:`w_{cq\cdot}` summing to
    :math:`g_c y_{cq}` splits into :math:`y_{cq}` gangs of :math:`g_c` (fill them in
    server order, :func:`_split_gangs`), and the capacity rows and the objective are
    sums over the class either way. Columns: :math:`\sum_c |Q_c| (S + 1)` instead of
    :math:`\sum_j |Q_j| (S + 1)`.
    """
    if classes is None:
        classes = [[j] for j in rnd.admitted]
    pj, cfg = _class_pairs(rnd, classes)
    P, S = len(pj), rnd.n_servers
    size = np.array([len(m) for m in classes], dtype=float)
    g = np.array([rnd.gpus(classes[c][0]) for c in pj], dtype=float)
    lp = LinearProgram(sense="max", name="synergy-joint")
    y = lp.add_variables("y", P, lb=0, ub=size[pj], cost=cfg[:, 2], integer=True)
    w = lp.add_variables("w", (P, S), lb=0,
                         ub=np.minimum((g * size[pj])[:, None], rnd.G[None, :].astype(float)),
                         integer=True)
    lp.add_constraints("one_config", rows=pj, cols=y.index, vals=1.0, lb=size, ub=size,
                       n_rows=len(classes))
    pp = np.repeat(np.arange(P), S)
    ss = np.tile(np.arange(S), P)
    lp.add_constraints("gang", rows=np.concatenate([pp, np.arange(P)]),
                       cols=np.concatenate([w.index.ravel(), y.index]),
                       vals=np.concatenate([np.ones(P * S), -g]), lb=0, ub=0, n_rows=P)
    lp.add_constraints("server_gpus", rows=ss, cols=w.index.ravel(), vals=1.0,
                       ub=rnd.G.astype(float), n_rows=S)
    lp.add_constraints("server_cpu", rows=ss, cols=w.index.ravel(),
                       vals=np.repeat(cfg[:, 0], S), ub=rnd.C, n_rows=S)
    lp.add_constraints("server_memory", rows=ss, cols=w.index.ravel(),
                       vals=np.repeat(cfg[:, 1], S), ub=rnd.M, n_rows=S)
    return lp, pj, cfg


def _dominating(cand: np.ndarray, c: float, m: float, t: float) -> int | None:
    """Row of ``cand`` (c, m, T) using no more CPU and memory than ``(c, m)`` with no lower
    throughput than ``t`` (the largest such throughput), or ``None``."""
    ok = np.flatnonzero((cand[:, 0] <= c + TOL) & (cand[:, 1] <= m + TOL)
                        & (cand[:, 2] >= t - TOL))
    return int(ok[np.argmax(cand[ok, 2])]) if ok.size else None


def _split_gangs(w: np.ndarray, g: int, k: int) -> list[tuple[tuple[int, int], ...]]:
    """``k`` gangs of ``g`` GPUs from the per-server counts ``w`` (summing to ``k g``),
    filled in server order."""
    left = [(int(s), int(w[s])) for s in np.flatnonzero(w > 0)]
    gangs = []
    for _ in range(k):
        need, parts = g, []
        while need > 0:
            s, have = left[0]
            take = min(need, have)
            parts.append((s, take))
            need -= take
            if take == have:
                left.pop(0)
            else:
                left[0] = (s, have - take)
        gangs.append(tuple(parts))
    return gangs


def tune_start(rnd: SynergyRound, pj: np.ndarray, cfg: np.ndarray,
               with_w: bool, classes: list[list[int]] | None = None
               ) -> dict[str, np.ndarray] | None:
    """The point of TUNE's allocation in the joint ILP (``with_w``) or in step 1.

    Every admitted job's TUNE configuration lies in :math:`\bar Q_j`; the pruning kept a
    configuration that dominates it (module docstring), which takes its place on the
    same GPUs: no more cores or DRAM on any server, no lower throughput. ``None`` if TUNE
    leaves an admitted job out (it never does) or no dominating row is found.
    """
    from optsched.synergy.heuristics import allocate

    state, _ = allocate(rnd, "tune")
    y = np.zeros(len(pj))
    w = np.zeros((len(pj), rnd.n_servers))
    # the pair rows of each job: its own (step 1) or its class's (joint, aggregated)
    key = {j: j for j in rnd.admitted} if classes is None else \
        {j: c for c, members in enumerate(classes) for j in members}
    for j in rnd.admitted:
        p = state.placed.get(j)
        if p is None:
            return None
        rows = np.flatnonzero(pj == key[j])
        i = _dominating(cfg[rows], p.cpu, p.memory, p.rel)
        if i is None:
            return None
        y[rows[i]] += 1.0
        for s, k in p.parts:
            w[rows[i], s] += k
    return {"y": y, "w": w} if with_w else {"y": y}


def fallback_start(rnd: SynergyRound) -> dict[str, np.ndarray]:
    """Step 2's all-fallback point: every admitted job at the fair share on the GPUs the
    proportional allocation gives it (it always fits the admitted set)."""
    from optsched.synergy.heuristics import allocate

    state, _ = allocate(rnd, "proportional")
    A, S = len(rnd.admitted), rnd.n_servers
    v = np.zeros((A, S))
    for a, j in enumerate(rnd.admitted):
        for s, k in state.placed[j].parts:
            v[a, s] = k
    return {"keep": np.zeros(A), "u": np.zeros((A, S)), "v": v}


def _solver_opts(options: dict) -> dict:
    bad = sorted(set(options) - set(_SOLVER_KEYS))
    if bad:
        raise InvalidOption(bad[0], options[bad[0]],
                            f"unknown option for synergy exact; allowed: start, order, "
                            f"formulation, mip_start, {', '.join(_SOLVER_KEYS)}")
    return options


def _fail(res: Result, method: str, build: float, **extra) -> Result:
    return res.replace(model="synergy", method=method, build_seconds=res.build_seconds + build,
                       extra={**res.extra, **extra})


def joint(rnd: SynergyRound, backend: str = "highs", *, mip_start: bool = True,
          **options) -> Result:
    """Solve the joint ILP on a prepared round (see module docstring), started from
    TUNE's allocation (:func:`tune_start`) unless ``mip_start=False``."""
    tb = time.perf_counter()
    classes = job_classes(rnd)
    lp, pj, cfg = joint_program(rnd, classes)
    data = lp.freeze()
    start = tune_start(rnd, pj, cfg, True, classes) if mip_start else None
    build = time.perf_counter() - tb
    res = solve_program(data, backend=backend, spent=build, start=start,
                        **_solver_opts(options))
    if not res.success:
        return _fail(res, "exact", build, formulation="joint")
    y = np.rint(res.values["y"]).astype(np.int64)
    w = np.rint(res.values["w"]).astype(np.int64)
    places = []
    waiting = [list(members) for members in classes]  # jobs of each class not yet placed
    for i in np.flatnonzero(y > 0):
        c = int(pj[i])
        for parts in _split_gangs(w[i], rnd.gpus(classes[c][0]), int(y[i])):
            places.append(Configuration(waiting[c].pop(0), float(cfg[i, 0]),
                                        float(cfg[i, 1]), float(cfg[i, 2]), parts))
    obj = float(sum(p.rel for p in places))
    return round_result(rnd, places, "exact", res.solve_seconds, status=res.status,
                        bound=res.bound, gap=relative_gap(obj, res.bound),
                        backend=res.backend, solver=res.solver,
                        build_seconds=res.build_seconds + build, values=res.values,
                        ratio=1.0 if res.status is Status.OPTIMAL else None,
                        ratio_note="optimum of the joint configuration + placement ILP",
                        message=res.message,
                        extra={"formulation": "joint", "ilp_objective": res.objective,
                               "n_configs": int(len(pj)), "job_classes": len(classes),
                               **start_fields(res)})


@dataclass(frozen=True)
class TwoStepSolution:
    """Synergy-OPT's outcome on one round before it becomes a :class:`Result`: the
    configurations (``places``), the status, step 1's bound and both solver results
    (``failed`` is the failing step's :class:`Result` when a step returned no solution)."""

    places: list[Configuration]
    status: Status
    bound: float | None
    steps: tuple[Result, ...]
    build: float
    fallback: list[str]
    failed: Result | None = None


def two_step_solve(rnd: SynergyRound, backend: str = "highs", *, mip_start: bool = True,
                   **options) -> TwoStepSolution:
    """Solve Synergy-OPT's two ILPs on a prepared round (see :func:`two_step`)."""
    opts = _solver_opts(options)
    t_all = time.perf_counter()
    tb = time.perf_counter()
    lp, pj, cfg = step1_program(rnd)
    data = lp.freeze()
    start = tune_start(rnd, pj, cfg, False) if mip_start else None
    build = time.perf_counter() - tb
    r1 = solve_program(data, backend=backend, spent=build, start=start, **opts)
    if not r1.success:
        return TwoStepSolution([], r1.status, None, (r1,), build, [], failed=r1)
    y = r1.values["y"] > 0.5
    chosen = np.zeros((len(rnd.admitted), 3))
    chosen_row = {}
    for i in np.flatnonzero(y):
        chosen_row[int(pj[i])] = cfg[i]
    for a, j in enumerate(rnd.admitted):
        chosen[a] = chosen_row[j]
    tb = time.perf_counter()
    data2 = _placement_program(rnd, chosen).freeze()
    start2 = fallback_start(rnd) if mip_start else None
    build += time.perf_counter() - tb
    r2 = solve_program(data2, backend=backend, spent=time.perf_counter() - t_all,
                       start=start2, **opts)
    if not r2.success:
        return TwoStepSolution([], r2.status, None, (r1, r2), build, [], failed=r2)
    keep = r2.values["keep"] > 0.5
    u = np.rint(r2.values["u"]).astype(np.int64)
    v = np.rint(r2.values["v"]).astype(np.int64)
    fc, fm = rnd.fair
    places, fallback = [], []
    for a, j in enumerate(rnd.admitted):
        if keep[a]:
            c, m, t = chosen[a]
            x = u[a]
        else:
            c, m, t = fc, fm, rnd.fair_rel[j]
            x = v[a]
            if not np.allclose(chosen[a][:2], rnd.fair):
                fallback.append(rnd.instance.jobs[j].id)
        parts = tuple((int(s), int(x[s])) for s in np.flatnonzero(x > 0))
        places.append(Configuration(j, float(c), float(m), float(t), parts))
    obj = float(sum(p.rel for p in places))
    bound = r1.bound if r1.bound is not None else r1.objective
    if Status.TIME_LIMIT in (r1.status, r2.status):
        status = Status.TIME_LIMIT
    elif r1.status is Status.OPTIMAL and bound is not None and obj >= bound - 1e-6:
        status = Status.OPTIMAL
    else:
        status = Status.FEASIBLE
    return TwoStepSolution(places, status, bound, (r1, r2), build, fallback)


def two_step(rnd: SynergyRound, backend: str = "highs", *, mip_start: bool = True,
              **options) -> Result:
    """Synergy-OPT: step-1 super-machine ILP, then the keep-or-fall-back placement ILP.

    ``time_limit`` covers both steps: step 2 gets what step 1 left (with nothing left it
    returns its start). ``bound`` is step 1's bound (an upper bound on the joint
    optimum); the status is ``optimal`` only when the realised throughput reaches it.
    Step 1 starts from TUNE's configurations, step 2 from the all-fallback placement
    (:func:`fallback_start`), unless ``mip_start=False``.
    """
    sol = two_step_solve(rnd, backend, mip_start=mip_start, **options)
    if sol.failed is not None:
        return _fail(sol.failed, "exact", sol.build, formulation="two-step",
                     step=len(sol.steps))
    r1, r2 = sol.steps
    obj = float(sum(p.rel for p in sol.places))
    return round_result(rnd, sol.places, "exact", r1.solve_seconds + r2.solve_seconds,
                        status=sol.status, bound=sol.bound, gap=relative_gap(obj, sol.bound),
                        backend=r1.backend, solver=r1.solver,
                        build_seconds=r1.build_seconds + r2.build_seconds + sol.build,
                        values={"y": r1.values["y"], "keep": r2.values["keep"],
                                "u": r2.values["u"], "v": r2.values["v"]},
                        ratio=None,
                        ratio_note="two-step Synergy-OPT: step 1 bounds the joint optimum; "
                                   "placement may fall back to the fair share",
                        extra={"formulation": "two-step", "step1_objective": r1.objective,
                               "step1_bound": r1.bound, "step1_status": r1.status.value,
                               "step2_status": r2.status.value, "fallback": sol.fallback,
                               "step1_seconds": r1.seconds, "step2_seconds": r2.seconds,
                               **{f"step1_{k}": v for k, v in start_fields(r1).items()},
                               **{f"step2_{k}": v for k, v in start_fields(r2).items()}})


@declares(solver=True)
def exact(instance: Instance, backend: str = "highs", *, formulation: str = "joint",
          start: float | None = None, order=None, mip_start: bool = True,
          **options) -> Result:
    r"""Synergy's exact round allocation: the joint configuration-and-placement ILP, or the
    two-step Synergy-OPT.

    Parameters
    ----------
    instance : Instance
        The round's jobs (sensitivity profiles, GPUs) and servers (GPUs, CPUs, memory).
    backend : str
        Solver backend.
    formulation : {"joint", "two-step"}
        The joint multi-resource packing ILP (the round model's optimum), or Synergy-OPT:
        the super-machine ILP, then a placement ILP with exact fair-share fallback.
    start : float, optional
        The round's start time (which jobs have arrived).
    order : sequence of str, optional
        Job ids in policy order (which jobs are admitted to the round's GPUs).
    mip_start : bool
        Start the ILPs from TUNE's allocation (the joint ILP, step 1) and from the
        all-fallback placement (step 2), so a solve stopped by ``time_limit`` returns at
        least TUNE's throughput (joint) or a fair allocation (two-step).
    **options
        Solver options (``time_limit``, ``mip_gap``, ``threads``, ``seed``, ``solver``,
        ``verbose``).

    Returns
    -------
    Result
        Total normalized throughput :math:`\sum_j T_j`, bound, gap, the round's validated
        schedule (configurations and servers).

    Guarantee
    ---------
    ``"joint"``: :math:`\mathrm{OPT}` over every admitted job getting one configuration of
    :math:`Q_j` (at least its fair throughput) on servers with room;
    :math:`\text{two-step} \le \mathrm{OPT} \le \text{step 1}` and
    :math:`\mathrm{OPT} \ge T_{TUNE} \ge T_{proportional}` (GREEDY may lie outside this
    feasible set).

    Complexity
    ----------
    NP-hard (multi-dimensional bin packing); the joint ILP has
    :math:`O(\sum_j |Q_j| S)` integer columns, Synergy-OPT two ILPs with
    :math:`O(\sum_j |Q_j|)` and :math:`O(nS)` columns.

    References
    ----------
    * J. Mohan, A. Phanishayee, J. Kulkarni, V. Chidambaram, "Looking Beyond GPUs for
      DNN Scheduling on Multi-Tenant Clusters" (Synergy), OSDI 2022, §4.1 (Synergy-OPT).
    """
    if formulation not in FORMULATIONS:
        raise InvalidOption("formulation", formulation, f"must be one of {FORMULATIONS}")
    t0 = time.perf_counter()
    rnd = prepare(instance, start=start, order=order)
    prep = time.perf_counter() - t0
    if not rnd.admitted:
        return round_result(rnd, [], "exact", 0.0, status=Status.OPTIMAL, bound=0.0, gap=0.0,
                            backend=backend, ratio=1.0, ratio_note="no admitted job",
                            extra={"formulation": formulation})
    res = (joint if formulation == "joint" else two_step)(rnd, backend, mip_start=mip_start,
                                                         **options)
    return res.replace(build_seconds=res.build_seconds + prep)
