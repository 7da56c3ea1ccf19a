"""Benjamini–Hochberg and Holm (memviz.measure.multiplicity) against their definitions."""
import numpy as np
import pytest

from memviz.measure.multiplicity import bh_qvalues, holm


def test_bh_qvalues_are_the_step_up_definition():
    p = np.random.default_rng(1).beta(0.3, 1.0, 400)
    q = bh_qvalues(p)
    order = np.argsort(p)
    ranked = p[order] * len(p) / np.arange(1, len(p) + 1)
    brute = np.array([ranked[k:].min() for k in range(len(p))])
    np.testing.assert_allclose(q[order], np.minimum(brute, 1.0))
    assert np.all(q >= p)


def test_holm_is_the_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
    m = 4
    order = [0, 2, 1, 3]
    want = np.maximum.accumulate([min(1, (m - j) * p[i]) for j, i in enumerate(order)])
    got = holm(p)
    assert np.allclose(got[order], want) and np.isnan(got[4])


def test_the_smallest_q_value_is_simes_p():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=50)
    simes = min(np.sort(p) * len(p) / np.arange(1, len(p) + 1))
    assert bh_qvalues(p).min() == min(1.0, simes)


def test_bonferroni_is_holms_smallest_adjusted_p():
    from memviz.measure.multiplicity import bonferroni

    p = np.array([0.04, 0.2, 0.01, 0.7])
    assert bonferroni(p) == pytest.approx(0.04) == pytest.approx(holm(p).min())
    assert bonferroni([0.6, 0.9]) == 1.0 and np.isnan(bonferroni([]))


def test_bh_qvalues_equal_scipys_false_discovery_control_to_rounding():
    """Cross-check against scipy.stats.false_discovery_control (method 'bh'): equal to one rounding. scipy forms
    p · (n / k) where memviz forms p · n / k, so about 40 % of q-values differ in their last bit; the hand-written
    form is kept so that rows.csv and audit.json keep their q-values byte for byte."""
    from scipy.stats import false_discovery_control

    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 100, 3000):
        p = rng.uniform(size=n) ** 3
        p[: n // 5] = p[0]                                              # ties
        ours, theirs = bh_qvalues(p), false_discovery_control(p, method="bh")
        np.testing.assert_allclose(ours, theirs, rtol=2.5e-16, atol=0)


def test_bh_qvalues_cross_check_scipy_on_ties_bounds_and_the_callers_nan_pattern():
    """scipy.stats.false_discovery_control was tried in place of bh_qvalues (issue 54): it changes audit.json
    (the per-row test's p_rows, 0.05770097670924117 -> 0.057700976709241174, and the family's adjusted p) and
    rows.csv's q-values in their last bit, so the hand-written form stays and is held to scipy's here: ties at
    every level, p-values of exactly 0 and 1, one to 20,000 tests, and the callers' NaN pattern (dcr,
    datacopying, densityratio adjust the finite p-values only and leave NaN where a row was not tested; scipy
    refuses a NaN)."""
    from scipy.stats import false_discovery_control

    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 257, 20_000):
        for _ in range(3):
            p = rng.choice(rng.uniform(size=max(1, n // 3)) ** 4, n)          # about three copies of each p
            p[rng.random(n) < 0.05] = 0.0
            p[rng.random(n) < 0.05] = 1.0
            np.testing.assert_allclose(bh_qvalues(p), false_discovery_control(p, method="bh"), rtol=1e-12, atol=0)
            p[rng.random(n) < 0.2] = np.nan
            ok = np.isfinite(p)
            q = np.full(n, np.nan)
            q[ok] = bh_qvalues(p[ok])
            if ok.any():
                np.testing.assert_allclose(q[ok], false_discovery_control(p[ok], method="bh"), rtol=1e-12, atol=0)
            assert np.isnan(q[~ok]).all()
    with pytest.raises(ValueError):
        false_discovery_control(np.array([0.01, np.nan]), method="bh")


def test_bh_leaves_a_missing_p_out_as_holm_does():
    """A NaN p-value made every q-value NaN (np.minimum carries NaN through the step-up). It stays NaN and does not
    count in n, as in :func:`holm`."""
    import numpy as np

    from memviz.measure.multiplicity import bh_qvalues

    q = bh_qvalues(np.array([0.01, np.nan, 0.04, 0.03]))
    assert np.isnan(q[1])
    np.testing.assert_allclose(q[[0, 2, 3]], bh_qvalues(np.array([0.01, 0.04, 0.03])), rtol=0, atol=0)
    assert np.isnan(bh_qvalues(np.array([np.nan, np.nan]))).all() and bh_qvalues(np.array([])).size == 0
