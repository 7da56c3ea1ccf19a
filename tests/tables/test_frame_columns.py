"""Issue 41 item 6: a DataFrame handed to the Python API with column names a file cannot have, or date and
duration columns, gets one line or a stated choice, never a traceback or nanoseconds measured as numbers."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import memviz
from memviz.errors import BadTable
from memviz.tables.data import SchemaWarning, table_from_frame
from memviz.tables.schema import Schema


def _frame(n=300):
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": np.arange(n) % 7 * 1.5, "b": np.array(["x", "y", "z"])[np.arange(n) % 3],
                         "c": rng.normal(size=n)})


def test_repeated_column_names_are_one_line():
    df = _frame().set_axis(["a", "a", "c"], axis=1)
    with pytest.raises(BadTable, match=r"t\.csv: column 'a' appears 2 times"):
        table_from_frame(df, source="t.csv")
    with pytest.raises(BadTable, match="column 'a' appears 2 times"):
        memviz.audit(df.iloc[:200], df.iloc[200:250], df.iloc[250:], evidence=False, quality=False, device="cpu")


def test_column_names_that_are_not_text_are_one_line():
    df = _frame().set_axis(pd.MultiIndex.from_tuples([("a", "1"), ("b", "2"), ("c", "3")]), axis=1)
    with pytest.raises(BadTable, match=r"t: column names must be single labels \(a MultiIndex"):
        table_from_frame(df, source="t")


@pytest.mark.parametrize("extra", [pd.date_range("2020-01-01", periods=300),
                                   pd.to_timedelta(np.arange(300), unit="D")])
def test_date_and_duration_columns_are_left_out_with_a_notice_when_inferred_and_refused_when_declared(extra):
    df = _frame().assign(d=extra)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = table_from_frame(df, source="t.csv")
    assert "d" not in t.schema.columns and "d" in t.schema.excluded
    assert any(issubclass(w.category, SchemaWarning) and "'d'" in str(w.message) and "dates" in str(w.message)
               for w in caught)
    declared = Schema(numerical=("a", "c", "d"), categorical=("b",), target=None, task="none")
    with pytest.raises(BadTable, match=r"t\.csv: column 'd': holds dates or durations"):
        table_from_frame(df, declared, source="t.csv")
