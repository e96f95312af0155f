"""The round-based cluster simulator every online policy runs in.

>>> from optsched.sim import simulate
>>> from optsched.registry import get_policy
>>> result = simulate(instance, get_policy("max_min_fairness"))   # doctest: +SKIP

See :mod:`optsched.sim.simulator` for the mechanics and :mod:`optsched.sim.policy` for what a
policy sees (:class:`ClusterView`) and returns (:class:`Placement`).
"""

from optsched.core.schedule import Placement
from optsched.sim.policy import ClusterView, JobView, Policy, PolicyViolation
from optsched.sim.simulator import SimStats, simulate

__all__ = ["simulate", "SimStats", "ClusterView", "JobView", "Placement", "Policy",
           "PolicyViolation"]
