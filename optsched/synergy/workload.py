"""Synergy's workload: its job classes, its synthetic job generator, its servers and the
demo instance (Mohan et al., OSDI'22, §6; ``msr-fiddle/synergy`` ``jobs/``)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from optsched.catalog.profiles import SynergyProfile
from optsched.core.instance import Cluster, Instance, Job, Node
from optsched.errors import InvalidOption

__all__ = ["JOB_CLASSES", "synergy_workload", "servers", "demo_instance"]

#: Synergy's job classes (``jobs/model_zoo.py``).
JOB_CLASSES = {
    "image": ("alexnet", "res18", "res50", "mobilenet", "shufflenet"),
    "language": ("gnmt", "transformer", "lstm"),
    "speech": ("m5", "deepspeech"),
}


@lru_cache(maxsize=1)
def _profiles_by_model() -> dict[str, dict[int, SynergyProfile]]:
    from optsched.catalog import synergy_profiles
    out: dict[str, dict[int, SynergyProfile]] = {}
    for p in synergy_profiles().values():
        out.setdefault(p.model, {})[p.gpus] = p
    return out


def synergy_workload(n_jobs: int, cluster: Cluster | str = "synergy-128", seed: int = 0,
                     split: tuple[float, float, float] = (20, 70, 10),
                     jobs_per_hour: float | None = None, *, multigpu: bool = True,
                     slot: float = 300.0, name: str | None = None) -> Instance:
    """Synergy's synthetic workload (``jobs/workload.py``, ``helpers/utils.py``).

    * Class image / language / speech with probabilities ``split`` (percent), then a
      model uniformly from :data:`JOB_CLASSES`.
    * GPUs 1, 2, 4, 8 with probability 0.7, 0.1, 0.15, 0.05 (``get_job_gpu_demand``) if
      ``multigpu``, else 1. The profile measured with that many GPUs is used; 8-GPU jobs
      use the 4-GPU profile (the largest measured for every model).
    * Duration ``60 * 10**U(1.5, 3)`` s with probability 0.8, else ``60 * 10**U(3, 4)``
      (Gavel-style, as Synergy's exponential mode); work = duration / ``iter_time``
      iterations, per-worker throughput ``1 / (g * iter_time)`` at the proportional share.
    * Arrivals: Poisson at ``jobs_per_hour`` (first at 0), or all at 0 if ``None``.
    * Round length ``slot`` = 300 s (Synergy's lease).
    """
    from optsched.catalog.clusters import _resolve_cluster

    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 0:
        raise InvalidOption("n_jobs", n_jobs, "must be an integer >= 0")
    if len(split) != 3 or any(s < 0 for s in split) or sum(split) <= 0:
        raise InvalidOption("split", split, "must be three non-negative percentages")
    cl = _resolve_cluster(cluster, "synergy-128")
    gtype = cl.gpu_types[0]
    per_type = cl.gpus_per_type[gtype]
    rng_cls, rng_g, rng_d, rng_a = (np.random.default_rng(s)
                                    for s in np.random.SeedSequence(seed).spawn(4))
    p = np.asarray(split, float) / sum(split)
    classes = list(JOB_CLASSES)
    sizes = np.array([1, 2, 4, 8])
    probs = np.array([0.7, 0.1, 0.15, 0.05])
    ok = sizes <= per_type
    sizes, probs = sizes[ok], probs[ok] / probs[ok].sum()
    table = _profiles_by_model()
    if jobs_per_hour is None:
        arrivals = np.zeros(n_jobs)
    else:
        gaps = rng_a.exponential(3600.0 / jobs_per_hour, n_jobs)
        arrivals = np.concatenate(([0.0], np.cumsum(gaps[:-1]))) if n_jobs else gaps
    jobs = []
    for i in range(n_jobs):
        cls = classes[int(rng_cls.choice(3, p=p))]
        model = JOB_CLASSES[cls][int(rng_cls.integers(len(JOB_CLASSES[cls])))]
        g = int(rng_g.choice(sizes, p=probs)) if multigpu else 1
        prof = table[model][min(g, 4) if g != 1 else 1]
        long_job = rng_d.random() >= 0.8
        dur = 60.0 * 10.0 ** (rng_d.uniform(3, 4) if long_job else rng_d.uniform(1.5, 3))
        jobs.append(Job(id=str(i), arrival=float(arrivals[i]), workers=g,
                        work=dur / prof.iter_time,
                        throughput={gtype: 1.0 / (g * prof.iter_time)},
                        profile=prof.name, sensitivity=prof.sensitivity))
    return Instance(cl, tuple(jobs), slot=slot,
                    name=name or f"synergy-{n_jobs}-seed{seed}")


def servers(n: int, gpu_type: str = "v100") -> Cluster:
    """``n`` Synergy servers: 8 GPUs, 24 cores, 500 GB each (as ``synergy-128``)."""
    return Cluster(tuple(Node(f"server-{i:02d}", {gpu_type: 8}, cpus=24.0, memory=500.0)
                         for i in range(n)))


def demo_instance(n_jobs: int = 12, seed: int = 0, n_servers: int | None = None) -> Instance:
    """One round: ``n_jobs`` jobs of Synergy's 50/0/50 image/speech mix on ``n_servers``
    servers (:func:`servers`).

    By default the cluster grows with the jobs: one 8-GPU server per 8 GPUs the drawn
    gangs ask for, at least 2 (12 jobs of seed 0 ask for 22 GPUs: 3 servers). Every gang
    then fits the cluster's GPU count, so the round is decided by the CPU and memory each
    job gets, which is what Synergy's methods choose. On a fixed cluster the jobs of a
    large instance ask for far more GPUs than it has, every GPU gets a job at its fair
    share and nothing is left to distribute: TUNE, proportional and the exact optimum
    then coincide (on 2 servers they did at 16, 32 and 64 jobs for every seed tried).
    """
    if n_servers is None:
        draw = synergy_workload(n_jobs, servers(2), seed=seed, split=(50, 0, 50))
        n_servers = max(2, -(-sum(j.workers for j in draw.jobs) // 8))
    elif isinstance(n_servers, bool) or not isinstance(n_servers, int) or n_servers < 1:
        raise InvalidOption("n_servers", n_servers, "must be an integer >= 1")
    return synergy_workload(n_jobs, servers(n_servers), seed=seed, split=(50, 0, 50),
                            name=f"synergy-demo-{n_jobs}")
