r"""Parameter sweeps: a grid of solve cells (model x method x instance size x seed) and
simulation cells (policy x trace x load factor or arrival rate x seed), run in parallel,
resumable, written as one tidy table.

A sweep is described by a TOML or JSON config::

    name = "allox-heuristics"
    models = ["allox"]
    methods = ["exact", "sjf", "online"]        # or a table: {allox = [...], salus = [...]}
                                                # (module:name: a method of your own)
    sizes = [8, 16, 32]                         # instance sizes (jobs)
    seeds = [0, 1, 2]
    options = {backend = "highs"}               # passed to optsched.solve (optional)

    [instance]                                  # optional; default generator = "demo"
    generator = "philly"                        # "demo" | "philly" | "module:function"
    cluster = "gavel-physical"                  # the generator's own keywords
    max_workers = 1

Simulation cells come from a ``[simulate]`` table (``models`` and ``sizes`` may then be
left out)::

    [simulate]
    policies = ["tiresias.las", "gavel.max_min_fairness_agnostic"]   # or module:name
    traces = ["philly"]                  # shipped trace names, trace files, or "generate"
    jobs = [500]                         # first N jobs of each trace (optional for traces)
    loads = [1.0, 2.0, 4.0]              # arrival times divided by each (default [1.0])
    # rates = [20.0, 40.0]               # or: arrival rates in jobs per hour (not both)
    cluster = "tiresias-n32g4"           # preset or file (default: the trace's own)
    options = {backend = "highs"}        # policy options (optional)
    trace_options = {}                   # keywords of the trace reader (optional)
    max_time = 1e8                       # stop each simulation there (optional)
    window = [4000, 5000]                # measure jobs 4000-4999 only (optional; needs jobs)

A trace is read by :func:`optsched.catalog.read_trace` (its first ``jobs`` jobs,
arrivals divided by the load); ``"generate"`` draws ``jobs`` Philly-derived jobs with
Gavel's generator (:func:`optsched.catalog.generate_philly`, seeded by the cell's seed,
``jobs_per_hour`` the cell's rate); a reader that draws (Philly's ``trace_options =
{throughputs = "gavel"}`` draws each job's type) draws with the cell's seed too. With
``rates`` instead of ``loads`` a trace's arrivals are scaled so that its jobs arrive at
that mean rate (the span from first to last arrival becomes ``(jobs - 1) / rate``
hours). The seed also seeds the policy's randomness
(:attr:`optsched.registry.PolicySpec.draws`). Two or more seeds over a cell in which
nothing is random (a trace read from its file, a policy that draws nothing or whose
draws cannot change its run there) are refused before anything runs
(:func:`check_seeds`): they would only copy the row. A cell runs
:func:`optsched.registry.simulate`; its row has ``kind = "simulate"``, ``model`` the
policy's paper, ``method`` the policy, ``size`` the jobs asked for, ``trace``, ``load``
or ``rate``, the JCT figures (``objective`` is the mean JCT), ``preemptions``,
``queued_jobs`` (jobs that ever waited for GPUs; 0 puts "no job queued: policies cannot
differ" at the head of ``message``), ``epochs``, ``policy_seconds`` and, as
``solve_seconds``, the simulation's seconds; ``status`` is ``feasible``, or
``time_limit`` when ``max_time`` stopped it with jobs unfinished (the JCT figures are
then over the finished jobs only).
With ``window = [a, b]`` a cell measures a steady-state window of its stream
(:class:`optsched.sim.window.Window`): it simulates up to the stream's last arrival (and
``max_time``) at most, stops once jobs ``a..b-1`` are done, and reports the JCT figures
and preemptions of those jobs only (``n_jobs`` the window's size, no ``makespan``); a
window job unfinished at the last arrival gives status ``window_unfinished`` (no JCT
figures; not retried, as the same cell would fail again).
Options reach the policies that declare them; an option none of them takes is an error.

Instances of solve cells: ``"demo"`` calls the model's ``ModelSpec.demo_instance(n_jobs=size,
seed=seed)``; ``"philly"`` calls :func:`optsched.catalog.generate_philly` (``size``
jobs); ``"module:function"`` calls any importable ``function(size, seed=seed, **kw)``
returning an :class:`~optsched.core.instance.Instance`.

Cells. Each cell is identified by the SHA-256 of the canonical JSON of its parameters
(model, method, size, seed, options, instance config): :func:`cell_key`. Finished cells
are appended, one JSON object per line, to ``OUT/cells.jsonl`` as they complete; a
second run of the same config skips every key already there (resumability), so an
interrupted sweep continues where it stopped and a grown grid computes only the new
cells. A cell whose method refuses the instance
(:class:`~optsched.errors.ModelNotApplicable`) is recorded with ``status =
"not_applicable"`` and the message, and is not retried; any other exception is recorded
as ``status = "error"`` and *is* retried by the next run. Options reach the cells whose
method declares them; an option no method of the sweep takes is an error when the
config is read.

Engines. ``engine="local"`` runs cells on a :class:`concurrent.futures.ProcessPoolExecutor`
(``workers`` processes, spawned; ``workers=1`` runs in this process). ``engine="dask"``
submits the same cell function to a Dask cluster (optional extra ``dask``:
``pip install 'optsched[dask]'``): the cluster at ``scheduler`` (an address such as
``tcp://host:8786``) or, without one, a :class:`distributed.LocalCluster` of ``workers``
single-threaded processes. Both engines produce identical rows apart from timings.

Output. ``OUT/results.{csv,jsonl,parquet}``: one row per cell of this grid, in grid
order (solve cells by model, method, size, seed; then simulation cells by policy,
trace, jobs, load or rate, seed). Parquet needs ``pyarrow``; asking for it without
pyarrow is an error before anything runs (no fallback to another format).
:func:`load_table` reads any of the three back; :func:`plot_sweep` draws a column
against size (or load, or rate), one line per method or policy, mean over seeds with
min-max band: ``plot_sweep(rows, "mean_jct", "jct.png", x="load")`` is JCT against load,
one panel per trace.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import inspect
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace
from pathlib import Path
from typing import Any

from optsched.core.files import append_line, ensure_folder, open_atomic, write_text
from optsched.core.jsonio import parse_json, parse_toml, read_text
from optsched.core.tables import Table
from optsched.errors import InvalidOption, ModelNotApplicable, UnknownName
from optsched.progressbar import ProgressBar
from optsched.sim.window import Window, WindowUnfinished
from optsched.studies import interrupt
from optsched.studies.interrupt import Interrupted, ignore_sigint, sigint_blocked, stop_pool
from optsched.studies.store import read_records

__all__ = ["SweepConfig", "Cell", "SimCell", "load_config", "cells_of", "cell_key",
           "run_cell", "run_sweep", "load_table", "write_table", "plot_sweep", "default_x",
           "build_sim_instance", "check_seeds", "COLUMNS", "FORMATS"]

FORMATS = ("csv", "jsonl", "parquet")
ENGINES = ("local", "dask")
GENERATORS = ("demo", "philly")

COLUMNS = ["key", "kind", "model", "method", "trace", "size", "load", "rate", "seed",
           "status", "objective", "bound", "gap", "ratio", "n_jobs", "n_completed", "mean_jct",
           "p50_jct", "p99_jct", "makespan", "cru", "preemptions", "queued_jobs", "epochs",
           "bound_mean_jct", "gap_mean_jct", "bound_makespan", "gap_makespan",
           "build_seconds", "solve_seconds", "policy_seconds", "wall_seconds", "message"]
TIMING = ("build_seconds", "solve_seconds", "policy_seconds", "wall_seconds")
SIM_KEYS = ("policies", "traces", "jobs", "loads", "rates", "cluster", "options",
            "trace_options", "max_time", "window")


# --------------------------------------------------------------------------- config
@dataclass(frozen=True)
class SweepConfig:
    """A validated sweep grid (see the module docstring for the file format)."""

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
        from optsched.registry import get_model

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
        models = _str_list(data.get("models"), "models")
        for m in models:
            get_model(m)  # UnknownName for a typo
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
        sizes = _int_list(data.get("sizes"), "sizes", minimum=1)
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
        inst = dict(data.get("instance", {}) or {})
        inst.setdefault("generator", "demo")
        gen = inst["generator"]
        if not isinstance(gen, str) or (gen not in GENERATORS and ":" not in gen):
            raise InvalidOption("instance.generator", gen,
                                "must be 'demo', 'philly' or 'module:function'")
        return cls(name, models, methods, sizes, seeds, dict(options), inst, sim)

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


def _simulate_section(raw: Any) -> dict[str, Any]:
    """The ``[simulate]`` table, checked (see the module docstring)."""
    from optsched.catalog import SHIPPED_TRACES, cluster_preset
    from optsched.registry import policy_spec

    if not isinstance(raw, Mapping):
        raise InvalidOption("simulate", raw, "must be a table")
    unknown = sorted(set(raw) - set(SIM_KEYS))
    if unknown:
        raise InvalidOption(f"simulate.{unknown[0]}", raw[unknown[0]],
                            f"unknown key; known: {', '.join(SIM_KEYS)}")
    policies = _str_list(raw.get("policies"), "simulate.policies")
    specs = [policy_spec(p) for p in policies]  # UnknownName for a typo
    traces = _str_list(raw.get("traces"), "simulate.traces")
    for t in traces:
        if t != "generate" and t not in SHIPPED_TRACES and not Path(t).is_file():
            raise InvalidOption("simulate.traces", t, "not a shipped trace "
                                f"({', '.join(SHIPPED_TRACES)}), a trace file or 'generate'")
    jobs = (_int_list(raw["jobs"], "simulate.jobs", minimum=1) if "jobs" in raw else (None,))
    if "generate" in traces and None in jobs:
        raise InvalidOption("simulate.jobs", None, "'generate' needs the number of jobs")
    if "loads" in raw and "rates" in raw:
        raise InvalidOption("simulate.rates", raw["rates"], "give loads or rates, not both")
    loads = _positive_list(raw["loads"], "simulate.loads") if "loads" in raw else None
    rates = _positive_list(raw["rates"], "simulate.rates") if "rates" in raw else None
    if rates is not None and None in jobs:
        raise InvalidOption("simulate.rates", list(rates), "an arrival rate needs the "
                            "number of jobs (simulate.jobs)")
    cluster = raw.get("cluster")
    if cluster is not None:
        if not isinstance(cluster, str):
            raise InvalidOption("simulate.cluster", cluster, "must be a preset name or a file")
        if not Path(cluster).is_file():
            cluster_preset(cluster)  # UnknownName for a typo
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
    window = None
    if "window" in raw:
        w = Window.of(raw["window"], "simulate.window")
        if None in jobs:
            raise InvalidOption("simulate.window", raw["window"], "a window needs the stream "
                                "length (simulate.jobs)")
        short = [j for j in jobs if j is not None and j <= w.end]
        if short:
            raise InvalidOption("simulate.jobs", short[0], f"must exceed the window's end "
                                f"{w.end}: the stream goes on while the window's jobs run")
        window = [w.start, w.end]
    out: dict[str, Any] = {"policies": list(policies), "traces": list(traces),
                           "jobs": [j for j in jobs], "cluster": cluster,
                           "options": dict(options), "trace_options": dict(trace_options),
                           "max_time": max_time}
    if window is not None:
        out["window"] = window
    if rates is not None:
        out["rates"] = list(rates)
    else:
        out["loads"] = list(loads or (1.0,))
    return out


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


# --------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    """One point of the grid."""

    model: str
    method: str
    size: int
    seed: int
    options: Mapping[str, Any]
    instance: Mapping[str, Any]

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "method": self.method, "size": self.size,
                "seed": self.seed, "options": dict(self.options),
                "instance": dict(self.instance)}

    @property
    def key(self) -> str:
        return cell_key(self.params())


def cell_key(params: Mapping[str, Any]) -> str:
    """SHA-256 (hex, 16 chars) of the canonical JSON of a cell's parameters."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SimCell:
    """One simulation of the grid: ``policy`` over ``trace`` (first ``jobs`` jobs) at
    arrival-time divisor ``load`` or arrival rate ``rate`` (jobs per hour)."""

    policy: str
    trace: str
    jobs: int | None
    load: float | None
    rate: float | None
    seed: int
    cluster: str | None
    options: Mapping[str, Any]
    trace_options: Mapping[str, Any]
    max_time: float | None
    window: tuple[int, int] | None = None

    def params(self) -> dict[str, Any]:
        p: dict[str, Any] = {"kind": "simulate", "policy": self.policy, "trace": self.trace,
                             "jobs": self.jobs, "load": self.load, "rate": self.rate,
                             "seed": self.seed, "cluster": self.cluster,
                             "options": dict(self.options),
                             "trace_options": dict(self.trace_options),
                             "max_time": self.max_time}
        if self.window is not None:  # absent otherwise: earlier cells keep their keys
            p["window"] = list(self.window)
        if self.trace_seeded:  # likewise; and rows read with seed 0 are not reused
            p["trace_seeded"] = True
        return p

    @property
    def trace_seeded(self) -> bool:
        """The trace reader draws (:func:`optsched.catalog.trace_draws`), seeded by the
        cell's seed."""
        from optsched.catalog import trace_draws

        return self.trace != "generate" and bool(trace_draws(self.trace,
                                                             **self.trace_options))

    @property
    def key(self) -> str:
        return cell_key(self.params())


