"""``optsched bound``: certified lower bounds on the mean JCT and the makespan, and an
upper bound on total utility.

::

    optsched bound (--trace NAME|FILE | --generate N | --instance FILE.json)
                   [--jobs N] [--load L] [--cluster C] [--policy NAME | --progress-rule R
                   --forking --sharing --resource-sensitive] [--objective O ...]
                   [--method M ...] [--json]

The bounds hold for every schedule in the setting named (a policy's own capabilities
with ``--policy``); :mod:`optsched.sim.bounds` and :mod:`optsched.sim.utility_bounds`
state each theorem. Without ``--objective`` the JCT and makespan bounds are printed,
and the utility bound too when some job carries a utility function. A ``--method``
that bounds none of the objectives asked for is an error, not ignored.
"""

from __future__ import annotations

import json
import sys

from optsched.cli.common import EXIT_OK, hours, num
from optsched.errors import InvalidOption

__all__ = ["add_parsers"]


#: The objectives ``optsched bound`` reports; ``utility`` is an upper bound.
OBJECTIVES = ("mean_jct", "weighted_mean_jct", "makespan", "utility")


def add_parsers(subparsers) -> None:
    from optsched.cli.simulate import add_instance_arguments
    from optsched.sim.bounds import METHODS
    from optsched.sim.utility_bounds import UTILITY_METHODS

    p = subparsers.add_parser(
        "bound", help="certified bounds on mean JCT, makespan and utility of any schedule",
        description="Lower bounds on mean JCT and makespan, and an upper bound on total "
                    "utility, that every schedule of the instance (every policy, every "
                    "exact model) satisfies, each with the relaxation that gave it.")
    add_instance_arguments(p, seed_help="seed of --generate")
    p.add_argument("--policy", help="bound the schedules of this policy's setting "
                                    "(its progress rule, forking, sharing, sensitivity)")
    p.add_argument("--progress-rule", choices=("gang", "partial", "additive"))
    p.add_argument("--forking", action="store_true")
    p.add_argument("--sharing", action="store_true")
    p.add_argument("--resource-sensitive", action="store_true")
    p.add_argument("--objective", action="append", choices=OBJECTIVES,
                   help="an objective to bound (repeatable; default mean_jct, "
                        "weighted_mean_jct, makespan, and utility when some job carries a "
                        "utility function)")
    p.add_argument("--method", action="append",
                   choices=tuple(dict.fromkeys(METHODS + UTILITY_METHODS)),
                   help="a bound method (repeatable; default all of the objectives'); "
                        "per_job is always computed")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds per LP (default 60)")
    lp = p.add_argument_group("interval LP (tighter bounds cost more; docs/bounds.md)")
    lp.add_argument("--window", type=float, metavar="HOURS",
                    help="hours after its release with one column per interval "
                         "(default: from the instance)")
    lp.add_argument("--intervals", type=int, default=24,
                    help="intervals per job window (default 24)")
    lp.add_argument("--tangents", type=int, default=0, metavar="M",
                    help="busy-time tangents (default 0: off; M+1 times the columns)")
    lp.add_argument("--squash", type=int, default=0, metavar="Q",
                    help="squashed-area rows per type and interval (default 0: off)")
    p.add_argument("--json", action="store_true", help="print the bounds as JSON")
    p.set_defaults(func=cmd_bound)


def _lp_options(args) -> dict:
    """The interval LP's options, checked (each named by its flag)."""
    for flag, v, low in (("--intervals", args.intervals, 2), ("--tangents", args.tangents, 0),
                         ("--squash", args.squash, 0)):
        if v < low:
            raise InvalidOption(flag, v, f"must be an integer >= {low}")
    if args.window is not None and not args.window > 0:
        raise InvalidOption("--window", args.window, "must be > 0 hours")
    return dict(intervals=args.intervals, tangents=args.tangents, squash=args.squash,
                window=None if args.window is None else args.window * 3600.0)


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


def _plan(args, inst) -> tuple[tuple[str, ...], tuple[str, ...] | None,
                               tuple[str, ...] | None]:
    """The objectives asked for, and the methods of the JCT/makespan bound and of the
    utility bound to run (``None``: that bound is not asked for)."""
    from optsched.sim.bounds import METHODS
    from optsched.sim.utility_bounds import UTILITY_METHODS, has_utilities

    objectives = tuple(dict.fromkeys(args.objective or ())) or (
        OBJECTIVES if has_utilities(inst) else OBJECTIVES[:3])
    lower = any(o != "utility" for o in objectives)
    upper = "utility" in objectives
    given = tuple(dict.fromkeys(args.method or ()))
    for m in given:
        if not ((lower and m in METHODS) or (upper and m in UTILITY_METHODS)):
            which = ("mean_jct, weighted_mean_jct, makespan" if m in METHODS
                     else "utility")
            raise InvalidOption("--method", m, f"bounds only {which}, not the objectives "
                                f"asked for ({', '.join(objectives)})")
    jct = (tuple(m for m in given if m in METHODS) or ("per_job",)) if given else METHODS
    util = (tuple(m for m in given if m in UTILITY_METHODS) or ("per_job",)) if given \
        else UTILITY_METHODS
    return objectives, jct if lower else None, util if upper else None


def cmd_bound(args) -> int:
    from optsched.cli.simulate import build_instance
    from optsched.sim.bounds import lower_bounds
    from optsched.sim.utility_bounds import utility_upper_bound

    if args.time_limit is not None and not args.time_limit > 0:
        raise InvalidOption("--time-limit", args.time_limit, "must be > 0")
    setting = _setting(args)
    inst = build_instance(args)
    objectives, jct_methods, util_methods = _plan(args, inst)
    lp = _lp_options(args)
    b = lower_bounds(inst, setting, methods=jct_methods, time_limit=args.time_limit, **lp) \
        if jct_methods is not None else None
    u = utility_upper_bound(inst, setting, methods=util_methods, time_limit=args.time_limit) \
        if util_methods is not None else None
    if args.json:
        out = {"instance": inst.name, "objectives": list(objectives),
               **(b.to_dict() if b is not None else {})}
        if u is not None:
            out["utility_bound"] = u.to_dict()
            if b is None:
                out.update(setting=out["utility_bound"]["setting"], n_jobs=u.n_jobs)
        json.dump(out, sys.stdout, indent=1)
        print()
        return EXIT_OK
    print(f"instance {inst.name}  jobs {inst.n_jobs}  setting: {setting.describe()}")
    if b is not None:
        _print_lower(inst, b, objectives)
    if u is not None:
        print(f"total utility <= {num(u.utility, 6)}  ({u.source})")
        for m, v in u.by_method.items():
            print(f"  {m:<12} utility {num(v, 6)}  ({num(u.seconds.get(m, 0.0), 2)} s)")
        for m, why in u.skipped.items():
            print(f"  {m:<12} skipped: {why}")
    return EXIT_OK


def _print_lower(inst, b, objectives) -> None:
    if "mean_jct" in objectives:
        print(f"mean JCT  >= {hours(b.mean_jct)} h  ({b.source['mean_jct']})")
    if "weighted_mean_jct" in objectives and (b.weighted_mean_jct != b.mean_jct
                                              or "mean_jct" not in objectives):
        print(f"weighted mean JCT >= {hours(b.weighted_mean_jct)} h  "
              f"({b.source['weighted_mean_jct']})")
    if "makespan" in objectives:
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
