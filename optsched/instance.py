"""Moved to :mod:`optsched.core.instance`; this path re-exports it for one release."""

from optsched.core.instance import *  # noqa: F401,F403
from optsched.core.instance import __all__  # noqa: F401
