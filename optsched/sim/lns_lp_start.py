r"""A constructive start guided by the interval LP: the LP chooses each job's GPU
type, a list scheduler the order.

The interval LP of :mod:`optsched.sim.bounds` (``interval_lp``, the relaxation behind
the certified mean-JCT bound) is solved once for its primal solution
(:func:`lp_guide`). It gives every job :math:`j` its LP shares
:math:`y_{jk} = \sum_\ell x_{jk\ell}` over GPU types, its LP completion time
:math:`C^{LP}_j`, mean busy time and :math:`\alpha`-point. :func:`lp_guided_start`
allows job :math:`j` on the types with :math:`y_{jk} \ge \theta \max_k y_{jk}`
(``share_min`` :math:`\theta`; 1: the LP's main type) and simulates round by round
either

* ``order="srpt"`` (default): :class:`~optsched.sim.lns.FastestSrpt`'s area rule on
  the allowed (job, type) pairs (the smallest remaining GPU area first), or
* ``order`` an LP key: :class:`LpList`, the jobs in increasing key, each on the fastest
  allowed type that still has :math:`W_j` free GPUs.

Why the LP's types: the LP spreads the work over the types by comparative advantage
(a job goes to the slow type where it loses least against its fastest), which a greedy
rule that sends every job to the fastest type with room does not do. On Gavel's
2,000-job trace (gavel-108) the LP puts about 30 % of every width class's work on the
K80s, area-SRPT over all types 1-5 %; restricted to the LP's main type, area-SRPT goes
from 63.3 h to 57.2 h mean JCT, and allowing every type faster than the LP's main type
as well gives 88.5 h (``benchmarks/lns_gavel.py``, ``docs/lns.md``).

In a round-based schedule where higher-priority jobs are placed first, taking the
fastest allowed type with room in every round completes job :math:`j` earliest given
the GPUs its predecessors left: each round's work is maximised independently, so its
cumulative work is pointwise largest. With an LP key this is the preemptive analogue of
list scheduling by LP completion times (Hall, Schulz, Shmoys and Wein 1997, Section 3);
taking each job's machine from the LP's assignment follows Schulz and Skutella (2002)
for unrelated machines, types as machines. Heuristics: no approximation guarantee is
claimed in this setting (gangs, release dates, rounds).

References
----------
* L. A. Hall, A. S. Schulz, D. B. Shmoys, J. Wein. Scheduling to minimize average
  completion time: off-line and on-line approximation algorithms. Math. Oper. Res.
  22(3), 1997.
* A. S. Schulz, M. Skutella. Scheduling unrelated machines by randomized rounding.
  SIAM J. Discrete Math. 15(4), 2002.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.coerce import as_instance
from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.core.validate import Capabilities, producing
from optsched.errors import InvalidOption, SolverFailed
from optsched.sim.lns_gangs import place_most_room

__all__ = ["LpGuide", "lp_guide", "LpList", "lp_guided_start", "LP_KEYS",
           "ORDERS"]

#: The LP keys :class:`LpList` can follow.
LP_KEYS = ("completion", "alpha", "mean_busy")
#: The orders :func:`lp_guided_start` can follow: dynamic area-SRPT, or an LP key.
ORDERS = ("srpt", *LP_KEYS)


@dataclass(frozen=True)
class LpGuide:
    """The interval LP's primal solution, per job (instance order).

    ``completion`` :math:`C^{LP}_j` (s); ``mean_busy`` the LP's busy-time estimate
    :math:`\\sum \\beta x` over the job's columns (:math:`\\beta` each column's
    busy-time coefficient, :math:`s_{j\\ell}` without tangents) (s); ``alpha`` the
    :math:`\\alpha`-point (s); ``shares[j, k]`` :math:`y_{jk}`; ``lp`` a description
    of the LP and its objective.
    """

    completion: np.ndarray
    mean_busy: np.ndarray
    alpha: np.ndarray
    shares: np.ndarray
    lp: str
    seconds: float

    def key(self, name: str) -> np.ndarray:
        if name not in LP_KEYS:
            raise InvalidOption("key", name, "must be one of " + ", ".join(LP_KEYS))
        return np.asarray(getattr(self, name), dtype=float)


def lp_guide(instance: Instance, *, window: float | None = None, intervals: int = 36,
             tangents: int = 0, squash: int = 0, alpha: float = 0.5,
             time_limit: float | None = 600.0) -> LpGuide:
    r"""Solve the interval LP of ``instance`` (gang progress) and read its solution.

    Parameters
    ----------
    window, intervals, tangents, squash
        As in :func:`optsched.sim.bounds.lower_bounds` (``window`` in seconds;
        ``intervals`` per window). The default window is the larger of the bound's
        default (eight times the mean shortest run time) and the span of the arrivals:
        the LP's late columns have no capacity row, so a short window lets it put the
        long jobs' work there for free and mis-assign their types (on Gavel's 2,000
        jobs a 258-hour window guides area-SRPT to 64.1 h mean JCT, a 1,000-hour one
        to 56.8 h, a 1,250-hour one to 57.2 h).
    alpha : float
        The fraction in :math:`(0, 1]` whose instant is the :math:`\alpha`-point.
    time_limit : float, optional
        Seconds for the LP.

    Returns
    -------
    LpGuide

    Raises
    ------
    SolverFailed
        The LP was not solved to optimality (the limit, or a solver failure).

    Notes
    -----
    The :math:`\alpha`-point interpolates linearly inside a column: the part
    :math:`x_{jk\ell}` is taken as done at a uniform pace over
    :math:`[s_{j\ell}, s_{j\ell} + x_{jk\ell} t_{jk})`, :math:`t_{jk}` the job's run
    time alone on type :math:`k` (columns in start order, types fastest first).
    Complexity: one LP of :math:`O(nKL)` columns, then :math:`O(nKL \log(nKL))`.
    """
    import time

    from optsched.sim import bounds as B
    from optsched.solvers import solve_program

    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha <= 1:
        raise InvalidOption("alpha", alpha, "must be a number in (0, 1]")
    inst = as_instance(instance)
    d = B._data(inst, B.Setting())
    n = d.r.size
    H = float(window) if window is not None else max(B._default_window(d),
                                                     float(d.r.max() - d.r.min()))
    dt = max(float(inst.slot), H / intervals)
    b = B._grid(d, dt, H)
    meta: dict[str, np.ndarray] = {}
    t0 = time.process_time()
    lp = B._interval_lp(d, d.wt, b, H, tangents=tangents, squash=squash, meta=meta)
    data = lp.freeze()
    res = solve_program(data, backend="highs", time_limit=time_limit,
                        options={"solver": "ipm"})
    if res.status is not Status.OPTIMAL:
        raise SolverFailed("lp_guide interval LP", res.status.value, res.message)
    x = np.clip(np.asarray(res.values["x"], dtype=float), 0.0, None)
    C = np.asarray(res.values["C"], dtype=float)
    cj, ck, cs = meta["job"], meta["type"], meta["start"]
    K = d.rate.shape[1]
    shares = np.zeros((n, K))
    np.add.at(shares, (cj, ck), x)
    mean_busy = np.zeros(n)
    np.add.at(mean_busy, cj, meta["busy"] * x)
    # alpha-points: columns by job, start, then fastest type first
    jt = d.jobtime[cj, ck]
    order = np.lexsort((jt, cs, cj))
    cum = np.zeros(n)
    alpha_pt = np.full(n, np.nan)
    for i in order.tolist():  # O(columns): one pass
        j = int(cj[i])
        if not math.isnan(alpha_pt[j]) or x[i] <= 0:
            continue
        if cum[j] + x[i] >= alpha * (1 - 1e-9):
            alpha_pt[j] = cs[i] + (alpha - cum[j]) * jt[i] if math.isfinite(jt[i]) else cs[i]
        cum[j] += x[i]
    alpha_pt = np.where(np.isnan(alpha_pt), C, alpha_pt)
    return LpGuide(completion=C, mean_busy=mean_busy, alpha=alpha_pt, shares=shares,
                   lp=f"{data.n_cols:,} columns x {data.n_rows:,} rows, objective "
                      f"{res.objective:.6g}", seconds=time.process_time() - t0)


class LpList:
    r"""Round-based list scheduling in a fixed priority order, fastest type with room.

    At each round boundary the released unfinished jobs are taken in increasing
    ``priority`` (indexed by the instance's job order; ties by arrival); job :math:`j`
    gets :math:`W_j` GPUs of the fastest type among its ``allowed`` types that still
    has them, or waits this round. Non-idling within the allowed types.

    Parameters
    ----------
    priority : array of float
        One key per instance job; smaller first (e.g. :attr:`LpGuide.completion`).
    allowed : bool array [n, K], optional
        The types each job may use (default: every type it has a rate on).
    name : str

    Notes
    -----
    Clairvoyant only through its precomputed order (it reads no remaining work). Per
    round :math:`O(n \log n + nK + \text{placements} \cdot H)`, :math:`H` nodes.
    """

    needs_work = False
    event_driven = False

    def __init__(self, priority: Any, allowed: Any = None,
                 name: str = "lns.lp_list") -> None:
        self.priority = np.asarray(priority, dtype=float)
        if self.priority.ndim != 1 or not np.all(np.isfinite(self.priority)):
            raise InvalidOption("priority", "array", "must be a 1-d array of finite keys")
        self.allowed = None if allowed is None else np.asarray(allowed, dtype=bool)
        if self.allowed is not None and (self.allowed.ndim != 2
                                         or self.allowed.shape[0] != self.priority.size):
            raise InvalidOption("allowed", self.allowed.shape,
                                "must be a boolean array [n_jobs, n_types]")
        self.name = name

    def check(self, instance: Instance) -> None:
        from optsched.errors import ModelNotApplicable

        if self.priority.size != instance.n_jobs:
            raise ModelNotApplicable("priority", self.priority.size,
                                     f"one key per job needed ({instance.n_jobs} jobs)")
        if self.allowed is not None and self.allowed.shape[1] != len(instance.cluster.gpu_types):
            raise ModelNotApplicable("allowed", self.allowed.shape,
                                     "one column per GPU type of the cluster needed")

    def allocate(self, state: Any) -> list:
        if not len(state.ids):
            return []
        T = state.throughput_matrix
        left = state.capacity.astype(np.int64).copy()
        free = left.sum(axis=0)
        W = state.workers
        idx = np.asarray(state.index)
        ok = T > 0
        if self.allowed is not None:
            ok &= self.allowed[idx]
        # types fastest first per job; unusable types last
        type_order = np.argsort(-np.where(ok, T, -1.0), axis=1, kind="stable")
        order = np.lexsort((state.arrivals, self.priority[idx]))
        out: list = []
        for m in order.tolist():
            w = int(W[m])
            if w > free.max():
                continue
            for k in type_order[m].tolist():
                if not ok[m, k]:
                    break
                if free[k] >= w:
                    out += place_most_room(state, left, state.ids[m], k, w)
                    free[k] -= w
                    break
        return out




def lp_guided_start(instance: Instance, *, order: str = "srpt", share_min: float = 0.15,
                    share_weight: float | None = None, fill: bool = True,
                    guide: LpGuide | None = None, seed: int = 0,
                    **lp_options: Any) -> Result:
    r"""A start for :func:`optsched.sim.lns.improve`: the interval LP's type choice,
    list-scheduled (module docstring).

    Parameters
    ----------
    instance : Instance
    order : str
        :data:`ORDERS`: ``"srpt"`` (default; area-SRPT over the allowed pairs,
        :class:`~optsched.sim.lns.FastestSrpt`), or an LP key of :data:`LP_KEYS`
        (static order, :class:`LpList`).
    share_min : float
        :math:`\theta \in [0, 1]`: job :math:`j` may use type :math:`k` only if
        :math:`y_{jk} \ge \theta \max_k y_{jk}` (default 0.15; 1: the LP's main type;
        0: every type it has a rate on).
    share_weight : float, optional
        :math:`\gamma \ge 0`, with ``order="srpt"``: each allowed pair's area score
        :math:`\tau_{jk} / \rho_j` is multiplied by :math:`(y_{jk} / \max_k
        y_{jk})^\gamma`, so a job prefers the types the LP gives most of its work, and
        jobs compete for a type with the LP's preference for it (0: the plain area
        rule). Default 1 with ``order="srpt"``, 0 with an LP key (which has no score).
        On Gavel's 2,000-job trace :math:`\gamma = 1, \theta = 0.15` gives 53.99 h
        mean JCT, :math:`\gamma = 0, \theta = 0.5` (the former defaults) 54.36 h
        (``docs/lns.md``).
    fill : bool
        With ``order="srpt"``: GPUs left idle by the allowed pairs go to the waiting
        jobs on any type (:class:`~optsched.sim.lns.FastestSrpt`'s ``fill``; default).
    guide : LpGuide, optional
        A solved LP to reuse (else :func:`lp_guide` with ``lp_options``: ``window``,
        ``intervals``, ``tangents``, ``alpha``, ``time_limit``).
    seed : int
        The simulator's seed (the policies use no randomness).

    Returns
    -------
    Result
        The simulated schedule, validated by the simulator under strict rules (whole
        single-type gangs, gang progress); its metrics computed from the schedule;
        ``extra["lp_guide"]`` the LP, its CPU seconds and the options.

    Raises
    ------
    InvalidOption
        An unknown ``order``, ``share_min`` outside :math:`[0, 1]`, ``share_weight``
        negative, not finite or given with an LP-key order, or a ``guide`` of another
        size.
    SolverFailed
        The LP had no optimum within its limit.

    Notes
    -----
    Complexity: one LP of :math:`O(nKL)` columns (:func:`lp_guide`), then per round
    :math:`O(nK \log(nK) + \text{placements} \cdot H)`. A job the LP splits evenly
    keeps every type within :math:`\theta` of its largest share; a job always keeps at
    least one type with a rate.
    """
    from optsched.sim.lns import FastestSrpt
    from optsched.sim.simulator import simulate

    if order not in ORDERS:
        raise InvalidOption("order", order, "must be one of " + ", ".join(ORDERS))
    if isinstance(share_min, bool) or not isinstance(share_min, (int, float)) \
            or not 0 <= share_min <= 1:
        raise InvalidOption("share_min", share_min, "must be a number in [0, 1]")
    if share_weight is None:
        share_weight = 1.0 if order == "srpt" else 0.0
    if isinstance(share_weight, bool) or not isinstance(share_weight, (int, float)) \
            or not math.isfinite(share_weight) or share_weight < 0:
        raise InvalidOption("share_weight", share_weight, "must be a finite number >= 0")
    if share_weight and order != "srpt":
        raise InvalidOption("share_weight", share_weight,
                            f"weights the area scores of order='srpt'; order={order!r} "
                            "follows a fixed LP key")
    inst = as_instance(instance)
    g = guide if guide is not None else lp_guide(inst, **lp_options)
    if g.shares.shape != (inst.n_jobs, len(inst.cluster.gpu_types)):
        raise InvalidOption("guide", g.shares.shape,
                            f"must hold {inst.n_jobs} jobs x "
                            f"{len(inst.cluster.gpu_types)} types")
    rates = np.array([[j.rate(t) for t in inst.cluster.gpu_types] for j in inst.jobs])
    allowed = None
    if share_min > 0:
        # the LP's shares are those of usable types only; a job whose shares are all 0
        # (never in this LP, whose work rows are equalities) would keep every type
        allowed = (g.shares >= share_min * g.shares.max(axis=1, keepdims=True) - 1e-9) \
            & (rates > 0)
        allowed[~allowed.any(axis=1)] = rates[~allowed.any(axis=1)] > 0
    if not isinstance(fill, bool):
        raise InvalidOption("fill", fill, "must be true or false")
    weights = None
    if share_weight:
        top = g.shares.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            weights = np.where(top > 0, np.clip(g.shares, 0.0, None) / top, 1.0) \
                ** float(share_weight)
    policy: Any = FastestSrpt(allowed=allowed, fill=fill, weights=weights,
                              name="lns.lp_guided") \
        if order == "srpt" \
        else LpList(g.key(order), allowed, name="lns.lp_guided")
    with producing(Capabilities(source="lns.lp_guided")):
        res = simulate(inst, policy, seed=seed)
    extra = dict(res.extra)
    extra["lp_guide"] = {"lp": g.lp, "cpu_seconds": g.seconds, "order": order,
                         "share_min": share_min, "share_weight": share_weight,
                         "fill": fill}
    return res.replace(extra=extra)
