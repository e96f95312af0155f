"""Model registry and the public :func:`solve` entry point.

Each model package (``optsched.allox``, ...) registers a :class:`ModelSpec`: its methods
(the exact formulation, bounds such as LP relaxations, and the paper's heuristics), each
a :class:`Method` that declares its options. :func:`solve` resolves a method by name,
checks the options against that declaration (:mod:`optsched.options`) and runs it; every
method returns a :class:`~optsched.core.result.Result` whose schedule has already passed the
independent validator (:func:`finalize` is the one place that does it).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.errors import InvalidOption, UnknownName
from optsched.options import SOLVER_OPTIONS, check_options, declared_options

__all__ = ["Method", "ModelSpec", "register", "get_model", "models", "solve", "METHOD_KINDS"]

METHOD_KINDS = ("exact", "bound", "heuristic")


@dataclass(frozen=True)
class Method:
    """One way a model can be solved, with the options it declares.

    ``fn(instance, [backend=...,] **options)`` computes the result; ``fixed`` options are
    bound by this method (e.g. ``relax=True`` for an LP bound) and are not the caller's
    to set. ``kind`` is ``"exact"`` (the formal model's optimum), ``"bound"`` (a proven
    bound on it, e.g. an LP relaxation) or ``"heuristic"``. ``backend`` says whether the
    method hands a program to the solver layer: only then does it take a backend and the
    solver options (:data:`optsched.options.SOLVER_OPTIONS`). ``outside_exact``, when set,
    says why this method's solutions may lie outside the exact model's feasible set (so
    its value may beat the "optimum"); tables mark such rows.
    """

    name: str
    fn: Callable[..., Result]
    kind: str = "heuristic"
    fixed: Mapping[str, Any] = field(default_factory=dict)
    backend: bool = False
    outside_exact: str = ""

    def __post_init__(self) -> None:
        if self.kind not in METHOD_KINDS:
            raise InvalidOption("kind", self.kind, f"must be one of {METHOD_KINDS}")

    @cached_property
    def options(self) -> frozenset[str]:
        """Options a caller may pass (the solver options included when ``backend``)."""
        own = declared_options(self.fn, exclude={*self.fixed, "backend"})
        return own | SOLVER_OPTIONS if self.backend else own

    def run(self, instance: Instance, backend: str | None = None, *, model: str = "",
            **options: Any) -> Result:
        """Check ``options`` against the declaration, then run the method."""
        where = f"{model} method {self.name!r}" if model else f"method {self.name!r}"
        check_options(where, options, self.options)
        kw = {**self.fixed, **options}
        if not self.backend:
            if backend is not None:
                raise InvalidOption("backend", backend, f"{where} solves no LP/MILP, so it "
                                    "takes no solver backend")
            res = self.fn(instance, **kw)
        else:
            res = self.fn(instance, backend=backend or "highs", **kw)
        # results carry the registry's names, whatever function computed them
        return res.replace(method=self.name, model=model or res.model)


@dataclass(frozen=True)
class ModelSpec:
    """What a model offers.

    ``methods`` in display order (exact first, then bounds and exact variants, then the
    heuristics); ``default_heuristic`` is what ``method="heuristic"`` means. ``sense`` is
    ``"min"`` or ``"max"`` and ``objective`` names what is optimised with its unit (e.g.
    ``"total JCT (s)"``). ``objectives`` maps the values of a method option
    ``objective`` to their ``(sense, label)`` for models that offer several (Salus,
    HadarE). ``demo_instance()`` builds the model's default instance from the catalog.
    """

    name: str
    summary: str
    sense: str
    objective: str
    methods: tuple[Method, ...]
    default_heuristic: str = ""
    demo_instance: Callable[[], Instance] | None = None
    objectives: Mapping[str, tuple[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise InvalidOption("methods", names, "method names must be unique")
        if self.default_heuristic and self.default_heuristic not in self.heuristics:
            raise InvalidOption("default_heuristic", self.default_heuristic,
                                f"not a heuristic of {self.name}")

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods)

    def method(self, name: str) -> Method:
        """The method called ``name`` (``"heuristic"``: the default heuristic)."""
        if name == "heuristic" and self.default_heuristic:
            name = self.default_heuristic
        for m in self.methods:
            if m.name == name:
                return m
        close = difflib.get_close_matches(str(name), self.method_names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownName("method", name, f"model {self.name!r} offers "
                          f"{list(self.method_names)} (or 'heuristic'){hint}")

    @property
    def exact(self) -> Method | None:
        return next((m for m in self.methods if m.kind == "exact"), None)

    @property
    def heuristics(self) -> dict[str, Method]:
        return {m.name: m for m in self.methods if m.kind == "heuristic"}

    def sense_for(self, options: Mapping[str, Any]) -> tuple[str, str]:
        """``(sense, objective label)`` of results computed with ``options``."""
        kind = options.get("objective")
        if kind is not None and kind in self.objectives:
            return self.objectives[kind]
        return self.sense, self.objective


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


def solve(instance: Instance, model: str, method: str = "exact", backend: str | None = None,
          **options: Any) -> Result:
    """Solve ``instance`` with ``model`` by ``method``.

    Parameters
    ----------
    instance : Instance
    model : str
        A registered model name (see :func:`models`), e.g. ``"allox"``.
    method : str
        ``"exact"`` (the formal model through the solver layer), a bound or variant such
        as ``"exact-lp"``, ``"heuristic"`` (the model's default heuristic) or a named
        heuristic; ``get_model(model).method_names`` lists them.
    backend : str or None
        ``"highs"`` (the default for methods that solve an LP/MILP), ``"pyomo"`` or
        ``"cvxpy"``; an error for a method that solves no program.
    **options
        The method's declared options (``Method.options``): its model options and, for
        solver-backed methods, ``time_limit`` (default
        :data:`optsched.solvers.DEFAULT_TIME_LIMIT` seconds, model building included),
        ``mip_gap``, ``threads``, ``seed``, ``verbose`` and ``solver``. Anything else
        raises :class:`~optsched.errors.InvalidOption`.
    """
    spec = get_model(model)
    return spec.method(method).run(instance, backend, model=spec.name, **options)
