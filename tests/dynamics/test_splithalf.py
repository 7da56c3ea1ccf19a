"""Non-circular Top vs Non-Top statistics: which checks each side uses, and the forgetting rate."""
import numpy as np
import pytest

from memviz.dynamics.rows import dynamics_from_matrices
from memviz.errors import MemvizError
from memviz.dynamics.splithalf import (
    dynamics_statistics,
    first_epoch,
    forgetting_rate,
    pooled_forgetting_rate,
    split_halves,
    split_top,
)
from memviz.dynamics.dynamiccut import score_rows, target_top


def random_dyn(seed=0, n=300, c=12, top_frac=0.1):
    rng = np.random.default_rng(seed)
    lam = rng.gamma(0.5, 1.0, n)[:, None] * np.linspace(0.5, 1.5, c)[None, :]  # (N, C)
    counts = rng.poisson(lam).astype(np.int32)
    auc = counts * 0.8 + rng.poisson(lam) * 0.3  # (N, C) memorized and non-memorized terms
    return dynamics_from_matrices(np.arange(n, dtype=np.int64) * 3 + 1, np.arange(c, dtype=np.int64),
                                  8 * (np.arange(c, dtype=np.int64) + 1), np.full(c, n, dtype=np.int64),
                                  counts, auc, top_frac)


def rebuild(dyn, counts, auc):
    return dynamics_from_matrices(dyn.row_ids, dyn.checks, dyn.epochs, dyn.n_synthetic, counts, auc, dyn.top_frac)


def by_name(stats):
    return {s.name: s for s in stats}


def test_halves_are_disjoint_and_interleaved():
    g, m = split_halves(7)
    assert list(g) == [1, 3, 5] and list(m) == [0, 2, 4, 6]
    with pytest.raises(MemvizError, match="at least 4 checks") as err:
        split_halves(3)
    assert "\n" not in str(err.value)


def test_groups_ignore_the_measured_checks():
    dyn = random_dyn()
    _, m = split_halves(dyn.n_checks)
    rng = np.random.default_rng(1)
    counts, auc = dyn.counts.copy(), dyn.auc.copy()
    counts[:, m] = rng.poisson(3.0, (dyn.n_rows, len(m)))  # anything on the measured checks
    auc[:, m] = rng.uniform(0, 5, (dyn.n_rows, len(m)))
    np.testing.assert_array_equal(split_top(rebuild(dyn, counts, auc)), split_top(dyn))


def test_measures_ignore_the_group_checks():
    dyn = random_dyn()
    g, _ = split_halves(dyn.n_checks)
    top_g = split_top(dyn)
    counts, auc = dyn.counts.copy(), dyn.auc.copy()
    counts[np.ix_(top_g, g)] += 7  # more copies on G for rows already in Top_G: same groups
    auc[:, g] = np.random.default_rng(2).uniform(0, 9, (dyn.n_rows, len(g)))
    changed = rebuild(dyn, counts, auc)
    np.testing.assert_array_equal(split_top(changed), top_g)
    before, after = by_name(dynamics_statistics(dyn)), by_name(dynamics_statistics(changed))
    for name in ("first_epoch_split", "forgetting_rate_split", "early_mem_auc_split"):
        assert before[name] == after[name]
    assert before["forgetting_events"] != after["forgetting_events"]  # the paper's does move


def test_selection_and_after_T_top_share_no_check():
    dyn = random_dyn()
    T = int(dyn.epochs[5])
    before, after = dyn.epochs <= T, dyn.epochs > T
    counts, auc = dyn.counts.copy(), dyn.auc.copy()
    counts[:, before] = 0  # the selection's checks: no effect on the target
    np.testing.assert_array_equal(target_top(rebuild(dyn, counts, auc), T, "after"), target_top(dyn, T, "after"))
    counts, auc = dyn.counts.copy(), dyn.auc.copy()
    counts[:, after], auc[:, after] = 0, 0.0  # the target's checks: no effect on the scores
    np.testing.assert_array_equal(score_rows(rebuild(dyn, counts, auc), T=T), score_rows(dyn, T=T))


def test_forgetting_rate_by_hand():
    counts = np.array([[1, 0, 1, 1, 0], [0, 1, 1, 0, 0], [0, 0, 0, 0, 1], [2, 3, 1, 1, 1]])
    # F = 2, 1, 0, 0; D (memorized checks with a next check) = 3, 2, 0, 4
    np.testing.assert_allclose(forgetting_rate(counts), [2 / 3, 1 / 2, np.nan, 0.0])
    assert pooled_forgetting_rate(counts, np.array([True, True, True, False])) == 3 / 5
    assert np.isnan(pooled_forgetting_rate(counts, np.array([False, False, True, False])))
    np.testing.assert_array_equal(first_epoch(counts, [8, 16, 24, 32, 40]), [8, 16, 40, 8])
    assert np.isnan(first_epoch(np.zeros((1, 3)), [1, 2, 3])[0])


@pytest.mark.parametrize("q", [0.05, 0.2])
def test_rate_follows_the_chance_of_a_miss_not_the_copy_count(q):
    """No dynamics, memorized at each check with probability q: E[F] grows with q, E[F] / E[D] = 1 - q."""
    rng = np.random.default_rng(3)
    low = (rng.uniform(size=(40_000, 25)) < q).astype(np.int32)
    high = (rng.uniform(size=(40_000, 25)) < 2 * q).astype(np.int32)  # twice the propensity
    every = np.ones(40_000, dtype=bool)
    rate_low, rate_high = pooled_forgetting_rate(low, every), pooled_forgetting_rate(high, every)
    assert rate_low == pytest.approx(1 - q, abs=0.005) and rate_high == pytest.approx(1 - 2 * q, abs=0.005)
    # raw events per row roughly double with the propensity (ratio 2 (1 - 2q) / (1 - q)); the
    # rate moves only by the change in the chance of a miss, q
    def raw(c):
        return (c[:, :-1].astype(bool) & ~c[:, 1:].astype(bool)).sum(axis=1).mean()
    assert raw(high) / raw(low) == pytest.approx(2 * (1 - 2 * q) / (1 - q), rel=0.03)
    assert rate_low - rate_high == pytest.approx(q, abs=0.01)
    # and the rate does not depend on how many checks there are; the raw count does
    assert pooled_forgetting_rate(low[:, :9], every) == pytest.approx(rate_low, abs=0.01)
    assert raw(low[:, :9]) < 0.5 * raw(low)


def test_statistics_cover_paper_and_non_circular_versions():
    stats = dynamics_statistics(random_dyn())
    assert [s.circular for s in stats] == [True] * 4 + [False] * 4
    for s in stats:
        assert s.effect == pytest.approx(s.value - s.baseline, nan_ok=True)
        assert s.direction in ("lower", "higher")
    last = by_name(dynamics_statistics(random_dyn(), T=96))  # last check: nothing after T
    assert np.isnan(last["early_identification_after"].value) and not last["early_identification_after"].naive_holds
