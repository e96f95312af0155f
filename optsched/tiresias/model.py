r"""Tiresias' scheduling problem as a formal model: gang jobs, total JCT.

System model (Gu et al., NSDI'19, §2-3)
----------------------------------------
A cluster of :math:`M` GPUs; job :math:`j` arrives at :math:`r_j`, needs a *gang* of
:math:`g_j` GPUs (all-or-nothing: it runs on exactly :math:`g_j` GPUs or not at all) and
can be preempted and resumed. Running alone on its gang it takes its *service time*
:math:`d_j` seconds. The objective is the total job completion time

.. math::

    \min \sum_j (C_j - r_j),

the mean JCT times the number of jobs, which Tiresias' 2D-LAS and 2D-Gittins aim to
reduce without knowing :math:`d_j` (§3).

Service time. A job's work :math:`E_j` (``Job.work``, iterations) and its per-worker
rates (``Job.throughput``) give the gang's speed by the one progress rule of optsched,
:func:`optsched.core.progress.gang_rate` (which the validator credits and the simulator
advances by); :math:`d_{jk}` is :math:`E_j` divided by the rate of a gang of :math:`g_j`
GPUs of type :math:`k`. Tiresias' traces give the same rate on every GPU type
(:func:`optsched.catalog.read_tiresias_trace`), so there :math:`d_{jk} = d_j`, the
trace's ``duration``.

Several GPU types. Tiresias is type-agnostic: its cluster is :math:`M` identical GPUs.
An optsched instance may have several types :math:`k` with :math:`M_k` GPUs each
(:math:`M = \sum_k M_k`) and rates that differ by type. The model then reads as follows:

* a gang runs on :math:`g_j` GPUs of **one** type at a time (as Tiresias' placement and
  :func:`optsched.sim.placement.check_single_type_gangs` require), at rate
  :math:`E_j / d_{jk}`, and may change type when it is preempted; it may use type
  :math:`k` only if :math:`E_j / d_{jk} > 0` and :math:`g_j \le M_k`. A job that fits
  on no single type is outside the model (:class:`~optsched.errors.ModelNotApplicable`
  naming ``jobs[i].workers``);
* the exact MILP (:mod:`optsched.tiresias.exact`) keeps one capacity :math:`M_k` per
  type and the per-type service times;
* a lower bound valid for *every* schedule (:mod:`optsched.tiresias.bounds`) pools the
  :math:`M` GPUs and gives each job its fastest service time
  :math:`d_j = \min_k d_{jk}`: no gang can progress faster than :math:`E_j / d_j`.

With one GPU type (the paper's setting) all of this is the model of the first paragraph.

The slotted model (the exact MILP's search space)
-------------------------------------------------
Slot :math:`t \ge 0` is :math:`[t\Delta, (t+1)\Delta)`. Decisions are taken only at slot
boundaries: in each slot a job runs on its whole gang of one type, or not at all.

* **Arrival rounding.** Job :math:`j` may use slot :math:`t` only if the slot *starts* at
  or after its arrival: :math:`t \ge a_j = \lceil r_j / \Delta \rceil`. (Rounding down,
  to the slot containing :math:`r_j`, would run it before it arrives.) So every slotted
  schedule is a feasible continuous-time schedule.
* **Work.** On type :math:`k` a slot does :math:`\phi_{jk} = \min(1, \Delta / d_{jk})`
  of the job. A job is *slot-uniform* when it needs the same number of slots
  :math:`n_j = \lceil d_{jk} / \Delta \rceil` on every type it can use; then any
  :math:`n_j` slots do its work and fewer do not. A job with one rate on every type
  (every Tiresias trace, every single-type cluster) is slot-uniform.
* **Completion.** A slot-uniform job completes inside its last slot :math:`\hat t_j`:
  :math:`C_j = (\hat t_j + 1)\Delta - s_j` with :math:`s_j = n_j\Delta - \max_k d_{jk}
  \in [0, \Delta)` (the max over usable types; the schedule releases the gang then).
  The work is done by then: after :math:`n_j - 1` slots at least
  :math:`(n_j-1)\Delta/\max_k d_{jk}` of it is done, and the rest takes at most
  :math:`\max_k d_{jk} - (n_j-1)\Delta = \Delta - s_j` seconds on any type. With one
  rate it is exactly when the work is done. Any other job completes at the end of its
  completion slot, :math:`C_j = (\hat t_j + 1)\Delta`.

:func:`slotted` builds this model for a slot length; :func:`greedy_slotted` gives a
feasible slotted schedule whose total JCT :math:`U` bounds the slotted optimum, and from
it each job's *window*: in any slotted schedule of total JCT at most :math:`U`,

.. math::

    C_j - r_j \;\le\; U - \sum_{i \ne j} \ell_i,

where :math:`\ell_i` is job :math:`i`'s least slotted JCT (alone from slot
:math:`a_i` on its fastest type). An optimal schedule has total at most :math:`U`, so no
optimum is cut off by restricting job :math:`j` to the slots up to that deadline. That
deadline grows with the number of jobs whatever the slot; the *busy window*
(:func:`busy_windows`), which bounds the slots a job can wait by the GPU-slots the
others hold, does not, and is also applied: the MILP is exact without a guessed
horizon.

Planning slot. :math:`\Delta` is the ``slot`` option when given; else ``Instance.slot``
unless the windows then reach past ``max_slots`` slots (default
:data:`DEFAULT_MAX_SLOTS`), in which case :math:`\Delta = m \cdot` ``Instance.slot``
with the whole multiple :math:`m` raised from :math:`\lceil T_1 / \text{max\_slots}
\rceil` (:math:`T_1` the horizon at ``Instance.slot``) until the windows end by
``max_slots`` (a sizing target: at most a few attempts are made, and coarsening stops
once a coarser slot no longer shortens the horizon). ``slots=T`` fixes the
horizon: every job must complete by slot :math:`T` (the model is then the optimum over
schedules ending by :math:`T\Delta`, and may be infeasible). :func:`check_size` refuses a
program over ``max_columns`` columns before it is built.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import gang_rate
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, ModelNotApplicable, ModelTooLarge

__all__ = ["TiresiasModel", "SlottedModel", "build_model", "slotted", "greedy_slotted",
           "busy_windows",
           "check_size", "DEFAULT_MAX_SLOTS", "DEFAULT_MAX_COLUMNS"]

#: Default target for the number of planning slots when the slot length is not given.
DEFAULT_MAX_SLOTS = 48
#: Default cap on the columns of an exact program or of the LP bound.
DEFAULT_MAX_COLUMNS = 200_000
_EPS = 1e-9
#: Attempts at a coarser slot before the planning grid is taken as it is.
_MAX_COARSENING = 12


@dataclass(frozen=True)
class TiresiasModel:
    """The continuous-time model of one instance (see the module docstring).

    Attributes
    ----------
    instance : Instance
    types : tuple of str
        GPU types :math:`k` of the cluster.
    capacity : ndarray of int, shape (K,)
        :math:`M_k`, GPUs of each type over all nodes.
    g : ndarray of int, shape (n,)
        Gang sizes :math:`g_j` (``Job.workers``).
    r : ndarray, shape (n,)
        Arrivals :math:`r_j` (s).
    d : ndarray, shape (n, K)
        Service times :math:`d_{jk}` (s) of the whole gang on type k; ``inf`` where the
        job cannot use type k (no rate, or :math:`g_j > M_k`).
    """

    instance: Instance
    types: tuple[str, ...]
    capacity: np.ndarray
    g: np.ndarray
    r: np.ndarray
    d: np.ndarray

    @property
    def n_jobs(self) -> int:
        return int(self.g.size)

    @property
    def M(self) -> int:
        """Total GPUs :math:`M = \\sum_k M_k`."""
        return int(self.capacity.sum())

    @property
    def usable(self) -> np.ndarray:
        """``usable[j, k]``: job j may run its gang on type k."""
        return np.isfinite(self.d)

    @cached_property
    def d_min(self) -> np.ndarray:
        """Fastest service time :math:`d_j = \\min_k d_{jk}` (s)."""
        return self.d.min(axis=1) if self.n_jobs else np.zeros(0)

    def total_jct(self, completion: Mapping[str, float]) -> float:
        """:math:`\\sum_j (C_j - r_j)` over the jobs of ``completion``."""
        inst = self.instance
        return float(sum(c - inst.job(jid).arrival for jid, c in completion.items()))


def build_model(instance: Instance) -> TiresiasModel:
    """The model of ``instance``; raises :class:`~optsched.errors.ModelNotApplicable`
    (field ``jobs[i].workers``) for a gang that fits on no single GPU type."""
    types = instance.cluster.gpu_types
    per_type = instance.cluster.gpus_per_type
    cap = np.array([per_type.get(t, 0) for t in types], dtype=np.int64)
    n = instance.n_jobs
    d = np.full((n, len(types)), np.inf)
    for i, job in enumerate(instance.jobs):
        for k, t in enumerate(types):
            if job.rate(t) > 0 and job.workers <= cap[k]:
                rate = gang_rate(job, [Placement(job.id, "", t, job.workers)])
                d[i, k] = job.work / rate
        if not np.isfinite(d[i]).any():
            pool = max((int(cap[k]) for k, t in enumerate(types) if job.rate(t) > 0),
                       default=0)
            raise ModelNotApplicable(
                f"jobs[{i}].workers", job.workers,
                f"Tiresias runs a gang on GPUs of one type, and the largest pool of one type "
                f"job {job.id!r} can use has {pool} GPUs")
    return TiresiasModel(instance, types, cap, instance.workers.astype(np.int64),
                         instance.arrivals, d)


# =========================================================================== slotted
@dataclass(frozen=True)
class SlottedModel:
    r"""The slotted model of :class:`TiresiasModel` for one slot length (module docstring).

    ``a[j]`` first usable slot, ``phi[j, k]`` the fraction of the job a slot on type k
    does (0 where unusable), ``uniform[j]`` whether the job is slot-uniform, ``n[j]`` the
    slots a slot-uniform job needs (for the others: the fewest, on the fastest type),
    ``s[j]`` the unneeded end of a slot-uniform job's last slot (0 for the others),
    ``last[j]`` the last slot the job may complete in
    (its window), ``T`` the horizon (``last.max() + 1``), ``upper`` the total JCT of
    the greedy schedule (``inf`` when it did not fit a given horizon).
    """

    model: TiresiasModel
    delta: float
    a: np.ndarray
    phi: np.ndarray
    uniform: np.ndarray
    n: np.ndarray
    s: np.ndarray
    last: np.ndarray
    upper: float

    @property
    def T(self) -> int:
        return int(self.last.max()) + 1 if self.last.size else 0

    @property
    def n_jobs(self) -> int:
        return self.model.n_jobs

    def window(self, j: int) -> np.ndarray:
        """Slots job j may run in: :math:`a_j, \\dots, \\text{last}_j`."""
        return np.arange(self.a[j], self.last[j] + 1)

    def completion(self, j: int, t_hat: int) -> float:
        """:math:`C_j` (s) of job j whose completion slot is ``t_hat``."""
        return (t_hat + 1) * self.delta - float(self.s[j])

    @cached_property
    def least_jct(self) -> np.ndarray:
        """:math:`\\ell_j`: the job's JCT alone from slot :math:`a_j` on its fastest type."""
        return (self.a + self.n) * self.delta - self.s - self.model.r

    def columns(self) -> int:
        """Columns of the exact MILP: per job and window slot, one per usable type, the
        completion binary and the alive variable."""
        width = self.model.usable.sum(axis=1) + 2
        return int(((self.last - self.a + 1) * width).sum())


