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
* ``online``: AlloX's online algorithm: at every arrival or machine release, re-solve
  the matching of :mod:`optsched.allox.exact` over the queued jobs and start the first
  planned job on each idle machine, with the fairness filter ``alpha`` and the cap
  ``max_jobs`` (:mod:`optsched.allox.policy` states the rules in full).

The schedules are those of the stand-alone event loop these functions ran before they
ran the policy in the simulator: on the AlloX demo, the talk's example and 30 seeded
instances, for every rule and ``online`` option pair, the same machine for every job
and the same completion times to :math:`1.3 \times 10^{-13}` relative (pinned in
``tests/allox/pinned.json``). The completion times are the simulator's, which runs the
work down in floating point, so they may differ from start + :math:`p_{mj}` in the last
digits.
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
    r"""Shortest job first on each free machine: each idle machine, in index order,
    takes the queued job shortest on it.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs (:class:`~optsched.errors.ModelNotApplicable` naming
        ``jobs[i].workers`` otherwise), any arrivals.

    Returns
    -------
    Result
        Total JCT :math:`\sum_j (C_j - a_j)` (s) as ``objective``, the validated schedule;
        ``ratio=None``.

    Guarantee
    ---------
    Feasible; with a common arrival :math:`\sum_j (C_j - a_j) \ge \mathrm{OPT}` of
    :func:`optsched.allox.exact.exact`, with no constant ratio on unrelated machines:
    the talk's 4-job example gives :math:`215 / 85 \approx 2.53` (tested). On one machine
    with a common arrival it is SPT, :math:`= \mathrm{OPT}` (Smith's rule).

    Complexity
    ----------
    :math:`O(Mq)` per event (:math:`q` queued jobs, :math:`M` machines), over at most
    :math:`2n` events, plus the simulator's calls at round boundaries, which change
    nothing.

    References
    ----------
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §2 (shortest job first) and §5.1 (baselines).
    * W. E. Smith, "Various optimizers for single-stage production", Naval Research
      Logistics Quarterly 3(1-2), 1956 (SPT).
    """
    return _simulated(instance, "sjf")


@declares()
def sjf_fastest(instance: Instance) -> Result:
    r"""Each job waits for a machine of its fastest GPU type; each idle machine takes the
    shortest queued job whose fastest type is its own.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs, any arrivals.

    Returns
    -------
    Result
        Total JCT (s) as ``objective``, the validated schedule; ``ratio=None``.

    Guarantee
    ---------
    Feasible; with a common arrival :math:`\sum_j (C_j - a_j) \ge \mathrm{OPT}`, with no
    constant ratio: jobs all fastest on one type queue there while the other types idle
    ("best fit" in AlloX's terms).

    Complexity
    ----------
    :math:`O(Mq)` per event, over at most :math:`2n` events, plus the simulator's calls at
    round boundaries.

    References
    ----------
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §2 (best fit, load imbalance) and §5.1 (baselines).
    """
    return _simulated(instance, "sjf_fastest")


@declares()
def jsq(instance: Instance) -> Result:
    r"""Join the shortest queue: at its arrival a job joins the machine with the fewest
    unfinished jobs assigned (ties: earliest predicted free time, then lowest index);
    each machine runs its jobs first in, first out.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs, any arrivals.

    Returns
    -------
    Result
        Total JCT (s) as ``objective``, the validated schedule; ``ratio=None``.

    Guarantee
    ---------
    Feasible; with a common arrival :math:`\sum_j (C_j - a_j) \ge \mathrm{OPT}`, with no
    constant ratio (a job commits to a machine at arrival, whatever arrives later;
    AlloX's repository example: mean JCT 60 s against the optimum's 45 s, tested).

    Complexity
    ----------
    :math:`O(M + u)` per arrival (:math:`u` assigned unfinished jobs) and :math:`O(M)`
    per release, plus the simulator's calls at round boundaries.

    References
    ----------
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §2 (join the shortest queue) and §5.1 (baselines).
    """
    return _simulated(instance, "jsq")


