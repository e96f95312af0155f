"""``optsched demo | solve | compare | validate | schema | catalog | instance``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from optsched.cli.common import EXIT_FAILED, EXIT_OK, num, parse_options, pct, progress, secs, table
from optsched.compare import Row, compare, result_row
from optsched.core.files import check_output, write_text
from optsched.core.instance import Instance, instance_json_schema, load_instance
from optsched.errors import InvalidOption
from optsched.options import SOLVER_OPTIONS
from optsched.registry import Method, get_model, models, policies, solve
from optsched.solvers import BACKENDS, DEFAULT_TIME_LIMIT

__all__ = ["add_parsers", "render_rows"]

COLUMNS = ["method", "status", "value", "bound", "gap", "x opt", "x bound", "proved",
           "time (s)"]


# --------------------------------------------------------------------------- tables
def _cluster_text(inst: Instance) -> str:
    per = ", ".join(f"{k} {v}" for k, v in sorted(inst.cluster.gpus_per_type.items()))
    return f"{inst.n_jobs} jobs on {inst.cluster.total_gpus} GPUs ({per})"


def render_rows(rows: list[Row], instance: Instance, summary: str = "") -> str:
    """One model's comparison as a table with its header and footnotes."""
    r0 = rows[0]
    direction = "minimised" if r0.sense == "min" else "maximised"
    head = [f"# {r0.model}" + (f": {summary}" if summary else ""),
            f"#   instance {instance.name}: {_cluster_text(instance)}",
            f"#   objective: {r0.objective}, {direction}; x opt = factor from the exact "
            "optimum (>= 1: worse)"]
    limits = {r.time_limit for r in rows if r.backend is not None}
    if limits:
        tl = ", ".join("none" if t is None else f"{t:g} s" for t in sorted(
            limits, key=lambda t: float("inf") if t is None else t))
        head.append(f"#   time limit per solve: {tl}"
                    + (" (default; --time-limit to change)" if limits == {DEFAULT_TIME_LIMIT}
                       else ""))
    body, marks = [], []
    for r in rows:
        name = r.method + (f" [{r.backend}]" if r.backend else "")
        flag = ""
        if r.outside_exact:
            flag = " +"
            marks.append(f"  + {r.method}: outside the exact model's feasible set: "
                         f"{r.outside_exact}")
        # the ratio a result proves on its instance, else what its method declares
        proved = r.declared.partition(": ")[0] or "-"
        if r.proved is not None:
            proved = num(r.proved, 3) if r.proved_holds else f"({num(r.proved, 3)})"
            if not r.proved_holds:
                marks.append(f"  ({num(r.proved, 3)}) {r.method}: the ratio its theorem "
                             "gives, not proved on this instance (an assumption fails; see "
                             "below)")
        xb = num(r.certified_gap, 3) if r.certified_gap is not None else \
            ("-" if r.kind == "bound" or r.value is None else "- *")
        body.append([name + flag, r.status, num(r.value), num(r.bound), pct(r.gap),
                     num(r.factor, 3), xb, proved, secs(r.seconds)])
        if r.skipped:
            marks.append(f"  {r.method}: does not take option(s) {', '.join(r.skipped)}; "
                         "run without them")
    # a ratio the result reports: its note; else what the method declares in general
    notes = [f"  {r.method}: {r.note if r.proved is not None or not r.declared else r.declared}"
             for r in rows if r.note or r.declared]
    msgs = [f"  {r.method}: {r.message}" for r in rows if r.message and not r.value
            and r.status != "optimal"]
    out = head + _bound_head(rows) + [table(body, COLUMNS, right={2, 3, 4, 5, 6, 7, 8})]
    gapless = [r for r in rows if r.certified_gap is None and r.value is not None
               and r.kind != "bound"]
    if gapless:
        why = {r.bound_note or "no certified bound" for r in gapless}
        marks += [f"  * {', '.join(r.method for r in gapless)}: no x bound: {w}"
                  for w in sorted(why)]
    if marks:
        out += [*marks]
    if notes:
        out += ["proved ratios:", *notes]
    if msgs:
        out += ["messages:", *msgs]
    return "\n".join(out)


def _bound_head(rows: list[Row]) -> list[str]:
    """The certified bound(s) of the comparison: ``x bound`` is each row's factor from
    the best bound valid for it (>= 1)."""
    seen: dict[tuple[float, str], list[str]] = {}
    for r in rows:
        if r.certified_bound is not None:
            seen.setdefault((r.certified_bound, r.bound_source), []).append(r.method)
    if not seen:
        return []
    word = "lower" if rows[0].sense == "min" else "upper"
    if not any(r.bound_source.startswith("simulator") for r in rows):
        note = next((r.bound_note for r in rows if r.certified_bound is not None
                     and r.bound_note and "no finite factor" not in r.bound_note), "")
        if note:
            seen.setdefault((math.nan, f"no simulator bound: {note}"), [])
    lines = [f"#   {src}" if not ms else f"#   certified {word} bound {num(b)} ({src})"
             + ("" if len([m for m in seen.values() if m]) == 1 else f" for {', '.join(ms)}")
             for (b, src), ms in seen.items()]
    return lines + ["#   x bound = factor from the certified bound (>= 1: at most that far "
                    "from the optimum)"]


