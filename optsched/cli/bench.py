"""``optsched bench list | run | update | check``: the benchmark library
(``docs/bench.md``)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from optsched.cli.common import EXIT_FAILED, EXIT_OK, num, parse_options, pct, secs, table

__all__ = ["add_parsers"]


def add_parsers(subparsers) -> None:
    from optsched.studies.sweep import ENGINES

    b = subparsers.add_parser(
        "bench", help="the benchmark library: instance sets with best-known values, bounds "
                      "and open/closed status; run a method or policy against them",
        description="Named instance sets of every model and simulation sets, each "
                    "instance with its best-known value (and the schedule proving it), "
                    "its best bound and its status (docs/bench.md).")
    sub = b.add_subparsers(dest="bench_command", required=True)

    def library_arg(q, help_text: str) -> None:
        q.add_argument("--library", type=Path, default=None, help=help_text)

    ls = sub.add_parser("list", help="the sets (or one set's instances) with their status")
    ls.add_argument("set", nargs="?", help="show this set's instances")
    ls.add_argument("--model", help="only this model's sets (or 'sim')")
    ls.add_argument("--json", action="store_true", help="print the records as JSON")
    ls.add_argument("--markdown", action="store_true",
                    help="print the sets' table as Markdown (docs/bench.md holds it)")
    library_arg(ls, "library folder (default: the shipped one)")
    ls.set_defaults(func=cmd_list)

    r = sub.add_parser("run", help="run a method or a policy over a set: value, gap to the "
                       "best-known value and to the bound per instance; resumable")
    r.add_argument("set", help="a set name (optsched bench list shows them)")
    what = r.add_mutually_exclusive_group()
    what.add_argument("--method", help="a method of the set's model (default: its default "
                      "heuristic), or module:name of a method of your own")
    what.add_argument("--policy", help="a simulator policy (registered name or "
                      "module:name); the default for a simulation set is "
                      "gavel.max_min_fairness")
    r.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="method or policy option (JSON value); repeatable")
    r.add_argument("--time-limit", type=float, dest="time_limit",
                   help="seconds per solve of a solver-backed method (default: the set's)")
    r.add_argument("--instance", action="append", metavar="NAME",
                   help="run only this instance of the set; repeatable")
    r.add_argument("--workers", type=int, default=1, help="parallel processes (default 1)")
    r.add_argument("--engine", choices=ENGINES, default="local",
                   help="local process pool or a Dask cluster (extra 'dask')")
    r.add_argument("--scheduler", help="Dask scheduler address (default: a LocalCluster)")
    r.add_argument("--out", type=Path, help="run folder (default: bench-<set>-<method>); "
                   "the same command run again resumes from it")
    fmt = r.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print rows and totals as JSON")
    fmt.add_argument("--csv", action="store_true", help="print the rows as CSV")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    library_arg(r, "library folder (default: the shipped one)")
    r.set_defaults(func=cmd_run)

    u = sub.add_parser("update", help="record a run's better values (with their proofs) "
                       "and bounds in a library")
    u.add_argument("run", type=Path, nargs="?", help="the --out folder of an optsched bench "
                   "run")
    u.add_argument("--instance", help="submit one schedule for this instance instead of a "
                   "run (with --schedule)")
    u.add_argument("--schedule", type=Path, help="schedule JSON, result JSON holding one "
                   "(optsched solve/simulate/improve --out), or proof, for --instance")
    u.add_argument("--objective", help="which objective the schedule is for (default: the "
                   "set's first: objective, or mean_jct on a simulation set)")
    u.add_argument("--method", default="submitted", help="what produced the schedule, as "
                   "the record will say (default: submitted)")
    u.add_argument("--library", type=Path, required=True,
                   help="library folder to update (a copy of the shipped one is made if "
                        "the folder does not exist; optsched/bench/data in a checkout)")
    u.set_defaults(func=cmd_update)

    c = sub.add_parser("check", help="check every record: proofs validate and reproduce "
                       "their values, bounds do not cross them")
    c.add_argument("set", nargs="?", help="only this set")
    library_arg(c, "library folder (default: the shipped one)")
    c.set_defaults(func=cmd_check)


def _library(path: Path | None):
    from optsched.bench.library import Library
    from optsched.errors import InvalidOption

    if path is not None and not (path / "records.json").is_file():
        raise InvalidOption("--library", str(path), "holds no records.json: not a "
                            "benchmark library")
    return Library(path)


# --------------------------------------------------------------------------- list
def cmd_list(args) -> int:
    from optsched.bench.sets import SETS, get_set

    lib = _library(args.library)
    records = lib.records()
    if args.set is not None:
        return _list_set(get_set(args.set), records, args.json)
    sets = [s for s in SETS.values() if args.model in (None, s.model)]
    if args.model is not None and not sets:
        from optsched.errors import UnknownName

        models = sorted({s.model for s in SETS.values()})
        raise UnknownName("--model", args.model, f"no set of this model; models: "
                          f"{', '.join(models)}")
    if args.json:
        print(json.dumps([_set_summary(s, records) for s in sets], indent=1))
        return EXIT_OK
    if args.markdown:
        print(markdown_table(sets, records))
        return EXIT_OK
    body = []
    for s in sets:
        d = _set_summary(s, records)
        for key, o in d["objectives"].items():
            body.append([s.name if key == s.objectives[0] else "", _label(s, key),
                         str(d["instances"]),
                         d["jobs"], f"{o['closed']}/{o['open']}", _range(o["best"]),
                         _range(o["bound"]), pct(o["mean_gap"]), pct(o["max_gap"])])
    print(table(body, ["set", "objective", "inst.", "jobs", "closed/open", "best-known",
                       "bound", "mean gap", "max gap"], right={2, 5, 6, 7, 8}))
    print(f"\n{len(sets)} sets, {sum(len(s.instances) for s in sets)} instances; closed: "
          "gap |best - bound| / |best| at most the set's tolerance (1e-4). "
          "optsched bench list SET shows a set's instances.")
    return EXIT_OK


def _label(s, key: str) -> str:
    """What objective ``key`` of set ``s`` is, with its unit."""
    from optsched.registry import get_model

    if s.model == "sim":
        return {"mean_jct": "mean JCT (s)", "makespan": "makespan (s)"}[key]
    return get_model(s.model).objective


def markdown_table(sets, records) -> str:
    """The sets' table in Markdown: size, objective, status counts, best-known and bound
    ranges, mean and largest gap."""
    lines = ["| set | jobs | GPUs | objective | closed | open | best-known | bound | "
             "mean gap | max gap |", "|---|---|---|---|---|---|---|---|---|---|"]
    for s in sets:
        d = _set_summary(s, records)
        # every instance name states its GPUs as g<count> (optsched.bench.sets)
        gpus = sorted({int(re.search(r"[/-]g(\d+)-", i.name).group(1))  # type: ignore[union-attr]
                       for i in s.instances})
        g = str(gpus[0]) if len(gpus) == 1 else f"{gpus[0]}-{gpus[-1]}"
        for key, o in d["objectives"].items():
            label = _label(s, key)
            lines.append(f"| {s.name} | {d['jobs']} | {g} | {label} | {o['closed']} | "
                         f"{o['open']} | {_range(o['best'])} | {_range(o['bound'])} | "
                         f"{pct(o['mean_gap'])} | {pct(o['max_gap'])} |")
    return "\n".join(lines)


def _range(xs: list[float]) -> str:
    if not xs:
        return "-"
    lo, hi = min(xs), max(xs)
    return num(lo) if lo == hi else f"{num(lo)} .. {num(hi)}"


def _set_summary(s, records) -> dict[str, Any]:
    objs = {}
    for key in s.objectives:
        es = [records[i.name].entries[key] for i in s.instances if i.name in records]
        gaps = [e.gap for e in es if e.gap is not None]
        objs[key] = {
            "closed": sum(e.status(s.tolerance) == "closed" for e in es),
            "open": len(s.instances) - sum(e.status(s.tolerance) == "closed" for e in es),
            "best": [e.best.value for e in es if e.best is not None],
            "bound": [e.bound.value for e in es if e.bound is not None],
            "mean_gap": sum(gaps) / len(gaps) if gaps else None,
            "max_gap": max(gaps) if gaps else None}
    jobs = sorted({i.jobs for i in s.instances})
    return {"set": s.name, "model": s.model, "size_class": s.size_class,
            "description": s.description, "instances": len(s.instances),
            "jobs": "/".join(map(str, jobs)), "tolerance": s.tolerance, "objectives": objs}


def _list_set(s, records, as_json: bool) -> int:
    if as_json:
        print(json.dumps([records[i.name].to_dict() if i.name in records
                          else {"instance": i.name, "set": s.name, "objectives": None}
                          for i in s.instances], indent=1))
        return EXIT_OK
    body = []
    for i in s.instances:
        rec = records.get(i.name)
        for key in s.objectives:
            e = rec.entries.get(key) if rec else None
            b = e.best if e else None
            body.append([i.name if key == s.objectives[0] else "", key,
                         e.status(s.tolerance) if e else "-", num(b.value) if b else "-",
                         num(e.bound.value) if e and e.bound else "-",
                         pct(e.gap) if e else "-", b.method if b else "-",
                         (e.bound.source if e and e.bound else "-")[:60]])
    print(f"# {s.name}: {s.description}")
    print(table(body, ["instance", "objective", "status", "best-known", "bound", "gap",
                       "found by", "bound source"], right={3, 4, 5}))
    return EXIT_OK


# --------------------------------------------------------------------------- run
def cmd_run(args) -> int:
    from optsched.bench.run import COLUMNS, run_bench, summarize
    from optsched.bench.sets import get_set
    from optsched.core.files import check_output
    from optsched.registry import get_model

    spec = get_set(args.set)
    lib = _library(args.library)
    opts = parse_options(args.option)
    method, policy = args.method, args.policy
    if method is None and policy is None:
        if spec.kind == "simulate":
            policy = "gavel.max_min_fairness"
        else:
            method = "heuristic"
    if method is not None and spec.kind == "solve":
        m = get_model(spec.model).method(method)
        if args.time_limit is not None:
            if "time_limit" in opts:
                from optsched.errors import InvalidOption
                raise InvalidOption("time_limit", args.time_limit, "given both as "
                                    "--time-limit and --option")
            opts["time_limit"] = args.time_limit
        elif m.backend:
            opts.setdefault("time_limit", spec.time_limit)
    elif args.time_limit is not None:
        from optsched.errors import InvalidOption

        raise InvalidOption("--time-limit", args.time_limit, "only solver-backed methods "
                            "take a time limit; a policy runs to its end")
    who = (method or policy or "").replace(":", "-").replace("/", "-")
    out = args.out or Path(f"bench-{spec.name.replace('/', '-')}-{who}")
    check_output(out, folder=True, names=["cells.jsonl", "results.json"])
    t = time.perf_counter()
    rows, computed = run_bench(spec, out, method=method, policy=policy, options=opts,
                               library=lib, workers=args.workers, engine=args.engine,
                               scheduler=args.scheduler, progress=args.progress,
                               instances=args.instance)
    totals = summarize(rows, spec.tolerance)
    if args.json:
        print(json.dumps({"set": spec.name, "rows": rows, "totals": totals}, indent=1))
    elif args.csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(COLUMNS), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({**r, "options": json.dumps(r["options"])})
        sys.stdout.write(buf.getvalue())
    else:
        print(_render_run(spec, rows, totals, method or policy or ""))
    errors = sum(r["status"] == "error" for r in rows)
    n = len({r["instance"] for r in rows})
    print(f"bench {spec.name}: {n} instances, {computed} computed, "
          f"{n - computed} reused, {errors} errors, "
          f"{time.perf_counter() - t:.1f} s -> {out / 'results.json'}", file=sys.stderr)
    return EXIT_FAILED if errors else EXIT_OK


def _signed(g: float | None) -> str:
    """A gap to the best-known value: negative when better than it."""
    return pct(g) if g is None or g >= 0 else f"-{pct(-g)}"


def _render_run(spec, rows: list[dict], totals: dict, who: str) -> str:
    body = []
    for r in rows:
        flag = (" +" if r["outside"] else "") + (" *" if r["improved"] else "")
        body.append([r["instance"], r["objective"], r["status"], num(r["value"]) + flag,
                     num(r["best_known"]), _signed(r["gap_best"]),
                     num(r["bound"]), pct(r["gap_bound"]), secs(r["seconds"])])
    out = [f"# {spec.name} with {who}: {spec.description}",
           table(body, ["instance", "objective", "status", "value", "best-known",
                        "gap best", "bound", "gap bound", "time (s)"],
                 right={3, 4, 5, 6, 7, 8})]
    for key, t in totals.items():
        out.append(f"{key}: {t['solved']}/{t['instances']} solved (validated), "
                   f"{t['matched']} match the best-known value, {t['improved']} improve the "
                   f"library, mean gap to best-known {_signed(t['mean_gap_best'])}, to the "
                   f"bound {pct(t['mean_gap_bound'])} (max {pct(t['max_gap_bound'])})")
    said = [f"  {r['instance']}: {r['status']}: {r['message']}" for r in rows
            if r["message"] and (r["value"] is None or r["status"] in (
                "error", "not_applicable", "outside_model"))]
    if said:
        out += ["messages:", *said]
    if any(r["outside"] for r in rows):
        out.append("+ the method says its solutions may lie outside the model's exact "
                   "program: its value counts when its proof passes the model's checks, "
                   "else the row is outside_model (shown, never recorded, no gap to the "
                   "bound)")
    if any(r["improved"] for r in rows):
        out.append("* better than the library's value or bound: optsched bench update "
                   "RUN --library DIR records it with its proof")
    return "\n".join(out)


# --------------------------------------------------------------------------- update
def cmd_update(args) -> int:
    import shutil

    from optsched.bench.library import SHIPPED
    from optsched.bench.update import read_run, submit, update_library
    from optsched.errors import InvalidOption

    if (args.run is None) == (args.instance is None) or \
            (args.instance is None) != (args.schedule is None):
        raise InvalidOption("run", args.run, "give a run folder, or --instance NAME with "
                            "--schedule FILE")
    if args.run is not None:
        if args.objective is not None or args.method != "submitted":
            raise InvalidOption("--objective" if args.objective else "--method",
                                args.objective or args.method, "only with --instance (a "
                                "run's rows name their own)")
        rows = read_run(args.run)  # a bad run folder fails before the library is touched
    else:
        from optsched.bench.sets import set_of_instance
        from optsched.core.jsonio import load_json

        set_of_instance(args.instance)
        data = load_json(args.schedule, InvalidOption, "--schedule")
    if not args.library.exists():
        shutil.copytree(SHIPPED, args.library)
        print(f"{args.library}: a copy of the shipped library", file=sys.stderr)
    lib = _library(args.library)
    if args.run is not None:
        changes = update_library(lib, rows, args.run)
    else:
        changes = submit(lib, args.instance, data, objective=args.objective,
                         method=args.method)
    for c in changes:
        old = "none" if c.old is None else num(c.old, 10)
        print(f"{c.instance} {c.objective}: {c.what} {old} -> {num(c.new, 10)} ({c.source})")
    print(f"{len(changes)} improvement(s) recorded in {lib.root / 'records.json'}"
          if changes else "nothing to record: no value or bound better than the library's")
    return EXIT_OK


# --------------------------------------------------------------------------- check
def cmd_check(args) -> int:
    from optsched.bench.library import check_record
    from optsched.bench.sets import get_set

    lib = _library(args.library)
    records = lib.records()
    names = [i.name for i in get_set(args.set).instances] if args.set else list(records)
    n_proofs = 0
    for name in names:
        if name not in records:
            continue
        check_record(lib, records[name])
        n_proofs += sum(e.best is not None for e in records[name].entries.values())
    print(f"{len(names)} records checked, {n_proofs} proofs validated and reproduced")
    return EXIT_OK
