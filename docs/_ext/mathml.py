"""Render TeX maths to MathML when the site is built, so pages need no script and no
network to show formulas (browsers render MathML natively).

Registered as the HTML math renderer ``mathml`` (``html_math_renderer = "mathml"`` in
conf.py). A formula latex2mathml cannot convert stops the build, naming it: with
``sphinx -W`` nothing is shown as raw TeX.
"""

from __future__ import annotations

from typing import Any

import latex2mathml.converter
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError


def _convert(latex: str, display: str) -> str:
    try:
        return latex2mathml.converter.convert(latex.strip(), display=display)
    except Exception as exc:  # the converter raises a variety of its own errors
        raise ExtensionError(f"cannot render math {latex.strip()[:80]!r}: {exc}") from exc


def visit_math(self: Any, node: nodes.math) -> None:
    self.body.append(_convert(node.astext(), "inline"))
    raise nodes.SkipNode


def visit_math_block(self: Any, node: nodes.math_block) -> None:
    latex = node.astext()
    if node.get("nowrap"):
        latex = latex.strip()
    self.body.append(f'<div class="math-block">{_convert(latex, "block")}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
