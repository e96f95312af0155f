"""A headline claim, its measured row, and the seed every row uses."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.core.schedule import Schedule
from optsched.errors import InvalidOption

__all__ = ["SEED", "Claim", "Row", "NotYetAvailable", "Finished", "finished", "run_gaps"]

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
    #: "reproduced" when the measured factor is within this fraction of the paper's
    #: (claims stated as small percentages need a tighter one than 10 %)
    tolerance: float = 0.1
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
    #: per simulated run and objective the claim measures: value, certified bound, gap
    #: (:func:`run_gaps`); ``bounds_note`` says why a claim has none
    bounds: list[dict[str, Any]] = field(default_factory=list)
    bounds_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


#: The objectives :func:`run_gaps` reports, and whether the bound is a lower one.
GAP_OBJECTIVES = {"mean_jct": "min", "makespan": "min", "utility": "max"}


def run_gaps(instance: Instance, runs: Mapping[str, Result], objectives: Sequence[str],
             setting_label: str = "", *,
             bound_options: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    r"""For each run and objective: the run's value, the certified bound on every schedule
    of ``instance`` in the run's setting (:mod:`optsched.sim.bounds`,
    :mod:`optsched.sim.utility_bounds`) and the gap (value / bound for mean JCT and
    makespan, bound / value for utility; :math:`\ge 1`). A run that did not complete
    every job has no mean-JCT or makespan gap (its statistics cover fewer jobs).
    ``bound_options`` go to :func:`optsched.sim.bounds.lower_bounds` (e.g. a wider
    interval-LP ``window`` and ``max_columns``: any window gives a valid bound, a wider
    one a tighter one)."""
    from optsched.sim.bounds import Setting, lower_bounds
    from optsched.sim.utility_bounds import utility_upper_bound

    for o in objectives:
        if o not in GAP_OBJECTIVES:
            raise InvalidOption("objectives", o, "must be among " + ", ".join(GAP_OBJECTIVES))
    cache: dict[tuple[Setting, str], tuple[float, str]] = {}
    out = []
    for name, res in runs.items():
        setting = Setting.of(res.schedule)
        m = res.metrics
        for o in objectives:
            if (setting, o) not in cache:
                if o == "utility":
                    u = utility_upper_bound(instance, setting)
                    cache[setting, o] = (u.utility, u.source)
                else:
                    b = lower_bounds(instance, setting, **(bound_options or {}))
                    cache[setting, "mean_jct"] = (b.mean_jct, b.source["mean_jct"])
                    cache[setting, "makespan"] = (b.makespan, b.source["makespan"])
            bound, source = cache[setting, o]
            value = None if m is None else getattr(m, o)
            if o != "utility" and (m is None or m.n_completed < m.n_jobs):
                value = None
            gap = None
            if value is not None:
                if GAP_OBJECTIVES[o] == "min":
                    gap = value / bound if bound > 0 else None
                else:
                    gap = bound / value if value > 0 else None
            out.append({"setting": setting_label, "run": name, "objective": o,
                        "value": value, "bound": bound, "gap": gap, "source": source,
                        "bound_is": "lower" if GAP_OBJECTIVES[o] == "min" else "upper"})
    return out