@declares()
def online(instance: Instance, *, alpha: float = 1.0, max_jobs: int | None = None,
           replan: str = "event") -> Result:
    r"""Online AlloX: at every arrival or release re-solve the min-cost matching over the
    queued jobs (machines free from :math:`\omega_m = \max(t, f_m)`) and start the first
    planned job of each idle machine; nothing is preempted.

    Parameters
    ----------
    instance : Instance
        Single-worker jobs, any arrivals; ``Job.user`` groups jobs for the fairness
        filter (a job without a user is its own).
    alpha : float
        The fairness filter in :math:`(0, 1]`: only the jobs of the
        :math:`\lceil \alpha U \rceil` users with the least progress enter the matching
        (1: pure total JCT).
    max_jobs : int or None
        At most this many jobs enter each matching (round-robin over the GPU types, the
        shortest on each); ``None``: all.
    replan : {"event", "arrival"}
        Re-solve the matching at every arrival or release (``"event"``, AlloX's rule) or
        only at the first event after an arrival, following the last plan in between
        (``"arrival"``; ``alpha=1``, no cap). Same total JCT with a common arrival (both
        optimal); the schedules may differ where the matching has tied optima.

    Returns
    -------
    Result
        Total JCT (s) as ``objective``, the validated schedule; ``extra`` holds
        ``solves`` (matchings solved), ``followed`` (decisions taken from the last plan),
        ``decisions``, ``alpha``, ``max_jobs`` and ``replan``.
        ``ratio=1`` when every job arrives at one time with ``alpha=1`` and no cap,
        ``None`` otherwise.

    Guarantee
    ---------
    With a common arrival, ``alpha=1`` and no cap,
    :math:`\sum_j (C_j - a_j) = \mathrm{OPT}`: the first matching is optimal and each
    re-solve keeps an optimal continuation (tested against
    :func:`optsched.allox.exact.exact`). With a common arrival otherwise,
    :math:`\sum_j (C_j - a_j) \ge \mathrm{OPT}`; with staggered arrivals
    (:math:`R\,|\,r_j\,|\,\sum C_j`, strongly NP-hard) no ratio is known.

    Complexity
    ----------
    ``"event"``: per event at most :math:`M + \lceil \log_2 (1/\alpha) \rceil + 1`
    matchings of :math:`O(q^2 M K)` each (:func:`optsched.allox.exact.match`, :math:`q`
    jobs in the matching, :math:`K \approx 2q/M` positions per machine), over at most
    :math:`2n` events: :math:`O(n^4)` for a batch of :math:`n` jobs in the worst case
    (AlloX's own algorithm re-solves at every release; measured exponent 3.1-3.8 per
    doubling from 128 to 512 jobs, ``benchmarks/results/allox_scale.md``). ``"arrival"``: one such
    matching at the first event with an idle machine after each arrival instant (at most
    one per arrival instant) and :math:`O(M)` per other event; a batch costs one
    matching, :math:`O(n^2 M K) = O(n^3)`; a stream whose queue never empties still
    costs one per arrival.

    References
    ----------
    * T. N. Le, X. Sun, M. Chowdhury, Z. Liu, "AlloX: Compute Allocation in Hybrid
      Clusters", EuroSys 2020, §3.2 (online arrivals) and §3.3 (fairness, ``alpha``).
    * J. Bruno, E. G. Coffman, R. Sethi, "Scheduling independent tasks to reduce mean
      finishing time", CACM 17(7), 1974 (the matching).
    """
    a = instance.arrivals
    together = bool(a.size == 0 or np.all(a == a[0]))
    if together and alpha >= 1 and max_jobs is None:
        return _simulated(instance, "online", alpha=alpha, max_jobs=max_jobs, replan=replan,
                          ratio=1.0,
                          ratio_note="all jobs arrive together, alpha=1, no cap: equals "
                                     "the exact optimum")
    return _simulated(instance, "online", alpha=alpha, max_jobs=max_jobs, replan=replan)
