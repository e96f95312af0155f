"""What an online policy sees and returns: ``ClusterView``, ``Placement``, ``Policy``.

A policy is called at decision instants (round boundaries of ``instance.slot`` seconds,
plus arrival and completion instants for event-driven policies). It receives a
:class:`ClusterView` holding only what an online scheduler may know at that instant:

* the current time and the round length;
* the jobs that have *arrived and not finished* (never a future arrival), each with its
  gang size, per-worker throughputs, weight, attained service (GPUs x executed seconds,
  Tiresias NSDI'19 §3.1), executed seconds, seconds held per GPU type, rounds received and
  preemptions so far; the job's total and remaining work only if the policy declares
  ``needs_work = True`` (``None`` otherwise);
* per job also its CPU/DRAM sensitivity (``Job.sensitivity``), GPU memory footprint
  (``Job.memory``) and compute share (``Job.compute_share``) -- profile data, not work --
  and its user (``Job.user``, for per-user fairness such as AlloX's filter);
* the cluster (nodes with GPU counts per type, CPU cores, DRAM and per-GPU memory) and
  the previous decision's placements (with copies, shares, CPU and DRAM).

It returns a list of :class:`Placement` items ``(job, node, gpu_type, gpus, cpus=0,
memory=0, copy=0, share=1)`` (plain 4-tuples work too); a gang may span several
placements (nodes and even GPU types). The simulator checks every decision (see
:mod:`optsched.sim.simulator`).

Capabilities. A policy declares what its decisions may use with optional attributes
(all default off): ``sharing`` (``share < 1``: a fraction of each GPU's compute, e.g.
Salus lanes), ``forking`` (several copies of a job, one node each, progress adding up,
e.g. HadarE), ``consolidation`` (seconds between a forked job's work being done and its
completion) and ``resource_sensitive`` (CPU cores and DRAM per GPU change the job's speed
through ``Job.sensitivity``, e.g. Synergy), and ``progress_rule`` (default ``"gang"``;
``"partial"``: gangs of 1..W_j GPUs; ``"additive"``: a gang runs at the sum of its
workers' rates; :mod:`optsched.core.progress`). Optionally ``horizon()`` returns an absolute
time at which the current epoch must end at the latest (a policy-internal event, e.g. a
fair-share catch-up), or ``None``. An event-driven policy whose decisions change only at
arrivals and completions may declare ``periodic = False``: it is then not called at
round boundaries, so a run takes as many epochs as it has events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Protocol, runtime_checkable

import numpy as np

from optsched.core.instance import Cluster, GpuMemory, Sensitivity
from optsched.core.schedule import Placement
from optsched.errors import OptschedError

__all__ = ["Placement", "JobView", "ClusterView", "Policy", "PolicyViolation"]


class PolicyViolation(OptschedError, RuntimeError):
    """A policy returned an allocation the simulator cannot execute.

    ``policy`` names the policy, ``time`` the decision instant, ``reason`` the rule broken
    (over-allocation, gang not exactly ``workers`` wide, job not arrived or already
    finished, unknown node or type, type the job cannot run on, policy stalled).
    """

    def __init__(self, policy: str, time: float, reason: str):
        self.policy = policy
        self.time = time
        self.reason = reason
        super().__init__(f"policy {policy!r} at t={time:g}: {reason}")


@dataclass(frozen=True, slots=True)
class JobView:
    """One arrived, unfinished job as a policy sees it.

    ``work`` and ``remaining`` (iterations) are ``None`` unless the policy declared
    ``needs_work``. ``attained_service`` is GPU-seconds (workers x executed seconds),
    ``executed_time`` wall seconds the job has run, ``time_on_type[k]`` seconds held on
    type k (a gang spread over types counts each type by its share of the gang).
    """

    id: str
    index: int
    arrival: float
    workers: int
    throughput: Mapping[str, float]
    weight: float
    attained_service: float
    executed_time: float
    time_on_type: Mapping[str, float]
    rounds_received: int
    preemptions: int
    work: float | None = None
    remaining: float | None = None
    sensitivity: Sensitivity | None = None
    memory: GpuMemory | None = None
    compute_share: float | None = None
    user: str | None = None

    def rate(self, gpu_type: str) -> float:
        """Per-worker iterations/s on ``gpu_type`` (0 if it cannot run there)."""
        return self.throughput.get(gpu_type, 0.0)


@dataclass(frozen=True, eq=False)
class ClusterView:
    """The state visible to a policy at one decision instant (see module docstring).

    Per-job data are held as arrays aligned with :attr:`ids` (visible jobs in arrival
    order) for vectorised policies; :attr:`jobs` gives the same data as
    :class:`JobView` objects (built on first access).
    """

    time: float
    slot: float
    cluster: Cluster
    ids: tuple[str, ...]
    index: np.ndarray
    throughput_matrix: np.ndarray
    workers: np.ndarray
    arrivals: np.ndarray
    weights: np.ndarray
    attained: np.ndarray
    executed: np.ndarray
    time_on_types: np.ndarray
    rounds_received: np.ndarray
    preemptions: np.ndarray
    previous: tuple[Placement, ...]
    needs_work: bool
    rng: np.random.Generator = field(repr=False)
    policy_name: str = ""
    throughput_maps: tuple[Mapping[str, float], ...] = field(default=(), repr=False)
    work_: np.ndarray | None = field(default=None, repr=False)
    remaining_: np.ndarray | None = field(default=None, repr=False)
    sensitivities: tuple[Sensitivity | None, ...] = field(default=(), repr=False)
    gpu_memories: tuple[GpuMemory | None, ...] = field(default=(), repr=False)
    compute_shares: tuple[float | None, ...] = field(default=(), repr=False)
    users: tuple[str | None, ...] = field(default=(), repr=False)

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return self.cluster.gpu_types

    @property
    def capacity(self) -> np.ndarray:
        """``capacity[h, k]``: GPUs of type ``gpu_types[k]`` on node ``h``."""
        return self.cluster.capacity

    @property
    def gpus_per_type(self) -> np.ndarray:
        return self.cluster.capacity.sum(axis=0)

    @cached_property
    def jobs(self) -> tuple[JobView, ...]:
        types = self.gpu_types
        n = len(self.ids)
        # plain Python numbers once per array (the same values float()/int() give)
        index, arrivals, workers = self.index.tolist(), self.arrivals.tolist(), \
            self.workers.tolist()
        weights, attained, executed = self.weights.tolist(), self.attained.tolist(), \
            self.executed.tolist()
        on_types, rounds, preempt = self.time_on_types.tolist(), \
            self.rounds_received.tolist(), self.preemptions.tolist()
        work = [None] * n if self.work_ is None else self.work_.tolist()
        remaining = [None] * n if self.remaining_ is None else self.remaining_.tolist()
        sens = self.sensitivities or (None,) * n
        mems = self.gpu_memories or (None,) * n
        shares = self.compute_shares or (None,) * n
        users = self.users or (None,) * n
        return tuple(
            JobView(jid, index[m], arrivals[m], workers[m], self.throughput_maps[m],
                    weights[m], attained[m], executed[m],
                    MappingProxyType(dict(zip(types, on_types[m]))), rounds[m], preempt[m],
                    work[m], remaining[m], sens[m], mems[m], shares[m], users[m])
            for m, jid in enumerate(self.ids))

    @cached_property
    def by_id(self) -> dict[str, JobView]:
        return {j.id: j for j in self.jobs}

    @cached_property
    def position(self) -> dict[str, int]:
        """Job id -> row in the per-job arrays."""
        return {j: m for m, j in enumerate(self.ids)}

    @property
    def work(self) -> np.ndarray:
        """Total iterations; raises if the policy did not declare ``needs_work``."""
        if self.work_ is None:
            raise PolicyViolation(self.policy_name, self.time, "job work read by a "
                                  "policy that does not declare needs_work")
        return self.work_

    @property
    def remaining(self) -> np.ndarray:
        """Remaining iterations; raises if the policy did not declare ``needs_work``."""
        if self.remaining_ is None:
            raise PolicyViolation(self.policy_name, self.time, "remaining work read by a "
                                  "policy that does not declare needs_work")
        return self.remaining_

    @cached_property
    def previous_by_job(self) -> dict[str, list[Placement]]:
        out: dict[str, list[Placement]] = {}
        for p in self.previous:
            out.setdefault(p.job, []).append(p)
        return out


@runtime_checkable
class Policy(Protocol):
    """An online scheduling policy usable by :func:`optsched.sim.simulate`.

    ``needs_work``: the policy reads job work / remaining work (clairvoyant, e.g. SRTF,
    Gavel's makespan and finish-time fairness). ``event_driven``: the simulator also
    calls it at arrival and completion instants (Tiresias), not only at round
    boundaries (Gavel). A policy may define ``reset()``; the simulator calls it before a
    run so one policy object can be reused. A policy may define ``check(instance)``,
    raising :class:`~optsched.errors.ModelNotApplicable` (naming the job field) for an
    instance outside its model, before anything runs. Optional capabilities (``sharing``,
    ``forking``, ``consolidation``, ``resource_sensitive``, ``progress_rule``) and
    ``horizon()``: see the
    module docstring.
    """

    name: str
    needs_work: bool
    event_driven: bool

    def allocate(self, state: ClusterView) -> list[Placement]: ...