def cells_of(config: SweepConfig) -> list[Cell | SimCell]:
    """The grid in order: solve cells by model, method, size, seed (each with the
    options its method declares, the backend only for methods that solve an LP/MILP),
    then simulation cells by policy, trace, jobs, load or rate, seed (each with the
    options its policy declares)."""
    from optsched.registry import get_model, policy_spec

    out: list[Cell | SimCell] = []
    for m in config.models:
        for meth in config.methods[m]:
            method = get_model(m).method(meth)
            opts = {k: v for k, v in config.options.items()
                    if k in method.options or (k == "backend" and method.backend)}
            out += [Cell(m, meth, size, seed, opts, config.instance)
                    for size in config.sizes for seed in config.seeds]
    sim = config.simulate
    if sim is not None:
        points = [(x, None) for x in sim["loads"]] if "loads" in sim else \
            [(None, x) for x in sim["rates"]]
        for pol in sim["policies"]:
            takes = policy_spec(pol).options
            opts = {k: v for k, v in sim["options"].items() if k in takes}
            window = tuple(sim["window"]) if sim.get("window") else None
            out += [SimCell(pol, trace, jobs, load, rate, seed, sim["cluster"], opts,
                            sim["trace_options"], sim["max_time"], window)
                    for trace in sim["traces"] for jobs in sim["jobs"]
                    for load, rate in points for seed in config.seeds]
    return out


