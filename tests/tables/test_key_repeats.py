"""A single-column row key names each training row once. A key that repeats a value would name two people alike,
and the officer would look up the wrong one: a declared key (meta.json, --key, SDV's primary key) that repeats is
refused in one line naming the column and the value; a column inference took for a key (at least 95 % distinct)
that repeats is left out of the distance and names no row. A key with missing cells but no repeat stays the key."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.errors import BadTable
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema
from unseen_tables import credit_like


def _with_key(n=400, repeat=True, missing=False):
    df = credit_like(n, seed=5, key="customer_no")
    keys = df["customer_no"].to_numpy().copy()
    if repeat:
        keys[7] = keys[3]                                 # two people, one number
    df["customer_no"] = keys.astype(float) if missing else keys
    if missing:
        df.loc[11, "customer_no"] = np.nan
    return df


def test_a_declared_key_that_repeats_a_value_is_refused_in_one_line():
    df = _with_key()
    schema = table_from_frame(df.drop(columns=["customer_no"]), source="t").schema
    declared = Schema(numerical=schema.numerical, categorical=schema.categorical, target=schema.target,
                      task=schema.task, key="customer_no")
    value = df["customer_no"].iloc[3]
    with pytest.raises(BadTable) as e:
        table_from_frame(df, declared, source="people.csv")
    msg = str(e.value)
    assert "\n" not in msg and "people.csv" in msg and "'customer_no'" in msg and str(value) in msg and "2 rows" in msg
    with pytest.raises(BadTable, match="customer_no"):
        table_from_frame(df, None, source="people.csv", overrides={"customer_no": "key"})


def test_an_inferred_key_that_repeats_is_left_out_and_names_no_row():
    df = _with_key()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = table_from_frame(df, None, source="people.csv")
    assert t.key is None and t.keys is None
    assert "customer_no" not in t.schema.columns and "customer_no" in t.schema.excluded
    said = " ".join(str(w.message) for w in caught)
    assert "customer_no" in said and "repeats" in said


def test_a_key_with_missing_cells_but_no_repeat_stays_the_key():
    df = _with_key(repeat=False, missing=True)
    t = table_from_frame(df, None, source="people.csv")
    assert t.key == "customer_no"
    assert pd.isna(t.keys.iloc[11]) and t.keys.dropna().is_unique
