"""Workload catalog: measured job profiles, published traces, cluster presets, generators.

Everything here reads the data files shipped inside the installed package
(``optsched.catalog_data``, the repository's ``models/`` folder) through
:func:`importlib.resources.files`, so it works from a wheel as well as from a checkout.
``models/README.md`` names the source repository, path and license of every file.

Sources
-------
* **Gavel** (Narayanan et al., "Heterogeneity-Aware Cluster Scheduling Policies for Deep
  Learning Workloads", OSDI'20, §7; code ``stanford-futuredata/gavel``, MIT): measured
  throughputs of 26 job types on K80/P100/V100 for 1/2/4/8 workers, the Philly-derived
  2,000-job trace, the 15-job artifact trace, the job generator (``utils.generate_job``)
  and the 6-minute (360 s) round.
* **Synergy** (Mohan et al., "Looking Beyond GPUs for DNN Scheduling on Multi-Tenant
  Clusters", OSDI'22; code ``msr-fiddle/synergy``, MIT): CPU x DRAM sensitivity matrices
  and the 8-GPU / 24-core / 500 GB servers.
* **Tiresias** (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
  Learning", NSDI'19; code ``SymbioticLab/Tiresias``, Apache-2.0): the 60-job trace, the
  cluster specs and the 1,001 production GPU-time samples used by 2D-Gittins.
* **Salus** (Yu & Chowdhury, "Fine-Grained GPU Sharing Primitives for Deep Learning
  Applications", MLSys'20; code ``SymbioticLab/Salus``, Apache-2.0): JCT, peak GPU memory
  and iterations of 99 TensorFlow training runs, plus the peak memory the paper reports.

Units follow :mod:`optsched.core.instance`: seconds, iterations, and throughput in iterations
per second **per worker**. Gavel measures the throughput of the *whole job* (all its
workers); the catalog divides by the number of workers, so a gang of ``W`` workers with
per-worker rate ``r`` makes ``W * r`` iterations per second, which is exactly Gavel's
measured job throughput.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import math
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from optsched.core.instance import Cluster, Instance, Job, Node, Sensitivity
from optsched.core.jsonio import read_text
from optsched.errors import InvalidInstance, InvalidOption, UnknownName

__all__ = [
    "DATA_PACKAGE",
    "GAVEL_GPU_TYPES",
    "GAVEL_ROUND",
    "GAVEL_SCALE_FACTORS",
    "GPU_MEMORY_GB",
    "PHILLY_WORKER_PROBABILITIES",
    "PRESETS",
    "THROUGHPUT_TABLES",
    "Profile",
    "SalusWorkload",
    "SynergyProfile",
    "cluster_preset",
    "data_files",
    "generate_philly",
    "generate_single_worker",
    "job_from_profile",
    "profile",
    "profiles",
    "SHIPPED_TRACES",
    "read_gavel_trace",
    "shipped_trace",
    "read_tiresias_trace",
    "salus_published",
    "salus_workloads",
    "synergy_profiles",
    "tiresias_gpu_time_samples",
]

DATA_PACKAGE = "optsched.catalog_data"

#: GPU types of Gavel's measurements.
GAVEL_GPU_TYPES = ("k80", "p100", "v100")
#: Scale factors (workers per job) Gavel measured.
GAVEL_SCALE_FACTORS = (1, 2, 4, 8)
#: Gavel's round length in seconds (6-minute rounds; ``time_per_iteration=360``).
GAVEL_ROUND = 360.0
#: Names of the two Gavel throughput tables.
THROUGHPUT_TABLES = ("simulation", "physical")

#: Memory of one GPU, GB. K80: 12 GB per GK210 die (a K80 board holds two dies, and Gavel
#: schedules each die as one GPU). P100: the 16 GB variant. V100: 16 GB, the variant of
#: AWS p3 instances; Gavel and Synergy do not model GPU memory and Synergy's paper does
#: not state the variant, so 16 GB is used for every preset.
GPU_MEMORY_GB: Mapping[str, float] = MappingProxyType({"k80": 12.0, "p100": 16.0,
                                                       "v100": 16.0})

#: Workers per job in Gavel's Philly-derived generator (``utils._generate_scale_factor``):
#: 1, 2, 4, 8 with probability 0.70, 0.10, 0.15, 0.05.
PHILLY_WORKER_PROBABILITIES: Mapping[int, float] = MappingProxyType(
    {1: 0.70, 2: 0.10, 4: 0.15, 8: 0.05})

#: Names accepted by :func:`cluster_preset`.
PRESETS = ("gavel-108", "gavel-physical", "synergy-128", "synergy-512", "tiresias-n32g4",
           "tiresias-n256g8")

_GAVEL_NODE_GPUS = 4
_TIRESIAS_GPU_TYPE = "p100"
_TIRESIAS_SLOT = 60.0


# =========================================================================== data access
def data_files() -> Traversable:
    """The folder of shipped catalog files (``importlib.resources.files(DATA_PACKAGE)``).

    When optsched is imported from a source checkout rather than from its installation
    (``python -m optsched.cli`` run in the repository root puts the checkout first on
    ``sys.path``), ``optsched.catalog_data`` does not exist as a module: the catalog is
    then the checkout's ``models/`` folder, the very files the installation ships.
    """
    try:
        return resources.files(DATA_PACKAGE)
    except ModuleNotFoundError:
        checkout = Path(__file__).resolve().parent.parent / "models"
        if (checkout / "README.md").is_file() and (checkout / "__init__.py").is_file():
            return checkout
        raise


def _read_shipped(name: str) -> str:
    return (data_files() / name).read_text(encoding="utf-8")


def _read_user_file(path: str | Path) -> str:
    return read_text(path, InvalidInstance)


def _close(value: Any, choices: Iterable[str]) -> str:
    """'did you mean ...' text from difflib (case-insensitive), plus the known names."""
    choices = list(choices)
    lower = {c.lower(): c for c in choices}
    hits = difflib.get_close_matches(str(value).lower(), list(lower), n=3, cutoff=0.5)
    text = ""
    if hits:
        text = "did you mean " + " or ".join(repr(lower[h]) for h in hits) + "? "
    shown = ", ".join(repr(c) for c in choices[:30])
    more = f", ... ({len(choices)} in all)" if len(choices) > 30 else ""
    return f"{text}known: {shown}{more}"


def _unknown(field: str, value: Any, choices: Iterable[str]) -> UnknownName:
    return UnknownName(field, value, f"unknown {field}; {_close(value, choices)}")


def _check_table(throughputs: str) -> str:
    if throughputs not in THROUGHPUT_TABLES:
        raise _unknown("throughputs", throughputs, THROUGHPUT_TABLES)
    return throughputs


# =========================================================================== Gavel profiles
@dataclass(frozen=True)
class Profile:
    """Isolated throughput of one Gavel job type (Gavel OSDI'20, Table 2 and §7).

    ``throughput[w][gpu_type]`` is iterations/s **per worker** when the job runs with
    ``w`` workers all on one server (Gavel's "consolidated" placement); it equals Gavel's
    measured job throughput divided by ``w``. ``throughput_unconsolidated`` is the same
    for workers spread over servers. A value of 0 means Gavel measured 0 (the job cannot
    run there, e.g. ResNet-50 with batch 128 on K80 for 2+ workers) or did not measure it.
    ``throughput`` lists exactly the worker counts Gavel measured for this job type.
    """

    name: str
    family: str
    batch_size: int | None
    throughput: Mapping[int, Mapping[str, float]]
    throughput_unconsolidated: Mapping[int, Mapping[str, float]]
    source: str

    @property
    def scale_factors(self) -> tuple[int, ...]:
        """Worker counts Gavel measured for this job type."""
        return tuple(sorted(self.throughput))

    def per_worker(self, workers: int, *, extrapolate: bool = False) -> Mapping[str, float]:
        """Per-worker throughput per GPU type for a gang of ``workers``.

        With ``extrapolate=False`` an unmeasured worker count raises
        :class:`~optsched.errors.InvalidInstance`. With ``extrapolate=True`` it takes the
        per-worker rates of the largest measured worker count not above ``workers``
        (linear scaling beyond the measurements, e.g. 16 workers run at 16x the
        per-worker rate measured with 8).
        """
        if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) \
                or workers < 1:
            raise InvalidInstance("workers", workers, "must be an integer >= 1")
        workers = int(workers)
        if workers in self.throughput:
            return self.throughput[workers]
        if not extrapolate:
            raise InvalidInstance("workers", workers,
                                  f"profile {self.name!r} is measured with "
                                  f"{list(self.scale_factors)} workers only")
        base = max(s for s in self.scale_factors if s <= workers)
        return self.throughput[base]

    def job_throughput(self, workers: int, gpu_type: str, *,
                       extrapolate: bool = False) -> float:
        """Iterations/s of the whole gang of ``workers`` on ``gpu_type`` (0 if it cannot)."""
        return workers * self.per_worker(workers, extrapolate=extrapolate).get(gpu_type, 0.0)


_BATCH_RE = re.compile(r"^(?P<family>.+?) \(batch size (?P<batch>\d+)\)$")


@lru_cache(maxsize=1)
def _gavel_table() -> dict[str, Any]:
    return json.loads(_read_shipped("gavel_throughputs.json"))


def _per_worker_map(rows: Mapping[str, Mapping[str, float | None]]
                    ) -> Mapping[int, Mapping[str, float]]:
    out = {}
    for sf_text, row in sorted(rows.items(), key=lambda kv: int(kv[0])):
        sf = int(sf_text)
        out[sf] = MappingProxyType({t: (0.0 if row.get(t) is None else float(row[t]) / sf)
                                    for t in GAVEL_GPU_TYPES})
    return MappingProxyType(out)


@lru_cache(maxsize=len(THROUGHPUT_TABLES))
def _profiles(throughputs: str) -> tuple[Profile, ...]:
    table = _gavel_table()["tables"][throughputs]
    source = f"Gavel (OSDI'20) {table['source']}"
    out = []
    for name, entry in table["job_types"].items():
        m = _BATCH_RE.match(name)
        family, batch = (m["family"], int(m["batch"])) if m else (name, None)
        out.append(Profile(name=name, family=family, batch_size=batch,
                           throughput=_per_worker_map(entry["consolidated"]),
                           throughput_unconsolidated=_per_worker_map(entry["unconsolidated"]),
                           source=source))
    return tuple(out)


def profiles(throughputs: str = "simulation") -> dict[str, Profile]:
    """All 26 Gavel job types by name, from the ``"simulation"`` or ``"physical"`` table.

    Names are Gavel's, e.g. ``"ResNet-50 (batch size 64)"``, ``"A3C"``, ``"CycleGAN"``.
    """
    return {p.name: p for p in _profiles(_check_table(throughputs))}


def profile(name: str, throughputs: str = "simulation") -> Profile:
    """One Gavel job type; an unknown name raises :class:`~optsched.errors.UnknownName`
    listing the closest names."""
    table = profiles(throughputs)
    try:
        return table[name]
    except (KeyError, TypeError):
        raise _unknown("profile", name, table) from None


def job_from_profile(profile_name: str, id: str, arrival: float, workers: int,
                     work: float | None = None, duration: float | None = None,
                     reference_type: str = "v100", weight: float = 1.0,
                     user: str | None = None, gpu_types: Iterable[str] | None = None,
                     *, throughputs: str = "simulation", extrapolate: bool = False) -> Job:
    """A :class:`~optsched.core.instance.Job` of a Gavel job type.

    Give exactly one of ``work`` (iterations) and ``duration`` (seconds): with
    ``duration`` the work is ``duration`` x the job's throughput on ``reference_type``
    with its ``workers`` (Gavel ``utils.generate_job``: steps = run time x V100
    throughput), so the job takes ``duration`` seconds alone on that GPU type.
    ``gpu_types`` restricts the throughput map (usually to ``cluster.gpu_types``);
    GPU types the profile does not know are left out, which means the job cannot run
    there. ``extrapolate`` is passed to :meth:`Profile.per_worker`.
    """
    prof = profile(profile_name, throughputs)
    if (work is None) == (duration is None):
        raise InvalidOption("work/duration", {"work": work, "duration": duration},
                            "give exactly one of work and duration")
    rates = prof.per_worker(workers, extrapolate=extrapolate)
    if duration is not None:
        if reference_type not in rates:
            raise _unknown("reference_type", reference_type, GAVEL_GPU_TYPES)
        if isinstance(duration, bool) or not isinstance(duration, (int, float, np.number)) \
                or not math.isfinite(duration) or duration <= 0:
            raise InvalidInstance("duration", duration, "must be a finite number > 0")
        ref = rates[reference_type]
        if ref <= 0:
            raise InvalidInstance("reference_type", reference_type,
                                  f"profile {prof.name!r} has throughput 0 on "
                                  f"{reference_type} with {workers} workers")
        work = float(duration) * workers * ref
    tput = dict(rates)
    if gpu_types is not None:
        wanted = list(gpu_types)
        tput = {t: rates[t] for t in wanted if t in rates}
        if not tput:
            raise InvalidInstance("gpu_types", wanted,
                                  f"none of these GPU types is measured for {prof.name!r}; "
                                  f"measured: {list(rates)}")
    return Job(id=id, arrival=arrival, workers=workers, work=work, throughput=tput,
               weight=weight, user=user, profile=prof.name)


# =========================================================================== Synergy
@dataclass(frozen=True)
class SynergyProfile:
    """CPU x DRAM sensitivity of one Synergy model (Mohan et al., OSDI'22, §3).

    ``sensitivity.throughput[c][m]`` is per-GPU throughput relative to the
    GPU-proportional share (3 cores and 62.5 GB per GPU = 1.0). ``iter_time`` is seconds
    per iteration at that share, ``speedup`` the peak relative throughput, reached at
    ``sensitivity.best_cpu`` cores and ``sensitivity.best_memory`` GB per GPU. The name's
    suffix is the GPU count (``res18_2`` = ResNet-18 on 2 GPUs).
    """

    name: str
    model: str
    gpus: int
    sensitivity: Sensitivity
    iter_time: float
    speedup: float
    batch_size: int
    source: str


@lru_cache(maxsize=1)
def _synergy() -> tuple[SynergyProfile, ...]:
    raw = json.loads(_read_shipped("synergy_profiles.json"))
    cpu_grid = tuple(float(c) for c in raw["cpu_per_gpu_grid"])
    mem_grid = tuple(float(m) for m in raw["mem_gb_per_gpu_grid"])
    out = []
    for name, m in raw["models"].items():
        tput = m["tput"]
        ncol = len(tput[0])
        # Multi-GPU models have 4 memory columns: Synergy dropped the 20.83 GB column
        # (m5_2's rows equal m5_1's rows without their first entry).
        grid = mem_grid if ncol == len(mem_grid) else mem_grid[len(mem_grid) - ncol:]
        sens = Sensitivity(cpu_grid=cpu_grid, memory_grid=grid,
                           throughput=tuple(tuple(float(v) for v in row) for row in tput),
                           best_cpu=float(m["cpus"]), best_memory=float(m["mem"]))
        out.append(SynergyProfile(name=name, model=name.rsplit("_", 1)[0],
                                  gpus=int(m["gpus"]), sensitivity=sens,
                                  iter_time=float(m["iter_time"]),
                                  speedup=float(m["speedup"]), batch_size=int(m["batch"]),
                                  source=f"Synergy (OSDI'22) {raw['source']}"))
    return tuple(out)


def synergy_profiles() -> dict[str, SynergyProfile]:
    """The 33 Synergy model profiles by name (``alexnet_1`` ... ``vae_1``)."""
    return {p.name: p for p in _synergy()}


# =========================================================================== Salus
@dataclass(frozen=True)
class SalusWorkload:
    """One Salus training run (Yu & Chowdhury, MLSys'20): JCT (s), peak GPU memory (MB),
    iterations. ``name`` is ``<model>_<batch>_<variant>`` as in Salus'
    ``tests/workloads.csv``, kept verbatim (one row is named ``vgg16_100_1min`` although
    its JCT, 617 s, is that of the 10-minute run; see models/README.md)."""

    name: str
    model: str
    batch_size: int
    variant: str
    jct_s: float
    peak_mem_mb: float
    iterations: int


_SALUS_RE = re.compile(r"^(?P<model>[a-z0-9]+)_(?P<batch>\d+)_(?P<variant>\w+)$")


@lru_cache(maxsize=1)
def _salus() -> tuple[SalusWorkload, ...]:
    rows = csv.DictReader(io.StringIO(_read_shipped("salus_workloads.csv")))
    out = []
    for row in rows:
        m = _SALUS_RE.match(row["name"])
        if m is None:  # pragma: no cover - shipped data is checked by the tests
            raise InvalidInstance("salus_workloads.csv.name", row["name"],
                                  "expected <model>_<batch>_<variant>")
        out.append(SalusWorkload(name=row["name"], model=m["model"],
                                 batch_size=int(m["batch"]), variant=m["variant"],
                                 jct_s=float(row["jct_s"]),
                                 peak_mem_mb=float(row["peak_mem_mb"]),
                                 iterations=int(row["iterations"])))
    return tuple(out)


def salus_workloads() -> list[SalusWorkload]:
    """The 99 Salus training runs, in file order."""
    return list(_salus())


def salus_published() -> dict[str, float]:
    """Peak GPU memory (MB) per model as published in Salus (MLSys'20): VAE 28,
    Super Resolution 529, Deep Speech 3993, Inception4 11355."""
    raw = json.loads(_read_shipped("salus_published.json"))
    return {k: float(v) for k, v in raw["peak_memory_mb"].items()}


# =========================================================================== clusters
def _typed_nodes(counts: Mapping[str, int], per_node: int) -> tuple[Node, ...]:
    nodes = []
    for gpu_type, count in counts.items():
        for i in range(count // per_node):
            nodes.append(Node(name=f"{gpu_type}-{i:02d}", gpus={gpu_type: per_node},
                              gpu_memory={gpu_type: GPU_MEMORY_GB[gpu_type]}))
    return tuple(nodes)


def _synergy_cluster(servers: int) -> Cluster:
    return Cluster(tuple(Node(name=f"server-{i:02d}", gpus={"v100": 8}, cpus=24.0,
                              memory=500.0, gpu_memory={"v100": GPU_MEMORY_GB["v100"]})
                         for i in range(servers)))


def _tiresias_cluster(file: str) -> Cluster:
    rows = list(csv.DictReader(io.StringIO(_read_shipped(file))))
    spec = rows[0]
    switches, per_switch = int(spec["num_switch"]), int(spec["num_node_p_switch"])
    gpus, cpus, mem = (int(spec["num_gpu_p_node"]), float(spec["num_cpu_p_node"]),
                       float(spec["mem_p_node"]))
    t = _TIRESIAS_GPU_TYPE
    return Cluster(tuple(Node(name=f"sw{s}-n{n:02d}", gpus={t: gpus}, cpus=cpus, memory=mem,
                              gpu_memory={t: GPU_MEMORY_GB[t]})
                         for s in range(switches) for n in range(per_switch)))


@lru_cache(maxsize=len(PRESETS))
def _preset(name: str) -> Cluster:
    if name == "gavel-108":
        return Cluster(_typed_nodes({"v100": 36, "p100": 36, "k80": 36}, _GAVEL_NODE_GPUS))
    if name == "gavel-physical":
        return Cluster(_typed_nodes({"v100": 8, "p100": 16, "k80": 24}, _GAVEL_NODE_GPUS))
    if name == "synergy-128":
        return _synergy_cluster(16)
    if name == "synergy-512":
        return _synergy_cluster(64)
    if name == "tiresias-n32g4":
        return _tiresias_cluster("tiresias_n32g4.csv")
    return _tiresias_cluster("tiresias_n256g8.csv")


def cluster_preset(name: str) -> Cluster:
    """A cluster from the papers' evaluations; ``name`` is one of :data:`PRESETS`.

    * ``gavel-108``: Gavel's simulated cluster, 36 V100 + 36 P100 + 36 K80 (OSDI'20 §7),
      as 9 nodes of 4 GPUs per type. Gavel's simulator takes GPUs per server as a
      parameter; 4 of one type per node is the shape used here.
    * ``gavel-physical``: Gavel's physical cluster, 8 V100 + 16 P100 + 24 K80, nodes of
      4 GPUs of one type (2 + 4 + 6 nodes).
    * ``synergy-128`` / ``synergy-512``: 16 / 64 Synergy servers of 8 V100, 24 cores,
      500 GB DRAM (OSDI'22 evaluation; ``configs/default_cluster.ini``,
      ``philly_cluster.ini``).
    * ``tiresias-n32g4``: Tiresias ``n32g4.csv``, 32 nodes x 4 GPUs, 40 cores, 256 GB
      (128 GPUs); ``tiresias-n256g8``: ``n256g8.csv``, 8 switches x 32 nodes x 8 GPUs,
      64 cores, 256 GB (2,048 GPUs). The specs name no GPU type; the Tiresias testbed
      had P100s (NSDI'19: 60 P100 GPUs), so the type is ``"p100"``.

    Gavel presets have no CPU or DRAM capacity (0: Gavel does not model them). GPU
    memory per type is :data:`GPU_MEMORY_GB`. Unknown names raise
    :class:`~optsched.errors.UnknownName`.
    """
    if name not in PRESETS:
        raise _unknown("preset", name, PRESETS)
    return _preset(name)


def _resolve_cluster(cluster: Cluster | str | None, default: str) -> Cluster:
    if cluster is None:
        return cluster_preset(default)
    if isinstance(cluster, str):
        return cluster_preset(cluster)
    if isinstance(cluster, Cluster):
        return cluster
    raise InvalidOption("cluster", cluster, "must be a Cluster or a preset name")


# =========================================================================== Gavel traces
_OLD_COLUMNS = ("job_type", "command", "num_steps_arg", "needs_data_dir", "total_steps",
                "arrival_time", "scale_factor")
_NEW_COLUMNS = ("job_type", "command", "working_directory", "num_steps_arg",
                "needs_data_dir", "total_steps", "scale_factor", "priority_weight", "SLO",
                "arrival_time")


def _parse_number(where: str, text: str, *, integer: bool = False, positive: bool = False
                  ) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InvalidInstance(where, text, "not a number") from None
    if not math.isfinite(value):
        raise InvalidInstance(where, text, "must be finite")
    if integer and not value.is_integer():
        raise InvalidInstance(where, text, "must be an integer")
    if positive and value <= 0:
        raise InvalidInstance(where, text, "must be > 0")
    if value < 0:
        raise InvalidInstance(where, text, "must be >= 0")
    return value


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


def _csv_rows(text: str, src: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each CSV record; a malformed record (e.g. a field past
    the csv module's size limit) raises InvalidInstance naming its line."""
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InvalidInstance(f"{src}:line {reader.line_num}", src,
                                  f"not valid CSV: {exc}") from None
        yield reader.line_num, fields


def tiresias_gpu_time_samples() -> np.ndarray:
    """Job GPU-time samples (GPU-seconds) from a production cluster, the distribution
    Tiresias' 2D-Gittins index uses (``simulator/yarn-gput1000.csv``; 1,001 values)."""
    lines = _read_shipped("tiresias_yarn-gput1000.csv").splitlines()
    return np.array([float(x) for x in lines[1:] if x.strip()], dtype=float)


# =========================================================================== generator
def _check_count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidOption(name, value, f"must be an integer >= {minimum}")
    return int(value)


def generate_philly(n_jobs: int, cluster: Cluster | str = "gavel-108", seed: int = 0,
                    jobs_per_hour: float | None = None,
                    profiles: Sequence[str] | None = None,
                    throughputs: str = "simulation", *, max_workers: int | None = None,
                    reference_type: str = "v100", slot: float = GAVEL_ROUND,
                    name: str | None = None) -> Instance:
    """Random jobs with Gavel's Philly-derived distributions (Gavel OSDI'20 §7,
    ``scheduler/utils.py: generate_job``).

    * Run time: ``60 * 10**U(1.5, 3)`` s with probability 0.8, else ``60 * 10**U(3, 4)`` s.
    * Workers: 1, 2, 4, 8 with probability 0.70, 0.10, 0.15, 0.05
      (:data:`PHILLY_WORKER_PROBABILITIES`).
    * Job type: uniform over ``profiles`` (default: all 26 Gavel job types) measured
      with that many workers, as Gavel only picks distributed types for 2+ workers.
    * Work: run time x the job's throughput on ``reference_type`` (V100) with its
      workers, so the job runs for its drawn run time alone on that GPU type.
    * Arrivals: job 0 at time 0, then exponential gaps of mean ``3600 / jobs_per_hour`` s
      (a Poisson process); ``jobs_per_hour=None`` puts every arrival at 0.

    Oversize jobs: a (workers, job type) pair is only drawn if the cluster can host it,
    i.e. ``workers`` is at most the cluster's GPUs of the types where the type's rate is
    positive. Job types that cannot be hosted are left out of the uniform choice; a
    worker count for which no type is left is removed from the worker distribution and
    the other probabilities are renormalised (the same as redrawing it), with a
    :class:`UserWarning` saying so. ``max_workers`` caps the worker count the same way but
    silently, as the caller asked for it (``max_workers=1``: single-worker jobs, e.g. for
    AlloX). No drawn job is ever dropped: the instance has exactly ``n_jobs`` jobs.

    The random streams (workers, run times, job types, arrivals) come from
    ``numpy.random.SeedSequence(seed).spawn(4)``, so a seed always gives the same instance
    and changing ``jobs_per_hour`` changes only the arrivals.
    """
    n_jobs = _check_count("n_jobs", n_jobs, 0)
    seed = _check_count("seed", seed, 0)
    cl = _resolve_cluster(cluster, "gavel-108")
    table = {p.name: p for p in _profiles(_check_table(throughputs))}
    if jobs_per_hour is not None:
        if isinstance(jobs_per_hour, bool) or not isinstance(jobs_per_hour, (int, float)) \
                or not math.isfinite(jobs_per_hour) or jobs_per_hour <= 0:
            raise InvalidOption("jobs_per_hour", jobs_per_hour,
                                "must be a finite number > 0 or None")
    if max_workers is not None:
        max_workers = _check_count("max_workers", max_workers, 1)
    if reference_type not in GAVEL_GPU_TYPES:
        raise _unknown("reference_type", reference_type, GAVEL_GPU_TYPES)
    if profiles is None:
        chosen = list(table.values())
    else:
        if isinstance(profiles, str):
            raise InvalidOption("profiles", profiles, "must be a list of profile names")
        chosen = [profile(p, throughputs) for p in profiles]
        if not chosen:
            raise InvalidOption("profiles", profiles, "must name at least one profile")

    per_type = cl.gpus_per_type

    def hostable(prof: Profile, sf: int) -> bool:
        rates = prof.throughput[sf]
        usable = sum(per_type.get(t, 0) for t, r in rates.items() if r > 0)
        return rates[reference_type] > 0 and sf <= usable

    sfs, probs, candidates, dropped = [], [], [], []
    for sf, p in PHILLY_WORKER_PROBABILITIES.items():
        if max_workers is not None and sf > max_workers:
            continue
        fits = [prof for prof in chosen if sf in prof.throughput and hostable(prof, sf)]
        if fits:
            sfs.append(sf)
            probs.append(p)
            candidates.append(fits)
        elif any(sf in prof.throughput for prof in chosen):
            dropped.append(sf)
    if not sfs:
        raise InvalidOption("cluster", [n.name for n in cl.nodes],
                            "none of the chosen job types can run on this cluster with an "
                            "allowed worker count")
    if dropped:
        warnings.warn(f"generate_philly: the cluster cannot host any chosen job type with "
                      f"{dropped} workers; worker counts are drawn from {sfs} with "
                      f"renormalised probabilities", UserWarning, stacklevel=2)
    p_arr = np.array(probs) / sum(probs)

    rng_sf, rng_dur, rng_type, rng_arr = (np.random.default_rng(s)
                                          for s in np.random.SeedSequence(seed).spawn(4))
    sf_idx = rng_sf.choice(len(sfs), size=n_jobs, p=p_arr)
    long_job = rng_dur.random(n_jobs) >= 0.8
    short_exp = rng_dur.uniform(1.5, 3.0, n_jobs)
    long_exp = rng_dur.uniform(3.0, 4.0, n_jobs)
    durations = 60.0 * 10.0 ** np.where(long_job, long_exp, short_exp)
    type_u = rng_type.random(n_jobs)
    if jobs_per_hour is None:
        arrivals = np.zeros(n_jobs)
    else:
        gaps = rng_arr.exponential(3600.0 / jobs_per_hour, n_jobs)
        arrivals = np.concatenate(([0.0], np.cumsum(gaps[:-1]))) if n_jobs else gaps

    gpu_types = cl.gpu_types
    jobs = []
    for i in range(n_jobs):
        k = int(sf_idx[i])
        sf, fits = sfs[k], candidates[k]
        prof = fits[min(int(type_u[i] * len(fits)), len(fits) - 1)]
        rates = prof.throughput[sf]
        work = float(durations[i]) * sf * rates[reference_type]
        jobs.append(Job(id=str(i), arrival=float(arrivals[i]), workers=sf, work=work,
                        throughput={t: rates[t] for t in gpu_types if t in rates},
                        profile=prof.name))
    return Instance(cluster=cl, jobs=tuple(jobs), slot=slot,
                    name=name or f"philly-{n_jobs}-seed{seed}")


def generate_single_worker(n_jobs: int, cluster: Cluster | str = "gavel-108", seed: int = 0,
                           **kwargs: Any) -> Instance:
    """:func:`generate_philly` with one worker per job (``max_workers=1``), the setting of
    AlloX-style models that place each job on a single GPU."""
    kwargs.setdefault("name", f"philly-1w-{n_jobs}-seed{seed}")
    return generate_philly(n_jobs, cluster, seed, max_workers=1, **kwargs)
