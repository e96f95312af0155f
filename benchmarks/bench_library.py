"""Build the benchmark library (``optsched/bench/data``) and fill its records.

    python benchmarks/bench_library.py init  [--library DIR]
    python benchmarks/bench_library.py fill  [--library DIR] [--runs DIR] [--sets S ...]
                                             [--workers K]
    python benchmarks/bench_library.py report [--library DIR] [--runs DIR]

``init`` draws every set's instances (:mod:`optsched.bench.sets`), writes them and
creates their records (an instance already in the library is kept, with its record,
when its drawing gives the same file). Solve sets get the simulator's certified bound
on their model's objective where it covers the model (:mod:`optsched.compare_bounds`).

``fill`` runs, through ``optsched bench run``'s machinery, every method of each solve
set's model (its exact method at the set's time limit, its bound methods, every
heuristic) and every shipped policy of :data:`SIM_POLICIES` over the simulation sets,
and records each improvement with its proof (``optsched bench update``). The run folders
(``--runs``) make it resumable. Everything is optsched's own: exact methods, heuristics,
bounds and policies.

``report`` reads the run folders back (nothing is recomputed: every run resumes whole),
compares each row with the final records, and writes ``results/bench_library.{md,json}``:
per set, closed and open instances, and per method or policy the instances it solved
(a validated value), how many match the best-known value, its mean and largest gap to
the best-known value and to the bound, and its mean CPU seconds per instance.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from optsched.bench.library import SHIPPED, Bound, Library, new_record, with_bound
from optsched.bench.run import run_bench
from optsched.bench.sets import SETS, draw
from optsched.bench.update import update_library
from optsched.errors import InvalidRecord

#: policies whose schedules keep the strict rules, run over the simulation sets
SIM_POLICIES = ("gavel.max_min_fairness", "gavel.min_total_duration", "gavel.fifo",
                "tiresias.las", "tiresias.las_continuous", "tiresias.gittins",
                "tiresias.srtf", "tiresias.sjf", "tiresias.fifo_backfill",
                "tiresias.yarn_fifo")


def init(lib: Library) -> None:
    from optsched.compare_bounds import simulator_bound

    lib.root.mkdir(parents=True, exist_ok=True)
    records = lib.records()
    held = {i.name for s in SETS.values() for i in s.instances}
    for name in set(records) - held:  # an instance no set holds any more: its files go
        del records[name]
        for path in lib.root.glob(f"{name}.*"):
            path.unlink()
        print(f"{name}: removed (no set holds it)", flush=True)
    for spec in SETS.values():
        for ispec in spec.instances:
            inst = draw(ispec)
            sha = lib.write_instance(inst)
            old = records.get(ispec.name)
            if old is not None and old.sha256 == sha:
                continue
            rec = new_record(spec, ispec.name, sha)
            if spec.kind == "solve":
                value, source = simulator_bound(inst, spec.model)
                if value is not None:
                    rec = with_bound(rec, "objective", Bound(float(value), source))
            records[ispec.name] = rec
            print(f"{ispec.name}: {inst.n_jobs} jobs, {inst.cluster.total_gpus} GPUs",
                  flush=True)
    lib.write_records(records)


def _methods(model: str) -> list[str]:
    from optsched.registry import get_model

    m = get_model(model)
    # fast ones first: a long exact solve then starts from known values
    return [*m.heuristics, *m.bounds, *(x.name for x in m.methods if x.kind == "exact")]


def fill(lib: Library, runs: Path, sets: list[str], workers: int) -> None:
    from optsched.registry import get_model

    for name in sets:
        spec = SETS[name]
        for kind, who in _jobs(spec):
            opts = {}
            if kind == "method" and get_model(spec.model).method(who).backend:
                opts["time_limit"] = spec.time_limit
            out = runs / f"{name.replace('/', '-')}-{who}"
            t = time.perf_counter()
            rows, computed = run_bench(spec, out, library=lib, workers=workers,
                                       options=opts, progress=False,
                                       **{kind: who})  # type: ignore[arg-type]
            good = [r for r in rows if r["status"] != "error"]
            try:
                changes = update_library(lib, good, out)
            except InvalidRecord as exc:  # nothing of this run is recorded; say why
                print(f"{name} {who}: REFUSED: {exc}", flush=True)
                continue
            errors = [r for r in rows if r["status"] == "error"]
            print(f"{name} {who}: {computed} computed, {len(errors)} errors, "
                  f"{len(changes)} recorded, {time.perf_counter() - t:.0f} s", flush=True)
            for r in errors[:2]:
                print(f"    {r['instance']}: {r['message'][:300]}", flush=True)


def _jobs(spec) -> list[tuple[str, str]]:
    return [("policy", p) for p in SIM_POLICIES] if spec.kind == "simulate" else \
        [("method", m) for m in _methods(spec.model)]


def report(lib: Library, runs: Path) -> None:
    from common import write_results

    from optsched.bench.run import summarize
    from optsched.registry import get_model

    records = lib.records()
    rows = []
    for name, spec in SETS.items():
        for key in spec.objectives:
            es = [records[i.name].entries[key] for i in spec.instances]
            closed = sum(e.status(spec.tolerance) == "closed" for e in es)
            for kind, who in _jobs(spec):
                out = runs / f"{name.replace('/', '-')}-{who}"
                if not (out / "cells.jsonl").is_file():
                    continue
                m = get_model(spec.model).method(who) if kind == "method" else None
                if m is not None and m.kind == "bound":
                    continue
                opts = {"time_limit": spec.time_limit} if m is not None and m.backend else {}
                got, computed = run_bench(spec, out, library=lib, options=opts,
                                          progress=False, **{kind: who})  # type: ignore[arg-type]
                assert computed == 0 or all(r["status"] != "error" for r in got), out
                got = [r for r in got if r["objective"] == key]
                t = summarize(got, spec.tolerance)[key]
                secs = [r["seconds"] for r in got if r["seconds"] is not None]
                rows.append({
                    "set": name, "objective": key, "closed": closed,
                    "open": len(es) - closed, "method": who,
                    "kind": m.kind if m is not None else "policy",
                    "outside": bool(m is not None and m.outside_exact),
                    "solved": t["solved"], "matched": t["matched"],
                    "mean_gap_best": t["mean_gap_best"], "max_gap_best": t["max_gap_best"],
                    "mean_gap_bound": t["mean_gap_bound"],
                    "max_gap_bound": t["max_gap_bound"],
                    "mean_seconds": sum(secs) / len(secs) if secs else None})
    write_results("bench_library", rows, list(rows[0]), title="The benchmark library: "
                  "every shipped method and policy against the best-known values",
                  params={"library": "optsched/bench/data", "runs": "one folder per set "
                          "and method, each run at the set's time limit"},
                  notes=NOTES)


NOTES = (
    "closed/open: the set's instances whose gap |best - bound| / |best| is at most 1e-4, "
    "and the others. " """\
