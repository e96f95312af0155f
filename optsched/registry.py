"""The one registry: every paper's methods and simulator policies, and the entry points
that resolve through it, :func:`solve` and :func:`simulate`.

A paper package (``optsched.allox``, ``optsched.gavel``, ...) registers one
:class:`PaperSpec`: its exact formulation, its bounds (LP relaxations, certificates),
its heuristics (each a :class:`Method` that declares its options) and its simulator
policies (each a :class:`PolicySpec`). :func:`solve` runs a method by name,
:func:`simulate` a policy by name; both check the options against the declaration
(:mod:`optsched.options`). Each paper declares the relaxed rules its schedules may use
(:class:`~optsched.core.validate.Capabilities`: sharing, forking, consolidation,
resource sensitivity, progress rules, time granularity); :func:`capabilities` looks them
up by model or policy name, and every method and policy run validates its schedule with
them, never with the rules the schedule declares. Policies are named by paper
(``gavel.max_min_fairness``,
``synergy.tune``); the short names of earlier releases (``max_min_fairness``,
``synergy_tune``) are aliases.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Collection, Mapping
from contextlib import nullcontext as _nothing
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from optsched.core.coerce import as_instance
from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.core.validate import Capabilities, producing
from optsched.core.validate import set_capability_lookup as _set_capability_lookup
from optsched.errors import InvalidOption, UnknownName
from optsched.options import SOLVER_OPTIONS, check_options, declared_options
from optsched.sim.policy import Policy

__all__ = ["Method", "PolicySpec", "PaperSpec", "ModelSpec", "register", "get_model",
           "models", "papers", "solve", "simulate", "get_policy", "policy_spec", "policies",
           "simulation_names", "capabilities", "enable_plugins", "METHOD_KINDS",
           "SIM_ARGS"]

METHOD_KINDS = ("exact", "bound", "heuristic")
#: Arguments of a simulation, not options of its policy.
SIM_ARGS = frozenset({"seed", "max_time", "progress", "until"})


# =========================================================================== methods
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

    ``proved`` is what is proved about a heuristic's value against the exact optimum,
    as ``"BOUND: statement"``: the bound as a table shows it (``"2α"``,
    ``"2/(1-θ)+1"``), then the theorem, its conditions and its source; or ``"none
    known: reason"`` when nothing is proved (the reason says why, e.g. a family of
    instances with an unbounded factor, or that the paper proves none). Every heuristic
    must declare it: a registry that lists a heuristic without its guarantee would let a
    table show ``-`` where the reader needs to know whether a bound exists. A result may
    still report a ratio that holds on its instance (``Result.ratio``).

    ``origin`` is ``""`` for a method optsched ships, else where it comes from (the
    module that registered it, or the plugin: :func:`optsched.extend.register_method`).
    ``aliases`` are names of earlier releases it still answers to (results carry
    ``name``); every paper calls its principal bound ``"bound"``.
    """

    name: str
    fn: Callable[..., Result]
    kind: str = "heuristic"
    fixed: Mapping[str, Any] = field(default_factory=dict)
    backend: bool = False
    outside_exact: str = ""
    proved: str = ""
    origin: str = ""
    aliases: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in METHOD_KINDS:
            raise InvalidOption("kind", self.kind, f"must be one of {METHOD_KINDS}")
        if self.kind == "heuristic" or self.proved:
            bound, sep, why = str(self.proved).partition(": ")
            if not isinstance(self.proved, str) or not sep or not bound.strip() \
                    or not why.strip():
                raise InvalidOption(f"method {self.name!r}.proved", self.proved,
                                    "a heuristic declares what is proved about it, as "
                                    "'BOUND: statement' or 'none known: reason'")

    @property
    def proved_bound(self) -> str:
        """The bound part of ``proved`` (``"none known"`` when nothing is proved; ``""``
        for exact and bound methods)."""
        return self.proved.partition(": ")[0]

    @property
    def proved_statement(self) -> str:
        """The statement or reason part of ``proved``."""
        return self.proved.partition(": ")[2]

    @cached_property
    def options(self) -> frozenset[str]:
        """Options a caller may pass (the solver options included when ``backend``)."""
        own = declared_options(self.fn, exclude={*self.fixed, "backend"})
        return own | SOLVER_OPTIONS if self.backend else own

    def run(self, instance: Instance, backend: str | None = None, *, model: str = "",
            **options: Any) -> Result:
        """Check ``options`` against the declaration, then run the method."""
        where = f"{model} method {self.name!r}" if model else f"method {self.name!r}"
        instance = as_instance(instance)
        check_options(where, options, self.options)
        kw = {**self.fixed, **options}
        if not self.backend and backend is not None:
            raise InvalidOption("backend", backend, f"{where} solves no LP/MILP, so it "
                                "takes no solver backend")
        # the schedule is validated with the model's rules, not the ones it declares
        caps = capabilities(model) if model in _PAPERS else None
        with producing(caps) if caps is not None else _nothing():
            if not self.backend:
                res = self.fn(instance, **kw)
            else:
                res = self.fn(instance, backend=backend or "highs", **kw)
        # results carry the registry's names, whatever function computed them
        res = res.replace(method=self.name, model=model or res.model)
        if self.kind == "exact" and res.ratio == 1.0 and res.gap:
            res = _gap_ratio(res, get_model(model).sense_for(options)[0]
                             if model in _PAPERS else "min")
        return res


