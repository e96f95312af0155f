"""Checking one policy decision before the simulator executes it.

The rules are the validator's (:mod:`optsched.core.rules`): every placement is checked
with :func:`~optsched.core.rules.placement_error`, every gang with
:func:`~optsched.core.rules.gang_error`, node capacity with
:func:`~optsched.core.rules.gpu_overload` and
:func:`~optsched.core.rules.resource_overload`. What only a decision can break is
checked here: the job has arrived and is not finished, and a placement is a
:class:`~optsched.core.schedule.Placement` (or a tuple of its fields). A broken rule
raises :class:`~optsched.sim.policy.PolicyViolation` naming the policy and the instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.rules import (
    GPU_TOL,
    copies_error,
    gang_error,
    gpu_overload,
    placement_error,
    resource_overload,
)
from optsched.core.schedule import Placement
from optsched.sim.policy import PolicyViolation

__all__ = ["Caps", "DecisionChecker", "check_decision"]


@dataclass(frozen=True)
class Caps:
    """What a policy declared its decisions may use (see :mod:`optsched.sim.policy`)."""

    sharing: bool = False
    forking: bool = False
    resource_sensitive: bool = False
    progress_rule: str = "gang"


def _number(pname: str, t: float, job: str, what: str, v: Any) -> float:
    if type(v) is float:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise PolicyViolation(pname, t, f"job {job!r}: {what} must be a number, got {v!r}")
    return float(v)


def _canonical(pname: str, t: float, p: Any) -> Placement:
    """``p`` as a :class:`Placement` with plain Python numbers (numpy ints accepted)."""
    if type(p) is not Placement:
        if not isinstance(p, tuple) or not 4 <= len(p) <= 8:
            raise PolicyViolation(pname, t, f"placement {p!r} is not (job, node, gpu_type, "
                                  "gpus[, cpus, memory, copy, share])")
        p = Placement(*p)
    job, node, typ, g, cpus, mem, copy, share = p
    if type(g) is not int and isinstance(g, np.integer):
        g = int(g)
    if type(copy) is not int and isinstance(copy, np.integer):
        copy = int(copy)
    if type(cpus) is float and type(mem) is float and type(share) is float \
            and g is p.gpus and copy is p.copy:
        return p
    return Placement(job, node, typ, g, _number(pname, t, job, "cpus", cpus),
                     _number(pname, t, job, "memory", mem), copy,
                     _number(pname, t, job, "share", share))


class DecisionChecker:
    """The decision check of one run, with what it learns along the way.

    Each distinct placement gets an integer id the first time it is seen (in canonical
    form: a :class:`Placement` of plain ``int`` counts and ``float`` amounts); what the
    rules read of it (job, node and type, GPUs, share) is kept per id, and a placement
    that passed :func:`~optsched.core.rules.placement_error` is not run through it again
    (that rule reads only the placement and the instance). A look-up by placement
    happens only for placements already in canonical form, so it never conflates ``1``
    with ``True`` or ``1.0``. :meth:`check` returns gangs of ids; :attr:`placement` maps
    an id back to its placement.
    """

    def __init__(self, pname: str, idx_of: dict[str, int],
                 node_cap: dict[tuple[str, str], int],
                 node_res: dict[str, tuple[float, float]], tindex: dict[str, int],
                 W: Any, T: np.ndarray, caps: Caps = Caps()) -> None:
        self.pname, self.idx_of, self.node_cap, self.node_res = pname, idx_of, node_cap, \
            node_res
        self.tindex, self.W, self.T, self.caps = tindex, W, T, caps
        self._checked: dict[Placement, int] = {}  # placements that passed placement_error
        self._ids: dict[Placement, int] = {}
        #: per id: the placement, its job index, (node, type), GPUs, GPUs x share, type
        #: index, and whether it holds CPU cores or DRAM
        self.placement: list[Placement] = []
        self.job: list[int] = []
        self.where: list[tuple[str, str]] = []
        self.gpus: list[int] = []
        self.amount: list[float] = []
        self.type_index: list[int] = []
        self.resources: list[bool] = []
        self.copy: list[int] = []
        #: per id: the (node, type) as a small integer, and the GPUs it may hold there
        #: before gpu_overload says it is over (capacity + GPU_TOL)
        self._slot: list[int] = []
        self._limit: list[float] = []
        self._slots: dict[tuple[str, str], int] = {}
        self._order: list[tuple | None] = []

    @classmethod
    def for_instance(cls, pname: str, instance: Any, caps: Caps = Caps()) -> DecisionChecker:
        cl = instance.cluster
        return cls(pname, instance.job_index,
                   {(n.name, t): int(c) for n in cl.nodes for t, c in n.gpus.items() if c > 0},
                   {n.name: (float(n.cpus), float(n.memory)) for n in cl.nodes},
                   {t: k for k, t in enumerate(cl.gpu_types)}, instance.workers.tolist(),
                   instance.throughput_matrix, caps)

    def id_of(self, p: Placement) -> int:
        """The id of canonical placement ``p`` (a new one if it was never seen)."""
        pid = self._ids.get(p)
        if pid is None:
            pid = self._ids[p] = len(self.placement)
            self.placement.append(p)
            self.job.append(self.idx_of[p.job])
            self.where.append((p.node, p.gpu_type))
            self.gpus.append(p.gpus)
            self.amount.append(p.gpus * p.share)
            self.type_index.append(self.tindex.get(p.gpu_type, -1))
            self.resources.append(bool(p.cpus or p.memory))
            self.copy.append(p.copy)
            self._slot.append(self._slots.setdefault((p.node, p.gpu_type), len(self._slots)))
            self._limit.append(self.node_cap.get((p.node, p.gpu_type), 0) + GPU_TOL)
            self._order.append(None)
        return pid

    def _admit(self, t: float, raw: Any, active: set[int]) -> int:
        """The placement rules for a placement not checked before, in the order a
        decision's errors are reported; its id."""
        pname = self.pname
        p = _canonical(pname, t, raw)
        job, node, typ, g, cpus, mem, copy, share = p
        i = self.idx_of.get(job)
        if i is None:
            raise PolicyViolation(pname, t, f"unknown job {job!r}")
        if i not in active:
            raise PolicyViolation(pname, t, f"job {job!r} has not arrived or is finished")
        k = self.tindex.get(typ)
        caps = self.caps
        reason = placement_error(job, node, typ, self.node_cap.get((node, typ), 0),
                                 self.T[i, k] if k is not None else 0.0, g, cpus, mem, copy,
                                 share, sharing=caps.sharing, forking=caps.forking)
        if reason is not None:
            raise PolicyViolation(pname, t, reason)
        pid = self.id_of(p)
        if p is raw:
            self._checked[p] = pid
        return pid

    def check(self, t: float, placements: list, active: set[int]
              ) -> dict[int, dict[int, list[int]]]:
        """Check one decision; return its placement ids grouped by job index, then copy
        id, both in increasing order (duplicates merged, so the recorded schedule is
        canonical)."""
        pname, caps = self.pname, self.caps
        checked, job_of, amount = self._checked, self.job, self.amount
        slot_of, limit, resources = self._slot, self._limit, self.resources
        used: dict[int, float] = {}
        res_used: dict[str, list[float]] = {}
        by_job: dict[int, list[int]] = {}
        for raw in placements:
            pid = None
            if type(raw) is Placement and type(raw.gpus) is int \
                    and type(raw.copy) is int and type(raw.cpus) is float \
                    and type(raw.memory) is float and type(raw.share) is float:
                pid = checked.get(raw)
            if pid is None:
                pid = self._admit(t, raw, active)
                i = job_of[pid]
            else:
                i = job_of[pid]
                if i not in active:
                    raise PolicyViolation(pname, t, f"job {raw.job!r} has not arrived or is "
                                          "finished")
            k = slot_of[pid]
            u = used.get(k, 0.0) + amount[pid]
            if u > limit[pid]:  # gpu_overload(u, capacity)
                node, typ = self.where[pid]
                cap = self.node_cap.get((node, typ), 0)
                assert gpu_overload(u, cap)
                raise PolicyViolation(pname, t, f"over-allocation: {u:g} GPUs of type "
                                      f"{typ!r} on node {node!r} (capacity {cap})")
            used[k] = u
            if resources[pid]:
                held = self.placement[pid]
                node = held.node
                r = res_used.setdefault(node, [0.0, 0.0])
                r[0] += held.cpus
                r[1] += held.memory
                for m, what in ((0, "CPU cores"), (1, "GB of DRAM")):
                    c = self.node_res[node][m]
                    if resource_overload(r[m], c):
                        raise PolicyViolation(pname, t, f"over-allocation: {r[m]:g} {what} on "
                                              f"node {node!r} (capacity {c:g})")
            ids = by_job.get(i)
            if ids is None:
                by_job[i] = [pid]
            else:
                ids.append(pid)
        gangs: dict[int, dict[int, list[int]]] = {}
        copy_of = self.copy
        for i, ids in by_job.items():
            if not caps.forking:  # every copy id is 0 (placement_error)
                gangs[i] = {0: ids}
                continue
            copies: dict[int, list[int]] = {}
            for q in ids:
                copies.setdefault(copy_of[q], []).append(q)
            gangs[i] = copies
        W, gpus, P = self.W, self.gpus, self.placement
        for i, copies in gangs.items():
            if not caps.forking and len(copies) == 1:
                # without forking a gang is one copy (0): only its width can be wrong
                c, ids = next(iter(copies.items()))
                g = gpus[ids[0]] if len(ids) == 1 else sum(gpus[p] for p in ids)
                if g != W[i]:
                    reason = gang_error(P[ids[0]].job, int(W[i]), c, g,
                                        {P[p].node for p in ids}, forking=False,
                                        progress_rule=caps.progress_rule)
                    if reason is not None:
                        raise PolicyViolation(pname, t, reason)
                if len(ids) > 1:
                    copies[c] = self._merged(c, ids)
                continue
            job = P[next(iter(copies.values()))[0]].job
            nodes_of: dict[str, int] = {}
            for c, ids in copies.items():
                nodes = {P[p].node for p in ids}
                reason = gang_error(job, int(W[i]), c, sum(gpus[p] for p in ids), nodes,
                                    forking=caps.forking, progress_rule=caps.progress_rule)
                if reason is not None:
                    raise PolicyViolation(pname, t, reason)
                if caps.forking:
                    h = next(iter(nodes))
                    if h in nodes_of:
                        raise PolicyViolation(pname, t, copies_error(job, h, nodes_of[h], c))
                    nodes_of[h] = c
                if len(ids) > 1:
                    copies[c] = self._merged(c, ids)
            gangs[i] = dict(sorted(copies.items()))
        return dict(sorted(gangs.items()))

    def _merged(self, copy: int, ids: list[int]) -> list[int]:
        """Placements of one gang with duplicates merged (:func:`_merged`), as ids."""
        order = self._order
        keys = []
        for p in ids:
            k = order[p]
            if k is None:
                k = order[p] = _key(self.placement[p])
            keys.append(k)
        if len(set(keys)) == len(keys):  # nothing to merge: the same placements, in order
            return [p for _, p in sorted(zip(keys, ids), key=lambda kp: kp[0])]
        P = self.placement
        return [self.id_of(p) for p in _merged(P[ids[0]].job, copy, [P[p] for p in ids])]


