import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency
from scipy.stats.contingency import association as scipy_association

from memviz.errors import MemvizError
from memviz.mitigate.associations import (
    association_matrix,
    cluster_rules,
    column_clusters,
    correlation_ratio,
    cramers_v,
)
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema


def _table(df, num, cat, target=None, task="binary"):
    return table_from_frame(df, Schema(numerical=tuple(num), categorical=tuple(cat), target=target,
                                       task=task if target else "none"), source="t")


def planted_groups(n=600, seed=0):
    """Three groups of three near-duplicate columns, independent of each other and of y."""
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=n), rng.normal(size=n)
    c = rng.integers(0, 5, size=n)
    eps = lambda: 0.01 * rng.normal(size=n)  # noqa: E731
    df = pd.DataFrame({
        "u1": u, "u2": u + eps(), "u3": 2 * u + eps(),
        "v1": v, "v2": -v + eps(), "v3": v + eps(),
        "c_num1": 10.0 * c + eps(), "c_num2": -5.0 * c + eps(),
        "c_cat": np.array(list("abcde"))[c],
        "y": rng.choice(["no", "yes"], size=n),
    })
    num = ["u1", "u2", "u3", "v1", "v2", "v3", "c_num1", "c_num2"]
    return _table(df, num, ["c_cat"], "y"), [["u1", "u2", "u3"], ["v1", "v2", "v3"], ["c_num1", "c_num2", "c_cat"]]


def mixed_with_missing(n=300, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    df = pd.DataFrame({
        "x": np.where(rng.random(n) < 0.1, np.nan, x),
        "z": x + rng.normal(size=n),
        "const": np.full(n, 3.0),
        "k": np.where(rng.random(n) < 0.1, None, rng.choice(["p", "q", "r"], size=n)).astype(object),
        "flag": rng.choice(["s", "t"], size=n),
        "y": np.where(x > 0, "pos", "neg"),
    })
    return _table(df, ["x", "z", "const"], ["k", "flag"], "y")


def test_association_matrix_is_symmetric_in_range_with_unit_diagonal():
    t = mixed_with_missing()
    a = association_matrix(t)
    assert list(a.index) == list(t.schema.columns) == list(a.columns)
    m = a.to_numpy()
    assert np.allclose(m, m.T)
    assert np.all((m >= 0) & (m <= 1))
    assert np.allclose(np.diag(m), 1.0)
    off = a.loc["const"].drop("const")
    assert (off == 0).all()  # a constant column is associated with nothing


def test_pearson_part_is_abs_corrcoef_after_mean_imputation():
    t = mixed_with_missing()
    x = t.data["x"].fillna(t.data["x"].mean())
    expected = abs(np.corrcoef(x, t.data["z"])[0, 1])
    assert association_matrix(t).loc["x", "z"] == pytest.approx(expected)


def test_correlation_ratio_matches_between_over_total_sum_of_squares():
    t = mixed_with_missing()
    df = t.data.copy()
    df["k"] = df["k"].fillna("<missing>")  # missing is a category of its own
    z = df["z"]
    between = df.groupby("k")["z"].agg(lambda s: len(s) * (s.mean() - z.mean()) ** 2).sum()
    expected = np.sqrt(between / ((z - z.mean()) ** 2).sum())
    assert correlation_ratio(t.data["k"], z) == pytest.approx(expected)
    assert association_matrix(t).loc["k", "z"] == pytest.approx(expected)
    assert association_matrix(t).loc["z", "k"] == pytest.approx(expected)


def test_uncorrected_cramers_v_matches_scipy():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, 400)
    y = (x + rng.integers(0, 3, 400)) % 5
    table = pd.crosstab(x, y).to_numpy()
    expected = scipy_association(table, method="cramer", correction=False)
    assert cramers_v(x, y, bias_correction=False) == pytest.approx(expected)
    assert cramers_v(x, y) < cramers_v(x, y, bias_correction=False)


def test_bias_corrected_cramers_v_is_near_zero_for_independent_columns():
    raw, corrected = [], []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x, y = rng.integers(0, 8, 500), rng.integers(0, 8, 500)
        raw.append(cramers_v(x, y, bias_correction=False))
        corrected.append(cramers_v(x, y))
    assert np.mean(corrected) < 0.05
    assert all(c < r for c, r in zip(corrected, raw))
    assert np.mean(raw) > 2 * np.mean(corrected)  # the bias the correction removes


