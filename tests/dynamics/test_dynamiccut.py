"""DynamicCut scoring, ranking, pruning budget and early identification."""
import math

import numpy as np
import pandas as pd
import pytest

from memviz.dynamics.rows import compute_dynamics
from memviz.errors import MemvizError
from memviz.dynamics.dynamiccut import (
    default_T,
    dynamiccut_ranking,
    dynamiccut_rankings,
    dynamiccut_selection,
    early_identification,
    early_identification_curve,
    prune_budget,
    score_rows,
)

# the hand table of tests/test_dynamics.py (repeated here: test files do not import each other)
TRAIN_IDS = np.array([42, 3, 20, 7, 11], dtype=np.int64)
HAND = [
    (0, 10, 7, 0.1), (0, 10, 7, 0.2), (0, 10, 3, 0.5), (0, 10, 11, np.nan), (0, 10, 20, 0.0),
    (1, 20, 7, 0.3), (1, 20, 3, 0.25), (1, 20, 11, np.nan), (1, 20, 11, 0.9), (1, 20, 3, 0.6),
    (2, 30, 7, 0.8), (2, 30, 20, 0.1), (2, 30, 20, 0.2), (2, 30, 3, 0.05), (2, 30, 11, 0.4),
]


def hand_checks() -> pd.DataFrame:
    df = pd.DataFrame(HAND, columns=["check", "epoch", "nn1", "ratio"])
    return df.assign(memorized=df["ratio"] < 1 / 3)


def random_checks(seed=0, n_rows=40, n_checks=6, n_syn=60):
    rng = np.random.default_rng(seed)
    ids = np.arange(n_rows, dtype=np.int64) * 3 + 5
    parts = []
    for c in range(n_checks):
        nn1 = ids[np.minimum(rng.zipf(1.6, n_syn) - 1, n_rows - 1)]  # heavy-tailed attribution
        ratio = np.round(rng.uniform(0, 1, n_syn), 1)  # coarse values: many tied scores
        ratio[rng.uniform(size=n_syn) < 0.05] = np.nan
        parts.append(pd.DataFrame({"check": c, "epoch": 5 * (c + 1), "nn1": nn1, "ratio": ratio,
                                   "memorized": ratio < 1 / 3}))
    return pd.concat(parts, ignore_index=True), ids

# per-row Mem-AUC of the hand table (rows 3, 7, 11, 20, 42; epochs 10, 20, 30)
AUC = np.array([[0.5, 1.15, 0.95], [1.7, 0.7, 0.2], [0.0, 0.1, 0.6], [1.0, 0.0, 1.7], [0.0, 0.0, 0.0]])


@pytest.fixture
def hand():
    return compute_dynamics(hand_checks(), TRAIN_IDS)


@pytest.mark.parametrize("k, T, expected", [
    (2, 20, [0.825, 1.2, 0.05, 0.5, 0.0]),     # both checks of the window
    (2, 30, [1.05, 1.2, 0.35, 1.35, 0.0]),     # 2 largest of 3
    (1, 10, [0.5, 1.7, 0.0, 1.0, 0.0]),        # max of check 0 only
    (5, 20, [0.825, 1.2, 0.05, 0.5, 0.0]),     # k > available checks: mean of those available
    (1, 29.5, [1.15, 1.7, 0.1, 1.0, 0.0]),     # T between checks
])
def test_scores_by_hand(hand, k, T, expected):
    np.testing.assert_allclose(score_rows(hand, k=k, T=T), expected, atol=1e-8)


def test_default_window_is_first_half_of_checks(hand):
    assert default_T(hand) == 20  # ceil(3 / 2) = 2nd check
    np.testing.assert_allclose(score_rows(hand), AUC[:, :2].mean(axis=1), atol=1e-8)
    sel = dynamiccut_selection(hand, p=0.2)
    assert sel.T == 20 and sel.k == 3 and sel.n_checks_used == 2


