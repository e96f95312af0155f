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

from optsched.catalog.clusters import GPU_MEMORY_GB, PRESETS, cluster_preset
from optsched.catalog.files import DATA_PACKAGE, data_files
from optsched.catalog.generators import (
    PHILLY_WORKER_PROBABILITIES,
    generate_philly,
    generate_single_worker,
)
from optsched.catalog.profiles import (
    GAVEL_GPU_TYPES,
    GAVEL_SCALE_FACTORS,
    THROUGHPUT_TABLES,
    Profile,
    SalusWorkload,
    SynergyProfile,
    gavel_colocation,
    job_from_profile,
    profile,
    profiles,
    salus_published,
    salus_workloads,
    synergy_profiles,
    tiresias_gpu_time_samples,
)
from optsched.catalog.traces import (
    GAVEL_ROUND,
    PHILLY_CLUSTER,
    PHILLY_THROUGHPUTS,
    SHIPPED_TRACES,
    TRACE_FORMATS,
    read_gavel_trace,
    read_philly_trace,
    read_tiresias_trace,
    read_trace,
    shipped_trace,
    trace_draws,
    trace_format,
)

__all__ = [
    "DATA_PACKAGE", "GAVEL_GPU_TYPES", "GAVEL_ROUND", "GAVEL_SCALE_FACTORS", "GPU_MEMORY_GB",
    "PHILLY_CLUSTER", "PHILLY_THROUGHPUTS", "PHILLY_WORKER_PROBABILITIES", "PRESETS", "Profile",
    "SHIPPED_TRACES", "SalusWorkload", "SynergyProfile", "THROUGHPUT_TABLES", "TRACE_FORMATS",
    "cluster_preset", "data_files", "gavel_colocation", "generate_philly", "generate_single_worker",
    "job_from_profile", "profile", "profiles", "read_gavel_trace", "read_philly_trace",
    "read_tiresias_trace", "read_trace", "salus_published", "salus_workloads",
    "shipped_trace", "synergy_profiles", "tiresias_gpu_time_samples", "trace_draws",
    "trace_format",
]
