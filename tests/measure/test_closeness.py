"""How close a "copy" really is: spreads, gaps, exact / near-exact flags, ratios of 0 from scaling."""
import numpy as np
import pandas as pd
import pytest

from memviz.errors import MemvizError
from memviz.measure.closeness import (
    NEAR_GAP,
    ZERO_RATIO,
    closeness,
    fit_spread,
    nn1_closeness,
    summary,
)
from memviz.measure.memorization import memorization
from memviz.tables.data import Table
from memviz.tables.schema import Schema

SCHEMA = Schema(numerical=("age", "w"), categorical=("c",), target=None, name="tiny")


def tiny_train() -> Table:
    df = pd.DataFrame({"age": [31.0, 35.0, 40.0, 52.0, 28.0], "w": [1_000.0, 5_000.0, 100_000.0, 60_000.0, 9_000.0],
                       "c": ["A", "B", "A", "B", "C"]}, index=pd.Index([10, 11, 12, 13, 14], name="row_id"))
    return Table(df, SCHEMA, "tiny")


def test_an_age_31_row_with_a_copy_aged_90_is_marked_as_a_ratio_of_zero_from_scaling():
    train = tiny_train()
    gen = pd.DataFrame({"age": [90.0], "w": [1_000.0], "c": ["A"]})
    res = memorization(train, gen, device="cpu")
    assert res.ratio[0] == 0.0 and res.nn1[0] == 10 and res.memorized[0]     # the paper calls it a copy
    c = nn1_closeness(train, gen, res.nn1, ratio=res.ratio)
    row = c.pairs.iloc[0]
    assert row["zero_by_scaling"] and row["level"] == "differs" and not row["exact"] and not row["near_exact"]
    assert row["worst_column"] == "age" and row["e_num"] == 59.0
    iqr = np.subtract(*np.quantile(train.data["age"], [0.75, 0.25]))
    assert c.gaps.loc[0, "age"] == pytest.approx(59.0 / iqr) and c.gaps.loc[0, "w"] == 0.0
    assert c.gap_text().iloc[0].startswith("age +")
    # the standardized distance has no per-row scaling: nothing to mark
    std = memorization(train, gen, device="cpu", distance="standardized")
    assert not nn1_closeness(train, gen, std.nn1, ratio=std.ratio, distance="standardized").pairs["zero_by_scaling"][0]


def test_on_the_sample_an_age_31_row_aged_90_is_far_though_its_ratio_shows_0(sample):
    train, _ = sample
    d = train.data
    rid = int(d.index[d["age"] == 31][0])
    gen = d.loc[[rid]].reset_index(drop=True).assign(age=90)
    res = memorization(train, gen, device="cpu")
    assert res.nn1[0] == rid and res.ratio[0] < ZERO_RATIO                    # shown as 0.000
    row = nn1_closeness(train, gen, res.nn1, ratio=res.ratio).pairs.iloc[0]
    assert row["zero_by_scaling"] and row["level"] == "differs" and row["max_gap"] > 1


def test_an_exact_copy_is_exact_and_a_small_gap_is_near_exact():
    train = tiny_train()
    src = train.data.reset_index(drop=True)
    gen = pd.concat([src.iloc[[0]], src.iloc[[1]].assign(age=35.5), src.iloc[[2]].assign(c="C")], ignore_index=True)
    gen["c"] = gen["c"].astype(object)
    ref = src.iloc[[0, 1, 2]].reset_index(drop=True)
    c = closeness(gen, ref, train, ratio=np.zeros(3))
    p = c.pairs
    assert list(p["level"]) == ["exact", "near-exact", "differs"]
    assert p["exact"].tolist() == [True, False, False] and p["near_exact"].tolist() == [False, True, False]
    assert not p["zero_by_scaling"][0]                                         # an exact copy's 0 is deserved
    assert p["zero_by_scaling"][1]                                             # numbers differ, categories equal
    assert not p["zero_by_scaling"][2]                                         # a category differs
    assert p["max_gap"][1] <= NEAR_GAP and p["worst_column"][2] == "c" and p["n_cat_diff"][2] == 1
    assert c.identical_share == pytest.approx(1 / 3)
    assert c.gap_text().tolist()[0] == "none" and c.gap_text().tolist()[2] == "c differs"


def test_missing_values_and_huge_numbers():
    train = tiny_train()
    gen = pd.DataFrame({"age": [np.nan, np.nan, 1e300], "w": [1_000.0, 1_000.0, -1e300], "c": ["A", "A", "A"]})
    ref = pd.DataFrame({"age": [np.nan, 31.0, 31.0], "w": [1_000.0, 1_000.0, 1_000.0], "c": ["A", "A", "A"]})
    p = closeness(gen, ref, train).pairs
    assert p["exact"][0] and not p["exact"][1] and np.isinf(p["max_gap"][1]) and not p["near_exact"][1]
    assert np.isfinite(p["e_num"][2]) and p["e_num"][2] > 1e300                # no overflow to inf
    with pytest.raises(MemvizError):
        closeness(gen, ref.iloc[:2], train)
    with pytest.raises(MemvizError, match="ratio"):
        closeness(gen, ref, train, ratio=[0.0])


def test_spread_is_the_iqr_else_the_standard_deviation_else_one():
    df = pd.DataFrame({"iqr": np.arange(100.0), "zeros": np.r_[np.zeros(95), np.full(5, 5_000.0)],
                       "const": np.full(100, 7.0), "k": ["a"] * 100})
    train = Table(df, Schema(numerical=("iqr", "zeros", "const"), categorical=("k",), target=None), "t")
    s = fit_spread(train)
    assert s.kinds == ("IQR", "std", "unit")
    assert s.values[0] == pytest.approx(49.5) and s.values[1] == pytest.approx(np.std(df["zeros"])) and s.values[2] == 1
    # a range-scaled gap of 5,000 on a mostly-zero column would read "close"; in SDs it does not
    gen = df.iloc[[0]].assign(zeros=5_000.0)
    assert not closeness(gen, df.iloc[[0]], train).pairs["near_exact"].iloc[0]


def test_identical_share_equals_exact_row_membership(sample):
    """g equals some training row exactly when it equals its NN1 (module docstring)."""
    train, test = sample
    planted = train.data.iloc[[5, 17, 17, 400]].reset_index(drop=True)
    gen = pd.concat([test.data.iloc[:300].reset_index(drop=True), planted], ignore_index=True)
    res = memorization(train, gen, device="cpu")
    c = nn1_closeness(train, gen, res.nn1, ratio=res.ratio)
    cols = list(train.schema.columns)
    members = gen[cols].merge(train.data[cols].drop_duplicates(), how="left", indicator=True)["_merge"] == "both"
    assert int(c.pairs["exact"].sum()) == int(members.sum()) >= 4
    assert c.pairs["exact"].iloc[-4:].all()
    s = summary(c, res.memorized)
    assert s["n_identical"] == int(members.sum()) and s["n_flagged"] == int(res.memorized.sum())
    assert s["flagged_exact"] + s["flagged_near_exact"] + s["flagged_differs"] == pytest.approx(1.0)
    # fresh real rows: the paper flags about a quarter, and almost none of them is near
    res = memorization(train, test.data, device="cpu")
    fresh = summary(nn1_closeness(train, test.data, res.nn1, ratio=res.ratio), res.memorized)
    assert fresh["n_flagged"] > 150 and fresh["flagged_differs"] > 0.9
