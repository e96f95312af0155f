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

**Starvation guard** (``srtf``, ``las``, ``ftf``; ``starvation`` seconds, default
1000 h): Synergy's SRTF, LAS and FTF schedulers sort by ``(-job_priority, key,
arrival)`` and set ``job_priority = 1`` for good once a job has gone more than 1000 h
without running (``get_time_since_last_execution``: since the end of its last round, or
since its arrival). The check runs after the round's sort, so a job flagged at one
boundary is put ahead from the next one; flagged jobs are ordered among themselves by
the same key. Without it a long job waits under SRTF for as long as shorter jobs keep
arriving (for a continuous stream: until the stream ends). ``starvation=None`` turns
the guard off (pure SRTF / LAS / FTF). Synergy's FIFO sorts by arrival alone, so FIFO
has no guard.

The schedule (GPU, CPU and DRAM per server, ``resource_sensitive``) is validated by
:func:`~optsched.core.result.finalize` against the real instance: the validator credits
each allocation with the sensitivity-scaled progress, so every completion is checked
against the job's real work. ``Result.objective`` is the mean JCT (s) of completed jobs.
"""

from __future__ import annotations

import math
from collections.abc import Collection

import numpy as np

from optsched.core.instance import Instance, Job, Sensitivity
from optsched.core.result import Result
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.sim.policy import ClusterView
from optsched.sim.simulator import simulate
from optsched.synergy.heuristics import allocate
from optsched.synergy.model import _homogeneous, prepare, round_points

__all__ = ["simulate_synergy", "SynergyPolicy", "runner", "ORDERS", "ALLOCATORS",
           "REMAINING_AT", "STARVATION"]

ORDERS = ("fifo", "srtf", "las", "ftf")
ALLOCATORS = ("tune", "greedy", "proportional")
#: the remaining-time estimates ``srtf`` can rank by (module docstring)
REMAINING_AT = ("allocator", "fair")
#: Synergy's starvation threshold: 1000 h without running (module docstring)
STARVATION = 1000 * 3600.0
_GUARDED = ("srtf", "las", "ftf")


class SynergyPolicy:
    """Synergy's round allocator ``allocator`` under job order ``order`` (module docstring).

    Parameters
    ----------
    allocator : {"tune", "greedy", "proportional"}
    order : {"fifo", "srtf", "las", "ftf"}
    starvation : float or None
        Seconds without running after which a job is put ahead of the others for good
        (``srtf``, ``las`` and ``ftf``; default 1000 h as Synergy; ``None``: no guard).
    remaining_at : {"allocator", "fair"}
        ``srtf`` only: the speed the remaining time is estimated at (Synergy's: the
        allocator's, default; or the fair share for every allocator).

    ``stats()`` (merged into ``Result.extra``): ``rounds``, ``mean_round_throughput``
    (mean total normalized throughput per round), ``rounds_below_fair`` (rounds in
    which some admitted job got less than its fair throughput: GREEDY only),
    ``starved`` (jobs the starvation guard put ahead).
    """

    event_driven = False
    resource_sensitive = True

    def __init__(self, allocator: str = "tune", order: str = "fifo", *,
                 starvation: float | None = STARVATION, remaining_at: str = "allocator"):
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
                                "sorts by arrival alone); it applies to srtf, las and ftf")
        if remaining_at not in REMAINING_AT:
            raise InvalidOption("remaining_at", remaining_at, f"must be one of {REMAINING_AT}")
        if remaining_at != "allocator" and order != "srtf":
            raise InvalidOption("remaining_at", remaining_at, "only order 'srtf' ranks by "
                                "remaining time")
        self.allocator, self.order = allocator, order
        self.starvation = None if starvation is None else float(starvation)
        self.remaining_at = remaining_at
        self.name = f"synergy-{allocator}+{order}"
        self.needs_work = order in ("srtf", "ftf")
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

    def stats(self) -> dict:
        return {"allocator": self.allocator, "order": self.order, "rounds": self.rounds,
                "mean_round_throughput": self.total_rel / self.rounds if self.rounds else 0.0,
                "rounds_below_fair": self.below, "starved": len(self._starved),
                "starvation": self.starvation, "remaining_at": self.remaining_at}

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
        v = {"proportional": tf, "greedy": best[2], "tune": comparable[2]}[self.allocator]
        self._speeds[id(sens)] = (sens, v)
        return v

    def _remaining_time(self, view: ClusterView, fair: np.ndarray) -> list[float]:
        rem = view.remaining
        if self.remaining_at == "fair":
            return [float(rem[i] / fair[i]) for i in range(len(view.ids))]
        out = []
        for i, jid in enumerate(view.ids):
            s = self._ran_at.get(jid)
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
        k = view.gpu_types.index(gtype)
        fair = view.workers * view.throughput_matrix[:, k]
        if self.order == "srtf":
            rt = self._remaining_time(view, fair)
            return sorted(m, key=lambda i: (flag[i], rt[i], arr[i], idx[i]))
        rem, work = view.remaining, view.work
        rho = [(view.time - arr[i] + rem[i] / fair[i]) / (work[i] / fair[i]) for i in m]
        return sorted(m, key=lambda i: (flag[i], -rho[i], arr[i], idx[i]))

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
        state, _ = allocate(rnd, self.allocator)
        self.rounds += 1
        self.below += any(state.placed.get(j) is None
                          or state.placed[j].rel < rnd.fair_rel[j] - 1e-9 for j in rnd.admitted)
        out = []
        ran_at: dict[str, float] = {}
        for j, p in state.placed.items():
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
                     remaining_at: str = "allocator",
                     until: Collection[str] | None = None) -> Result:
    """Simulate ``allocator`` with ``order`` over ``instance`` in the shared simulator.

    A thin wrapper: ``optsched.sim.simulate(instance, SynergyPolicy(allocator, order,
    starvation=..., remaining_at=...))`` after checking that the cluster fits Synergy's
    model; ``model`` is reported as ``"synergy-sim"`` and ``method`` as
    ``"<allocator>+<order>"``. ``extra`` holds the simulator's counters and
    :meth:`SynergyPolicy.stats`. ``until`` (job ids) stops the run once those jobs have
    completed (a measurement window).
    """
    policy = SynergyPolicy(allocator, order, starvation=starvation, remaining_at=remaining_at)
    if max_time is not None and not (isinstance(max_time, (int, float)) and max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    prepare(instance.replace(jobs=()))  # cluster applicability, before any work
    res = simulate(instance, policy, max_time=max_time, until=until, progress=False)
    mean = res.objective
    return res.replace(model="synergy-sim", method=f"{allocator}+{order}",
                       objective=mean if mean is not None and math.isfinite(mean) else None)


def runner(allocator: str):
    """The simulator runner of Synergy's ``allocator`` (``tune``, ``greedy``,
    ``proportional``)."""
    def run(instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, order: str = "fifo",
            starvation: float | None = STARVATION, remaining_at: str = "allocator",
            until: Collection[str] | None = None) -> Result:
        return simulate_synergy(instance, allocator, order, max_time=max_time,
                                starvation=starvation, remaining_at=remaining_at, until=until)

    run.__doc__ = (f"``optsched simulate --policy synergy.{allocator} [--option order=...]"
                   f" [--option starvation=...] [--option remaining_at=...]``:"
                   f" Synergy-{allocator.upper()} rounds in the shared simulator.")
    return run
