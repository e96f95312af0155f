r"""Bounds for Salus' lane models (fluid concurrency, :mod:`optsched.salus.model`).

* :func:`ff_gpu_bound` - the GPUs first fit opens with one lane per GPU (the proof is in
  :mod:`optsched.salus.heuristics`):
  :math:`k \le \max(1, 2\lceil \sum_i P_i / (M - T_{\max}) \rceil - 1)`.
* :func:`lower_bound` - a bound on the optimum of each objective that every plan obeys:

  - makespan: :math:`C^* \ge \max\big(\max_i \min_g n_i d_{ig},\;
    \sum_i \min_g n_i d_{ig} u_i / G\big)`, minima over the GPUs that hold job
    :math:`i` alone (:math:`P_i + T_i \le M_g`) - a job's iterations run one at a time at
    speed at most 1 (:math:`s \le u_i`), and the :math:`G` GPUs give at most one unit of
    compute each per second (:func:`makespan_bound`; the exact model states it as the
    lower bound of :math:`C`);
  - GPUs: :math:`k^* \ge \lceil (\sum_i P_i + T_{\max}) / M_{\max} \rceil` - every
    placed job's persistent memory is resident and some lane holds the largest peak;
  - admitted weight: :math:`\le \sum_i w_i` over the jobs that fit some GPU alone.

Complexity: :math:`O(nG)`.
"""

from __future__ import annotations

import math
import time

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result, Status
from optsched.options import declares
from optsched.salus.model import SalusView, salus_view

__all__ = ["ff_gpu_bound", "lower_bound", "makespan_bound"]


def ff_gpu_bound(view: SalusView) -> int | None:
    r"""The GPUs first fit into one lane per GPU opens at most, on identical GPUs of memory
    :math:`M`.

    Parameters
    ----------
    view : SalusView
        The jobs' footprints and the GPUs.

    Returns
    -------
    int or None
        :math:`\max(1, 2\lceil \sum_i P_i/(M - T_{\max})\rceil - 1)`; ``None`` when the GPUs
        differ in memory or :math:`T_{\max} \ge M`.

    Guarantee
    ---------
    :math:`k_{FF} \le \max(1, 2\lceil \sum_i P_i/(M - T_{\max})\rceil - 1) \le
    \frac{2}{1-\theta}\mathrm{OPT} + 1` with :math:`\theta = T_{\max}/M`, in any job order
    (proof in :mod:`optsched.salus.heuristics` and ``docs/salus.md``).

    Complexity
    ----------
    :math:`O(n + G)`.

    References
    ----------
    * Yu and Chowdhury, MLSys 2020 (Salus), §3.2 (the safety condition the bound
      rests on).
    """
    if view.n_gpus == 0 or view.n_jobs == 0 or np.ptp(view.memory) > 0:
        return None
    M = float(view.memory[0])
    tmax = float(view.T.max())
    if tmax >= M:
        return None
    return max(1, 2 * math.ceil(float(view.P.sum()) / (M - tmax) - 1e-12) - 1)


def makespan_bound(view: SalusView) -> float:
    r"""The makespan bound of :func:`lower_bound`, for a view whose every job fits some
    GPU alone.

    Returns
    -------
    float
        :math:`\max\big(\max_i \min_g n_i d_{ig},\; \sum_i \min_g n_i d_{ig} u_i /
        G\big)` over the GPUs each job fits (module docstring).

    Guarantee
    ---------
    :math:`C^* \ge` the value returned, for every plan that places every job.

    Complexity
    ----------
    :math:`O(nG)`.
    """
    if view.n_jobs == 0:
        return 0.0
    ok = np.array([[view.fits(i, g) for g in range(view.n_gpus)]
                   for i in range(view.n_jobs)], dtype=bool).reshape(view.n_jobs, view.n_gpus)
    serial = np.where(ok, view.n[:, None] * np.where(np.isfinite(view.d), view.d, 0.0), np.inf)
    return float(max(serial.min(axis=1).max(initial=0.0),
                     (serial * view.u[:, None]).min(axis=1).sum() / max(view.n_gpus, 1)))


@declares()
def lower_bound(instance: Instance, *, objective: str = "makespan") -> Result:
    r"""A bound on the optimum of ``objective`` that every lane plan obeys (module docstring).

    Parameters
    ----------
    instance : Instance
        Jobs and GPUs, as :func:`optsched.salus.exact.exact`.
    objective : {"makespan", "admitted", "gpus"}
        The objective bounded.

    Returns
    -------
    Result
        ``bound`` holds the bound (``objective`` is ``None``).

    Guarantee
    ---------
    :math:`C^* \ge \max(\max_i \min_g n_i d_{ig},\ \sum_i \min_g n_i d_{ig} u_i / G)`;
    :math:`k^* \ge \lceil (\sum_i P_i + T_{\max}) / M_{\max} \rceil`; admitted weight
    :math:`\le \sum_i w_i` over the jobs that fit some GPU alone.

    Complexity
    ----------
    :math:`O(nG)`.

    References
    ----------
    * Yu and Chowdhury, MLSys 2020 (Salus), §3.2.
    """
    from optsched.salus.model import SENSE, check_objective

    check_objective(objective)
    t0 = time.perf_counter()
    view = salus_view(instance)
    fits = np.array([any(view.fits(i, g) for g in range(view.n_gpus))
                     for i in range(view.n_jobs)], dtype=bool)
    if objective == "admitted":
        bound = float(view.w[fits].sum())
    elif not fits.all():
        return Result(status=Status.INFEASIBLE, model="salus", method="bound",
                      message=f"job {view.ids[int(np.argmin(fits))]!r} fits no GPU alone")
    elif objective == "makespan":
        bound = makespan_bound(view)
    else:
        bound = float(max(1, math.ceil((view.P.sum() + view.T.max(initial=0.0))
                                       / view.memory.max() - 1e-12))) if view.n_jobs else 0.0
    return Result(status=Status.OPTIMAL, bound=bound, model="salus", method="bound",
                  solve_seconds=time.perf_counter() - t0,
                  ratio_note=f"{'upper' if SENSE[objective] == 'max' else 'lower'} bound on "
                             f"the optimum ({objective})",
                  extra={"objective_kind": objective})
