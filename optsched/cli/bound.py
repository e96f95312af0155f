"""``optsched bound``: certified lower bounds on the mean JCT and the makespan.

::

    optsched bound (--trace NAME|FILE | --generate N | --instance FILE.json)
                   [--jobs N] [--load L] [--cluster C] [--policy NAME | --progress-rule R
                   --forking --sharing --resource-sensitive] [--method M ...] [--json]

The bounds hold for every schedule in the setting named (a policy's own capabilities
with ``--policy``); :mod:`optsched.sim.bounds` states each theorem.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from optsched.cli.common import EXIT_OK, hours, num
from optsched.errors import InvalidOption

__all__ = ["add_parsers"]


def add_parsers(subparsers) -> None:
    from optsched.sim.bounds import METHODS

    p = subparsers.add_parser(
        "bound", help="certified lower bounds on mean JCT and makespan of any schedule",
        description="Lower bounds that every schedule of the instance (every policy, "
                    "every exact model) satisfies, each with the relaxation that gave it.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--trace", type=Path, help="trace file or shipped trace name")
    src.add_argument("--generate", type=int, metavar="N",
                     help="generate N Philly-derived jobs (Gavel's generator)")
    src.add_argument("--instance", type=Path, help="an optsched instance JSON")
    p.add_argument("--trace-format", choices=("gavel", "tiresias", "philly"))
    p.add_argument("--cluster", help="cluster preset name or cluster/instance JSON file")
    p.add_argument("--jobs-per-hour", type=float, help="arrival rate for --generate")
    p.add_argument("--jobs", type=int, help="keep only the first N jobs")
    p.add_argument("--load", type=float, metavar="FACTOR",
                   help="divide every arrival time by FACTOR")
    p.add_argument("--seed", type=int, default=0, help="seed of --generate")
    p.add_argument("--policy", help="bound the schedules of this policy's setting "
                                    "(its progress rule, forking, sharing, sensitivity)")
    p.add_argument("--progress-rule", choices=("gang", "partial", "additive"))
    p.add_argument("--forking", action="store_true")
    p.add_argument("--sharing", action="store_true")
    p.add_argument("--resource-sensitive", action="store_true")
    p.add_argument("--method", action="append", choices=METHODS,
                   help="a bound method (repeatable; default all)")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds per LP (default 60)")
    p.add_argument("--json", action="store_true", help="print the bounds as JSON")
    p.set_defaults(func=cmd_bound)


def _setting(args):
    from optsched.sim.bounds import Setting

    flags = dict(progress_rule=args.progress_rule or "gang", forking=args.forking,
                 sharing=args.sharing, resource_sensitive=args.resource_sensitive)
    if args.policy is None:
        return Setting(**flags)
    if args.progress_rule or args.forking or args.sharing or args.resource_sensitive:
        raise InvalidOption("--policy", args.policy, "give either a policy or the setting's "
                                                     "flags, not both")
    from optsched.registry import capabilities, policy_spec

    # the rules the registry holds the policy's schedules to (what the validator applies)
    return Setting.of(capabilities(policy_spec(args.policy).qualified))


def cmd_bound(args) -> int:
    from optsched.cli.simulate import build_instance
    from optsched.sim.bounds import METHODS, lower_bounds

    if args.time_limit is not None and not args.time_limit > 0:
        raise InvalidOption("--time-limit", args.time_limit, "must be > 0")
    setting = _setting(args)
    inst = build_instance(args)
    b = lower_bounds(inst, setting, methods=tuple(args.method or METHODS),
                     time_limit=args.time_limit)
    if args.json:
        json.dump({"instance": inst.name, **b.to_dict()}, sys.stdout, indent=1)
        print()
        return EXIT_OK
    print(f"instance {inst.name}  jobs {inst.n_jobs}  setting: {setting.describe()}")
    print(f"mean JCT  >= {hours(b.mean_jct)} h  ({b.source['mean_jct']})")
    if b.weighted_mean_jct != b.mean_jct:
        print(f"weighted mean JCT >= {hours(b.weighted_mean_jct)} h  "
              f"({b.source['weighted_mean_jct']})")
    print(f"makespan  >= {hours(b.makespan)} h  ({b.source['makespan']})")
    release = sum(j.arrival for j in inst.jobs)
    first = min(j.arrival for j in inst.jobs)
    for m, v in b.by_method.items():
        tc, cm = v.get("total_completion"), v.get("makespan")
        parts = []
        if tc is not None:
            parts.append(f"mean JCT {hours((tc - release) / inst.n_jobs)} h")
        if cm is not None:
            parts.append(f"makespan {hours(cm - first)} h")
        print(f"  {m:<12} {', '.join(parts) or '-'}  ({num(b.seconds.get(m, 0.0), 2)} s)")
    for m, why in b.skipped.items():
        print(f"  {m:<12} skipped: {why}")
    return EXIT_OK
