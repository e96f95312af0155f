"""Online scheduling policies for :func:`optsched.sim.simulate`.

* :mod:`.gavel` - Gavel's LP policies (max-min fairness aware/agnostic, makespan,
  finish-time fairness, max-sum-throughput, min cost with SLOs) and FIFO, with the round
  mechanism; the LPs themselves are in :mod:`.gavel_lp`.
* :mod:`.tiresias` - Tiresias 2D-LAS and 2D-Gittins (discretised queues, starvation
  promotion) and the baselines FIFO (YARN-CS-like), SRTF and 1D-LAS.

``get_policy(name, **options)`` builds any registered policy; :data:`POLICIES` lists them.
"""

from . import gavel, tiresias  # noqa: F401  (register their policies)
from .base import PLACEMENT_MODES, POLICIES, get_policy, place_gang, register_policy

__all__ = ["POLICIES", "PLACEMENT_MODES", "get_policy", "place_gang", "register_policy"]