def _gap_ratio(res: Result, sense: str) -> Result:
    """An exact result stopped at a positive gap proves the ratio of its incumbent to
    its bound, not 1: ``objective / bound`` (minimisation) or ``bound / objective``
    (maximisation); ``None`` when the bound does not give one (sign, zero)."""
    obj, bound = res.objective, res.bound
    ratio = None
    if obj is not None and bound is not None and obj > 0 and bound > 0:
        ratio = max(1.0, obj / bound if sense == "min" else bound / obj)
    note = (f"within a gap of {res.gap:.3g} of the bound: ratio "
            + ("objective/bound" if sense == "min" else "bound/objective")
            if ratio is not None else f"gap {res.gap:.3g}: no ratio proved")
    return res.replace(ratio=ratio, ratio_note=note)


# =========================================================================== policies
@dataclass(frozen=True)
class PolicySpec:
    """A named simulator policy and the options it declares.

    Either ``factory(**options) -> Policy`` (the simulator runs it) or ``runner(instance,
    *, seed, max_time, progress, **options) -> Result`` for a policy built from the
    instance itself (Hadar's price parameters, HadarE's admission pass). ``fixed``
    options are bound by the name (not the caller's); ``defaults`` are the name's
    defaults, which the caller may override. The options are the keyword parameters of
    ``takes`` (default: the factory or runner) minus the fixed ones, ``exclude`` and the
    simulation arguments. ``aliases`` are other names it answers to.

    ``draws`` says what the policy draws from the simulation's seeded generator
    (``ClusterView.rng``), e.g. Gavel's tie-break between a job's GPU types; ``""``
    declares the policy deterministic: another seed gives the same run. ``draws_if``
    says on which instances the draws can change the run (default: when some job can
    run on two or more of the cluster's GPU types, as every draw of the shipped
    policies is among a job's types); :meth:`draws_on` applies it.

    ``origin`` is ``""`` for a policy optsched ships, else where it comes from
    (:func:`optsched.extend.register_policy`, a ``module:name`` reference, a plugin).
    ``declared`` are the relaxed rules such a policy declares (its ``sharing``,
    ``forking``, ... members): its schedules are validated with them, where a shipped
    policy's are validated with its paper's.
    """

    name: str
    factory: Callable[..., Policy] | None = None
    runner: Callable[..., Result] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    takes: Callable[..., Any] | None = None
    exclude: frozenset[str] = frozenset()
    aliases: tuple[str, ...] = ()
    paper: str = ""
    draws: str = ""
    draws_if: Callable[[Instance], bool] | None = None
    origin: str = ""
    declared: Capabilities | None = None

    def __post_init__(self) -> None:
        if (self.factory is None) == (self.runner is None):
            raise InvalidOption("policy", self.name, "give a factory or a runner, not both")

    @property
    def qualified(self) -> str:
        """``paper.name``."""
        return f"{self.paper}.{self.name}" if self.paper else self.name

    @cached_property
    def options(self) -> frozenset[str]:
        fn = self.takes or self.factory or self.runner
        assert fn is not None
        return declared_options(fn, exclude=set(self.fixed) | SIM_ARGS | self.exclude)

    def draws_on(self, instance: Instance) -> bool:
        """Whether the seed can change this policy's run on ``instance``: the policy
        draws (``draws``) and ``draws_if(instance)`` holds (default: some job has a
        positive throughput on two or more GPU types of the cluster)."""
        if not self.draws or instance.n_jobs == 0:
            return False
        if self.draws_if is not None:
            return bool(self.draws_if(instance))
        return bool(((instance.throughput_matrix > 0).sum(axis=1) >= 2).any())

    def check(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The keywords to build the policy with (``options`` checked first)."""
        check_options(f"policy {self.qualified!r}", options, self.options)
        return {**self.defaults, **options, **self.fixed}

    def build(self, **options: Any) -> Policy:
        """The policy object (factory policies only)."""
        if self.factory is None:
            raise UnknownName("policy", self.qualified, "this policy is built from the "
                              "instance: use optsched.simulate(instance, name, ...)")
        if self.origin:
            return _ext().build_policy(self.factory, self.check(options),
                                       f"policy {self.qualified!r}")
        return self.factory(**self.check(options))

    def run(self, instance: Instance, *, seed: int = 0, max_time: float | None = None,
            progress: bool | None = None, until: Collection[str] | None = None,
            **options: Any) -> Result:
        """Simulate this policy over ``instance``.

        ``until`` (job ids) stops the run once those jobs have completed
        (:func:`optsched.sim.simulate`); a runner that does not take it runs to
        ``max_time`` instead, which gives those jobs the same completions.
        """
        instance = as_instance(instance)
        kw = self.check(options)
        caps = self.capabilities
        if self.runner is not None:
            if until is not None and "until" in inspect.signature(self.runner).parameters:
                kw["until"] = until
            with producing(caps):
                res = self.runner(instance, seed=seed, max_time=max_time,
                                  progress=progress, **kw)
        else:
            from optsched.sim.simulator import simulate as run_simulation

            assert self.factory is not None
            if self.origin:  # checked, and the rules it declares (options may set them)
                policy = _ext().build_policy(self.factory, kw, f"policy {self.qualified!r}")
                caps = _ext().declared_capabilities(policy, f"policy {self.qualified}")
            else:
                policy = self.factory(**kw)
            with producing(caps):
                res = run_simulation(instance, policy, seed=seed,
                                     progress=progress, max_time=max_time, until=until)
        # the name whose rules validated it (optsched validate reads it from the file)
        return res.replace(extra={**res.extra, "registered_policy": self.qualified})

    @property
    def capabilities(self) -> Capabilities:
        """The rules its schedules may relax: its paper's
        (:attr:`PaperSpec.capabilities`), in continuous time when the simulator runs
        it (a simulated job completes at the instant its work is done)."""
        paper = _PAPERS.get(self.paper)
        if self.declared is not None:
            base = self.declared
        elif paper is not None and paper.capabilities:
            base = paper.capabilities
        else:
            base = Capabilities()
        time = base.time if self.runner is not None else "continuous"
        return replace(base, time=time, source=f"policy {self.qualified}")


# =========================================================================== papers
@dataclass(frozen=True)
class PaperSpec:
    """What one paper offers, under the same names for every paper.

    ``methods`` in display order (exact first, then bounds and exact variants, then the
    heuristics); ``default_heuristic`` is what ``method="heuristic"`` means.
    ``policies`` are its simulator policies. ``sense`` is ``"min"`` or ``"max"`` and
    ``objective`` names what is optimised with its unit (e.g. ``"total JCT (s)"``);
    ``objectives`` maps the values of a method option ``objective`` to their ``(sense,
    label)`` for papers that offer several. ``demo_instance(n_jobs, seed)`` builds the
    paper's demo instance from the catalog (every shipped paper takes both, with
    defaults: a sweep's ``"demo"`` generator calls it with a cell's size and seed);
    ``reference`` cites the paper.
    ``capabilities`` are the relaxed rules its schedules may use (default: those of
    :data:`BUILTIN_CAPABILITIES` for a paper of this package, else none relaxed).
    """

    name: str
    summary: str
    sense: str
    objective: str
    methods: tuple[Method, ...] = ()
    policies: tuple[PolicySpec, ...] = ()
    default_heuristic: str = ""
    demo_instance: Callable[..., Instance] | None = None
    objectives: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    reference: str = ""
    capabilities: Capabilities | None = None

    def __post_init__(self) -> None:
        caps = self.capabilities or BUILTIN_CAPABILITIES.get(self.name, Capabilities())
        object.__setattr__(self, "capabilities", replace(caps, source=f"model {self.name}"))
        names = [n for m in self.methods for n in (m.name, *m.aliases)]
        if len(set(names)) != len(names):
            raise InvalidOption("methods", names, "method names must be unique")
        if self.default_heuristic and self.default_heuristic not in self.heuristics:
            raise InvalidOption("default_heuristic", self.default_heuristic,
                                f"not a heuristic of {self.name}")
        # each policy learns its paper (a frozen record: set once, here)
        for p in self.policies:
            object.__setattr__(p, "paper", self.name)

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods)

    def method(self, name: str) -> Method:
        """The method called ``name`` (``"heuristic"``: the default heuristic;
        ``"module:name"``: the method that object of an importable module is, see
        :func:`optsched.extend.referenced_method`)."""
        if name == "heuristic" and self.default_heuristic:
            name = self.default_heuristic
        if isinstance(name, str) and ":" in name:  # module:name, imported
            return _ext().referenced_method(self, name)
        for m in self.methods:
            if m.name == name or name in m.aliases:
                return m
        close = difflib.get_close_matches(str(name), self.method_names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownName("method", name, f"model {self.name!r} offers "
                          f"{list(self.method_names)} (or 'heuristic', or module:name of "
                          f"a method of your own){hint}")

    @property
    def exact(self) -> Method | None:
        return next((m for m in self.methods if m.kind == "exact"), None)

    @property
    def heuristics(self) -> dict[str, Method]:
        return {m.name: m for m in self.methods if m.kind == "heuristic"}

    @property
    def bounds(self) -> dict[str, Method]:
        return {m.name: m for m in self.methods if m.kind == "bound"}

    def sense_for(self, options: Mapping[str, Any]) -> tuple[str, str]:
        """``(sense, objective label)`` of results computed with ``options``."""
        kind = options.get("objective")
        if kind is not None and kind in self.objectives:
            return self.objectives[kind]
        return self.sense, self.objective


#: The name of earlier releases.
ModelSpec = PaperSpec

#: The relaxed rules of this package's papers: Salus shares GPUs (lanes), Synergy's rates
#: depend on CPU cores and DRAM, HadarE forks jobs across nodes and consolidates them,
#: Hadar's policy offers every progress rule; Hadar, HadarE and Tiresias plan on slots
#: (a job keeps the slot it finishes in). Every other rule is strict.
BUILTIN_CAPABILITIES: dict[str, Capabilities] = {
    "salus": Capabilities(sharing=True),
    "synergy": Capabilities(resource_sensitive=True),
    "hadar": Capabilities(progress_rules=("gang", "partial", "additive"), time="slots"),
    "hadare": Capabilities(forking=True, consolidation=True, time="slots"),
    "tiresias": Capabilities(time="slots"),
}

_PAPERS: dict[str, PaperSpec] = {}
_POLICIES: dict[str, PolicySpec] = {}   # qualified names and aliases


def register(spec: PaperSpec) -> PaperSpec:
    """Add a paper, its methods and its policies to the registry."""
    _PAPERS[spec.name] = spec
    for p in spec.policies:
        for name in (p.qualified, *p.aliases):
            other = _POLICIES.get(name)
            if other is not None and other.qualified != p.qualified:
                raise InvalidOption("policy", name, f"already registered by {other.qualified}")
            _POLICIES[name] = p
    return spec


_plugins_enabled = False
#: :mod:`optsched.extend`, which installs itself here when imported (``import optsched``
#: imports it): it resolves ``module:name`` references, builds outside policies and
#: loads plugins. It sits beside this module and imports it, so this one never imports
#: it back.
_extension: Any = None


def set_extension(module: Any) -> None:
    """Install :mod:`optsched.extend` (called by that module when it is imported)."""
    global _extension
    _extension = module


def _ext() -> Any:
    if _extension is None:  # pragma: no cover - import optsched installs it
        raise RuntimeError("optsched.extend is not imported yet (import optsched first)")
    return _extension



def enable_plugins() -> None:
    """Let the registry load the installed plugins (``import optsched`` calls it once
    every paper is registered, so a plugin can extend any of them)."""
    global _plugins_enabled
    _plugins_enabled = True


def _plugins() -> None:
    """Load the installed plugins on the registry's first use
    (:func:`optsched.extend.load_plugins`; once per process)."""
    if _plugins_enabled:
        _ext().load_plugins()


def models() -> dict[str, PaperSpec]:
    """All registered papers by name."""
    _plugins()
    return dict(_PAPERS)


papers = models


def get_model(name: str) -> PaperSpec:
    """The paper registered as ``name``."""
    _plugins()
    if name not in _PAPERS:
        close = difflib.get_close_matches(str(name), list(_PAPERS), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("model", name, f"unknown model; known: {sorted(_PAPERS)}{hint}")
    return _PAPERS[name]


def policies() -> dict[str, PolicySpec]:
    """Every policy by its qualified name (``paper.name``)."""
    _plugins()
    return {p.qualified: p for p in _POLICIES.values()}


def simulation_names(aliases: bool = True) -> list[str]:
    """Every registered name :func:`simulate` accepts (qualified names, and aliases if
    asked; ``module:name`` references are accepted too)."""
    _plugins()
    names = set(_POLICIES) if aliases else {p.qualified for p in _POLICIES.values()}
    return sorted(names)


def capabilities(name: str) -> Capabilities:
    """The relaxed rules of the model or policy registered as ``name`` (a paper name,
    a qualified policy name or an alias): what
    :func:`~optsched.core.validate.validate_schedule` applies to its schedules; a
    ``module:name`` policy's are those it declares."""
    _plugins()
    if isinstance(name, str) and ":" in name:  # a policy given as module:name
        return policy_spec(name).capabilities
    if name in _PAPERS:
        caps = _PAPERS[name].capabilities
        assert caps is not None  # set by PaperSpec.__post_init__
        return caps
    if name in _POLICIES:
        return _POLICIES[name].capabilities
    close = difflib.get_close_matches(str(name), [*_PAPERS, *_POLICIES], n=3)
    hint = f"; did you mean {close}?" if close else ""
    raise UnknownName("model", name, f"not a registered model or policy; models: "
                      f"{sorted(_PAPERS)}, policies: optsched catalog lists them{hint}")


