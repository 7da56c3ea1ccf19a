"""The rank statistics of the tests beyond the ratio test, against sklearn and scipy."""
import json
import math

import numpy as np
import pytest
from scipy.stats import mannwhitneyu, norm
from sklearn.metrics import roc_auc_score

from memviz.evidence.ranktests import auc_delong, json_safe, mann_whitney_z, one_sided_p


@pytest.mark.parametrize("discrete", [False, True])
def test_auc_equals_sklearn_with_and_without_ties(discrete):
    rng = np.random.default_rng(1)
    x, y = rng.normal(0, 1, 300), rng.normal(0.3, 1, 200)
    if discrete:
        x, y = np.round(x), np.round(y)      # many ties
    auc, lo, hi, se = auc_delong(x, y)
    labels = np.r_[np.ones(len(x)), np.zeros(len(y))]
    assert auc == pytest.approx(roc_auc_score(labels, -np.r_[x, y]), abs=1e-12)
    assert lo < auc < hi and se > 0


def test_delong_standard_error_matches_a_bootstrap():
    rng = np.random.default_rng(2)
    x, y = rng.exponential(1.0, 400), rng.exponential(1.3, 300)
    _, _, _, se = auc_delong(x, y)
    boot = []
    for _ in range(400):
        bx, by = rng.choice(x, len(x)), rng.choice(y, len(y))
        boot.append(auc_delong(bx, by)[0])
    assert se == pytest.approx(np.std(boot, ddof=1), rel=0.15)


def test_delong_interval_covers_the_true_auc_at_about_95_percent():
    rng = np.random.default_rng(3)
    true = norm.cdf(0.5 / math.sqrt(2))                  # P(X < Y), X ~ N(0, 1), Y ~ N(0.5, 1)
    cover = sum(lo <= true <= hi for lo, hi in
                (auc_delong(rng.normal(0, 1, 150), rng.normal(0.5, 1, 120))[1:3] for _ in range(300)))
    assert 0.92 <= cover / 300 <= 0.98


@pytest.mark.parametrize("discrete", [False, True])
def test_mann_whitney_z_equals_scipy(discrete):
    rng = np.random.default_rng(4)
    a, b = rng.normal(-0.2, 1, 80), rng.normal(0, 1, 120)
    if discrete:
        a, b = np.round(a * 2), np.round(b * 2)
    u, z = mann_whitney_z(a, b)
    ref = mannwhitneyu(a, b, alternative="less", use_continuity=False, method="asymptotic")
    assert u == pytest.approx(mannwhitneyu(a, b, method="asymptotic").statistic)
    assert one_sided_p(z) == pytest.approx(ref.pvalue, rel=1e-9)


def test_mann_whitney_all_tied_is_zero_and_empty_is_nan():
    assert mann_whitney_z(np.zeros(5), np.zeros(7))[1] == 0.0
    assert math.isnan(mann_whitney_z(np.zeros(0), np.ones(3))[1])


def test_json_safe_is_strict_json():
    out = json_safe({"a": np.float64("nan"), "b": [np.int64(3), np.inf], "c": np.array([1.5, np.nan]),
                     "d": np.bool_(True)})
    assert out == {"a": None, "b": [3, None], "c": [1.5, None], "d": True}
    json.dumps(out, allow_nan=False)
