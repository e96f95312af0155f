"""``optsched simulate`` and ``optsched plot`` (sub-commands added to the main CLI).

::

    optsched simulate --policy NAME (--trace FILE [--trace-format gavel|tiresias]
                      | --generate N | --instance FILE.json) [--cluster PRESET|FILE.json]
                      [--seed S] [--option KEY=VALUE ...] [--out results.json]
    optsched plot RESULTS.json --out DIR

Bad input raises :mod:`optsched.errors` types (the main CLI maps them to exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, InvalidOption
from ..instance import Cluster, Instance, load_instance
from ..jsonio import load_json

__all__ = ["add_simulate_parser", "add_plot_parser", "cmd_simulate", "cmd_plot",
           "load_cluster", "build_instance"]


def add_simulate_parser(subparsers) -> argparse.ArgumentParser:
    from ..policies import simulation_names

    p = subparsers.add_parser(
        "simulate", help="run an online policy over a trace in the round-based simulator",
        description="Run an online scheduling policy over a trace or instance. Policies: "
                    f"{', '.join(simulation_names())}.")
    p.add_argument("--policy", required=True, help="registered policy name")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--trace", type=Path, help="trace file (Gavel .trace or Tiresias .csv)")
    src.add_argument("--generate", type=int, metavar="N",
                     help="generate N Philly-derived jobs (Gavel's generator)")
    src.add_argument("--instance", type=Path, help="an optsched instance JSON")
    p.add_argument("--trace-format", choices=("gavel", "tiresias"),
                   help="trace layout (default: from the extension: .csv tiresias, else gavel)")
    p.add_argument("--cluster", help="cluster preset name or cluster/instance JSON file")
    p.add_argument("--jobs-per-hour", type=float, help="arrival rate for --generate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-time", type=float, help="stop at this simulated time (s)")
    p.add_argument("--backend", default=None, help="LP backend for Gavel policies")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option (value parsed as JSON if possible); repeatable")
    p.add_argument("--out", type=Path, help="write the result JSON here")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    p.set_defaults(func=cmd_simulate)
    return p


def add_plot_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("plot", help="plot a simulation result (JCT CDF, utilisation, "
                              "Gantt) to PNG; needs the 'plot' extra (matplotlib)")
    p.add_argument("results", type=Path, help="result JSON written by 'optsched simulate'")
    p.add_argument("--out", type=Path, required=True, help="output directory")
    p.add_argument("--gantt-jobs", type=int, default=60, help="jobs shown in the Gantt chart")
    p.set_defaults(func=cmd_plot)
    return p


def load_cluster(spec: str | None) -> Cluster | None:
    """A preset name, a cluster JSON ``{"nodes": [...]}`` or an instance JSON's cluster."""
    if spec is None:
        return None
    path = Path(spec)
    if path.suffix.lower() == ".json" or path.exists():
        data = load_json(path, InvalidOption, "--cluster")
        if isinstance(data, dict) and "cluster" in data:
            data = data["cluster"]
        return Cluster.from_dict(data)
    from ..catalog import cluster_preset
    return cluster_preset(spec)


def _parse_options(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise InvalidOption("--option", item, "must be KEY=VALUE")
        k, v = item.split("=", 1)
        try:
            out[k.strip()] = json.loads(v)
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def build_instance(args) -> Instance:
    from .. import catalog

    cluster = load_cluster(args.cluster)
    if args.generate is not None:
        if args.generate < 1:
            raise InvalidOption("--generate", args.generate, "must be >= 1")
        return catalog.generate_philly(args.generate, cluster=cluster or "gavel-108",
                                       seed=args.seed, jobs_per_hour=args.jobs_per_hour)
    if args.instance is not None:
        inst = load_instance(args.instance)
        return inst.replace(cluster=cluster) if cluster is not None else inst
    path = args.trace
    if not path.exists():
        raise InvalidOption("--trace", str(path), "file not found")
    fmt = args.trace_format or ("tiresias" if path.suffix.lower() == ".csv" else "gavel")
    if fmt == "tiresias":
        return catalog.read_tiresias_trace(path, cluster=cluster)
    return catalog.read_gavel_trace(path, cluster=cluster)


def cmd_simulate(args) -> int:
    from ..policies import RUNNERS, get_policy, run_policy

    options = _parse_options(args.option)
    if args.backend is not None:
        options["backend"] = args.backend
    if args.policy not in RUNNERS:  # fail on a bad name or option before reading the trace
        try:
            get_policy(args.policy, **options)
        except TypeError as exc:
            raise InvalidOption("--option", options,
                                f"not accepted by {args.policy!r}: {exc}") from None
    inst = build_instance(args)
    try:
        res = run_policy(args.policy, inst, seed=args.seed, progress=args.progress,
                         max_time=args.max_time, **options)
    except TypeError as exc:
        raise InvalidOption("--option", options, f"not accepted by {args.policy!r}: {exc}") \
            from None
    m = res.metrics
    print(f"policy {res.method}  instance {inst.name}  jobs {m.n_completed}/{m.n_jobs}  "
          f"mean JCT {_hours(m.mean_jct)} h  p99 JCT {_hours(m.p99_jct)} h  "
          f"makespan {_hours(m.makespan)} h  "
          f"utilisation {m.cru if m.cru is None else round(m.cru, 3)}  "
          f"preemptions {res.extra.get('total_preemptions', '-')}  "
          f"wall {res.seconds:.1f} s")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res.to_dict(), indent=1) + "\n")
    return 0


def _hours(x: float | None) -> str:
    return "-" if x is None else f"{x / 3600:.3f}"


def cmd_plot(args) -> int:
    from .plot import MatplotlibMissing, plot_result

    data = load_json(args.results, InvalidInput, "results")
    try:
        files = plot_result(data, args.out, gantt_jobs=args.gantt_jobs)
    except MatplotlibMissing as exc:
        print(f"optsched: error: {exc}", file=sys.stderr)
        return 2
    for f in files:
        print(f)
    return 0
