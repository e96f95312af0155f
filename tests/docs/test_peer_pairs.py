"""benchmarks/results/peer_pairs is the table of the committed peer results: regenerated
from them it is the committed file (so it cannot fall behind a re-measured pair), and its
rows carry the figures of the rows they come from."""

from __future__ import annotations

import json
import sys

import pytest
from paths import BENCHMARKS


@pytest.fixture(scope="module")
def pairs():
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    import peer_pairs

    return peer_pairs


def test_the_committed_table_is_the_committed_results(pairs):
    committed = json.loads((BENCHMARKS / "results/peer_pairs.json").read_text())["rows"]
    assert pairs.table() == committed, "run python benchmarks/peer_pairs.py"


def test_rows_carry_their_sources_figures(pairs):
    rows = pairs.table()
    source = json.loads((BENCHMARKS / "results/tiresias_peer.json").read_text())["rows"]
    want = next(r for r in source if r["instance"] == "philly240_r2"
                and r["optsched"] == "tiresias.gittins_original")
    got = [r for r in rows if r["original"] == "Tiresias" and r["input"] == "philly240_r2"
           and r["optsched"] == "tiresias.gittins_original"]
    assert len(got) == 1
    k, n = map(int, want["within_round"].split("/"))
    assert got[0]["within_one_round"] == k / n
    assert got[0]["mean_ratio"] == want["mean_ratio"]
    assert got[0]["meets_95"] is (k / n >= 0.95)
    # Gavel's rounds files: the round mechanism becomes the option it stands for
    interior = [r for r in rows if r["original"] == "Gavel"
                and r["optsched"] == "gavel.max_min_fairness rounds=original, point=interior"
                and r["input"] == "first 100"]
    assert len(interior) == 1 and interior[0]["within_one_round"] == pytest.approx(0.52)
    # a pair several files record is one row naming them all
    assert any("," in r["files"] for r in rows)


def test_a_stale_table_is_told(pairs, tmp_path, monkeypatch):
    rows = pairs.table()
    rows[0] = {**rows[0], "mean_ratio": rows[0]["mean_ratio"] + 1.0}
    monkeypatch.setattr(pairs, "table", lambda: rows)
    monkeypatch.setattr(sys, "argv", ["peer_pairs.py", "--check"])
    assert pairs.main() == 1
