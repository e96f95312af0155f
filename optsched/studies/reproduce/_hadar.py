"""What the two Hadar claims share: their instance, runs and figures."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from optsched.core.instance import Instance
from optsched.plotting import can_plot as _can_plot
from optsched.plotting import jct_cdf, utilization
from optsched.studies.reproduce.claim import SEED

__all__ = ["hadar_instance", "hadar_runs", "hadar_plots"]


def hadar_instance(quick: bool) -> Instance:
    """Gavel-profile jobs (1-4 workers, Philly-derived sizes, Poisson arrivals) on the
    AWS-like heterogeneous cluster of :func:`optsched.hadare.aws_like_cluster`, with
    constant utilities (value independent of completion time) so that Hadar's admission
    control admits every job and total time is comparable with Gavel's."""
    from optsched.catalog import generate_philly
    from optsched.hadar import assign_utilities
    from optsched.hadare import aws_like_cluster

    n, cluster = (20, aws_like_cluster()) if quick else (60, aws_like_cluster(2, 2, 2))
    inst = generate_philly(n, cluster=cluster, seed=SEED, max_workers=4, jobs_per_hour=4.0,
                           slot=1800.0, name=f"philly-{n}-aws-{cluster.total_gpus}gpu")
    return assign_utilities(inst, "constant", seed=SEED)


@functools.lru_cache(maxsize=2)
def hadar_runs(quick: bool):
    from optsched.hadare import simulate_pair

    inst = hadar_instance(quick)
    hadare, hadar = simulate_pair(inst)  # one shared Hadar admission pass
    runs = {"HadarE": hadare, "Hadar": hadar}
    for k, r in runs.items():
        if r.metrics is None or r.metrics.n_completed != inst.n_jobs:
            done = None if r.metrics is None else r.metrics.n_completed
            raise AssertionError(f"{k} completed {done} of {inst.n_jobs} jobs; total time "
                                 "and CRU are only comparable when every job completes")
    return inst, runs


def hadar_plots(inst, runs, img: Path, keys: Sequence[str], name: str) -> list[Path]:
    if not _can_plot():
        return []
    sel = {k: runs[k] for k in keys}
    return [utilization({k: r.schedule for k, r in sel.items()},
                             inst.cluster.total_gpus, img / f"reproduce_{name}_utilization.png",
                             title=f"{' vs '.join(keys)}, {inst.name}"),
            jct_cdf({k: list(r.metrics.jct.values()) for k, r in sel.items()},
                          img / f"reproduce_{name}_jct_cdf.png",
                          title=f"{' vs '.join(keys)}, {inst.name}")]


