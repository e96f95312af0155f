r"""HadarE online: Hadar's pricing for admission and main placement, then forked copies
on every GPU left idle.

Algorithm (round-based; slots of :math:`\Delta` = ``Instance.slot`` seconds)
----------------------------------------------------------------------------
1. **Admission and main placement = Hadar.** Each arriving job goes through Hadar's dual
   subroutine under the current prices (:func:`optsched.hadar.heuristics.run_online`,
   imported, not copied): admitted iff its best priced payoff is positive, its plan
   (GPUs per slot and (node, type)) is booked and the prices
   :math:`p_{thk} = L (U_k/L)^{g_{thk}/c_{hk}}` rise. A plan only books slots
   :math:`\ge a_j`, so all bookings of slot :math:`t` are known at the start of round
   :math:`t`; the fills below never touch the prices, hence admission and main
   placements are exactly Hadar's.
2. **Main copies.** In round :math:`t` every admitted job whose work is not done runs
   its plan's slot-:math:`t` GPUs as copies: one copy per node. A plan is a task-level
   gang that may mix types on one node; a copy holds one type, so on such a node only the
   piece of largest progress :math:`g\tau_{jk}` is kept (the others are released to step
   3); likewise at most :math:`F_j` pieces (largest progress first). A job whose work is
   already done releases its remaining planned GPUs.
3. **Fill.** Every GPU still idle is offered to the *eligible* jobs (admitted, arrived,
   work not done): repeatedly, among the pairs (job, idle (node, type)) where the job
   *could take a copy* (see :mod:`optsched.hadare.model`), pick the best *marginal
   progress per price* :math:`\min(\tau_{jk}\Delta, r_j - R_j\Delta) / p_{thk}`
   (:math:`r_j` remaining work, :math:`R_j` the job's current rate; ties: larger
   :math:`\tau_{jk}/p_{thk}`, then arrival order, then bucket order) and give it
   :math:`\min(\text{idle}, W_j - \text{copy size}, \lceil (r_j - R_j\Delta) /
   (\tau_{jk}\Delta)\rceil)` GPUs (the last term only while the job still needs
   progress in this round; afterwards a job that could still take GPUs gets them, as
   finishing earlier inside the round is still a gain). Stop when no pair is left.
   By construction, at every round start an idle GPU implies no eligible job could take
   a copy there (the maximal-utilization property).
4. **Progress.** Copies add up: :math:`R_j = \sum_{\text{copies}} g\,\tau_{jk}`; a job
   whose remaining work :math:`r_j \le R_j\Delta` finishes inside the round at
   :math:`t\Delta + r_j/R_j`, its GPUs stay idle until the next round (round-based), and
   it completes :math:`\kappa` seconds later (``completion="exact"``) or at the end of the
   slot plus :math:`\kappa` (``completion="slot"``, Hadar's slot model, the default:
   then the objective is directly comparable with the MILP of
   :mod:`optsched.hadare.exact`).

Execution: steps 2-3 are :class:`optsched.hadare.HadarEPolicy`, run by the shared
simulator (:func:`optsched.sim.simulate`), which does step 4 (additive copy progress,
consolidation) by the validator's rule; ``completion="slot"`` then moves each completion
to the end of its slot. The run itself, and the simulation entry points
``simulate_hadare`` and ``simulate_pair``, are in :mod:`optsched.hadare.policy`
(still importable from here).

``forking=False`` replays Hadar's plans in the same rounds (gangs, slowest-type
progress :math:`W_j \min_k \tau_{jk}`, no fill): Hadar executed with the simulator's
semantics, the baseline that HadarE is compared with.

Guarantees (proved in ``docs/hadare.md``; tested)
-------------------------------------------------
* Every schedule validates (copies on one node and one type, 1..W_j GPUs, copy id = node
  index, additive progress, completion after work + :math:`\kappa`).
* Maximal utilization at every round start (above), exactly.
* If no job's plan puts two GPU types of one node in one slot (true whenever every node
  has a single GPU type, as in the paper's testbeds) and :math:`F_j` is at least the
  number of nodes its plan spans, every admitted job's progress under HadarE is, at
  every instant, at least its progress under the Hadar replay, so with
  :math:`\kappa = 0` every admitted job completes no later: makespan, each JCT and the
  total utility are at least as good as Hadar's. This fails on mixed-type nodes and
  for :math:`\kappa > 0` (pinned counterexamples in ``tests/hadare/test_hadare.py``).
* Cluster resource utilization (CRU) is **not** monotone: counterexample in the docs.

Complexity: Hadar's :math:`O(nT(B\log B + KB + KQ))` for admission, plus per round
:math:`O(I \cdot |\mathcal E_t| B)` for the fill with :math:`I \le B + |\mathcal E_t|
(H + 1)` picks, :math:`|\mathcal E_t|` the eligible jobs and :math:`B` the
(node, type) buckets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.errors import InvalidOption
from optsched.hadar.heuristics import DEFAULT_QUANTA, OnlineRun
from optsched.hadar.model import DEFAULT_MAX_SLOTS
from optsched.hadare.policy import run_hadare
from optsched.hadare.policy import simulate_hadare as simulate_hadare  # the path before 0.x
from optsched.hadare.policy import simulate_pair as simulate_pair  # likewise
from optsched.options import declares

__all__ = ["online", "hadar_replay", "lp_order", "list_schedule_classes", "LIST_ORDERS",
           "fork_orders", "best_list_schedule_classes"]

@declares()
def online(instance: Instance, *, slots: int | None = None, slot: float | None = None,
           max_slots: int = DEFAULT_MAX_SLOTS, quanta: int = DEFAULT_QUANTA,
           U: Any = None, L: float | None = None, consolidation: Any = None,
           consolidation_slots: Any = None, max_copies: Any = None, forking: bool = True,
           completion: str = "slot", copy_efficiency: float = 1.0,
           hadar_run: OnlineRun | None = None) -> Result:
    r"""HadarE online: Hadar's admission and main placement, then forked copies on every GPU
    left idle (module docstring); the total utility of the completed jobs.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    slots, slot, max_slots, quanta, U, L
        The planning grid and Hadar's pricing, as :func:`optsched.hadar.heuristics.online`.
    consolidation, consolidation_slots, max_copies
        As :func:`optsched.hadare.exact.exact`.
    forking : bool
        ``False`` replays Hadar's plans with the simulator's semantics (the baseline).
    completion : {"slot", "exact"}
        A job completes at the end of the slot in which its work is done (Hadar's slot model,
        comparable with the MILP) or at that instant; both plus the consolidation cost.
    copy_efficiency : float
        :math:`e \in (0, 1]`: in every round each job's main copy (largest rate) counts in
        full and every other copy at :math:`e` of its rate (1: copies add up perfectly,
        the forking assumption of :mod:`optsched.hadare.model`). Executed by holding the
        other copies for the first :math:`e\Delta` of the round (see
        :mod:`optsched.hadare.policy`).
    hadar_run : OnlineRun, optional
        A :func:`optsched.hadar.heuristics.run_online` result of this instance to reuse (its
        model and prices; ``slots``, ``quanta``, ``U``, ``L`` are then ignored).

    Returns
    -------
    Result
        Total utility, the validated schedule, and ``extra``: ``admitted``, ``hadar_P``,
        ``fill_gpu_rounds``, ``released_gpu_rounds``, ``max_copies_used``, ``rounds``,
        ``done_at``.

    Guarantee
    ---------
    :math:`P_{HadarE} \le \mathrm{OPT}` (``completion="slot"``); every GPU idle at a round
    start has no eligible job that could take a copy there. If no plan puts two GPU types of
    one node in one slot and :math:`F_j` covers the nodes a plan spans, every admitted job's
    progress is at every instant at least its progress under the Hadar replay, so with
    :math:`\kappa = 0`, :math:`C_j^{HadarE} \le C_j^{Hadar}` for every admitted job (proof in
    ``docs/hadare.md``; it fails on mixed-type nodes and for :math:`\kappa > 0`). No
    competitive ratio is proved.

    Complexity
    ----------
    Hadar's admission pass, :math:`O(nT(B\log B + KB + KQ))`, plus per round
    :math:`O(I\,|\mathcal E_t|\,B)` for the fill with :math:`I \le B + |\mathcal E_t|(H+1)`
    picks, :math:`|\mathcal E_t|` the eligible jobs, :math:`B` the buckets.

    References
    ----------
    * Sultana et al., arXiv:2503.10918, 2025 (HadarE).
    * OASiS (Bao et al., INFOCOM 2018), Algorithms 1-2 (the pricing it reuses).
    """
    return run_hadare(instance, slots=slots, slot=slot, max_slots=max_slots, quanta=quanta,
                      U=U, L=L, consolidation=consolidation,
                      consolidation_slots=consolidation_slots, max_copies=max_copies,
                      forking=forking, completion=completion,
                      copy_efficiency=copy_efficiency, hadar_run=hadar_run)


def hadar_replay(instance: Instance, **options: Any) -> Result:
    """Hadar's plans executed in HadarE's rounds without forking (the baseline); the
    options of :func:`online` except ``forking``."""
    if "forking" in options:
        raise InvalidOption("forking", options["forking"], "hadar-replay never forks")
    return online(instance, forking=False, **options)


# ------------------------------------------------------------------ list schedules
# offline MIP starts for the node-class program (see list_schedule_classes)

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
    r"""A list schedule over node classes (an offline MIP start for
    :func:`optsched.hadare.exact.exact`'s node-class program): ``{job: (completion slot,
    {(slot, class): GPUs})}`` for the jobs of ``order`` placed in this order.

    Each job in turn, from its first slot on, takes in every slot the free GPUs of its
    fastest classes (at most :math:`n_g \min(W_j, c_g)` per class, and no more than the
    work left needs) until its work is done; a job that cannot finish by slot :math:`T`
    or whose utility there is 0 is left out and holds nothing. The orders come from
    :func:`fork_orders` or from the LP relaxation (:func:`lp_order`).

    Guarantee: the placements respect the capacity of every slot and class, hold GPUs
    only up to the completion slot and reach the work, so they are a feasible point of
    the node-class program (:func:`optsched.hadare.exact.placed_start`) and their utility
    is at most OPT.

    Complexity: :math:`O(n T G)` for :math:`n` jobs, :math:`T` slots, :math:`G` classes.
    """
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
LIST_ORDERS = ("value", "density", "loss")


def fork_orders(instance: Instance, T: int, values: np.ndarray, cls: dict
                ) -> dict[str, np.ndarray]:
    """The job orders of :data:`LIST_ORDERS`."""
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
    return {k: np.lexsort((np.arange(n), keys[k])) for k in LIST_ORDERS}


def best_list_schedule_classes(instance: Instance, T: int, values: np.ndarray, cls: dict
                               ) -> tuple[dict[int, tuple[int, dict[tuple[int, int], int]]],
                                          float, str]:
    """The best :func:`list_schedule_classes` over :data:`LIST_ORDERS`: placements, utility,
    order."""
    best: tuple[dict, float, str] = ({}, 0.0, LIST_ORDERS[0])
    for kind, jobs in fork_orders(instance, T, values, cls).items():
        placed = list_schedule_classes(instance, T, values, cls, jobs)
        value = float(sum(values[j, t] for j, (t, _) in placed.items()))
        if value > best[1]:
            best = (placed, value, kind)
    return best
