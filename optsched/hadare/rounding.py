r"""MIP starts for HadarE's node-class program: list schedules in fork-aware orders
(:func:`best_list_schedule_classes`, used by default) and from the LP relaxation.

The relaxation of the node-class program (:mod:`optsched.hadare.exact`) is tight on the
instances we measured (within 0.2 % of the optimum), but HiGHS may take most of a time
limit to find an integer point near it. :func:`lp_order_start` turns the LP point into
one: jobs are taken in the order of their LP completion slot (the first slot where the
LP's cumulative completion :math:`\sum_{t' \le t} u_{jt'}` reaches 1/2; jobs the LP
completes by less than 1/2 come last, by their LP completion mass, descending), and each
is placed by list scheduling: from its first slot on, in every slot it takes the free
GPUs of its fastest classes (at most :math:`n_g \min(W_j, c_g)` per class, and no more
than the work left needs) until its work is done; a job that cannot finish by slot
:math:`T` or whose utility there is 0 is left out and holds nothing.

The point is feasible for the node-class program by construction (capacity per slot and
class, GPUs only up to the completion slot, work reached), so it is a valid start; its
value is a lower bound on the optimum. Cost: :math:`O(n T G)` for :math:`n` jobs,
:math:`T` slots and :math:`G` classes, plus one LP.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.core.instance import Instance

__all__ = ["ORDERS", "lp_order", "list_schedule_classes", "fork_orders",
           "best_list_schedule_classes"]


def lp_order(u: np.ndarray, jt_j: np.ndarray, jt_t: np.ndarray, n: int) -> np.ndarray:
    """Jobs by LP completion slot (first slot with cumulative ``u`` >= 1/2), then the
    rest by their completion mass, descending. ``jt_j``/``jt_t`` list each job's slots
    in order, job after job (as the programs do)."""
    mass = np.bincount(jt_j, weights=u, minlength=n)
    cnt = np.bincount(jt_j, minlength=n)
    cu = np.cumsum(u)
    before = np.concatenate(([0.0], cu))[np.concatenate(([0], np.cumsum(cnt)[:-1]))]
    cum = cu - np.repeat(before, cnt)
    half = np.full(n, np.inf)
    hit = cum >= 0.5 - 1e-9
    np.minimum.at(half, jt_j[hit], jt_t[hit].astype(float))
    return np.lexsort((-mass, half))


def list_schedule_classes(instance: Instance, T: int, values: np.ndarray, cls: dict,
                          order: np.ndarray) -> dict[int, tuple[int, dict[tuple[int, int], int]]]:
    """List scheduling in ``order`` (module docstring): ``{job: (completion slot,
    {(slot, class): GPUs})}`` for the jobs placed."""
    d = float(instance.slot)
    ctype, ccap, ccount = cls["type"], cls["cap"], cls["count"]
    free = np.tile((ccount * ccap).astype(np.int64), (T, 1))
    rates = instance.throughput_matrix
    W = instance.workers
    E = instance.work
    a = np.ceil(instance.arrivals / d - 1e-9).astype(np.int64)
    out: dict[int, tuple[int, dict[tuple[int, int], int]]] = {}
    for j in order:
        j = int(j)
        r = rates[j, ctype]
        gs = [int(g) for g in np.argsort(-r, kind="stable") if r[g] > 0]
        top = ccount * np.minimum(W[j], ccap)
        left = float(E[j])
        plan: dict[tuple[int, int], int] = {}
        done = -1
        for t in range(int(a[j]), T):
            for g in gs:
                per = float(r[g]) * d
                need = math.ceil(left / per - 1e-9)
                take = int(min(free[t, g], top[g], need))
                if take > 0:
                    plan[(t, g)] = take
                    left -= take * per
                if left <= 1e-9 * E[j]:
                    break
            if left <= 1e-9 * E[j]:
                done = t
                break
        if done < 0 or not values[j, done] > 0:
            continue
        for (t, g), x in plan.items():
            free[t, g] -= x
        out[j] = (done, plan)
    return out


#: Orders tried by :func:`best_list_schedule_classes`, by the utility :math:`f_j(e_j)` of
#: completing at the earliest slot :math:`e_j` with every copy it may run (all usable
#: classes at :math:`n_g \min(W_j, c_g)` GPUs): ``"value"`` (descending), ``"density"``
#: (per GPU-slot of work on its fastest class, descending), ``"loss"`` (the utility lost by
#: completing in the last slot instead, per GPU-slot, descending).
ORDERS = ("value", "density", "loss")


def fork_orders(instance: Instance, T: int, values: np.ndarray, cls: dict
                ) -> dict[str, np.ndarray]:
    """The job orders of :data:`ORDERS`."""
    d = float(instance.slot)
    n = instance.n_jobs
    r = instance.throughput_matrix[:, cls["type"]]
    W = instance.workers
    top = cls["count"][None, :] * np.minimum(W[:, None], cls["cap"][None, :])
    speed = (r * top).sum(axis=1) * d
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.where(speed > 0, np.ceil(instance.work / np.where(speed > 0, speed, 1)
                                           - 1e-9), T)
    a = np.ceil(instance.arrivals / d - 1e-9).astype(np.int64)
    e = np.clip(a + need.astype(np.int64) - 1, 0, T - 1)
    best = values[np.arange(n), e] if n else np.zeros(0)
    work = instance.work / np.maximum(r.max(axis=1) * d, 1e-300)
    late = values[:, -1] if n else np.zeros(0)
    keys = {"value": -best, "density": -best / work, "loss": -(best - late) / work}
    return {k: np.lexsort((np.arange(n), keys[k])) for k in ORDERS}


def best_list_schedule_classes(instance: Instance, T: int, values: np.ndarray, cls: dict
                               ) -> tuple[dict[int, tuple[int, dict[tuple[int, int], int]]],
                                          float, str]:
    """The best :func:`list_schedule_classes` over :data:`ORDERS`: placements, utility,
    order."""
    best: tuple[dict, float, str] = ({}, 0.0, ORDERS[0])
    for kind, jobs in fork_orders(instance, T, values, cls).items():
        placed = list_schedule_classes(instance, T, values, cls, jobs)
        value = float(sum(values[j, t] for j, (t, _) in placed.items()))
        if value > best[1]:
            best = (placed, value, kind)
    return best
