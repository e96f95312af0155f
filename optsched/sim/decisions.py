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
    copies_error,
    gang_error,
    gpu_overload,
    placement_error,
    resource_overload,
)
from optsched.core.schedule import Placement
from optsched.sim.policy import PolicyViolation

__all__ = ["Caps", "check_decision"]


@dataclass(frozen=True)
class Caps:
    """What a policy declared its decisions may use (see :mod:`optsched.sim.policy`)."""

    sharing: bool = False
    forking: bool = False
    resource_sensitive: bool = False


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


def check_decision(pname: str, t: float, placements: list, active: set[int],
                   idx_of: dict[str, int], node_cap: dict[tuple[str, str], int],
                   node_res: dict[str, tuple[float, float]], tindex: dict[str, int],
                   W: Any, T: np.ndarray, caps: Caps = Caps(),
                   memo: dict[Placement, tuple[int, tuple[str, str], int]] | None = None,
                   ) -> dict[int, dict[int, list[Placement]]]:
    """Check one decision; return its placements grouped by job index, then copy id
    (duplicates merged, so the recorded schedule is canonical).

    ``W`` gives each job's gang size by index (an array or a list). ``memo`` (one dict
    per run, owned by the caller) remembers placements that passed
    :func:`~optsched.core.rules.placement_error`: that rule reads only the placement and
    the instance, so a placement a policy returns again is not checked again. Only
    placements already in canonical form (a :class:`Placement` of plain ``int`` counts
    and ``float`` amounts) are remembered, so a look-up never conflates ``1`` with
    ``True`` or ``1.0``.
    """
    used: dict[tuple[str, str], float] = {}
    res_used: dict[str, list[float]] = {}
    gangs: dict[int, dict[int, list[Placement]]] = {}
    if memo is not None and len(memo) > 500_000:
        memo.clear()
    for raw in placements:
        hit = None
        if memo is not None and type(raw) is Placement and type(raw.gpus) is int \
                and type(raw.copy) is int and type(raw.cpus) is float \
                and type(raw.memory) is float and type(raw.share) is float:
            hit = memo.get(raw)
        if hit is not None:
            p = raw
            i, key, cap = hit
            job = p.job
            if i not in active:
                raise PolicyViolation(pname, t, f"job {job!r} has not arrived or is finished")
            node, typ, g, cpus, mem, copy, share = p[1:]
        else:
            p = _canonical(pname, t, raw)
            job, node, typ, g, cpus, mem, copy, share = p
            found = idx_of.get(job)
            if found is None:
                raise PolicyViolation(pname, t, f"unknown job {job!r}")
            i = found
            if i not in active:
                raise PolicyViolation(pname, t, f"job {job!r} has not arrived or is finished")
            key = (node, typ)
            cap = node_cap.get(key, 0)
            k = tindex.get(typ)
            reason = placement_error(job, node, typ, cap, T[i, k] if k is not None else 0.0,
                                     g, cpus, mem, copy, share, sharing=caps.sharing,
                                     forking=caps.forking)
            if reason is not None:
                raise PolicyViolation(pname, t, reason)
            if memo is not None and p is raw:
                memo[p] = (i, key, cap)
        u = used.get(key, 0.0) + g * share
        if gpu_overload(u, cap):
            raise PolicyViolation(pname, t, f"over-allocation: {u:g} GPUs of type {typ!r} on "
                                  f"node {node!r} (capacity {cap})")
        used[key] = u
        if cpus or mem:
            r = res_used.setdefault(node, [0.0, 0.0])
            r[0] += cpus
            r[1] += mem
            for m, what in ((0, "CPU cores"), (1, "GB of DRAM")):
                c = node_res[node][m]
                if resource_overload(r[m], c):
                    raise PolicyViolation(pname, t, f"over-allocation: {r[m]:g} {what} on "
                                          f"node {node!r} (capacity {c:g})")
        gang = gangs.get(i)
        if gang is None:
            gangs[i] = {copy: [p]}
        else:
            gang.setdefault(copy, []).append(p)
    for i, copies in gangs.items():
        if not caps.forking and len(copies) == 1:
            # without forking a gang is one copy (0): only its width can be wrong
            c, ps = next(iter(copies.items()))
            g = ps[0].gpus if len(ps) == 1 else sum(p.gpus for p in ps)
            if g != W[i]:
                reason = gang_error(ps[0].job, int(W[i]), c, g, {p.node for p in ps},
                                    forking=False)
                if reason is not None:
                    raise PolicyViolation(pname, t, reason)
            if len(ps) > 1:
                copies[c] = _merged(ps[0].job, c, ps)
            continue
        job = next(iter(copies.values()))[0].job
        nodes_of: dict[str, int] = {}
        for c, ps in copies.items():
            nodes = {p.node for p in ps}
            reason = gang_error(job, int(W[i]), c, sum(p.gpus for p in ps), nodes,
                                forking=caps.forking)
            if reason is not None:
                raise PolicyViolation(pname, t, reason)
            if caps.forking:
                h = next(iter(nodes))
                if h in nodes_of:
                    raise PolicyViolation(pname, t, copies_error(job, h, nodes_of[h], c))
                nodes_of[h] = c
            if len(ps) > 1:
                copies[c] = _merged(job, c, ps)
        gangs[i] = dict(sorted(copies.items()))
    return dict(sorted(gangs.items()))


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

