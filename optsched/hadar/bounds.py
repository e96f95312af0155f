r"""Hadar's dual side: the dual subroutine, the dual certificate, the proved ratio and
the LP bound.

Dual subroutine
---------------
OASiS Alg. 2, (21)/(27). For job :math:`j` under prices :math:`p_{thk}`
(:class:`~optsched.hadar.model.Prices`) it solves

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
unit of :math:`E_j/Q` per slot used. Complexity per call with :math:`B` buckets,
:math:`K` types, :math:`T` slots and :math:`Q` quanta: :math:`O(T(B\log B + KB))` for the
per-slot step and :math:`O(TKQ)` for the DP (pseudo-polynomial in :math:`Q`, as OASiS
Thm. 3 is in :math:`E_iN_i`); memory :math:`O(TQ)`.

Dual certificate
----------------
The LP relaxation of the compact-exponential primal (OASiS (14)-(18), here with the
schedule sets :math:`\mathcal L_j` of :mod:`optsched.hadar.model`) has the dual (OASiS
(19)-(20))

.. math::

    \min\ \sum_j \mu_j + \sum_{t,h,k} p_{thk} c_{hk}
    \quad\text{s.t.}\quad \mu_j \ge f_j(\hat t_l) - \sum_{t,h,k} p_{thk} y^l_{thk}
    \ \ \forall j, l \in \mathcal L_j, \qquad p, \mu \ge 0.

Any :math:`p \ge 0` with :math:`\mu_j = \max(0, \max_{l\in\mathcal L_j} \text{payoff})`
is feasible, so by weak duality
:math:`D = \sum_j \mu_j + \sum_{t,h,k} p_{thk} c_{hk} \ge \mathrm{LP} \ge \mathrm{OPT}`.
The certificate takes the run's *final* prices :math:`p_{thk}`, and computes
:math:`\mu_j` with the dual subroutine above over the *full*
capacities :math:`c_{hk}` (the dual constraint ranges over every schedule of
:math:`\mathcal L_j`, not only those fitting the residual capacity) with
``rounding="optimistic"``: each slot credits :math:`\lceil Q W_j \rho\Delta/E_j\rceil`
progress units, so every truly feasible schedule is feasible for the rounded DP and the
DP's value dominates the true maximum payoff. Hence :math:`D \ge \mathrm{OPT}` holds
exactly, with no assumption (up to floating point).

Cost: one subroutine call per job, :math:`O(nT(B\log B + KB + KQ))`.

Ratio
-----
:func:`competitive_ratio` states OASiS Theorem 4 for Hadar's model,
:math:`P \ge \mathrm{OPT} / 2\alpha` with :math:`\alpha = \max_k(1, \ln(U_k/L))`,
and checks its assumptions (:mod:`optsched.hadar.model`). The LP relaxation,
:math:`\mathrm{LP} \ge \mathrm{OPT}`, is :func:`optsched.hadar.exact.lp_bound`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import check_progress_rule
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.hadar.model import SMALL_DEMAND_THRESHOLD, HadarModel, Prices, build_model

__all__ = ["DEFAULT_QUANTA", "JobPlan", "slot_options", "rule_options", "dual_subroutine",
           "quanta_per_slot",
           "coverable", "Certificate", "dual_certificate", "RatioReport", "ratio_report",
           "competitive_ratio"]

DEFAULT_QUANTA = 360
_TOL = 1e-12


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
                 rho: np.ndarray, with_alloc: bool = False, width: Any = None,
                 speed: bool = False, same: np.ndarray | None = None):
    """Per slot (rows of ``price``) and option (threshold rate ``rho``, gang ``width``,
    default :math:`W_j`): the cost of the ``width`` cheapest GPUs among buckets of rate
    >= rho (``inf`` if fewer remain).

    Returns ``cost[nT, K]``, then with ``with_alloc`` the GPUs taken per ``[nT, K, B]``,
    then with ``speed`` the summed per-worker rate of those GPUs ``[nT, K]`` (what the
    ``"additive"`` progress rule credits per second).

    ``same`` (optional, per slot): slots whose rows of ``price`` and ``residual`` are
    known to be one and the same row (e.g. slots no job reserved,
    :attr:`~optsched.hadar.model.PriceBook.untouched`). Each row's options depend on that
    row alone, so they are computed once for all of them: the same floats, without a
    sort per slot.
    """
    if same is not None:
        same = np.asarray(same, dtype=bool)
        if same.shape != (price.shape[0],):
            raise InvalidOption("same", same.shape, f"one flag per slot expected "
                                f"({price.shape[0]} slots)")
        if int(same.sum()) > 1:
            rows = np.flatnonzero(~same)
            rep = int(np.flatnonzero(same)[0])
            pick = np.append(rows, rep)
            got = slot_options(model, j, price[pick], residual[pick], rho,
                               with_alloc=with_alloc, width=width, speed=speed)
            parts = got if isinstance(got, tuple) else (got,)
            full = []
            for part in parts:
                spread = np.empty((price.shape[0],) + part.shape[1:], dtype=part.dtype)
                spread[rows] = part[:-1]
                spread[same] = part[-1]
                full.append(spread)
            return tuple(full) if isinstance(got, tuple) else full[0]
    W = np.broadcast_to(np.asarray(model.W[j] if width is None else width, dtype=float),
                        rho.shape)
    rb = model.rates[j][model.bucket_type]  # rate of each bucket for this job
    order = np.argsort(price, axis=1, kind="stable")
    ps = np.take_along_axis(price, order, axis=1)
    rs = np.take_along_axis(residual, order, axis=1).astype(float)
    rsb = rb[order]
    elig = rsb[:, None, :] >= rho[None, :, None] * (1 - 1e-12)  # nT, K, B
    cap_e = np.where(elig, rs[:, None, :], 0.0)
    cum = np.cumsum(cap_e, axis=2)
    take = np.clip(W[None, :, None] - (cum - cap_e), 0.0, cap_e)
    cost = (take * ps[:, None, :]).sum(axis=2)
    cost[cum[:, :, -1] < W[None, :]] = np.inf
    if not (with_alloc or speed):
        return cost
    out: list[np.ndarray] = [cost]
    if with_alloc:
        alloc = np.zeros_like(take)
        np.put_along_axis(alloc, np.broadcast_to(order[:, None, :], take.shape), take, axis=2)
        out.append(alloc)
    if speed:
        out.append((take * rsb[:, None, :]).sum(axis=2))
    return tuple(out)


def rule_options(model: HadarModel, j: int, price: np.ndarray, residual: np.ndarray,
                 Q: int, rounding: str, progress_rule: str = "gang",
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""The per-slot options of job ``j`` under a progress rule
    (:mod:`optsched.core.progress`): ``(cost[nT, O], units[nT, O], rho[O], width[O])``.

    ``"gang"``: one option per threshold rate, :math:`W_j` GPUs, crediting
    :math:`W_j\rho\Delta`. ``"partial"``: every (threshold, width :math:`1..W_j`),
    crediting :math:`w\rho\Delta`. ``"additive"``: the gang options, each crediting the
    summed rates of the GPUs it takes. Units are progress quanta of :math:`E_j/Q`
    (floor for ``"safe"``, ceiling for ``"optimistic"``, at most :math:`Q`).
    """
    rho = _thresholds(model, j)
    W = int(model.W[j])
    if progress_rule == "partial":
        width = np.repeat(np.arange(1, W + 1), rho.size)
        rho = np.tile(rho, W)
    else:
        width = np.full(rho.size, W)
    nT = price.shape[0]
    if progress_rule == "additive":
        cost, sp = slot_options(model, j, price, residual, rho, speed=True)
        x = sp * model.delta / model.E[j] * Q
        q = np.floor(x + 1e-9) if rounding == "safe" else np.ceil(x - 1e-9)
        units = np.minimum(q, Q).astype(np.int64)
    else:
        cost = slot_options(model, j, price, residual, rho, width=width)
        units = np.broadcast_to(quanta_per_slot(width, rho, model.delta, model.E[j], Q,
                                                rounding), (nT, rho.size))
    return cost, units, rho, width


