"""Trace readers: Gavel's two layouts, Tiresias' CSV, and the shipped traces."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from types import MappingProxyType

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
from optsched.catalog.profiles import _check_table, profiles
from optsched.core.instance import Cluster, Instance, Job
from optsched.errors import InvalidInstance

__all__ = ["GAVEL_ROUND", "SHIPPED_TRACES", "read_gavel_trace", "read_tiresias_trace",
           "shipped_trace"]


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
    SLO, command and data-directory columns are not used. Default ``path`` is the shipped
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
    return Instance(cluster=cl, jobs=tuple(jobs), slot=slot,
                    name=name or Path(src).stem)


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


#: The traces shipped in ``models/``: name -> (reader, file). Their default clusters are
#: the readers' (Gavel's 108-GPU cluster; Tiresias' n32g4).
SHIPPED_TRACES: Mapping[str, tuple[str, str]] = MappingProxyType({
    "gavel-philly-2000": ("gavel", "gavel_philly_2000.trace"),
    "gavel-artifact-15": ("gavel", "gavel_artifact_15.trace"),
    "tiresias-60": ("tiresias", "tiresias_60_job.csv"),
})


def shipped_trace(name: str, cluster: Cluster | str | None = None) -> Instance:
    """One of :data:`SHIPPED_TRACES` as an instance (on ``cluster`` if given)."""
    if name not in SHIPPED_TRACES:
        raise _unknown("trace", name, SHIPPED_TRACES)
    kind, file = SHIPPED_TRACES[name]
    reader = read_tiresias_trace if kind == "tiresias" else read_gavel_trace
    with resources.as_file(data_files() / file) as path:
        return reader(path, cluster=cluster, name=name)
