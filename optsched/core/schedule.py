"""The one schedule representation shared by every model, heuristic and policy.

A schedule is a set of allocation intervals. An :class:`Allocation` says that job
``job`` (copy ``copy``) holds ``gpus`` GPUs of type ``gpu_type`` on node ``node`` (and
``cpus`` cores, ``memory`` GB of DRAM) during ``[start, end)``. ``share`` is the fraction
of each of those GPUs' compute the allocation holds: 1 for exclusive use; below 1 only in
models that declare GPU sharing (Salus lanes time-slice a GPU). ``partner`` names the
job that holds *the same* GPUs at the same time (space sharing, Gavel §3.1): only in
schedules that declare ``colocation``, and only for pairs whose co-located rates the
instance has (:mod:`optsched.core.colocation`).

Progress semantics (checked by :mod:`optsched.core.validate`):

* the allocations of one (job, copy) active at the same instant form one gang; it
  progresses at ``share * GPUs * min_k throughput[k]`` over the GPU types it uses
  (synchronous training waits for the slowest worker); a job that sets
  ``compute_share`` u uses at most u of a GPU, so the factor is ``min(1, share / u)``;
* without forking the gang must be exactly the job's ``workers`` wide;
* with forking (HadarE) each copy sits on one node with 1..workers GPUs and the copies'
  progress adds up; the job then completes ``consolidation`` seconds after its work is
  done; with ``copy_efficiency`` e < 1, at every instant the job's copy of largest rate
  counts in full and every other copy at e of its rate (HadarE's efficiency model);
* ``progress_rule`` (:data:`optsched.core.progress.PROGRESS_RULES`) changes the first
  two points: ``"partial"`` lets a gang hold 1..workers GPUs (at ``g * min_k
  throughput[k]``), ``"additive"`` credits ``sum_a gpus_a * throughput[k_a]`` (OASiS's
  rule); see :mod:`optsched.core.progress`;
* with ``colocation`` an allocation naming a ``partner`` shares its GPUs with that job:
  the partner holds a mirror allocation (same node, type and GPU count, naming this
  job as its partner) for as long as both are unfinished (a job whose partner
  completed keeps the GPUs alone until the allocation ends, still at the co-located
  rate: the pair's round is not re-planned), every allocation of a job active at one
  instant names the same partner, the pair's GPUs count once against capacity (each
  allocation for half), and each job of the pair progresses at its co-located
  per-worker rate (:meth:`optsched.core.instance.Instance.colocated_rate`) in place of
  its isolated one; a GPU never holds a third job;
* with ``resource_sensitive`` (Synergy) a job that has a
  :class:`~optsched.core.instance.Sensitivity` runs at its throughput times
  ``sensitivity.relative(cpus / gpus, memory / gpus)`` of the allocation (the smallest
  over the gang's allocations): CPU cores and DRAM per GPU change its speed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from optsched.core.fields import MAX_INTEGER
from optsched.core.files import write_text
from optsched.core.jsonio import load_json
from optsched.core.progress import PROGRESS_RULES, check_progress_rule
from optsched.errors import InvalidOption, InvalidSchedule

__all__ = ["Placement", "Allocation", "Schedule", "load_schedule", "merge_intervals"]


class Placement(NamedTuple):
    """What one job (or one forked copy of it) holds: ``gpus`` GPUs of type ``gpu_type``
    on ``node``, ``cpus`` cores and ``memory`` GB of DRAM there, ``share`` of each GPU's
    compute (below 1 only where sharing is declared), as part of gang ``copy`` (other than
    0 only where forking is declared), sharing those GPUs with job ``partner`` (only
    where co-location is declared; the partner places the mirror image).

    The one placement record: a simulator policy returns placements for a decision, and
    an :class:`Allocation` is a placement held over ``[start, end)``
    (:meth:`Allocation.of`, :attr:`Allocation.placement`).
    """

    job: str
    node: str
    gpu_type: str
    gpus: int
    cpus: float = 0.0
    memory: float = 0.0
    copy: int = 0
    share: float = 1.0
    partner: str | None = None


@dataclass(frozen=True, slots=True)
class Allocation:
    """A :class:`Placement` held during ``[start, end)``."""

    job: str
    start: float
    end: float
    node: str
    gpu_type: str
    gpus: int
    cpus: float = 0.0
    memory: float = 0.0
    copy: int = 0
    share: float = 1.0
    partner: str | None = None

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def placement(self) -> Placement:
        """What the allocation holds, without its interval."""
        return Placement(self.job, self.node, self.gpu_type, self.gpus, self.cpus,
                         self.memory, self.copy, self.share, self.partner)

    @classmethod
    def of(cls, placement: Placement, start: float, end: float) -> Allocation:
        """``placement`` held during ``[start, end)``."""
        p = placement
        return cls(p.job, start, end, p.node, p.gpu_type, p.gpus, p.cpus, p.memory, p.copy,
                   p.share, p.partner)

    def to_dict(self) -> dict[str, Any]:
        d = {"job": self.job, "start": self.start, "end": self.end, "node": self.node,
             "gpu_type": self.gpu_type, "gpus": self.gpus}
        if self.cpus:
            d["cpus"] = self.cpus
        if self.memory:
            d["memory"] = self.memory
        if self.copy:
            d["copy"] = self.copy
        if self.share != 1.0:
            d["share"] = self.share
        if self.partner is not None:
            d["partner"] = self.partner
        return d


_ALLOC_FIELDS = {"job": str, "start": float, "end": float, "node": str, "gpu_type": str,
                 "gpus": int, "cpus": float, "memory": float, "copy": int, "share": float,
                 "partner": str}


@dataclass(frozen=True)
class Schedule:
    """Allocations plus the completion time each finished job declares.

    ``completion`` maps job id to completion time; jobs absent from it were not finished
    (rejected by an admission test, or still running at the end of a simulation).
    """

    allocations: tuple[Allocation, ...]
    completion: Mapping[str, float] = field(default_factory=dict)
    sharing: bool = False
    forking: bool = False
    consolidation: float = 0.0
    resource_sensitive: bool = False
    progress_rule: str = "gang"
    copy_efficiency: float = 1.0
    colocation: bool = False

    def __post_init__(self) -> None:
        check_progress_rule(self.progress_rule)
        e = self.copy_efficiency
        if isinstance(e, bool) or not isinstance(e, (int, float)) or not 0 < e <= 1:
            raise InvalidOption("copy_efficiency", e, "must be a number in (0, 1]")
        if e < 1 and not self.forking:
            raise InvalidOption("copy_efficiency", e, "below 1 only with forking (a job "
                                "without forking has one copy)")
        object.__setattr__(self, "allocations", tuple(self.allocations))
        object.__setattr__(self, "completion", MappingProxyType(dict(self.completion)))

    def by_job(self) -> dict[str, list[Allocation]]:
        out: dict[str, list[Allocation]] = {}
        for a in self.allocations:
            out.setdefault(a.job, []).append(a)
        return out

    @property
    def end(self) -> float:
        ends = [a.end for a in self.allocations] + list(self.completion.values())
        return max(ends) if ends else 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"allocations": [a.to_dict() for a in self.allocations],
                             "completion": dict(self.completion)}
        if self.sharing:
            d["sharing"] = True
        if self.forking:
            d["forking"] = True
        if self.consolidation:
            d["consolidation"] = self.consolidation
        if self.resource_sensitive:
            d["resource_sensitive"] = True
        if self.progress_rule != "gang":
            d["progress_rule"] = self.progress_rule
        if self.copy_efficiency != 1.0:
            d["copy_efficiency"] = self.copy_efficiency
        if self.colocation:
            d["colocation"] = True
        return d

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.to_dict(), indent=1)
        if path is not None:  # atomically: a failed write leaves the old file whole
            write_text(path, text + "\n", field="path")
        return text

    @classmethod
    def from_dict(cls, data: Any) -> Schedule:
        if not isinstance(data, Mapping):
            raise InvalidSchedule("(root)", data, "must be an object")
        if "schedule" in data and "allocations" not in data:  # a Result JSON
            data = data["schedule"]
            if not isinstance(data, Mapping):
                raise InvalidSchedule("schedule", data, "must be an object")
        extra = set(data) - {"allocations", "completion", *_FLAGS, "consolidation",
                             "progress_rule", "copy_efficiency"}
        if extra:
            k = sorted(extra)[0]
            raise InvalidSchedule(k, data[k], "unknown field")
        raw = data.get("allocations")
        if not isinstance(raw, list):
            raise InvalidSchedule("allocations", raw, "must be a list")
        allocs = [_alloc_from_dict(a, f"allocations[{i}]") for i, a in enumerate(raw)]
        comp = data.get("completion", {})
        if not isinstance(comp, Mapping):
            raise InvalidSchedule("completion", comp, "must be an object job id -> time")
        completion = {k: _number(f"completion.{k}", v) for k, v in comp.items()}
        flags = {}
        for k in _FLAGS:
            v = data.get(k, False)
            if not isinstance(v, bool):  # bool("no") is True: only JSON booleans are safe
                raise InvalidSchedule(k, v, "must be a JSON boolean (true or false)")
            flags[k] = v
        cons = _number("consolidation", data.get("consolidation", 0.0))
        if cons < 0:
            raise InvalidSchedule("consolidation", cons, "must be >= 0")
        rule = data.get("progress_rule", "gang")
        if not isinstance(rule, str) or rule not in PROGRESS_RULES:
            raise InvalidSchedule("progress_rule", rule,
                                  f"must be one of {', '.join(PROGRESS_RULES)}")
        eff = _number("copy_efficiency", data.get("copy_efficiency", 1.0))
        if not 0 < eff <= 1 or (eff < 1 and not flags["forking"]):
            raise InvalidSchedule("copy_efficiency", eff,
                                  "must be in (0, 1], below 1 only with forking")
        return cls(tuple(allocs), completion, consolidation=cons, progress_rule=rule,
                   copy_efficiency=eff, **flags)


_FLAGS = ("sharing", "forking", "resource_sensitive", "colocation")


def _number(path: str, v: Any, *, integer: bool = False) -> Any:
    """``v`` as a finite float (or, with ``integer``, an int of at most 2**53)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InvalidSchedule(path, v, "must be a number")
    if integer:
        if isinstance(v, float) and not v.is_integer():
            raise InvalidSchedule(path, v, "must be an integer")
        if abs(v) > MAX_INTEGER:
            raise InvalidSchedule(path, v, f"number out of range (integers are at most "
                                  f"2**53 = {MAX_INTEGER})")
        return int(v)
    try:
        f = float(v)
    except OverflowError:
        raise InvalidSchedule(path, v, "number out of range (does not fit a 64-bit "
                              "float)") from None
    if not math.isfinite(f):
        raise InvalidSchedule(path, v, "must be a finite number")
    return f