def check_decision(pname: str, t: float, placements: list, active: set[int],
                   idx_of: dict[str, int], node_cap: dict[tuple[str, str], int],
                   node_res: dict[str, tuple[float, float]], tindex: dict[str, int],
                   W: Any, T: np.ndarray, caps: Caps = Caps(),
                   ) -> dict[int, dict[int, list[Placement]]]:
    """Check one decision; return its placements grouped by job index, then copy id
    (duplicates merged, so the recorded schedule is canonical). ``W`` gives each job's
    gang size by index. A run checks many decisions with one :class:`DecisionChecker`."""
    checker = DecisionChecker(pname, idx_of, node_cap, node_res, tindex, W, T, caps)
    gangs = checker.check(t, placements, active)
    P = checker.placement
    return {i: {c: [P[p] for p in ids] for c, ids in copies.items()}
            for i, copies in gangs.items()}


def _key(p: Placement) -> tuple:
    return (p.node, p.gpu_type, p.share, p.cpus / p.gpus, p.memory / p.gpus)


def _merged(job: str, copy: int, ps: list[Placement]) -> list[Placement]:
    """Duplicates (same node, type, share and per-GPU CPU/DRAM) merged; the gang's rate
    is unchanged (:func:`optsched.core.progress.gang_rate` reads counts and minima)."""
    keys = [_key(p) for p in ps]
    if len(set(keys)) == len(keys):  # nothing to merge: the same placements, in order
        return [p for _, p in sorted(zip(keys, ps), key=lambda kp: kp[0])]
    merged: dict[tuple, list[float]] = {}
    for p in ps:
        k = _key(p)
        m = merged.setdefault(k, [0, 0.0, 0.0])
        m[0] += p.gpus
        m[1] += p.cpus
        m[2] += p.memory
    return [Placement(job, k[0], k[1], int(m[0]), m[1], m[2], copy, k[2])
            for k, m in sorted(merged.items())]

