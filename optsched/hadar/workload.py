"""Hadar's workload: OASiS-style utilities and the demo instance.

Hadar's evaluation uses Gavel's job types on a heterogeneous cluster with per-job
utilities of the completion time (OASiS §V); :func:`assign_utilities` gives a catalog
instance such utilities, :func:`demo_instance` is the instance ``optsched demo`` runs.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.core.instance import Instance
from optsched.errors import InvalidOption

__all__ = ["assign_utilities", "demo_horizon", "demo_instance"]


def demo_instance(n_jobs: int = 8, seed: int = 0) -> Instance:
    r"""Gavel-profile jobs (Philly-derived sizes, 1-2 workers) arriving as a Poisson
    stream of 4 jobs an hour on 2 nodes x 4 GPUs of each of V100/P100/K80, 30-minute
    slots, OASiS-style sigmoid utilities.

    The horizon grows with the arrivals: it is the larger of 16 slots and the first slot
    boundary after the last arrival,

    .. math::

        H = \Delta \max\big(16,\ \lfloor a_{\max} / \Delta \rfloor + 1\big),
        \qquad \Delta = 1800\ \text{s},

    so every job arrives before it (:class:`~optsched.core.instance.Instance` requires
    :math:`a_j < H`) whatever ``n_jobs``. At 4 arrivals an hour :math:`a_{\max}` is
    about :math:`n/4` hours, so :math:`H` is 16 slots (8 h) up to about 32 jobs and
    about :math:`n/2` slots beyond. The instances of the sizes whose arrivals all fall
    within 16 slots (every ``n_jobs <= 33`` at ``seed=0``) are those of a fixed 16-slot
    horizon.

    Complexity: :math:`O(n)` (drawing the jobs).
    """
    from optsched.catalog import generate_philly
    from optsched.core.instance import Cluster, Node

    cluster = Cluster(tuple(Node(f"{t}-{i}", {t: 4}) for t in ("v100", "p100", "k80")
                            for i in range(2)))
    inst = generate_philly(n_jobs, cluster=cluster, seed=seed, max_workers=2,
                           jobs_per_hour=4.0, slot=1800.0)
    inst = inst.replace(name=f"hadar-demo-{n_jobs}",
                        horizon=demo_horizon(inst.arrivals, 1800.0, 16))
    return assign_utilities(inst, "sigmoid", seed=seed)


def demo_horizon(arrivals: np.ndarray, slot: float, min_slots: int) -> float:
    r"""The demo instances' horizon: :math:`\Delta \max(S, \lfloor a_{\max}/\Delta
    \rfloor + 1)` for slot :math:`\Delta` and at least :math:`S` = ``min_slots`` slots,
    the first slot boundary strictly after the last arrival (:math:`S\Delta` with no
    job)."""
    last = float(np.max(arrivals, initial=0.0))
    return slot * max(min_slots, math.floor(last / slot) + 1)


def assign_utilities(instance: Instance, kind: str = "sigmoid", seed: int = 0) -> Instance:
    r"""A copy of ``instance`` whose jobs get OASiS-style utilities (OASiS §V, adapted).

    With :math:`\Delta` the slot and :math:`m_j` the job's minimum run time
    (``Job.min_duration``):

    * ``"sigmoid"``: :math:`\gamma_1 \sim U[1,100]`; classes time-insensitive (10%,
      :math:`\gamma_2=0`), time-sensitive (55%, :math:`\gamma_2 \sim U[0.01,1]/\Delta`) and
      time-critical (35%, :math:`\gamma_2 \sim U[4,6]/\Delta`); target
      :math:`\gamma_3 = m_j + U[1,15]\,\Delta`. OASiS draws :math:`\gamma_3 \in [1,15]`
      slots for jobs of similar length; adding :math:`m_j` keeps long jobs' targets
      reachable (the adaptation).
    * ``"linear"``: value :math:`\gamma_1`, reaching 0 at :math:`4(m_j + U[1,15]\Delta)`.
    * ``"step"``: value :math:`\gamma_1` until deadline :math:`2 m_j + U[1,15]\Delta`,
      then :math:`\gamma_1/10`.
    * ``"constant"``: :math:`\gamma_1`.
    """
    from dataclasses import replace as dc_replace

    from optsched.core.instance import Utility

    if kind not in ("sigmoid", "linear", "step", "constant"):
        raise InvalidOption("kind", kind, "must be 'sigmoid', 'linear', 'step' or 'constant'")
    rng = np.random.default_rng(seed)
    d = instance.slot
    jobs = []
    for job in instance.jobs:
        g1 = float(rng.uniform(1, 100))
        cls = rng.random()
        g2 = 0.0 if cls < 0.10 else (rng.uniform(0.01, 1) if cls < 0.65 else rng.uniform(4, 6))
        target = job.min_duration() + float(rng.uniform(1, 15)) * d
        if kind == "sigmoid":
            u = Utility("sigmoid", gamma1=g1, gamma2=float(g2) / d, gamma3=target)
        elif kind == "linear":
            u = Utility("linear", value=g1, slope=g1 / (4 * target))
        elif kind == "step":
            u = Utility("step", value=g1, deadline=job.min_duration() + target,
                        late_value=g1 / 10)
        else:
            u = Utility("constant", value=g1)
        jobs.append(dc_replace(job, utility=u))
    return instance.replace(jobs=tuple(jobs))
