r"""Dual certificate of a Hadar run: an upper bound on the offline optimum.

The LP relaxation of the compact-exponential primal (OASiS (14)-(18), here with the
schedule sets :math:`\mathcal L_j` of :mod:`optsched.hadar.model`) has the dual (OASiS
(19)-(20))

.. math::

    \min\ \sum_j \mu_j + \sum_{t,h,k} p_{thk} c_{hk}
    \quad\text{s.t.}\quad \mu_j \ge f_j(\hat t_l) - \sum_{t,h,k} p_{thk} y^l_{thk}
    \ \ \forall j, l \in \mathcal L_j, \qquad p, \mu \ge 0.

Any :math:`p \ge 0` with :math:`\mu_j = \max(0, \max_{l\in\mathcal L_j} \text{payoff})`
is feasible, so by weak duality
:math:`D = \sum_j \mu_j + \sum_{t,h,k} p_{thk} c_{hk} \ge \mathrm{LP} \ge \mathrm{OPT}`.
The certificate takes the run's *final* prices :math:`p_{thk}`, and computes
:math:`\mu_j` with the dual subroutine of :mod:`optsched.hadar.online` over the *full*
capacities :math:`c_{hk}` (the dual constraint ranges over every schedule of
:math:`\mathcal L_j`, not only those fitting the residual capacity) with
``rounding="optimistic"``: each slot credits :math:`\lceil Q W_j \rho\Delta/E_j\rceil`
progress units, so every truly feasible schedule is feasible for the rounded DP and the
DP's value dominates the true maximum payoff. Hence :math:`D \ge \mathrm{OPT}` holds
exactly, with no assumption (up to floating point).

Cost: one subroutine call per job, :math:`O(nT(B\log B + KB + KQ))`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from optsched.hadar.model import HadarModel
from optsched.hadar.online import DEFAULT_QUANTA, Prices, dual_subroutine

__all__ = ["Certificate", "dual_certificate"]


@dataclass(frozen=True)
class Certificate:
    """``D = mu_term + price_term``; ``mu[j]`` per job."""

    D: float
    mu_term: float
    price_term: float
    mu: np.ndarray
    seconds: float


def dual_certificate(model: HadarModel, prices: Prices,
                     quanta: int = DEFAULT_QUANTA) -> Certificate:
    """The certificate for ``prices`` (see the module docstring)."""
    t0 = time.perf_counter()
    full = np.broadcast_to(model.bucket_cap[None, :], prices.p.shape)
    mu = np.zeros(model.n_jobs)
    for j in range(model.n_jobs):
        plan = dual_subroutine(model, j, prices.p, full, quanta, "optimistic")
        mu[j] = max(0.0, plan.payoff) if math.isfinite(plan.payoff) else 0.0
    price_term = float((prices.p * model.bucket_cap[None, :]).sum())
    mu_term = float(mu.sum())
    return Certificate(mu_term + price_term, mu_term, price_term, mu,
                       time.perf_counter() - t0)
