"""memviz.app.uploads: uploads and the table in use kept with the runs, found again after a reload."""
from __future__ import annotations

import pytest

from memviz.app import datasets, uploads
from memviz.errors import DataError


def test_uploads_and_the_table_in_use_are_kept_with_the_runs(tmp_path, sample):
    from memviz.tables.data import fingerprint

    train, test = sample
    raw_bytes = train.data.head(50).to_csv(index=False).encode()
    a = uploads.save_upload(tmp_path, "people.csv", raw_bytes)
    assert uploads.save_upload(tmp_path, "people.csv", raw_bytes).key == a.key   # kept once
    b = uploads.save_upload(tmp_path, "people.csv", raw_bytes, "t.csv", raw_bytes)
    assert b.key != a.key and [u.key for u in uploads.list_uploads(tmp_path)][0] == b.key
    back = uploads.load_upload(tmp_path, b.key)
    assert len(back.frame) == 50 and back.test is not None and back.label == "Upload: people.csv"
    with pytest.raises(DataError, match="not kept"):
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