def _progress_hooks(model: str, enabled: bool):
    if not enabled:
        return None, None

    def start(m: Method, opts: dict) -> None:
        tl = ""
        if m.backend:
            limit = opts.get("time_limit", DEFAULT_TIME_LIMIT)
            tl = f" (time limit {'none' if limit is None else f'{limit:g} s'})"
        progress(f"{model} {m.name}{tl} ... ", end="")

    def done(r: Row) -> None:
        progress(f"{r.status}, {secs(r.seconds)} s")

    return start, done


def _run_compare(inst: Instance, model: str, backend, options, show: bool,
                 methods: list[str] | None = None) -> list[Row]:
    start, done = _progress_hooks(model, show)
    return compare(inst, model, backend, methods=methods, on_start=start, on_done=done,
                   **options)


# --------------------------------------------------------------------------- commands
def _options(args) -> dict:
    opts = parse_options(getattr(args, "option", None))
    for key in ("solver", "time_limit", "mip_gap"):
        v = getattr(args, key, None)
        if v is not None:
            if key in opts:
                raise InvalidOption(key, v, f"given both as --{key.replace('_', '-')} and "
                                    "--option")
            opts[key] = v
    return opts


def cmd_demo(args) -> int:
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    blocks, payload, ok = [], [], True
    for name, spec in sorted(models().items()):
        if spec.demo_instance is None:
            continue
        inst = spec.demo_instance()
        rows = _run_compare(inst, name, args.backend, {}, show)
        ok &= all(r.answered for r in rows)
        payload += [r.to_dict() for r in rows]
        blocks.append(render_rows(rows, inst, spec.summary))
    print(json.dumps(payload, indent=1) if args.json else "\n\n".join(blocks))
    return EXIT_OK if ok else EXIT_FAILED


def cmd_solve(args) -> int:
    if args.out:  # before the solve: never over the instance, never after an hour lost
        check_output(args.out, [args.instance])
    inst = load_instance(args.instance)
    spec = get_model(args.model)
    method = spec.method(args.method)
    opts = _options(args)
    start, _ = _progress_hooks(spec.name, True)
    start(method, opts)
    try:
        res = solve(inst, args.model, args.method, backend=args.backend, **opts)
    except BaseException:
        progress("stopped")
        raise
    progress(f"{res.status.value}, {secs(res.seconds)} s")
    text = json.dumps(res.to_dict(values=args.values), indent=1)
    if args.out:
        write_text(args.out, text + "\n")
    if args.json:
        print(text)
    else:
        print(render_rows([result_row(spec, method, res, opts)], inst, spec.summary))
        if res.metrics is not None:
            m = res.metrics
            print(f"\njobs completed {m.n_completed}/{m.n_jobs}; mean JCT {num(m.mean_jct)} s; "
                  f"makespan {num(m.makespan)} s; CRU {num(m.cru, 3)}")
    answered = res.objective is not None or res.bound is not None or \
        res.status.value in ("infeasible", "unbounded", "not_found")
    return EXIT_OK if answered else EXIT_FAILED


def cmd_compare(args) -> int:
    inst = load_instance(args.instance)
    rows = _run_compare(inst, args.model, args.backend, _options(args), True, args.method)
    if args.json:
        print(json.dumps([r.to_dict() for r in rows], indent=1))
    else:
        print(render_rows(rows, inst, get_model(args.model).summary))
    missing = [r.method for r in rows if not r.answered]
    if missing:
        progress(f"optsched: no answer from {', '.join(missing)} (status "
                 f"{', '.join(r.status for r in rows if not r.answered)})")
        return EXIT_FAILED
    return EXIT_OK


