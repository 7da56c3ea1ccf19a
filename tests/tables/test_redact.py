"""Redaction (memviz.tables.redact): ranges from the whole training column, keyed hashes, nothing raw left."""
import re

import numpy as np
import pandas as pd
import pytest
from planted import SCHEMA, planted_finished, planted_train

from memviz.errors import MemvizError
from memviz.leaks.rows import copies_of, most_copied
from memviz.tables.redact import SUPPRESSED, bin_edges, category_labels, joint_k, redact, redact_joint
from memviz.tables.schema import Schema


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return planted_finished(tmp_path_factory)


# --------------------------------------------------------------------------- redaction
def _parse_range(label: str) -> tuple[float, float]:
    a, b = label.split(" – ")
    return float(a.replace(",", "")), float(b.replace(",", ""))


def test_redact_hides_every_raw_value_and_keeps_shape():
    train = planted_train(3)
    df = train.data.copy()
    df.loc[df.index[0], "a"] = np.nan
    df.loc[df.index[1], "c1"] = None
    df["extra"] = np.arange(len(df))
    red = redact(df, SCHEMA, salt="k")
    assert red.shape == df.shape and red.index.equals(df.index) and list(red.columns) == list(df.columns)
    for col in SCHEMA.columns:
        raw = df[col].astype(str).to_numpy()
        assert not np.any(red[col].astype(str).to_numpy() == raw), col
        assert not red[col].astype(str).str.contains("SECRET").any()
    assert red.loc[df.index[0], "a"] == "missing" and red.loc[df.index[1], "c1"] == "missing"
    for v, lab in zip(df["a"].iloc[1:], red["a"].iloc[1:]):
        lo, hi = _parse_range(lab)
        assert lo <= v < hi and hi - lo < df["a"].max() - df["a"].min()
    # equal categories keep equal labels, different ones different labels
    codes = red["c2"].to_numpy()
    for v in df["c2"].unique():
        assert len(set(codes[df["c2"].to_numpy() == v])) == 1
    assert len(set(codes)) == df["c2"].nunique()
    assert all(re.fullmatch(r"cat-[0-9a-f]{4,}", x) for x in codes)
    assert (red["extra"] == df["extra"]).all()  # not a schema column
    assert redact(df, SCHEMA, salt="k").equals(red)
    assert not redact(df, SCHEMA, salt="other")["c2"].equals(red["c2"])


def test_redact_constant_column_still_a_range():
    schema = Schema(numerical=("x",), categorical=(), target=None)
    df = pd.DataFrame({"x": [42.0, 42.0, 42.0]})
    red = redact(df, schema)
    lo, hi = _parse_range(red["x"].iloc[0])
    assert lo <= 42 < hi and "42" != red["x"].iloc[0]


def test_redaction_ranges_come_from_the_whole_training_column():
    """Regression: ranges followed the spread of the rows on screen, so a day-count age shown for
    a few close rows became "14,330 – 14,340" (a birth date to within 10 days)."""
    rng = np.random.default_rng(0)
    schema = Schema(numerical=("age_days",), categorical=(), target=None)
    train = pd.DataFrame({"age_days": rng.uniform(6_500, 33_000, 3_000).round()})
    shown = pd.DataFrame({"age_days": [14_331.0, 14_335.0, 14_338.0]})
    narrow = redact(shown, schema)                                     # old behaviour without a reference
    wide = redact(shown, schema, reference=train)
    for lab in wide["age_days"]:
        lo, hi = _parse_range(lab)
        assert hi - lo >= (train["age_days"].max() - train["age_days"].min()) / 10  # years, not days
        assert ((train["age_days"] >= lo) & (train["age_days"] < hi)).sum() >= 10
    lo, hi = _parse_range(narrow["age_days"].iloc[0])
    assert hi - lo < 100                                               # what a reference prevents
    edges = bin_edges(train["age_days"].to_numpy())
    counts = np.histogram(train["age_days"], bins=edges)[0]
    assert (counts >= 10).all() and edges[0] <= train["age_days"].min() and edges[-1] > train["age_days"].max()


def test_sparse_tails_are_merged_so_no_range_singles_out_a_few_rows():
    x = np.r_[np.arange(1000.0), [99_999.0]]                            # one extreme value (a capital gain)
    edges = bin_edges(x, min_rows=10)
    counts = np.histogram(x, bins=edges)[0]
    assert (counts >= 10).all()
    schema = Schema(numerical=("x",), categorical=(), target=None)
    red = redact(pd.DataFrame({"x": [99_999.0, -5.0, 250_000.0]}), schema, reference=pd.DataFrame({"x": x}))
    assert "99,999" not in " ".join(red["x"]) and red["x"].iloc[1].startswith("below")
    assert red["x"].iloc[2].endswith("or more")


