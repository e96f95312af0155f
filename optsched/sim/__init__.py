"""The round-based cluster simulator every online policy runs in.

>>> from optsched.sim import simulate
>>> from optsched.policies import get_policy
>>> result = simulate(instance, get_policy("max_min_fairness"))   # doctest: +SKIP

See :mod:`optsched.sim.core` for the mechanics and :mod:`optsched.sim.policy` for what a
policy sees (:class:`ClusterView`) and returns (:class:`Placement`).
"""

from optsched.sim.core import SimStats, simulate
from optsched.sim.policy import ClusterView, JobView, Placement, Policy, PolicyViolation

__all__ = ["simulate", "SimStats", "ClusterView", "JobView", "Placement", "Policy",
           "PolicyViolation"]
