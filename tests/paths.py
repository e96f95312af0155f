"""Where the checkout's folders are, for tests at any depth of the test tree."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
PACKAGE = REPO / "optsched"
BENCHMARKS = REPO / "benchmarks"
