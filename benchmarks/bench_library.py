"""Build the benchmark library (``optsched/bench/data``) and fill its records.

    python benchmarks/bench_library.py init  [--library DIR]
    python benchmarks/bench_library.py fill  [--library DIR] [--runs DIR] [--sets S ...]
                                             [--workers K]

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
                "tiresias.yarn_fifo", "allox.sjf")


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
        jobs = [("policy", p) for p in SIM_POLICIES] if spec.kind == "simulate" else \
            [("method", m) for m in _methods(spec.model)]
        for kind, who in jobs:
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("init", "fill"))
    p.add_argument("--library", type=Path, default=SHIPPED)
    p.add_argument("--runs", type=Path, default=Path("bench-library-runs"))
    p.add_argument("--sets", nargs="*", default=list(SETS))
    p.add_argument("--workers", type=int, default=1)
    a = p.parse_args(argv)
    lib = Library(a.library)
    if a.step == "init":
        init(lib)
    else:
        a.runs.mkdir(parents=True, exist_ok=True)
        fill(lib, a.runs, a.sets, a.workers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
