r"""The benchmark library's files: instances, records and proofs, and their checks.

A library is a folder (the shipped one is :data:`SHIPPED`, inside the package)::

    records.json                      every instance's record (below)
    <model>/<name>.json.gz            the instance, in the instance format, gzipped
    <model>/<name>.<objective>[.<hash>].proof.json.gz
                                      the proof of its best-known value (a schedule or an
                                      allocation: :mod:`optsched.bench.proof`)

A *record* holds, per objective of the instance (``"objective"``, the model's default,
for a solve set; ``"mean_jct"`` and ``"makespan"`` for a simulation set):

* ``best``: the best-known value, the method (or policy) and options that found it,
  the optsched version, the date and the proof's file name;
* ``bound``: the best proven bound on the optimum and its source (an exact method's
  dual bound, an LP relaxation, the simulator's certified bounds);
* ``gap`` :math:`= |b - v| / \max(|v|, |b|)`, which is :math:`1 - 1/\rho` for the
  certified factor :math:`\rho = v/b` (minimisation) or :math:`b/v` (maximisation), so
  in :math:`[0, 1]` for either sense; and ``status``: ``closed`` when ``gap`` is at most
  the set's tolerance, else ``open``.

:func:`check_record` accepts a record only when its proof passes the validator and
reproduces the best-known value (relative :data:`VALUE_TOLERANCE`), its bound is on the
right side (:math:`b \le v` for a minimisation, :math:`b \ge v` for a maximisation, up to
the same tolerance), and its gap and status are those the numbers give; anything else
raises :class:`~optsched.errors.InvalidRecord` naming the instance.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from optsched.bench.sets import SETS, SetSpec, set_of_instance
from optsched.core.instance import Instance
from optsched.errors import InvalidRecord

__all__ = ["SHIPPED", "VALUE_TOLERANCE", "Best", "Bound", "Entry", "Record", "Library",
           "check_record", "evaluate_proof", "SLOTTED", "PROGRAM_BOUNDS", "new_record",
           "with_best", "with_bound", "today"]

#: the library shipped inside the package
SHIPPED = Path(__file__).with_name("data")
#: relative tolerance between a recorded value and the value its proof reproduces (and
#: between a bound and the best-known value it may not cross): floating-point noise of
#: sums of thousands of completion times, far below any gap a record states
VALUE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Best:
    """A best-known value and where it came from."""

    value: float
    method: str
    proof: str
    options: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""
    date: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "method": self.method, "options": dict(self.options),
                "version": self.version, "date": self.date, "proof": self.proof}


@dataclass(frozen=True)
class Bound:
    """A proven bound on the optimum and its source."""

    value: float
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


@dataclass(frozen=True)
class Entry:
    """One objective of an instance: sense, best-known value, bound."""

    label: str
    sense: str
    best: Best | None = None
    bound: Bound | None = None

    @property
    def gap(self) -> float | None:
        r""":math:`|b - v| / \max(|v|, |b|)` (module docstring), ``None`` without both."""
        if self.best is None or self.bound is None:
            return None
        return gap(self.best.value, self.bound.value)

    def status(self, tolerance: float) -> str:
        """``closed`` when the gap is at most ``tolerance``, else ``open``."""
        g = self.gap
        return "closed" if g is not None and g <= tolerance else "open"

    def better(self, a: float, b: float) -> bool:
        """Whether value ``a`` improves on ``b`` in this sense."""
        return a < b if self.sense == "min" else a > b

    def to_dict(self, tolerance: float) -> dict[str, Any]:
        return {"label": self.label, "sense": self.sense,
                "best": None if self.best is None else self.best.to_dict(),
                "bound": None if self.bound is None else self.bound.to_dict(),
                "gap": self.gap, "status": self.status(tolerance)}


@dataclass(frozen=True)
class Record:
    """What the library knows of one instance."""

    instance: str
    set: str
    sha256: str
    entries: Mapping[str, Entry]

    @property
    def spec(self) -> SetSpec:
        return SETS[self.set]

    def to_dict(self) -> dict[str, Any]:
        tol = self.spec.tolerance
        return {"instance": self.instance, "set": self.set, "sha256": self.sha256,
                "objectives": {k: e.to_dict(tol) for k, e in self.entries.items()}}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Record:
        """Read a record (``where``: the instance name, for the error)."""
        try:
            entries = {}
            for key, e in data["objectives"].items():
                best = None if e["best"] is None else Best(
                    float(e["best"]["value"]), str(e["best"]["method"]),
                    str(e["best"]["proof"]), dict(e["best"].get("options") or {}),
                    str(e["best"].get("version", "")), str(e["best"].get("date", "")))
                bound = None if e["bound"] is None else Bound(float(e["bound"]["value"]),
                                                              str(e["bound"]["source"]))
                entries[str(key)] = Entry(str(e["label"]), str(e["sense"]), best, bound)
                if e.get("status") not in (None, "open", "closed"):
                    raise ValueError(f"status {e.get('status')!r}")
            rec = cls(str(data["instance"]), str(data["set"]), str(data["sha256"]), entries)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidRecord(where, data, f"malformed record ({type(exc).__name__}: "
                                f"{exc})") from None
        if rec.set not in SETS:
            raise InvalidRecord(where, rec.set, "names no benchmark set")
        for key, e in data["objectives"].items():  # a stored status must be the numbers'
            if "status" in e and e["status"] != rec.entries[key].status(rec.spec.tolerance):
                raise InvalidRecord(f"{where}.{key}.status", e["status"], (
                    f"the record's gap {rec.entries[key].gap} gives "
                    f"{rec.entries[key].status(rec.spec.tolerance)!r} at the set's tolerance "
                    f"{rec.spec.tolerance:g}"))
        return rec


def gap(value: float, bound: float) -> float:
    r""":math:`|b - v| / \max(|v|, |b|)`: :math:`1 - 1/\rho` for the factor
    :math:`\rho \ge 1` between a value and a valid bound of either sense (0 when they
    are equal, both 0 included)."""
    scale = max(abs(value), abs(bound))
    return 0.0 if scale == 0 else abs(bound - value) / scale


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")


class Library:
    """A benchmark library folder (module docstring): the shipped one by default."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else SHIPPED

    # ---- files
    def instance_file(self, name: str) -> Path:
        return self.root / f"{name}.json.gz"

    def proof_file(self, name: str, objective: str, data: bytes) -> Path:
        """Where a proof of ``data`` (its file's bytes) goes: named by its content, so a
        new proof never overwrites the one a record still points at."""
        digest = hashlib.sha256(data).hexdigest()[:12]
        return self.root / f"{name}.{objective}.{digest}.proof.json.gz"

    def has_instance(self, name: str) -> bool:
        return self.instance_file(name).is_file()

    def instance(self, name: str) -> Instance:
        """The shipped instance ``name`` (its file's hash checked against its record)."""
        set_of_instance(name)  # UnknownName for a name no set holds
        path = self.instance_file(name)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise InvalidRecord(name, str(path), "the instance file is missing from the "
                                "library") from None
        rec = self.records().get(name)
        if rec is not None and hashlib.sha256(data).hexdigest() != rec.sha256:
            raise InvalidRecord(name, str(path), "the instance file does not match its "
                                "record's sha256: it was changed after its values were "
                                "recorded")
        return Instance.from_json(gzip.decompress(data)).replace(name=name)

    def proof(self, name: str, objective: str, best: Best) -> dict[str, Any]:
        path = self.root / best.proof
        try:
            return json.loads(gzip.decompress(path.read_bytes()))
        except FileNotFoundError:
            raise InvalidRecord(f"{name}.{objective}", best.proof, "the best-known value's "
                                "proof file is missing") from None
        except (OSError, EOFError, ValueError) as exc:
            raise InvalidRecord(f"{name}.{objective}", best.proof, "the proof file cannot "
                                f"be read: {exc}") from None

    # ---- records
    def records(self) -> dict[str, Record]:
        """Every record by instance name (none for a new library)."""
        path = self.root / "records.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise InvalidRecord("records.json", str(path), f"not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise InvalidRecord("records.json", str(path), "must map instance names to "
                                "records")
        return {k: Record.from_dict(v, k) for k, v in raw.items()}

    def write_records(self, records: Mapping[str, Record]) -> Path:
        """Write ``records.json`` atomically (instances in set order)."""
        from optsched.core.files import write_text

        order = {i.name: n for n, i in enumerate(i for s in SETS.values() for i in s.instances)}
        keys = sorted(records, key=lambda k: order.get(k, len(order)))
        text = json.dumps({k: records[k].to_dict() for k in keys}, indent=1, allow_nan=False)
        return write_text(self.root / "records.json", text + "\n", field="library")

    def write_instance(self, inst: Instance) -> str:
        """Store ``inst`` under its name; return its file's sha256."""
        from optsched.core.files import write_bytes

        data = gzip.compress(inst.to_json(indent=None).encode(), mtime=0)
        path = self.instance_file(inst.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, data, field="library")
        return hashlib.sha256(data).hexdigest()

    def write_proof(self, name: str, objective: str, proof: Mapping[str, Any]) -> str:
        """Store a proof under a name of its own (:meth:`proof_file`); return its file
        name relative to the library."""
        from optsched.core.files import write_bytes

        text = json.dumps(proof, separators=(",", ":"), allow_nan=False)
        data = gzip.compress(text.encode(), mtime=0)
        path = self.proof_file(name, objective, data)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, data, field="library")
        return str(path.relative_to(self.root))


