"""memviz.folders.folder_unit: an output folder appears whole or not at all, one writer at a time.

At e9efb32 ``Audit.write`` wrote rows.csv, report.html and audit.json one by one into the folder,
each atomically but with no lock and no staging: a full disk or a kill -9 after rows.csv left a new
rows.csv beside an older audit's audit.json and report.html, and two writers of one folder mixed
their files (issue 41).
"""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import memviz.folders as folders
from memviz.errors import MemvizError
from memviz.folders import CONTENTS, FolderBusy, check_folder, folder_unit
from memviz.io import DiskFull, atomic_write_text

ROOT = Path(__file__).resolve().parent.parent


def write_unit(out: Path, texts: dict) -> None:
    with folder_unit(out, names=tuple(texts)) as stage:
        for name, text in texts.items():
            atomic_write_text(stage / name, text)


def listing(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_unit_appears_whole_with_its_contents_listed(tmp_path):
    out = tmp_path / "a"
    write_unit(out, {"x.txt": "1", "y.txt": "2"})
    doc = check_folder(out)
    assert set(doc["files"]) == {"x.txt", "y.txt"} and doc["files"]["x.txt"]["bytes"] == 1
    assert sorted(os.listdir(tmp_path)) == ["a"]                       # no staging folder, no lock file left
    write_unit(out, {"x.txt": "3", "y.txt": "4"})                      # a reused folder: replaced whole
    assert listing(out)["x.txt"] == "3" and check_folder(out)
    (out / "y.txt").write_text("torn")
    with pytest.raises(MemvizError, match="y.txt differs"):
        check_folder(out)
    (out / CONTENTS).unlink()
    with pytest.raises(MemvizError, match="incomplete"):
        check_folder(out)


def test_a_failing_block_leaves_the_earlier_folder_untouched(tmp_path):
    out = tmp_path / "a"
    write_unit(out, {"x.txt": "old x", "y.txt": "old y"})
    before = listing(out)
    with pytest.raises(RuntimeError):
        with folder_unit(out, names=("x.txt", "y.txt")) as stage:
            atomic_write_text(stage / "x.txt", "new x")
            raise RuntimeError("the disk filled")
    assert listing(out) == before and sorted(os.listdir(tmp_path)) == ["a"]


def test_a_folder_holding_other_files_is_refused_in_one_line(tmp_path):
    (tmp_path / "mine.csv").write_text("a\n1\n")
    with pytest.raises(MemvizError) as e:
        write_unit(tmp_path, {"x.txt": "1"})
    assert "mine.csv" in str(e.value) and "\n" not in str(e.value)
    assert (tmp_path / "mine.csv").read_text() == "a\n1\n"
    with pytest.raises(MemvizError, match="is a file"):
        write_unit(tmp_path / "mine.csv", {"x.txt": "1"})
    old = tmp_path / "old"                                              # an output folder from before contents.json
    old.mkdir()
    (old / "x.txt").write_text("from an older memviz")
    write_unit(old, {"x.txt": "1"})
    assert listing(old)["x.txt"] == "1"


def test_a_nested_unit_writes_into_the_outer_one(tmp_path):
    out = tmp_path / "rep"
    with folder_unit(out, names=("a.txt", "sub")) as stage:
        atomic_write_text(stage / "a.txt", "a")
        with folder_unit(stage / "sub" / "one", names=("b.txt",)) as inner:
            assert inner == stage / "sub" / "one"
            atomic_write_text(inner / "b.txt", "b")
        assert not out.exists()
    assert set(check_folder(out)["files"]) == {"a.txt", "sub/one/b.txt"}


HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from memviz.folders import folder_unit
    from memviz.io import atomic_write_text
    out = Path(sys.argv[1])
    with folder_unit(out, names=("x.txt", "y.txt")) as stage:
        atomic_write_text(stage / "x.txt", "new x")
        print("paused", flush=True)
        time.sleep(600)
        atomic_write_text(stage / "y.txt", "new y")
""")


def _holder(out: Path) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert p.stdout.readline().strip() == "paused"
    return p


def test_a_second_writer_is_refused_and_a_killed_writer_leaves_the_earlier_folder(tmp_path):
    out = tmp_path / "a"
    write_unit(out, {"x.txt": "old x", "y.txt": "old y"})
    p = _holder(out)
    try:
        with pytest.raises(FolderBusy) as e:
            write_unit(out, {"x.txt": "second", "y.txt": "second"})
        assert f"pid {p.pid}" in str(e.value) and "\n" not in str(e.value)
        assert listing(out) == {"x.txt": "old x", "y.txt": "old y", CONTENTS: (out / CONTENTS).read_text()}
        os.kill(p.pid, signal.SIGKILL)                                    # killed after its first file
    finally:
        p.kill()
        p.wait()
    assert listing(out)["x.txt"] == "old x" and check_folder(out)       # the earlier audit, whole
    write_unit(out, {"x.txt": "third", "y.txt": "third"})              # the lock died with it; its stage is removed
    assert listing(out)["x.txt"] == "third" and sorted(os.listdir(tmp_path)) == ["a"]


def test_disk_full_while_staging_is_one_line(tmp_path, monkeypatch):
    def no_space(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(folders, "_hashes", no_space)
    with pytest.raises(DiskFull):
        write_unit(tmp_path / "a", {"x.txt": "1"})
    assert os.listdir(tmp_path) == []
