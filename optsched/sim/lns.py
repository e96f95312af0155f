r"""Large-neighbourhood search: improve a schedule by re-solving windows of it exactly.

:func:`improve` starts from a schedule (typically a policy's simulated one) and, until
its time limit, repeatedly

1. picks a *window*: a span :math:`[T_0, T_1)` on the round grid (``instance.slot``
   seconds per round, from the first arrival) cut into blocks of :math:`m` rounds, and
   a set of jobs active in it (chosen around a *focus* job drawn with probability
   proportional to its excess :math:`C_j - r_j - p_j`, :math:`p_j` its shortest run
   time, and ranked by excess with random noise);
2. solves the window MILP of :mod:`optsched.sim.lns_window` through the solver layer
   (:func:`optsched.solvers.solve_program`, a per-window time limit, the incumbent's
   window as MIP start where it lies on the block grid): every other job and every
   allocation outside the span fixed, the freed jobs re-planned as round-based gangs of
   :math:`W_j` GPUs of one type per block, a job completing inside its last block at
   the exact instant its work is done;
3. builds the schedule the solution describes (GPUs placed on nodes per block, gangs
   may span nodes of one type) and keeps it if its objective is lower.

The window sizes grow when windows stop improving: after ``patience`` windows without
improvement the block length doubles (so the span doubles at the same MILP size), up
to ``max_block`` rounds, then returns to one round.

Guarantees
----------
* **Validity**: the schedule returned passes :func:`optsched.core.validate.validate_schedule`
  under the capabilities the start schedule was validated under (checked by calling it,
  at the end and every ``check_every`` improvements).
* **Monotone**: :math:`f(\sigma_{i+1}) < f(\sigma_i)` for every kept change, so the
  value returned is at most the start's; ``history`` is strictly decreasing.
* Not optimality: a window is solved exactly (up to its time limit), the whole schedule
  is not; compare with :func:`optsched.sim.bounds.lower_bounds`.

The setting is that of the start schedule (gang, partial or additive progress; the new
gangs are whole single-type gangs, valid under all three); sharing, forking and
resource-sensitive schedules are outside the window model and refused.

Complexity: per window one MILP of :math:`O(|J| K L)` columns; bookkeeping
:math:`O(\text{allocations})` once, :math:`O(|J| L)` per window, a full validation
:math:`O(A \log A)` at the end.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from optsched.core.coerce import as_instance
from optsched.core.instance import Instance
from optsched.core.metrics import compute_metrics
from optsched.core.progress import gang_rate
from optsched.core.result import Result, Status
from optsched.core.schedule import Allocation, Schedule, merge_intervals
from optsched.core.validate import Capabilities, rules_of, validate_schedule
from optsched.errors import InvalidInput, InvalidOption, InvalidSchedule, ModelNotApplicable
from optsched.sim.lns_gangs import place_most_room
from optsched.sim.lns_window import Window, WindowJob, build_window, start_vector
from optsched.solvers import solve_program

__all__ = ["improve", "LNSResult", "OBJECTIVES", "STOP_REASONS", "start_rules",
           "FastestSrpt", "fastest_srpt_start"]

#: Objectives the search minimises.
OBJECTIVES = ("mean_jct", "weighted_mean_jct")
#: Why a search stops.
STOP_REASONS = ("time_limit", "max_windows", "interrupted", "no_window", "target")


@dataclass(frozen=True)
class LNSResult:
    """What :func:`improve` returns.

    ``schedule`` is the best schedule found (validated under ``capabilities``),
    ``value`` its objective (seconds), ``start_value`` the start's; ``history`` one
    ``(cpu_seconds, wall_seconds, value)`` per improvement, the start first;
    ``windows_tried`` / ``windows_improved`` the counts; ``stop`` one of
    :data:`STOP_REASONS`.
    """

    schedule: Schedule
    objective: str
    value: float
    start_value: float
    history: tuple[tuple[float, float, float], ...]
    windows_tried: int
    windows_improved: int
    stop: str
    capabilities: Capabilities
    seconds: float
    cpu_seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def to_result(self, instance: Instance) -> Result:
        """As a :class:`~optsched.core.result.Result` (status ``feasible``, metrics)."""
        return Result(status=Status.FEASIBLE, objective=self.value, model="lns",
                      method="lns", solve_seconds=self.seconds, schedule=self.schedule,
                      metrics=compute_metrics(instance, self.schedule),
                      extra={"lns": self.summary()})

    def summary(self) -> dict[str, Any]:
        return {"objective": self.objective, "value": self.value,
                "start_value": self.start_value,
                "history": [list(h) for h in self.history],
                "windows_tried": self.windows_tried,
                "windows_improved": self.windows_improved, "stop": self.stop,
                "seconds": self.seconds, "cpu_seconds": self.cpu_seconds,
                "rules": self.capabilities.describe(), **self.extra}


# --------------------------------------------------------------------------- state
@dataclass
class _Seg:
    """A job's constant gang over ``[s, e)``: ``parts`` (node, type, gpus), ``rate``."""

    s: float
    e: float
    parts: tuple[tuple[str, str, int], ...]
    rate: float


