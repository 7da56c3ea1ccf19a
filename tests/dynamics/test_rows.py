"""Per-row dynamics on a hand-written checks table, plus invariants on random ones."""
import numpy as np
import pandas as pd
import pytest

from memviz.dynamics.rows import (
    check_events,
    check_summary,
    compute_dynamics,
    dynamics_from_events,
    top_mask,
)
from memviz.dynamics.summaries import (
    concentration,
    concentration_curve,
    heavy_tail,
    summarize,
)
from memviz.errors import MemvizError

# 5 training rows with non-contiguous ids; 42 is never anyone's NN1
TRAIN_IDS = np.array([42, 3, 20, 7, 11], dtype=np.int64)  # deliberately unsorted
NAN = float("nan")
# (check, epoch, nn1, ratio); memorized = ratio < 1/3
HAND = [
    (0, 10, 7, 0.1), (0, 10, 7, 0.2), (0, 10, 3, 0.5), (0, 10, 11, NAN), (0, 10, 20, 0.0),
    (1, 20, 7, 0.3), (1, 20, 3, 0.25), (1, 20, 11, NAN), (1, 20, 11, 0.9), (1, 20, 3, 0.6),
    (2, 30, 7, 0.8), (2, 30, 20, 0.1), (2, 30, 20, 0.2), (2, 30, 3, 0.05), (2, 30, 11, 0.4),
]
# hand-computed, rows in row_id order 3, 7, 11, 20, 42
COUNTS = [[0, 1, 1], [2, 1, 0], [0, 0, 0], [1, 0, 2], [0, 0, 0]]
AUC = [[0.5, 1.15, 0.95], [1.7, 0.7, 0.2], [0.0, 0.1, 0.6], [1.0, 0.0, 1.7], [0.0, 0.0, 0.0]]


def hand_checks() -> pd.DataFrame:
    df = pd.DataFrame(HAND, columns=["check", "epoch", "nn1", "ratio"])
    df["nn1"] = df["nn1"].astype(np.int64)
    df["synthetic_id"] = df.groupby("check").cumcount()
    df["d2"] = 1.0
    df["d1"] = df["ratio"].fillna(0.0)
    df.loc[df["ratio"].isna(), "d2"] = 0.0
    df["memorized"] = df["ratio"] < 1 / 3  # NaN -> False
    return df


def random_checks(seed=0, n_rows=40, n_checks=6, n_syn=60, ids=None):
    rng = np.random.default_rng(seed)
    ids = np.arange(n_rows, dtype=np.int64) * 3 + 5 if ids is None else ids
    parts = []
    for c in range(n_checks):
        nn1 = ids[np.minimum(rng.zipf(1.6, n_syn) - 1, len(ids) - 1)]  # heavy-tailed attribution
        ratio = rng.uniform(0, 1, n_syn)
        ratio[rng.uniform(size=n_syn) < 0.05] = np.nan
        parts.append(pd.DataFrame({"check": c, "epoch": 5 * (c + 1), "synthetic_id": np.arange(n_syn),
                                   "nn1": nn1, "d1": ratio, "d2": 1.0, "ratio": ratio,
                                   "memorized": ratio < 1 / 3}))
    return pd.concat(parts, ignore_index=True), ids


def test_hand_table_per_row_quantities():
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS)
    np.testing.assert_array_equal(dyn.row_ids, [3, 7, 11, 20, 42])
    np.testing.assert_array_equal(dyn.epochs, [10, 20, 30])
    np.testing.assert_array_equal(dyn.n_synthetic, [5, 5, 5])
    np.testing.assert_array_equal(dyn.counts, COUNTS)
    np.testing.assert_allclose(dyn.auc, AUC)
    np.testing.assert_array_equal(dyn.cumulative, np.cumsum(COUNTS, axis=1))
    np.testing.assert_array_equal(dyn.total, [2, 3, 0, 3, 0])
    np.testing.assert_array_equal(dyn.first_check, [1, 0, -1, 0, -1])
    np.testing.assert_array_equal(dyn.first_epoch, [20, 10, NAN, 10, NAN])
    np.testing.assert_array_equal(dyn.censored, [False, False, True, False, True])
    np.testing.assert_array_equal(dyn.ever_memorized, ~dyn.censored)
    # row 7 forgotten at check 2; row 20 forgotten at check 1 then re-memorized
    np.testing.assert_array_equal(dyn.forgetting_events, [0, 1, 0, 1, 0])
    assert dyn.counts.dtype == np.int32 and not dyn.counts.flags.writeable