def test_category_hashes_are_keyed_per_column():
    """Regression: one hash per value whatever the column, so cat-4fd1 meant 1 in every 0/1 column."""
    schema = Schema(numerical=(), categorical=("smoker", "diabetic"), target=None)
    df = pd.DataFrame({"smoker": ["1", "0", "1"], "diabetic": ["1", "1", "0"]})
    red = redact(df, schema, salt="report-1")
    assert red.loc[0, "smoker"] != red.loc[0, "diabetic"]              # same value, other column
    assert red.loc[0, "smoker"] == red.loc[2, "smoker"]                 # same value, same column
    assert redact(df, schema, salt="report-2").loc[0, "smoker"] != red.loc[0, "smoker"]  # per report
    assert category_labels(["1"], "smoker", salt="report-1")["1"] == red.loc[0, "smoker"]


def test_leak_view_redacts_with_the_training_ranges(run):
    store, res = run
    train = store.train()
    view = copies_of(store, int(most_copied(res.dynamics, n=1)["row_id"].iloc[0]), limit=3)
    assert set(view.bins) == set(SCHEMA.distance_numerical)
    t = view.table(redacted=True, salt="s")
    np.testing.assert_array_equal(view.bins["a"], bin_edges(train.data["a"].to_numpy()))
    assert (t["a"] == redact(view.table()[["a"]], SCHEMA, reference=train.data)["a"]).all()


# --------------------------------------------------------------------------- joint k
def _brute_group(shown_row, reference, schema, cats):
    """Training rows matching a shown (redacted) row on every non-suppressed cell: numbers from the raw
    values inside the shown range, categories from ``cats`` (the reference redacted with the same key)."""
    ok = np.ones(len(reference), dtype=bool)
    for c, lab in shown_row.items():
        if lab == SUPPRESSED or c not in schema.columns:
            continue
        if c in schema.distance_numerical:
            v = reference[c].to_numpy(dtype=float)
            if lab == "missing":
                ok &= np.isnan(v)
            else:
                lo, hi = _parse_range(lab)
                ok &= (v >= lo) & (v < hi)
        else:
            ok &= cats[c].to_numpy() == lab
    return int(ok.sum())


def test_joint_k_states_what_the_per_column_ranges_leave(sample):
    train = sample[0]
    num = list(train.schema.numerical)
    jk = joint_k(train.data, train.schema, reference=train.data, columns=num)
    red = redact(train.data[num], train.schema, reference=train.data)
    sizes = red.groupby(num)[num[0]].transform("size")
    assert jk.k == sizes.min() and jk.n_below == int((sizes < 10).sum()) and jk.n_unique == int((sizes == 1).sum())
    assert 0.015 < jk.n_unique / len(train) < 0.025 and 0.06 < jk.n_below / len(train) < 0.10   # issue 24's 1.8 / 8.0 %
    assert not jk.holds and "single them out" in jk.sentence()
    assert jk.to_dict()["k"] == jk.k


@pytest.mark.parametrize("mode", ["coarsen", "suppress"])
def test_redact_joint_enforces_k_checked_from_raw_values(sample, mode):
    train = sample[0]
    shown = train.data.iloc[:25]
    out, jk = redact_joint(shown, train.schema, reference=train.data, k=10, mode=mode, salt="s")
    assert out.shape == shown.shape and out.index.equals(shown.index)
    assert jk.holds and jk.k >= 10 and jk.n_below == 0
    cats = redact(train.data, train.schema, salt="s")
    for i in range(len(out)):
        assert _brute_group(out.iloc[i], train.data, train.schema, cats) >= 10
    assert (out == SUPPRESSED).to_numpy().sum() == jk.n_suppressed
    for col in train.schema.columns:                    # nothing raw left
        assert not (out[col].astype(str).to_numpy() == shown[col].astype(str).to_numpy()).any()


def test_coarsening_widens_ranges_before_suppressing(sample):
    train = sample[0]
    num = list(train.schema.numerical)
    shown = train.data.iloc[:200]
    _, coarse = redact_joint(shown, train.schema, reference=train.data, columns=num, mode="coarsen")
    _, supp = redact_joint(shown, train.schema, reference=train.data, columns=num, mode="suppress")
    assert coarse.holds and supp.holds
    base = {c: len(bin_edges(train.data[c].to_numpy(dtype=float))) - 1 for c in num}
    assert supp.n_ranges == base and sum(coarse.n_ranges.values()) < sum(base.values())
    assert coarse.n_suppressed < supp.n_suppressed


def test_redact_joint_stated_only_and_bad_mode(sample):
    train = sample[0]
    out, jk = redact_joint(train.data.iloc[:10], train.schema, reference=train.data, enforce=False)
    assert jk.n_suppressed == 0 and out.equals(redact(train.data.iloc[:10], train.schema, reference=train.data))
    with pytest.raises(MemvizError, match="mode"):
        redact_joint(train.data.iloc[:10], train.schema, reference=train.data, mode="blur")
