r"""Synergy over many rounds: :class:`SynergyPolicy` in the shared simulator.

:class:`SynergyPolicy` is a :class:`optsched.sim.Policy` that declares
``resource_sensitive = True``: its placements carry CPU cores and DRAM, and the shared
simulator (:mod:`optsched.sim.simulator`) runs each gang at its throughput times the job's
sensitivity at the allocation's per-GPU cores and memory -- the rule the validator
checks (:func:`optsched.core.progress.gang_rate`). Round mechanics are the simulator's:

* rounds of ``instance.slot`` seconds (300 s for :func:`~optsched.synergy.synergy_workload`);
  a job arriving inside a round waits for the next boundary; when nothing is queued or
  running the clock jumps to the next arrival;
* at each boundary the arrived, unfinished jobs are sorted by the policy's order and the
  round allocator (:func:`~optsched.synergy.prepare` + ``tune`` / ``greedy`` /
  ``proportional``) admits and places them (:mod:`optsched.synergy.heuristics`); a job
  on :math:`k` GPUs of a server gets :math:`k c_j` cores and :math:`k m_j` GB there;
* a placed job progresses at :math:`g_j r_j T_j(c_j, m_j)` iterations/s; if its remaining
  work runs out inside the round it completes at that instant and its resources stay
  idle for the rest of the round.

Orders (Synergy ``schedulers/*_synergy_new.py``; ties by arrival, then instance index):

* ``fifo``: arrival time;
* ``srtf``: least remaining time first (clairvoyant). The remaining time is
  :math:`\text{rem}_j / (g_j r_j s_j)` at the speed :math:`s_j` Synergy assumes
  (``Job.remaining_duration(fair)``): the fair throughput :math:`T^f_j` under
  ``proportional``; under ``tune`` and ``greedy`` (``fair=False``) the job's best-case
  throughput (TUNE's comparable best case, GREEDY's snapped best case), or the relative
  throughput it ran at in the previous round if it ran then (a job TUNE cut to the fair
  share ranks at the fair share the next round: Synergy resets ``synergy_speedup`` to 1
  there and restores it only after sorting). ``remaining_at="fair"`` ranks every
  allocator by :math:`\text{rem}_j / (g_j r_j)`, the remaining time at the fair share
  (allocator-independent);
* ``las``: attained service :math:`g_j \times` seconds run, least first;
* ``ftf``: finish-time fairness :math:`\rho_j = (t - a_j + \text{rem}_j/(g_j r_j)) /
  (E_j / (g_j r_j))`, largest first (Themis; clairvoyant). Synergy's
  ``ftf_synergy_new.py`` sorts the same ratio ascending (smallest first); this order
  follows Themis, not that file.
* ``drf`` (Synergy ``schedulers/drf.py``; the DRF baseline of OSDI'22 §6): smallest
  dominant share first, where the share is the job's *demand* vector over the whole
  cluster's capacity, :math:`d_j = \max(g_j / G,\ g_j b^c_j / C,\ g_j b^m_j / M)`
  with :math:`(b^c_j, b^m_j)` the declared best-case cores and GB per GPU (the fair
  share for a job without a sensitivity) and :math:`G, C, M` the cluster totals. The
  original computes it from the demand, not from what the job holds, so the order is
  static: the job that asks for the smallest share of its dominant resource goes first.
* ``tetris`` (Synergy ``schedulers/tetris.py``; the Tetris baseline of OSDI'22 §6):
  smallest remaining-duration-weighted demand first,
  :math:`\tau_j \cdot (g_j / G + g_j b^c_j / C + g_j b^m_j / M)`, with :math:`\tau_j`
  the remaining time of ``srtf`` (same speed estimate, ``remaining_at``). This is the
  original's packing score; Tetris' alignment (dot product with the free resources of
  a machine) is not part of it;
* ``srsf`` (Synergy ``schedulers/srsf.py``; Tiresias' shortest-remaining-service
  first): least remaining GPU-time at the fair share first,
  :math:`\text{rem}_j / r_j = g_j \cdot \text{rem}_j / (g_j r_j)` (clairvoyant). On
  single-GPU jobs it is ``srtf``'s order at the fair share. The original class does not
  run: ``Runner`` passes it ``fair``/``tune``/``opt``/``simulate``, which its constructor
  does not take (``TypeError``); were that fixed, it calls ``cluster.allocate`` with the
  default ``fair=True, tune=False`` (the GPU-proportional allocation), so
  ``synergy.srsf`` defaults to ``proportional``.

**Allocators.** ``tune``, ``greedy`` and ``proportional`` are the round heuristics of
:mod:`optsched.synergy.heuristics`. ``opt`` solves Synergy-OPT
(:func:`~optsched.synergy.exact.two_step`, OSDI'22 §4.1) on every round's admitted
jobs through the solver layer (``backend``, ``time_limit`` seconds per round, default
:data:`OPT_TIME_LIMIT`): step 1 picks every job's configuration on the cluster as one
machine, step 2 places them and drops a job it cannot place to the exact fair share.
Each round's status (``optimal``, ``feasible``: step 2 fell short of step 1's bound,
``time_limit``) is counted in ``stats()["opt_status"]``; a round where a step returns
no solution at all is allocated by ``proportional`` and counted in
``opt_failed_rounds`` (never silently). Synergy's own in-run OPT (``*_synergy_new.py``
with ``opt=True``) solves the same step 1 with GLPK over the profile grid and
credits every job its step-1 throughput without enforcing step 2's placement (a
fractional feasibility LP it only prints); here the schedule must pass the per-server
validator, so a job step 2 cannot place runs at the fair share. Synergy's ``drf.py``
and ``tetris.py`` build that solver with the GPU count per server as cores and GB
(``cpu_per_server=per_server_size[0]``), so ``DRF+opt`` and ``TETRIS+opt`` have no
fair-share cell in the profile and raise there; ``opt`` under ``drf``/``tetris`` here
uses the real capacities. Under ``srtf`` and ``tetris`` an ``opt`` job is ranked at
its best-case speed: Synergy's OPT never changes ``synergy_speedup``.

**Placement-sensitive mode** (``place=True``, Synergy's ``+place`` schedulers): the
heuristic allocators place each job by
:func:`~optsched.synergy.heuristics.packed_fit` (a gang whole on the server with the
fewest free GPUs that holds it, else GPU by GPU from the fullest servers) instead of
first fit. Synergy's placement penalty for a gang spread over servers is not modelled
(as in first-fit mode), so placement changes which jobs fit, not their speed.

**Starvation guard** (every order but ``fifo``; ``starvation`` seconds, default
1000 h): Synergy's SRTF, LAS, FTF, DRF, TETRIS and SRSF schedulers sort by
``(-job_priority, key, arrival)`` and set ``job_priority = 1`` for good once a job has
gone more than 1000 h without running (``get_time_since_last_execution``: since the
end of its last round, or since its arrival). The check runs after the round's sort,
so a job flagged at one boundary is put ahead from the next one; flagged jobs are
ordered among themselves by the same key. Without it a long job waits under SRTF for
as long as shorter jobs keep arriving (for a continuous stream: until the stream ends).
``starvation=None`` turns the guard off (the pure order). Synergy's FIFO sorts by
arrival alone, so FIFO has no guard.

The schedule (GPU, CPU and DRAM per server, ``resource_sensitive``) is validated by
:func:`~optsched.core.result.finalize` against the real instance: the validator credits
each allocation with the sensitivity-scaled progress, so every completion is checked
against the job's real work. ``Result.objective`` is the mean JCT (s) of completed jobs.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import replace

import numpy as np

from optsched.core.instance import Instance, Job, Sensitivity
from optsched.core.result import Result, Status
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.sim.policy import ClusterView
from optsched.sim.simulator import simulate
from optsched.synergy.exact import two_step_solve
from optsched.synergy.heuristics import allocate
from optsched.synergy.model import _homogeneous, prepare, round_points

__all__ = ["simulate_synergy", "SynergyPolicy", "runner", "order_runner", "ORDERS",
           "ALLOCATORS", "REMAINING_AT", "STARVATION", "OPT_TIME_LIMIT"]

ORDERS = ("fifo", "srtf", "las", "ftf", "drf", "tetris", "srsf")
ALLOCATORS = ("tune", "greedy", "proportional", "opt")
#: the remaining-time estimates ``srtf`` and ``tetris`` can rank by (module docstring)
REMAINING_AT = ("allocator", "fair")
#: Synergy's starvation threshold: 1000 h without running (module docstring)
STARVATION = 1000 * 3600.0
#: default seconds per round for the ``opt`` allocator's two ILPs together
OPT_TIME_LIMIT = 10.0
_GUARDED = ("srtf", "las", "ftf", "drf", "tetris", "srsf")
_TIMED = ("srtf", "tetris")  # orders that rank by an estimated remaining time


class SynergyPolicy:
    """Synergy's round allocator ``allocator`` under job order ``order`` (module docstring).

    Parameters
    ----------
    allocator : {"tune", "greedy", "proportional", "opt"}
    order : {"fifo", "srtf", "las", "ftf", "drf", "tetris", "srsf"}
    starvation : float or None
        Seconds without running after which a job is put ahead of the others for good
        (every order but ``fifo``; default 1000 h as Synergy; ``None``: no guard).
    remaining_at : {"allocator", "fair"}
        ``srtf`` and ``tetris`` only: the speed the remaining time is estimated at
        (Synergy's: the allocator's, default; or the fair share for every allocator).
    time_limit : float or None
        ``opt`` only: seconds per round for both ILPs (default :data:`OPT_TIME_LIMIT`;
        ``math.inf`` for none).
    backend : str or None
        ``opt`` only: the solver backend (default ``"highs"``).
    place : bool
        Synergy's placement-sensitive mode (``+place``): jobs go to the servers with the
        fewest free GPUs (:func:`~optsched.synergy.heuristics.packed_fit`) instead of
        first fit. Not with ``opt``.

    Notes
    -----
    ``stats()`` (merged into ``Result.extra``): ``rounds``, ``mean_round_throughput``
    (mean total normalized throughput per round), ``rounds_below_fair`` (rounds in
    which some admitted job got less than its fair throughput: GREEDY only),
    ``starved`` (jobs the starvation guard put ahead); under ``opt`` also
    ``opt_status`` (rounds per solver status), ``opt_failed_rounds``,
    ``opt_fallback_jobs`` (job-rounds step 2 placed at the fair share instead of their
    step-1 configuration; a round where that lost throughput has status ``feasible``)
    and ``opt_reused_rounds`` (rounds that admitted the same jobs as the previous solved
    one and reuse its solution, :meth:`_opt`).
    """

    event_driven = False
    resource_sensitive = True

    def __init__(self, allocator: str = "tune", order: str = "fifo", *,
                 starvation: float | None = STARVATION, remaining_at: str = "allocator",
                 time_limit: float | None = None, backend: str | None = None,
                 place: bool = False):
        if allocator not in ALLOCATORS:
            raise InvalidOption("allocator", allocator, f"must be one of {ALLOCATORS}")
        if order not in ORDERS:
            raise InvalidOption("order", order, f"must be one of {ORDERS}")
        if starvation is not None and (isinstance(starvation, bool)
                                       or not isinstance(starvation, (int, float))
                                       or math.isnan(starvation) or starvation <= 0):
            raise InvalidOption("starvation", starvation,
                                "must be a number of seconds > 0, or None for no guard")
        if starvation != STARVATION and order not in _GUARDED:
            raise InvalidOption("starvation", starvation,
                                f"order {order!r} has no starvation guard (Synergy's FIFO "
                                "sorts by arrival alone); it applies to every other order")
        if remaining_at not in REMAINING_AT:
            raise InvalidOption("remaining_at", remaining_at, f"must be one of {REMAINING_AT}")
        if remaining_at != "allocator" and order not in _TIMED:
            raise InvalidOption("remaining_at", remaining_at, "only orders 'srtf' and "
                                "'tetris' rank by remaining time")
        if allocator != "opt":
            for key, val in (("time_limit", time_limit), ("backend", backend)):
                if val is not None:
                    raise InvalidOption(key, val, "only allocator 'opt' solves a program")
        if time_limit is not None and (isinstance(time_limit, bool)
                                       or not isinstance(time_limit, (int, float))
                                       or math.isnan(time_limit) or time_limit <= 0):
            raise InvalidOption("time_limit", time_limit, "must be seconds > 0 (inf: none)")
        if not isinstance(place, bool):
            raise InvalidOption("place", place, "must be true or false")
        if place and allocator == "opt":
            raise InvalidOption("place", place, "allocator 'opt' places jobs by its ILP")
        self.place = place
        self.time_limit = OPT_TIME_LIMIT if time_limit is None else float(time_limit)
        self.backend = backend or "highs"
        self.allocator, self.order = allocator, order
        self.starvation = None if starvation is None else float(starvation)
        self.remaining_at = remaining_at
        self.name = f"synergy-{allocator}+{order}" + ("+place" if place else "")
        self.needs_work = order in ("srtf", "ftf", "tetris", "srsf")
        self.reset()

    def reset(self) -> None:
        self.rounds = self.below = 0
        self.total_rel = 0.0
        self._jobs: dict[str, Job] = {}
        self._last_run: dict[str, float] = {}  # job id -> end of the last round it ran
        self._starved: set[str] = set()
        self._ran_at: dict[str, float] = {}  # job id -> relative throughput last round
        self._speeds: dict[int, tuple[Sensitivity | None, float]] = {}
        self._fair: tuple[float, float] | None = None
        self._demand: dict[int, tuple[Sensitivity | None, float, float]] = {}
        self.opt_status: dict[str, int] = {}
        self.opt_failed = self.opt_fallback = self.opt_reused = 0
        self._opt_last: tuple[tuple[str, ...], str, dict] | None = None

    def stats(self) -> dict:
        out = {"allocator": self.allocator, "order": self.order, "rounds": self.rounds,
               "mean_round_throughput": self.total_rel / self.rounds if self.rounds else 0.0,
               "rounds_below_fair": self.below, "starved": len(self._starved),
               "starvation": self.starvation, "remaining_at": self.remaining_at,
               "place": self.place}
        if self.allocator == "opt":
            out.update(opt_status=dict(self.opt_status), opt_failed_rounds=self.opt_failed,
                       opt_fallback_jobs=self.opt_fallback, opt_reused_rounds=self.opt_reused,
                       time_limit=self.time_limit)
        return out

    def _job(self, j) -> Job:
        job = self._jobs.get(j.id)
        if job is None:
            job = self._jobs[j.id] = Job(j.id, j.arrival, j.workers, 1.0, dict(j.throughput),
                                         weight=j.weight, sensitivity=j.sensitivity)
        return job

    def _first_speed(self, sens: Sensitivity | None, cluster) -> float:
        """The relative throughput the allocator asks for first (its ``synergy_speedup``
        before any round): T^f, GREEDY's best case or TUNE's comparable best case."""
        hit = self._speeds.get(id(sens))
        if hit is not None and hit[0] is sens:
            return hit[1]
        if self._fair is None:
            self._fair = _homogeneous(cluster)[2]
        tf, best, comparable = round_points(sens, self._fair)
        v = {"proportional": tf, "greedy": best[2], "tune": comparable[2],
             "opt": best[2]}[self.allocator]
        self._speeds[id(sens)] = (sens, v)
        return v

    def _remaining_time(self, view: ClusterView, fair: np.ndarray) -> list[float]:
        rem = view.remaining
        if self.remaining_at == "fair":
            return [float(rem[i] / fair[i]) for i in range(len(view.ids))]
        out = []
        for i, jid in enumerate(view.ids):
            # Synergy's OPT never touches synergy_speedup: always the best case
            s = None if self.allocator == "opt" else self._ran_at.get(jid)
            if s is None:
                s = self._first_speed(view.sensitivities[i], view.cluster)
            # a profile that misses the fair share (speed 0) is rejected by prepare()
            out.append(float(rem[i] / (fair[i] * s)) if s > 0 else math.inf)
        return out

    def _ordered(self, view: ClusterView, gtype: str) -> list[int]:
        m = range(len(view.ids))
        arr = view.arrivals
        idx = view.index
        if self.order == "fifo":
            return sorted(m, key=lambda i: (arr[i], idx[i]))
        starved = self._starved
        flag = [0 if jid in starved else 1 for jid in view.ids]  # flagged jobs first
        if self.order == "las":
            return sorted(m, key=lambda i: (flag[i], view.attained[i], arr[i], idx[i]))
        if self.order == "drf":
            share = self._shares(view, dominant=True)
            return sorted(m, key=lambda i: (flag[i], share[i], arr[i], idx[i]))
        k = view.gpu_types.index(gtype)
        fair = view.workers * view.throughput_matrix[:, k]
        if self.order == "srtf":
            rt = self._remaining_time(view, fair)
            return sorted(m, key=lambda i: (flag[i], rt[i], arr[i], idx[i]))
        if self.order == "tetris":
            rt = self._remaining_time(view, fair)
            share = self._shares(view, dominant=False)
            score = [rt[i] * share[i] for i in m]
            return sorted(m, key=lambda i: (flag[i], score[i], arr[i], idx[i]))
        if self.order == "srsf":
            # remaining GPU-seconds at the fair share: g_j rem_j / (g_j r_j)
            service = view.workers * view.remaining / fair
            return sorted(m, key=lambda i: (flag[i], service[i], arr[i], idx[i]))
        rem, work = view.remaining, view.work
        rho = [(view.time - arr[i] + rem[i] / fair[i]) / (work[i] / fair[i]) for i in m]
        return sorted(m, key=lambda i: (flag[i], -rho[i], arr[i], idx[i]))

    def _shares(self, view: ClusterView, *, dominant: bool) -> list[float]:
        """Each job's demand over the cluster's totals: the largest of the GPU, core and
        DRAM shares (``dominant``, DRF) or their sum (TETRIS)."""
        nodes = [n for n in view.cluster.nodes if n.total_gpus > 0]
        G = float(sum(n.total_gpus for n in nodes))
        C = float(sum(n.cpus for n in nodes))
        M = float(sum(n.memory for n in nodes))
        if self._fair is None:
            self._fair = _homogeneous(view.cluster)[2]
        sens_all = view.sensitivities or (None,) * len(view.ids)
        out = []
        for i in range(len(view.ids)):
            sens = sens_all[i]
            hit = self._demand.get(id(sens))
            if hit is None or hit[0] is not sens:
                # the declared best case, as the job asks for it (not snapped to a grid)
                c, mem = ((sens.best_cpu, sens.best_memory) if sens is not None
                          else self._fair)
                hit = self._demand[id(sens)] = (sens, float(c), float(mem))
            g = float(view.workers[i])
            parts = (g / G, g * hit[1] / C, g * hit[2] / M)
            out.append(max(parts) if dominant else sum(parts))
        return out

    def _opt(self, rnd, ids: list[str]) -> tuple[dict, bool]:
        """Synergy-OPT on the round; ``(placed, ok)`` with ``ok`` False when a step
        returned no solution (the caller then allocates by ``proportional``).

        Both programs depend only on the admitted jobs (their GPUs and profiles) and the
        cluster, which every round starts with all free: a round that admits the same
        jobs as the previous solved one is the same program, and its solution is
        reused (``opt_reused_rounds``) instead of solved again."""
        if not rnd.admitted:
            self.opt_status["optimal"] = self.opt_status.get("optimal", 0) + 1
            return {}, True
        key = tuple(ids[j] for j in rnd.admitted)
        if self._opt_last is not None and self._opt_last[0] == key:
            _, status, configs = self._opt_last
            self.opt_reused += 1
            self.opt_status[status] = self.opt_status.get(status, 0) + 1
            index = {jid: j for j, jid in enumerate(ids)}
            return {index[jid]: replace(c, job=index[jid]) for jid, c in configs.items()}, True
        sol = two_step_solve(rnd, self.backend, time_limit=self.time_limit)
        status = sol.status.value
        self.opt_status[status] = self.opt_status.get(status, 0) + 1
        if sol.failed is not None or sol.status not in (Status.OPTIMAL, Status.FEASIBLE,
                                                        Status.TIME_LIMIT):
            self.opt_failed += 1
            self._opt_last = None
            return {}, False
        self.opt_fallback += len(sol.fallback)
        self._opt_last = (key, status, {ids[p.job]: p for p in sol.places})
        return {p.job: p for p in sol.places}, True

    def _guard(self, view: ClusterView, placed: set[str]) -> None:
        """Flag the jobs that have not run for more than ``starvation`` s (Synergy checks
        after sorting, so the flag counts from the next round), then note who ran."""
        t = view.time
        if self.starvation is not None and self.order in _GUARDED:
            last = self._last_run
            for i, jid in enumerate(view.ids):
                if jid not in self._starved and \
                        t - last.get(jid, float(view.arrivals[i])) > self.starvation:
                    self._starved.add(jid)
        end = t + view.slot
        for jid in placed:
            self._last_run[jid] = end

    def allocate(self, view: ClusterView) -> list[Placement]:
        gtype = view.gpu_types[0]
        jobs = view.jobs
        # the round model needs only arrival, gang, throughput and sensitivity (work is
        # not read: 1.0 stands in for it when the policy is not clairvoyant)
        sub = Instance(view.cluster, tuple(self._job(j) for j in jobs), slot=view.slot)
        order = self._ordered(view, gtype)
        rnd = prepare(sub, start=view.time, order=[view.ids[i] for i in order])
        ok = False
        if self.allocator == "opt":
            placed, ok = self._opt(rnd, list(view.ids))
        if not ok:
            placed = allocate(rnd, "proportional" if self.allocator == "opt"
                              else self.allocator, place=self.place)[0].placed
        self.rounds += 1
        self.below += any(placed.get(j) is None
                          or placed[j].rel < rnd.fair_rel[j] - 1e-9 for j in rnd.admitted)
        out = []
        ran_at: dict[str, float] = {}
        for j, p in placed.items():
            self.total_rel += p.rel
            ran_at[view.ids[j]] = p.rel
            for s, k in p.parts:
                out.append(Placement(view.ids[j], rnd.nodes[s].name, gtype, int(k),
                                     cpus=k * p.cpu, memory=k * p.memory))
        self._ran_at = ran_at
        self._guard(view, set(ran_at))
        return out


def simulate_synergy(instance: Instance, allocator: str = "tune", order: str = "fifo", *,
                     max_time: float | None = None, starvation: float | None = STARVATION,
                     remaining_at: str = "allocator", time_limit: float | None = None,
                     backend: str | None = None, place: bool = False,
                     until: Collection[str] | None = None) -> Result:
    """Simulate ``allocator`` with ``order`` over ``instance`` in the shared simulator.

    A thin wrapper: ``optsched.sim.simulate(instance, SynergyPolicy(allocator, order,
    starvation=..., remaining_at=..., time_limit=..., backend=..., place=...))`` after
    checking that
    the cluster fits Synergy's model; ``model`` is reported as ``"synergy-sim"`` and
    ``method`` as ``"<allocator>+<order>"``. ``extra`` holds the simulator's counters and
    :meth:`SynergyPolicy.stats`. ``until`` (job ids) stops the run once those jobs have
    completed (a measurement window).
    """
    policy = SynergyPolicy(allocator, order, starvation=starvation, remaining_at=remaining_at,
                           time_limit=time_limit, backend=backend, place=place)
    if max_time is not None and not (isinstance(max_time, (int, float)) and max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    prepare(instance.replace(jobs=()))  # cluster applicability, before any work
    res = simulate(instance, policy, max_time=max_time, until=until, progress=False)
    mean = res.objective
    return res.replace(model="synergy-sim", method=f"{allocator}+{order}",
                       objective=mean if mean is not None and math.isfinite(mean) else None)


def runner(allocator: str):
    """The simulator runner of Synergy's ``allocator`` (``tune``, ``greedy``,
    ``proportional``, ``opt``); the order is an option (default ``fifo``)."""
    def run(instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, order: str = "fifo",
            starvation: float | None = STARVATION, remaining_at: str = "allocator",
            time_limit: float | None = None, backend: str | None = None,
            place: bool = False, until: Collection[str] | None = None) -> Result:
        return simulate_synergy(instance, allocator, order, max_time=max_time,
                                starvation=starvation, remaining_at=remaining_at,
                                time_limit=time_limit, backend=backend, place=place,
                                until=until)

    label = "Synergy-OPT" if allocator == "opt" else f"Synergy-{allocator.upper()}"
    run.__doc__ = (f"``optsched simulate --policy synergy.{allocator} [--option order=...]"
                   f" [--option starvation=...] [--option remaining_at=...]``:"
                   f" {label} rounds in the shared simulator.")
    return run


#: the allocator each of Synergy's order-named schedulers runs by default: the
#: original's ``DRF`` and ``TETRIS`` (no ``+fair``/``+tune``) are GREEDY, ``SRSF`` is
#: GPU-proportional (module docstring)
ORDER_DEFAULTS = {"drf": "greedy", "tetris": "greedy", "srsf": "proportional"}


def order_runner(order: str):
    """The simulator runner of Synergy's scheduler named by its order (``drf``,
    ``tetris``, ``srsf``); the allocator is an option (default
    :data:`ORDER_DEFAULTS`)."""
    def run(instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, allocator: str = ORDER_DEFAULTS[order],
            starvation: float | None = STARVATION, remaining_at: str = "allocator",
            time_limit: float | None = None, backend: str | None = None,
            place: bool = False, until: Collection[str] | None = None) -> Result:
        return simulate_synergy(instance, allocator, order, max_time=max_time,
                                starvation=starvation, remaining_at=remaining_at,
                                time_limit=time_limit, backend=backend, place=place,
                                until=until)

    run.__doc__ = (f"``optsched simulate --policy synergy.{order} [--option allocator=...]"
                   f"``: Synergy's {order.upper()} order over rounds of the "
                   f"{ORDER_DEFAULTS[order]} allocator (default) in the shared simulator.")
    return run
