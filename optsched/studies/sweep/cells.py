"""The cells of a sweep's grid, their keys and their instances: a solve cell (model x
method x size x seed) or a simulation cell (policy x trace x jobs x load or rate x seed),
keyed by the hash of its parameters (``docs/sweeps.md``)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any

from optsched.errors import InvalidOption, UnknownName
from optsched.studies.sweep.config import SweepConfig

__all__ = ["Cell", "SimCell", "cell_key", "cells_of", "check_seeds", "build_instance",
           "build_sim_instance"]


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
    return [*_solve_cells(config), *_sim_cells(config)]


def _solve_cells(config: SweepConfig) -> list[Cell]:
    from optsched.registry import get_model

    out: list[Cell] = []
    for m in config.models:
        for meth in config.methods[m]:
            method = get_model(m).method(meth)
            opts = {k: v for k, v in config.options.items()
                    if k in method.options or (k == "backend" and method.backend)}
            out += [Cell(m, meth, size, seed, opts, config.instance)
                    for size in config.sizes for seed in config.seeds]
    return out


def _sim_cells(config: SweepConfig) -> list[SimCell]:
    from optsched.registry import policy_spec

    sim = config.simulate
    if sim is None:
        return []
    points = [(x, None) for x in sim["loads"]] if "loads" in sim else \
        [(None, x) for x in sim["rates"]]
    window = tuple(sim["window"]) if sim.get("window") else None
    out: list[SimCell] = []
    for pol in sim["policies"]:
        takes = policy_spec(pol).options
        opts = {k: v for k, v in sim["options"].items() if k in takes}
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
    """The instance of one cell (``docs/sweeps.md``)."""
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
    """The instance of one simulation cell (``docs/sweeps.md``)."""
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


def cell_identity(params: Mapping[str, Any]) -> dict[str, Any]:
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
