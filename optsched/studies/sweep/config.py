"""A sweep's config: the grid a TOML or JSON file describes, checked when it is read
(file format and every key: ``docs/sweeps.md``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from optsched.core.jsonio import parse_json, parse_toml, read_text
from optsched.errors import InvalidOption, UnknownName
from optsched.sim.window import Window

__all__ = ["SweepConfig", "load_config", "GENERATORS", "SIM_KEYS"]

GENERATORS = ("demo", "philly")
SIM_KEYS = ("policies", "traces", "jobs", "loads", "rates", "cluster", "options",
            "trace_options", "max_time", "window")


@dataclass(frozen=True)
class SweepConfig:
    """A validated sweep grid (file format: ``docs/sweeps.md``)."""

    name: str
    models: tuple[str, ...]
    methods: Mapping[str, tuple[str, ...]]
    sizes: tuple[int, ...]
    seeds: tuple[int, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    instance: Mapping[str, Any] = field(default_factory=lambda: {"generator": "demo"})
    simulate: Mapping[str, Any] | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepConfig:
        """Check ``data`` (a parsed config) and build the grid; the first problem found
        raises :class:`~optsched.errors.InvalidOption` or
        :class:`~optsched.errors.UnknownName` naming its key and value."""
        if not isinstance(data, Mapping):
            raise InvalidOption("config", type(data).__name__, "must be a table/object")
        unknown = set(data) - {"name", "models", "methods", "sizes", "seeds", "options",
                               "instance", "simulate"}
        if unknown:
            raise InvalidOption(f"config.{sorted(unknown)[0]}", data[sorted(unknown)[0]],
                                "unknown key; known: name, models, methods, sizes, seeds, "
                                "options, instance, simulate")
        sim = _simulate_section(data["simulate"]) if "simulate" in data else None
        name = data.get("name", "sweep")
        if not isinstance(name, str) or not name:
            raise InvalidOption("name", name, "must be a non-empty string")
        seeds = _int_list(data.get("seeds", [0]), "seeds", minimum=0)
        if sim is not None and "models" not in data:
            for k in ("methods", "sizes", "options", "instance"):
                if k in data:
                    raise InvalidOption(k, data[k], "a setting of solve cells, and the config "
                                        "has no models")
            return cls(name, (), {}, (), seeds, {}, {"generator": "demo"}, sim)
        models = _models(data)
        methods = _methods(data, models)
        sizes = _int_list(data.get("sizes"), "sizes", minimum=1)
        options = _solve_options(data, models, methods)
        return cls(name, models, methods, sizes, seeds, options, _instance_spec(data), sim)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "seeds": list(self.seeds)}
        if self.models:
            d.update(models=list(self.models),
                     methods={m: list(v) for m, v in self.methods.items()},
                     sizes=list(self.sizes), options=dict(self.options),
                     instance=dict(self.instance))
        if self.simulate is not None:
            d["simulate"] = dict(self.simulate)
        return d


def _models(data: Mapping[str, Any]) -> tuple[str, ...]:
    from optsched.registry import get_model

    models = _str_list(data.get("models"), "models")
    for m in models:
        get_model(m)  # UnknownName for a typo
    return models


def _methods(data: Mapping[str, Any], models: tuple[str, ...]
             ) -> dict[str, tuple[str, ...]]:
    """The methods of each model: one list for all or a table per model; each a name
    the model offers, or ``module:name`` of a method that resolves."""
    from optsched.registry import get_model

    raw = data.get("methods", ["exact", "heuristic"])
    if isinstance(raw, Mapping):
        missing = [m for m in models if m not in raw]
        if missing:
            raise InvalidOption("methods", sorted(raw), f"no methods for model {missing[0]!r}")
        methods = {m: _str_list(raw[m], f"methods.{m}") for m in models}
    else:
        common = _str_list(raw, "methods")
        methods = {m: common for m in models}
    for m, ms in methods.items():
        known = (*get_model(m).method_names, "heuristic",
                 *(a for x in get_model(m).methods for a in x.aliases))
        for meth in ms:
            if ":" in meth:  # module:name of a method of your own: it must resolve
                get_model(m).method(meth)
            elif meth not in known:
                raise UnknownName(f"methods.{m}", meth, f"model {m!r} offers {list(known)}")
    return methods


def _solve_options(data: Mapping[str, Any], models: tuple[str, ...],
                   methods: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """The ``options`` table; each one must be taken by some method of the sweep."""
    from optsched.registry import get_model

    options = data.get("options", {})
    if not isinstance(options, Mapping):
        raise InvalidOption("options", options, "must be a table of solve() keywords")
    for k, v in options.items():  # an option no chosen method takes is a typo
        if k == "backend":
            ok = any(get_model(m).method(x).backend for m in models for x in methods[m])
        else:
            ok = any(k in get_model(m).method(x).options for m in models
                     for x in methods[m])
        if not ok:
            raise InvalidOption(f"options.{k}", v, "no method of this sweep takes it")
    return dict(options)


def _instance_spec(data: Mapping[str, Any]) -> dict[str, Any]:
    inst = dict(data.get("instance", {}) or {})
    inst.setdefault("generator", "demo")
    gen = inst["generator"]
    if not isinstance(gen, str) or (gen not in GENERATORS and ":" not in gen):
        raise InvalidOption("instance.generator", gen,
                            "must be 'demo', 'philly' or 'module:function'")
    return inst


def _simulate_section(raw: Any) -> dict[str, Any]:
    """The ``[simulate]`` table, checked (``docs/sweeps.md``), key by key in a fixed
    order, so a config with several problems always reports the same first one."""
    from optsched.registry import policy_spec

    if not isinstance(raw, Mapping):
        raise InvalidOption("simulate", raw, "must be a table")
    unknown = sorted(set(raw) - set(SIM_KEYS))
    if unknown:
        raise InvalidOption(f"simulate.{unknown[0]}", raw[unknown[0]],
                            f"unknown key; known: {', '.join(SIM_KEYS)}")
    policies = _str_list(raw.get("policies"), "simulate.policies")
    specs = [policy_spec(p) for p in policies]  # UnknownName for a typo
    traces = _sim_traces(raw)
    jobs = (_int_list(raw["jobs"], "simulate.jobs", minimum=1) if "jobs" in raw else (None,))
    if "generate" in traces and None in jobs:
        raise InvalidOption("simulate.jobs", None, "'generate' needs the number of jobs")
    points = _sim_points(raw, jobs)
    cluster = _sim_cluster(raw)
    options = raw.get("options", {})
    if not isinstance(options, Mapping):
        raise InvalidOption("simulate.options", options, "must be a table of policy options")
    for k, v in options.items():
        if not any(k in s.options for s in specs):
            raise InvalidOption(f"simulate.options.{k}", v, "no policy of this sweep takes it")
    trace_options = raw.get("trace_options", {})
    if not isinstance(trace_options, Mapping):
        raise InvalidOption("simulate.trace_options", trace_options,
                            "must be a table of trace-reader keywords")
    max_time = raw.get("max_time")
    if max_time is not None and (isinstance(max_time, bool)
                                 or not isinstance(max_time, (int, float))
                                 or not (max_time > 0 and math.isfinite(max_time))):
        raise InvalidOption("simulate.max_time", max_time, "must be a finite number > 0")
    window = _sim_window(raw, jobs)
    out: dict[str, Any] = {"policies": list(policies), "traces": list(traces),
                           "jobs": [j for j in jobs], "cluster": cluster,
                           "options": dict(options), "trace_options": dict(trace_options),
                           "max_time": max_time}
    if window is not None:
        out["window"] = window
    out.update(points)
    return out


def _sim_traces(raw: Mapping[str, Any]) -> tuple[str, ...]:
    from optsched.catalog import SHIPPED_TRACES

    traces = _str_list(raw.get("traces"), "simulate.traces")
    for t in traces:
        if t != "generate" and t not in SHIPPED_TRACES and not Path(t).is_file():
            raise InvalidOption("simulate.traces", t, "not a shipped trace "
                                f"({', '.join(SHIPPED_TRACES)}), a trace file or 'generate'")
    return traces


def _sim_points(raw: Mapping[str, Any], jobs: tuple[int | None, ...]
                ) -> dict[str, list[float]]:
    """``{"loads": [...]}`` (default ``[1.0]``) or ``{"rates": [...]}``, not both."""
    if "loads" in raw and "rates" in raw:
        raise InvalidOption("simulate.rates", raw["rates"], "give loads or rates, not both")
    loads = _positive_list(raw["loads"], "simulate.loads") if "loads" in raw else None
    rates = _positive_list(raw["rates"], "simulate.rates") if "rates" in raw else None
    if rates is not None and None in jobs:
        raise InvalidOption("simulate.rates", list(rates), "an arrival rate needs the "
                            "number of jobs (simulate.jobs)")
    if rates is not None:
        return {"rates": list(rates)}
    return {"loads": list(loads or (1.0,))}


def _sim_cluster(raw: Mapping[str, Any]) -> str | None:
    from optsched.catalog import cluster_preset

    cluster = raw.get("cluster")
    if cluster is not None:
        if not isinstance(cluster, str):
            raise InvalidOption("simulate.cluster", cluster, "must be a preset name or a file")
        if not Path(cluster).is_file():
            cluster_preset(cluster)  # UnknownName for a typo
    return cluster


def _sim_window(raw: Mapping[str, Any], jobs: tuple[int | None, ...]) -> list[int] | None:
    """``[a, b]`` of a steady-state window; every stream must run past ``b``."""
    if "window" not in raw:
        return None
    w = Window.of(raw["window"], "simulate.window")
    if None in jobs:
        raise InvalidOption("simulate.window", raw["window"], "a window needs the stream "
                            "length (simulate.jobs)")
    short = [j for j in jobs if j is not None and j <= w.end]
    if short:
        raise InvalidOption("simulate.jobs", short[0], f"must exceed the window's end "
                            f"{w.end}: the stream goes on while the window's jobs run")
    return [w.start, w.end]


def _positive_list(v: Any, path: str) -> tuple[float, ...]:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        v = [v]
    if (not isinstance(v, (list, tuple)) or not v
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                       and math.isfinite(x) and x > 0 for x in v)):
        raise InvalidOption(path, v, "must be a non-empty list of finite numbers > 0")
    return tuple(float(x) for x in v)


def _str_list(v: Any, path: str) -> tuple[str, ...]:
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, (list, tuple)) or not v or not all(isinstance(x, str) for x in v):
        raise InvalidOption(path, v, "must be a non-empty list of names")
    return tuple(v)


def _int_list(v: Any, path: str, minimum: int) -> tuple[int, ...]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if (not isinstance(v, (list, tuple)) or not v
            or not all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum
                       for x in v)):
        raise InvalidOption(path, v, f"must be a non-empty list of integers >= {minimum}")
    return tuple(v)


def load_config(path: str | Path) -> SweepConfig:
    """Read a ``.toml`` or ``.json`` sweep config."""
    p = Path(path)
    text = read_text(p, InvalidOption, "config")
    parse = parse_json if p.suffix.lower() == ".json" else parse_toml
    return SweepConfig.from_dict(parse(text, InvalidOption, "config", source=str(p)))
