"""The ``optsched`` command line.

Exit codes: 0 success; 1 no answer (a solver returned no solution and no bound: time
limit without incumbent, solver missing, error) or a method failed (e.g. a policy made
an invalid decision, or its LP failed, in a simulation); 2 bad input (malformed instance
or schedule, unknown name, unknown or bad option) or a bad output path (an input of the
same command, a missing folder, a folder, an unwritable place, a full disk), with the
message on stderr; 130 interrupted by Ctrl-C (SIGINT), 143 stopped by SIGTERM
(``kill``): 128 + the signal's number, as a shell reports a process the signal ended.

An interrupt stops every command within a second or two (the worker processes of a
sweep or a reproduction are terminated, the queued work cancelled) and prints one
line on stderr saying what was kept and how to resume, never a traceback: a sweep
keeps its finished cells and a reproduction its finished rows, and the same command
run again continues from them. SIGTERM is handled as Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from optsched.cli import bench, bound, improve, models, plot, simulate, studies
from optsched.cli.common import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from optsched.core.files import output_error
from optsched.errors import InvalidInput, InvalidOutput, OptschedError
from optsched.version import __version__

__all__ = ["main", "run", "build_parser", "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "EXIT_SIGINT",
           "EXIT_SIGTERM"]

#: interrupted by Ctrl-C (128 + SIGINT)
EXIT_SIGINT = 128 + signal.SIGINT
#: stopped by SIGTERM (128 + SIGTERM)
EXIT_SIGTERM = 128 + signal.SIGTERM


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="optsched",
        description="Formal models for scheduling deep-learning training jobs on GPU clusters: "
                    "exact LP/MILP next to the papers' heuristics.")
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    models.add_parsers(sub)
    simulate.add_parsers(sub)
    plot.add_parsers(sub)
    studies.add_parsers(sub)
    bound.add_parsers(sub)
    improve.add_parsers(sub)
    bench.add_parsers(sub)
    return p


class _Signals:
    """While a command runs, SIGINT and SIGTERM raise :class:`KeyboardInterrupt` (and
    are remembered: :mod:`optsched.studies.interrupt`); which one came decides the exit
    code."""

    def __init__(self, restore: bool = True) -> None:
        self.saved: dict[int, Any] = {}
        self.restore = restore

    def __enter__(self) -> _Signals:
        from optsched.studies import interrupt

        interrupt.reset()
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) in (signal.SIG_DFL, signal.default_int_handler):
                    self.saved[sig] = signal.signal(sig, interrupt.on_signal)
        except ValueError:  # not the main thread: signals cannot be handled there
            pass
        return self

    @property
    def received(self) -> int | None:
        from optsched.studies import interrupt

        return interrupt.requested()

    def mute(self) -> None:
        """Ignore further interrupts while the first one is reported."""
        for sig in self.saved:
            signal.signal(sig, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> None:
        # the program itself (``restore`` false) ignores an interrupt that comes once the
        # command is over: its work is done and written, the exit must not turn it into
        # an uncaught KeyboardInterrupt
        for sig, old in self.saved.items():
            signal.signal(sig, old if self.restore else signal.SIG_IGN)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` (default: the process's arguments); return its exit code."""
    return _main(argv, restore=True)


def _main(argv: Sequence[str] | None, restore: bool) -> int:
    args = build_parser().parse_args(argv)
    with _Signals(restore) as signals:
        try:
            return int(args.func(args) or 0)
        except KeyboardInterrupt as exc:
            signals.mute()
            _report_interrupt(args.command, exc)
            return EXIT_SIGTERM if signals.received == signal.SIGTERM else EXIT_SIGINT
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


def _report_interrupt(command: str, exc: KeyboardInterrupt) -> None:
    """The one line an interrupt prints: what a study kept, else that nothing was."""
    from optsched.studies.interrupt import Interrupted

    kept = (exc.kept if isinstance(exc, Interrupted)
            else f"{command} stopped before it finished, nothing written; run the same "
                 "command again to start over")
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    print(f"optsched: interrupted: {kept}", file=sys.stderr, flush=True)


def run() -> None:
    """The ``optsched`` program: :func:`main`, then exit with its code.

    After an interrupt that stopped a HiGHS solve (its presolve cannot be stopped, and
    its worker threads may outlive a cancelled run, which can abort the teardown), or a
    solve given up at its time limit, the process ends at once instead of in the
    interpreter's teardown.
    """
    code = _main(None, restore=False)
    highs = sys.modules.get("optsched.solvers.highs")
    common = sys.modules.get("optsched.solvers.common")
    # a solve stopped by an interrupt, or given up at its time limit while HiGHS's
    # presolve was still running, would hold the interpreter's teardown until HiGHS
    # stops by itself (seconds past the limit); the command's work is done and its
    # files are written (atomically, synced), so the process ends here
    if (code in (EXIT_SIGINT, EXIT_SIGTERM) and highs is not None
            and (highs.unstopped() or highs.interrupted() or highs.running())) \
            or (common is not None and common.abandoned_solves_running()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


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
    run()
