"""Tests of the workload catalog (optsched.catalog and the shipped optsched.catalog_data)."""

from __future__ import annotations

import collections
import csv
import importlib.resources
import io
import json
import tomllib

import numpy as np
import pytest
from paths import REPO

from optsched import catalog
from optsched.catalog import (
    PRESETS,
    cluster_preset,
    generate_philly,
    generate_single_worker,
    job_from_profile,
    profile,
    profiles,
    read_gavel_trace,
    read_tiresias_trace,
    salus_published,
    salus_workloads,
    synergy_profiles,
    tiresias_gpu_time_samples,
)
from optsched.core.instance import Cluster, Instance, Node, Sensitivity
from optsched.errors import InvalidInstance, InvalidOption, UnknownName

ROOT = REPO


def _shipped(name: str) -> str:
    return (importlib.resources.files("optsched.catalog_data") / name).read_text()


# --------------------------------------------------------------------------- packaging
def test_data_files_are_found_through_importlib_resources():
    names = {p.name for p in importlib.resources.files("optsched.catalog_data").iterdir()}
    expected = {
        "__init__.py", "README.md", "LICENSES", "gavel_throughputs.json",
        "gavel_philly_2000.trace", "gavel_artifact_15.trace", "synergy_profiles.json",
        "salus_workloads.csv", "salus_published.json", "tiresias_60_job.csv",
        "tiresias_yarn-gput1000.csv", "tiresias_n32g4.csv", "tiresias_n256g8.csv",
    }
    assert expected <= names
    licenses = {p.name for p in (importlib.resources.files("optsched.catalog_data")
                                 / "LICENSES").iterdir()}
    assert {"gavel-MIT.txt", "synergy-MIT.txt", "salus-Apache-2.0.txt",
            "tiresias-Apache-2.0.txt"} <= licenses
    assert catalog.data_files().joinpath("gavel_throughputs.json").is_file()


@pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")
def test_every_subpackage_is_packaged():
    """pyproject lists packages explicitly (models/ ships as optsched.catalog_data)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    assert config["package-dir"]["optsched.catalog_data"] == "models"
    assert "optsched.catalog_data" in listed
    found = set()
    for d in [ROOT / "optsched", *(ROOT / "optsched").rglob("*")]:
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")):
            found.add(".".join(d.relative_to(ROOT).parts))
    missing = sorted(found - listed)
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"


# --------------------------------------------------------------------------- presets
@pytest.mark.parametrize("name, total, per_type", [
    ("gavel-108", 108, {"k80": 36, "p100": 36, "v100": 36}),
    ("gavel-physical", 48, {"k80": 24, "p100": 16, "v100": 8}),
    ("synergy-128", 128, {"v100": 128}),
    ("synergy-512", 512, {"v100": 512}),
    ("tiresias-n32g4", 128, {"p100": 128}),
    ("tiresias-n256g8", 2048, {"p100": 2048}),
])
def test_presets_have_the_papers_gpu_totals(name, total, per_type):
    c = cluster_preset(name)
    assert isinstance(c, Cluster)
    assert c.total_gpus == total
    assert c.gpus_per_type == per_type
    for node in c.nodes:
        for t in node.gpus:
            assert node.gpu_memory[t] == catalog.GPU_MEMORY_GB[t]


def test_every_preset_is_listed_and_builds():
    assert len(PRESETS) == 6
    for name in PRESETS:
        assert cluster_preset(name).total_gpus > 0


def test_preset_node_shapes():
    gavel = cluster_preset("gavel-108")
    assert len(gavel.nodes) == 27
    assert all(n.total_gpus == 4 and len(n.gpus) == 1 for n in gavel.nodes)
    assert len(cluster_preset("gavel-physical").nodes) == 12
    syn = cluster_preset("synergy-512")
    assert len(syn.nodes) == 64
    assert all((n.gpus["v100"], n.cpus, n.memory) == (8, 24, 500) for n in syn.nodes)
    tir = cluster_preset("tiresias-n32g4")
    assert len(tir.nodes) == 32
    assert all((n.gpus["p100"], n.cpus, n.memory) == (4, 40, 256) for n in tir.nodes)
    assert len(cluster_preset("tiresias-n256g8").nodes) == 256


def test_unknown_preset_raises_unknown_name_with_suggestion():
    with pytest.raises(UnknownName) as exc:
        cluster_preset("gavel108")
    assert "gavel-108" in str(exc.value)
    assert exc.value.path == "preset"
    with pytest.raises(KeyError):
        cluster_preset("nope")


# --------------------------------------------------------------------------- Gavel table
def test_gavel_table_has_26_job_types_and_scale_factors_1_2_4_8():
    table = profiles()
    assert len(table) == 26
    assert set().union(*(p.scale_factors for p in table.values())) == {1, 2, 4, 8}
    counts = collections.Counter(sf for p in table.values() for sf in p.scale_factors)
    assert counts == {1: 26, 2: 19, 4: 19, 8: 19}
    assert {p.family for p in table.values()} == {
        "ResNet-18", "ResNet-50", "Transformer", "LM", "Recommendation", "A3C", "CycleGAN"}
    assert len(profiles("physical")) == 26


def test_resnet50_bs64_isolated_example_values():
    p = profile("ResNet-50 (batch size 64)")
    assert p.family == "ResNet-50" and p.batch_size == 64
    assert p.throughput[1]["v100"] == pytest.approx(4.40, abs=0.01)
    assert p.throughput[1]["p100"] == pytest.approx(2.62, abs=0.01)
    assert p.throughput[1]["k80"] == pytest.approx(0.62, abs=0.01)


def test_throughput_is_per_worker_job_throughput_divided_by_workers():
    raw = json.loads(_shipped("gavel_throughputs.json"))
    job_tp = raw["tables"]["simulation"]["job_types"]["ResNet-50 (batch size 64)"]
    p = profile("ResNet-50 (batch size 64)")
    for sf in (1, 2, 4, 8):
        for t in ("k80", "p100", "v100"):
            measured = job_tp["consolidated"][str(sf)][t]
            assert p.throughput[sf][t] == pytest.approx(measured / sf)
            assert p.job_throughput(sf, t) == pytest.approx(measured)
    assert p.job_throughput(2, "v100") == pytest.approx(7.922, abs=1e-3)


def test_zero_and_missing_measurements_are_zero():
    p = profile("ResNet-50 (batch size 128)")
    assert p.throughput[2]["k80"] == 0.0  # Gavel measured 0 (cannot run)
    assert p.throughput_unconsolidated[2]["k80"] == 0.0  # not measured
    assert p.throughput[2]["v100"] > 0
    assert profile("A3C").scale_factors == (1,)


def test_physical_table_differs_from_simulation():
    sim = profile("ResNet-50 (batch size 64)", "simulation").throughput[1]["k80"]
    phys = profile("ResNet-50 (batch size 64)", "physical").throughput[1]["k80"]
    assert sim == pytest.approx(0.619, abs=1e-3)
    assert phys == pytest.approx(0.746, abs=1e-3)
    with pytest.raises(UnknownName):
        profiles("simulated")


def test_profiles_are_immutable():
    p = profile("A3C")
    with pytest.raises(TypeError):
        p.throughput[1]["v100"] = 1.0  # type: ignore[index]
    with pytest.raises(AttributeError):
        p.name = "x"  # type: ignore[misc]


def test_unknown_profile_lists_close_matches():
    with pytest.raises(UnknownName) as exc:
        profile("ResNet-50 (batch size 65)")
    assert exc.value.path == "profile"
    assert "ResNet-50 (batch size 64)" in str(exc.value)


def test_extrapolation_beyond_measured_workers():
    p = profile("ResNet-18 (batch size 16)")
    with pytest.raises(InvalidInstance):
        p.per_worker(16)
    assert p.per_worker(16, extrapolate=True) == p.throughput[8]
    assert p.per_worker(7, extrapolate=True) == p.throughput[4]
    assert profile("A3C").per_worker(4, extrapolate=True) == profile("A3C").throughput[1]


# --------------------------------------------------------------------------- job_from_profile
def test_job_from_profile_duration_gives_exact_runtime_on_reference_type():
    job = job_from_profile("Transformer (batch size 64)", "a", 10.0, 4, duration=3600.0)
    p = profile("Transformer (batch size 64)")
    assert job.work == pytest.approx(3600.0 * p.job_throughput(4, "v100"))
    assert job.work / (job.workers * job.rate("v100")) == pytest.approx(3600.0)
    assert job.profile == p.name and job.arrival == 10.0
    assert set(job.throughput) == {"k80", "p100", "v100"}


def test_job_from_profile_options():
    job = job_from_profile("LM (batch size 20)", "b", 0, 1, work=500, gpu_types=["v100", "x"],
                           weight=2, user="alice")
    assert dict(job.throughput) == {"v100": profile("LM (batch size 20)").throughput[1]["v100"]}
    assert (job.work, job.weight, job.user) == (500, 2, "alice")
    with pytest.raises(InvalidOption):
        job_from_profile("A3C", "c", 0, 1)
    with pytest.raises(InvalidOption):
        job_from_profile("A3C", "c", 0, 1, work=1, duration=1)
    with pytest.raises(InvalidInstance):
        job_from_profile("A3C", "c", 0, 2, work=1)  # A3C is measured with 1 worker only
    with pytest.raises(UnknownName):
        job_from_profile("A3D", "c", 0, 1, work=1)
    with pytest.raises(InvalidInstance):
        job_from_profile("ResNet-50 (batch size 128)", "c", 0, 2, duration=10,
                         reference_type="k80")
    assert job_from_profile("A3C", "c", 0, 2, work=1, extrapolate=True).workers == 2


# --------------------------------------------------------------------------- Gavel traces
def test_philly_2000_trace_reads_into_a_valid_instance():
    inst = read_gavel_trace()
    assert inst.n_jobs == 2000
    assert inst.slot == 360.0
    assert inst.cluster.total_gpus == 108
    lines = _shipped("gavel_philly_2000.trace").splitlines()
    for i in (0, 1, 1999):
        f = lines[i].split("\t")
        job = inst.job(str(i))
        assert job.profile == f[0]
        assert job.work == float(f[4])
        assert job.arrival == float(f[5])
        assert job.workers == int(f[6])
    assert inst.job("1").workers == 8 and inst.job("1").work == 779751
    # round-trips through the validated JSON form
    assert Instance.from_dict(inst.to_dict()).n_jobs == 2000


def test_philly_trace_unmeasured_scale_factors_need_extrapolation():
    inst = read_gavel_trace()
    assert max(inst.workers) == 32
    with pytest.raises(InvalidInstance) as exc:
        read_gavel_trace(extrapolate=False)
    assert "line 2" in str(exc.value)  # Recommendation (batch size 8192) with 8 workers


def test_artifact_trace_reads_with_both_tables_and_clusters():
    path = importlib.resources.files("optsched.catalog_data") / "gavel_artifact_15.trace"
    with importlib.resources.as_file(path) as p:
        inst = read_gavel_trace(p, cluster="gavel-physical", throughputs="physical")
        default = read_gavel_trace(p)
    assert inst.n_jobs == default.n_jobs == 15
    first = inst.job("0")
    assert first.profile == "ResNet-50 (batch size 64)"
    assert (first.work, first.workers, first.weight, first.arrival) == (2931, 1, 1.0, 0.0)
    assert first.rate("k80") == pytest.approx(
        profile("ResNet-50 (batch size 64)", "physical").throughput[1]["k80"])
    assert inst.job("1").workers == 2


def test_trace_on_a_cluster_restricts_gpu_types(tmp_path):
    cluster = Cluster((Node("a", {"v100": 8}), Node("b", {"v100": 8})))
    path = tmp_path / "artifact.trace"
    path.write_text(_shipped("gavel_artifact_15.trace"))
    inst = read_gavel_trace(path, cluster=cluster)
    assert all(set(j.throughput) == {"v100"} for j in inst.jobs)


GOOD7 = "A3C\tcmd\t--max-steps\t0\t8857\t0.000000\t1"
GOOD10 = "A3C\tcmd\trl\t--max-steps\t0\t8857\t1\t2\t-1.000000\t5"


def test_trace_layouts_and_weights(tmp_path):
    p = tmp_path / "ten.trace"
    p.write_text(GOOD10 + "\n" + GOOD10 + "\n\n")
    inst = read_gavel_trace(p)
    assert inst.n_jobs == 2
    assert inst.jobs[0].weight == 2.0 and inst.jobs[0].arrival == 5.0
    p.write_text(GOOD7 + "\n")
    assert read_gavel_trace(p).jobs[0].weight == 1.0


@pytest.mark.parametrize("bad_line, lineno, fragment", [
    ("A3C\tcmd\t--max-steps\t0\t8857\t0.0", 2, "found 6"),
    ("A3C\tcmd\t--max-steps\t0\tmany\t0.0\t1", 2, "'many'"),
    ("A3C\tcmd\t--max-steps\t0\t8857\t0.0\t1.5", 2, "scale_factor"),
    ("A3C\tcmd\t--max-steps\t0\t8857\t-3\t1", 2, "arrival_time"),
    ("A3C\tcmd\t--max-steps\t0\t0\t0.0\t1", 2, "total_steps"),
    ("A3X\tcmd\t--max-steps\t0\t10\t0.0\t1", 2, "did you mean 'A3C'"),
    (GOOD10, 2, "like line 1"),
])
def test_malformed_trace_lines_name_the_line(tmp_path, bad_line, lineno, fragment):
    p = tmp_path / "bad.trace"
    p.write_text(GOOD7 + "\n" + bad_line + "\n" + GOOD7 + "\n")
    with pytest.raises(InvalidInstance) as exc:
        read_gavel_trace(p)
    msg = str(exc.value)
    assert f"bad.trace:line {lineno}" in msg
    assert fragment in msg


def test_trace_first_line_with_wrong_column_count(tmp_path):
    p = tmp_path / "bad.trace"
    p.write_text("just one column\n")
    with pytest.raises(InvalidInstance, match="line 1.*7 .*or 10"):
        read_gavel_trace(p)


def test_missing_trace_file(tmp_path):
    with pytest.raises(InvalidInstance, match="cannot read"):
        read_gavel_trace(tmp_path / "none.trace")


# --------------------------------------------------------------------------- Tiresias
def test_tiresias_60_job_trace():
    inst = read_tiresias_trace()
    assert inst.n_jobs == 60
    assert inst.cluster.total_gpus == 128
    assert collections.Counter(inst.workers.tolist()) == {1: 30, 2: 10, 4: 10, 8: 10}
    rows = list(csv.DictReader(io.StringIO(_shipped("tiresias_60_job.csv"))))
    for row in rows:
        job = inst.job(row["job_id"])
        assert set(job.throughput) == {"p100"}
        assert job.arrival == float(row["submit_time"])
        assert job.work == float(row["iterations"])
        assert job.profile == row["model_name"]
        runtime = job.work / (job.workers * job.rate("p100"))
        assert runtime == pytest.approx(float(row["duration"]), rel=1e-12)
        assert job.min_duration() == pytest.approx(float(row["duration"]), rel=1e-12)


def test_tiresias_on_other_clusters():
    inst = read_tiresias_trace(cluster="gavel-108")
    assert all(set(j.throughput) == {"k80", "p100", "v100"} for j in inst.jobs)
    one = read_tiresias_trace(cluster="gavel-108", gpu_type="v100")
    assert all(set(j.throughput) == {"v100"} for j in one.jobs)
    with pytest.raises(UnknownName):
        read_tiresias_trace(gpu_type="v100")  # tiresias-n32g4 has only p100


def test_tiresias_malformed(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("job_id,num_gpu,submit_time,model_name,duration\n0,1,0,vgg,10\n")
    with pytest.raises(InvalidInstance, match="line 1.*iterations"):
        read_tiresias_trace(p)
    p.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                 "0,1,0,10,vgg,10,0\n1,two,5,10,vgg,10,5\n")
    with pytest.raises(InvalidInstance, match=r"t\.csv:line 3\.num_gpu.*'two'"):
        read_tiresias_trace(p)
    p.write_text("job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
                 "0,1,0,10,vgg,0,0\n")
    with pytest.raises(InvalidInstance, match="line 2.duration"):
        read_tiresias_trace(p)


def test_tiresias_gpu_time_samples():
    s = tiresias_gpu_time_samples()
    assert s.shape == (1001,)
    assert (s > 0).all()
    assert np.median(s) == pytest.approx(2227.0)
    assert s.max() == pytest.approx(53294624.0)


# --------------------------------------------------------------------------- Synergy, Salus
def test_synergy_profiles():
    table = synergy_profiles()
    assert len(table) == 33
    res18 = table["res18_1"]
    assert isinstance(res18.sensitivity, Sensitivity)
    assert (res18.model, res18.gpus, res18.iter_time, res18.speedup) == ("res18", 1, 0.64, 2.4)
    assert res18.sensitivity.best_cpu == 9 and res18.sensitivity.best_memory == 62.5
    assert res18.sensitivity.cpu_grid == (1, 2, 3, 4, 5, 6, 9, 12, 24)
    assert res18.sensitivity.memory_grid == (20.83, 62.5, 125, 187.5, 250)
    assert table["m5_2"].sensitivity.memory_grid == (62.5, 125, 187.5, 250)
    for p in table.values():
        m = p.sensitivity.matrix
        c = p.sensitivity.cpu_grid.index(3.0)
        mm = p.sensitivity.memory_grid.index(62.5)
        assert m[c, mm] == pytest.approx(1.0)  # GPU-proportional share is the unit
        if p.gpus <= 8:  # shufflenet_12 spans two servers: Synergy keeps it at speedup 1
            assert m.max() == pytest.approx(p.speedup)
    assert table["shufflenet_12"].gpus == 12 and table["shufflenet_12"].speedup == 1.0


def test_salus():
    runs = salus_workloads()
    assert len(runs) == 99
    first = runs[0]
    assert (first.name, first.model, first.batch_size, first.variant) == (
        "vgg11_25_1min", "vgg11", 25, "1min")
    assert (first.jct_s, first.peak_mem_mb, first.iterations) == (67.059, 3709.6, 565)
    assert salus_published() == {"VAE": 28.0, "Super Resolution": 529.0,
                                 "Deep Speech": 3993.0, "Inception4": 11355.0}


# --------------------------------------------------------------------------- generator
def test_generator_is_deterministic_for_a_seed():
    a = generate_philly(200, seed=3, jobs_per_hour=10)
    b = generate_philly(200, seed=3, jobs_per_hour=10)
    c = generate_philly(200, seed=4, jobs_per_hour=10)
    assert a.to_dict() == b.to_dict()
    assert a.to_dict()["jobs"] != c.to_dict()["jobs"]
    # the arrival stream is separate: another rate changes only the arrivals
    d = generate_philly(200, seed=3, jobs_per_hour=20)
    strip = [{k: v for k, v in j.items() if k != "arrival"} for j in a.to_dict()["jobs"]]
    assert strip == [{k: v for k, v in j.items() if k != "arrival"}
                     for j in d.to_dict()["jobs"]]


def _durations(inst: Instance) -> np.ndarray:
    return np.array([j.work / (j.workers * j.rate("v100")) for j in inst.jobs])


def test_generator_matches_gavel_distributions():
    inst = generate_philly(5000, seed=0)
    assert inst.n_jobs == 5000 and inst.slot == 360.0
    counts = collections.Counter(inst.workers.tolist())
    for w, p in {1: 0.70, 2: 0.10, 4: 0.15, 8: 0.05}.items():
        assert counts[w] / 5000 == pytest.approx(p, abs=0.02)
    d = _durations(inst)
    assert d.min() >= 60 * 10 ** 1.5 - 1e-6 and d.max() <= 60 * 10 ** 4 + 1e-6
    assert (d > 60 * 10 ** 3).mean() == pytest.approx(0.2, abs=0.025)
    assert (inst.arrivals == 0).all()
    table = profiles()
    for j in inst.jobs:
        assert j.workers in table[j.profile].throughput  # only measured scale factors
    assert len({j.profile for j in inst.jobs}) == 26


def test_generator_poisson_arrivals():
    inst = generate_philly(3000, seed=5, jobs_per_hour=12)
    arr = inst.arrivals
    assert arr[0] == 0 and (np.diff(arr) >= 0).all()
    assert np.diff(arr).mean() == pytest.approx(300.0, rel=0.06)


def test_generator_options():
    single = generate_single_worker(300, "gavel-physical", seed=1)
    assert (single.workers == 1).all() and single.cluster.total_gpus == 48
    capped = generate_philly(300, seed=1, max_workers=2)
    assert set(capped.workers.tolist()) == {1, 2}
    only = generate_philly(100, seed=2, profiles=["A3C", "ResNet-18 (batch size 32)"])
    assert {j.profile for j in only.jobs} <= {"A3C", "ResNet-18 (batch size 32)"}
    assert all(j.profile == "ResNet-18 (batch size 32)" for j in only.jobs if j.workers > 1)
    syn = generate_philly(50, "synergy-128", seed=0)
    assert all(set(j.throughput) == {"v100"} for j in syn.jobs)
    assert generate_philly(0).n_jobs == 0
    with pytest.raises(UnknownName):
        generate_philly(5, profiles=["ResNet-51 (batch size 64)"])
    with pytest.raises(UnknownName):
        generate_philly(5, cluster="gavel-109")
    with pytest.raises(InvalidOption):
        generate_philly(5, jobs_per_hour=0)
    with pytest.raises(InvalidOption):
        generate_philly(-1)


def test_generator_redraws_oversize_worker_counts_with_a_warning():
    small = Cluster((Node("n0", {"v100": 4}),))
    with pytest.warns(UserWarning, match=r"\[8\]"):
        inst = generate_philly(500, small, seed=0)
    assert inst.n_jobs == 500
    assert max(inst.workers) == 4
    # a K80-only cluster cannot host ResNet-50 (batch size 128) with 2+ workers
    k80 = Cluster((Node("k", {"k80": 8}),))
    with pytest.warns(UserWarning, match=r"\[2, 4, 8\]"):
        inst = generate_philly(400, k80, seed=0,
                               profiles=["ResNet-50 (batch size 128)", "A3C"])
    assert all(j.workers == 1 for j in inst.jobs)


# --------------------------------------------------------------------------- Philly
PHILLY_CSV = """timestamp,duration,num_gpus,gpu_time,cluster
2017-10-02 00:00:10,100.0,1,100.0,aa
2017-10-01 00:00:00,50.0,8,400.0,bb
2017-10-03 12:00:00,30.0,2,60.0,aa
"""


def test_philly_shipped_trace_is_the_full_production_trace():
    inst = catalog.read_philly_trace()
    assert inst.n_jobs == 82247 and inst.cluster.total_gpus == 2048
    assert inst.arrivals.min() == 0.0
    assert np.all(np.diff(inst.arrivals) >= 0)  # sorted by submission
    assert max(j.workers for j in inst.jobs) == 128
    # homogeneous: a job alone with its gang runs for its recorded duration
    rows = list(csv.DictReader(io.StringIO((REPO / "models/philly_jobs.csv").read_text())))
    for j in inst.jobs[:50]:
        row = rows[int(j.id.removeprefix("philly-"))]
        assert j.workers == int(row["num_gpus"])
        assert j.work / (j.workers * j.rate("p100")) == pytest.approx(float(row["duration"]))
    assert catalog.shipped_trace("philly").n_jobs == inst.n_jobs


def test_philly_reader_selection_load_and_throughputs(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(PHILLY_CSV)
    inst = catalog.read_philly_trace(path, cluster="gavel-108")
    # sorted by submit time, ids are file rows, arrivals relative to the first
    assert [j.id for j in inst.jobs] == ["philly-1", "philly-0", "philly-2"]
    assert inst.arrivals.tolist() == [0.0, 86410.0, 86400.0 * 2.5]
    assert [j.user for j in inst.jobs] == ["bb", "aa", "aa"]
    j = inst.jobs[0]  # homogeneous: duration x GPUs at rate 1 per worker, every type
    assert j.work == 400.0 and dict(j.throughput) == dict.fromkeys(inst.cluster.gpu_types, 1.0)
    assert catalog.read_philly_trace(path, vc="aa").n_jobs == 2
    assert catalog.read_philly_trace(path, start="2017-10-02", end="2017-10-03").n_jobs == 1
    assert catalog.read_philly_trace(path, jobs=2).n_jobs == 2
    fast = catalog.read_philly_trace(path, load=2.0)
    assert fast.arrivals.tolist() == [a / 2 for a in inst.arrivals.tolist()]
    g1 = catalog.read_philly_trace(path, cluster="gavel-108", throughputs="gavel", seed=3)
    g2 = catalog.read_philly_trace(path, cluster="gavel-108", throughputs="gavel", seed=3)
    assert [j.profile for j in g1.jobs] == [j.profile for j in g2.jobs]
    for job, dur in zip(g1.jobs, (50.0, 100.0, 30.0)):  # alone on V100 it takes `duration`
        assert job.work / (job.workers * job.rate("v100")) == pytest.approx(dur)


@pytest.mark.parametrize("kw, exc, field", [
    (dict(throughputs="real"), UnknownName, "throughputs"),
    (dict(load=0), InvalidOption, "load"),
    (dict(jobs=0), InvalidOption, "jobs"),
    (dict(start=5), InvalidOption, "start"),
    (dict(start="yesterday"), InvalidInstance, "start"),
    (dict(vc="zz"), InvalidInstance, "p.csv"),
])
def test_philly_reader_rejects_bad_options(tmp_path, kw, exc, field):
    path = tmp_path / "p.csv"
    path.write_text(PHILLY_CSV)
    with pytest.raises(exc) as err:
        catalog.read_philly_trace(path, **kw)
    assert field in str(err.value)


@pytest.mark.parametrize("text, where", [
    ("timestamp,duration,num_gpus,cluster\n", "missing column"),
    (PHILLY_CSV.replace("100.0,1,", "-1,1,"), "line 2.duration"),
    (PHILLY_CSV.replace(",8,", ",1.5,"), "line 3.num_gpus"),
    (PHILLY_CSV.replace("2017-10-02 00:00:10", "10/02/2017"), "line 2.timestamp"),
])
def test_philly_reader_names_the_bad_field(tmp_path, text, where):
    path = tmp_path / "p.csv"
    path.write_text(text)
    with pytest.raises(InvalidInstance) as err:
        catalog.read_philly_trace(path)
    assert where in str(err.value)


def test_read_trace_by_name_or_file_with_prefix_and_load(tmp_path):
    full = catalog.shipped_trace("tiresias-60")
    got = catalog.read_trace("tiresias-60", jobs=10, load=4.0)
    assert [j.id for j in got.jobs] == [j.id for j in full.jobs[:10]]
    np.testing.assert_allclose(got.arrivals, full.arrivals[:10] / 4.0)
    assert got.name == "tiresias-60-first10-load4"
    philly = catalog.read_trace("philly", jobs=5, load=2.0)
    assert philly.n_jobs == 5 and philly.cluster.total_gpus == 2048
    np.testing.assert_allclose(philly.arrivals,
                               catalog.read_philly_trace(jobs=5).arrivals / 2.0)
    path = tmp_path / "t.csv"
    with importlib.resources.as_file(catalog.data_files() / "tiresias_60_job.csv") as src:
        path.write_bytes(src.read_bytes())
    assert catalog.trace_format(path) == "tiresias"
    assert catalog.read_trace(path, jobs=3).n_jobs == 3
    with pytest.raises(InvalidOption, match="no such file"):
        catalog.read_trace(tmp_path / "missing.csv")
    with pytest.raises(UnknownName):
        catalog.read_trace("tiresias-60", fmt="yaml")
    for bad in ({"jobs": 0}, {"load": 0.0}, {"load": float("inf")}):
        with pytest.raises(InvalidOption):
            catalog.read_trace("tiresias-60", **bad)
