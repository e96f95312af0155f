"""``optsched simulate`` (``optsched plot`` is :mod:`optsched.cli.plot`).

::

    optsched simulate --policy NAME (--trace FILE [--trace-format gavel|tiresias]
                      | --generate N | --instance FILE.json) [--cluster PRESET|FILE.json]
                      [--seed S] [--option KEY=VALUE ...] [--out results.json]

Bad input raises :mod:`optsched.errors` types (the main CLI maps them to exit 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path

from optsched.cli.common import EXIT_OK, hours, num, parse_options, progress
from optsched.core.files import check_output, write_text
from optsched.core.instance import Cluster, Instance, load_instance
from optsched.core.jsonio import load_json
from optsched.errors import InvalidOption

__all__ = ["add_parsers", "load_cluster", "build_instance"]


def add_parsers(subparsers) -> None:
    from optsched.registry import simulation_names

    p = subparsers.add_parser(
        "simulate", help="run an online policy over a trace in the round-based simulator",
        description="Run an online scheduling policy over a trace or instance. Policies: "
                    f"{', '.join(simulation_names(aliases=False))} (the older unqualified names, "
                    "e.g. max_min_fairness or tiresias_las, are accepted as aliases).")
    p.add_argument("--policy", required=True, help="registered policy name")
    add_instance_arguments(p, seed_help="seed of --generate and of randomised policies "
                                         "(default 0)")
    p.add_argument("--max-time", type=float, help="stop at this simulated time (s)")
    p.add_argument("--backend", default=None, help="LP backend for Gavel policies")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option (value parsed as JSON if possible); repeatable")
    p.add_argument("--out", type=Path, help="write the result JSON here")
    p.add_argument("--bound", action=argparse.BooleanOptionalAction, default=True,
                   help="report certified lower bounds on mean JCT and makespan and the "
                        "policy's gap to them (default; --no-bound leaves them out)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    p.set_defaults(func=cmd_simulate)


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
    from optsched.catalog import cluster_preset
    return cluster_preset(spec)


def add_instance_arguments(p, *, seed_help: str) -> None:
    """The options that name the instance a command works on (what :func:`build_instance`
    reads): exactly one of ``--trace``, ``--generate``, ``--instance``, then
    ``--trace-format``, ``--cluster``, ``--jobs-per-hour``, ``--jobs``, ``--load`` and
    ``--seed`` (described by ``seed_help``)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--trace", type=Path,
                     help="trace file (Gavel .trace, Tiresias or Philly .csv) or the name of "
                          "a shipped trace (gavel-philly-2000, philly, tiresias-60, ...)")
    src.add_argument("--generate", type=int, metavar="N",
                     help="generate N Philly-derived jobs (Gavel's generator)")
    src.add_argument("--instance", type=Path, help="an optsched instance JSON")
    p.add_argument("--trace-format", choices=("gavel", "tiresias", "philly"),
                   help="trace layout (default: a .csv is Philly's when its header names "
                        "timestamp and num_gpus, else Tiresias'; other files Gavel's)")
    p.add_argument("--cluster", help="cluster preset name or cluster/instance JSON file")
    p.add_argument("--jobs-per-hour", type=float, help="arrival rate for --generate")
    p.add_argument("--jobs", type=int, help="keep only the first N jobs of the trace")
    p.add_argument("--load", type=float, metavar="FACTOR",
                   help="divide every arrival time by FACTOR (2 = jobs arrive twice as fast)")
    p.add_argument("--seed", type=int, default=0, help=seed_help)


def build_instance(args) -> Instance:
    from optsched import catalog

    cluster = load_cluster(args.cluster)
    if args.generate is not None:
        if args.generate < 1:
            raise InvalidOption("--generate", args.generate, "must be >= 1")
        inst = catalog.generate_philly(args.generate, cluster=cluster or "gavel-108",
                                       seed=args.seed, jobs_per_hour=args.jobs_per_hour)
    elif args.instance is not None:
        inst = load_instance(args.instance)
        inst = inst.replace(cluster=cluster) if cluster is not None else inst
    else:
        inst = _read_trace(args, cluster)
    if getattr(args, "jobs", None) is not None:
        if args.jobs < 1:
            raise InvalidOption("--jobs", args.jobs, "must be >= 1")
        if len(inst.jobs) > args.jobs:
            inst = inst.replace(jobs=inst.jobs[: args.jobs],
                                name=f"{inst.name}-first{args.jobs}")
    load = getattr(args, "load", None)
    if load is not None:
        if not (load > 0 and math.isfinite(load)):
            raise InvalidOption("--load", load, "must be a finite number > 0")
        inst = inst.replace(jobs=tuple(dataclasses.replace(j, arrival=j.arrival / load)
                                       for j in inst.jobs),
                            name=f"{inst.name}-load{load:g}")
    return inst


