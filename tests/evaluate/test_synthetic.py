"""Shape/Trend, MLE and DCR share on small planted tables."""
import numpy as np
import pandas as pd
import pytest

from memviz.errors import BadTable, MemvizError
from memviz.evaluate.synthetic import dcr_share, evaluate_synthetic, mle, quality
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema

ONE = {"learning_rate": (0.1,)}  # no search: a single combination


def planted_frame(n, seed, task="binary", fixed_range=True):
    """x1 drives the target; x2 follows x1; cat follows the target.

    ``fixed_range``: the numericals have fixed extremes (-2 and 2 occur in every
    sample): SDMetrics bins each table's numericals on that table's own range, so a
    sample whose extremes differ scores lower on Trend whatever its dependencies.
    Otherwise they are continuous (no two rows share a value).
    """
    rng = np.random.default_rng(seed)
    if fixed_range:
        x1 = np.round(rng.uniform(-2, 2, n), 1)
        x2 = np.clip(x1 + 0.3 * rng.normal(size=n), -2, 2)
    else:
        x1 = rng.normal(size=n)
        x2 = x1 + 0.3 * rng.normal(size=n)
    if task == "regression":
        y = 2 * x1 + 0.2 * rng.normal(size=n)
        cat = np.where(x1 > 0, "hi", "lo")
    elif task == "multiclass":
        y = np.digitize(x1 + 0.1 * rng.normal(size=n), [-0.6, 0.6]).astype(str)
        cat = np.where(rng.random(n) < 0.8, np.char.add("k", y), "k9")
    else:
        y = np.where(x1 + 0.1 * rng.normal(size=n) > 0, ">50K", "<=50K")
        cat = np.where(rng.random(n) < 0.8, np.where(y == ">50K", "a", "b"), "c")
    noise = rng.choice(["u", "v", "w"], n)
    return pd.DataFrame({"x1": x1, "x2": x2, "cat": cat, "noise": noise, "y": y})


def planted(n, seed, task="binary", fixed_range=True):
    schema = Schema(numerical=("x1", "x2"), categorical=("cat", "noise"), target="y", task=task)
    return table_from_frame(planted_frame(n, seed, task, fixed_range), schema, source=f"planted{seed}")


def shuffle_columns(df, seed):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: rng.permutation(df[c].to_numpy()) for c in df.columns})


# ---------------------------------------------------------------------- quality
def test_quality_of_the_training_table_against_itself_is_one():
    train = planted(600, 0)
    q = quality(train, train.data)
    assert q.shape == pytest.approx(1.0) and q.trend == pytest.approx(1.0)
    assert list(q.column_shapes.columns[:3]) == ["column", "metric", "score"]
    assert list(q.column_shapes["column"]) == list(train.schema.columns)
    assert len(q.column_pairs) == 5 * 4 // 2
    assert {"column_1", "column_2", "metric", "score"} <= set(q.column_pairs.columns)


def test_quality_drops_for_shuffled_and_noise_tables():
    train = planted(600, 0)
    fresh = quality(train, planted(600, 1).data)
    shuffled = quality(train, shuffle_columns(train.data, 0))
    rng = np.random.default_rng(0)
    noise = pd.DataFrame({"x1": -2 + 4 * rng.beta(0.5, 3, 600), "x2": 2 - 4 * rng.beta(0.5, 3, 600),
                          "cat": rng.choice(["a", "b", "c"], 600, p=[0.1, 0.1, 0.8]),
                          "noise": rng.choice(["u", "v", "w"], 600, p=[0.8, 0.1, 0.1]),
                          "y": rng.choice([">50K", "<=50K"], 600, p=[0.9, 0.1])})
    noisy = quality(train, noise)
    for q in (fresh, shuffled, noisy):
        assert 0 <= q.shape <= 1 and 0 <= q.trend <= 1
        assert q.column_shapes["score"].between(0, 1).all()
    assert fresh.shape > 0.9 and fresh.trend > 0.9
    assert shuffled.shape > 0.99                          # marginals untouched
    assert shuffled.trend < fresh.trend - 0.1              # pairs broken
    assert noisy.shape < fresh.shape - 0.1 and noisy.trend < fresh.trend - 0.1


def test_quality_canonicalizes_categories_and_checks_columns():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200), "k": rng.integers(0, 3, 200)})
    train = table_from_frame(df, Schema(numerical=("x",), categorical=("k",), target=None))
    as_text = df.assign(k=df["k"].astype(float).astype(str))  # "1.0" as read back from a CSV
    assert quality(train, as_text).shape == pytest.approx(1.0)
    with pytest.raises(BadTable, match="'k'"):
        quality(train, df.drop(columns="k"))
    with pytest.raises(BadTable, match="'x'"):
        quality(train, df.assign(x="oops"))


