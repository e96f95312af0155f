"""benchmarks/README.md indexes every benchmark script and sweep config, and every result
file it names exists: the index cannot fall behind the folder."""

from __future__ import annotations

import re

from paths import BENCHMARKS

RESULTS = BENCHMARKS / "results"


def _rows() -> dict[str, list[str]]:
    """The index's table rows by their first cell (a script or config name)."""
    rows = {}
    for line in (BENCHMARKS / "README.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([\w.]+\.(?:py|toml))`", cells[0]) if line.startswith("|") else None
        if m:
            rows[m.group(1)] = cells
    return rows


def test_every_script_and_config_has_a_row():
    rows = _rows()
    files = sorted(p.name for p in (*BENCHMARKS.glob("*.py"), *BENCHMARKS.glob("*.toml")))
    assert files, "no benchmark scripts found"
    missing = [f for f in files if f not in rows]
    assert not missing, f"benchmarks/README.md has no row for {missing}"
    gone = sorted(set(rows) - set(files))
    assert not gone, f"benchmarks/README.md indexes scripts that do not exist: {gone}"
    for name, cells in rows.items():
        assert len(cells) == 4 and all(cells), f"{name}: row needs 4 filled cells: {cells}"


def test_every_named_result_exists_and_every_result_is_named():
    rows = _rows()
    named: set[str] = set()
    for name, cells in rows.items():
        for ref in re.findall(r"`([^`]+)`", cells[2]):
            if ref.endswith((".py", ".toml")) or "*" in ref or ref.startswith("-"):
                continue  # a script it reads, a family of pictures, an option
            ref = ref.rstrip("/")
            candidates = [RESULTS / ref, RESULTS / f"{ref}.json", RESULTS / f"{ref}.md"]
            assert any(p.exists() for p in candidates), (
                f"{name}: result {ref!r} is not in benchmarks/results")
            named.add(ref.removesuffix(".json").removesuffix(".md"))
    stems = {p.stem for p in RESULTS.iterdir() if p.suffix in (".json", ".md")}
    folders = {p.name for p in RESULTS.iterdir() if p.is_dir() and p.name != "img"}
    unindexed = sorted((stems | folders) - named)
    assert not unindexed, f"benchmarks/results holds files no row names: {unindexed}"
