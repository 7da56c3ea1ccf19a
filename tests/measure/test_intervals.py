"""The one t interval (memviz.measure.intervals) against scipy's."""
from __future__ import annotations

import numpy as np
import pytest

from memviz.measure.intervals import t_interval


def test_t_interval_is_scipys():
    from scipy.stats import ttest_1samp

    x = np.random.default_rng(0).normal(0.02, 0.03, 10)
    m, lo, hi = t_interval(x)
    ci = ttest_1samp(x, 0).confidence_interval()
    assert (m, lo, hi) == pytest.approx((x.mean(), ci.low, ci.high))
    assert np.isnan(t_interval([0.1])[1])
    assert all(np.isnan(t_interval([])))
    assert t_interval([0.1, np.nan, 0.3])[0] == pytest.approx(0.2)             # the finite values only
