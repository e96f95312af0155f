"""The documentation site builds with warnings as errors, and the CLI reference is complete.

The build is the documented command (``python3 -m sphinx -W --keep-going -b html docs
OUT``) into a temporary directory. It needs the ``docs`` tools, which the ``test`` extra
installs; without them the build test is skipped and says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys

import pytest
from paths import DOCS

from optsched.cli import build_parser

MISSING = [m for m in ("sphinx", "myst_parser", "furo") if importlib.util.find_spec(m) is None]


@pytest.mark.slow
@pytest.mark.skipif(bool(MISSING), reason=f"docs tools not installed ({', '.join(MISSING)}): "
                    "pip install '.[docs]' (or '.[test]', which includes them)")
def test_site_builds_without_warnings(tmp_path):
    out = tmp_path / "html"
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, f"sphinx failed:\n{proc.stderr[-5000:]}"
    for page in ("index", "concepts", "cli", "api", "reproduce", "sweeps", "allox"):
        assert (out / f"{page}.html").exists(), page
    api = (out / "api.html").read_text()
    for name in ("optsched.solve", "optsched.studies.sweep.run_sweep",
                 "optsched.studies.reproduce.run_reproduction", "optsched.allox.exact.exact"):
        assert f'id="{name}"' in api, name                     # autodoc found it
    index = (out / "index.html").read_text()
    for page in sorted(p.stem for p in DOCS.glob("*.md")):
        assert f'href="{page}.html' in index or page == "index", f"{page} not in the toctree"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no sub-commands")


def test_cli_reference_lists_every_command_and_option():
    text = (DOCS / "cli.md").read_text()
    headings = set(re.findall(r"^## optsched (\S+)", text, re.M))
    commands = _subcommands()
    assert headings == set(commands), (
        f"docs/cli.md sections {sorted(headings)} != sub-commands {sorted(commands)}")
    for name, parser in commands.items():
        section = text.split(f"## optsched {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in parser._actions:
            for opt in action.option_strings:
                if opt.startswith("--") and opt != "--help":
                    assert opt in section, f"docs/cli.md: 'optsched {name}' lacks {opt}"


def test_every_page_has_a_title_and_pictures_exist():
    for page in DOCS.glob("*.md"):
        text = page.read_text()
        assert text.startswith("# "), page.name
        for img in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
            assert (DOCS / img).exists(), f"{page.name}: missing picture {img}"
