"""The closeness tests (memviz.measure.tooclose): exact under the null, cross-checked with scipy and a plain loop,
and able to see what the ratio test's averages hide."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import memviz
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import MemvizError
from memviz.measure.tooclose import (
    CLOSE_QUANTILE,
    Nearest,
    check_holdout,
    close_copy_test,
    close_levels,
    tie_draws,
    tie_key,
    leave_one_out,
    nearest,
)


def _near(d, pos):
    return Nearest(np.asarray(d, dtype=float), np.asarray(pos, dtype=np.int64))


def test_the_figures_equal_their_definitions_and_scipy():
    rng = np.random.default_rng(0)
    n, m, h = 50, 400, 300
    dS, dH = rng.exponential(1.0, m), rng.exponential(1.0, h)
    dS[:30] = 0.0                                                       # 30 identical rows
    dH[:2] = 0.0
    pS, pH = rng.integers(0, n, m), rng.integers(0, n, h)
    c = close_copy_test(np.arange(n) * 10, _near(dS, pS), _near(dH, pH))
    k = int(np.floor(CLOSE_QUANTILE * (h + 1)))
    t = np.sort(dH)[k - 1]
    assert c.k == k and c.threshold == t
    x = int(np.sum(dS < t))
    assert c.n_too_close == x and c.too_close_share == x / m
    # the levels: α's (k = 15), 1 % (k = 3) and nearer than every hold-out row (k = 1), Bonferroni over the three
    assert [lv.k for lv in c.levels] == [k, 3, 1] and [lv.quantile for lv in c.levels] == [CLOSE_QUANTILE, 0.01, 0.0]
    ps = []
    key = tie_key(dS, dH)
    uS, uH = tie_draws(m, "synthetic", key), tie_draws(h, "holdout", key)
    for lv in c.levels:
        # the k-th hold-out row in (D, u) order, and the generated rows before it in that order: ties at the
        # threshold (here the two hold-out rows at 0 against the 30 identical rows, at k = 1) go by their draws
        kth = sorted(zip(dH, uH))[lv.k - 1]
        x_j = sum((d, u) < kth for d, u in zip(dS, uS))
        assert lv.threshold == kth[0] and lv.n_too_close == x_j and lv.expected_share == lv.k / (h + 1)
        ps.append(stats.betabinom.sf(x_j - 1, m, lv.k, h - lv.k + 1) if x_j else 1.0)
        assert lv.p == pytest.approx(ps[-1])
    assert c.levels[-1].n_tied == 30 and 0 < c.levels[-1].n_too_close < 30     # k = 1 at D = 0: not disabled
    assert c.levels[0].n_too_close == x and c.p_too_close == pytest.approx(min(1.0, 3 * min(ps)))
    assert c.n_identical == 30 and c.n_holdout_identical == 2
    table = [[30, m - 30], [2, h - 2]]
    assert c.p_identical == pytest.approx(stats.fisher_exact(table, alternative="greater")[1])
    # per row: close copies against the hold-out's close matches, binomial given their sum
    ev_s, ev_h = (dS < t) | (dS == 0), (dH < t) | (dH == 0)
    for i in range(n):
        ci, ri = int(np.sum(ev_s & (pS == i))), int(np.sum(ev_h & (pH == i)))
        row = c.rows.iloc[i]
        assert row["row_id"] == 10 * i and row["close_copies"] == ci and row["real_close"] == ri
        want = 1.0 if ci == 0 else stats.binom.sf(ci - 1, ci + ri, m / (m + h))
        assert row["p_value"] == pytest.approx(want)


def test_the_beta_binomial_is_exact_for_fresh_rows():
    """With generated and hold-out distances from one law, each level's P(p ≤ a) is about a at every H, and
    the member's (Bonferroni over the levels) at most a."""
    rng = np.random.default_rng(1)
    for h in (20, 100, 400):
        tests = [close_copy_test(np.arange(5), _near(rng.random(300), np.zeros(300)), _near(rng.random(h), np.zeros(h)))
                 for _ in range(2000)]
        ps = np.array([c.p_too_close for c in tests])
        levels = np.array([[lv.p for lv in c.levels] for c in tests])         # (2000, L)
        bound = {a: a + 3 * np.sqrt(a * (1 - a) / 2000) for a in (0.01, 0.05, 0.2)}
        for a in (0.01, 0.05, 0.2):
            assert (ps <= a).mean() <= bound[a]
            assert ((levels <= a).mean(axis=0) <= bound[a]).all()
        assert ((levels <= 0.2).mean(axis=0) > 0.1).all()                   # each level exact (discrete), not vacuous
        assert (ps <= 0.2).mean() > 0.2 / levels.shape[1]                  # Bonferroni: no worse than its bound


