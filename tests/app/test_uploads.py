"""memviz.app.uploads: uploads and the table in use kept with the runs, found again after a reload."""
from __future__ import annotations

import errno
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import memviz.io as mio
from memviz.app import datasets, uploads
from memviz.errors import BadTable
from memviz.io import DiskFull
from memviz.tables.data import fingerprint


def test_uploads_and_the_table_in_use_are_kept_with_the_runs(tmp_path, sample):
    train, test = sample
    raw_bytes = train.data.head(50).to_csv(index=False).encode()
    a = uploads.save_upload(tmp_path, "people.csv", raw_bytes)
    assert uploads.save_upload(tmp_path, "people.csv", raw_bytes).key == a.key   # kept once
    b = uploads.save_upload(tmp_path, "people.csv", raw_bytes, "t.csv", raw_bytes)
    assert b.key != a.key and [u.key for u in uploads.list_uploads(tmp_path)][0] == b.key
    back = uploads.load_upload(tmp_path, b.key)
    assert len(back.frame) == 50 and back.test is not None and back.label == "Upload: people.csv"
    with pytest.raises(BadTable, match="not kept"):
        uploads.load_upload(tmp_path, "../etc")
    raw = datasets.load_choice("sample")
    tr, te = datasets.build_tables(raw, raw.schema, "random", 0.25, 3)
    key = uploads.save_tables(tmp_path, tr, te, raw.label, "sample")
    t2, e2, label, choice = uploads.load_tables(tmp_path, key)
    # a run trained on the table finds it again: same fingerprint after the round trip
    assert fingerprint(t2) == fingerprint(tr) and fingerprint(e2) == fingerprint(te)
    assert (label, choice) == (raw.label, "sample") and t2.schema == tr.schema
    assert uploads.tables_for(tmp_path, fingerprint(tr)) == key and uploads.tables_for(tmp_path, "x") is None
    assert uploads.save_tables(tmp_path, tr, te, raw.label, "sample") == key


# ------------------------------------------------------------- bounded in bytes (issue 26, item 4)
def _frame(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "s": [f"text-{i}" for i in rng.integers(0, 10**9, n)]})


def test_the_upload_cache_is_bounded_in_bytes_not_entries():
    """Three 300k-row uploads from closed sessions kept 1.49 GB in the server (the cache held 4 entries
    whatever their size)."""
    one = uploads.nbytes(_frame(20_000))
    calls = []
    cache = uploads.ByteCache(lambda name: calls.append(name) or _frame(20_000, seed=len(calls)),
                              max_bytes=int(2.5 * one))
    for name in ("a", "b", "c", "d"):
        cache(name)
        assert cache.total_bytes <= cache.max_bytes
    assert len(cache) == 2 and calls == ["a", "b", "c", "d"]
    cache("d"), cache("c")                                   # the newest two are kept
    assert calls == ["a", "b", "c", "d"]
    cache("a")                                               # the oldest was dropped
    assert calls[-1] == "a" and len(cache) == 2


def test_a_value_larger_than_the_bound_is_returned_but_not_kept(monkeypatch):
    monkeypatch.setenv(uploads.UPLOAD_CACHE_ENV, "1000")
    cache = uploads.ByteCache(lambda name: _frame(1000))
    assert len(cache("big")) == 1000 and len(cache) == 0 and cache.max_bytes == 1000


def test_nbytes_counts_strings_and_dataclasses(sample):
    train, _ = sample
    assert uploads.nbytes(train) == uploads.nbytes(train.data) > train.data.shape[0] * train.data.shape[1]
    raw = datasets.RawData(train.data, train.data.copy(), train.schema, "s", "l")
    assert uploads.nbytes(raw) == 2 * uploads.nbytes(train.data)
    shared = datasets.RawData(train.data, train.data, train.schema, "s", "l")   # one frame, held twice
    assert uploads.nbytes(shared) == uploads.nbytes(train.data)


def test_the_dashboards_upload_caches_are_byte_bounded():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "screens"))
    import _ui  # lazy: after screens/ is on sys.path; it imports streamlit (optional, memviz[app])

    for fn in (_ui.raw_upload, _ui.raw_kept, _ui.kept_tables):
        assert isinstance(fn, uploads.ByteCache)
    assert _ui.raw_upload.max_bytes == uploads.DEFAULT_UPLOAD_CACHE_BYTES


def test_a_full_disk_while_keeping_an_upload_leaves_no_half_made_folder(tmp_path, monkeypatch):
    real = mio.os.replace
    calls = []

    def replace(a, b):
        calls.append(b)
        if len(calls) == 2:                                  # train.bin is in, the disk fills
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(mio.os, "replace", replace)
    with pytest.raises(DiskFull, match="no space left"):
        uploads.save_upload(tmp_path, "t.csv", b"a,b\n1,2\n", "u.csv", b"a,b\n3,4\n")
    assert not any((tmp_path / uploads.UPLOADS).rglob("*")) or \
        [p.name for p in (tmp_path / uploads.UPLOADS).iterdir()] == []
