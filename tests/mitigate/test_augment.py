
import numpy as np
import pandas as pd
import pytest

import memviz.mitigate.augment as mitigate
from memviz.errors import BadTable, MemvizError
from memviz.mitigate.augment import (
    MitigationResult,
    prune,
    random_prune,
    random_removed,
    smote,
    smote_reference,
    tabcutmix,
    tabcutmixplus,
)
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema

CLASSES = {"A": 600, "B": 300, "C": 100}


def added_ids(res):
    """The row ids of the rows a mitigation appended (the last ``res.added`` of its table)."""
    ids = res.table.row_ids
    return ids[len(ids) - res.added:]


def _table(df, num, cat, target=None, task="binary", row_id_column=None):
    schema = Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task if target else "none")
    return table_from_frame(df, schema, source="t", row_id_column=row_id_column)


def planted(seed=0, classes=CLASSES, distinct=True):
    """Every class has its own disjoint values, and every value is unique to its row.

    row_ids are 7 + 3 * position (not 0..N-1) to catch keying by position. ``distinct=False``
    repeats the categorical values (at most 500 per class): a categorical column holds at most
    1,000 categories (memviz.tables.data.MAX_CATEGORIES), so a large table cannot keep them unique.
    """
    rng = np.random.default_rng(seed)
    y = np.concatenate([[c] * n for c, n in classes.items()])
    rng.shuffle(y)
    n = len(y)
    off = pd.Series(y).map({c: 1000 * i for i, c in enumerate(classes)}).to_numpy()
    i = rng.permutation(n)
    df = pd.DataFrame({
        "rid": 7 + 3 * np.arange(n),
        "x_int": (off * 100 + i).astype(np.int64),
        "x_float": off + rng.random(n),
        "tag": [f"{c}_{k if distinct else k % 500}" for c, k in zip(y, i)],
        "code": (off * 10 + (i if distinct else i % 500)).astype(np.int64) * -1,
        "y": y,
    })
    return _table(df, ["x_int", "x_float"], ["tag", "code"], "y", "multiclass", row_id_column="rid")


def planted_groups(n=600, seed=0):
    """Three groups of three near-duplicate columns (one mixed), independent of each other and of y."""
    rng = np.random.default_rng(seed)
    u, v, c = rng.normal(size=n), rng.normal(size=n), rng.integers(0, 5, size=n)
    eps = lambda: 0.01 * rng.normal(size=n)  # noqa: E731
    df = pd.DataFrame({"u1": u, "u2": u + eps(), "u3": 2 * u + eps(),
                       "v1": v, "v2": -v + eps(), "v3": v + eps(),
                       "c_num1": 10.0 * c + eps(), "c_num2": -5.0 * c + eps(),
                       "c_cat": np.array(list("abcde"))[c], "y": rng.choice(["no", "yes"], size=n)})
    num = ["u1", "u2", "u3", "v1", "v2", "v3", "c_num1", "c_num2"]
    return _table(df, num, ["c_cat"], "y"), [["u1", "u2", "u3"], ["v1", "v2", "v3"], ["c_num1", "c_num2", "c_cat"]]


def class_of_value(t):
    """column -> {value: class} (values are class-disjoint)."""
    return {c: dict(zip(t.data[c], t.data["y"])) for c in t.schema.columns if c != "y"}


def new_rows(res):
    return res.table.data.loc[added_ids(res)]


def smote_table(seed=0, n=(150, 50)):
    rng = np.random.default_rng(seed)
    y = np.array(["maj"] * n[0] + ["min"] * n[1])
    is_min = y == "min"
    age = np.where(is_min, rng.integers(50, 70, len(y)), rng.integers(18, 40, len(y))).astype(np.int64)
    w = np.where(is_min, 100 + rng.random(len(y)), rng.random(len(y)))
    w[rng.random(len(y)) < 0.1] = np.nan
    colour = np.where(is_min, rng.choice(["red", "blue"], len(y)), rng.choice(["green", "blue", "grey"], len(y)))
    colour = pd.Series(colour, dtype=object).mask(rng.random(len(y)) < 0.1)
    df = pd.DataFrame({"age": age, "w": w, "colour": colour,
                       "size": pd.Categorical(rng.choice(["S", "M", "L"], len(y))), "y": y})
    return _table(df, ["age", "w"], ["colour", "size"], "y")


