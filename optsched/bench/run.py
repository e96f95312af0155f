r"""``optsched bench run``: a method or a policy over every instance of a set.

Each instance is one *cell*: the method (``optsched solve``'s, through
:func:`optsched.registry.solve`) or the policy (:func:`optsched.registry.simulate`) runs
on the library's instance; its proof (schedule or allocation) is validated and must
reproduce the value the run reports (:mod:`optsched.bench.proof`), else the cell fails.
The row then states the value, its gap to the best-known value and to the library's
bound, and whether it improves the best-known value.

Gaps, for a minimisation with value :math:`v`, best-known :math:`v^*` and bound :math:`b`
(signs flip for a maximisation, so that a positive gap is always worse):

.. math::

    \mathrm{gap}_{\mathrm{best}} = \frac{v - v^*}{|v^*|}, \qquad
    \mathrm{gap}_{\mathrm{bound}} = \frac{v - b}{|v|} = 1 - \frac{b}{v} \;\ge 0
    \quad\text{(a maximisation: } \tfrac{b - v}{|b|} = 1 - \tfrac{v}{b}\text{)} ,

the certified :math:`1 - 1/\rho` for the factor :math:`\rho \ge 1` from the optimum
the bound proves, in :math:`[0, 1]` for either sense.

A method whose solutions may lie outside the model's exact program
(:attr:`optsched.registry.Method.outside_exact`, marked ``outside``) is measured like any
other. Its value counts when its proof passes the validator and the model's checks
(Tiresias' heuristics decide in continuous time, which the model admits and its slotted
program does not hold: the library's Tiresias bounds are the simulator's, which cover
them). When its proof fails the model's checks (e.g. Synergy's GREEDY leaves an
admitted job unplaced) the row's status is ``outside_model``, with the reason, and its
value is shown but never recorded.

A method or policy that proves a bound (a bound method, an exact method's dual bound,
the simulator's certified bounds) reports it in ``own_bound``; ``optsched bench update``
records a better one.

A method that refuses the instance (outside its assumptions, or a program over its size
limit: :class:`~optsched.errors.ModelNotApplicable`, :class:`~optsched.errors.ModelTooLarge`)
gives a row of status ``not_applicable`` with the reason, kept like a finished one.

A method of a slotted model (Hadar, HadarE, Tiresias) that takes a ``slot`` option plans
on the instance's slot unless the options say otherwise: the record is about the program
on that slot, and a proof planned on another is refused.

The run is resumable like a sweep: ``OUT/cells.jsonl`` keeps every finished cell (and
``OUT/proofs/`` their proofs), and the same command run again computes only the rest.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from optsched.bench.library import SLOTTED, Library
from optsched.bench.sets import SetSpec
from optsched.errors import InvalidOption, InvalidRecord, ModelNotApplicable, ModelTooLarge

__all__ = ["COLUMNS", "run_bench", "run_bench_cell", "summarize", "cell_params",
           "signed_gap", "bound_gap"]

#: the columns of a row (``--json`` and ``--csv`` output)
COLUMNS = ("key", "set", "instance", "objective", "sense", "kind", "method", "options",
           "status", "value", "own_bound", "own_bound_source", "best_known", "bound",
           "gap_best", "gap_bound",
           "improved", "outside", "proof", "seconds", "message")


def signed_gap(sense: str, value: float | None, ref: float | None) -> float | None:
    """:math:`(v - r)/|r|` for a minimisation, :math:`(r - v)/|r|` for a maximisation
    (positive: ``value`` is worse than ``ref``); ``None`` without both or for ``r = 0``."""
    if value is None or ref is None or ref == 0:
        return None
    d = value - ref if sense == "min" else ref - value
    return d / abs(ref)


def bound_gap(sense: str, value: float | None, bound: float | None) -> float | None:
    """:math:`(v - b)/|v|` for a minimisation, :math:`(b - v)/|b|` for a maximisation:
    :math:`1 - 1/\\rho` for the factor :math:`\\rho \\ge 1` from the optimum that the bound
    proves (in :math:`[0, 1]` for a valid bound of either sense; a value of 0 against a
    positive bound of a maximisation is 1); ``None`` without both or for a zero
    denominator."""
    if value is None or bound is None:
        return None
    den = abs(value) if sense == "min" else abs(bound)
    if den == 0:
        return None
    return (value - bound if sense == "min" else bound - value) / den


def cell_params(spec: SetSpec, library: Library, *, method: str | None, policy: str | None,
                options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cells of a run: one per instance of ``spec``."""
    import hashlib

    what = {"method": method} if method is not None else {"policy": policy}
    base = {"set": spec.name, "model": spec.model, "library": str(library.root),
            "options": dict(options), **what}
    out = []
    for inst in spec.instances:
        ident = json.dumps({**base, "instance": inst.name, "library": ""}, sort_keys=True,
                           default=str)
        out.append({**base, "instance": inst.name,
                    "key": hashlib.sha256(ident.encode()).hexdigest()[:16]})
    return out


