r"""Certified lower bounds on the mean JCT and the makespan of *any* schedule of an
instance, in the setting the simulator runs every policy in.

The setting
-----------
Heterogeneous GPU types (:math:`M_k` GPUs of type :math:`k`); job :math:`j` arrives at
:math:`r_j`, must do :math:`E_j` iterations, runs as a gang of :math:`W_j` workers at
per-worker rate :math:`\tau_{jk}` on type :math:`k`; a gang over several types runs at
its slowest type's rate (:mod:`optsched.core.progress`). Preemption, migration and
re-sizing are allowed at any instant (round boundaries and the simulator's event
epochs are special cases), so every schedule the simulator or an exact model produces
is a schedule of this setting. What a policy may additionally do widens the setting
(:class:`Setting`): ``progress_rule`` ``"partial"`` or ``"additive"``, ``forking``
(copies on distinct nodes whose rates add up), ``sharing`` (a fraction :math:`s` of a
GPU at rate factor :math:`\min(1, s/u_j)`), ``resource_sensitive`` (CPU/DRAM per GPU
scale the rate by at most :math:`\bar\rho_j = \max` of the job's sensitivity table).

Three quantities bound every such schedule, job by job:

* the **fastest rate** :math:`R_j = G_j \max_k \tau_{jk} \bar\rho_j`, with
  :math:`G_j` the most workers the job may run at once (:math:`W_j`; with forking
  :math:`\sum_h \min(W_j, \text{usable GPUs of node } h)`, or :math:`W_j` per node with a
  usable GPU when GPUs are shared, since workers then hold fractions of a GPU), so the
  job is busy at least
  :math:`p_j = E_j / R_j` seconds;
* the **area** :math:`a_{jk} = E_j u_j / (\tau_{jk} \bar\rho_j)` GPU-seconds of type
  :math:`k` per unit of its work (:math:`u_j` the compute share under ``sharing``, else
  1): a GPU of type :math:`k` does at most :math:`1/a_{jk}` of job :math:`j` per second;
* the **mean busy time** :math:`\mu_j = \int t \, dF_j(t)`, :math:`F_j` the fraction of
  the job done by :math:`t`. As :math:`F_j` grows at most at rate :math:`1/p_j` and ends
  at :math:`C_j`, :math:`\mu_j \le C_j - p_j/2` (Goemans et al. 2002, Lemma 2.1 in the
  single-machine form; the proof only uses the rate limit). Also
  :math:`C_j \ge r_j + p_j`.

The bounds (each a theorem, proved in ``docs/bounds.md``)
----------------------------------------------------------
``per_job``
    :math:`\sum_j w_j C_j \ge \sum_j w_j (r_j + p_j)`, :math:`C_{\max} \ge \max_j (r_j + p_j)`.
``pooled``
    Pool all GPUs into one fluid machine. Measure job :math:`j` in its best-type area
    :math:`a_j = \min_k a_{jk}`; a GPU of type :math:`k` then delivers at most
    :math:`\sigma_k = \max_j a_j / a_{jk} \le 1` area-seconds per second to any job, so
    the machine has speed :math:`S = \sum_k \sigma_k M_k`. Any schedule induces a
    preemptive fluid schedule of this machine with the same :math:`F_j`. On it
    :math:`\sum_j w_j \mu_j` is minimised by processing, at each instant, the released
    job of largest :math:`w_j / a_j` (an exchange argument; Goemans 1997 for one
    machine), so with :math:`\mu^{*}_j` that schedule's mean busy times,
    :math:`\sum_j w_j C_j \ge \sum_j w_j (\mu^{*}_j + p_j / 2)`. The machine needs until
    :math:`\max_s \big(s + \sum_{j: r_j \ge s} a_j / S\big)` to process everything,
    a bound on :math:`C_{\max}`. :math:`O(n \log n)`; no LP.
``interval_lp``
    Time cut at :math:`b_0 < b_1 < \dots < b_L` plus an open last interval;
    :math:`x_{jk\ell} \ge 0` the fraction of job :math:`j` done on type :math:`k` in
    interval :math:`\ell`, from :math:`s_{j\ell} = \max(b_\ell, r_j)`:

    .. math::

        \min \sum_j w_j C_j \;\text{s.t.}\;
        \sum_{k,\ell} x_{jk\ell} = 1,\quad
        \sum_j a_{jk} x_{jk\ell} \le M_k (b_{\ell+1} - b_\ell),\quad
        \sum_k \frac{E_j}{G_j \tau_{jk}\bar\rho_j} x_{jk\ell} \le b_{\ell+1} - s_{j\ell},

        C_j \ge \sum_{k,\ell} s_{j\ell} x_{jk\ell} + p_j / 2,\qquad C_j \ge r_j + p_j.

    Any schedule gives a feasible point with its own :math:`\sum w_j C_j` (credit each
    GPU-second of a gang to its own type in proportion to the GPUs held; a gang over
    several types progresses at its slowest type's rate, so each type's credit needs no
    more than its own GPUs and the gang's time). The LP is solved through the solver
    layer and its value is **certified** from its duals: for any row prices
    :math:`y` of the right signs the Lagrangian :math:`\min_{l \le x \le u}
    (c - A^\top y)^\top x + \sum_i y_i \beta_i` is a lower bound (weak duality), so the
    reported value does not rely on the solver's tolerances.

    *Busy-time tangents* (``tangents`` :math:`m \ge 1`): within an interval, the
    fraction credited to type :math:`k` grows at rate at most :math:`1/t_{jk}`,
    :math:`t_{jk} = E_j / (G_j \tau_{jk} \bar\rho_j)`, so it contributes at least
    :math:`s_{j\ell} x_{jk\ell} + t_{jk} x_{jk\ell}^2 / 2` to :math:`\mu_j` (packed
    at full rate from :math:`s_{j\ell}`), not only :math:`s_{j\ell} x_{jk\ell}`.
    The convex term is replaced by the maximum :math:`h` of its tangents at
    :math:`u i / m`, :math:`i = 0..m`, :math:`u` the column's upper bound; each column
    is split into :math:`m + 1` pieces of slopes :math:`t_{jk} u i / m` (widths
    :math:`u/2m, u/m, \dots, u/m, u/2m`) that enter every row like the column and the
    busy-time row with their slope added. Filling the pieces in order gives exactly
    :math:`h(x) \le t x^2/2`, so every schedule still gives a feasible point with its
    own objective: the theorem holds, and the LP has :math:`m + 1` times the columns.

    *Squashed area* (``squash`` :math:`Q \ge 1`): the area credited to type :math:`k`
    grows at rate at most :math:`M_k`, so in interval :math:`\ell`,
    :math:`\sum_j a_{jk} \int (t - b_\ell)\, dF_{jk} \ge A_{k\ell}^2 / 2M_k
    \ge A_0 A_{k\ell} / M_k - A_0^2 / 2M_k` with :math:`A_{k\ell} = \sum_j a_{jk}
    x_{jk\ell}` (Queyranne's inequality for one machine of speed :math:`M_k`, the
    squashed-area argument of Schwiegelshohn et al., per type and interval), for
    :math:`A_0 = (q/Q) M_k (b_{\ell+1} - b_\ell)`. Each finite column gets one more
    part counted at the interval's end :math:`b_{\ell+1}` in the busy-time row; the
    :math:`Q` rows per (type, interval) bound the parts' area-weighted busy time from
    below. A schedule's column splits between its start-side pieces and its end part
    so that its busy contribution is exactly the schedule's (intermediate values), so
    the theorem still holds.
``release_lp`` (makespan)
    :math:`\min T` subject to every job's work split over types, and for every release
    time :math:`s` in a set :math:`\mathcal{S}`, the jobs released at or after :math:`s`
    fitting each type's capacity in :math:`[s, T]`:
    :math:`\sum_{j: r_j \ge s} a_{jk} x_{jk} \le M_k (T - s)`; plus
    :math:`T \ge r_j + \sum_k x_{jk} E_j/(G_j\tau_{jk}\bar\rho_j)`. Certified like
    ``interval_lp``.

Every bound is reported with its source; the mean-JCT bound is
:math:`(\max \text{ over methods of } \sum_j w_j C_j - \sum_j w_j r_j) / \sum_j w_j`.

References
----------
* Goemans, Queyranne, Schulz, Skutella, Wang. Single machine scheduling with release
  dates. SIAM J. Discrete Math. 15(2), 2002 (mean busy time; :math:`C_j \ge \mu_j + p_j/2`).
* Goemans. Improved approximation algorithms for scheduling with release dates.
  SODA 1997 (the preemptive ratio rule minimises :math:`\sum w_j \mu_j`).
* Hall, Schulz, Shmoys, Wein. Scheduling to minimize average completion time: off-line
  and on-line approximation algorithms. Math. Oper. Res. 22(3), 1997 (interval-indexed LPs).
* Queyranne. Structure of a simple scheduling polyhedron. Math. Programming 58, 1993
  (:math:`\sum_j p_j C_j \ge (\sum_j p_j)^2/2 + \dots` on one machine).
* Schwiegelshohn, Ludwig, Wolf, Turek, Yu. Smart SMART bounds for weighted response
  time scheduling. SIAM J. Comput. 28(1), 1998 (squashed area of parallel jobs).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import check_progress_rule
from optsched.core.result import Status
from optsched.errors import InvalidInput, InvalidOption, ModelNotApplicable
from optsched.solvers import solve_program
from optsched.solvers.program import LinearProgram, ProgramData

__all__ = ["Setting", "Bounds", "lower_bounds", "METHODS", "certified_lp_bound",
           "DEFAULT_MAX_COLUMNS", "COLUMNS_PER_JOB", "column_budget"]

#: The bound methods, in the order they are tried.
METHODS = ("per_job", "pooled", "interval_lp", "release_lp")
#: The objectives a bound is computed for.
OBJECTIVES = ("mean_jct", "weighted_mean_jct", "makespan")
#: The LPs are skipped (and the skip reported) above ``max(DEFAULT_MAX_COLUMNS,
#: COLUMNS_PER_JOB * n)`` columns unless told otherwise (:func:`column_budget`): a budget
#: linear in the number of jobs, so the relaxations grow linearly with the trace.
DEFAULT_MAX_COLUMNS = 60_000
#: Columns per job of the default budget: the interval LP with two intervals per job
#: window needs about five per job on one GPU type.
COLUMNS_PER_JOB = 6


def column_budget(n_jobs: int) -> int:
    """The default column budget of the LP bounds for ``n_jobs`` jobs:
    ``max(DEFAULT_MAX_COLUMNS, COLUMNS_PER_JOB * n_jobs)``. Measured: the full Philly
    trace (82,247 jobs, 493,482 columns at most) takes 17 s CPU and 1.05 GiB for every
    method at 6x arrivals (``benchmarks/results/bounds_scale.md``)."""
    return max(DEFAULT_MAX_COLUMNS, COLUMNS_PER_JOB * int(n_jobs))


@dataclass(frozen=True)
class Setting:
    """What the schedules being bounded may do (the simulator's policy capabilities).

    With ``colocation`` (two jobs on the same GPUs at the instance's co-located rates)
    a job's rate on a type is taken as the larger of its isolated rate and every
    co-located rate its key has there, and only ``per_job`` is proved: the other
    methods' capacity argument does not hold when a GPU runs two jobs (they are
    reported as skipped).

    A bound computed for a setting holds for every schedule of that setting and of any
    narrower one (``gang`` is narrower than ``partial`` and ``additive`` for the bound,
    which uses the same rate limit for all three).
    """

    progress_rule: str = "gang"
    forking: bool = False
    sharing: bool = False
    resource_sensitive: bool = False
    colocation: bool = False

    def __post_init__(self) -> None:
        check_progress_rule(self.progress_rule)
        for name in ("forking", "sharing", "resource_sensitive", "colocation"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidOption(name, getattr(self, name), "must be true or false")

    @classmethod
    def of(cls, source: Any) -> Setting:
        """The setting a simulator policy object or a schedule declares (their optional
        capabilities, read by name), or that a registry
        :class:`~optsched.core.validate.Capabilities` record allows (for a policy known by
        name: ``Setting.of(optsched.registry.capabilities(name))``)."""
        rules = getattr(source, "progress_rules", None)
        if rules:  # a Capabilities record: the bound is the same under every rule
            rule = rules[0]
        else:
            rule = getattr(source, "progress_rule", "gang") or "gang"
        return cls(progress_rule=rule, forking=bool(getattr(source, "forking", False)),
                   sharing=bool(getattr(source, "sharing", False)),
                   resource_sensitive=bool(getattr(source, "resource_sensitive", False)),
                   colocation=bool(getattr(source, "colocation", False)))

    def describe(self) -> str:
        extra = [n for n in ("forking", "sharing", "resource_sensitive", "colocation")
                 if getattr(self, n)]
        return f"{self.progress_rule} progress" + "".join(f", {e}" for e in extra)


@dataclass(frozen=True)
class Bounds:
    """Lower bounds on an instance's objectives, each with the method that gave it.

    ``mean_jct`` and ``makespan`` are in seconds; ``by_method`` holds every method's
    value (``None`` where it was skipped, with the reason in ``skipped``).
    """

    mean_jct: float
    weighted_mean_jct: float
    makespan: float
    source: dict[str, str]
    by_method: dict[str, dict[str, float | None]]
    skipped: dict[str, str]
    seconds: dict[str, float]
    setting: Setting
    n_jobs: int
    extra: dict[str, Any] = field(default_factory=dict)

    def gap(self, objective: str, value: float) -> float:
        """``value / bound``: at least 1 for every schedule (``inf`` if the bound is 0)."""
        b = self.value(objective)
        return math.inf if b <= 0 else value / b

    def value(self, objective: str) -> float:
        if objective == "utility":
            raise InvalidOption("objective", objective, "these are lower bounds on "
                                + ", ".join(OBJECTIVES) + "; total utility has an upper bound: "
                                "optsched.sim.utility_bounds.utility_upper_bound")
        if objective not in OBJECTIVES:
            raise InvalidOption("objective", objective, "must be one of " + ", ".join(OBJECTIVES))
        return float(getattr(self, objective))

    def to_dict(self) -> dict[str, Any]:
        return {"mean_jct": self.mean_jct, "weighted_mean_jct": self.weighted_mean_jct,
                "makespan": self.makespan, "source": dict(self.source),
                "by_method": {m: dict(v) for m, v in self.by_method.items()},
                "skipped": dict(self.skipped), "seconds": dict(self.seconds),
                "setting": {"progress_rule": self.setting.progress_rule,
                            "forking": self.setting.forking, "sharing": self.setting.sharing,
                            "resource_sensitive": self.setting.resource_sensitive},
                "n_jobs": self.n_jobs, **({"extra": self.extra} if self.extra else {})}


# --------------------------------------------------------------------------- job data


@dataclass(frozen=True)
class _Data:
    r: np.ndarray          # release (s)
    E: np.ndarray          # work (iterations)
    wt: np.ndarray         # objective weight
    rate: np.ndarray       # [n, K] best per-worker rate on type k (0: unusable)
    G: np.ndarray          # most GPUs the job may hold at once
    u: np.ndarray          # area factor (compute share under sharing, else 1)
    M: np.ndarray          # [K] GPUs per type

    @property
    def p(self) -> np.ndarray:
        return self.E / (self.G * self.rate.max(axis=1))

    @property
    def area(self) -> np.ndarray:
        """[n, K] GPU-seconds of type k for the whole job (inf where unusable)."""
        with np.errstate(divide="ignore"):
            return np.where(self.rate > 0, (self.E * self.u)[:, None] / self.rate, np.inf)

    @property
    def jobtime(self) -> np.ndarray:
        """[n, K] seconds the job needs on type k at its widest (inf where unusable)."""
        with np.errstate(divide="ignore"):
            return np.where(self.rate > 0, self.E[:, None] / (self.G[:, None] * self.rate),
                            np.inf)


def _data(instance: Instance, setting: Setting) -> _Data:
    cl = instance.cluster
    types = cl.gpu_types
    n = instance.n_jobs
    if n == 0:
        raise InvalidInput("instance.jobs", [], "a bound needs at least one job")
    cap = cl.capacity  # [h, k]
    rate = np.zeros((n, len(types)))
    G = np.zeros(n)
    u = np.ones(n)
    co = _colocated_peaks(instance) if setting.colocation else {}
    for j, job in enumerate(instance.jobs):
        rho = 1.0
        if setting.resource_sensitive and job.sensitivity is not None:
            rho = max(1.0, float(np.max(np.asarray(job.sensitivity.throughput, dtype=float))))
        key = job.profile if job.profile is not None else job.id
        for k, t in enumerate(types):
            rate[j, k] = job.rate(t) * rho
            if co and rate[j, k] > 0:  # a co-located rate may exceed the isolated one
                peak = max(co.get((t, key, job.workers), 0.0), co.get((t, key, None), 0.0))
                rate[j, k] = max(rate[j, k], peak * rho)
        usable = rate[j] > 0
        if not usable.any():
            raise ModelNotApplicable(f"jobs[{j}].throughput", dict(job.throughput),
                                     "the job can run on no GPU type of the cluster")
        per_node = cap[:, usable].sum(axis=1)
        if setting.forking:
            # one copy per node, each of at most W workers; without sharing a worker is
            # a whole GPU, with sharing any number of workers fit a GPU at fractions
            on_node = np.full(per_node.shape, job.workers) if setting.sharing else \
                np.minimum(job.workers, per_node)
            G[j] = float(on_node[per_node > 0].sum())
        else:
            G[j] = float(job.workers)
            if job.workers > per_node.sum() and not setting.sharing:
                raise ModelNotApplicable(f"jobs[{j}].workers", job.workers,
                                         "more workers than GPUs of the types it can use")
        if setting.sharing and job.compute_share is not None:
            u[j] = float(job.compute_share)
    r = np.array([j.arrival for j in instance.jobs], dtype=float)
    E = np.array([j.work for j in instance.jobs], dtype=float)
    wt = np.array([j.weight for j in instance.jobs], dtype=float)
    M = np.array([cl.gpus_per_type[t] for t in types], dtype=float)
    return _Data(r=r, E=E, wt=wt, rate=rate, G=G, u=u, M=M)


# --------------------------------------------------------------------------- bounds


def _colocated_peaks(instance: Instance) -> dict[tuple[str, str, int | None], float]:
    """Per (GPU type, co-location key, gang size or ``None``) the largest co-located
    per-worker rate the instance's table gives a job of that key, over every partner
    key: no job sharing GPUs runs faster. :math:`O(\text{rows})`."""
    peaks: dict[tuple[str, str, int | None], float] = {}
    table = instance.colocation
    if table is None:
        return peaks
    for e in table.entries:
        for key, r in ((e.a, e.rate_a), (e.b, e.rate_b)):
            k = (e.gpu_type, key, e.workers)
            peaks[k] = max(peaks.get(k, 0.0), r)
    return peaks


#: Why only ``per_job`` bounds schedules with co-location.
_COLOCATION_SKIP = ("co-location: two jobs may share a GPU, so the GPUs' capacity does not "
                    "limit the work done as this method assumes; only per_job (each job at "
                    "its fastest isolated or co-located rate) is proved")


def _per_job(d: _Data) -> tuple[np.ndarray, float]:
    """Per job :math:`r_j + p_j` and the makespan bound :math:`\\max_j (r_j + p_j)`."""
    c = d.r + d.p
    return c, float(c.max())


def pooled_speeds(d: _Data) -> tuple[np.ndarray, np.ndarray]:
    """Best-type areas :math:`a_j` and the per-type speeds :math:`\\sigma_k`."""
    area = d.area
    a = area.min(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isfinite(area), a[:, None] / area, 0.0)
    sigma = ratio.max(axis=0)
    return a, sigma


def _pooled(d: _Data, weights: np.ndarray) -> tuple[float, float, np.ndarray]:
    r"""The fluid single machine of speed :math:`S`, ratio rule: returns
    :math:`\sum_j w_j (\mu^*_j + p_j/2)`, the makespan bound and :math:`\mu^*`."""
    a, sigma = pooled_speeds(d)
    S = float((sigma * d.M).sum())
    n = a.size
    order = np.lexsort((np.arange(n), d.r))
    mu = np.zeros(n)
    left = a.copy()
    heap: list[tuple[float, int]] = []
    t = float(d.r[order[0]])
    i = 0
    # ratio rule: largest w_j / a_j first; ties by job index (any order is optimal)
    key = -(weights / a)
    while i < n or heap:
        if not heap:
            t = max(t, float(d.r[order[i]]))
        while i < n and d.r[order[i]] <= t:
            j = int(order[i])
            heapq.heappush(heap, (float(key[j]), j))
            i += 1
        _, j = heap[0]
        finish = t + left[j] / S
        stop = min(finish, float(d.r[order[i]])) if i < n else finish
        done = (stop - t) * S
        # fraction done * its mean instant
        mu[j] += (done / a[j]) * (t + stop) / 2.0
        left[j] -= done
        t = stop
        if stop >= finish or left[j] <= a[j] * 1e-12:
            heapq.heappop(heap)
            left[j] = 0.0
    total = float(np.dot(weights, mu + d.p / 2.0))
    # makespan: the machine is busy from each release s with all later work
    rs = d.r[order]
    suffix = np.cumsum(a[order][::-1])[::-1]
    cmax = float(np.max(rs + suffix / S))
    return total, cmax, mu


def _grid(d: _Data, step: float, window: float) -> np.ndarray:
    """Boundaries :math:`b_0 < \\dots < b_L` of uniform ``step`` from the first release to
    the last release plus ``window``."""
    start = float(d.r.min())
    span = float(d.r.max()) + window - start
    L = max(1, math.ceil(span / step))
    return start + step * np.arange(L + 1)


def _interval_lp(d: _Data, weights: np.ndarray, b: np.ndarray, window: float,
                 tangents: int = 0, meta: dict | None = None,
                 squash: int = 0) -> LinearProgram:
    r"""The interval LP with a window per job: job :math:`j` has columns for the intervals
    that start before :math:`r_j + H` and one *late* column per type for what it does
    after them (start :math:`s` = their end, no capacity row: a relaxation). With
    ``tangents`` :math:`m \ge 1` each column is split into the :math:`m + 1` pieces of
    the busy-time minorant (module docstring). ``meta``, if given, receives each
    column's job, type, start :math:`s`, interval (-1: late) and busy-time coefficient.
    With ``squash`` :math:`Q \ge 1` each finite column gets an end part and the
    :math:`Q` squashed-area rows per (type, interval) are added (module docstring)."""
    n, K = d.rate.shape
    L = b.size - 1
    area, jt, p = d.area, d.jobtime, d.p
    # intervals [b_l, b_{l+1}) that end after r_j and start before r_j + H
    first = np.searchsorted(b, d.r, side="right") - 1
    last = np.minimum(np.searchsorted(b, d.r + window, side="left"), L)  # exclusive
    cnt = last - first
    jj = np.repeat(np.arange(n), cnt)
    ll = np.arange(jj.size) - np.repeat(np.cumsum(cnt) - cnt, cnt) + np.repeat(first, cnt)
    s = np.maximum(b[ll], d.r[jj])
    e = b[ll + 1]
    # the late part: from the end of the job's last interval on
    jj = np.concatenate([jj, np.arange(n)])
    s = np.concatenate([s, b[last]])
    e = np.concatenate([e, np.full(n, np.inf)])
    ll = np.concatenate([ll, np.full(n, -1)])
    lp = LinearProgram(sense="min", name="interval-bound")
    usable = np.isfinite(area)
    reps = usable[jj].sum(axis=1)
    # one base column per (job, type, interval): its pair (job, interval) and data
    col = {"j": np.repeat(jj, reps), "l": np.repeat(ll, reps), "s": np.repeat(s, reps),
           "e": np.repeat(e, reps), "pair": np.repeat(np.arange(jj.size), reps),
           "k": np.nonzero(usable[jj])[1]}
    with np.errstate(invalid="ignore", divide="ignore"):
        col["ub"] = np.minimum(1.0, (col["e"] - col["s"]) / jt[col["j"], col["k"]])
    col["busy"] = col["s"].copy()  # the coefficient of the column in mu_j
    base = col
    if tangents:
        # column split into tangents + 1 pieces of a convex piecewise-linear minorant of
        # jt x^2 / 2 (tangents at u i / m): piece i has slope jt u i / m
        m = tangents
        frac = np.r_[0.5, np.ones(m - 1), 0.5] / m
        col = {key: np.repeat(v, m + 1) for key, v in base.items()}
        i_ = np.tile(np.arange(m + 1), base["j"].size)
        col["busy"] = col["s"] + jt[col["j"], col["k"]] * col["ub"] * i_ / m
        col["ub"] = col["ub"] * frac[i_]
    if squash:
        # a part done at the end of its interval, for the squashed-area rows
        fb = {key: v[base["l"] >= 0] for key, v in base.items()}
        fb["busy"] = fb["e"].copy()
        col = {key: np.concatenate([col[key], fb[key]]) for key in col}
    cj, ck, cl, cs = col["j"], col["k"], col["l"], col["s"]
    x = lp.add_variables("x", cj.size, lb=0.0, ub=col["ub"])
    if meta is not None:  # what each column is, for a reader of the primal solution
        meta.update(job=cj, type=ck, start=cs, interval=cl, busy=col["busy"])
    C = lp.add_variables("C", n, lb=d.r + p, cost=weights)
    lp.add_constraints("work", rows=cj, cols=x.index, vals=1.0, lb=1.0, ub=1.0, n_rows=n)
    fin = np.flatnonzero(cl >= 0)
    lp.add_constraints("capacity", rows=cl[fin] * K + ck[fin], cols=x.index[fin],
                       vals=area[cj[fin], ck[fin]],
                       ub=(np.diff(b)[:, None] * d.M[None, :]).ravel(), n_rows=L * K)
    fp = np.flatnonzero(np.isfinite(e))
    # the finite pairs are numbered first (late pairs were appended after them)
    lp.add_constraints("jobtime", rows=col["pair"][fin], cols=x.index[fin],
                       vals=jt[cj[fin], ck[fin]], ub=(e - s)[fp], n_rows=fp.size)
    lp.add_constraints("mean_busy", rows=np.concatenate([np.arange(n), cj]),
                       cols=np.concatenate([C.index, x.index]),
                       vals=np.concatenate([np.ones(n), -col["busy"]]), lb=p / 2.0, n_rows=n)
    if squash:
        # per (interval, type) and tangent point A0 = q/Q of its capacity:
        # sum_j a_jk (busy - b_l x) >= A0 (sum_j a_jk x) / M_k - A0^2 / (2 M_k)
        Q = squash
        dl = np.diff(b)
        q = np.arange(1, Q + 1) / Q
        a = area[cj[fin], ck[fin]]
        off = col["busy"][fin] - b[cl[fin]]
        rows = ((cl[fin] * K + ck[fin])[:, None] * Q + np.arange(Q)[None, :]).ravel()
        vals = (a[:, None] * (off[:, None] - dl[cl[fin]][:, None] * q[None, :])).ravel()
        cols = np.repeat(x.index[fin], Q)
        lb = -(d.M[None, :, None] * dl[:, None, None] ** 2 * q[None, None, :] ** 2 / 2.0)
        lp.add_constraints("squashed", rows=rows, cols=cols, vals=vals, lb=lb.ravel(),
                           n_rows=L * K * Q)
    return lp


def _default_window(d: _Data) -> float:
    """Eight times the mean of the jobs' shortest run times."""
    return float(max(8.0 * d.p.mean(), 1.0))


def _release_lp(d: _Data, buckets: int) -> LinearProgram:
    n, K = d.rate.shape
    area, jt = d.area, d.jobtime
    rel = np.unique(d.r)
    if rel.size > buckets:
        rel = np.unique(np.quantile(rel, np.linspace(0, 1, buckets), method="lower"))
    # bucket of each job: the largest chosen release time <= r_j
    bj = np.searchsorted(rel, d.r, side="right") - 1
    B = rel.size
    usable = np.isfinite(area)
    cj, ck = np.nonzero(usable)
    lp = LinearProgram(sense="min", name="release-bound")
    T = lp.add_variables("T", 1, lb=float((d.r + d.p).max()), cost=1.0)
    x = lp.add_variables("x", cj.size, lb=0.0, ub=1.0)
    # type-k area of the buckets >= i; the upper bound (all of every job's area) holds
    # at every feasible point and keeps the dual certificate finite
    zmax = np.where(usable, area, 0.0).sum(axis=0)
    Z = lp.add_variables("Z", (B, K), lb=0.0, ub=np.broadcast_to(zmax, (B, K)))
    lp.add_constraints("work", rows=cj, cols=x.index, vals=1.0, lb=1.0, ub=1.0, n_rows=n)
    # Z[i,k] - Z[i+1,k] - sum_{j in bucket i} a_jk x_jk = 0
    zi = Z.index.reshape(B, K)
    rows = [np.arange(B * K), np.arange((B - 1) * K), bj[cj] * K + ck]
    cols = [zi.ravel(), zi[1:].ravel(), x.index]
    vals = [np.ones(B * K), -np.ones((B - 1) * K), -area[cj, ck]]
    lp.add_constraints("suffix", rows=np.concatenate(rows), cols=np.concatenate(cols),
                       vals=np.concatenate(vals), lb=0.0, ub=0.0, n_rows=B * K)
    # M_k T - Z[i,k] >= M_k s_i
    lp.add_constraints("capacity", rows=np.concatenate([np.arange(B * K)] * 2),
                       cols=np.concatenate([np.full(B * K, T.index[0]), zi.ravel()]),
                       vals=np.concatenate([np.tile(d.M, B), -np.ones(B * K)]),
                       lb=(rel[:, None] * d.M[None, :]).ravel(), n_rows=B * K)
    # T - sum_k jt_jk x_jk >= r_j
    lp.add_constraints("jobtime", rows=np.concatenate([np.arange(n), cj]),
                       cols=np.concatenate([np.full(n, T.index[0]), x.index]),
                       vals=np.concatenate([np.ones(n), -jt[cj, ck]]), lb=d.r, n_rows=n)
    return lp


def certified_lp_bound(data: ProgramData, row_duals: np.ndarray) -> float:
    r"""A lower bound on a minimisation LP's optimum from any row prices (weak duality).

    For :math:`\min c^\top x` s.t. :math:`\beta^- \le A x \le \beta^+`,
    :math:`l \le x \le u`, and any :math:`y`,

    .. math::

        c^\top x \;\ge\; \min_{l \le x \le u} (c - A^\top y)^\top x
        + \sum_i \min_{\beta^-_i \le v \le \beta^+_i} y_i v .

    Prices whose term would be :math:`-\infty` (an infinite row side, or a negative
    reduced cost on a column without upper bound) are first set to 0, resp. reduced
    until the reduced cost is 0 for that column's single-row case; what remains is a
    finite bound that holds exactly, up to the rounding of the final sums, whatever
    tolerances the solver used.
    """
    if data.sense != "min":
        raise InvalidOption("sense", data.sense, "certified bounds are for minimisation")
    y = np.asarray(row_duals, dtype=float).copy()
    y[(y > 0) & ~np.isfinite(data.row_lb)] = 0.0
    y[(y < 0) & ~np.isfinite(data.row_ub)] = 0.0
    A = data.A.tocsc()
    d = data.c - A.T @ y
    # a column without upper bound and a negative reduced cost: lower the prices of its
    # rows (only positive ones raise a cost) until the reduced cost is zero
    bad = np.flatnonzero((d < 0) & ~np.isfinite(data.col_ub))
    for col in bad:
        lo, hi = A.indptr[col], A.indptr[col + 1]
        rows, vals = A.indices[lo:hi], A.data[lo:hi]
        need = -d[col]
        for r_, v in zip(rows, vals, strict=True):
            contrib = v * y[r_]
            if contrib > 0 and need > 0:
                cut = min(contrib, need)
                y[r_] -= cut / v
                need -= cut
        if need > 1e-300:
            return -math.inf
    d = data.c - A.T @ y
    terms = [data.offset]
    lo_ok = np.isfinite(data.col_lb)
    up_ok = np.isfinite(data.col_ub)
    pos, neg = d > 0, d < 0
    if np.any(pos & ~lo_ok) or np.any(neg & ~up_ok):
        return -math.inf
    terms.extend((d[pos] * data.col_lb[pos]).tolist())
    terms.extend((d[neg] * data.col_ub[neg]).tolist())
    terms.extend((y[y > 0] * data.row_lb[y > 0]).tolist())
    terms.extend((y[y < 0] * data.row_ub[y < 0]).tolist())
    value = math.fsum(terms)
    # the products above are each rounded once: take off their worst-case error
    slack = 4 * np.finfo(float).eps * math.fsum(abs(t) for t in terms)
    return value - slack


def _solve_certified(lp: LinearProgram, time_limit: float | None) -> tuple[float | None, str]:
    data = lp.freeze()
    # interior point (with crossover, so that HiGHS reports the status): faster than
    # the simplex methods on these LPs
    res = solve_program(data, backend="highs", time_limit=time_limit,
                        options={"solver": "ipm"})
    if res.status is not Status.OPTIMAL or res.duals is None:
        return None, f"LP status {res.status.value}: {res.message or 'no optimum'}"
    y = np.concatenate([np.asarray(res.duals[b.name], dtype=float).ravel()
                        for b in data.row_blocks])
    value = certified_lp_bound(data, y)
    if not math.isfinite(value):
        return None, "the LP's duals gave no finite certificate"
    return value, f"LP {data.n_cols:,} columns x {data.n_rows:,} rows, optimum {res.objective:.6g}"


def lower_bounds(instance: Instance, setting: Setting | None = None, *,
                 methods: Sequence[str] = METHODS, intervals: int = 24,
                 window: float | None = None, step: float | None = None,
                 tangents: int = 0, squash: int = 0, release_buckets: int = 200,
                 max_columns: int | None = None,
                 time_limit: float | None = 60.0) -> Bounds:
    r"""Certified lower bounds on the mean JCT, weighted mean JCT and makespan of every
    schedule of ``instance`` in ``setting`` (module docstring).

    Parameters
    ----------
    instance : Instance
        Cluster and jobs (arrival, gang, work, per-worker rates).
    setting : Setting, optional
        What schedules may do (default: gang progress, no forking, sharing or
        resource sensitivity; a policy's own: :meth:`Setting.of`).
    methods : sequence of str
        A subset of :data:`METHODS`; an LP method too large for ``max_columns`` is
        skipped and the skip reported in ``Bounds.skipped``, never silently.
    intervals : int
        Intervals per job window of ``interval_lp`` when ``step`` is not given (each at
        least one round, ``instance.slot``; fewer when the LP would exceed
        ``max_columns``, down to two per window, below which the LP is skipped).
    window : float, optional
        Seconds after its release in which a job has one column per interval (default:
        :func:`_default_window`); what it does later is one column without capacity
        row, so any window gives a valid bound, a longer one a tighter one.
    step : float, optional
        Interval length in seconds (default ``max(slot, window / intervals)``).
    tangents : int
        Tangents of the busy-time minorant in ``interval_lp`` (0: off, the LP above;
        :math:`m \ge 1`: every column split into :math:`m + 1` pieces, so the LP has
        :math:`m + 1` times the columns, and a tighter bound; module docstring).
    squash : int
        Tangent points :math:`Q` of the squashed-area rows of ``interval_lp`` (0: none;
        :math:`Q \ge 1`: one more column per (job, type, interval) and :math:`Q` rows
        per (type, interval); module docstring).
    release_buckets : int
        Release times kept in ``release_lp`` (fewer keep the bound valid, only weaker).
    max_columns : int, optional
        Largest LP built (default :func:`column_budget` of the number of jobs).
    time_limit : float, optional
        Seconds per LP; an LP stopped by it gives no bound (reported in ``skipped``).

    Returns
    -------
    Bounds
        Each objective's best bound, its method, and every method's value.

    Guarantee
    ---------
    For every schedule :math:`\sigma` of ``instance`` in ``setting``:
    ``mean_jct`` :math:`\le \frac1n \sum_j (C_j(\sigma) - r_j)`, ``weighted_mean_jct``
    :math:`\le \sum_j w_j (C_j - r_j) / \sum_j w_j`, ``makespan``
    :math:`\le \max_j C_j(\sigma)` (the makespan of the simulator's metrics).

    Complexity
    ----------
    ``per_job`` :math:`O(nK)`, ``pooled`` :math:`O(n \log n + nK)`, ``interval_lp``
    and ``release_lp`` one LP each of :math:`O(nKL)` and :math:`O(nK + BK)` columns.
    """
    setting, methods, max_columns = _bound_options(instance, setting, methods, intervals,
                                                   release_buckets, max_columns)
    for name, v in (("tangents", tangents), ("squash", squash)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise InvalidOption(name, v, "must be an integer >= 0")
    d = _data(instance, setting)
    tally = _Tally()
    if setting.colocation:
        for m in methods:
            if m != "per_job":
                tally.skipped[m] = _COLOCATION_SKIP
        methods = ("per_job",)
    with tally.timed("per_job"):
        c, cmax = _per_job(d)
        tally.record("per_job", float(c.sum()), float(np.dot(d.wt, c)), cmax)
    if "pooled" in methods:
        with tally.timed("pooled"):
            _pooled_bound(d, tally)
    if "interval_lp" in methods:
        with tally.timed("interval_lp"):
            _interval_bound(d, float(instance.slot), tally, intervals=intervals,
                            window=window, step=step, tangents=int(tangents),
                            squash=int(squash),
                            max_columns=max_columns,
                            time_limit=time_limit)
    if "release_lp" in methods:
        with tally.timed("release_lp"):
            _release_bound(d, tally, release_buckets, max_columns, time_limit)
    return tally.bounds(d, setting)


def _bound_options(instance: Instance, setting: Setting | None, methods: Sequence[str],
                   intervals: int, release_buckets: int, max_columns: int | None
                   ) -> tuple[Setting, Sequence[str], int]:
    """:func:`lower_bounds`' options checked; the setting, methods and column budget."""
    setting = Setting() if setting is None else setting
    if not isinstance(setting, Setting):
        raise InvalidOption("setting", setting, "must be an optsched.sim.bounds.Setting "
                            "(Setting.of(policy or capabilities) for a policy's)")
    if isinstance(methods, str):
        methods = (methods,)
    if not methods:
        raise InvalidOption("methods", list(methods), "name at least one of "
                            + ", ".join(METHODS))
    for m in methods:
        if m == "utility_lp":
            raise InvalidOption("methods", m, "bounds total utility "
                                "(optsched.sim.utility_bounds.utility_upper_bound), not mean "
                                "JCT or makespan; these methods are " + ", ".join(METHODS))
        if m not in METHODS:
            raise InvalidOption("methods", m, "must be among " + ", ".join(METHODS))
    if max_columns is None:
        max_columns = column_budget(len(instance.jobs))
    for name, v in (("intervals", intervals), ("release_buckets", release_buckets),
                    ("max_columns", max_columns)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidOption(name, v, "must be an integer >= 1")
    return setting, methods, max_columns


class _Tally:
    """What :func:`lower_bounds` found: per method its values, skips, seconds, extras."""

    def __init__(self) -> None:
        self.total: dict[str, dict[str, float | None]] = {}
        self.skipped: dict[str, str] = {}
        self.seconds: dict[str, float] = {}
        self.extra: dict[str, Any] = {}

    def record(self, m: str, sum_c: float | None, wsum_c: float | None,
               cmax: float | None) -> None:
        self.total[m] = {"total_completion": sum_c, "weighted_total_completion": wsum_c,
                         "makespan": cmax}

    @contextmanager
    def timed(self, m: str) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        self.seconds[m] = time.perf_counter() - t0

    def best(self, key: str) -> tuple[float, str]:
        """The largest value of ``key`` over the methods (ties: the first method)."""
        vals = [(v[key], m) for m, v in self.total.items() if v.get(key) is not None]
        return max(vals, key=lambda t: (t[0], -METHODS.index(t[1])))  # type: ignore[return-value]

    def bounds(self, d: _Data, setting: Setting) -> Bounds:
        n = d.r.size
        sc, src_c = self.best("total_completion")
        wc, src_w = self.best("weighted_total_completion")
        cm, src_m = self.best("makespan")
        mean = (sc - float(d.r.sum())) / n
        wmean = (wc - float(np.dot(d.wt, d.r))) / float(d.wt.sum())
        # the metrics' makespan runs from the first arrival
        return Bounds(mean_jct=max(0.0, mean), weighted_mean_jct=max(0.0, wmean),
                      makespan=max(0.0, float(cm) - float(d.r.min())),
                      source={"mean_jct": src_c, "weighted_mean_jct": src_w,
                              "makespan": src_m},
                      by_method=self.total, skipped=self.skipped, seconds=self.seconds,
                      setting=setting, n_jobs=n, extra=self.extra)


def _pooled_bound(d: _Data, tally: _Tally) -> None:
    s1, cm, _ = _pooled(d, np.ones(d.r.size))
    s2 = s1 if np.all(d.wt == 1) else _pooled(d, d.wt)[0]
    tally.record("pooled", s1, s2, cm)
    _, sigma = pooled_speeds(d)
    tally.extra["pooled_speed"] = float((sigma * d.M).sum())


def _interval_bound(d: _Data, slot: float, tally: _Tally, *, intervals: int,
                    window: float | None, step: float | None, tangents: int,
                    squash: int, max_columns: int,
                    time_limit: float | None) -> None:
    n = d.r.size
    H = float(window) if window is not None else _default_window(d)
    dt = float(step) if step is not None else max(slot, H / intervals)
    # the columns per interval (each split into tangents + 1 pieces)
    per_interval = int(np.isfinite(d.area).sum()) * (tangents + 1 + (squash > 0))
    if step is None and per_interval * (H / dt + 2) + n > max_columns:
        # coarser steps to fit the column budget (any step gives a valid bound)
        fit = (max_columns - n) / per_interval - 2
        dt = H / fit if fit >= 2 else math.inf
    cols = int(per_interval * (H / dt + 2)) + n if math.isfinite(dt) else None
    if cols is None or cols > max_columns:
        need = cols if cols is not None else 4 * per_interval + n
        tally.skipped["interval_lp"] = (f"needs {need:,} columns (at least two intervals "
                                        f"per job window) > max_columns {max_columns:,}")
        return
    b = _grid(d, dt, H)
    v1, msg = _solve_certified(_interval_lp(d, np.ones(n), b, H, tangents, squash=squash),
                               time_limit)
    v2 = v1
    if v1 is not None and not np.all(d.wt == 1):
        v2, msg = _solve_certified(_interval_lp(d, d.wt, b, H, tangents, squash=squash),
                                   time_limit)
    if v1 is None or v2 is None:
        tally.skipped["interval_lp"] = msg
    else:
        tally.record("interval_lp", v1, v2, None)
        tally.extra["interval_lp"] = {"window": H, "step": dt, "tangents": tangents,
                                      "squash": squash, "lp": msg}


def _release_bound(d: _Data, tally: _Tally, release_buckets: int, max_columns: int,
                   time_limit: float | None) -> None:
    rcols = int(np.isfinite(d.area).sum()) + 1 + release_buckets * d.M.size
    if rcols > max_columns:
        tally.skipped["release_lp"] = f"{rcols:,} columns > max_columns {max_columns:,}"
        return
    vr, msg = _solve_certified(_release_lp(d, release_buckets), time_limit)
    if vr is None:
        tally.skipped["release_lp"] = msg
    else:
        tally.record("release_lp", None, None, vr)
        tally.extra["release_lp"] = {"lp": msg}

