r"""Hadar's slotted model, its price-function parameters and the 2*alpha ratio.

Time and slots
--------------
Slot :math:`t \in \{0, \dots, T-1\}` is the interval :math:`[t\Delta, (t+1)\Delta)` with
:math:`\Delta` = ``Instance.slot`` seconds. Job :math:`j` may use slot :math:`t` only if
the slot starts at or after its arrival: :math:`t \ge a_j = \lceil \text{arrival}_j /
\Delta \rceil`. A job *completes at the end of its completion slot* :math:`\hat t_j`:
:math:`C_j = (\hat t_j + 1)\Delta`, and its utility is :math:`f_j(C_j -
\text{arrival}_j)` with the delay in seconds (``Job.value``: ``weight x utility``).
The number of slots :math:`T` is the ``slots`` option, else
:math:`\lceil \text{horizon} / \Delta \rceil` when the instance has a horizon, else the
default of :func:`default_slots`.

Planning slot. The model's :math:`\Delta` is the ``slot`` option when given. Otherwise it
is ``Instance.slot`` unless that would need more than ``max_slots`` slots (default
:data:`DEFAULT_MAX_SLOTS`): then :math:`\Delta` is the smallest whole multiple of
``Instance.slot`` for which :math:`T \le` ``max_slots`` (:func:`planning_instance`). A
trace with jobs of days on 6-minute rounds would otherwise give thousands of slots and a
MILP no solver finishes; a coarser slot rounds completions up to its end, which
``Result.extra["slot"]`` reports. Explicit ``slots`` keep ``Instance.slot``.
:func:`check_size` refuses, before anything is built, a model over ``max_columns``
columns, naming its size and how to reduce it.

Schedules of a job (the set :math:`\mathcal L_j` of OASiS (14)-(18))
--------------------------------------------------------------------
In every slot :math:`a_j \le t \le \hat t_j` the job holds either nothing or exactly
:math:`W_j` GPUs, :math:`y_{thk} \le c_{hk}` of type :math:`k` on node :math:`h`
(task-level placement: the gang may span nodes and types). Synchronous training runs at
the slowest used type, so the slot's progress is
:math:`W_j \Delta \min_{k: \sum_h y_{thk} > 0} \tau_{jk}` iterations (``Job.throughput``
is per worker per second). The schedule is feasible when the progress of slots
:math:`\le \hat t_j` reaches the work :math:`E_j`.

Price-function parameters, OASiS (23)-(26) adapted
--------------------------------------------------
A GPU is the one resource; a worker demands one GPU (:math:`w = 1`); the resources are
the buckets :math:`(h, k)` with :math:`c_{hk} > 0` in every slot.

* :math:`n^{\min}_j` (:math:`n^{\max}_j`): slots the job needs on its fastest (slowest
  usable) type, :math:`\lceil E_j / (W_j \tau_{jk} \Delta) \rceil`.
* (23) :math:`U_k = \max_{j: \tau_{jk} > 0} f_j\big((a_j + n^{\min}_j)\Delta -
  \text{arrival}_j\big) / w`: the largest utility a job that can use type :math:`k` can
  reach (its earliest possible completion), per unit of per-worker demand :math:`w=1`.
  A GPU priced :math:`U_k` therefore costs at least any job's utility, so a schedule
  touching a saturated bucket has payoff :math:`\le 0` (OASiS App. A).
* (25) :math:`L = \frac{1}{4\eta}\min_j f_j(T\Delta - \text{arrival}_j) /
  (W_j n^{\max}_j)`: the smallest utility per GPU-slot (latest completion, slowest type).
* :math:`\eta` is the smallest value meeting OASiS's condition
  :math:`1/\eta \le W_j n^{\max}_j / (T \sum_{h,k} c_{hk})` for all :math:`j`, i.e.
  :math:`\eta = \max_j T C / (W_j n^{\max}_j)`. Then the initial dual
  :math:`D_0 = L\,T\,C \le \tfrac14 \min_j f_j(T\Delta - \text{arrival}_j) \le
  \tfrac14 \mathrm{OPT}` when the optimum admits a job.
* Price per (slot, node, type): :math:`p_{thk}(g) = L (U_k / L)^{g / c_{hk}}`
  (OASiS (22)).
* Ratio (OASiS Thm. 4): :math:`2\alpha` with :math:`\alpha = \max_k (1, \ln(U_k / L))`.

Assumptions the ratio needs (checked by :func:`competitive_ratio` and reported):

1. *small demands* (OASiS App. E, "without loss of generality"): the GPUs a job takes
   from one bucket in one slot are a small fraction of it. Reported as
   ``demand_share`` = :math:`\max_j \max_{(h,k)} \min(W_j, c_{hk}) / c_{hk}` over usable
   buckets; the differential argument of OASiS Lemma 3 is exact only in the limit
   :math:`\to 0`; ``small_demand`` is ``demand_share <= small_demand_threshold``.
2. the :math:`\eta` condition (met by construction when :math:`L` is computed here;
   checked against the computed bound when :math:`L` is given);
3. :math:`U_k \ge` every job's best utility (met when computed; checked when given);
4. every :math:`f_j(T\Delta - \text{arrival}_j) > 0`, so that :math:`L > 0`;
5. the offline optimum admits at least one job: some job can finish alone by slot T.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.errors import InvalidOption, ModelNotApplicable, ModelTooLarge

__all__ = ["HadarModel", "PriceBook", "Prices", "build_model", "default_slots", "planning_instance",
           "check_size", "model_slots", "job_slots", "SMALL_DEMAND_THRESHOLD",
           "DEFAULT_MAX_SLOTS", "DEFAULT_MAX_COLUMNS"]

SMALL_DEMAND_THRESHOLD = 0.25
#: Default cap on the number of planning slots when the slot length is not given.
DEFAULT_MAX_SLOTS = 64
#: Default cap on the columns of an exact program (about 1 GB of model at this size).
DEFAULT_MAX_COLUMNS = 2_000_000
_EPS = 1e-9


def planning_instance(instance: Instance, slot: float | None = None,
                      slots: int | None = None,
                      max_slots: int = DEFAULT_MAX_SLOTS) -> Instance:
    r"""``instance`` with the slot length :math:`\Delta` the slotted model plans on.

    ``slot`` (seconds) when given; else ``Instance.slot`` if ``slots`` is given or the
    model needs at most ``max_slots`` slots; else the smallest multiple of
    ``Instance.slot`` that needs at most ``max_slots`` (see the module docstring).
    """
    if slot is not None:
        if isinstance(slot, bool) or not isinstance(slot, (int, float, np.integer,
                                                             np.floating)) \
                or not math.isfinite(slot) or slot <= 0:
            raise InvalidOption("slot", slot, "must be a finite number of seconds > 0")
        return instance.replace(slot=float(slot))
    if isinstance(max_slots, bool) or not isinstance(max_slots, (int, np.integer)) \
            or max_slots < 1:
        raise InvalidOption("max_slots", max_slots, "must be an integer >= 1")
    if slots is not None:
        return instance

    def needed(m: int) -> int:
        d = m * instance.slot
        if instance.horizon is not None:
            return math.ceil(instance.horizon / d - _EPS)
        return default_slots(instance.replace(slot=d))

    if needed(1) <= max_slots:
        return instance
    if instance.horizon is None and instance.n_jobs:
        # every job takes at least one slot of its W_j GPUs, whatever the slot's length
        least = 1 + math.ceil(float(instance.workers.sum()) / instance.cluster.total_gpus)
        if least > max_slots:
            raise ModelTooLarge(
                "max_slots", max_slots, f"{instance.n_jobs} jobs of {int(instance.workers.sum())}"
                f" workers on {instance.cluster.total_gpus} GPUs need at least {least} slots "
                "of any length (one slot per job); pass max_slots >= that, slot=SECONDS or "
                "slots=N")
    lo, hi = 1, 2
    while needed(hi) > max_slots:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # needed() is non-increasing in the multiple
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if needed(mid) <= max_slots else (mid, hi)
    return instance.replace(slot=hi * instance.slot)


def check_size(what: str, columns: int, max_columns: int = DEFAULT_MAX_COLUMNS, *,
               n_jobs: int, slots: int, slot: float) -> None:
    """Raise :class:`~optsched.errors.ModelTooLarge` before building a program of more
    than ``max_columns`` columns."""
    if isinstance(max_columns, bool) or not isinstance(max_columns, (int, np.integer)) \
            or max_columns < 1:
        raise InvalidOption("max_columns", max_columns, "must be an integer >= 1")
    if columns > max_columns:
        raise ModelTooLarge(
            "slots", slots, f"{what} would have {columns:,} columns ({n_jobs} jobs x "
            f"{slots:,} slots of {slot:g} s), over the limit of {max_columns:,}; pass a "
            "longer slot (option slot=SECONDS), fewer slots (slots=N) or a larger "
            "max_columns")


def default_slots(instance: Instance) -> int:
    r"""Default number of slots when neither ``slots`` nor a horizon is given.

    :math:`T = \max_j (a_j + n^{\min}_j) + \lceil \sum_j W_j n^{\min}_j / C \rceil`: the
    last earliest-possible completion plus the slots the whole load needs on the full
    cluster at fastest speed. It is a sizing rule, not a guarantee that every job fits.
    """
    d = instance.slot
    a = np.ceil(instance.arrivals / d - _EPS).astype(np.int64)
    W = instance.workers.astype(float)
    best = instance.throughput_matrix.max(axis=1)
    nmin = np.ceil(instance.work / (W * best * d) - _EPS).astype(np.int64)
    if instance.n_jobs == 0:
        return 1
    load = math.ceil(float((W * nmin).sum()) / instance.cluster.total_gpus)
    return int(max(1, (a + nmin).max() + load))


@dataclass(frozen=True)
class HadarModel:
    """Arrays of the slotted model of one instance (see the module docstring).

    ``buckets`` are the (node, type) pairs with ``c_hk > 0``: ``bucket_node[b]``,
    ``bucket_type[b]``, ``bucket_cap[b]``. ``rates[j, k]`` is per-worker throughput
    (iterations/s), ``a[j]`` the first usable slot, ``values[j, t]`` the utility of
    completing in slot ``t`` (0 for ``t < a[j]``).
    """

    instance: Instance
    T: int
    delta: float
    a: np.ndarray
    rates: np.ndarray
    W: np.ndarray
    E: np.ndarray
    bucket_node: np.ndarray
    bucket_type: np.ndarray
    bucket_cap: np.ndarray
    values: np.ndarray
    nmin: np.ndarray
    nmax: np.ndarray

    @property
    def n_jobs(self) -> int:
        return int(self.W.size)

    @property
    def n_buckets(self) -> int:
        return int(self.bucket_cap.size)

    @property
    def types(self) -> tuple[str, ...]:
        return self.instance.cluster.gpu_types

    @cached_property
    def type_capacity(self) -> np.ndarray:
        """GPUs per type over all nodes."""
        return np.bincount(self.bucket_type, weights=self.bucket_cap,
                           minlength=len(self.types)).astype(np.int64)

    def completion_time(self, t: int) -> float:
        """Completion instant (s) of a job whose completion slot is ``t``."""
        return (t + 1) * self.delta

    def slot_progress(self, j: int) -> np.ndarray:
        """Iterations per slot with all W_j workers on type k (0 where unusable)."""
        return self.W[j] * self.rates[j] * self.delta

    # ---------------------------------------------------------------- parameters
    @cached_property
    def U_default(self) -> np.ndarray:
        """(23): per type, the best utility of the jobs that can use it."""
        K = len(self.types)
        best = np.zeros(K)
        idx = np.arange(self.n_jobs)
        tbest = np.minimum(self.a + self.nmin - 1, self.T - 1)
        fbest = np.array([self.instance.jobs[j].value(self.completion_time(max(tbest[j], 0))
                                                      - self.instance.jobs[j].arrival)
                          for j in idx]) if self.n_jobs else np.zeros(0)
        for k in range(K):
            sel = self.rates[:, k] > 0
            best[k] = fbest[sel].max() if sel.any() else 0.0
        return best

    @cached_property
    def eta_default(self) -> float:
        C = float(self.bucket_cap.sum())
        if self.n_jobs == 0:
            return 1.0
        return float(np.max(self.T * C / (self.W * self.nmax)))

    @cached_property
    def L_default(self) -> float:
        """(25): minimum utility per GPU-slot over jobs, scaled by 1/(4 eta)."""
        if self.n_jobs == 0:
            return 0.0
        late = np.array([j.value(self.T * self.delta - j.arrival) for j in self.instance.jobs])
        per = late / (self.W * self.nmax)
        return float(per.min() / (4.0 * self.eta_default))

    def price_params(self, U: Any = None, L: float | None = None) -> tuple[np.ndarray, float]:
        """``(U per type, L)``: the instance's values unless given (``U`` a number or a
        mapping type -> value). Raises :class:`ModelNotApplicable` when L would be 0."""
        if L is None:
            L = self.L_default
            if not L > 0:
                bad = [j.id for j in self.instance.jobs
                       if not j.value(self.T * self.delta - j.arrival) > 0]
                raise ModelNotApplicable(
                    "jobs", bad[:5], "utility is 0 when completing in the last slot, so "
                    "L (OASiS (25)) is 0 and the price function is undefined; pass L=... "
                    "(and U=...) or use a utility positive over the horizon")
        elif not (isinstance(L, (int, float)) and math.isfinite(L) and L > 0):
            raise InvalidOption("L", L, "must be a finite number > 0")
        Ud = self.U_default
        if U is None:
            Uk = Ud.copy()
        elif isinstance(U, dict):
            unknown = set(U) - set(self.types)
            if unknown:
                raise InvalidOption("U", sorted(unknown)[0], f"unknown GPU type; {self.types}")
            Uk = np.array([float(U.get(t, Ud[k])) for k, t in enumerate(self.types)])
        else:
            if not (isinstance(U, (int, float)) and math.isfinite(U) and U > 0):
                raise InvalidOption("U", U, "must be a finite number > 0 or a mapping")
            Uk = np.full(len(self.types), float(U))
        Uk = np.maximum(Uk, float(L))  # a type nobody can use: constant price L
        return Uk, float(L)


def model_slots(instance: Instance, slots: int | None = None) -> int:
    """T: ``slots`` if given, else from the horizon, else :func:`default_slots`."""
    if slots is None:
        if instance.horizon is not None:
            slots = math.ceil(instance.horizon / instance.slot - _EPS)
        else:
            slots = default_slots(instance)
    if isinstance(slots, bool) or not isinstance(slots, (int, np.integer)) or slots < 1:
        raise InvalidOption("slots", slots, "must be an integer >= 1")
    return int(slots)


def job_slots(instance: Instance, T: int) -> np.ndarray:
    """Slots each job has variables for: :math:`T - a_j`, or 0 when it cannot finish
    alone by slot T (the size of the exact programs, known before building them)."""
    d = instance.slot
    a = np.ceil(instance.arrivals / d - _EPS)
    W = instance.workers.astype(float)
    best = instance.throughput_matrix.max(axis=1)
    nmin = np.ceil(instance.work / (W * best * d) - _EPS)
    return np.where(a + nmin <= T, np.maximum(0, T - a), 0).astype(np.int64)


def build_model(instance: Instance, slots: int | None = None) -> HadarModel:
    """The slotted model of ``instance`` with ``slots`` slots (see :func:`default_slots`)."""
    T = model_slots(instance, slots)
    d = float(instance.slot)
    cl = instance.cluster
    cap = cl.capacity
    hh, kk = np.nonzero(cap > 0)
    rates = instance.throughput_matrix
    W = instance.workers.astype(np.int64)
    E = instance.work
    a = np.ceil(instance.arrivals / d - _EPS).astype(np.int64)
    with np.errstate(divide="ignore"):
        per_slot = W[:, None] * rates * d
        need = np.where(rates > 0, np.ceil(E[:, None] / np.where(per_slot > 0, per_slot, 1)
                                           - _EPS), np.inf)
    nmin = need.min(axis=1).astype(np.int64)
    nmax = np.where(np.isfinite(need), need, -1).max(axis=1).astype(np.int64)
    n = instance.n_jobs
    values = np.zeros((n, T))
    tt = np.arange(T)
    for j, job in enumerate(instance.jobs):
        ok = tt >= a[j]
        if ok.any():
            values[j, ok] = np.asarray(job.value((tt[ok] + 1) * d - job.arrival), dtype=float)
    return HadarModel(instance, T, d, a, rates, W, E, hh.astype(np.int64), kk.astype(np.int64),
                      cap[hh, kk].astype(np.int64), values, nmin, nmax)


class PriceBook:
    r"""Reserved GPUs ``g[t, b]`` and prices ``p[t, b]`` per slot and bucket: OASiS (22),
    :math:`p_{tb}(g) = L\,(U_b / L)^{g / c_b}` with :math:`g` of the :math:`c_b` GPUs of
    bucket :math:`b` reserved in slot :math:`t` (OASiS: Bao, Peng, Wu, Li, "Online Job
    Scheduling in Distributed Machine Learning Clusters", INFOCOM 2018, eq. (22); Hadar,
    Sultana et al., IPDPS 2024, prices each (node, GPU type) bucket by it). The price
    rises from :math:`L` (empty) to :math:`U_b` (full), so a plan touching a full bucket
    costs at least any job's utility when :math:`U_b` is OASiS (23).

    The one price function of Hadar: the offline heuristic and the dual certificate
    (:class:`Prices`, a fixed number of slots) and the simulator policy
    (:class:`optsched.hadar.policy.HadarPolicy`, slots added as the rounds go on) keep
    their prices here. Prices are computed in logs, so :math:`U/L` never overflows; a
    reservation updates only the prices of the (slot, bucket) cells it touches, in
    :math:`O(\text{cells})`.

    Parameters
    ----------
    U : ndarray
        :math:`U_b` per bucket (:math:`\ge L`).
    L : float
        The price of an empty bucket, :math:`> 0`.
    cap : ndarray
        :math:`c_b`, GPUs per bucket.
    slots : int
        Slots held at the start (:meth:`extend` adds more).
    """

    def __init__(self, U: np.ndarray, L: float, cap: np.ndarray, slots: int = 0) -> None:
        self.L = float(L)
        self.ub = U
        self.cap = cap
        self._lu = np.log(U)
        self._ll = math.log(self.L)
        self.g = np.zeros((slots, cap.size), dtype=np.int64)
        self.p = np.full((slots, cap.size), self.L)
        #: per slot, whether any of its cells was ever reserved (a slot never reserved
        #: has every bucket free at price exactly L)
        self.touched = np.zeros(slots, dtype=bool)
        # cap - g, kept up to date by reserve(): a caller reads it for every job
        self._free = np.tile(cap - np.zeros(1, dtype=np.int64), (slots, 1))

    @property
    def untouched(self) -> np.ndarray:
        """Per slot, ``True`` where no cell was ever reserved: its rows of :attr:`p` and
        :attr:`residual` are the initial ones (``L`` and ``cap``), the same floats in
        every such slot."""
        return ~self.touched

    @property
    def slots(self) -> int:
        return int(self.g.shape[0])

    def price(self, g: np.ndarray, b: np.ndarray | slice = slice(None)) -> np.ndarray:
        """The price of a GPU of bucket ``b`` with ``g`` of its GPUs reserved."""
        return np.exp(self._ll + (self._lu[b] - self._ll) * (g / self.cap[b]))

    def reserve(self, t: np.ndarray, b: np.ndarray, gpus: np.ndarray) -> None:
        """Add ``gpus`` (negative: release) to cells ``(t, b)`` and re-price them."""
        np.add.at(self.g, (t, b), gpus)
        self.p[t, b] = self.price(self.g[t, b], b)
        self._free[t, b] = self.cap[b] - self.g[t, b]
        self.touched[t] = True

    def extend(self, upto: int) -> None:
        """Hold at least ``upto`` slots; new slots are empty (price :math:`L`). Grows by
        at least half the current size, so a run's extensions cost amortised
        :math:`O(1)` per slot."""
        have = self.slots
        if have < upto:
            extra = max(upto - have, 256, have // 2)
            self.g = np.vstack([self.g, np.zeros((extra, self.cap.size), dtype=np.int64)])
            self.p = np.vstack([self.p, np.full((extra, self.cap.size), self.L)])
            self.touched = np.concatenate([self.touched, np.zeros(extra, dtype=bool)])
            self._free = np.vstack([self._free, np.tile(self.cap - np.zeros(1, dtype=np.int64),
                                                        (extra, 1))])

    @property
    def residual(self) -> np.ndarray:
        """GPUs not reserved, per slot and bucket (read-only: the book's own array)."""
        view = self._free.view()
        view.flags.writeable = False
        return view


class Prices(PriceBook):
    """The :class:`PriceBook` of a slotted model: its ``T`` slots and buckets, ``U`` per
    type (``ub`` per bucket), as the offline heuristic and the dual certificate use it."""

    def __init__(self, model: HadarModel, U: np.ndarray, L: float) -> None:
        self.model = model
        self.U = U  # per type
        super().__init__(U[model.bucket_type], L, model.bucket_cap, model.T)

    def allocate(self, t: np.ndarray, b: np.ndarray, gpus: np.ndarray) -> None:
        """Reserve ``gpus`` in cells ``(t, b)`` (:meth:`PriceBook.reserve`)."""
        self.reserve(t, b, gpus)
