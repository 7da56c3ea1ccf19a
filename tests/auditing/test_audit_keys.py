"""Issue 48 item 1: an audit names every row by the user's own key, in the API's frames and in the files.

A table with an integer key with gaps (``10 i + 7``, shuffled: position, row_id and key all differ) or a text
key; four training rows copied verbatim 20 times each. The API's ``over_copied_rows`` gave 0-based positions
(301, 5, ...) where the user's keys are (26477, 11257, ...).
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from memviz.tables.data import sample_data_dir

SOURCES = np.array([5, 77, 301, 555])         # positions of the copied training rows


def keyed_tables(key: str = "customer_id", kind: str = "int"):
    """(train 800, hold-out 400, synthetic 600): Adult rows with the key first; the synthetic rows are fresh
    rows but for 80 verbatim copies of the training rows at :data:`SOURCES`."""
    tr, te = (pd.read_csv(sample_data_dir() / f) for f in ("train.csv", "test.csv"))
    rows = pd.concat([tr, te], ignore_index=True).iloc[:1800]
    rng = np.random.default_rng(0)
    ids = rng.permutation(10 * np.arange(len(rows)) + 7)
    rows.insert(0, key, ids if kind == "int" else [f"C-{i:05d}/{'ab'[i % 2]}" for i in ids])
    train, hold, fresh = (rows.iloc[a:b].reset_index(drop=True) for a, b in ((0, 800), (800, 1200), (1200, 1800)))
    syn = fresh.drop(columns=key)
    syn.iloc[:80] = train.drop(columns=key).iloc[np.repeat(SOURCES, 20)].to_numpy()
    return train, hold, syn


@pytest.fixture(scope="module", params=["int", "text"])
def keyed(request):
    import memviz

    train, hold, syn = keyed_tables(kind=request.param)
    with pytest.warns(UserWarning, match="'customer_id' identifies rows"):
        a = memviz.audit(train, syn, hold, target="income", quality=False)
    return a, train


def test_frames_name_rows_by_the_key(keyed):
    a, train = keyed
    want = set(train["customer_id"].iloc[SOURCES])
    assert a.key == "customer_id"
    over = a.over_copied_rows
    assert list(over.columns[:2]) == ["customer_id", "copies"] and "row_id" not in over.columns
    assert set(over["customer_id"]) == want                 # the user's keys, not positions
    assert set(a.verbatim_rows["customer_id"].head(4)) == want and "row_id" not in a.verbatim_rows
    rows = a.rows
    assert "row_id" not in rows and len(rows) == len(train) and set(rows["customer_id"]) == set(train["customer_id"])
    # the row_id only when asked for, beside the key
    asked = a.frame("over_copied", row_id=True)
    assert list(asked.columns[:2]) == ["customer_id", "row_id"] and set(asked["row_id"]) == set(SOURCES.tolist())
    assert a.key_of(SOURCES) == train["customer_id"].iloc[SOURCES].tolist()


def test_files_name_rows_by_the_key(keyed, tmp_path):
    from memviz.auditing.json_schema import validate

    a, train = keyed
    keys = train["customer_id"].iloc[SOURCES].tolist()
    paths = a.write(tmp_path / "out")                       # no train given: the audit knows its keys
    rows = pd.read_csv(paths["rows"], dtype={"customer_id": object})
    assert rows.columns[0] == "customer_id" and "row_id" not in rows.columns
    assert set(rows.loc[rows["over_copied"], "customer_id"].astype(type(keys[0]))) == set(keys)
    doc = json.loads(open(paths["audit"]).read())
    validate(doc)
    assert doc["format"] == "memviz.audit/3" and doc["key"] == "customer_id"
    assert {r["key"] for r in doc["over_copied"]} == set(keys) and all("row_id" not in r for r in doc["over_copied"])
    exposed = doc["evidence"]["membership"]["most_exposed"]
    assert exposed and all("key" in r and "row_id" not in r for r in exposed)
    assert {r["key"] for r in exposed} <= set(train["customer_id"])
    # the report: hashed where redacted, the key itself in a raw one; never memviz's positions
    redacted = open(paths["report"]).read()
    assert len(set(re.findall(r"customer_id key-[0-9a-f]{6}", redacted))) >= 4
    assert not any(f"customer_id {k}" in redacted for k in keys)
    raw = a.to_html(redacted=False)
    assert all(f"customer_id {k}" in raw for k in keys) and "row 301" not in raw
    asked = pd.read_csv(a.write(tmp_path / "ids", row_id=True)["rows"])
    assert list(asked.columns[:2]) == ["customer_id", "row_id"]


def test_a_table_without_a_key_names_rows_by_row_id(fresh_audit, tmp_path):
    """No key: row_id (the row's position in its file) is the row's only name, as before."""
    from memviz.auditing.json_schema import validate

    a = fresh_audit
    assert a.key is None and a.rows.columns[0] == "row_id" and a.over_copied_rows.columns[0] == "row_id"
    doc = a.to_dict()
    validate(json.loads(a.to_json()))
    assert doc["key"] is None and all("row_id" in r for r in doc["over_copied"])


def test_a_key_named_like_a_column_of_the_audit():
    """A key called ``copies`` (one of the audit's own columns; declared: a name not like an ID and integers
    spread 10 apart are no key by their values alone) is shown as ``copies (key)``."""
    import memviz
    from memviz.tables.infer import infer_schema

    train, hold, syn = keyed_tables(key="copies")
    schema = infer_schema(train, target="income").with_overrides({"copies": "key"})
    a = memviz.audit(train, syn, hold, schema=schema, quality=False, evidence=False)
    assert a.key == "copies" and a.key_column == "copies (key)"
    over = a.over_copied_rows
    assert list(over.columns[:2]) == ["copies (key)", "copies"]
    assert set(over["copies (key)"]) == set(train["copies"].iloc[SOURCES])


def test_a_kept_audit_keeps_its_keys_and_an_older_one_is_computed_again(keyed, tmp_path):
    """The dashboard keeps a run's audit on disk (memviz.auditing.stored): the keys come back with it; one kept
    in the format before keys (rows, no key) reads as None, so the page computes it again."""
    from memviz.auditing.stored import INDEX, load_audit, save_audit

    a, _ = keyed
    save_audit(a, tmp_path / "kept")
    b = load_audit(tmp_path / "kept")
    assert b.key == "customer_id"
    pd.testing.assert_frame_equal(a.over_copied_rows, b.over_copied_rows)
    index = json.loads((tmp_path / "kept" / INDEX).read_text())
    index["format"] = "memviz.audit.stored/2"
    (tmp_path / "kept" / INDEX).write_text(json.dumps(index))
    assert load_audit(tmp_path / "kept") is None
