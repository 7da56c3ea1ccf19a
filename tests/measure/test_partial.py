"""Near-verbatim matching (memviz.measure.partial) against a plain loop over every training row, on a table with
missing values, a rounded and a continuous column, categories the training rows lack and repeated rows."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memviz.measure.partial import MAX_ALTERED, PartialIndex, numeric_keys, partial_matches, resolution


def _table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 30, n).astype(float),                   # whole numbers: resolution 1
        "price": np.round(rng.uniform(0, 5, n), 2),                      # cents: resolution 0.01
        "score": rng.normal(size=n),                                     # continuous: compared as it is
        "city": rng.choice(["a", "b", "c", "d"], n),
        "plan": rng.choice(["x", "y"], n),
        "flag": rng.choice(["0", "1", None], n),
        "hour": rng.integers(0, 6, n).astype(float),
    })
    df.loc[rng.random(n) < 0.05, "price"] = np.nan
    return df


NUM, CAT = ("age", "price", "score", "hour"), ("city", "plan", "flag")


def _loop(train: pd.DataFrame, query: pd.DataFrame, exclude_self: bool = False) -> np.ndarray:
    """The fewest differing columns from any (other) training row, by hand: numbers at their resolution, a missing
    value equal only to a missing value, categories as strings."""
    cols = list(NUM + CAT)

    def cell(v, c):
        if c in CAT:
            return "\0missing" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
        if np.isnan(v):
            return "\0missing"
        step = {"age": 1.0, "price": 0.01, "hour": 1.0}.get(c)
        return v if step is None else round(v / step)

    t = [[cell(v, c) for v, c in zip(row, cols)] for row in train[cols].itertuples(index=False)]
    out = []
    for i, row in enumerate(query[cols].itertuples(index=False)):
        q = [cell(v, c) for v, c in zip(row, cols)]
        best = min(sum(a != b for a, b in zip(q, r)) for j, r in enumerate(t) if not (exclude_self and j == i))
        out.append(best if best <= MAX_ALTERED else -1)
    return np.array(out)


def test_the_fewest_differing_columns_equal_a_plain_loop():
    train, query = _table(300, 0), _table(200, 1)
    query.iloc[:20] = train.iloc[:20].to_numpy()                         # verbatim
    query.iloc[20:40] = train.iloc[20:40].to_numpy()
    query.loc[20:29, "score"] = query.loc[20:29, "score"] * 1000         # one cell altered
    query.loc[30:39, ["city", "hour"]] = ["zz", 99.0]                    # two cells (a category training lacks)
    query.loc[40:44, "price"] = query.loc[40:44, "price"] + 1e-9         # within a cent: equal
    idx = PartialIndex(train, NUM, CAT)
    m = idx.match(query)
    np.testing.assert_array_equal(m.altered, _loop(train, query))
    assert (m.altered[:20] == 0).all() and (m.altered[20:30] == 1).all() and (m.altered[30:40] <= 2).all()
    assert [m.columns[c] for c in m.column[20:30]] == ["score"] * 10
    # the matched training row really is that close
    for i in np.flatnonzero(m.altered >= 0):
        cells = [idx.keys[m.position[i], j] != idx.keys_of(query.iloc[[i]])[0, j] for j in range(len(m.columns))]
        assert sum(cells) == m.altered[i]


def test_leave_one_out_finds_twins_and_near_twins_among_the_other_rows():
    train = _table(300, 2)
    train.iloc[10] = train.iloc[3].to_numpy()                            # a twin
    train.iloc[11] = train.iloc[4].to_numpy()
    train.loc[11, "plan"] = "x" if train.loc[4, "plan"] == "y" else "y"   # a near twin
    loo = PartialIndex(train, NUM, CAT).leave_one_out()
    np.testing.assert_array_equal(loo.altered, _loop(train, train, exclude_self=True))
    assert loo.altered[3] == loo.altered[10] == 0 and loo.position[10] == 3 and loo.position[3] == 10
    assert loo.altered[11] == 1 and loo.position[11] == 4


def test_resolutions_and_keys():
    assert resolution(np.array([1.0, 2.0, np.nan])) == 1.0
    assert resolution(np.array([0.25, 1.5])) == 0.01
    assert resolution(np.array([np.pi])) is None
    k = numeric_keys(np.array([37.0, 37.0000001, np.nan, -0.0, 0.0, np.inf]), 1.0)
    assert k[0] == k[1] and k[2] not in k[[0, 3, 5]] and k[3] == k[4] and k[5] != k[0]


def test_one_pass_equals_separate_passes_and_levels_follow_the_width():
    train, a, b = _table(300, 3), _table(100, 4), _table(100, 5)
    both = partial_matches(train, a, b, NUM, CAT)
    idx = PartialIndex(train, NUM, CAT)
    for got, want in ((both.synthetic, idx.match(a)), (both.holdout, idx.match(b)), (both.loo, idx.leave_one_out())):
        np.testing.assert_array_equal(got.altered, want.altered)
        np.testing.assert_array_equal(got.position, want.position)
    assert both.levels == (1, 2)
    narrow = PartialIndex(train[["age", "city", "plan", "flag"]], ("age",), ("city", "plan", "flag"))
    assert narrow.levels == (1,)                                          # 4 columns: equal but for two means little


@pytest.mark.parametrize("seed", [0, 1])
def test_a_hash_collision_never_counts(seed, monkeypatch):
    """Every cell hashed to one value: every row collides with every other; the cell-by-cell check keeps the
    answer the loop's."""
    import memviz.measure.partial as partial

    monkeypatch.setattr(partial, "splitmix64", lambda z: np.zeros_like(z))
    train, query = _table(120, seed), _table(60, seed + 10)
    m = partial.PartialIndex(train, NUM, CAT).match(query)
    np.testing.assert_array_equal(m.altered, _loop(train, query))
