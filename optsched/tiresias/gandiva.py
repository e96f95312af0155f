r"""Tiresias' ``gandiva`` scheduler: time slicing over node sets, one class per gang size.

The public Tiresias simulator (SymbioticLab/Tiresias at 959f9b0, ``simulator/run_sim.py``
``gandiva_sim_jobs``; ``simulator/cluster.py`` ``gandiva_placement``,
``gandiva_node_set_adjust`` / ``_expand`` / ``_shrink`` and ``time_slicing_execute``)
models Gandiva (Xiao et al., OSDI'18) as follows. Servers have :math:`G` GPUs each.

* **Node sets.** Jobs of gang size :math:`g \in \{1, 2, 4, 8, 12, 16, 24, 32, 64\}` (its
  *class*) live in node sets of :math:`n_g = \lceil g / G \rceil` whole servers, of
  capacity :math:`c_g = \lfloor n_g G / g \rfloor` concurrent jobs; a node set keeps an
  ordered job list and a load figure :math:`u` (the sum of its jobs' memory shares,
  all 1 at 959f9b0, rounded to 2 decimals; raised when a job joins, reset only when its
  class is re-balanced, never lowered at a completion).
* **Clock.** Steps of 10 s, cut short at the next arrival; at each step, in order:
  (1) *re-balance*: with :math:`D_g` = jobs of class g times g and :math:`D = \sum D_g`,
  class g aims at :math:`\min(\lfloor D_g / D \cdot N \rfloor, D_g)` GPUs (N the
  cluster's) and grows by :math:`\lceil \text{diff} / g \rceil` node sets taken from
  the free servers (first free first) or shrinks by as many (at most all but one,
  least loaded first, their jobs moved one by one onto the least loaded remaining set);
  after a growth the class's jobs are dealt again one by one onto the least loaded set
  (list order, stable sort); (2) *time slicing*: in each node set the first
  :math:`\min(c_g, |\text{jobs}|)` jobs ran during the step that ends now; a job whose
  work is done completes; when the clock is a multiple of 60 s (``int(t % 60) == 0``)
  and the set holds more jobs than it runs, its running jobs move to the end of its
  list; a set left empty returns its servers to the free list; (3) *arrivals*: a job
  joins the least loaded set of its class if :math:`u + 1 < c_g` (strict), else a new
  set on free servers, else (time sharing) the least loaded set after the first one
  tried moved to the end of the list; with no set of its class it waits; (4) when a set
  was released in (2), the waiting jobs are tried in order (a started job's successor
  in the list is skipped in that pass, as the original iterates a list it removes
  from).

Classes are visited in the order CPython 2.7 iterates the original's class dictionary
(:data:`CLASS_ORDER`), which decides which class gets free servers first.

Here the same state is kept by the policy and advanced at the same instants: the
simulator calls it at arrivals and completions and at the next step
(:meth:`GandivaPolicy.horizon`); a call between steps (a completion) changes nothing but
drops the finished job's placement (the original frees servers only at the next step).
The jobs a step runs are placed on their node set's servers (each job on :math:`g` GPUs
of its set's servers, exclusively: :math:`c_g g \le n_g G`), at their isolated speed.
The original's step credits whole steps and completes a job at the first step at or
after its work is done; here a job completes at the instant its work is done, at most
one step (10 s) earlier.

Scope. Memory shares are the original's (1 for every model at 959f9b0; below 1 the
original runs more jobs of a set than it has GPUs at full speed, which the core's
co-location does not express for more than two jobs). Every server must have the same
GPU count, one GPU type each; a heterogeneous cluster is taken as the original takes
servers (types are ignored when forming sets; a gang over servers of two types runs at
the slower type's rate), so every job must run on every type. A gang size outside the
classes is refused (the original exits).

Complexity per step: :math:`O(J \log J)` for J jobs in node sets (the load sorts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from optsched.core.schedule import Placement
from optsched.errors import ModelNotApplicable
from optsched.sim.policy import ClusterView

__all__ = ["GandivaPolicy", "CLASS_ORDER", "STEP", "SWITCH"]

#: Gang sizes with node sets, in the order CPython 2.7 iterates the original's
#: ``{1: .., 2: .., 4: .., 8: .., 12: .., 16: .., 24: .., 32: .., 64: ..}``.
CLASS_ORDER = (16, 1, 2, 4, 24, 32, 8, 64, 12)
#: The original's clock step (s).
STEP = 10.0
#: Time-slice period (s): running jobs rotate when ``int(t % SWITCH) == 0``.
SWITCH = 60
#: Memory share of every job (the original's ``models.m_mem`` at 959f9b0).
_SHARE = 1.0
#: Distance (s) below which a call is at a step of the clock (float noise of completion
#: times computed from rates).
_CLOCK_TOL = 1e-6


@dataclass
class _NodeSet:
    nodes: list[int]
    capacity: int
    util: float = 0.0
    jobs: list[str] = field(default_factory=list)

    def running(self) -> int:
        """How many leading jobs run: those whose shares add up to at most the capacity
        (at least one, as the original credits the first job before testing)."""
        total, k = 0.0, 0
        for _ in self.jobs:
            total += _SHARE
            if total > self.capacity:
                break
            k += 1
        return max(k, 1) if self.jobs else 0

    def add(self, job: str) -> None:
        self.util = round(self.util + round(_SHARE, 2), 2)
        self.jobs.append(job)


class GandivaPolicy:
    """Tiresias' ``gandiva`` scheduler (module docstring): node sets per gang size, 10 s
    steps, 60 s time slices.

    Parameters
    ----------
    name : str
        Name in results.
    """

    event_driven = True
    periodic = False
    needs_work = False

    def __init__(self, *, name: str = "tiresias_gandiva"):
        self.name = name
        self._per_node = 0
        self._types: list[str] = []
        self._names: list[str] = []
        self.reset()

    def check(self, instance) -> None:
        nodes = instance.cluster.nodes
        counts = set()
        for h, nd in enumerate(nodes):
            kinds = [t for t, c in nd.gpus.items() if c > 0]
            if len(kinds) != 1:
                raise ModelNotApplicable(f"cluster.nodes[{h}].gpus", dict(nd.gpus),
                                         "gandiva forms node sets of servers with one GPU "
                                         "type each")
            counts.add(nd.gpus[kinds[0]])
        if len(counts) != 1:
            raise ModelNotApplicable("cluster.nodes", sorted(counts), "gandiva needs the "
                                     "same GPU count on every server")
        per_node = counts.pop()
        types = sorted({t for nd in nodes for t, c in nd.gpus.items() if c > 0})
        for i, j in enumerate(instance.jobs):
            if j.workers not in CLASS_ORDER:
                raise ModelNotApplicable(f"jobs[{i}].workers", j.workers,
                                         f"gandiva has node sets for gangs of "
                                         f"{sorted(CLASS_ORDER)} GPUs")
            slow = [t for t in types if not j.rate(t) > 0]
            if slow:
                raise ModelNotApplicable(f"jobs[{i}].throughput", dict(j.throughput),
                                         f"gandiva places on any server; the job cannot "
                                         f"run on {slow}")
        self._per_node = per_node
        self._names = [nd.name for nd in nodes]
        self._types = [next(t for t, c in nd.gpus.items() if c > 0) for nd in nodes]
        self._n_gpus = per_node * len(nodes)

    def reset(self) -> None:
        self._free: list[int] = list(range(len(self._names)))
        self._sets: dict[int, list[_NodeSet]] = {g: [] for g in CLASS_ORDER}
        self._pending: list[str] = []
        self._seen: set[str] = set()
        self._workers: dict[str, int] = {}
        self._next: float | None = None
        self._anchor = 0.0
        self._out: list[Placement] = []
        self._started = False

    # ------------------------------------------------------------------ the step
    def allocate(self, view: ClusterView) -> list[Placement]:
        t = view.time
        visible = set(view.ids)
        new = [j for j in view.ids if j not in self._seen]
        if self._started and not new:
            steps = (t - self._anchor) / STEP
            if abs(steps - round(steps)) * STEP > _CLOCK_TOL:
                # between steps (a completion): the original holds its node sets until
                # the next step
                self._next = self._anchor + STEP * math.ceil(steps)
                return [p for p in self._out if p.job in visible]
            # the step's exact time: a completion computed in floating point may land
            # a hair before it, and the 60 s test reads whole seconds
            t = self._anchor + STEP * round(steps)
        for m, jid in enumerate(view.ids):
            self._workers.setdefault(jid, int(view.workers[m]))
        released = self._slice(t, visible) if self._started else False
        self._started = True
        if new:  # the original's clock jumps to an arrival and steps on from there
            self._anchor = t
        for jid in new:
            self._seen.add(jid)
            if not self._place(jid):
                self._pending.append(jid)
        if released:
            k = 0
            while k < len(self._pending):
                if self._place(self._pending[k]):
                    del self._pending[k]  # the original's loop then skips one job
                k += 1
        self._adjust()
        self._out = self._placements()
        self._next = None if self._quiet() else t + STEP
        return list(self._out)

    def horizon(self) -> float | None:
        """The next step of the clock that can change a decision: ``None`` when, until
        the next arrival or completion, every step leaves the node sets as they are."""
        return self._next

    def _state(self) -> tuple:
        return (tuple((g, tuple((tuple(ns.nodes), ns.capacity, ns.util, tuple(ns.jobs))
                                for ns in self._sets[g])) for g in CLASS_ORDER),
                tuple(self._free), tuple(self._pending))

    def _quiet(self) -> bool:
        """Whether a step without arrivals or completions changes nothing: no node set
        runs fewer jobs than it holds (so none rotates) and re-balancing is a no-op
        (tried on the state, then the state is put back). Steps are then skipped until
        the next event, which the original would have taken with the same result."""
        if any(len(ns.jobs) > ns.running() for g in CLASS_ORDER for ns in self._sets[g]):
            return False
        before = self._state()
        self._adjust()
        after = self._state()
        if after == before:
            return True
        self._sets = {g: [_NodeSet(list(n), c, u, list(js)) for n, c, u, js in sets]
                      for g, sets in before[0]}
        self._free, self._pending = list(before[1]), list(before[2])
        return False

    # ------------------------------------------------------------------ the rules
    def _slice(self, t: float, visible: set[str]) -> bool:
        """Step (2): completions, rotation, released node sets."""
        switch = int(t % SWITCH) == 0
        released = False
        for g in CLASS_ORDER:
            keep = []
            for ns in self._sets[g]:
                k = ns.running()
                ended = [j for j in ns.jobs[:k] if j not in visible]
                if switch and len(ns.jobs) > k:
                    ns.jobs = ns.jobs[k:] + ns.jobs[:k]
                for j in ended:
                    ns.jobs.remove(j)
                if ns.jobs:
                    keep.append(ns)
                else:
                    self._free.extend(ns.nodes)
                    released = True
            self._sets[g] = keep
        return released

    def _new_set(self, g: int) -> _NodeSet | None:
        need = math.ceil(g / self._per_node)
        if need > len(self._free):
            return None
        nodes, self._free = self._free[:need], self._free[need:]
        return _NodeSet(nodes, int(need * self._per_node / g))

    def _place(self, jid: str) -> bool:
        """Step (3) for one job (the original's ``gandiva_placement``)."""
        g = self._workers[jid]
        sets = self._sets[g]
        if sets:
            least = sets.pop(0)
            if round(least.util + round(_SHARE, 2), 2) < least.capacity:
                least.add(jid)
                sets.append(least)
                sets.sort(key=lambda s: s.util)
                return True
            sets.append(least)  # tried first, now last: not re-sorted
        fresh = self._new_set(g)
        if fresh is not None:
            fresh.add(jid)
            sets.append(fresh)
            sets.sort(key=lambda s: s.util)
            return True
        if sets:  # time sharing on the (now) first set
            ns = sets.pop(0)
            ns.add(jid)
            sets.append(ns)
            sets.sort(key=lambda s: s.util)
            return True
        return False

    def _deal(self, sets: list[_NodeSet], jobs: list[str]) -> None:
        for jid in jobs:
            sets[0].add(jid)
            sets.sort(key=lambda s: s.util)

    def _adjust(self) -> None:
        """Step (1), run for the next step: its input is the node sets as this step
        leaves them (the original runs it first thing in the next step)."""
        demand = {g: sum(len(ns.jobs) for ns in self._sets[g]) * g for g in CLASS_ORDER}
        held = {g: sum(len(ns.nodes) for ns in self._sets[g]) * self._per_node
                for g in CLASS_ORDER}
        total = sum(demand.values())
        if total == 0:
            return
        for g in CLASS_ORDER:
            if demand[g] == 0:
                continue
            plan = math.floor((demand[g] / total) * self._n_gpus)
            diff = min(plan, demand[g]) - held[g]
            if diff > 0:
                self._expand(g, math.ceil(diff / g))
            elif diff < 0:
                self._shrink(g, math.ceil(-diff / g))

    def _expand(self, g: int, count: int) -> None:
        sets = self._sets[g]
        need = math.ceil(g / self._per_node)
        last = 0
        for k in range(1, count + 1):
            last = k
            ns = self._new_set(g)
            if ns is not None:
                ns.util = 0.0
                sets.append(ns)
                # the original's inner loop over the new set's servers reuses the outer
                # loop variable, which decides below whether the jobs are dealt again
                last = need - 1
        if last > 0:
            jobs: list[str] = []
            for ns in sets:
                if ns.jobs:
                    jobs.extend(ns.jobs)
                    ns.jobs, ns.util = [], 0.0
            self._deal(sets, jobs)

    def _shrink(self, g: int, count: int) -> None:
        sets = self._sets[g]
        count = min(count, len(sets) - 1)
        jobs: list[str] = []
        for _ in range(count):
            ns = sets.pop(0)
            jobs.extend(ns.jobs)
            self._free.extend(ns.nodes)
        if count > 0:
            self._deal(sets, jobs)

    def _placements(self) -> list[Placement]:
        """The jobs each node set runs during the next step, on its servers."""
        out: list[Placement] = []
        per = self._per_node
        for g in CLASS_ORDER:
            for ns in self._sets[g]:
                free = {h: per for h in ns.nodes}
                for jid in ns.jobs[:ns.running()]:
                    left = g
                    for h in ns.nodes:
                        take = min(left, free[h])
                        if take:
                            out.append(Placement(jid, self._names[h], self._types[h], take))
                            free[h] -= take
                            left -= take
                        if not left:
                            break
        return out

    def stats(self) -> dict[str, Any]:
        return {"waiting": len(self._pending)}
