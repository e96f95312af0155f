r"""Hadar's online algorithm: OASiS Algorithms 1-2 on heterogeneous GPUs.

Prices. Every (slot :math:`t`, node :math:`h`, type :math:`k`) with :math:`c_{hk} > 0`
has a price per GPU :math:`p_{thk} = L (U_k/L)^{g_{thk}/c_{hk}}` (OASiS (22)), where
:math:`g_{thk}` GPUs are already allocated; :math:`U_k, L` come from
:mod:`optsched.hadar.model` (OASiS (23)-(26)) or are given.

Dual subroutine (OASiS Alg. 2, (21)/(27)). On arrival of job :math:`j` it solves

.. math::

    \mu_j = \max_{\hat t,\ l \in \mathcal L_j(\hat t)} f_j(\hat t) -
    \sum_{t \le \hat t} \sum_{h,k} p_{thk}\, y^l_{thk}
    \quad\text{with } y^l_{thk} \le c_{hk} - g_{thk}

in three nested steps:

* *per-slot step* (exact): for each *threshold* rate :math:`\rho` among the job's
  distinct per-type rates, the cheapest :math:`W_j` GPUs among buckets whose type has
  :math:`\tau_{jk} \ge \rho` (greedy by price over residual capacity: prices are linear
  in the count within a subroutine call, so greedy is optimal). The slot then progresses
  :math:`W_j \rho \Delta` -- a lower bound on the true progress (the chosen GPUs may all be
  faster) attained with equality by the threshold equal to the slowest type used, so
  every slot allocation is dominated by one of these :math:`K` options;
* *DP over slots*: progress is discretised into ``quanta`` :math:`Q` units of
  :math:`E_j/Q`; option :math:`\rho` credits :math:`\lfloor Q W_j\rho\Delta / E_j\rfloor`
  units (``rounding="safe"``, so a schedule that reaches :math:`Q` credited units has
  really done :math:`E_j`) or :math:`\lceil\cdot\rceil` (``"optimistic"``, used by the
  certificate). ``best[q]`` = least cost reaching :math:`\ge q` units with slots
  :math:`a_j..t` (a multiple-choice covering knapsack, capped at :math:`Q`);
* *outer loop*: after slot :math:`t` the candidate completion slot :math:`\hat t = t`
  has payoff :math:`f_j(\hat t) - \text{best}[Q]`; the maximum (earliest on ties) wins.
  The scan stops at the first slot with :math:`f_j(t) \le` the best payoff so far plus
  a lower bound on any schedule's cost (:math:`W_j` x fewest slots x lowest price):
  utilities are non-increasing, so no later slot can beat it.

Given the rounded progress the subroutine is exact (the DP is exact for the rounded
covering problem and the per-slot step is exact); safe rounding can only lose up to one
unit of :math:`E_j/Q` per slot used. Admission (OASiS Alg. 1): admit iff
:math:`\mu_j > 0`, then :math:`g_{thk} \mathrel{+}= y_{thk}` and update :math:`p_{thk}` on
the slots used; earlier decisions are never revised and jobs never preempted beyond
their planned slots.

Complexity per arrival with :math:`B` buckets, :math:`K` types, :math:`T` slots and
:math:`Q` quanta: :math:`O(T(B\log B + KB))` for the per-slot step and :math:`O(TKQ)` for
the DP (pseudo-polynomial in :math:`Q`, as OASiS Thm. 3 is in :math:`E_iN_i`), so
:math:`O(nT(B\log B + KB + KQ))` for :math:`n` jobs; memory :math:`O(TQ)` per arrival.

Guarantee: :math:`2\alpha`-competitive (OASiS Thm. 4) under the assumptions reported by
:func:`optsched.hadar.model.competitive_ratio`. Every run also carries a dual certificate
(:mod:`optsched.hadar.certificate`): an upper bound ``bound`` on the offline optimum.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize, relative_gap
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.errors import InvalidOption, ModelTooLarge
from optsched.hadar.model import (
    DEFAULT_MAX_SLOTS,
    SMALL_DEMAND_THRESHOLD,
    HadarModel,
    build_model,
    model_slots,
    planning_instance,
)
from optsched.options import declares

__all__ = ["Prices", "JobPlan", "slot_options", "dual_subroutine", "run_online", "online",
           "plan_schedule", "quanta_per_slot", "coverable", "online_model",
           "DEFAULT_QUANTA"]

DEFAULT_QUANTA = 360
# the DP's choice table is T x (Q+1) int16 per arrival: 100 MB at this size
_MAX_DP_CELLS = 50_000_000
_TOL = 1e-12


@dataclass
class Prices:
    """Allocated GPUs ``g[t, b]`` and prices ``p[t, b]`` per slot and bucket."""

    model: HadarModel
    U: np.ndarray  # per type
    L: float
    g: np.ndarray = field(init=False)
    p: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        m = self.model
        self.g = np.zeros((m.T, m.n_buckets), dtype=np.int64)
        self.p = np.full((m.T, m.n_buckets), self.L)
        self.ub = self.U[m.bucket_type]  # U of each bucket's type

    def price(self, g: np.ndarray, b: np.ndarray | slice = slice(None)) -> np.ndarray:
        cap = self.model.bucket_cap[b]
        ll = math.log(self.L)
        return np.exp(ll + (np.log(self.ub[b]) - ll) * (g / cap))  # no overflow of U/L

    def allocate(self, t: np.ndarray, b: np.ndarray, gpus: np.ndarray) -> None:
        np.add.at(self.g, (t, b), gpus)
        self.p[t, b] = self.price(self.g[t, b], b)

    @property
    def residual(self) -> np.ndarray:
        return self.model.bucket_cap[None, :] - self.g


@dataclass(frozen=True)
class JobPlan:
    """A job's schedule: completion slot, payoff and ``(slot, bucket, gpus)`` triples."""

    job: int
    payoff: float
    t_hat: int
    slots: np.ndarray
    buckets: np.ndarray
    gpus: np.ndarray
    cost: float

    @property
    def feasible(self) -> bool:
        return self.t_hat >= 0


