"""Leak explorer computations on the planted run (tests/planted.py): who is copied, which cells match."""
import re

import numpy as np
import pandas as pd
import pytest
from planted import N_TRAIN, SCHEMA, planted_finished
from scipy import stats

from memviz.errors import MemvizError
from memviz.leaks.rows import (
    LeakView,
    cell_matches,
    closeness_by_row,
    copies_of,
    copies_vs_null,
    flagged_closeness,
    most_copied,
    rank_rows,
    style_matches,
)
from memviz.measure.floor import floor_from_attributions
from memviz.measure.nullfit import LOG_ALPHA_GRID
from memviz.measure.rownull import DEFAULT_SPREAD, joint_floor, mixture_prior, predictive_counts, row_null
from memviz.tables.data import Table
from memviz.tables.schema import Schema


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return planted_finished(tmp_path_factory)


# ------------------------------------------------------------------------------ ranking
def test_most_copied_orders_by_total_then_row_id(run):
    _, res = run
    dyn = res.dynamics
    mc = most_copied(dyn, n=3)
    assert list(mc.columns[:5]) == ["row_id", "total_count", "first_epoch", "forgetting_events", "top"]
    totals = mc["total_count"].to_numpy()
    assert np.all(np.diff(totals) <= 0) and len(mc) == 3
    full = most_copied(dyn, n=1000)
    assert (full["total_count"] > 0).all() and len(full) == int((dyn.total > 0).sum())
    for (_, r1), (_, r2) in zip(full.iloc[:-1].iterrows(), full.iloc[1:].iterrows()):
        assert r1.total_count > r2.total_count or (r1.total_count == r2.total_count and r1.row_id < r2.row_id)
    train = res_train(run)
    assert mc["row_id"].iloc[0] == train.data.index[0]  # position 0 gets 6 + 5 + 7 copies
    assert mc["total_count"].iloc[0] == 18
    pos = np.searchsorted(dyn.row_ids, mc["row_id"])
    np.testing.assert_array_equal(mc["total_count"], dyn.total[pos])
    assert len(most_copied(dyn, n=1000, include_uncopied=True)) == N_TRAIN
    with pytest.raises(MemvizError, match="n must be"):
        most_copied(dyn, n=0)


def res_train(run) -> Table:
    return run[0].train()


# --------------------------------------------------------------------------- equality
def test_cell_matches_tolerance_and_canonical_categories():
    schema = Schema(numerical=("x",), categorical=("k",), target=None)
    gen = pd.DataFrame({"x": [1e5 * (1 + 1e-12), 1e5 * (1 + 1e-6), 0.0, 1e-300, np.nan, np.nan, 7.0],
                        "k": ["1.0", "a", None, "b", np.nan, "x", True]})
    ref = pd.DataFrame({"x": [1e5, 1e5, 0.0, 0.0, np.nan, 1.0, 7],
                        "k": [1, "b", np.nan, "b", None, "x ", "True"]})
    m = cell_matches(gen, ref, schema)
    assert list(m["x"]) == [True, False, True, False, True, False, True]
    assert list(m["k"]) == [True, False, True, True, True, True, True]
    with pytest.raises(MemvizError):
        cell_matches(gen, ref.iloc[:3], schema)


# ------------------------------------------------------------------------- copies_of
def test_copies_of_returns_only_memorized_copies_of_that_row(run):
    store, res = run
    train = store.train()
    top = int(train.data.index[0])
    view = copies_of(store, top)
    long = res.checks
    expected = long[(long["nn1"] == top) & long["memorized"]]
    assert view.n_copies == len(expected) == 18
    assert len(view.copies) == 18 and isinstance(view, LeakView)
    got = set(zip(view.copies["check"], view.copies["synthetic_id"]))
    assert got == set(zip(expected["check"], expected["synthetic_id"]))
    # the non-memorized generated rows attributed to the same row are left out
    assert ((long["nn1"] == top) & ~long["memorized"]).any()
    assert np.all(np.diff(view.copies["ratio"].to_numpy()) >= 0)  # closest first
    # values are the stored generated rows of those (check, synthetic_id)
    for _, r in view.copies.iterrows():
        s = store.samples(int(r["check"])).set_index("synthetic_id").loc[int(r["synthetic_id"])]
        assert s["c1"] == r["c1"] and s["b"] == r["b"]
    assert list(view.source["row_id"]) == [top]
    assert view.source["c1"].iloc[0] == train.data.loc[top, "c1"]