def _check_slot_options(slot, slots, max_slots) -> None:
    if slot is not None and (isinstance(slot, bool) or not isinstance(
            slot, (int, float, np.integer, np.floating)) or not math.isfinite(slot)
            or slot <= 0):
        raise InvalidOption("slot", slot, "must be a finite number of seconds > 0")
    if slots is not None and (isinstance(slots, bool) or not isinstance(
            slots, (int, np.integer)) or slots < 1):
        raise InvalidOption("slots", slots, "must be an integer >= 1")
    if isinstance(max_slots, bool) or not isinstance(max_slots, (int, np.integer)) \
            or max_slots < 1:
        raise InvalidOption("max_slots", max_slots, "must be an integer >= 1")


def _grid(model: TiresiasModel, delta: float):
    """``a, phi, uniform, n, s`` of the slotted model with slot ``delta``."""
    d = model.d
    a = np.ceil(model.r / delta - _EPS).astype(np.int64)
    # the relative tolerance above must not start a job before it arrives on a very
    # long slot (r / delta below it): such a slot starts after r only if its index is
    # raised
    a = a + (a * delta < model.r - 1e-7).astype(np.int64)
    with np.errstate(divide="ignore"):
        phi = np.where(model.usable, np.minimum(1.0, delta / d), 0.0)
    if not model.n_jobs:
        z = np.zeros(0, dtype=np.int64)
        return a, phi, np.zeros(0, dtype=bool), z, np.zeros(0)
    d_max = np.where(model.usable, d, 0.0).max(axis=1)
    n = np.maximum(1, np.ceil(model.d_min / delta - _EPS)).astype(np.int64)
    n_max = np.maximum(1, np.ceil(d_max / delta - _EPS)).astype(np.int64)
    uniform = n_max == n
    s = np.where(uniform, np.clip(n * delta - d_max, 0.0, delta), 0.0)
    return a, phi, uniform, n, s


