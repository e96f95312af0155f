r"""``optsched bench update``: record a run's improvements in a library, with their proofs.

For every row of a run folder (``optsched bench run --out RUN``) on an instance of the
library:

* a **value** better than the record's best-known one (or the first one) is recorded
  when its proof (``RUN/proofs/...``) passes the validator and the model's checks and
  reproduces the value on the library's instance
  (:func:`optsched.bench.library.evaluate_proof`), and no recorded bound crosses it;
  the proof is copied into the library;
* a **bound** better than the record's (``own_bound``: an exact method's dual bound, a
  bound method's value, the simulator's certified bound) is recorded with its source
  when it comes from the model's exact method or one of its bound methods (for a model
  whose program holds every admissible schedule:
  :data:`optsched.bench.library.PROGRAM_BOUNDS`), or a policy optsched ships, and
  does not cross the best-known value. A bound carries no proof a validator can check,
  so one computed by outside code is not taken; an exact *variant*, such as Salus'
  one-lane program, bounds a restricted model, not this one.

:func:`submit` takes one schedule (or result file, or proof) for one instance by the
same rules: a schedule computed outside optsched enters the library this way.

A row that claims a value without a proof, or whose proof fails, is refused:
:class:`~optsched.errors.InvalidRecord` naming the instance, and nothing is written.
The records are written once, atomically, after every row is checked.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from optsched.bench.library import (
    Best,
    Bound,
    Library,
    Record,
    evaluate_proof,
    today,
    with_best,
    with_bound,
)
from optsched.bench.sets import set_of_instance
from optsched.errors import InvalidRecord

__all__ = ["Change", "update_library", "read_run", "submit", "proof_from_file",
           "trusted_bound"]


@dataclass(frozen=True)
class Change:
    """One improvement recorded: ``what`` is ``"best"`` or ``"bound"``."""

    instance: str
    objective: str
    what: str
    old: float | None
    new: float
    source: str


def read_run(run: str | Path) -> list[dict[str, Any]]:
    """The rows of a run folder's ``cells.jsonl`` (errors left out)."""
    from optsched.studies.store import read_records

    path = Path(run) / "cells.jsonl"
    if not path.is_file():
        raise InvalidRecord("run", str(run), "holds no cells.jsonl: give the --out folder "
                            "of an optsched bench run")
    return [r for r in read_records(path, field="cells.jsonl", what="its cell")
            if r.get("status") != "error"]


def trusted_bound(row: Mapping[str, Any]) -> str:
    """The source of a row's bound, or ``""`` when it is not one optsched computed."""
    from optsched.registry import get_model, policy_spec

    name = str(row["method"])
    try:
        if row["kind"] == "policy":
            ps = policy_spec(name)
            how = row.get("own_bound_source") or "certified"
            return "" if ps.origin else f"simulator bound ({how})"
        from optsched.bench.sets import get_set

        m = get_model(get_set(row["set"]).model).method(name)
    except Exception:  # a module:name reference that no longer imports, ...
        return ""
    # an exact *variant* (e.g. Salus' one-lane program) solves a restricted model: its
    # dual bound bounds that model, not this one; the exact method and bound methods do,
    # for a model whose program holds every admissible schedule
    from optsched.bench.library import PROGRAM_BOUNDS

    if m.origin or not (m.kind == "bound" or m.name == "exact") or \
            get_set(row["set"]).model not in PROGRAM_BOUNDS:
        return ""
    opts = ", ".join(f"{k}={v}" for k, v in sorted((row.get("options") or {}).items()))
    return f"{m.name} ({m.kind}{'; ' + opts if opts else ''})"