def check_seeds(config: SweepConfig) -> None:
    """Refuse several seeds for simulation cells that no seed can change.

    A simulation cell is random when its trace is drawn (``"generate"``, or a reader
    that draws: :func:`optsched.catalog.trace_draws`, e.g. Philly's
    ``throughputs="gavel"``) or when its policy draws from the seeded generator on
    this instance (:meth:`optsched.registry.PolicySpec.draws_on`). Any other cell gives
    the same row for every seed, so a sweep of two or more seeds over it would only
    copy it: :class:`~optsched.errors.InvalidOption` on ``seeds`` names the cell's policy
    and trace and why nothing in it is random. Solve cells are always seeded (their
    generator takes the seed).
    """
    from optsched import catalog
    from optsched.registry import policy_spec

    sim = config.simulate
    if len(config.seeds) < 2 or sim is None:
        return
    read: dict[tuple[str, int | None], Any] = {}
    for trace in sim["traces"]:
        if trace == "generate" or catalog.trace_draws(trace, **sim["trace_options"]):
            continue
        for pol in sim["policies"]:
            spec = policy_spec(pol)
            if not spec.draws:
                why = f"policy {spec.qualified} draws nothing"
            else:
                for jobs in sim["jobs"]:
                    if (trace, jobs) not in read:
                        read[trace, jobs] = catalog.read_trace(
                            trace, sim["cluster"], jobs=jobs, **sim["trace_options"])
                    if not spec.draws_on(read[trace, jobs]):
                        break
                else:
                    continue
                why = (f"policy {spec.qualified} draws only {spec.draws}, which cannot "
                       f"change its run on {read[trace, jobs].name}")
            raise InvalidOption(
                "seeds", list(config.seeds),
                f"trace {trace!r} is read, not drawn, and {why}: every seed would give the "
                "same row. Give one seed, or a random input (trace 'generate', or Philly "
                "with trace_options.throughputs = 'gavel')")


