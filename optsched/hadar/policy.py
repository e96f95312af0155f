r"""Hadar as a simulator :class:`~optsched.sim.policy.Policy` (round-based, rolling).

The simulator calls :meth:`HadarPolicy.allocate` at round boundaries (``instance.slot``
seconds). A job becomes visible at the first boundary after its arrival; Hadar then runs
the dual subroutine of :mod:`optsched.hadar.heuristics` over the next ``w_j`` rounds with the
current prices and the residual capacity, admits the job iff its payoff is :math:`> 0`,
reserves its GPUs round by round and raises the prices of the rounds it uses. Admitted
plans are never revised. Each round the policy returns the reserved placements of the
admitted, unfinished jobs. Prices per (round, node, type) follow OASiS (22).

Adaptation to an open-ended simulation (documented assumptions):

* **Rolling window.** Job :math:`j` plans over :math:`w_j = \min(\text{max\_window},
  \lceil \text{window\_factor}\cdot n^{\max}_j\rceil + \text{window\_slack})` rounds from the
  round it is seen, where :math:`n^{\max}_j` is the rounds it needs on its slowest usable
  type. Rounds beyond every reservation are priced :math:`L`.
* **Price parameters from the trace.** :math:`U_k` and :math:`L` follow OASiS (23)-(26)
  with each job's own window as horizon: :math:`U_k = \max_j f_j(n^{\min}_j\Delta)`,
  :math:`L = \frac{1}{4\eta}\min_j f_j(w_j\Delta)/(W_j n^{\max}_j)`,
  :math:`\eta = \max_j w_j C/(W_j n^{\max}_j)`, computed from the ``instance`` given at
  construction. OASiS §V likewise estimates them from history. They can also be passed.
* **Retries and best effort.** A job rejected when seen (payoff :math:`\le 0`) is offered
  again every ``retry_every`` rounds (``0``: never, as OASiS Alg. 1), with its utility
  still measured from its true arrival. Meanwhile it runs *best effort* on GPUs no
  reservation holds in that round (arrival order, fastest types first, no price change):
  the simulator completes every job, which OASiS's admission model does not.
* **Early finish.** A job that finishes before its last reserved round releases its
  later reservations (their prices fall back); a job whose plan ended with work left
  (floating point) is planned again for the rest.
* **Clairvoyance.** The policy reads each job's work (``needs_work = True``), as the
  subroutine needs :math:`E_j`.
* **Safe rounding.** Plans use safe rounding, so a job finishes by its planned last round
  in the simulator (possibly earlier; unused reservations then stay idle).

If the simulator jumps over an idle period, the round grid restarts; no reservation is
then outstanding, because every admitted job has finished.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.core.schedule import Placement
from optsched.errors import InvalidOption
from optsched.hadar.bounds import coverable, dual_subroutine, quanta_per_slot
from optsched.hadar.model import HadarModel
from optsched.sim.policy import ClusterView

__all__ = ["HadarPolicy", "rolling_price_params", "simulate_hadar"]

_EPS = 1e-6


def _windows(instance: Instance, window_factor: float, window_slack: int,
             max_window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = instance.slot
    R = instance.throughput_matrix
    W = instance.workers.astype(float)
    per = W[:, None] * R * d
    need = np.where(R > 0, np.ceil(instance.work[:, None] / np.where(per > 0, per, 1) - 1e-9),
                    np.inf)
    nmin = need.min(axis=1)
    nmax = np.where(np.isfinite(need), need, -1).max(axis=1)
    w = np.minimum(max_window, np.ceil(window_factor * nmax) + window_slack)
    return nmin, nmax, w.astype(np.int64)


def rolling_price_params(instance: Instance, *, window_factor: float = 2.0,
                         window_slack: int = 24, max_window: int = 4000
                         ) -> tuple[dict[str, float], float, float]:
    """``(U per type, L, eta)`` of the rolling adaptation (see the module docstring)."""
    nmin, nmax, w = _windows(instance, window_factor, window_slack, max_window)
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


class HadarPolicy:
    """Hadar online (OASiS Alg. 1-2) as a round-based simulator policy."""

    needs_work = True
    event_driven = False

    def __init__(self, instance: Instance | None = None, *, U: Any = None,
                 L: float | None = None, quanta: int = 120, window_factor: float = 2.0,
                 window_slack: int = 24, max_window: int = 4000, retry_every: int = 1,
                 name: str = "hadar"):
        if isinstance(quanta, bool) or not isinstance(quanta, int) or quanta < 1:
            raise InvalidOption("quanta", quanta, "must be an integer >= 1")
        if not (window_factor >= 1):
            raise InvalidOption("window_factor", window_factor, "must be >= 1")
        if isinstance(retry_every, bool) or not isinstance(retry_every, int) or retry_every < 0:
            raise InvalidOption("retry_every", retry_every, "must be an integer >= 0")
        if instance is None and (U is None or L is None):
            raise InvalidOption("instance", None, "give the instance (to estimate U and L) "
                                "or both U and L")
        self.name = name
        self.instance = instance
        self.quanta = quanta
        self.window = (window_factor, int(window_slack), int(max_window))
        self.retry_every = retry_every
        self._U_given, self._L_given = U, L
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        self._origin: float | None = None
        self._ready = False  # bucket arrays are built from the first view's cluster
        self._g = np.zeros((0, 0), dtype=np.int64)
        self._plans: dict[str, dict[int, list[tuple[int, int]]]] = {}
        self._rejected: dict[str, int] = {}
        self._stats = {"admitted": 0, "rejections": 0, "subroutine_calls": 0}

    def _setup(self, view: ClusterView) -> None:
        cl = view.cluster
        cap = cl.capacity
        hh, kk = np.nonzero(cap > 0)
        self._bn, self._bt, self._bc = hh, kk, cap[hh, kk].astype(np.int64)
        self._bnames = [(cl.nodes[h].name, cl.gpu_types[k]) for h, k in zip(hh, kk)]
        if self._U_given is not None and self._L_given is not None:
            U, L = self._U_given, float(self._L_given)
            Uk = (np.array([float(U[t]) for t in cl.gpu_types]) if isinstance(U, dict)
                  else np.full(len(cl.gpu_types), float(U)))
        else:
            assert self.instance is not None  # __init__ demands it when U or L is missing
            Ud, L, _ = rolling_price_params(self.instance, window_factor=self.window[0],
                                            window_slack=self.window[1],
                                            max_window=self.window[2])
            if not L > 0:
                raise InvalidOption("L", L, "utilities vanish within the window, so L = 0; "
                                    "pass U and L")
            Uk = np.array([Ud[t] for t in cl.gpu_types])
        self.U, self.L = np.maximum(Uk, L), L
        self._ub = self.U[self._bt]
        self._g = np.zeros((0, self._bc.size), dtype=np.int64)
        self._ready = True

    def _ensure(self, upto: int) -> None:
        if self._g.shape[0] < upto:
            extra = max(upto - self._g.shape[0], 256)
            self._g = np.vstack([self._g, np.zeros((extra, self._bc.size), dtype=np.int64)])

    def _prices(self, lo: int, hi: int) -> np.ndarray:
        lu, ll = np.log(self._ub), math.log(self.L)
        return np.exp(ll + (lu - ll) * (self._g[lo:hi] / self._bc))

    def stats(self) -> dict[str, int]:
        """Admissions, rejections and subroutine calls (merged into ``Result.extra``)."""
        return dict(self._stats)

    # ------------------------------------------------------------------ decision
    def allocate(self, view: ClusterView) -> list[Placement]:
        if not self._ready:
            self._setup(view)
        slot = view.slot
        if self._origin is None:
            self._origin = view.time
        c = (view.time - self._origin) / slot
        cur = int(round(c))
        if abs(c - cur) > _EPS:  # the simulator jumped over an idle period
            live = [j for j in self._plans if j in view.ids]
            if live:
                raise RuntimeError(f"hadar policy: round grid moved with plans {live[:3]}")
            self._origin, cur = view.time, 0
            self._g = np.zeros((0, self._bc.size), dtype=np.int64)
            self._plans.clear()
        visible = set(view.ids)
        remaining = view.remaining
        for m, jid in enumerate(view.ids):
            if jid in self._plans:
                if max(self._plans[jid]) >= cur:
                    continue
                del self._plans[jid]  # plan over but work left (rounding): plan the rest
            last = self._rejected.get(jid)
            if last is not None and (self.retry_every == 0 or cur - last < self.retry_every):
                continue
            self._offer(view, m, jid, cur, float(remaining[m]))
        out: list[Placement] = []
        for jid, plan in self._plans.items():
            if jid not in visible:
                continue
            for b, g in plan.get(cur, ()):
                node, typ = self._bnames[b]
                out.append(Placement(jid, node, typ, g))
        # finished jobs release their later reservations
        for jid in [j for j in self._plans if j not in visible]:
            for t, items in self._plans.pop(jid).items():
                if t > cur:
                    for b, g in items:
                        self._g[t, b] -= g
        # best effort: jobs without a plan use GPUs left idle this round (no price change)
        self._ensure(cur + 1)
        free = self._bc - self._g[cur]
        for m, jid in enumerate(view.ids):
            if jid in self._plans:
                continue
            out += self._fill(view, m, jid, free)
        return out

    def _fill(self, view: ClusterView, m: int, jid: str, free: np.ndarray) -> list[Placement]:
        rates = view.throughput_matrix[m][self._bt]
        Wj = int(view.workers[m])
        ok = (rates > 0) & (free > 0)
        if free[ok].sum() < Wj:
            return []
        order = np.flatnonzero(ok)[np.argsort(-rates[ok], kind="stable")]
        need, out = Wj, []
        for b in order:
            g = int(min(need, free[b]))
            free[b] -= g
            need -= g
            node, typ = self._bnames[b]
            out.append(Placement(jid, node, typ, g))
            if need == 0:
                break
        return out

    def _offer(self, view: ClusterView, m: int, jid: str, cur: int, work: float) -> None:
        inst_job = self.instance.job(jid) if self.instance is not None else None
        rates = view.throughput_matrix[m]
        Wj = int(view.workers[m])
        d = view.slot
        per = Wj * rates * d
        need = np.where(rates > 0, np.ceil(work / np.where(per > 0, per, 1) - 1e-9), np.inf)
        nmax = float(np.where(np.isfinite(need), need, -1).max())
        f, s, mx = self.window
        w = int(min(mx, math.ceil(f * nmax) + s))
        rho = np.unique(rates[rates > 0])
        if not coverable(quanta_per_slot(Wj, rho, d, work, self.quanta, "safe"), self.quanta,
                         w):
            # the dual subroutine would reject it: skip pricing the window (same decision)
            self._stats["subroutine_calls"] += 1
            self._rejected[jid] = cur
            self._stats["rejections"] += 1
            return
        self._ensure(cur + w)
        arrival = float(view.arrivals[m])
        t_end = view.time + (np.arange(w) + 1) * d
        if inst_job is not None:
            vals = np.asarray(inst_job.value(t_end - arrival), dtype=float)
        else:
            vals = np.full(w, float(view.weights[m]))
        # the one-job model is priced by dual_subroutine, which never reads its instance
        model = HadarModel(cast(Instance, self.instance), w, d, np.zeros(1, np.int64),
                           rates[None, :], np.array([Wj]), np.array([work]), self._bn,
                           self._bt, self._bc, vals[None, :], np.zeros(1, np.int64),
                           np.zeros(1, np.int64))
        price = self._prices(cur, cur + w)
        residual = self._bc[None, :] - self._g[cur:cur + w]
        self._stats["subroutine_calls"] += 1
        plan = dual_subroutine(model, 0, price, residual, self.quanta, "safe")
        if plan.feasible and plan.payoff > 1e-12 * max(1.0, float(vals.max())):
            rounds: dict[int, list[tuple[int, int]]] = {}
            for t, b, g in zip(plan.slots.tolist(), plan.buckets.tolist(), plan.gpus.tolist()):
                rounds.setdefault(cur + t, []).append((b, int(g)))
                self._g[cur + t, b] += int(g)
            self._plans[jid] = rounds
            self._rejected.pop(jid, None)
            self._stats["admitted"] += 1
        else:
            self._rejected[jid] = cur
            self._stats["rejections"] += 1


def simulate_hadar(instance: Instance, *, seed: int = 0, max_time: float | None = None,
                   progress: bool | None = None, **options: Any) -> Result:
    """Hadar as an online policy in the shared simulator (``optsched simulate --policy
    hadar.online``). ``options`` go to :class:`HadarPolicy`, which estimates U and L from
    the instance unless both are given."""
    from optsched.sim.simulator import simulate

    return simulate(instance, HadarPolicy(instance, **options), seed=seed, max_time=max_time,
                    progress=progress)