def test_frames_agree_with_arrays():
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS, top_frac=0.4)
    frame = dyn.to_frame()
    assert list(frame["row_id"]) == [3, 7, 11, 20, 42]
    assert list(frame["total_count"]) == [2, 3, 0, 3, 0]
    assert list(frame["copy_checks"]) == [2, 2, 0, 2, 0]
    np.testing.assert_allclose(frame["mem_auc_sum"], np.sum(AUC, axis=1))
    long = dyn.to_long()
    assert len(long) == 15
    row20 = long[long["row_id"] == 20].sort_values("check")
    assert list(row20["count"]) == [1, 0, 2] and list(row20["cumulative"]) == [1, 1, 3]
    assert list(row20["epoch"]) == [10, 20, 30]


def test_check_summary_by_hand():
    s = check_summary(hand_checks())
    assert list(s["n_memorized"]) == [3, 2, 3] and list(s["n_synthetic"]) == [5, 5, 5]
    np.testing.assert_allclose(s["mem_ratio"], [0.6, 0.4, 0.6])
    # NaN ratios contribute 0 to mean(1 - r)
    np.testing.assert_allclose(s["mem_auc"], [3.2 / 5, 1.95 / 5, 3.45 / 5])


def test_total_auc_matches_check_summary():
    checks, ids = random_checks(seed=3)
    dyn = compute_dynamics(checks, ids)
    s = check_summary(checks)
    np.testing.assert_allclose(dyn.auc.sum(axis=0) / dyn.n_synthetic, s["mem_auc"])
    np.testing.assert_array_equal(dyn.counts.sum(axis=0), s["n_memorized"])


@pytest.mark.parametrize("frac, expected", [(0.2, [7]), (0.4, [7, 20]), (0.6, [3, 7, 20]), (0.8, [3, 7, 11, 20])])
def test_top_split_ties_to_lowest_row_id(frac, expected):
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS, top_frac=frac)
    assert list(dyn.row_ids[dyn.top]) == expected


def test_top_size_is_ceil_without_float_noise():
    totals = np.arange(30)
    assert top_mask(totals, np.arange(30), 0.1).sum() == 3  # 0.1 * 30 = 3.0000000000000004
    assert top_mask(np.arange(31), np.arange(31), 0.1).sum() == 4
    with pytest.raises(MemvizError, match="top_frac"):
        top_mask(totals, np.arange(30), 0.0)


def test_order_of_inputs_is_irrelevant():
    checks, ids = random_checks(seed=1)
    a = compute_dynamics(checks, ids)
    b = compute_dynamics(checks.sample(frac=1.0, random_state=7), np.random.default_rng(2).permutation(ids))
    for name in ("row_ids", "counts", "auc", "forgetting_events", "top", "first_check"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_reassigned_events_match_the_rewritten_table():
    """dynamics_from_events with new checks / rows / values = compute_dynamics of the table so rewritten."""
    checks, ids = random_checks(seed=4)
    ev = check_events(checks, ids)
    rng = np.random.default_rng(0)
    check_pos, row_pos = rng.permutation(ev.check_pos), rng.permutation(ev.row_pos)
    moved = dynamics_from_events(ev, check_pos=check_pos, row_pos=row_pos, value=ev.value[::-1].copy())
    table = checks.assign(check=ev.check_ids[check_pos], epoch=ev.epochs[check_pos], nn1=ev.row_ids[row_pos],
                          ratio=1.0 - ev.value[::-1])
    direct = compute_dynamics(table, ids)
    for name in ("counts", "n_synthetic", "first_epoch", "forgetting_events", "top"):
        np.testing.assert_array_equal(getattr(moved, name), getattr(direct, name))
    np.testing.assert_allclose(moved.auc, direct.auc, atol=1e-8)


def test_concentration_and_heavy_tail_by_hand():
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS)  # totals 2, 3, 0, 3, 0
    x, y = concentration_curve(dyn)
    np.testing.assert_allclose(x, [0, .2, .4, .6, .8, 1])
    np.testing.assert_allclose(y, [0, 3 / 8, 6 / 8, 1, 1, 1])
    assert concentration(dyn, 0.01) == pytest.approx(3 / 8)  # ceil(0.05) = 1 row
    assert concentration(dyn, 0.40) == pytest.approx(6 / 8)
    ht = heavy_tail(dyn)
    # sorted 0, 0, 2, 3, 3: 2 * (3*2 + 4*3 + 5*3) / (5*8) - 6/5
    assert ht.gini == pytest.approx(0.45)
    assert (ht.max_count, ht.zero_share, ht.median_count) == (3, 0.4, 2.0)