def quanta_per_slot(W: Any, rho: np.ndarray, delta: float, E: float, Q: int,
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
                    positive_only: bool = True, progress_rule: str = "gang",
                    same: np.ndarray | None = None) -> JobPlan:
    r"""The best priced schedule of job ``j``: OASiS's dual subroutine over Hadar's schedule
    set (module docstring).

    Parameters
    ----------
    model : HadarModel
        The slotted model.
    j : int
        The job.
    price, residual : ndarray, shape (T, B)
        Prices and residual capacity per slot and bucket; slots before :math:`a_j` are
        ignored.
    quanta : int
        Progress units :math:`Q`.
    rounding : {"safe", "optimistic"}
        Floor the progress a slot credits (a plan reaching :math:`Q` really completes) or
        take its ceiling (the certificate's upper bound).
    positive_only : bool
        Stop the scan once no completion slot can give a positive payoff (the payoff is
        then exact when positive, some value :math:`\le 0` otherwise).
    progress_rule : {"gang", "partial", "additive"}
        How a slot's GPUs make progress (:mod:`optsched.core.progress`); the per-slot
        options are :func:`rule_options`'.
    same : ndarray of bool, shape (T,), optional
        Slots whose rows of ``price`` and ``residual`` are one and the same row (slots no
        job reserved: :attr:`~optsched.hadar.model.PriceBook.untouched`); their options
        are computed once (:func:`slot_options`), the result unchanged. Used by the
        ``"gang"`` rule.

    Returns
    -------
    JobPlan
        ``payoff`` :math:`\mu_j` (``-inf`` when no schedule fits), completion slot and the
        GPUs per slot and bucket.

    Guarantee
    ---------
    Exact for the rounded covering problem; with ``"safe"`` the plan is feasible and
    :math:`\mu_j^{safe} \le \mu_j`, with ``"optimistic"`` :math:`\mu_j^{opt} \ge \mu_j`
    (rules ``"gang"`` and ``"partial"``). Under ``"additive"`` the per-slot options are
    the gang's candidate sets (the :math:`W_j` cheapest GPUs of types at least as fast as
    a threshold), credited with their summed rates: the plan is feasible under that rule
    with ``"safe"``, and its payoff is a lower bound on the rule's best one (cheaper
    mixes of slow and fast GPUs are not searched).

    Complexity
    ----------
    :math:`O(T(B\log B + KB))` for the per-slot step and :math:`O(TKQ)` for the DP
    (pseudo-polynomial in :math:`Q`); memory :math:`O(TQ)`.

    References
    ----------
    * OASiS (Bao et al., INFOCOM 2018), Algorithm 2, (21) and (27).
    """
    if progress_rule != "gang":
        check_progress_rule(progress_rule)
    a, T, Q = int(model.a[j]), model.T, int(quanta)
    empty = np.zeros(0, dtype=np.int64)
    if a >= T:
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    rho = _thresholds(model, j)
    pq = _quanta(model, j, rho, Q, rounding)
    # every rule's best slot credits at most the whole gang on the fastest type
    if not coverable(pq, Q, T - a):
        # the DP below would find no schedule: an O(K) test spares its O(T(B log B + KQ))
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    levels = np.arange(Q + 1)
    units: np.ndarray | None = None
    width = None
    if progress_rule == "gang":
        cost = slot_options(model, j, price[a:], residual[a:], rho,
                            same=None if same is None else same[a:])
        # row 0: the slot unused; row 1 + k: option k from level max(0, q - pq[k])
        shift = np.vstack([levels] + [np.maximum(0, levels - p) for p in pq])
        usable = np.isfinite(cost) & (pq > 0)[None, :]
    else:
        cost, units, rho, width = rule_options(model, j, price[a:], residual[a:], Q, rounding,
                                               progress_rule)
        usable = np.isfinite(cost) & (units > 0)
    K = rho.size
    nT = T - a
    step = np.zeros((nT, K + 1))
    step[:, 1:] = np.where(usable, cost, np.inf)
    best = np.full(Q + 1, np.inf)
    best[0] = 0.0
    choice = np.full((nT, Q + 1), -1, dtype=np.int16)
    vals = model.values[j]
    top, t_hat = -math.inf, -1
    # a lower bound on the cost of any schedule, whatever its completion slot: the
    # fractional cover of Q units by the slots' cheapest units (slot i credits at most
    # cap[i] units, each at no less than unit[i]), and W_j GPUs x the fewest slots x the
    # lowest price
    floor = 0.0
    if pq.max() > 0 and units is None:
        floor = float(price[a:].min()) * int(model.W[j]) * math.ceil(Q / int(pq.max()))
    per_slot = pq[None, :] if units is None else units
    if usable.any():
        per_unit = np.where(usable, cost, np.inf) / np.maximum(per_slot, 1)
        unit = per_unit.min(axis=1)
        cap = np.where(usable, per_slot, 0).max(axis=1).astype(float)
        order = np.argsort(unit, kind="stable")
        got = np.cumsum(cap[order])
        if got[-1] < Q:  # not even every slot at its largest option covers the work
            return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
        full = int(np.searchsorted(got, Q))  # slots order[:full] fully, order[full] partly
        frac = float((unit[order[:full]] * cap[order[:full]]).sum())
        frac += float(unit[order[full]]) * (Q - (float(got[full - 1]) if full else 0.0))
        floor = max(floor, frac)
    else:
        return JobPlan(j, -math.inf, -1, empty, empty, empty, math.inf)
    floor *= 1 - 1e-12
    for i in range(nT):
        if vals[a + i] <= (max(top, 0.0) if positive_only else top) + floor:
            break  # f non-increasing and costs > 0: no later completion slot can do better
        if units is not None:  # this slot's credits (they vary by slot)
            shift = np.vstack([levels[None, :],
                               np.maximum(0, levels[None, :] - units[i][:, None])])
        cand = best[shift] + step[i][:, None]  # (K + 1) x (Q + 1)
        pick = np.argmin(cand, axis=0)  # ties: the slot unused, then the lowest option
        best = cand[pick, levels]
        choice[i] = pick - 1
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
            q = max(0, q - int(pq[k] if units is None else units[i, k]))
    slots_used = np.array(used_i[::-1], dtype=np.int64)
    options_used = np.array(used_k[::-1], dtype=np.int64)
    _, alloc = slot_options(model, j, price[a + slots_used], residual[a + slots_used], rho,
                            with_alloc=True, width=width)
    y = np.rint(alloc[np.arange(slots_used.size), options_used]).astype(np.int64)  # [n, B]
    rr, bb = np.nonzero(y)
    total = float(vals[t_hat] - top)
    return JobPlan(j, float(top), int(t_hat), a + slots_used[rr], bb, y[rr, bb], total)



