"""Workload generators: Gavel's Philly-derived job mixture."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from optsched.catalog.clusters import _resolve_cluster
from optsched.catalog.files import _check_count, _unknown
from optsched.catalog.profiles import GAVEL_GPU_TYPES, Profile, _check_table, _profiles, profile
from optsched.catalog.traces import GAVEL_ROUND
from optsched.core.instance import Cluster, Instance, Job
from optsched.errors import InvalidOption

__all__ = ["PHILLY_WORKER_PROBABILITIES", "generate_philly", "generate_single_worker"]


#: Workers per job in Gavel's Philly-derived generator (``utils._generate_scale_factor``):
#: 1, 2, 4, 8 with probability 0.70, 0.10, 0.15, 0.05.
PHILLY_WORKER_PROBABILITIES: Mapping[int, float] = MappingProxyType(
    {1: 0.70, 2: 0.10, 4: 0.15, 8: 0.05})


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
    # the C library's pow, one value at a time: numpy's vectorised power picks a SIMD
    # kernel by CPU (AVX-512 rounds some last bits otherwise), and a seed should draw the
    # same instance on every machine
    durations = 60.0 * np.array([10.0 ** e for e in
                                 np.where(long_job, long_exp, short_exp).tolist()])
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