def build_instance(model: str, size: int, seed: int, spec: Mapping[str, Any]):
    """The instance of one cell (see the module docstring)."""
    from optsched.core.instance import Instance
    from optsched.registry import get_model

    kw = {k: v for k, v in spec.items() if k != "generator"}
    gen = spec.get("generator", "demo")
    if gen == "demo":
        demo = get_model(model).demo_instance
        if demo is None:
            raise InvalidOption("instance.generator", gen, f"model {model!r} has no demo instance")
        accepted = inspect.signature(demo).parameters
        for k in ("n_jobs", "seed"):
            if k not in accepted:
                raise InvalidOption("instance.generator", gen,
                                    f"{model}'s demo_instance takes no {k!r}; sizes/seeds "
                                    "need another generator")
        return demo(n_jobs=size, seed=seed, **kw)
    if gen == "philly":
        from optsched.catalog import generate_philly
        return generate_philly(size, seed=seed, **kw)
    mod, _, fn = gen.partition(":")
    try:
        func = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as exc:
        raise InvalidOption("instance.generator", gen, f"cannot import: {exc}") from None
    inst = func(size, seed=seed, **kw)
    if not isinstance(inst, Instance):
        raise InvalidOption("instance.generator", gen,
                            f"returned {type(inst).__name__}, not an Instance")
    return inst


