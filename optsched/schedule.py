"""Moved to :mod:`optsched.core.schedule`; this path re-exports it for one release."""

from optsched.core.schedule import *  # noqa: F401,F403
from optsched.core.schedule import __all__  # noqa: F401
