"""Exact vs every heuristic of a model, side by side: :func:`compare`.

Each registered method of the model gives one :class:`Row`. Options reach every row
that declares them; a row that does not take an option lists it in ``Row.skipped``
(an option that *no* method of the model takes is an error, as is a backend for a model
that solves no program). Solver options and the backend reach only the rows that solve
an LP/MILP.

``Row.factor`` puts minimising and maximising models on one scale: how far the row's
value is from the exact optimum, as a factor :math:`\\ge 1` when it is worse,

.. math::

    \\text{factor} = \\begin{cases} v / v^* & \\text{min} \\\\ v^* / v & \\text{max}
    \\end{cases}

so it reads like the proved ratios (:math:`v \\le \\rho\\, v^*` for a minimisation,
:math:`v \\ge v^* / \\rho` for a maximisation). ``Row.proved`` is the ratio a result
reports for its instance (``Row.proved_holds``: its theorem's assumptions hold there);
``Row.declared`` is what its method declares proved in general (``Method.proved``:
``"BOUND: statement"`` or ``"none known: reason"``), so every heuristic row says
whether a bound exists. It is given only when the exact row
proved optimality. A row whose method may leave the exact model's feasible set
(``Method.outside_exact``) can show a factor below 1; any other row cannot, unless the
code is wrong.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.core.tables import Table
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.options import check_options
from optsched.registry import Method, ModelSpec, get_model
from optsched.solvers import DEFAULT_TIME_LIMIT

__all__ = ["Row", "ROW_COLUMNS", "compare", "route_options", "result_row"]


@dataclass
class Row:
    """One method's outcome in a comparison (see the module docstring)."""

    model: str
    method: str
    kind: str
    sense: str
    objective: str
    backend: str | None = None
    status: str = ""
    value: float | None = None
    bound: float | None = None
    gap: float | None = None
    seconds: float = 0.0
    factor: float | None = None
    proved: float | None = None
    proved_holds: bool = False
    declared: str = ""
    outside_exact: str = ""
    skipped: list[str] = field(default_factory=list)
    note: str = ""
    message: str = ""
    time_limit: float | None = None
    certified_bound: float | None = None
    certified_gap: float | None = None
    bound_source: str = ""
    bound_note: str = ""
    result: Result | None = field(default=None, repr=False)

    @property
    def answered(self) -> bool:
        """The row has a value, a bound, or a definite verdict (infeasible, unbounded,
        a heuristic's rule finding nothing, not applicable); a time limit with nothing, a
        solver error or a missing solver is no answer."""
        if self.value is not None or self.bound is not None:
            return True
        return self.status in (Status.INFEASIBLE.value, Status.UNBOUNDED.value,
                               Status.NOT_FOUND.value, "not_applicable")

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ROW_COLUMNS}


#: the columns of a comparison's table (:meth:`Row.to_dict`)
ROW_COLUMNS = ("model", "method", "kind", "sense", "objective", "backend", "status", "value",
               "bound", "gap", "seconds", "factor", "proved", "proved_holds", "declared",
               "outside_exact", "skipped", "note", "message", "time_limit",
               "certified_bound", "certified_gap", "bound_source", "bound_note")


def route_options(spec: ModelSpec, options: Mapping[str, Any],
                  backend: str | None, methods: Sequence[Method] | None = None
                  ) -> dict[str, tuple[dict[str, Any], list[str]]]:
    """Per method (``methods``, default every method of ``spec``): the options it takes
    and those it does not (see module docstring)."""
    methods = spec.methods if methods is None else methods
    check_options(f"any method of {spec.name}", options,
                  {o for m in methods for o in m.options})
    if backend is not None and not any(m.backend for m in methods):
        raise InvalidOption("backend", backend, f"no method of {spec.name} solves an LP/MILP")
    out = {}
    for m in methods:
        take = {k: v for k, v in options.items() if k in m.options}
        out[m.name] = (take, sorted(set(options) - set(take)))
    return out


def _factor(sense: str, value: float | None, best: float | None) -> float | None:
    if value is None or best is None:
        return None
    if sense == "min":
        return value / best if best > 0 else (1.0 if value == best else None)
    return best / value if value > 0 else (1.0 if value == best else None)


