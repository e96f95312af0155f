"""Methods and policies of your own, first-class: registered from your code, referenced
as ``module:name``, or installed as plugins.

Three ways, one result: the method or policy runs wherever a shipped one does
(:func:`optsched.solve`, :func:`optsched.simulate`, :func:`optsched.compare.compare`,
sweeps, ``optsched solve | compare | simulate | sweep``) and, once registered,
``optsched catalog`` lists it with where it comes from.

* :func:`register_method` adds a method to a model, with the declarations a shipped
  method makes (:class:`~optsched.registry.Method`: ``kind`` exact, bound or heuristic,
  ``proved``, ``fixed`` options, ``backend``); :func:`register_policy` adds a simulator
  policy (:class:`~optsched.registry.PolicySpec`), checked against the
  :class:`~optsched.sim.policy.Policy` protocol (:func:`~optsched.sim.policy.check_policy`)
  at registration.
* ``"module:name"`` wherever a method or policy name goes imports ``module`` (the
  current directory is searched after ``sys.path``) and uses its ``name``: a method
  (:func:`referenced_method`: a :class:`~optsched.registry.Method`, or a function a
  :func:`register_method` call declared) or a policy (:func:`referenced_policy`: a
  registered one, a :class:`~optsched.registry.PolicySpec`, a policy class, a factory
  or a policy object). A module or name that does not exist, or an object that does
  not fit, is an :class:`~optsched.errors.InvalidInput` (exit code 2 at the command
  line) that says which.
* Plugins: a package that declares an entry point in the group ``optsched.plugins``
  (:data:`PLUGIN_GROUP`), pointing at a module (importing it registers its methods and
  policies) or at a function (called without arguments), is loaded on the registry's
  first use (:func:`load_plugins`). A plugin that fails to load is reported by a
  :class:`PluginWarning` and in ``optsched catalog``, and the other plugins load.

Names: a registered method's name is any name without ``:`` that its model does not
already use; a policy's is ``namespace.name`` (``"mine.srgt"``), not one optsched
ships. Registering a name again needs ``replace=True``; a shipped method or policy is
never replaced.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from types import ModuleType
from typing import Any

from optsched import registry as _reg
from optsched.core.validate import Capabilities
from optsched.errors import InvalidOption, UnknownName
from optsched.registry import Method, PaperSpec, PolicySpec
from optsched.sim.policy import check_policy

__all__ = ["register_method", "unregister_method", "register_policy", "unregister_policy",
           "referenced_method", "referenced_policy", "declared_capabilities", "build_policy",
           "load_plugins", "Plugin", "PluginWarning", "PLUGIN_GROUP"]

#: The entry-point group an installed package declares its plugin in.
PLUGIN_GROUP = "optsched.plugins"
#: Arguments every policy runner receives (:meth:`optsched.registry.PolicySpec.run`).
_RUNNER_ARGS = ("seed", "max_time", "progress")


class PluginWarning(UserWarning):
    """An installed plugin failed to load (its methods and policies are missing)."""


# =========================================================================== origins
_loading: list[str] = []  # the plugin being loaded, if any


def _origin(obj: Any) -> str:
    """Where a registration comes from: the plugin being loaded, else the module of the
    registered code."""
    if _loading:
        return _loading[-1]
    return str(getattr(obj, "__module__", "") or "") or "user code"


def _check_name(name: Any, what: str) -> str:
    if not isinstance(name, str) or not name.strip() or name != name.strip() \
            or any(c.isspace() for c in name) or ":" in name or name.startswith("-"):
        raise InvalidOption(what, name, "must be a non-empty name without spaces or ':' "
                            "(':' marks a module:name reference)")
    return name


# =========================================================================== methods
def register_method(model: str, name: str, fn: Callable[..., Any] | None = None, *,
                    kind: str = "heuristic", proved: str = "",
                    fixed: Mapping[str, Any] | None = None, backend: bool = False,
                    outside_exact: str = "", replace: bool = False) -> Any:
    """Add the method ``name`` to ``model``, declared as a shipped method is.

    Parameters
    ----------
    model : str
        A registered model (``"allox"``, ...).
    name : str
        The method's name in tables and on the command line; not one the model already
        has (``replace=True`` replaces one registered earlier, never a shipped one).
    fn : callable, optional
        ``fn(instance, **options) -> Result``; its keyword parameters are its options
        (:func:`optsched.options.declared_options`), checked on every call. Without
        ``fn``, a decorator that registers the function it decorates and returns it
        unchanged.
    kind, proved, fixed, backend, outside_exact
        As for :class:`~optsched.registry.Method`: a heuristic must state ``proved``
        (``"BOUND: statement"`` or ``"none known: reason"``); ``backend=True`` for a
        method that hands a program to the solver layer (it then takes ``backend`` and
        the solver options).
    replace : bool
        Replace a method of this name registered earlier (not a shipped one).

    Returns
    -------
    Method
        The registered method (with ``fn``); else the decorator.

    Raises
    ------
    UnknownName
        ``model`` is not registered.
    InvalidOption
        The name is taken or malformed, ``kind`` or ``proved`` is not valid, ``fn`` is
        not callable or cannot take an instance, a ``fixed`` option is not a parameter.
    """
    if fn is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            register_method(model, name, f, kind=kind, proved=proved, fixed=fixed,
                            backend=backend, outside_exact=outside_exact, replace=replace)
            return f
        return decorator
    spec = _reg.get_model(model)
    _check_name(name, "name")
    if name == "heuristic":
        raise InvalidOption("name", name, "'heuristic' names the model's default heuristic")
    _check_callable(fn, f"method {name!r}", fixed or {}, backend)
    method = Method(name, fn, kind, dict(fixed or {}), backend, outside_exact, proved,
                    origin=_origin(fn))
    methods = list(spec.methods)
    aliased = next((m for m in methods if name in m.aliases), None)
    if aliased is not None:
        raise InvalidOption("name", name, f"model {model!r} method {aliased.name!r} answers "
                            "to it; choose another name")
    old = next((i for i, m in enumerate(methods) if m.name == name), None)
    if old is not None:
        _may_replace(methods[old].origin, f"model {model!r} method {name!r}", replace)
        methods[old] = method
    else:
        methods.append(method)
    # the paper's record stays the same object (optsched.<paper>.SPEC is the registry's)
    object.__setattr__(spec, "methods", tuple(methods))
    return method


def unregister_method(model: str, name: str) -> Method:
    """Remove the method ``name`` registered on ``model`` (not a shipped one); return it."""
    spec = _reg.get_model(model)
    method = spec.method(name)
    if not method.origin:
        raise InvalidOption("name", name, f"model {model!r} ships this method; only "
                            "registered methods can be removed")
    object.__setattr__(spec, "methods", tuple(m for m in spec.methods if m is not method))
    return method


def _may_replace(origin: str, what: str, replace: bool) -> None:
    if not origin:
        raise InvalidOption("name", what, "optsched ships it; choose another name")
    if not replace:
        raise InvalidOption("name", what, f"already registered (from {origin}); pass "
                            "replace=True to replace it")


def _check_callable(fn: Any, what: str, fixed: Mapping[str, Any], backend: bool) -> None:
    """``fn(instance, **options)``: callable, with a positional first parameter, every
    ``fixed`` option a parameter, ``backend`` one if it solves through the solver layer."""
    if not callable(fn):
        raise InvalidOption(what, fn, "must be callable as fn(instance, **options)")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return  # a builtin without a signature: its call says what it takes
    kinds = [p.kind for p in params.values()]
    if not kinds or kinds[0] not in (inspect.Parameter.POSITIONAL_ONLY,
                                     inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                     inspect.Parameter.VAR_POSITIONAL):
        raise InvalidOption(what, fn, "must take the instance as its first positional "
                            "parameter: fn(instance, **options)")
    open_kw = inspect.Parameter.VAR_KEYWORD in kinds
    for k in (*fixed, *(("backend",) if backend else ())):
        if k not in params and not open_kw:
            raise InvalidOption(what, fn, f"takes no parameter {k!r}")


def referenced_method(spec: PaperSpec, ref: str) -> Method:
    """The method ``"module:name"`` refers to, for ``spec``'s model.

    ``module`` is imported (which may register methods); ``name`` must then be a
    :class:`~optsched.registry.Method` (run as declared, registered or not) or a
    function that :func:`register_method` registered on this model. A plain function
    is refused: its kind and what is proved about it are unknown, and every row of a
    comparison states them.
    """
    obj = _import_reference(ref, "method")
    if isinstance(obj, Method):
        return next((m for m in spec.methods if m is obj), obj)
    for m in spec.methods:
        if m.fn is obj:
            return m
    elsewhere = sorted(name for name, p in _reg._PAPERS.items()
                       if any(m.fn is obj for m in p.methods))
    if elsewhere:
        raise InvalidOption("method", ref, f"registered for model(s) {elsewhere}, not "
                            f"{spec.name!r}")
    if callable(obj):
        raise InvalidOption("method", ref, "a function that no register_method call "
                            "declares: its kind (exact, bound, heuristic) and what is "
                            "proved about it are unknown; declare it in its module with "
                            f"optsched.register_method({spec.name!r}, NAME, fn, "
                            "kind=..., proved=...)")
    raise InvalidOption("method", ref, f"is a {type(obj).__name__}, not a method "
                        "(a Method, or a function register_method declares)")


# =========================================================================== policies
def register_policy(name: str, factory: Callable[..., Any] | None = None, *,
                    runner: Callable[..., Any] | None = None,
                    aliases: Iterable[str] = (), fixed: Mapping[str, Any] | None = None,
                    defaults: Mapping[str, Any] | None = None,
                    takes: Callable[..., Any] | None = None,
                    exclude: Iterable[str] = (), draws: str = "",
                    draws_if: Callable[..., bool] | None = None,
                    capabilities: Capabilities | None = None,
                    replace: bool = False) -> Any:
    """Add the simulator policy ``name`` (``"namespace.name"``), declared as a shipped
    policy is (:class:`~optsched.registry.PolicySpec`).

    Parameters
    ----------
    name : str
        ``"namespace.name"``, e.g. ``"mine.srgt"``; not a name optsched ships.
    factory : callable, optional
        ``factory(**options) -> Policy``, usually the policy class; its keyword
        parameters are the policy's options. Without ``factory`` and ``runner``, a
        decorator that registers the class or function it decorates and returns it.
    runner : callable, optional
        Instead of a factory, ``runner(instance, *, seed, max_time, progress, **options)
        -> Result`` for a policy built from the instance itself.
    aliases, fixed, defaults, takes, exclude, draws, draws_if
        As for :class:`~optsched.registry.PolicySpec`. ``draws`` says what the policy
        draws from ``ClusterView.rng`` (``""``: deterministic, so sweeps refuse several
        seeds over a read trace).
    capabilities : optsched.core.validate.Capabilities, optional
        The relaxed rules a runner's schedules use (default: none). A factory's policy
        declares them by its members (``sharing``, ``forking``, ...), read from the
        object each run builds.
    replace : bool
        Replace a policy of this name registered earlier (not a shipped one).

    Returns
    -------
    PolicySpec
        The registered policy (with ``factory`` or ``runner``); else the decorator.

    Raises
    ------
    InvalidOption
        The name is malformed or taken; the factory's class or the object it builds
        with its defaults breaks the :class:`~optsched.sim.policy.Policy` protocol
        (:func:`~optsched.sim.policy.check_policy`: a missing, mistyped or misspelt
        member); a runner does not take the simulation's arguments.
    """
    if factory is None and runner is None:
        def decorator(f: Callable[..., Any]) -> Callable[..., Any]:
            register_policy(name, f, aliases=aliases, fixed=fixed, defaults=defaults,
                            takes=takes, exclude=exclude, draws=draws, draws_if=draws_if,
                            replace=replace)
            return f
        return decorator
    _check_name(name, "name")
    paper, dot, short = name.rpartition(".")
    if not dot or not paper or not short:
        raise InvalidOption("name", name, "a policy is named namespace.name, e.g. "
                            "'mine.srgt'")
    aliases = tuple(_check_name(a, "aliases") for a in aliases)
    code = factory if factory is not None else runner
    fixed, defaults = dict(fixed or {}), dict(defaults or {})
    if runner is not None:
        if factory is not None:
            raise InvalidOption("policy", name, "give a factory or a runner, not both")
        _check_runner(runner, name)
        declared = capabilities or Capabilities()
    else:
        if capabilities is not None:
            raise InvalidOption("capabilities", capabilities, "a factory's policy declares "
                                "its rules by its members (sharing, forking, ...)")
        declared = _probe(factory, {**defaults, **fixed}, f"policy {name!r}")
    spec = PolicySpec(short, factory=factory, runner=runner, fixed=fixed,
                      defaults=defaults, takes=takes, exclude=frozenset(exclude),
                      aliases=aliases, paper=paper, draws=draws, draws_if=draws_if,
                      origin=_origin(code), declared=declared)
    _add_policy(spec, replace)
    return spec


def _add_policy(spec: PolicySpec, replace: bool) -> None:
    names = (spec.qualified, *spec.aliases)
    taken = {n: _reg._POLICIES[n] for n in names if n in _reg._POLICIES}
    for n, other in taken.items():
        _may_replace(other.origin, f"policy {n!r}", replace)
    for other in {id(o): o for o in taken.values()}.values():
        _drop_policy(other)
    for n in names:
        _reg._POLICIES[n] = spec


def _drop_policy(spec: PolicySpec) -> None:
    for n in [n for n, p in _reg._POLICIES.items() if p is spec]:
        del _reg._POLICIES[n]


def unregister_policy(name: str) -> PolicySpec:
    """Remove the policy registered as ``name`` (not a shipped one), with its aliases;
    return it."""
    spec = _reg.policy_spec(name)
    if not spec.origin:
        raise InvalidOption("name", name, "optsched ships this policy; only registered "
                            "policies can be removed")
    _drop_policy(spec)
    return spec


def _check_runner(runner: Any, name: str) -> None:
    if not callable(runner):
        raise InvalidOption("runner", runner, f"policy {name!r}: must be callable")
    params = inspect.signature(runner).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    missing = [a for a in _RUNNER_ARGS if a not in params]
    if missing:
        raise InvalidOption("runner", runner, f"policy {name!r}: must take the "
                            f"simulation's arguments {', '.join(_RUNNER_ARGS)} (missing "
                            f"{missing[0]!r})")


def _probe(factory: Any, kw: Mapping[str, Any], where: str) -> Capabilities:
    """Check the factory's class, and the object it builds with ``kw`` when those are
    all it needs, against the Policy protocol; the rules that object declares."""
    if not callable(factory):
        raise InvalidOption("factory", factory, f"{where}: must be a policy class or a "
                            "function returning a policy")
    if isinstance(factory, type):
        check_policy(factory, where)
    try:
        params: Mapping[str, inspect.Parameter] = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    positional = [n for n, p in params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL) or n == "instance"]
    if positional:
        raise InvalidOption("factory", factory, f"{where}: takes {positional[0]!r}, but a "
                            "policy is built from its options alone, as "
                            "factory(**options), and then sees the cluster through "
                            "allocate(state); a function of an instance is a method "
                            "(register_method) or a runner (register_policy(..., "
                            "runner=fn))")
    if _missing(factory, kw):  # it needs options: each run's object is checked
        return declared_capabilities(factory, where)
    return declared_capabilities(build_policy(factory, kw, where), where)


def _missing(factory: Any, kw: Mapping[str, Any]) -> list[str]:
    """The required parameters of ``factory`` that ``kw`` does not give."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return []
    return [n for n, p in params.items() if p.default is p.empty and n not in kw
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def build_policy(factory: Any, kw: Mapping[str, Any], where: str) -> Any:
    """``factory(**kw)``, checked: every required option given (else
    :class:`~optsched.errors.InvalidOption` naming it), and the object against the
    :class:`~optsched.sim.policy.Policy` protocol."""
    missing = _missing(factory, kw)
    if missing:
        raise InvalidOption(missing[0], None, f"{where} needs the option {missing[0]!r} "
                            "(--option KEY=VALUE on the command line)")
    obj = factory(**kw)
    check_policy(obj, where)
    return obj


def declared_capabilities(policy: Any, source: str) -> Capabilities:
    """The relaxed rules ``policy`` (an object or its class) declares by its members
    (:data:`optsched.sim.policy.POLICY_MEMBERS`), in continuous time."""
    kappa = getattr(policy, "consolidation", 0.0)
    rule = getattr(policy, "progress_rule", "gang")
    return Capabilities(sharing=getattr(policy, "sharing", False) is True,
                        forking=getattr(policy, "forking", False) is True,
                        consolidation=isinstance(kappa, (int, float)) and kappa > 0,
                        resource_sensitive=getattr(policy, "resource_sensitive",
                                                   False) is True,
                        progress_rules=(rule if isinstance(rule, str) else "gang",),
                        time="continuous", source=source,
                        colocation=getattr(policy, "colocation", False) is True)


_referenced: dict[str, PolicySpec] = {}


def referenced_policy(ref: str) -> PolicySpec:
    """The policy ``"module:name"`` refers to.

    ``module`` is imported (which may register policies); ``name`` is then the factory
    or runner of exactly one registered policy (that policy), a
    :class:`~optsched.registry.PolicySpec`, a policy class or factory function (its
    keyword parameters are its options) or a policy object. The class, and the object
    it builds without options, are checked against the
    :class:`~optsched.sim.policy.Policy` protocol; the policy is named ``ref`` in
    results.
    """
    if ref in _referenced:
        return _referenced[ref]
    obj = _import_reference(ref, "policy")
    if isinstance(obj, PolicySpec):
        spec = obj
        if not spec.origin:  # its own rules, not a paper's, validate its schedules
            declared = spec.declared or (
                _probe(spec.factory, {**spec.defaults, **spec.fixed}, f"policy {ref!r}")
                if spec.factory is not None else Capabilities())
            spec = dc_replace(spec, origin=ref.partition(":")[0], declared=declared)
    else:
        # the one registered policy built by this code (a class several registered
        # policies share, with other fixed options each, is taken as a class)
        known = {id(p): p for p in _reg._POLICIES.values()
                 if obj is not None and (p.factory is obj or p.runner is obj)}
        if len(known) == 1:
            return next(iter(known.values()))
        if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "allocate")):
            factory, takes = obj, None
        elif hasattr(obj, "allocate"):  # one policy object, reused by every run
            def factory() -> Any:
                return obj
            takes = factory
        else:
            raise InvalidOption("policy", ref, f"is a {type(obj).__name__}, not a policy "
                                "(a policy class, a function returning a policy, a policy "
                                "object or a registered policy)")
        declared = _probe(factory, {}, f"policy {ref!r}")
        spec = PolicySpec(ref, factory=factory, takes=takes,
                          origin=ref.partition(":")[0], declared=declared)
    _referenced[ref] = spec
    return spec


