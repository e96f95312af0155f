"""Model registry and the public :func:`solve` entry point.

Each model module (``optsched.allox``, ...) registers a :class:`ModelSpec` naming its
exact method and its heuristics. :func:`solve` dispatches to them; every method
returns a :class:`~optsched.result.Result` whose schedule has already passed the
independent validator (:func:`finalize` is the one place that does it).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import UnknownName
from .instance import Instance
from .metrics import compute_metrics
from .result import Result, Status
from .schedule import Schedule
from .validate import validate_schedule

__all__ = ["ModelSpec", "register", "get_model", "models", "solve", "finalize"]

Method = Callable[..., Result]


@dataclass(frozen=True)
class ModelSpec:
    """What a model offers.

    ``exact(instance, backend=..., **options)`` solves the formal model;
    ``heuristics[name](instance, **options)`` runs a named heuristic; ``default_heuristic``
    is what ``method="heuristic"`` means. ``sense`` is ``"min"`` or ``"max"`` and
    ``objective`` names what is optimised (e.g. ``"total JCT (s)"``).
    ``demo_instance()`` builds the model's default instance from the catalog;
    ``exact_variants`` names extra option sets of the exact method that comparisons list
    as rows of their own (e.g. AlloX's ILP next to its matching).
    """

    name: str
    summary: str
    sense: str
    objective: str
    exact: Method
    heuristics: dict[str, Method] = field(default_factory=dict)
    default_heuristic: str = ""
    demo_instance: Callable[[], Instance] | None = None
    exact_variants: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def methods(self) -> tuple[str, ...]:
        return ("exact", *self.heuristics)


_MODELS: dict[str, ModelSpec] = {}


def register(spec: ModelSpec) -> ModelSpec:
    _MODELS[spec.name] = spec
    return spec


def models() -> dict[str, ModelSpec]:
    """All registered models by name."""
    return dict(_MODELS)


def get_model(name: str) -> ModelSpec:
    if name not in _MODELS:
        close = difflib.get_close_matches(str(name), list(_MODELS), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("model", name, f"unknown model; known: {sorted(_MODELS)}{hint}")
    return _MODELS[name]


def solve(instance: Instance, model: str, method: str = "exact", backend: str = "highs",
          **options: Any) -> Result:
    """Solve ``instance`` with ``model`` by ``method``.

    Parameters
    ----------
    instance : Instance
    model : str
        A registered model name (see :func:`models`), e.g. ``"allox"``.
    method : str
        ``"exact"`` (the formal model through the solver layer), ``"heuristic"`` (the
        model's default heuristic) or a named heuristic.
    backend : str
        ``"highs"`` (default), ``"pyomo"`` or ``"cvxpy"``; used by exact methods.
    **options
        ``time_limit``, ``mip_gap``, ``threads``, ``seed``, ``verbose``, ``solver`` and
        model-specific options, passed through.
    """
    spec = get_model(model)
    if method == "exact":
        return spec.exact(instance, backend=backend, **options)
    name = spec.default_heuristic if method == "heuristic" else method
    if name not in spec.heuristics:
        raise UnknownName("method", method,
                          f"model {model!r} offers {list(spec.methods)} (or 'heuristic')")
    return spec.heuristics[name](instance, **options)


def finalize(instance: Instance, schedule: Schedule | None, **fields: Any) -> Result:
    """Validate ``schedule`` against ``instance``, attach its metrics, build the Result.

    A schedule that fails validation raises :class:`~optsched.errors.InvalidSchedule`:
    a method that produced it is wrong, and no result is returned for it.
    """
    if schedule is None:
        return Result(**fields)
    validate_schedule(instance, schedule)
    fields.setdefault("status", Status.FEASIBLE)
    return Result(schedule=schedule, metrics=compute_metrics(instance, schedule), **fields)
