"""Audit.write and memviz report write their folder as a unit (:func:`memviz.folders.folder_unit`).

At e9efb32 a full disk or a kill -9 after rows.csv left a new rows.csv beside an older audit's
audit.json and report.html (mem 0.467 of the old audit), and two ``memviz report RUN --out SAME``
both exited 0 with check 0's audit.json and report.html beside check 4's rows.csv (issue 41).
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

import pytest

from memviz.auditing.result import FORMAT
from memviz.errors import MemvizError
from memviz.folders import FolderBusy, check_folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_folder_unit import _holder, listing  # noqa: E402


def _full_disk_on(name: str, monkeypatch):
    import memviz.io as io

    real = io._atomic

    def failing(path, write):
        if Path(path).name == name:
            raise io.disk_full(Path(path).parent, name)
        return real(path, write)
    monkeypatch.setattr(io, "_atomic", failing)


def test_audit_write_on_a_full_disk_keeps_the_earlier_audit_whole(fresh_audit, tmp_path, monkeypatch):
    out = tmp_path / "audit"
    fresh_audit.write(out)
    before = listing(out)
    other = dataclasses.replace(fresh_audit, per_row=fresh_audit.per_row.assign(copies=fresh_audit.per_row["copies"] + 1))
    _full_disk_on("report.html", monkeypatch)
    with pytest.raises(MemvizError, match="no space left"):
        other.write(out)
    assert listing(out) == before                                      # not a new rows.csv beside the old audit
    assert sorted(os.listdir(tmp_path)) == ["audit"]


def test_audit_write_refuses_a_second_writer(fresh_audit, tmp_path):
    out = tmp_path / "audit"
    p = _holder(out)
    try:
        with pytest.raises(FolderBusy):
            fresh_audit.write(out)
    finally:
        p.kill()
        p.wait()
    fresh_audit.write(out)
    assert set(check_folder(out)["files"]) == {"audit.json", "report.html", "rows.csv"}
    assert json.loads((out / "audit.json").read_text())["format"] == FORMAT




# ------------------------------------------------------------------ memviz report
@pytest.fixture(scope="module")
def small_run(sample, tmp_path_factory):
    """A finished 2-check run of 150 training rows with a 300-row hold-out."""
    from helpers import TINY_MODEL

    from memviz.warmup.run import WarmupConfig, run_warmup

    train, test = sample
    root = tmp_path_factory.mktemp("unit_runs")
    cfg = WarmupConfig(epochs=4, check_every=2, seed=3, device="cpu", model_params=dict(TINY_MODEL))
    run_warmup(train.subset(train.row_ids[:150]), cfg, root / "run", holdout=test.subset(test.row_ids[:300]))
    return root / "run"


def _report(capsys, run, out, *extra):
    from helpers import memviz_cli

    return memviz_cli(capsys, "report", run, "--out", out, "--no-quality", "--no-evidence", "--no-compare", *extra)


KILLED_REPORT = """
import os, sys, time
import memviz.auditing.result as r
real = r.Audit.to_json
def paused(self, path=None, indent=1):
    if path is not None:
        print("paused", flush=True)
        time.sleep(600)
    return real(self, path, indent)
r.Audit.to_json = paused
from memviz.cli import main
sys.exit(main(["report", sys.argv[1], "--out", sys.argv[2], "--no-quality", "--no-evidence", "--no-compare",
               "--check", "0"]))
"""


@pytest.mark.slow
def test_memviz_report_killed_full_disk_or_doubled_leaves_the_earlier_report_whole(small_run, tmp_path, capsys,
                                                                                  monkeypatch):
    import signal
    import subprocess

    out = tmp_path / "rep"
    rc, last, err = _report(capsys, small_run, out)                    # the last check (1)
    assert rc == 0, err
    assert json.loads(last)["audit"] == str(out / "audit.json")
    before = listing(out)
    assert json.loads(before["audit.json"])["provenance"]["run"]["check"] == 1
    # kill -9 after rows.csv and report.html of check 0 are written
    p = subprocess.Popen([sys.executable, "-c", KILLED_REPORT, str(small_run), str(out)], stdout=subprocess.PIPE,
                         text=True, cwd=Path(__file__).resolve().parents[2])
    try:
        assert p.stdout.readline().strip() == "paused"
        rc, _, err = _report(capsys, small_run, out)                   # a second writer meanwhile: refused
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "another process is writing" in err
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.kill()
        p.wait()
    assert listing(out) == before and check_folder(out)
    # a full disk at audit.json
    import memviz.io as io

    real = io._atomic

    def failing(path, write):
        if Path(path).name == "audit.json":
            raise io.disk_full(Path(path).parent, "audit.json")
        return real(path, write)
    monkeypatch.setattr(io, "_atomic", failing)
    rc, _, err = _report(capsys, small_run, out, "--check", "0")
    assert rc == 2 and "no space left" in err and len(err.strip().splitlines()) == 1
    assert listing(out) == before and sorted(os.listdir(tmp_path)) == ["rep"]
    monkeypatch.setattr(io, "_atomic", real)
    rc, last, err = _report(capsys, small_run, out, "--check", "0")
    assert rc == 0 and json.loads((out / "audit.json").read_text())["provenance"]["run"]["check"] == 0
    assert set(check_folder(out)["files"]) == {"audit.json", "report.html", "rows.csv"}
