"""Moved to :mod:`optsched.core.validate`; this path re-exports it for one release."""

from optsched.core.validate import *  # noqa: F401,F403
from optsched.core.validate import __all__  # noqa: F401
