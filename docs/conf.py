"""Sphinx configuration of the optsched documentation site.

Build it (from the repository root) with::

    python3 -m pip install ".[docs]"
    python3 -m sphinx -W --keep-going -b html docs docs/_build/html

Pages are Markdown (MyST); the API reference is generated from the docstrings by
autodoc. ``tests/test_docs_build.py`` runs the same build with warnings as errors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
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
    "sphinx.ext.mathjax",
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

html_theme = "furo"
html_title = f"optsched {release}"
html_static_path: list[str] = []


# Section titles in docstrings are NumPy-style (a title line, then a line of dashes).
# docutils warns when the dashes are shorter than the title, which under -W would fail
# the build over a cosmetic slip; lengthen such underlines before docutils sees them.
# Every other docstring problem still fails the build.
_UNDERLINE = set("-=~^")


def _fit_underlines(app, what, name, obj, options, lines):
    for i in range(1, len(lines)):
        line, title = lines[i].rstrip(), lines[i - 1].rstrip()
        if (len(line) >= 3 and len(set(line)) == 1 and line[0] in _UNDERLINE
                and title.strip() and set(title.strip()) - _UNDERLINE
                and (i == 1 or not lines[i - 2].strip()) and len(line) < len(title)):
            lines[i] = line[0] * len(title)


def setup(app):
    app.connect("autodoc-process-docstring", _fit_underlines)