def update_library(library: Library, rows: Iterable[Mapping[str, Any]], run: str | Path,
                   *, version: str | None = None) -> list[Change]:
    """Record the improvements of ``rows`` (a run in folder ``run``) in ``library``
    (module docstring); return them."""
    from optsched.version import __version__

    run = Path(run)
    records: dict[str, Record] = library.records()
    changes: list[Change] = []
    proofs: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        name, key = str(row["instance"]), str(row["objective"])
        where = f"{name}.{key}"
        rec = records.get(name)
        if rec is None or key not in rec.entries:
            raise InvalidRecord(where, name, "the library has no record of this instance "
                                "and objective")
        e = rec.entries[key]
        spec = set_of_instance(name)
        value = row.get("value")
        if value is not None and row.get("status") != "outside_model":
            if not row.get("proof"):
                raise InvalidRecord(where, value, "a value without a proof is not accepted")
            proof = _read_proof(run / str(row["proof"]), where)
            inst = library.instance(name)
            got = evaluate_proof(spec.model, inst, proof, key, where)
            if not math.isclose(got, float(value), rel_tol=1e-9, abs_tol=1e-9):
                raise InvalidRecord(where, value, f"its proof reproduces {got!r}, not the "
                                    "value the run reports")
            if e.best is None or (e.better(got, e.best.value) and not math.isclose(
                    got, e.best.value, rel_tol=1e-9, abs_tol=1e-9)):
                crossed = e.bound is not None and (
                    e.bound.value > got if e.sense == "min" else e.bound.value < got) and \
                    not math.isclose(got, e.bound.value, rel_tol=1e-9, abs_tol=1e-9)
                if crossed:
                    assert e.bound is not None
                    raise InvalidRecord(where, got, f"beats the recorded bound "
                                        f"{e.bound.value!r} ({e.bound.source}): the bound "
                                        "or the validator is wrong; not recorded")
                best = Best(got, str(row["method"]), "", dict(row.get("options") or {}),
                            version or __version__, today())
                changes.append(Change(name, key, "best", None if e.best is None
                                      else e.best.value, got, best.method))
                proofs[(name, key)] = proof
                rec = with_best(rec, key, best)
                e = rec.entries[key]
        own = row.get("own_bound")
        source = trusted_bound(row) if own is not None else ""
        if own is not None and source and (e.bound is None or (
                own > e.bound.value if e.sense == "min" else own < e.bound.value)):
            if e.best is not None and (own > e.best.value if e.sense == "min"
                                       else own < e.best.value) and not math.isclose(
                    own, e.best.value, rel_tol=1e-9, abs_tol=1e-9):
                raise InvalidRecord(where, own, f"the bound of {source} crosses the "
                                    f"best-known value {e.best.value!r}; not recorded")
            changes.append(Change(name, key, "bound", None if e.bound is None
                                  else e.bound.value, float(own), source))
            rec = with_bound(rec, key, Bound(float(own), source))
        records[name] = rec
    old = {(n, k): e.best.proof for n, r in library.records().items()
           for k, e in r.entries.items() if e.best is not None}
    # every row checked: the new proofs first, under new names, then the records; an
    # interrupt in between leaves the old records and the files they name whole
    for (name, key), proof in proofs.items():
        file = library.write_proof(name, key, proof)
        rec = records[name]
        e = rec.entries[key]
        assert e.best is not None
        records[name] = with_best(rec, key, Best(e.best.value, e.best.method, file,
                                                 e.best.options, e.best.version,
                                                 e.best.date))
    if changes:
        library.write_records(records)
    for (name, key) in proofs:  # a proof no record names any more
        gone = old.get((name, key))
        if gone and gone != records[name].entries[key].best.proof:  # type: ignore[union-attr]
            (library.root / gone).unlink(missing_ok=True)
    return changes


def _read_proof(path: Path, where: str) -> dict[str, Any]:
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
    except FileNotFoundError:
        raise InvalidRecord(where, str(path), "the proof file of this row is missing") \
            from None
    except (OSError, EOFError, ValueError) as exc:
        raise InvalidRecord(where, str(path), f"the proof file cannot be read: {exc}") \
            from None
    if not isinstance(data, dict):
        raise InvalidRecord(where, str(path), "a proof is a JSON object")
    return data


def proof_from_file(data: Any, where: str) -> dict[str, Any]:
    """The proof a submitted file holds: a proof itself (``{"kind": ...}``), a result
    file of ``optsched solve``/``simulate``/``improve`` (its ``schedule``, and its
    ``extra.slot``), or a bare schedule (``{"allocations": ...}``)."""
    from optsched.bench.proof import PROOF_KINDS

    if not isinstance(data, dict):
        raise InvalidRecord(where, type(data).__name__, "a schedule, result or proof file "
                            "holds a JSON object")
    if data.get("kind") in PROOF_KINDS:
        return data
    if "allocations" in data:
        return {"kind": "schedule", "schedule": data, "slot": None}
    sched = data.get("schedule")
    if isinstance(sched, dict) and "allocations" in sched:
        extra = data.get("extra")
        slot = extra.get("slot") if isinstance(extra, dict) else None
        if isinstance(slot, bool) or not isinstance(slot, (int, float)):
            slot = None
        return {"kind": "schedule", "schedule": sched, "slot": slot}
    raise InvalidRecord(where, sorted(data)[:8], "holds no schedule: give a schedule, a "
                        "result file with one, or a proof")


def submit(library: Library, name: str, data: Any, *, objective: str | None = None,
           method: str = "submitted", options: Mapping[str, Any] | None = None,
           ) -> list[Change]:
    """Record the schedule (or allocation) ``data`` as the best-known value of instance
    ``name`` if it is valid and better (:func:`update_library`'s rules for a value); the
    value is the one the proof reproduces. ``method`` says what produced it."""
    import tempfile

    from optsched.bench.sets import set_of_instance

    spec = set_of_instance(name)
    key = objective or spec.objectives[0]
    where = f"{name}.{key}"
    if key not in spec.objectives:
        raise InvalidRecord(where, key, f"not an objective of set {spec.name!r} "
                            f"({', '.join(spec.objectives)})")
    proof = proof_from_file(data, where)
    value = evaluate_proof(spec.model, library.instance(name), proof, key, where)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "proof.json.gz"
        path.write_bytes(gzip.compress(json.dumps(proof, allow_nan=False).encode()))
        row = {"instance": name, "objective": key, "value": value, "proof": str(path),
               "method": method, "options": dict(options or {}), "kind": "submitted",
               "outside": False, "own_bound": None, "set": spec.name}
        return update_library(library, [row], tmp)