# =========================================================================== references
def _import_reference(ref: str, what: str) -> Any:
    """The object ``"module:attr"`` names (``attr`` may be dotted)."""
    mod, _, attr = ref.partition(":")
    if not mod or not attr or ":" in attr:
        raise UnknownName(what, ref, "code of your own is referenced as module:name, e.g. "
                          "mymod:SRGT")
    module = _import(mod, ref, what)
    obj: Any = module
    for i, part in enumerate(attr.split(".")):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            where = ".".join([mod, *attr.split(".")[:i]])
            names = [n for n in dir(obj) if not n.startswith("_")
                     and not isinstance(getattr(obj, n, None), ModuleType)]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownName(what, ref, f"{where} has no {part!r}{hint}") from None
    return obj


def _import(mod: str, ref: str, what: str) -> ModuleType:
    """Import ``mod`` (the current directory searched after ``sys.path``, as for a
    script run from it)."""
    try:
        try:
            return importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            cwd = os.getcwd()
            if exc.name != mod.partition(".")[0] or cwd in sys.path or "" in sys.path:
                raise
            sys.path.append(cwd)  # as `python -m` would have it: the module may be here
            return importlib.import_module(mod)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (mod == exc.name or mod.startswith(exc.name + ".")):
            raise UnknownName(what, ref, f"no module {mod!r} on the Python path (the "
                              "current directory, PYTHONPATH or an installed package)"
                              ) from None
        raise InvalidOption(what, ref, f"importing {mod!r} failed: {exc}") from None
    except Exception as exc:  # the user's module is broken: say so, with its error
        raise InvalidOption(what, ref, f"importing {mod!r} raised "
                            f"{type(exc).__name__}: {exc}") from None


