"""``optsched improve``: improve a simulated schedule by large-neighbourhood search.

::

    optsched improve RESULT.json (--trace NAME|FILE | --generate N | --instance FILE.json)
                     [--jobs N] [--load L] [--cluster C] [--policy NAME]
                     [--time-limit S] [--window-time-limit S] [--seed S]
                     [--objective mean_jct|weighted_mean_jct] [--out FILE] [--json]

``RESULT.json`` is a result written by ``optsched simulate --out`` (or a schedule JSON);
the instance is named as for ``simulate``. The search (:func:`optsched.sim.lns.improve`)
keeps only improvements and validates what it returns under the rules of the policy that
produced the start; the certified lower bound (:mod:`optsched.sim.bounds`) and the gap
are printed next to the values.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from optsched.cli.common import EXIT_OK, hours, progress
from optsched.core.files import check_output, write_text
from optsched.errors import InvalidInput, InvalidOption

__all__ = ["add_parsers"]


def add_parsers(subparsers) -> None:
    from optsched.cli.simulate import add_instance_arguments
    from optsched.sim.lns import OBJECTIVES

    p = subparsers.add_parser(
        "improve", help="improve a simulated schedule by large-neighbourhood search",
        description="Re-solve windows of a schedule exactly (a MILP per window, the rest "
                    "fixed), keep what improves, validate what is returned; print the "
                    "start and best values next to the certified lower bound.")
    p.add_argument("result", type=Path, help="result JSON of 'optsched simulate --out' "
                                             "(or a schedule JSON)")
    add_instance_arguments(p, seed_help="seed of --generate and of the window choice "
                                         "(default 0)")
    p.add_argument("--policy", help="validate under this policy's rules (default: the "
                                    "policy the result names, else the schedule's own)")
    p.add_argument("--objective", choices=OBJECTIVES, default="mean_jct")
    p.add_argument("--time-limit", type=float, default=60.0,
                   help="seconds for the whole search (default 60)")
    p.add_argument("--window-time-limit", type=float, default=10.0,
                   help="seconds per window MILP (default 10)")
    p.add_argument("--out", type=Path, help="write the improved result JSON here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=cmd_improve)


def cmd_improve(args) -> int:
    from optsched.cli.simulate import _cluster_file, build_instance
    from optsched.core.jsonio import load_json
    from optsched.sim.bounds import Setting, lower_bounds
    from optsched.sim.lns import improve, start_rules

    for name, v in (("--time-limit", args.time_limit),
                    ("--window-time-limit", args.window_time_limit)):
        if not (v is not None and v > 0):
            raise InvalidOption(name, v, "must be a number of seconds > 0")
    if args.out is not None:
        check_output(args.out, [args.result, args.trace if args.trace and args.trace.is_file()
                                else None, args.instance, _cluster_file(args.cluster)])
    start = load_json(args.result, InvalidInput, "result")
    inst = build_instance(args)
    # the bound first: the search stops once it reaches it (its schedule then optimal)
    setting = Setting.of(start_rules(start, args.policy))
    b = lower_bounds(inst, setting, time_limit=30.0)
    bound = b.value(args.objective)
    res = improve(inst, start, policy=args.policy, objective=args.objective,
                  time_limit=args.time_limit, window_time_limit=args.window_time_limit,
                  seed=args.seed, target=bound)
    interrupted = res.stop == "interrupted"
    summary = {"instance": inst.name, "objective": args.objective,
               "start": res.start_value, "best": res.value, "bound": bound,
               "bound_source": b.source[args.objective],
               "gap_start": b.gap(args.objective, res.start_value),
               "gap_best": b.gap(args.objective, res.value),
               "windows_tried": res.windows_tried, "windows_improved": res.windows_improved,
               "stop": res.stop, "seconds": res.seconds, "cpu_seconds": res.cpu_seconds,
               "rules": res.capabilities.describe()}
    if args.out is not None:
        d = res.to_result(inst).to_dict()
        d["bounds"] = {args.objective: bound}
        d["gaps"] = {args.objective: summary["gap_best"]}
        write_text(args.out, json.dumps(d, indent=1) + "\n")
    code = 128 + signal.SIGINT if interrupted else EXIT_OK
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
        return code
    what = "mean JCT" if args.objective == "mean_jct" else "weighted mean JCT"
    print(f"instance {inst.name}  jobs {inst.n_jobs}  rules: {res.capabilities.describe()}")
    print(f"start {what} {hours(res.start_value)} h  (at most {summary['gap_start']:.3f}x "
          "the optimum)")
    print(f"best  {what} {hours(res.value)} h  (at most {summary['gap_best']:.3f}x the "
          f"optimum; certified bound {hours(bound)} h, {b.source[args.objective]})")
    why = "reached the certified bound: optimal" if res.stop == "target" else res.stop
    print(f"windows {res.windows_tried} tried, {res.windows_improved} improved; stopped: "
          f"{why}; {res.seconds:.1f} s wall, {res.cpu_seconds:.1f} s CPU")
    if interrupted:
        progress("optsched: interrupted: the best schedule so far is reported above"
                 + (f" and written to {args.out}" if args.out is not None else ""))
    return code