def greedy_slotted(model: TiresiasModel, delta: float, horizon: int | None = None,
                   runs: list[tuple[int, int, dict[int, int]]] | None = None
                   ) -> tuple[np.ndarray, float]:
    """A feasible slotted schedule: ``(completion slot per job, total JCT)``.

    Decisions at arrival and completion slots only: the available jobs in order of
    fewest remaining slots (then arrival, then index), each placed on its fastest type
    with :math:`g_j` GPUs free; the set runs unchanged until the next such slot. The
    first job of the order always fits an empty cluster, so every job completes.
    Returns ``(-1, inf)`` entries when ``horizon`` (slots) is given and exceeded.
    ``runs``, when given, receives each decision's ``(first slot, slots, {job: type})``:
    every job of the dict runs on its type in each of those slots.
    Complexity :math:`O(n^2 (\\log n + K))` (at most 2n decision slots).
    """
    a, phi, uniform, n, s = _grid(model, delta)
    nj = model.n_jobs
    left = np.ones(nj)                # fraction of the job still to do (other jobs)
    need = np.where(uniform, n, 0)    # slots still to run (slot-uniform jobs)
    done = np.full(nj, -1, dtype=np.int64)
    order_k = np.argsort(-phi, axis=1, kind="stable")  # fastest type first
    t = int(a.min()) if nj else 0
    while (done < 0).any():
        avail = np.flatnonzero((a <= t) & (done < 0))
        if avail.size == 0:
            t = int(a[done < 0].min())
            continue
        best_phi = phi[avail].max(axis=1)
        slots_left = np.where(uniform[avail], need[avail],
                              np.ceil(left[avail] / best_phi - _EPS))
        pri = np.lexsort((avail, a[avail], slots_left))
        free = model.capacity.copy()
        run: dict[int, int] = {}
        for j in avail[pri]:
            for k in order_k[j]:
                if phi[j, k] > 0 and free[k] >= model.g[j]:
                    free[k] -= model.g[j]
                    run[int(j)] = int(k)
                    break
        # slots until the next decision: an arrival or a completion
        future = a[(a > t) & (done < 0)]
        step = int(future.min() - t) if future.size else math.inf
        for j, k in run.items():
            if uniform[j]:
                step = min(step, int(need[j]))
            else:
                step = min(step, max(1, math.ceil(left[j] / phi[j, k] - _EPS)))
        step = int(step)
        if runs is not None:
            runs.append((t, step, run))
        for j, k in run.items():
            if uniform[j]:
                need[j] -= step
                finished = need[j] <= 0
            else:
                left[j] -= step * phi[j, k]
                finished = left[j] <= _EPS
            if finished:
                done[j] = t + step - 1
        t += step
        if horizon is not None and t > horizon and (done < 0).any():
            return np.full(nj, -1, dtype=np.int64), math.inf
    if horizon is not None and (done >= horizon).any():
        return np.full(nj, -1, dtype=np.int64), math.inf
    total = float(((done + 1) * delta - s - model.r).sum())
    return done, total


