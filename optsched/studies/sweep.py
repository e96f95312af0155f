r"""Parameter sweeps: a grid of (model x method x instance size x seed) cells, run in
parallel, resumable, written as one tidy table.

A sweep is described by a TOML or JSON config::

    name = "allox-heuristics"
    models = ["allox"]
    methods = ["exact", "sjf", "online"]        # or a table: {allox = [...], salus = [...]}
    sizes = [8, 16, 32]                         # instance sizes (jobs)
    seeds = [0, 1, 2]
    options = {backend = "highs"}               # passed to optsched.solve (optional)

    [instance]                                  # optional; default generator = "demo"
    generator = "philly"                        # "demo" | "philly" | "module:function"
    cluster = "gavel-physical"                  # the generator's own keywords
    max_workers = 1

Instances: ``"demo"`` calls the model's ``ModelSpec.demo_instance(n_jobs=size,
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
order (model, method, size, seed). Parquet needs ``pyarrow``; asking for it without
pyarrow is an error before anything runs (no fallback to another format).
:func:`load_table` reads any of the three back; :func:`plot_sweep` draws a column
against size, one line per (model, method), mean over seeds with min-max band.
"""

from __future__ import annotations

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
from pathlib import Path
from typing import Any

from optsched.core.jsonio import parse_json, parse_toml, read_text
from optsched.errors import InvalidOption, ModelNotApplicable, UnknownName
from optsched.progressbar import ProgressBar

__all__ = ["SweepConfig", "Cell", "load_config", "cells_of", "cell_key", "run_cell",
           "run_sweep", "load_table", "write_table", "plot_sweep", "COLUMNS", "FORMATS"]

FORMATS = ("csv", "jsonl", "parquet")
ENGINES = ("local", "dask")
GENERATORS = ("demo", "philly")

COLUMNS = ["key", "model", "method", "size", "seed", "status", "objective", "bound", "gap",
           "ratio", "n_jobs", "n_completed", "mean_jct", "p99_jct", "makespan", "cru",
           "build_seconds", "solve_seconds", "wall_seconds", "message"]
TIMING = ("build_seconds", "solve_seconds", "wall_seconds")


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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SweepConfig:
        from optsched.registry import get_model

        if not isinstance(data, Mapping):
            raise InvalidOption("config", type(data).__name__, "must be a table/object")
        unknown = set(data) - {"name", "models", "methods", "sizes", "seeds", "options",
                               "instance"}
        if unknown:
            raise InvalidOption(f"config.{sorted(unknown)[0]}", data[sorted(unknown)[0]],
                                "unknown key; known: name, models, methods, sizes, seeds, "
                                "options, instance")
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
            known = (*get_model(m).method_names, "heuristic")
            for meth in ms:
                if meth not in known:
                    raise UnknownName(f"methods.{m}", meth, f"model {m!r} offers {list(known)}")
        sizes = _int_list(data.get("sizes"), "sizes", minimum=1)
        seeds = _int_list(data.get("seeds", [0]), "seeds", minimum=0)
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
        name = data.get("name", "sweep")
        if not isinstance(name, str) or not name:
            raise InvalidOption("name", name, "must be a non-empty string")
        return cls(name, models, methods, sizes, seeds, dict(options), inst)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "models": list(self.models),
                "methods": {m: list(v) for m, v in self.methods.items()},
                "sizes": list(self.sizes), "seeds": list(self.seeds),
                "options": dict(self.options), "instance": dict(self.instance)}


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


def cells_of(config: SweepConfig) -> list[Cell]:
    """The grid in order: model, method, size, seed. Each cell carries the options its
    method declares (the backend only for methods that solve an LP/MILP)."""
    from optsched.registry import get_model

    out = []
    for m in config.models:
        for meth in config.methods[m]:
            method = get_model(m).method(meth)
            opts = {k: v for k, v in config.options.items()
                    if k in method.options or (k == "backend" and method.backend)}
            out += [Cell(m, meth, size, seed, opts, config.instance)
                    for size in config.sizes for seed in config.seeds]
    return out


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


