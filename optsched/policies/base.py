"""Policy registry and the placement helpers shared by the online policies.

Policies register a factory under a name in :data:`POLICIES`;
:func:`get_policy` builds one (``get_policy("max_min_fairness", backend="cvxpy")``).

Placement (node choice for a gang of W GPUs of one type k), used by Gavel's round
mechanism (Alg. 1: "consolidate onto the same server" when possible) and by Tiresias
(consolidated vs spread placement, NSDI'19 §4):

1. *lease extension*: the job's previous placement on type k, if all of it is free;
2. *best fit*: the single node with the fewest free GPUs of type k that still fits W;
3. otherwise the fewest nodes: nodes in decreasing free count (ties by node order).
   With ``mode="consolidated"`` step 3 is accepted only if it uses no more nodes than
   ``ceil(W / largest node size of type k)`` (the gang is as packed as the cluster
   allows); with ``mode="spread"`` any number of nodes is accepted.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidOption, UnknownName
from ..sim.policy import ClusterView, Placement, Policy

__all__ = ["POLICIES", "register_policy", "get_policy", "place_gang", "PLACEMENT_MODES"]

POLICIES: dict[str, Callable[..., Policy]] = {}
PLACEMENT_MODES = ("consolidated", "spread")


def register_policy(name: str, factory: Callable[..., Policy]) -> None:
    """Register ``factory(**options) -> Policy`` under ``name``."""
    POLICIES[name] = factory


def get_policy(name: str, **options: Any) -> Policy:
    """Build the policy registered as ``name`` with ``options``."""
    if name not in POLICIES:
        close = difflib.get_close_matches(str(name), list(POLICIES), n=3)
        hint = f"; did you mean {close}?" if close else ""
        raise UnknownName("policy", name, f"unknown policy; known: {sorted(POLICIES)}{hint}")
    return POLICIES[name](**options)


def place_gang(view: ClusterView, free: np.ndarray, job_id: str, workers: int, k: int,
               mode: str = "spread") -> list[Placement] | None:
    """Choose nodes for ``workers`` GPUs of type index ``k``; update ``free`` in place.

    Returns the placements, or ``None`` (``free`` untouched) when the gang does not fit
    under ``mode`` (see module docstring).
    """
    if mode not in PLACEMENT_MODES:
        raise InvalidOption("placement", mode, f"must be one of {PLACEMENT_MODES}")
    col = free[:, k]
    if col.sum() < workers:
        return None
    nodes = view.cluster.nodes
    tname = view.gpu_types[k]
    prev = [p for p in view.previous_by_job.get(job_id, ()) if p.gpu_type == tname]
    if prev and sum(p.gpus for p in prev) == workers:
        hs = [(view.cluster.node_index(p.node), p.gpus) for p in prev]
        if all(col[h] >= g for h, g in hs):
            return _take(free, k, hs, nodes, job_id, tname)
    fits = np.flatnonzero(col >= workers)
    if fits.size:
        h = int(fits[np.argmin(col[fits])])
        return _take(free, k, [(h, workers)], nodes, job_id, tname)
    order = np.lexsort((np.arange(col.size), -col))
    hs: list[tuple[int, int]] = []
    need = workers
    for h in order:
        if need == 0 or col[h] <= 0:
            break
        g = int(min(col[h], need))
        hs.append((int(h), g))
        need -= g
    if mode == "consolidated":
        biggest = int(view.capacity[:, k].max())
        if len(hs) > math.ceil(workers / max(biggest, 1)):
            return None
    return _take(free, k, hs, nodes, job_id, tname)


def _take(free: np.ndarray, k: int, hs: Sequence[tuple[int, int]], nodes, job_id: str,
          tname: str) -> list[Placement]:
    out = []
    for h, g in hs:
        free[h, k] -= g
        out.append(Placement(job_id, nodes[h].name, tname, int(g)))
    return out
