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
* ``srtf``: remaining time at the fair share, :math:`\text{rem}_j / (g_j r_j)`
  (clairvoyant);
* ``las``: attained service :math:`g_j \times` seconds run, least first;
* ``ftf``: finish-time fairness :math:`\rho_j = (t - a_j + \text{rem}_j/(g_j r_j)) /
  (E_j / (g_j r_j))`, largest first (Themis; Synergy ``ftf_synergy_new.py``; clairvoyant).

The schedule (GPU, CPU and DRAM per server, ``resource_sensitive``) is validated by
:func:`~optsched.core.result.finalize` against the real instance: the validator credits
each allocation with the sensitivity-scaled progress, so every completion is checked
against the job's real work. ``Result.objective`` is the mean JCT (s) of completed jobs.
"""

from __future__ import annotations

import math

from optsched.core.instance import Instance, Job
from optsched.core.result import Result
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.sim.policy import ClusterView
from optsched.sim.simulator import simulate
from optsched.synergy.heuristics import allocate
from optsched.synergy.model import prepare

__all__ = ["simulate_synergy", "SynergyPolicy", "runner", "ORDERS", "ALLOCATORS"]

ORDERS = ("fifo", "srtf", "las", "ftf")
ALLOCATORS = ("tune", "greedy", "proportional")


class SynergyPolicy:
    """Synergy's round allocator ``allocator`` under job order ``order`` (module docstring).

    ``stats()`` (merged into ``Result.extra``): ``rounds``, ``mean_round_throughput``
    (mean total normalized throughput per round), ``rounds_below_fair`` (rounds in
    which some admitted job got less than its fair throughput: GREEDY only).
    """

    event_driven = False
    resource_sensitive = True

    def __init__(self, allocator: str = "tune", order: str = "fifo"):
        if allocator not in ALLOCATORS:
            raise InvalidOption("allocator", allocator, f"must be one of {ALLOCATORS}")
        if order not in ORDERS:
            raise InvalidOption("order", order, f"must be one of {ORDERS}")
        self.allocator, self.order = allocator, order
        self.name = f"synergy-{allocator}+{order}"
        self.needs_work = order in ("srtf", "ftf")
        self.reset()

    def reset(self) -> None:
        self.rounds = self.below = 0
        self.total_rel = 0.0
        self._jobs: dict[str, Job] = {}

    def stats(self) -> dict:
        return {"allocator": self.allocator, "order": self.order, "rounds": self.rounds,
                "mean_round_throughput": self.total_rel / self.rounds if self.rounds else 0.0,
                "rounds_below_fair": self.below}

    def _job(self, j) -> Job:
        job = self._jobs.get(j.id)
        if job is None:
            job = self._jobs[j.id] = Job(j.id, j.arrival, j.workers, 1.0, dict(j.throughput),
                                         weight=j.weight, sensitivity=j.sensitivity)
        return job

    def _ordered(self, view: ClusterView, gtype: str) -> list[int]:
        m = range(len(view.ids))
        arr = view.arrivals
        idx = view.index
        if self.order == "fifo":
            return sorted(m, key=lambda i: (arr[i], idx[i]))
        if self.order == "las":
            return sorted(m, key=lambda i: (view.attained[i], arr[i], idx[i]))
        k = view.gpu_types.index(gtype)
        fair = view.workers * view.throughput_matrix[:, k]
        rem, work = view.remaining, view.work
        if self.order == "srtf":
            return sorted(m, key=lambda i: (rem[i] / fair[i], arr[i], idx[i]))
        rho = [(view.time - arr[i] + rem[i] / fair[i]) / (work[i] / fair[i]) for i in m]
        return sorted(m, key=lambda i: (-rho[i], arr[i], idx[i]))

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
        for j, p in state.placed.items():
            self.total_rel += p.rel
            for s, k in p.parts:
                out.append(Placement(view.ids[j], rnd.nodes[s].name, gtype, int(k),
                                     cpus=k * p.cpu, memory=k * p.memory))
        return out


def simulate_synergy(instance: Instance, allocator: str = "tune", order: str = "fifo", *,
                     max_time: float | None = None) -> Result:
    """Simulate ``allocator`` with ``order`` over ``instance`` in the shared simulator.

    A thin wrapper: ``optsched.sim.simulate(instance, SynergyPolicy(allocator, order))``
    after checking that the cluster fits Synergy's model; ``model`` is reported as
    ``"synergy-sim"`` and ``method`` as ``"<allocator>+<order>"``. ``extra`` holds the
    simulator's counters and :meth:`SynergyPolicy.stats`.
    """
    policy = SynergyPolicy(allocator, order)
    if max_time is not None and not (isinstance(max_time, (int, float)) and max_time > 0):
        raise InvalidOption("max_time", max_time, "must be > 0")
    prepare(instance.replace(jobs=()))  # cluster applicability, before any work
    res = simulate(instance, policy, max_time=max_time, progress=False)
    mean = res.objective
    return res.replace(model="synergy-sim", method=f"{allocator}+{order}",
                       objective=mean if mean is not None and math.isfinite(mean) else None)


def runner(allocator: str):
    """The simulator runner of Synergy's ``allocator`` (``tune``, ``greedy``,
    ``proportional``)."""
    def run(instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, order: str = "fifo") -> Result:
        return simulate_synergy(instance, allocator, order, max_time=max_time)

    run.__doc__ = (f"``optsched simulate --policy synergy.{allocator} [--option order=...]``:"
                   f" Synergy-{allocator.upper()} rounds in the shared simulator.")
    return run