def test_copies_of_limit_check_and_errors(run):
    store, res = run
    train = store.train()
    top = int(train.data.index[0])
    lim = copies_of(res, top, limit=4)  # a WarmupResult works too
    assert len(lim.copies) == 4 and lim.n_copies == 18
    full = copies_of(store, top, checks=res.checks, train=train)
    np.testing.assert_array_equal(lim.copies["ratio"], full.copies["ratio"].iloc[:4])
    one = copies_of(store, top, check=1)
    assert set(one.copies["check"]) == {1} and one.n_copies == 5
    never = int(train.data.index[-1])
    assert int(res.dynamics.total[np.searchsorted(res.dynamics.row_ids, never)]) == 0
    empty = copies_of(store, never)
    assert empty.n_copies == 0 and len(empty.copies) == 0 and len(empty.table()) == 1
    with pytest.raises(MemvizError, match="row_id 5 is not a training row"):
        copies_of(store, 5)
    with pytest.raises(MemvizError, match="check 9"):
        copies_of(store, top, check=9)
    calls = []
    cached = copies_of(store, top, samples=lambda c: calls.append(c) or store.samples(c))
    assert sorted(calls) == [0, 1, 2] and cached.n_copies == 18


def test_match_mask_on_planted_copies(run):
    store, _ = run
    top = int(store.train().data.index[0])
    view = copies_of(store, top)
    m = view.match
    assert list(m.columns) == list(SCHEMA.columns) and m.index.equals(view.copies.index)
    assert m["a"].all() and m["c1"].all() and m["y"].all()   # copied (a within 1e-12 relative)
    assert not m["b"].any()                                  # b + 1 never matches
    assert 0 < m["c2"].sum() < len(m)                        # 1.0 vs 1 matches in half the rows
    train_c2 = store.train().data.loc[top, "c2"]
    np.testing.assert_array_equal(m["c2"], view.copies["c2"].to_numpy() == float(train_c2))
    t, mask = view.table(), view.mask()
    assert t.shape == mask.shape and list(t.index[:2]) == [f"training row {top}", "copy 1"]
    assert mask.iloc[1:][list(SCHEMA.columns)].to_numpy().tolist() == m.to_numpy().tolist()
    assert mask.iloc[0]["a"] and not mask.iloc[0]["b"] and not mask[["check", "ratio"]].any().any()


def test_style_matches_highlights_exactly_the_mask(run):
    store, _ = run
    view = copies_of(store, int(store.train().data.index[0]), limit=5)
    for redacted in (False, True):
        html = style_matches(view, redacted).to_html()
        styled = set(re.findall(r"#(T_\w+?_row\d+_col\d+)", html))
        assert len(styled) == int(view.mask().to_numpy().sum())
    raw_html = style_matches(view, redacted=True).to_html()
    assert "SECRET-" not in raw_html and "SECRET-" in style_matches(view).to_html()


# ------------------------------------------------------------- ranking by excess
def _planted_floor(train, seed=0, n_holdout=200):
    """A floor of the planted training rows from simulated hold-out attributions."""
    rng = np.random.default_rng(seed)
    ids = train.row_ids
    return floor_from_attributions(ids, rng.choice(ids, n_holdout), rng.uniform(0, 1, n_holdout), distance="paper")


def test_rank_rows_by_excess_and_by_copies(run):
    store, res = run
    dyn = res.dynamics
    floor = _planted_floor(store.train())
    null = row_null(floor, dyn.total, res.per_check["n_synthetic"].to_numpy())
    by_excess = rank_rows(dyn, null, n=1000)
    assert (by_excess["copies"] > 0).all() and len(by_excess) == int((dyn.total > 0).sum())
    assert np.all(np.diff(by_excess["excess"].to_numpy()) <= 0)
    np.testing.assert_allclose(by_excess["excess"], by_excess["copies"] - by_excess["expected"])
    by_copies = rank_rows(dyn, null, by="copies", n=1000)
    assert by_copies["row_id"].tolist() == most_copied(dyn, n=1000)["row_id"].tolist()
    assert rank_rows(dyn, None, by="copies", n=3)["row_id"].tolist() == most_copied(dyn, n=3)["row_id"].tolist()
    with pytest.raises(MemvizError, match="floor"):
        rank_rows(dyn, None)
    with pytest.raises(MemvizError, match="by="):
        rank_rows(dyn, null, by="ratio")
    other = row_null(floor, np.zeros_like(dyn.total), 10)
    with pytest.raises(MemvizError, match="other"):
        rank_rows(dyn, other)


