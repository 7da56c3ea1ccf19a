"""The per-check Shape/Trend (memviz.evaluate.quality) equals SDMetrics' QualityReport."""
import numpy as np
import pandas as pd
import pytest

from memviz.evaluate.quality import CheckQuality
from memviz.evaluate.synthetic import quality
from memviz.tables.data import table_from_frame


def _same(train, syn, rows=None):
    fast = CheckQuality(train, rows=rows)(syn)
    ref = quality(train, syn if rows is None else syn.iloc[:rows])
    assert fast["shape"] == pytest.approx(ref.shape, abs=1e-12)
    assert fast["trend"] == pytest.approx(ref.trend, abs=1e-12)
    assert fast["quality_rows"] == (len(syn) if rows is None else min(rows, len(syn)))
    return fast


def test_equals_the_quality_report_on_adult(sample):
    train, test = sample
    syn = test.data.sample(1500, replace=True, random_state=1).reset_index(drop=True)
    fast = _same(train, syn)
    assert 0.5 < fast["trend"] < fast["shape"] < 1
    _same(train, syn, rows=400)  # the subsample is the first rows


def _mixed(n, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    x = rng.normal(shift, 1, n)
    y = x * 0.5 + rng.normal(0, 1, n)
    z = np.round(rng.exponential(2, n), 1)
    c = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]).astype(object)
    d = rng.choice(["p", "q"], n).astype(object)
    return pd.DataFrame({"x": x, "y": y, "z": z, "c": c, "d": d})


def test_equals_the_report_with_missing_values_and_unseen_categories():
    real = _mixed(600, 0)
    real.loc[real.index[:40], "x"] = np.nan
    real.loc[real.index[30:70], "c"] = np.nan
    train = table_from_frame(real, overrides={"c": "categorical", "d": "categorical"})
    syn = _mixed(500, 1, shift=0.4)
    syn.loc[syn.index[:25], "y"] = np.nan
    syn.loc[syn.index[5:15], "c"] = np.nan
    syn.loc[syn.index[100:130], "d"] = "never-seen"
    _same(train, syn)


def test_equals_the_report_on_an_all_numerical_table_and_a_constant_column():
    rng = np.random.default_rng(3)
    real = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    train = table_from_frame(real)
    syn = pd.DataFrame(rng.normal(size=(200, 4)) * [1, 2, 1, 1], columns=list("abcd"))
    fast = _same(train, syn)
    syn_const = syn.assign(b=1.0)  # a constant synthetic column: its correlations are undefined, left out
    _same(train, syn_const)
    assert np.isfinite(fast["trend"])


def test_a_column_shuffle_lowers_trend_not_shape(sample):
    train, _ = sample
    cq = CheckQuality(train)
    copy = train.data.reset_index(drop=True)
    shuffled = copy.copy()
    rng = np.random.default_rng(0)
    for col in shuffled.columns:
        shuffled[col] = rng.permutation(shuffled[col].to_numpy())
    same, shuf = cq(copy), cq(shuffled)
    assert same["shape"] == pytest.approx(1.0) and same["trend"] == pytest.approx(1.0)
    assert shuf["shape"] == pytest.approx(1.0) and shuf["trend"] < 0.95
