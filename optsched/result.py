"""Moved to :mod:`optsched.core.result`; this path re-exports it for one release."""

from optsched.core.result import *  # noqa: F401,F403
from optsched.core.result import __all__  # noqa: F401
