r"""AlloX heuristics: SJF baselines, join-the-shortest-queue and online AlloX.

Each heuristic is a thin wrapper that runs :class:`optsched.allox.policy.AlloXPolicy`
over the instance in the shared simulator (:func:`optsched.sim.simulate`), the same
rule that ``optsched simulate --policy allox.NAME`` runs, and reports it as AlloX does:
``objective`` = total JCT :math:`\sum_j (C_j - a_j)` (s), ``model`` ``"allox"``,
``method`` the rule's name, the schedule validated. All are non-preemptive list
schedulers over AlloX's machines (one GPU each, processing times ``p[m, j]``, see
:mod:`optsched.allox.model`) and respect arrivals. None of them has a constant
approximation ratio for :math:`R\,||\,\sum C_j` (unrelated machines), which is exactly
why AlloX solves the matching; ``Result.ratio`` is ``None`` except where noted.

* ``sjf``: whenever a machine is idle it takes, among queued jobs, the one shortest
  *on that machine* (greedy SJF on each free resource; the baseline of AlloX's talk,
  which yields 2.53x the optimal mean JCT on its 4-job example).
* ``sjf_fastest``: each job waits for a machine of its fastest GPU type; each idle
  machine takes the shortest queued job whose fastest type is its own.
* ``jsq``: join the shortest queue: at arrival a job joins the machine with the fewest
  unfinished jobs assigned (ties: earliest free, then lowest index); FIFO per machine.
* ``online``: AlloX's online algorithm (``AlloXScheduler.computeResShare``): at every
  arrival or machine release, re-solve the matching of :mod:`optsched.allox.exact`
  over queued jobs with :math:`\omega_m = \max(t, \text{free}_m)`, and start only the
  first planned job on each idle machine; nothing is preempted. ``alpha`` is the
  fairness filter: only jobs of the :math:`\lceil \alpha U \rceil` users (of the U with
  queued jobs) with the least current progress score enter the matching (``alpha=1``
  is pure JCT). A user's score is the sum over its running jobs of
  :math:`(p^{best}_j / p_{mj}) / c_{k^*}`: the share of its best GPU type
  :math:`k^*` (with :math:`c_{k^*}` GPUs) that the job holds, scaled by the speed it
  gets. If no job can start, ``alpha`` doubles (as ``EnableIncreaseAlpha``).
  ``max_jobs`` caps the matrix by taking, round-robin over GPU types, the shortest
  remaining job on each type. With all jobs arriving together, ``alpha=1`` and no cap
  the first matching is already optimal and every re-solve keeps an optimal
  continuation, so :math:`\sum_j (C_j - a_j) = \mathrm{OPT}` (``ratio=1``).

Complexity: the policy's per event (:mod:`optsched.allox.policy`) over at most
:math:`2n` events, plus the simulator's calls at round boundaries, which change nothing.
Reference: Le et al., AlloX, EuroSys'20.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from optsched.allox.policy import AlloXPolicy
from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.options import declares
from optsched.sim.simulator import simulate

__all__ = ["sjf", "sjf_fastest", "jsq", "online"]

NO_RATIO = ("no constant approximation ratio is known for this rule on unrelated "
            "machines (R||sum C_j); compare with the exact optimum")


def _simulated(instance: Instance, rule: str, ratio: float | None = None,
               ratio_note: str = NO_RATIO, **options: Any) -> Result:
    """Simulate ``AlloXPolicy(rule, **options)``; report total JCT as model ``allox``."""
    policy = AlloXPolicy(rule, **options)   # a bad option fails before the instance is read
    res = simulate(instance, policy, progress=False)
    comp = res.schedule.completion if res.schedule is not None else {}
    total = float(sum(c - instance.job(j).arrival for j, c in comp.items()))
    return res.replace(objective=total, model="allox", method=rule, ratio=ratio,
                       ratio_note=ratio_note)


@declares()
def sjf(instance: Instance) -> Result:
    """Each idle machine (in index order) takes the queued job shortest on it."""
    return _simulated(instance, "sjf")


@declares()
def sjf_fastest(instance: Instance) -> Result:
    """Each job waits for its fastest GPU type; shortest job first per machine."""
    return _simulated(instance, "sjf_fastest")


@declares()
def jsq(instance: Instance) -> Result:
    """Join the shortest queue at arrival; FIFO on each machine."""
    return _simulated(instance, "jsq")


@declares()
def online(instance: Instance, *, alpha: float = 1.0, max_jobs: int | None = None) -> Result:
    """Online AlloX (see module docstring): re-solve the matching at every event."""
    a = instance.arrivals
    together = bool(a.size == 0 or np.all(a == a[0]))
    if together and alpha >= 1 and max_jobs is None:
        return _simulated(instance, "online", alpha=alpha, max_jobs=max_jobs, ratio=1.0,
                          ratio_note="all jobs arrive together, alpha=1, no cap: equals "
                                     "the exact optimum")
    return _simulated(instance, "online", alpha=alpha, max_jobs=max_jobs)
