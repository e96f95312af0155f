r"""The window MILP of the large-neighbourhood search (:mod:`optsched.sim.lns`).

A window frees a set :math:`J` of jobs over the span :math:`[T_0, T_1)`, cut into
:math:`L` blocks :math:`\ell` of :math:`m` rounds each (:math:`B = m \Delta` seconds,
block :math:`\ell` starting at :math:`b_\ell = T_0 + \ell B`); everything else is
fixed. :math:`F_{k\ell}` is the number of GPUs of type :math:`k` left free in block
:math:`\ell` by the fixed allocations (per node, the most any fixed allocation holds in
any round of the block, summed over the type's nodes: a gang may span nodes, so any
:math:`W_j \le F_{k\ell}` GPUs can be placed).

Variables, for job :math:`j \in J`, type :math:`k` it can run on, block :math:`\ell`
with :math:`b_\ell \ge r_j`:

* :math:`x_{jk\ell} \in \{0,1\}`: the job holds :math:`W_j` GPUs of type :math:`k`
  for the whole block;
* :math:`y_{jk\ell} \in \{0,1\}`: block :math:`\ell` is its last, on type :math:`k`;
  :math:`z_{jk\ell} \in [0, y_{jk\ell}]` the fraction of that block it runs;
* :math:`\varphi_j \in \{0,1\}`: it finishes in the window (fixed to 1 for a job that
  completes in the window in the incumbent, since it holds nothing after :math:`T_1`).

With :math:`R_j` the work it has left at :math:`T_0`, :math:`V_j` the work the incumbent
does in the window and :math:`C^{0}_j` its incumbent completion (weights :math:`w_j`):

.. math::

    \min \sum_{j}\sum_{k,\ell} w_j \big((b_\ell - T_0)\, y_{jk\ell} + B z_{jk\ell}\big)
         + \sum_j w_j (C^{0}_j - T_0)(1 - \varphi_j)
         - \sum_j w_j \frac{R_j}{\bar\rho_j} e_j

    \text{s.t.}\quad \sum_{k,\ell} y_{jk\ell} = \varphi_j, \qquad
    \sum_k x_{jk\ell} + \sum_{k,\ell' \le \ell} y_{jk\ell'} \le 1, \qquad
    z_{jk\ell} \le y_{jk\ell},

    \sum_{k,\ell} \frac{W_j \tau_{jk} B}{R_j} (x_{jk\ell} + z_{jk\ell})
        \ge \varphi_j + \frac{V_j}{R_j}(1 - \varphi_j) + e_j, \qquad
    \sum_j W_j (x_{jk\ell} + y_{jk\ell}) \le F_{k\ell},

    0 \le e_j \le \frac{U_j}{R_j} (1 - \varphi_j).

The second row says a job runs at most one gang per block and no whole block after its
last one; the work row is scaled by :math:`R_j` (rows of order 1, so a start's rounding
stays within the solver's tolerance). A job that does not finish in the window does at
least its incumbent work there, so its fixed allocations after :math:`T_1` still
complete it; :math:`e_j R_j` is the work it does beyond that (at most :math:`U_j`, its
incumbent work after :math:`T_1`), which it then needs less after :math:`T_1`: it
completes at least :math:`e_j R_j / \bar\rho_j` earlier, :math:`\bar\rho_j` the fastest
rate of its allocations after :math:`T_1` (a second cut from its end removes at most
that much work). The term is a lower estimate of the gain, so the objective of a
solution stays an upper bound on what it delivers.

Exactness. Every round-based schedule of the freed jobs in the window (one gang of one
type per block, preempted only at block boundaries, completing inside its last block
at the instant its work is done) is a feasible point with objective
:math:`\sum_j w_j (C_j - T_0)`; conversely the schedule the search builds from a
solution (each job runs its chosen blocks in time order, front-loaded, and stops at the
exact instant its work is done) completes every job no later than the solution's
:math:`b_\ell + B z_{jk\ell}`, since its cumulative work is never below the
solution's. So the MILP's optimum is the best round-based rearrangement of the window
on the block grid, and a solution's objective is an upper bound on what it delivers.

Size: :math:`O(|J| K L)` columns (3 per job, type and block) and
:math:`O(|J| L + K L)` rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from optsched.solvers.program import LinearProgram, ProgramData, VarBlock

__all__ = ["WindowJob", "Window", "build_window", "start_vector"]


@dataclass(frozen=True)
class WindowJob:
    """One freed job: ``rates[k]`` its gang rate on type ``k`` (0: cannot run there),
    ``remaining`` its work left at ``T0``, ``window_work`` the incumbent's work in the
    window, ``completion`` the incumbent's, ``must_finish`` if that lies in the window,
    ``first_block`` the first block it may run in (its arrival); ``after_work`` the
    incumbent's work after the window and ``after_rate`` the fastest rate it runs at
    there."""

    index: int
    weight: float
    workers: int
    rates: tuple[float, ...]
    remaining: float
    window_work: float
    completion: float
    must_finish: bool
    first_block: int
    after_work: float = 0.0
    after_rate: float = 0.0


@dataclass(frozen=True)
class Window:
    """The span, the blocks and the capacity the fixed allocations leave."""

    t0: float
    block: float       # seconds per block
    n_blocks: int
    free: np.ndarray   # [K, L] GPUs of each type free in each block


def build_window(jobs: list[WindowJob], win: Window) -> tuple[ProgramData, dict]:
    """The window MILP (module docstring) and the index maps to read a solution:
    ``cols[(a, k, l)] = (x, y, z)`` column numbers for the ``a``-th job, ``phi[a]`` the
    column of its finish indicator (``None`` when fixed to 1)."""
    K, L = win.free.shape
    lp = LinearProgram(sense="min", name="lns-window")
    c = _add_columns(lp, jobs, win)
    _add_finish_rows(lp, c, len(jobs))
    _add_order_rows(lp, c, len(jobs), L)
    n = c.trip_count
    lp.add_constraints("last", rows=np.r_[np.arange(n), np.arange(n)],
                       cols=np.r_[c.zi, c.yi], vals=np.r_[np.ones(n), -np.ones(n)], ub=0.0,
                       n_rows=n)
    e, ext = _add_work_rows(lp, c, jobs, win.block)
    # capacity per type and block
    W = np.array([j.workers for j in jobs], dtype=float)
    rc = c.Kc * L + c.Lc
    lp.add_constraints("capacity", rows=np.r_[rc, rc], cols=np.r_[c.xi, c.yi],
                       vals=np.r_[W[c.A], W[c.A]], ub=win.free.ravel().astype(float),
                       n_rows=K * L)
    data = lp.freeze()
    index = {"cols": {(int(a), int(k), int(ell)): (int(c.xi[t]), int(c.yi[t]), int(c.zi[t]))
                      for t, (a, k, ell) in enumerate(c.trip)},
             "phi": {a: int(c.phi.index[i]) for a, i in c.phi_of.items()}}
    index["extra"] = {a: int(e.index[i]) for i, a in enumerate(ext)}
    return data, index


@dataclass(frozen=True)
class _Columns:
    """The window MILP's columns: ``trip[t] = (a, k, l)`` of column triple ``t`` (its
    job ``A``, type ``Kc``, block ``Lc``; ``xi``, ``yi``, ``zi`` its column numbers);
    ``phi`` the finish indicators of the jobs ``opt`` that may not finish, ``phi_of[a]``
    the position of job ``a`` in them; ``w`` the weights."""

    trip: list[tuple[int, int, int]]
    A: np.ndarray
    Kc: np.ndarray
    Lc: np.ndarray
    xi: np.ndarray
    yi: np.ndarray
    zi: np.ndarray
    opt: list[int]
    phi_of: dict[int, int]
    phi: VarBlock
    w: np.ndarray

    @property
    def trip_count(self) -> int:
        return len(self.trip)


def _add_columns(lp: LinearProgram, jobs: list[WindowJob], win: Window) -> _Columns:
    r"""Columns :math:`x, y, z` per (job, type it can run on with :math:`W_j \le
    \max_\ell F_{k\ell}`, block from its arrival on), costed :math:`w_j (b_\ell - T_0)`
    on :math:`y` and :math:`w_j B` on :math:`z`; then :math:`\varphi_j` of each job not
    bound to finish, costed :math:`-w_j (C^0_j - T_0)` with that sum as the offset."""
    K, L = win.free.shape
    B = win.block
    trip = [(a, k, ell) for a, j in enumerate(jobs) for k in range(K) if j.rates[k] > 0
            and j.workers <= win.free[k].max(initial=0) for ell in range(j.first_block, L)]
    n = len(trip)
    A = np.array([t[0] for t in trip], dtype=np.int64)
    Kc = np.array([t[1] for t in trip], dtype=np.int64)
    Lc = np.array([t[2] for t in trip], dtype=np.int64)
    w = np.array([j.weight for j in jobs])
    x = lp.add_variables("x", n, lb=0, ub=1, integer=True)
    y = lp.add_variables("y", n, lb=0, ub=1, integer=True,
                         cost=w[A] * Lc * B if n else 0.0)
    z = lp.add_variables("z", n, lb=0, ub=1, cost=w[A] * B if n else 0.0)
    opt = [a for a, j in enumerate(jobs) if not j.must_finish]
    phi_of = {a: i for i, a in enumerate(opt)}
    slack = np.array([w[a] * (jobs[a].completion - win.t0) for a in opt])
    phi = lp.add_variables("phi", len(opt), lb=0, ub=1, integer=True, cost=-slack)
    lp.offset = float(slack.sum())
    return _Columns(trip, A, Kc, Lc, x.index, y.index, z.index, opt, phi_of, phi, w)


def _add_finish_rows(lp: LinearProgram, c: _Columns, m: int) -> None:
    r""":math:`\sum_{k,\ell} y_{jk\ell} = \varphi_j` (:math:`= 1` for a job bound to
    finish), one row per job."""
    rows = [c.A]
    cols = [c.yi]
    vals = [np.ones(c.trip_count)]
    lb = np.ones(m)
    for a in c.opt:
        rows.append(np.array([a]))
        cols.append(c.phi.index[[c.phi_of[a]]])
        vals.append(np.array([-1.0]))
        lb[a] = 0.0
    lp.add_constraints("finish", rows=np.concatenate(rows), cols=np.concatenate(cols),
                       vals=np.concatenate(vals), lb=lb, ub=lb, n_rows=m)


def _add_order_rows(lp: LinearProgram, c: _Columns, m: int, L: int) -> None:
    r"""order: :math:`\sum_k x_{jk\ell} + \sum_{k, \ell' \le \ell} y_{jk\ell'} \le 1`,
    one row per (job, block)."""
    n = c.trip_count
    r_x = c.A * L + c.Lc
    ry, cy = [], []
    for t in range(n):  # y of block l counts in the rows of blocks l..L-1
        span = np.arange(c.Lc[t], L)
        ry.append(c.A[t] * L + span)
        cy.append(np.full(span.size, c.yi[t]))
    lp.add_constraints("order", rows=np.concatenate([r_x, *ry]) if n else np.zeros(0, int),
                       cols=np.concatenate([c.xi, *cy]) if n else np.zeros(0, int),
                       vals=1.0, ub=1.0, n_rows=m * L)


def _add_work_rows(lp: LinearProgram, c: _Columns, jobs: list[WindowJob],
                   B: float) -> tuple[VarBlock, list[int]]:
    r"""work: :math:`\sum_{k,\ell} \frac{W_j \tau_{jk} B}{R_j} (x_{jk\ell} + z_{jk\ell})
    - (1 - V_j/R_j) \varphi_j - e_j \ge V_j/R_j` (:math:`\ge 1` for a job bound to
    finish), with the extra-work columns :math:`e_j` (cost :math:`-w_j R_j /
    \bar\rho_j`) of the jobs that run after the window, and
    :math:`e_j \le \frac{U_j}{R_j}(1 - \varphi_j)`. The ``extra`` block and its jobs."""
    m = len(jobs)
    A, w = c.A, c.w
    R = np.array([max(j.remaining, 1e-300) for j in jobs])
    rate = np.array([jobs[a].rates[k] for a, k in zip(A.tolist(), c.Kc.tolist())])
    coef = rate * B / R[A] if c.trip_count else np.zeros(0)
    frac = np.array([min(1.0, j.window_work / R[a]) for a, j in enumerate(jobs)])
    rows = [A, A]
    cols = [c.xi, c.zi]
    vals = [coef, coef]
    wlb = np.ones(m)
    for a in c.opt:
        rows.append(np.array([a]))
        cols.append(c.phi.index[[c.phi_of[a]]])
        vals.append(np.array([-(1.0 - frac[a])]))
        wlb[a] = frac[a]
    # extra work e_j of a job that does not finish: it then needs e_j R_j less work
    # after the window, so completes at least e_j R_j / after_rate earlier
    ext = [a for a in c.opt if jobs[a].after_rate > 0 and jobs[a].after_work > 0]
    cap_e = np.array([jobs[a].after_work / R[a] for a in ext])
    gain = np.array([w[a] * R[a] / jobs[a].after_rate for a in ext])
    e = lp.add_variables("extra", len(ext), lb=0.0, ub=cap_e, cost=-gain)
    for i, a in enumerate(ext):
        rows.append(np.array([a]))
        cols.append(e.index[[i]])
        vals.append(np.array([-1.0]))
    lp.add_constraints("work", rows=np.concatenate(rows), cols=np.concatenate(cols),
                       vals=np.concatenate(vals), lb=wlb, n_rows=m)
    # no extra-work credit once the job finishes in the window: e_j <= cap (1 - phi_j)
    lp.add_constraints("extra_only_unfinished",
                       rows=np.r_[np.arange(len(ext)), np.arange(len(ext))],
                       cols=np.r_[e.index, [c.phi.index[c.phi_of[a]] for a in ext]],
                       vals=np.r_[np.ones(len(ext)), cap_e], ub=cap_e, n_rows=len(ext))
    return e, ext


def start_vector(data: ProgramData, index: dict, plan: dict[int, list[tuple[int, int, float]]],
                 finishes: dict[int, bool]) -> np.ndarray | None:
    """The column vector of the incumbent's window: ``plan[a]`` lists ``(block, type,
    fraction)`` of job ``a`` (fraction 1 for a whole block; below 1 only in its last
    block when it finishes), ``finishes[a]`` whether it completes in the window.
    ``None`` if the plan uses a column the window does not have."""
    v = np.zeros(data.n_cols)
    cols = index["cols"]
    for a, blocks in plan.items():
        last = max((ell for ell, _, _ in blocks), default=-1) if finishes[a] else -1
        for ell, k, f in blocks:
            c = cols.get((a, k, ell))
            if c is None:
                return None
            if ell == last:
                v[c[1]] = 1.0
                v[c[2]] = min(1.0, f * (1 + 1e-9) + 1e-12)
            else:
                v[c[0]] = 1.0
        if a in index["phi"]:
            v[index["phi"][a]] = 1.0 if finishes[a] else 0.0
    return v
