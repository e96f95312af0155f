r"""HadarE (and the Hadar replay) as a policy of the shared simulator.

:class:`HadarEPolicy` is a :class:`optsched.sim.Policy` that declares ``forking = True``
(``False`` for the Hadar replay) and ``consolidation`` :math:`\kappa` seconds. The shared
simulator (:mod:`optsched.sim.core`) checks each copy (1..:math:`W_j` GPUs on one node,
copies of a job on distinct nodes), adds the copies' rates
(:math:`\sum_c g_c \tau_{k_c}`, :func:`optsched.core.progress.gang_rate` per copy) and
completes a job :math:`\kappa` seconds after its work is done (it holds nothing
meanwhile); the schedule declares ``forking`` and ``consolidation`` for the validator.

Round grid. HadarE plans on Hadar's slot grid :math:`[s\Delta, (s+1)\Delta)` from time
0 (:mod:`optsched.hadar.model`), whereas the simulator's rounds start at the first
arrival. The policy is therefore *event-driven* and asks, through ``horizon()``, for a
decision at every slot boundary :math:`s\Delta`; it decides only there (steps 2-3 of
:mod:`optsched.hadare.online`) and at any other event (a completion, an arrival inside
a slot) repeats the slot's placements of the unfinished jobs, so the GPUs of a job that
finishes inside a slot stay idle until the next boundary -- the round-based semantics.

Admission. Hadar's primal-dual pass (:func:`optsched.hadar.online.run_online`) is given
to the policy: it treats jobs in arrival order and a job's plan only books slots
:math:`\ge a_j`, using nothing that arrives later, so computing it before the
simulation is equivalent to computing each job's plan when it arrives. The policy reads
job work (``needs_work``: Hadar's subroutine needs :math:`E_j`, the fill each job's
remaining work).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.hadar.model import DEFAULT_MAX_SLOTS, HadarModel
from optsched.hadar.online import DEFAULT_QUANTA, OnlineRun, online_model, run_online
from optsched.hadare.online import _fill, online
from optsched.sim.policy import ClusterView, Placement

__all__ = ["HadarEPolicy", "simulate_hadare", "simulate_pair"]

_EPS = 1e-9


class HadarEPolicy:
    """HadarE's rounds (``forking=True``) or Hadar's plans replayed (``forking=False``).

    ``model``, ``run``: :func:`~optsched.hadar.model.build_model` of the instance and
    :func:`~optsched.hadar.online.run_online` over it; ``F``: max copies per job (default
    as many as nodes); ``kappa``: consolidation seconds. ``stats()``: GPU-rounds given to
    main copies, to fills and released, the most copies a job used, the rounds and the
    idle GPUs per round.
    """

    event_driven = True
    needs_work = True
    sharing = False
    resource_sensitive = False

    def __init__(self, model: HadarModel, run: OnlineRun, *, forking: bool = True,
                 F: np.ndarray | None = None, kappa: float = 0.0):
        self.model, self.prices = model, run.prices
        self.forking = bool(forking)
        self.consolidation = float(kappa)
        self.name = "hadare" if forking else "hadar-replay"
        H = len(model.instance.cluster.nodes)
        self.F = np.full(model.n_jobs, H, dtype=np.int64) if F is None else F
        self.by_slot: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for j, pl in run.plans.items():
            for t, b, g in zip(pl.slots.tolist(), pl.buckets.tolist(), pl.gpus.tolist()):
                self.by_slot[t].append((j, b, g))
        inst = model.instance
        self.admitted = sorted(run.plans, key=lambda j: (inst.jobs[j].arrival, j))
        self.admitted_ids = [inst.jobs[j].id for j in self.admitted]
        self.reset()

    def reset(self) -> None:
        self.round = -1
        self.current: list[Placement] = []
        self.wake: float | None = None
        self.seen: set[str] = set()
        self.fill_gpu_rounds = self.main_gpu_rounds = self.released_gpu_rounds = 0
        self.max_copies_used = 0
        self.rounds = 0
        self.per_round_idle: list[int] = []

    def horizon(self) -> float | None:
        return self.wake

    def stats(self) -> dict[str, Any]:
        return {"fill_gpu_rounds": self.fill_gpu_rounds, "main_gpu_rounds": self.main_gpu_rounds,
                "released_gpu_rounds": self.released_gpu_rounds,
                "max_copies_used": self.max_copies_used, "rounds": self.rounds,
                "per_round_idle": list(self.per_round_idle)}

    def allocate(self, view: ClusterView) -> list[Placement]:
        m = self.model
        d, t = m.delta, view.time
        live = view.position
        self.seen.update(view.ids)
        k = math.floor(t / d + _EPS)
        on_boundary = abs(t - k * d) <= _EPS * max(1.0, abs(t))
        if any(jid not in self.seen or jid in live for jid in self.admitted_ids):
            self.wake = (k + 1) * d
        else:  # every admitted job is done: nothing happens until the horizon
            self.wake = m.T * d
        if not on_boundary or k == self.round or k >= m.T:
            self.current = [p for p in self.current if p.job_id in live]
            return self.current
        self.round = s = k
        self.current = self._decide(view, s)
        return self.current

    def _decide(self, view: ClusterView, s: int) -> list[Placement]:
        """Steps 2-3 of :mod:`optsched.hadare.online` for slot ``s``."""
        m = self.model
        inst = m.instance
        nodes, types = inst.cluster.nodes, inst.cluster.gpu_types
        bn, bt, rates = m.bucket_node, m.bucket_type, m.rates
        rem = np.zeros(m.n_jobs)
        remaining = view.remaining
        for r, i in enumerate(view.index.tolist()):
            rem[i] = remaining[r]
        eligible = [j for j in self.admitted if m.a[j] <= s and rem[j] > 0]
        if eligible:
            self.rounds = s + 1
        idle = m.bucket_cap.astype(np.int64).copy()
        pieces: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for j, b, g in self.by_slot.get(s, ()):
            if rem[j] > 0:
                pieces[j].append((b, g))
            else:
                self.released_gpu_rounds += g
        copies: dict[int, dict[int, list[int]]] = {}  # j -> node -> [bucket, gpus]
        out: list[Placement] = []
        for j, ps in pieces.items():
            if not self.forking:
                for b, g in ps:
                    idle[b] -= g
                    out.append(Placement(inst.jobs[j].id, nodes[bn[b]].name, types[bt[b]],
                                         int(g)))
                self.main_gpu_rounds += sum(g for _, g in ps)
                self.max_copies_used = max(self.max_copies_used, len(ps))
                continue
            best: dict[int, tuple[int, int]] = {}
            for b, g in ps:
                h = int(bn[b])
                if h not in best or g * rates[j, bt[b]] > best[h][1] * rates[j, bt[best[h][0]]]:
                    best[h] = (b, g)
            keep = sorted(best.items(), key=lambda kv: -kv[1][1] * rates[j, bt[kv[1][0]]])
            keep = keep[:int(self.F[j])]
            copies[j] = {h: [b, g] for h, (b, g) in keep}
            for _, (b, g) in keep:
                idle[b] -= g
                self.main_gpu_rounds += g
            self.released_gpu_rounds += sum(g for _, g in ps) - sum(g for _, (_, g) in keep)
        if self.forking and eligible and idle.any():
            p = self.prices.p
            self.fill_gpu_rounds += _fill(m, s, eligible, copies, idle, rem, self.F,
                                          p[s] if s < p.shape[0] else None)
        self.per_round_idle.append(int(idle.sum()))
        for j, cp in copies.items():
            self.max_copies_used = max(self.max_copies_used, len(cp))
            for h, (b, g) in cp.items():
                out.append(Placement(inst.jobs[j].id, nodes[h].name, types[bt[b]], int(g),
                                     copy=h))
        return out


def simulate_hadare(instance: Instance, *, forking: bool = True, **options: Any) -> Result:
    """HadarE (``forking=True``) or Hadar (``forking=False``) with exact completion
    instants (``completion="exact"``); ``objective`` is the mean JCT of completed jobs,
    as :func:`optsched.sim.simulate` reports. Other options as
    :func:`optsched.hadare.online.online`."""
    options.setdefault("completion", "exact")
    if "slots" not in options:  # simulate in the instance's own rounds, to completion
        options.setdefault("slot", instance.slot)
    res = online(instance, forking=forking, **options)
    m = res.metrics
    return res.replace(model="simulate", method="hadare" if forking else "hadar",
                       objective=m.mean_jct if m is not None else None,
                       extra={**res.extra, "utility": res.objective})


def simulate_pair(instance: Instance, *, slots: int | None = None, slot: float | None = None,
                  max_slots: int = DEFAULT_MAX_SLOTS, quanta: int = DEFAULT_QUANTA,
                  U: Any = None, L: float | None = None,
                  **options: Any) -> tuple[Result, Result]:
    """``(HadarE, Hadar)`` as :func:`simulate_hadare` would give them, sharing one pass of
    Hadar's admission (identical by construction; half the work on long traces)."""
    model = online_model(instance, slot, slots, max_slots, quanta)
    hr = run_online(model, quanta=quanta, U=U, L=L)
    return (simulate_hadare(instance, forking=True, hadar_run=hr, **options),
            simulate_hadare(instance, forking=False, hadar_run=hr, **options))
