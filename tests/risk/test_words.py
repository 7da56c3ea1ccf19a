"""Why a row is at risk, in words (memviz.risk.words): the planted outlier's reasons, a rare combination named by
its columns and values, redaction that leaves no raw value, and a row with nothing to say."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.risk.factors import risk_factors
from memviz.risk.words import row_reasons, row_sentence
from memviz.tables.data import table_from_frame


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(0)
    n = 120
    occ = np.array(["clerk", "nurse"] * (n // 2), dtype=object)
    country = np.where(occ == "clerk", "Norway", "Chile").astype(object)
    df = pd.DataFrame({"id": np.arange(10, 10 + 3 * n, 3), "occupation": occ, "country": country,
                       "hours": rng.normal(40, 3, n).round(1), "pay": rng.normal(3000, 200, n).round(0),
                       "label": rng.choice(["a", "b"], n)})
    df.loc[0, ["occupation", "country"]] = ["nurse", "Norway"]          # a rare pair of two common values
    df.loc[1, ["hours", "pay"]] = [95.0, 98_765.0]                        # an extreme, isolated row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return table_from_frame(df, target="label")


def test_the_planted_rows_reasons(table):
    f = risk_factors(table)
    far = row_sentence(table, f, 1)
    assert far.startswith("At risk: ") and "× as isolated as a typical row" in far
    assert "more isolated than 9" in far and "extreme value: hours = 95 (the highest 0.8 % of rows)" in far
    pair = row_reasons(table, f, 0)
    assert any(r == "rare combination: occupation = nurse with country = Norway (1 of 120 rows)" for r in pair)


def test_redacted_reasons_name_no_raw_value(table):
    f = risk_factors(table)
    text = row_sentence(table, f, 0, redacted=True, salt="k") + row_sentence(table, f, 1, redacted=True, salt="k")
    for raw in ("nurse", "Norway", "= 95 ", "95.0"):
        assert raw not in text
    assert "occupation = cat-" in text and "hours = " in text


def test_a_typical_row_has_nothing_to_say(table):
    f = risk_factors(table)
    typical = int(f.frame["isolation_pct"].sub(0.5).abs().idxmin())
    reasons = row_reasons(table, f, typical)
    assert all("isolated" not in r for r in reasons)
    with pytest.raises(KeyError):
        row_reasons(table, f, 10_000)                                     # not a row_id of the table
