r"""Where a gang goes: the node choice shared by the simulator policies.

Placement (node choice for a gang of W GPUs of one type k), used by Gavel's round
mechanism (Alg. 1: "consolidate onto the same server" when possible) and by Tiresias
(consolidated vs spread placement, NSDI'19 §4):

1. *lease extension*: the job's previous placement on type k, if all of it is free;
2. *best fit*: the single node with the fewest free GPUs of type k that still fits W;
3. otherwise the fewest nodes: nodes in decreasing free count (ties by node order).
   With ``mode="consolidated"`` step 3 is accepted only if it uses no more nodes than
   ``ceil(W / largest node size of type k)`` (the gang is as packed as the cluster
   allows); with ``mode="spread"`` any number of nodes is accepted.

``mode="yarn"`` is the rule of Tiresias' YARN-CS baseline (its simulator's ``ms_yarn``
placement) instead of steps 2-3, first fit in node order: a gang no larger than the
largest node takes the first node with W free GPUs; a larger one takes whole *idle*
nodes in node order (each no larger than what is still needed) and the rest on the first
other node with enough free GPUs. With nodes of G GPUs that is Tiresias' rule,
:math:`\lfloor W/G \rfloor` idle nodes plus one node with :math:`W \bmod G` free; on an
idle cluster that has W GPUs of the type it always finds a placement. The original also
keeps a gang inside one network switch; the cluster model has no switches, so that
constraint is absent.

``mode="random"`` and ``mode="crandom"`` are the simulator's random placements (its
``random`` and ``crandom`` schemes), drawing from ``ClusterView.rng``, after step 1:

* ``random``: each of the W workers independently: a node index drawn uniformly from all
  nodes, then the first node from there on (cyclically) with a free GPU of type k;
* ``crandom`` (consolidate, random nodes): the gang is cut into :math:`\lfloor W/G
  \rfloor` pieces of G GPUs and one of :math:`W \bmod G` (G the largest node size of
  type k); for each piece in turn, a uniform node index, then the first node from there
  on with at least the piece's free GPUs. When a piece finds none, the GPUs still
  needed are spread instead: from a new uniform node index, every node in turn gives as
  many as it has free, until none are needed (a single GPU left that no node holds
  fails the gang).

The original also charges CPU cores to workers and parameter servers (2 per worker, 4 per
server in ``random``); nodes here are assumed to have the cores, so only GPUs decide.

:func:`check_single_type_gangs` is the applicability check of the policies that run a
gang on one GPU type.
"""

from __future__ import annotations

import math

import numpy as np

from optsched.core.schedule import Placement
from optsched.errors import InvalidOption, ModelNotApplicable
from optsched.sim.policy import ClusterView

__all__ = ["PLACEMENT_MODES", "place_gang", "choose_nodes", "check_single_type_gangs"]

PLACEMENT_MODES = ("consolidated", "spread", "yarn", "random", "crandom")


def check_single_type_gangs(instance, policy: str) -> None:
    """Raise :class:`ModelNotApplicable` for a job whose gang fits no single GPU type.

    Gavel's allocation (:math:`X_{mk}`: job m on :math:`W_m` GPUs of type k) and
    Tiresias' placement run a gang on one type; an instance may hold a job that only
    fits across types, which such a policy would never start.
    """
    per_type = instance.cluster.gpus_per_type
    for i, j in enumerate(instance.jobs):
        pool = max((per_type.get(t, 0) for t, r in j.throughput.items() if r > 0), default=0)
        if j.workers > pool:
            raise ModelNotApplicable(
                f"jobs[{i}].workers", j.workers,
                f"policy {policy!r} runs a gang on one GPU type, and the largest pool of one "
                f"type job {j.id!r} can use has {pool} GPUs")


def place_gang(view: ClusterView, free: np.ndarray, job_id: str, workers: int, k: int,
               mode: str = "spread", *, fresh: bool = False) -> list[Placement] | None:
    """Choose nodes for ``workers`` GPUs of type index ``k``; update ``free`` in place.

    Returns the placements, or ``None`` (``free`` untouched) when the gang does not fit
    under ``mode`` (see module docstring). ``fresh=True`` says the job holds nothing in
    the previous decision (step 1 is then not looked up).
    """
    if mode not in PLACEMENT_MODES:
        raise InvalidOption("placement", mode, f"must be one of {PLACEMENT_MODES}")
    col = free[:, k].tolist()
    hs = choose_nodes(view, col, job_id, workers, k, mode, fresh=fresh)
    if hs is None:
        return None
    nodes = view.cluster.nodes
    tname = view.gpu_types[k]
    out = []
    for h, g in hs:
        free[h, k] -= g
        out.append(Placement(job_id, nodes[h].name, tname, g))
    return out


