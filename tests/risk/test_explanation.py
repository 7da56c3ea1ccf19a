"""The model of memorization (memviz.risk.explanation): its AUC against scikit-learn's, its held-out AUC on a
planted Top group (strong) and on random labels (said to be no better than chance), SHAP's additivity, the value
table redacted, and one-line refusals."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from memviz.errors import MemvizError
from memviz.risk.explanation import explain_rows, fit_model, model_input, rank_auc, strength, value_attributions
from memviz.tables.data import table_from_frame
from memviz.verdict.words import explanation_sentence
from unseen_tables import credit_like

pytest.importorskip("shap")


def test_rank_auc_is_scikit_learns_with_ties_and_several_label_columns():
    from sklearn.metrics import roc_auc_score  # lazy: sklearn, an extra (train)

    rng = np.random.default_rng(0)
    s = rng.integers(0, 5, 200).astype(float)                    # many ties
    y = rng.random((200, 3)) < 0.3
    got = rank_auc(s, y)
    assert np.allclose(got, [roc_auc_score(y[:, j], s) for j in range(3)])
    assert rank_auc(s, y[:, 0]) == pytest.approx(roc_auc_score(y[:, 0], s))
    assert np.isnan(rank_auc(s, np.zeros(200, dtype=bool)))


@pytest.fixture(scope="module")
def credit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return table_from_frame(credit_like(300, seed=5), target="Status")


def test_a_planted_top_group_is_explained_strongly_and_by_the_right_feature(credit):
    """Top = the 10 % of rows with the largest Price in 3 of 3 'warm-ups' (plus a little noise): the held-out
    AUC is high, the words say strong, and Price (or the extremeness factor) carries the fit."""
    rng = np.random.default_rng(1)
    price = credit.data["Price"].to_numpy()
    top = price >= np.quantile(price, 0.9)
    y = np.column_stack([top ^ (rng.random(len(top)) < 0.02) for _ in range(3)])
    ex = explain_rows(credit, y, n_boot=200)
    assert ex.auc > 0.85 and ex.auc_low > 0.7 and ex.strength in ("strong", "moderate")
    assert ex.importance["feature"].iloc[0] in ("Price", "extremeness")
    assert ex.n_warmups == 3 and ex.oof.index.equals(credit.data.index)
    assert "held-out AUC" in explanation_sentence(ex) and ex.strength in explanation_sentence(ex)


def test_random_labels_are_said_to_be_no_better_than_chance(credit):
    """Labels unrelated to the rows: the held-out AUC stays at or below chance (a cross-validated AUC under no
    signal is biased below 0.5: a held-out row's neighbours in the fit lack its own label) and the words say so."""
    rng = np.random.default_rng(2)
    y = rng.random(len(credit)) < 0.1
    ex = explain_rows(credit, y, n_boot=200)
    assert ex.auc_low <= 0.5 and ex.auc < 0.6
    assert ex.strength == "no better than chance"


def test_shap_values_add_up_to_the_models_log_odds(credit):
    rng = np.random.default_rng(3)
    y = credit.data["Age"].to_numpy() > 60
    y = y ^ (rng.random(len(y)) < 0.05)
    ex = explain_rows(credit, y, n_boot=50)
    X = model_input(ex.features)
    model = fit_model(X, y.astype(float), 1, 0)
    total = ex.shap.to_numpy().sum(axis=1) + ex.base_value
    assert np.allclose(total, model.decision_function(X), atol=1e-6)


def test_the_value_table_redacted_shows_no_raw_value(credit):
    rng = np.random.default_rng(4)
    y = (credit.data["Job"] == "freelance").to_numpy() & (rng.random(len(credit)) < 0.6)
    ex = explain_rows(credit, y, n_boot=50)
    raw = value_attributions(credit, ex)
    red = value_attributions(credit, ex, redacted=True, salt="s")
    assert {"freelance", "fixed"} & set(raw["value"])
    assert not ({"freelance", "fixed", "partime", "others"} & set(red["value"]))
    assert red.loc[red["column"] == "Job", "value"].str.startswith("cat-").all()
    assert (raw["rows"] >= 3).all()


def test_refusals_are_one_line(credit):
    with pytest.raises(MemvizError, match="every row is on the same side"):
        explain_rows(credit, np.zeros(len(credit), dtype=bool))
    y = np.zeros(len(credit), dtype=bool)
    y[:3] = True
    with pytest.raises(MemvizError, match="3 rows on the smaller side of the Top group: too few for 5-fold"):
        explain_rows(credit, y)
    with pytest.raises(MemvizError, match="12 labels for 300 rows"):
        explain_rows(credit, np.zeros(12, dtype=bool))


def test_strength_words():
    assert strength(0.9, 0.85) == "strong" and strength(0.75, 0.6) == "moderate"
    assert strength(0.62, 0.55) == "weak" and strength(0.9, 0.45) == "no better than chance"
    assert strength(float("nan"), float("nan")) == "no better than chance"
    assert pd.isna(rank_auc(np.ones(5), np.array([True] * 5)))