@dataclass(frozen=True)
class Certificate:
    """``D = mu_term + price_term``; ``mu[j]`` per job."""

    D: float
    mu_term: float
    price_term: float
    mu: np.ndarray
    seconds: float


def dual_certificate(model: HadarModel, prices: Prices,
                     quanta: int = DEFAULT_QUANTA) -> Certificate:
    r"""The dual certificate :math:`D` for ``prices``: a feasible solution of OASiS's dual,
    hence an upper bound on the optimum.

    Parameters
    ----------
    model : HadarModel
        The slotted model.
    prices : Prices
        The per-slot, per-bucket prices :math:`p_{thk}` (usually the online run's final
        prices).
    quanta : int
        Progress units :math:`Q` of the dual subroutine.

    Returns
    -------
    Certificate
        :math:`D = \sum_j \mu_j + \sum_{t,h,k} p_{thk} c_{hk}` and its two terms.

    Guarantee
    ---------
    :math:`D \ge \mathrm{LP} \ge \mathrm{OPT}` for every :math:`p \ge 0` (weak duality;
    optimistic rounding makes :math:`\mu_j` dominate every true payoff), with no
    assumption.

    Complexity
    ----------
    One dual-subroutine call per job, :math:`O(nT(B \log B + KB + KQ))`.

    References
    ----------
    * OASiS (Bao et al., INFOCOM 2018), dual (19)-(20) and the proof of Theorem 4.
    """
    t0 = time.perf_counter()
    full = np.broadcast_to(model.bucket_cap[None, :], prices.p.shape)
    mu = np.zeros(model.n_jobs)
    for j in range(model.n_jobs):
        plan = dual_subroutine(model, j, prices.p, full, quanta, "optimistic")
        mu[j] = max(0.0, plan.payoff) if math.isfinite(plan.payoff) else 0.0
    price_term = float((prices.p * model.bucket_cap[None, :]).sum())
    mu_term = float(mu.sum())
    return Certificate(mu_term + price_term, mu_term, price_term, mu,
                       time.perf_counter() - t0)


