"""``python -m optsched.cli``: the ``optsched`` command."""

import sys

from . import main

sys.exit(main())