# =========================================================================== plugins
@dataclass(frozen=True)
class Plugin:
    """One entry point of the group :data:`PLUGIN_GROUP`: ``name`` and ``value``
    (``module`` or ``module:function``), the distribution that declares it, and
    ``error`` (``""`` when it loaded)."""

    name: str
    value: str
    dist: str = ""
    error: str = ""

    @property
    def loaded(self) -> bool:
        return not self.error

    @property
    def label(self) -> str:
        """``plugin NAME (DIST)``: the origin of what it registers."""
        return f"plugin {self.name}" + (f" ({self.dist})" if self.dist else "")


_plugins: list[Plugin] | None = None


@contextlib.contextmanager
def _as_origin(label: str) -> Iterator[None]:
    _loading.append(label)
    try:
        yield
    finally:
        _loading.pop()


def load_plugins(*, reload: bool = False) -> tuple[Plugin, ...]:
    """Load every entry point of the group :data:`PLUGIN_GROUP` (once per process;
    ``reload=True`` looks again, e.g. after ``sys.path`` changed, and loads the new
    ones). Returns every plugin found, with its error if it failed to load.

    An entry point names a module (importing it registers its methods and policies) or
    a function (called without arguments). A plugin that raises is reported by a
    :class:`PluginWarning` naming it and its error; the others still load.
    """
    global _plugins
    if _plugins is not None and not reload:
        return tuple(_plugins)
    from importlib.metadata import entry_points

    done = {(p.name, p.value): p for p in _plugins or ()}
    _plugins = list(done.values())  # set first: a plugin that uses the registry is fine
    for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda e: (e.name, e.value)):
        if (ep.name, ep.value) in done:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", "") or ""
        plugin = Plugin(ep.name, ep.value, dist)
        try:
            with _as_origin(plugin.label):
                obj = ep.load()
                if callable(obj) and not isinstance(obj, ModuleType):
                    obj()
        except Exception as exc:
            plugin = Plugin(ep.name, ep.value, dist, f"{type(exc).__name__}: {exc}")
            warnings.warn(f"optsched {plugin.label} ({ep.value}) failed to load: "
                          f"{plugin.error}", PluginWarning, stacklevel=2)
        done[ep.name, ep.value] = plugin
        _plugins.append(plugin)
    return tuple(_plugins)


# the registry resolves module:name references and loads plugins through this module
_reg.set_extension(sys.modules[__name__])
