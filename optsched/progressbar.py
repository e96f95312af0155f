r"""The one progress bar (rich) that long runs show: simulations and sweeps.

``enabled=None`` shows it only when stderr is a terminal; ``True`` forces it, drawn for
a terminal even when stderr is redirected (so ``--progress`` always shows something);
``False`` never shows it.

The bar shows the items done (``12/40``), the elapsed wall time and an estimate of the
time left (ETA). The estimate extrapolates the elapsed wall time :math:`w` from the
fraction :math:`f` of the run done,

.. math::

    \mathrm{ETA} = w \, \frac{1 - f}{f},

with :math:`f` measured by what the caller gives:

* items completed (the default): :math:`f = \text{completed} / \text{total}`;
* simulated time against a span ``(start, end)`` (a simulation passes its first and
  last arrival, and reports its clock with ``advance(k, now=t)``):
  :math:`f = (t - \text{start}) / (\text{end} - \text{start})` while :math:`t` is inside
  the span; past its end (the jobs still running after the last arrival) the estimate
  falls back to items completed.

The estimate assumes the rest of the run goes at the pace so far; it is shown as
``-:--:--`` until something is done. Cost: :math:`O(1)` per ``advance``.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

__all__ = ["ProgressBar", "eta_seconds"]


def eta_seconds(elapsed: float, fraction: float | None) -> float | None:
    """Wall seconds left when ``fraction`` of the run took ``elapsed`` seconds:
    ``elapsed * (1 - fraction) / fraction``; 0 once done, ``None`` before anything is
    done (no pace to extrapolate)."""
    if fraction is None or not fraction > 0 or not math.isfinite(elapsed):
        return None
    if fraction >= 1:
        return 0.0
    return max(elapsed, 0.0) * (1.0 - fraction) / fraction


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class ProgressBar:
    """``with ProgressBar(total, label, enabled) as bar: bar.advance(k)``.

    Parameters
    ----------
    total : int
        Items of the run (jobs of a simulation, cells of a sweep).
    label : str
        Shown before the bar.
    enabled : bool or None
        See the module docstring.
    span : (float, float), optional
        ``(start, end)`` of the run's own clock (a simulation's first and last arrival,
        in simulated seconds): the ETA then follows that clock, reported by
        ``advance(k, now=t)``, while it is inside the span (module docstring).
    clock : callable, optional
        Wall clock in seconds (``time.monotonic``); replaceable for tests.
    """

    def __init__(self, total: int, label: str, enabled: bool | None = None, *,
                 span: tuple[float, float] | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.forced = enabled is True
        self.total, self.label = int(total), label
        self.span = None if span is None else (float(span[0]), float(span[1]))
        self.completed = 0
        self.time: float | None = None  # the run's own clock, when it reports one
        self._clock = clock
        self._start = clock()
        self._bar: Any = None  # a rich Progress, imported only when shown
        self._task = None

    @property
    def fraction(self) -> float | None:
        """The fraction of the run done, by simulated time inside the span, else by
        items completed (module docstring); ``None`` without a total."""
        if self.span is not None and self.time is not None:
            start, end = self.span
            if end > start and self.time < end:
                return max(self.time - start, 0.0) / (end - start)
        return self.completed / self.total if self.total > 0 else None

    @property
    def elapsed(self) -> float:
        """Wall seconds since the bar started."""
        return self._clock() - self._start

    @property
    def eta(self) -> float | None:
        """Estimated wall seconds left (:func:`eta_seconds` of :attr:`fraction`)."""
        return eta_seconds(self.elapsed, self.fraction)

    def __enter__(self) -> ProgressBar:
        self._start = self._clock()
        if self.enabled and self.total > 0:
            from rich.console import Console
            from rich.progress import Progress

            console = Console(stderr=True, force_terminal=True if self.forced else None)
            self._bar = Progress(*_rich_columns(self.span is not None), console=console,
                                 transient=not self.forced)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total, bar=self)
        return self

    def advance(self, k: int = 1, *, now: float | None = None) -> None:
        """``k`` more items done; ``now``: the run's own clock (with a span)."""
        self.completed += k
        if now is not None:
            self.time = float(now)
        if self._bar is not None:
            self._bar.update(self._task, advance=k)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()


def _rich_columns(with_clock: bool) -> list[Any]:
    """The bar's columns: label, bar, ``12/40``, elapsed, ``ETA h:mm:ss`` and, for a run
    with a span, ``sim 3.2/10.0 h`` (its clock against the span's end)."""
    from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TimeElapsedColumn
    from rich.text import Text

    class EtaColumn(ProgressColumn):
        max_refresh = 0.5

        def render(self, task: Any) -> Text:
            bar: ProgressBar = task.fields["bar"]
            return Text(f"ETA {_clock(bar.eta)}", style="progress.remaining")

    class SimClockColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            bar: ProgressBar = task.fields["bar"]
            end = bar.span[1] if bar.span is not None else math.nan
            now = "-" if bar.time is None else f"{bar.time / 3600:.1f}"
            return Text(f"sim {now}/{end / 3600:.1f} h", style="progress.elapsed")

    columns: list[Any] = ["[progress.description]{task.description}", BarColumn(),
                          MofNCompleteColumn(), TimeElapsedColumn(), EtaColumn()]
    return [*columns, SimClockColumn()] if with_clock else columns
