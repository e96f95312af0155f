"""The ``optsched`` command line.

Exit codes: 0 success; 1 no answer (a solver returned no solution and no bound: time
limit without incumbent, solver missing, error) or a method failed (e.g. a policy made
an invalid decision, or its LP failed, in a simulation); 2 bad input (malformed instance
or schedule, unknown name, unknown or bad option), with the message on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from optsched.cli import bound, models, simulate, studies
from optsched.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from optsched.errors import InvalidInput, OptschedError
from optsched.version import __version__

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="optsched",
        description="Formal models for scheduling deep-learning training jobs on GPU clusters: "
                    "exact LP/MILP next to the papers' heuristics.")
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    models.add_parsers(sub)
    simulate.add_parsers(sub)
    studies.add_parsers(sub)
    bound.add_parsers(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InvalidInput as exc:
        print(f"optsched: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except OptschedError as exc:  # a policy's invalid decision, a failed solve, ...
        print(f"optsched: failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