def build_sim_instance(params: Mapping[str, Any]):
    """The instance of one simulation cell (see the module docstring)."""
    from optsched import catalog

    trace, jobs, seed = params["trace"], params["jobs"], params["seed"]
    cluster, opts = params["cluster"], dict(params["trace_options"])
    if params.get("trace_seeded"):
        opts["seed"] = seed
    if trace == "generate":
        return catalog.generate_philly(jobs, cluster=cluster or "gavel-108", seed=seed,
                                       jobs_per_hour=params["rate"], **opts)
    inst = catalog.read_trace(trace, cluster, jobs=jobs, load=params["load"] or 1.0, **opts)
    rate = params["rate"]
    if rate is not None:
        span = float(inst.arrivals.max() - inst.arrivals.min()) if inst.n_jobs else 0.0
        if inst.n_jobs < 2 or span <= 0:
            raise InvalidOption("simulate.rates", rate, f"trace {trace!r} has no arrival "
                                "span to scale (fewer than 2 distinct arrival times)")
        load = span / 3600.0 * rate / (inst.n_jobs - 1)
        t0 = float(inst.arrivals.min())
        inst = inst.replace(jobs=tuple(dc_replace(j, arrival=t0 + (j.arrival - t0) / load)
                                       for j in inst.jobs), name=f"{inst.name}-rate{rate:g}")
    return inst


def _identity(params: Mapping[str, Any]) -> dict[str, Any]:
    """The columns that say which cell a row is."""
    if params.get("kind") == "simulate":
        from optsched.registry import policy_spec

        try:
            spec = policy_spec(params["policy"])
            model, method = spec.paper, spec.qualified
        except UnknownName:
            model, method = None, params["policy"]
        return {"kind": "simulate", "model": model, "method": method,
                "trace": params["trace"], "size": params["jobs"], "load": params["load"],
                "rate": params["rate"], "seed": params["seed"]}
    return {"kind": "solve", "model": params["model"], "method": params["method"],
            "size": params["size"], "seed": params["seed"]}


def run_cell(params: Mapping[str, Any]) -> dict[str, Any]:
    """Build the cell's instance, solve or simulate it, and return its table row (never
    raises)."""
    if params.get("kind") == "simulate":
        return _run_sim_cell(params)
    from optsched.registry import solve

    t0 = time.perf_counter()
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=cell_key(params), **_identity(params), message="")
    try:
        inst = build_instance(params["model"], params["size"], params["seed"],
                              params["instance"])
        row["n_jobs"] = inst.n_jobs
        res = solve(inst, params["model"], params["method"], **dict(params["options"]))
    except ModelNotApplicable as exc:
        row.update(status="not_applicable", message=str(exc))
    except Exception as exc:  # recorded, and retried by the next run
        row.update(status="error", message=f"{type(exc).__name__}: {exc}")
    else:
        row.update(status=res.status.value, objective=res.objective, bound=res.bound,
                   gap=res.gap, ratio=res.ratio, build_seconds=res.build_seconds,
                   solve_seconds=res.solve_seconds, message=res.message)
        if res.metrics is not None:
            m = res.metrics
            row.update(n_completed=m.n_completed, mean_jct=m.mean_jct, p99_jct=m.p99_jct,
                       makespan=m.makespan, cru=m.cru)
    row["wall_seconds"] = time.perf_counter() - t0
    return {k: _plain(v) for k, v in row.items()}