# -------------------------------------------------------------------------- MLE
def test_mle_high_on_planted_table_and_chance_on_shuffled_labels():
    train, test = planted(900, 0), planted(1500, 1)
    good = mle(train, planted(900, 2).data, test)
    assert good.metric == "roc_auc"
    assert good.score > 0.95 and good.real_score > 0.95 and good.note == ""
    assert set(good.params) == {"learning_rate", "max_leaf_nodes"}
    scores = []
    for seed in range(3):
        syn = train.data.copy()
        syn["y"] = np.random.default_rng(seed).permutation(syn["y"].to_numpy())
        scores.append(mle(train, syn, test, seed=seed, real_score=good.real_score, grid=ONE).score)
    assert abs(np.mean(scores) - 0.5) < 0.08


def test_mle_reuses_a_given_real_score_and_handles_a_single_class():
    train, test = planted(300, 0), planted(300, 1)
    assert mle(train, train.data, test, real_score=0.123).real_score == 0.123
    one = train.data[train.data["y"] == ">50K"]
    res = mle(train, one, test, real_score=0.9)
    assert np.isnan(res.score) and "single class" in res.note


def test_mle_multiclass_and_unseen_categories():
    train, test = planted(900, 0, "multiclass"), planted(900, 1, "multiclass")
    syn = train.data.copy()
    syn.loc[:50, "noise"] = "never-in-test"
    res = mle(train, syn, test, real_score=1.0)
    assert res.metric == "roc_auc_ovr_macro" and res.score > 0.9


def test_mle_regression_r2():
    train, test = planted(900, 0, "regression"), planted(900, 1, "regression")
    good = mle(train, planted(900, 2, "regression").data, test)
    assert good.metric == "r2" and good.score > 0.9 and good.real_score > 0.9
    syn = train.data.assign(y=np.random.default_rng(0).permutation(train.data["y"].to_numpy()))
    assert mle(train, syn, test, real_score=good.real_score, grid=ONE).score < 0.1


def test_mle_needs_a_target():
    df = planted_frame(50, 0)
    train = table_from_frame(df, Schema(numerical=("x1",), categorical=("cat",), target=None))
    with pytest.raises(MemvizError, match="target"):
        mle(train, df, train)


# -------------------------------------------------------------------------- DCR
def test_dcr_share_copies_near_one_fresh_split_near_half():
    pytest.importorskip("memviz.engine.neighbors")
    train, test = planted(800, 0, fixed_range=False), planted(800, 1, fixed_range=False)
    copies = dcr_share(train, test, train.data, device="cpu")
    assert copies.share > 0.99 and copies.ideal == 0.5
    assert np.all(copies.dcr_train == 0) and copies.median_test > 0
    assert copies.dcr_train.shape == copies.dcr_test.shape == (800,)
    fresh = dcr_share(train, test, planted(1000, 2, fixed_range=False).data, device="cpu")
    assert abs(fresh.share - 0.5) < 0.07
    assert fresh.median_train == pytest.approx(np.median(fresh.dcr_train))


def test_dcr_share_balances_unequal_splits():
    pytest.importorskip("memviz.engine.neighbors")
    train, test = planted(1200, 0, fixed_range=False), planted(400, 1, fixed_range=False)
    syn = planted(1000, 2, fixed_range=False).data
    bal = dcr_share(train, test, syn, device="cpu")
    assert (bal.n_train, bal.n_test, bal.ideal) == (400, 400, 0.5)
    assert abs(bal.share - 0.5) < 0.07
    full = dcr_share(train, test, syn, device="cpu", balance=False)
    assert (full.n_train, full.n_test, full.ideal) == (1200, 400, 0.75)
    assert abs(full.share - 0.75) < 0.07
    assert dcr_share(train, test, train.data, device="cpu", balance=False).share > 0.99


def test_dcr_ties_count_half():
    pytest.importorskip("memviz.engine.neighbors")
    train = planted(100, 0, fixed_range=False)
    test = train.with_data(train.data.copy())  # the same rows: every distance ties
    res = dcr_share(train, test, planted(50, 3, fixed_range=False).data, device="cpu")
    assert res.share == 0.5 and np.array_equal(res.dcr_train, res.dcr_test)


# ---------------------------------------------------------------------- all
def test_evaluate_synthetic_dict():
    pytest.importorskip("memviz.engine.neighbors")
    train, test = planted(500, 0), planted(500, 1)
    out = evaluate_synthetic(train, test, planted(500, 2).data, device="cpu", real_mle=0.97)
    for key in ("shape", "trend", "mle", "dcr_share"):
        assert 0 <= out[key] <= 1, key
    assert out["mle_real"] == 0.97 and out["mle_metric"] == "roc_auc" and out["notes"] == ""
    pruned = train.subset(train.row_ids[:250])
    again = evaluate_synthetic(pruned, test, planted(500, 2).data, original_train=train, device="cpu",
                               real_mle=0.97)
    assert again["shape"] == out["shape"] and again["dcr_share"] == out["dcr_share"]
    no_test = evaluate_synthetic(train, None, planted(500, 2).data)
    assert np.isnan(no_test["mle"]) and np.isnan(no_test["dcr_share"]) and "no test split" in no_test["notes"]
