r"""Synergy's round allocators: GPU-proportional, GREEDY and TUNE.

All three follow ``simulator/resources/cluster.py`` of ``msr-fiddle/synergy``
(Mohan et al., OSDI'22, §4.2). Jobs are visited in policy order; a job takes GPUs
*first fit* over the servers in cluster order, one per-GPU slice at a time: a GPU is
taken if its server still has the per-GPU CPU and DRAM of the requested configuration
(``_top_synergy_gpus``). See :mod:`optsched.synergy.model` for the round model and the
objective (total normalized throughput :math:`\sum_j T_j`).

* :func:`proportional`: every admitted job gets the fair share
  :math:`(f_c, f_m)` per GPU and runs at :math:`T^f_j`. It always fits: every GPU in use
  holds exactly the fair share, so a free GPU always has a fair share left.
* :func:`greedy` (Synergy-GREEDY): every eligible job whose GPU count fits the free GPUs
  asks for its best-case demand; if first fit cannot find that many GPUs with the
  demand, the job is **skipped** this round and later jobs may go ahead. GREEDY is
  therefore not fair: a job the proportional scheduler admits can get nothing (see
  ``docs/synergy.md`` for a pinned instance).
* :func:`tune` (Synergy-TUNE, ``allocate_synergy_tune``/``_tune``): for each admitted job
  (1) try the best case; (2) if the demand exceeds the fair share in some resource,
  retry at the fair share; (3) otherwise pick servers (one server with :math:`\ge g_j`
  free GPUs if :math:`g_j > 1`, else servers by fewest free GPUs first,
  ``_get_underutilized_servers``) and on each reduce co-located peers that hold more
  than the fair share down to it, in Synergy's order (fewest servers spanned, then most
  CPU per GPU, then most memory per GPU, then the order in which they were placed this
  round), until the job fits (``_reallocate_peer``).

**Placement-sensitive mode** (``place=True``; Synergy's ``+place`` schedulers,
``allocate_synergy_placement`` / ``_top_synergy_gpus_placement``): every attempt above
places the job by :func:`packed_fit` instead of first fit. A job of :math:`g_j > 1`
GPUs goes whole onto the server with the fewest free GPUs among those that hold all of
it; otherwise (and for one GPU) its GPUs are taken one at a time from the server with
the fewest free GPUs (ties: lowest index) that still has the per-GPU slice, a server
without room being passed over for the rest of the job. It packs jobs onto the fullest
servers and so keeps whole servers free for gangs. The guarantees below hold unchanged:
they do not depend on which servers the fit picks.

Guarantee of TUNE (Synergy §4.2, made rigorous here)
----------------------------------------------------
Every TUNE allocation is *comparable* with the fair share: either at least :math:`f` in
both resources (a best case that dominates it) or at most :math:`f` in both. A best case
that is above the fair share in one resource and below in the other (none of the 33
catalog profiles) is raised to the fair share in the lower one, keeping the raised
point's throughput if it is at least :math:`T^f_j`, else the fair share is used
(:func:`optsched.synergy.model.comparable_best`; the raised point is one of the
configurations the exact models offer, so they bound TUNE). Then, once every peer on a
server that is above the fair share has been reduced to it, every GPU in use there holds
at most :math:`f`, and since the server has :math:`G_s f` of each resource, any
:math:`k` free GPUs have room for a job at most :math:`f`. Synergy stops reducing peers
when its estimate of the shortfall reaches zero and exits the program if the final
attempt fails; here a second pass keeps reducing the remaining above-fair peers of the
chosen servers, which by the argument above always succeeds. Hence: **TUNE places every
admitted job, i.e. it never fails when the proportional allocation fits, and gives every
job at least** :math:`T^f_j` (peers are only ever reduced to the fair share). No ratio
to the optimum is proved.

Complexity (n eligible jobs, S servers, at most G GPUs per server)
------------------------------------------------------------------
proportional and GREEDY: :math:`O(nS)` (one vectorised first-fit scan per job).
TUNE: :math:`O(n(S + G\log G))` per attempt plus :math:`O(S \log S)` for the server
heap, i.e. :math:`O(n(S\log S + G\log G))`. Measured in ``benchmarks/synergy_scale.py``.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable

import numpy as np

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.options import declares
from optsched.synergy.model import TOL, Configuration, SynergyRound, prepare, round_result

__all__ = ["proportional", "greedy", "tune", "RoundPlacement", "allocate", "packed_fit"]

NO_RATIO = "no approximation ratio for total normalized throughput is proved"


class RoundPlacement:
    """The placement one round's allocator builds: free GPUs, cores and DRAM per server,
    and the jobs placed so far (not :class:`optsched.gavel.model.RoundState`, the
    read-only arrays of Gavel's round)."""

    def __init__(self, rnd: SynergyRound):
        self.rnd = rnd
        self.free_g = rnd.G.astype(np.int64).copy()
        self.free_c = rnd.C.astype(float).copy()
        self.free_m = rnd.M.astype(float).copy()
        self.placed: dict[int, Configuration] = {}
        self.on_server: list[dict[int, int]] = [{} for _ in range(rnd.n_servers)]

    # per-GPU slices of (c, m) each server can still host
    def slots(self, c: float, m: float, servers: np.ndarray | None = None) -> np.ndarray:
        g = self.free_g if servers is None else self.free_g[servers]
        fc = self.free_c if servers is None else self.free_c[servers]
        fm = self.free_m if servers is None else self.free_m[servers]
        k = g.astype(float)
        if c > 0:
            k = np.minimum(k, np.floor((fc + TOL) / c))
        if m > 0:
            k = np.minimum(k, np.floor((fm + TOL) / m))
        return np.maximum(k, 0).astype(np.int64)

    def first_fit(self, j: int, c: float, m: float, rel: float) -> bool:
        need = self.rnd.gpus(j)
        if self.free_g.sum() < need:
            return False
        k = self.slots(c, m)
        cum = np.cumsum(k)
        if cum[-1] < need:
            return False
        last = int(np.searchsorted(cum, need))
        parts = [(int(s), int(k[s])) for s in range(last) if k[s] > 0]
        parts.append((last, int(need - (cum[last - 1] if last else 0))))
        self.commit(j, c, m, rel, [p for p in parts if p[1] > 0])
        return True

    def commit(self, j: int, c: float, m: float, rel: float,
               parts: list[tuple[int, int]]) -> None:
        for s, k in parts:
            self.free_g[s] -= k
            self.free_c[s] -= k * c
            self.free_m[s] -= k * m
            self.on_server[s][j] = k
            if self.free_g[s] < 0 or self.free_c[s] < -1e-6 or self.free_m[s] < -1e-6:
                raise RuntimeError(f"over-committed server {s} placing job {j}")
        self.placed[j] = Configuration(j, float(c), float(m), float(rel), tuple(parts))

    def reconfigure(self, j: int, c: float, m: float, rel: float) -> None:
        """Move placed job j to per-GPU config (c, m) on the same GPUs."""
        p = self.placed[j]
        for s, k in p.parts:
            self.free_c[s] += k * (p.cpu - c)
            self.free_m[s] += k * (p.memory - m)
        self.placed[j] = Configuration(j, float(c), float(m), float(rel), p.parts)

    def result(self, method: str, seconds: float, **extra) -> Result:
        return round_result(self.rnd, list(self.placed.values()), method, seconds,
                            ratio=None, ratio_note=extra.pop("ratio_note", NO_RATIO),
                            extra=extra)


#: The former name of :class:`RoundPlacement` (``allocate`` returned it), kept for code
#: that imported it; Gavel's :class:`~optsched.gavel.model.RoundState` is another thing.
RoundState = RoundPlacement


# --------------------------------------------------------------------------- fits
Fit = Callable[[RoundPlacement, int, float, float, float], bool]


def _first_fit(state: RoundPlacement, j: int, c: float, m: float, rel: float) -> bool:
    return state.first_fit(j, c, m, rel)


def packed_fit(state: RoundPlacement, j: int, c: float, m: float, rel: float) -> bool:
    r"""Place job j at (c, m) per GPU in Synergy's placement-sensitive way (module
    docstring); commits and returns True, or leaves the state unchanged and returns
    False. :math:`O(S + g_j \log S)`."""
    g = state.rnd.gpus(j)
    if state.free_g.sum() < g:
        return False
    k = state.slots(c, m)
    if g > 1:
        whole = np.flatnonzero(k >= g)
        if whole.size:
            s = int(whole[np.argmin(state.free_g[whole])])  # first minimum: lowest index
            state.commit(j, c, m, rel, [(s, g)])
            return True
    # one GPU at a time from the server with the fewest free GPUs; what this job has
    # taken so far counts against the server (Synergy holds it while it searches)
    taken: dict[int, int] = {}
    heap = [(int(state.free_g[s]), s) for s in range(len(state.free_g)) if state.free_g[s] > 0]
    heapq.heapify(heap)
    need = g
    while need > 0 and heap:
        free, s = heapq.heappop(heap)
        if k[s] - taken.get(s, 0) <= 0:
            continue  # no slice left here: passed over for the rest of the job
        taken[s] = taken.get(s, 0) + 1
        need -= 1
        if free - 1 > 0:
            heapq.heappush(heap, (free - 1, s))
    if need > 0:
        return False
    state.commit(j, c, m, rel, sorted(taken.items()))
    return True


# --------------------------------------------------------------------------- allocators
def _proportional(state: RoundPlacement, fit: Fit = _first_fit) -> None:
    rnd = state.rnd
    fc, fm = rnd.fair
    for j in rnd.admitted:
        if not fit(state, j, fc, fm, rnd.fair_rel[j]):  # impossible, see docstring
            raise RuntimeError(f"proportional share of job {j} did not fit")


def _greedy(state: RoundPlacement, fit: Fit = _first_fit) -> list[int]:
    rnd = state.rnd
    skipped = []
    for j in rnd.order:
        if rnd.gpus(j) > state.free_g.sum():
            continue
        c, m, t = rnd.best[j]
        if not fit(state, j, c, m, t):
            skipped.append(j)
    return skipped


def _choose_servers(state: RoundPlacement, g: int) -> list[tuple[int, int]]:
    free = state.free_g
    if g > 1:
        big = np.flatnonzero(free >= g)
        if big.size:
            return [(int(big[0]), g)]
    heap = [(int(free[s]), s) for s in range(len(free)) if free[s] > 0]
    heapq.heapify(heap)
    out, left = [], g
    while left > 0:
        f, s = heapq.heappop(heap)
        k = min(f, left)
        out.append((s, k))
        left -= k
    return out


def _tune(state: RoundPlacement, fit: Fit = _first_fit) -> dict[str, list[int]]:
    rnd = state.rnd
    fc, fm = rnd.fair
    how: dict[str, list[int]] = {"best": [], "fair": [], "tuned": [], "reduced_peers": []}
    for j in rnd.admitted:
        g = rnd.gpus(j)
        c, m, t = rnd.comparable[j]
        if fit(state, j, c, m, t):
            how["best"].append(j)
            continue
        if c > fc + TOL or m > fm + TOL:
            c, m, t = fc, fm, rnd.fair_rel[j]
            if fit(state, j, c, m, t):
                how["fair"].append(j)
                continue
        parts = _choose_servers(state, g)
        for s, k in parts:
            short = np.maximum(0.0, [k * c - state.free_c[s], k * m - state.free_m[s]])
            # a stable sort of the server's jobs in placement order: Synergy sorts its
            # per-server job list, appended as jobs are placed, so equal keys go in the
            # order they were placed (two peers above the fair share that tie now had
            # equal keys at every earlier sort, so its in-place sorts keep that order)
            peers = sorted(state.on_server[s], key=lambda p: (
                len(state.placed[p].parts), -state.placed[p].cpu, -state.placed[p].memory))
            for second_pass in (False, True):
                for p in peers:
                    if np.all(short <= TOL):
                        break
                    pl = state.placed[p]
                    h = state.on_server[s][p]
                    excess = np.maximum(0.0, [h * (pl.cpu - fc), h * (pl.memory - fm)])
                    if not np.any(excess > TOL):
                        continue
                    new = np.maximum(0.0, short - excess)
                    if not second_pass and not np.any(new < short - TOL):
                        continue
                    state.reconfigure(p, fc, fm, rnd.fair_rel[p])
                    how["reduced_peers"].append(p)
                    short = np.maximum(0.0, [k * c - state.free_c[s], k * m - state.free_m[s]])
        state.commit(j, c, m, t, parts)
        how["tuned"].append(j)
    return how


def allocate(rnd: SynergyRound, method: str, *, place: bool = False
             ) -> tuple[RoundPlacement, dict]:
    """Run one allocator on a prepared round; returns the state and diagnostics.
    ``place``: Synergy's placement-sensitive mode (:func:`packed_fit`)."""
    state = RoundPlacement(rnd)
    info: dict = {}
    fit = packed_fit if place else _first_fit
    if method == "proportional":
        _proportional(state, fit)
    elif method == "greedy":
        info["skipped"] = _greedy(state, fit)
    elif method == "tune":
        info = _tune(state, fit)
    else:  # pragma: no cover - internal
        raise ValueError(method)
    return state, info


def _run(instance: Instance, method: str, start, order, note: str) -> Result:
    t0 = time.perf_counter()
    rnd = prepare(instance, start=start, order=order)
    state, info = allocate(rnd, method)
    seconds = time.perf_counter() - t0
    ids = [j.id for j in instance.jobs]
    extra = {k: sorted({ids[j] for j in v}) for k, v in info.items()}
    return state.result(method, seconds, ratio_note=note, **extra)


@declares()
def proportional(instance: Instance, *, start: float | None = None, order=None) -> Result:
    r"""GPU-proportional allocation: every admitted job gets the fair share
    :math:`(f_c, f_m)` per GPU.

    Parameters
    ----------
    instance : Instance
        The round's jobs and servers.
    start, order
        As :func:`optsched.synergy.exact.exact`.

    Returns
    -------
    Result
        Total normalized throughput :math:`\sum_j T^f_j` and the round's schedule.

    Guarantee
    ---------
    Always fits (every GPU in use holds exactly the fair share); :math:`T_j = T^f_j`, so
    :math:`T_{proportional} \le \mathrm{OPT}`.

    Complexity
    ----------
    :math:`O(nS)`.

    References
    ----------
    * Mohan et al., OSDI 2022 (Synergy), §2 and §4.2 (the GPU-proportional baseline).
    """
    return _run(instance, "proportional", start, order,
                "baseline: every admitted job runs at its fair throughput")


@declares()
def greedy(instance: Instance, *, start: float | None = None, order=None) -> Result:
    r"""Synergy-GREEDY: each job asks for its best-case demand, first fit; a job that does not
    fit is skipped this round.

    Parameters
    ----------
    instance : Instance
        The round's jobs and servers.
    start, order
        As :func:`optsched.synergy.exact.exact`.

    Returns
    -------
    Result
        Total normalized throughput and the round's schedule; ``extra["skipped"]`` the jobs
        whose GPUs were free but whose best case did not fit, ``extra["below_fair"]`` the
        admitted jobs left below their fair throughput.

    Guarantee
    ---------
    None against the exact model: GREEDY may skip an admitted job or leave it below its
    fair throughput, which the joint ILP forbids, so its allocation lies outside the ILP's
    feasible set and :math:`T_{GREEDY}` may exceed :math:`\mathrm{OPT}` (tables mark it).
    Not fair: a job the proportional allocation admits can get nothing. No ratio is
    proved.

    Complexity
    ----------
    :math:`O(nS)`.

    References
    ----------
    * Mohan et al., OSDI 2022 (Synergy), §4.2 (Synergy-GREEDY).
    """
    return _run(instance, "greedy", start, order,
                NO_RATIO + "; not fair: admitted jobs may be skipped")


@declares()
def tune(instance: Instance, *, start: float | None = None, order=None) -> Result:
    r"""Synergy-TUNE: the best case, else the fair share, else reduce above-fair peers to the
    fair share until the job fits.

    Parameters
    ----------
    instance : Instance
        The round's jobs and servers.
    start, order
        As :func:`optsched.synergy.exact.exact`.

    Returns
    -------
    Result
        Total normalized throughput and the round's schedule; ``extra`` lists the jobs that
        got their best case (``best``), the fair share at once (``fair``), needed peer
        reduction (``tuned``), and the peers reduced (``reduced_peers``).

    Guarantee
    ---------
    Every admitted job is placed and :math:`T_j \ge T^f_j` (module docstring), so
    :math:`T_{proportional} \le T_{TUNE} \le \mathrm{OPT}`. No ratio to the optimum is
    proved.

    Complexity
    ----------
    :math:`O(n(S\log S + G\log G))` for :math:`n` jobs, :math:`S` servers and at most
    :math:`G` GPUs per server.

    References
    ----------
    * Mohan et al., OSDI 2022 (Synergy), §4.2; ``allocate_synergy_tune`` in Synergy's
      simulator.
    """
    return _run(instance, "tune", start, order,
                "fairness guarantee: every admitted job gets T >= its fair T; " + NO_RATIO)
