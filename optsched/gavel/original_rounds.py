r"""Gavel's round mechanics as its simulator runs them (``rounds="original"``).

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
from dataclasses import replace
from typing import Any

import numpy as np

from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.gavel.policy import RoundMechanism, type_walk
from optsched.sim.policy import ClusterView

__all__ = ["OriginalRounds", "ROUNDS"]

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


class OriginalRounds(RoundMechanism):
    r"""Gavel's simulator's round mechanics (module docstring, points 1-6).

    Used by :class:`~optsched.gavel.policy.GavelPolicy` with ``rounds="original"``: the
    policy asks :meth:`allocation_due` before recomputing X, computes it on
    :meth:`program_view`, hands every new X to
    :meth:`adopt`, calls :meth:`allocate` each round and exposes :meth:`horizon`.

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
                 seed: int = 0):
        super().__init__(reset_interval, fill_leftover=True,
                         type_order="random" if agnostic else "fastest", queue="per_type")
        self.agnostic = bool(agnostic)
        self.seed = int(seed)
        self.reset()

    def reset(self) -> None:
        super().reset()
        self._shuffler = random.Random(getattr(self, "seed", 0) + 5)
        self._last_reset = 0.0  # Gavel's _last_reset_time starts at 0
        self._alloc: dict[int, np.ndarray] = {}  # job index -> its row of X
        self._time: dict[int, np.ndarray] = {}  # job index -> seconds on each type
        self._deficit: dict[int, np.ndarray] = {}
        self._worker_time: np.ndarray | None = None
        self._steps_done: dict[int, int] = {}
        # last round: (index, type, seconds, end instant)
        self._ran: list[tuple[int, int, float, float]] = []
        self._round_end: float | None = None
        self._retry: float | None = None
        self._next: float | None = None
        self._plan: list[Placement] = []
        self._delay: dict[str, float] = {}
        self.decision: dict[str, str] = {}
        self.resets = 0
        self.idle_gpu_rounds = 0  # GPUs held by jobs outside X (point 1)

    # ------------------------------------------------------------------ X and resets
    def allocation_due(self, view: ClusterView) -> bool:
        """Whether X may be recomputed now (point 1); asked only when the set of jobs
        changed since the last computation."""
        if self.in_round(view.time):
            return False
        self._book(view)
        return (view.time - self._last_reset >= self.reset_interval
                or self._last_reset == 0)

    def adopt(self, view: ClusterView, X: np.ndarray) -> None:
        """Reset the counters (deficits with the X being replaced, point 3) and keep the
        new X by job index."""
        self._book(view)
        K = X.shape[1]
        half = view.slot / 2.0
        elapsed = view.time - self._last_reset
        for i in view.index.tolist():
            t = self._time[i]
            should = self._alloc[i] * elapsed if i in self._alloc else np.zeros(K)
            # in Gavel's order of operations: ties between jobs are decided by the
            # last digits of the deficits
            self._deficit[i] = self._deficit.get(i, np.zeros(K)) + (should - (t - half))
            self._time[i] = np.full(K, half)
        self._worker_time = np.full(K, half * len(view.index))
        self._alloc = {i: X[m].copy() for m, i in enumerate(view.index.tolist())}
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

    def _book(self, view: ClusterView) -> None:
        """Credit the last round's runs and admit new jobs (once per round)."""
        K = view.throughput_matrix.shape[1]
        if self._ran:
            wt = self._worker_time if self._worker_time is not None else np.zeros(K)
            # in the order Gavel's simulator books them: latest end first, then job
            for i, k, sec, _ in sorted(self._ran, key=lambda r: (-r[3], r[0])):
                if i in self._time:
                    self._time[i][k] += sec
                wt[k] += sec
            self._worker_time = wt
            self._ran = []
        live = set(view.index.tolist())
        for i in list(self._time):
            if i not in live:  # completed
                del self._time[i]
                self._deficit.pop(i, None)
                self._alloc.pop(i, None)
                self._steps_done.pop(i, None)
        for i in live:
            if i not in self._time:
                self._time[i] = np.full(K, view.slot / 2.0)
                self._deficit[i] = np.zeros(K)
                self._steps_done[i] = 0

    # ------------------------------------------------------------------ one round
    def allocate(self, view: ClusterView, X: np.ndarray | None = None) -> list[Placement]:
        if self.in_round(view.time):  # a delayed start inside the round
            return self._running(view.time, set(view.ids))
        self._book(view)
        T, W = view.throughput_matrix, view.workers
        n, K = T.shape
        index = view.index.tolist()
        wt = self._worker_time
        prio = np.zeros((n, K))
        alloc = np.zeros((n, K))
        deficit = np.zeros((n, K))
        for m, i in enumerate(index):
            deficit[m] = self._deficit[i]
            row = self._alloc.get(i)
            if row is None:
                continue
            alloc[m] = row
            for k in range(K):
                x = float(row[k])
                if x == 0.0 or T[m, k] <= 0:
                    continue
                if wt is None or wt[k] == 0.0:
                    prio[m, k] = x * 1e9
                else:
                    prio[m, k] = x / (self._time[i][k] / wt[k])
        rank = type_walk(view, T, False)
        # Gavel's code lists its types by name; other types follow by speed
        walk = sorted(range(K), key=lambda k: (_GAVEL_WALK.get(view.gpu_types[k], 3),
                                               rank[k]))
        if self.agnostic:
            self._shuffler.shuffle(walk)
        queue: list[tuple[int, int]] = []
        for k in walk:
            col = sorted(range(n), key=lambda m: (prio[m, k], deficit[m, k], alloc[m, k]),
                         reverse=True)
            queue.extend((m, k) for m in col)
        left = view.gpus_per_type.astype(np.int64).tolist()
        Wl = W.tolist()
        taken: set[int] = set()
        chosen: dict[int, int] = {}
        for m, k in queue:
            if left[k] == 0 or m in taken or T[m, k] <= 0 or Wl[m] > left[k]:
                continue
            left[k] -= Wl[m]
            taken.add(m)
            if index[m] in self._alloc:
                chosen[m] = k
            else:
                self.idle_gpu_rounds += Wl[m]
        return self._start_round(view, chosen)

    def _start_round(self, view: ClusterView, chosen: dict[int, int]) -> list[Placement]:
        """Whole steps, the round's end and the start of each job in it (point 5).

        The simulator credits a running job its rate times the time it holds its GPUs,
        Gavel whole steps: a job's credit here runs ahead of Gavel's by less than one
        step per round. So that it completes when Gavel's does, a job whose work would
        run out in this round starts late by that excess (its GPUs idle meanwhile, as
        Gavel's stay idle after its last whole step): it then runs exactly the steps
        Gavel counts."""
        T, W, index, work = view.throughput_matrix, view.workers, view.index.tolist(), \
            view.work
        remaining = view.remaining
        t = view.time
        end = t
        ran: list[tuple[int, int, float, float]] = []
        delay: dict[str, float] = {}
        sync: list[tuple[int, float, int, int]] = []
        for m, k in chosen.items():
            i = index[m]
            rate = float(T[m, k] * W[m])
            left = int(work[m]) - self._steps_done[i]
            # at least one step: the simulator still shows the job unfinished
            steps = max(1, min(int(rate * view.slot), left))
            self._steps_done[i] += steps
            # Gavel's execution time: its end instant less the round's start, as floats
            fin = t + steps / rate
            sec = fin - t
            ran.append((i, k, sec, fin))
            end = max(end, fin)
            sync.append((m, rate, left, steps))
        for m, rate, left, steps in sync:
            ahead = left - float(remaining[m])
            if ahead <= 0 or float(remaining[m]) > rate * (end - t):
                continue  # the simulator's credit cannot end the job in this round
            if steps >= left:  # Gavel's last round of the job: it ends at t + left/rate
                delay[view.ids[m]] = t + ahead / rate
            else:  # credit only what Gavel counts beyond the excess (none if <= 0)
                run = (steps - ahead) / rate
                delay[view.ids[m]] = end - run if run > 0 else math.inf
        self._ran = ran
        self._retry = None
        if not chosen and index:
            # nothing runs (every job waits outside X): Gavel's simulator, with no job
            # running and none left to arrive, sets its last reset time to 0, which
            # forces a reset at once (deficits then count the time since t = 0)
            self._last_reset = 0.0
            self._retry = t
        #: this round's decision, job id -> GPU type (for tracing against Gavel's)
        self.decision = {view.ids[m]: view.gpu_types[k] for m, k in chosen.items()}
        self._round_end = end if chosen else None
        self._plan = self._place(view, chosen)
        self._delay = delay
        return self._running(t)

    def _running(self, now: float, live: set[str] | None = None) -> list[Placement]:
        """The round's placements of the jobs started by ``now`` (and still running)."""
        delay = self._delay
        out = [p for p in self._plan if delay.get(p.job, now) <= now + 1e-9
               and (live is None or p.job in live)]
        end = self._round_end if self._round_end is not None else math.inf
        later = [d for d in delay.values() if now + 1e-9 < d < end]
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