# ------------------------------------------------------------------ TabCutMix
@pytest.mark.parametrize("fn", [tabcutmix, tabcutmixplus])
def test_keeps_schema_dtypes_ids_and_appends_fresh_ids(fn):
    t = planted()
    before = t.data.copy()
    res = fn(t, ratio=0.3, seed=1)
    assert isinstance(res, MitigationResult) and res.method == fn.__name__
    pd.testing.assert_frame_equal(t.data, before)  # input not mutated
    out = res.table
    assert out.schema == t.schema and list(out.data.columns) == list(t.data.columns)
    assert (out.data.dtypes == t.data.dtypes).all()
    assert out.data.index.name == "row_id" and out.data.index.dtype == np.int64
    pd.testing.assert_frame_equal(out.data.iloc[:len(t)], t.data)  # original rows keep ids and values
    assert res.added == 300 and len(out) == len(t) + 300 and res.removed.size == 0
    start = t.row_ids.max() + 1
    assert np.array_equal(added_ids(res), np.arange(start, start + 300))


@pytest.mark.parametrize("fn", [tabcutmix, tabcutmixplus])
def test_new_rows_mix_only_same_class_rows(fn):
    t = planted()
    res = fn(t, ratio=1.0, seed=2)
    owner = class_of_value(t)
    new = new_rows(res)
    for col, mapping in owner.items():
        assert (new[col].map(mapping) == new["y"]).all(), col
    src = res.sources
    assert (src.index == added_ids(res)).all()
    ya, yb = t.data.loc[src["a"], "y"].to_numpy(), t.data.loc[src["b"], "y"].to_numpy()
    assert np.array_equal(new["y"].to_numpy(), ya) and np.array_equal(ya, yb)


def test_tabcutmix_swaps_exactly_int_lambda_m_whole_values_from_b():
    t = planted()
    res = tabcutmix(t, ratio=1.0, seed=3)
    new, src = new_rows(res), res.sources
    feats = ["x_int", "x_float", "tag", "code"]
    va = t.data.loc[src["a"], feats].to_numpy()
    vb = t.data.loc[src["b"], feats].to_numpy()
    vn = new[feats].to_numpy()
    assert np.all((vn == va) | (vn == vb))  # whole values, never blended
    distinct = (src["a"] != src["b"]).to_numpy()
    from_b = (vn != va).sum(1)
    assert np.array_equal(from_b[distinct], np.floor(src["lam"].to_numpy() * 4).astype(int)[distinct])
    assert from_b[distinct].max() >= 2 and from_b[distinct].min() == 0


def test_tabcutmix_keeps_class_proportions():
    t = planted()
    new = new_rows(tabcutmix(t, ratio=1.0, seed=4))
    share = new["y"].value_counts(normalize=True)
    for c, n in CLASSES.items():
        assert share[c] == pytest.approx(n / len(t), abs=0.05)


@pytest.mark.parametrize("ratio, expected", [(0.0, 0), (0.25, 250), (0.3005, 301), (2.0, 2000)])
def test_tabcutmix_result_size(ratio, expected):
    res = tabcutmix(planted(), ratio=ratio, seed=0)
    assert res.added == expected and len(res.table) == 1000 + expected


def test_tabcutmix_is_seeded_and_scales():
    t = planted()
    a, b, c = tabcutmix(t, seed=5), tabcutmix(t, seed=5), tabcutmix(t, seed=6)
    pd.testing.assert_frame_equal(a.table.data, b.table.data)
    assert not new_rows(a).equals(new_rows(c))
    big = planted(classes={"A": 30000, "B": 20000}, distinct=False)
    res = tabcutmix(big, ratio=1.0, seed=0)  # speed is checked by benchmarks, not here
    assert res.added == 50000 and len(res.table) == 100000


def test_tabcutmix_regression_pairs_within_target_quantile_bins():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=500), "k": rng.choice(list("abc"), 500), "y": rng.normal(size=500)})
    t = _table(df, ["x"], ["k"], "y", "regression")
    res = tabcutmix(t, ratio=1.0, seed=0, regression_bins=5)
    bins = pd.qcut(t.data["y"], 5, labels=False)
    src = res.sources
    assert np.array_equal(bins.loc[src["a"]].to_numpy(), bins.loc[src["b"]].to_numpy())
    assert np.array_equal(new_rows(res)["y"].to_numpy(), t.data.loc[src["a"], "y"].to_numpy())