def test_scores_match_naive_pandas():
    checks, ids = random_checks(seed=5, n_checks=9)
    dyn = compute_dynamics(checks, ids)
    long = dyn.to_long()
    for k, T in [(1, 5), (3, 25), (4, 45), (20, 45)]:
        naive = (long[long["epoch"] <= T].groupby("row_id")["mem_auc"]
                 .apply(lambda s: s.nlargest(k).mean()).reindex(dyn.row_ids))
        np.testing.assert_allclose(score_rows(dyn, k=k, T=T), naive.to_numpy(), atol=1e-12)


def test_ranking_and_ties(hand):
    sel = dynamiccut_selection(hand, p=0.6, k=1, T=10)  # scores 0.5, 1.7, 0, 1.0, 0
    assert list(sel.removed) == [7, 20, 3] and sel.n_remove == 3
    np.testing.assert_array_equal(sel.ranks, [3, 1, 4, 2, 5])  # 11 and 42 tie at 0: 11 first
    np.testing.assert_array_equal(sel.kept, [11, 42])
    frame = sel.to_frame()
    assert list(frame["row_id"]) == [7, 20, 3, 11, 42] and frame["removed"].sum() == 3


@pytest.mark.parametrize("seed", [5, 9])  # seeds where unquantized float sums broke ties differently
def test_selection_ignores_row_order(seed):
    checks, ids = random_checks(seed=seed, n_rows=60, n_syn=600)
    a = dynamiccut_selection(compute_dynamics(checks, ids), p=0.25, k=2, T=15)
    shuffled = compute_dynamics(checks.sample(frac=1.0, random_state=3), np.random.default_rng(4).permutation(ids))
    b = dynamiccut_selection(shuffled, p=0.25, k=2, T=15)
    np.testing.assert_array_equal(a.removed, b.removed)
    np.testing.assert_array_equal(a.ranks, b.ranks)
    assert len(set(np.round(a.scores, 12))) < len(a.scores)  # the case has ties to break


@pytest.mark.parametrize("p, n, expected", [(0.1, 30, 3), (0.1, 31, 4), (0.1, 5, 1), (0.5, 7, 4), (0.001, 10, 1)])
def test_prune_budget_is_ceil(p, n, expected):
    assert prune_budget(p, n) == expected == max(1, math.ceil(round(p * n, 9)))


def test_removed_is_a_subset_of_training_ids():
    checks, ids = random_checks(seed=8, n_rows=33)
    dyn = compute_dynamics(checks, ids)
    for p in (0.05, 0.1, 0.5, 0.9):
        sel = dynamiccut_selection(dyn, p=p)
        assert len(sel.removed) == sel.n_remove == math.ceil(round(p * 33, 9))
        assert set(sel.removed) <= set(ids) and len(set(sel.removed)) == sel.n_remove
        assert set(sel.removed).isdisjoint(sel.kept) and len(sel.kept) + sel.n_remove == 33
        # every removed row scores at least as high as every kept row
        assert sel.scores[sel.removed_mask].min() >= sel.scores[~sel.removed_mask].max()


def test_bad_parameters(hand):
    for p in (0, 1, 1.5, -0.1, True, "0.1"):
        with pytest.raises(MemvizError, match="p must be strictly between 0 and 1"):
            dynamiccut_selection(hand, p=p)
    with pytest.raises(MemvizError, match="would remove all 5"):
        dynamiccut_selection(hand, p=0.9)
    with pytest.raises(MemvizError, match=r"T=5: .*first check is at epoch 10"):
        score_rows(hand, T=5)
    with pytest.raises(MemvizError, match="T must be a number"):
        dynamiccut_selection(hand, T="late")
    for k in (0, 2.5, -1):
        with pytest.raises(MemvizError, match="k must be an integer"):
            score_rows(hand, k=k)


