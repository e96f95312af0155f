r"""Hadar's online algorithm: OASiS Algorithm 1 on heterogeneous GPUs.

Jobs are treated in arrival order. Each goes through the dual subroutine
(:func:`optsched.hadar.bounds.dual_subroutine`, OASiS Alg. 2) under the current prices
(:class:`optsched.hadar.model.Prices`, OASiS (22)): admitted iff its best priced payoff
:math:`\mu_j > 0`, then :math:`g_{thk} \mathrel{+}= y_{thk}` and :math:`p_{thk}` rise on
the slots it uses. Earlier decisions are never revised and jobs never preempted beyond
their planned slots.

Complexity: one subroutine call per job, :math:`O(nT(B\log B + KB + KQ))` for :math:`n`
jobs (see :mod:`optsched.hadar.bounds`).

Guarantee: :math:`2\alpha`-competitive (OASiS Thm. 4) under the assumptions reported by
:func:`optsched.hadar.bounds.competitive_ratio`:

.. math::

    P \;\ge\; \frac{\mathrm{OPT}}{2\alpha}, \qquad \alpha = \max_k\Big(1,
    \ln\frac{U_k}{L}\Big).

Every run also carries a dual certificate (:func:`optsched.hadar.bounds.dual_certificate`):
an upper bound ``bound`` :math:`D \ge \mathrm{OPT}` on the offline optimum.

References: Bao et al., OASiS, INFOCOM'18, Alg. 1 and Thm. 4; Sultana et al., Hadar,
IPDPS'24.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize, relative_gap
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.errors import InvalidOption, ModelTooLarge
from optsched.hadar.bounds import (
    DEFAULT_QUANTA,
    JobPlan,
    dual_certificate,
    dual_subroutine,
    ratio_report,
)
from optsched.hadar.model import (
    DEFAULT_MAX_SLOTS,
    SMALL_DEMAND_THRESHOLD,
    HadarModel,
    Prices,
    build_model,
    model_slots,
    planning_instance,
)
from optsched.options import declares

__all__ = ["OnlineRun", "run_online", "online", "plan_schedule", "online_model",
           "DEFAULT_QUANTA", "LIST_ORDERS", "list_order", "list_schedule",
           "best_list_schedule"]

# the DP's choice table is T x (Q+1) int16 per arrival: 100 MB at this size
_MAX_DP_CELLS = 50_000_000
_TOL = 1e-12


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
        plan = dual_subroutine(model, j, prices.p, prices.residual, quanta, "safe",
                               same=prices.untouched)
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
    r"""Hadar online: jobs arrive in order; each is admitted at the schedule of best positive
    priced payoff (the dual subroutine) and prices rise with use; the result is the total
    utility of the admitted jobs.

    Parameters
    ----------
    instance : Instance
        Jobs (utility functions, gangs, throughputs, arrivals) and cluster.
    slots, slot, max_slots : optional
        The planning grid, as :func:`optsched.hadar.exact.exact`.
    quanta : int
        Progress units :math:`Q` per job in the dual subroutine.
    U, L : optional
        Price-function bounds (a number or a mapping type -> value for :math:`U`), overriding
        OASiS (23)-(26).
    certificate : bool
        Also compute the dual bound :math:`D` (``bound``; ``extra["D_over_P"]``).
    small_demand_threshold : float
        As :func:`optsched.hadar.bounds.competitive_ratio`.

    Returns
    -------
    Result
        ``objective`` :math:`P`, ``bound`` :math:`D`, the validated schedule; ``ratio`` is
        :math:`2\alpha` when every assumption of OASiS Theorem 4 holds
        (``extra["competitive_ratio"]`` lists them), else ``None`` with
        ``extra["ratio_unproved"]`` the value the theorem would give.

    Guarantee
    ---------
    Always :math:`P \le \mathrm{OPT} \le D` (the certificate); under the assumptions of
    OASiS Theorem 4, :math:`P \ge \mathrm{OPT}/(2\alpha)`.

    Complexity
    ----------
    One dual-subroutine call per arrival, :math:`O(T(B\log B + KB + KQ))` each; the same
    again for the certificate.

    References
    ----------
    * OASiS (Bao et al., INFOCOM 2018), Algorithms 1-2 and Theorem 4.
    * A. Sultana et al., "Hadar", IPDPS 2024 (the heterogeneous adaptation).
    """
    quanta = _check_quanta(quanta)
    model = online_model(instance, slot, slots, max_slots, quanta)
    run = run_online(model, quanta=quanta, U=U, L=L)
    sched = plan_schedule(model, run.plans)
    P = float(sum(model.values[j, pl.t_hat] for j, pl in run.plans.items()))
    report = ratio_report(model, U, L, small_demand_threshold)
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


# ------------------------------------------------------------------ list schedules
# offline MIP starts for the exact program (see list_schedule)

#: Orders tried by :func:`best_list_schedule`: ``"density"`` (best utility per GPU-slot,
#: :math:`f_j(a_j + n^{min}_j - 1) / (W_j n^{min}_j)`, descending), ``"value"`` (best
#: utility, descending), ``"arrival"`` (first slot, then density).
LIST_ORDERS = ("density", "value", "arrival")


def list_order(model: HadarModel, kind: str) -> np.ndarray:
    """The jobs in the order ``kind`` (see :data:`LIST_ORDERS`)."""
    n = model.n_jobs
    T = model.T
    done = np.minimum(model.a + model.nmin - 1, T - 1)
    ok = model.a + model.nmin <= T
    best = np.where(ok, model.values[np.arange(n), np.maximum(done, 0)], 0.0)
    density = best / (model.W * np.maximum(model.nmin, 1))
    if kind == "density":
        return np.lexsort((np.arange(n), -density))
    if kind == "value":
        return np.lexsort((np.arange(n), -best))
    if kind == "arrival":
        return np.lexsort((-density, model.a))
    raise ValueError(kind)


def list_schedule(model: HadarModel, jobs: np.ndarray) -> dict[int, JobPlan]:
    r"""A list schedule (an offline MIP start for :func:`optsched.hadar.exact.exact`):
    the plans of the jobs of ``jobs`` placed in this order.

    The online algorithm prices GPUs for competitiveness against an adversary; offline,
    when every arrival is known, a plain list schedule is often worth more. Each job in
    turn, from its first slot :math:`a_j` on, in every slot where :math:`W_j` GPUs it can
    use are free, takes the gang of the fastest threshold type :math:`k` for which
    :math:`W_j` GPUs of types at least as fast as :math:`k` are free (fastest types first,
    bucket by bucket), progressing :math:`W_j \tau_{jk}\Delta` (the slowest type used, as
    the model credits it), until its work is done; a job that cannot finish by slot
    :math:`T`, or whose utility there is not positive, holds nothing.

    Guarantee: every placed job holds exactly :math:`W_j` GPUs in each slot it runs, no
    bucket goes over its capacity and its credited work reaches :math:`E_j` by its
    completion slot, so the plans are a feasible point of the MILP
    (:func:`optsched.hadar.exact.heuristic_start` maps them) and
    :math:`\sum_j f_j(\hat t_j) \le \mathrm{OPT}`.

    Complexity: :math:`O(n T B)` for :math:`n` jobs, :math:`T` slots, :math:`B` buckets.
    """
    T, d = model.T, model.delta
    free = np.tile(model.bucket_cap.astype(np.int64), (T, 1))
    btype = model.bucket_type
    plans: dict[int, JobPlan] = {}
    for j in jobs:
        j = int(j)
        W = int(model.W[j])
        rate_b = model.rates[j, btype]
        usable = np.flatnonzero(rate_b > 0)
        if usable.size == 0 or model.a[j] + model.nmin[j] > T:
            continue
        by_speed = usable[np.argsort(-rate_b[usable], kind="stable")]
        speeds = np.unique(rate_b[usable])[::-1]  # thresholds, fastest first
        left = float(model.E[j])
        ts: list[int] = []
        bs: list[int] = []
        gs: list[int] = []
        t_hat = -1
        for t in range(int(model.a[j]), T):
            f = free[t]
            for s in speeds:
                pool = by_speed[rate_b[by_speed] >= s]
                if f[pool].sum() >= W:
                    need = W
                    for b in pool:
                        g = int(min(need, f[b]))
                        if g > 0:
                            ts.append(t)
                            bs.append(int(b))
                            gs.append(g)
                            need -= g
                        if need == 0:
                            break
                    left -= W * float(s) * d
                    break
            if left <= 1e-9 * model.E[j]:
                t_hat = t
                break
        if t_hat < 0 or not model.values[j, t_hat] > 0:
            continue
        ta, ba, ga = np.array(ts, np.int64), np.array(bs, np.int64), np.array(gs, np.int64)
        np.subtract.at(free, (ta, ba), ga)
        plans[j] = JobPlan(j, float(model.values[j, t_hat]), t_hat, ta, ba, ga, 0.0)
    return plans


def best_list_schedule(model: HadarModel) -> tuple[dict[int, JobPlan], float, str]:
    """The best of :func:`list_schedule` over :data:`LIST_ORDERS`: plans, utility, order."""
    best: tuple[dict[int, JobPlan], float, str] = ({}, 0.0, LIST_ORDERS[0])
    for kind in LIST_ORDERS:
        plans = list_schedule(model, list_order(model, kind))
        value = float(sum(p.payoff for p in plans.values()))
        if value > best[1]:
            best = (plans, value, kind)
    return best
