"""Distance membership inference (memviz.evidence.membership) against brute force, sklearn and planted copies."""
import json

import numpy as np
import pytest
from evidence_tables import numeric_table, plant, three_parts
from sklearn.metrics import roc_auc_score

from memviz.engine.neighbors import NeighborEngine
from memviz.errors import MemvizError
from memviz.evidence.membership import (
    FPRS,
    membership_inference,
    synthetic_engine,
    tpr_at_fpr,
)
from memviz.tables.data import table_from_frame
from memviz.verdict.evidence_words import membership_sentence


@pytest.fixture(scope="module")
def parts(sample):
    train, test = sample
    return three_parts(train, 400, seed=5)


def _brute_nearest(engine_table, queries, distance):
    """min_g d(x, g) by the engine on each query row alone (no shared pruning state)."""
    eng = NeighborEngine(distance=distance, device="cpu", algorithm="dense").fit(engine_table)
    return eng.kneighbors(queries, k=1).dist[:, 0]


def test_scores_are_nearest_generated_distances_and_auc_is_sklearns(parts):
    tr, sy, ho = parts
    res = membership_inference(tr, sy, ho, device="cpu")
    rows = res.rows.set_index("row_id").loc[tr.row_ids]
    np.testing.assert_allclose(rows["score"].to_numpy(), _brute_nearest(sy, tr, "standardized"), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.sort(res.holdout_scores), np.sort(_brute_nearest(sy, ho, "standardized")),
                               atol=1e-12)
    labels = np.r_[np.ones(len(tr)), np.zeros(len(ho))]
    assert res.auc == pytest.approx(roc_auc_score(labels, -np.r_[rows["score"], res.holdout_scores]), abs=1e-12)
    assert res.roc_fpr[0] == 0 and res.roc_tpr[-1] == 1 and np.all(np.diff(res.roc_fpr) >= 0)
    assert (res.rows["score"].diff().dropna() >= 0).all()                 # most exposed first
    json.dumps(res.to_dict(), allow_nan=False)


def test_tpr_at_fpr_flags_at_most_the_allowed_false_alarms():
    rng = np.random.default_rng(0)
    y = np.round(rng.uniform(0, 1, 250), 2)                              # ties among non-members
    x = np.round(rng.uniform(0, 1, 300), 2)
    for a in (0.01, 0.05, 0.2):
        t = tpr_at_fpr(x, y, a)
        assert np.sum(y < t["threshold"]) <= int(a * len(y)) and t["false_alarms"] == int(a * len(y))
        assert t["tpr"] == np.mean(x < t["threshold"]) and t["low"] <= t["tpr"] <= t["high"]
    t = tpr_at_fpr(x, y[:50], 0.001)
    assert not t["resolved"] and t["false_alarms"] == 0 and t["threshold"] == y[:50].min()


def test_fresh_rows_are_chance_and_planted_copies_are_named(parts):
    tr, sy, ho = parts
    null = membership_inference(tr, sy, ho, device="cpu")
    assert null.auc_low <= 0.5 <= null.auc_high
    assert "no better than chance" in membership_sentence(null)
    syn, copied = plant(tr, sy, 0.2, seed=1)
    res = membership_inference(tr, syn, ho, device="cpu", flagged_row_ids=copied[:30])
    assert res.auc_low > 0.5 and "better than chance" in membership_sentence(res) and "no better" not in membership_sentence(res)
    top = res.rows.head(len(copied))
    assert set(top["row_id"]) == set(copied) and (top["score"] == 0).all()
    assert res.tpr[0]["fpr"] == FPRS[0] and res.tpr[0]["tpr"] >= 0.2
    assert res.overlap["n_both"] == 30 and res.overlap["n_flagged"] == 30
    assert res.overlap["expected"] == pytest.approx(30 * res.n_exposed / len(tr))


def test_paper_distance_runs_and_engine_must_match(parts):
    tr, sy, ho = parts
    res = membership_inference(tr, sy, ho, distance="paper", device="cpu")
    assert res.distance == "paper" and 0 <= res.auc <= 1
    eng = synthetic_engine(sy, "paper", "cpu")
    with pytest.raises(MemvizError, match="engine"):
        membership_inference(tr, sy, ho, engine=eng, device="cpu")
    with pytest.raises(MemvizError, match="distance"):
        membership_inference(tr, sy, ho, distance="euclid")


def test_dataframes_are_accepted_and_missing_columns_named(parts):
    tr, sy, ho = parts
    res = membership_inference(tr, sy.data.reset_index(drop=True), ho.data, device="cpu")
    assert res.n_synthetic == len(sy) and res.n_holdout == len(ho)
    with pytest.raises(MemvizError, match="age"):
        membership_inference(tr, sy.data.drop(columns=["age"]), ho, device="cpu")


def test_all_numerical_table_planted_copies_found():
    t = numeric_table(1200, seed=2)
    tr, sy, ho = three_parts(t, 400, seed=3)
    syn, copied = plant(tr, sy, 0.2, seed=4)
    res = membership_inference(tr, table_from_frame(syn, tr.schema, role="synthetic"), ho, device="cpu")
    assert res.auc_low > 0.5 and set(res.rows.head(len(copied))["row_id"]) == set(copied)