def evaluate_proof(model: str, inst: Instance, proof: Mapping[str, Any], objective: str,
                   where: str) -> float:
    """The value ``proof`` reproduces on ``inst`` for ``objective`` of a solve set's
    ``model`` (its default objective) or of a simulation set (``model == "sim"``)."""
    from optsched.bench.proof import evaluate, evaluate_simulation

    if model == "sim":
        return evaluate_simulation(inst, proof, objective, where=where)
    slot = proof.get("slot") if isinstance(proof, Mapping) else None
    if slot is not None and model in SLOTTED and not _close(float(slot), inst.slot):
        # the record is about the program on the instance's own slot: a schedule planned
        # on another grid is measured by another rule
        raise InvalidRecord(where, slot, f"planned on {slot:g}-s slots; the instance's "
                            f"slot is {inst.slot:g} s (run the method without slot=)")
    return evaluate(model, inst, proof, where=where)


#: models whose schedules are planned on slots (a proof states its slot)
SLOTTED = ("hadar", "hadare", "tiresias")
#: models whose exact program holds every schedule their proofs may be: its dual bound
#: and its relaxations bound every admissible value. Not Tiresias: its heuristics decide
#: in continuous time, which its validator admits and its slotted program does not hold
#: (they beat that program's optimum), so only the simulator's bound covers them.
PROGRAM_BOUNDS = ("allox", "gavel", "hadar", "hadare", "salus", "synergy")