def compare(instance: Instance, model: str, backend: str | None = None, *,
            methods: Sequence[str] | None = None,
            on_start: Callable[[Method, dict], None] | None = None,
            on_done: Callable[[Row], None] | None = None, **options: Any) -> Table:
    """Run every method of ``model`` on ``instance``; one :class:`Row` each, in a
    :class:`~optsched.core.tables.Table` (a list; ``to_frame()`` for pandas, columns
    :data:`ROW_COLUMNS`).

    ``methods`` names the rows instead (registered names, ``"heuristic"``, or
    ``"module:name"`` of a method of your own:
    :meth:`optsched.registry.PaperSpec.method`); the model's exact method is run first
    whenever it is not among them, as every factor is taken against its optimum.

    ``on_start(method, options)`` and ``on_done(row)`` are called around each method
    (progress reporting). A method outside its model's assumptions for this instance
    (:class:`~optsched.errors.ModelNotApplicable`) gives a row with status
    ``not_applicable``; when every method is, the error is raised.
    """
    spec = get_model(model)
    sense, label = spec.sense_for(options)
    chosen = _chosen(spec, methods)
    routes = route_options(spec, options, backend, chosen)
    rows: list[Row] = []
    not_applicable: list[ModelNotApplicable] = []
    for m in chosen:
        take, skipped = routes[m.name]
        row = Row(spec.name, m.name, m.kind, sense, label,
                  backend=(backend or "highs") if m.backend else None,
                  outside_exact=m.outside_exact, declared=m.proved, skipped=skipped,
                  time_limit=take.get("time_limit", DEFAULT_TIME_LIMIT) if m.backend
                  else None)
        if on_start is not None:
            on_start(m, take)
        t0 = time.perf_counter()
        try:
            res = m.run(instance, backend if m.backend else None, model=spec.name, **take)
        except ModelNotApplicable as exc:
            not_applicable.append(exc)
            row.status, row.message = "not_applicable", str(exc)
            row.seconds = time.perf_counter() - t0
        except BaseException:
            if on_done is not None:
                row.status = "stopped"
                on_done(row)
            raise
        else:
            _fill(row, res, time.perf_counter() - t0)
        rows.append(row)
        if on_done is not None:
            on_done(row)
    if not_applicable and len(not_applicable) == len(rows):
        raise not_applicable[0]
    exact = next((r for r in rows if r.kind == "exact" and r.method == "exact"), None)
    best = exact.value if exact is not None and exact.status == Status.OPTIMAL.value else None
    for r in rows:
        if r.kind != "bound":
            r.factor = _factor(sense, r.value, best)
    from optsched.compare_bounds import certify_rows

    certify_rows(rows, instance, spec.name, options)
    return Table(rows, ROW_COLUMNS)


def _chosen(spec: ModelSpec, names: Sequence[str] | None) -> tuple[Method, ...]:
    """The methods ``names`` asks for (each once, the exact one first), else all."""
    if names is None:
        return spec.methods
    if isinstance(names, str):
        names = [names]
    chosen: list[Method] = []
    for name in names:
        m = spec.method(name)
        if any(c is m or c.name == m.name for c in chosen):
            raise InvalidOption("methods", name, "given twice")
        chosen.append(m)
    exact = spec.exact
    if exact is not None and not any(c.name == exact.name for c in chosen):
        chosen.insert(0, exact)
    return tuple(chosen)


def _fill(row: Row, res: Result, wall: float) -> None:
    row.result = res
    row.status = res.status.value
    row.value = res.objective
    row.bound = res.bound
    row.gap = res.gap
    row.seconds = res.seconds if res.seconds > 0 else wall
    row.message = res.message
    row.note = res.ratio_note
    if "time_limit" in res.extra:
        row.time_limit = res.extra["time_limit"]
    if res.ratio is not None:
        row.proved, row.proved_holds = float(res.ratio), True
    elif isinstance(res.extra.get("ratio_unproved"), (int, float)) \
            and math.isfinite(res.extra["ratio_unproved"]):
        row.proved = float(res.extra["ratio_unproved"])
    if res.backend is not None:
        row.backend = res.backend


def result_row(spec: ModelSpec, method: Method, res: Result,
               options: Mapping[str, Any] | None = None) -> Row:
    """The :class:`Row` of one method's result (no factor: there is no exact row)."""
    row = Row(spec.name, method.name, method.kind, *spec.sense_for(options or {}),
              backend=res.backend, outside_exact=method.outside_exact,
              declared=method.proved)
    _fill(row, res, res.seconds)
    return row
