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
memory=0, copy=0, share=1, partner=None)`` (plain 4-tuples work too); a gang may span several
placements (nodes and even GPU types). The simulator checks every decision (see
:mod:`optsched.sim.simulator`).

Capabilities. A policy declares what its decisions may use with optional attributes (all
default off; :data:`POLICY_MEMBERS` lists every member a policy may have, and
:func:`check_policy` refuses a misspelt one): ``sharing`` (``share < 1``: a fraction of
each GPU's compute, e.g. Salus lanes), ``forking`` (several copies of a job, one node
each, progress adding up, e.g. HadarE), ``consolidation`` (seconds between a forked job's
work being done and its completion) and ``resource_sensitive`` (CPU cores and DRAM per
GPU change the job's speed through ``Job.sensitivity``, e.g. Synergy), ``colocation``
(two jobs share the same GPUs, each placement naming the other as ``partner``, at the
instance's measured co-located rates, e.g. Gavel's packed policies), and
``progress_rule`` (default ``"gang"``; ``"partial"``: gangs of 1..W_j GPUs;
``"additive"``: a gang runs at the sum of its workers' rates;
:mod:`optsched.core.progress`). Optionally ``horizon()`` returns an absolute time at
which the current epoch must end at the latest (a policy-internal event, e.g. a
fair-share catch-up), or ``None``. An event-driven policy whose decisions change only at
arrivals and completions may declare ``periodic = False``: it is then not called at round
boundaries, so a run takes as many epochs as it has events.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from optsched.core.instance import Cluster, GpuMemory, Sensitivity
from optsched.core.progress import PROGRESS_RULES
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, OptschedError

__all__ = ["Placement", "JobView", "ClusterView", "Policy", "PolicyViolation",
           "PolicyMember", "POLICY_MEMBERS", "check_policy"]


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
    #: :attr:`previous` grouped by job, when the caller already has it (the simulator
    #: keeps one grouping while the previous decision stays the same)
    previous_grouped: Mapping[str, tuple[Placement, ...]] | None = field(default=None,
                                                                         repr=False)
    #: the same as arrays, when the caller has them: the instance indices of the jobs in
    #: :attr:`previous` (sorted, unique) and the GPUs it holds per (node, type)
    previous_jobs: np.ndarray | None = field(default=None, repr=False)
    previous_held: np.ndarray | None = field(default=None, repr=False)
    #: per instance job index: whether it is in :attr:`previous` (when the caller has it)
    previous_mask: np.ndarray | None = field(default=None, repr=False)
    #: the instance's co-located rates (:meth:`colocated_rate`), if it has a table
    pair_rates: Callable[[str, str, str], float | None] | None = field(default=None,
                                                                        repr=False)

    def colocated_rate(self, job: str, partner: str, gpu_type: str) -> float | None:
        """Per-worker iterations/s of visible job ``job`` sharing GPUs of ``gpu_type``
        with job ``partner`` (measured profile data, like the throughputs), or ``None``
        when the instance has no such rate
        (:meth:`optsched.core.instance.Instance.colocated_rate`)."""
        if self.pair_rates is None:
            return None
        return self.pair_rates(job, partner, gpu_type)

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
    def previous_by_job(self) -> Mapping[str, tuple[Placement, ...]]:
        """:attr:`previous` grouped by job (read-only; each job's placements in their
        order in :attr:`previous`)."""
        if self.previous_grouped is not None:
            return self.previous_grouped
        return group_by_job(self.previous)

    @cached_property
    def ran_before(self) -> np.ndarray:
        """Per visible job (aligned with :attr:`ids`): whether it holds a placement in
        the previous decision."""
        if self.previous_mask is not None:
            return self.previous_mask[self.index]
        if self.previous_jobs is not None:
            return np.isin(self.index, self.previous_jobs)
        prev = self.previous_by_job
        return np.fromiter((j in prev for j in self.ids), dtype=bool, count=len(self.ids))

    @cached_property
    def previous_count(self) -> int:
        """How many jobs hold a placement in the previous decision."""
        if self.previous_jobs is not None:
            return len(self.previous_jobs)
        return len(self.previous_by_job)

    @cached_property
    def held_before(self) -> np.ndarray:
        """GPUs held by the previous decision per (node, type), like :attr:`capacity`
        (read-only): each placement's GPUs, so two co-located jobs count a shared GPU
        twice."""
        if self.previous_held is not None:
            return self.previous_held
        held = np.zeros(self.capacity.shape, dtype=np.int64)
        col = {t: k for k, t in enumerate(self.gpu_types)}
        node_index = self.cluster.node_index
        for p in self.previous:
            held[node_index(p.node), col[p.gpu_type]] += p.gpus
        held.flags.writeable = False
        return held


def group_by_job(placements) -> Mapping[str, tuple[Placement, ...]]:
    """``placements`` grouped by job, read-only, each job's in their given order."""
    out: dict[str, list[Placement]] = {}
    for p in placements:
        out.setdefault(p.job, []).append(p)
    return MappingProxyType({j: tuple(ps) for j, ps in out.items()})


@runtime_checkable
class Policy(Protocol):
    """An online scheduling policy usable by :func:`optsched.sim.simulate`.

    Required members: ``name`` (str), ``needs_work`` (bool: the policy reads job work /
    remaining work, i.e. it is clairvoyant, e.g. SRTF, Gavel's makespan and finish-time
    fairness), ``event_driven`` (bool: the simulator also calls it at arrival and
    completion instants, Tiresias, not only at round boundaries, Gavel) and
    ``allocate(state) -> list[Placement]``.

    Optional members, each with its default (:data:`POLICY_MEMBERS` states them all):

    * capabilities: ``sharing`` (False), ``forking`` (False), ``consolidation``
      (0.0 seconds), ``resource_sensitive`` (False), ``progress_rule`` (``"gang"``),
      ``periodic`` (True); see the module docstring;
    * hooks: ``reset()`` (called before a run, so one object can be reused),
      ``check(instance)`` (raises :class:`~optsched.errors.ModelNotApplicable`, naming
      the job field, for an instance outside the policy's model, before anything
      runs), ``horizon()`` (an absolute time at which the current epoch must end at the
      latest, or ``None``);
    * statistics: ``stats()`` returns a mapping merged into ``Result.extra``.

    Nothing else is read. :func:`check_policy` refuses a member of the wrong type and a
    public member whose name is within a typo of an optional one (``sharng``, ``stat``),
    whose effect would otherwise be silently dropped.
    """

    name: str
    needs_work: bool
    event_driven: bool

    def allocate(self, state: ClusterView) -> list[Placement]: ...


@dataclass(frozen=True)
class PolicyMember:
    """One member of the :class:`Policy` protocol: ``kind`` is ``"required"``,
    ``"capability"``, ``"hook"`` or ``"stats"``; ``default`` what the simulator assumes
    when an optional member is absent; ``takes`` what a valid value is (for
    :func:`check_policy`'s message)."""

    name: str
    kind: str
    default: Any
    takes: str
    summary: str


def _member(name: str, kind: str, default: Any, takes: str, summary: str) -> PolicyMember:
    return PolicyMember(name, kind, default, takes, summary)


#: Every member the simulator reads from a policy, by name.
POLICY_MEMBERS: Mapping[str, PolicyMember] = MappingProxyType({m.name: m for m in (
    _member("name", "required", None, "a string", "the policy's name in results"),
    _member("needs_work", "required", None, "True or False",
            "reads job work and remaining work (clairvoyant)"),
    _member("event_driven", "required", None, "True or False",
            "also called at arrival and completion instants"),
    _member("allocate", "required", None, "a method allocate(state)",
            "the decision: placements for the visible jobs"),
    _member("sharing", "capability", False, "True or False",
            "placements may take a share < 1 of each GPU"),
    _member("forking", "capability", False, "True or False",
            "a job may run as several copies, one node each"),
    _member("consolidation", "capability", 0.0, "a finite number of seconds >= 0",
            "seconds between a forked job's work done and its completion"),
    _member("resource_sensitive", "capability", False, "True or False",
            "CPU cores and DRAM per GPU change the job's speed"),
    _member("progress_rule", "capability", "gang", f"one of {', '.join(PROGRESS_RULES)}",
            "how a gang's rate follows from its GPUs"),
    _member("colocation", "capability", False, "True or False",
            "two jobs may share GPUs (placement partner) at their co-located rates"),
    _member("periodic", "capability", True, "True or False",
            "called at round boundaries (False: event-driven policies only)"),
    _member("reset", "hook", None, "a method reset()", "called before a run"),
    _member("check", "hook", None, "a method check(instance)",
            "refuses an instance outside the policy's model before the run"),
    _member("horizon", "hook", None, "a method horizon() -> float or None",
            "an instant at which the current epoch must end at the latest"),
    _member("stats", "stats", None, "a method stats() -> mapping",
            "figures merged into Result.extra"),
)})

_FLAGS = ("needs_work", "event_driven", "sharing", "forking", "resource_sensitive",
          "periodic", "colocation")


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _valid(name: str, value: Any) -> bool:
    """Whether ``value`` is a valid value of the protocol member ``name``."""
    kind = POLICY_MEMBERS[name].kind
    if name in _FLAGS:
        return _is_bool(value)
    if name == "name":
        return isinstance(value, str)
    if name == "consolidation":
        return bool(not _is_bool(value) and isinstance(value, (int, float, np.number))
                    and math.isfinite(value) and value >= 0)
    if name == "progress_rule":
        return isinstance(value, str) and value in PROGRESS_RULES
    return bool(kind in ("hook", "stats", "required") and callable(value))


def _shape(value: Any) -> str:
    """What kind of member a value could stand for: a flag, a number, a text, a method."""
    if _is_bool(value):
        return "flag"
    if callable(value):
        return "method"
    if isinstance(value, (int, float, np.number)):
        return "number"
    if isinstance(value, str):
        return "text"
    return "other"


_SHAPES = {"allocate": "method", "reset": "method", "check": "method", "horizon": "method",
           "stats": "method", "consolidation": "number", "progress_rule": "text",
           "name": "text", **{f: "flag" for f in _FLAGS}}


@lru_cache(maxsize=4096)
def _typo_of(name: str, shape: str) -> str | None:
    """The optional protocol member ``name`` (of this ``shape``) most likely misspells,
    if any."""
    if name in POLICY_MEMBERS or name.startswith("_"):
        return None
    # a required member that is misspelt is missing, which is refused anyway
    same = [m for m, s in _SHAPES.items()
            if s == shape and POLICY_MEMBERS[m].kind != "required"]
    close = difflib.get_close_matches(name, same, n=1, cutoff=0.75)
    return close[0] if close else None


def check_policy(policy: Any, where: str = "policy") -> None:
    """Check ``policy`` (an object or a class) against the :class:`Policy` protocol.

    Raises :class:`~optsched.errors.InvalidOption`, naming the member, when a required
    member is missing (an object; a class may set it in ``__init__``), when a member of
    :data:`POLICY_MEMBERS` has a value it cannot take (``sharing = "yes"``, ``stats = {}``,
    ``progress_rule = "fast"``), or when a public member is within a typo of an optional
    member of the same shape (a flag ``sharng``, a method ``stat``, a number
    ``consolidaton``): the simulator would never read it, so the policy would silently
    run without what it meant to declare.

    Complexity: :math:`O(a)` for :math:`a` public attributes (the typo test of a name is
    cached).
    """
    is_class = isinstance(policy, type)
    label = f"{where} {policy.__name__ if is_class else type(policy).__name__}"
    names = [n for n in dir(policy) if not n.startswith("_")]
    for name in names:
        try:
            value = getattr(policy, name)
        except Exception:  # a property that needs state the class does not have yet
            continue
        if is_class and isinstance(value, property):
            continue
        member = POLICY_MEMBERS.get(name)
        if member is not None:
            if not _valid(name, value):
                raise InvalidOption(f"{where}.{name}", value,
                                    f"{label}: the Policy member {name!r} must be "
                                    f"{member.takes} ({member.summary})")
            continue
        typo = _typo_of(name, _shape(value))
        if typo is not None:
            raise InvalidOption(f"{where}.{name}", value,
                                f"{label}: {name!r} is not a member of the Policy protocol "
                                f"and would be ignored; did you mean {typo!r}? (members: "
                                f"{', '.join(POLICY_MEMBERS)})")
    if not is_class:
        missing = [m for m, d in POLICY_MEMBERS.items()
                   if d.kind == "required" and not hasattr(policy, m)]
        if missing:
            raise InvalidOption(where, type(policy).__name__,
                                f"not a Policy: missing {missing[0]!r} (required: name, "
                                "needs_work, event_driven, allocate)")