def cmd_validate(args) -> int:
    from optsched.core.jsonio import load_json
    from optsched.core.metrics import compute_metrics
    from optsched.core.schedule import Schedule
    from optsched.core.validate import STRICT, validate_schedule
    from optsched.errors import InvalidSchedule, UnknownName
    from optsched.registry import capabilities

    inst = load_instance(args.instance)
    data = load_json(args.schedule, InvalidSchedule)
    sched = Schedule.from_dict(data)
    # the rules come from the producer: --model, else the model (or simulated policy) a
    # result file names, which the registry's capabilities then bound; never the flags
    name, origin = args.model, "--model"
    if name is None and isinstance(data, dict) and "allocations" not in data:
        extra = data.get("extra")
        policy = extra.get("registered_policy") if isinstance(extra, dict) else None
        model, method = data.get("model"), data.get("method")
        name = policy if isinstance(policy, str) else \
            method if model == "simulate" else model
        origin = "the result file"
    caps, note = STRICT, ""
    if isinstance(name, str) and name:
        try:
            caps = capabilities(name)
            note = "" if origin == "--model" else f", named by {origin}"
        except UnknownName:
            if origin == "--model":
                raise
            note = f"; {origin} names {name!r}, which is not registered"
    slot, slot_from = args.slot, "--slot"
    extra = data.get("extra") if isinstance(data, dict) else None
    if slot is None and isinstance(extra, dict) and isinstance(extra.get("slot"), (int, float)):
        slot, slot_from = extra["slot"], "the result file"
    if caps.time == "slots":
        note += f"; slot {slot if slot is not None else inst.slot:g} s" + \
            (f" (from {slot_from})" if slot is not None else "")
    rules = caps.describe() + note
    progress(f"rules: {rules}")
    validate_schedule(inst, sched, caps, slot=slot if caps.time == "slots" else None)
    m = compute_metrics(inst, sched)
    if m.n_completed < m.n_jobs:
        progress(f"metrics cover the {m.n_completed} completed of {m.n_jobs} jobs "
                 f"({m.n_jobs - m.n_completed} unfinished)")
    print(json.dumps({"valid": True, "rules": rules, "metrics": m.to_dict(per_job=False)},
                     indent=1))
    return EXIT_OK


def cmd_schema(args) -> int:
    print(json.dumps(instance_json_schema(), indent=1))
    return EXIT_OK


def cmd_catalog(args) -> int:
    from optsched import catalog

    print("Cluster presets:")
    for name in catalog.PRESETS:
        c = catalog.cluster_preset(name)
        print(f"  {name:16s} {len(c.nodes):3d} nodes, {c.total_gpus:4d} GPUs {c.gpus_per_type}")
    print("\nGavel job types (per-worker iterations/s on k80/p100/v100, 1 worker):")
    for name, prof in sorted(catalog.profiles().items()):
        tp = prof.throughput.get(1, {})
        vals = "/".join(num(tp.get(t), 3) for t in ("k80", "p100", "v100"))
        print(f"  {name:36s} {vals}")
    print("\nSynergy CPU/memory-sensitivity profiles:",
          ", ".join(sorted(catalog.synergy_profiles())))
    print("Salus workloads:", len(catalog.salus_workloads()), "training runs")
    print("\nInstances (optsched instance NAME --out FILE):", ", ".join(catalog_instances()))
    print("\nModels (optsched solve MODEL FILE --method METHOD [--option KEY=VALUE]):")
    for name, spec in sorted(models().items()):
        print(f"  {name}")
        for m in spec.methods:
            # solver options are shared by every LP/MILP method; list the model's own
            own = sorted(m.options - SOLVER_OPTIONS)
            solver = " + solver options" if m.backend else ""
            opts = f" options: {', '.join(own)}" if own else ""
            origin = f" [from {m.origin}]" if m.origin else ""
            aka = f" (also: {', '.join(m.aliases)})" if m.aliases else ""
            print(f"    {m.name:16s} {m.kind:9s}{opts}{solver}{aka}{origin}")
    print("\nPolicies (optsched simulate --policy NAME [--option KEY=VALUE]):")
    for qualified, pol in sorted(policies().items()):
        opts = ", ".join(sorted(pol.options)) or "-"
        origin = f" [from {pol.origin}]" if pol.origin else ""
        print(f"  {qualified:36s} options: {opts}{origin}")
    _print_plugins()
    return EXIT_OK


def _print_plugins() -> None:
    """The installed plugins (entry-point group optsched.plugins), failures included."""
    from optsched.extend import PLUGIN_GROUP, load_plugins

    found = load_plugins()
    print(f"\nPlugins (entry points {PLUGIN_GROUP}; methods and policies of your own: "
          "register_method, register_policy, or module:name):")
    if not found:
        print("  none installed")
    for p in found:
        state = "loaded" if p.loaded else f"FAILED: {p.error}"
        print(f"  {p.label:36s} {p.value}: {state}")


def catalog_instances() -> list[str]:
    """Names ``optsched instance`` writes: every model's demo and every shipped trace."""
    from optsched import catalog

    return [f"{n}-demo" for n, s in sorted(models().items()) if s.demo_instance] + \
        list(catalog.SHIPPED_TRACES)


