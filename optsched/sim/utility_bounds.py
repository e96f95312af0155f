r"""A certified *upper* bound on the total utility of any schedule of an instance, in the
setting the simulator runs every policy in (Hadar's and HadarE's objective).

The quantity bounded is the simulator's metric (:mod:`optsched.core.metrics`)

.. math::

    U(\sigma) = \sum_{j \text{ completed}} v_j(C_j), \qquad
    v_j(C) = w_j\, f_j(C - r_j),

with :math:`f_j` the job's utility (:class:`~optsched.core.job_profiles.Utility`; a job
without one has :math:`f_j \equiv 1`). Every kind of utility is non-negative and
non-increasing in the delay, which is all the bounds use: a job that does not complete
adds 0, and a completion reported later than the instant the job's work is done (at
the end of a round or of a model's slot) can only lower its value.

The setting and the job data (:math:`p_j`, the type areas :math:`a_{jk}`, the
per-type job times) are those of :mod:`optsched.sim.bounds` (:class:`Setting`).

The bounds (each a theorem, proved in ``docs/bounds.md``)
----------------------------------------------------------
``per_job``
    :math:`U(\sigma) \le \sum_j v_j(r_j + p_j)`: no job completes before
    :math:`r_j + p_j`.
``utility_lp``
    Time cut at :math:`b_0 < \dots < b_L` (the grid of the interval LP, with a window
    of :math:`H` seconds per job and one open *late* segment after it); job :math:`j`'s
    segments :math:`\ell` start at :math:`s_{j\ell} = \max(b_\ell, r_j)`. Variables
    :math:`x_{jk\ell} \ge 0` (fraction of job :math:`j` done on type :math:`k` in
    segment :math:`\ell`), :math:`y_{j\ell} \in [0, 1]` (the job completes in segment
    :math:`\ell`) and :math:`S_{j\ell} \in [0, 1]` (work done minus completions, up to
    segment :math:`\ell`):

    .. math::

        \max \sum_{j,\ell} v_j\big(\max(s_{j\ell}, r_j + p_j)\big)\, y_{j\ell}
        \;\text{s.t.}\;
        S_{j\ell} = S_{j,\ell-1} + \sum_k x_{jk\ell} - y_{j\ell},\quad
        \sum_\ell y_{j\ell} \le 1,

        \sum_j a_{jk} x_{jk\ell} \le M_k (b_{\ell+1} - b_\ell),\quad
        \sum_k \frac{E_j}{G_j \tau_{jk}\bar\rho_j} x_{jk\ell} \le b_{\ell+1} - s_{j\ell}.

    Any schedule gives a feasible point whose objective is at least :math:`U(\sigma)`:
    credit its work as in the interval LP, put :math:`y_{j\ell} = 1` in the segment
    holding its completion instant (all its work then lies in segments
    :math:`\le \ell`, so :math:`S \ge 0`), and the value credited,
    :math:`v_j` at the segment's earliest possible completion, is at least
    :math:`v_j(C_j)`. The LP is solved through the solver layer as the minimisation of
    :math:`-\sum v y` and certified from its duals by weak duality
    (:func:`optsched.sim.bounds.certified_lp_bound`): the bound reported is minus a
    certified lower bound of that minimum, so it does not rely on the solver's
    tolerances.

Relation to Hadar's exact model (:mod:`optsched.hadar.exact`): a job there completes at
the *end* of its completion slot, :math:`(\hat t_j + 1)\Delta`, at or after the instant
its work is done, and progress is credited at the slot's threshold rate, at most the
true rate. Its objective is therefore at most :math:`U` of the same schedule, and every
bound here is at least the model's optimum.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.errors import InvalidOption
from optsched.sim.bounds import (
    _COLOCATION_SKIP,
    Setting,
    _Data,
    _data,
    _default_window,
    _grid,
    _solve_certified,
    column_budget,
)
from optsched.solvers.program import LinearProgram

__all__ = ["UTILITY_METHODS", "UtilityBound", "utility_upper_bound", "has_utilities"]

#: The utility bound methods, in the order they are tried.
UTILITY_METHODS = ("per_job", "utility_lp")


def has_utilities(instance: Instance) -> bool:
    """Whether some job carries a utility function (else every job's value is its
    weight whenever it completes, and total utility is a weighted count)."""
    return any(j.utility is not None for j in instance.jobs)


@dataclass(frozen=True)
class UtilityBound:
    """An upper bound on the total utility of every schedule, with the method that gave
    it, every method's value (``None`` where skipped, the reason in ``skipped``)."""

    utility: float
    source: str
    by_method: dict[str, float | None]
    skipped: dict[str, str]
    seconds: dict[str, float]
    setting: Setting
    n_jobs: int
    extra: dict[str, Any] = field(default_factory=dict)

    def gap(self, value: float) -> float:
        """``bound / value``: at least 1 for every schedule (``inf`` if ``value`` is 0)."""
        return math.inf if value <= 0 else self.utility / value

    def to_dict(self) -> dict[str, Any]:
        return {"utility": self.utility, "source": self.source,
                "by_method": dict(self.by_method), "skipped": dict(self.skipped),
                "seconds": dict(self.seconds),
                "setting": {"progress_rule": self.setting.progress_rule,
                            "forking": self.setting.forking, "sharing": self.setting.sharing,
                            "resource_sensitive": self.setting.resource_sensitive},
                "n_jobs": self.n_jobs, **({"extra": self.extra} if self.extra else {})}


