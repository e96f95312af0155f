"""The rules of a model's feasible set that a schedule alone does not state, checked on a
proof (:mod:`optsched.bench.proof`) after the validator has passed it.

The validator (:mod:`optsched.core.validate`) knows the instance and the relaxed rules
of the producing model, never the model's own structure: that an AlloX job runs on one
machine without preemption, that a Tiresias gang holds GPUs of one type, that Salus'
lanes are memory-safe, that a Synergy round places exactly the admitted jobs at fair
configurations. Each function here checks one of these and raises
:class:`~optsched.errors.InvalidSchedule` naming the job (or GPU) and the rule; the
caller turns it into :class:`~optsched.errors.InvalidRecord`. Each returns what the
objective needs (nothing, the lane plan, the configurations' throughputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from optsched.core.instance import Instance
from optsched.core.schedule import Allocation, Schedule
from optsched.errors import InvalidSchedule

__all__ = ["one_machine", "one_type_per_gang", "salus_lanes", "synergy_round"]

#: relative tolerance of time comparisons (the validator's :data:`TIME_TOL`)
TIME_TOL = 1e-6


def _by_job(schedule: Schedule) -> dict[str, list[Allocation]]:
    by = schedule.by_job()
    for allocs in by.values():
        allocs.sort(key=lambda a: (a.start, a.end))
    return by


def _same_time(a: float, b: float) -> bool:
    return abs(a - b) <= TIME_TOL * max(1.0, abs(a), abs(b))


def one_machine(schedule: Schedule) -> None:
    r"""AlloX (:math:`R||\sum_j C_j`): every job runs on one machine (one GPU of one type
    on one node) in one uninterrupted interval: its allocations, in time order, are on
    one (node, GPU type) and each starts when the previous one ends. :math:`O(a \log a)`
    for :math:`a` allocations."""
    for job, allocs in _by_job(schedule).items():
        first = allocs[0]
        for prev, a in zip(allocs, allocs[1:], strict=False):
            if (a.node, a.gpu_type) != (first.node, first.gpu_type):
                raise InvalidSchedule(f"job {job}", a.to_dict(), "AlloX runs a job on one "
                                      f"machine; it also holds {a.gpu_type} on {a.node}, "
                                      f"after {first.gpu_type} on {first.node}")
            if not _same_time(prev.end, a.start):
                raise InvalidSchedule(f"job {job}", a.to_dict(), "AlloX runs a job without "
                                      f"preemption; it stops at {prev.end:g} s and resumes "
                                      f"at {a.start:g} s")


def one_type_per_gang(schedule: Schedule) -> None:
    r"""Tiresias: a gang holds GPUs of one type at every instant (the model's job runs
    on :math:`W_j` GPUs of one type, :func:`optsched.tiresias.model.build_model`); it
    may change type between intervals (preemption and migration). :math:`O(a \log a)`."""
    for job, allocs in _by_job(schedule).items():
        active: list[Allocation] = []
        for a in allocs:
            active = [b for b in active if b.end > a.start
                      and not _same_time(b.end, a.start)]
            other = next((b for b in active if b.gpu_type != a.gpu_type), None)
            if other is not None:
                raise InvalidSchedule(f"job {job}", a.to_dict(), "Tiresias runs a gang on "
                                      f"GPUs of one type; it holds {a.gpu_type} while it "
                                      f"holds {other.gpu_type} ({other.start:g} to "
                                      f"{other.end:g} s)")
            active.append(a)


def _sweep_max(allocs: Sequence[Allocation], amount: Sequence[float]) -> tuple[float, float]:
    """Largest total ``amount`` of overlapping allocations, and an instant it is reached
    (ends sort before starts at the same instant)."""
    events = sorted([(a.end, 0, -x) for a, x in zip(allocs, amount, strict=True)]
                    + [(a.start, 1, x) for a, x in zip(allocs, amount, strict=True)])
    level = peak = 0.0
    at = 0.0
    for t, _, x in events:
        level += x
        if level > peak:
            peak, at = level, t
    return peak, at


def salus_lanes(instance: Instance, schedule: Schedule, lanes: Any) -> list[list[list[int]]]:
    r"""Salus: the lane plan ``lanes`` (per GPU of :func:`~optsched.salus.model.salus_view`,
    its lanes as lists of job ids) is memory-safe and is the plan the schedule runs.

    Checked: ``lanes`` has one entry per GPU, every job is in at most one lane, can run
    on its GPU's type, and a job is in a lane iff the schedule allocates it; per GPU
    :math:`\sum_l (\sum_{i \in l} P_i + \max_{i \in l} T_i) \le M_g` (Salus' safety
    condition, :func:`~optsched.salus.model.lane_need`); every allocation of a job is on
    its GPU's node and type; on each GPU the jobs' shares sum to at most 1 at every
    instant and on each lane :math:`\sum_{i \in l} s_i / u_i \le 1` (lane time-slicing).
    Returns the plan as job indices (what :func:`~optsched.salus.model.plan_objective`
    reads). :math:`O(a \log a + n)`.
    """
    from optsched.salus.model import TOL, lane_need, salus_view

    view = salus_view(instance)
    if not isinstance(lanes, list) or len(lanes) != view.n_gpus:
        raise InvalidSchedule("lanes", lanes, f"must list the lanes of each of the "
                              f"{view.n_gpus} GPUs (salus_view order)")
    index = {jid: i for i, jid in enumerate(view.ids)}
    by = _by_job(schedule)
    plan: list[list[list[int]]] = []
    where: dict[str, int] = {}
    for g, gpu in enumerate(lanes):
        if not isinstance(gpu, list) or not all(isinstance(lane, list) for lane in gpu):
            raise InvalidSchedule(f"lanes[{g}]", gpu, "must be a list of lanes (lists of "
                                  "job ids)")
        rows = []
        for li, lane in enumerate(gpu):
            row = []
            for jid in lane:
                if jid not in index:
                    raise InvalidSchedule(f"lanes[{g}][{li}]", jid, "not a job of the "
                                          "instance")
                if jid in where:
                    raise InvalidSchedule(f"lanes[{g}][{li}]", jid, f"also on GPU "
                                          f"{where[jid]}: a job is in one lane")
                if not np.isfinite(view.d[index[jid], g]):
                    raise InvalidSchedule(f"lanes[{g}][{li}]", jid, f"cannot run on "
                                          f"{view.gpu_type[g]}")
                where[jid] = g
                row.append(index[jid])
            rows.append(row)
        plan.append(rows)
        need = sum(lane_need(view.P[r], view.T[r]) for r in rows if r)
        cap = float(view.memory[g])
        if need > cap + TOL * max(1.0, cap):
            raise InvalidSchedule(f"lanes[{g}]", gpu, f"the lanes need {need:g} MB, more "
                                  f"than the GPU's {cap:g} MB (Salus' safety condition)")
    for jid in by:
        if jid not in where:
            raise InvalidSchedule(f"job {jid}", jid, "allocated but in no lane of the plan")
    idle = sorted(set(where) - set(by))
    if idle:
        raise InvalidSchedule(f"job {idle[0]}", idle[:5], "in a lane but never allocated")
    for g, rows in enumerate(plan):
        allocs = [a for r in rows for i in r for a in by[view.ids[i]]]
        for a in allocs:
            if (a.node, a.gpu_type) != (view.node[g], view.gpu_type[g]):
                raise InvalidSchedule(f"job {a.job}", a.to_dict(), f"its lane is on GPU {g} "
                                      f"({view.gpu_type[g]} on {view.node[g]})")
        peak, at = _sweep_max(allocs, [a.share for a in allocs])
        if peak > 1 + TOL:
            raise InvalidSchedule(f"lanes[{g}]", peak, f"the jobs of GPU {g} hold shares "
                                  f"summing above 1 at {at:g} s")
        for li, r in enumerate(rows):
            la = [a for i in r for a in by[view.ids[i]]]
            peak, at = _sweep_max(la, [a.share / view.u[index[a.job]] for a in la])
            if peak > 1 + TOL:
                raise InvalidSchedule(f"lanes[{g}][{li}]", peak, "the lane's jobs use more "
                                      f"than its whole time (sum of share/u) at {at:g} s")
    return plan


def synergy_round(instance: Instance, schedule: Schedule) -> dict[int, float]:
    r"""Synergy: the schedule is an allocation of the instance's default round
    (:func:`~optsched.synergy.model.prepare`: start at the latest arrival, FIFO
    admission) in the exact model's feasible set.

    Checked: the jobs allocated are exactly the admitted ones; every allocation of a job
    starts at the round start and all end together, by the round's end; the job holds the
    same cores and DRAM per GPU on each of its servers, and that configuration is one of
    its fair configurations (:meth:`~optsched.synergy.model.SynergyRound.candidates`
    before Pareto pruning: a profiled point, the fair share or a best case, with
    :math:`T_j \ge T^f_j`). GPU, CPU and DRAM capacity per server, gang sizes and the work
    are the validator's. Returns each placed job's :math:`T_j(c_j, m_j)` by job index,
    the value the exact model gives that configuration. :math:`O(a + n q)` for :math:`q`
    configurations per job.
    """
    from optsched.synergy.model import TOL, prepare

    rnd = prepare(instance)
    t0, t1 = rnd.start, rnd.start + float(instance.slot)
    by = _by_job(schedule)
    admitted = {instance.jobs[j].id for j in rnd.admitted}
    for jid in by:
        if jid not in admitted:
            raise InvalidSchedule(f"job {jid}", jid, "placed but not admitted to the round "
                                  "(FIFO admission while its GPUs fit)")
    missing = [jid for jid in (instance.jobs[j].id for j in rnd.admitted) if jid not in by]
    if missing:
        raise InvalidSchedule(f"job {missing[0]}", missing[:5], "admitted but not placed: "
                              "Synergy's round places every admitted job")
    rels: dict[int, float] = {}
    for j in rnd.admitted:
        jid = instance.jobs[j].id
        allocs = by[jid]
        end = allocs[0].end
        for a in allocs:
            if not _same_time(a.start, t0) or not _same_time(a.end, end) \
                    or a.end > t1 + TIME_TOL * max(1.0, t1):
                raise InvalidSchedule(f"job {jid}", a.to_dict(), f"a round allocation holds "
                                      f"[{t0:g}, {end:g}) within [{t0:g}, {t1:g}) s")
        per = {(a.cpus / a.gpus, a.memory / a.gpus) for a in allocs}
        c, m = allocs[0].cpus / allocs[0].gpus, allocs[0].memory / allocs[0].gpus
        if any(abs(x - c) > TOL * max(1.0, c) or abs(y - m) > TOL * max(1.0, m)
               for x, y in per):
            raise InvalidSchedule(f"job {jid}", sorted(per), "a job has one configuration "
                                  "(cores and DRAM per GPU) on all its servers")
        cand = rnd.candidates(j, prune=False)
        hit = np.flatnonzero((np.abs(cand[:, 0] - c) <= 1e-6 * max(1.0, c))
                             & (np.abs(cand[:, 1] - m) <= 1e-6 * max(1.0, m)))
        if hit.size == 0:
            raise InvalidSchedule(f"job {jid}", {"cpus_per_gpu": c, "memory_per_gpu": m},
                                  "not a fair configuration of the job (a profiled point, "
                                  "the fair share or its best case, at least its fair "
                                  "throughput)")
        rels[j] = float(cand[hit, 2].max())
    return rels
