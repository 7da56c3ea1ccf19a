"""A row key of several columns (issue 48 item 1): read from meta.json and overrides, validated once at the door
(each column present, the combination unique, no other role), left out of the distance, and shown as its columns
wherever a row is named; a text key with gaps looked up as typed. The docs say how."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memviz.app.readings import parse_rows
from memviz.errors import BadTable
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema
from unseen_tables import credit_composite, credit_like

KEY = ("branch", "account_no")
SCHEMA = Schema(numerical=("Seniority", "Age", "Income", "Amount", "Price"), categorical=("Home", "Records", "Job"),
                target="Status", key=KEY)


def test_meta_json_reads_a_list_and_writes_it_back():
    d = {"numerical": ["Age"], "categorical": ["Job"], "target": "Status", "key": ["branch", "account_no"]}
    s = Schema.from_dict(d)
    assert s.key == KEY and s.key_columns == KEY and s.kind_of("branch") == "key" == s.kind_of("account_no")
    assert s.to_dict()["key"] == ["branch", "account_no"]
    assert Schema.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    one = Schema.from_dict({**d, "key": ["branch"]})           # a list of one is the single key, as a string
    assert one.key == "branch" and one.to_dict()["key"] == "branch" and one.key_columns == ("branch",)
    assert Schema.from_dict({**d, "key": "branch"}).key_columns == ("branch",)
    for bad in (3, [], ["a", 3], ["a", "a"]):
        with pytest.raises(BadTable, match="m.json: 'key'"):
            Schema.from_dict({**d, "key": bad}, source="m.json")
    with pytest.raises(BadTable, match="'Age' is the row key and has another role"):
        Schema(numerical=("Age",), categorical=(), key=("branch", "Age"))


def test_the_key_columns_are_out_of_the_distance_and_sdv_keeps_one_primary_key():
    assert not set(KEY) & set(SCHEMA.columns)
    assert not set(KEY) & set(SCHEMA.distance_numerical + SCHEMA.distance_categorical)
    sdv = SCHEMA.to_sdv()["tables"]["table"]
    assert sdv["columns"]["branch"] == {"sdtype": "id"} and sdv["columns"]["account_no"] == {"sdtype": "id"}
    assert "primary_key" not in sdv                  # SDV's primary_key is one column: a composite key has none


def test_overrides_make_a_composite_key():
    s = Schema(numerical=("Age", "account_no"), categorical=("Job", "branch"), key="rownames")
    both = s.with_overrides({"branch": "key", "account_no": "key"})
    assert both.key == KEY and "rownames" in both.excluded and not set(KEY) & set(both.columns)
    assert both.with_overrides({"account_no": "numerical"}).key == "branch"     # one part taken back: one column


def test_a_table_names_rows_by_both_columns():
    df = credit_composite(200, seed=3)
    t = table_from_frame(df, SCHEMA, source="credit.csv")
    assert t.key == KEY and not set(KEY) & set(t.data.columns)
    ids = np.array([5, 0, 17])
    want = [(df["branch"].iloc[i], int(df["account_no"].iloc[i])) for i in ids]
    assert [tuple(k) for k in t.key_of(ids)] == want
    assert t.row_names(ids) == [f"branch={b}, account_no={n}" for b, n in want]
    assert t.key_list(ids) == [{"branch": b, "account_no": n} for b, n in want]
    named = t.with_keys(pd.DataFrame({"row_id": ids, "copies": [3, 2, 1]}), keep_row_id=False)
    assert list(named.columns) == ["branch", "account_no", "copies"]
    assert list(zip(named["branch"], named["account_no"])) == want
    sub = t.subset([17, 5])
    assert [tuple(k) for k in sub.key_of([17, 5])] == [want[2], want[0]]
    back = t.drop([0]).to_frame(row_id=False)
    assert list(back.columns) == list(df.columns)               # the user's own columns, in the user's order
    pd.testing.assert_frame_equal(back[list(KEY)], df[list(KEY)].drop(index=0).reset_index(drop=True),
                                  check_dtype=False)
    again = table_from_frame(t.to_frame(), t.schema, row_id_column="row_id")
    assert [tuple(k) for k in again.key_of(ids)] == want


def test_a_duplicate_combination_or_a_missing_column_is_one_line():
    df = credit_composite(200, seed=3)
    dup = df.copy()
    dup.loc[11, list(KEY)] = dup.loc[4, list(KEY)].to_numpy()
    b, n = dup.loc[4, "branch"], int(dup.loc[4, "account_no"])
    with pytest.raises(BadTable) as err:
        table_from_frame(dup, SCHEMA, source="credit.csv")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("credit.csv: columns 'branch', 'account_no'")
    assert f"branch={b}, account_no={n}" in msg
    with pytest.raises(BadTable, match="credit.csv: column 'account_no': the row key named in the schema is not"):
        table_from_frame(df.drop(columns="account_no"), SCHEMA, source="credit.csv")


def test_the_dynamics_lookup_takes_a_composite_key_typed_as_shown():
    df = credit_composite(200, seed=3)
    t = table_from_frame(df, SCHEMA, source="credit.csv")
    shown = t.row_names([17, 5])
    good, bad = parse_rows(f"{shown[0]}; {shown[1]}", t, t.row_ids)
    assert good == [17, 5] and bad == []
    good, bad = parse_rows(f"{shown[1]}, branch=Nowhere, account_no=1", t, t.row_ids)
    assert good == [5] and bad == ["branch=Nowhere, account_no=1"]
    good, bad = parse_rows("17", t, t.row_ids)
    assert good == [] and bad == ["17"]


def test_a_text_key_with_gaps_not_in_row_order_is_looked_up_as_typed():
    df = credit_like(200, seed=4)
    df["rownames"] = [f"C-{int(k):05d}" for k in df["rownames"]]
    schema = Schema(numerical=("Age",), categorical=("Job",), target="Status", key="rownames")
    t = table_from_frame(df, schema, source="credit.csv")
    keys = df["rownames"].iloc[[30, 2]].tolist()
    good, bad = parse_rows(f"{keys[0]}, C-99999,{keys[1]}", t, t.row_ids)
    assert good == [30, 2] and bad == ["C-99999"]
    assert t.row_names([30]) == [f"rownames {keys[0]}"]


def test_docs_say_how_to_write_a_composite_key():
    text = (Path(__file__).resolve().parents[2] / "docs" / "schema.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `key` |"))
    assert "list of column names" in row
    assert '"key": ["branch", "account_no"]' in text and "--key branch --key account_no" in text
    assert "primary_key" in text


def test_a_comma_joined_key_says_to_repeat_the_option():
    s = Schema(numerical=("Age", "account_no"), categorical=("Job", "branch"))
    with pytest.raises(BadTable, match="no such column \\(a composite key is one --key per column: --key branch "
                                        "--key account_no\\)"):
        s.with_overrides({"branch,account_no": "key"}, source="train.csv")
