"""Moved to :mod:`optsched.registry` (one registry for methods and policies); this path
re-exports the policy functions for one release. ``run_policy(name, instance)`` is
:func:`optsched.simulate` (``simulate(instance, name)``)."""

from __future__ import annotations

from typing import Any

from optsched.core.instance import Instance
from optsched.core.result import Result
from optsched.registry import get_policy, policy_spec, simulate, simulation_names

__all__ = ["get_policy", "policy_spec", "run_policy", "simulation_names"]


def run_policy(name: str, instance: Instance, **options: Any) -> Result:
    """:func:`optsched.simulate` with the policy name first (the earlier signature)."""
    return simulate(instance, name, **options)