def planted():
    """50 rows; final Top (10 %) = rows 0-4. At epoch 1 rows 0-3 and 45 look most memorized;
    at epoch 2 rows 0-4 are copied 5 times each and row 45 not at all."""
    parts = []
    for epoch, hot, copies in [(1, [0, 1, 2, 3, 45], 1), (2, [0, 1, 2, 3, 4], 5)]:
        hot_nn1 = np.repeat(hot, copies)
        cold = np.setdiff1d(np.arange(50), hot)
        nn1 = np.concatenate([hot_nn1, cold])
        ratio = np.concatenate([np.zeros(len(hot_nn1)), np.full(len(cold), 0.95)])
        parts.append(pd.DataFrame({"check": epoch - 1, "epoch": epoch, "nn1": nn1, "ratio": ratio,
                                   "memorized": ratio < 1 / 3}))
    return compute_dynamics(pd.concat(parts, ignore_index=True), np.arange(50))


def test_early_identification_planted():
    dyn = planted()
    assert list(np.flatnonzero(dyn.top)) == [0, 1, 2, 3, 4]
    early = early_identification(dyn, p=0.1, k=3, T=1)
    assert (early.n_selected, early.n_top, early.n_checks_used) == (5, 5, 1)
    assert early.precision == pytest.approx(0.8) and early.recall == pytest.approx(0.8)
    assert early.jaccard == pytest.approx(4 / 6)
    assert early.random_precision == pytest.approx(0.1) and early.random_recall == pytest.approx(0.1)
    late = early_identification(dyn, p=0.1, k=3, T=2)
    assert late.precision == late.recall == late.jaccard == 1.0
    wide = early_identification(dyn, p=0.2, k=3, T=2)  # 10 selected, all 5 Top rows among them
    assert wide.recall == 1.0 and wide.precision == pytest.approx(0.5)


def test_early_identification_curve():
    dyn = planted()
    curve = early_identification_curve(dyn, p=0.1, k=3)
    assert list(curve["T"]) == [1, 2]
    np.testing.assert_allclose(curve["precision"], [0.8, 1.0])
    np.testing.assert_allclose(curve["jaccard"], [4 / 6, 1.0])
    assert (curve["random_precision"] == 0.1).all()
    assert list(early_identification_curve(dyn, Ts=[2])["recall"]) == [1.0]


def test_a_kept_ranking_gives_what_a_rescoring_gives_and_refuses_other_parameters():
    checks, ids = random_checks(seed=3)
    dyn = compute_dynamics(checks, ids)
    kept = dynamiccut_rankings(dyn, k=2)
    for p in (0.05, 0.3):
        for T, r in kept.items():
            want, got = dynamiccut_selection(dyn, p, 2, T), dynamiccut_selection(dyn, p, 2, T, ranking=r)
            for f in ("removed", "scores", "ranks"):
                np.testing.assert_array_equal(getattr(got, f), getattr(want, f))
            assert (got.n_remove, got.n_checks_used, got.T) == (want.n_remove, want.n_checks_used, want.T)
        pd.testing.assert_frame_equal(early_identification_curve(dyn, p, 2, rankings=kept),
                                      early_identification_curve(dyn, p, 2))
    r = dynamiccut_ranking(dyn, 2, 10)
    for kwargs in ({"k": 3, "T": 10}, {"k": 2, "T": 15}, {"k": 2, "T": 10, "score": "excess",
                                                          "expected_auc_rate": np.zeros(dyn.n_rows)}):
        with pytest.raises(MemvizError, match="ranking given was made at k=2, T=10"):
            dynamiccut_selection(dyn, 0.1, ranking=r, **kwargs)


