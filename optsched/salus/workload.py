r"""Salus jobs from the catalog: P/T splits, iteration times and compute shares.

Data: Salus' ``workloads.csv`` (:func:`optsched.catalog.salus_workloads`: 11 CNN models x
3 batch sizes x 3 lengths; peak memory, iterations, JCT alone) and the published peaks
of four models (:func:`optsched.catalog.salus_published`). What is derived, and how:

* **P and T (training).** Only peaks are published. For a model measured at several
  batch sizes, P is the intercept of the least-squares line peak(b) = P + b t
  (:func:`~optsched.salus.model.persistent_from_peaks`: the batch-independent part is
  weights, gradients, optimizer state and framework), and T(b) = peak(b) - P. For a
  model with one published peak, P = f peak with f the median P/peak of the fitted CNNs
  at their smallest batch (:func:`median_persistent_fraction`, computed from the data).
* **Iterations and iteration time.** n = ``iterations``; d = JCT / iterations (the run
  alone, start-up included), so ``throughput = 1/d`` per worker.
* **Compute share u.** Not published. Assumption: the largest measured batch of a model
  saturates the GPU, so per-sample time there is the full-GPU cost and
  :math:`u(b) = (b / b_{\max})\, d(b_{\max}) / d(b)` (clipped to (0, 1]).
  :func:`training_job` accepts an explicit ``u`` instead.
* **Inference.** Inference keeps the weights only: P_inf = P / 3 (training with momentum
  keeps weights, gradients and momentum), T_inf = t (one sample's activations, the
  fitted slope) times the inference batch (default 1). For VAE and Super Resolution
  (one published peak, batch unknown) P = f peak / 3 and T = (1 - f) peak / 25, as if
  the peak had been measured at batch 25, the smallest batch of ``workloads.csv``.
  These are assumptions, stated wherever they are used.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from optsched.catalog import salus_published, salus_workloads
from optsched.core.instance import Cluster, GpuMemory, Instance, Job, Node
from optsched.errors import InvalidOption, UnknownName
from optsched.salus.model import least_squares_line, persistent_from_peaks

__all__ = ["ModelFootprint", "footprints", "training_job", "inference_job",
           "inference_models", "median_persistent_fraction", "demo_instance", "DEMO_WORKLOADS"]


@dataclass(frozen=True)
class ModelFootprint:
    """Per model: persistent P (MB), per-sample ephemeral slope t (MB), and per batch
    size the peak (MB), the iteration time d (s) and the derived compute share u."""

    model: str
    persistent: float
    per_sample: float
    peak: dict[int, float]
    iteration_s: dict[int, float]
    compute_share: dict[int, float]


@lru_cache(maxsize=1)
def _fit() -> dict[str, ModelFootprint]:
    rows: dict[str, dict[int, tuple[float, float, int]]] = defaultdict(dict)
    for w in salus_workloads():
        # the longest run gives the steadiest iteration time
        old = rows[w.model].get(w.batch_size)
        if old is None or w.iterations > old[2]:
            rows[w.model][w.batch_size] = (w.peak_mem_mb, w.jct_s / w.iterations, w.iterations)
    out = {}
    for model, by_b in rows.items():
        bs = sorted(by_b)
        peaks = [by_b[b][0] for b in bs]
        P = persistent_from_peaks(bs, peaks)
        slope = least_squares_line(bs, peaks)[0]
        d = {b: by_b[b][1] for b in bs}
        bmax = bs[-1]
        u = {b: float(min(1.0, max(1e-3, (b / bmax) * d[bmax] / d[b]))) for b in bs}
        out[model] = ModelFootprint(model, P, max(slope, 0.0), dict(zip(bs, peaks)), d, u)
    return out


def footprints() -> dict[str, ModelFootprint]:
    """The fitted footprint of each of the 11 CNN models of ``workloads.csv``."""
    return dict(_fit())


@lru_cache(maxsize=1)
def median_persistent_fraction() -> float:
    """Median P / peak over the fitted models at their smallest batch size.

    Computed from the catalog on first use (not at import, so importing optsched reads
    no data file).
    """
    fr = [f.persistent / f.peak[min(f.peak)] for f in _fit().values()]
    return float(np.median(fr))


def training_job(workload: str, id: str, *, gpu_type: str = "v100", u: float | None = None,
                 arrival: float = 0.0) -> Job:
    """A job for one row of ``workloads.csv`` (``name``, e.g. ``"resnet50_50_5min"``)."""
    rows = {w.name: w for w in salus_workloads()}
    if workload not in rows:
        raise UnknownName("workload", workload, f"known: {sorted(rows)[:6]}...")
    w = rows[workload]
    fp = _fit()[w.model]
    P = fp.persistent
    T = w.peak_mem_mb - P
    share = fp.compute_share[w.batch_size] if u is None else u
    return Job(id, arrival, 1, float(w.iterations), {gpu_type: w.iterations / w.jct_s},
               profile=workload, memory=GpuMemory(P, T), compute_share=share)


def inference_models() -> dict[str, tuple[float, float]]:
    """(P_inf, T_inf) in MB at batch 1 for every model with data (module docstring).

    The 11 CNNs of ``workloads.csv`` plus the published VAE and Super Resolution peaks
    (split with :func:`median_persistent_fraction`); Deep Speech is left out as in Salus'
    packing experiment, and the published Inception4 peak is a training peak of a model
    already fitted.
    """
    out = {m: (f.persistent / 3.0, f.per_sample) for m, f in _fit().items()}
    f = median_persistent_fraction()
    for name in ("VAE", "Super Resolution"):
        peak = salus_published()[name]
        out[name.lower().replace(" ", "_")] = (f * peak / 3.0, (1 - f) * peak / 25.0)
    return out


def inference_job(model: str, id: str, *, batch: int = 1, gpu_type: str = "v100",
                  iterations: float = 1000.0, iteration_s: float = 0.01) -> Job:
    """An inference job (a server answering ``iterations`` requests of ``iteration_s``)."""
    models = inference_models()
    if model not in models:
        raise UnknownName("model", model, f"known: {sorted(models)}")
    P, t = models[model]
    return Job(id, 0.0, 1, iterations, {gpu_type: 1.0 / iteration_s}, profile=model,
               memory=GpuMemory(P, t * batch))


DEMO_WORKLOADS = ("resnet50_25_1min", "googlenet_50_1min", "alexnet_100_1min",
                  "vgg11_25_1min", "inception3_25_1min", "overfeat_25_1min")


def demo_instance(n_jobs: int = 6, seed: int = 0) -> Instance:
    """``n_jobs`` training runs of ``workloads.csv`` on one node with two 16 GB V100s.

    Parameters
    ----------
    n_jobs : int
        Jobs, 1 to the 99 runs of ``workloads.csv``.
    seed : int
        0 with at most 6 jobs: the first ``n_jobs`` of :data:`DEMO_WORKLOADS` (six
        1-minute runs of six models; the default is the paper's demo); otherwise
        ``n_jobs`` distinct runs drawn with ``numpy.random.default_rng(seed)``, in file
        order.

    Returns
    -------
    Instance
        Named ``salus-demo`` (the default) or ``salus-demo-<n_jobs>[-<seed>]``; all jobs
        queued at time 0; P/T and the compute shares u follow
        :mod:`optsched.salus.workload`.
    """
    rows = salus_workloads()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or \
            not 1 <= n_jobs <= len(rows):
        raise InvalidOption("n_jobs", n_jobs, f"must be an integer in 1..{len(rows)} (the "
                            "training runs of workloads.csv)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidOption("seed", seed, "must be an integer >= 0")
    if seed == 0 and n_jobs <= len(DEMO_WORKLOADS):
        names = list(DEMO_WORKLOADS[:n_jobs])
    else:
        pick = np.sort(np.random.default_rng(seed).choice(len(rows), n_jobs, replace=False))
        names = [rows[int(i)].name for i in pick]
    jobs = tuple(training_job(w, f"j{k}-{w.split('_')[0]}") for k, w in enumerate(names))
    cluster = Cluster((Node("gpu-node", {"v100": 2}, cpus=16, memory=64,
                            gpu_memory={"v100": 16.0}),))
    default = n_jobs == len(DEMO_WORKLOADS) and seed == 0
    name = "salus-demo" if default else f"salus-demo-{n_jobs}" + (f"-{seed}" if seed else "")
    return Instance(cluster, jobs, name=name)
