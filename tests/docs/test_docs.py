"""Every ```python block of every page in docs/ runs, in order, one namespace per page."""

from __future__ import annotations

import re
import sys

import pytest
from paths import DOCS
from registry_state import registry_kept

BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)


def test_docs_have_code():
    assert PAGES, "docs/ has no pages"
    assert any(BLOCK.search(p.read_text()) for p in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_code_runs(page, tmp_path, monkeypatch):
    blocks = BLOCK.findall(page.read_text())
    if not blocks:
        pytest.skip("no code on this page")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.syspath_prepend(str(tmp_path))  # modules a page writes import from here
    ns: dict = {"__name__": f"docs_{page.stem}"}
    before = set(sys.modules)
    with registry_kept():  # what a page registers stays on its page
        for i, code in enumerate(blocks):
            try:
                exec(compile(code, f"{page.name}[block {i}]", "exec"), ns)
            except Exception as exc:  # pragma: no cover - the message is the point
                raise AssertionError(f"{page.name} block {i} failed: {exc!r}") from exc
    for mod in set(sys.modules) - before:  # a page's own modules are forgotten
        if getattr(sys.modules[mod], "__file__", None) and \
                str(tmp_path) in str(sys.modules[mod].__file__):
            del sys.modules[mod]