class _State:
    """The incumbent as per-job gang segments plus GPU use per (node, type) and round."""

    def __init__(self, inst: Instance, sched: Schedule, grid0: float) -> None:
        self.inst = inst
        self.sched = sched
        self.dt = float(inst.slot)
        self.g0 = grid0
        self.rule = sched.progress_rule
        cl = inst.cluster
        self.types = cl.gpu_types
        self.pairs = [(n.name, t) for n in cl.nodes for t in self.types if n.gpus.get(t, 0) > 0]
        self.pair_of = {p: i for i, p in enumerate(self.pairs)}
        self.pair_type = np.array([self.types.index(t) for _, t in self.pairs])
        self.cap = np.array([dict(cl.nodes[cl.node_index(n)].gpus)[t] for n, t in self.pairs])
        end = max(sched.end, max(j.arrival for j in inst.jobs))
        self.R = int(math.ceil((end - grid0) / self.dt)) + 2
        self.use = np.zeros((len(self.pairs), self.R), dtype=np.int32)
        self.segs: list[list[_Seg]] = [[] for _ in inst.jobs]
        idx = inst.job_index
        by = sched.by_job()
        for jid, allocs in by.items():
            j = idx[jid]
            self.segs[j] = self._segments(inst.jobs[j], allocs)
            self._add(j, +1)
        self.C = np.array([sched.completion.get(job.id, np.nan) for job in inst.jobs])

    def _segments(self, job, allocs: list[Allocation]) -> list[_Seg]:
        pts = sorted({a.start for a in allocs} | {a.end for a in allocs})
        out: list[_Seg] = []
        allocs = sorted(allocs, key=lambda a: a.start)
        act: list[Allocation] = []
        i = 0
        for s, e in zip(pts[:-1], pts[1:]):  # a sweep: the allocations active in [s, e)
            act = [a for a in act if a.end > s]
            while i < len(allocs) and allocs[i].start <= s:
                act.append(allocs[i])
                i += 1
            if not act:
                continue
            parts = tuple(sorted((a.node, a.gpu_type, a.gpus) for a in act))
            rate = gang_rate(job, act, rule=self.rule)
            if out and out[-1].e == s and out[-1].parts == parts:
                out[-1].e = e
            else:
                out.append(_Seg(s, e, parts, rate))
        return out

    def rounds(self, s: float, e: float) -> tuple[int, int]:
        a = int(math.floor((s - self.g0) / self.dt + 1e-9))
        b = int(math.ceil((e - self.g0) / self.dt - 1e-9))
        return max(a, 0), max(b, a + 1)

    def _add(self, j: int, sign: int) -> None:
        for sg in self.segs[j]:
            a, b = self.rounds(sg.s, sg.e)
            if b > self.R:
                self._grow(b)
            for node, typ, g in sg.parts:
                self.use[self.pair_of[(node, typ)], a:b] += sign * g

    def _grow(self, b: int) -> None:
        extra = np.zeros((self.use.shape[0], b - self.R + 64), dtype=self.use.dtype)
        self.use = np.concatenate([self.use, extra], axis=1)
        self.R = self.use.shape[1]

    def work_between(self, j: int, s: float, e: float) -> float:
        return math.fsum(sg.rate * (min(e, sg.e) - max(s, sg.s)) for sg in self.segs[j]
                         if sg.e > s and sg.s < e)

    def schedule(self) -> Schedule:
        allocs = [Allocation(self.inst.jobs[j].id, sg.s, sg.e, node, typ, g)
                  for j, segs in enumerate(self.segs) for sg in segs
                  for node, typ, g in sg.parts]
        comp = {self.inst.jobs[j].id: float(c) for j, c in enumerate(self.C)
                if np.isfinite(c)}
        s = self.sched
        return Schedule(tuple(merge_intervals(allocs)), comp, progress_rule=s.progress_rule)


# --------------------------------------------------------------------------- inputs
def _capabilities(policy: Any, start: Any, sched: Schedule) -> Capabilities:
    from optsched.sim.bounds import Setting

    if policy is None:
        name = None
        if isinstance(start, Result):
            name = start.extra.get("registered_policy") or None
        if isinstance(start, Mapping):
            name = (start.get("extra") or {}).get("registered_policy") or None
        if name:
            return rules_of(str(name))
        return Capabilities.declared_by(sched, source="the start schedule's own rules",
                                        time="continuous")
    if isinstance(policy, Capabilities):
        return policy
    if isinstance(policy, Setting):
        return Capabilities(sharing=policy.sharing, forking=policy.forking,
                            resource_sensitive=policy.resource_sensitive,
                            progress_rules=(policy.progress_rule,), time="continuous",
                            source=f"setting {policy.describe()}")
    if isinstance(policy, str):
        return rules_of(policy)
    raise InvalidOption("policy", policy, "must be a policy name, Capabilities, a Setting "
                        "or None (the start's own)")


def start_rules(start: Any, policy: Any = None) -> Capabilities:
    """The rules :func:`improve` holds the schedules of ``start`` to, for ``policy``
    (see :func:`improve`): to compute a bound for the same setting beforehand."""
    return _capabilities(policy, start, _schedule_of(start))


def _schedule_of(start: Any) -> Schedule:
    if isinstance(start, Schedule):
        return start
    if isinstance(start, Result):
        if start.schedule is None:
            raise InvalidInput("start.schedule", None, "the result holds no schedule")
        return start.schedule
    if isinstance(start, Mapping):
        return Schedule.from_dict(start)
    raise InvalidOption("start", type(start).__name__, "must be a Schedule, a Result or "
                        "a result/schedule mapping")


def _check_int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise InvalidOption(name, v, f"must be an integer >= {lo}")
    return int(v)


def _check_pos(name: str, v: Any, allow_none: bool = False) -> float | None:
    if v is None and allow_none:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 \
            or math.isnan(v):
        raise InvalidOption(name, v, "must be a number > 0" + (" or None" if allow_none
                                                               else ""))
    return float(v)