def _alloc_from_dict(d: Any, path: str) -> Allocation:
    if not isinstance(d, Mapping):
        raise InvalidSchedule(path, d, "must be an object")
    kw: dict[str, Any] = {}
    for k, v in d.items():
        if k not in _ALLOC_FIELDS:
            raise InvalidSchedule(f"{path}.{k}", v,
                                  f"unknown field; allowed {sorted(_ALLOC_FIELDS)}")
        typ = _ALLOC_FIELDS[k]
        if typ is str:
            if not isinstance(v, str):
                raise InvalidSchedule(f"{path}.{k}", v, "must be a string")
            kw[k] = v
        else:
            kw[k] = _number(f"{path}.{k}", v, integer=typ is int)
    for k in ("job", "start", "end", "node", "gpu_type", "gpus"):
        if k not in kw:
            raise InvalidSchedule(f"{path}.{k}", None, "required field is missing")
    return Allocation(**kw)


def load_schedule(path: str | Path) -> Schedule:
    """Read a schedule, or the schedule of a result JSON, from a UTF-8 JSON file (document
    rules of :mod:`optsched.core.jsonio`)."""
    return Schedule.from_dict(load_json(path, InvalidSchedule))


def merge_intervals(allocations: Iterable[Allocation], tol: float = 1e-9) -> list[Allocation]:
    """Join back-to-back allocations that differ only in time (keeps schedules small)."""
    out: list[Allocation] = []
    last: dict[tuple, int] = {}
    for a in sorted(allocations, key=lambda a: (a.start, a.job)):
        key = (a.job, a.copy, a.node, a.gpu_type, a.gpus, a.cpus, a.memory, a.share,
               a.partner)
        i = last.get(key)
        if i is not None and abs(out[i].end - a.start) <= tol:
            b = out[i]
            out[i] = Allocation(b.job, b.start, a.end, b.node, b.gpu_type, b.gpus, b.cpus,
                                b.memory, b.copy, b.share, b.partner)
        else:
            last[key] = len(out)
            out.append(a)
    return out