def test_after_T_target_planted():
    dyn = planted()
    after = early_identification(dyn, p=0.1, k=3, T=1, target="after")  # Top of epoch 2 only: rows 0-4
    assert after.target == "after" and after.n_top == 5 and after.precision == pytest.approx(0.8)
    final = early_identification(dyn, p=0.1, k=3, T=1)
    assert final.target == "final" and final.score == "raw"
    none_after = early_identification(dyn, p=0.1, k=3, T=2, target="after")  # no check after T
    assert none_after.n_top == 0 and np.isnan(none_after.precision) and np.isnan(none_after.random_precision)
    curve = early_identification_curve(dyn, p=0.1, k=3, target="after")
    assert curve["precision"].iloc[0] == pytest.approx(0.8) and np.isnan(curve["precision"].iloc[1])
    with pytest.raises(MemvizError, match="target must be one of final, after"):
        early_identification(dyn, target="later")


def test_excess_with_zero_rate_is_raw():
    checks, ids = random_checks(seed=5, n_checks=9)
    dyn = compute_dynamics(checks, ids)
    zero = np.zeros(dyn.n_rows)
    for k, T in [(1, 5), (3, 25), (20, 45)]:
        np.testing.assert_array_equal(score_rows(dyn, k, T, "excess", zero), score_rows(dyn, k, T))
    a, b = dynamiccut_selection(dyn, 0.2, 3, 25), dynamiccut_selection(dyn, 0.2, 3, 25, "excess", zero)
    np.testing.assert_array_equal(a.removed, b.removed)
    assert (a.score, b.score) == ("raw", "excess")
    # ignored with the raw score
    np.testing.assert_array_equal(score_rows(dyn, 3, 25, "raw", np.ones(dyn.n_rows)), score_rows(dyn, 3, 25))


def test_excess_is_auc_above_expected(hand):
    rate = np.array([0.1, 0.0, 0.05, 0.2, 0.0])  # rows 3, 7, 11, 20, 42; 5 generated rows per check
    expected = AUC - 5 * rate[:, None]
    np.testing.assert_allclose(score_rows(hand, 2, 30, "excess", rate), np.sort(expected, axis=1)[:, -2:].mean(axis=1))
    np.testing.assert_allclose(score_rows(hand, 3, 30, "excess", rate), score_rows(hand, 3, 30) - 5 * rate)


def test_excess_ranks_equal_auc_by_lower_rate():
    dyn = planted()  # rows 0-3 have the same Mem-AUC at every check
    rate = np.zeros(50)
    rate[[0, 1, 2, 3]] = [3e-5, 1e-5, 4e-5, 2e-5]  # small: rows 0-3 stay above row 4
    raw = dynamiccut_selection(dyn, p=0.08, k=3, T=2)
    excess = dynamiccut_selection(dyn, p=0.08, k=3, T=2, score="excess", expected_auc_rate=rate)
    assert list(raw.removed) == [0, 1, 2, 3]  # a tie, broken by row_id
    assert list(excess.removed) == [1, 3, 0, 2]  # by lower expected rate
    early = early_identification(dyn, p=0.1, k=3, T=1, score="excess", expected_auc_rate=rate)
    assert early.score == "excess" and len(early_identification_curve(dyn, score="excess", expected_auc_rate=rate)) == 2


@pytest.mark.parametrize("kwargs, match", [
    (dict(score="excess"), "score='excess' needs expected_auc_rate"),
    (dict(score="excess", expected_auc_rate=[0.1, 0.2]), r"expected_auc_rate has shape \(2,\), the warm-up has 5"),
    (dict(score="excess", expected_auc_rate=[0.1, -0.2, 0, 0, 0]), "must be finite and >= 0"),
    (dict(score="excess", expected_auc_rate=[0.1, np.nan, 0, 0, 0]), "must be finite and >= 0"),
    (dict(score="floor"), "score must be one of raw, excess, got 'floor'"),
])
def test_excess_errors_are_one_line(hand, kwargs, match):
    for fn in (score_rows, dynamiccut_selection, early_identification):
        with pytest.raises(MemvizError, match=match) as err:
            fn(hand, **kwargs)
        assert "\n" not in str(err.value)
