"""The why study's declared tests (memviz.study.whytests) on inputs whose answers are known: the permutation
test of a mean AUC over warm-ups, its floor written "p < 1e-4", the high-risk combinations by their rule,
cross-fitted, and the high-risk copies against the baseline."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.risk.explanation import mean_auc
from memviz.study import whytests as W
from memviz.study.whyreport import p_text_with_floor
from memviz.tables.data import table_from_frame


def test_the_permutation_p_is_the_share_of_relabellings_at_least_as_far_from_one_half():
    """Six rows, two warm-ups: every one of the 720 permutations enumerated against the sampled p."""
    score = np.array([0.1, 0.4, 0.35, 0.8, 0.7, 0.9])
    y = np.array([[0, 0, 1, 1, 0, 1], [0, 1, 0, 1, 1, 0]], dtype=bool).T
    obs = abs(mean_auc(score, y) - 0.5)
    exact = np.mean([abs(mean_auc(score[list(p)], y) - 0.5) >= obs - 1e-12
                     for p in itertools.permutations(range(6))])
    got = W.permutation_p(score, y, n_perm=20_000, seed=1)
    assert got == pytest.approx(exact, abs=0.01)


def test_a_p_at_the_permutation_floor_is_written_as_a_bound():
    assert p_text_with_floor(1 / 10_001, 10_000) == "p < 1e-4"
    assert p_text_with_floor(1 / 20_001, 20_000) == "p < 1e-4"
    assert p_text_with_floor(0.0004, 10_000) == "p 4.0e-04" and p_text_with_floor(0.2, 10_000) == "p 0.200"


def test_high_risk_pairs_by_their_rule():
    """A pair is high-risk when at least 3 rows hold it and their mean Top rate is at least twice the base rate."""
    texts = pd.DataFrame({"a": ["x"] * 4 + ["y"] * 6, "b": ["p", "p", "p", "q"] + ["q"] * 6},
                         index=pd.Index(range(10, 20)))
    rate = pd.Series([0.5, 0.5, 0.2, 0.0] + [0.0] * 6, index=texts.index)   # base 0.12: (x, p) mean 0.4 >= 0.24
    rows, n = W.high_risk_rows(texts, rate, base=0.12)
    assert set(rows) == {10, 11, 12} and n == 1
    rows, n = W.high_risk_rows(texts, rate, base=0.3)                         # 0.4 < 0.6: none
    assert len(rows) == 0 and n == 0


def test_high_risk_copies_are_cross_fitted_and_read_against_the_baseline():
    rng = np.random.default_rng(0)
    n = 40
    df = pd.DataFrame({"c": ["rare"] * 4 + ["common"] * (n - 4), "d": ["u"] * 4 + list(rng.choice(["u", "v"], n - 4)),
                       "v": rng.normal(size=n), "label": rng.choice(["0", "1"], n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train = table_from_frame(df, target="label")
    rows = pd.DataFrame([{"seed": s, "row_id": i, "top": i < 4} for s in range(3) for i in range(n)])
    copies = pd.DataFrame([{"method": m, "seed": s, "row_id": 0, "copies": c}
                           for s in range(3) for m, c in (("baseline", 10), ("isolation", 4), ("random", 12))]
                          + [{"method": "baseline", "seed": s, "row_id": 30, "copies": 5} for s in range(3)])
    tests, cells = W.combination_tests(train, rows, copies, "t", methods=("isolation", "random"))
    assert set(cells["risky_copies"][cells["method"] == "baseline"]) == {10}   # row 30's copies are not high-risk
    iso = next(t for t in tests if t["method"] == "isolation")
    assert iso["relative"] == pytest.approx(0.6) and iso["n_positive"] == 3
    rnd = next(t for t in tests if t["method"] == "random")
    assert rnd["relative"] == pytest.approx(-0.2) and rnd["n_negative"] == 3
