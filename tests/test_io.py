"""memviz.io: CSV files for people neutralise spreadsheet formulas (OWASP), numbers stay numbers;
an atomic write to a folder names the folder.

At 9a38467 there was no neutralising writer: ``memviz prune --out`` and the dashboard's
downloads wrote ``=HYPERLINK(…)``, ``@SUM(1+1)`` and ``+cmd|…`` as they were.
"""
from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.errors import MemvizError
from memviz.io import (
    FORMULA_STARTS,
    atomic_write_text,
    csv_bytes,
    export_csv,
    neutralise_csv,
)

PAYLOADS = ['=HYPERLINK("http://127.0.0.1:8599/x","click")', "@SUM(1+1)", "+cmd|' /C calc'!A0", "-2+3+cmd|x",
            "\t=1+1", "\r=1+1", "=1"]


def is_plain_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return v.strip() == v and v.lower().lstrip("+-") not in ("inf", "infinity", "nan")


def expected(v):
    if isinstance(v, str) and v.startswith(FORMULA_STARTS) and not is_plain_number(v):
        return "'" + v
    return v


texts = st.one_of(st.sampled_from(PAYLOADS + ["-5", "+1.5e3", "-.5", "ok", "a=b", "", "'=x", "-", "+", "@"]),
                  st.text(alphabet="=+-@\t\r0123456789.eE abc|!()", max_size=8))


@settings(max_examples=200, deadline=None)
@given(cells=st.lists(st.tuples(texts, st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=False),
                                st.one_of(st.none(), texts)), min_size=1, max_size=12),
       headers=st.lists(texts, min_size=4, max_size=4, unique=True))
def test_neutralise_prefixes_exactly_the_formula_cells_and_keeps_numbers(cells, headers):
    df = pd.DataFrame(cells, columns=headers)
    df[headers[3]] = df[headers[3]].astype(object)
    before = df.copy()
    out = neutralise_csv(df)
    pd.testing.assert_frame_equal(df, before)                         # the input is never changed
    assert list(out.columns) == [expected(h) for h in headers]
    for j in (0, 3):                                                  # text: exactly the formula cells get a '
        assert [expected(v) for v in df.iloc[:, j]] == list(out.iloc[:, j])
    for j in (1, 2):                                                  # numbers stay numbers
        pd.testing.assert_series_equal(out.iloc[:, j], df.iloc[:, j], check_names=False)
    back = pd.read_csv(io.BytesIO(csv_bytes(df)), keep_default_na=False, dtype=str)
    np.testing.assert_array_equal(back.iloc[:, 1].astype(np.int64).to_numpy(), df.iloc[:, 1].to_numpy())
    for v in back.iloc[:, 0].astype(str):                             # nothing a spreadsheet would run
        assert not v.startswith(FORMULA_STARTS) or is_plain_number(v)
    assert csv_bytes(df, raw=True) == df.to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def test_the_issue_payloads_and_category_columns(tmp_path):
    df = pd.DataFrame({"=cmd|x": PAYLOADS, "job": pd.Categorical(PAYLOADS), "age": np.arange(-3, 4)})
    export_csv(tmp_path / "o.csv", df)
    back = pd.read_csv(tmp_path / "o.csv", keep_default_na=False)
    assert list(back.columns) == ["'=cmd|x", "job", "age"]
    assert back["job"].tolist() == ["'" + p for p in PAYLOADS] == back["'=cmd|x"].tolist()
    assert back["age"].tolist() == list(range(-3, 4))
    export_csv(tmp_path / "raw.csv", df, raw=True)
    assert (tmp_path / "raw.csv").read_bytes() == df.to_csv(index=False, lineterminator="\r\n").encode("utf-8")
    clean = pd.DataFrame({"a": ["x", "y"], "n": [-1.5, 2.0]})
    assert neutralise_csv(clean) is clean                             # nothing to change: no copy


def test_a_carriage_return_inside_a_cell_cannot_start_a_row():
    """pandas' default ``\n`` line ends leave a cell holding ``\r`` unquoted; a spreadsheet then
    breaks the row there and runs what follows (``x\r=1+1``)."""
    df = pd.DataFrame({"a": ["x\r=1+1", "y\n@SUM(1)"], "\r=h": [1, 2]})
    rows = list(csv.reader(io.StringIO(csv_bytes(df).decode("utf-8"), newline="")))
    assert rows == [["a", "'\r=h"], ["x\r=1+1", "1"], ["y\n@SUM(1)", "2"]]


def test_an_atomic_write_onto_a_folder_names_the_folder(tmp_path):
    """At 9a38467 the error named the hidden temporary file (``.out.x1y2.tmp: Is a directory``)."""
    (tmp_path / "out").mkdir()
    with pytest.raises(MemvizError, match=f"^{tmp_path / 'out'}: is a folder"):
        atomic_write_text(tmp_path / "out", "x")
    with pytest.raises(MemvizError, match="is a folder"):
        export_csv(tmp_path / "out", pd.DataFrame({"a": [1]}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]     # no temporary file left behind
