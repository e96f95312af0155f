"""Running a sweep: one cell into its table row (:func:`run_cell`, which never raises),
the cells not yet stored on local processes or a Dask cluster, resumably
(:func:`run_sweep`; ``docs/sweeps.md``)."""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from optsched.core.files import append_line, ensure_folder, write_text
from optsched.core.tables import Table
from optsched.errors import InvalidOption, ModelNotApplicable, UnknownName
from optsched.progressbar import ProgressBar
from optsched.sim.window import Window, WindowUnfinished
from optsched.studies import interrupt
from optsched.studies.interrupt import Interrupted, ignore_sigint, sigint_blocked, stop_pool
from optsched.studies.store import read_records
from optsched.studies.sweep.cells import (
    build_instance,
    build_sim_instance,
    cell_identity,
    cell_key,
    cells_of,
    check_seeds,
)
from optsched.studies.sweep.config import SweepConfig
from optsched.studies.sweep.table import COLUMNS, FORMATS, require_pyarrow, write_table

__all__ = ["run_cell", "run_sweep", "run_engine", "plain_value", "ENGINES"]

ENGINES = ("local", "dask")


def run_cell(params: Mapping[str, Any]) -> dict[str, Any]:
    """Build the cell's instance, solve or simulate it, and return its table row (never
    raises)."""
    if params.get("kind") == "simulate":
        return _run_sim_cell(params)
    from optsched.registry import solve

    t0 = time.perf_counter()
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=cell_key(params), **cell_identity(params), message="")
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
    return {k: plain_value(v) for k, v in row.items()}


def _run_sim_cell(params: Mapping[str, Any]) -> dict[str, Any]:
    from optsched.registry import simulate

    t0 = time.perf_counter()
    row: dict[str, Any] = {c: None for c in COLUMNS}
    row.update(key=cell_key(params), **cell_identity(params), message="")
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
    return {k: plain_value(v) for k, v in row.items()}


def _run_window_cell(params: Mapping[str, Any], row: dict[str, Any],
                     t0: float) -> dict[str, Any]:
    """A cell measured on a window of its stream (``docs/sweeps.md``): JCT figures and
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
    return {k: plain_value(v) for k, v in row.items()}


def _with_queue_note(res: Any, message: str) -> str:
    """``message``, after the note that no job of the run queued, if none did."""
    from optsched.sim.simulator import no_queue_note

    note = no_queue_note(res)
    return f"{note}; {message}" if note else message


def plain_value(v: Any) -> Any:
    """A table cell as plain JSON: a numpy scalar as its Python value, a non-finite
    float as ``None``."""
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


# --------------------------------------------------------------------------- engines
def _run_local(todo: list[dict], workers: int, sink: Callable[[Any], None],
               fn: Callable[[Any], Any] = run_cell) -> None:
    """``sink(fn(p))`` for every ``p`` of ``todo`` on ``workers`` local processes (``fn``
    importable at module level, as the workers are spawned)."""
    if workers <= 1 or len(todo) <= 1:
        for p in todo:
            sink(fn(p))
        return
    import multiprocessing as mp

    # the workers ignore Ctrl-C: the parent alone stops them (stop_pool), so that an
    # interrupt neither breaks the pool nor waits for the queued cells
    ex = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                             initializer=ignore_sigint)
    try:
        with sigint_blocked():  # the workers are started here (on submit)
            futures = [ex.submit(fn, p) for p in todo]
        for fut in as_completed(futures):
            sink(fut.result())
    except BaseException:
        stop_pool(ex)
        raise
    ex.shutdown()


def _run_dask(todo: list[dict], workers: int, sink: Callable[[Any], None],
              scheduler: str | None, client: Any = None,
              fn: Callable[[Any], Any] = run_cell) -> None:
    """``sink(fn(p))`` for every ``p`` of ``todo`` on a Dask cluster (``scheduler``, else a
    LocalCluster of ``workers`` processes)."""
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
        futures = [client.submit(fn, p, pure=False) for p in todo]
        for fut in dask_completed(futures):
            sink(fut.result())
    except BaseException:
        with contextlib.suppress(Exception):  # queued and running cells are dropped
            client.cancel(futures, force=True)
        raise
    finally:
        for obj in own:
            obj.close()


def run_engine(todo: list[dict], sink: Callable[[Any], None], fn: Callable[[Any], Any], *,
               engine: str = "local", workers: int = 1, scheduler: str | None = None,
               client: Any = None) -> None:
    """``sink(fn(p))`` for every ``p`` of ``todo``, on local processes or Dask (the
    engines of sweeps, for any other study made of independent cells)."""
    if engine not in ENGINES:
        raise UnknownName("engine", engine, f"known engines: {', '.join(ENGINES)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidOption("workers", workers, "must be an integer >= 1")
    if engine == "local":
        _run_local(todo, workers, sink, fn)
    else:
        _run_dask(todo, workers, sink, scheduler, client, fn)


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
        require_pyarrow()
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
    rows += [{**{c: None for c in COLUMNS}, "key": cell_key(p), **cell_identity(p),
              "status": "error",
              "message": "failed in this run (see cells.jsonl); retried by the next run"}
             for p in failed]
    order = {cell_key(p): i for i, p in enumerate(grid)}
    rows.sort(key=lambda r: order[r["key"]])
    write_table(rows, out / f"results.{fmt}", fmt)
    return Table(rows, COLUMNS), len(todo)
