r"""Tiresias' schedulers as heuristics for the total-JCT model: 2D-LAS, 2D-Gittins and
the baselines it is compared with, run over the whole instance.

Each function runs :class:`optsched.tiresias.policy.TiresiasPolicy` in the shared simulator
(:func:`optsched.sim.simulate`), the same rule ``optsched simulate --policy
tiresias.NAME`` runs, and reports it in the model's terms: ``objective`` the total JCT
:math:`\sum_j (C_j - r_j)` in seconds of the validated schedule, ``model`` ``"tiresias"``.

None of these rules knows a job's duration except SRTF (clairvoyant), and none has a
constant approximation ratio for total JCT with gangs and release dates; the exact
model and the lower bound are what they are measured against:

.. math::

    \mathrm{LB} \;\le\; \mathrm{OPT}_{\text{continuous}} \;\le\; \text{heuristic}.

The simulator decides at arrivals, completions and round boundaries, so a heuristic's
schedule may start or preempt a job off the exact MILP's slot grid: it lies in the
continuous model, not necessarily in the slotted one, and may beat the slotted optimum
(such rows are marked ``outside_exact`` in tables). It never beats :math:`\mathrm{LB}`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result, Status, finalize
from optsched.options import declares
from optsched.sim.simulator import simulate
from optsched.tiresias.model import build_model
from optsched.tiresias.policy import DEFAULT_THRESHOLDS, PROMOTE_KNOB, TiresiasPolicy

__all__ = ["las", "gittins", "yarn_fifo", "srtf", "OUTSIDE_EXACT"]

#: Why a heuristic's schedule may lie outside the slotted MILP's feasible set.
OUTSIDE_EXACT = ("decides at arrivals and completions as well as at round boundaries, so "
                 "it may start or preempt a job between the MILP's slots (continuous "
                 "model); it is still bounded below by the LP bound")

NO_RATIO = ("no constant approximation ratio is known for this rule (gangs, release dates, "
            "total JCT); compare with the exact optimum and the LP bound")


def _run(instance: Instance, method: str, **policy: Any) -> Result:
    build_model(instance)  # the same applicability check as the exact model
    t0 = time.perf_counter()
    sim = simulate(instance, TiresiasPolicy(**policy), progress=False)
    seconds = time.perf_counter() - t0
    assert sim.schedule is not None  # the simulator always returns its schedule
    comp = sim.schedule.completion
    total = float(sum(c - instance.job(jid).arrival for jid, c in comp.items()))
    keep = ("preemptions", "migrations", "epochs", "policy_calls", "policy_seconds",
            "simulation_seconds")
    return finalize(instance, sim.schedule, status=Status.FEASIBLE, objective=total,
                    model="tiresias", method=method, solver="simulator",
                    solve_seconds=seconds, ratio=None, ratio_note=NO_RATIO,
                    extra={k: sim.extra[k] for k in keep if k in sim.extra})




@declares()
def las(instance: Instance, *, thresholds: Sequence[float] | None = DEFAULT_THRESHOLDS,
        promote_knob: float | None = PROMOTE_KNOB, placement: str = "spread",
        dims: int = 2) -> Result:
    r"""2D-LAS: discretised least attained service in GPU-seconds, gang scheduling with
    skipping, preemptive.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster (round length ``instance.slot``).
    thresholds : sequence of float or None
        Queue thresholds :math:`Q_1 < \dots` in GPU-seconds (default the public code's
        ``(3250, 7200)``); ``None`` orders by attained service itself (continuous LAS).
    promote_knob : float or None
        Starvation promotion knob (``None``: off, the code's default).
    placement : {"spread", "consolidated"}
        Gang placement (:func:`optsched.sim.placement.place_gang`).
    dims : {1, 2}
        2: attained service :math:`W_J t_J`; 1: executed time :math:`t_J` only.

    Returns
    -------
    Result
        ``objective`` the total JCT (s) of the validated schedule; ``extra`` the
        simulator's counters (preemptions, epochs, seconds).

    Guarantee
    ---------
    None beyond feasibility: :math:`\mathrm{LB} \le \mathrm{OPT} \le` ``objective``; no
    constant ratio is known (LAS is not constant-competitive for total JCT).

    Complexity
    ----------
    :math:`O(E\, n \log n)` for :math:`E` simulator epochs (arrivals, completions, round
    boundaries while jobs wait): each epoch sorts the queued jobs and places gangs.

    References
    ----------
    * Gu et al., Tiresias: A GPU Cluster Manager for Distributed Deep Learning, NSDI'19,
      §3.1-3.2 (2D attained service, discretised queues), §4 (gang placement).
    """
    return _run(instance, "las", order="las", thresholds=thresholds,
                promote_knob=promote_knob, placement=placement, dims=dims,
                name="tiresias_las")


@declares()
def gittins(instance: Instance, *, thresholds: Sequence[float] | None = DEFAULT_THRESHOLDS,
            promote_knob: float | None = PROMOTE_KNOB, placement: str = "spread",
            dims: int = 2, gittins_samples: Any = None, gittins_delta: float | None = None,
            gittins_code_quirk: bool = False) -> Result:
    r"""2D-Gittins: the discretised queues of 2D-LAS, ordered inside a queue by the
    Gittins index of the job's attained service.

    Parameters
    ----------
    instance : Instance
        Jobs and cluster (round length ``instance.slot``).
    thresholds, promote_knob, placement, dims
        As :func:`las`.
    gittins_samples : sequence of float, optional
        The empirical distribution of job GPU-time (default Tiresias' own samples).
    gittins_delta : float, optional
        Fix the index's :math:`\Delta` (the public code uses 3250); default the supremum
        over :math:`\Delta`.
    gittins_code_quirk : bool
        Reproduce the public code's expectation over :math:`s_i` instead of
        :math:`s_i - a`.

    Returns
    -------
    Result
        ``objective`` the total JCT (s) of the validated schedule.

    Guarantee
    ---------
    None beyond feasibility: :math:`\mathrm{LB} \le \mathrm{OPT} \le` ``objective``. The
    Gittins index is optimal only for one server without gangs or release dates (§3.2).

    Complexity
    ----------
    :math:`O(E\, n (\log n + S))` for :math:`E` epochs and :math:`S` samples (one index
    per queued job per epoch, each :math:`O(S)` after sorting the samples once).

    References
    ----------
    * Gu et al., NSDI'19, §3.2 (2D-Gittins index).
    * Gittins, Glazebrook, Weber, Multi-armed Bandit Allocation Indices, Wiley 2011.
    """
    return _run(instance, "gittins", order="gittins", thresholds=thresholds,
                promote_knob=promote_knob, placement=placement, dims=dims,
                gittins_samples=gittins_samples, gittins_delta=gittins_delta,
                gittins_code_quirk=gittins_code_quirk, name="tiresias_gittins")


@declares()
def yarn_fifo(instance: Instance, *, placement: str = "yarn") -> Result:
    r"""YARN-CS FIFO: arrival order, whole gangs on as few servers as they need, no
    preemption, and a head job that does not fit blocks the queue (the baseline of
    Tiresias' evaluation).

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    placement : {"yarn", "consolidated", "spread"}
        Gang placement (default YARN-CS's first-fit consolidation,
        :mod:`optsched.sim.placement`).

    Returns
    -------
    Result
        ``objective`` the total JCT (s) of the validated schedule.

    Guarantee
    ---------
    None beyond feasibility: :math:`\mathrm{LB} \le \mathrm{OPT} \le` ``objective``.

    Complexity
    ----------
    :math:`O(E\, n \log n)` for :math:`E` epochs.

    References
    ----------
    * Gu et al., NSDI'19, §6 (YARN-CS as the production baseline).
    """
    return _run(instance, "yarn_fifo", order="fifo", preemptive=False, thresholds=None,
                promote_knob=None, placement=placement, skip=False, name="fifo_yarn")


@declares()
def srtf(instance: Instance, *, placement: str = "spread") -> Result:
    r"""Shortest remaining time first (clairvoyant, preemptive, gangs with skipping).

    Parameters
    ----------
    instance : Instance
        Jobs and cluster.
    placement : {"spread", "consolidated"}
        Gang placement.

    Returns
    -------
    Result
        ``objective`` the total JCT (s) of the validated schedule.

    Guarantee
    ---------
    None beyond feasibility: :math:`\mathrm{LB} \le \mathrm{OPT} \le` ``objective``.
    (SRPT is optimal on one server without gangs; with gangs it is not.)

    Complexity
    ----------
    :math:`O(E\, n \log n)` for :math:`E` epochs.

    References
    ----------
    * Gu et al., NSDI'19, §6 (SRTF as the clairvoyant comparison).
    * Schrage, A proof of the optimality of the shortest remaining processing time
      discipline, Operations Research 16(3), 1968.
    """
    return _run(instance, "srtf", order="srtf", thresholds=None, promote_knob=None,
                placement=placement, name="srtf")
