"""The cvxpy backend (see :mod:`optsched.solvers` for the conventions)."""

from optsched.solvers.cvxpy.backend import solve, to_cvxpy

__all__ = ["solve", "to_cvxpy"]
