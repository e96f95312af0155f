"""Online scheduling policies for :func:`optsched.sim.simulate`.

* :mod:`.gavel` - Gavel's LP policies (max-min fairness aware/agnostic, makespan,
  finish-time fairness, max-sum-throughput, min cost with SLOs) and FIFO, with the round
  mechanism; the LPs themselves are in :mod:`.gavel_lp`.
* :mod:`.tiresias` - Tiresias 2D-LAS and 2D-Gittins (discretised queues, starvation
  promotion) and the baselines FIFO (YARN-CS-like), SRTF and 1D-LAS.

``get_policy(name, **options)`` builds any registered policy; :data:`POLICIES` lists them.
Model packages register *runners* for policies built from the instance (Hadar, HadarE,
Synergy, Salus); :func:`run_policy` simulates either kind by name.
"""

from optsched.policies import gavel, tiresias  # noqa: F401  (register their policies)
from optsched.policies.base import (
    PLACEMENT_MODES,
    POLICIES,
    RUNNERS,
    PolicySpec,
    get_policy,
    place_gang,
    policy_spec,
    register_policy,
    register_runner,
    run_policy,
    simulation_names,
)

__all__ = ["POLICIES", "RUNNERS", "PLACEMENT_MODES", "PolicySpec", "get_policy", "place_gang",
           "policy_spec", "register_policy", "register_runner", "run_policy",
           "simulation_names"]
