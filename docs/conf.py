"""Sphinx configuration of the optsched documentation site.

Build it (from the repository root) with::

    python3 -m pip install ".[docs]"
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

Pages are Markdown (MyST); the API reference is generated from the docstrings by
autodoc. ``tests/docs/test_docs_build.py`` runs the same build with warnings as errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import optsched  # noqa: E402

project = "optsched"
author = "optsched developers"
copyright = "optsched developers, MIT licence"
version = release = optsched.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "mathml",
    "sphinx.ext.viewcode",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# MyST: $...$ and $$...$$ maths as in the tutorials, ::: fences, heading anchors for
# links such as [text](concepts.md#bounds-and-certificates).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# API reference: members in source order, type hints in the description, NumPy-style
# sections (Parameters, Returns) rendered by napoleon.
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# every exact, bound and heuristic states its guarantee and complexity in these sections
napoleon_custom_sections = ["Guarantee", "Complexity"]

# formulas become MathML at build time (docs/_ext/mathml.py): no script, no network
html_math_renderer = "mathml"

html_theme = "furo"
html_title = f"optsched {release}"
html_static_path: list[str] = []