def test_gini_extremes():
    equal = compute_dynamics(pd.DataFrame({"check": [0, 0], "epoch": [1, 1], "nn1": [0, 1], "ratio": [0.0, 0.0],
                                           "memorized": [True, True]}), np.array([0, 1]))
    assert heavy_tail(equal).gini == pytest.approx(0.0)
    nothing = compute_dynamics(pd.DataFrame({"check": [0], "epoch": [1], "nn1": [0], "ratio": [0.9],
                                             "memorized": [False]}), np.array([0, 1]))
    assert np.isnan(heavy_tail(nothing).gini) and np.isnan(concentration(nothing, 0.5))


def test_summarize_top_vs_non_top_by_hand():
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS, top_frac=0.4)  # Top = {7, 20}
    s = summarize(dyn, early_checks=1)
    assert (s.top.n_rows, s.top.n_memorized, s.non_top.n_rows, s.non_top.n_memorized) == (2, 2, 3, 1)
    assert s.top.median_first_epoch == 10 and s.non_top.median_first_epoch == 20
    assert s.top.censored_share == 0 and s.non_top.censored_share == pytest.approx(2 / 3)
    assert s.top.forgetting_rate == 1 and s.non_top.forgetting_rate == 0
    assert s.non_top.forgetting_rate_memorized == 0
    assert s.top.early_mem_auc == pytest.approx(1.35) and s.non_top.early_mem_auc == pytest.approx(0.5 / 3)
    assert s.total_copies == 8 and s.early_checks == 1
    for p in (s.p_first_epoch, s.p_forgetting, s.p_early_mem_auc):
        assert 0 < p <= 1
    assert s.to_dict()["concentration"]["0.01"] == pytest.approx(3 / 8)


def test_summarize_defaults_and_empty_group():
    dyn = compute_dynamics(hand_checks(), TRAIN_IDS, top_frac=1.0)  # everyone is Top
    s = summarize(dyn)
    assert s.early_checks == 1  # ceil(3 / 4)
    assert s.non_top.n_rows == 0 and np.isnan(s.p_forgetting) and np.isnan(s.p_first_epoch)
    with pytest.raises(MemvizError, match="early_checks"):
        summarize(dyn, early_checks=4)


def test_top_group_separates_on_planted_data():
    # rows 0-4 copied at every check from the start; others rarely
    rng = np.random.default_rng(0)
    parts = []
    for c in range(8):
        nn1 = np.concatenate([np.repeat(np.arange(5), 4), rng.integers(5, 50, 30)])
        ratio = np.concatenate([np.full(20, 0.1), rng.uniform(0.2, 1.0, 30)])
        parts.append(pd.DataFrame({"check": c, "epoch": c + 1, "nn1": nn1, "ratio": ratio, "memorized": ratio < 1 / 3}))
    dyn = compute_dynamics(pd.concat(parts), np.arange(50))
    s = summarize(dyn, early_checks=2)
    assert list(np.flatnonzero(dyn.top)) == [0, 1, 2, 3, 4]
    assert s.top.early_mem_auc > s.non_top.early_mem_auc and s.p_early_mem_auc < 0.01
    assert s.concentration[0.1] > 0.5


def test_errors():
    checks = hand_checks()
    with pytest.raises(MemvizError, match="nn1 11 .*not a training row_id"):
        compute_dynamics(checks, np.array([3, 7, 20, 42]))
    with pytest.raises(MemvizError, match="nn1 99 "):
        compute_dynamics(pd.concat([checks, checks.iloc[[0]].assign(nn1=99)]), TRAIN_IDS)
    with pytest.raises(MemvizError, match="missing column.*memorized"):
        compute_dynamics(checks.drop(columns="memorized"), TRAIN_IDS)
    with pytest.raises(MemvizError, match="empty"):
        compute_dynamics(checks.iloc[:0], TRAIN_IDS)
    with pytest.raises(MemvizError, match="row_id 3 appears more than once"):
        compute_dynamics(checks, np.array([3, 3, 7, 11, 20, 42]))
    with pytest.raises(MemvizError, match="check 1 has more than one epoch"):
        compute_dynamics(checks.assign(epoch=np.where(checks.index == 6, 21, checks["epoch"])), TRAIN_IDS)
    with pytest.raises(MemvizError, match="nn1 must hold integers"):
        compute_dynamics(checks.assign(nn1=checks["nn1"].astype(float).where(checks.index != 0)), TRAIN_IDS)
