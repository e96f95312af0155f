"""A headline claim, its measured row, and the seed every row uses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.core.result import Result
from optsched.core.schedule import Schedule

__all__ = ["SEED", "Claim", "Row", "NotYetAvailable", "Finished", "finished"]

SEED = 0


class NotYetAvailable(Exception):
    """A row's model or policy has not landed in this version; the message says why."""


@dataclass(frozen=True)
class Finished:
    """The figures of a simulation in which every job completed."""

    mean_jct: float
    makespan: float
    jct: dict[str, float]
    schedule: Schedule


def finished(res: Result) -> Finished:
    """The figures of ``res``; a claim compares runs that completed every job, so a run
    that did not is an error, not a smaller average."""
    m, s = res.metrics, res.schedule
    if m is None or s is None or m.mean_jct is None or m.makespan is None \
            or m.n_completed < m.n_jobs:
        done = "no metrics" if m is None else f"{m.n_completed}/{m.n_jobs} jobs completed"
        raise RuntimeError(f"{res.method}: {done}; the claim compares finished runs only")
    return Finished(m.mean_jct, m.makespan, dict(m.jct), s)


@dataclass(frozen=True)
class Claim:
    """One headline claim: its key, wording, the paper's factor and how to measure it.

    ``run(quick, img_dir)`` returns the measured fields: ``measured`` (a float or
    ``None``), ``measured_text``, ``instance``, ``seed``, ``verdict`` (optional),
    ``notes`` and ``plots`` (paths).
    """

    key: str
    claim: str
    paper: str
    paper_factor: float | None
    source: str
    run: Callable[[bool, Path], dict[str, Any]]
    up_to: bool = False
    #: the verdict of the committed full run (``benchmarks/results/REPRODUCTION.json``,
    #: checked by the tests): a quick run never claims more than it
    full_verdict: str = ""


@dataclass
class Row:
    key: str
    claim: str
    paper: str
    paper_factor: float | None
    measured: float | None = None
    measured_text: str = ""
    instance: str = ""
    seed: int | None = None
    seconds: float = 0.0
    verdict: str = ""
    notes: str = ""
    plots: list[str] = field(default_factory=list)
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)
