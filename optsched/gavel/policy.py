r"""Gavel's policies as simulator :class:`~optsched.sim.Policy` objects (OSDI'20 §3-5).

A :class:`GavelPolicy` keeps the LP allocation :math:`X` (from :mod:`.gavel_lp`) and turns
it into per-round placements with Gavel's round mechanism (§5, Alg. 1):

* :math:`X` is recomputed only when the set of visible jobs changes (an arrival or a
  completion: Gavel's *reset events*); it is kept otherwise.
* Rounds received: :math:`R_{mk}` counts the rounds job m ran on type k and :math:`N_m`
  the rounds it was present, both since the last counter reset; the fraction received is
  :math:`f_{mk} = (R_{mk} + \tfrac12)/(N_m + \tfrac12)`: both counters start at half a
  round, as Gavel's time counters do, so every priority is finite. Counters are reset at
  a reset event at most every ``reset_interval`` seconds (Gavel's
  ``minimum_time_between_allocation_resets = 1920``).
* Priority :math:`p_{mk} = X_{mk} / f_{mk}`. Ties are broken by the deficit
  :math:`X_{mk} N_m - R_{mk}` (larger first), then X, then arrival order, then between
  one job's types by speed (heterogeneity-aware policies) and a random order drawn every
  round (never the types' column order).
* Greedy packing in descending priority: an entry is skipped when its job is already
  scheduled this round or when its ``workers`` exceed the remaining GPUs of type k.
  After the entries of X, entries with :math:`X_{mk} = 0` on usable types take the GPUs
  still free (priority 0, as in Gavel's simulator; ``fill_leftover=False`` turns this
  off; Gavel's FIFO never does it).
* Placement: the selected jobs of each type are placed in decreasing gang size, keeping
  their previous GPUs when possible (lease extension), otherwise on the single node that
  fits best, otherwise on the fewest nodes (:func:`optsched.sim.placement.place_gang`).

With ``rounds="original"`` a :class:`GavelPolicy` runs Gavel's simulator's round
mechanics instead (:class:`OriginalRounds`, below).

Registered names (:mod:`optsched.gavel`; aliases without the ``gavel.`` prefix):
``max_min_fairness``
(heterogeneity-aware LAS), ``max_min_fairness_agnostic`` (T = 1), ``min_total_duration``
(makespan), ``finish_time_fairness``, ``max_sum_throughput``, ``min_cost_slo``,
``min_cost`` (no SLOs), ``fifo`` (Gavel's FIFO, fastest free type) and ``fifo_agnostic``
(random type); ``min_total_duration_agnostic`` and ``finish_time_fairness_agnostic``
(each job's V100 rate taken as its rate on every type, :func:`reference_throughputs`),
``isolated`` (each job its 1/n share of every type, no program) and
``max_min_fairness_water_filling`` / ``..._agnostic``
(:func:`optsched.gavel.exact.max_min_fairness_water_filling`).

**Gavel's simulator's round mechanics** (``rounds="original"``, :class:`OriginalRounds`).

:class:`~optsched.gavel.policy.RoundMechanism` is the paper's Alg. 1 (Narayanan et al.,
OSDI'20 §5): one priority :math:`X_{mk}/f_{mk}` over every (job, type) entry, with
:math:`f` the fraction of *rounds* received, and X recomputed whenever the set of jobs
changes. Gavel's own simulator (``scheduler/scheduler.py``, ``Scheduler.simulate``,
commit c4fa40097339e9608ab71fd64c8bdea96a5e4a4c) differs in five mechanics, which
:class:`OriginalRounds` reproduces together, with what its programs are given (6):

1. **When X is recomputed.** Only at a *counter reset*: the set of jobs changed since the
   last computation and at least ``reset_interval`` (1,920 s) passed since the last
   reset (or no reset happened yet at a positive time). A job that arrived since is not
   in X: its priority is 0 on every type, and when the walk reaches it with GPUs left it
   takes them without running (Gavel's worker assignment skips a job outside the
   allocation after the queue has counted its GPUs), so those GPUs stay idle for the
   round.
2. **The priority key, in seconds.** Per type k, the job's time on k since the reset
   over the time every job spent on k: :math:`f_{mk} = t_{mk} / \sum_{m'} t_{m'k}`,
   where each present job's :math:`t_{mk}` starts at half a round at the reset (and a
   job arriving later starts at half a round without adding it to the sum), a round's
   run adds its execution time (the whole steps it ran over its rate) to both, and the
   sum keeps the time of jobs that completed since. Priority :math:`X_{mk}/f_{mk}`;
   before the first reset with jobs (sum 0), :math:`10^9 X_{mk}`.
3. **Deficits that accumulate.** At each reset, before X is recomputed, every present
   job's deficit on k grows by :math:`X_{mk}\,\Delta - (t_{mk} - \tfrac12 \text{round})`
   (:math:`\Delta` the time since the previous reset, X the allocation being replaced,
   0 for a job outside it); deficits are never cleared. Ties of priority are broken by
   the larger deficit, then the larger :math:`X_{mk}`, then arrival order.
4. **Per-type queues.** The types are walked one after the other (v100, p100, k80 as
   Gavel's code lists them, any other type after them, fastest first by the jobs' median
   rate; or, for
   heterogeneity-agnostic policies, that list shuffled every round by Python's
   :class:`random.Random` seeded with ``seed + 5``, as Gavel seeds its type shuffler),
   each type's entries sorted by (priority, deficit, X) descending; an entry is taken
   when its job is not yet scheduled, its rate on the type is positive and its gang fits
   the type's GPUs still free.
5. **Rounds of whole steps.** A job scheduled for a round runs
   :math:`s = \min(\lfloor T_{mk} W_m \cdot 360 \rfloor, \text{steps left})` whole steps,
   taking :math:`s / (T_{mk} W_m)` seconds; the round ends when the last scheduled job
   ends (:meth:`OriginalRounds.horizon`), slightly under the round length when every
   job's step count was rounded down, and earlier when every scheduled job completes.
   Steps left are counted here in whole steps as Gavel does. The simulator credits a
   running job its rate times the round's length, up to one step more per round than
   Gavel's whole steps; in the round where a job's work runs out, it starts late by
   that excess, so it completes at Gavel's instant.

6. **What the programs see.** X is computed from the remaining steps Gavel counts (whole
   steps), and a heterogeneity-agnostic policy (``isolated``, the ``_agnostic`` ones)
   takes every GPU type as usable, as Gavel's code does: a job that cannot use a type
   still gets a share of it (its ``isolated`` share counts every type; its agnostic
   program believes it runs there at its reference rate). The round mechanics then skip
   that entry (its rate is 0), but its share enters the deficits and the row's split.
   (:meth:`OriginalRounds.program_view`.)

The packed policies (:class:`GavelPackedPolicy`) take ``rounds="original"`` too: the
same mechanics over job combinations, every job and every candidate pair with its own
row of X, counters and deficits, as Gavel's simulator keeps them for its ``_Packing``
policies (:class:`OriginalRounds`, ``packing``).

A round that runs nothing (every present job arrived after the last reset, so none is in
X) is followed at once by a reset whose deficits count the time since t = 0: what
Gavel's simulator does when no job is running and none is left to arrive. Not
reproduced: when jobs are still to arrive, Gavel instead jumps to the next arrival (and
then credits the idle time as execution time of the next round).
Placement on nodes is optsched's (:class:`RoundMechanism` placement); it does not change
any job's rate.

Complexity: per round :math:`O(nK \log n)` (one sort per type).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any, NoReturn

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Status
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, SolverFailed
from optsched.gavel.exact import (
    finish_time_fairness,
    finish_time_fairness_interior,
    finish_time_fairness_packed,
    max_min_fairness,
    max_min_fairness_interior,
    max_min_fairness_packed,
    max_min_fairness_water_filling,
    max_min_fairness_water_filling_packed,
    max_sum_throughput,
    max_sum_throughput_packed,
    min_cost_slo,
    min_total_duration,
    min_total_duration_interior,
    min_total_duration_packed,
)
from optsched.gavel.model import (
    AWS_PRICES,
    LPAllocation,
    Pairs,
    isolated_share,
    normalised_rates,
    proportional_split,
    row_sums,
)
from optsched.sim.placement import check_single_type_gangs, choose_nodes
from optsched.sim.policy import ClusterView

__all__ = ["RoundMechanism", "GavelPolicy", "GavelFIFOPolicy", "GavelFIFO", "SOLVERS",
           "KIND_OPTIONS", "AGNOSTIC", "realised_fractions", "tied_types", "reference_throughputs",
           "candidate_pairs", "PackedRounds", "GavelPackedPolicy", "GavelPackedFIFOPolicy",
           "PACKING_THRESHOLD", "PACKED_KINDS", "PACKED_KIND_OPTIONS", "GavelGandivaPolicy",
           "normalised_pair_throughput", "QUEUES", "type_walk", "OriginalRounds", "ROUNDS",
           "IsolatedClock", "ISOLATED_TIMES"]


#: Orders of the round mechanism's queue: ``"global"`` (optsched's default) and
#: ``"per_type"`` (Gavel's code).
QUEUES = ("global", "per_type")


def _check_queue(queue: Any) -> str:
    if queue not in QUEUES:
        raise InvalidOption("queue", queue, f"must be one of {list(QUEUES)}")
    return queue


def type_walk(view: ClusterView, T: np.ndarray, random_order: bool) -> np.ndarray:
    """Rank of each GPU type in the walk of ``queue="per_type"`` (0 first): the types by
    decreasing median rate of the jobs that can use them (Gavel's code walks v100, p100,
    k80, which this gives on its throughputs), or a fresh random order every round for
    heterogeneity-agnostic policies (Gavel's code shuffles the types for them)."""
    K = T.shape[1]
    if random_order:
        return view.rng.permutation(K)
    med = np.array([np.median(T[T[:, k] > 0, k]) if (T[:, k] > 0).any() else 0.0
                    for k in range(K)])
    rank = np.empty(K, dtype=np.int64)
    rank[np.lexsort((np.arange(K), -med))] = np.arange(K)
    return rank


class RoundMechanism:
    r"""Gavel's Alg. 1: time fractions ``X`` -> one round's placements (module docstring).

    Parameters
    ----------
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1920 s).
    fill_leftover : bool
        After every entry with :math:`X_{mk} > 0`, let entries with :math:`X_{mk} = 0`
        on a usable type take the GPUs still free (priority 0; Gavel's LP policies do,
        its FIFO does not). ``False`` runs only the entries of X.
    type_order : "fastest" or "random"
        Tie-break between one job's entries of equal priority, deficit and X: the faster
        type first, then a random order drawn every round (``"fastest"``, for
        heterogeneity-aware policies), or the random order alone (``"random"``, for
        heterogeneity-agnostic ones, which must not see throughputs). Gavel walks its
        per-type queues v100 -> p100 -> k80 for Perf policies and shuffles the order
        every round for agnostic ones. Neither uses the types' column order, so the
        mechanism is symmetric under relabelling the types.
    queue : "global" or "per_type"
        ``"global"`` (default): one queue of every (job, type) entry, in the order above.
        ``"per_type"``: Gavel's code's order (``Scheduler._schedule_jobs_on_workers_helper``
        without its global queue): the types are walked one after the other
        (:func:`type_walk`: fastest first, or shuffled every round for agnostic
        policies), each type's entries in decreasing priority, deficit and X, then
        arrival. A job whose share is positive on a faster type is then placed there
        before any slower type's queue is seen, whatever its priority on the slower one
        (a lone job with a share of every type runs on the fastest one every round,
        where the global queue realises its shares). Offered to reproduce Gavel's code;
        the global queue is the paper's Alg. 1 (one priority over all entries).
    """

    def __init__(self, reset_interval: float = 1920.0, *, fill_leftover: bool = True,
                 type_order: str = "fastest", queue: str = "global"):
        if type_order not in ("fastest", "random"):
            raise InvalidOption("type_order", type_order, "must be 'fastest' or 'random'")
        self.reset_interval = float(reset_interval)
        self.fill_leftover = bool(fill_leftover)
        self.type_order = type_order
        self.queue = _check_queue(queue)
        self.reset()

    def reset(self) -> None:
        # counters by the jobs' instance index (ClusterView.index), rows added as needed
        self._recv = np.zeros((0, 0))
        self._present = np.zeros(0)
        self._last_reset = -np.inf
        self._cluster: Any = None

    def reset_counters(self, now: float, force: bool = False) -> None:
        if force or now - self._last_reset >= self.reset_interval:
            self._recv[:] = 0.0
            self._present[:] = 0.0
            self._last_reset = now

    def _rows(self, index: np.ndarray, K: int) -> None:
        """Make room for the counters of jobs ``index`` (new rows start at zero)."""
        need = int(index.max()) + 1 if index.size else 0
        old = self._present.size
        if self._recv.shape[1:] != (K,):
            if old:
                raise InvalidOption("X", f"{K} GPU types",
                                    f"the counters of this run have {self._recv.shape[1]}")
            self._recv = np.zeros((0, K))
        if need > old:
            size = max(need, 2 * old)
            recv, pres = np.zeros((size, K)), np.zeros(size)
            recv[:old], pres[:old] = self._recv, self._present
            self._recv, self._present = recv, pres

    def fractions(self, index: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray,
                                                             np.ndarray]:
        r"""``(f, R, N)`` for jobs ``ids``: rounds received per type :math:`R_{mk}`, rounds
        present :math:`N_m` (both since the last reset) and the fraction
        :math:`f_{mk} = (R_{mk} + \tfrac12) / (N_m + \tfrac12)`.

        Both counters start at half a round, as Gavel's time counters do
        (``time_per_iteration / 2`` at arrival and at every reset), so :math:`f > 0`
        and every priority :math:`X_{mk}/f_{mk}` is finite: a job not yet run since the
        reset ranks by its share, :math:`X_{mk}(2N_m + 1)` after :math:`N_m` rounds of
        waiting, not above every job at once.
        """
        self._rows(index, K)
        recv, pres = self._recv[index], self._present[index]
        return (recv + 0.5) / (pres[:, None] + 0.5), recv, pres

    def allocate(self, view: ClusterView, X: np.ndarray) -> list[Placement]:
        n, K = X.shape
        index = view.index
        self._rows(index, K)
        recv, pres = self._recv[index], self._present[index]
        pos = X > 1e-9
        T = view.throughput_matrix
        eligible = pos | (T > 0) if self.fill_leftover else pos
        # the entries, flat in (job, type) order: every key below is one gather
        flat = np.flatnonzero(eligible)
        m_idx, k_idx = np.divmod(flat, K)
        Xe = X.ravel()[flat]
        rk = recv.ravel()[flat]
        pe = pres[m_idx]
        # the priority X / f with f = (R + 1/2) / (N + 1/2) (fractions()), 0 off X's support
        prio = np.where(Xe > 1e-9, Xe / ((rk + 0.5) / (pe + 0.5)), 0.0)
        deficit = Xe * pe - rk
        # the tie-break between types: a fresh random rank every round, after the
        # speed for heterogeneity-aware policies; never the column order. Drawn only if
        # some job has two entries (FIFO's one-hot X never does, and leaves the
        # generator to its own type choice); entries come by job, so a job with two
        # holds two neighbours
        if m_idx.size > 1 and bool((m_idx[1:] == m_idx[:-1]).any()):
            rank = view.rng.permutation(K)[k_idx]
        else:
            rank = np.zeros(len(k_idx), dtype=np.int64)
        free_k = view.gpus_per_type.astype(np.int64).tolist()
        W = view.workers.tolist()
        chosen: dict[int, int] = {}
        if self.queue == "per_type":
            walk = type_walk(view, T, self.type_order == "random")
            order = np.lexsort((m_idx, -Xe, -deficit, -prio, walk[k_idx]))
            _take(m_idx[order].tolist(), k_idx[order].tolist(), W, free_k, chosen)
        else:
            speed = (-T.ravel()[flat] if self.type_order == "fastest"
                     else np.zeros(len(k_idx)))
            order = np.lexsort((rank, speed, m_idx, -Xe, -deficit, -prio))
            _take(m_idx[order].tolist(), k_idx[order].tolist(), W, free_k, chosen)
        out = self._place(view, chosen, W)
        # counters
        self._present[index] += 1
        if chosen:
            cm = np.fromiter(chosen.keys(), dtype=np.int64, count=len(chosen))
            ck = np.fromiter(chosen.values(), dtype=np.int64, count=len(chosen))
            self._recv[index[cm], ck] += 1
        return out

    def _place(self, view: ClusterView, chosen: dict[int, int],
               W: list[int] | None = None,
               paired: list[tuple[tuple[int, ...], int]] | None = None) -> list[Placement]:
        """Nodes for the chosen (job, type) entries: lease extension first (jobs that keep
        their GPUs), then larger gangs first; then the ``paired`` ((job, job), type)
        entries, the two jobs on the same GPUs, each naming the other as ``partner``."""
        ids = view.ids
        if W is None:
            W = view.workers.tolist()
        ran = view.ran_before.tolist()
        prev = view.previous_by_job if any(ran) else {}
        types = view.gpu_types
        sel = sorted([(not ran[m], -W[m], m, k) for m, k in chosen.items()])
        cluster = view.cluster
        if self._cluster is not cluster:  # per cluster: free GPUs by type, node names
            self._cluster = cluster
            self._free0 = cluster.capacity.T.tolist()
            self._names = [node.name for node in cluster.nodes]
        cols = [c[:] for c in self._free0]
        names = self._names
        node_index = cluster.node_index
        out: list[Placement] = []
        for fresh, _, m, k in sel:
            tk, col, w, jid = types[k], cols[k], W[m], ids[m]
            if not fresh:
                # the previous GPUs when they are all of type k (lease extension:
                # choose_nodes' step 1 with the same test); the placements themselves
                # are handed back when they hold nothing else (the same values)
                ps = prev[jid]
                if len(ps) == 1:
                    p = ps[0]
                    if p.gpu_type == tk and p.gpus == w:
                        h = node_index(p.node)
                        if col[h] >= w:
                            col[h] -= w
                            out.append(p if p[4:] == _PLAIN_TAIL
                                       else Placement(jid, p.node, tk, p.gpus))
                            continue
                elif all(p.gpu_type == tk for p in ps) and sum(p.gpus for p in ps) == w:
                    hs = [(node_index(p.node), p.gpus) for p in ps]
                    if all(col[h] >= g for h, g in hs):
                        for h, g in hs:
                            col[h] -= g
                        for p in ps:
                            out.append(p if p[4:] == _PLAIN_TAIL
                                       else Placement(jid, p.node, tk, p.gpus))
                        continue
            hs2 = choose_nodes(view, col, jid, w, k, mode="spread", fresh=True)
            if hs2 is None:  # cannot happen: counts were checked per type
                continue
            out.extend([Placement(jid, names[h], tk, g) for h, g in hs2])
        for (a, b), k in sorted(paired or (), key=lambda e: (-W[e[0][0]], e[0])):
            lead, other = ids[a], ids[b]
            hs3 = choose_nodes(view, cols[k], lead, W[a], k, mode="spread")
            if hs3 is None:  # cannot happen: counts were checked per type
                continue
            for h, g in hs3:
                out.append(Placement(lead, names[h], types[k], g, partner=other))
                out.append(Placement(other, names[h], types[k], g, partner=lead))
        return out


def _take(ms: list[int], ks: list[int], W: list[int], free_k: list[int],
          chosen: dict[int, int]) -> bool:
    """Alg. 1's greedy pass over entries ``(ms[i], ks[i])`` in queue order: a job not yet
    chosen whose gang fits the free GPUs of the type takes them (``chosen``, ``free_k``
    updated in place). Returns whether GPUs are left."""
    left = sum(free_k)
    if not left:
        return False
    for m, k in zip(ms, ks):
        w = W[m]
        if w > free_k[k] or m in chosen:
            continue
        chosen[m] = k
        free_k[k] -= w
        left -= w
        if not left:  # no GPU left: no later entry is taken
            return False
    return True


#: The fields after ``gpus`` of a plain :class:`Placement` (whole GPUs, no sharing)
_PLAIN_TAIL = Placement("", "", "", 0)[4:]


def _solver_failed(name: str, view: ClusterView, sol: LPAllocation) -> NoReturn:
    """Raise :class:`SolverFailed` for policy ``name``'s failed solve at this view."""
    res = sol.result
    raise SolverFailed(f"policy {name!r} at t={view.time:g} ({len(view.ids)} jobs)",
                       sol.status.value, res.message if res is not None else "")


# --------------------------------------------------------------------------- solvers
Solver = Callable[[ClusterView, dict], LPAllocation]


def _mmf(agnostic: bool) -> Solver:
    def solve(view: ClusterView, o: dict) -> LPAllocation:
        if o.get("point") == "interior":  # Gavel's program, its interior optimum
            return max_min_fairness_interior(
                view.throughput_matrix, view.workers, view.gpus_per_type,
                view.weights if o.get("weighted", True) else None, agnostic=agnostic,
                method=o["interior_method"], **o["solve_options"])
        return max_min_fairness(view.throughput_matrix, view.workers, view.gpus_per_type,
                                    view.weights if o.get("weighted", True) else None,
                                    agnostic=agnostic, pareto=o.get("pareto", "greedy"),
                                    aggregate=o.get("aggregate", True),
                                    backend=o["backend"], **o["solve_options"])
    return solve


def reference_throughputs(T: np.ndarray, gpu_types: tuple[str, ...],
                          reference: str | None = "v100") -> np.ndarray:
    r"""What a heterogeneity-agnostic policy believes the throughputs are: job m's rate on
    the ``reference`` type on every type it can use, :math:`\tilde T_{mk} = T_{m,ref}`
    where :math:`T_{mk} > 0` (0 elsewhere).

    Gavel's agnostic finish-time-fairness and makespan policies
    (``FinishTimeFairnessPolicy``, ``MinTotalDurationPolicy``) copy every job's V100
    rate to every type ("all other worker types have a throughput of 0 for some job"),
    so they see each job's work and speed but not how speed differs across types.
    ``reference=None``, or a reference type the cluster lacks or the job cannot use,
    takes the job's fastest rate instead. Unlike Gavel's code, a type the job cannot use
    stays at 0 (Gavel gives it the V100 rate, and its round mechanism then skips the
    entry).
    """
    T = np.asarray(T, dtype=float)
    ref = T.max(axis=1)
    if reference is not None and reference in gpu_types:
        on_ref = T[:, gpu_types.index(reference)]
        ref = np.where(on_ref > 0, on_ref, ref)
    return np.where(T > 0, ref[:, None], 0.0)


def _type_blind(sol: LPAllocation, view: ClusterView) -> LPAllocation:
    """An agnostic program's X with its rows spread over the usable types in proportion
    to their GPUs (:func:`proportional_split`): the program sees one rate per job on
    every usable type, so only the row sums carry its answer."""
    if not sol.ok:
        return sol
    X, split = proportional_split(sol.X, view.throughput_matrix > 0, view.workers,
                                  view.gpus_per_type)
    return replace(sol, X=X, info={**sol.info, "type_split": split})


def _makespan_of(agnostic: bool) -> Solver:
    def solve(view: ClusterView, o: dict) -> LPAllocation:
        T = view.throughput_matrix
        if agnostic:
            T = reference_throughputs(T, view.gpu_types, o.get("reference", "v100"))
        # the agnostic baseline is defined by Gavel's code, not by a program of the
        # paper: by default it answers as that code does (see GavelPolicy's ``point``)
        if o.get("point", "interior" if agnostic else "vertex") == "interior":
            sol = min_total_duration_interior(T, view.workers, view.gpus_per_type,
                                              view.remaining, backend=o["backend"],
                                              **o["solve_options"])
        else:
            sol = min_total_duration(T, view.workers, view.gpus_per_type, view.remaining,
                                     aggregate=o.get("aggregate", False),
                                     backend=o["backend"], **o["solve_options"])
        return _type_blind(sol, view) if agnostic else sol
    return solve


def _ftf_of(agnostic: bool) -> Solver:
    def solve(view: ClusterView, o: dict) -> LPAllocation:
        T = view.throughput_matrix
        if not agnostic:
            return _ftf(view, o, T)
        T = reference_throughputs(T, view.gpu_types, o.get("reference", "v100"))
        return _type_blind(_ftf(view, o, T), view)
    return solve


def _isolated(view: ClusterView, o: dict) -> LPAllocation:
    # no program: the closed form; its objective is the max-min value it reaches
    T, W, c = view.throughput_matrix, view.workers, view.gpus_per_type
    X = isolated_share(T, W, c)
    value = float((normalised_rates(T, W, c) * X).sum(axis=1).min()) if len(W) else 0.0
    return LPAllocation(X, value, Status.OPTIMAL, lp_solves=0,
                        info={"objective": "max-min value of the isolated share"})


def _water_filling(agnostic: bool) -> Solver:
    def solve(view: ClusterView, o: dict) -> LPAllocation:
        return max_min_fairness_water_filling(
            view.throughput_matrix, view.workers, view.gpus_per_type,
            view.weights if o.get("weighted", True) else None, agnostic=agnostic,
            backend=o["backend"], **o["solve_options"])
    return solve


def _ftf(view: ClusterView, o: dict, T: np.ndarray | None = None) -> LPAllocation:
    W, c = view.workers, view.gpus_per_type
    T = view.throughput_matrix if T is None else T
    clock: IsolatedClock | None = o.get("isolated_clock")
    # d_m: the job's finish time had it run in isolation (ISOLATED_TIMES); Gavel's code
    # takes the isolated share of every type, usable or not (IsolatedClock)
    X_iso = isolated_share(T if clock is None else np.ones_like(T), W, c)
    thr_iso = W * (T * X_iso).sum(axis=1)
    d = (view.work / thr_iso if clock is None
         else clock.isolated_times(view.index, view.remaining, thr_iso))
    solve = (finish_time_fairness_interior if o.get("point") == "interior"
             else finish_time_fairness)
    return solve(T, W, c, view.remaining, view.time - view.arrivals,
                 isolated_time=d, aggregate=o.get("aggregate", True),
                 backend=o["backend"], **o["solve_options"])


#: The finish-time-fairness denominators of :class:`GavelPolicy`'s ``isolated_time``:
#: ``"current"`` (default) and ``"accumulated"`` (Gavel's code, :class:`IsolatedClock`).
ISOLATED_TIMES = ("current", "accumulated")


class IsolatedClock:
    r"""The time each job would have needed in isolation for the work it has done,
    accumulated allocation by allocation: the denominator of Gavel's code's finish-time
    fairness (``isolated_time="accumulated"`` of :class:`GavelPolicy`).

    At the allocation computed at time :math:`t_a`, job m has :math:`r_m^{(a)}` work
    left and the isolated share :math:`X^{iso}` of that moment's jobs gives it the rate
    :math:`v_m^{(a)} = W_m \sum_k T_{mk} X^{iso}_{mk}`. Its accumulated isolated time is

    .. math::
        \tau_m^{(a)} = \tau_m^{(a-1)} + \frac{r_m^{(a-1)} - r_m^{(a)}}{v_m^{(a-1)}},
        \qquad \tau_m^{(a_0)} = 0 \text{ at the first allocation that sees the job,}

    the work it did between two allocations over the isolated rate of the earlier one
    (a job absent from the previous allocation adds nothing), and the denominator of
    :math:`\rho_m` is :math:`d_m = \tau_m^{(a)} + r_m^{(a)} / v_m^{(a)}`: the time it
    would have needed so far with the isolated share of each past allocation, plus its
    remaining work at today's isolated rate. This is what Gavel's
    ``FinishTimeFairnessPolicyWithPerf.get_allocation``
    (``scheduler/policies/finish_time_fairness.py``, commit c4fa400) keeps between its
    calls (its cumulative isolated time, with the remaining steps and isolated
    throughputs of the previous call); its agnostic ``FinishTimeFairnessPolicy`` runs
    the same object on the V100-copied throughputs.

    :class:`GavelPolicy` passes it rates :math:`v_m` from Gavel's code's isolated share
    too (its ``IsolatedPolicy``): :math:`(c_k/n)/W_m` on *every* type, usable or not,
    each row then scaled to sum to at most 1, so :math:`v_m` counts only the usable part
    of a row scaled over all types: on Gavel's
    cluster (36 GPUs of each of three types) an 8-worker job that cannot use K80s gets
    1/3 of a row on each of V100 and P100 with 8 or fewer jobs present, where
    :func:`~optsched.gavel.model.isolated_share` (the default's) gives it 1/2 of each.
    Measured on the first 100 jobs of Gavel's trace (docs/gavel.md): with this share and
    the accumulation, Gavel's allocation reaches the program's optimum
    :math:`\max_m \rho_m` (to the bisection's tolerance) at every allocation before the
    runs part; with the accumulation alone, it was 7-8.5 % above it at five allocations.

    While a job's isolated rate stays the same since the first allocation that sees it
    (having done no work before it), :math:`d_m = w_m / v_m` (its whole work over that
    rate), the denominator of ``"current"`` when the two shares agree.

    One update per allocation: :meth:`isolated_times` must be called once for each
    program solved, with every job the program sees. :meth:`reset` forgets every job.
    Complexity :math:`O(n)` per call, memory :math:`O(\text{jobs seen})`.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        #: job index -> accumulated isolated seconds
        self.accumulated: dict[int, float] = {}
        # job index -> (remaining work, isolated rate) at the previous allocation
        self._previous: dict[int, tuple[float, float]] = {}

    def isolated_times(self, index: np.ndarray, remaining: np.ndarray,
                       isolated_rate: np.ndarray) -> np.ndarray:
        """:math:`d_m` for the jobs ``index`` (instance indices) with ``remaining`` work
        and ``isolated_rate`` :math:`v_m` now, after crediting the work done since the
        previous call; then remembers this call's work and rates."""
        r = np.asarray(remaining, dtype=float)
        v = np.asarray(isolated_rate, dtype=float)
        d = np.empty(r.size)
        acc, prev = self.accumulated, self._previous
        for m, i in enumerate(index.tolist()):
            tau = acc.get(i, 0.0)
            if i in prev:
                r0, v0 = prev[i]
                tau += (r0 - float(r[m])) / v0
            acc[i] = tau
            d[m] = tau + float(r[m]) / float(v[m])
        self._previous = {i: (float(r[m]), float(v[m]))
                          for m, i in enumerate(index.tolist())}
        return d


def _sum_tp(view: ClusterView, o: dict) -> LPAllocation:
    return max_sum_throughput(view.throughput_matrix, view.workers, view.gpus_per_type,
                                  aggregate=o.get("aggregate", True), backend=o["backend"],
                                  **o["solve_options"])


def _cost(view: ClusterView, o: dict) -> LPAllocation:
    prices = o.get("prices") or AWS_PRICES
    missing = [t for t in view.gpu_types if t not in prices]
    if missing:
        raise InvalidOption("prices", sorted(prices), f"no price for GPU type(s) {missing}")
    p = np.array([prices[t] for t in view.gpu_types], dtype=float)
    T, W = view.throughput_matrix, view.workers
    b = None
    factor = o.get("slo_factor")
    if factor is not None:
        # deadline = arrival + factor x (exclusive run time on the fastest type)
        best = (W * T.max(axis=1))
        work = view.work
        deadline = view.arrivals + factor * work / best
        left = deadline - view.time
        b = np.where(left > 0, view.remaining / np.maximum(left, 1e-9), best)
        b = np.minimum(b, best)
    return min_cost_slo(T, W, view.gpus_per_type, p, b, backend=o["backend"],
                            **o["solve_options"])


SOLVERS: dict[str, tuple[Solver, bool]] = {
    "max_min_fairness": (_mmf(False), False),
    "max_min_fairness_agnostic": (_mmf(True), False),
    "min_total_duration": (_makespan_of(False), True),
    "min_total_duration_agnostic": (_makespan_of(True), True),
    "finish_time_fairness": (_ftf_of(False), True),
    "finish_time_fairness_agnostic": (_ftf_of(True), True),
    "isolated": (_isolated, False),
    "max_min_fairness_water_filling": (_water_filling(False), False),
    "max_min_fairness_water_filling_agnostic": (_water_filling(True), False),
    "max_sum_throughput": (_sum_tp, False),
    "min_cost_slo": (_cost, True),
    "min_cost": (_cost, False),
}


#: The max-min policies whose ``point="interior"`` is Gavel's program's interior optimum.
_INTERIOR_MAX_MIN = frozenset({"max_min_fairness", "max_min_fairness_agnostic"})


def _interior_method(backend: str | None, solver: str | None, pareto, aggregate
                     ) -> tuple[str, str, None]:
    """The interior-point method of a max-min policy with ``point="interior"``, from its
    ``backend``/``solver``, and the backend and solver its options then carry (the
    method sets both); bad combinations raise :class:`InvalidOption`."""
    if pareto is not None:
        raise InvalidOption("pareto", pareto, "point='interior' returns the interior "
                            "optimum of Gavel's program as is: no Pareto stage")
    if aggregate is not None:
        raise InvalidOption("aggregate", aggregate, "point='interior' solves Gavel's "
                            "program, one row per job: no classes")
    if backend in (None, "cvxpy"):
        if solver is not None and str(solver).upper() != "CLARABEL":
            raise InvalidOption("solver", solver, "point='interior' with the cvxpy backend "
                                "is Clarabel's interior point: 'CLARABEL' or unset")
        return "clarabel", "cvxpy", None
    if backend == "highs":
        if solver not in (None, "highs"):
            raise InvalidOption("solver", solver, "the highs backend has one solver")
        return "highs-ipm", "highs", None
    raise InvalidOption("backend", backend, "point='interior' is Clarabel's interior point "
                        "('cvxpy', the default) or HiGHS's ('highs')")


#: Options that only some LP policies take (the others raise if given).
#: Policies that must not see how throughputs differ across types: the round mechanism
#: orders a job's types at random for them (Gavel shuffles its type queues for every
#: policy whose name lacks "Perf").
AGNOSTIC = frozenset({"max_min_fairness_agnostic", "min_total_duration_agnostic",
                      "finish_time_fairness_agnostic", "isolated",
                      "max_min_fairness_water_filling_agnostic"})

KIND_OPTIONS: dict[str, frozenset[str]] = {
    "max_min_fairness": frozenset({"pareto", "aggregate", "weighted", "point"}),
    "max_min_fairness_agnostic": frozenset({"pareto", "aggregate", "weighted", "point"}),
    "min_total_duration": frozenset({"aggregate", "point"}),
    "min_total_duration_agnostic": frozenset({"aggregate", "reference", "point"}),
    "finish_time_fairness": frozenset({"aggregate", "point", "isolated_time"}),
    "finish_time_fairness_agnostic": frozenset({"aggregate", "reference", "isolated_time"}),
    "isolated": frozenset(),
    "max_min_fairness_water_filling": frozenset({"weighted"}),
    "max_min_fairness_water_filling_agnostic": frozenset({"weighted"}),
    "max_sum_throughput": frozenset({"aggregate"}),
    "min_cost_slo": frozenset({"prices", "slo_factor"}),
    "min_cost": frozenset({"prices"}),
}


class GavelPolicy:
    r"""An LP policy of Gavel + the round mechanism. ``event_driven = False``.

    Parameters
    ----------
    kind : str
        One of :data:`SOLVERS` (``"max_min_fairness"``, ...).
    backend : str, optional
        Solver-layer backend (``"highs"``, the default, ``"pyomo"``, ``"cvxpy"``; with
        ``point="interior"`` for max-min it picks the interior-point method, see ``point``).
    solver, time_limit, threads : optional
        Passed to :func:`~optsched.solvers.solve_program` for every LP (``solver`` picks
        the Pyomo or cvxpy solver); ``solve_options`` may hold further ones.
    reset_interval : float
        Minimum seconds between resets of the rounds-received counters.
    fill_leftover : bool
        Let jobs take GPUs that X leaves free on types where their share is 0 (default
        True, as Gavel's simulator does; see :class:`RoundMechanism`).
    pareto : False, "greedy" or "lp"
        Max-min only: make the allocation Pareto-efficient (default ``"greedy"``, see
        :func:`gavel_lp.max_min_fairness`).
    aggregate : bool
        Max-min, makespan, finish-time fairness and total throughput: solve over classes
        of identical jobs (exact). Default True, except for the makespan: default False,
        the single LP over every job; True solves it over classes of one throughput row
        (:func:`gavel_lp.min_total_duration`;
        0.005 s against 0.4-0.6 s at 2,000 jobs) and reaches the same makespan with
        another optimal X (the LP is degenerate: every job paced to the longest). What
        the round mechanism makes of that X differs: on the first 100 / 400 jobs of
        Gavel's trace the simulated makespan is the same (789.9 h) but mean JCT 44.7 /
        53.5 h against 43.3 / 45.9 h with the single LP (Gavel's own simulator: 40.2 /
        45.8 h), so the simulator keeps the single LP unless asked. Finish-time
        fairness takes the makespan's class LPs for each of its feasibility checks.
    weighted : bool
        Max-min only: use job weights ``w_m`` (default True).
    prices : dict
        Cost policies only: $/GPU-hour per type (default
        :data:`optsched.gavel.model.AWS_PRICES`).
    slo_factor : float
        ``min_cost_slo`` only: SLO = arrival + ``slo_factor`` x exclusive run time
        (default 2.0).
    point : "vertex" or "interior"
        Max-min (``max_min_fairness``, ``..._agnostic``): the optimum a simplex method
        returns, a vertex (``"vertex"``, the default), or Gavel's code's answer, an
        interior point of the optimal face of Gavel's program as its code states it
        (``"interior"``, :func:`optsched.gavel.exact.max_min_fairness_interior`: a
        variable on every entry, one row per job, no Pareto stage, so ``pareto`` and
        ``aggregate`` are refused with it). Its interior-point method is Clarabel
        through the cvxpy backend (``backend`` unset or ``"cvxpy"``; ``solver`` unset
        or ``"CLARABEL"``), or HiGHS's without crossover with ``backend="highs"``.
        Measured under ``rounds="original"`` against Gavel c4fa400 on the first 100 jobs
        of its trace (jobs within one round of Gavel's completion / within 10 % of its
        JCT): aware 24 % / 47 % with the vertex, 34 % / 59 % with HiGHS's ipm, 52 % /
        90 % with Clarabel; agnostic 24 % / 50 %, 27 % / 68 %, 47 % / 88 %
        (``benchmarks/results/gavel_rounds_interior.md``).
        ``finish_time_fairness`` (aware only): the vertex of the bisection's last check
        (default), or an interior point of the optimal face (``"interior"``,
        :func:`optsched.gavel.exact.finish_time_fairness_interior`, HiGHS's ipm; measured
        figures in docs/gavel.md).
        Makespan policies: the exact optimum, every job paced to end at the optimal
        makespan (``"vertex"``, the paper's program; the default of
        ``min_total_duration``), or Gavel's code's answer, an interior point of the
        feasibility LP at the makespan where its bisection stops, up to 5 % above the
        optimum (``"interior"``,
        :func:`optsched.gavel.exact.min_total_duration_interior`; the default of
        ``min_total_duration_agnostic``, a baseline that only Gavel's code defines: on
        the first 300 jobs of Gavel's trace its mean JCT is 1.01x Gavel's with it and
        2.03x with the vertex).
    isolated_time : "current" or "accumulated"
        Finish-time fairness only (``finish_time_fairness``, ``..._agnostic``): how the
        denominator of :math:`\rho_m(X) = (t_m + r_m/\mathrm{thr}_m(X)) / d_m` counts
        the work the job has already done. The paper (Gavel OSDI'20 §4, after Themis)
        writes :math:`d_m = t^{iso}_m + r_m/\mathrm{thr}_m(X^{iso})`, with
        :math:`t^{iso}_m` the time the job would have run so far with its isolated share
        :math:`X^{iso}` (a :math:`1/n` slice of the cluster), and does not say which
        :math:`n` measures past work when the set of jobs changes.
        ``"current"`` (default): today's,
        :math:`d_m = w_m / v_m` with :math:`w_m` the job's whole work and
        :math:`v_m = W_m \sum_k T_{mk} X^{iso}_{mk}` the isolated rate at this
        allocation, so :math:`\rho_m` depends on the present state alone.
        ``"accumulated"``: Gavel's code's (``FinishTimeFairnessPolicyWithPerf``), each
        past stretch at the isolated rate of the allocation it ran under,
        :math:`d_m = \tau_m + r_m / v_m` with :math:`\tau_m` summing, over the
        allocations since the job's first, the work done between two allocations over
        the earlier one's isolated rate (:class:`IsolatedClock`, kept by the policy and
        cleared by :meth:`reset`), and :math:`v_m` from Gavel's code's isolated share,
        which gives every type a share, usable or not, before scaling each row to at most
        1 (so a job that cannot use some type gets a smaller isolated rate than with
        :func:`~optsched.gavel.model.isolated_share`). The two agree while a job's
        isolated rate has not changed since it arrived and it can use every type;
        otherwise a job that ran while few jobs shared the
        cluster has a smaller :math:`d_m` under ``"accumulated"`` (its past counted at
        the larger isolated rate it had then), so a larger ratio. ``"accumulated"`` is
        offered to reproduce Gavel's runs; measured against Gavel c4fa400 in
        ``benchmarks/results/gavel_ftf_reference.md`` (figures in docs/gavel.md).
        Works with either ``rounds``; one update per program solved.
    reference : str
        The ``_agnostic`` makespan and finish-time-fairness policies only: the GPU type
        whose rate they take as every type's (:func:`reference_throughputs`; default
        ``"v100"``, Gavel's).
    queue : "global" or "per_type"
        The round mechanism's queue (:class:`RoundMechanism`; default ``"global"``,
        ``"per_type"`` is Gavel's code's order).
    rounds : "alg1" or "original"
        The round mechanics: the paper's Alg. 1 (:class:`RoundMechanism`, default), or
        Gavel's simulator's (:class:`OriginalRounds`:
        X recomputed only at counter resets, priorities over seconds, accumulated
        deficits, per-type queues, rounds of whole steps; the policy then reads the
        jobs' work, as Gavel's simulator does to end its rounds). ``"original"`` always
        walks per-type queues (``queue`` applies to ``"alg1"`` only) and fills leftover
        GPUs (``fill_leftover=False`` is refused); ``reset_interval`` is Gavel's minimum
        time between resets for both.

    Notes
    -----
    An LP that returns no solution stops the simulation with
    :class:`~optsched.errors.SolverFailed` and the solver's status: a policy never runs
    another allocation under its name.
    """

    event_driven = False

    def __init__(self, kind: str = "max_min_fairness", *, backend: str | None = None,
                 solver: str | None = None, time_limit: float | None = None,
                 threads: int | None = None, solve_options: dict | None = None,
                 reset_interval: float = 1920.0, fill_leftover: bool = True,
                 name: str | None = None,
                 pareto: bool | str | None = None, aggregate: bool | None = None,
                 weighted: bool | None = None, prices: dict | None = None,
                 slo_factor: float | None = None, reference: str | None = None,
                 point: str | None = None, queue: str = "global", rounds: str = "alg1",
                 isolated_time: str | None = None):
        if kind not in SOLVERS:
            raise InvalidOption("kind", kind, f"must be one of {sorted(SOLVERS)}")
        given = {k: v for k, v in (("pareto", pareto), ("aggregate", aggregate),
                                   ("weighted", weighted), ("prices", prices),
                                   ("slo_factor", slo_factor), ("reference", reference),
                                   ("point", point), ("isolated_time", isolated_time))
                 if v is not None}
        for k, v in given.items():
            if k not in KIND_OPTIONS[kind]:
                raise InvalidOption(k, v, f"not an option of the {kind} policy (its own: "
                                    f"{sorted(KIND_OPTIONS[kind]) or 'none'})")
        if point is not None and point not in ("vertex", "interior"):
            raise InvalidOption("point", point, "must be 'vertex' or 'interior'")
        if isolated_time is not None and isolated_time not in ISOLATED_TIMES:
            raise InvalidOption("isolated_time", isolated_time,
                                f"must be one of {list(ISOLATED_TIMES)}")
        if pareto is not None and pareto not in (False, True, "greedy", "lp"):
            raise InvalidOption("pareto", pareto, "must be false, 'greedy', true or 'lp'")
        if point == "interior" and kind in _INTERIOR_MAX_MIN:
            if solve_options and "solver" in solve_options:
                raise InvalidOption("solve_options.solver", solve_options["solver"],
                                    "point='interior' sets the solver: pass backend/solver")
            given["interior_method"], backend, solver = _interior_method(
                backend, solver, pareto, aggregate)
        elif point == "interior" and backend not in (None, "highs"):
            raise InvalidOption("backend", backend, "point='interior' is HiGHS's ipm here: "
                                "'highs'")
        backend = backend or "highs"
        if not (isinstance(reset_interval, (int, float)) and reset_interval >= 0):
            raise InvalidOption("reset_interval", reset_interval, "must be a number >= 0")
        if not isinstance(fill_leftover, bool):
            raise InvalidOption("fill_leftover", fill_leftover, "must be true or false")
        self.kind = kind
        self.name = name or kind
        self._solver, self.needs_work = SOLVERS[kind]
        if kind == "min_cost_slo":
            given.setdefault("slo_factor", 2.0)
        opts: dict[str, Any] = dict(solve_options or {})
        for key, val in (("solver", solver), ("time_limit", time_limit), ("threads", threads)):
            if val is not None:
                opts[key] = val
        self.options = {"backend": backend, "solve_options": opts, **given}
        # Gavel's accumulated isolated time is state of the policy, cleared by reset()
        self._clock = IsolatedClock() if isolated_time == "accumulated" else None
        # a heterogeneity-agnostic policy must not order types by their throughputs
        self.rounds = RoundMechanism(
            reset_interval, fill_leftover=fill_leftover,
            type_order="random" if kind in AGNOSTIC else "fastest", queue=queue)
        self._original = None
        if rounds != "alg1":
            check_rounds(rounds)
            if not fill_leftover:  # Gavel's simulator always lets X = 0 entries fill
                raise InvalidOption("fill_leftover", fill_leftover,
                                    "rounds='original' always fills leftover GPUs")
            self.rounds = self._original = OriginalRounds(reset_interval,
                                                          agnostic=kind in AGNOSTIC)
            self.needs_work = True
            self.horizon = self._original.horizon
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        if self._clock is not None:
            self._clock.reset()
        self._ids: tuple[str, ...] | None = None
        self._X: np.ndarray | None = None
        self._n_solves = 0
        self._lp_solves = 0
        self._lp_seconds = 0.0

    def stats(self) -> dict[str, Any]:
        return {"allocation_solves": self._n_solves, "lp_solves": self._lp_solves,
                "lp_seconds": self._lp_seconds}

    def allocation(self, view: ClusterView) -> np.ndarray:
        """The time-fraction matrix for the visible jobs (recomputed on reset events)."""
        if self._ids != view.ids or self._X is None:
            o = (self.options if self._clock is None
                 else {**self.options, "isolated_clock": self._clock})
            if self._original is not None:
                if not self._original.allocation_due(view) and self._X is not None:
                    return self._X  # Gavel's code waits for a counter reset
                sol = self._solver(self._original.program_view(view, self.kind in AGNOSTIC),
                                   o)
            else:
                sol = self._solver(view, o)
            self._n_solves += 1
            self._lp_solves += sol.lp_solves
            self._lp_seconds += sol.seconds
            if not sol.ok:
                _solver_failed(self.name, view, sol)
            self._ids, self._X = view.ids, sol.X
            if self._original is not None:
                self._original.adopt(view, sol.X)
            self.rounds.reset_counters(view.time)
        return self._X

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocate(self, state: ClusterView) -> list[Placement]:
        return self.rounds.allocate(state, self.allocation(state))


class GavelFIFOPolicy:
    """Gavel's FIFO (``scheduler/policies/fifo.py``), strict arrival order.

    Jobs are taken from the queue in arrival order; each gets a GPU type with at least
    ``workers`` free GPUs - the fastest such type (``mode="perf"``, Gavel's
    ``FIFOPolicyWithPerf``) or a random one (``mode="base"``, heterogeneity-agnostic).
    The first job that fits no type stops the pass (head-of-line blocking: "no job
    jumps ahead in the queue"). In ``perf`` mode the assignment is recomputed from
    scratch at every decision, as Gavel resets it on every call (so earlier jobs may
    move to a faster type that frees up); in ``base`` mode assignments are kept until
    the job finishes. The 0/1 allocation goes through the same round mechanism as the
    LP policies (placement, lease extension).

    With ``rounds="original"`` the allocation runs under Gavel's simulator's round
    mechanics (:class:`OriginalRounds` with ``fifo``): it is recomputed only at a counter
    reset (so a job arriving within 1,920 s of the last one waits for the next, and a
    completed job's GPUs stay idle until then), rounds run whole steps, and no entry
    outside the allocation is run. The policy then reads the jobs' work, as Gavel's
    simulator does to end its rounds.
    """

    event_driven = False
    needs_work = False

    def __init__(self, mode: str = "perf", *, name: str | None = None,
                 rounds: str = "alg1"):
        if mode not in ("perf", "base"):
            raise InvalidOption("mode", mode, "must be 'perf' or 'base'")
        self.mode = mode
        self.name = name or ("fifo" if mode == "perf" else "fifo_agnostic")
        # Gavel's FIFO never runs an entry outside its 0/1 allocation
        self.rounds: RoundMechanism = RoundMechanism(fill_leftover=False)
        self._original: OriginalRounds | None = None
        if check_rounds(rounds) == "original":
            self.rounds = self._original = OriginalRounds(agnostic=mode == "base",
                                                          fifo=True)
            self.needs_work = True
            self.horizon = self._original.horizon
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._type: dict[str, int] = {}
        self._ids: tuple[str, ...] | None = None
        # Gavel's base-mode FIFO: its assignments by instance index, its seeded draws
        self._kept: dict[int, int] = {}
        self._draws = random.Random(0)

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocate(self, state: ClusterView) -> list[Placement]:
        orig = self._original
        if orig is None:
            return self.rounds.allocate(state, self.allocation(state))
        if self._ids != state.ids and (orig.allocation_due(state) or self._ids is None):
            # Gavel's simulator asks its FIFO for X only at a counter reset
            orig.adopt(state, self.allocation(state))
            self._ids = state.ids
        return orig.allocate(state)

    def allocation(self, state: ClusterView) -> np.ndarray:
        """The 0/1 allocation of the visible jobs (class docstring)."""
        if self._original is not None and self.mode == "base":
            return _gavels_base_fifo(state, self._kept, self._draws)
        T = state.throughput_matrix
        W = state.workers
        ids = state.ids
        if self.mode == "perf":
            self._type = {}
        live = set(ids)
        self._type = {j: k for j, k in self._type.items() if j in live}
        free = state.gpus_per_type.astype(np.int64).copy()
        pos = state.position
        for j, k in self._type.items():
            free[k] -= W[pos[j]]
        X = np.zeros(T.shape)
        gavels = self._original is not None and self.mode == "perf"
        for m in np.argsort(state.arrivals, kind="stable"):
            j = ids[m]
            if j in self._type:
                X[m, self._type[j]] = 1.0
                continue
            if gavels:
                got = _gavels_fifo_type(T[m], free, int(W[m]), state.gpu_types)
                if got is None:
                    break  # head-of-line blocking
                if not T[m, got] > 0:
                    continue  # passed over, not waited for
                k = got
            else:
                usable = np.flatnonzero((T[m] > 0) & (free >= W[m]))
                if usable.size == 0:
                    break  # head-of-line blocking
                if self.mode == "perf":
                    k = int(usable[np.argmax(T[m, usable])])
                else:
                    k = int(state.rng.choice(usable))
            self._type[j] = k
            free[k] -= W[m]
            X[m, k] = 1.0
        return X


def _gavels_base_fifo(state: ClusterView, kept: dict[int, int], draws: random.Random
                      ) -> np.ndarray:
    """Gavel c4fa400's ``FIFOPolicy(mode="base")`` (``get_allocation``), as it runs.

    Its assignments ``kept`` (instance index -> type) persist between calls. A
    completed job's type goes first to the head of the queue if its gang fits there.
    Then each waiting job, in arrival order, draws an index among the types with its
    gang's GPUs free (``draws``, Gavel's ``random.Random`` seeded with 0), but is
    assigned the type its code's variable ``worker_type`` still holds after scanning
    the types with GPUs free, the last of them by name, whenever its rate there is
    positive (its gang need not fit there): the drawn index only decides which type
    leaves that list when the assigned type fills up exactly. The assignments may then
    ask for more GPUs of a type than there are; the round mechanics run those that
    fit. ``kept`` is updated in place.
    """
    T, W, types = state.throughput_matrix, state.workers, state.gpu_types
    index = state.index.tolist()
    row = {i: m for m, i in enumerate(index)}
    names = sorted(types)
    col = {t: k for k, t in enumerate(types)}
    avail = {t: int(c) for t, c in zip(types, state.gpus_per_type.tolist())}
    avail = {t: avail[t] for t in names}  # Gavel registers its workers by type name
    queue = sorted(i for i in index if i not in kept)
    for i in sorted(kept):
        t = types[kept[i]]
        if i not in row:  # completed: its type to the head of the queue if it fits
            if queue:
                j = queue[0]
                if W[row[j]] <= avail[t] and T[row[j], col[t]] > 0.0:
                    queue.pop(0)
                    kept[j] = col[t]
                    avail[t] -= int(W[row[j]])
            del kept[i]
        else:
            avail[t] -= int(W[row[i]])
    open_types = sorted(t for t in avail if avail[t] > 0)
    while queue and open_types:
        j = queue.pop(0)
        w = int(W[row[j]])
        fits = [(t, n) for n, t in enumerate(open_types) if avail[t] >= w]
        # the loop variable left by the scan of the open types: the last one by name
        stale = open_types[-1]
        if not fits:
            break
        drawn = draws.randrange(len(fits))
        if T[row[j], col[stale]] > 0.0:
            kept[j] = col[stale]
            avail[stale] -= w
            if avail[stale] == 0:
                open_types.pop(fits[drawn][1])
    X = np.zeros(T.shape)
    for i, k in kept.items():
        X[row[i], k] = 1.0
    return X


def _gavels_fifo_type(rates: np.ndarray, free: np.ndarray, w: int,
                      types: tuple[str, ...]) -> int | None:
    """The GPU type Gavel's ``FIFOPolicy`` (perf and packing modes) gives the next job:
    the fastest of the types with ``w`` GPUs free, the first by name among equals, even
    where the job's rate is 0 (Gavel then passes the job over); ``None`` when no type
    has ``w`` GPUs free (the pass stops)."""
    best, best_rate = None, -1.0
    for k in sorted(range(len(types)), key=lambda k: types[k]):
        if free[k] >= w and rates[k] > best_rate:
            best, best_rate = k, float(rates[k])
    return best


#: The former name of :class:`GavelFIFOPolicy`, kept as an alias.
GavelFIFO = GavelFIFOPolicy


def tied_types(instance: Instance) -> bool:
    """Whether a heterogeneity-aware policy's random type order can matter on
    ``instance``: :class:`RoundMechanism` orders a job's types by speed before the random
    rank, so the rank only decides between two types on which some job runs at the same
    positive throughput."""
    for row in instance.throughput_matrix:
        pos = row[row > 0]
        if len(pos) >= 2 and len(np.unique(pos)) < len(pos):
            return True
    return False


def realised_fractions(instance: Instance, X: np.ndarray, rounds: int, *,
                       fill_leftover: bool = True, seed: int = 0) -> np.ndarray:
    r"""The time fractions the round mechanism realises for allocation ``X`` over
    ``rounds`` rounds, all jobs present throughout: :math:`f_{mk} = R_{mk} / N` with
    :math:`R_{mk}` the rounds job m ran on type k. Each round is a feasible integral
    assignment, so :math:`f` satisfies Gavel's constraints (1)-(3). ``fill_leftover`` as
    in :class:`RoundMechanism`; ``seed`` seeds its random type tie-break."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise InvalidOption("rounds", rounds, "must be an integer >= 1")
    n, K = len(instance.jobs), len(instance.cluster.gpu_types)
    X = np.asarray(X, dtype=float).reshape(n, K)
    mech = RoundMechanism(reset_interval=float("inf"), fill_leftover=fill_leftover)
    rng = np.random.default_rng(seed)
    ids = tuple(j.id for j in instance.jobs)
    col = {t: k for k, t in enumerate(instance.cluster.gpu_types)}
    counts = np.zeros((n, K))
    previous: tuple[Placement, ...] = ()
    zeros = np.zeros(n)
    for r in range(rounds):
        view = ClusterView(
            time=r * instance.slot, slot=instance.slot, cluster=instance.cluster, ids=ids,
            index=np.arange(n), throughput_matrix=instance.throughput_matrix,
            workers=instance.workers, arrivals=instance.arrivals,
            weights=np.ones(n), attained=zeros, executed=zeros,
            time_on_types=np.zeros((n, K)), rounds_received=np.zeros(n, dtype=np.int64),
            preemptions=np.zeros(n, dtype=np.int64), previous=previous, needs_work=False,
            rng=rng)
        placed = mech.allocate(view, X)
        seen = set()
        for p in placed:
            m = instance.job_index[p.job]
            if m not in seen:
                counts[m, col[p.gpu_type]] += 1
                seen.add(m)
        previous = tuple(placed)
    return counts / rounds


# --------------------------------------------------------------------------- space sharing
#: Gavel's ``FIFOPolicyWithPacking`` packs a job only when the pair's summed normalised
#: throughput exceeds this (its ``packing_threshold``).
PACKING_THRESHOLD = 1.5


class _RateCache:
    """The view's co-located rates, memoised per (job, job, type): they never change."""

    def __init__(self) -> None:
        self.memo: dict[tuple[str, str, str], float] = {}

    def __call__(self, view: ClusterView, a: str, b: str, t: str) -> float:
        key = (a, b, t)
        r = self.memo.get(key)
        if r is None:
            v = view.colocated_rate(a, b, t)
            r = self.memo[key] = 0.0 if v is None else float(v)
        return r


def candidate_pairs(view: ClusterView, rate: Any = None) -> Pairs:
    r"""Every pair of visible jobs of equal gang size that some GPU type can hold as a
    pair: both jobs can run there alone and the instance has both co-located rates,
    positive (module docstring).

    Complexity: :math:`O(n^2 K)` rate look-ups for :math:`n` visible jobs (only jobs of
    equal gang size are paired); none when the instance has no co-location table.
    """
    T, W, ids, types = view.throughput_matrix, view.workers, view.ids, view.gpu_types
    n, K = T.shape
    if view.pair_rates is None or n < 2:
        return Pairs.empty(K)
    rate = rate or _RateCache()
    rows, rates = [], []
    by_w: dict[int, list[int]] = {}
    for m in range(n):
        by_w.setdefault(int(W[m]), []).append(m)
    for ms in by_w.values():
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                r = np.zeros((2, K))
                for k, t in enumerate(types):
                    if T[a, k] > 0 and T[b, k] > 0:
                        ra, rb = rate(view, ids[a], ids[b], t), rate(view, ids[b], ids[a], t)
                        if ra > 0 and rb > 0:
                            r[0, k], r[1, k] = ra, rb
                if r.any():
                    rows.append((a, b))
                    rates.append(r)
    if not rows:
        return Pairs.empty(K)
    return Pairs(np.array(rows, dtype=np.int64), np.array(rates))


class PackedRounds:
    r"""Gavel's round mechanism (§5, Alg. 1) over job combinations (module docstring).

    Per combination :math:`C` (a job id, or a pair of job ids) and type :math:`k`: rounds
    received :math:`R_{Ck}` and rounds present :math:`N_C` since the last reset,
    :math:`f_{Ck} = (R_{Ck} + \tfrac12)/(N_C + \tfrac12)` and priority
    :math:`X_{Ck} / f_{Ck}`. Entries are taken in decreasing priority (ties: larger
    deficit :math:`X_{Ck} N_C - R_{Ck}`, larger :math:`X_{Ck}`, the combination's first
    job in arrival order, the faster type, a random rank drawn every round); an entry is
    skipped when one of its jobs is already scheduled this round or its :math:`W_C`
    GPUs of type k are no longer free. With ``fill_leftover`` single jobs with
    :math:`X_{mk} = 0` on usable types then take the GPUs still free. Placement as
    :class:`optsched.gavel.policy.RoundMechanism` (lease extension, larger gangs
    first); a pair's two jobs get the same GPUs, each placement naming the other as
    ``partner``. ``queue="per_type"`` walks the types one after the other instead
    (Gavel's code's order, :class:`RoundMechanism`; a pair ranks on each type by its own
    priority there).
    """

    def __init__(self, reset_interval: float = 1920.0, *, fill_leftover: bool = True,
                 queue: str = "global"):
        self.reset_interval = float(reset_interval)
        self.fill_leftover = bool(fill_leftover)
        self.queue = _check_queue(queue)
        self.reset()

    def reset(self) -> None:
        self._recv: dict[Any, np.ndarray] = {}
        self._present: dict[Any, int] = {}
        self._last_reset = -np.inf

    def reset_counters(self, now: float, force: bool = False) -> None:
        if force or now - self._last_reset >= self.reset_interval:
            self._recv.clear()
            self._present.clear()
            self._last_reset = now

    def allocate(self, view: ClusterView, X: np.ndarray, pairs: Pairs,
                 Y: np.ndarray) -> list[Placement]:
        n, K = X.shape
        ids, T, W = view.ids, view.throughput_matrix, view.workers
        keys: list[Any] = list(ids) + [(ids[a], ids[b]) for a, b in pairs.rows.tolist()]
        members = [(m,) for m in range(n)] + [tuple(r) for r in pairs.rows.tolist()]
        A = np.vstack([X, Y]) if len(pairs) else X
        speed = np.vstack([T, pairs.R.sum(axis=1)]) if len(pairs) else T
        C = len(keys)
        recv = np.array([self._recv.get(key, np.zeros(K)) for key in keys]).reshape(C, K)
        pres = np.array([self._present.get(key, 0) for key in keys], dtype=float)
        f = (recv + 0.5) / (pres[:, None] + 0.5)
        pos = A > 1e-9
        prio = np.where(pos, A / f, 0.0)
        deficit = A * pres[:, None] - recv
        eligible = pos.copy()
        if self.fill_leftover:
            eligible[:n] |= T > 0
        c_idx, k_idx = np.nonzero(eligible)
        rank = view.rng.permutation(K)[k_idx] if np.any(
            np.bincount(c_idx, minlength=C) > 1) else np.zeros(len(k_idx), dtype=np.int64)
        first = np.array([min(mm) for mm in members], dtype=np.int64)[c_idx]
        if self.queue == "per_type":
            walk = type_walk(view, T, False)
            order = np.lexsort((first, -A[c_idx, k_idx], -deficit[c_idx, k_idx],
                                -prio[c_idx, k_idx], walk[k_idx]))
        else:
            order = np.lexsort((rank, -speed[c_idx, k_idx], first, -A[c_idx, k_idx],
                                -deficit[c_idx, k_idx], -prio[c_idx, k_idx]))
        free_k = view.gpus_per_type.astype(np.int64).copy()
        busy: set[int] = set()
        chosen: dict[int, int] = {}
        for e in order.tolist():
            cc, k = int(c_idx[e]), int(k_idx[e])
            mm = members[cc]
            g = int(W[mm[0]])
            if any(m in busy for m in mm) or g > free_k[k]:
                continue
            chosen[cc] = k
            busy.update(mm)
            free_k[k] -= g
        prev = view.previous_by_job
        sel = sorted(chosen.items(), key=lambda ck: (ids[members[ck[0]][0]] not in prev,
                                                     -W[members[ck[0]][0]], ck[0]))
        cols = [view.capacity[:, k].tolist() for k in range(K)]
        nodes, types = view.cluster.nodes, view.gpu_types
        out: list[Placement] = []
        for cc, k in sel:
            mm = members[cc]
            lead = ids[mm[0]]
            hs = choose_nodes(view, cols[k], lead, int(W[mm[0]]), k, mode="spread")
            if hs is None:  # cannot happen: counts were checked per type
                continue
            if len(mm) == 1:
                out.extend(Placement(lead, nodes[h].name, types[k], g) for h, g in hs)
            else:
                other = ids[mm[1]]
                for h, g in hs:
                    out.append(Placement(lead, nodes[h].name, types[k], g, partner=other))
                    out.append(Placement(other, nodes[h].name, types[k], g, partner=lead))
        for cc, key in enumerate(keys):
            self._present[key] = self._present.get(key, 0) + 1
            if cc in chosen:
                r = self._recv.setdefault(key, np.zeros(K))
                r[chosen[cc]] += 1
        return out


def _rows_on(pairs: Pairs, some: Pairs, Y: np.ndarray) -> np.ndarray:
    """``Y``'s rows (one per pair of ``some``) on the rows of ``pairs``; zero for the
    pairs ``some`` lacks, and a pair of ``some`` outside ``pairs`` (which no type can
    hold, so it never runs) is dropped."""
    where = {pq: p for p, pq in enumerate(map(tuple, pairs.rows.tolist()))}
    out = np.zeros((len(pairs), Y.shape[1]))
    for q, pq in enumerate(map(tuple, some.rows.tolist())):
        if pq in where:
            out[where[pq]] = Y[q]
    return out


def _combination_rounds(policy: Any, rounds: str, reset_interval: float,
                        fill_leftover: bool, queue: str, *, fifo: bool = False) -> None:
    """Give a policy over job combinations its round mechanics: ``policy.rounds`` (a
    :class:`PackedRounds`, or with ``rounds="original"`` an :class:`OriginalRounds` with
    ``packing`` and ``fifo``, also ``policy._original``); under Gavel's mechanics the
    policy reads the jobs' work and exposes their ``horizon``. Gavel's FIFO never fills
    leftover GPUs; its other policies always do."""
    policy.rounds = PackedRounds(reset_interval, fill_leftover=fill_leftover, queue=queue)
    policy._original = None
    if check_rounds(rounds) == "original":
        if not fill_leftover and not fifo:  # Gavel's simulator lets X = 0 entries fill
            raise InvalidOption("fill_leftover", fill_leftover,
                                "rounds='original' always fills leftover GPUs")
        policy.rounds = policy._original = OriginalRounds(reset_interval, packing=True,
                                                          fifo=fifo)
        policy.needs_work = True
        policy.horizon = policy._original.horizon


def _ftf_isolated_time(view: ClusterView) -> np.ndarray:
    """:math:`d_m`: the job's total work over its isolated share's throughput (the
    denominator of :class:`optsched.gavel.policy.GavelPolicy`'s finish-time fairness)."""
    T, W, c = view.throughput_matrix, view.workers, view.gpus_per_type
    return view.work / (W * row_sums(T * isolated_share(T, W, c)))


def _solve_kind(kind: str, view: ClusterView, pairs: Pairs, o: dict
                ) -> tuple[LPAllocation, np.ndarray]:
    T, W, c = view.throughput_matrix, view.workers, view.gpus_per_type
    if kind == "max_min_fairness_packed":
        return max_min_fairness_packed(T, W, c, pairs, view.weights if o["weighted"] else None,
                                       point=o["point"], backend=o["backend"],
                                       **o["solve_options"])
    if kind == "min_total_duration_packed":
        return min_total_duration_packed(T, W, c, pairs, view.remaining, point=o["point"],
                                         backend=o["backend"], **o["solve_options"])
    if kind == "max_min_fairness_water_filling_packed":
        return max_min_fairness_water_filling_packed(
            T, W, c, pairs, view.weights if o["weighted"] else None, backend=o["backend"],
            **o["solve_options"])
    if kind == "max_sum_throughput_normalized_by_cost_packed_SLOs":
        prices = o.get("prices")
        p = None
        if prices is not None:
            missing = [t for t in view.gpu_types if t not in prices]
            if missing:
                raise InvalidOption("prices", sorted(prices),
                                    f"no price for GPU type(s) {missing}")
            p = np.array([prices[t] for t in view.gpu_types], dtype=float)
        b = None
        factor = o.get("slo_factor")
        if factor is not None:
            # deadline = arrival + factor x (exclusive run time on the fastest type), as
            # the unpacked min_cost_slo
            best = W * T.max(axis=1)
            left = view.arrivals + factor * view.work / best - view.time
            b = np.minimum(np.where(left > 0, view.remaining / np.maximum(left, 1e-9),
                                    best), best)
        return max_sum_throughput_packed(T, W, c, pairs, p, b, backend=o["backend"],
                                         **o["solve_options"])
    return finish_time_fairness_packed(T, W, c, pairs, view.remaining,
                                       view.time - view.arrivals, _ftf_isolated_time(view),
                                       backend=o["backend"], **o["solve_options"])


#: The packed LP policies and whether each reads the jobs' work (clairvoyant).
PACKED_KINDS = {"max_min_fairness_packed": False, "min_total_duration_packed": True,
                "finish_time_fairness_packed": True,
                "max_sum_throughput_normalized_by_cost_packed_SLOs": False,
                "max_min_fairness_water_filling_packed": False}


#: The options only some packed kinds take.
PACKED_KIND_OPTIONS = {"max_min_fairness_packed": frozenset({"weighted", "point"}),
                       "min_total_duration_packed": frozenset({"point"}),
                       "finish_time_fairness_packed": frozenset(),
                       "max_sum_throughput_normalized_by_cost_packed_SLOs":
                           frozenset({"prices", "slo_factor"}),
                       "max_min_fairness_water_filling_packed": frozenset({"weighted"})}


class GavelPackedPolicy:
    """Gavel's packed LP policies: the program of ``kind`` over the visible jobs and their
    :func:`candidate_pairs`, recomputed when the set of visible jobs changes, run by
    :class:`PackedRounds`. ``event_driven = False``; declares ``colocation``.

    Kinds (:data:`PACKED_KINDS`): ``"max_min_fairness_packed"``
    (:func:`max_min_fairness_packed`), ``"min_total_duration_packed"``
    (:func:`min_total_duration_packed`, every job's remaining work), and
    ``"finish_time_fairness_packed"`` (:func:`finish_time_fairness_packed`, with
    :math:`d_m` the job's work over its isolated share's throughput, as the unpacked
    ``finish_time_fairness``; Gavel's code accumulates the isolated time of past rounds
    instead), ``"max_sum_throughput_normalized_by_cost_packed_SLOs"``
    (:func:`max_sum_throughput_packed`) and ``"max_min_fairness_water_filling_packed"``
    (:func:`max_min_fairness_water_filling_packed`).

    Parameters
    ----------
    kind : str
        One of :data:`PACKED_KINDS`.
    backend, solver, time_limit, threads, solve_options
        Solver layer, as :class:`optsched.gavel.policy.GavelPolicy`.
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1920 s).
    fill_leftover : bool
        Let single jobs take GPUs the allocation leaves free (default True).
    prices : dict, optional
        ``max_sum_throughput_normalized_by_cost_packed_SLOs`` only: price per GPU type
        (default 1 each, as Gavel's simulator without price data).
    slo_factor : float, optional
        ``max_sum_throughput_normalized_by_cost_packed_SLOs`` only: SLO = arrival +
        ``slo_factor`` x the job's exclusive run time on its fastest type (default: no
        SLOs); the policy then reads the jobs' work.
    weighted : bool
        ``max_min_fairness_packed`` and ``max_min_fairness_water_filling_packed`` only:
        use job weights (default True).
    point : "vertex" or "interior"
        ``max_min_fairness_packed`` and ``min_total_duration_packed`` only: the answer
        the program returns (default ``"vertex"``; ``"interior"`` for the kind Gavel's
        code gets, see :func:`~optsched.gavel.exact.max_min_fairness_packed` and
        :func:`~optsched.gavel.exact.min_total_duration_packed`).
    queue : "global" or "per_type"
        The round mechanism's queue (:class:`PackedRounds`; ``"per_type"`` is Gavel's
        code's order, see :class:`RoundMechanism`).
    rounds : "alg1" or "original"
        ``"alg1"`` (default): :class:`PackedRounds`, the paper's Alg. 1 over combinations.
        ``"original"``: Gavel's simulator's round mechanics over combinations
        (:class:`OriginalRounds` with ``packing``; X recomputed only at its counter
        resets, rounds of whole co-located steps); the policy then reads the jobs' work,
        as Gavel's simulator does to end its rounds. ``queue`` does not apply.
    """

    event_driven = False
    colocation = True
    rounds: PackedRounds | OriginalRounds
    _original: OriginalRounds | None

    def __init__(self, kind: str = "max_min_fairness_packed", *, backend: str = "highs",
                 solver: str | None = None, time_limit: float | None = None,
                 threads: int | None = None, solve_options: dict | None = None,
                 reset_interval: float = 1920.0, fill_leftover: bool = True,
                 weighted: bool | None = None, point: str | None = None,
                 prices: dict | None = None, slo_factor: float | None = None,
                 name: str | None = None, queue: str = "global", rounds: str = "alg1"):
        if kind not in PACKED_KINDS:
            raise InvalidOption("kind", kind, f"must be one of {sorted(PACKED_KINDS)}")
        for key, given in (("weighted", weighted), ("point", point), ("prices", prices),
                           ("slo_factor", slo_factor)):
            if given is not None and key not in PACKED_KIND_OPTIONS[kind]:
                raise InvalidOption(key, given, f"not an option of the {kind} policy")
        if slo_factor is not None and (isinstance(slo_factor, bool) or not isinstance(
                slo_factor, (int, float)) or not np.isfinite(slo_factor) or slo_factor <= 0):
            raise InvalidOption("slo_factor", slo_factor, "must be a finite number > 0")
        if point is not None and point not in ("vertex", "interior"):
            raise InvalidOption("point", point, "must be 'vertex' or 'interior'")
        if point == "interior" and backend != "highs":
            raise InvalidOption("backend", backend, "point='interior' is HiGHS's ipm: "
                                "'highs'")
        if not isinstance(fill_leftover, bool):
            raise InvalidOption("fill_leftover", fill_leftover, "must be true or false")
        if weighted is not None and not isinstance(weighted, bool):
            raise InvalidOption("weighted", weighted, "must be true or false")
        if not (isinstance(reset_interval, (int, float)) and reset_interval >= 0):
            raise InvalidOption("reset_interval", reset_interval, "must be a number >= 0")
        self.kind = kind
        self.name = name or kind
        self.needs_work = PACKED_KINDS[kind] or slo_factor is not None
        opts: dict[str, Any] = dict(solve_options or {})
        for key, val in (("solver", solver), ("time_limit", time_limit), ("threads", threads)):
            if val is not None:
                opts[key] = val
        self.options = {"backend": backend, "solve_options": opts,
                        "weighted": True if weighted is None else weighted,
                        "point": point or "vertex", "prices": prices,
                        "slo_factor": slo_factor}
        _combination_rounds(self, rounds, reset_interval, fill_leftover, queue)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._ids: tuple[str, ...] | None = None
        self._alloc: tuple[np.ndarray, Pairs, np.ndarray] | None = None
        self._pairs: Pairs | None = None  # the visible jobs' pairs (rounds="original")
        self._pairs_ids: tuple[str, ...] | None = None
        self._rate = _RateCache()
        self._solves, self._lp_solves, self._seconds = 0, 0, 0.0

    def stats(self) -> dict[str, Any]:
        return {"allocation_solves": self._solves, "lp_solves": self._lp_solves,
                "lp_seconds": self._seconds}

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocation(self, view: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        """``(X, pairs, Y)`` for the visible jobs (recomputed on reset events; with
        ``rounds="original"`` at Gavel's counter resets only, the visible jobs' pairs
        kept current for the round mechanics)."""
        if self._ids != view.ids or self._alloc is None:
            orig = self._original
            if orig is None:
                pairs = candidate_pairs(view, self._rate)
            else:
                if self._pairs is None or self._pairs_ids != view.ids:
                    self._pairs, self._pairs_ids = candidate_pairs(view, self._rate), view.ids
                pairs = self._pairs
                if not orig.allocation_due(view, pairs) and self._alloc is not None:
                    return self._alloc  # Gavel's code waits for a counter reset
                view = orig.program_view(view, False)
            sol, Y = _solve_kind(self.kind, view, pairs, self.options)
            self._solves += 1
            self._lp_solves += sol.lp_solves
            self._seconds += sol.seconds
            if not sol.ok:
                _solver_failed(self.name, view, sol)
            self._ids, self._alloc = view.ids, (sol.X, pairs, Y)
            if orig is not None:
                orig.adopt(view, sol.X, pairs, Y)
            else:
                self.rounds.reset_counters(view.time)
        return self._alloc

    def allocate(self, state: ClusterView) -> list[Placement]:
        X, pairs, Y = self.allocation(state)
        if self._original is not None:
            return self._original.allocate(state, pairs=self._pairs)
        assert isinstance(self.rounds, PackedRounds)
        return self.rounds.allocate(state, X, pairs, Y)


class _OnCombinations:
    """``allocate`` of a policy whose ``allocation`` gives ``(X, pairs, Y)`` over job
    combinations: :class:`PackedRounds` by default; with ``rounds="original"``
    (``_original``) Gavel's mechanics, which ask for the allocation only at a counter
    reset, with the pairs' rows put on the candidate pairs' rows the mechanics keep."""

    _original: OriginalRounds | None
    rounds: PackedRounds | OriginalRounds
    _rate: _RateCache
    _pairs: Pairs | None
    _pairs_ids: tuple[str, ...] | None
    _adopted: tuple[str, ...] | None

    def allocation(self, state: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        raise NotImplementedError

    def allocate(self, state: ClusterView) -> list[Placement]:
        orig = self._original
        if orig is None:
            X, pairs, Y = self.allocation(state)
            assert isinstance(self.rounds, PackedRounds)
            return self.rounds.allocate(state, X, pairs, Y)
        if self._pairs is None or self._pairs_ids != state.ids:
            self._pairs, self._pairs_ids = candidate_pairs(state, self._rate), state.ids
        if self._adopted != state.ids and (orig.allocation_due(state, self._pairs)
                                           or self._adopted is None):
            X, some, Ys = self.allocation(state)
            orig.adopt(state, X, self._pairs, _rows_on(self._pairs, some, Ys))
            self._adopted = state.ids
        return orig.allocate(state, pairs=self._pairs)


class GavelPackedFIFOPolicy(_OnCombinations):
    """Gavel's FIFO with packing (``fifo_packed``; ``FIFOPolicy(mode="packing")``).

    Every round, from scratch: jobs in arrival order each take the fastest GPU type
    with ``workers`` free GPUs (Gavel's FIFO with Perf) until the first job that fits
    no type, which stops the pass (and, as in Gavel's code, is not packed either).
    Then each further waiting job, in arrival order, is packed with the scheduled job
    (not already in a pair, of its gang size) whose pair on that job's type has the
    largest summed normalised throughput :math:`T^{m'}_{mk}/T_{mk} +
    T^{m}_{m'k}/T_{m'k}` above ``packing_threshold`` (1.5, Gavel's); the first waiting
    job that packs with nobody stops the packing (no job jumps ahead in the queue).
    Only pairs whose co-located rates the instance has, both positive, are formed.
    The 0/1 allocation over combinations goes through :class:`PackedRounds` without
    leftover fill, as Gavel's FIFO. Declares ``colocation``. ``rounds="original"``:
    Gavel's simulator's round mechanics over combinations, as
    :class:`GavelFIFOPolicy`'s (:class:`OriginalRounds` with ``packing`` and ``fifo``),
    and the pass as Gavel's code runs it: a job that cannot run on the fastest type with
    its GPUs free is passed over, and when no GPU at all is free the pass stops before
    the next job, which may then be packed (the default stops at that job and does not
    pack it).
    """

    event_driven = False
    needs_work = False
    colocation = True

    def __init__(self, *, packing_threshold: float = PACKING_THRESHOLD,
                 name: str | None = None, rounds: str = "alg1"):
        if isinstance(packing_threshold, bool) or not isinstance(packing_threshold,
                                                                 (int, float)) \
                or not np.isfinite(packing_threshold):
            raise InvalidOption("packing_threshold", packing_threshold,
                                "must be a finite number")
        self.threshold = float(packing_threshold)
        self.name = name or "fifo_packed"
        _combination_rounds(self, rounds, 1920.0, False, "global", fifo=True)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._rate = _RateCache()
        self._adopted = None
        self._pairs = None
        self._pairs_ids = None

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def allocation(self, state: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        """``(X, pairs, Y)``: the 0/1 allocation of the visible jobs and of the pairs
        packed (class docstring)."""
        T, W, ids, types = state.throughput_matrix, state.workers, state.ids, state.gpu_types
        n, K = T.shape
        free = state.gpus_per_type.astype(np.int64).copy()
        X = np.zeros((n, K))
        scheduled: dict[int, int] = {}  # job row -> type, in the order scheduled
        queue = [int(m) for m in np.argsort(state.arrivals, kind="stable")]
        gavels = self._original is not None
        # Gavel's pass stops before taking the next job when no GPU is free at all; that
        # job then stays in the queue for packing
        while queue and not (gavels and not (free > 0).any()):
            m = queue.pop(0)
            if gavels:  # as GavelFIFOPolicy under rounds="original"
                k = _gavels_fifo_type(T[m], free, int(W[m]), types)
                if k is None:
                    break  # head-of-line blocking; this job is not packed either
                if not T[m, k] > 0:
                    continue
            else:
                usable = np.flatnonzero((T[m] > 0) & (free >= W[m]))
                if usable.size == 0:
                    break  # head-of-line blocking; this job is not packed either (Gavel)
                k = int(usable[np.argmax(T[m, usable])])
            scheduled[m] = k
            free[k] -= W[m]
            X[m, k] = 1.0
        rows, rates = [], []
        paired: set[int] = set()
        for m in queue:
            best, partner = self.threshold, None
            for s, k in scheduled.items():
                if s in paired or W[s] != W[m] or not (T[m, k] > 0):
                    continue
                rs = self._rate(state, ids[s], ids[m], types[k])
                rm = self._rate(state, ids[m], ids[s], types[k])
                if not (rs > 0 and rm > 0):
                    continue
                gain = rs / T[s, k] + rm / T[m, k]
                if gain > best:
                    best, partner = gain, s
            if partner is None:
                break
            k = scheduled[partner]
            X[partner, k] = 0.0
            paired.update((partner, m))
            a, b = min(partner, m), max(partner, m)
            r = np.zeros((2, K))
            r[0, k] = self._rate(state, ids[a], ids[b], types[k])
            r[1, k] = self._rate(state, ids[b], ids[a], types[k])
            rows.append((a, b, k))
            rates.append(r)
        pairs = Pairs(np.array([(a, b) for a, b, _ in rows], dtype=np.int64),
                      np.array(rates).reshape(len(rows), 2, K))
        Y = np.zeros((len(rows), K))
        for p, (_, _, k) in enumerate(rows):
            Y[p, k] = 1.0
        return X, pairs, Y


# --------------------------------------------------------------------------- gandiva
def normalised_pair_throughput(view: ClusterView, a: int, b: int, rate: Any = None) -> float:
    r""":math:`\nu(a, b)` of :class:`GavelGandivaPolicy` for visible jobs ``a`` and ``b`` (view
    positions): each job's co-located rate over its isolated rate, summed over both jobs
    and every GPU type; 0 when some type lacks a positive co-located rate for either job.

    Complexity: :math:`O(K)` rate look-ups.
    """
    rate = rate or _RateCache()
    T, ids = view.throughput_matrix, view.ids
    total = 0.0
    for k, t in enumerate(view.gpu_types):
        ra, rb = rate(view, ids[a], ids[b], t), rate(view, ids[b], ids[a], t)
        if ra <= 0 or rb <= 0 or T[a, k] <= 0 or T[b, k] <= 0:
            return 0.0
        total += ra / T[a, k] + rb / T[b, k]
    return total


class GavelGandivaPolicy(_OnCombinations):
    r"""Gavel's ``gandiva`` policy: Gandiva's random packing as a Gavel allocation.

    Gandiva (Xiao et al., OSDI'18) time-slices jobs and packs pairs of jobs onto the same
    GPUs, keeping a pair only while packing pays off. Gavel (Narayanan et al., OSDI'20, §7
    baselines; its ``GandivaPolicy``) expresses it as an allocation over *combinations*
    (a job alone, or a pair of jobs sharing GPUs) run by its round mechanism:

    1. Pairs from earlier allocations are kept only while both jobs are visible and their
       normalised packed throughput is at least 1:

       .. math:: \nu(a, b) = \sum_{k} \Big(\frac{R_{a|b,k}}{T_{ak}} +
                 \frac{R_{b|a,k}}{T_{bk}}\Big) \ge 1,

       summed over every GPU type k of the cluster, with :math:`\nu = 0` when some type has
       no positive co-located rate for either job. A job left alone is never kept: it is
       offered for pairing again at the next allocation.
    2. If the visible jobs ask for no more GPUs than the cluster has,
       :math:`\sum_m W_m \le \sum_k c_k`, nothing is packed: every job m gets the equal split
       :math:`x_{mk} = c_k / (n W_m)`.
    3. Otherwise every job not in a kept pair joins a pool (in job order) and pairs are drawn
       at random: at most as many draws as the pool's initial size, each drawing two jobs of
       the pool; two jobs of equal gang size :math:`W` are paired and leave the pool, a draw
       of unequal sizes is wasted. Jobs left in the pool run alone. With :math:`M`
       combinations, each gets :math:`x_{Ck} = c_k / (M W_C)`.

    Rows are then scaled to :math:`\sum_k x_{Ck} \le 1`, and :class:`PackedRounds` turns
    them into rounds (Gavel's priorities over combinations, leftover GPUs to single jobs).
    The allocation is recomputed when the set of visible jobs changes, as for the other
    Gavel policies here (docs/gavel.md says when Gavel's code recomputes it).

    Where this differs from Gavel's code: a job (or a pair) gets no share of a GPU type it
    cannot run on (no isolated rate, or no positive co-located rate for either job of the
    pair); Gavel's code hands out the share and its round mechanism then skips the entry,
    so the share is lost either way. On instances without a co-location table no pair can
    run, so none is drawn: every job runs alone at the equal split of 2. or 3.

    The pairing draws use Python's :class:`random.Random`, seeded with ``pairing_seed``
    when given (Gavel's ``GandivaPolicy(seed=...)``: with the same seed and the same
    sequence of allocations it draws the same pairs as Gavel's code), else from the
    simulation's generator.

    Reference: Xiao et al., Gandiva: Introspective Cluster Scheduling for Deep Learning,
    OSDI'18 (§3.3 packing); Narayanan et al., OSDI'20, Gavel's ``scheduler/policies/gandiva.py``
    (commit c4fa40097339e9608ab71fd64c8bdea96a5e4a4c).

    Run by :class:`PackedRounds`; ``event_driven = False``; declares ``colocation``.

    Parameters
    ----------
    pairing_seed : int, optional
        Seed of the pairing draws (Gavel's ``GandivaPolicy(seed=...)``); default: drawn
        from the simulation's generator, so the simulation's seed decides.
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1920 s).
    fill_leftover : bool
        Let single jobs take GPUs the allocation leaves free (default True, as Gavel).
    rounds : "alg1" or "original"
        ``"original"``: Gavel's simulator's round mechanics over combinations
        (:class:`OriginalRounds` with ``packing``; the allocation, and so the pairing
        draws, only at its counter resets), with the shares of types a job cannot use
        handed out as Gavel's code does; ``queue`` does not apply.
    queue : "global" or "per_type"
        The round mechanism's queue (:class:`PackedRounds`, :class:`RoundMechanism`).
        Default ``"per_type"``, Gavel's code's order: this baseline is defined by Gavel's
        code alone, and its equal split gives a lone job a share of every type, which
        the global queue realises (K80s included) where Gavel's code runs it on the
        fastest type. On the first 100 measured jobs of Gavel's trace, mean JCT against
        Gavel's run: 0.994 with ``"per_type"``, 1.494 with ``"global"``
        (benchmarks/results/gavel_queue_peer.md).

    Notes
    -----
    Complexity: per allocation :math:`O(n K)` plus :math:`O(n)` draws of two jobs
    (each :math:`O(n)` for the pool's list removal, as Gavel's), so :math:`O(n^2)`.
    """

    event_driven = False
    needs_work = False
    colocation = True

    def __init__(self, *, pairing_seed: int | None = None, reset_interval: float = 1920.0,
                 fill_leftover: bool = True, name: str | None = None,
                 queue: str = "per_type", rounds: str = "alg1"):
        if pairing_seed is not None and (isinstance(pairing_seed, bool)
                                         or not isinstance(pairing_seed, int)
                                         or pairing_seed < 0):
            raise InvalidOption("pairing_seed", pairing_seed, "must be an integer >= 0")
        if not isinstance(fill_leftover, bool):
            raise InvalidOption("fill_leftover", fill_leftover, "must be true or false")
        if (isinstance(reset_interval, bool) or not isinstance(reset_interval, (int, float))
                or not reset_interval >= 0):
            raise InvalidOption("reset_interval", reset_interval, "must be a number >= 0")
        self.name = name or "gandiva"
        self.pairing_seed = pairing_seed
        _combination_rounds(self, rounds, reset_interval, fill_leftover, queue)
        self.reset()

    def reset(self) -> None:
        self.rounds.reset()
        self._pairs = None  # the visible jobs' pairs (rounds="original")
        self._pairs_ids = None
        self._adopted = None
        self._rng: random.Random | None = None
        self._rate = _RateCache()
        #: job id -> its partner's id, both ways, for the kept pairs
        self._partner: dict[str, str] = {}
        self._ids: tuple[str, ...] | None = None
        self._alloc: tuple[np.ndarray, Pairs, np.ndarray] | None = None
        self._allocations = self._packed_allocations = 0
        self._pairs_drawn = self._pairs_dropped = 0

    def stats(self) -> dict[str, Any]:
        return {"allocation_solves": self._allocations,
                "packed_allocations": self._packed_allocations,
                "pairs_drawn": self._pairs_drawn, "pairs_dropped": self._pairs_dropped}

    def check(self, instance) -> None:
        check_single_type_gangs(instance, self.name)

    def _drop_stale_pairs(self, view: ClusterView, pos: dict[str, int]) -> None:
        for a, b in list(self._partner.items()):
            if a > b:  # each pair once
                continue
            if (a not in pos or b not in pos
                    or normalised_pair_throughput(view, pos[a], pos[b], self._rate) < 1.0):
                del self._partner[a], self._partner[b]
                self._pairs_dropped += 1

    def _draw_pairs(self, view: ClusterView, order: list[int]) -> None:
        assert self._rng is not None
        ids, W = view.ids, view.workers
        pool = [ids[m] for m in order if ids[m] not in self._partner]
        w = {ids[m]: int(W[m]) for m in order}
        for _ in range(len(pool)):
            if len(pool) < 2:
                break
            a, b = self._rng.sample(pool, 2)
            if w[a] != w[b]:
                continue
            pool.remove(a)
            pool.remove(b)
            self._partner[a], self._partner[b] = b, a
            self._pairs_drawn += 1

    def allocation(self, view: ClusterView) -> tuple[np.ndarray, Pairs, np.ndarray]:
        """``(X, pairs, Y)`` of the class docstring for the visible jobs (recomputed
        when they change)."""
        if self._ids == view.ids and self._alloc is not None:
            return self._alloc
        if self._rng is None:
            self._rng = random.Random(self.pairing_seed if self.pairing_seed is not None
                                      else int(view.rng.integers(2 ** 63)))
        T, W = view.throughput_matrix, view.workers
        n, K = T.shape
        c = view.gpus_per_type.astype(float)
        pos = {j: m for m, j in enumerate(view.ids)}
        self._drop_stale_pairs(view, pos)
        X = np.zeros((n, K))
        rows: list[tuple[int, int]] = []
        if W.sum() <= c.sum():
            X[:] = c[None, :] / n / W[:, None]
        else:
            self._packed_allocations += 1
            if view.pair_rates is not None:
                self._draw_pairs(view, sorted(range(n), key=lambda m: int(view.index[m])))
            rows = sorted((min(pos[a], pos[b]), max(pos[a], pos[b]))
                          for a, b in self._partner.items() if a < b)
            paired = {m for r in rows for m in r}
            M = n - len(paired) + len(rows)
            for m in range(n):
                if m not in paired:
                    X[m] = c / M / W[m]
        X /= np.maximum(X.sum(axis=1), 1.0)[:, None]
        gavels = self._original is not None
        if not gavels:  # Gavel's code hands out shares of types a job cannot use
            X[T <= 0] = 0.0
        P = len(rows)
        R = np.zeros((P, 2, K))
        Y = np.zeros((P, K))
        for p, (a, b) in enumerate(rows):
            for k, t in enumerate(view.gpu_types):
                ra = self._rate(view, view.ids[a], view.ids[b], t)
                rb = self._rate(view, view.ids[b], view.ids[a], t)
                if ra > 0 and rb > 0 and T[a, k] > 0 and T[b, k] > 0:
                    R[p, 0, k], R[p, 1, k] = ra, rb
            Y[p] = c / (n - P) / W[a]
        if P:
            Y /= np.maximum(Y.sum(axis=1), 1.0)[:, None]
            if not gavels:
                Y[(R[:, 0, :] <= 0) | (R[:, 1, :] <= 0)] = 0.0
        pairs = Pairs(np.array(rows, dtype=np.int64).reshape(-1, 2), R)
        self._allocations += 1
        self._ids, self._alloc = view.ids, (X, pairs, Y)
        if not gavels:
            self.rounds.reset_counters(view.time)
        return self._alloc


# Gavel's simulator's round mechanics (rounds="original"; the module docstring states them).

#: The order in which Gavel's code walks its per-type queues (before any shuffle).
_GAVEL_WALK = {"v100": 0, "p100": 1, "k80": 2}

#: The round mechanics of the Gavel policies: ``"alg1"`` (the paper's Alg. 1, default)
#: and ``"original"`` (Gavel's simulator, :class:`OriginalRounds`).
ROUNDS = ("alg1", "original")


def check_rounds(rounds: object) -> str:
    """``rounds`` if it names one of :data:`ROUNDS`, else :class:`InvalidOption`."""
    if rounds not in ROUNDS:
        raise InvalidOption("rounds", rounds, f"must be one of {list(ROUNDS)}")
    return str(rounds)


def _pair_key(index: list[int], a: int, b: int) -> tuple[int, int]:
    """A pair's key: its two jobs' instance indices, the lower first (Gavel's JobIdPair)."""
    i, j = index[a], index[b]
    return (i, j) if i < j else (j, i)


def _combo_order(key: int | tuple[int, int]) -> tuple[int, int, int]:
    """Where Gavel's code keeps a combination in its per-type priority dicts: a job when
    it arrives, then its pairs with the jobs already present (in their arrival order)."""
    if isinstance(key, tuple):
        return (key[1], 1, key[0])
    return (key, 0, key)


def _booking_order(run: tuple[Any, int, float, float]) -> tuple:
    """The order Gavel's simulator books a round's runs: the latest end first, then the
    job id (a job before any pair, pairs by their first and second job)."""
    key, fin = run[0], run[3]
    if isinstance(key, tuple):
        return (-fin, 1, key[0], key[1])
    return (-fin, 0, key, 0)


def _combos_counted(view: ClusterView) -> int:
    """The combinations Gavel's packing simulator keeps time counters for: every job and
    every pair of jobs of one gang size (whether or not a type can hold the pair)."""
    _, counts = np.unique(view.workers, return_counts=True)
    return int(view.workers.size + (counts * (counts - 1) // 2).sum())


class OriginalRounds(RoundMechanism):
    r"""Gavel's simulator's round mechanics (module docstring, points 1-6).

    Used by :class:`~optsched.gavel.policy.GavelPolicy` with ``rounds="original"``: the
    policy asks :meth:`allocation_due` before recomputing X, computes it on
    :meth:`program_view`, hands every new X to
    :meth:`adopt`, calls :meth:`allocate` each round and exposes :meth:`horizon`.

    With ``packing`` (:class:`~optsched.gavel.policy.GavelPackedPolicy`) the entries are
    job *combinations*, as in Gavel's simulator for its ``_Packing`` policies: every
    job and every candidate pair (:func:`candidate_pairs`), each with its own row of X,
    time counters and deficits. The differences from single jobs are Gavel's:

    * a pair's time counter starts at 0 (not half a round) when its second job
      arrives, so until the next reset it ranks first wherever it has a share
      (:math:`10^9 X_{Ck}`); at a reset it is set to half a round like every other
      combination, and each type's total time restarts at half a round times the number
      of combinations Gavel counts (every job and every pair of jobs of one gang size);
    * a type's queue lists the combinations in the order Gavel's dicts keep them: a job,
      then its pairs with the jobs present when it arrived;
    * an entry is taken when none of its jobs is scheduled yet, both co-located rates
      on the type are positive and the gang fits;
    * a pair runs, for each job, the whole steps of its co-located rate in the round,
      and both its jobs complete (when their steps run out) at the instant the slower
      of the two ends its steps; the pair's time counter, and its type's, grow by that
      time. The types are walked v100, p100, k80 (packing policies never shuffle).

    In the simulator a pair's two jobs start together. A job whose work runs out in the
    round then completes at Gavel's instant only when the pair's start can serve it
    (point 5 with one start for two jobs): when both jobs end in the same round, the
    start is the earlier of the two that would match, so the other completes up to its
    own steps' time earlier than Gavel's. When the start waits for one job only (its
    credit would otherwise end it a round early), its partner runs alone (at its
    exclusive rate) until then, unless that would end the partner early; and if the
    partner completes before a later start in the round, the job runs alone from then.

    Parameters
    ----------
    reset_interval : float
        Minimum seconds between counter resets (Gavel's 1,920 s).
    agnostic : bool
        Walk the types in a random order drawn every round (Gavel's policies whose name
        lacks "Perf").
    seed : int
        Gavel's ``seed`` (0 in its driver); the type shuffler is :class:`random.Random`
        seeded with ``seed + 5``. The simulation's own seed does not change it.
    packing : bool
        Entries are job combinations (above); the policy passes each round's
        :func:`candidate_pairs`.
    fifo : bool
        Gavel's FIFO policies: an entry of priority 0 is never taken (Gavel's
        simulator skips them for policies whose name starts with "FIFO"), so no GPU
        is filled outside X.

    Attributes
    ----------
    resets : int
        Counter resets so far (each with a new X).
    idle_gpu_rounds : int
        GPU-rounds held, idle, by jobs outside X (point 1).
    decision : dict
        The current round's decision, job id -> GPU type (for tracing against Gavel).
    """

    def __init__(self, reset_interval: float = 1920.0, *, agnostic: bool = False,
                 seed: int = 0, packing: bool = False, fifo: bool = False):
        super().__init__(reset_interval, fill_leftover=not fifo,
                         type_order="random" if agnostic else "fastest", queue="per_type")
        self.agnostic = bool(agnostic)
        self.seed = int(seed)
        self.packing = bool(packing)
        self.fifo = bool(fifo)
        self.reset()

    def reset(self) -> None:
        super().reset()
        self._shuffler = random.Random(getattr(self, "seed", 0) + 5)
        self._last_reset = 0.0  # Gavel's _last_reset_time starts at 0
        # by combination: a job's instance index, or a pair of them (lower first)
        self._alloc: dict[Any, np.ndarray] = {}  # its row of X
        self._time: dict[Any, np.ndarray] = {}  # seconds on each type
        self._deficit: dict[Any, np.ndarray] = {}
        self._worker_time: np.ndarray | None = None
        self._steps_done: dict[int, int] = {}
        # last round: (combination, type, seconds, end instant)
        self._ran: list[tuple[Any, int, float, float]] = []
        self._round_end: float | None = None
        self._retry: float | None = None
        self._next: float | None = None
        self._plan: list[Placement] = []
        self._delay: dict[str, float] = {}
        self._solo: dict[str, float] = {}  # a pair's job running alone until its start
        self.decision: dict[str, str] = {}
        self.resets = 0
        self.idle_gpu_rounds = 0  # GPUs held by jobs outside X (point 1)

    # ------------------------------------------------------------------ X and resets
    def allocation_due(self, view: ClusterView, pairs: Pairs | None = None) -> bool:
        """Whether X may be recomputed now (point 1); asked only when the set of jobs
        changed since the last computation."""
        if self.in_round(view.time):
            return False
        self._book(view, pairs)
        return (view.time - self._last_reset >= self.reset_interval
                or self._last_reset == 0)

    def adopt(self, view: ClusterView, X: np.ndarray, pairs: Pairs | None = None,
              Y: np.ndarray | None = None) -> None:
        """Reset the counters (deficits with the X being replaced, point 3) and keep the
        new X (and, packing, the pairs' rows Y) by combination."""
        self._book(view, pairs)
        K = X.shape[1]
        half = view.slot / 2.0
        elapsed = view.time - self._last_reset
        index = view.index.tolist()
        keys: list[Any] = list(index)
        if self.packing:
            keys += [k for k in self._time if isinstance(k, tuple)]
        for key in keys:
            t = self._time[key]
            should = self._alloc[key] * elapsed if key in self._alloc else np.zeros(K)
            # in Gavel's order of operations: ties between jobs are decided by the
            # last digits of the deficits
            self._deficit[key] = self._deficit.get(key, np.zeros(K)) + (should - (t - half))
            self._time[key] = np.full(K, half)
        count = _combos_counted(view) if self.packing else len(index)
        self._worker_time = np.full(K, half * count)
        self._alloc = {i: X[m].copy() for m, i in enumerate(index)}
        if pairs is not None and Y is not None:
            for p, (a, b) in enumerate(pairs.rows.tolist()):
                self._alloc[_pair_key(index, a, b)] = Y[p].copy()
        self._last_reset = view.time
        self.resets += 1

    def program_view(self, view: ClusterView, agnostic: bool) -> ClusterView:
        """The state Gavel's code hands its policy (point 6): the remaining steps it
        counts, and for a heterogeneity-agnostic policy every GPU type usable, at the
        job's fastest rate where it has none."""
        change: dict[str, Any] = {}
        if view.remaining_ is not None:
            change["remaining_"] = np.array(
                [float(view.work[m]) - self._steps_done[i]
                 for m, i in enumerate(view.index.tolist())])
        if agnostic:
            T = view.throughput_matrix
            change["throughput_matrix"] = np.where(T > 0, T, T.max(axis=1)[:, None])
        return replace(view, **change) if change else view

    def reset_counters(self, now: float, force: bool = False) -> None:
        # counters are reset by adopt(), with the new X
        return None

    def _book(self, view: ClusterView, pairs: Pairs | None = None) -> None:
        """Credit the last round's runs and admit new jobs and pairs (once per round)."""
        K = view.throughput_matrix.shape[1]
        if self._ran:
            wt = self._worker_time if self._worker_time is not None else np.zeros(K)
            # in the order Gavel's simulator books them: latest end first, then job
            for key, k, sec, _ in sorted(self._ran, key=_booking_order):
                if key in self._time:
                    self._time[key][k] += sec
                wt[k] += sec
            self._worker_time = wt
            self._ran = []
        index = view.index.tolist()
        live = set(index)
        for key in list(self._time):
            gone = (key[0] not in live or key[1] not in live) if isinstance(key, tuple) \
                else key not in live
            if gone:  # completed (a pair: either of its jobs)
                del self._time[key]
                self._deficit.pop(key, None)
                self._alloc.pop(key, None)
                if not isinstance(key, tuple):
                    self._steps_done.pop(key, None)
        for i in live:
            if i not in self._time:
                self._time[i] = np.full(K, view.slot / 2.0)
                self._deficit[i] = np.zeros(K)
                self._steps_done[i] = 0
        if pairs is not None:
            for a, b in pairs.rows.tolist():
                key = _pair_key(index, a, b)
                if key not in self._time:  # Gavel starts a pair's counter at 0
                    self._time[key] = np.zeros(K)
                    self._deficit[key] = np.zeros(K)

    # ------------------------------------------------------------------ one round
    def allocate(self, view: ClusterView, X: np.ndarray | None = None,
                 pairs: Pairs | None = None) -> list[Placement]:
        if self.in_round(view.time):  # a delayed start inside the round
            return self._running(view.time, set(view.ids))
        self._book(view, pairs)
        T, W = view.throughput_matrix, view.workers
        n, K = T.shape
        index = view.index.tolist()
        # the combinations: (key, its jobs by view position, their per-worker rates)
        combos: list[tuple[Any, tuple[int, ...], np.ndarray]] = [
            (i, (m,), T[m:m + 1]) for m, i in enumerate(index)]
        if pairs is not None and len(pairs):
            for p, (a, b) in enumerate(pairs.rows.tolist()):
                if index[a] > index[b]:
                    a, b = b, a
                    rates = pairs.R[p, ::-1]
                else:
                    rates = pairs.R[p]
                combos.append(((index[a], index[b]), (a, b), rates))
            combos.sort(key=lambda c: _combo_order(c[0]))
        C = len(combos)
        alloc = np.zeros((C, K))
        spent = np.ones((C, K))
        deficit = np.zeros((C, K))
        runs = np.ones((C, K), dtype=bool)
        for c, (key, _, rates) in enumerate(combos):
            deficit[c] = self._deficit[key]
            spent[c] = self._time[key]
            runs[c] = (rates > 0).all(axis=0)
            row = self._alloc.get(key)
            if row is not None:
                alloc[c] = row
        wt = self._worker_time
        # Gavel's priority: X / (own time / the type's time), X * 1e9 while either is 0
        with np.errstate(divide="ignore", invalid="ignore"):
            prio = np.where((alloc == 0.0) | ~runs, 0.0,
                            np.where((spent == 0.0) | (wt is None or (wt == 0.0)),
                                     alloc * 1e9, alloc / (spent / (wt if wt is not None
                                                                    else 1.0))))
        rank = type_walk(view, T, False)
        # Gavel's code lists its types by name; other types follow by speed
        walk = sorted(range(K), key=lambda k: (_GAVEL_WALK.get(view.gpu_types[k], 3),
                                               rank[k]))
        if self.agnostic:
            self._shuffler.shuffle(walk)
        left = view.gpus_per_type.astype(np.int64).tolist()
        Wl = W.tolist()
        taken: set[int] = set()
        chosen: dict[int, int] = {}
        in_x = [key in self._alloc for key, _, _ in combos]
        fifo = self.fifo
        members = [mm for _, mm, _ in combos]
        ok = runs.tolist()
        for k in walk:
            # each type's entries by (priority, deficit, X) descending, stable
            for c in np.lexsort((-alloc[:, k], -deficit[:, k], -prio[:, k])).tolist():
                if left[k] == 0:
                    break
                mm = members[c]
                w = Wl[mm[0]]
                if not ok[c][k] or w > left[k] or any(m in taken for m in mm):
                    continue
                if fifo and not prio[c, k] > 0.0:
                    continue
                left[k] -= w
                taken.update(mm)
                if in_x[c]:
                    chosen[c] = k
                else:
                    self.idle_gpu_rounds += w
        return self._start_round(view, combos, chosen)

    def _start_round(self, view: ClusterView, combos: list, chosen: dict[int, int]
                     ) -> list[Placement]:
        """Whole steps, the round's end and the start of each job in it (point 5).

        The simulator credits a running job its rate times the time it holds its GPUs,
        Gavel whole steps: a job's credit here runs ahead of Gavel's by less than one
        step per round. So that it completes when Gavel's does, a job whose work would
        run out in this round starts late by that excess (its GPUs idle meanwhile, as
        Gavel's stay idle after its last whole step): it then runs exactly the steps
        Gavel counts. A pair starts once for both jobs (class docstring)."""
        W, index, work = view.workers, view.index.tolist(), view.work
        remaining = view.remaining
        t = view.time
        end = t
        ran: list[tuple[Any, int, float, float]] = []
        delay: dict[str, float] = {}
        sync: list[tuple[int, float, int, int, float]] = []
        combo_of: dict[int, tuple[int, ...]] = {}
        for c, k in chosen.items():
            key, mm, rates = combos[c]
            fin = t
            first = len(sync)
            for pos, m in enumerate(mm):
                i = index[m]
                rate = float(rates[pos, k] * W[m])
                left = int(work[m]) - self._steps_done[i]
                # at least one step: the simulator still shows the job unfinished
                steps = max(1, min(int(rate * view.slot), left))
                self._steps_done[i] += steps
                fin = max(fin, t + steps / rate)
                sync.append((m, rate, left, steps, 0.0))
                combo_of[m] = mm
            for s in range(first, len(sync)):  # a pair's jobs end when its last does
                sync[s] = sync[s][:4] + (fin,)
            # Gavel's execution time: its end instant less the round's start, as floats
            ran.append((key, k, fin - t, fin))
            end = max(end, fin)
        for m, rate, left, steps, _ in sync:
            if len(combo_of[m]) == 2:
                continue
            ahead = left - float(remaining[m])
            if ahead <= 0 or float(remaining[m]) > rate * (end - t):
                continue  # the simulator's credit cannot end the job in this round
            if steps >= left:  # Gavel's last round of the job: it ends at t + left/rate
                delay[view.ids[m]] = t + ahead / rate
            else:  # credit only what Gavel counts beyond the excess (none if <= 0)
                run = (steps - ahead) / rate
                delay[view.ids[m]] = end - run if run > 0 else math.inf
        solo: dict[str, float] = {}
        T = view.throughput_matrix
        for c, k in chosen.items():
            mm = combos[c][1]
            if len(mm) != 2:
                continue
            runs = [s for s in sync if s[0] in mm]
            start = self._pair_start(view, runs, t, end)
            if start <= t:
                continue
            for m in mm:
                delay[view.ids[m]] = start
            # a job the start does not wait for runs alone until then, unless that ends
            # it in this round before Gavel does
            for m, rate, left, steps, _ in runs:
                rem = float(remaining[m])
                if steps >= left or rem <= rate * (end - t):
                    continue  # it ends in this round, or its own credit holds the start
                alone = float(T[m, k] * W[m])
                if alone * (start - t) + rate * (end - start) < rem:
                    solo[view.ids[m]] = start
                    delay[view.ids[m]] = t
        self._ran = ran
        self._retry = None
        if not chosen and index:
            # nothing runs (every job waits outside X): Gavel's simulator, with no job
            # running and none left to arrive, sets its last reset time to 0, which
            # forces a reset at once (deficits then count the time since t = 0)
            self._last_reset = 0.0
            self._retry = t
        #: this round's decision, job id -> GPU type (for tracing against Gavel's)
        self.decision = {view.ids[m]: view.gpu_types[k] for c, k in chosen.items()
                         for m in combos[c][1]}
        self._round_end = end if chosen else None
        self._plan = self._place(view, {combos[c][1][0]: k for c, k in chosen.items()
                                        if len(combos[c][1]) == 1},
                                 paired=[(combos[c][1], k) for c, k in chosen.items()
                                         if len(combos[c][1]) == 2])
        self._delay = delay
        self._solo = solo
        return self._running(t)

    @staticmethod
    def _pair_start(view: ClusterView, runs: list, t: float, end: float) -> float:
        """One start for a pair's two jobs (class docstring): late enough that neither
        job's credit ends it a round before Gavel does; when both jobs end in this round
        in Gavel, as late as matches the earlier of the two completions. (When only one
        ends, it ends early rather than hold back its partner's credit.)"""
        remaining = view.remaining
        lo, match = t, []
        for m, rate, left, steps, fin in runs:
            rem = float(remaining[m])
            if steps >= left:  # Gavel ends it with the pair, at fin
                match.append(fin - rem / rate)
            elif rem <= rate * (end - t):  # the credit would end it: only Gavel's steps
                run = (steps - (left - rem)) / rate
                lo = max(lo, end - run if run > 0 else end)
        return max(lo, min(match)) if len(match) == len(runs) else lo

    def _running(self, now: float, live: set[str] | None = None) -> list[Placement]:
        """The round's placements of the jobs started by ``now`` (and still running); a
        job whose partner completed runs alone."""
        delay, solo = self._delay, self._solo
        out = [p for p in self._plan if delay.get(p.job, now) <= now + 1e-9
               and (live is None or p.job in live)]
        out = [Placement(p.job, p.node, p.gpu_type, p.gpus)
               if p.partner is not None and (now < solo.get(p.job, now) - 1e-9
                                             or (live is not None and p.partner not in live))
               else p for p in out]
        end = self._round_end if self._round_end is not None else math.inf
        later = [d for d in (*delay.values(), *solo.values()) if now + 1e-9 < d < end]
        self._next = min(later) if later else None
        return out

    def in_round(self, now: float) -> bool:
        """Whether ``now`` is inside the current round (a delayed start, point 5)."""
        return self._round_end is not None and now < self._round_end - 1e-9

    def horizon(self) -> float | None:
        """The end of the current epoch: the next delayed start in the round, else the
        round's end, when its last scheduled job ends (point 5)."""
        if self._retry is not None:  # at once: the forced reset (allocate)
            return self._retry
        r = self._next if self._next is not None else self._round_end
        return None if r is None or not math.isfinite(r) else r