def test_tabcutmix_without_target_pairs_across_the_table():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200), "z": rng.normal(size=200), "k": rng.choice(list("ab"), 200)})
    t = _table(df, ["x", "z"], ["k"])
    res = tabcutmix(t, ratio=0.5, seed=0)
    new, src = new_rows(res), res.sources
    for col in ["x", "z"]:
        va, vb = t.data.loc[src["a"], col].to_numpy(), t.data.loc[src["b"], col].to_numpy()
        assert np.all((new[col].to_numpy() == va) | (new[col].to_numpy() == vb))
    assert (src["a"] != src["b"]).mean() > 0.9


def test_tabcutmix_bad_ratio_is_a_user_error():
    with pytest.raises(MemvizError, match="ratio"):
        tabcutmix(planted(), ratio=-0.1)


# ------------------------------------------------------------------ TabCutMixPlus
def test_tabcutmixplus_swaps_whole_planted_clusters():
    t, groups = planted_groups()
    res = tabcutmixplus(t, ratio=1.0, seed=0)
    assert sorted(map(sorted, res.params["clusters"])) == sorted(map(sorted, groups))  # target removed
    new, src = new_rows(res), res.sources
    swapped_groups = np.zeros(len(new), dtype=int)
    for g in groups:
        vn = new[g].to_numpy()
        all_a = (vn == t.data.loc[src["a"], g].to_numpy()).all(1)
        all_b = (vn == t.data.loc[src["b"], g].to_numpy()).all(1)
        assert np.all(all_a | all_b), g  # never part from a, part from b
        swapped_groups += ~all_a
    distinct = (src["a"] != src["b"]).to_numpy()
    expected = np.floor(src["lam"].to_numpy() * 3).astype(int)
    assert np.array_equal(swapped_groups[distinct], expected[distinct])
    assert np.array_equal(new["y"].to_numpy(), t.data.loc[src["a"], "y"].to_numpy())


def test_tabcutmixplus_with_singleton_clusters_equals_tabcutmix():
    t = smote_table()  # no two columns exactly associated
    plus = tabcutmixplus(t, ratio=0.5, seed=9, threshold=0.0)
    assert plus.params["clusters"] == [[c] for c in ["age", "w", "colour", "size"]]
    pd.testing.assert_frame_equal(plus.table.data, tabcutmix(t, ratio=0.5, seed=9).table.data)
    assert (plus.table.data.dtypes == t.data.dtypes).all()  # int, float with NaN, object with NaN, category


def test_tabcutmixplus_dtype_rule_counts_the_target_only_cluster():
    rng = np.random.default_rng(0)
    n = 400
    a = rng.integers(0, 20, n)                                                  # integer-coded categoricals
    df = pd.DataFrame({"x": rng.normal(size=n), "a": a, "b": a + rng.integers(-2, 3, n), "y": rng.choice(["n", "y"], n)})
    t = _table(df, ["x"], ["a", "b"], "y")
    assert tabcutmixplus(t, seed=0).params["clusters"] == [["x"], ["a"], ["b"]]
    res = tabcutmixplus(t, ratio=1.0, seed=0, rule="dtype")
    assert res.params["clusters"] == [["x"], ["a", "b"], []] and res.params["rule"] == "dtype"
    new, src = new_rows(res), res.sources
    changed = np.zeros(len(new), dtype=int)
    for g in (["x"], ["a", "b"]):
        changed += ~(new[g].to_numpy() == t.data.loc[src["a"], g].to_numpy()).all(1)
    distinct = ((t.data.loc[src["a"], ["x", "a", "b"]].to_numpy() != t.data.loc[src["b"], ["x", "a", "b"]].to_numpy())
                .all(1))
    # int(λ·3) of the K = 3 clusters are drawn; the target's swaps nothing, so at most int(λ·3) change
    k = np.floor(src["lam"].to_numpy() * 3).astype(int)
    assert np.all(changed <= k) and np.any(changed[distinct] < k[distinct])
    assert (changed[distinct] >= k[distinct] - 1).all()
    with pytest.raises(MemvizError, match="rule"):
        tabcutmixplus(t, rule="roles")