# --------------------------------------------------------------------------- search
def improve(instance: Instance, start: Any, *, policy: Any = None,
            objective: str = "mean_jct", time_limit: float | None = 60.0, seed: int = 0,
            window_jobs: int = 16, window_blocks: int = 24, block: int = 1,
            max_block: int = 32, patience: int = 8, window_time_limit: float = 10.0,
            max_windows: int | None = None, check_every: int = 0,
            clock: str = "wall", target: float | None = None,
            on_improve: Any = None) -> LNSResult:
    r"""Improve ``start`` by large-neighbourhood search (module docstring).

    Parameters
    ----------
    instance : Instance
        The instance the start schedule is a schedule of.
    start : Schedule, Result or mapping
        The start: a schedule, a simulation result, or their JSON form. Every job must
        complete in it.
    policy : str, Capabilities, Setting or None
        The rules the schedules are validated under: a registered policy or model name,
        its capabilities, a bound :class:`~optsched.sim.bounds.Setting` (continuous
        time), or ``None``: the start result's policy if it names one, else the rules
        the start schedule declares. The start must pass them.
    objective : str
        ``"mean_jct"`` or ``"weighted_mean_jct"`` (:data:`OBJECTIVES`).
    time_limit : float or None
        Seconds for the whole search (default 60; ``None``: until ``max_windows``), on
        ``clock``.
    clock : str
        ``"wall"`` (default) or ``"cpu"`` (this process's CPU time: a budget that does
        not depend on what else the machine runs; the window MILPs' own limits stay wall
        seconds).
    seed : int
        Seeds the window choice; with the same seed, inputs, limits and machine speed
        the search is the same (HiGHS is deterministic; a time limit cuts where the
        machine's speed puts it).
    window_jobs, window_blocks, block, max_block, patience
        Jobs freed per window; blocks per window; rounds per block at first, at most;
        windows without improvement before the block doubles.
    window_time_limit : float
        Seconds per window MILP.
    max_windows : int, optional
        Stop after this many windows.
    check_every : int
        Also validate after every this many improvements (0: only at the end).
    target : float, optional
        Stop once the value is at most this (seconds): given a certified lower bound
        (:func:`optsched.sim.bounds.lower_bounds`), the search stops when it has proved
        its schedule optimal (``stop`` ``"target"``).
    on_improve : callable, optional
        ``on_improve(cpu_s, wall_s, value)`` after each improvement.

    Returns
    -------
    LNSResult
        The best schedule, validated; on Ctrl-C the incumbent so far (``stop``
        ``"interrupted"``).

    Raises
    ------
    InvalidOption
        An unknown objective or a bad limit or size.
    InvalidSchedule
        The start is not a valid schedule of ``instance`` under the rules, or leaves a
        job unfinished.
    ModelNotApplicable
        A sharing, forking or resource-sensitive schedule.
    """
    wall0, cpu0 = time.perf_counter(), time.process_time()
    inst = as_instance(instance)
    opts = _checked_options(objective=objective, clock=clock, time_limit=time_limit,
                            window_time_limit=window_time_limit, window_jobs=window_jobs,
                            window_blocks=window_blocks, block=block, max_block=max_block,
                            patience=patience, check_every=check_every, seed=seed,
                            max_windows=max_windows, target=target)
    sched, caps = _checked_start(inst, start, policy)
    search = _Search(inst, sched, caps, opts, wall0, cpu0, on_improve)
    return search.result(search.run())


@dataclass(frozen=True)
class _Options:
    """The checked options of one search; ``now`` its clock, ``t_start`` when it began."""

    objective: str
    now: Callable[[], float]
    t_start: float
    time_limit: float | None
    window_time_limit: float
    window_jobs: int
    window_blocks: int
    block: int
    max_block: int
    patience: int
    check_every: int
    seed: int
    max_windows: int | None
    target: float | None


def _checked_options(*, objective: str, clock: str, time_limit: Any, window_time_limit: Any,
                     window_jobs: Any, window_blocks: Any, block: Any, max_block: Any,
                     patience: Any, check_every: Any, seed: Any, max_windows: Any,
                     target: Any) -> _Options:
    """:func:`improve`'s options, checked in the order its errors are documented."""
    if objective not in OBJECTIVES:
        raise InvalidOption("objective", objective, "must be one of " + ", ".join(OBJECTIVES))
    if clock not in ("wall", "cpu"):
        raise InvalidOption("clock", clock, "must be 'wall' or 'cpu'")
    now = time.perf_counter if clock == "wall" else time.process_time
    t_start = now()
    limit = _check_pos("time_limit", time_limit, allow_none=True)
    wtl = _check_pos("window_time_limit", window_time_limit)
    assert wtl is not None
    for name, v, lo in (("window_jobs", window_jobs, 1), ("window_blocks", window_blocks, 1),
                        ("block", block, 1), ("max_block", max_block, 1),
                        ("patience", patience, 1), ("check_every", check_every, 0),
                        ("seed", seed, 0)):
        _check_int(name, v, lo)
    if max_block < block:
        raise InvalidOption("max_block", max_block, f"must be >= block ({block})")
    if max_windows is not None:
        _check_int("max_windows", max_windows, 1)
    if target is not None and (isinstance(target, bool) or not isinstance(
            target, (int, float)) or math.isnan(target)):
        raise InvalidOption("target", target, "must be a number of seconds or None")
    if limit is None and max_windows is None:
        raise InvalidOption("time_limit", None, "give a time limit or max_windows")
    return _Options(objective, now, t_start, limit, wtl, window_jobs, window_blocks, block,
                    max_block, patience, check_every, seed, max_windows, target)


