"""Leak explorer computations on a planted run: who is copied, which cells match, redaction.

``planted_run`` writes a finished run through the RunStore API (no model): 40 training
rows with non-contiguous row_ids, 3 checks of 40 generated rows whose NN1 and memorized
flags are planted. Memorized rows copy ``a`` (up to 1e-12 relative) and ``c1`` verbatim,
never ``b``, and ``c2`` (as float codes, 1 vs 1.0) in exactly half of them.
"""
import re

import numpy as np
import pandas as pd
import pytest

from memviz.data import Table
from memviz.errors import MemvizError
from memviz.columnleaks import ColumnLeak, column_match_rates, run_column_match_rates
from memviz.leaks import LeakView, cell_matches, copies_of, most_copied, style_matches
from memviz.redact import bin_edges, category_labels, redact
from memviz.schema import Schema
from memviz.store import RunStore
from memviz.warmup import load_warmup

SCHEMA = Schema(numerical=("a", "b"), categorical=("c1", "c2"), target="y", task="binary", name="planted")
N_TRAIN, N_GEN, EPOCHS = 40, 40, (2, 4, 6)
#: planted attribution per check: training position -> number of memorized copies
COPIES = [{0: 6, 1: 2, 2: 1}, {0: 5, 1: 3}, {0: 7, 3: 1, 2: 2}]


