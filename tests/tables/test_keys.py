"""The user's row key and the target a table suggests (issue 42, items 1 and 3), on tables memviz was not
designed on: an integer key with gaps, a label not named like Adult's, missing values."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.errors import BadTable
from memviz.tables.data import (
    SchemaWarning,
    infer_schema,
    key_reason,
    load_companion,
    load_table,
    suggest_target,
    table_from_frame,
)
from memviz.tables.schema import Schema
from unseen_tables import credit_like


def quiet_infer(df, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        s = infer_schema(df, **kw)
    return s, [str(w.message) for w in caught if issubclass(w.category, SchemaWarning)]


def test_an_integer_key_with_gaps_is_the_row_key_not_a_feature():
    """At the walk's time `rownames` (unique integers with gaps) was inferred numerical with no notice."""
    df = credit_like(400)
    s, notes = quiet_infer(df, source="credit.csv")
    assert s.key == "rownames" and "rownames" not in s.columns and "rownames" not in s.excluded
    assert any("'rownames'" in n and "integers with gaps" in n and "row key" in n for n in notes), notes
    # the same with a name that says nothing: its values alone make it a key
    s2, _ = quiet_infer(credit_like(400, key="nr"))
    assert s2.key == "nr"
    # and with missing cells (a float column of integers)
    gappy = credit_like(400, key="nr")
    gappy.loc[:5, "nr"] = np.nan
    assert quiet_infer(gappy)[0].key == "nr"


def test_measured_integers_are_not_keys():
    rng = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({"fnlwgt": rng.choice(1_500_000, n, replace=False),   # unique, but thin over its range
                       "age": rng.integers(17, 90, n),                       # dense, but repeated
                       "x": rng.normal(size=n)})                             # unique floats
    s, _ = quiet_infer(df)
    assert s.key is None and s.numerical == ("fnlwgt", "age", "x")
    small = pd.DataFrame({"age": np.r_[np.arange(20, 39), 20], "y": ["a", "b"] * 10})   # 19 ages in 20 rows
    assert key_reason(small["age"]) is None


def test_text_keys_and_near_unique_text():
    rng = np.random.default_rng(3)
    n = 1000
    df = pd.DataFrame({"code": [f"C{i:05d}" for i in rng.permutation(n)],            # one per row: the key
                       "ref": [f"R{i % 700}" for i in range(n)],                      # 70 % distinct: left out
                       "city": rng.choice(["a", "b", "c"], n), "v": rng.normal(size=n)})
    s, notes = quiet_infer(df)
    assert s.key == "code" and s.excluded == ("ref",) and s.categorical == ("city",)
    assert any("'ref'" in n and "left out" in n for n in notes)


def test_one_key_kept_and_a_named_one_preferred():
    n = 300
    df = pd.DataFrame({"serial": np.arange(n) * 3 + 7, "customer_id": np.random.default_rng(0).permutation(n) + 10**6,
                       "v": np.random.default_rng(1).normal(size=n)})
    s, notes = quiet_infer(df)
    assert s.key == "customer_id" and s.excluded == ("serial",)
    assert any("'serial'" in n and "also identifies rows" in n and "'customer_id'" in n for n in notes)


def test_the_suggested_target_is_read_from_the_table_never_from_a_name_list():
    df = credit_like(400)
    tip = suggest_target(df)
    # the last column (Price) has many values, the first after the key is the label
    assert tip.column == "Status" and tip.reason.startswith("the first column after the row key of the table, with two")
    # a column named like Adult's label is not preferred (the walk's table picked `Income`)
    assert suggest_target(df.rename(columns={"Job": "income"})).column == "Status"
    adult_like = df.drop(columns=["rownames"])[["Seniority", "Price", "Home", "Job"]]
    assert suggest_target(adult_like).column == "Job" and "last column" in suggest_target(adult_like).reason
    none = pd.DataFrame({"a": np.arange(50.0) / 7, "b": np.arange(50) * 1.5})
    tip = suggest_target(none)
    assert tip.column is None and "pick the label column" in tip.reason


def test_table_names_rows_by_the_users_key(tmp_path):
    df = credit_like(200)
    path = tmp_path / "credit.csv"
    df.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SchemaWarning)
        t = load_table(path, target="Status")
    assert t.key == "rownames" and t.schema.target == "Status" and "rownames" not in t.data.columns
    ids = np.array([5, 0, 17])
    assert list(t.key_of(ids)) == list(df["rownames"].iloc[ids])
    assert t.row_names(ids) == [f"rownames {k}" for k in df["rownames"].iloc[ids]]
    frame = pd.DataFrame({"row_id": ids, "copies": [3, 2, 1]})
    named = t.with_keys(frame)
    assert list(named.columns) == ["rownames", "row_id", "copies"]
    assert list(t.with_keys(frame, keep_row_id=False).columns) == ["rownames", "copies"]
    # subsets and drops keep each row's own key
    sub, rest = t.subset([17, 5]), t.drop([0, 5])
    assert list(sub.keys) == list(df["rownames"].iloc[[17, 5]])
    assert len(rest.keys) == len(t) - 2 and rest.key_of([17])[0] == df["rownames"].iloc[17]
    # written back with its key, in the user's column order, and read again the same
    back = t.to_frame(order=list(df.columns), row_id=False)
    assert list(back.columns) == list(df.columns)
    pd.testing.assert_series_equal(back["rownames"], df["rownames"], check_dtype=False)
    again = table_from_frame(t.to_frame(), t.schema, row_id_column="row_id")
    assert list(again.keys) == list(t.keys) and (again.row_ids == t.row_ids).all()