def _checked_start(inst: Instance, start: Any, policy: Any) -> tuple[Schedule, Capabilities]:
    """The start schedule and the rules it is held to, after checking that it is a
    schedule of ``inst`` inside the window model that passes those rules and completes
    every job."""
    sched = _schedule_of(start)
    for flag in ("sharing", "forking", "resource_sensitive", "colocation"):
        if getattr(sched, flag):
            raise ModelNotApplicable(f"schedule.{flag}", True, "the window model plans "
                                     "whole gangs of one GPU type; a schedule with "
                                     f"{flag} is outside it")
    caps = _capabilities(policy, start, sched)
    known = set(inst.job_index)
    for a in sched.allocations[:1] + tuple(
            a for a in sched.allocations if a.job not in known)[:1]:
        if a.job not in known:
            raise InvalidSchedule("start.allocations", a.job,
                                  f"job {a.job!r} is not a job of instance {inst.name!r}: "
                                  "a schedule of another instance")
    validate_schedule(inst, sched, caps)  # the start must pass the rules it is held to
    missing = [j.id for j in inst.jobs if j.id not in sched.completion]
    if missing:
        raise InvalidSchedule("start.completion", missing[:5], f"{len(missing)} job(s) "
                              "unfinished; the search improves schedules that complete "
                              "every job")
    return sched, caps


class _Search:
    """The search loop's state: the incumbent (:class:`_State`), the window counters,
    the block length ``m`` and the statistics; one window per :meth:`_window`."""

    def __init__(self, inst: Instance, sched: Schedule, caps: Capabilities, opts: _Options,
                 wall0: float, cpu0: float, on_improve: Any) -> None:
        self.inst, self.caps, self.opts = inst, caps, opts
        self.wall0, self.cpu0, self.on_improve = wall0, cpu0, on_improve
        self.wt = np.array([j.weight for j in inst.jobs]) \
            if opts.objective == "weighted_mean_jct" else np.ones(inst.n_jobs)
        self.r = inst.arrivals.astype(float)
        grid0 = float(self.r.min())
        self.st = _State(inst, sched, grid0)
        self.p = np.array([j.work / (j.workers * j.best_rate) for j in inst.jobs])
        self.rng = np.random.default_rng(opts.seed)
        self.v0 = self.value()
        self.history = [(time.process_time() - cpu0, time.perf_counter() - wall0, self.v0)]
        self.tried = self.improved = self.since = 0
        self.m = opts.block
        self.stats: dict[str, Any] = {"milp_seconds": 0.0, "windows_by_block": {},
                                      "improved_by_block": {},
                                      "no_solution": 0, "mip_start_used": 0}

    def value(self) -> float:
        return float(np.dot(self.wt, self.st.C - self.r) / self.wt.sum())

    def run(self) -> str:
        """Windows until a stop; the stop reason (:data:`STOP_REASONS`)."""
        try:
            while True:
                stop, left = self._stop_before_window()
                if stop is None:
                    stop = self._window(left)
                if stop is not None:
                    return stop
        except KeyboardInterrupt:
            return "interrupted"

    def _stop_before_window(self) -> tuple[str | None, float | None]:
        """Why to stop now (target reached, window count or time limit), else ``None``;
        and the seconds left (``None``: no time limit)."""
        o = self.opts
        if o.target is not None and self.value() <= o.target * (1 + 1e-9):
            return "target", None
        if o.max_windows is not None and self.tried >= o.max_windows:
            return "max_windows", None
        left = None if o.time_limit is None else o.time_limit - (o.now() - o.t_start)
        if left is not None and left <= 0.05:
            return "time_limit", left
        return None, left

    def _window(self, left: float | None) -> str | None:
        """Pick one window, solve it and keep what improves; ``"no_window"`` once no
        window can be drawn for long enough."""
        o = self.opts
        win = _pick_window(self.st, self.rng, self.wt, self.r, self.p, o.window_jobs,
                           o.window_blocks, self.m)
        if win is None:
            return self._no_window()
        self.tried += 1
        key = str(self.m)
        self.stats["windows_by_block"][key] = self.stats["windows_by_block"].get(key, 0) + 1
        wtl = o.window_time_limit
        gain = _solve_window(self.st, win, self.wt,
                             wtl if left is None else min(wtl, max(left, 0.1)),
                             o.seed, self.stats)
        if gain:
            self._kept(key)
        else:
            self.since += 1
            self._grow_block()
        return None

    def _no_window(self) -> str | None:
        o = self.opts
        self.tried += 1
        self.since += 1
        if self.since >= 4 * o.patience * (1 + int(math.log2(o.max_block))):
            return "no_window"
        self._grow_block()
        return None

    def _grow_block(self) -> None:
        o = self.opts
        self.m, self.since = _next_block(self.m, self.since, o.patience, o.block, o.max_block)

    def _kept(self, key: str) -> None:
        """Count an improvement, record it, report it, validate every ``check_every``."""
        self.improved += 1
        self.since = 0
        self.stats["improved_by_block"][key] = self.stats["improved_by_block"].get(key, 0) + 1
        h = (time.process_time() - self.cpu0, time.perf_counter() - self.wall0, self.value())
        self.history.append(h)
        if self.on_improve is not None:
            self.on_improve(*h)
        ce = self.opts.check_every
        if ce and self.improved % ce == 0:
            validate_schedule(self.inst, self.st.schedule(), self.caps)

    def result(self, stop: str) -> LNSResult:
        """The incumbent, validated, as an :class:`LNSResult`."""
        best = self.st.schedule()
        validate_schedule(self.inst, best, self.caps)
        final = self.value()
        v0 = self.v0
        if final > v0 * (1 + 1e-12):  # pragma: no cover - kept changes only ever lower it
            raise AssertionError(f"search ended above its start: {final} > {v0}")
        stats = self.stats
        stats["milp_seconds"] = round(stats["milp_seconds"], 3)
        return LNSResult(schedule=best, objective=self.opts.objective, value=final,
                         start_value=v0, history=tuple(self.history),
                         windows_tried=self.tried, windows_improved=self.improved,
                         stop=stop, capabilities=self.caps,
                         seconds=time.perf_counter() - self.wall0,
                         cpu_seconds=time.process_time() - self.cpu0,
                         extra={"seed": self.opts.seed, "block_final": self.m, **stats})