def run_cell(params: Mapping[str, Any]) -> dict[str, Any]:
    """Build the cell's instance, solve it, and return its table row (never raises)."""
    from optsched.registry import solve

    t0 = time.perf_counter()
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=cell_key(params), model=params["model"], method=params["method"],
               size=params["size"], seed=params["seed"], message="")
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

    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as ex:
        for fut in as_completed([ex.submit(run_cell, p) for p in todo]):
            sink(fut.result())


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
    try:
        futures = [client.submit(run_cell, p, pure=False) for p in todo]
        for fut in dask_completed(futures):
            sink(fut.result())
    finally:
        for obj in own:
            obj.close()


def _read_store(path: Path) -> dict[str, dict]:
    done: dict[str, dict] = {}
    if not path.exists():
        return done
    lines = path.read_text().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if n == len(lines):
                continue  # a line cut by an interrupted run: that cell is recomputed
            raise InvalidOption("cells.jsonl", str(path), f"line {n} is not JSON") from None
        if row.get("status") != "error":
            done[row["key"]] = row
    return done


def run_sweep(config: SweepConfig, out: str | Path, *, workers: int = 1,
              engine: str = "local", fmt: str = "csv", scheduler: str | None = None,
              progress: bool | None = None, client: Any = None) -> tuple[list[dict], int]:
    """Run every cell of ``config`` not already in ``OUT/cells.jsonl``.

    Returns ``(rows, computed)``: the table rows of the whole grid (grid order) and how
    many cells this call computed. Writes ``OUT/results.<fmt>``. ``client`` (Dask engine
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
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config.to_dict(), indent=1) + "\n")
    store = out / "cells.jsonl"
    done = _read_store(store)
    grid = [c.params() for c in cells_of(config)]
    todo = [p for p in grid if cell_key(p) not in done]
    with store.open("a") as fh, ProgressBar(len(todo), config.name, progress) as bar:
        def sink(row: dict) -> None:
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if row["status"] != "error":
                done[row["key"]] = row
            bar.advance()
        if engine == "local":
            _run_local(todo, workers, sink)
        else:
            _run_dask(todo, workers, sink, scheduler, client)
    failed = [p for p in grid if cell_key(p) not in done]
    rows = [done[cell_key(p)] for p in grid if cell_key(p) in done]
    rows += [{**{c: None for c in COLUMNS}, "key": cell_key(p), "model": p["model"],
              "method": p["method"], "size": p["size"], "seed": p["seed"], "status": "error",
              "message": "failed in this run (see cells.jsonl); retried by the next run"}
             for p in failed]
    order = {cell_key(p): i for i, p in enumerate(grid)}
    rows.sort(key=lambda r: order[r["key"]])
    write_table(rows, out / f"results.{fmt}", fmt)
    return rows, len(todo)


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
    """Write ``rows`` (columns :data:`COLUMNS`) as CSV, JSON lines or Parquet."""
    path = Path(path)
    fmt = fmt or path.suffix.lstrip(".")
    if fmt == "csv":
        with path.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in COLUMNS})
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps({k: r.get(k) for k in COLUMNS}) + "\n"
                                for r in rows))
    elif fmt == "parquet":
        pq = _require_pyarrow()
        import pyarrow as pa
        pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in COLUMNS} for r in rows]),
                       path)
    else:
        raise UnknownName("format", fmt, f"known formats: {', '.join(FORMATS)}")
    return path


_NUMERIC = {"size", "seed", "objective", "bound", "gap", "ratio", "n_jobs", "n_completed",
            "mean_jct", "p99_jct", "makespan", "cru", *TIMING}


def load_table(path: str | Path) -> list[dict[str, Any]]:
    """Read a sweep table (``.csv``, ``.jsonl`` or ``.parquet``) into a list of rows."""
    path = Path(path)
    fmt = path.suffix.lstrip(".")
    if fmt == "jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if fmt == "parquet":
        pq = _require_pyarrow()
        return pq.read_table(path).to_pylist()
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
                    row[k] = int(f) if k in ("size", "seed", "n_jobs", "n_completed") else f
                else:
                    row[k] = v
            rows.append(row)
    return rows


def plot_sweep(rows: Iterable[Mapping[str, Any]], y: str, out: str | Path, *,
               x: str = "size", logy: bool = False, title: str | None = None) -> Path:
    """Plot column ``y`` against ``x``: one panel per model, one line per method (mean
    over seeds, min-max band): :func:`optsched.plotting.sweep_lines`."""
    from optsched.plotting import sweep_lines

    return sweep_lines(rows, y, out, x=x, logy=logy, title=title)