def _thresholds(model: HadarModel, j: int) -> np.ndarray:
    r = model.rates[j]
    return np.unique(r[r > 0])


def slot_options(model: HadarModel, j: int, price: np.ndarray, residual: np.ndarray,
                 rho: np.ndarray, with_alloc: bool = False):
    """Per slot (rows of ``price``) and threshold rate ``rho``: the cost of the W_j
    cheapest GPUs among buckets of rate >= rho (``inf`` if fewer remain).

    Returns ``cost[nT, K]`` (and, with ``with_alloc``, the GPUs taken per
    ``[nT, K, B]``).
    """
    W = int(model.W[j])
    rb = model.rates[j][model.bucket_type]  # rate of each bucket for this job
    order = np.argsort(price, axis=1, kind="stable")
    ps = np.take_along_axis(price, order, axis=1)
    rs = np.take_along_axis(residual, order, axis=1).astype(float)
    rsb = rb[order]
    elig = rsb[:, None, :] >= rho[None, :, None] * (1 - 1e-12)  # nT, K, B
    cap_e = np.where(elig, rs[:, None, :], 0.0)
    cum = np.cumsum(cap_e, axis=2)
    take = np.clip(W - (cum - cap_e), 0.0, cap_e)
    cost = (take * ps[:, None, :]).sum(axis=2)
    cost[cum[:, :, -1] < W] = np.inf
    if not with_alloc:
        return cost
    alloc = np.zeros_like(take)
    np.put_along_axis(alloc, np.broadcast_to(order[:, None, :], take.shape), take, axis=2)
    return cost, alloc


def quanta_per_slot(W: float, rho: np.ndarray, delta: float, E: float, Q: int,
                    rounding: str) -> np.ndarray:
    """Progress units a slot credits at threshold rates ``rho`` (see the module
    docstring: floor for ``"safe"``, ceil for ``"optimistic"``, at most Q)."""
    x = W * np.asarray(rho, dtype=float) * delta / E * Q
    q = np.floor(x + 1e-9) if rounding == "safe" else np.ceil(x - 1e-9)
    return np.minimum(q, Q).astype(np.int64)


def coverable(per_slot: np.ndarray, Q: int, n_slots: int) -> bool:
    """Whether ``n_slots`` slots crediting at most ``max(per_slot)`` units each can reach
    Q units: when not, no schedule exists whatever the prices or capacities."""
    best = int(per_slot.max()) if per_slot.size else 0
    return best > 0 and math.ceil(Q / best) <= n_slots


def _quanta(model: HadarModel, j: int, rho: np.ndarray, Q: int, rounding: str) -> np.ndarray:
    return quanta_per_slot(model.W[j], rho, model.delta, model.E[j], Q, rounding)