@dataclass(frozen=True)
class RatioReport:
    """The proved ratio :math:`2\\alpha` and the assumptions it rests on, as checked."""

    ratio: float
    alpha: float
    alpha_k: dict[str, float]
    U: dict[str, float]
    L: float
    eta: float
    demand_share: float
    assumptions: dict[str, bool]
    notes: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """All assumptions of OASiS Theorem 4 are met (the small-demand one by threshold)."""
        return all(self.assumptions.values())

    def to_dict(self) -> dict[str, Any]:
        return {"ratio": self.ratio, "alpha": self.alpha, "alpha_k": dict(self.alpha_k),
                "U": dict(self.U), "L": self.L, "eta": self.eta,
                "demand_share": self.demand_share, "assumptions": dict(self.assumptions),
                "holds": self.holds, "notes": list(self.notes)}


def ratio_report(model: HadarModel, U: Any = None, L: float | None = None,
                 small_demand_threshold: float = SMALL_DEMAND_THRESHOLD) -> RatioReport:
    """OASiS Theorem 4 on ``model``: :math:`2\\alpha` and its assumptions, checked."""
    notes = []
    try:
        Uk, Lv = model.price_params(U, L)
    except ModelNotApplicable as exc:
        return RatioReport(math.inf, math.inf, {}, {}, 0.0, model.eta_default, 1.0,
                           {"positive_L": False}, [exc.reason])
    # ln U - ln L, not ln(U / L): with L near the smallest float the quotient overflows
    # while the logarithm of the ratio is an ordinary number
    alpha_k = {t: (max(0.0, math.log(Uk[k]) - math.log(Lv)) if Uk[k] > 0 and Lv > 0
                   else (0.0 if Uk[k] <= 0 else math.inf))
               for k, t in enumerate(model.types)}
    alpha = max([1.0, *alpha_k.values()])
    # small demands
    share = 0.0
    for k in range(len(model.types)):
        users = model.W[model.rates[:, k] > 0]
        if users.size == 0:
            continue
        caps = model.bucket_cap[model.bucket_type == k]
        share = max(share, float(np.max(np.minimum(users.max(), caps) / caps)))
    a = {}
    a["small_demand"] = share <= small_demand_threshold
    Lbound = model.L_default
    a["eta_condition"] = Lv <= Lbound * (1 + 1e-12) and Lbound > 0
    Ud = model.U_default
    used = np.array([bool((model.rates[:, k] > 0).any()) for k in range(len(model.types))])
    a["U_dominates_utility"] = bool(np.all(Uk[used] >= Ud[used] * (1 - 1e-12)))
    late = np.array([j.value(model.T * model.delta - j.arrival) for j in model.instance.jobs])
    a["positive_L"] = bool(np.all(late > 0)) and Lv > 0
    a["some_job_fits"] = bool(np.any(model.a + model.nmin <= model.T))
    if not a["small_demand"]:
        notes.append(f"a job can take {share:.3g} of a (node, type) bucket in one slot "
                     f"(> {small_demand_threshold:g}): OASiS's differential argument is "
                     "then only approximate")
    if not a["eta_condition"]:
        notes.append("L exceeds the eta bound of OASiS (25): D_0 <= OPT/4 is not ensured")
    if not a["U_dominates_utility"]:
        notes.append("U_k is below some job's best utility: a saturated resource may "
                     "still look profitable")
    if not a["positive_L"]:
        notes.append("some job is worth nothing when it completes at the horizon (or L = 0): "
                     "the price lower bound L must be positive")
    if not a["some_job_fits"]:
        notes.append("no job can complete within the horizon from its arrival: the ratio "
                     "concerns an empty optimum")
    return RatioReport(2.0 * alpha, alpha, alpha_k,
                       {t: float(Uk[k]) for k, t in enumerate(model.types)}, Lv,
                       model.eta_default, share, a, notes)


