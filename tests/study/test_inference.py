"""memviz.study.inference: Holm within families, intervals over seeds, power, the binomial count."""
from itertools import combinations, product

import numpy as np
import pytest
from scipy.stats import binom, binomtest, norm, wilcoxon

from memviz.study.inference import (
    ALPHA_SEED,
    _wplus_upper,
    adjust,
    binom_critical,
    binom_power,
    binom_upper,
    count_test,
    holm,
    wilcoxon_power,
)


def _holm_by_closed_testing(p):
    """Holm's adjusted p as closed testing with Bonferroni local tests (its definition, brute force):
    p̃_i = max over every intersection I containing i of |I| · min_{j in I} p_j."""
    m = len(p)
    return [min(1.0, max(len(I) * min(p[j] for j in I) for r in range(1, m + 1)
                         for I in combinations(range(m), r) if i in I)) for i in range(m)]


@pytest.mark.parametrize("seed", range(20))
def test_holm_equals_closed_testing(seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 0.3, rng.integers(1, 8)).tolist()
    p[0] = p[-1]                                                    # a tie
    assert holm(p) == pytest.approx(_holm_by_closed_testing(p))


def test_holm_matches_statsmodels_and_leaves_nan_out():
    sm = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(3)
    for _ in range(50):
        p = rng.uniform(0, 0.2, rng.integers(1, 30))
        assert holm(p) == pytest.approx(sm.multipletests(p, method="holm")[1])
    out = holm([0.01, np.nan, 0.04])
    assert np.isnan(out[1]) and out[[0, 2]] == pytest.approx([0.02, 0.04])   # m = 2, not 3


@pytest.mark.parametrize("n", [3, 5, 8, 10])
def test_signed_rank_null_distribution_is_exact(n):
    r = np.arange(1, n + 1)
    dist = np.array([r[np.array(s, bool)].sum() for s in product((0, 1), repeat=n)])
    assert _wplus_upper(n) == pytest.approx([np.mean(dist >= w) for w in range(n * (n + 1) // 2 + 1)])


def test_wilcoxon_power_agrees_with_scipy_on_simulated_seeds():
    n, delta, sd, level = 10, 0.02, 0.03, 0.05 / 6
    rng = np.random.default_rng(1)
    hits = [wilcoxon(rng.normal(delta, sd, n), alternative="greater", method="exact").pvalue <= level
            for _ in range(1500)]
    assert wilcoxon_power(n, delta, sd, level, reps=4000) == pytest.approx(np.mean(hits), abs=0.04)
    assert wilcoxon_power(5, 1.0, 0.1, 0.05 / 36) == 0.0             # 2^-5 > 0.0014: 5 seeds can never get there
    assert wilcoxon_power(10, 0.0, 0.03, 0.05) == pytest.approx(0.05, abs=0.015)   # size under the null


def test_binomial_count_against_scipy():
    for n in (5, 10):
        for k in range(n + 1):
            want = binomtest(k, n, ALPHA_SEED, alternative="greater").pvalue if k else 1.0
            assert binom_upper(k, n) == pytest.approx(want)
    k = binom_critical(5, 0.05 / 20)
    assert binom_upper(k, 5) <= 0.05 / 20 < binom_upper(k - 1, 5)
    assert binom_power(5, 0.5, 0.05 / 20) == pytest.approx(binom.sf(k - 1, 5, 0.5))


def _seed(verdict, observed, direction="higher"):
    return {"verdict": verdict, "observed": observed, "null_median": 0.0, "null_low": -0.196, "null_high": 0.196,
            "direction": direction}


def test_count_test_effect_and_power_at_the_observed_effect():
    rows = [_seed("holds", 0.3), _seed("holds", 0.25), _seed("not shown", 0.1), _seed("holds", 0.4),
            _seed("not shown", 0.05)]
    t = count_test(rows)
    assert t["n_holds"] == 3 and t["p_claim"] == pytest.approx(binom.sf(2, 5, 0.025))
    assert t["effect"] == pytest.approx(0.22) and t["z_mean"] == pytest.approx(2.2, rel=1e-3)   # null sd 0.1
    [a] = adjust([{**t, "family": "dynamics"}])
    pi = norm.sf(norm.ppf(0.975) - t["z_mean"])
    assert a["power"] == pytest.approx(binom_power(5, pi, 0.025)) and a["label"] == "holds"


def test_adjust_corrects_within_families_only():
    def paired(p_claim, fam):
        return {"kind": "paired", "family": fam, "p_claim": p_claim, "p_against": 1.0, "p_two": 2 * p_claim,
                "min_p_two": 2 / 32, "effect": 0.01, "n": 5, "sd": 0.01, "delta_ref": 0.02}
    tests = [paired(0.001, "a"), paired(0.02, "a"), paired(0.02, "b")]
    adjust(tests)
    assert [t["m"] for t in tests] == [2, 2, 1]
    assert [t["p_adj"] for t in tests] == pytest.approx([0.004, 0.04, 0.04])
    assert [t["label"] for t in tests] == ["holds", "holds", "holds"]
    assert tests[0]["min_p_adj"] == pytest.approx(2 * 2 / 32)
    assert tests[0]["power"] == wilcoxon_power(5, 0.02, 0.01, 0.05 / 4)