def _run_sim_cell(params: Mapping[str, Any]) -> dict[str, Any]:
    from optsched.registry import simulate

    t0 = time.perf_counter()
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=cell_key(params), **_identity(params), message="")
    if params.get("window") is not None:
        return _run_window_cell(params, row, t0)
    try:
        inst = build_sim_instance(params)
        row["n_jobs"] = inst.n_jobs
        res = simulate(inst, params["policy"], seed=params["seed"], progress=False,
                       max_time=params["max_time"], **dict(params["options"]))
    except ModelNotApplicable as exc:
        row.update(status="not_applicable", message=str(exc))
    except Exception as exc:  # recorded, and retried by the next run
        row.update(status="error", message=f"{type(exc).__name__}: {exc}")
    else:
        m, x = res.metrics, res.extra
        assert m is not None  # a simulation's schedule is always validated and measured
        row.update(status="feasible" if m.n_completed == m.n_jobs else "time_limit",
                   objective=res.objective, n_completed=m.n_completed, mean_jct=m.mean_jct,
                   p50_jct=m.p50_jct, p99_jct=m.p99_jct, makespan=m.makespan, cru=m.cru,
                   preemptions=x.get("total_preemptions"), epochs=x.get("epochs"),
                   queued_jobs=x.get("queued_jobs"),
                   solve_seconds=res.solve_seconds, policy_seconds=x.get("policy_seconds"),
                   message=_with_queue_note(res, res.message))
        if "bounds" in x:  # certified lower bounds and the policy's gap to them
            row.update(bound_mean_jct=x["bounds"]["mean_jct"],
                       bound_makespan=x["bounds"]["makespan"],
                       gap_mean_jct=x["gaps"]["mean_jct"], gap_makespan=x["gaps"]["makespan"])
    row["wall_seconds"] = time.perf_counter() - t0
    return {k: _plain(v) for k, v in row.items()}


def _run_window_cell(params: Mapping[str, Any], row: dict[str, Any],
                     t0: float) -> dict[str, Any]:
    """A cell measured on a window of its stream (module docstring): JCT figures and
    preemptions over the window's jobs; ``n_jobs`` is the window's size."""
    from optsched.registry import simulate

    w = Window.of(params["window"], "simulate.window")
    res = None
    try:
        inst = build_sim_instance(params)
        ids = w.ids(inst, "simulate.window")
        horizon = w.horizon(inst)
        if params["max_time"] is not None:
            horizon = min(horizon, float(params["max_time"]))
        row["n_jobs"] = len(ids)
        res = simulate(inst, params["policy"], seed=params["seed"], progress=False,
                       max_time=horizon, until=ids, **dict(params["options"]))
        assert res.schedule is not None  # a simulation's schedule is always validated
        jct = w.completions(inst, res.schedule.completion, horizon,
                            f"{params['policy']} on {inst.name}")
    except ModelNotApplicable as exc:
        row.update(status="not_applicable", message=str(exc))
    except WindowUnfinished as exc:  # the same cell would fail again: not retried
        assert res is not None and res.schedule is not None
        done = sum(1 for k in ids if k in res.schedule.completion)
        row.update(status="window_unfinished", n_completed=done, message=str(exc),
                   solve_seconds=res.solve_seconds, epochs=res.extra.get("epochs"),
                   policy_seconds=res.extra.get("policy_seconds"))
    except Exception as exc:  # recorded, and retried by the next run
        row.update(status="error", message=f"{type(exc).__name__}: {exc}")
    else:
        import numpy as np

        v = np.array([jct[k] for k in ids])
        pre = res.extra.get("preemptions", {})
        m = res.metrics
        row.update(status="feasible", objective=float(v.mean()), n_completed=len(ids),
                   mean_jct=float(v.mean()), p50_jct=float(np.median(v)),
                   p99_jct=float(np.percentile(v, 99)),
                   cru=None if m is None else m.cru,
                   preemptions=sum(int(pre.get(k, 0)) for k in ids),
                   epochs=res.extra.get("epochs"), solve_seconds=res.solve_seconds,
                   policy_seconds=res.extra.get("policy_seconds"),
                   queued_jobs=res.extra.get("queued_jobs"),
                   message=_with_queue_note(
                       res, f"jobs {w.start}-{w.end - 1} of a {inst.n_jobs}-job stream, "
                            f"stopped at {max(res.schedule.completion[k] for k in ids) / 3600:.1f}"
                            f" h (last arrival {w.horizon(inst) / 3600:.1f} h)"))
    row["wall_seconds"] = time.perf_counter() - t0
    return {k: _plain(v) for k, v in row.items()}


def _with_queue_note(res: Any, message: str) -> str:
    """``message``, after the note that no job of the run queued, if none did."""
    from optsched.sim.simulator import no_queue_note

    note = no_queue_note(res)
    return f"{note}; {message}" if note else message


