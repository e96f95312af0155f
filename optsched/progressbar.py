"""The one progress bar (rich) that long runs show: simulations and sweeps.

``enabled=None`` shows it only when stderr is a terminal; ``True`` forces it, drawn for
a terminal even when stderr is redirected (so ``--progress`` always shows something);
``False`` never shows it.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any

__all__ = ["ProgressBar"]


class ProgressBar:
    """``with ProgressBar(total, label, enabled) as bar: bar.advance(k)``."""

    def __init__(self, total: int, label: str, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.forced = enabled is True
        self.total, self.label = int(total), label
        self._bar: Any = None  # a rich Progress, imported only when shown
        self._task = None

    def __enter__(self) -> ProgressBar:
        if self.enabled and self.total > 0:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeElapsedColumn,
            )

            console = Console(stderr=True, force_terminal=True if self.forced else None)
            self._bar = Progress("[progress.description]{task.description}", BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                                 transient=not self.forced)
            self._bar.start()
            self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, k: int = 1) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=k)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
