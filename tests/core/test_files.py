"""optsched.core.files: the atomic writer and the output checks every command uses."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from optsched.core import files
from optsched.core.files import (
    check_output,
    ensure_folder,
    open_atomic,
    same_file,
    write_bytes,
    write_text,
)
from optsched.errors import InvalidInput, InvalidOutput

ROOT = os.name == "posix" and os.geteuid() == 0


def _no_temp(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".part")]


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# --------------------------------------------------------------------------- atomicity
def test_write_creates_and_replaces(tmp_path):
    f = tmp_path / "a.json"
    assert write_text(f, "one\n") == f and f.read_text() == "one\n"
    write_text(f, "two\n")
    assert f.read_text() == "two\n"
    write_bytes(f, b"\x00\x01")
    assert f.read_bytes() == b"\x00\x01"
    _no_temp(tmp_path)


def test_an_error_mid_write_leaves_the_old_file_and_no_temporary(tmp_path):
    f = tmp_path / "a.json"
    f.write_text("the old content\n")
    for exc in (ValueError("serializer failed"), KeyboardInterrupt()):
        with pytest.raises(type(exc)):
            with open_atomic(f) as fh:
                fh.write("half of the new cont")
                fh.flush()  # on disk in the temporary file, not in f
                assert f.read_text() == "the old content\n"
                raise exc
        assert f.read_text() == "the old content\n"
        _no_temp(tmp_path)


def test_a_full_disk_is_invalid_output_and_keeps_the_old_file(tmp_path, monkeypatch):
    f = tmp_path / "a.json"
    f.write_text("old\n")
    monkeypatch.setattr(os, "fsync", _enospc)
    with pytest.raises(InvalidOutput) as e:
        write_text(f, "new\n", field="path")
    assert str(e.value) == f"path: no space left on the device (got '{f}')"
    assert f.read_text() == "old\n"
    _no_temp(tmp_path)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_device_is_written_in_place_never_replaced():
    """/dev/null takes the text; /dev/full reports ENOSPC; both stay devices."""
    write_text("/dev/null", "discarded\n")
    assert Path("/dev/null").is_char_device()
    with pytest.raises(InvalidOutput, match="no space left on the device"):
        write_text("/dev/full", "x" * 100_000)
    assert Path("/dev/full").is_char_device()
    check_output("/dev/null")  # a device is a fine output


def test_permissions_are_kept_and_new_files_follow_the_umask(tmp_path):
    f = tmp_path / "a.json"
    f.write_text("x")
    f.chmod(0o640)
    write_text(f, "y")
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    old = os.umask(0o027)
    try:
        g = tmp_path / "new.json"
        write_text(g, "z")
    finally:
        os.umask(old)
    assert stat.S_IMODE(g.stat().st_mode) == 0o640  # 0666 & ~027, not mkstemp's 0600


def test_a_symlink_is_written_through(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    _no_temp(tmp_path)


def test_the_destination_is_never_a_folder(tmp_path):
    with pytest.raises(InvalidOutput, match="is a folder, not a file"):
        write_text(tmp_path, "x")
    with pytest.raises(InvalidOutput, match="the folder does not exist"):
        write_text(tmp_path / "missing" / "a.json", "x")
    with pytest.raises(ValueError):
        with open_atomic(tmp_path / "a", "a"):
            pass


# --------------------------------------------------------------------------- same_file
def test_same_file_sees_every_spelling(tmp_path, monkeypatch):
    f = tmp_path / "inst.json"
    f.write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.json").symlink_to(f)
    (tmp_path / "dirlink").symlink_to(tmp_path, target_is_directory=True)
    os.link(f, tmp_path / "hard.json")
    monkeypatch.chdir(tmp_path)
    for other in ("inst.json", "./inst.json", "sub/../inst.json", str(f), "link.json",
                  "hard.json", "dirlink/inst.json"):
        assert same_file(other, f), other
    assert not same_file("other.json", f)
    # neither exists yet: compared by resolved spelling
    assert same_file("new.json", "./sub/../new.json")
    assert not same_file("new.json", "sub/new.json")


def test_check_output_refuses_every_input_spelling(tmp_path, monkeypatch):
    f = tmp_path / "inst.json"
    f.write_text("{}")
    os.link(f, tmp_path / "hard.json")
    (tmp_path / "link.json").symlink_to(f)
    monkeypatch.chdir(tmp_path)
    for out in ("inst.json", "./inst.json", "hard.json", "link.json"):
        with pytest.raises(InvalidOutput) as e:
            check_output(out, [None, "other.json", f])
        assert str(e.value) == (f"--out: is the input file '{f}' of this command; "
                                f"refusing to write over it (got '{out}')")
    assert check_output("result.json", [f]) == Path("result.json")
    # a folder output whose files would overwrite an input
    (tmp_path / "out").mkdir()
    cfg = tmp_path / "out" / "config.json"
    cfg.write_text("{}")
    with pytest.raises(InvalidOutput, match="would write .*config.json.*, which is the input"):
        check_output("out", [cfg], folder=True, names=["config.json", "results.csv"])
    check_output("out", [cfg], folder=True, names=["results.csv"])


# --------------------------------------------------------------------------- check_output
def test_check_output_bad_places(tmp_path):
    (tmp_path / "a-file").write_text("x")
    cases = [
        (tmp_path / "missing" / "r.json", {}, "the folder '.*missing' does not exist"),
        (tmp_path, {}, "is a folder, not a file"),
        (tmp_path / "a-file" / "r.json", {}, "a-file' is not a folder"),
        (tmp_path / "a-file", {"folder": True}, "is a file, not a folder"),
        (tmp_path / "missing" / "out", {"folder": True}, "does not exist"),
    ]
    for path, kw, reason in cases:
        with pytest.raises(InvalidOutput, match=reason) as e:
            check_output(path, **kw)
        assert e.value.path == "--out" and e.value.value == str(path)
        assert isinstance(e.value, InvalidInput)  # exit 2 on the command line
    assert check_output(tmp_path / "new", folder=True) == tmp_path / "new"
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # the probe is gone


@pytest.mark.skipif(not Path("/sys").is_dir(), reason="no /sys")
def test_check_output_probes_where_even_root_cannot_write():
    """os.access says yes to root for /sys; creating a file there fails."""
    for kw in ({}, {"folder": True}):
        with pytest.raises(InvalidOutput, match="cannot create a file in '/sys': permission"):
            check_output("/sys/optsched-out", **kw)


@pytest.mark.skipif(ROOT or os.name != "posix", reason="root writes into 0555 folders")
def test_check_output_read_only_folder(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "f.json").write_text("x")
    ro.chmod(0o555)
    try:
        with pytest.raises(InvalidOutput, match="permission denied"):
            check_output(ro / "r.json")
        with pytest.raises(InvalidOutput, match="permission denied"):
            check_output(ro, folder=True)
    finally:
        ro.chmod(0o755)


def test_check_output_full_or_read_only_file_system(tmp_path, monkeypatch):
    real = os.statvfs

    def fake(free, flag):
        class St:
            def __init__(self, st):
                self.f_blocks, self.f_bfree, self.f_bavail = 1000, free, free
                self.f_flag = st.f_flag | flag
        return lambda p: St(real(p))

    monkeypatch.setattr(os, "statvfs", fake(0, 0))
    with pytest.raises(InvalidOutput, match="no space left on the device"):
        check_output(tmp_path / "r.json")
    with pytest.raises(InvalidOutput, match="no space left on the device"):
        check_output(tmp_path / "out", folder=True)
    monkeypatch.setattr(os, "statvfs", fake(10, os.ST_RDONLY))
    with pytest.raises(InvalidOutput, match="read-only file system"):
        check_output(tmp_path / "r.json")
    monkeypatch.setattr(os, "statvfs", fake(10, 0))
    check_output(tmp_path / "r.json")


def test_ensure_folder(tmp_path):
    assert ensure_folder(tmp_path / "a" / "b").is_dir()
    (tmp_path / "f").write_text("x")
    with pytest.raises(InvalidOutput, match="is a file, not a folder"):
        ensure_folder(tmp_path / "f")
    with pytest.raises(InvalidOutput, match="a parent is not a folder"):
        ensure_folder(tmp_path / "f" / "sub")


def test_the_path_is_never_shortened_in_the_message(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 6, "result.json")
    with pytest.raises(InvalidOutput) as e:
        check_output(deep)
    assert f"(got '{deep}')" in str(e.value)


def test_output_error_words():
    e = files.output_error("--out", "x.json", OSError(errno.EACCES, "Permission denied"))
    assert str(e) == "--out: permission denied (got 'x.json')"


# --------------------------------------------------------------------------- API writers
def test_instance_and_schedule_writers_are_atomic(tmp_path, monkeypatch):
    from optsched import solve
    from optsched.allox import demo_instance
    from optsched.core.instance import load_instance

    inst = demo_instance(n_jobs=3)
    sched = solve(inst, "allox", "sjf").schedule
    for obj, name in ((inst, "inst.json"), (sched, "sched.json")):
        f = tmp_path / name
        obj.to_json(f)
        old = f.read_text()
        with monkeypatch.context() as m:
            m.setattr(os, "fsync", _enospc)
            with pytest.raises(InvalidOutput, match=f"path: no space left.*{name}"):
                obj.to_json(f)
        assert f.read_text() == old
    assert load_instance(tmp_path / "inst.json") == inst
    _no_temp(tmp_path)


def test_benchmark_results_are_written_atomically(tmp_path, monkeypatch):
    """benchmarks/common.write_results (every benchmark's JSON and Markdown) keeps the
    committed results whole when the write fails."""
    import importlib.util

    from paths import BENCHMARKS

    spec = importlib.util.spec_from_file_location("bench_common", BENCHMARKS / "common.py")
    assert spec is not None and spec.loader is not None
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    monkeypatch.setattr(common, "RESULTS", tmp_path)
    monkeypatch.setattr(common, "machine_info", lambda: {
        "cpu": "cpu", "cpu_count": 2, "memory_gib": 1, "platform": "p", "python": "3",
        "packages": {}, "commit": None, "date": "d"})
    rows = [{"n": 1, "seconds": 0.5}]
    jpath, mpath = common.write_results("b", rows, ["n", "seconds"], title="B")
    old = jpath.read_text(), mpath.read_text()
    monkeypatch.setattr(os, "fsync", _enospc)
    with pytest.raises(InvalidOutput, match="no space left on the device"):
        common.write_results("b", [{"n": 2, "seconds": 9.0}], ["n", "seconds"], title="B")
    assert (jpath.read_text(), mpath.read_text()) == old
    _no_temp(tmp_path)
