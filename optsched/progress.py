"""Moved to :mod:`optsched.core.progress`; this path re-exports it for one release."""

from optsched.core.progress import *  # noqa: F401,F403
from optsched.core.progress import __all__  # noqa: F401