def _plain(v: Any) -> Any:
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --------------------------------------------------------------------------- engines
def _run_local(todo: list[dict], workers: int, sink: Callable[[dict], None]) -> None:
    if workers <= 1 or len(todo) <= 1:
        for p in todo:
            sink(run_cell(p))
        return
    import multiprocessing as mp

    # the workers ignore Ctrl-C: the parent alone stops them (stop_pool), so that an
    # interrupt neither breaks the pool nor waits for the queued cells
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                             initializer=ignore_sigint)
    try:
        with sigint_blocked():  # the workers are started here (on submit)
            futures = [ex.submit(run_cell, p) for p in todo]
        for fut in as_completed(futures):
            sink(fut.result())
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown()


def _run_dask(todo: list[dict], workers: int, sink: Callable[[dict], None],
              scheduler: str | None, client: Any = None) -> None:
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise InvalidOption("engine", "dask", "needs dask.distributed: install the 'dask' "
                            "extra (pip install 'optsched[dask]')") from None
    own = []
    if client is None:
        if scheduler:
            client = Client(scheduler)
        else:
            cluster = LocalCluster(n_workers=max(workers, 1), threads_per_worker=1,
                                   processes=True, dashboard_address=None)
            own.append(cluster)
            client = Client(cluster)
        own.insert(0, client)
    futures: list[Any] = []
    try:
        futures = [client.submit(run_cell, p, pure=False) for p in todo]
        for fut in dask_completed(futures):
            sink(fut.result())
    except BaseException:
        with contextlib.suppress(Exception):  # queued and running cells are dropped
            client.cancel(futures, force=True)
        raise
    finally:
        for obj in own:
            obj.close()


def _read_store(path: Path) -> dict[str, dict]:
    """The finished cells of ``OUT/cells.jsonl`` by key (a torn last line is cut off and
    its cell computed again: :func:`optsched.studies.store.read_records`)."""
    done: dict[str, dict] = {}
    for row in read_records(path, field="cells.jsonl", what="its cell"):
        if row.get("status") != "error":
            row.setdefault("kind", "solve")  # rows written before simulation cells existed
            done[row["key"]] = row
    return done


def run_sweep(config: SweepConfig, out: str | Path, *, workers: int = 1,
              engine: str = "local", fmt: str = "csv", scheduler: str | None = None,
              progress: bool | None = None, client: Any = None) -> tuple[Table, int]:
    """Run every cell of ``config`` not already in ``OUT/cells.jsonl``.

    Returns ``(rows, computed)``: the table rows of the whole grid (grid order; a
    :class:`~optsched.core.tables.Table`, ``rows.to_frame()`` for pandas) and how many cells
    this call computed. Writes ``OUT/results.<fmt>``. ``client`` (Dask engine
    only) reuses an existing ``distributed.Client``.
    """
    if engine not in ENGINES:
        raise UnknownName("engine", engine, f"known engines: {', '.join(ENGINES)}")
    if fmt not in FORMATS:
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    if fmt == "parquet":
        _require_pyarrow()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidOption("workers", workers, "must be an integer >= 1")
    check_seeds(config)
    out = ensure_folder(out, field="out")
    write_text(out / "config.json", json.dumps(config.to_dict(), indent=1) + "\n", field="out")
    store = out / "cells.jsonl"
    done = _read_store(store)
    grid = [c.params() for c in cells_of(config)]
    todo = [p for p in grid if cell_key(p) not in done]
    try:
        with ProgressBar(len(todo), config.name, progress) as bar:
            def sink(row: dict) -> None:
                append_line(store, json.dumps(row), field="cells.jsonl")
                if row["status"] != "error":
                    done[row["key"]] = row
                bar.advance()
                interrupt.check()  # an interrupt a library swallowed (a retried error)
            if engine == "local":
                _run_local(todo, workers, sink)
            else:
                _run_dask(todo, workers, sink, scheduler, client)
    except KeyboardInterrupt:
        kept = sum(cell_key(p) in done for p in grid)
        raise Interrupted(f"{kept} of {len(grid)} cells kept in {store}; run the same "
                          "command again to resume") from None
    failed = [p for p in grid if cell_key(p) not in done]
    rows = [done[cell_key(p)] for p in grid if cell_key(p) in done]
    rows += [{**{c: None for c in COLUMNS}, "key": cell_key(p), **_identity(p),
              "status": "error",
              "message": "failed in this run (see cells.jsonl); retried by the next run"}
             for p in failed]
    order = {cell_key(p): i for i, p in enumerate(grid)}
    rows.sort(key=lambda r: order[r["key"]])
    write_table(rows, out / f"results.{fmt}", fmt)
    return Table(rows, COLUMNS), len(todo)


