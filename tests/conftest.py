"""Shared pytest fixtures and the Hypothesis profiles.

Profiles: ``default`` (25 derandomized examples, the normal run) and ``long`` (500
examples); choose with ``OPTSCHED_HYPOTHESIS_PROFILE=long``.
"""

import os

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None, max_examples=25, derandomize=True,
                          database=None)
settings.register_profile("long", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("OPTSCHED_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(params=["highs", "pyomo", "cvxpy"])
def backend(request):
    """Each solver backend in turn (skipped where it is not installed)."""
    from optsched.solvers import available_backends

    if not available_backends()[request.param]:
        pytest.skip(f"backend {request.param} not available")
    return request.param