def _read_trace(args, cluster) -> Instance:
    from optsched import catalog

    path = args.trace
    if not path.exists():
        if str(path) in catalog.SHIPPED_TRACES:  # a shipped trace by name
            if str(path) == "philly" and getattr(args, "jobs", None):
                return catalog.read_philly_trace(cluster=cluster, jobs=args.jobs)
            return catalog.shipped_trace(str(path), cluster=cluster)
        raise InvalidOption("--trace", str(path), "no such file, nor a shipped trace "
                            f"({', '.join(catalog.SHIPPED_TRACES)})")
    fmt = args.trace_format or catalog.trace_format(path)
    if fmt == "tiresias":
        return catalog.read_tiresias_trace(path, cluster=cluster)
    if fmt == "philly":
        return catalog.read_philly_trace(path, cluster=cluster,
                                         jobs=getattr(args, "jobs", None))
    return catalog.read_gavel_trace(path, cluster=cluster)


def cmd_simulate(args) -> int:
    from optsched.registry import policy_spec, simulate

    options = parse_options(args.option)
    if args.backend is not None:
        options["backend"] = args.backend
    spec = policy_spec(args.policy)
    spec.check(options)  # a bad name or option fails before any work
    if args.out is not None:
        check_output(args.out, [args.trace if args.trace and args.trace.is_file() else None,
                                args.instance, _cluster_file(args.cluster)])
    inst = build_instance(args)
    res = simulate(inst, args.policy, seed=args.seed, progress=args.progress,
                   max_time=args.max_time, bounds=args.bound, **options)
    m = res.metrics
    assert m is not None  # the simulator always finalises its schedule
    label = f"{spec.qualified} ({res.method})" if "name" in options else spec.qualified
    print(f"policy {label}  instance {inst.name}  jobs {m.n_completed}/{m.n_jobs}  "
          f"mean JCT {hours(m.mean_jct)} h  p99 JCT {hours(m.p99_jct)} h  "
          f"makespan {hours(m.makespan)} h  "
          f"utilisation {m.cru if m.cru is None else round(m.cru, 3)}  "
          f"preemptions {res.extra.get('total_preemptions', '-')}  "
          f"queued jobs {res.extra.get('queued_jobs', '-')}  "
          f"wall {res.seconds:.1f} s")
    from optsched.sim.simulator import no_queue_note

    quiet = no_queue_note(res)
    if quiet:
        progress(f"optsched: warning: {quiet}; raise --load or use a smaller --cluster "
                 "for a comparison")
    if m.n_completed < m.n_jobs:
        left = [j.id for j in inst.jobs if j.id not in m.completion]
        why = res.extra.get("unfinished_reason") or (
            "the simulation stopped at --max-time" if args.max_time is not None else
            "the policy never finished them")
        progress(f"optsched: warning: {len(left)} of {m.n_jobs} jobs did not complete "
                 f"({why}): {', '.join(left[:8])}{' ...' if len(left) > 8 else ''}; the JCT "
                 "figures above are over the completed jobs only")
    if "bounds" in res.extra:
        _print_gaps(res.extra, m.utility)
    elif "gaps_note" in res.extra:
        print(f"no certified bound: {res.extra['gaps_note']}")
    if args.out is not None:
        import json

        d = res.to_dict()
        extra = d.get("extra", {})
        from optsched.sim.gaps import REPORT_KEYS

        for key in REPORT_KEYS:  # the gap columns stand beside the metrics
            if key in extra:
                d[key] = extra.pop(key)
        write_text(args.out, json.dumps(d, indent=1) + "\n")
    return EXIT_OK


def _print_gaps(extra: dict, utility: float | None = None) -> None:
    b, g, src = extra["bounds"], extra["gaps"], extra["bound_sources"]
    if "utility" in b:
        share = "no share of it: the run's utility is 0" if g.get("utility") is None else \
            f"at least {1 / g['utility']:.2f} of the best possible"
        print(f"total utility {num(utility, 6)}, {share} (certified upper bound "
              f"{num(b['utility'], 6)}, {src['utility']})")
    if g.get("mean_jct") is None:
        print(f"certified lower bounds: mean JCT >= {hours(b['mean_jct'])} h "
              f"({src['mean_jct']}), makespan >= {hours(b['makespan'])} h "
              f"({src['makespan']}); no gap: {extra.get('gaps_note', 'no value')}")
        return
    print(f"mean JCT at most {g['mean_jct']:.2f}x the optimum (certified bound "
          f"{hours(b['mean_jct'])} h, {src['mean_jct']}); makespan at most "
          f"{g['makespan']:.2f}x (bound {hours(b['makespan'])} h, {src['makespan']})")


def _cluster_file(spec: str | None) -> Path | None:
    """``--cluster`` when it names a file (an input), not a preset."""
    return Path(spec) if spec is not None and Path(spec).is_file() else None

