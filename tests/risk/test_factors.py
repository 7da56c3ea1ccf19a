"""Per-row risk factors (memviz.risk.factors) on tables it was not designed for: each factor against its formula
on planted cases, isolation against a row-at-a-time loop of the distance, the planted outlier ranked first."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.errors import MemvizError
from memviz.risk.factors import isolation_order, risk_factors
from memviz.tables.data import table_from_frame
from memviz.tables.encoding import canonical_value
from unseen_tables import credit_like


def _table(df, target="Status"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return table_from_frame(df, target=target)


@pytest.fixture(scope="module")
def credit():
    """The credit-like table (integer key with gaps, a label named Status, missing values) with one planted outlier:
    numbers far beyond every other row's and categories no other row has."""
    df = credit_like(200, seed=4)
    out = df.iloc[[7]].copy()
    out[["Seniority", "Age", "Income", "Amount", "Price"]] = [39, 69, 3000.0, 20000, 40000.0]
    out[["Home", "Job", "Records"]] = ["castle", "astronaut", "yes"]
    out["rownames"] = 99_999
    return _table(pd.concat([df, out], ignore_index=True)), 200


def _all_distances(table, distance):
    """d(i, j) for every pair, one row at a time (the formula of memviz.engine.neighbors, as tests/naive.py)."""
    s = table.schema
    num, cat = list(s.distance_numerical), list(s.distance_categorical)
    x = table.data[num].to_numpy(dtype=float)
    x = np.where(np.isnan(x), np.nanmean(x, axis=0), x)
    if distance == "standardized":
        lo, rng = x.min(0), x.max(0) - x.min(0)
        x = (x - lo) / np.where(rng > 0, rng, 1.0)
    c = np.array([[canonical_value(v) for v in table.data[col]] for col in cat], dtype=object).T
    n = len(num) + len(cat)
    out = np.empty((len(x), len(x)))
    for i in range(len(x)):
        e = np.sqrt(((x - x[i]) ** 2).sum(1))
        if distance == "paper":
            e = (e - e.min()) / (e.max() - e.min()) if e.max() > e.min() else np.zeros_like(e)
        out[i] = (e + (c != c[i]).sum(1)) / n
    return out


@pytest.mark.parametrize("distance", ["paper", "standardized"])
def test_isolation_is_the_kth_nearest_other_row_and_the_planted_outlier_ranks_first(credit, distance):
    table, planted = credit
    f = risk_factors(table, k=5, distance=distance)
    d = _all_distances(table, distance)
    np.fill_diagonal(d, np.inf)
    want = np.sort(d, axis=1)[:, 4]
    assert np.allclose(f.frame["isolation"].to_numpy(), want, rtol=1e-9, atol=1e-12)
    assert np.allclose(f.frame["nearest"].to_numpy(), np.sort(d, axis=1)[:, 0], rtol=1e-9, atol=1e-12)
    assert f.order()[0] == planted                       # the planted outlier first, by its row_id
    assert f.frame.loc[planted, "isolation_pct"] == pytest.approx(200 / 201)
    assert f.frame.loc[planted, "isolation_ratio"] == pytest.approx(want[planted] / np.median(want))
    assert table.with_keys(f.frame.reset_index()).iloc[planted]["rownames"] == 99_999   # the user's key


def test_rarity_extremes_and_combinations_by_their_formulas(credit):
    table, planted = credit
    f = risk_factors(table).frame
    n = len(table)
    row = f.loc[planted]
    assert row["value_rarity"] == pytest.approx(1 / n) and row["rarest_value_column"] in ("Home", "Job")
    assert row["pair_rarity"] == pytest.approx(1 / n) and row["combination_count"] == 1
    assert row["extremeness"] == pytest.approx(1 / n)    # the largest value of several columns: 1 row that far out
    # value rarity of every row against a direct count, the rarest column's share
    for rid in f.index[:20]:
        shares = [(table.data[c].astype(str) == str(table.data.loc[rid, c])).mean()
                  for c in table.schema.distance_categorical]
        assert f.loc[rid, "value_rarity"] == pytest.approx(min(shares))
    # extremeness: the tail share of the row's most extreme number, missing numbers left out of their column
    inc = table.data["Income"]
    rid = int(inc.idxmin())
    assert f.loc[rid, "extremeness"] <= 1 / n + 1e-12
    assert np.isfinite(f["extremeness"]).all()


def test_a_rare_pair_of_common_values_is_named_as_the_pair():
    """Two values common alone (half the rows each) whose combination only one row holds: the pair, not a value."""
    rng = np.random.default_rng(0)
    n = 60
    a = np.array(["x", "y"] * (n // 2))
    b = np.where(a == "x", "p", "q")
    b[0] = "q"                                           # the one row with a = x and b = q
    df = pd.DataFrame({"a": a, "b": b, "v": rng.normal(size=n), "label": rng.choice(["s", "t"], n)})
    f = risk_factors(_table(df, "label")).frame
    assert f.loc[0, "rarest_pair"] == "a | b" and f.loc[0, "pair_rarity"] == pytest.approx(1 / n)
    assert f.loc[0, "value_rarity"] == pytest.approx(0.5)


def test_exact_and_near_duplicates_and_isolation_with_more_duplicates_than_k():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"u": rng.uniform(0, 100, 80), "w": rng.uniform(0, 100, 80)})
    dup = pd.concat([df.iloc[[3]]] * 6, ignore_index=True)          # row 3 and six exact copies of it
    near = df.iloc[[5]].copy()
    near["u"] += 1e-6                                                 # a near duplicate of row 5
    table = _table(pd.concat([df, dup, near], ignore_index=True), None)
    f = risk_factors(table, k=5).frame
    assert f.loc[3, "exact_duplicates"] == 6 and f.loc[80, "exact_duplicates"] == 6
    assert f.loc[3, "isolation"] == 0.0 and f.loc[80, "isolation"] == 0.0   # 6 others at distance 0 >= k
    assert f.loc[5, "near_duplicates"] >= 1 and f.loc[5, "exact_duplicates"] == 0
    assert f.loc[0, "near_duplicates"] == 0
    assert f["value_rarity"].eq(1.0).all() and f["rarest_pair"].isna().all()   # all-numerical: no category


def test_all_categorical_table_has_no_extremes():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"c": rng.choice(list("abc"), 50), "d": rng.choice(list("xy"), 50),
                       "label": rng.choice(["0", "1"], 50)})
    f = risk_factors(_table(df, "label")).frame
    assert f["extremeness"].eq(1.0).all() and f["extreme_column"].isna().all()
    assert (f["combination_count"] >= 1).all()


def test_isolation_order_breaks_ties_by_the_lowest_row_id():
    assert isolation_order(np.array([0.5, 0.9, 0.9, 0.1]), np.array([40, 30, 10, 20])).tolist() == [10, 30, 40, 20]


def test_a_k_the_table_cannot_give_is_one_line(credit):
    table, _ = credit
    with pytest.raises(MemvizError, match=r"k=201 must be a whole number from 1 to 200 \(the table has 201 rows\)"):
        risk_factors(table, k=201)