def choose_nodes(view: ClusterView, col: list[int], job_id: str, workers: int, k: int,
                 mode: str = "spread", *, fresh: bool = False
                 ) -> list[tuple[int, int]] | None:
    """The node choice of :func:`place_gang` on a plain list ``col`` of free GPUs of type
    ``k`` per node (integers; updated in place); returns ``[(node index, gpus), ...]`` or
    ``None``."""
    kept = None if fresh else _keep_previous(view, col, job_id, workers, k)
    if kept is not None:
        return kept
    if sum(col) < workers:
        return None
    if mode == "yarn":
        return _yarn(view, col, workers, k)
    if mode == "random":
        return _random(view, col, workers)
    if mode == "crandom":
        return _crandom(view, col, workers, k)
    return _best_fit(view, col, workers, k, mode)


def _keep_previous(view: ClusterView, col: list[int], job_id: str, workers: int, k: int
                   ) -> list[tuple[int, int]] | None:
    """The job's previous GPUs when they are of type ``k``, as many as ``workers`` and
    all still free (taken from ``col``); else ``None``."""
    prev = view.previous_by_job.get(job_id)
    if not prev:
        return None
    tname = view.gpu_types[k]
    if not (all(p.gpu_type == tname for p in prev) and sum(p.gpus for p in prev) == workers):
        return None
    node_index = view.cluster.node_index
    hs = [(node_index(p.node), p.gpus) for p in prev]
    if not all(col[h] >= g for h, g in hs):
        return None
    for h, g in hs:
        col[h] -= g
    return hs


def _best_fit(view: ClusterView, col: list[int], workers: int, k: int, mode: str
              ) -> list[tuple[int, int]] | None:
    """``spread`` / ``consolidated``: the first node holding the fewest free GPUs that
    still fit the gang, else the fullest nodes first (``consolidated``: only on as few
    nodes as the gang needs); ``col`` holds at least ``workers`` free GPUs."""
    # looking for each count from ``workers`` up: list scans run in C
    top = max(col)
    for f in range(workers, top + 1):
        if f in col:
            best = col.index(f)
            col[best] -= workers
            return [(best, workers)]
    order = sorted(range(len(col)), key=lambda h: -col[h])
    hs = []
    need = workers
    for h in order:
        if need == 0 or col[h] <= 0:
            break
        g = min(col[h], need)
        hs.append((h, g))
        need -= g
    if mode == "consolidated":
        biggest = int(view.capacity[:, k].max())
        if len(hs) > math.ceil(workers / max(biggest, 1)):
            return None
    for h, g in hs:
        col[h] -= g
    return hs


def _yarn(view: ClusterView, col: list[int], workers: int, k: int) -> list[tuple[int, int]] | None:
    """First-fit MS-YARN placement (module docstring); updates ``col`` when it fits."""
    cap = view.capacity[:, k].tolist()  # int64: plain ints
    top = max(cap)
    if workers <= top:
        # the first node with at least ``workers`` free: the least index among the
        # first occurrences of each count that fits (list scans run in C)
        first = [col.index(f) for f in range(workers, top + 1) if f in col]
        if not first:
            return None
        h = min(first)
        col[h] -= workers
        return [(h, workers)]
    hs, need = [], workers
    for h, f in enumerate(col):
        if 0 < cap[h] <= need and f == cap[h]:  # whole idle nodes, in node order
            hs.append((h, f))
            need -= f
    if need:
        taken = {h for h, _ in hs}
        last = next((h for h, f in enumerate(col) if h not in taken and f >= need), None)
        if last is None:
            return None
        hs.append((last, need))
    for h, g in hs:
        col[h] -= g
    return hs


def _random(view: ClusterView, col: list[int], workers: int) -> list[tuple[int, int]]:
    """Each worker on the first node with a free GPU from a uniform start (module
    docstring); ``col`` holds at least ``workers`` free GPUs, so every worker finds one."""
    n = len(col)
    got: dict[int, int] = {}
    for _ in range(workers):
        start = int(view.rng.integers(n))
        h = next(h for h in ((start + i) % n for i in range(n)) if col[h] > 0)
        col[h] -= 1
        got[h] = got.get(h, 0) + 1
    return list(got.items())


def _crandom(view: ClusterView, col: list[int], workers: int, k: int
             ) -> list[tuple[int, int]] | None:
    """Whole-node pieces on random nodes, else spread from a random node (module
    docstring); updates ``col`` only when the gang fits."""
    n = len(col)
    size = max(int(view.capacity[:, k].max()), 1)
    pieces = [size] * (workers // size) + ([workers % size] if workers % size else [])
    work = list(col)
    got: dict[int, int] = {}
    for p, need in enumerate(pieces):
        start = int(view.rng.integers(n))
        h = next((h for h in ((start + i) % n for i in range(n)) if work[h] >= need), None)
        if h is None:
            left = sum(pieces[p:])
            if left == 1:
                return None
            start = int(view.rng.integers(n))
            for h in ((start + i) % n for i in range(n)):
                g = min(work[h], left)
                if g > 0:
                    work[h] -= g
                    got[h] = got.get(h, 0) + g
                    left -= g
                if left == 0:
                    break
            if left:
                return None
            break
        work[h] -= need
        got[h] = got.get(h, 0) + need
    col[:] = work
    return list(got.items())
