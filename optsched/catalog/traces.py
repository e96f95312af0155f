"""Trace readers: Gavel's two layouts, Tiresias' CSV, and the shipped traces."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping
from dataclasses import replace
from importlib import resources
from pathlib import Path
from types import MappingProxyType

import numpy as np

from optsched.catalog.clusters import _resolve_cluster
from optsched.catalog.files import (
    _close,
    _csv_rows,
    _parse_number,
    _read_shipped,
    _read_user_file,
    _unknown,
    data_files,
)
from optsched.catalog.profiles import _check_table, gavel_colocation, profiles
from optsched.core.instance import Cluster, Instance, Job
from optsched.errors import InvalidInstance, InvalidOption

__all__ = ["GAVEL_ROUND", "PHILLY_CLUSTER", "PHILLY_THROUGHPUTS", "SHIPPED_TRACES",
           "TRACE_FORMATS", "read_gavel_trace", "read_philly_trace", "read_tiresias_trace",
           "read_trace", "shipped_trace", "trace_draws", "trace_format"]


#: Gavel's round length in seconds (6-minute rounds; ``time_per_iteration=360``).
GAVEL_ROUND = 360.0

_TIRESIAS_SLOT = 60.0


# =========================================================================== Gavel traces
_OLD_COLUMNS = ("job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps",
                "arrival_time", "scale_factor")
_NEW_COLUMNS = ("job_type", "command", "working_directory", "num_steps_arg",
                "needs_data_dir", "total_steps", "scale_factor", "priority_weight", "SLO",
                "arrival_time")


def read_gavel_trace(path: str | Path | None = None, cluster: Cluster | str | None = None,
                     throughputs: str = "simulation", *, slot: float = GAVEL_ROUND,
                     extrapolate: bool = True, name: str | None = None) -> Instance:
    """Read a Gavel trace (tab-separated) into an :class:`~optsched.core.instance.Instance`.

    Both layouts are accepted and told apart by the column count of the first line:

    * 7 columns (older ``traces/msr`` layout): job_type, command, num_steps_arg,
      needs_data_dir, total_steps, arrival_time, scale_factor;
    * 10 columns (``utils.parse_trace``): job_type, command, working_directory,
      num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, SLO,
      arrival_time.

    Job ``i`` (0-based line order, as Gavel numbers jobs) gets id ``str(i)``, work =
    total_steps, workers = scale_factor, arrival = arrival_time, weight = priority_weight
    (1 in the older layout) and per-worker throughput from the Gavel table
    ``throughputs`` for (job_type, scale_factor), restricted to the cluster's GPU types.
    The instance carries Gavel's co-located rates of the pairs of its jobs' (job type,
    scale factor) keys on the cluster's GPU types (:func:`gavel_colocation`), which
    Gavel's packed policies use. SLO, command and data-directory columns are not used.
    Default ``path`` is the shipped
    2,000-job Philly-derived trace; default cluster ``gavel-108``; slot 360 s (Gavel's
    round).

    Gavel measured 2+ workers for 19 of its 26 job types and at most 8 workers; the
    shipped trace also has scale factors 7, 16, 20 and 32 and multi-worker jobs of
    single-worker-only types (373 of its 2,000 jobs). With ``extrapolate=True`` (default)
    those take the per-worker rates of the largest measured worker count below (see
    :meth:`Profile.per_worker`); with ``extrapolate=False`` they raise.

    A line with another column count, a non-numeric or out-of-range field or an unknown
    job type raises :class:`~optsched.errors.InvalidInstance` naming the line number.
    """
    cl = _resolve_cluster(cluster, "gavel-108")
    table = profiles(_check_table(throughputs))
    if path is None:
        text, src = _read_shipped("gavel_philly_2000.trace"), "gavel_philly_2000.trace"
    else:
        text, src = _read_user_file(path), Path(path).name
    layout: tuple[str, ...] | None = None
    first_line = 0
    jobs: list[Job] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        where = f"{src}:line {lineno}"
        if layout is None:
            if len(fields) not in (7, 10):
                raise InvalidInstance(where, line, f"expected 7 (older Gavel layout) or 10 "
                                      f"tab-separated columns, found {len(fields)}")
            layout, first_line = (_OLD_COLUMNS if len(fields) == 7 else _NEW_COLUMNS), lineno
        elif len(fields) != len(layout):
            raise InvalidInstance(where, line, f"expected {len(layout)} tab-separated columns "
                                  f"like line {first_line}, found {len(fields)}")
        row = dict(zip(layout, fields))
        job_type = row["job_type"]
        if job_type not in table:
            raise InvalidInstance(f"{where}.job_type", job_type,
                                  f"unknown Gavel job type; {_close(job_type, table)}")
        steps = _parse_number(f"{where}.total_steps", row["total_steps"], positive=True)
        sf = int(_parse_number(f"{where}.scale_factor", row["scale_factor"], integer=True,
                               positive=True))
        arrival = _parse_number(f"{where}.arrival_time", row["arrival_time"])
        weight = 1.0
        if "priority_weight" in row:
            weight = _parse_number(f"{where}.priority_weight", row["priority_weight"],
                                   positive=True)
        prof = table[job_type]
        try:
            rates = prof.per_worker(sf, extrapolate=extrapolate)
            tput = {t: rates[t] for t in cl.gpu_types if t in rates}
            jobs.append(Job(id=str(len(jobs)), arrival=arrival, workers=sf, work=steps,
                            throughput=tput, weight=weight, profile=job_type))
        except InvalidInstance as exc:
            sub = exc.path.removeprefix("job.").removeprefix("job")
            raise InvalidInstance(f"{where}.{sub or 'job'}", exc.value, exc.reason) from None
    # the measured pairs of the trace's (job type, scale factor) keys on its GPU types
    pairs = gavel_colocation(throughputs, gpu_types=cl.gpu_types,
                             keys={(str(j.profile), j.workers) for j in jobs})
    return Instance(cluster=cl, jobs=tuple(jobs), slot=slot,
                    name=name or Path(src).stem, colocation=pairs if len(pairs) else None)


# =========================================================================== Tiresias
_TIRESIAS_REQUIRED = ("job_id", "num_gpu", "submit_time", "iterations", "duration")


def read_tiresias_trace(path: str | Path | None = None, cluster: Cluster | str | None = None,
                        *, gpu_type: str | None = None, slot: float = _TIRESIAS_SLOT,
                        name: str | None = None) -> Instance:
    """Read a Tiresias trace CSV (Gu et al., NSDI'19; ``simulator/60_job.csv`` layout:
    job_id, num_gpu, submit_time, iterations, model_name, duration, interval).

    ``duration`` is the job's run time in seconds with its ``num_gpu`` GPUs to itself.
    Each job gets work = ``iterations`` and per-worker throughput
    ``iterations / duration / num_gpu``, so alone with its gang it runs for exactly
    ``duration`` seconds (the trace's ``iterations`` are not used by Tiresias' schedulers;
    here they only fix the unit of work). The trace carries no GPU-type information, so
    the same rate is given on every GPU type of the cluster, or only on ``gpu_type`` if
    given. Ids are the trace's job_id, arrivals its submit_time, profiles its model_name.
    Default path: the shipped 60-job trace; default cluster ``tiresias-n32g4``. Tiresias
    is event-driven and has no rounds; the default 60 s slot keeps the shortest job of
    the 60-job trace (121 s) longer than two slots.
    """
    cl = _resolve_cluster(cluster, "tiresias-n32g4")
    if gpu_type is not None and gpu_type not in cl.gpu_types:
        raise _unknown("gpu_type", gpu_type, cl.gpu_types)
    types = (gpu_type,) if gpu_type is not None else cl.gpu_types
    if path is None:
        text, src = _read_shipped("tiresias_60_job.csv"), "tiresias_60_job.csv"
    else:
        text, src = _read_user_file(path), Path(path).name
    reader = _csv_rows(text, src)
    _, header = next(reader, (1, None))
    if header is None:
        raise InvalidInstance(f"{src}:line 1", "", "empty file; expected a CSV header")
    header = [h.strip() for h in header]
    missing = [c for c in _TIRESIAS_REQUIRED if c not in header]
    if missing:
        raise InvalidInstance(f"{src}:line 1", ",".join(header),
                              f"missing column(s) {missing}")
    jobs: list[Job] = []
    for lineno, fields in reader:
        if not any(f.strip() for f in fields):
            continue
        where = f"{src}:line {lineno}"
        if len(fields) != len(header):
            raise InvalidInstance(where, ",".join(fields), f"expected {len(header)} "
                                  f"comma-separated columns, found {len(fields)}")
        row = {h: f.strip() for h, f in zip(header, fields)}
        if not row["job_id"]:
            raise InvalidInstance(f"{where}.job_id", row["job_id"], "must not be empty")
        gpus = int(_parse_number(f"{where}.num_gpu", row["num_gpu"], integer=True,
                                 positive=True))
        submit = _parse_number(f"{where}.submit_time", row["submit_time"])
        iters = _parse_number(f"{where}.iterations", row["iterations"], positive=True)
        duration = _parse_number(f"{where}.duration", row["duration"], positive=True)
        rate = iters / duration / gpus
        try:
            jobs.append(Job(id=row["job_id"], arrival=submit, workers=gpus, work=iters,
                            throughput=dict.fromkeys(types, rate),
                            profile=row.get("model_name") or None))
        except InvalidInstance as exc:
            sub = exc.path.removeprefix("job.").removeprefix("job")
            raise InvalidInstance(f"{where}.{sub or 'job'}", exc.value, exc.reason) from None
    return Instance(cluster=cl, jobs=tuple(jobs), slot=slot, name=name or Path(src).stem)


# =========================================================================== Philly
_PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")

#: Default cluster of :func:`read_philly_trace`. The public Philly CSV carries no machine
#: list, so the size is not the production cluster's: it is the largest cluster Tiresias'
#: public simulator ships (``n256g8.csv``: 256 servers x 8 GPUs = 2,048 GPUs), the
#: simulator whose evaluation is built on this trace. The full trace keeps on average
#: 374 of those GPUs busy (111.7 GPU-years over 109 days), 1,243 at most if every job
#: started on submission: light load; pass ``load`` > 1 for contention.
PHILLY_CLUSTER = "tiresias-n256g8"

#: Throughput models of :func:`read_philly_trace`.
PHILLY_THROUGHPUTS = ("homogeneous", "gavel")


def _philly_time(where: str, text: str) -> float:
    try:
        stamp = _dt.datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInstance(where, text, "not a date-time (YYYY-MM-DD HH:MM:SS)") from None
    return stamp.replace(tzinfo=_dt.UTC).timestamp()


def _philly_bound(name: str, value) -> float | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=value.tzinfo or _dt.UTC).timestamp()
    if isinstance(value, str):
        return _philly_time(name, value)
    raise InvalidOption(name, value, "must be a date-time string (YYYY-MM-DD[ HH:MM:SS]) "
                        "or a datetime")


def read_philly_trace(path: str | Path | None = None, cluster: Cluster | str | None = None,
                      *, start=None, end=None, vc: str | Iterable[str] | None = None,
                      jobs: int | None = None, load: float = 1.0,
                      throughputs: str = "homogeneous", seed: int = 0,
                      slot: float = GAVEL_ROUND, name: str | None = None) -> Instance:
    """Read the Philly production trace (Jeon et al., ATC'19): one job per row with its
    submit time, duration, GPU count and virtual cluster.

    Parameters
    ----------
    path : path, optional
        A CSV with the columns timestamp (``YYYY-MM-DD HH:MM:SS``), duration (s),
        num_gpus, gpu_time (GPU-seconds) and cluster (the virtual-cluster hash); default
        the shipped ``philly_jobs.csv`` (82,247 jobs submitted 2017-09-04 to
        2017-12-22).
    cluster : Cluster or str, optional
        Default :data:`PHILLY_CLUSTER`.
    start, end : str or datetime, optional
        Keep jobs submitted in ``[start, end)`` (UTC).
    vc : str or iterable of str, optional
        Keep jobs of these virtual clusters.
    jobs : int, optional
        Keep the first ``jobs`` jobs (by submit time) after the other filters.
    load : float
        Divide every arrival time by ``load`` (``2`` submits the same jobs twice as
        fast); durations are unchanged.
    throughputs : {"homogeneous", "gavel"}
        How a duration becomes work. ``"homogeneous"``: work = duration x GPUs at 1
        iteration/s per worker on every GPU type, so a job alone with its gang runs
        exactly its recorded duration anywhere (the trace records no GPU type).
        ``"gavel"``: each job gets one of Gavel's 26 job types, drawn uniformly with a
        generator seeded by ``seed``; work = duration x the gang's V100 throughput
        (Gavel's ``generate_job`` convention), per-worker rates from Gavel's table,
        extrapolated linearly beyond the measured 8 workers.
    seed : int
        Seed of the ``"gavel"`` draw.
    slot : float
        Round length (default Gavel's 360 s).
    name : str, optional
        Instance name (default ``philly`` plus the selection).

    Returns
    -------
    Instance
        Jobs ``philly-<row>`` (row in the file), arrivals relative to the first kept
        submission, ``user`` the virtual cluster.
    """
    cl = _resolve_cluster(cluster, PHILLY_CLUSTER)
    if throughputs not in PHILLY_THROUGHPUTS:
        raise _unknown("throughputs", throughputs, PHILLY_THROUGHPUTS)
    if not (isinstance(load, (int, float)) and not isinstance(load, bool) and load > 0
            and np.isfinite(load)):
        raise InvalidOption("load", load, "must be a finite number > 0")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise InvalidOption("jobs", jobs, "must be an integer >= 1")
    lo, hi = _philly_bound("start", start), _philly_bound("end", end)
    vcs = None if vc is None else ({vc} if isinstance(vc, str) else set(vc))
    if path is None:
        text, src = _read_shipped("philly_jobs.csv"), "philly_jobs.csv"
    else:
        text, src = _read_user_file(path), Path(path).name
    reader = _csv_rows(text, src)
    _, header = next(reader, (1, None))
    if header is None:
        raise InvalidInstance(f"{src}:line 1", "", "empty file; expected a CSV header")
    header = [h.strip() for h in header]
    missing = [c for c in _PHILLY_COLUMNS if c not in header]
    if missing:
        raise InvalidInstance(f"{src}:line 1", ",".join(header),
                              f"missing column(s) {missing}")
    col = {c: header.index(c) for c in _PHILLY_COLUMNS}
    rows: list[tuple[float, int, int, float, str]] = []
    for lineno, fields in reader:
        if not any(f.strip() for f in fields):
            continue
        where = f"{src}:line {lineno}"
        if len(fields) != len(header):
            raise InvalidInstance(where, ",".join(fields), f"expected {len(header)} "
                                  f"comma-separated columns, found {len(fields)}")
        submit = _philly_time(f"{where}.timestamp", fields[col["timestamp"]].strip())
        if (lo is not None and submit < lo) or (hi is not None and submit >= hi):
            continue
        vch = fields[col["cluster"]].strip()
        if vcs is not None and vch not in vcs:
            continue
        gpus = int(_parse_number(f"{where}.num_gpus", fields[col["num_gpus"]], integer=True,
                                 positive=True))
        duration = _parse_number(f"{where}.duration", fields[col["duration"]], positive=True)
        rows.append((submit, lineno - 2, gpus, duration, vch))
    if not rows:
        raise InvalidInstance(src, {"start": start, "end": end, "vc": vc},
                              "no job of the trace matches the selection")
    rows.sort(key=lambda r: (r[0], r[1]))
    if jobs is not None:
        rows = rows[:jobs]
    t0 = rows[0][0]
    types = cl.gpu_types
    table = list(profiles().values()) if throughputs == "gavel" else []
    rng = np.random.default_rng(seed)
    out: list[Job] = []
    for submit, row, gpus, duration, vch in rows:
        arrival = (submit - t0) / load
        if throughputs == "homogeneous":
            tput = dict.fromkeys(types, 1.0)
            work, prof = duration * gpus, None
        else:
            p = table[int(rng.integers(len(table)))]
            rates = p.per_worker(gpus, extrapolate=True)
            tput = {t: r for t, r in rates.items() if t in types and r > 0}
            work, prof = duration * gpus * rates["v100"], p.name
        out.append(Job(id=f"philly-{row}", arrival=arrival, workers=gpus, work=work,
                       throughput=tput, user=vch or None, profile=prof))
    label = name or "philly" + (f"-{len(out)}" if jobs or lo or hi or vcs else "") + \
        (f"-load{load:g}" if load != 1 else "")
    return Instance(cluster=cl, jobs=tuple(out), slot=slot, name=label)


#: The traces shipped in ``models/``: name -> (reader, file). Their default clusters are
#: the readers' (Gavel's 108-GPU cluster; Tiresias' n32g4).
SHIPPED_TRACES: Mapping[str, tuple[str, str]] = MappingProxyType({
    "gavel-philly-2000": ("gavel", "gavel_philly_2000.trace"),
    "gavel-artifact-15": ("gavel", "gavel_artifact_15.trace"),
    "tiresias-60": ("tiresias", "tiresias_60_job.csv"),
    "philly": ("philly", "philly_jobs.csv"),
})


def shipped_trace(name: str, cluster: Cluster | str | None = None) -> Instance:
    """One of :data:`SHIPPED_TRACES` as an instance (on ``cluster`` if given)."""
    if name not in SHIPPED_TRACES:
        raise _unknown("trace", name, SHIPPED_TRACES)
    kind, file = SHIPPED_TRACES[name]
    with resources.as_file(data_files() / file) as path:
        if kind == "tiresias":
            return read_tiresias_trace(path, cluster=cluster, name=name)
        if kind == "philly":
            return read_philly_trace(path, cluster=cluster, name=name)
        return read_gavel_trace(path, cluster=cluster, name=name)


#: The trace layouts :func:`read_trace` reads.
TRACE_FORMATS = ("gavel", "tiresias", "philly")


def trace_format(path: str | Path) -> str:
    """The layout of a trace file: a CSV whose header names ``timestamp`` and
    ``num_gpus`` is Philly's, any other CSV Tiresias', anything else Gavel's."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        return "gavel"
    with open(path, encoding="utf-8", errors="replace") as fh:
        head = fh.readline()
    cols = {c.strip() for c in head.split(",")}
    return "philly" if {"timestamp", "num_gpus"} <= cols else "tiresias"


def trace_draws(source: str | Path, fmt: str | None = None, **options) -> str:
    """What a trace reader draws at random for ``options`` (the keywords of
    :func:`read_trace`), or ``""`` when the instance is fixed by the file.

    Only Philly's reader draws: with ``throughputs="gavel"`` each job's Gavel job type
    is drawn with ``numpy.random.default_rng(seed)``. Every other reader (Gavel's,
    Tiresias') and Philly's ``"homogeneous"`` model read the same instance whatever the
    seed. A ``seed`` among ``options`` fixes the draw: the trace is then not random
    either (a caller that seeds it itself passes no ``seed``).
    """
    if fmt is not None and fmt not in TRACE_FORMATS:
        raise _unknown("fmt", fmt, TRACE_FORMATS)
    name = str(source)
    if fmt is None:
        if name in SHIPPED_TRACES and not Path(name).exists():
            fmt = SHIPPED_TRACES[name][0]
        elif Path(name).is_file():
            fmt = trace_format(name)
        else:
            fmt = "gavel"
    if fmt == "philly" and options.get("throughputs") == "gavel" and "seed" not in options:
        return "each job's Gavel job type (throughputs='gavel')"
    return ""


def read_trace(source: str | Path, cluster: Cluster | str | None = None, *,
               fmt: str | None = None, jobs: int | None = None, load: float = 1.0,
               **options) -> Instance:
    """A trace by shipped name (:data:`SHIPPED_TRACES`) or file path, its first ``jobs``
    jobs, arrivals divided by ``load`` (``2``: the same jobs arrive twice as fast).

    ``fmt`` is one of :data:`TRACE_FORMATS` (default: the shipped trace's, or
    :func:`trace_format` of the file); ``options`` go to the format's reader (e.g.
    ``throughputs="gavel"`` for Philly's).
    """
    if fmt is not None and fmt not in TRACE_FORMATS:
        raise _unknown("fmt", fmt, TRACE_FORMATS)
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise InvalidOption("jobs", jobs, "must be an integer >= 1")
    if isinstance(load, bool) or not isinstance(load, (int, float)) or not (
            load > 0 and np.isfinite(load)):
        raise InvalidOption("load", load, "must be a finite number > 0")
    name = str(source)
    if name in SHIPPED_TRACES and not Path(name).exists():
        kind, file = SHIPPED_TRACES[name]
        if kind != "philly":  # Philly's reader names its selection itself
            options.setdefault("name", name)
        with resources.as_file(data_files() / file) as path:
            return read_trace(path, cluster, fmt=fmt or kind, jobs=jobs, load=load,
                              **options)
    path = Path(source)
    if not path.exists():
        raise InvalidOption("trace", name, "no such file, nor a shipped trace "
                            f"({', '.join(SHIPPED_TRACES)})")
    fmt = fmt or trace_format(path)
    if fmt == "philly":  # the reader selects and scales while it reads
        return read_philly_trace(path, cluster, jobs=jobs, load=load, **options)
    reader = read_tiresias_trace if fmt == "tiresias" else read_gavel_trace
    inst = reader(path, cluster, **options)
    if jobs is not None and inst.n_jobs > jobs:
        inst = inst.replace(jobs=inst.jobs[:jobs], name=f"{inst.name}-first{jobs}")
    if load != 1:
        inst = inst.replace(jobs=tuple(replace(j, arrival=j.arrival / load) for j in inst.jobs),
                            name=f"{inst.name}-load{load:g}")
    return inst