def dual_subroutine(model: HadarModel, j: int, price: np.ndarray, residual: np.ndarray,
                    quanta: int = DEFAULT_QUANTA, rounding: str = "safe",
                    positive_only: bool = True) -> JobPlan:
    """Best priced schedule of job ``j`` (see the module docstring); ``payoff`` is
    :math:`\\max(\\cdot)` over completion slots, ``-inf`` if none is feasible.
    With ``positive_only`` (admission and certificate only need :math:`\\max(0, \\mu)`)
    the scan also stops once :math:`f_j(t) \\le 0`-payoff cannot be beaten: the payoff is
    exact when positive and some value :math:`\\le 0` otherwise.

    ``price`` and ``residual`` are ``[T, B]`` arrays (all slots); only slots
    ``>= a_j`` are used.
    """
    a, T, Q = int(model.a[j]), model.T, int(quanta)
    empty = np.zeros(0, dtype=np.int64)
    if a >= T:
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    rho = _thresholds(model, j)
    pq = _quanta(model, j, rho, Q, rounding)
    if not coverable(pq, Q, T - a):
        # the DP below would find no schedule: an O(K) test spares its O(T(B log B + KQ))
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    cost = slot_options(model, j, price[a:], residual[a:], rho)
    levels = np.arange(Q + 1)
    shift = [np.maximum(0, levels - p) for p in pq]
    nT = T - a
    best = np.full(Q + 1, np.inf)
    best[0] = 0.0
    choice = np.full((nT, Q + 1), -1, dtype=np.int16)
    vals = model.values[j]
    top, t_hat = -math.inf, -1
    # every schedule pays at least W_j GPUs x the fewest slots x the lowest price
    floor = 0.0
    if pq.max() > 0:
        floor = float(price[a:].min()) * int(model.W[j]) * math.ceil(Q / int(pq.max()))
        floor *= 1 - 1e-12
    for i in range(nT):
        if vals[a + i] <= (max(top, 0.0) if positive_only else top) + floor:
            break  # f non-increasing and costs > 0: no later completion slot can do better
        new = best.copy()
        for k in range(rho.size):
            c = cost[i, k]
            if not np.isfinite(c) or pq[k] == 0:
                continue
            cand = best[shift[k]] + c
            m = cand < new
            if m.any():
                new[m] = cand[m]
                choice[i, m] = k
        best = new
        if np.isfinite(best[Q]):
            pay = vals[a + i] - best[Q]
            if pay > top + _TOL * max(1.0, abs(top) if math.isfinite(top) else 1.0):
                top, t_hat = pay, a + i
    if t_hat < 0:
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    used_i, used_k = [], []
    q = Q
    for i in range(t_hat - a, -1, -1):
        if q <= 0:
            break
        k = int(choice[i, q])
        if k >= 0:
            used_i.append(i)
            used_k.append(k)
            q = max(0, q - int(pq[k]))
    used_i = np.array(used_i[::-1], dtype=np.int64)
    used_k = np.array(used_k[::-1], dtype=np.int64)
    _, alloc = slot_options(model, j, price[a + used_i], residual[a + used_i], rho,
                            with_alloc=True)
    y = np.rint(alloc[np.arange(used_i.size), used_k]).astype(np.int64)  # [n_used, B]
    rr, bb = np.nonzero(y)
    total = float(vals[t_hat] - top)
    return JobPlan(j, float(top), int(t_hat), a + used_i[rr], bb, y[rr, bb], total)


def _check_quanta(quanta: Any) -> int:
    if isinstance(quanta, bool) or not isinstance(quanta, (int, np.integer)) or quanta < 1:
        raise InvalidOption("quanta", quanta, "must be an integer >= 1")
    return int(quanta)


@dataclass
class OnlineRun:
    """State after running Hadar over an instance (plans of admitted jobs, prices)."""

    model: HadarModel
    prices: Prices
    plans: dict[int, JobPlan]
    payoffs: dict[int, float]
    quanta: int
    seconds: float


def run_online(model: HadarModel, *, quanta: int = DEFAULT_QUANTA, U: Any = None,
               L: float | None = None, order: np.ndarray | None = None) -> OnlineRun:
    """OASiS Alg. 1 over the jobs in arrival order (ties: instance order)."""
    quanta = _check_quanta(quanta)
    Uk, Lv = model.price_params(U, L)
    prices = Prices(model, Uk, Lv)
    if order is None:
        order = np.lexsort((np.arange(model.n_jobs), model.instance.arrivals))
    plans: dict[int, JobPlan] = {}
    payoffs: dict[int, float] = {}
    t0 = time.perf_counter()
    for j in order:
        j = int(j)
        plan = dual_subroutine(model, j, prices.p, prices.residual, quanta, "safe")
        payoffs[j] = plan.payoff
        if plan.feasible and plan.payoff > _TOL * max(1.0, float(model.values[j].max())):
            prices.allocate(plan.slots, plan.buckets, plan.gpus)
            plans[j] = plan
    return OnlineRun(model, prices, plans, payoffs, quanta, time.perf_counter() - t0)


