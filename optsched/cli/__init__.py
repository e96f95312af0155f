"""The ``optsched`` command line.

Exit codes: 0 success; 1 no answer (a solver returned no solution and no bound: time
limit without incumbent, solver missing, error) or a method failed (e.g. a policy made
an invalid decision, or its LP failed, in a simulation); 2 bad input (malformed instance
or schedule, unknown name, unknown or bad option) or a bad output path (an input of the
same command, a missing folder, a folder, an unwritable place, a full disk), with the
message on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from optsched.cli import bound, models, simulate, studies
from optsched.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from optsched.core.files import output_error
from optsched.errors import InvalidInput, InvalidOutput, OptschedError
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
        print(f"optsched: error: {_as_option(exc, args)}", file=sys.stderr)
        return EXIT_INPUT
    except OptschedError as exc:  # a policy's invalid decision, a failed solve, ...
        print(f"optsched: failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:
        # only a failed write to the command's own output is the user's to fix; any
        # other OSError is a defect and keeps its traceback
        path = _output_file(args, exc)
        if path is None:
            raise
        print(f"optsched: error: {output_error('--out', path, exc)}", file=sys.stderr)
        return EXIT_INPUT


def _under_out(args: argparse.Namespace, name: object) -> bool:
    """Whether the file ``name`` is the command's ``--out`` or inside that folder."""
    out = getattr(args, "out", None)
    if out is None or not isinstance(name, (str, os.PathLike)):
        return False
    root, f = Path(os.path.abspath(out)), Path(os.path.abspath(name))
    return f == root or root in f.parents


def _output_file(args: argparse.Namespace, exc: OSError) -> str | None:
    """The file of ``exc`` when it is the command's ``--out`` or inside that folder."""
    for name in (exc.filename, exc.filename2):
        if _under_out(args, name):
            return str(name)
    return None


def _as_option(exc: InvalidInput, args: argparse.Namespace) -> InvalidInput:
    """A library writer names its own parameter (``path``, ``out``); on the command line
    a file written under ``--out`` is reported as ``--out``, with the file and reason."""
    if isinstance(exc, InvalidOutput) and not exc.path.startswith("--") and \
            _under_out(args, exc.value):
        return InvalidOutput("--out", exc.value, exc.reason)
    return exc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