solved: instances where the method returned a value whose proof validated (an
`outside` method's value is validated under the model's rules and measured, never recorded;
Synergy's GREEDY leaves the model on every instance). matched: value within 1e-4 of the
best-known one. gap to best: (v - best)/|best| (sign flipped for a maximisation, so a
positive gap is worse; an outside method can be negative); gap to bound: (v - b)/|v|,
or (b - v)/|b| for a maximisation: 1 - 1/rho for the factor rho >= 1 from the optimum the
bound certifies. mean_seconds: wall seconds per instance, 2 instances
at a time on the 2-core machine (shared with other work while this ran; compare within a
row, not across machines). Bound methods are left out of this table (they give no value);
their bounds are in the records (`optsched bench list SET`).""")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("init", "fill", "report"))
    p.add_argument("--library", type=Path, default=SHIPPED)
    p.add_argument("--runs", type=Path, default=Path("bench-library-runs"))
    p.add_argument("--sets", nargs="*", default=list(SETS))
    p.add_argument("--workers", type=int, default=1)
    a = p.parse_args(argv)
    lib = Library(a.library)
    if a.step == "init":
        init(lib)
    elif a.step == "report":
        report(lib, a.runs)
    else:
        a.runs.mkdir(parents=True, exist_ok=True)
        fill(lib, a.runs, a.sets, a.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
