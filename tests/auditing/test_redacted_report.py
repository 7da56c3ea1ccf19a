"""The redacted report shows no raw category value anywhere (issue 41, item 6).

At e9efb32 the data-copying test's sentence ("strongest among rows like: sex Female, income >50K") and
its regions were printed as they were in the redacted report, in the verdict card and under "Other tests".
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

import memviz
from memviz.tables.data import table_from_frame
from memviz.verdict.evidence_words import data_copying_sentence

TOKEN = re.compile(r"zq[a-z]{3}\d+x")


@pytest.fixture(scope="module")
def copied(sample):
    """Adult rows with every category value a unique token; a synthetic table of resampled training rows
    (data copying fires); a hold-out holding only categories the training rows have (no notices)."""
    train, test = sample
    sch = train.schema
    cats = sch.categorical + ((sch.target,) if sch.target_is_categorical else ())

    def tokens(df):
        df = df.copy()
        for c in cats:
            codes = {v: f"zq{c[:3].lower().replace('-', 'x')}{i}x" for i, v in enumerate(sorted(df[c].dropna().unique()))}
            df[c] = df[c].map(codes)
        return df
    allrows = tokens(pd.concat([train.data.head(1500), test.data.head(800)], ignore_index=True))
    tr = allrows.iloc[:1500].reset_index(drop=True)
    ho = allrows.iloc[1500:]
    seen = pd.Series(True, index=ho.index)
    for c in cats:
        seen &= ho[c].isin(set(tr[c].dropna())) | ho[c].isna()
    train_t = table_from_frame(tr, sch, source="t")
    hold_t = table_from_frame(ho[seen].reset_index(drop=True), sch, source="h")
    syn = table_from_frame(tr.sample(800, random_state=0, replace=True).reset_index(drop=True), sch, source="s")
    return memviz.audit(train_t, syn, hold_t, quality=False), train_t, syn


def test_the_redacted_report_shows_no_raw_category(copied):
    a, train, syn = copied
    assert a.evidence["data_copying"].copying and TOKEN.search(data_copying_sentence(a.evidence["data_copying"]))
    raw = a.to_html(redacted=False, train=train, synthetic=syn)
    assert TOKEN.search(raw)                                          # the raw report names them (the test can fail)
    page = a.to_html(redacted=True, train=train, synthetic=syn)
    leaks = sorted(set(TOKEN.findall(page)))
    assert leaks == [], [page[max(0, m.start() - 120):m.end()] for m in TOKEN.finditer(page)][:3]
    assert "values hidden in the redacted report" in page
