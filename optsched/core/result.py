"""The one result shape returned by every solver call, heuristic and policy run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from optsched.core.instance import Instance
    from optsched.core.metrics import Metrics
    from optsched.core.schedule import Schedule

__all__ = ["Status", "Result", "relative_gap", "finalize"]


class Status(StrEnum):
    """Outcome of a solve. Never raised: always reported on :class:`Result`.

    * ``optimal``: proven optimal (a MILP within the requested ``mip_gap``);
    * ``feasible``: a heuristic's solution, or an incumbent without optimality proof;
    * ``time_limit``: the time limit stopped the solver; ``objective`` holds the incumbent
      if one was found (else ``None``), ``bound`` the best proven bound, ``gap`` their gap;
    * ``infeasible``, ``unbounded``: proven;
    * ``not_found``: a heuristic's rule found no solution; no proof either way (the exact
      model may still find one); ``message`` says where the rule stopped;
    * ``solver_missing``: the requested backend or solver is not installed;
    * ``error``: the solver failed; ``message`` says how.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    NOT_FOUND = "not_found"
    SOLVER_MISSING = "solver_missing"
    ERROR = "error"

    @property
    def has_solution(self) -> bool:
        return self in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``|bound - objective| / max(|objective|, 1e-10)``; ``None`` if either is missing."""
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(abs(objective), 1e-10)


@dataclass(frozen=True, repr=False)
class Result:
    """What every method returns.

    Attributes
    ----------
    status : Status
    objective : float or None
        Objective of the returned solution (incumbent), in the model's own sense.
    bound : float or None
        Best proven bound on the optimum: the dual bound of a MILP, the optimum itself for
        a solved LP, a dual certificate for an online heuristic where one exists.
    gap : float or None
        ``|bound - objective| / |objective|``.
    build_seconds, solve_seconds : float
        Model construction (statement and backend hand-off) and solver time, separately.
    values : dict
        Primal values per named variable block (exact methods).
    duals : dict or None
        LP duals per named constraint block, as d(optimal objective)/d(right-hand side)
        of the row's active bound, in the program's own sense (see
        :mod:`optsched.solvers`); ``None`` for MILPs, whose duals are not defined.
    schedule, metrics
        The validated schedule and its metrics, when the model produces a schedule.
    ratio : float or None
        The proved approximation/competitive ratio that applies to this method on this
        instance (``None`` when nothing is proved); ``ratio_note`` states it.

    ``repr(result)`` is one line (model, method, status, objective, bound and gap when
    present, jobs completed, seconds) of at most :data:`REPR_LIMIT` characters, however
    large the schedule; every field stays an attribute, and :meth:`to_dict` and
    :meth:`to_frame` (pandas) give the whole content.
    """

    status: Status
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    model: str = ""
    method: str = ""
    backend: str | None = None
    solver: str | None = None
    build_seconds: float = 0.0
    solve_seconds: float = 0.0
    values: dict[str, np.ndarray] = field(default_factory=dict)
    duals: dict[str, np.ndarray] | None = None
    schedule: Schedule | None = None
    metrics: Metrics | None = None
    ratio: float | None = None
    ratio_note: str = ""
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.build_seconds + self.solve_seconds

    @property
    def success(self) -> bool:
        return self.status.has_solution and self.objective is not None

    def replace(self, **changes: Any) -> Result:
        return replace(self, **changes)

    def __repr__(self) -> str:
        parts = [f"{_clip(self.model)}/{_clip(self.method)}" if self.method
                 else _clip(self.model) or "?", f"status={self.status.value}",
                 f"objective={_fmt(self.objective)}"]
        if self.bound is not None:
            parts.append(f"bound={_fmt(self.bound)}")
        if self.gap is not None:
            parts.append(f"gap={self.gap:.3g}")
        m = self.metrics
        if m is not None:
            parts.append(f"jobs={m.n_completed}/{m.n_jobs}" if m.n_completed < m.n_jobs
                         else f"jobs={m.n_jobs}")
        elif self.schedule is not None:
            parts.append(f"allocations={len(self.schedule.allocations)}")
        parts.append(f"seconds={self.seconds:.3g}")
        return f"Result({', '.join(parts)})"

    def to_dict(self, *, values: bool = False) -> dict[str, Any]:
        """JSON-ready summary (schedule and metrics included when present)."""
        d: dict[str, Any] = {
            "status": self.status.value, "model": self.model, "method": self.method,
            "objective": self.objective, "bound": self.bound, "gap": self.gap,
            "backend": self.backend, "solver": self.solver,
            "build_seconds": self.build_seconds, "solve_seconds": self.solve_seconds,
            "ratio": self.ratio, "ratio_note": self.ratio_note, "message": self.message,
        }
        if self.schedule is not None:
            d["schedule"] = self.schedule.to_dict()
        if self.metrics is not None:
            d["metrics"] = self.metrics.to_dict()
        if values:
            d["values"] = {k: np.asarray(v).tolist() for k, v in self.values.items()}
            if self.duals is not None:
                d["duals"] = {k: np.asarray(v).tolist() for k, v in self.duals.items()}
        if self.extra:
            d["extra"] = _jsonable(self.extra)
        return d

    def to_frame(self, table: str = "jobs") -> Any:
        """The result as a :class:`pandas.DataFrame` (the ``pandas`` extra;
        :class:`optsched.core.tables.PandasMissing` without it).

        Parameters
        ----------
        table : {"jobs", "allocations", "summary"}
            ``"jobs"``: one row per job of the instance (completed jobs in the order the
            schedule lists their completions, then the unfinished ones) with ``job``,
            ``completed``, ``arrival`` (of a job that started), ``start`` (its first
            allocation), ``completion``, ``jct``, ``queueing_delay`` (first start minus
            arrival) and ``gpu_seconds`` (GPU-seconds held, shares weighted); times in
            seconds, missing where a job never started or finished. ``"allocations"``:
            one row per allocation of the schedule with every
            :class:`~optsched.core.schedule.Allocation` field. ``"summary"``: one row of
            :meth:`to_dict`'s scalars, the metrics' statistics and the scalar entries of
            ``extra`` (``pandas.concat`` of several results' summaries compares them).

        Raises
        ------
        InvalidOption
            ``table`` is none of these, or ``"jobs"``/``"allocations"`` for a result
            without a schedule (a throughput allocation, a bound, a failed solve).
        """
        from optsched.core.tables import require_pandas
        from optsched.errors import InvalidOption

        if table not in _FRAMES:
            raise InvalidOption("table", table, f"must be one of {', '.join(_FRAMES)}")
        pd = require_pandas()
        if table == "summary":
            return pd.DataFrame([self._summary()])
        if self.schedule is None or self.metrics is None:
            raise InvalidOption("table", table, f"this result ({self.model}/{self.method}, "
                                f"{self.status.value}) has no schedule; table='summary' "
                                "gives its one-row summary")
        if table == "allocations":
            from dataclasses import fields

            names = [f.name for f in fields(self.schedule.allocations[0])] \
                if self.schedule.allocations else ["job", "start", "end"]
            return pd.DataFrame([[getattr(a, n) for n in names]
                                 for a in self.schedule.allocations], columns=names)
        return pd.DataFrame(self._job_rows(), columns=list(_JOB_COLUMNS))

    def _summary(self) -> dict[str, Any]:
        row = {k: v for k, v in self.to_dict().items()
               if k not in ("schedule", "metrics", "extra")}
        if self.metrics is not None:
            row.update(self.metrics.to_dict(per_job=False))
        for k, v in self.extra.items():
            if k not in row and (v is None or isinstance(v, (str, bool, int, float))):
                row[k] = v
        return row

    def _job_rows(self) -> list[tuple[Any, ...]]:
        assert self.schedule is not None and self.metrics is not None
        m = self.metrics
        first: dict[str, float] = {}
        held: dict[str, float] = {}
        for a in self.schedule.allocations:
            first[a.job] = min(first.get(a.job, math.inf), a.start)
            held[a.job] = held.get(a.job, 0.0) + a.gpus * a.share * (a.end - a.start)
        nan = math.nan
        rows = []
        for job in [*m.completion, *m.unfinished]:
            start = first.get(job, nan)
            delay = m.queueing_delay.get(job, nan)
            rows.append((job, job in m.completion, start - delay, start,
                         m.completion.get(job, nan), m.jct.get(job, nan), delay,
                         held.get(job, 0.0)))
        return rows


#: the tables :meth:`Result.to_frame` gives
_FRAMES = ("jobs", "allocations", "summary")
_JOB_COLUMNS = ("job", "completed", "arrival", "start", "completion", "jct",
                "queueing_delay", "gpu_seconds")

#: the most characters ``repr(Result)`` prints (names of your own are shortened to fit)
REPR_LIMIT = 300


def _clip(name: str, limit: int = 60) -> str:
    """A name shortened to ``limit`` characters, so the one-line repr stays short."""
    name = str(name)
    return name if len(name) <= limit else name[: limit - 3] + "..."


def _fmt(x: float | None) -> str:
    return "None" if x is None else f"{x:.6g}"


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def finalize(instance: Instance, schedule: Schedule | None, **fields: Any) -> Result:
    """Validate ``schedule`` against ``instance``, attach its metrics, build the Result.

    A schedule that fails validation raises :class:`~optsched.errors.InvalidSchedule`:
    a method that produced it is wrong, and no result is returned for it. The rules are
    those of the model or policy the registry is running
    (:func:`optsched.core.validate.producing`), so a schedule declaring a rule its model
    does not have is refused; outside a registry run, the rules the calling method's code
    put on the schedule, in slotted time.
    """
    if schedule is None:
        return Result(**fields)
    from optsched.core.metrics import compute_metrics
    from optsched.core.validate import Capabilities, current_producer, validate_schedule

    # the registry runs every method and policy with its model's rules; a direct call of
    # a method's code validates with the rules that code declared on its schedule
    rules = current_producer() or Capabilities.declared_by(schedule)
    # a slotted method states the slot it planned on (Hadar's may exceed instance.slot)
    slot = (fields.get("extra") or {}).get("slot")
    if isinstance(slot, bool) or not isinstance(slot, (int, float)) or not slot > 0:
        slot = None
    validate_schedule(instance, schedule, rules, slot=slot)
    fields.setdefault("status", Status.FEASIBLE)
    return Result(schedule=schedule, metrics=compute_metrics(instance, schedule), **fields)
