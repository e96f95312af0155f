"""Stopping a long run on Ctrl-C (or ``kill``) quickly, keeping what it finished.

Only the process that runs a study handles the interrupt: its worker processes ignore
SIGINT (:func:`ignore_sigint`, their initializer), so a Ctrl-C, which a terminal sends
to the whole process group, does not break the pool half-way. The parent catches the
:class:`KeyboardInterrupt`, cancels the queued work and terminates the running workers
(:func:`stop_pool`), and raises :class:`Interrupted` saying what was kept and how to
resume; ``optsched`` prints that one line and exits 130 (143 after SIGTERM).

Some extension modules turn a :class:`KeyboardInterrupt` raised inside them into another
exception (pybind11's argument conversion in matplotlib reports a ``TypeError``), which
a runner would record as a failed cell or row and carry on. The command line's handler
(:func:`on_signal`) therefore also remembers the signal, and the runners look
(:func:`requested`, :func:`check`) after each piece of work.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["Interrupted", "ignore_sigint", "sigint_blocked", "stop_pool", "on_signal",
           "requested", "check", "reset"]

#: the signal :func:`on_signal` received since the last :func:`reset` (None: none)
_received: list[int] = []


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


def on_signal(signum: int, frame: object) -> None:
    """Signal handler (SIGINT, SIGTERM): remember the signal, raise KeyboardInterrupt."""
    _received.append(signum)
    raise KeyboardInterrupt


def requested() -> int | None:
    """The signal :func:`on_signal` received since :func:`reset`, if any."""
    return _received[0] if _received else None


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if :func:`on_signal` ran (even if the exception
    it raised was swallowed on the way)."""
    if _received:
        raise KeyboardInterrupt


def reset() -> None:
    """Forget the signals received (a new command starts)."""
    _received.clear()


def ignore_sigint() -> None:
    """Initializer of worker processes: leave Ctrl-C to the parent, which stops them."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Hold SIGINT back while worker processes are started, as
    :mod:`multiprocessing.resource_tracker` does.

    A child inherits the blocked signal mask through fork and exec, so a Ctrl-C cannot
    reach a worker still importing (before :func:`ignore_sigint` runs), where it would
    print a traceback of its own; the parent gets a Ctrl-C that came meanwhile as soon
    as the block ends.
    """
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


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