def test_tables_without_a_key_name_rows_by_row_id(sample):
    train, _ = sample
    assert train.key is None and train.row_names([3]) == ["row 3"] and list(train.key_of([3])) == [3]
    frame = pd.DataFrame({"row_id": [3]})
    assert train.with_keys(frame) is frame
    with pytest.raises(KeyError):
        train.key_of([10**9])


def test_a_key_named_by_the_schema_must_be_in_the_training_file(tmp_path):
    df = credit_like(100)
    schema = Schema(numerical=("Age",), categorical=("Job",), target="Status", key="rownames")
    with pytest.raises(BadTable, match="'rownames': the row key named in the schema is not in the file"):
        table_from_frame(df.drop(columns=["rownames"]), schema, source="t.csv")
    train = table_from_frame(df, schema, source="t.csv")
    # a hold-out with the key keeps it, a synthetic table without one is fine
    (tmp_path / "h.csv").write_text(df.to_csv(index=False))
    assert load_companion(train, tmp_path / "h.csv", role="test").key == "rownames"
    (tmp_path / "s.csv").write_text(df.drop(columns=["rownames"]).to_csv(index=False))
    assert load_companion(train, tmp_path / "s.csv").key is None


def test_schema_key_round_trips_and_edits():
    s = Schema(numerical=("Age",), categorical=("Job", "nr"), target="Status", key="rownames")
    assert Schema.from_dict(json.loads(json.dumps(s.to_dict()))) == s and s.kind_of("rownames") == "key"
    assert Schema.from_dict({"numerical": ["a"], "categorical": []}).key is None
    moved = s.with_overrides({"nr": "key"})
    assert moved.key == "nr" and "rownames" in moved.excluded and "nr" not in moved.columns
    assert s.with_overrides({"rownames": "numerical"}).key is None
    with pytest.raises(BadTable, match="'Age' is the row key and has another role"):
        Schema(numerical=("Age",), categorical=(), key="Age")
    with pytest.raises(BadTable, match="'key' must be a column name"):
        Schema.from_dict({"numerical": ["a"], "key": 3}, source="m.json")


def test_target_replaces_the_target_of_a_given_schema():
    df = credit_like(100)
    schema = Schema(numerical=("Age",), categorical=("Job", "Records"), target="Status", key="rownames")
    t = table_from_frame(df, schema, target="Records")
    assert t.schema.target == "Records" and "Status" in t.schema.categorical and t.schema.task == "binary"
    with pytest.raises(BadTable, match="'nope': target column not in the table"):
        table_from_frame(df, schema, target="nope")


def test_an_inferred_schema_without_target_says_what_it_would_suggest():
    with pytest.warns(SchemaWarning, match="no target given, so none is measured \\(suggested: 'Status'"):
        table_from_frame(credit_like(200), source="credit.csv")


# ------------------------------------------------------------------ SDV metadata read fully or refused
def sdv(columns, **table):
    return {"METADATA_SPEC_VERSION": "V1", "tables": {"credit": {"columns": columns, **table}}, "relationships": []}


def test_sdv_id_is_the_key_and_ordinal_and_pii_are_said():
    meta = sdv({"rownames": {"sdtype": "id"}, "Status": {"sdtype": "categorical"}, "Age": {"sdtype": "numerical"},
                "Job": {"sdtype": "ordinal"}, "Home": {"sdtype": "email", "pii": True},
                "Records": {"sdtype": "boolean"}}, primary_key="rownames")
    s = Schema.from_sdv(meta, target="Status")
    assert s.key == "rownames" and s.categorical == ("Job", "Records") and s.excluded == ("Home",)
    notes = " | ".join(s.sdv_notes())
    assert "Job (ordinal), Records (boolean) read as categorical" in notes
    assert "personal data" in notes and "Home (email)" in notes and "rownames (id) is the row key" in notes
    df = credit_like(100)[["rownames", "Status", "Age", "Job", "Home", "Records"]]
    t = table_from_frame(df, s, source="credit.csv")
    assert t.key == "rownames" and list(t.data.columns) == ["Age", "Job", "Records", "Status"]
    # the metadata written back is read back the same (the key as the primary key)
    back = Schema.from_sdv(s.to_sdv(), target="Status")
    assert back.key == "rownames" and back.columns == s.columns


def test_a_data_column_the_sdv_metadata_does_not_list_is_refused():
    meta = sdv({"Status": {"sdtype": "categorical"}, "Age": {"sdtype": "numerical"}})
    s = Schema.from_sdv(meta, target="Status")
    df = credit_like(100)[["Status", "Age", "Job"]]
    with pytest.raises(BadTable, match="credit.csv: column 'Job': in the data but not in the SDV metadata"):
        table_from_frame(df, s, source="credit.csv")
    # the hold-out and the synthetic table are read with the training table's columns only
    train = table_from_frame(df[["Status", "Age"]], s, source="credit.csv")
    assert len(table_from_frame(df, train.schema, source="syn.csv", role="synthetic")) == 100
