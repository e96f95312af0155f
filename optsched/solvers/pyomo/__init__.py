"""The Pyomo backend (see :mod:`optsched.solvers` for the conventions)."""

from optsched.solvers.pyomo.backend import solve, to_pyomo

__all__ = ["solve", "to_pyomo"]
