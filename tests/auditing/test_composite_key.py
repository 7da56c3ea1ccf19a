"""Issue 48 item 1, last sentence: a composite key (several columns that together name a row) works as well as an
integer one.

A credit-like table whose rows are named by ``branch`` and ``account_no`` together (neither unique alone; the
account numbers with gaps, the rows shuffled); four training rows copied verbatim 20 times each into the
synthetic table. Every frame and file names the planted rows by both key columns, each under its own name.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from unseen_tables import credit_composite

KEY = ("branch", "account_no")
SOURCES = np.array([3, 41, 150, 201])          # positions of the copied training rows


def composite_tables(n: int = 400):
    """(train 240, hold-out 80, synthetic 100): the synthetic rows are fresh rows but for 80 verbatim copies of the
    training rows at :data:`SOURCES` (key columns left out, as a generator writes no key)."""
    df = credit_composite(n, seed=2)
    train, hold, fresh = df.iloc[:240].reset_index(drop=True), df.iloc[240:320], df.iloc[320:]
    syn = pd.concat([fresh.drop(columns=list(KEY)),
                     train.drop(columns=list(KEY)).iloc[np.repeat(SOURCES, 20)]], ignore_index=True)
    return train, hold.reset_index(drop=True), syn


def schema_file(path, train: pd.DataFrame):
    meta = {"name": "credit", "target": "Status", "task": "binary", "key": list(KEY),
            "numerical": ["Seniority", "Age", "Income", "Amount", "Price"],
            "categorical": ["Home", "Records", "Job"]}
    path.write_text(json.dumps(meta))
    return path


def planted(train: pd.DataFrame) -> set[tuple]:
    return set(map(tuple, train[list(KEY)].iloc[SOURCES].itertuples(index=False)))


@pytest.fixture(scope="module")
def composite(tmp_path_factory):
    import memviz

    train, hold, syn = composite_tables()
    meta = schema_file(tmp_path_factory.mktemp("meta") / "meta.json", train)
    a = memviz.audit(train, syn, hold, schema=meta, quality=False)
    return a, train


def test_neither_key_column_is_unique_alone():
    train, _, _ = composite_tables()
    assert not train["branch"].is_unique and not train["account_no"].is_unique
    assert not train.duplicated(list(KEY)).any()
    assert (np.diff(np.sort(train["account_no"].unique())) > 1).any()       # gaps


def test_the_frames_name_rows_by_both_key_columns(composite):
    a, train = composite
    assert tuple(a.key) == KEY
    over = a.over_copied_rows
    assert list(over.columns[:3]) == ["branch", "account_no", "copies"] and "row_id" not in over
    assert set(map(tuple, over[list(KEY)].itertuples(index=False))) == planted(train)
    verb = a.verbatim_rows
    assert set(map(tuple, verb[list(KEY)].head(4).itertuples(index=False))) == planted(train)
    rows = a.rows
    assert list(rows.columns[:2]) == list(KEY) and len(rows) == len(train) and "row_id" not in rows
    assert rows["account_no"].dtype.kind in "iu" or str(rows["account_no"].dtype) == "Int64"
    asked = a.frame("over_copied", row_id=True)
    assert list(asked.columns[:3]) == ["branch", "account_no", "row_id"]
    assert set(asked["row_id"]) == set(SOURCES.tolist())
    assert a.key_of(SOURCES[:1]) == [dict(zip(KEY, planted_row(train, SOURCES[0])))]
    b, n = planted_row(train, SOURCES[0])
    assert a.row_names(SOURCES[:1]) == [f"branch={b}, account_no={n}"]


def planted_row(train, i):
    return train["branch"].iloc[i], int(train["account_no"].iloc[i])


def test_the_files_name_rows_by_both_key_columns(composite, tmp_path):
    from memviz.auditing.json_schema import validate

    a, train = composite
    paths = a.write(tmp_path / "out")
    rows = pd.read_csv(paths["rows"])
    assert list(rows.columns[:2]) == list(KEY) and "row_id" not in rows
    got = set(map(tuple, rows.loc[rows["over_copied"], list(KEY)].itertuples(index=False)))
    assert got == planted(train)
    doc = json.loads(open(paths["audit"]).read())
    validate(doc)
    assert doc["key"] == list(KEY)
    assert {(r["key"]["branch"], r["key"]["account_no"]) for r in doc["over_copied"]} == planted(train)
    assert all("row_id" not in r for r in doc["over_copied"])
    exposed = doc["evidence"]["membership"]["most_exposed"]
    assert exposed and all(set(r["key"]) == set(KEY) for r in exposed)
    # the report: each key column hashed where redacted, shown in a raw one; never memviz's positions
    redacted = open(paths["report"]).read()
    assert len(set(re.findall(r"branch=key-[0-9a-f]{6}, account_no=key-[0-9a-f]{6}", redacted))) >= 4
    raw = a.to_html(redacted=False)
    assert all(f"branch={b}, account_no={n}" in raw for b, n in planted(train))


def test_a_kept_audit_keeps_its_composite_key(composite, tmp_path):
    from memviz.auditing.stored import load_audit, save_audit

    a, _ = composite
    save_audit(a, tmp_path / "kept")
    b = load_audit(tmp_path / "kept")
    assert tuple(b.key) == KEY
    pd.testing.assert_frame_equal(a.over_copied_rows, b.over_copied_rows)


def test_a_duplicate_combination_is_refused_in_one_line(tmp_path):
    import memviz
    from memviz.errors import BadTable

    train, hold, syn = composite_tables()
    train.loc[7, list(KEY)] = train.loc[9, list(KEY)].to_numpy()
    meta = schema_file(tmp_path / "meta.json", train)
    b, n = train.loc[9, "branch"], int(train.loc[9, "account_no"])
    with pytest.raises(BadTable) as err:
        memviz.audit(train, syn, hold, schema=meta, quality=False)
    msg = str(err.value)
    assert "\n" not in msg and "'branch', 'account_no'" in msg and f"branch={b}, account_no={n}" in msg
