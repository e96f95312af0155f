"""Gang placement shared by the large-neighbourhood search's constructive starts
(:class:`optsched.sim.lns.FastestSrpt`, :mod:`optsched.sim.lns_lp_start`)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["place_most_room"]


def place_most_room(state: Any, left: np.ndarray, jid: str, k: int, w: int) -> list:
    """``w`` GPUs of type ``k`` for job ``jid``: its nodes of the previous round if they
    are all of type ``k`` and still fit, else the nodes with most room of ``left``
    first (``left[h, k]`` decreased in place). The caller checked that ``w`` fit."""
    from optsched.core.schedule import Placement

    types = state.gpu_types
    before = state.previous_by_job.get(jid, [])
    out = []
    if before and all(q.gpu_type == types[k] for q in before) and all(
            left[state.cluster.node_index(q.node), k] >= q.gpus for q in before):
        for q in before:
            left[state.cluster.node_index(q.node), k] -= q.gpus
            out.append(Placement(jid, q.node, types[k], q.gpus))
        return out
    nodes = state.cluster.nodes
    need = w
    for h in np.argsort(-left[:, k], kind="stable").tolist():
        if left[h, k] <= 0 or need == 0:
            break
        g = int(min(left[h, k], need))
        left[h, k] -= g
        need -= g
        out.append(Placement(jid, nodes[h].name, types[k], g))
    return out
