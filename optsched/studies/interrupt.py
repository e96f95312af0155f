"""Stopping a long run on Ctrl-C (or ``kill``) quickly, keeping what it finished.

Only the process that runs a study handles the interrupt: its worker processes ignore
SIGINT (:func:`ignore_sigint`, their initializer), so a Ctrl-C, which a terminal sends
to the whole process group, does not break the pool half-way. The parent catches the
:class:`KeyboardInterrupt`, cancels the queued work and terminates the running workers
(:func:`stop_pool`), and raises :class:`Interrupted` saying what was kept and how to
resume; ``optsched`` prints that one line and exits 130 (143 after SIGTERM).
"""

from __future__ import annotations

import signal
import time
from concurrent.futures import ProcessPoolExecutor

__all__ = ["Interrupted", "ignore_sigint", "stop_pool"]


class Interrupted(KeyboardInterrupt):
    """A run stopped by an interrupt after keeping its finished work.

    ``str(exc)`` (also ``exc.kept``) says what was kept and how to resume, e.g. ``12 of
    18 cells kept in out/cells.jsonl; run the same command again to resume``. A subclass
    of :class:`KeyboardInterrupt`, so code that stops on Ctrl-C still stops.
    """

    def __init__(self, kept: str):
        super().__init__(kept)
        self.kept = kept

    def __str__(self) -> str:
        return self.kept


def ignore_sigint() -> None:
    """Initializer of worker processes: leave Ctrl-C to the parent, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_pool(ex: ProcessPoolExecutor, timeout: float = 1.0) -> None:
    """Cancel every queued task of ``ex`` and terminate its running workers now.

    ``shutdown(cancel_futures=True)`` alone would still wait for the running tasks (a
    cell can take minutes); the workers are sent SIGTERM, and SIGKILL if they are still
    alive after ``timeout`` seconds.
    """
    # the worker table is private; Python 3.14's terminate_workers() does the same
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(timeout)
