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

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.core.rules import (
    GPU_TOL,
    PAIR_AMOUNT,
    copies_error,
    gang_error,
    gpu_overload,
    partner_error,
    placement_error,
    resource_overload,
)
from optsched.core.schedule import Placement
from optsched.sim.policy import PolicyViolation

__all__ = ["Caps", "DecisionChecker", "check_decision"]

#: The unit roundoff of a float (:math:`2^{-53}`), rounded up.
_EPS = 1.2e-16
#: Checks made in full after one in which most of the decision had changed.
_BACKOFF = 8


@dataclass(frozen=True)
class Caps:
    """What a policy declared its decisions may use (see :mod:`optsched.sim.policy`)."""

    sharing: bool = False
    forking: bool = False
    resource_sensitive: bool = False
    progress_rule: str = "gang"
    colocation: bool = False


def _number(pname: str, t: float, job: str, what: str, v: Any) -> float:
    if type(v) is float:
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise PolicyViolation(pname, t, f"job {job!r}: {what} must be a number, got {v!r}")
    return float(v)


def _canonical(pname: str, t: float, p: Any) -> Placement:
    """``p`` as a :class:`Placement` with plain Python numbers (numpy ints accepted)."""
    if type(p) is not Placement:
        if not isinstance(p, tuple) or not 4 <= len(p) <= 9:
            raise PolicyViolation(pname, t, f"placement {p!r} is not (job, node, gpu_type, "
                                  "gpus[, cpus, memory, copy, share, partner])")
        p = Placement(*p)
    job, node, typ, g, cpus, mem, copy, share, partner = p
    if type(g) is not int and isinstance(g, np.integer):
        g = int(g)
    if type(copy) is not int and isinstance(copy, np.integer):
        copy = int(copy)
    if type(cpus) is float and type(mem) is float and type(share) is float \
            and g is p.gpus and copy is p.copy:
        return p
    return Placement(job, node, typ, g, _number(pname, t, job, "cpus", cpus),
                     _number(pname, t, job, "memory", mem), copy,
                     _number(pname, t, job, "share", share), partner)


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
                 W: Any, T: np.ndarray, caps: Caps = Caps(),
                 pair_rate: Any = None) -> None:
        self.pname, self.idx_of, self.node_cap, self.node_res = pname, idx_of, node_cap, \
            node_res
        #: ``pair_rate(job, partner, gpu_type)``: the instance's co-located rate or None
        self.pair_rate = pair_rate
        self.tindex, self.W, self.T, self.caps = tindex, W, T, caps
        self._checked: dict[Placement, int] = {}  # placements that passed placement_error
        #: the same, by object identity, for the placement objects kept in
        #: :attr:`placement` (alive as long as the checker: an ``id`` is never reused), so
        #: that a policy handing back a previous placement costs no hashing of its fields
        self._seen_object: dict[int, int] = {}
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
        #: per id: 1 once the placement passed the per-placement rules
        self._admitted = bytearray()
        #: the last decision checked, while :meth:`_check_changes` may start from it
        self._last: _Checked | None = None
        #: the jobs whose placements the last check found changed (``None``: all were
        #: checked), and a count of the checks made
        self.changed_jobs: set[int] | None = None
        self.serial = 0
        self._backoff = 0  # checks left to make in full before trying changes again

    @classmethod
    def for_instance(cls, pname: str, instance: Any, caps: Caps = Caps()) -> DecisionChecker:
        cl = instance.cluster
        return cls(pname, instance.job_index,
                   {(n.name, t): int(c) for n in cl.nodes for t, c in n.gpus.items() if c > 0},
                   {n.name: (float(n.cpus), float(n.memory)) for n in cl.nodes},
                   {t: k for k, t in enumerate(cl.gpu_types)}, instance.workers.tolist(),
                   instance.throughput_matrix, caps, instance.colocated_rate)

    def id_of(self, p: Placement) -> int:
        """The id of canonical placement ``p`` (a new one if it was never seen)."""
        pid = self._ids.get(p)
        if pid is None:
            pid = self._ids[p] = len(self.placement)
            self.placement.append(p)
            self.job.append(self.idx_of[p.job])
            self.where.append((p.node, p.gpu_type))
            self.gpus.append(p.gpus)
            # a co-located pair's GPUs count once: each of its placements for half
            self.amount.append(p.gpus * p.share * (1.0 if p.partner is None else PAIR_AMOUNT))
            self.type_index.append(self.tindex.get(p.gpu_type, -1))
            self.resources.append(bool(p.cpus or p.memory))
            self.copy.append(p.copy)
            self._slot.append(self._slots.setdefault((p.node, p.gpu_type), len(self._slots)))
            self._limit.append(self.node_cap.get((p.node, p.gpu_type), 0) + GPU_TOL)
            self._order.append(None)
            self._admitted.append(0)
        return pid

    def _admit(self, t: float, raw: Any, active: set[int]) -> int:
        """The placement rules for a placement not checked before, in the order a
        decision's errors are reported; its id."""
        pname = self.pname
        p = _canonical(pname, t, raw)
        job, node, typ, g, cpus, mem, copy, share, partner = p
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
        if reason is None and partner is not None:
            known = isinstance(partner, str) and partner in self.idx_of
            rate = self.pair_rate(job, partner, typ) \
                if known and caps.colocation and self.pair_rate is not None else None
            reason = partner_error(job, partner, typ, known, rate, colocation=caps.colocation)
        if reason is not None:
            raise PolicyViolation(pname, t, reason)
        pid = self.id_of(p)
        self._admitted[pid] = 1
        if p is raw:
            self._checked[p] = pid
            if self.placement[pid] is p and _plain(p):
                self._seen_object[id(p)] = pid
        return pid

    def check(self, t: float, placements: list, active: set[int],
              known: tuple[tuple, np.ndarray] | None = None,
              gone: list[int] | None = None) -> dict[int, dict[int, list[int]]]:
        r"""Check one decision; return its placement ids grouped by job index, then copy
        id, both in increasing order (duplicates merged, so the recorded schedule is
        canonical).

        A decision close to the previous one checked is checked through what changed
        (:meth:`_check_changes`); on any violation, or any case that path does not
        decide exactly, the whole decision is checked again in order
        (:meth:`_check_all`), so the error raised is the one of the first rule broken
        in the decision's order. Cost: :math:`O(P)` hash look-ups for :math:`P`
        placements, plus the rules on the changed placements, jobs and nodes; the full
        check is :math:`O(P \log P)`.

        ``known``: placement objects this checker returned (in :attr:`placement`) and
        their ids; when ``placements`` starts with those very objects, their ids are
        taken from it (one identity test each, no look-up). ``gone``: every job that left
        ``active`` since the last check (a run knows its completions), so that the jobs
        of the last decision that finished are found without a pass over that decision.
        """
        gangs = None
        if self._backoff:
            self._backoff -= 1
        else:
            gangs = self._check_changes(t, placements, active, known, gone)
        if gangs is None:
            gangs = self._check_all(t, placements, active)
        if self.caps.colocation:
            self._check_pairs(t, gangs)
        return gangs

    def _check_pairs(self, t: float, gangs: dict[int, dict[int, list[int]]]) -> None:
        """Co-location: every placement naming a partner has its mirror image (the
        partner on the same node, type and GPUs, naming this job), and a job shares its
        GPUs with one partner at a time (:mod:`optsched.core.colocation`)."""
        P = self.placement
        held: dict[tuple, int] = {}
        partner_of: dict[int, str | None] = {}
        for i, copies in gangs.items():
            for ids in copies.values():
                for pid in ids:
                    p = P[pid]
                    seen = partner_of.setdefault(i, p.partner)
                    if seen != p.partner:
                        raise PolicyViolation(self.pname, t, f"job {p.job!r} holds GPUs "
                                              f"with partners {seen!r} and {p.partner!r} "
                                              "at once: a job shares its GPUs with one "
                                              "other job at a time")
                    if p.partner is not None:
                        k = (p.job, p.partner, p.node, p.gpu_type)
                        held[k] = held.get(k, 0) + p.gpus
        for (job, partner, node, typ), g in held.items():
            if held.get((partner, job, node, typ), 0) != g:
                raise PolicyViolation(self.pname, t, f"job {job!r} holds {g} GPU(s) of type "
                                      f"{typ!r} on node {node!r} shared with job "
                                      f"{partner!r}, which does not hold them naming "
                                      f"{job!r} as its partner")

    # ------------------------------------------------------------------ full check
    def _check_all(self, t: float, placements: list, active: set[int]
                   ) -> dict[int, dict[int, list[int]]]:
        """Every rule, placement by placement in the decision's order, then gang by
        gang (in the order the jobs first appear); remembers the decision for
        :meth:`_check_changes`."""
        self._last = None
        self.changed_jobs = None
        self.serial += 1
        remember = not self._backoff  # the next check may start from this one
        by_job, cells, nodes = self._placements_all(t, placements, active, remember)
        gangs: dict[int, dict[int, list[int]]] = {}
        merged = False  # a placement repeated, or two that differ only in their counts
        for i, ids in by_job.items():
            gangs[i], m = self._gang(t, i, ids)
            merged |= m
        gangs = dict(sorted(gangs.items()))
        if not merged and remember:
            self._last = _Checked(by_job, cells, nodes, gangs)
        return gangs

    def _placements_all(self, t: float, placements: list, active: set[int], remember: bool
                        ) -> tuple[dict[int, list[int]], dict[int, list[int]],
                                   dict[str, list[int]]]:
        """The per-placement rules and node capacities, in order; the placement ids per
        job, per (node, type) slot and per node (those holding CPU cores or DRAM)."""
        pname, job_of, amount = self.pname, self.job, self.amount
        slot_of, limit, resources = self._slot, self._limit, self.resources
        used: dict[int, float] = {}
        res_used: dict[str, list[float]] = {}
        by_job: dict[int, list[int]] = {}
        cells: dict[int, list[int]] = {}
        nodes: dict[str, list[int]] = {}
        for raw in placements:
            pid = self._known(raw)
            if pid is None:
                pid = self._admit(t, raw, active)
            elif job_of[pid] not in active:
                raise PolicyViolation(pname, t, f"job {raw.job!r} has not arrived or is "
                                      "finished")
            k = slot_of[pid]
            u = used.get(k, 0.0) + amount[pid]
            if u > limit[pid]:  # gpu_overload(u, capacity)
                raise self._gpu_violation(t, pid, u)
            used[k] = u
            if remember:
                cells.setdefault(k, []).append(pid)
            if resources[pid]:
                self._add_resources(t, pid, res_used)
                if remember:
                    nodes.setdefault(self.where[pid][0], []).append(pid)
            by_job.setdefault(job_of[pid], []).append(pid)
        return by_job, cells, nodes

    def _gpu_violation(self, t: float, pid: int, u: float) -> PolicyViolation:
        node, typ = self.where[pid]
        cap = self.node_cap.get((node, typ), 0)
        assert gpu_overload(u, cap)
        return PolicyViolation(self.pname, t, f"over-allocation: {u:g} GPUs of type "
                               f"{typ!r} on node {node!r} (capacity {cap})")

    def _add_resources(self, t: float, pid: int, res_used: dict[str, list[float]]) -> None:
        """Add placement ``pid``'s CPU cores and DRAM to its node's; raise when over."""
        held = self.placement[pid]
        node = held.node
        r = res_used.setdefault(node, [0.0, 0.0])
        r[0] += held.cpus
        r[1] += held.memory
        for m, what in ((0, "CPU cores"), (1, "GB of DRAM")):
            c = self.node_res[node][m]
            if resource_overload(r[m], c):
                raise PolicyViolation(self.pname, t, f"over-allocation: {r[m]:g} {what} on "
                                      f"node {node!r} (capacity {c:g})")

    def _gang(self, t: float, i: int, ids: list[int]) -> tuple[dict[int, list[int]], bool]:
        """The gang rules for job ``i`` holding placements ``ids``: its placements by
        copy id (increasing), each copy's in canonical order with duplicates merged, and
        whether any were merged."""
        caps, P, gpus = self.caps, self.placement, self.gpus
        if not caps.forking:  # every copy id is 0 (placement_error): one gang
            g = gpus[ids[0]] if len(ids) == 1 else sum(gpus[p] for p in ids)
            if g != self.W[i]:
                reason = gang_error(P[ids[0]].job, int(self.W[i]), 0, g,
                                    {P[p].node for p in ids}, forking=False,
                                    progress_rule=caps.progress_rule)
                if reason is not None:
                    raise PolicyViolation(self.pname, t, reason)
            if len(ids) == 1:
                return {0: ids}, False
            merged = self._merged(0, ids)
            return {0: merged}, len(merged) != len(ids)
        copies: dict[int, list[int]] = {}
        for q in ids:
            copies.setdefault(self.copy[q], []).append(q)
        job = P[ids[0]].job
        nodes_of: dict[str, int] = {}
        merged_any = False
        for c, cids in copies.items():
            nodes = {P[p].node for p in cids}
            reason = gang_error(job, int(self.W[i]), c, sum(gpus[p] for p in cids), nodes,
                                forking=True, progress_rule=caps.progress_rule)
            if reason is not None:
                raise PolicyViolation(self.pname, t, reason)
            h = next(iter(nodes))
            if h in nodes_of:
                raise PolicyViolation(self.pname, t, copies_error(job, h, nodes_of[h], c))
            nodes_of[h] = c
            if len(cids) > 1:
                copies[c] = self._merged(c, cids)
                merged_any |= len(copies[c]) != len(cids)
        return dict(sorted(copies.items())), merged_any

    # ------------------------------------------------------------------ changes only
    def _check_changes(self, t: float, placements: list, active: set[int],
                       known: tuple[tuple, np.ndarray] | None = None,
                       gone: list[int] | None = None
                       ) -> dict[int, dict[int, list[int]]] | None:
        """The decision checked through what changed since the last one checked, or
        ``None`` when that cannot decide it exactly (nothing remembered, a duplicate, a
        placement not seen before that breaks a rule, a job no longer visible, a node
        near or over capacity, a gang that breaks a rule or needs merging): the full
        check then decides, and raises the error it always raised.

        What is reused is exact: a placement seen before passed the per-placement rules,
        which read nothing else; a job's gang (rules, canonical order) is a function of
        its set of placements; a node's capacity is re-summed over its placements
        whenever one of them changes.
        """
        last = self._last
        if last is None:
            return None
        ids = self._ids_seen(t, placements, active, known)
        if ids is None:
            return None
        new = set(ids)
        if len(new) != len(ids):
            return None  # a duplicate: merged by the full check
        old = last.ids
        added, removed = new - old, old - new
        if 2 * (len(added) + len(removed)) > len(ids) + len(old):
            # most of the decision changed: the full check is cheaper, for this and
            # (policies that re-place every job, e.g. Gavel's rounds) the next ones
            self._backoff = _BACKOFF
            return None
        job_of = self.job
        # the last decision's jobs no longer active: jobs leave ``active`` only as
        # ``gone`` says, when it is given
        ended = last.by_job.keys() - active if gone is None else \
            [i for i in gone if i in last.by_job]
        for i in ended:  # finished since: none of it may stay
            if any(p in new for p in last.by_job[i]):
                return None
        if any(job_of[p] not in active for p in added):
            return None
        if not self._capacity_holds(last, added, removed):
            return None
        return self._regroup(t, last, new, added, removed)

    def _known(self, raw) -> int | None:
        """The id of a placement checked before: the same object, or an equal one in
        canonical form (see ``_plain``); else ``None``."""
        pid = self._seen_object.get(id(raw))
        if pid is None and type(raw) is Placement and type(raw.gpus) is int \
                and type(raw.copy) is int and type(raw.cpus) is float \
                and type(raw.memory) is float and type(raw.share) is float:
            pid = self._checked.get(raw)
        return pid

    def _ids_seen(self, t: float, placements: list, active: set[int],
                  known: tuple[tuple, np.ndarray] | None = None) -> list[int] | None:
        """The ids of ``placements``; a placement never seen is admitted through the
        per-placement rules (``None`` if it breaks one)."""
        ids: list[int] = []
        start = 0
        if known is not None:
            objs, pids = known
            L = len(objs)
            if L and len(placements) >= L and all(map(operator.is_, placements[:L], objs)) \
                    and np.frombuffer(self._admitted, dtype=np.uint8)[pids].all():
                ids = pids.tolist()
                start = L
        rest = placements[start:] if start else placements
        # the common case, placement objects handed back, looked up in one C loop
        got: list[Any] = list(map(self._seen_object.get, map(id, rest)))
        if None in got:
            for k, pid in enumerate(got):
                if pid is None:
                    raw = rest[k]
                    pid = self._known(raw)
                    if pid is None:
                        try:
                            pid = self._admit(t, raw, active)
                        except Exception:  # the full check raises what it raised in order
                            return None
                    got[k] = pid
        if not start:
            return got
        ids += got
        return ids

    def _capacity_holds(self, last: _Checked, added: set[int], removed: set[int]) -> bool:
        r"""Whether every (node, type) slot and node touched by the change stays clearly
        within capacity, whatever the order in which its amounts are added up.

        A sum of :math:`k` non-negative floats, in any order, is within a relative
        :math:`(k - 1) u` of the exact sum (:math:`u = 2^{-53}`), so a total
        :math:`S (1 + 4 k \epsilon) \le` limit means no partial sum of the full check
        goes over; otherwise the full check decides."""
        slot_of, amount, limit = self._slot, self.amount, self._limit
        touched = _grouped(added, slot_of)
        cells = last.cells
        for k in {slot_of[p] for p in removed}:
            touched.setdefault(k, [])
        for k, fresh in touched.items():
            members = [p for p in cells.get(k, ()) if p not in removed] + fresh
            if members:
                u = sum(amount[p] for p in members)
                if u * (1 + 4 * len(members) * _EPS) > limit[members[0]]:
                    return False
            last.cells_next[k] = members
        return self._nodes_hold(last, added, removed)

    def _nodes_hold(self, last: _Checked, added: set[int], removed: set[int]) -> bool:
        """:meth:`_capacity_holds` for the CPU cores and DRAM of the nodes touched."""
        res, where = self.resources, self.where
        nodes: dict[str, list[int]] = {}
        for p in added:
            if res[p]:
                nodes.setdefault(where[p][0], []).append(p)
        for p in removed:
            if res[p]:
                nodes.setdefault(where[p][0], [])
        for node, fresh in nodes.items():
            members = [p for p in last.nodes.get(node, ()) if p not in removed] + fresh
            grow = 1 + 4 * len(members) * _EPS
            cap = self.node_res[node]
            if resource_overload(sum(self.placement[p].cpus for p in members) * grow, cap[0]) \
                    or resource_overload(sum(self.placement[p].memory for p in members)
                                         * grow, cap[1]):
                return False
            last.nodes_next[node] = members
        return True

    def _regroup(self, t: float, last: _Checked, new: set[int], added: set[int],
                 removed: set[int]) -> dict[int, dict[int, list[int]]] | None:
        """The gangs of the changed jobs checked again, the others' kept; the decision
        remembered."""
        job_of = self.job
        fresh = _grouped(added, job_of)
        for p in removed:
            fresh.setdefault(job_of[p], [])
        by_job = {i: [p for p in last.by_job.get(i, ()) if p not in removed] + ids
                  for i, ids in fresh.items()}
        changed = set(by_job)
        gangs = dict(last.gangs)
        top = next(reversed(gangs), -1)  # the largest job index placed before
        placed: dict[int, dict[int, list[int]]] = {}  # the jobs placed anew
        for i, ids in by_job.items():
            if not ids:
                del gangs[i]
                continue
            try:
                copies, merged = self._gang(t, i, ids)
            except PolicyViolation:
                return None
            if merged:
                return None
            if i in gangs:
                gangs[i] = copies
            else:
                placed[i] = copies
        if placed:
            for i in sorted(placed):
                gangs[i] = placed[i]
            if min(placed) < top:  # else (jobs placed in arrival order) still sorted
                gangs = dict(sorted(gangs.items()))
        self._last = last.next(new, by_job, gangs)
        self.changed_jobs = changed
        self.serial += 1
        return gangs

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
                   W: Any, T: np.ndarray, caps: Caps = Caps(), pair_rate: Any = None,
                   ) -> dict[int, dict[int, list[Placement]]]:
    """Check one decision; return its placements grouped by job index, then copy id
    (duplicates merged, so the recorded schedule is canonical). ``W`` gives each job's
    gang size by index. A run checks many decisions with one :class:`DecisionChecker`."""
    checker = DecisionChecker(pname, idx_of, node_cap, node_res, tindex, W, T, caps,
                              pair_rate)
    gangs = checker.check(t, placements, active)
    P = checker.placement
    return {i: {c: [P[p] for p in ids] for c, ids in copies.items()}
            for i, copies in gangs.items()}