def cmd_instance(args) -> int:
    from optsched import catalog

    name = args.name
    if args.out is not None:
        cluster = args.cluster and Path(args.cluster)
        check_output(args.out, [cluster] if cluster and cluster.is_file() else [])
    known = catalog_instances()
    if name not in known:
        from optsched.errors import UnknownName
        raise UnknownName("instance", name, f"known: {', '.join(known)}")
    if name.endswith("-demo"):
        demo = get_model(name[: -len("-demo")]).demo_instance
        assert demo is not None  # catalog_instances lists models with a demo only
        inst = demo()
    else:
        inst = catalog.shipped_trace(name, cluster=args.cluster)
    if args.jobs is not None:
        if args.jobs < 1:
            raise InvalidOption("--jobs", args.jobs, "must be >= 1")
        inst = inst.replace(jobs=inst.jobs[: args.jobs], name=f"{inst.name}-first{args.jobs}")
    if args.out is None:
        print(inst.to_json())
    else:
        write_text(args.out, inst.to_json() + "\n")
        print(f"{args.out}: {inst.name}, {_cluster_text(inst)}")
    return EXIT_OK


# --------------------------------------------------------------------------- parsers
def add_parsers(sub) -> None:
    d = sub.add_parser("demo", help="run every model exactly and heuristically on default data")
    d.add_argument("--backend", default=None,
                   help=f"backend of the rows that solve an LP/MILP: {', '.join(BACKENDS)} "
                        "or one registered with optsched.solvers.register_backend (default "
                        "highs)")
    d.add_argument("--json", action="store_true", help="print the rows as JSON")
    d.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress line per method on stderr (default: when a terminal)")
    d.set_defaults(func=cmd_demo)

    def solver_args(q):
        q.add_argument("--backend", default=None,
                       help=f"solver backend of LP/MILP methods: {', '.join(BACKENDS)} or "
                            "one registered with optsched.solvers.register_backend "
                            "(default highs)")
        q.add_argument("--solver", help="solver name for the pyomo/cvxpy backend")
        q.add_argument("--time-limit", type=float, dest="time_limit",
                       help=f"seconds per solve, model build included (default "
                            f"{DEFAULT_TIME_LIMIT:g})")
        q.add_argument("--mip-gap", type=float, dest="mip_gap",
                       help="relative MIP gap at which a MILP solve stops (solver default "
                            "otherwise)")
        q.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="method option, value parsed as JSON when possible; repeatable")
        q.add_argument("--json", action="store_true", help="print the result as JSON")

    s = sub.add_parser("solve", help="solve an instance with a model")
    s.add_argument("model", help="registered model (optsched catalog lists them)")
    s.add_argument("instance", help="instance JSON file")
    s.add_argument("--method", default="exact",
                   help="exact (default), heuristic (the model's default heuristic), a "
                        "method name listed by optsched catalog, or module:name of a "
                        "method of your own")
    solver_args(s)
    s.add_argument("--out", help="write the JSON result to this file")
    s.add_argument("--values", action="store_true", help="include primal values and duals")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("compare", help="exact vs every heuristic of a model")
    c.add_argument("model", help="registered model (optsched catalog lists them)")
    c.add_argument("instance", help="instance JSON file")
    c.add_argument("--method", action="append", metavar="NAME",
                   help="compare only this method (a registered name, or module:name of "
                        "a method of your own) with the exact one; repeatable (default: "
                        "every method of the model)")
    solver_args(c)
    c.set_defaults(func=cmd_compare)

    v = sub.add_parser("validate", help="check a schedule (or result JSON) against an instance")
    v.add_argument("instance", help="instance JSON file")
    v.add_argument("schedule", help="schedule JSON, or a result JSON holding one")
    v.add_argument("--model", help="the model or policy that produced the schedule (default: "
                   "the one a result JSON names; else the strict rules): its relaxed rules "
                   "(sharing, forking, progress rule, ...) are the only ones applied")
    v.add_argument("--slot", type=float, help="seconds per slot a slotted model planned on "
                   "(default: the result file's, else the instance's slot)")
    v.set_defaults(func=cmd_validate)

    sub.add_parser("schema", help="print the instance JSON Schema").set_defaults(func=cmd_schema)
    sub.add_parser("catalog", help="list workload profiles, cluster presets and instances"
                   ).set_defaults(func=cmd_catalog)
    i = sub.add_parser("instance", help="write a catalog instance (a model's demo or a "
                       "shipped trace) as instance JSON")
    i.add_argument("name", help="e.g. hadar-demo, gavel-philly-2000 (optsched catalog lists "
                   "them)")
    i.add_argument("--out", type=Path, help="file to write (default: stdout)")
    i.add_argument("--jobs", type=int, help="keep only the first N jobs")
    i.add_argument("--cluster", help="cluster preset for a trace (default: the trace's own)")
    i.set_defaults(func=cmd_instance)