def _next_block(m: int, since: int, patience: int, block: int, max_block: int) -> tuple[int, int]:
    if since < patience:
        return m, since
    return (m * 2 if m * 2 <= max_block else block), 0


@dataclass
class _Win:
    t0: float
    n_blocks: int
    m: int
    jobs: list[int]


def _pick_window(st: _State, rng: np.random.Generator, wt: np.ndarray, r: np.ndarray,
                 p: np.ndarray, n_jobs: int, n_blocks: int, m: int) -> _Win | None:
    C = st.C
    excess = np.maximum(wt * (C - r - p), 0.0)
    if not excess.sum() > 0:
        return None
    f = int(rng.choice(excess.size, p=excess / excess.sum()))
    span = n_blocks * m * st.dt
    lo, hi = max(r[f], C[f] - span), max(r[f], C[f] - 0.3 * span)
    t = rng.uniform(lo, hi)
    k0 = int(math.floor((t - st.g0) / st.dt))
    t0 = st.g0 + k0 * st.dt
    t1 = t0 + span
    active = np.flatnonzero((r < t1) & (C > t0))
    active = active[active != f]
    score = excess[active] * rng.uniform(0.25, 1.75, active.size) + 1e-9 * rng.random(
        active.size)
    chosen = [f] + active[np.argsort(-score)][:n_jobs - 1].tolist()
    return _Win(t0, n_blocks, m, chosen)


def _solve_window(st: _State, win: _Win, wt: np.ndarray, tl: float, seed: int,
                  stats: dict) -> bool:
    """Re-plan the window's freed jobs by its MILP; keep the result (in ``st``) and
    return ``True`` if it lowers the objective, else leave ``st`` as it was."""
    B = win.m * st.dt
    t0, L = win.t0, win.n_blocks
    t1 = t0 + L * B
    k0 = int(round((t0 - st.g0) / st.dt))
    if k0 + L * win.m > st.R:
        st._grow(k0 + L * win.m)
    # capacity without the freed jobs
    for j in win.jobs:
        st._add(j, -1)
    try:
        free, freep = _free_gpus(st, win, k0)
        jobs, plan, finishes, start_ok = _window_jobs(st, win, wt, t0, t1, B)
        data, index = build_window(jobs, Window(t0, B, L, free))
        x0 = start_vector(data, index, plan, finishes) if start_ok else None
        incumbent = float(sum(wt[j] * (st.C[j] - t0) for j in win.jobs))
        x = _solve_window_milp(data, x0, incumbent, tl, seed, stats)
        if x is None:
            return False
        new_segs, new_C = _realise(st, win, jobs, index, x, free, freep, t0, t1, B)
        gain = sum(wt[j] * (st.C[j] - new_C[a]) for a, j in enumerate(win.jobs))
        if not gain > 1e-9 * max(1.0, abs(incumbent)):
            return False
        for a, j in enumerate(win.jobs):
            st.segs[j] = new_segs[a]
            st.C[j] = new_C[a]
        return True
    finally:
        for j in win.jobs:
            st._add(j, +1)


def _free_gpus(st: _State, win: _Win, k0: int) -> tuple[np.ndarray, np.ndarray]:
    """GPUs the fixed allocations leave free per block (the most any round of the block
    uses): ``free[k, l]`` per type, ``freep[i, l]`` per (node, type) pair."""
    L = win.n_blocks
    K = len(st.types)
    use = st.use[:, k0:k0 + L * win.m].reshape(len(st.pairs), L, win.m).max(axis=2)
    freep = st.cap[:, None] - use
    freep = np.maximum(freep, 0)
    free = np.zeros((K, L), dtype=np.int64)
    np.add.at(free, st.pair_type, freep)
    return free, freep


def _window_jobs(st: _State, win: _Win, wt: np.ndarray, t0: float, t1: float,
                 B: float) -> tuple[list[WindowJob], dict[int, list[tuple[int, int, float]]],
                                    dict[int, bool], bool]:
    """The freed jobs as :class:`WindowJob`, the incumbent's window as a plan of
    ``(block, type, fraction)`` per job, whether each finishes in the window, and whether
    that plan lies on the block grid (so it can be the MIP start)."""
    jobs: list[WindowJob] = []
    plan: dict[int, list[tuple[int, int, float]]] = {}
    finishes: dict[int, bool] = {}
    start_ok = True
    for a, j in enumerate(win.jobs):
        wj = _window_job(st, a, j, float(wt[j]), t0, t1, B)
        jobs.append(wj)
        finishes[a] = wj.must_finish
        blocks = _incumbent_blocks(st, j, t0, t1, B, wj.must_finish, wj.completion)
        if blocks is None:
            start_ok = False
            blocks = []
        plan[a] = blocks
    return jobs, plan, finishes, start_ok


