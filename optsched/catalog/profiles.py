"""Measured job profiles: Gavel's throughputs, Synergy's CPU/DRAM sensitivities,
Salus' training runs and published memory sizes, Tiresias' GPU-time samples."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

import numpy as np

from optsched.catalog.files import _read_shipped, _unknown
from optsched.core.instance import Colocation, Job, PairRate, Sensitivity
from optsched.errors import InvalidInstance, InvalidOption

__all__ = ["GAVEL_GPU_TYPES", "GAVEL_SCALE_FACTORS", "THROUGHPUT_TABLES", "Profile",
           "gavel_colocation",
           "SalusWorkload", "SynergyProfile", "job_from_profile", "profile", "profiles",
           "salus_published", "salus_workloads", "synergy_profiles", "tiresias_gpu_time_samples"]


#: GPU types of Gavel's measurements.
GAVEL_GPU_TYPES = ("k80", "p100", "v100")
#: Scale factors (workers per job) Gavel measured.
GAVEL_SCALE_FACTORS = (1, 2, 4, 8)

#: Names of the two Gavel throughput tables.
THROUGHPUT_TABLES = ("simulation", "physical")


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
        out[sf] = MappingProxyType({t: 0.0 if (v := row.get(t)) is None else float(v) / sf
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
    assert work is not None  # exactly one of work and duration was given
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


def gavel_colocation(throughputs: str = "simulation", *,
                     gpu_types: Iterable[str] | None = None,
                     keys: Iterable[tuple[str, int]] | None = None) -> Colocation:
    """Gavel's measured co-located rates (OSDI'20 §3.1, space sharing) as a
    :class:`~optsched.core.colocation.Colocation` table keyed by job type (the
    ``profile`` of :func:`job_from_profile` and of :func:`read_gavel_trace`'s jobs).

    Gavel measures every pair of its job types of equal scale factor (1, 2, 4, 8) with
    all workers on one server; each row holds the two jobs' iterations/s **per worker**
    (Gavel's per-job figures divided by the scale factor). ``gpu_types`` keeps those
    types only; ``keys`` keeps the pairs whose two (job type, scale factor) are both in
    it (e.g. those of a trace's jobs). A pair measured at 0 (the pair does not fit the
    GPU) is kept: such a pair cannot be placed.

    Complexity: :math:`O(P)` for the :math:`P` measured pairs (2,763 per type).
    """
    table = _gavel_table()["tables"][_check_table(throughputs)]
    names = list(table["job_types"])
    wanted = None if gpu_types is None else set(gpu_types)
    keep = None if keys is None else set(keys)
    entries = []
    for t, by_sf in table["colocated"].items():
        if wanted is not None and t not in wanted:
            continue
        for sf_text, rows in by_sf.items():
            sf = int(sf_text)
            for i, j, ra, rb in rows:
                a, b = names[i], names[j]
                if keep is not None and ((a, sf) not in keep or (b, sf) not in keep):
                    continue
                entries.append(PairRate(t, a, b, sf, ra / sf, rb / sf))
    return Colocation(tuple(entries))


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


def tiresias_gpu_time_samples() -> np.ndarray:
    """Job GPU-time samples (GPU-seconds) from a production cluster, the distribution
    Tiresias' 2D-Gittins index uses (``simulator/yarn-gput1000.csv``; 1,001 values)."""
    lines = _read_shipped("tiresias_yarn-gput1000.csv").splitlines()
    return np.array([float(x) for x in lines[1:] if x.strip()], dtype=float)
