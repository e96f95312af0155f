r"""The rules a placement, a gang and a node's capacity obey: written once, applied by
the validator (:mod:`optsched.core.validate`, over a whole schedule) and by the
simulator (:mod:`optsched.sim.decisions`, on each decision before it runs).

Each rule returns ``None`` when it holds and otherwise the reason, which the caller
raises with its own context (:class:`~optsched.errors.InvalidSchedule` naming the
allocation; :class:`~optsched.sim.policy.PolicyViolation` naming the policy and time).

* **Placement** (one job, one node and GPU type): the node has GPUs of the type, the job
  can run on it (throughput > 0), a positive integer GPU count, CPU cores and DRAM finite
  and :math:`\ge 0`, a share in :math:`(0, 1]` and below 1 only where sharing is
  declared, a copy id other than 0 only where forking is declared.
* **Partner** (co-location, :mod:`optsched.core.colocation`): a placement naming a
  partner needs co-location to be declared, names another known job, and the instance
  has a positive co-located rate of the job with that partner on the type.
* **Gang** (the placements of one job and copy active together): without forking
  exactly ``workers`` GPUs (1..``workers`` under the ``"partial"`` progress rule); with
  forking 1..``workers`` GPUs on one node, and no two copies of a job on one node.
* **Capacity**: per node and GPU type the GPUs held (weighted by share when sharing) do
  not exceed the node's count (tolerance :data:`GPU_TOL`); per node CPU cores and DRAM
  do not exceed the node's (relative tolerance :data:`RESOURCE_TOL`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

__all__ = ["GPU_TOL", "RESOURCE_TOL", "placement_error", "partner_error", "gang_error",
           "copies_error", "gpu_overload", "resource_overload", "PAIR_AMOUNT"]

#: The GPUs one allocation of a co-located pair counts for, per GPU it holds: the two
#: allocations of the pair hold the same GPUs, which count once.
PAIR_AMOUNT = 0.5

#: Absolute tolerance on GPUs held (shares add up in floating point).
GPU_TOL = 1e-9
#: Relative (and absolute) tolerance on CPU cores and DRAM.
RESOURCE_TOL = 1e-9


def _bad_count(g: Any) -> bool:
    return isinstance(g, bool) or not isinstance(g, int) or g < 1


def placement_error(job: str, node: str, gpu_type: str, node_gpus: int, rate: float,
                    gpus: Any, cpus: float, memory: float, copy: Any, share: float, *,
                    sharing: bool, forking: bool) -> str | None:
    """The first placement rule broken (see the module docstring), or ``None``.

    ``node_gpus`` is the node's count of ``gpu_type``; ``rate`` the job's per-worker
    throughput on it.
    """
    if node_gpus <= 0:
        return f"node {node!r} has no GPU of type {gpu_type!r}"
    if _bad_count(gpus):
        return f"job {job!r}: gpus must be a positive integer, got {gpus!r}"
    if not rate > 0:
        return f"job {job!r} cannot run on {gpu_type!r}"
    if not (math.isfinite(cpus) and math.isfinite(memory)) or cpus < 0 or memory < 0:
        return f"job {job!r}: cpus and memory must be finite numbers >= 0"
    if not (0 < share <= 1) or (share < 1 and not sharing):
        return (f"job {job!r}: share {share!r} must be in (0, 1], and below 1 only where "
                "sharing is declared")
    if isinstance(copy, bool) or not isinstance(copy, int):
        return f"job {job!r}: copy must be an integer, got {copy!r}"
    if copy != 0 and not forking:
        return f"job {job!r}: copy {copy} (other than 0) needs forking to be declared"
    return None


def partner_error(job: str, partner: Any, gpu_type: str, known: bool,
                  pair_rate: float | None, *, colocation: bool) -> str | None:
    """The partner rule (module docstring) for a placement of ``job`` naming
    ``partner`` (not ``None``) on ``gpu_type``: ``known`` says whether the partner is a
    job of the instance, ``pair_rate`` is the instance's co-located per-worker rate of
    ``job`` with it there (``None``: not measured)."""
    if not colocation:
        return (f"job {job!r}: partner {partner!r} (GPUs shared with another job) needs "
                "co-location to be declared")
    if not isinstance(partner, str) or not known:
        return f"job {job!r}: unknown partner job {partner!r}"
    if partner == job:
        return f"job {job!r}: a job cannot be its own partner"
    if pair_rate is None:
        return (f"job {job!r}: the instance has no co-located rate with job {partner!r} on "
                f"{gpu_type!r} (needs a co-location entry for their keys and equal gangs)")
    if not pair_rate > 0:
        return f"job {job!r} cannot run co-located with job {partner!r} on {gpu_type!r}"
    return None


def gang_error(job: str, workers: int, copy: int, gpus: int, nodes: Iterable[str], *,
               forking: bool, progress_rule: str = "gang") -> str | None:
    """The gang rule for one (job, copy) holding ``gpus`` GPUs on ``nodes`` at once
    (``progress_rule`` ``"partial"``: 1..workers GPUs without forking; see
    :mod:`optsched.core.progress`)."""
    if forking:
        nodes = sorted(set(nodes))
        if len(nodes) != 1 or not 1 <= gpus <= workers:
            return (f"job {job!r} copy {copy}: a copy must hold 1..{workers} GPUs on one "
                    f"node, holds {gpus} on {nodes}")
        return None
    if progress_rule == "partial":
        if not 1 <= gpus <= workers:
            return (f"job {job!r}: a gang must hold 1..{workers} GPUs (progress rule "
                    f"partial), holds {gpus}")
        return None
    if gpus != workers:
        return f"job {job!r}: gang of {workers} GPUs required, holds {gpus}"
    return None


def copies_error(job: str, node: str, first: int, second: int) -> str:
    """The reason when two copies of a job share a node (always a violation)."""
    return f"job {job!r}: copies {first} and {second} share node {node!r}"


def gpu_overload(used: float, capacity: float) -> bool:
    """More GPUs held than the node has of the type (shares weighted)."""
    return used > capacity + GPU_TOL


def resource_overload(used: float, capacity: float) -> bool:
    """More CPU cores or DRAM held than the node has."""
    return used > capacity * (1 + RESOURCE_TOL) + RESOURCE_TOL
