r"""HadarE (and Hadar) executed with the simulator's semantics, in HadarE's own round loop.

The core simulator (:mod:`optsched.sim.core`) cannot express forked copies, so HadarE is
not a :class:`optsched.sim.Policy`; :func:`simulate_hadare` runs the same mechanics in
:func:`optsched.hadare.online.run_rounds` (round boundaries every ``instance.slot``
seconds, a job finishing inside a round completes at that instant and its GPUs idle until
the next boundary, the schedule validated by :func:`optsched.registry.finalize`), so its
metrics compare directly with ``optsched.sim.simulate`` runs of the Gavel policies.

What the core simulator would need to run HadarE as a policy (none of it changed here):

1. ``Placement`` with a ``copy`` field (default 0), and the recorded ``Allocation`` keeping
   it (today the simulator writes ``copy=0``);
2. the decision check per (job, copy): 1..``workers`` GPUs on one node (and, for this
   model, of one type), copies of a job on distinct nodes -- instead of "each gang exactly
   ``workers`` wide";
3. additive progress: a job's rate is the sum of its copies' rates
   (:math:`\sum_c g_c \min_{k \in c} \tau_k`) instead of one gang's
   :math:`W_j \min_k \tau_k`;
4. a consolidation delay: a job whose work is done completes ``consolidation`` seconds
   later and holds no GPU meanwhile; the recorded ``Schedule`` declares
   ``forking=True, consolidation=...``;
5. in ``ClusterView``, each job's current copies (node, type, GPUs) in ``previous``.

Hadar itself (gangs) is expressible in the core simulator; ``forking=False`` here replays
Hadar's plans with identical semantics so HadarE and Hadar differ only by the forking.
"""

from __future__ import annotations

from typing import Any

from ..hadar.model import build_model
from ..hadar.online import DEFAULT_QUANTA, run_online
from ..instance import Instance
from ..result import Result
from .online import online

__all__ = ["simulate_hadare", "simulate_pair"]


def simulate_hadare(instance: Instance, *, forking: bool = True, **options: Any) -> Result:
    """HadarE (``forking=True``) or Hadar (``forking=False``) with exact completion
    instants (``completion="exact"``); ``objective`` is the mean JCT of completed jobs,
    as :func:`optsched.sim.simulate` reports. Other options as
    :func:`optsched.hadare.online.online`."""
    options.setdefault("completion", "exact")
    res = online(instance, forking=forking, **options)
    m = res.metrics
    return res.replace(model="simulate", method="hadare" if forking else "hadar",
                       objective=m.mean_jct if m is not None else None,
                       extra={**res.extra, "utility": res.objective})


def simulate_pair(instance: Instance, *, slots: int | None = None,
                  quanta: int = DEFAULT_QUANTA, U: Any = None, L: float | None = None,
                  **options: Any) -> tuple[Result, Result]:
    """``(HadarE, Hadar)`` as :func:`simulate_hadare` would give them, sharing one pass of
    Hadar's admission (identical by construction; half the work on long traces)."""
    model = build_model(instance, slots)
    hr = run_online(model, quanta=quanta, U=U, L=L)
    return (simulate_hadare(instance, forking=True, hadar_run=hr, **options),
            simulate_hadare(instance, forking=False, hadar_run=hr, **options))