def test_ties_keep_every_level_exact_for_fresh_rows():
    """Distances with heavy ties (5 % of rows at 0, the rest on a grid of 0.01): ties at a threshold go by draws
    seeded from the pooled distances, so each level's P(p <= a) stays about a. With one fixed seed for every audit
    the lowest draws tilted every audit the same way (the 1 % level at 8.1 %, k = 1 at 6.9 %, 4,000 tables)."""
    rng = np.random.default_rng(5)
    for h in (300, 1233):
        levels = []
        for _ in range(1500):
            d = rng.random(3000 + h)
            d = np.where(rng.random(3000 + h) < 0.05, 0.0, np.round(d, 2))
            levels.append([lv.p for lv in close_levels(d[:3000], d[3000:])])
        levels = np.array(levels)
        for a in (0.01, 0.05):
            assert ((levels <= a).mean(axis=0) <= a + 3 * np.sqrt(a * (1 - a) / 1500)).all(), (h, a, levels.mean(0))


def test_a_generator_that_fills_the_quota_with_copies_and_keeps_the_rest_far_is_seen():
    """One quantile is an average too: 5 % near copies (exactly the α quota) and every other row far from the
    training rows give 5 % too close against 5 % expected; nearer than every real row, they are 150 against 1.5."""
    rng = np.random.default_rng(3)
    m, h = 3000, 2000
    dH = rng.uniform(0.01, 1.0, h)
    dS = np.concatenate([np.full(150, 1e-4), rng.uniform(2.0, 3.0, m - 150)])   # copies, and rows far off
    c = close_copy_test(np.arange(4), _near(dS, np.zeros(m)), _near(dH, np.zeros(h)))
    main, *_, every = c.levels
    assert main.share == pytest.approx(0.05) and main.p > 0.3                 # α's level alone would pass it
    # P(X >= 150), X ~ Beta-Binomial(3000, 1, 2000), summed with mpmath at 60 digits: 1.1424766403665945e-34
    # (scipy's betabinom.sf reads 0 there, which the earlier `p < 1e-100` accepted)
    assert every.k == 1 and every.n_too_close == 150 and every.p == pytest.approx(1.1424766403665945e-34, rel=1e-9)
    assert c.p_too_close == pytest.approx(3 * every.p) and c.carrying_level is every


def test_too_small_a_holdout_has_no_quantile_but_still_counts_identical_rows():
    c = close_copy_test(np.arange(3), _near([0.0, 0.5, 1.0], [0, 1, 2]), _near(np.full(10, 0.3), np.zeros(10)))
    assert c.k == 0 and np.isnan(c.threshold) and np.isnan(c.p_too_close) and c.n_too_close == 0
    assert c.n_identical == 1 and c.rows["identical_copies"].tolist() == [1, 0, 0]


def test_a_row_copied_twenty_times_is_named_despite_one_holdout_match():
    """Issue 36: a row with 20 exact copies was hidden by one hold-out row matching it."""
    rng = np.random.default_rng(2)
    n, m, h = 4000, 3000, 891
    dS, pS = rng.exponential(1.0, m) + 0.01, rng.integers(0, n, m)
    dS[:20], pS[:20] = 0.0, 7                                           # row 7: 20 verbatim copies
    dH, pH = rng.exponential(1.0, h) + 0.01, rng.integers(0, n, h)
    dH[0], pH[0] = 0.0, 7                                               # ... and one real row equal to it
    dL, pL = rng.exponential(1.0, n) + 0.01, rng.integers(0, n, n)
    c = close_copy_test(np.arange(n), _near(dS, pS), _near(dH, pH), _near(dL, pL))
    assert 7 in c.named()["row_id"].tolist()
    assert c.rows.loc[7, "close_copies"] == 20 and c.rows.loc[7, "real_close"] == 1


