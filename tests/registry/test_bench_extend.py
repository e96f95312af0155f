"""The benchmarks take methods and policies of your own by name: benchmarks/allox.py
(``--methods``: exact vs every heuristic, the ratio table) and the simulation
benchmarks (``--policies``: benchmarks/simulate_gavel.py, philly_scale.py) resolve
names through the registry, so module:name and plugin names run there as shipped ones."""

from __future__ import annotations

import importlib.util

import pytest
from paths import BENCHMARKS


def _bench(name, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts import benchmarks/common
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_allox_benchmark_rates_a_method_of_your_own(own_code, monkeypatch):
    bench = _bench("allox", monkeypatch)
    rows = bench.run([(8, 2)], [0], ilp_max=0, methods=["ownsched:ect"])
    (row,) = rows
    assert row["ownsched:ect_ratio"] >= 1 - 1e-9  # the exact matching is optimal
    assert row["ownsched:ect_ratio"] < 10 and row["ownsched:ect_s"] >= 0


def test_simulation_benchmark_runs_a_policy_of_your_own(plugin_dist, monkeypatch):
    bench = _bench("simulate_gavel", monkeypatch)
    rows = bench.run(12, ["ownsched:SRGT", "plug.fifo", "fifo"], seed=0)
    assert [r["policy"] for r in rows] == ["ownsched:SRGT", "plug.fifo", "fifo"]
    assert all(r["completed"] == 12 for r in rows)
    # shortest remaining GPU time first does not lose to FIFO on mean JCT here
    assert rows[0]["mean_jct_h"] <= rows[2]["mean_jct_h"] * (1 + 1e-9)


def test_benchmark_refuses_a_bad_reference(own_code, monkeypatch):
    from optsched.errors import UnknownName

    bench = _bench("simulate_gavel", monkeypatch)
    with pytest.raises(UnknownName, match="no module"):
        bench.run(4, ["nosuchmod:SRGT"], seed=0)