def planted_train(seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    ids = (100 + 3 * np.arange(N_TRAIN)).astype(np.int64)[::-1]  # non-contiguous, descending
    df = pd.DataFrame({
        "a": np.round(rng.uniform(10_000, 99_999, N_TRAIN), 3) + 0.123,
        "b": rng.integers(0, 50, N_TRAIN).astype(np.int64),
        "c1": [f"SECRET-{i:02d}" for i in range(N_TRAIN)],
        "c2": rng.integers(1, 4, N_TRAIN).astype(np.int64),
        "y": rng.choice(["<=50K", ">50K"], N_TRAIN),
    }, index=pd.Index(ids, name="row_id"))
    return Table(df, SCHEMA, "planted")


def planted_check(train: Table, c: int, rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One check's (long table, samples)."""
    d = train.data
    nn1, mem = [], []
    for pos, k in COPIES[c].items():
        nn1 += [pos] * k
        mem += [True] * k
    rest = N_GEN - len(nn1)
    nn1 += list(rng.integers(0, N_TRAIN, rest))
    mem += [False] * rest
    nn1[len(mem) - 1] = 0  # one non-memorized row attributed to the most-copied row
    nn1, mem = np.asarray(nn1), np.asarray(mem)
    src = d.iloc[nn1].reset_index(drop=True)
    gen = pd.DataFrame({
        "a": np.where(mem, src["a"] * (1 + 1e-12), src["a"] + 0.5),
        "b": src["b"] + 1,
        "c1": np.where(mem, src["c1"], "other"),
        "c2": np.where(mem & (np.arange(N_GEN) % 2 == 0), src["c2"], src["c2"] % 3 + 1).astype(np.float64),
        "y": src["y"],
    })
    order = rng.permutation(N_GEN)  # synthetic ids not in attribution order
    gen = gen.iloc[order].reset_index(drop=True)
    nn1, mem = nn1[order], mem[order]
    ratio = np.where(mem, rng.uniform(0.0, 0.3, N_GEN), rng.uniform(0.4, 1.0, N_GEN))
    long = pd.DataFrame({"check": c, "epoch": EPOCHS[c], "synthetic_id": np.arange(N_GEN),
                         "nn1": d.index.to_numpy()[nn1], "nn2": d.index.to_numpy()[(nn1 + 1) % N_TRAIN],
                         "d1": ratio, "d2": 1.0, "ratio": ratio, "memorized": mem})
    gen.insert(0, "synthetic_id", np.arange(N_GEN))
    return long, gen


def planted_run(path, seed: int = 0, n_checks: int = 3) -> RunStore:
    """A finished run directory with planted checks (see the module docstring)."""
    train = planted_train(seed)
    rng = np.random.default_rng(seed + 1)
    with pytest.MonkeyPatch.context() as mp:  # package versions would import torch (seconds)
        mp.setattr("memviz.store.versions", lambda: {})
        store = RunStore.create(path, train, {"top_frac": 0.1, "epochs": EPOCHS[n_checks - 1], "check_every": 2})
    for c in range(n_checks):
        long, gen = planted_check(train, c, rng)
        store.write_check(c, long, gen)
    store.update(status="finished")
    return store


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store = planted_run(tmp_path_factory.mktemp("leaks") / "run")
    return store, load_warmup(store.path)


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


# --------------------------------------------------------------------------- redaction
def _parse_range(label: str) -> tuple[float, float]:
    a, b = label.split(" – ")
    return float(a.replace(",", "")), float(b.replace(",", ""))


def test_redact_hides_every_raw_value_and_keeps_shape():
    train = planted_train(3)
    df = train.data.copy()
    df.loc[df.index[0], "a"] = np.nan
    df.loc[df.index[1], "c1"] = None
    df["extra"] = np.arange(len(df))
    red = redact(df, SCHEMA, salt="k")
    assert red.shape == df.shape and red.index.equals(df.index) and list(red.columns) == list(df.columns)
    for col in SCHEMA.columns:
        raw = df[col].astype(str).to_numpy()
        assert not np.any(red[col].astype(str).to_numpy() == raw), col
        assert not red[col].astype(str).str.contains("SECRET").any()
    assert red.loc[df.index[0], "a"] == "missing" and red.loc[df.index[1], "c1"] == "missing"
    for v, lab in zip(df["a"].iloc[1:], red["a"].iloc[1:]):
        lo, hi = _parse_range(lab)
        assert lo <= v < hi and hi - lo < df["a"].max() - df["a"].min()
    # equal categories keep equal labels, different ones different labels
    codes = red["c2"].to_numpy()
    for v in df["c2"].unique():
        assert len(set(codes[df["c2"].to_numpy() == v])) == 1
    assert len(set(codes)) == df["c2"].nunique()
    assert all(re.fullmatch(r"cat-[0-9a-f]{4,}", x) for x in codes)
    assert (red["extra"] == df["extra"]).all()  # not a schema column
    assert redact(df, SCHEMA, salt="k").equals(red)
    assert not redact(df, SCHEMA, salt="other")["c2"].equals(red["c2"])


def test_redact_constant_column_still_a_range():
    schema = Schema(numerical=("x",), categorical=(), target=None)
    df = pd.DataFrame({"x": [42.0, 42.0, 42.0]})
    red = redact(df, schema)
    lo, hi = _parse_range(red["x"].iloc[0])
    assert lo <= 42 < hi and "42" != red["x"].iloc[0]


def test_redaction_ranges_come_from_the_whole_training_column():
    """Regression: ranges followed the spread of the rows on screen, so a day-count age shown for
    a few close rows became "14,330 – 14,340" (a birth date to within 10 days)."""
    rng = np.random.default_rng(0)
    schema = Schema(numerical=("age_days",), categorical=(), target=None)
    train = pd.DataFrame({"age_days": rng.uniform(6_500, 33_000, 3_000).round()})
    shown = pd.DataFrame({"age_days": [14_331.0, 14_335.0, 14_338.0]})
    narrow = redact(shown, schema)                                     # old behaviour without a reference
    wide = redact(shown, schema, reference=train)
    for lab in wide["age_days"]:
        lo, hi = _parse_range(lab)
        assert hi - lo >= (train["age_days"].max() - train["age_days"].min()) / 10  # years, not days
        assert ((train["age_days"] >= lo) & (train["age_days"] < hi)).sum() >= 10
    lo, hi = _parse_range(narrow["age_days"].iloc[0])
    assert hi - lo < 100                                               # what a reference prevents
    edges = bin_edges(train["age_days"].to_numpy())
    counts = np.histogram(train["age_days"], bins=edges)[0]
    assert (counts >= 10).all() and edges[0] <= train["age_days"].min() and edges[-1] > train["age_days"].max()


def test_sparse_tails_are_merged_so_no_range_singles_out_a_few_rows():
    x = np.r_[np.arange(1000.0), [99_999.0]]                            # one extreme value (a capital gain)
    edges = bin_edges(x, min_rows=10)
    counts = np.histogram(x, bins=edges)[0]
    assert (counts >= 10).all()
    schema = Schema(numerical=("x",), categorical=(), target=None)
    red = redact(pd.DataFrame({"x": [99_999.0, -5.0, 250_000.0]}), schema, reference=pd.DataFrame({"x": x}))
    assert "99,999" not in " ".join(red["x"]) and red["x"].iloc[1].startswith("below")
    assert red["x"].iloc[2].endswith("or more")


def test_category_hashes_are_keyed_per_column():
    """Regression: one hash per value whatever the column, so cat-4fd1 meant 1 in every 0/1 column."""
    schema = Schema(numerical=(), categorical=("smoker", "diabetic"), target=None)
    df = pd.DataFrame({"smoker": ["1", "0", "1"], "diabetic": ["1", "1", "0"]})
    red = redact(df, schema, salt="report-1")
    assert red.loc[0, "smoker"] != red.loc[0, "diabetic"]              # same value, other column
    assert red.loc[0, "smoker"] == red.loc[2, "smoker"]                 # same value, same column
    assert redact(df, schema, salt="report-2").loc[0, "smoker"] != red.loc[0, "smoker"]  # per report
    assert category_labels(["1"], "smoker", salt="report-1")["1"] == red.loc[0, "smoker"]


def test_leak_view_redacts_with_the_training_ranges(run):
    store, res = run
    train = store.train()
    view = copies_of(store, int(most_copied(res.dynamics, n=1)["row_id"].iloc[0]), limit=3)
    assert set(view.bins) == set(SCHEMA.distance_numerical)
    t = view.table(redacted=True, salt="s")
    np.testing.assert_array_equal(view.bins["a"], bin_edges(train.data["a"].to_numpy()))
    assert (t["a"] == redact(view.table()[["a"]], SCHEMA, reference=train.data)["a"]).all()


# ------------------------------------------------------------------------ column rates
def test_column_match_rates_planted(run):
    store, res = run
    train = store.train()
    long = res.checks[res.checks["check"] == 2]
    leak = column_match_rates(train, store.samples(2), long)
    assert isinstance(leak, ColumnLeak)
    rates = leak.columns.set_index("column")
    assert list(rates.index) == list(SCHEMA.columns)
    assert rates.loc["a", "memorized_rate"] == 1.0 and rates.loc["c1", "memorized_rate"] == 1.0
    assert rates.loc["b", "memorized_rate"] == 0.0 and rates.loc["b", "non_memorized_rate"] == 0.0
    assert rates.loc["a", "non_memorized_rate"] == 0.0 and rates.loc["c1", "non_memorized_rate"] == 0.0
    n_mem = sum(COPIES[2].values())
    assert leak.n_memorized == n_mem and leak.n_non_memorized == N_GEN - n_mem
    pm = leak.pairs_memorized
    assert pm.loc["a", "c1"] == 1.0 and pm.loc["a", "b"] == 0.0
    np.testing.assert_allclose(np.diag(pm), rates["memorized_rate"])
    np.testing.assert_allclose(np.diag(leak.pairs_non_memorized), rates["non_memorized_rate"])
    np.testing.assert_allclose(pm, pm.T)
    assert pm.attrs["group"] == "memorized rows" and leak.pairs_non_memorized.attrs["group"] == "non-memorized rows"
    assert pm.loc["c1", "c2"] == rates.loc["c2", "memorized_rate"]
    # same answer through the run helper, and with the rows shuffled
    assert run_column_match_rates(store).columns.equals(leak.columns)
    shuffled = column_match_rates(train, store.samples(2).sample(frac=1, random_state=1), long.iloc[::-1])
    pd.testing.assert_frame_equal(shuffled.columns, leak.columns)


def test_column_match_rates_several_checks_and_errors(run):
    store, res = run
    train = store.train()
    samples = pd.concat([store.samples(c).assign(check=c) for c in range(3)], ignore_index=True)
    leak = column_match_rates(train, samples, res.checks)
    assert leak.n_memorized == sum(sum(c.values()) for c in COPIES)
    assert leak.columns.set_index("column").loc["a", "memorized_rate"] == 1.0
    with pytest.raises(MemvizError, match="several checks"):
        column_match_rates(train, store.samples(0), res.checks)
    with pytest.raises(MemvizError, match="not in samples"):
        column_match_rates(train, store.samples(0).iloc[:10], res.checks[res.checks["check"] == 0])
    no_mem = res.checks[res.checks["check"] == 0].assign(memorized=False)
    empty = column_match_rates(train, store.samples(0), no_mem)
    assert empty.columns["memorized_rate"].isna().all() and empty.n_memorized == 0


# ------------------------------------------------------------- ranking by excess
def _planted_floor(train, seed=0, n_holdout=200):
    """A floor of the planted training rows from simulated hold-out attributions."""
    from memviz.floor import floor_from_attributions

    rng = np.random.default_rng(seed)
    ids = train.row_ids
    return floor_from_attributions(ids, rng.choice(ids, n_holdout), rng.uniform(0, 1, n_holdout), distance="paper")


def test_rank_rows_by_excess_and_by_copies(run):
    from memviz.leaks import rank_rows
    from memviz.rownull import row_null

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


def test_copies_vs_null_counts_every_row_and_matches_the_predictive(run):
    from scipy import stats

    from memviz.leaks import copies_vs_null

    store, res = run
    floor = _planted_floor(store.train())
    total, m = res.dynamics.total, int(res.per_check["n_synthetic"].sum())
    tab = copies_vs_null(floor, total, m)
    assert tab["observed"].sum() == N_TRAIN and tab["expected"].sum() == pytest.approx(N_TRAIN)
    assert tab["low"].iloc[0] == tab["high"].iloc[0] == 0 and tab["high"].iloc[-1] == total.max()
    a, b, w = floor.null.components(floor.n_holdout)
    zero = sum((w * stats.nbinom.pmf(0, a + h, b / (b + m))).sum() for h in floor.hits)   # Σ_i P(C_i = 0)
    assert tab["expected"].iloc[0] == pytest.approx(zero)
    wide = copies_vs_null(floor, total * 50, m, max_bins=10)                  # grouped bins
    assert len(wide) <= 10 and wide["observed"].sum() == N_TRAIN
    assert (wide["low"].iloc[1:].to_numpy() <= wide["high"].iloc[1:].to_numpy()).all()


def test_flagged_closeness_and_counts_per_row(run):
    from memviz.leaks import closeness_by_row, flagged_closeness, rank_rows

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