def check_record(library: Library, record: Record) -> None:
    """Accept ``record`` or raise :class:`~optsched.errors.InvalidRecord` naming its
    instance (module docstring): the instance file matches its hash, every best-known
    value has a proof that passes the validator and reproduces it, and no bound crosses
    its best-known value.

    Complexity: one validation of each proof (linear in its allocations, up to a sort).
    """
    name = record.instance
    spec = set_of_instance(name)
    if spec.name != record.set:
        raise InvalidRecord(name, record.set, f"the instance belongs to set {spec.name!r}")
    inst = library.instance(name)
    for key, e in record.entries.items():
        where = f"{name}.{key}"
        if key not in spec.objectives:
            raise InvalidRecord(where, key, f"not an objective of set {spec.name!r} "
                                f"({', '.join(spec.objectives)})")
        if e.best is None:
            continue
        if not e.best.proof:
            raise InvalidRecord(where, e.best.value, "a best-known value without a proof "
                                "(schedule or allocation) is not accepted")
        value = evaluate_proof(spec.model, inst, library.proof(name, key, e.best), key, where)
        if not _close(value, e.best.value):
            raise InvalidRecord(where, e.best.value, f"its proof reproduces {value!r}, not "
                                "the recorded best-known value")
        if e.bound is not None:
            v, b = e.best.value, e.bound.value
            crossed = b > v if e.sense == "min" else b < v
            if crossed and not _close(v, b):
                raise InvalidRecord(where, b, f"the bound ({e.bound.source}) is "
                                    f"{'above' if e.sense == 'min' else 'below'} the "
                                    f"best-known value {v!r}: one of them is wrong")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=VALUE_TOLERANCE, abs_tol=VALUE_TOLERANCE)


def with_best(record: Record, key: str, best: Best) -> Record:
    """``record`` with ``best`` as the best-known value of objective ``key``."""
    entries = dict(record.entries)
    entries[key] = replace(entries[key], best=best)
    return replace(record, entries=entries)


def with_bound(record: Record, key: str, bound: Bound) -> Record:
    """``record`` with ``bound`` as the bound of objective ``key``."""
    entries = dict(record.entries)
    entries[key] = replace(entries[key], bound=bound)
    return replace(record, entries=entries)


def today() -> str:
    """The date a best-known value is recorded with (UTC)."""
    return _now()


def new_record(spec: SetSpec, name: str, sha256: str) -> Record:
    """The record of a new instance of ``spec``: its objectives, no value, no bound."""
    if spec.kind == "simulate":
        entries = {"mean_jct": Entry("mean JCT (s)", "min"),
                   "makespan": Entry("makespan (s)", "min")}
    else:
        from optsched.registry import get_model

        m = get_model(spec.model)
        entries = {"objective": Entry(m.objective, m.sense)}
    return Record(name, spec.name, sha256, entries)
