"""The highspy backend (see :mod:`optsched.solvers` for the conventions)."""

from optsched.solvers.highs.backend import solve, to_highs_lp, write

__all__ = ["solve", "to_highs_lp", "write"]
