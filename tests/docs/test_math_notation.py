"""Scheduling problems in Graham's three-field notation (``R || sum C_j``,
``R | r_j | sum C_j``) render with their two bars on the site.

A bar inside a Markdown table must be written ``\\|`` (the table would split the cell at
a bare ``|``), and the table parser turns it back into ``|`` before the maths is read;
outside a table ``\\|`` is TeX's double bar (the norm's ``‖``), one symbol where the
notation has two. The pages are parsed with the site's own MyST configuration and every
formula of the notation is rendered to MathML as the site renders it
(docs/_ext/mathml.py).
"""

from __future__ import annotations

import re

import pytest
from paths import DOCS

pytest.importorskip("myst_parser")
latex2mathml = pytest.importorskip("latex2mathml.converter")

from markdown_it.renderer import RendererHTML  # noqa: E402
from myst_parser.config.main import MdParserConfig  # noqa: E402
from myst_parser.parsers.mdit import create_md_parser  # noqa: E402

# a machine environment (1, P, Q, R, Pm, ...) then a bar: the start of the notation
NOTATION = re.compile(r"^\s*(1|[PQR]m?)\s*(\\[,;:! ])*\s*(\\\||\|)")
BAR, DOUBLE_BAR = "&#x0007C;", "&#x02016;"


def _formulas(page):
    config = MdParserConfig(enable_extensions={"dollarmath", "amsmath", "colon_fence",
                                               "deflist"})
    tokens = create_md_parser(config, RendererHTML).parse(page.read_text())

    def walk(ts):
        for t in ts:
            yield t
            yield from walk(t.children or [])

    for t in walk(tokens):
        is_role = t.type == "myst_role" and t.meta.get("name") == "math"
        if t.type in ("math_inline", "math_block") or is_role:
            yield t.content


def _notations():
    for page in sorted(DOCS.glob("*.md")):
        for tex in _formulas(page):
            if NOTATION.match(tex):
                yield page.name, tex


def test_the_pages_use_the_notation():
    assert {"allox.md", "concepts.md"} <= {page for page, _ in _notations()}


@pytest.mark.parametrize("page,tex", list(_notations()))
def test_three_field_notation_has_two_bars(page, tex):
    mathml = latex2mathml.convert(tex.strip())
    assert DOUBLE_BAR not in mathml, f"{page}: {tex!r} renders a double bar (write two |)"
    assert mathml.count(BAR) == 2, f"{page}: {tex!r} renders {mathml.count(BAR)} bar(s)"