def plan_schedule(model: HadarModel, plans: dict[int, JobPlan]) -> Schedule:
    """Allocations ``[t*slot, (t+1)*slot)`` per (node, type); completion at the end of the
    completion slot."""
    inst = model.instance
    nodes = inst.cluster.nodes
    types = inst.cluster.gpu_types
    d = model.delta
    allocs, comp = [], {}
    for j, pl in plans.items():
        jid = inst.jobs[j].id
        for t, b, g in zip(pl.slots.tolist(), pl.buckets.tolist(), pl.gpus.tolist()):
            allocs.append(Allocation(jid, t * d, (t + 1) * d, nodes[model.bucket_node[b]].name,
                                     types[model.bucket_type[b]], int(g)))
        comp[jid] = model.completion_time(pl.t_hat)
    return Schedule(tuple(merge_intervals(allocs)), comp)


def online_model(instance: Instance, slot: float | None = None, slots: int | None = None,
                 max_slots: int = DEFAULT_MAX_SLOTS, quanta: int = DEFAULT_QUANTA
                 ) -> HadarModel:
    """The slotted model the online algorithm plans on (the planning grid of
    :func:`~optsched.hadar.model.planning_instance`), refused with
    :class:`~optsched.errors.ModelTooLarge` before it is built when the dual
    subroutine's table (slots x quanta) would not fit in memory."""
    plan = planning_instance(instance, slot, slots, max_slots)
    T = model_slots(plan, slots)
    if T * (quanta + 1) > _MAX_DP_CELLS:
        raise ModelTooLarge("slots", T, f"the dual subroutine's table would have {T:,} slots "
                            f"x {quanta + 1} quanta, over {_MAX_DP_CELLS:,} cells; pass a "
                            "longer slot (slot=SECONDS), fewer slots (slots=N) or fewer "
                            "quanta")
    return build_model(plan, T)


@declares()
def online(instance: Instance, *, slots: int | None = None, slot: float | None = None,
           max_slots: int = DEFAULT_MAX_SLOTS, quanta: int = DEFAULT_QUANTA,
           U: Any = None, L: float | None = None, certificate: bool = True,
           small_demand_threshold: float = SMALL_DEMAND_THRESHOLD) -> Result:
    """Hadar online (OASiS Alg. 1-2 adapted): total utility of the admitted jobs.

    Options: ``slots`` (T), ``slot`` and ``max_slots`` (the planning grid, as
    :func:`optsched.hadar.exact`), ``quanta`` (Q, progress units per job), ``U`` (number
    or mapping type -> value) and ``L`` to override OASiS (23)-(26); ``certificate``
    computes the dual bound D (``bound``; ``extra["D_over_P"]``).
    ``Result.ratio`` is :math:`2\\alpha` when every assumption of OASiS Thm. 4 holds
    (``extra["competitive_ratio"]`` lists them), else ``None`` and
    ``extra["ratio_unproved"]`` holds the value the theorem would give.
    """
    from optsched.hadar.certificate import dual_certificate

    quanta = _check_quanta(quanta)
    model = online_model(instance, slot, slots, max_slots, quanta)
    run = run_online(model, quanta=quanta, U=U, L=L)
    sched = plan_schedule(model, run.plans)
    P = float(sum(model.values[j, pl.t_hat] for j, pl in run.plans.items()))
    report = model.ratio_report(U, L, small_demand_threshold)
    extra: dict[str, Any] = {
        "slots": model.T, "slot": model.delta, "quanta": run.quanta, "admitted": len(run.plans),
        "rejected": model.n_jobs - len(run.plans), "P": P, "U": report.U, "L": report.L,
        "competitive_ratio": report.to_dict(), "online_seconds": run.seconds,
        "seconds_per_job": run.seconds / max(1, model.n_jobs)}
    bound = None
    cert_seconds = 0.0
    if certificate:
        cert = dual_certificate(model, run.prices, quanta=run.quanta)
        bound = cert.D
        cert_seconds = cert.seconds
        extra.update({"D": cert.D, "D_over_P": cert.D / P if P > 0 else math.inf,
                      "D_prices": cert.price_term, "D_mu": cert.mu_term,
                      "certificate_seconds": cert.seconds})
    ratio = report.ratio if report.holds else None
    if ratio is None and math.isfinite(report.ratio):
        extra["ratio_unproved"] = report.ratio
    note = (f"2*alpha = {report.ratio:.4g} (OASiS Thm. 4, alpha = max_k(1, ln(U_k/L)))"
            + ("" if report.holds else "; not proved here: " + "; ".join(report.notes)))
    return finalize(instance, sched, status=Status.FEASIBLE, objective=P, bound=bound,
                    gap=relative_gap(P, bound), model="hadar", method="online",
                    solver="hadar-primal-dual", solve_seconds=run.seconds + cert_seconds,
                    ratio=ratio, ratio_note=note, extra=extra)