def _law_counts(floor, c, m, spread, upto):
    """Σ_i P(C_i = x), x = 0..upto, under the per-row law of row_null(spread), written out with scipy."""
    h_rows, mu, hits = floor.n_holdout, floor.null.rate, floor.hits
    x = np.arange(upto + 1)
    if spread == "joint":
        jf = joint_floor(floor, c)
        a, w = np.array(jf.null.alphas), np.array(jf.null.weights)
        b = a / mu + h_rows
        return sum((w[:, None] * stats.nbinom.pmf(x[None], (a + h)[:, None], (b / (b + m))[:, None])).sum(0)
                   for h in hits)
    a = np.exp(LOG_ALPHA_GRID)
    v = mixture_prior(c)[0]
    b = a / mu + h_rows
    expected = row_null(floor, c, m, spread="mixture").expected
    out = np.zeros(len(x))
    for i, h in enumerate(hits):
        r = v * stats.nbinom.pmf(h, a, a / (a + h_rows * mu))                       # responsibilities given h_i
        r /= r.sum()
        lam = expected[i] / (m * np.sum(r * (a + h) / b))                           # the rates' one scale λ
        out += (r[:, None] * stats.nbinom.pmf(x[None], (a + h)[:, None], ((b / lam) / (b / lam + m))[:, None])).sum(0)
    return out


def test_copies_vs_null_counts_every_row_and_draws_the_row_tests_own_law(run):
    """The figure's expected rows per copy count come from the null whose q-values the row table shows
    (before: from the hold-out-only spread, whatever test the table used)."""
    store, res = run
    floor = _planted_floor(store.train())
    total, m = res.dynamics.total.astype(np.int64), int(res.per_check["n_synthetic"].sum())
    tab = copies_vs_null(floor, total, m)
    assert tab["observed"].sum() == N_TRAIN and tab["expected"].sum() == pytest.approx(N_TRAIN)
    assert tab["low"].iloc[0] == tab["high"].iloc[0] == 0 and tab["high"].iloc[-1] == total.max()
    np.testing.assert_allclose(tab["expected"].to_numpy()[:-1], _law_counts(floor, total, m, DEFAULT_SPREAD,
                                                                            int(total.max()))[:-1], rtol=1e-6)
    for spread in ("joint", "mixture"):
        law = _law_counts(floor, total, m, spread, int(total.max()))
        got = copies_vs_null(floor, total, m, spread=spread)["expected"].to_numpy()
        np.testing.assert_allclose(got[:-1], law[:-1], rtol=1e-6, err_msg=spread)
        # the same law's means are the row table's expected counts
        upto = 40 * int(total.max()) + 200
        mean = np.arange(upto + 1) @ predictive_counts(floor, total, m, upto, spread=spread)
        assert mean == pytest.approx(row_null(floor, total, m, spread=spread).expected.sum(), rel=1e-6)
    wide = copies_vs_null(floor, total * 50, m, max_bins=10)                  # grouped bins
    assert len(wide) <= 10 and wide["observed"].sum() == N_TRAIN
    assert (wide["low"].iloc[1:].to_numpy() <= wide["high"].iloc[1:].to_numpy()).all()


def test_flagged_closeness_and_counts_per_row(run):
    store, res = run
    train = store.train()
    flagged = flagged_closeness(train, res.checks, store.samples)
    assert len(flagged) == int(res.checks["memorized"].sum()) and flagged["memorized"].all()
    # planted copies: a equal (1e-12), c1 verbatim, b + 1 always: never exact
    assert not flagged["exact"].any() and set(flagged["level"]) <= {"near-exact", "differs"}
    per_row = closeness_by_row(flagged)
    pos = np.searchsorted(res.dynamics.row_ids, per_row["row_id"])
    np.testing.assert_array_equal(per_row[["exact_copies", "near_exact_copies", "differing_copies"]].sum(axis=1),
                                  res.dynamics.total[pos])
    ranked = rank_rows(res.dynamics, by="copies", closeness_rows=per_row)
    assert (ranked["near_exact_copies"] + ranked["differing_copies"] + ranked["exact_copies"]
            == ranked["copies"]).all()
    everything = flagged_closeness(train, res.checks, store.samples, flagged_only=False)
    assert len(everything) == len(res.checks)


def test_leak_view_says_how_close_each_copy_is(run):
    store, _ = run
    view = copies_of(store, int(store.train().data.index[0]))
    t = view.table()
    assert list(t.columns[:7]) == ["check", "epoch", "ratio", "how close", "largest difference",
                                   "r ≈ 0 from scaling", "synthetic_id"]
    assert t["how close"].iloc[0] == "" and set(t["how close"].iloc[1:]) <= {"near-exact", "differs"}
    assert (t["largest difference"].iloc[1:] != "").all()
    assert view.closeness.pairs.index.equals(view.copies.index)
