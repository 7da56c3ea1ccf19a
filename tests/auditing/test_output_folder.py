"""Audit.write and memviz report write their folder as a unit (:func:`memviz.io.folder_unit`).

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

from memviz.errors import MemvizError
from memviz.io import FolderBusy, check_folder

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
    other = dataclasses.replace(fresh_audit, rows=fresh_audit.rows.assign(copies=fresh_audit.rows["copies"] + 1))
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
    assert json.loads((out / "audit.json").read_text())["format"] == "memviz.audit/1"


