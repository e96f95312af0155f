"""The ``optsched`` command line.

Exit codes: 0 success; 1 the solver did not produce a solution (infeasible, time limit
without incumbent, solver missing, error) or a method failed (e.g. a policy made an
invalid decision in a simulation); 2 bad input (malformed instance or schedule,
unknown name, bad option), with the message on stderr.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .errors import InvalidInput, InvalidOption, OptschedError
from .instance import instance_json_schema, load_instance
from .registry import get_model, models, solve
from .result import Result

EXIT_SOLVER = 1
EXIT_INPUT = 2


def _fmt(x, digits: int = 6) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        return f"{x:.{digits}g}"
    return str(x)


def table(rows: list[dict], columns: list[str]) -> str:
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    width = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
             for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, width))
    sep = "  ".join("-" * w for w in width)
    body = ["  ".join(v.ljust(w) for v, w in zip(row, width)) for row in cells]
    return "\n".join([line, sep, *body])


COLUMNS = ["model", "method", "status", "objective", "bound", "gap", "ratio_to_exact",
           "proved_ratio", "seconds"]


def compare_rows(instance, model: str, backend: str = "highs", **options) -> list[dict]:
    """Exact and every heuristic of ``model`` on ``instance``, one table row each."""
    spec = get_model(model)
    rows = []
    ex = solve(instance, model, "exact", backend=backend, **options)
    rows.append(_row(ex, None))
    for label, extra in spec.exact_variants.items():
        row = _row(solve(instance, model, "exact", backend=backend, **options, **extra), ex)
        row["method"] = f"{label}[{backend}]"
        rows.append(row)
    for name in spec.heuristics:
        rows.append(_row(solve(instance, model, name), ex))
    return rows


def _row(res: Result, exact: Result | None) -> dict:
    ratio = None
    if exact is not None and exact.objective and res.objective is not None:
        ratio = res.objective / exact.objective
    return {"model": res.model, "method": res.method + (f"[{res.backend}]" if res.backend else ""),
            "status": res.status.value, "objective": res.objective, "bound": res.bound,
            "gap": res.gap, "ratio_to_exact": ratio, "proved_ratio": res.ratio,
            "seconds": res.seconds, "note": res.ratio_note}


def notes(rows: list[dict]) -> str:
    """Each row's statement of what is (or is not) proved, below the table."""
    lines = [f"  {r['model']} {r['method']}: {r['note']}" for r in rows if r.get("note")]
    return "\n".join(["proved ratios:", *lines]) if lines else ""


# --------------------------------------------------------------------------- commands
def cmd_demo(args) -> int:
    rows = []
    for name, spec in sorted(models().items()):
        if spec.demo_instance is None:
            continue
        inst = spec.demo_instance()
        print(f"# {name}: {spec.summary}\n#   instance {inst.name}: {inst.n_jobs} jobs, "
              f"{inst.cluster.total_gpus} GPUs {inst.cluster.gpus_per_type}; "
              f"objective: {spec.objective} ({spec.sense})")
        rows += compare_rows(inst, name, backend=args.backend)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(table(rows, COLUMNS))
        print("\n" + notes(rows))
    return 0


def _options(args) -> dict:
    opts = {}
    if getattr(args, "solver", None):
        opts["solver"] = args.solver
    if getattr(args, "time_limit", None) is not None:
        opts["time_limit"] = args.time_limit
    if getattr(args, "mip_gap", None) is not None:
        opts["mip_gap"] = args.mip_gap
    for kv in getattr(args, "option", None) or []:
        if "=" not in kv:
            raise InvalidOption("--option", kv, "must be KEY=VALUE")
        k, v = kv.split("=", 1)
        try:
            opts[k] = json.loads(v)
        except json.JSONDecodeError:
            opts[k] = v
    return opts