def busy_windows(model: TiresiasModel, delta: float) -> np.ndarray:
    r"""Latest completion slot of each job in every optimal slotted schedule with fewest
    runs (the *busy window*).

    With :math:`\rho_i` the most slots job :math:`i` runs in such a schedule
    (:math:`n_i` for a slot-uniform job, :math:`\lceil \max_k d_{ik}/\Delta \rceil`
    for the others), :math:`W = \sum_i g_i \rho_i`, :math:`F_j` the usable types of
    largest :math:`\phi_{jk}` (the job's fastest) and
    :math:`D_j = \sum_{k \in F_j} (M_k - g_j + 1)`,

    .. math::

        \hat t_j \;\le\; a_j + \rho_j - 1 +
        \Big\lfloor \frac{W - g_j \rho_j}{D_j} \Big\rfloor .

    Proof. In an optimal schedule a job completes in its last run slot (an earlier
    completion slot costs less, and its runs already do its work). If in some slot
    :math:`t` of :math:`[a_j, \hat t_j)` where :math:`j` does not run a type
    :math:`k \in F_j` had :math:`g_j` GPUs free, moving the run of slot :math:`\hat t_j`
    to :math:`(t, k)` does at least the work it did (:math:`\phi_{jk}` is the job's
    largest), frees capacity only, and completes :math:`j` at least one slot earlier:
    the schedule was not optimal. So in each of the at least
    :math:`\hat t_j - a_j + 1 - \rho_j` slots of that range where :math:`j` does not
    run, the other jobs hold at least :math:`M_k - g_j + 1` GPUs of every
    :math:`k \in F_j`, :math:`D_j` in all; together they hold at most
    :math:`W - g_j \rho_j` GPU-slots. Among the optimal schedules take one with fewest
    runs: there a job runs at most :math:`\rho_i` slots (with more, a run other than its
    last could be dropped, as the others already do
    :math:`\rho_i \min(1, \Delta/\max_k d_{ik}) \ge 1` of its work; a slot-uniform job
    runs exactly :math:`n_i`). It is optimal, so the bound holds in it for every job:
    the windows cut off no optimum. :math:`O(nK)`.
    """
    a, phi, uniform, n, _ = _grid(model, delta)
    if not model.n_jobs:
        return np.zeros(0, dtype=np.int64)
    d_max = np.where(model.usable, model.d, 0.0).max(axis=1)
    rho = np.where(uniform, n, np.maximum(1, np.ceil(d_max / delta - _EPS))).astype(float)
    area = model.g * rho
    fastest = model.usable & (phi >= phi.max(axis=1, keepdims=True) * (1 - 1e-12))
    free = np.where(fastest, model.capacity[None, :] - model.g[:, None] + 1, 0)
    D = free.sum(axis=1).astype(float)
    idle = np.floor((area.sum() - area) / D + _EPS)
    return (a + rho - 1 + idle).astype(np.int64)