# ------------------------------------------------------------------ SMOTE (the reference's)
def test_smote_reference_adds_only_minority_rows_between_their_two_parents():
    t = smote_table()
    clean = _table(t.data.assign(w=t.data["w"].fillna(1.0), colour=t.data["colour"].fillna("blue")).reset_index(drop=True),
                   ["age", "w"], ["colour", "size"], "y")
    for table in (clean, planted()):
        before = table.data.copy()
        assert smote_reference(table, seed=4).added == round(0.3 * len(table))   # the default: 0.3 N rows
        res = smote_reference(table, ratio=3.0, seed=4)
        pd.testing.assert_frame_equal(table.data, before)
        assert res.added == 3 * len(table) and res.removed.size == 0 and res.method == "smote_reference"
        assert (res.table.data.dtypes == table.data.dtypes).all()
        pd.testing.assert_frame_equal(res.table.data.iloc[:len(table)], table.data)
        counts = table.data["y"].value_counts()
        minority = counts.index[counts.argmin()]
        new, src = new_rows(res), res.sources
        assert (new["y"] == minority).all() and res.params["minority"] == minority
        pa, pb = table.data.loc[src["a"]], table.data.loc[src["b"]]
        assert (pa["y"] == minority).all() and (pb["y"] == minority).all() and (src["a"] != src["b"]).all()
        for col in table.schema.numerical:                                      # between the two parents
            lo = np.minimum(pa[col].to_numpy(float), pb[col].to_numpy(float))
            hi = np.maximum(pa[col].to_numpy(float), pb[col].to_numpy(float))
            v = new[col].to_numpy(float)
            assert np.all((lo <= v) & (v <= hi)), col
        for col in table.schema.categorical:                                    # from one of them, each half the time
            v = new[col].to_numpy()
            from_a, from_b = v == pa[col].to_numpy(), v == pb[col].to_numpy()
            assert np.all(from_a | from_b), col
            share_b = (from_b & ~from_a).sum() / max((from_a != from_b).sum(), 1)
            assert 0.35 < share_b < 0.65, (col, share_b)


def test_smote_reference_neighbours_are_the_k_nearest_minority_rows():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(size=40), 100 + np.arange(8.0)])           # minority: 100, 101, ..., 107
    df = pd.DataFrame({"x": x, "y": ["maj"] * 40 + ["min"] * 8})
    res = smote_reference(_table(df, ["x"], [], "y"), ratio=2.0, seed=0, k_neighbors=2)
    gap = np.abs(df.loc[res.sources["a"], "x"].to_numpy() - df.loc[res.sources["b"], "x"].to_numpy())
    ends = df.loc[res.sources["a"], "x"].isin([100.0, 107.0]).to_numpy()       # an end row's 2 nearest are 1 and 2 away
    assert set(gap[~ends]) == {1.0} and set(gap[ends]) == {1.0, 2.0}
    assert res.added == 96 and (new_rows(res)["y"] == "min").all()


def test_smote_reference_is_seeded_and_refuses_what_it_cannot_do():
    t = smote_table()
    pd.testing.assert_frame_equal(smote_reference(t, seed=1).table.data, smote_reference(t, seed=1).table.data)
    assert new_rows(smote_reference(t, seed=1))[["age", "w"]].notna().all().all()  # missing -> the class mean
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=20), "k": rng.choice(list("ab"), 20), "y": ["u"] * 19 + ["v"]})
    with pytest.raises(BadTable, match="at least 2 rows"):
        smote_reference(_table(df, ["x"], ["k"], "y"))
    with pytest.raises(MemvizError, match="class target"):
        smote_reference(_table(df.assign(y=rng.normal(size=20)), ["x"], ["k"], "y", "regression"))
    cat_only = smote_reference(_table(df.assign(y=["u"] * 10 + ["v"] * 10), [], ["k"], "y"), ratio=0.5, seed=0)
    assert cat_only.added == 10 and (cat_only.sources["a"] != cat_only.sources["b"]).all()


# ------------------------------------------------------------------ SMOTE
imblearn = pytest.importorskip("imblearn")


def test_smote_adds_requested_rows_proportionally_within_class_ranges():
    t = smote_table()
    before = t.data.copy()
    res = smote(t, ratio=0.3, seed=0)
    pd.testing.assert_frame_equal(t.data, before)
    assert res.added == 60 and len(res.table) == 260 and res.method == "smote"
    assert (res.table.data.dtypes == t.data.dtypes).all()
    pd.testing.assert_frame_equal(res.table.data.iloc[:200], t.data)
    new = new_rows(res)
    counts = new["y"].value_counts()
    assert counts["maj"] == 45 and counts["min"] == 15  # 0.3 x 150, 0.3 x 50
    assert new[["age", "w"]].notna().all().all()  # imputed for the neighbour search
    for c, grp in t.data.groupby("y"):
        mine = new[new["y"] == c]
        for col in ["age", "w"]:
            assert mine[col].between(grp[col].min(), grp[col].max()).all(), (c, col)
        seen = set(grp["colour"].fillna("<na>"))
        assert set(mine["colour"].fillna("<na>")) <= seen
        assert set(mine["size"]) <= set(grp["size"])
    assert (new["age"] == new["age"].round()).all()