def _window_job(st: _State, a: int, j: int, weight: float, t0: float, t1: float,
                B: float) -> WindowJob:
    """Job ``j`` freed in ``[t0, t1)`` as the ``a``-th job of the window MILP."""
    job = st.inst.jobs[j]
    done_before = st.work_between(j, -math.inf, t0)
    rem = job.work - done_before
    ww = st.work_between(j, t0, t1)
    C = float(st.C[j])
    must = C <= t1
    rates = tuple(job.workers * job.rate(t) for t in st.types)
    first = max(0, int(math.ceil((job.arrival - t0) / B - 1e-9)))
    after = [sg for sg in st.segs[j] if sg.e > t1]
    return WindowJob(a, weight, job.workers, rates, max(rem, 0.0), ww, C, must, first,
                     after_work=st.work_between(j, t1, math.inf),
                     after_rate=max((sg.rate for sg in after), default=0.0))


def _incumbent_blocks(st: _State, j: int, t0: float, t1: float, B: float, must: bool,
                      C: float) -> list[tuple[int, int, float]] | None:
    """Job ``j``'s incumbent segments in ``[t0, t1)`` as ``(block, type, fraction)``;
    ``None`` if one is off the block grid (a mixed or partial gang, a start inside a
    block, or an end inside one other than at its completion ``C``)."""
    workers = st.inst.jobs[j].workers
    blocks = []
    for sg in st.segs[j]:
        if sg.e <= t0 or sg.s >= t1:
            continue
        types = {t for _, t, _ in sg.parts}
        gpus = sum(g for _, _, g in sg.parts)
        s, e = max(sg.s, t0), min(sg.e, t1)
        q0, q1 = (s - t0) / B, (e - t0) / B
        if len(types) != 1 or gpus != workers or abs(q0 - round(q0)) > 1e-9:
            return None
        k = st.types.index(next(iter(types)))
        ends_at_c = must and abs(e - C) <= 1e-9 * max(1.0, C)
        nb = int(round(q1)) if abs(q1 - round(q1)) <= 1e-9 else None
        if nb is None and not ends_at_c:
            return None
        for ell in range(int(round(q0)), nb if nb is not None else int(math.ceil(q1))):
            frac = min(1.0, (e - (t0 + ell * B)) / B)
            blocks.append((ell, k, frac))
    return blocks


def _solve_window_milp(data: Any, x0: np.ndarray | None, incumbent: float, tl: float,
                       seed: int, stats: dict) -> np.ndarray | None:
    """Solve the window MILP (``x0`` the MIP start); its column vector if its objective
    is below ``incumbent``, else ``None``."""
    t_s = time.perf_counter()
    res = solve_program(data, time_limit=tl, seed=seed, start=x0,
                        options={"mip_rel_gap": 1e-6})
    stats["milp_seconds"] += time.perf_counter() - t_s
    if x0 is not None and res.extra.get("mip_start", {}).get("feasible"):
        stats["mip_start_used"] += 1
    if not res.status.has_solution or res.objective is None:
        stats["no_solution"] += 1
        return None
    if res.objective >= incumbent - 1e-6 * max(1.0, abs(incumbent)):
        return None
    return np.concatenate([np.asarray(res.values[b.name], dtype=float).ravel()
                           for b in data.var_blocks])


def _realise(st: _State, win: _Win, jobs: list[WindowJob], index: dict, x: np.ndarray,
             free: np.ndarray, freep: np.ndarray, t0: float, t1: float,
             B: float) -> tuple[list[list[_Seg]], list[float]]:
    """The freed jobs' segments and completions for a window solution: blocks in time
    order, each job's gang placed on nodes of its type (previous nodes first), the job
    stopped at the exact instant its work is done."""
    run: dict[int, list[tuple[int, int]]] = {a: [] for a in range(len(jobs))}
    for (a, k, ell), (cx, cy, _) in index["cols"].items():
        if x[cx] > 0.5 or x[cy] > 0.5:
            run[a].append((ell, k))
    placed = _place_gangs(st, jobs, run, freep, win.n_blocks)
    out_segs, out_C = [], []
    for a, wj in enumerate(jobs):
        blocks = sorted(run[a])
        segs, c = _job_segments(st, win.jobs[a], wj, blocks,
                                [placed[(a, ell)] for ell, _k in blocks], t0, t1, B)
        out_segs.append(segs)
        out_C.append(c)
    return out_segs, out_C


def _place_gangs(st: _State, jobs: list[WindowJob], run: dict[int, list[tuple[int, int]]],
                 freep: np.ndarray, L: int) -> dict[tuple[int, int], tuple[tuple[str, str, int],
                                                                        ...]]:
    """``placed[(a, l)]``: the (node, type, gpus) parts of job ``a``'s gang in block
    ``l``, block by block, largest gangs first, each kept on its previous block's nodes
    when they still have room."""
    placed: dict[tuple[int, int], tuple[tuple[str, str, int], ...]] = {}
    last_nodes: dict[int, tuple[tuple[str, str, int], ...]] = {}
    by_block: dict[int, list[tuple[int, int]]] = {}
    for a, lst in run.items():
        for ell, k in lst:
            by_block.setdefault(ell, []).append((a, k))
    for ell in range(L):
        left = freep[:, ell].astype(np.int64).copy()
        todo = sorted(by_block.get(ell, []), key=lambda ak: -jobs[ak[0]].workers)
        rest = []
        for a, k in todo:  # keep a gang where it was if it still fits
            prev = last_nodes.get(a)
            if prev is not None and _fits_again(st, prev, k, left):
                for n, t, g in prev:
                    left[st.pair_of[(n, t)]] -= g
                placed[(a, ell)] = prev
            else:
                rest.append((a, k))
        for a, k in rest:
            placed[(a, ell)] = _new_gang(st, k, jobs[a].workers, left)
        for a, _ in todo:
            last_nodes[a] = placed[(a, ell)]
    return placed


