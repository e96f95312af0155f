r"""List-scheduling starts for Hadar's MILP (:mod:`optsched.hadar.exact`).

The online algorithm (:mod:`optsched.hadar.heuristics`) prices GPUs for competitiveness
against an adversary; offline, when every arrival is known, a plain list schedule is
often worth more, and it is a better MIP start. :func:`list_schedule` places jobs one
by one in a given order: from its first slot :math:`a_j` on, in every slot where at
least :math:`W_j` GPUs it can use are free, the job takes the gang of the fastest
threshold type :math:`k` for which :math:`W_j` GPUs of types at least as fast as
:math:`k` are free (fastest types first, node by node), progressing
:math:`W_j \tau_{jk}\Delta` (the slowest type used, as the model credits it), until its
work is done; a job that cannot finish by slot :math:`T`, or whose utility there is
not positive, holds nothing. :func:`best_list_schedule` tries a few orders
(:data:`ORDERS`) and keeps the best.

Every placed job holds exactly :math:`W_j` GPUs in each slot it runs, no bucket goes
over its capacity, and its credited work reaches :math:`E_j` by its completion slot,
so the plans are a feasible point of the MILP (:func:`optsched.hadar.exact.
heuristic_start` maps them) and their utility is a lower bound on the optimum.

Complexity: :math:`O(n T B)` per order for :math:`n` jobs, :math:`T` slots and
:math:`B` buckets.
"""

from __future__ import annotations

import numpy as np

from optsched.hadar.bounds import JobPlan
from optsched.hadar.model import HadarModel

__all__ = ["ORDERS", "list_schedule", "best_list_schedule", "order"]

#: Orders tried by :func:`best_list_schedule`: ``"density"`` (best utility per GPU-slot,
#: :math:`f_j(a_j + n^{min}_j - 1) / (W_j n^{min}_j)`, descending), ``"value"`` (best
#: utility, descending), ``"arrival"`` (first slot, then density).
ORDERS = ("density", "value", "arrival")


def order(model: HadarModel, kind: str) -> np.ndarray:
    """The jobs in the order ``kind`` (see :data:`ORDERS`)."""
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
    """Place ``jobs`` in this order (module docstring); the plans of the jobs placed."""
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
    """The best of :func:`list_schedule` over :data:`ORDERS`: plans, utility, order."""
    best: tuple[dict[int, JobPlan], float, str] = ({}, 0.0, ORDERS[0])
    for kind in ORDERS:
        plans = list_schedule(model, order(model, kind))
        value = float(sum(p.payoff for p in plans.values()))
        if value > best[1]:
            best = (plans, value, kind)
    return best