def cmd_solve(args) -> int:
    inst = load_instance(args.instance)
    res = solve(inst, args.model, args.method, backend=args.backend, **_options(args))
    out = res.to_dict(values=args.values)
    text = json.dumps(out, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    if args.json:
        print(text)
    else:
        print(table([_row(res, None)], COLUMNS))
        if res.metrics is not None:
            m = res.metrics
            print(f"\njobs completed {m.n_completed}/{m.n_jobs}; mean JCT {_fmt(m.mean_jct)} s; "
                  f"makespan {_fmt(m.makespan)} s; CRU {_fmt(m.cru)}")
        if res.message:
            print(res.message)
    return 0 if res.success else EXIT_SOLVER


def cmd_compare(args) -> int:
    inst = load_instance(args.instance)
    rows = compare_rows(inst, args.model, backend=args.backend, **_options(args))
    print(json.dumps(rows, indent=1) if args.json else table(rows, COLUMNS) + "\n\n" + notes(rows))
    return 0


def cmd_validate(args) -> int:
    from .metrics import compute_metrics
    from .schedule import load_schedule
    from .validate import validate_schedule

    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    validate_schedule(inst, sched)
    m = compute_metrics(inst, sched)
    print(json.dumps({"valid": True, "metrics": m.to_dict(per_job=False)}, indent=1))
    return 0


def cmd_schema(args) -> int:
    print(json.dumps(instance_json_schema(), indent=1))
    return 0


def cmd_catalog(args) -> int:
    from . import catalog

    print("Cluster presets:")
    for name in catalog.PRESETS:
        c = catalog.cluster_preset(name)
        print(f"  {name:16s} {len(c.nodes):3d} nodes, {c.total_gpus:4d} GPUs {c.gpus_per_type}")
    print("\nGavel job types (per-worker iterations/s on k80/p100/v100, 1 worker):")
    for name, prof in sorted(catalog.profiles().items()):
        tp = prof.throughput.get(1, {})
        vals = "/".join(_fmt(tp.get(t), 3) for t in ("k80", "p100", "v100"))
        print(f"  {name:36s} {vals}")
    print("\nSynergy CPU/memory-sensitivity profiles:",
          ", ".join(sorted(catalog.synergy_profiles())))
    print("Salus workloads:", len(catalog.salus_workloads()), "training runs")
    print("\nModels:", ", ".join(f"{n} ({', '.join(s.methods)})"
                                 for n, s in sorted(models().items())))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="optsched",
        description="Formal models for scheduling deep-learning training jobs on GPU clusters: "
                    "exact LP/MILP next to the papers' heuristics.")
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run every model exactly and heuristically on default data")
    d.add_argument("--backend", default="highs", choices=["highs", "pyomo", "cvxpy"])
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_demo)

    def solver_args(q):
        q.add_argument("--backend", default="highs", choices=["highs", "pyomo", "cvxpy"])
        q.add_argument("--solver", help="solver name for the pyomo/cvxpy backend")
        q.add_argument("--time-limit", type=float, dest="time_limit")
        q.add_argument("--mip-gap", type=float, dest="mip_gap")
        q.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="model option, value parsed as JSON when possible")
        q.add_argument("--json", action="store_true", help="print the result as JSON")

    s = sub.add_parser("solve", help="solve an instance with a model")
    s.add_argument("model")
    s.add_argument("instance")
    s.add_argument("--method", default="exact")
    solver_args(s)
    s.add_argument("--out", help="write the JSON result to this file")
    s.add_argument("--values", action="store_true", help="include primal values and duals")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("compare", help="exact vs every heuristic of a model")
    c.add_argument("model")
    c.add_argument("instance")
    solver_args(c)
    c.set_defaults(func=cmd_compare)

    v = sub.add_parser("validate", help="check a schedule (or result JSON) against an instance")
    v.add_argument("instance")
    v.add_argument("schedule")
    v.set_defaults(func=cmd_validate)

    sub.add_parser("schema", help="print the instance JSON Schema").set_defaults(func=cmd_schema)
    sub.add_parser("catalog", help="list workload profiles and cluster presets").set_defaults(
        func=cmd_catalog)
    from .sim.cli import add_plot_parser, add_simulate_parser

    add_simulate_parser(sub)
    add_plot_parser(sub)
    from .reproduce import add_reproduce_parser
    from .sweep import add_sweep_parser

    add_reproduce_parser(sub)
    add_sweep_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InvalidInput as exc:
        print(f"optsched: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OptschedError as exc:  # e.g. a policy's invalid decision in a simulation
        print(f"optsched: failed: {exc}", file=sys.stderr)
        return EXIT_SOLVER
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