# --------------------------------------------------------------------------- tables
def _require_pyarrow():
    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidOption("format", "parquet", "Parquet output needs pyarrow "
                            "(pip install pyarrow); choose csv or jsonl otherwise") from None
    return pq


def write_table(rows: Sequence[Mapping[str, Any]], path: str | Path, fmt: str | None = None
                ) -> Path:
    """Write ``rows`` (columns :data:`COLUMNS`) as CSV, JSON lines or Parquet, atomically
    (a temporary file renamed into place: a failed write leaves the old table whole)."""
    path = Path(path)
    fmt = fmt or path.suffix.lstrip(".")
    if fmt == "csv":
        with open_atomic(path, "w", field="path", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in COLUMNS})
    elif fmt == "jsonl":
        write_text(path, "".join(json.dumps({k: r.get(k) for k in COLUMNS}) + "\n"
                                 for r in rows), field="path")
    elif fmt == "parquet":
        pq = _require_pyarrow()
        import pyarrow as pa
        table = pa.Table.from_pylist([{k: r.get(k) for k in COLUMNS} for r in rows])
        with open_atomic(path, "wb", field="path") as fh:
            pq.write_table(table, fh)
    else:
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    return path


_NUMERIC = {"size", "seed", "load", "rate", "objective", "bound", "gap", "ratio", "n_jobs",
            "n_completed", "mean_jct", "p50_jct", "p99_jct", "makespan", "cru", "preemptions",
            "queued_jobs", "epochs", "bound_mean_jct", "gap_mean_jct", "bound_makespan",
            "gap_makespan", *TIMING}
_INTEGER = ("size", "seed", "n_jobs", "n_completed", "preemptions", "queued_jobs", "epochs")


def load_table(path: str | Path) -> Table:
    """Read a sweep table (``.csv``, ``.jsonl`` or ``.parquet``) into a list of rows (a
    :class:`~optsched.core.tables.Table`: ``load_table(path).to_frame()`` for pandas)."""
    path = Path(path)
    fmt = path.suffix.lstrip(".")
    if fmt == "jsonl":
        return Table([json.loads(line) for line in path.read_text().splitlines()
                      if line.strip()], COLUMNS)
    if fmt == "parquet":
        pq = _require_pyarrow()
        return Table(pq.read_table(path).to_pylist(), COLUMNS)
    if fmt != "csv":
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    rows = []
    with path.open(newline="") as fh:
        for r in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for k, v in r.items():
                if v == "":
                    row[k] = None
                elif k in _NUMERIC:
                    f = float(v)
                    row[k] = int(f) if k in _INTEGER else f
                else:
                    row[k] = v
            rows.append(row)
    return Table(rows, COLUMNS)


def plot_sweep(rows: Iterable[Mapping[str, Any]], y: str, out: str | Path, *,
               x: str = "size", logy: bool = False, logx: bool = False,
               title: str | None = None, group: str | None = None) -> Path:
    """Plot column ``y`` against ``x``: one panel per ``group`` (default: per trace when
    ``x`` is ``load`` or ``rate``, else per model), one line per method or policy (mean
    over seeds, min-max band): :func:`optsched.plotting.sweep_lines`. Rows without a
    number in ``x`` or ``y`` (e.g. solve cells in a plot against load) are left out."""
    from optsched.plotting import sweep_lines

    if x not in COLUMNS:
        raise InvalidOption("x", x, f"not a column of the sweep table ({', '.join(COLUMNS)})")
    if group is None:
        group = "trace" if x in ("load", "rate") else "model"
    return sweep_lines(rows, y, out, x=x, logy=logy, logx=logx, title=title, group=group)


def default_x(config: SweepConfig) -> str:
    """The column a sweep's plots put on the x axis: the arrival rate or load a
    simulation-only sweep varies, else the instance size."""
    sim = config.simulate
    if sim is not None and not config.models:
        if "rates" in sim:
            return "rate"
        if len(sim["loads"]) > 1:
            return "load"
    return "size"
