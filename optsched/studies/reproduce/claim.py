"""A headline claim, its measured row, and the seed every row uses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SEED", "Claim", "Row", "NotYetAvailable"]

SEED = 0


class NotYetAvailable(Exception):
    """A row's model or policy has not landed in this version; the message says why."""


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
