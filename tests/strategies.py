"""What the property tests share: example counts that scale with the Hypothesis
profile, and (see the papers' test modules) the strategies that build instances."""

from __future__ import annotations

from hypothesis import settings

#: ``max_examples`` of the default profile (tests/conftest.py); a test's own count ``n``
#: is scaled by the active profile's ``max_examples`` over this.
BASE_EXAMPLES = 50


def examples(n: int) -> int:
    """``n`` examples under the default profile, scaled with the active one: ``10 n`` under
    ``long`` (500 / 50), and in proportion under any profile a user registers and loads
    (never fewer than 1). Every per-test count is written this way
    (tests/test_structure.py checks it)."""
    return max(1, round(n * settings.default.max_examples / BASE_EXAMPLES))
