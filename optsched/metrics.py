"""Moved to :mod:`optsched.core.metrics`; this path re-exports it for one release."""

from optsched.core.metrics import *  # noqa: F401,F403
from optsched.core.metrics import __all__  # noqa: F401
