"""A steady-state measurement window over a job stream.

Gavel (OSDI'20 §7; ``scripts/sweeps/run_sweep_continuous.py -s 4000 -e 5000``) and
Synergy (OSDI'22 §6; ``series_id_filter``) measure a continuous Poisson stream on the
jobs whose index lies in a window ``[start, end)`` (jobs 4000-4999), so that the
start-up from an empty cluster is left out, and stop once those jobs are done.

Here the stream is a finite prefix (an :class:`~optsched.core.instance.Instance`)
simulated up to its last arrival at most (its *horizon*) and stopped as soon as every
window job has completed. Until the horizon the prefix *is* the endless stream, so a
window job that completes by then has exactly its endless-stream JCT. A window job still
running at the horizon means the prefix was too short: :class:`WindowUnfinished`, never
a smaller average over the jobs that did finish.

>>> w = Window.of([4000, 5000])     # doctest: +SKIP
>>> jct = w.jcts(instance, run)     # run(max_time, until) -> Result  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.errors import InvalidOption, OptschedError

__all__ = ["Window", "WindowUnfinished"]


class WindowUnfinished(OptschedError):
    """Window jobs still running at the stream's last arrival: the stream prefix was too
    short to measure them (lengthen it; a queue past saturation may need far more)."""

    def __init__(self, where: str, unfinished: list[str], window: Window, horizon: float):
        self.where = where
        self.unfinished = unfinished
        self.window = window
        self.horizon = horizon
        super().__init__(f"{where}: {len(unfinished)} of the {window.size} jobs of window "
                         f"[{window.start}, {window.end}) (first {unfinished[0]!r}) unfinished "
                         f"at the stream's last arrival, {horizon / 3600:.1f} h; the stream "
                         "prefix is too short")


@dataclass(frozen=True)
class Window:
    """Jobs ``[start, end)`` of an instance, in its job order (the arrival order of a
    generated stream)."""

    start: int
    end: int

    @classmethod
    def of(cls, value: Any, field: str = "window") -> Window:
        """A window from ``[start, end]`` (a list or tuple of two integers, ``0 <= start
        < end``); anything else is :class:`InvalidOption` naming ``field``."""
        if isinstance(value, Window):
            return value
        if (not isinstance(value, (list, tuple)) or len(value) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)):
            raise InvalidOption(field, value, "must be [start, end]: two job indices")
        start, end = value
        if start < 0 or end <= start:
            raise InvalidOption(field, value, "must have 0 <= start < end")
        return cls(start, end)

    @property
    def size(self) -> int:
        return self.end - self.start

    def ids(self, instance: Instance, field: str = "window") -> list[str]:
        """The window's job ids; :class:`InvalidOption` naming ``field`` if the instance
        has fewer than ``end`` jobs."""
        if instance.n_jobs < self.end:
            raise InvalidOption(field, [self.start, self.end],
                                f"window ends after the {instance.n_jobs} jobs of "
                                f"{instance.name!r}")
        return [j.id for j in instance.jobs[self.start:self.end]]

    @staticmethod
    def horizon(instance: Instance) -> float:
        """The stream's last arrival: how far the prefix stands for the endless stream."""
        return float(instance.arrivals.max())

    def completions(self, instance: Instance, completion: Mapping[str, float], horizon: float,
                    where: str) -> dict[str, float]:
        """JCT (s) of each window job from a run's ``completion`` times; raises
        :class:`WindowUnfinished` if one of them is missing or completed after
        ``horizon``."""
        ids = self.ids(instance)
        late = [k for k in ids if k not in completion or completion[k] > horizon]
        if late:
            raise WindowUnfinished(where, late, self, horizon)
        arrival = {j.id: j.arrival for j in instance.jobs[self.start:self.end]}
        return {k: completion[k] - arrival[k] for k in ids}

    def jcts(self, instance: Instance,
             run: Callable[[float, Collection[str]], Result], where: str = "") -> dict[str, float]:
        """Simulate ``run(max_time, until)`` up to the horizon, stopping once the window's
        jobs are done, and return their JCTs (:meth:`completions`)."""
        ids = self.ids(instance)
        horizon = self.horizon(instance)
        res = run(horizon, ids)
        if res.schedule is None:
            raise RuntimeError(f"{where or instance.name}: no schedule ({res.status})")
        return self.completions(instance, res.schedule.completion, horizon,
                                where or f"{res.method} on {instance.name}")
