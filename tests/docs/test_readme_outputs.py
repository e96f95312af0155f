"""What the README's commands write in the folder they are run from is neither
committed nor left for ``git add`` to pick up: every output path is ignored by git."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess

import pytest
from paths import REPO

BASH = re.compile(r"```bash\n(.*?)```", re.S)


def readme_outputs() -> set[str]:
    """Paths the README's commands write: ``--out X``, ``> X`` and the defaults of
    ``optsched reproduce`` (``reproduction``) and ``optsched sweep C.toml`` (``sweep-C``)."""
    out: set[str] = set()
    for block in BASH.findall((REPO / "README.md").read_text()):
        for line in block.splitlines():
            words = shlex.split(line.split("#", 1)[0])
            if words[:1] != ["optsched"]:
                continue
            for k, w in enumerate(words[:-1]):
                if w in ("--out", ">"):
                    out.add(words[k + 1])
            if "--out" not in words and words[1:2] == ["reproduce"]:
                out.add("reproduction")
            if "--out" not in words and words[1:2] == ["sweep"]:
                out.add("sweep-" + words[2].rsplit("/", 1)[-1].removesuffix(".toml"))
    return out


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def git_checkout():
    if shutil.which("git") is None or _git("rev-parse", "--is-inside-work-tree").returncode:
        pytest.skip("not a git checkout")


def test_readme_names_its_outputs():
    assert {"my_instance.json", "result.json", "sim.json", "figures", "philly.json",
            "instance.schema.json", "reproduction"} <= readme_outputs()


@pytest.mark.parametrize("path", sorted(readme_outputs()))
def test_readme_output_is_not_committed_and_is_ignored(git_checkout, path):
    tracked = _git("ls-files", "--", path).stdout.split()
    assert not tracked, f"committed outputs of the README's commands: {tracked}"
    probe = path if path.endswith(".json") else f"{path}/any.png"
    assert _git("check-ignore", "-q", "--no-index", probe).returncode == 0, \
        f"{path} is not in .gitignore"
