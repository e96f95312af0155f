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
* the cluster (nodes and GPU counts per type) and the previous decision's placements.

It returns a list of :class:`Placement` items ``(job_id, node, gpu_type, gpus)``; a gang
may span several placements (nodes and even GPU types). The simulator checks every
decision (see :mod:`optsched.sim.core`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..errors import OptschedError
from ..instance import Cluster

__all__ = ["Placement", "JobView", "ClusterView", "Policy", "PolicyViolation"]


class Placement(NamedTuple):
    """``gpus`` GPUs of type ``gpu_type`` on ``node`` for job ``job_id`` (part of a gang)."""

    job_id: str
    node: str
    gpu_type: str
    gpus: int


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

    def rate(self, gpu_type: str) -> float:
        """Per-worker iterations/s on ``gpu_type`` (0 if it cannot run there)."""
        return self.throughput.get(gpu_type, 0.0)


@dataclass(frozen=True)
class ClusterView:
    """The state visible to a policy at one decision instant (see module docstring)."""

    time: float
    slot: float
    cluster: Cluster
    jobs: tuple[JobView, ...]
    previous: tuple[Placement, ...]
    needs_work: bool
    rng: np.random.Generator = field(repr=False, compare=False)
    policy_name: str = ""

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
    def ids(self) -> tuple[str, ...]:
        return tuple(j.id for j in self.jobs)

    @cached_property
    def by_id(self) -> dict[str, JobView]:
        return {j.id: j for j in self.jobs}

    @cached_property
    def throughput_matrix(self) -> np.ndarray:
        """``T[m, k]``: per-worker iterations/s of visible job m on type k (0 = cannot)."""
        types = self.gpu_types
        return np.array([[j.throughput.get(t, 0.0) for t in types] for j in self.jobs],
                        dtype=float).reshape(len(self.jobs), len(types))

    @cached_property
    def workers(self) -> np.ndarray:
        return np.array([j.workers for j in self.jobs], dtype=np.int64)

    @cached_property
    def arrivals(self) -> np.ndarray:
        return np.array([j.arrival for j in self.jobs], dtype=float)

    @cached_property
    def weights(self) -> np.ndarray:
        return np.array([j.weight for j in self.jobs], dtype=float)

    @cached_property
    def attained(self) -> np.ndarray:
        return np.array([j.attained_service for j in self.jobs], dtype=float)

    @cached_property
    def executed(self) -> np.ndarray:
        return np.array([j.executed_time for j in self.jobs], dtype=float)

    @cached_property
    def remaining(self) -> np.ndarray:
        """Remaining iterations; raises if the policy did not declare ``needs_work``."""
        if not self.needs_work:
            raise PolicyViolation(self.policy_name, self.time, "remaining work read by a "
                                  "policy that does not declare needs_work")
        return np.array([j.remaining for j in self.jobs], dtype=float)

    @cached_property
    def previous_by_job(self) -> dict[str, list[Placement]]:
        out: dict[str, list[Placement]] = {}
        for p in self.previous:
            out.setdefault(p.job_id, []).append(p)
        return out


@runtime_checkable
class Policy(Protocol):
    """An online scheduling policy usable by :func:`optsched.sim.simulate`.

    ``needs_work``: the policy reads job work / remaining work (clairvoyant, e.g. SRTF,
    Gavel's makespan and finish-time fairness). ``event_driven``: the simulator also
    calls it at arrival and completion instants (Tiresias), not only at round
    boundaries (Gavel). A policy may define ``reset()``; the simulator calls it before a
    run so one policy object can be reused.
    """

    name: str
    needs_work: bool
    event_driven: bool

    def allocate(self, state: ClusterView) -> list[Placement]: ...