def test_cramers_v_is_one_for_a_bijection_and_treats_missing_as_a_category():
    rng = np.random.default_rng(4)
    x = rng.choice(["a", "b", None], size=200).astype(object)
    y = pd.Series(x).map({"a": 1, "b": 2}).fillna(0).to_numpy()  # missing <-> 0
    assert cramers_v(x, y) == pytest.approx(1.0)
    assert cramers_v(x, np.zeros(200)) == 0.0  # one category: no association


def test_cramers_v_length_mismatch_is_a_user_error():
    with pytest.raises(MemvizError, match="different lengths"):
        cramers_v([1, 2, 3], [1, 2])


def test_column_clusters_finds_the_planted_groups():
    t, groups = planted_groups()
    clusters = column_clusters(t)
    assert sorted(map(sorted, clusters)) == sorted(map(sorted, groups + [["y"]]))
    assert column_clusters(t, drop_target=True) == [g for g in clusters if g != ["y"]]
    # order: by first column in schema order, columns in schema order
    pos = {c: i for i, c in enumerate(t.schema.columns)}
    assert [pos[g[0]] for g in clusters] == sorted(pos[g[0]] for g in clusters)
    assert all([pos[c] for c in g] == sorted(pos[c] for c in g) for g in clusters)


def test_column_clusters_threshold_extremes():
    t, _ = planted_groups()
    cols = list(t.schema.columns)
    assert column_clusters(t, threshold=1.0) == [cols]
    assert sorted(map(len, column_clusters(t, threshold=0.0))) == [1] * len(cols)
    with pytest.raises(MemvizError, match="threshold"):
        column_clusters(t, threshold=-0.1)


# ------------------------------------------------------------------ the reference's dtype rule
def integer_coded(n=400, seed=5):
    """Two integer-coded categoricals that move together as numbers (Pearson ~0.97) but
    spread over many cells of their 20 x 24 contingency table, beside noise and the target."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 20, n)
    y = rng.choice(["no", "yes"], n)
    s = np.where(rng.random(n) < 0.3, np.where(y == "no", "m", "f"), rng.choice(["m", "f"], n))  # tied to y
    df = pd.DataFrame({"x": rng.normal(size=n), "a": a, "b": a + rng.integers(-2, 3, n), "s": s, "y": y})
    return _table(df, ["x"], ["a", "b", "s"], "y")


def test_dtype_rule_treats_integer_coded_categoricals_as_numbers():
    t = integer_coded()
    assert association_matrix(t, "dtype").loc["a", "b"] == pytest.approx(abs(np.corrcoef(t.data["a"], t.data["b"])[0, 1]))
    assert association_matrix(t).loc["a", "b"] < 0.7 < association_matrix(t, "dtype").loc["a", "b"]
    rules = cluster_rules(t)
    assert ["a", "b"] not in rules["schema"] and ["a", "b"] in rules["dtype"]
    assert ["y"] in rules["dtype"] and ["y"] in rules["schema"]                 # the target-only cluster
    assert rules["dtype"] == column_clusters(t, rule="dtype")
    with pytest.raises(MemvizError, match="cluster rule"):
        column_clusters(t, rule="role")


def test_dtype_rule_cramers_v_of_a_two_by_two_table_has_yates_correction():
    t = integer_coded()
    obs = pd.crosstab(t.data["s"], t.data["y"])
    chi2 = chi2_contingency(obs, correction=True)[0]                             # the reference's chi²
    n, (r, k) = obs.to_numpy().sum(), obs.shape
    phi2 = max(0.0, chi2 / n - (k - 1) * (r - 1) / (n - 1))
    rr, kk = r - (r - 1) ** 2 / (n - 1), k - (k - 1) ** 2 / (n - 1)
    assert association_matrix(t, "dtype").loc["s", "y"] == pytest.approx(np.sqrt(phi2 / min(rr - 1, kk - 1)))
    assert association_matrix(t).loc["s", "y"] == pytest.approx(cramers_v(t.data["s"], t.data["y"]))
    assert association_matrix(t, "dtype").loc["s", "y"] < association_matrix(t).loc["s", "y"]  # Yates shrinks χ²