def _row(params: Mapping[str, Any], objective: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=params["key"], set=params["set"], instance=params["instance"],
               objective=objective, kind="method" if "method" in params else "policy",
               method=params.get("method") or params.get("policy"),
               options=dict(params["options"]), improved=False, outside=False, message="")
    row.update(fields)
    return row


def run_bench_cell(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Run one cell; its rows (one per objective of the set), never raising (a failure is
    a row of status ``error`` with the message)."""
    from optsched.bench.sets import get_set

    spec = get_set(params["set"])
    t0 = time.perf_counter()
    try:
        rows = _solve_cell(params, spec) if spec.kind == "solve" else _sim_cell(params, spec)
    except (ModelNotApplicable, ModelTooLarge) as exc:  # the same cell would fail again
        rows = [_row(params, k, status="not_applicable", message=f"{type(exc).__name__}: "
                     f"{exc}") for k in spec.objectives]
    except Exception as exc:  # recorded, and retried by the next run
        rows = [_row(params, k, status="error", message=f"{type(exc).__name__}: {exc}")
                for k in spec.objectives]
    for r in rows:
        r["seconds"] = time.perf_counter() - t0
    from optsched.studies.sweep.run import plain_value

    return [{k: plain_value(v) for k, v in r.items()} for r in rows]


def _proof_name(params: Mapping[str, Any], objective: str) -> str:
    return f"proofs/{params['instance']}.{objective}.{params['key']}.json.gz"


def _write_proof(out: Path, name: str, proof: Mapping[str, Any]) -> None:
    import gzip

    from optsched.core.files import write_bytes

    path = out / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(proof, separators=(",", ":"), allow_nan=False)
    write_bytes(path, gzip.compress(text.encode(), mtime=0), field="--out")


def _solve_cell(params: Mapping[str, Any], spec: SetSpec) -> list[dict[str, Any]]:
    from optsched.bench.proof import evaluate, proof_of
    from optsched.registry import get_model, simulate, solve

    lib = Library(params["library"])
    name = params["instance"]
    inst = lib.instance(name)
    model = get_model(spec.model)
    sense = model.sense
    if "method" in params:
        method = model.method(params["method"])
        opts = dict(params["options"])
        if spec.model in SLOTTED and "slot" in method.options and "slot" not in opts:
            # the record is about the program on the instance's slot; left to itself a
            # method may coarsen it (Tiresias' planning grid is a sizing target)
            opts["slot"] = inst.slot
        res = solve(inst, spec.model, params["method"], **opts)
        outside = bool(method.outside_exact)
        kind = method.kind
    else:
        res = simulate(inst, params["policy"], bounds=False, **dict(params["options"]))
        outside, kind = False, "policy"
    row = _row(params, "objective", sense=sense, status=res.status.value,
               outside=outside, message=res.message or "")
    own = res.bound if kind in ("exact", "bound") else None
    if own is not None and math.isfinite(own):
        row["own_bound"] = own
    if kind != "bound" and res.objective is not None:
        if res.schedule is None and "X" not in res.values:
            raise InvalidRecord(name, res.objective, f"{row['method']} returned a value "
                                "without a schedule or an allocation to prove it")
        proof = proof_of(spec.model, res, instance=inst)
        try:
            value = evaluate(spec.model, inst, proof, where=name)
        except InvalidRecord as exc:
            if not outside:
                raise
            # a method that declares its solutions may leave the model's feasible set
            # did so here: its value is shown, marked, and never recorded
            row.update(status="outside_model", value=res.objective, message=str(exc))
            return [_compare(row, lib)]
        # a simulation reports its own measure (mean JCT); a method, the model's objective
        if kind != "policy" and not math.isclose(value, res.objective, rel_tol=1e-9,
                                                 abs_tol=1e-9):
            raise InvalidRecord(name, res.objective, f"{row['method']} reports "
                                f"{res.objective!r} but its proof reproduces {value!r}")
        row["value"] = value
        row["proof"] = _proof_name(params, "objective")
        _write_proof(Path(params["out"]), row["proof"], proof)
    return [_compare(row, lib)]


def _sim_cell(params: Mapping[str, Any], spec: SetSpec) -> list[dict[str, Any]]:
    from optsched.bench.proof import evaluate_simulation
    from optsched.registry import simulate

    if "policy" not in params:
        raise InvalidOption("--method", params.get("method"), f"set {spec.name} is a "
                            "simulation set: run a policy on it (--policy)")
    lib = Library(params["library"])
    name = params["instance"]
    inst = lib.instance(name)
    res = simulate(inst, params["policy"], **dict(params["options"]))
    if res.schedule is None:
        raise InvalidRecord(name, None, f"{params['policy']} returned no schedule")
    proof = {"kind": "schedule", "schedule": res.schedule.to_dict(), "slot": None}
    bounds = res.extra.get("bounds") or {}
    rows = []
    for key in spec.objectives:
        row = _row(params, key, sense="min", status=res.status.value,
                   message=res.message or "")
        row["value"] = evaluate_simulation(inst, proof, key, where=name)
        if bounds.get(key) is not None:
            row["own_bound"] = bounds[key]
            row["own_bound_source"] = (res.extra.get("bound_sources") or {}).get(key)
        row["proof"] = _proof_name(params, key)
        _write_proof(Path(params["out"]), row["proof"], proof)
        rows.append(_compare(row, lib))
    return rows


def _compare(row: dict[str, Any], lib: Library,
             records: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fill the record's best-known value and bound and the row's gaps to them."""
    rec = (lib.records() if records is None else records).get(row["instance"])
    e = None if rec is None else rec.entries.get(row["objective"])
    if e is None:
        return row
    sense = e.sense
    row["sense"] = sense
    row["best_known"] = None if e.best is None else e.best.value
    row["bound"] = None if e.bound is None else e.bound.value
    v = row["value"]
    row["gap_best"] = signed_gap(sense, v, row["best_known"])
    # an unchecked value (its proof left the model) has no certified distance
    refused = row["status"] == "outside_model"
    row["gap_bound"] = None if refused else bound_gap(sense, v, row["bound"])
    if v is not None and not refused:
        row["improved"] = e.best is None or e.better(v, e.best.value) and \
            not math.isclose(v, e.best.value, rel_tol=1e-9, abs_tol=1e-9)
    own = row["own_bound"]
    if own is not None and (e.bound is None or (own > e.bound.value if sense == "min"
                                                  else own < e.bound.value)):
        from optsched.bench.update import trusted_bound

        row["improved"] = row["improved"] or bool(trusted_bound(row))
    return row


def _read_store(path: Path) -> dict[str, list[dict[str, Any]]]:
    from optsched.studies.store import read_records

    done: dict[str, list[dict[str, Any]]] = {}
    for row in read_records(path, field="cells.jsonl", what="its cell"):
        if row.get("status") != "error":
            done.setdefault(row["key"], []).append(row)
    return done


def run_bench(spec: SetSpec, out: str | Path, *, method: str | None = None,
              policy: str | None = None, options: Mapping[str, Any] | None = None,
              library: Library | None = None, workers: int = 1, engine: str = "local",
              scheduler: str | None = None, progress: bool | None = None,
              instances: list[str] | None = None) -> tuple[list[dict[str, Any]], int]:
    """Run ``method`` or ``policy`` over every instance of ``spec`` (or only those named
    in ``instances``) not already in ``OUT/cells.jsonl``; return ``(rows, computed)``:
    every row of the run (set order) and how many cells this call computed. Writes
    ``OUT/results.json``."""
    from optsched.core.files import append_line, ensure_folder, write_text
    from optsched.progressbar import ProgressBar
    from optsched.studies import interrupt
    from optsched.studies.interrupt import Interrupted
    from optsched.studies.sweep.run import run_engine

    if (method is None) == (policy is None):
        raise InvalidOption("--method", method, "give a method or a policy (--policy), "
                            "not both")
    library = library or Library()
    _check_run(spec, method, policy, dict(options or {}))
    grid = cell_params(spec, library, method=method, policy=policy, options=options or {})
    if instances is not None:
        names = [i.name for i in spec.instances]
        for name in instances:
            if name not in names:
                raise InvalidOption("--instance", name, f"not an instance of set {spec.name} "
                                    f"({', '.join(names)})")
        grid = [p for p in grid if p["instance"] in instances]
    out = ensure_folder(out, field="--out")
    for p in grid:
        p["out"] = str(out)
    store = out / "cells.jsonl"
    done = _read_store(store)
    todo = [p for p in grid if p["key"] not in done]
    try:
        with ProgressBar(len(todo), spec.name, progress) as bar:
            def sink(rows: list[dict[str, Any]]) -> None:
                for r in rows:
                    append_line(store, json.dumps(r), field="cells.jsonl")
                if rows and rows[0]["status"] != "error":
                    done[rows[0]["key"]] = rows
                bar.advance()
                interrupt.check()
            run_engine(todo, sink, run_bench_cell, engine=engine, workers=workers,
                       scheduler=scheduler)
    except KeyboardInterrupt:
        kept = sum(p["key"] in done for p in grid)
        raise Interrupted(f"{kept} of {len(grid)} instances kept in {store}; run the same "
                          "command again to resume") from None
    rows: list[dict[str, Any]] = []
    records = library.records()
    for p in grid:
        if p["key"] in done:
            # a resumed row is compared with the library as it is now, not as it was
            rows += [_compare({**r, "improved": False}, library, records)
                     for r in done[p["key"]]]
        else:
            rows += [_row(p, k, status="error", message="failed in this run (see "
                          "cells.jsonl); retried by the next run") for k in spec.objectives]
    write_text(out / "results.json", json.dumps(rows, indent=1) + "\n", field="--out")
    return rows, len(todo)


def _check_run(spec: SetSpec, method: str | None, policy: str | None,
               options: dict[str, Any]) -> None:
    """Names and options checked before anything runs (a typo fails at once)."""
    from optsched.options import check_options
    from optsched.registry import SIM_ARGS, get_model, policy_spec

    if spec.kind == "simulate" and method is not None:
        raise InvalidOption("--method", method, f"set {spec.name} is a simulation set: run "
                            "a policy on it (--policy)")
    if method is not None:
        m = get_model(spec.model).method(method)
        check_options(f"{spec.model} method {m.name!r}", options, m.options)
    else:
        assert policy is not None
        ps = policy_spec(policy)
        check_options(f"policy {ps.qualified!r}", options, ps.options | (SIM_ARGS - {
            "progress", "until"}))


def summarize(rows: list[dict[str, Any]], tolerance: float) -> dict[str, Any]:
    """Totals of a run: cells, solved (a validated value), improved, mean and largest
    gap to the best-known value and to the bound, per objective."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(r["objective"] for r in rows):
        rs = [r for r in rows if r["objective"] == key]
        solved = [r for r in rs if r["value"] is not None]
        gb = [r["gap_best"] for r in solved if r["gap_best"] is not None]
        gd = [r["gap_bound"] for r in solved if r["gap_bound"] is not None]
        out[key] = {
            "instances": len(rs), "solved": len(solved),
            "errors": sum(r["status"] == "error" for r in rs),
            "improved": sum(bool(r["improved"]) for r in rs),
            "matched": sum(1 for g in gb if abs(g) <= tolerance),
            "mean_gap_best": sum(gb) / len(gb) if gb else None,
            "max_gap_best": max(gb) if gb else None,
            "mean_gap_bound": sum(gd) / len(gd) if gd else None,
            "max_gap_bound": max(gd) if gd else None}
    return out