def _values(instance: Instance, d: _Data, at: np.ndarray, jobs: np.ndarray) -> np.ndarray:
    """:math:`v_j(t)` for the pairs ``(jobs[i], at[i])`` (completion instants)."""
    out = np.empty(at.size)
    order = np.argsort(jobs, kind="stable")
    bounds = np.searchsorted(jobs[order], np.arange(d.r.size + 1))
    for j, job in enumerate(instance.jobs):
        idx = order[bounds[j]:bounds[j + 1]]
        if idx.size:
            out[idx] = np.asarray(job.value(at[idx] - d.r[j]), dtype=float)
    return out


def _utility_lp(instance: Instance, d: _Data, b: np.ndarray, window: float) -> LinearProgram:
    """The utility LP (module docstring) as ``min -sum v y``."""
    n, K = d.rate.shape
    L = b.size - 1
    area, jt, p = d.area, d.jobtime, d.p
    first = np.searchsorted(b, d.r, side="right") - 1
    last = np.minimum(np.searchsorted(b, d.r + window, side="left"), L)  # exclusive
    cnt = last - first
    # segments: each job's intervals, then its late segment (the job's own order)
    seg_n = cnt + 1
    jj = np.repeat(np.arange(n), seg_n)
    pos = np.arange(jj.size) - np.repeat(np.cumsum(seg_n) - seg_n, seg_n)
    is_late = pos == np.repeat(cnt, seg_n)
    ll = np.where(is_late, -1, pos + np.repeat(first, seg_n))
    s = np.where(is_late, b[np.repeat(last, seg_n)], np.maximum(b[np.maximum(ll, 0)], d.r[jj]))
    e = np.where(is_late, np.inf, b[np.minimum(ll + 1, L)])
    nseg = jj.size
    usable = np.isfinite(area)
    reps = usable[jj].sum(axis=1)
    cj = np.repeat(jj, reps)
    cl = np.repeat(ll, reps)
    cseg = np.repeat(np.arange(nseg), reps)
    ck = np.nonzero(usable[jj])[1]
    avail = np.repeat(e - s, reps)
    with np.errstate(invalid="ignore", divide="ignore"):
        ub = np.minimum(1.0, avail / jt[cj, ck])
    lp = LinearProgram(sense="min", name="utility-bound")
    x = lp.add_variables("x", cj.size, lb=0.0, ub=ub)
    credit = _values(instance, d, np.maximum(s, d.r[jj] + p[jj]), jj)
    y = lp.add_variables("y", nseg, lb=0.0, ub=1.0, cost=-credit)
    S = lp.add_variables("S", nseg, lb=0.0, ub=1.0)
    # S_l - S_{l-1} - sum_k x_kl + y_l = 0, one row per segment
    prev = np.flatnonzero(pos > 0)
    lp.add_constraints(
        "cumulative",
        rows=np.concatenate([np.arange(nseg), prev, cseg, np.arange(nseg)]),
        cols=np.concatenate([S.index, S.index[prev - 1], x.index, y.index]),
        vals=np.concatenate([np.ones(nseg), -np.ones(prev.size), -np.ones(cj.size),
                             np.ones(nseg)]),
        lb=0.0, ub=0.0, n_rows=nseg)
    lp.add_constraints("once", rows=jj, cols=y.index, vals=1.0, ub=1.0, n_rows=n)
    fin = np.flatnonzero(cl >= 0)
    lp.add_constraints("capacity", rows=cl[fin] * K + ck[fin], cols=x.index[fin],
                       vals=area[cj[fin], ck[fin]],
                       ub=(np.diff(b)[:, None] * d.M[None, :]).ravel(), n_rows=L * K)
    fs = np.flatnonzero(~is_late)
    row_of = np.full(nseg, -1)
    row_of[fs] = np.arange(fs.size)
    lp.add_constraints("jobtime", rows=row_of[cseg[fin]], cols=x.index[fin],
                       vals=jt[cj[fin], ck[fin]], ub=(e - s)[fs], n_rows=fs.size)
    return lp