def _fits_again(st: _State, prev: tuple[tuple[str, str, int], ...], k: int,
                left: np.ndarray) -> bool:
    """Whether a gang's previous parts are all of type ``k`` and all still fit."""
    if not prev:
        return False
    return all(t == st.types[k] for _, t, _ in prev) and all(
        left[st.pair_of[(n, t)]] >= g for n, t, g in prev)


def _new_gang(st: _State, k: int, need: int, left: np.ndarray) -> tuple[tuple[str, str, int],
                                                                         ...]:
    """``need`` GPUs of type ``k`` taken from the (node, type) pairs with the most
    ``left`` first (``left`` decreased in place)."""
    cand = [i for i in np.flatnonzero(st.pair_type == k) if left[i] > 0]
    cand.sort(key=lambda i: -left[i])
    parts = []
    for i in cand:
        g = int(min(left[i], need))
        parts.append((st.pairs[i][0], st.pairs[i][1], g))
        left[i] -= g
        need -= g
        if need == 0:
            break
    if need:  # the capacity row guarantees room; never place a partial gang
        raise AssertionError("window capacity exceeded while placing gangs")
    return tuple(sorted(parts))


def _job_segments(st: _State, j: int, wj: WindowJob, blocks: list[tuple[int, int]],
                  held: list[tuple[tuple[str, str, int], ...]], t0: float, t1: float,
                  B: float) -> tuple[list[_Seg], float]:
    """Job ``j``'s new segments and completion: its incumbent before ``t0``, then its
    window ``blocks`` (on the nodes ``held`` in each), then, if it does not finish in
    the window, its incumbent after ``t1``; cut at the instant its work is done."""
    job = st.inst.jobs[j]
    before = [_cut(sg, -math.inf, t0) for sg in st.segs[j] if sg.s < t0]
    segs = [sg for sg in before if sg is not None]
    for (ell, _k), parts in zip(blocks, held):
        s = t0 + ell * B
        segs.append(_Seg(s, s + B, parts, gang_rate(job, [_P(*q) for q in parts],
                                                    rule=st.rule)))
    if not wj.must_finish:
        segs += [sg for sg in (_cut(sg, t1, math.inf) for sg in st.segs[j]
                               if sg.e > t1) if sg is not None]
    return _complete(job.work, segs)


class _P:
    __slots__ = ("node", "gpu_type", "gpus", "share", "cpus", "memory")

    def __init__(self, node: str, gpu_type: str, gpus: int) -> None:
        self.node, self.gpu_type, self.gpus = node, gpu_type, gpus
        self.share, self.cpus, self.memory = 1.0, 0.0, 0.0


def _cut(sg: _Seg, s: float, e: float) -> _Seg | None:
    a, b = max(sg.s, s), min(sg.e, e)
    return _Seg(a, b, sg.parts, sg.rate) if b > a else None


def _complete(work: float, segs: list[_Seg]) -> tuple[list[_Seg], float]:
    """``segs`` up to the instant ``work`` is done (that instant the completion; the
    end covers the work in floating point, as the simulator's stop does)."""
    done = 0.0
    out = []
    for sg in segs:
        full = sg.rate * (sg.e - sg.s)
        if done + full >= work * (1 - 1e-12):
            need = work - done
            e = sg.s + need / sg.rate if sg.rate > 0 else sg.e
            e = min(max(e, sg.s), sg.e)
            while sg.rate * (e - sg.s) < need and e < sg.e:
                e = min(sg.e, np.nextafter(e, math.inf))
            if e > sg.s:
                out.append(_Seg(sg.s, e, sg.parts, sg.rate))
            return out, float(e)
        done += full
        out.append(sg)
    return out, math.inf


