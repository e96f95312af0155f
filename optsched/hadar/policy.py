r"""Hadar as a simulator :class:`~optsched.sim.policy.Policy` (round-based, rolling).

The simulator calls :meth:`HadarPolicy.allocate` at round boundaries (``instance.slot``
seconds, :math:`\Delta`). A job becomes visible at the first boundary after its arrival;
Hadar then runs the dual subroutine of :mod:`optsched.hadar.bounds` over a window of the
next rounds with the current prices and the residual capacity, admits the job iff its
payoff is :math:`> 0`, reserves its GPUs round by round and raises the prices of the
rounds it uses. Admitted plans are never revised. Each round the policy returns the
reserved placements of the admitted, unfinished jobs. Prices per (round, node, type)
follow OASiS (22): :math:`p = L\,(U_k/L)^{g/c}` with :math:`g` of the :math:`c` GPUs of
the (node, type) reserved in that round, kept in a
:class:`~optsched.hadar.model.PriceBook` (the price function of the offline heuristic and
the dual certificate too) that grows a round at a time.

Adaptation to an open-ended simulation (documented assumptions, ours where marked)
----------------------------------------------------------------------------------
* **Window from the fastest type.** With :math:`n^{\min}_j` the rounds the job's
  remaining work needs with its whole gang on its fastest type, job :math:`j` plans over
  :math:`w_j = \lceil\text{window\_factor}\cdot n^{\min}_j\rceil + \text{window\_slack}`
  rounds from the round it is offered. There is no fixed cap: every job's window holds a
  schedule on its fastest type.
* **Per-job resolution.** The window is cut into at most ``plan_slots`` *planning slots*
  of :math:`m_j = \max(1, \min(\lceil w_j/\text{plan\_slots}\rceil, \lfloor
  n^{\min}_j/4\rfloor))` rounds each (1 for all but long jobs); a plan holds the same GPUs
  over a whole planning slot. The subroutine prices whole planning slots, so its payoff
  can undercount the trimmed plan's by the cost of one planning slot (at most a quarter
  of the job's rounds; about :math:`1/64` of them with the default ``plan_slots``). A
  planning slot's price per GPU is the sum of its rounds' prices, its residual capacity
  their minimum. Progress
  is counted in :math:`Q_j = \max(\text{quanta}, \text{resolution}\cdot
  \lceil n^{\min}_j/m_j\rceil)` units, so the fastest planning slot credits at least
  ``resolution`` units and safe rounding (floor) can lose at most a
  :math:`1/\text{resolution}` share of a slot's progress: a job that needs more rounds
  than any fixed number of quanta is still admitted.
* **Trimmed plans.** The subroutine's plan is expanded to rounds and cut after the first
  round at which its exact progress (:math:`W_j \Delta \min_{k\,\text{used}}\tau_{jk}` per
  round) covers the remaining work: no plan reserves a round it does not need, so at most
  one round of progress is over-reserved. The admission test is the subroutine's
  payoff :math:`> 0` (OASiS's); trimming only lowers the plan's cost and can only move
  its completion earlier.
* **Price parameters** (``prices``). ``"density"`` (default, ours): with
  :math:`n_{jk} = \lceil E_j/(W_j\tau_{jk}\Delta)\rceil` and the *value density*
  :math:`d_{jk} = f_j(n_{jk}\Delta)/(W_j n_{jk})` (utility per GPU-round when the job runs
  alone on type :math:`k` from its arrival), :math:`U_k` the 95th percentile of
  :math:`d_{jk}` and :math:`L` half the 5th percentile of :math:`\max_k d_{jk}`
  (``density_quantiles``), over the ``instance`` given at construction (OASiS §V likewise
  estimates them from history). An empty bucket charges less than half the density of
  95 % of the jobs of the trace, so they are admitted alone at their best; a bucket
  filling up charges up to the density of the densest jobs, so price rejects
  low-density plans while capacity is still free. Quantiles rather than the extremes,
  because on JCT-sensitive utilities the least dense jobs (shorter than a round, or
  days long) have densities down to :math:`10^{-75}`, which makes prices inert again;
  the jobs below :math:`L` are then left to the fill. ``"oasis"``: OASiS (23)-(26) taken
  literally with each job's window as its horizon (:func:`rolling_price_params`); on
  JCT-sensitive utilities its :math:`L` underflows towards 0 and prices stay near 0 until a
  bucket is full (admission is then "it fits"). ``U`` and ``L`` may also be passed.
  The density estimate drops OASiS's :math:`1/(4\eta)` factor and the whole-job utility
  in :math:`U`, so Theorem 4's conditions are not met; no ratio is claimed for the policy.
* **Retries with backoff.** A job rejected when offered (payoff :math:`\le 0`) is
  offered again ``retry_every`` rounds later, the gap growing by ``backoff`` after each
  further rejection up to ``max_retry_gap`` rounds (``retry_every=0``: never, as OASiS
  Alg. 1). Its utility is still measured from its true arrival.
* **Best-effort fill (ours, not Hadar's).** A job without a plan runs on GPUs no
  reservation holds in that round (arrival order, fastest types first, no price change):
  the simulator completes every job, which OASiS's admission model does not.
  ``stats()`` counts job-rounds and GPU-rounds from plans and from the fill.
* **Skipping offers that cannot succeed.** Before pricing a window the policy bounds the
  payoff by :math:`f_j(\text{earliest completion}) - W_j n^{\min}_j \min_b p_b` (values
  are non-increasing, every plan uses at least :math:`n^{\min}_j` rounds of :math:`W_j`
  GPUs, no price is below the current minimum); when that is :math:`\le 0` the offer is
  rejected without the subroutine -- the decision the subroutine would take.
* **Early finish.** A job that finishes before its last reserved round releases its
  later reservations (their prices fall back); a job whose plan ended with work left
  (floating point) is planned again for the rest.
* **Progress rule** (``progress_rule``, :mod:`optsched.core.progress`): ``"gang"``
  (default) is the model of :mod:`optsched.hadar.model`. ``"partial"`` lets a plan hold
  :math:`1..W_j` GPUs in a planning slot at :math:`g\rho\Delta` (the subroutine's
  options are every (threshold, width)), and lets the fill start a job on fewer GPUs than
  it asks for. ``"additive"`` (OASiS's) credits each planned slot with the summed rates
  of its :math:`W_j` GPUs (the subroutine's candidate sets stay the gang's). Plans are
  trimmed by the same rule and the simulator and the validator credit it; the price
  estimates and the window (from :math:`n^{\min}_j`, the whole gang on the fastest
  type, which no rule beats) are the same under every rule.
* **Commit or re-plan** (``planning``). The public texts do not say whether Hadar keeps
  a plan once a job is admitted or decides again as the state changes. ``"commit"``
  (default) keeps admitted plans, as OASiS Alg. 1 does. ``"replan"`` decides again at
  every event: in each round in which a job arrived or completed, every admitted,
  unfinished job releases its reservations from that round on and is offered again,
  in arrival order and together with the round's new and due jobs, with the prices of
  the reservations left at that moment; a job whose new payoff is :math:`\le 0` runs
  in the fill until its next offer. Plans are kept between events.
* **Clairvoyance.** The policy reads each job's work (``needs_work = True``), as the
  subroutine needs :math:`E_j`.

Prices are kept per (round, bucket) and updated only where a reservation is made or
released. If the simulator jumps over an idle period, the round grid restarts; no
reservation is then outstanding, because every admitted job has finished.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, cast

import numpy as np

from optsched.core.instance import Instance
from optsched.core.progress import check_progress_rule
from optsched.core.result import Result
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.hadar.bounds import dual_subroutine, rule_options
from optsched.hadar.model import HadarModel, PriceBook
from optsched.sim.policy import ClusterView

__all__ = ["HadarPolicy", "density_price_params", "rolling_price_params", "simulate_hadar",
           "PRICE_MODES", "PLANNING_MODES"]

PRICE_MODES = ("density", "oasis")
PLANNING_MODES = ("commit", "replan")
_EPS = 1e-6
_TOL = 1e-12


def _rounds_needed(instance: Instance) -> np.ndarray:
    """``[n, K]`` rounds each job needs with its whole gang on each type (inf: unusable)."""
    d = instance.slot
    R = instance.throughput_matrix
    per = instance.workers.astype(float)[:, None] * R * d
    return np.where(R > 0, np.ceil(instance.work[:, None] / np.where(per > 0, per, 1) - 1e-9),
                    np.inf)


def _window(nmin: np.ndarray | float, window_factor: float, window_slack: int) -> np.ndarray:
    return np.ceil(window_factor * np.asarray(nmin, dtype=float) - 1e-9) + window_slack


def rolling_price_params(instance: Instance, *, window_factor: float = 2.0,
                         window_slack: int = 24) -> tuple[dict[str, float], float, float]:
    r"""``(U per type, L, eta)``: OASiS (23)-(26) taken literally, each job's window as
    its horizon: :math:`U_k = \max_j f_j(n^{\min}_j\Delta)`,
    :math:`L = \frac{1}{4\eta}\min_j f_j(w_j\Delta)/(W_j n^{\max}_j)`,
    :math:`\eta = \max_j w_j C/(W_j n^{\max}_j)` (``prices="oasis"``)."""
    need = _rounds_needed(instance)
    nmin = need.min(axis=1)
    nmax = np.where(np.isfinite(need), need, -1).max(axis=1)
    w = _window(nmin, window_factor, window_slack)
    d = instance.slot
    C = instance.cluster.total_gpus
    W = instance.workers.astype(float)
    best = np.array([j.value(nmin[i] * d) for i, j in enumerate(instance.jobs)])
    late = np.array([j.value(w[i] * d) for i, j in enumerate(instance.jobs)])
    eta = float(np.max(w * C / (W * nmax)))
    L = float(np.min(late / (W * nmax)) / (4 * eta))
    R = instance.throughput_matrix
    U = {t: float(best[R[:, k] > 0].max()) if (R[:, k] > 0).any() else L
         for k, t in enumerate(instance.cluster.gpu_types)}
    return U, L, eta


def density_price_params(instance: Instance, quantiles: tuple[float, float] = (0.001, 0.95)
                         ) -> tuple[dict[str, float], float]:
    r"""``(U per type, L)`` from the value densities of the trace (``prices="density"``).

    With :math:`n_{jk}` the rounds job :math:`j` needs on type :math:`k` and its value
    density :math:`d_{jk} = f_j(n_{jk}\Delta)/(W_j n_{jk})`: :math:`L` is half the
    ``quantiles[0]`` quantile of the best densities :math:`\max_k d_{jk}`, each job
    weighted by its GPU-rounds :math:`W_j n_j` on its best type (so jobs holding a
    negligible share of the GPU-time do not set it); :math:`U_k` is the ``quantiles[1]``
    quantile (by job count) of :math:`d_{jk}` over the jobs that can use type :math:`k`.
    ``(0, 1)`` gives the minimum and maximum. A type no job can use gets :math:`U_k = L`
    (a flat price)."""
    lo, hi = quantiles
    need = _rounds_needed(instance)
    if instance.n_jobs == 0:
        return {t: 0.0 for t in instance.cluster.gpu_types}, 0.0
    d = instance.slot
    W = instance.workers.astype(float)
    dens = np.zeros(need.shape)
    for i, j in enumerate(instance.jobs):
        ok = np.isfinite(need[i])
        dens[i, ok] = np.asarray(j.value(need[i, ok] * d), dtype=float) / (W[i] * need[i, ok])
    usable = np.isfinite(need)
    # the best type among the usable ones: a job of value 0 has density 0 everywhere, and
    # an unusable type (need = inf) must not be its best, or its weight is inf
    k = np.where(usable, dens, -np.inf).argmax(axis=1)
    best = dens[np.arange(k.size), k]
    weight = W * need[np.arange(k.size), k]
    order = np.argsort(best, kind="stable")
    cum = np.cumsum(weight[order]) / weight.sum()
    L = 0.5 * float(best[order][min(k.size - 1, int(np.searchsorted(cum, lo)))])
    U = {t: max(L, float(np.quantile(dens[usable[:, k], k], hi))) if usable[:, k].any()
         else L for k, t in enumerate(instance.cluster.gpu_types)}
    return U, L


def _check_int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise InvalidOption(name, v, f"must be an integer >= {lo}")
    return int(v)


def _check_number(name: str, v: Any, lo: float) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(v)) or v < lo:
        raise InvalidOption(name, v, f"must be a finite number >= {lo:g}")
    return float(v)


class HadarPolicy:
    """Hadar online (OASiS Alg. 1-2) as a round-based simulator policy (module
    docstring).

    Parameters
    ----------
    instance : Instance, optional
        The trace the price parameters are estimated from (and the jobs' utilities);
        needed unless both ``U`` and ``L`` are given.
    U, L : optional
        Price-function bounds (``U`` a number or a mapping type -> value).
    prices : {"density", "oasis"}
        How ``U`` and ``L`` are estimated when not given.
    density_quantiles : (float, float)
        The quantiles of the ``"density"`` estimate (``L``, ``U``).
    quanta, resolution, plan_slots : int
        The subroutine's progress units: at least ``quanta``, and ``resolution`` per
        fastest planning slot; at most ``plan_slots`` planning slots per window.
    window_factor, window_slack
        The window, in rounds: ``ceil(window_factor * n_min) + window_slack``.
    retry_every, backoff, max_retry_gap
        Retries of a rejected job (rounds; gap times ``backoff`` per rejection, at most
        ``max_retry_gap``); ``retry_every=0`` never retries.
    progress_rule : {"gang", "partial", "additive"}
        How a gang progresses (:mod:`optsched.core.progress`): the subroutine plans with
        it, the plans are trimmed by it, and the simulator and the validator credit it.
    planning : {"commit", "replan"}
        Keep admitted plans (OASiS Alg. 1), or offer every unfinished job again at each
        arrival or completion (module docstring).
    """

    needs_work = True
    event_driven = False
    #: Reject offers by the O(1) payoff bound without pricing the window (tests switch it
    #: off to check that the decisions are the same).
    _skip = True

    def __init__(self, instance: Instance | None = None, *, U: Any = None,
                 L: float | None = None, prices: str = "density",
                 density_quantiles: tuple[float, float] = (0.001, 0.95), quanta: int = 120,
                 resolution: int = 16, plan_slots: int = 128, window_factor: float = 2.0,
                 window_slack: int = 24, retry_every: int = 1, backoff: float = 2.0,
                 max_retry_gap: int = 64, progress_rule: str = "gang",
                 planning: str = "commit", name: str = "hadar"):
        self.progress_rule = check_progress_rule(progress_rule)
        if planning not in PLANNING_MODES:
            raise InvalidOption("planning", planning,
                                f"must be one of {', '.join(PLANNING_MODES)}")
        self.planning = planning
        self.quanta = _check_int("quanta", quanta, 1)
        self.resolution = _check_int("resolution", resolution, 1)
        self.plan_slots = _check_int("plan_slots", plan_slots, 1)
        if isinstance(window_factor, bool) or not isinstance(window_factor, (int, float)) \
                or not window_factor >= 1 or not math.isfinite(window_factor):
            raise InvalidOption("window_factor", window_factor, "must be a number >= 1")
        self.window = (float(window_factor), _check_int("window_slack", window_slack, 0))
        self.retry_every = _check_int("retry_every", retry_every, 0)
        self.backoff = _check_number("backoff", backoff, 1.0)
        self.max_retry_gap = _check_int("max_retry_gap", max_retry_gap, max(1, retry_every))
        if prices not in PRICE_MODES:
            raise InvalidOption("prices", prices, f"must be one of {', '.join(PRICE_MODES)}")
        self.prices = prices
        q = tuple(density_quantiles) if isinstance(density_quantiles, (tuple, list)) else ()
        if len(q) != 2 or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                  for x in q) or not 0 <= q[0] <= q[1] <= 1:
            raise InvalidOption("density_quantiles", density_quantiles,
                                "must be two numbers 0 <= low <= high <= 1")
        self.density_quantiles = (float(q[0]), float(q[1]))
        if instance is None and (U is None or L is None):
            raise InvalidOption("instance", None, "give the instance (to estimate U and L) "
                                "or both U and L")
        self.name = name
        self.instance = instance
        self._U_given, self._L_given = U, L
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        self._origin: float | None = None
        self._ready = False  # bucket arrays and prices are built from the first view
        # plans: job -> segments (first round, end round exclusive, ((bucket, gpus), ...))
        self._plans: dict[str, list[tuple[int, int, tuple[tuple[int, int], ...]]]] = {}
        self._seg: dict[str, int] = {}  # the segment of the current round, per plan
        self._plan_end: dict[str, int] = {}  # last reserved round
        self._ends: list[tuple[int, str]] = []  # heap of (last round, job)
        self._next_offer: dict[str, int] = {}  # rejected job -> round of its next offer
        self._due: list[tuple[int, str]] = []  # heap of (next offer, job)
        self._fails: dict[str, int] = {}  # consecutive rejections
        self._known: set[str] = set()
        self._order: dict[str, np.ndarray] = {}  # fill order of buckets per job
        self._stats = {"admitted": 0, "rejections": 0, "subroutine_calls": 0, "skipped": 0,
                       "no_fit": 0, "price_rejections": 0, "planned_job_rounds": 0,
                       "fill_job_rounds": 0, "planned_gpu_rounds": 0, "fill_gpu_rounds": 0,
                       "replan_events": 0}

    def _setup(self, view: ClusterView) -> None:
        cl = view.cluster
        cap = cl.capacity
        hh, kk = np.nonzero(cap > 0)
        self._bn, self._bt, self._bc = hh, kk, cap[hh, kk].astype(np.int64)
        self._types = cl.gpu_types
        self._bnames = [(cl.nodes[h].name, cl.gpu_types[k]) for h, k in zip(hh, kk)]
        if self._U_given is not None and self._L_given is not None:
            U, L = self._U_given, float(self._L_given)
            Uk = (np.array([float(U[t]) for t in cl.gpu_types]) if isinstance(U, dict)
                  else np.full(len(cl.gpu_types), float(U)))
        else:
            assert self.instance is not None  # __init__ demands it when U or L is missing
            if self.prices == "density":
                Ud, L = density_price_params(self.instance, self.density_quantiles)
            else:
                Ud, L, _ = rolling_price_params(self.instance, window_factor=self.window[0],
                                                window_slack=self.window[1])
            if not L > 0:
                raise InvalidOption("L", L, "utilities vanish within the window, so L = 0; "
                                    "pass U and L")
            Uk = np.array([Ud[t] for t in cl.gpu_types])
        if not (L > 0 and math.isfinite(L)):
            raise InvalidOption("L", L, "must be a finite number > 0")
        self.U, self.L = np.maximum(Uk, L), L
        self.book = PriceBook(self.U[self._bt], self.L, self._bc)
        self._ready = True

    def price(self, g: np.ndarray, b: np.ndarray) -> np.ndarray:
        """OASiS (22): the price of a GPU of bucket ``b`` with ``g`` of its GPUs reserved
        (:meth:`optsched.hadar.model.PriceBook.price`)."""
        return self.book.price(g, b)

    def stats(self) -> dict[str, Any]:
        """Admissions, rejections (``no_fit``: no schedule fits the window;
        ``price_rejections``: one fits but its payoff is :math:`\\le 0`; ``skipped``:
        rejected by the payoff bound without the subroutine), subroutine calls, and
        job-rounds / GPU-rounds run from plans and from the best-effort fill (merged
        into ``Result.extra``); ``U`` and ``L`` used."""
        out: dict[str, Any] = dict(self._stats)
        total = out["planned_job_rounds"] + out["fill_job_rounds"]
        out["planned_share"] = out["planned_job_rounds"] / total if total else None
        if self._ready:
            out["price_U"] = {t: float(u) for t, u in zip(self._types, self.U)}
            out["price_L"] = float(self.L)
        return out

    # ------------------------------------------------------------------ decision
    def allocate(self, view: ClusterView) -> list[Placement]:
        """One round: finished jobs release their reservations, the jobs due an offer are
        offered in arrival order (:meth:`_offers`), and the round's placements are the
        admitted plans' reservations followed by the best-effort fill."""
        if not self._ready:
            self._setup(view)
        cur = self._round(view)
        pos = view.position
        # finished jobs release their reservations from this round on (prices fall back)
        for jid in [j for j in self._plans if j not in pos]:
            self._release(jid, cur)
        remaining = view.remaining
        for jid in sorted(set(self._offers(view, cur)), key=pos.__getitem__):
            self._next_offer.pop(jid, None)
            m = pos[jid]
            self._offer(view, m, jid, cur, float(remaining[m]))
        out = self._planned(cur)
        self._forget(pos)
        return out + self._fill_round(view, cur)

    def _round(self, view: ClusterView) -> int:
        """The current round on the policy's grid. If the simulator jumped over an idle
        period the grid restarts at this round (no plan is outstanding then)."""
        if self._origin is None:
            self._origin = view.time
        c = (view.time - self._origin) / view.slot
        cur = int(round(c))
        if abs(c - cur) <= _EPS:
            return cur
        live = [j for j in self._plans if j in view.ids]
        if live:
            raise RuntimeError(f"hadar policy: round grid moved with plans {live[:3]}")
        self._origin = view.time
        self.book = PriceBook(self.U[self._bt], self.L, self._bc)
        for state in (self._plans, self._seg, self._plan_end, self._next_offer,
                      self._fails, self._order):
            state.clear()
        self._ends, self._due = [], []
        self._known.clear()
        return 0

    def _offers(self, view: ClusterView, cur: int) -> list[str]:
        """The jobs offered this round: new jobs, rejected jobs due again, plans that
        ended with work left, and (``planning="replan"``, at an arrival or completion)
        every admitted job, whose reservations are released first."""
        pos = view.position
        offers = [j for j in view.ids if j not in self._known]
        self._known.update(offers)
        # known jobs no longer visible completed since the last round (forgotten later)
        if self.planning == "replan" and (offers or len(self._known) > len(pos)):
            self._stats["replan_events"] += 1
            again = list(self._plans)
            for jid in again:
                self._release(jid, cur)
            offers += again
        while self._due and self._due[0][0] <= cur:
            r, jid = heapq.heappop(self._due)
            if self._next_offer.get(jid) == r and jid in pos:
                offers.append(jid)
        while self._ends and self._ends[0][0] < cur:
            r, jid = heapq.heappop(self._ends)
            if self._plan_end.get(jid) == r and jid in pos:
                self._drop(jid)  # work left (floating point): plan the rest
                offers.append(jid)
        return offers

    def _planned(self, cur: int) -> list[Placement]:
        """The placements the admitted plans reserved for round ``cur``."""
        out: list[Placement] = []
        for jid, segs in self._plans.items():
            i = self._seg[jid]
            while i < len(segs) and segs[i][1] <= cur:
                i += 1
            self._seg[jid] = i
            if i == len(segs) or segs[i][0] > cur:
                continue
            self._stats["planned_job_rounds"] += 1
            for b, g in segs[i][2]:
                node, typ = self._bnames[b]
                out.append(Placement(jid, node, typ, g))
                self._stats["planned_gpu_rounds"] += g
        return out

    def _forget(self, pos: dict[str, int]) -> None:
        """Drop the retry and fill state of the jobs that completed."""
        for jid in [j for j in self._known if j not in pos]:
            self._known.discard(jid)
            self._next_offer.pop(jid, None)
            self._fails.pop(jid, None)
            self._order.pop(jid, None)

    def _fill_round(self, view: ClusterView, cur: int) -> list[Placement]:
        """Best-effort fill (ours): jobs without a plan, in arrival order, on the GPUs
        no reservation holds in round ``cur`` (prices unchanged)."""
        self.book.extend(cur + 1)
        free = self._bc - self.book.g[cur]
        left = int(free.sum())
        out: list[Placement] = []
        for m, jid in enumerate(view.ids):
            if left <= 0:
                break
            if jid in self._plans:
                continue
            got = self._fill(view, m, jid, free)
            if got:
                out += got
                g = sum(p.gpus for p in got)
                left -= g
                self._stats["fill_job_rounds"] += 1
                self._stats["fill_gpu_rounds"] += g
        return out

    def _drop(self, jid: str) -> list[tuple[int, int, tuple[tuple[int, int], ...]]]:
        self._seg.pop(jid, None)
        self._plan_end.pop(jid, None)
        return self._plans.pop(jid)

    def _release(self, jid: str, cur: int) -> None:
        """A finished job's reservations from the current round on are freed (the
        current round's too: the job no longer runs in it)."""
        t, b, g = self._arrays([(max(r0, cur), r1, items)
                                for r0, r1, items in self._drop(jid) if r1 > cur])
        if t.size:
            self.book.reserve(t, b, -g)

    @staticmethod
    def _arrays(segs: list[tuple[int, int, tuple[tuple[int, int], ...]]]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(round, bucket, gpus)`` arrays of plan segments."""
        rows = [(r0, r1 - r0, b, g) for r0, r1, items in segs for b, g in items]
        if not rows:
            z = np.zeros(0, dtype=np.int64)
            return z, z, z
        r0, n, b, g = (np.array(x, dtype=np.int64) for x in zip(*rows))
        first = np.repeat(np.cumsum(n) - n, n)  # index of each row's first round
        t = np.repeat(r0, n) + np.arange(int(n.sum())) - first
        return t, np.repeat(b, n), np.repeat(g, n)

    def _fill(self, view: ClusterView, m: int, jid: str, free: np.ndarray) -> list[Placement]:
        order = self._order.get(jid)
        if order is None:
            rates = view.throughput_matrix[m][self._bt]
            ok = np.flatnonzero(rates > 0)
            order = self._order[jid] = ok[np.argsort(-rates[ok], kind="stable")]
        Wj = int(view.workers[m])
        have = int(free[order].sum())
        if have < Wj:
            if self.progress_rule != "partial" or have == 0:
                return []
            Wj = have  # a partial gang of what is free
        need, out = Wj, []
        for b in order.tolist():
            g = int(min(need, free[b]))
            if g <= 0:
                continue
            free[b] -= g
            need -= g
            node, typ = self._bnames[b]
            out.append(Placement(jid, node, typ, g))
            if need == 0:
                break
        return out

    def _reject(self, jid: str, cur: int) -> None:
        self._stats["rejections"] += 1
        if self.retry_every == 0:
            return
        k = self._fails.get(jid, 0)
        self._fails[jid] = k + 1
        gap = min(float(self.max_retry_gap), self.retry_every * self.backoff ** k)
        nxt = self._next_offer[jid] = cur + max(1, int(math.ceil(gap - 1e-9)))
        heapq.heappush(self._due, (nxt, jid))

    def _value(self, view: ClusterView, m: int, jid: str, ends: np.ndarray) -> np.ndarray:
        """Utility of completing at the absolute instants ``ends``."""
        if self.instance is not None:
            job = self.instance.job(jid)
            return np.asarray(job.value(ends - job.arrival), dtype=float) * np.ones(ends.shape)
        return np.full(ends.shape, float(view.weights[m]))

    def _offer(self, view: ClusterView, m: int, jid: str, cur: int, work: float) -> None:
        rates = view.throughput_matrix[m]
        Wj = int(view.workers[m])
        d = view.slot
        per = Wj * rates * d  # progress per round with the whole gang on each type
        usable = rates > 0
        nmin = max(1, int(np.ceil(work / per[usable] - 1e-9).min()))
        # O(1) bound: no plan can beat the earliest completion at the lowest price
        best = float(self._value(view, m, jid, np.array([view.time + nmin * d]))[0])
        if self._skip and best - Wj * nmin * self.L <= _TOL * max(1.0, abs(best)):
            self._stats["skipped"] += 1
            self._reject(jid, cur)
            return
        f, s = self.window
        w = int(_window(nmin, f, s))
        # a planning slot spans at most a quarter of the job's rounds: the subroutine
        # prices whole planning slots, so its payoff undercounts by at most one of them
        mslot = max(1, min(math.ceil(w / self.plan_slots), nmin // 4))
        wc = math.ceil(w / mslot)
        span = wc * mslot
        self.book.extend(cur + span)
        B = self._bc.size
        price = self.book.p[cur:cur + span].reshape(wc, mslot, B).sum(axis=1)
        booked = self.book.g[cur:cur + span]
        residual = (self._bc[None, :] - booked).reshape(wc, mslot, B).min(axis=1)
        ends = view.time + (np.arange(wc) + 1) * mslot * d
        vals = self._value(view, m, jid, ends)
        Q = max(self.quanta, self.resolution * math.ceil(nmin / mslot))
        # the one-job model is priced by dual_subroutine, which never reads its instance
        model = HadarModel(cast(Instance, self.instance), wc, mslot * d, np.zeros(1, np.int64),
                           rates[None, :], np.array([Wj]), np.array([work]), self._bn,
                           self._bt, self._bc, vals[None, :], np.zeros(1, np.int64),
                           np.zeros(1, np.int64))
        self._stats["subroutine_calls"] += 1
        plan = dual_subroutine(model, 0, price, residual, Q, "safe",
                               progress_rule=self.progress_rule)
        if not (plan.feasible and plan.payoff > _TOL * max(1.0, float(vals.max()))):
            self._rejected_offer(model, residual, Q, jid, cur)
            return
        segs = self._trim(plan.slots, plan.buckets, plan.gpus, rates, Wj, d, mslot, cur, work)
        t, b, g = self._arrays(segs)
        last = segs[-1][1] - 1
        self.book.reserve(t, b, g)
        self._plans[jid] = segs
        self._seg[jid] = 0
        self._plan_end[jid] = last
        heapq.heappush(self._ends, (last, jid))
        self._fails.pop(jid, None)
        self._stats["admitted"] += 1

    def _rejected_offer(self, model: HadarModel, residual: np.ndarray, Q: int, jid: str,
                        cur: int) -> None:
        """Count a rejection as ``price_rejections`` when some schedule fits the
        residual capacity of the window (each planning slot at its best feasible option
        covers the work), else as ``no_fit``; then schedule the retry."""
        cost, units, _, _ = rule_options(model, 0, np.ones(residual.shape), residual, Q,
                                         "safe", self.progress_rule)
        best = np.where(np.isfinite(cost), units, 0).max(axis=1)
        self._stats["price_rejections" if best.sum() >= Q else "no_fit"] += 1
        self._reject(jid, cur)

    def _trim(self, slots: np.ndarray, buckets: np.ndarray, gpus: np.ndarray,
              rates: np.ndarray, Wj: int, d: float, mslot: int, cur: int, work: float
              ) -> list[tuple[int, int, tuple[tuple[int, int], ...]]]:
        """The plan as segments of rounds ``(first, end, ((bucket, gpus), ...))``, cut
        after the first round whose cumulative exact progress covers ``work``."""
        by: dict[int, list[tuple[int, int]]] = {}
        for c, b, g in zip(slots.tolist(), buckets.tolist(), gpus.tolist()):
            by.setdefault(c, []).append((b, g))
        out = []
        done, target = 0.0, work * (1 - 1e-12)
        for c in sorted(by):
            if self.progress_rule == "gang":
                step = Wj * d * min(float(rates[self._bt[b]]) for b, _ in by[c])
            elif self.progress_rule == "partial":
                step = sum(g for _, g in by[c]) * d * min(float(rates[self._bt[b]])
                                                         for b, _ in by[c])
            else:  # additive: each worker at its own type's rate
                step = d * sum(g * float(rates[self._bt[b]]) for b, g in by[c])
            r0 = cur + c * mslot
            k = mslot if done + step * mslot < target else \
                max(1, min(mslot, math.ceil((target - done) / step - 1e-9)))
            while k < mslot and done + step * k < target:  # floating point
                k += 1
            out.append((r0, r0 + k, tuple(by[c])))
            done += step * k
            if done >= target:
                break
        return out


def simulate_hadar(instance: Instance, *, seed: int = 0, max_time: float | None = None,
                   progress: bool | None = None, **options: Any) -> Result:
    """Hadar as an online policy in the shared simulator (``optsched simulate --policy
    hadar.online``). ``options`` go to :class:`HadarPolicy`, which estimates U and L from
    the instance unless both are given."""
    from optsched.sim.simulator import simulate

    return simulate(instance, HadarPolicy(instance, **options), seed=seed, max_time=max_time,
                    progress=progress)