def competitive_ratio(instance: Instance, *, slots: int | None = None, U: Any = None,
                      L: float | None = None,
                      small_demand_threshold: float = SMALL_DEMAND_THRESHOLD) -> RatioReport:
    r"""OASiS Theorem 4 for Hadar's model: the ratio :math:`2\alpha` with
    :math:`\alpha = \max_k(1, \ln(U_k/L))`, and whether its assumptions hold here.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    slots : int, optional
        Number of slots :math:`T` of the model.
    U, L : optional
        Price-function bounds (default: OASiS (23)-(26) on the instance).
    small_demand_threshold : float
        Largest share of a (node, type) bucket one job may take for the small-demand
        assumption to count as met.

    Returns
    -------
    RatioReport
        ``ratio`` (``inf`` when :math:`L = 0`), :math:`\alpha_k`, the assumptions checked
        one by one, and notes.

    Guarantee
    ---------
    When every assumption holds (``report.holds``), the online total utility satisfies
    :math:`P \ge \mathrm{OPT}/(2\alpha)`.

    Complexity
    ----------
    :math:`O(nK + nT)`.

    References
    ----------
    * OASiS (Bao et al., INFOCOM 2018), Theorem 4 and the price function (23)-(26).
    """
    return ratio_report(build_model(instance, slots), U, L, small_demand_threshold)