# --------------------------------------------------------------------------- start
class FastestSrpt:
    r"""A constructive start for the search: heterogeneity-aware shortest remaining
    processing time, round-based.

    At each round boundary every (arrived job :math:`j`, GPU type :math:`k`) pair with
    :math:`\tau_{jk} \ge` ``min_speed`` :math:`\cdot \max_k \tau_{jk}` gets a score,
    and pairs are taken in decreasing score; a job not yet placed whose type still has
    :math:`W_j` free GPUs gets them (its nodes of the previous round if they still fit,
    else the nodes with most room), else the next pair is tried. Scores, with
    :math:`\rho_j` the remaining iterations:

    * ``"area"`` (default): :math:`\tau_{jk} / \rho_j`, the fraction of the remaining
      work one GPU of type :math:`k` does per second (Smith's ratio rule with the gang's
      GPU area as the processing time);
    * ``"ratio"``: :math:`W_j \tau_{jk} / \rho_j`, the fraction the whole gang does per
      second;
    * ``"fastest"``: shortest remaining time on the fastest type first, fastest type
      with room.

    ``allowed`` (a boolean array [jobs of the instance, types], optional) removes
    pairs: :func:`optsched.sim.lns_lp_start.lp_guided_start` passes the types the
    interval LP's solution uses for each job. With ``fill``, the GPUs the allowed pairs
    leave idle in a round then go to the jobs still waiting (smallest remaining GPU
    area first, each on its fastest type with room, allowed or not): the round's
    allocation only grows, nothing is reserved for later rounds. ``weights`` (a
    non-negative array [jobs of the instance, types], optional) multiplies each pair's
    score by :math:`\omega_{jk}`: ``lp_guided_start(share_weight=gamma)`` passes
    :math:`(y_{jk} / \max_k y_{jk})^\gamma`, the LP's preference among a job's types.

    On Gavel's 2,000-job trace (gavel-108) these give mean JCTs of 63.3, 73.0 and 81.4 h
    (``benchmarks/lns_gavel.py``). Clairvoyant (``needs_work``): a start for offline
    improvement, not an online policy of any paper. :math:`O(nK \log(nK) + nH)` per
    round for :math:`n` jobs, :math:`K` types, :math:`H` nodes.
    """

    needs_work = True
    event_driven = False

    def __init__(self, min_speed: float = 0.0, rule: str = "area",
                 name: str = "lns.fastest_srpt", allowed: Any = None,
                 fill: bool = False, weights: Any = None) -> None:
        if not isinstance(fill, bool):
            raise InvalidOption("fill", fill, "must be true or false")
        self.fill = fill
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        if self.weights is not None and (self.weights.ndim != 2
                                         or not np.all(np.isfinite(self.weights))
                                         or np.any(self.weights < 0)):
            raise InvalidOption("weights", self.weights.shape,
                                "must be a finite, non-negative array [n_jobs, n_types]")
        self.allowed = None if allowed is None else np.asarray(allowed, dtype=bool)
        if self.allowed is not None and self.allowed.ndim != 2:
            raise InvalidOption("allowed", self.allowed.shape,
                                "must be a boolean array [n_jobs, n_types]")
        if rule not in ("ratio", "area", "fastest"):
            raise InvalidOption("rule", rule, "must be 'ratio', 'area' or 'fastest'")
        if rule == "fastest" and self.weights is not None:
            raise InvalidOption("weights", "array", "scales the 'area' and 'ratio' "
                                "scores; the 'fastest' rule takes none")
        self.rule = rule
        if isinstance(min_speed, bool) or not isinstance(min_speed, (int, float)) \
                or not 0 <= min_speed <= 1:
            raise InvalidOption("min_speed", min_speed, "must be a number in [0, 1]")
        self.min_speed = float(min_speed)
        self.name = name

    def check(self, instance: Instance) -> None:
        shape = (instance.n_jobs, len(instance.cluster.gpu_types))
        for name, a in (("allowed", self.allowed), ("weights", self.weights)):
            if a is not None and a.shape != shape:
                raise ModelNotApplicable(name, a.shape,
                                         f"must be [{shape[0]} jobs, {shape[1]} types]")

    def allocate(self, state: Any) -> list:
        if not len(state.ids):
            return []
        left = state.capacity.astype(np.int64).copy()
        T = state.throughput_matrix
        best = T.max(axis=1)
        W = state.workers
        rem = state.remaining / (W * best)  # seconds left on the fastest type
        # (job, type) pairs by the fraction of the job's remaining time done per second
        # there: rate / best / remaining time; fastest type first at equal job
        n, K = T.shape
        ok = (T > 0) & (T >= self.min_speed * best[:, None])
        if self.allowed is not None:
            ok &= self.allowed[np.asarray(state.index)]
        score = np.where(ok, (T / best[:, None]) / rem[:, None], -np.inf)
        if self.rule == "area":  # per GPU held: Smith's ratio with the gang's area
            score = np.where(ok, score / W[:, None], -np.inf)
        if self.rule == "fastest":
            score = np.where(ok, -rem[:, None] * 4 + T / best[:, None], -np.inf)
        if self.weights is not None:
            wk = self.weights[np.asarray(state.index)]
            score = np.where(ok, np.where(ok, score, 0.0) * wk, -np.inf)
        jj, kk = np.nonzero(ok)
        order = np.lexsort((state.arrivals[jj], -score[jj, kk]))
        out: list = []
        done = np.zeros(n, dtype=bool)
        for t in order.tolist():
            m, k = int(jj[t]), int(kk[t])
            if done[m]:
                continue
            w = int(W[m])
            if left[:, k].sum() < w:
                continue
            done[m] = True
            out += place_most_room(state, left, state.ids[m], k, w)
        if self.fill and self.allowed is not None:
            # GPUs the allowed pairs leave idle this round: the jobs still waiting, the
            # smallest remaining area first, each on its fastest usable type with room
            usable = (T > 0) & (T >= self.min_speed * best[:, None])
            wait = np.flatnonzero(~done)
            for m in wait[np.lexsort((state.arrivals[wait], (rem * W)[wait]))].tolist():
                w = int(W[m])
                for k in np.argsort(-T[m], kind="stable").tolist():
                    if usable[m, k] and left[:, k].sum() >= w:
                        out += place_most_room(state, left, state.ids[m], k, w)
                        break
        return out


def fastest_srpt_start(instance: Instance, min_speed: float = 0.0, *, rule: str = "area",
                       seed: int = 0) -> Result:
    """Simulate :class:`FastestSrpt` over ``instance`` (rounds of ``instance.slot``): a
    validated start schedule for :func:`improve`."""
    from optsched.core.validate import producing
    from optsched.sim.simulator import simulate

    caps = Capabilities(source="lns.fastest_srpt")
    with producing(caps):
        return simulate(as_instance(instance), FastestSrpt(min_speed, rule), seed=seed)
