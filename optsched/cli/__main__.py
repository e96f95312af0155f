"""``python -m optsched.cli``: the ``optsched`` command."""

from optsched.cli import run

run()