def test_smote_is_seeded_and_balance_fills_the_minority_first():
    t = smote_table()
    a, b = smote(t, ratio=0.3, seed=1), smote(t, ratio=0.3, seed=1)
    pd.testing.assert_frame_equal(a.table.data, b.table.data)
    bal = new_rows(smote(t, ratio=0.3, seed=1, balance=True))["y"].value_counts()
    assert bal.get("maj", 0) == 0 and bal["min"] == 60


def test_smote_small_class_lowers_k_and_singleton_class_gets_nothing():
    t = smote_table(n=(100, 3))
    res = smote(t, ratio=0.5, seed=0, k_neighbors=5)
    assert res.added == 52
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=20), "k": rng.choice(list("ab"), 20), "y": ["u"] * 19 + ["v"]})
    res = smote(_table(df, ["x"], ["k"], "y"), ratio=0.5, seed=0)
    assert res.added == 10 and (new_rows(res)["y"] == "u").all()


def test_smote_dense_neighbour_search_matches_imblearn_default(monkeypatch):
    from sklearn.neighbors import NearestNeighbors  # lazy: sklearn, an extra (train)
    from sklearn.preprocessing import OneHotEncoder  # lazy: sklearn, an extra (train)

    t = smote_table()
    fast = smote(t, ratio=0.5, seed=3).table.data
    monkeypatch.setattr(mitigate, "_dense_helpers", lambda: (NearestNeighbors, OneHotEncoder))
    pd.testing.assert_frame_equal(fast, smote(t, ratio=0.5, seed=3).table.data)


@pytest.mark.parametrize("kind", ["numerical", "categorical", "none", "regression"])
def test_smote_other_table_kinds(kind):
    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n), "k": rng.choice(list("abc"), n),
                       "m": rng.choice(list("pq"), n), "y": rng.choice(["0", "1"], n), "r": rng.normal(size=n)})
    if kind == "numerical":
        t = _table(df, ["x", "z"], [], "y")
    elif kind == "categorical":
        t = _table(df, [], ["k", "m"], "y")
    elif kind == "none":
        t = _table(df, ["x"], ["k"])
    else:
        t = _table(df, ["x"], ["k"], "r", "regression")
    res = smote(t, ratio=0.25, seed=0)
    assert res.added == 30 and len(res.table) == n + 30
    new = new_rows(res)
    for col in t.schema.columns:
        if col in t.schema.distance_numerical:
            assert new[col].between(t.data[col].min(), t.data[col].max()).all()
        else:
            assert set(new[col]) <= set(t.data[col])


# ------------------------------------------------------------------ pruning
def test_random_prune_removes_exactly_n_existing_ids():
    t = planted()
    before = t.data.copy()
    res = random_prune(t, 137, seed=0)
    pd.testing.assert_frame_equal(t.data, before)
    assert res.removed.size == 137 and np.unique(res.removed).size == 137
    assert np.isin(res.removed, t.row_ids).all()
    assert len(res.table) == 863 and res.added == 0
    assert set(res.table.row_ids) == set(t.row_ids) - set(res.removed)
    pd.testing.assert_frame_equal(res.table.data, t.data.drop(index=res.removed))
    assert np.array_equal(random_prune(t, 137, seed=0).removed, res.removed)
    assert not np.array_equal(random_prune(t, 137, seed=1).removed, res.removed)
    with pytest.raises(MemvizError, match="n_remove"):
        random_prune(t, 1001)
    assert np.array_equal(random_removed(t.row_ids, 137, seed=0), res.removed)  # what the comparison stores


def test_prune_removes_given_ids_and_names_an_unknown_one():
    t = planted()
    ids = t.row_ids[[5, 0, 5, 42]]
    res = prune(t, ids)
    assert np.array_equal(res.removed, np.sort(np.unique(ids)))
    assert len(res.table) == 997 and not res.table.data.index.isin(ids).any()
    assert res.table.schema == t.schema
    with pytest.raises(BadTable, match="row_id 8 "):
        prune(t, [t.row_ids[1], 8])