def test_training_rows_that_never_repeat_are_left_out_of_the_reference():
    """A training table deduplicated before training repeats none of its rows, while real rows meet
    them: its rows are then no fresh sample, and the per-row test reads the hold-out alone."""
    rng = np.random.default_rng(3)
    n, m, h = 1000, 1000, 1000
    dS, dH = rng.exponential(1.0, m), rng.exponential(1.0, h)
    dS[:40], dH[:40] = 0.0, 0.0                                         # 4 % of fresh rows equal a training row
    pS, pH = rng.integers(0, n, m), rng.integers(0, n, h)
    deduplicated = _near(rng.exponential(1.0, n) + 0.01, rng.integers(0, n, n))
    c = close_copy_test(np.arange(n), _near(dS, pS), _near(dH, pH), deduplicated)
    assert c.n_reference == 0 and "hold-out alone" in c.reference_note and c.share == pytest.approx(0.5)
    same = _near(np.where(np.arange(n) < 40, 0.0, rng.exponential(1.0, n)), rng.integers(0, n, n))
    c = close_copy_test(np.arange(n), _near(dS, pS), _near(dH, pH), same)
    assert c.n_reference == n and c.reference_note == ""


def test_leave_one_out_finds_each_rows_nearest_other_row_and_twins(sample):
    train, _ = sample
    small = train.subset(train.row_ids[:300])
    df = small.data.copy()
    df.iloc[5] = df.iloc[9].to_numpy()                                  # rows 5 and 9: twins
    tw = memviz.table_from_frame(df.reset_index(drop=True), small.schema, source="twins")
    eng = NeighborEngine(distance="standardized", device="cpu").fit(tw)
    loo = leave_one_out(eng, tw)
    assert loo.distance[5] == 0 and loo.position[5] == 9 and loo.position[9] == 5
    # a plain loop: each row against every other row
    full = eng.kneighbors(tw, k=len(tw))
    for i in (0, 17, 123, 299):
        others = full.pos[i] != i
        assert loo.position[i] == full.pos[i][others][0] and loo.distance[i] == full.dist[i][others][0]


def test_the_engine_must_use_the_standardized_distance(sample):
    train, test = sample
    eng = NeighborEngine(distance="paper", device="cpu").fit(train.subset(train.row_ids[:100]))
    with pytest.raises(MemvizError, match="standardized"):
        nearest(eng, test.data.iloc[:5])


def test_a_holdout_of_training_rows_is_refused_and_a_real_one_is_not():
    rng = np.random.default_rng(5)
    loo = _near(np.where(np.arange(3000) < 5, 0.0, rng.random(3000) + 0.01), np.zeros(3000))
    clean = _near(np.where(np.arange(900) < 2, 0.0, rng.random(900) + 0.01), np.zeros(900))
    check_holdout(clean, loo, "test.csv")
    dirty = _near(np.where(np.arange(900) < 405, 0.0, rng.random(900) + 0.01), np.zeros(900))
    with pytest.raises(MemvizError, match=r"test\.csv: 405 of its 900 rows \(45\.0 %\) are rows of the training"):
        check_holdout(dirty, loo, "test.csv")


def test_the_three_tables_real_splits_pass_the_holdout_check(shared_data):
    """The official test splits share rows with their training splits as often as those repeat themselves."""
    for name in ("adult", "shoppers"):
        train, test = memviz.load_dataset(shared_data / name)
        eng = NeighborEngine(distance="standardized", device="cpu").fit(train)
        check_holdout(nearest(eng, test), leave_one_out(eng, train), name)


@pytest.fixture(scope="module")
def shared_data():
    from pathlib import Path

    p = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"
    if not (p / "adult").is_dir():
        pytest.skip("../shared/datasets not present")
    return p


def test_copies_needed_is_the_lone_rows_threshold():
    c = close_copy_test(np.arange(10), _near(np.ones(100), np.zeros(100)), _near(np.ones(300), np.zeros(300)))
    assert c.share == pytest.approx(0.25)
    need = c.copies_needed(0.01)
    assert 0.25 ** need <= 0.01 < 0.25 ** (need - 1)
    assert isinstance(c.rows, pd.DataFrame)