def _slotted_at(model: TiresiasModel, delta: float, slots: int | None) -> SlottedModel:
    a, phi, uniform, n, s = _grid(model, delta)
    done, upper = greedy_slotted(model, delta, slots)
    if math.isfinite(upper):
        least = (a + n) * delta - s - model.r
        slack = upper - (least.sum() - least)  # U - sum_{i != j} l_i
        # largest t with (t + 1) delta - s_j - r_j <= slack_j
        last = np.floor((slack + s + model.r) / delta + _EPS).astype(np.int64) - 1
        last = np.minimum(last, busy_windows(model, delta))
        last = np.maximum(last, done)  # the greedy's own completion is always inside
    else:
        last = np.full(model.n_jobs, -1, dtype=np.int64)
    if slots is not None:
        last = np.where(last >= 0, np.minimum(last, slots - 1), slots - 1)
    return SlottedModel(model, float(delta), a, phi, uniform, n, s, last.astype(np.int64),
                        upper)


def slotted(model: TiresiasModel, slot: float | None = None, slots: int | None = None,
            max_slots: int = DEFAULT_MAX_SLOTS) -> SlottedModel:
    """The slotted model on the planning grid (module docstring: ``slot`` seconds, else
    ``Instance.slot`` or a multiple of it whose windows end by ``max_slots``)."""
    _check_slot_options(slot, slots, max_slots)
    if slot is not None:
        return _slotted_at(model, float(slot), slots)
    base = float(model.instance.slot)
    sm = _slotted_at(model, base, slots)
    if slots is not None or sm.T <= max_slots:
        return sm
    m = math.ceil(sm.T / max_slots)
    for _ in range(_MAX_COARSENING):
        finer, sm = sm, _slotted_at(model, m * base, None)
        if sm.T >= finer.T:
            # a coarser slot no longer shortens the horizon (every job already fits in
            # one slot): keep the finer grid
            return finer
        if sm.T <= max_slots:
            break
        m = max(m + 1, math.ceil(m * sm.T / max_slots))
    return sm


def check_size(what: str, columns: int, max_columns: int, *, n_jobs: int, slots: int,
               slot: float) -> None:
    """Raise :class:`~optsched.errors.ModelTooLarge` before building a program of more
    than ``max_columns`` columns."""
    if isinstance(max_columns, bool) or not isinstance(max_columns, (int, np.integer)) \
            or max_columns < 1:
        raise InvalidOption("max_columns", max_columns, "must be an integer >= 1")
    if columns > max_columns:
        raise ModelTooLarge(
            "slots", slots, f"{what} would have {columns:,} columns ({n_jobs} jobs over up "
            f"to {slots:,} slots of {slot:g} s), over the limit of {max_columns:,}; pass a "
            "longer slot (option slot=SECONDS), a smaller max_slots or a larger "
            "max_columns")