def _plain(raw: Any) -> bool:
    """Whether ``raw`` is a :class:`Placement` in canonical form (``int`` counts,
    ``float`` amounts): only such a placement is looked up among those seen, so that
    ``True`` or ``1.0`` GPUs are never taken for the ``1`` checked before."""
    return type(raw) is Placement and type(raw.gpus) is int and type(raw.copy) is int \
        and type(raw.cpus) is float and type(raw.memory) is float \
        and type(raw.share) is float


class _Checked:
    """The last decision checked, as :meth:`DecisionChecker._check_changes` reuses it:
    its placement ids, per job (raw, before merging), per (node, type) slot and per
    node (those holding CPU cores or DRAM), and its gangs."""

    def __init__(self, by_job: dict[int, list[int]], cells: dict[int, list[int]],
                 nodes: dict[str, list[int]], gangs: dict[int, dict[int, list[int]]],
                 ids: set[int] | None = None) -> None:
        self.by_job, self.cells, self.nodes, self.gangs = by_job, cells, nodes, gangs
        self.ids = ids if ids is not None else {p for v in by_job.values() for p in v}
        self.cells_next: dict[int, list[int]] = {}  # slots and nodes a change re-summed
        self.nodes_next: dict[str, list[int]] = {}

    def next(self, ids: set[int], by_job: dict[int, list[int]],
             gangs: dict[int, dict[int, list[int]]]) -> _Checked:
        """The decision after a change: ``by_job`` holds the changed jobs' placements
        (empty for a job no longer placed); the slots and nodes re-summed come along."""
        jobs, cells, nodes = self.by_job, self.cells, self.nodes
        for i, v in by_job.items():
            if v:
                jobs[i] = v
            else:
                jobs.pop(i, None)
        for k, m in self.cells_next.items():
            cells[k] = m
        for node, m in self.nodes_next.items():
            nodes[node] = m
        return _Checked(jobs, cells, nodes, gangs, ids)


def _grouped(ids: set[int], key: list) -> dict[Any, list[int]]:
    """``ids`` grouped by ``key[id]``, each group in increasing id order."""
    out: dict[Any, list[int]] = {}
    for p in sorted(ids):
        out.setdefault(key[p], []).append(p)
    return out


def _key(p: Placement) -> tuple:
    return (p.node, p.gpu_type, p.share, p.cpus / p.gpus, p.memory / p.gpus,
            p.partner or "")


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
    return [Placement(job, k[0], k[1], int(m[0]), m[1], m[2], copy, k[2], k[5] or None)
            for k, m in sorted(merged.items())]

