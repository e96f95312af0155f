"""The one instance format: cluster, jobs and time discretisation.

Every model in optsched reads an :class:`Instance`. Objects are immutable and validated
on construction: a bad value raises :class:`~optsched.errors.InvalidInstance` naming
the field path (``jobs[3].throughput.v100``) and the value. Nothing is clipped, guessed
or dropped.

Units
-----
* time in seconds (arrival, slot length, horizon, completion delays);
* work in iterations; throughput in iterations per second *per worker*;
* CPU in cores, DRAM and GPU memory in GB (Salus footprints in MB).

A job's throughput map lists the GPU types it can run on; a GPU type absent from the
map means the job cannot run there (Gavel writes ``-inf`` for the same fact, §3.1).
A map naming a type the cluster does not have is an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from optsched.core.colocation import Colocation, PairRate
from optsched.core.fields import (
    MAX_INTEGER,
    _frozen,
    _int,
    _mapping,
    _no_unknown,
    _num,
    _require,
    _str,
)
from optsched.core.files import write_text
from optsched.core.job_profiles import GpuMemory, Sensitivity, Utility
from optsched.core.jsonio import load_json, parse_json
from optsched.core.schema import instance_json_schema
from optsched.errors import InvalidInstance

__all__ = [
    "Node",
    "Cluster",
    "Job",
    "Instance",
    "Utility",
    "Sensitivity",
    "GpuMemory",
    "load_instance",
    "instance_json_schema",
    "MAX_INTEGER",
    "Colocation",
    "PairRate",
]



@dataclass(frozen=True)
class Node:
    """A server: GPU count per GPU type, CPU cores, DRAM (GB), GPU memory per type (GB)."""

    name: str
    gpus: Mapping[str, int]
    cpus: float = 0.0
    memory: float = 0.0
    gpu_memory: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check("node")

    def _check(self, path: str) -> None:
        _str(f"{path}.name", self.name)
        gpus = _mapping(f"{path}.gpus", self.gpus)
        clean = {}
        for k, v in gpus.items():
            _str(f"{path}.gpus", k)
            clean[k] = _int(f"{path}.gpus.{k}", v)
        object.__setattr__(self, "gpus", _frozen(clean))
        object.__setattr__(self, "cpus", _num(f"{path}.cpus", self.cpus))
        object.__setattr__(self, "memory", _num(f"{path}.memory", self.memory))
        gm = _mapping(f"{path}.gpu_memory", self.gpu_memory)
        cleaned = {}
        for k, v in gm.items():
            if k not in clean:
                raise InvalidInstance(f"{path}.gpu_memory.{k}", v,
                                      f"GPU type {k!r} is not among this node's gpus "
                                      f"{sorted(clean)}")
            cleaned[k] = _num(f"{path}.gpu_memory.{k}", v, strict=True)
        object.__setattr__(self, "gpu_memory", _frozen(cleaned))

    @property
    def total_gpus(self) -> int:
        return sum(self.gpus.values())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "gpus": dict(self.gpus), "cpus": self.cpus,
                             "memory": self.memory}
        if self.gpu_memory:
            d["gpu_memory"] = dict(self.gpu_memory)
        return d

    @classmethod
    def from_dict(cls, data: Any, path: str = "node") -> Node:
        data = _mapping(path, data)
        _no_unknown(path, data, {"name", "gpus", "cpus", "memory", "gpu_memory"})
        _require(path, data, ("name", "gpus"))
        n = cls.__new__(cls)
        object.__setattr__(n, "name", data["name"])
        object.__setattr__(n, "gpus", data["gpus"])
        object.__setattr__(n, "cpus", data.get("cpus", 0.0))
        object.__setattr__(n, "memory", data.get("memory", 0.0))
        object.__setattr__(n, "gpu_memory", data.get("gpu_memory", {}))
        n._check(path)
        return n


@dataclass(frozen=True)
class Cluster:
    """A set of nodes. ``gpu_types`` is the sorted union of the nodes' GPU types."""

    nodes: tuple[Node, ...]

    def __post_init__(self) -> None:
        self._check("cluster")

    def _check(self, path: str) -> None:
        nodes = self.nodes
        if not isinstance(nodes, (tuple, list)):
            raise InvalidInstance(f"{path}.nodes", nodes, "must be a list of nodes")
        if len(nodes) == 0:
            raise InvalidInstance(f"{path}.nodes", nodes, "cluster must have at least one node")
        seen: set[str] = set()
        for i, n in enumerate(nodes):
            if not isinstance(n, Node):
                raise InvalidInstance(f"{path}.nodes[{i}]", n, "must be a Node")
            if n.name in seen:
                raise InvalidInstance(f"{path}.nodes[{i}].name", n.name, "duplicate node name")
            seen.add(n.name)
        object.__setattr__(self, "nodes", tuple(nodes))
        if sum(n.total_gpus for n in nodes) == 0:
            raise InvalidInstance(f"{path}.nodes", [n.name for n in nodes],
                                  "cluster has no GPU at all")

    @cached_property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(sorted({k for n in self.nodes for k, c in n.gpus.items() if c > 0}))

    @cached_property
    def capacity(self) -> np.ndarray:
        """``capacity[h, k]``: GPUs of type ``gpu_types[k]`` on node ``h``."""
        cap = np.zeros((len(self.nodes), len(self.gpu_types)), dtype=np.int64)
        for h, n in enumerate(self.nodes):
            for k, t in enumerate(self.gpu_types):
                cap[h, k] = n.gpus.get(t, 0)
        return cap

    @property
    def gpus_per_type(self) -> dict[str, int]:
        return {t: int(c) for t, c in zip(self.gpu_types, self.capacity.sum(axis=0))}

    @property
    def total_gpus(self) -> int:
        return int(self.capacity.sum())

    def node_index(self, name: str) -> int:
        return self._node_index[name]

    @cached_property
    def _node_index(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": [n.to_dict() for n in self.nodes]}

    @classmethod
    def from_dict(cls, data: Any, path: str = "cluster") -> Cluster:
        data = _mapping(path, data)
        _no_unknown(path, data, {"nodes"})
        _require(path, data, ("nodes",))
        raw = data["nodes"]
        if not isinstance(raw, list):
            raise InvalidInstance(f"{path}.nodes", raw, "must be a list of nodes")
        return cls(tuple(Node.from_dict(n, f"{path}.nodes[{i}]") for i, n in enumerate(raw)))


# --------------------------------------------------------------------------- job
@dataclass(frozen=True)
class Job:
    """A training job: a gang of ``workers`` GPUs that must do ``work`` iterations.

    ``throughput[k]`` is iterations per second *per worker* on GPU type ``k``; a gang of
    W workers on type k progresses at ``W * throughput[k]`` iterations/s. A gang spread
    over several types progresses at W times the slowest used type's rate (synchronous
    data-parallel training waits for its slowest worker).

    ``compute_share`` (optional, in (0, 1]; ``None`` means 1) is the fraction of one GPU's
    compute an iteration keeps busy when the job runs alone (Salus' u). In a
    schedule that declares sharing, an allocation holding ``share`` s of a GPU runs the
    job at ``min(1, s / u)`` times its throughput: it cannot use more than
    u of the GPU.
    """

    id: str
    arrival: float
    workers: int
    work: float
    throughput: Mapping[str, float]
    weight: float = 1.0
    user: str | None = None
    profile: str | None = None
    sensitivity: Sensitivity | None = None
    memory: GpuMemory | None = None
    utility: Utility | None = None
    compute_share: float | None = None

    def __post_init__(self) -> None:
        self._check("job")

    def _check(self, path: str) -> None:
        _str(f"{path}.id", self.id)
        object.__setattr__(self, "arrival", _num(f"{path}.arrival", self.arrival))
        object.__setattr__(self, "workers", _int(f"{path}.workers", self.workers, minimum=1))
        object.__setattr__(self, "work", _num(f"{path}.work", self.work, strict=True))
        tp = _mapping(f"{path}.throughput", self.throughput)
        if len(tp) == 0:
            raise InvalidInstance(f"{path}.throughput", dict(tp),
                                  "must list at least one GPU type")
        clean = {}
        for k, v in tp.items():
            _str(f"{path}.throughput", k)
            clean[k] = _num(f"{path}.throughput.{k}", v)
        if all(v == 0 for v in clean.values()):
            raise InvalidInstance(f"{path}.throughput", clean,
                                  "throughput is zero on every GPU type: the job can never run")
        object.__setattr__(self, "throughput", _frozen(clean))
        object.__setattr__(self, "weight", _num(f"{path}.weight", self.weight, strict=True))
        if self.user is not None:
            _str(f"{path}.user", self.user)
        if self.profile is not None:
            _str(f"{path}.profile", self.profile)
        if self.compute_share is not None:
            u = _num(f"{path}.compute_share", self.compute_share, strict=True)
            if u > 1:
                raise InvalidInstance(f"{path}.compute_share", self.compute_share,
                                      "must be in (0, 1]")
            object.__setattr__(self, "compute_share", u)
        for name, typ in (("sensitivity", Sensitivity), ("memory", GpuMemory),
                          ("utility", Utility)):
            v = getattr(self, name)
            if v is not None and not isinstance(v, typ):
                raise InvalidInstance(f"{path}.{name}", v, f"must be a {typ.__name__}")

    def rate(self, gpu_type: str) -> float:
        """Per-worker throughput on ``gpu_type`` (0 if the job cannot run there)."""
        return self.throughput.get(gpu_type, 0.0)

    @property
    def best_rate(self) -> float:
        return max(self.throughput.values())

    def min_duration(self) -> float:
        """Seconds to finish alone with its full gang on its fastest GPU type."""
        return self.work / (self.workers * self.best_rate)

    def value(self, delay: float | np.ndarray) -> float | np.ndarray:
        """Utility of finishing with completion delay ``delay`` (a number or an array of
        delays, answered in the same shape): ``weight x utility(delay)``.

        A job without a ``utility`` has the constant utility 1, so its value is its
        ``weight`` whenever it completes (the default of every utility-based model:
        Hadar, HadarE)."""
        if self.utility is None:
            d = np.asarray(delay, dtype=float)
            return self.weight if d.ndim == 0 else np.full(d.shape, self.weight)
        return self.weight * self.utility(delay)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "arrival": self.arrival, "workers": self.workers,
                             "work": self.work, "throughput": dict(self.throughput),
                             "weight": self.weight}
        for name in ("user", "profile", "compute_share"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        for name in ("sensitivity", "memory", "utility"):
            v = getattr(self, name)
            if v is not None:
                d[name] = v.to_dict()
        return d

    @classmethod
    def from_dict(cls, data: Any, path: str = "job") -> Job:
        data = _mapping(path, data)
        _no_unknown(path, data, {"id", "arrival", "workers", "work", "throughput", "weight",
                                 "user", "profile", "sensitivity", "memory", "utility",
                                 "compute_share"})
        _require(path, data, ("id", "arrival", "workers", "work", "throughput"))
        kw = dict(data)
        if kw.get("sensitivity") is not None:
            kw["sensitivity"] = Sensitivity.from_dict(kw["sensitivity"], f"{path}.sensitivity")
        if kw.get("memory") is not None:
            kw["memory"] = GpuMemory.from_dict(kw["memory"], f"{path}.memory")
        if kw.get("utility") is not None:
            kw["utility"] = Utility.from_dict(kw["utility"], f"{path}.utility")
        j = cls.__new__(cls)
        for f_, spec in cls.__dataclass_fields__.items():
            object.__setattr__(j, f_, kw.get(f_, spec.default))
        j._check(path)
        return j


# --------------------------------------------------------------------------- instance
@dataclass(frozen=True)
class Instance:
    """Cluster + jobs + slot (round) length in seconds + optional horizon in seconds,
    and optionally the measured co-located rates of pairs of jobs sharing GPUs
    (:class:`~optsched.core.colocation.Colocation`, Gavel's space sharing).

    Cross-checks made here: job ids are unique; every GPU type in a throughput map or in
    the co-location table exists in the cluster; every job fits the cluster (its gang is
    no wider than the GPUs of the types it can run on); arrivals precede the horizon.
    """

    cluster: Cluster
    jobs: tuple[Job, ...]
    slot: float = 360.0
    horizon: float | None = None
    name: str = "instance"
    colocation: Colocation | None = None

    def __post_init__(self) -> None:
        self._check("")

    def _check(self, root: str) -> None:
        def p(s: str) -> str:
            return f"{root}.{s}" if root else s

        if not isinstance(self.cluster, Cluster):
            raise InvalidInstance(p("cluster"), self.cluster, "must be a Cluster")
        if not isinstance(self.jobs, (tuple, list)):
            raise InvalidInstance(p("jobs"), self.jobs, "must be a list of jobs")
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "slot", _num(p("slot"), self.slot, strict=True))
        if self.horizon is not None:
            object.__setattr__(self, "horizon", _num(p("horizon"), self.horizon, strict=True))
        _str(p("name"), self.name)
        types = set(self.cluster.gpu_types)
        if self.colocation is not None:
            if not isinstance(self.colocation, Colocation):
                raise InvalidInstance(p("colocation"), self.colocation,
                                      "must be a Colocation table")
            for t in self.colocation.gpu_types:
                if t not in types:
                    raise InvalidInstance(p(f"colocation.{t}"), t,
                                          f"unknown GPU type {t!r}; cluster has "
                                          f"{sorted(types)}")
        per_type = self.cluster.gpus_per_type
        seen: dict[str, int] = {}
        for i, j in enumerate(self.jobs):
            jp = p(f"jobs[{i}]")
            if not isinstance(j, Job):
                raise InvalidInstance(jp, j, "must be a Job")
            if j.id in seen:
                raise InvalidInstance(f"{jp}.id", j.id,
                                      f"duplicate job id (also jobs[{seen[j.id]}])")
            seen[j.id] = i
            for k in j.throughput:
                if k not in types:
                    raise InvalidInstance(f"{jp}.throughput.{k}", j.throughput[k],
                                          f"unknown GPU type {k!r}; cluster has {sorted(types)}")
            usable = sum(per_type[k] for k, v in j.throughput.items() if v > 0)
            if j.workers > usable:
                raise InvalidInstance(f"{jp}.workers", j.workers,
                                      f"job needs {j.workers} GPUs but the cluster has only "
                                      f"{usable} GPUs of the types it can run on")
            if self.horizon is not None and j.arrival >= self.horizon:
                raise InvalidInstance(f"{jp}.arrival", j.arrival,
                                      f"arrives at or after the horizon {self.horizon:g}")

    # ------------------------------------------------------------------ views
    @property
    def n_jobs(self) -> int:
        return len(self.jobs)

    @cached_property
    def job_index(self) -> dict[str, int]:
        return {j.id: i for i, j in enumerate(self.jobs)}

    def job(self, job_id: str) -> Job:
        return self.jobs[self.job_index[job_id]]

    @cached_property
    def throughput_matrix(self) -> np.ndarray:
        """``T[j, k]``: per-worker throughput of job j on ``cluster.gpu_types[k]`` (0 = cannot)."""
        types = self.cluster.gpu_types
        return np.array([[j.rate(t) for t in types] for j in self.jobs], dtype=float).reshape(
            len(self.jobs), len(types))

    @property
    def arrivals(self) -> np.ndarray:
        return np.array([j.arrival for j in self.jobs], dtype=float)

    @property
    def workers(self) -> np.ndarray:
        return np.array([j.workers for j in self.jobs], dtype=np.int64)

    @property
    def work(self) -> np.ndarray:
        return np.array([j.work for j in self.jobs], dtype=float)

    def colocation_key(self, job_id: str) -> str:
        """The key under which the co-location table knows job ``job_id``: its profile,
        or its id when it has none."""
        j = self.jobs[self.job_index[job_id]]
        return j.profile if j.profile is not None else j.id

    def colocated_rate(self, job_id: str, partner_id: str, gpu_type: str) -> float | None:
        """Per-worker iterations/s of job ``job_id`` sharing GPUs of ``gpu_type`` with
        job ``partner_id``, or ``None`` when the instance has no such rate (no table,
        no entry for the two keys and the type, or gangs of different sizes: a pair
        shares the same GPUs, so both jobs hold as many).

        Unknown job ids raise :class:`KeyError`."""
        if self.colocation is None:
            return None
        a = self.jobs[self.job_index[job_id]]
        b = self.jobs[self.job_index[partner_id]]
        if a.workers != b.workers or a.id == b.id:
            return None
        return self.colocation.rate(gpu_type, a.profile if a.profile is not None else a.id,
                                    b.profile if b.profile is not None else b.id, a.workers)

    def replace(self, **changes: Any) -> Instance:
        """A copy with ``changes``; a copy with other ``jobs`` keeps only the co-location
        rows between their keys (unless ``colocation`` is given too)."""
        kw: dict[str, Any] = {"cluster": self.cluster, "jobs": self.jobs, "slot": self.slot,
                              "horizon": self.horizon, "name": self.name,
                              "colocation": self.colocation}
        kw.update(changes)
        if "jobs" in changes and "colocation" not in changes and self.colocation is not None:
            # the co-location rows of the jobs kept (the others can never be used)
            keys = {j.profile if j.profile is not None else j.id for j in kw["jobs"]}
            table = self.colocation.restricted(keys)
            kw["colocation"] = table if len(table) else None
        return Instance(**kw)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "slot": self.slot,
                             "cluster": self.cluster.to_dict(),
                             "jobs": [j.to_dict() for j in self.jobs]}
        if self.horizon is not None:
            d["horizon"] = self.horizon
        if self.colocation is not None:
            d["colocation"] = self.colocation.to_dict()
        return d

    def to_json(self, path: str | Path | None = None, indent: int | None = 1) -> str:
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:  # atomically: a failed write leaves the old file whole
            write_text(path, text + "\n", field="path")
        return text

    @classmethod
    def from_dict(cls, data: Any) -> Instance:
        data = _mapping("(root)", data)
        _no_unknown("", data, {"name", "slot", "horizon", "cluster", "jobs", "colocation"})
        _require("", data, ("cluster", "jobs"))
        cluster = Cluster.from_dict(data["cluster"], "cluster")
        raw = data["jobs"]
        if not isinstance(raw, list):
            raise InvalidInstance("jobs", raw, "must be a list of jobs")
        jobs = tuple(Job.from_dict(j, f"jobs[{i}]") for i, j in enumerate(raw))
        kw: dict[str, Any] = {"cluster": cluster, "jobs": jobs}
        for k in ("slot", "horizon", "name"):
            if k in data and data[k] is not None:
                kw[k] = data[k]
        if data.get("colocation") is not None:
            kw["colocation"] = Colocation.from_dict(data["colocation"])
        return cls(**kw)

    @classmethod
    def from_json(cls, text: str | bytes) -> Instance:
        """Parse JSON text, or UTF-8 bytes, (rules of :mod:`optsched.core.jsonio`) into an
        instance."""
        return cls.from_dict(parse_json(text, InvalidInstance))


def load_instance(path: str | Path) -> Instance:
    """Read an instance from a UTF-8 JSON file (see :func:`instance_json_schema` and the
    document rules of :mod:`optsched.core.jsonio`)."""
    return Instance.from_dict(load_json(path, InvalidInstance))
