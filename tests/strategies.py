"""What the property tests share: example counts that scale with the Hypothesis
profile, and (see the papers' test modules) the strategies that build instances."""

from __future__ import annotations

import os

#: Factor on per-test example counts: 10 under the ``long`` profile (tests/conftest.py).
SCALE = 10 if os.environ.get("OPTSCHED_HYPOTHESIS_PROFILE") == "long" else 1


def examples(n: int) -> int:
    """``n`` examples in the default run, ``10 n`` in the long one."""
    return n * SCALE