def utility_upper_bound(instance: Instance, setting: Setting | None = None, *,
                        methods: Sequence[str] = UTILITY_METHODS, intervals: int = 24,
                        window: float | None = None, step: float | None = None,
                        max_columns: int | None = None,
                        time_limit: float | None = 60.0) -> UtilityBound:
    r"""A certified upper bound on the total utility of every schedule of ``instance``
    in ``setting`` (module docstring).

    Parameters
    ----------
    instance : Instance
        Cluster and jobs (arrival, gang, work, rates, weight, utility).
    setting : Setting, optional
        What schedules may do (default: gang progress; a policy's own:
        :meth:`Setting.of`).
    methods : sequence of str
        A subset of :data:`UTILITY_METHODS` (``per_job`` is always computed); an LP too
        large for ``max_columns`` or stopped by ``time_limit`` is skipped and the skip
        reported in ``UtilityBound.skipped``, never silently.
    intervals, window, step, max_columns, time_limit
        As for :func:`optsched.sim.bounds.lower_bounds`: ``intervals`` per job window
        of ``window`` seconds (default eight mean shortest run times), each at least a
        round; any grid gives a valid bound, a finer and longer one a tighter one.

    Returns
    -------
    UtilityBound
        The smallest bound, its method, and every method's value.

    Guarantee
    ---------
    For every schedule :math:`\sigma` of ``instance`` in ``setting``,
    :math:`\sum_{j \text{ completed}} w_j f_j(C_j(\sigma) - r_j) \le` ``utility``
    (``Metrics.utility`` of any simulated or exact schedule, and the optimum of Hadar's
    slotted model, :mod:`optsched.hadar.exact`).

    Complexity
    ----------
    ``per_job`` :math:`O(nK)`; ``utility_lp`` one LP of :math:`O(nKL)` columns and
    :math:`O(nL + LK)` rows, :math:`L` intervals per job window.
    """
    setting, methods, max_columns = _utility_options(instance, setting, methods, intervals,
                                                     max_columns)
    d = _data(instance, setting)
    n = d.r.size
    by: dict[str, float | None] = {}
    skipped: dict[str, str] = {}
    seconds: dict[str, float] = {}
    extra: dict[str, Any] = {}
    t0 = time.perf_counter()
    earliest = d.r + d.p
    by["per_job"] = float(_values(instance, d, earliest, np.arange(n)).sum())
    seconds["per_job"] = time.perf_counter() - t0
    if "utility_lp" in methods and setting.colocation:
        skipped["utility_lp"] = _COLOCATION_SKIP
    elif "utility_lp" in methods:
        t0 = time.perf_counter()
        value, note = _utility_lp_bound(instance, d, intervals=intervals, window=window,
                                        step=step, max_columns=max_columns,
                                        time_limit=time_limit)
        if value is None:
            skipped["utility_lp"] = note
        else:
            by["utility_lp"] = value
            extra["utility_lp"] = note
        seconds["utility_lp"] = time.perf_counter() - t0
    src, best = min(((m, v) for m, v in by.items() if v is not None),
                    key=lambda t: (t[1], UTILITY_METHODS.index(t[0])))
    return UtilityBound(utility=best, source=src, by_method=by, skipped=skipped,
                        seconds=seconds, setting=setting, n_jobs=n, extra=extra)


def _utility_options(instance: Instance, setting: Setting | None, methods: Sequence[str],
                     intervals: int, max_columns: int | None
                     ) -> tuple[Setting, Sequence[str], int]:
    """:func:`utility_upper_bound`'s options checked; the setting, methods and budget."""
    setting = Setting() if setting is None else setting
    if isinstance(methods, str):
        methods = (methods,)
    if not methods:
        raise InvalidOption("methods", list(methods), "name at least one of "
                            + ", ".join(UTILITY_METHODS))
    if not isinstance(setting, Setting):
        raise InvalidOption("setting", setting, "must be an optsched.sim.bounds.Setting")
    for m in methods:
        if m not in UTILITY_METHODS:
            raise InvalidOption("methods", m, "must be among " + ", ".join(UTILITY_METHODS)
                                + " for the utility bound")
    if max_columns is None:
        max_columns = column_budget(len(instance.jobs))
    for name, v in (("intervals", intervals), ("max_columns", max_columns)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InvalidOption(name, v, "must be an integer >= 1")
    return setting, methods, max_columns


def _utility_lp_bound(instance: Instance, d: Any, *, intervals: int, window: float | None,
                      step: float | None, max_columns: int, time_limit: float | None
                      ) -> tuple[float | None, Any]:
    """The ``utility_lp`` bound and what it was solved with, or ``None`` and why it was
    skipped."""
    n = d.r.size
    H = float(window) if window is not None else _default_window(d)
    dt = float(step) if step is not None else max(float(instance.slot), H / intervals)
    per_interval = int(np.isfinite(d.area).sum()) + 2 * n
    if step is None and per_interval * (H / dt + 2) > max_columns:
        fit = max_columns / per_interval - 2
        dt = H / fit if fit >= 2 else math.inf
    cols = int(per_interval * (H / dt + 2)) if math.isfinite(dt) else None
    if cols is None or cols > max_columns:
        need = cols if cols is not None else 4 * per_interval
        return None, (f"needs {need:,} columns (at least two intervals per "
                      f"job window) > max_columns {max_columns:,}")
    lp = _utility_lp(instance, d, _grid(d, dt, H), H)
    low, msg = _solve_certified(lp, time_limit)
    if low is None:
        return None, msg
    # a lower bound on min -sum v y: minus it bounds the utility above
    return max(0.0, -float(low)), {"window": H, "step": dt, "lp": msg}
