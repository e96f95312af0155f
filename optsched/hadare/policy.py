r"""HadarE (and the Hadar replay) as a policy of the shared simulator.

:class:`HadarEPolicy` is a :class:`optsched.sim.Policy` that declares ``forking = True``
(``False`` for the Hadar replay) and ``consolidation`` :math:`\kappa` seconds. The shared
simulator (:mod:`optsched.sim.simulator`) checks each copy (1..:math:`W_j` GPUs on one node,
copies of a job on distinct nodes), adds the copies' rates
(:math:`\sum_c g_c \tau_{k_c}`, :func:`optsched.core.progress.gang_rate` per copy) and
completes a job :math:`\kappa` seconds after its work is done (it holds nothing
meanwhile); the schedule declares ``forking`` and ``consolidation`` for the validator.

Round grid. HadarE plans on Hadar's slot grid :math:`[s\Delta, (s+1)\Delta)` from time
0 (:mod:`optsched.hadar.model`), whereas the simulator's rounds start at the first
arrival. The policy is therefore *event-driven* and asks, through ``horizon()``, for a
decision at every slot boundary :math:`s\Delta`; it decides only there (steps 2-3 of
:mod:`optsched.hadare.heuristics`) and at any other event (a completion, an arrival inside
a slot) repeats the slot's placements of the unfinished jobs, so the GPUs of a job that
finishes inside a slot stay idle until the next boundary -- the round-based semantics.

Copy efficiency. With ``efficiency`` :math:`e < 1` each job's *main* copy of the round
(largest rate :math:`g\tau_k`, then lowest node index) counts in full and every other copy
at :math:`e` of its rate. The shared simulator credits every copy in full, so the policy
runs the other copies only for the last :math:`e\Delta` of the round (a decision
instant it asks for through ``horizon()``): each copy's progress over the round, hence the
progress at every round boundary and every completion slot, is exactly the efficiency
model's; within a round progress is back-loaded (piecewise linear, convex, equal to the
model's at both ends), so it never runs ahead of the model's and no completion is
earlier than the model allows (a completion inside a round can be later, by less than a
round). The GPU-seconds the other copies' GPUs wait at the start of a round are reported
as ``cut_gpu_seconds`` (the simulator counts them as idle). The validator has the exact
rule for schedules that declare ``Schedule.copy_efficiency`` (the exact MILP's, which
hold every copy for whole slots); this policy's schedules declare 1, and their
back-loaded intervals carry the efficiency instead.

Admission. Hadar's primal-dual pass (:func:`optsched.hadar.heuristics.run_online`) is given
to the policy: it treats jobs in arrival order and a job's plan only books slots
:math:`\ge a_j`, using nothing that arrives later, so computing it before the
simulation is equivalent to computing each job's plan when it arrives. The policy reads
job work (``needs_work``: Hadar's subroutine needs :math:`E_j`, the fill each job's
remaining work).

Runs. :func:`run_hadare` executes the method :func:`optsched.hadare.heuristics.online`
(admission, this policy over the planning grid, the total utility);
:func:`simulate_hadare` reports the same run as a simulation (exact completion instants,
mean JCT) and :func:`simulate_pair` gives HadarE and the Hadar replay from one admission
pass.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize
from optsched.core.schedule import Placement, Schedule
from optsched.errors import InvalidOption
from optsched.hadar.heuristics import DEFAULT_QUANTA, OnlineRun, online_model, run_online
from optsched.hadar.model import DEFAULT_MAX_SLOTS, HadarModel
from optsched.hadare.model import consolidation_seconds, max_copies_of
from optsched.options import declares
from optsched.sim.policy import ClusterView
from optsched.sim.simulator import simulate

__all__ = ["HadarEPolicy", "fill_idle_gpus", "run_hadare", "simulate_hadare", "simulate_pair"]

_EPS = 1e-9


class HadarEPolicy:
    """HadarE's rounds (``forking=True``) or Hadar's plans replayed (``forking=False``).

    ``model``, ``run``: :func:`~optsched.hadar.model.build_model` of the instance and
    :func:`~optsched.hadar.heuristics.run_online` over it; ``F``: max copies per job (default
    as many as nodes); ``kappa``: consolidation seconds. ``stats()``: GPU-rounds given to
    main copies, to fills and released, the most copies a job used, the rounds and the
    idle GPUs per round.
    """

    event_driven = True
    needs_work = True
    sharing = False
    resource_sensitive = False

    def __init__(self, model: HadarModel, run: OnlineRun, *, forking: bool = True,
                 F: np.ndarray | None = None, kappa: float = 0.0, efficiency: float = 1.0):
        self.model, self.prices = model, run.prices
        self.forking = bool(forking)
        self.efficiency = float(efficiency)
        self.full: list[Placement] = []
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
        self._admitted_rank = {j: r for r, j in enumerate(self.admitted)}
        self.reset()

    def reset(self) -> None:
        self.round = -1
        self.current: list[Placement] = []
        self.wake: float | None = None
        self.fill_gpu_rounds = self.main_gpu_rounds = self.released_gpu_rounds = 0
        self.max_copies_used = 0
        self.rounds = 0
        self.per_round_idle: list[int] = []
        self.extra: set[tuple[str, int]] = set()  # (job, copy) cut at the round's cut
        self.cut: float | None = None
        self.cut_gpu_seconds = 0.0
        self.extra_gpu_rounds = 0
        # the admitted jobs not known to be done (seen, then gone from the view), kept by
        # what changed so that a call costs O(visible jobs), not O(admitted)
        self._open: set[str] = set(self.admitted_ids)
        self._live_before: set[str] = set()
        self._rem = np.zeros(self.model.n_jobs)
        self._rem_rows = np.zeros(0, dtype=np.int64)

    def horizon(self) -> float | None:
        return self.wake

    def stats(self) -> dict[str, Any]:
        return {"fill_gpu_rounds": self.fill_gpu_rounds, "main_gpu_rounds": self.main_gpu_rounds,
                "released_gpu_rounds": self.released_gpu_rounds,
                "max_copies_used": self.max_copies_used, "rounds": self.rounds,
                "per_round_idle": list(self.per_round_idle),
                "extra_copy_gpu_rounds": self.extra_gpu_rounds,
                "cut_gpu_seconds": self.cut_gpu_seconds}

    def allocate(self, view: ClusterView) -> list[Placement]:
        m = self.model
        d, t = m.delta, view.time
        live = view.position
        k = math.floor(t / d + _EPS)
        on_boundary = abs(t - k * d) <= _EPS * max(1.0, abs(t))
        self._open.difference_update([j for j in self._live_before if j not in live])
        self._live_before = set(live)
        if self._open:  # an admitted job has not arrived yet or is still running
            self.wake = (k + 1) * d
        else:  # every admitted job is done: nothing happens until the horizon
            self.wake = m.T * d
        if not on_boundary or k == self.round or k >= m.T:
            self.current = [p for p in self.current if p.job in live]
            if self.cut is not None and t >= self.cut - _EPS * max(1.0, abs(t)):
                # copy efficiency: the extra copies join for the last e of the round
                start = self.round * d
                self.current = [p for p in self.full if p.job in live]
                for p in self.current:
                    if (p.job, p.copy) in self.extra:
                        self.cut_gpu_seconds += p.gpus * (t - start)
                self.cut = None
            elif self.cut is not None:
                self.wake = min(self.wake, self.cut)
            return self.current
        self.round = s = k
        self.current = self.full = self._decide(view, s)
        self.cut = None
        if self.efficiency < 1.0 and self.extra:
            # back-loaded: the main copies run the whole round, the others only its last
            # e, so progress inside a round never runs ahead of the efficiency model's
            self.current = [p for p in self.full if (p.job, p.copy) not in self.extra]
            self.cut = s * d + (1.0 - self.efficiency) * d
            self.wake = min(self.wake, self.cut)
        return self.current

    def _decide(self, view: ClusterView, s: int) -> list[Placement]:
        """Steps 2-3 of :mod:`optsched.hadare.heuristics` for slot ``s``."""
        m = self.model
        inst = m.instance
        nodes, types = inst.cluster.nodes, inst.cluster.gpu_types
        bn, bt, rates = m.bucket_node, m.bucket_type, m.rates
        # remaining work per instance job, 0 for the jobs not visible
        rem = self._rem
        rem[self._rem_rows] = 0.0
        rem[view.index] = view.remaining
        self._rem_rows = view.index
        # the visible admitted jobs that may run in slot s, in admission order
        rank = self._admitted_rank
        eligible = sorted((j for j in view.index.tolist()
                           if j in rank and m.a[j] <= s and rem[j] > 0), key=rank.__getitem__)
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
            self.fill_gpu_rounds += fill_idle_gpus(m, s, eligible, copies, idle, rem, self.F,
                                                   p[s] if s < p.shape[0] else None,
                                                   self.efficiency)
        self.per_round_idle.append(int(idle.sum()))
        self.extra = set()
        for j, cp in copies.items():
            self.max_copies_used = max(self.max_copies_used, len(cp))
            # the main copy (largest rate, then lowest node) counts in full, the others at
            # the copy efficiency
            main = min(cp, key=lambda h: (-cp[h][1] * rates[j, bt[cp[h][0]]], h))
            for h, (b, g) in cp.items():
                out.append(Placement(inst.jobs[j].id, nodes[h].name, types[bt[b]], int(g),
                                     copy=h))
                if h != main:
                    self.extra.add((inst.jobs[j].id, h))
                    self.extra_gpu_rounds += int(g)
        return out


def fill_idle_gpus(model: HadarModel, s: int, eligible: list[int],
                   copies: dict[int, dict[int, list]], idle: np.ndarray, rem: np.ndarray,
                   F: np.ndarray, price: np.ndarray | None, efficiency: float = 1.0) -> int:
    """Step 3 of :mod:`optsched.hadare.heuristics` (the fill): every idle GPU offered to a
    copy of an eligible job, best marginal progress per price first (a GPU of a job that
    already has a copy counts at the copy ``efficiency``); mutates ``copies`` and
    ``idle``; returns the GPUs given."""
    d = model.delta
    bn, bt = model.bucket_node, model.bucket_type
    H = len(model.instance.cluster.nodes)
    E = np.array(eligible, dtype=np.int64)
    nE, B = E.size, bn.size
    tau = model.rates[E][:, bt]  # nE x B
    p = np.full(B, 1.0) if price is None else np.asarray(price, dtype=float)
    # a price that over- or underflowed (degenerate U/L) ranks last, never NaN
    p = np.where(np.isnan(p), np.inf, np.maximum(p, np.finfo(float).tiny))
    Wv = model.W[E]
    cb = np.full((nE, H), -1, dtype=np.int64)
    cg = np.zeros((nE, H), dtype=np.int64)
    R = np.zeros(nE)
    for e, j in enumerate(eligible):
        rs = sorted((g * model.rates[j, bt[b]] for b, g in copies.get(j, {}).values()),
                    reverse=True)
        R[e] = sum(rs[:1]) + efficiency * sum(rs[1:])
        for h, (b, g) in copies.get(j, {}).items():
            cb[e, h], cg[e, h] = b, g
    ncop = (cb >= 0).sum(axis=1)
    Fv = F[E]
    given = 0
    barange = np.arange(B)
    remE = rem[E]
    # the marginal progress per price of every (job, bucket), -inf where the job may not
    # take the bucket's GPUs, kept up to date: a grant changes only its job's row (its
    # rate, copies and need) and, when it empties the bucket, the bucket's column
    cbn, cgn = cb[:, bn], cg[:, bn]  # nE x B: the job's copy on the bucket's node
    ok = (tau > 0) & (idle[None, :] > 0) & (
        ((cbn < 0) & (ncop < Fv)[:, None])
        | ((cbn == barange[None, :]) & (cgn < Wv[:, None])))
    need = np.maximum(0.0, remE - R * d)
    eff_all = np.where(ncop > 0, efficiency, 1.0)[:, None] * tau  # effective rates
    with np.errstate(over="ignore"):
        mp = np.where(ok, np.minimum(eff_all * d, need[:, None]) / p[None, :], -np.inf)
        tp = tau / p[None, :]
    while True:
        # where a job may take a bucket, mp >= 0; elsewhere -inf: no pair left is -inf
        top = mp.max()
        if top == -np.inf:
            return given
        # a price at the floor makes the ratio +inf: such buckets tie at the top and the
        # tolerance must not turn into inf - inf
        tol = 1e-12 * max(1.0, abs(top)) if np.isfinite(top) else 0.0
        with np.errstate(over="ignore"):
            sec = np.where(mp >= top - tol, tp, -np.inf)
        e, b = (int(v) for v in np.unravel_index(int(np.argmax(sec)), sec.shape))
        if not ok[e, b]:  # pragma: no cover - guarded by the cand mask
            e, b = np.argwhere(ok)[0]
        h = int(bn[b])
        eff_eb = (efficiency if ncop[e] > 0 else 1.0) * tau[e, b]
        room = int(Wv[e] - cg[e, h]) if cb[e, h] >= 0 else int(Wv[e])
        g = min(int(idle[b]), room)
        if need[e] > 0:
            g = min(g, max(1, math.ceil(need[e] / (eff_eb * d) - _EPS)))
        R[e] += g * eff_eb
        if cb[e, h] < 0:
            cb[e, h] = b
            ncop[e] += 1
        cg[e, h] += g
        idle[b] -= g
        given += g
        j = int(E[e])
        copies.setdefault(j, {})[h] = [int(b), int(cg[e, h])]
        if idle[b] <= 0:
            ok[:, b] = False
            mp[:, b] = -np.inf
        cbn_e, cgn_e = cb[e, bn], cg[e, bn]
        ok[e] = (tau[e] > 0) & (idle > 0) & (
            ((cbn_e < 0) & (ncop[e] < Fv[e])) | ((cbn_e == barange) & (cgn_e < Wv[e])))
        need[e] = max(0.0, remE[e] - R[e] * d)
        eff_e = (efficiency if ncop[e] > 0 else 1.0) * tau[e]
        with np.errstate(over="ignore"):
            mp[e] = np.where(ok[e], np.minimum(eff_e * d, need[e]) / p, -np.inf)


@declares()
def run_hadare(instance: Instance, *, slots: int | None = None, slot: float | None = None,
               max_slots: int = DEFAULT_MAX_SLOTS, quanta: int = DEFAULT_QUANTA,
               U: Any = None, L: float | None = None, consolidation: Any = None,
               consolidation_slots: Any = None, max_copies: Any = None,
               forking: bool = True, completion: str = "slot",
               copy_efficiency: float = 1.0, hadar_run: OnlineRun | None = None) -> Result:
    """HadarE online executed in the shared simulator: Hadar's admission pass (or
    ``hadar_run``), :class:`HadarEPolicy` over the planning grid's ``T`` slots, the
    completions moved to the end of their slot (``completion="slot"``) and the total
    utility. The method :func:`optsched.hadare.heuristics.online` (which states the
    options, the guarantee and the complexity) and :func:`simulate_hadare` run it."""
    if not isinstance(forking, bool):
        raise InvalidOption("forking", forking, "must be True or False")
    t0 = time.perf_counter()
    hr = _admission(instance, slot, slots, max_slots, quanta, U, L, hadar_run)
    model = hr.model
    plan = model.instance  # the instance on the planning grid
    kappa = consolidation_seconds(plan, consolidation, consolidation_slots)
    F = max_copies_of(plan, max_copies)
    if completion not in ("slot", "exact"):
        raise InvalidOption("completion", completion, "must be 'slot' or 'exact'")
    e = copy_efficiency
    if isinstance(e, bool) or not isinstance(e, (int, float)) or not 0 < e <= 1:
        raise InvalidOption("copy_efficiency", e, "must be a number in (0, 1]")
    policy = HadarEPolicy(model, hr, forking=forking, F=F, kappa=kappa, efficiency=float(e))
    d = model.delta
    sim = simulate(plan, policy, max_time=model.T * d, progress=False)
    assert sim.schedule is not None  # the simulator always returns its schedule
    done_at = {jid: c - kappa for jid, c in sim.schedule.completion.items()}
    if completion == "exact":
        comp = dict(sim.schedule.completion)
    else:  # the end of the slot in which the work was done, plus the consolidation
        comp = {jid: math.ceil(t / d - _EPS) * d + kappa for jid, t in done_at.items()}
    schedule = Schedule(sim.schedule.allocations, comp, forking=forking, consolidation=kappa)
    st = policy.stats()
    admitted = policy.admitted_ids
    seconds = time.perf_counter() - t0
    jobs = {j.id: j for j in instance.jobs}
    P = float(sum(jobs[jid].value(c - jobs[jid].arrival) for jid, c in comp.items()))
    hadar_P = float(sum(model.values[j, pl.t_hat] for j, pl in hr.plans.items()))
    extra = {"slots": model.T, "slot": d, "quanta": hr.quanta, "admitted": admitted,
             "n_admitted": len(admitted), "rejected": model.n_jobs - len(admitted),
             "hadar_P": hadar_P, "consolidation": kappa, "forking": forking,
             "completion_mode": completion, "copy_efficiency": float(e), **{k: st[k] for k in (
                 "fill_gpu_rounds", "main_gpu_rounds", "released_gpu_rounds",
                 "max_copies_used", "rounds", "extra_copy_gpu_rounds", "cut_gpu_seconds")},
             "done_at": done_at, "hadar_seconds": hr.seconds,
             "round_seconds": sim.extra["simulation_seconds"],
             "epochs": sim.extra["epochs"]}
    left = [j.id for j in instance.jobs if j.id not in comp]
    if left:
        extra["unfinished_reason"] = _unfinished_reason(left, admitted, model.T, d)
    return finalize(instance, schedule, status=Status.FEASIBLE, objective=P,
                    model="hadare", method="online" if forking else "hadar-replay",
                    solver="hadar-primal-dual+fork", solve_seconds=seconds,
                    ratio_note="no competitive ratio is proved for HadarE (Hadar's 2*alpha "
                               "concerns Hadar's own admitted set and plans)",
                    extra=extra)


def _admission(instance: Instance, slot: float | None, slots: int | None, max_slots: int,
               quanta: int, U: Any, L: float | None, hadar_run: OnlineRun | None
               ) -> OnlineRun:
    """Hadar's admission pass on the planning grid, or ``hadar_run`` when it is one of
    this instance."""
    if hadar_run is None:
        model = online_model(instance, slot, slots, max_slots, quanta)
        return run_online(model, quanta=quanta, U=U, L=L)
    if not isinstance(hadar_run, OnlineRun) or \
            hadar_run.model.instance.jobs is not instance.jobs:
        raise InvalidOption("hadar_run", type(hadar_run).__name__,
                            "must be run_online(build_model(...)) of this instance")
    return hadar_run


def _unfinished_reason(left: list[str], admitted: list[str], T: int, d: float) -> str:
    """Why jobs are missing from the schedule: rejected, or not done within T slots."""
    never = sorted(set(left) - set(admitted))
    return "; ".join(filter(None, [
        f"{len(never)} rejected by Hadar's admission (HadarE runs admitted jobs only)"
        if never else "",
        f"{len(left) - len(never)} admitted but not done by the last of the {T} "
        f"slots of {d:g} s" if len(left) > len(never) else ""]))


def simulate_hadare(instance: Instance, *, forking: bool = True, **options: Any) -> Result:
    """HadarE (``forking=True``) or Hadar (``forking=False``) with exact completion
    instants (``completion="exact"``); ``objective`` is the mean JCT of completed jobs,
    as :func:`optsched.sim.simulate` reports. Other options as
    :func:`optsched.hadare.heuristics.online`."""
    options.setdefault("completion", "exact")
    if "slots" not in options:  # simulate in the instance's own rounds, to completion
        options.setdefault("slot", instance.slot)
    res = run_hadare(instance, forking=forking, **options)
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
