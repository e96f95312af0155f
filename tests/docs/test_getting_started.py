"""docs/getting-started.md's install lines follow pyproject.toml: one line per extra, and
the test extra's comment names every tool it installs (directly, or as part of another
extra it names)."""

from __future__ import annotations

import re
import tomllib

from paths import DOCS, REPO

PAGE = DOCS / "getting-started.md"


def _extras() -> dict[str, set[str]]:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    return {name: {re.split(r"[\[<>=!~ ;]", req, maxsplit=1)[0].lower() for req in reqs}
            for name, reqs in extras.items()}


def _install_lines() -> dict[str, str]:
    """extra -> the comment of its install line (and of the comment lines under it)."""
    block = PAGE.read_text().split("## Install", 1)[1].split("```bash\n", 1)[1]
    block = block.split("```", 1)[0]
    out: dict[str, str] = {}
    last = None
    for line in block.splitlines():
        m = re.match(r'python3 -m pip install "\.\[(\w+)\]"\s*#(.*)', line)
        if m:
            last = m.group(1)
            out[last] = m.group(2)
        elif line.strip().startswith("#") and last is not None:
            out[last] += " " + line.strip().lstrip("#")
    return out


def test_every_extra_has_its_install_line():
    assert set(_install_lines()) == set(_extras())


def test_each_comment_names_what_its_extra_installs():
    extras, lines = _extras(), _install_lines()
    for extra, tools in extras.items():
        words = set(re.findall(r"[\w.\-\[\]]+", lines[extra].lower().replace(",", " ")))
        for tool in tools:
            named = tool in words or f"{tool}[distributed]" in words or any(
                tool in extras[other] for other in extras if other != extra and other in words)
            assert named, f"the '.[{extra}]' line does not name {tool}: {lines[extra]!r}"