def policy_spec(name: str) -> PolicySpec:
    """The policy registered as ``name`` (qualified or alias), or the policy that
    ``"module:name"`` imports (:func:`optsched.extend.referenced_policy`)."""
    _plugins()
    if isinstance(name, str) and ":" in name and name not in _POLICIES:
        return _ext().referenced_policy(name)
    spec = _POLICIES.get(name)
    if spec is None:
        close = difflib.get_close_matches(str(name), list(_POLICIES), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("policy", name, f"unknown policy; known: "
                          f"{simulation_names(aliases=False)}, or module:name of a policy "
                          f"of your own{hint}")
    return spec


def get_policy(policy: str, /, **options: Any) -> Policy:
    """Build the policy registered as ``policy`` with ``options`` (checked against its
    declaration; ``name=`` relabels it where the policy takes a name)."""
    return policy_spec(policy).build(**options)


def solve(instance: Instance, model: str, method: str = "exact", backend: str | None = None,
          **options: Any) -> Result:
    """Solve ``instance`` with ``model`` by ``method``.

    Parameters
    ----------
    instance : Instance or mapping
        An instance, or its JSON form as a mapping (read by ``Instance.from_dict``).
    model : str
        A registered paper (see :func:`models`), e.g. ``"allox"``.
    method : str
        ``"exact"`` (the formal model through the solver layer), a bound or variant such
        as ``"bound"``, ``"heuristic"`` (the paper's default heuristic) or a named
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


def simulate(instance: Instance, policy: str, *, seed: int = 0,
             max_time: float | None = None, progress: bool | None = None,
             until: Collection[str] | None = None, bounds: bool = True,
             **options: Any) -> Result:
    """Simulate the policy registered as ``policy`` over ``instance``.

    ``policy`` is a qualified name (``"gavel.max_min_fairness"``) or an alias
    (``"max_min_fairness"``); ``options`` are the policy's declared options. The run is
    :func:`optsched.sim.simulate` (rounds or events, every decision checked, the
    schedule validated); ``seed`` seeds the only randomness a policy may use; ``until``
    (job ids) stops the run once those jobs have completed.

    With ``bounds`` (default), ``Result.extra`` also holds ``"bounds"`` and ``"gaps"``
    (:func:`optsched.sim.gaps.gap_report`): certified lower bounds on the mean JCT
    and the makespan of every schedule of ``instance`` in the policy's setting, and the
    policy's value divided by them (at most that factor from the optimum). They cost
    far less than the simulation (combinatorial bounds, and LPs within a fixed budget);
    ``bounds=False`` leaves them out.
    """
    if not isinstance(bounds, bool):
        raise InvalidOption("bounds", bounds, "must be true or false")
    instance = as_instance(instance)
    res = policy_spec(policy).run(instance, seed=seed, max_time=max_time,
                                  progress=progress, until=until, **options)
    if bounds and until is not None and res.schedule is not None:
        # said, not silently left out: the bounds hold for complete schedules
        return res.replace(extra={**res.extra, "gaps_note": (
            "until= ends the run when the named jobs complete: the other jobs' records stop "
            "there, so there is no complete schedule to bound (run without until= for bounds "
            "and gaps)")})
    if not bounds or res.schedule is None:
        return res
    if instance.n_jobs == 0:  # said, not silently left out
        return res.replace(extra={**res.extra,
                                  "gaps_note": "the instance has no jobs: nothing to bound"})
    from optsched.sim.gaps import gap_report

    return res.replace(extra={**res.extra, **gap_report(instance, res)})


# validate_schedule (in core, below this module) resolves model and policy names here
_set_capability_lookup(capabilities)
