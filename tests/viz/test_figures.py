"""Figures: every function gives a titled, labelled, captioned Figure whose data match the inputs.

Runs on the planted run of tests/test_leaks.py, on edge cases (no copies at all, a single
check, an empty removed set) and on an Adult-size dynamics (32,561 rows x 25 checks) for
the build-time budget of the dashboard's sliders.
"""

import html
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from planted import planted_run

import memviz.viz.style  # noqa: F401
from memviz import viz
from memviz.dynamics.dynamiccut import dynamiccut_selection, early_identification_curve
from memviz.dynamics.rows import compute_dynamics
from memviz.errors import MemvizError
from memviz.leaks.columns import column_match_rates
from memviz.warmup.run import load_warmup

METHODS = ("baseline", "dynamiccut", "dynamiccutmix", "tabcutmix", "random")
MODELS = ("tabddpm", "ctgan", "tvae")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store = planted_run(tmp_path_factory.mktemp("plots") / "run")
    return store, load_warmup(store.path), store.train()


def results_frame(seed: int = 0, n_seeds: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in METHODS:
        for mo in MODELS:
            for s in range(n_seeds):
                base = 0.3 if m == "baseline" else 0.25
                mem = base + rng.normal(0, 0.01)
                rows.append({"method": m, "model": mo, "seed": s, "mem_ratio": mem, "mem_ratio_pruned": mem - 0.01,
                             "mem_auc": rng.uniform(0.3, 0.4), "shape": rng.uniform(0.85, 0.99),
                             "trend": rng.uniform(0.8, 0.95), "mle": rng.uniform(0.8, 0.9), "mle_real": 0.91,
                             "dcr_share": rng.uniform(0.5, 0.6),
                             "relative_reduction": 0.0 if m == "baseline" else (0.3 - mem) / 0.3})
    return pd.DataFrame(rows)


def checks_table(n_rows=30, n_checks=3, memorize=True, seed=0, n_syn=50):
    rng = np.random.default_rng(seed)
    ids = np.arange(n_rows, dtype=np.int64) * 2 + 7
    parts = []
    for c in range(n_checks):
        nn1 = ids[np.minimum(rng.zipf(1.6, n_syn) - 1, n_rows - 1)]
        ratio = rng.uniform(0, 1, n_syn)
        parts.append(pd.DataFrame({"check": c, "epoch": 3 * (c + 1), "synthetic_id": np.arange(n_syn), "nn1": nn1,
                                   "d1": ratio, "d2": 1.0, "ratio": ratio,
                                   "memorized": (ratio < 1 / 3) & memorize}))
    return pd.concat(parts, ignore_index=True), ids


def all_figures(dyn, per_check, train, removed, results):
    curve = early_identification_curve(dyn, p=0.1, k=2)
    cols = list(train.schema.columns)
    shapes = {m: pd.DataFrame({"column": cols, "score": np.linspace(0.8, 1.0, len(cols))})
              for m in ("baseline", "dynamiccut")}
    rng = np.random.default_rng(0)
    num, cat = train.schema.numerical[0], train.schema.distance_categorical[0]
    return {
        "copies_histogram": viz.copies_histogram(dyn),
        "copies_histogram_linear": viz.copies_histogram(dyn, log_y=False),
        "concentration_plot": viz.concentration_plot(dyn),
        "check_curves": viz.check_curves(per_check),
        "first_epoch_plot": viz.first_epoch_plot(dyn),
        "forgetting_plot": viz.forgetting_plot(dyn),
        "group_band_cumulative": viz.group_band_plot(dyn, "cumulative"),
        "group_band_mem_auc": viz.group_band_plot(dyn, "mem_auc"),
        "row_timeline": viz.row_timeline(dyn, dyn.row_ids[:5]),
        "early_identification_plot": viz.early_identification_plot(curve),
        "class_balance_plot": viz.class_balance_plot(train, removed),
        "column_shift_numerical": viz.column_shift_plot(train, removed, num),
        "column_shift_categorical": viz.column_shift_plot(train, removed, cat),
        "comparison_plot": viz.comparison_plot(results, "mem_ratio"),
        "comparison_mle": viz.comparison_plot(results, "mle"),
        "privacy_utility_plot": viz.privacy_utility_plot(results),
        "shape_breakdown_plot": viz.shape_breakdown_plot(shapes),
        "dcr_plot": viz.dcr_plot({"baseline": rng.gamma(2, 0.02, 300), "dynamiccut": rng.gamma(2, 0.03, 300)}),
        "transferability_plot": viz.transferability_plot(results),
    }


#: characters per line of an axis title (a half-width chart at 1280 px holds about this many)
AXIS_TITLE_LINE = 60


def assert_readable(fig, name):
    assert isinstance(fig, go.Figure), name
    assert fig.layout.title.text, f"{name}: no title"
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text, f"{name}: unlabelled axis"
    for axis in (fig.layout.xaxis, fig.layout.yaxis):  # a longer line ran past the plot (null findings at 1280x720)
        long = [line for line in re.split(r"<br\s*/?>", axis.title.text) if len(line) > AXIS_TITLE_LINE]
        assert not long, f"{name}: an axis title line of over {AXIS_TITLE_LINE} characters: {long[0]!r}"
    text = viz.caption(fig)
    assert text and text.endswith(".") and ". " not in text[:-1], f"{name}: caption must be one sentence"
    assert len(fig.data) >= 1, name
    fig.to_json()  # serializable


def test_every_figure_on_the_planted_run(run):
    store, res, train = run
    removed = dynamiccut_selection(res.dynamics, p=0.1, k=2).removed
    figs = all_figures(res.dynamics, res.per_check, train, removed, results_frame())
    leak = column_match_rates(train, store.samples(2), res.checks[res.checks["check"] == 2])
    figs["leak_heatmap"] = viz.leak_heatmap(leak.columns)
    figs["leak_heatmap_pairs"] = viz.leak_heatmap(leak, {"memorized": leak.pairs_memorized,
                                                           "not memorized": leak.pairs_non_memorized})
    for name, fig in figs.items():
        assert_readable(fig, name)


@pytest.mark.parametrize("case", ["no_copies", "single_check", "empty_removed"])
def test_edge_cases(run, case):
    _, _, train = run
    long, ids = checks_table(memorize=case != "no_copies", n_checks=1 if case == "single_check" else 3)
    dyn = compute_dynamics(long, ids)
    from memviz.dynamics.rows import check_summary
    per_check = check_summary(long)
    removed = [] if case == "empty_removed" else list(train.data.index[:3])
    results = results_frame(n_seeds=1) if case == "single_check" else results_frame()
    for name, fig in all_figures(dyn, per_check, train, removed, results).items():
        assert_readable(fig, f"{case}/{name}")
    if case == "no_copies":
        hist = viz.copies_histogram(dyn)
        assert list(hist.data[0].y) == [len(ids)]
        assert any("No training row was copied" in a.text for a in hist.layout.annotations)
        assert any("No training row" in a.text for a in viz.concentration_plot(dyn).layout.annotations)


# ------------------------------------------------------------------------- behaviour
def _dyn(seed=0, **kw):
    long, ids = checks_table(seed=seed, **kw)
    return compute_dynamics(long, ids), long


def test_copies_histogram_counts_every_row_and_toggles_log():
    dyn, _ = _dyn(n_rows=200, n_syn=2000, n_checks=4)
    assert dyn.total.max() > 60  # forces grouped bins
    for log_y in (True, False):
        fig = viz.copies_histogram(dyn, log_y=log_y)
        y = np.asarray(fig.data[0].y)
        assert y.sum() == dyn.n_rows and y[0] == (dyn.total == 0).sum()
        assert fig.layout.yaxis.type == ("log" if log_y else "linear")
        assert len(y) <= 60
    small, _ = _dyn(n_rows=30, n_syn=20)
    fig = viz.copies_histogram(small)
    np.testing.assert_array_equal(fig.data[0].y, np.bincount(small.total))


def test_concentration_curve_is_thinned_and_monotone():
    dyn, _ = _dyn(n_rows=5000, n_syn=3000)
    fig = viz.concentration_plot(dyn)
    curve = fig.data[1]
    y = np.asarray(curve.y, dtype=float)
    assert len(y) <= viz.style.MAX_CURVE_POINTS + 1
    assert np.all(np.diff(y) >= -1e-12) and y[-1] == pytest.approx(1.0) and y[0] == 0.0
    assert np.all(np.diff(np.asarray(curve.x, dtype=float)) > 0)


def test_group_figures_match_the_dynamics():
    dyn, long = _dyn(n_rows=60, n_syn=120, n_checks=5)
    fe = viz.first_epoch_plot(dyn)
    for trace, mask in zip(fe.data, (dyn.top, ~dyn.top)):
        y = np.asarray(trace.y)
        assert y.sum() == pytest.approx(1.0) and y[-1] == pytest.approx(dyn.censored[mask].mean())
    fg = viz.forgetting_plot(dyn)
    for trace, mask in zip(fg.data, (dyn.top, ~dyn.top)):
        y = np.asarray(trace.y)
        assert y.sum() == pytest.approx(1.0)
        assert (np.arange(len(y)) * y).sum() == pytest.approx(dyn.forgetting_events[mask].mean())
    band = viz.group_band_plot(dyn, "mem_auc")
    med = [t for t in band.data if (t.name or "").endswith("median")]
    np.testing.assert_allclose(med[0].y, np.median(dyn.auc[dyn.top], axis=0))
    np.testing.assert_allclose(med[1].y, np.median(dyn.auc[~dyn.top], axis=0))
    with pytest.raises(MemvizError, match="quantity"):
        viz.group_band_plot(dyn, "nonsense")
    from memviz.dynamics.rows import check_summary
    pc = check_summary(long)
    cc = viz.check_curves(pc)
    np.testing.assert_allclose(cc.data[0].y, pc["mem_ratio"])
    with pytest.raises(MemvizError, match="mem_auc"):
        viz.check_curves(pc.drop(columns="mem_auc"))


def test_row_timeline_marks_checks_with_copies():
    dyn, _ = _dyn(n_rows=40, n_syn=100, n_checks=4)
    chosen = [dyn.row_ids[3], dyn.row_ids[0], dyn.row_ids[10]]
    fig = viz.row_timeline(dyn, chosen)
    heat = [t for t in fig.data if t.type == "heatmap"][0]
    pos = np.searchsorted(dyn.row_ids, chosen)
    np.testing.assert_array_equal(np.asarray(heat.z), (dyn.counts[pos] > 0).astype(int))
    assert heat.y[0].startswith(str(chosen[0]))
    with pytest.raises(MemvizError, match="row_id 8"):
        viz.row_timeline(dyn, [8])
    empty = viz.row_timeline(dyn, [])
    assert empty.layout.annotations and viz.caption(empty)


def test_early_identification_plot_traces_the_curve():
    dyn, _ = _dyn(n_rows=80, n_syn=200, n_checks=5)
    curve = early_identification_curve(dyn, p=0.1, k=2)
    fig = viz.early_identification_plot(curve)
    by_name = {t.name.split(" (")[0]: t for t in fig.data}
    np.testing.assert_allclose(by_name["precision"].y, curve["precision"])
    np.testing.assert_allclose(by_name["random recall"].y, curve["random_recall"])
    assert "p = 10%" in fig.layout.title.text


def test_precision_stays_visible_when_recall_equals_it():
    """Regression: with p equal to the Top group's share, |S| = |Top| and recall = precision;
    the recall line used to hide the precision line completely."""
    dyn, _ = _dyn(n_rows=80, n_syn=200, n_checks=5)
    curve = early_identification_curve(dyn, p=dyn.top_frac, k=2)
    assert np.allclose(curve["precision"], curve["recall"])
    fig = viz.early_identification_plot(curve)
    prec = next(t for t in fig.data if t.name.startswith("precision"))
    rec = next(t for t in fig.data if t.name.startswith("recall"))
    assert prec.line.width > 2 * rec.line.width            # drawn wider underneath: both stay visible
    assert prec.marker.symbol != rec.marker.symbol
    assert "equal to precision" in rec.name


def test_pruning_figures(run):
    _, res, train = run
    removed = train.data.index[train.data["y"] == train.data["y"].iloc[0]][:4]
    cb = viz.class_balance_plot(train, removed)
    before, after, gone = (np.asarray(t.y) for t in cb.data)
    assert before.sum() == pytest.approx(1) and after.sum() == pytest.approx(1) and gone.max() == pytest.approx(1)
    kept = train.data.drop(index=removed)["y"]
    shown = [html.unescape(x) for x in cb.data[1].x]  # class values are escaped for plotly ("<=50K")
    assert list(cb.data[1].x) != shown
    np.testing.assert_allclose(after, kept.value_counts(normalize=True).reindex(shown).to_numpy())
    same = viz.class_balance_plot(train, [])
    np.testing.assert_allclose(same.data[0].y, same.data[1].y)
    for col in ("a", "b", "c1"):
        fig = viz.column_shift_plot(train, removed, col)
        assert np.asarray(fig.data[0].y).sum() == pytest.approx(1.0)
        assert np.asarray(fig.data[1].y).sum() == pytest.approx(1.0)
        assert "distance 0.0 %" in viz.column_shift_plot(train, [], col).layout.title.text
    with pytest.raises(MemvizError, match="'zzz'"):
        viz.column_shift_plot(train, removed, "zzz")
    with pytest.raises(MemvizError, match="removed row_id 1"):
        viz.class_balance_plot(train, [1])


def test_comparison_figures_aggregate_over_seeds():
    res = results_frame()
    fig = viz.comparison_plot(res, "mem_ratio")
    tab = res[res["model"] == "ctgan"].groupby("method")["mem_ratio"]
    trace = [t for t in fig.data if t.name == "CTGAN"][0]
    order = [viz.method_label(m) for m in viz.style.method_order(res["method"].unique())]
    assert list(trace.x) == order
    np.testing.assert_allclose(trace.y, [tab.mean()[m] for m in viz.style.method_order(res["method"].unique())])
    np.testing.assert_allclose(trace.error_y.array, [tab.std()[m] for m in viz.style.method_order(res["method"].unique())])
    big = res.assign(relative_reduction=-34.2)  # -3,420 %: fractions are never rescaled
    big_trace = [t for t in viz.comparison_plot(big, "relative_reduction").data if t.name == "CTGAN"][0]
    np.testing.assert_allclose(big_trace.y, -34.2)
    pu = viz.privacy_utility_plot(res, "shape")
    assert sum(len(t.x) for t in pu.data if t.x[0] is not None) == len(METHODS) * len(MODELS)
    tr = viz.transferability_plot(res)
    assert {t.name for t in tr.data if t.type == "bar"} == {"DynamicCut", "Random"}
    with pytest.raises(MemvizError, match="mle"):
        viz.comparison_plot(res.drop(columns="mle"), "mle")


def test_shape_dcr_and_leak_figures():
    cols = ["age", "<b>x</b>"]
    d = {"dynamiccut": pd.DataFrame({"column": cols, "score": [0.9, 0.8]}),
         "baseline": pd.DataFrame({"column": cols, "score": [0.95, 0.85]})}
    long = pd.concat([v.assign(method=k) for k, v in d.items()])
    a, b = viz.shape_breakdown_plot(d), viz.shape_breakdown_plot(long)
    np.testing.assert_allclose(a.data[0].z, b.data[0].z)
    assert list(a.data[0].x) == ["Baseline", "DynamicCut"]  # canonical method order
    np.testing.assert_allclose(np.asarray(a.data[0].customdata)[:, 1], [-0.05, -0.05])
    rng = np.random.default_rng(1)
    dcr = {"baseline": rng.gamma(2, 0.02, 500), "dynamiccut": np.r_[rng.gamma(2, 0.03, 499), np.inf]}
    fig = viz.dcr_plot(dcr)
    for t in fig.data:
        assert np.asarray(t.y).sum() == pytest.approx(1.0)
    assert sorted(s.x0 for s in fig.layout.shapes) == pytest.approx(
        sorted(np.median(v[np.isfinite(v)]) for v in dcr.values()))
    assert viz.dcr_plot({}).layout.annotations
    rates = pd.DataFrame({"column": ["x", "y"], "memorized_rate": [0.2, 1.0], "non_memorized_rate": [0.1, 0.3]})
    lh = viz.leak_heatmap(rates)
    assert list(lh.data[0].y) == ["y", "x"]  # most-leaking first
    pairs = pd.DataFrame([[0.2, 0.1], [0.1, 1.0]], index=["x", "y"], columns=["x", "y"])
    pairs.attrs["group"] = "non-memorized rows"
    lp = viz.leak_heatmap(rates, pairs)
    assert [a.text for a in lp.layout.annotations][:2] == ["columns", "pairs, non-memorized rows"]
    np.testing.assert_allclose(lp.data[1].z, [[1.0, 0.1], [0.1, 0.2]])  # same order as the column panel
    np.testing.assert_allclose(lh.data[0].z, [[1.0, 0.3], [0.2, 0.1]])


def test_leak_heatmap_of_a_wide_table_draws_the_top_columns_only():
    """2,000 columns (issue 26): the pair panel was 2,000 x 2,000 cells (43 MB of JSON); now the 30
    columns with the largest leak (memorized minus non-memorized rate), said in the title."""
    rng = np.random.default_rng(0)
    p, k = 2_000, viz.memorization.MAX_LEAK_COLUMNS
    names = [f"c{i}" for i in range(p)]
    non = rng.uniform(0.0, 0.5, p)
    mem = non + rng.uniform(0.0, 0.1, p)
    leakers = rng.choice(p, k, replace=False)
    mem[leakers] = non[leakers] + 0.3 + 0.01 * np.arange(k)
    mem[0] = non[0] = 1.0                           # a constant column: matches in both groups, no leak
    mem[1] = np.nan                                 # no memorized row: never a leak
    rates = pd.DataFrame({"column": names, "memorized_rate": mem, "non_memorized_rate": non})
    pairs = pd.DataFrame(rng.uniform(0, 1, (p, p)), index=names, columns=names)
    fig = viz.leak_heatmap(rates, {"memorized": pairs})
    cells = sum(np.asarray(t.z).size for t in fig.data)
    assert cells == k * 2 + k * k
    assert len(fig.to_json()) < 200_000
    want = {names[i] for i in leakers}
    assert set(fig.data[0].y) == want and set(fig.data[1].x) == want == set(fig.data[1].y)
    assert list(fig.data[0].y) == [names[i] for i in sorted(leakers, key=lambda i: -mem[i])]  # as before
    sub = pairs.loc[list(fig.data[1].y), list(fig.data[1].x)].to_numpy()
    np.testing.assert_allclose(fig.data[1].z, sub)                     # the same cells, not resampled
    assert f"{k} of 2,000 columns" in fig.layout.title.text
    assert len(viz.top_leak_columns(rates)) == k
    # all drawn on request, and a narrow table is untouched
    assert len(viz.leak_heatmap(rates.head(40), max_columns=None).data[0].y) == 40
    assert "of" not in viz.leak_heatmap(rates.head(k)).layout.title.text.split("row")[-1]


def test_adult_scale_figures_stay_small():
    """Adult-scale dynamics are aggregated before plotting (speed: benchmarks/bench_dashboard.py)."""
    rng = np.random.default_rng(0)
    n, c, s = 32_561, 25, 32_561
    ids = np.arange(n, dtype=np.int64)
    parts = []
    for k in range(c):
        ratio = rng.uniform(0, 1, s)
        nn1 = ids[np.minimum(rng.zipf(1.5, s) - 1, n - 1)]  # heavy-tailed attribution
        parts.append(pd.DataFrame({"check": k, "epoch": 4 * (k + 1), "nn1": nn1,
                                   "ratio": ratio, "memorized": ratio < 1 / 3}))
    dyn = compute_dynamics(pd.concat(parts, ignore_index=True), ids)
    viz.check_curves(pd.DataFrame({"epoch": [1], "mem_ratio": [0.1], "mem_auc": [0.2]}))  # warm plotly up
    for name, fn in {"copies_histogram": lambda: viz.copies_histogram(dyn),
                     "concentration_plot": lambda: viz.concentration_plot(dyn),
                     "first_epoch_plot": lambda: viz.first_epoch_plot(dyn),
                     "forgetting_plot": lambda: viz.forgetting_plot(dyn),
                     "group_band_plot": lambda: viz.group_band_plot(dyn, "mem_auc")}.items():
        fig = fn()
        assert len(fig.to_json()) < 100_000, f"{name} sends too much data"


@pytest.mark.slow
def test_figures_on_a_real_tiny_warmup(tmp_path):
    import memviz
    from memviz.warmup.run import WarmupConfig, run_warmup

    train, _ = memviz.load_dataset(memviz.tables.data.sample_data_dir())
    small = train.subset(train.row_ids[:200])
    config = WarmupConfig(epochs=4, check_every=2, seed=0, model_params={"layers": [32, 32], "n_timesteps": 20})
    res = run_warmup(small, config, tmp_path / "run")
    removed = dynamiccut_selection(res.dynamics, p=0.1, k=2).removed
    for name, fig in all_figures(res.dynamics, res.per_check, small, removed, results_frame()).items():
        assert_readable(fig, name)


def test_long_titles_wrap_instead_of_running_off_the_figure():
    long = "Mem-AUC per training row, Top 10% against the other 90%, by epoch of the warm-up run"
    lines = viz.wrap_title(long).split("<br>")
    assert len(lines) == 2 and all(len(line.rstrip()) <= viz.style.TITLE_WIDTH for line in lines)
    assert "".join(lines) == long                     # nothing lost, words kept whole, spaces too (issue 51)
    assert viz.wrap_title("Short title") == "Short title"


# ------------------------------------------------------------------ issue 13: charts that do not exaggerate
def _strings(obj) -> list[str]:
    """Every string inside a figure's JSON (titles, labels, ticks, names, hover data)."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, (list, tuple)):
        return [s for v in obj for s in _strings(v)]
    return []


def test_privacy_utility_axes_start_at_zero_with_distinct_ticks():
    """Regression: the scatter auto-zoomed to 34.8-36.4 % with ticks "35 %, 35 %, 35 %", so a 1.6-point
    difference from one seed looked like a large trade-off."""
    res = results_frame(n_seeds=1)
    res = res[res["model"] == "tabddpm"].assign(mem_ratio=lambda d: 0.348 + 0.016 * np.linspace(0, 1, len(d)))
    fig = viz.privacy_utility_plot(res)
    assert fig.layout.xaxis.range[0] == 0 and fig.layout.yaxis.range[0] == 0
    assert fig.layout.yaxis.range[1] >= 1.0                            # MLE's whole range
    assert "~" in fig.layout.xaxis.tickformat and "~" in fig.layout.yaxis.tickformat
    # every legend entry is something drawn: one generator, so no grey marker-shape entries
    assert all(t.x is not None and t.x[0] is not None for t in fig.data)
    several = viz.privacy_utility_plot(results_frame(n_seeds=1))
    shapes = [t for t in several.data if t.x[0] is None]
    assert len(shapes) == len(MODELS) and all("marker shape" in t.name for t in shapes)
    assert "1\u00a0seed" in fig.layout.title.text                   # the count never splits from its word


def test_one_seed_titles_say_so_without_splitting_and_hide_empty_error_bars():
    fig = viz.comparison_plot(results_frame(n_seeds=1), "mem_ratio")
    title = fig.layout.title.text
    assert "indicative" in title and all(not line.rstrip().endswith(" 1") for line in title.split("<br>"))
    assert not any(t.error_y.visible for t in fig.data if t.type == "bar")
    assert "~" in fig.layout.yaxis.tickformat


def test_floor_band_when_the_results_carry_the_floor():
    res = results_frame(n_seeds=1).assign(floor=0.25, floor_low=0.22, floor_high=0.28)
    for fig in (viz.comparison_plot(res, "mem_ratio"), viz.privacy_utility_plot(res)):
        assert any("floor" in (a.text or "") for a in fig.layout.annotations)
        assert "floor" in viz.caption(fig)
    assert not any("floor" in (a.text or "") for a in viz.comparison_plot(results_frame(), "mem_ratio").layout.annotations)


def test_the_scatters_floor_label_stays_inside_the_plot():
    """The floor's label was written to the right of its line: with the floor at the right end of the
    x axis (the floor above every method), it ran past the plot's edge and was clipped."""
    res = results_frame(n_seeds=1)
    hi = float(res["mem_ratio"].max())
    for floor, side in ((hi * 1.5, "right"), (hi * 0.02, "left")):   # right end of the axis, then left end
        fig = viz.privacy_utility_plot(res.assign(floor=floor, floor_low=floor * 0.9, floor_high=floor * 1.1))
        label = next(a for a in fig.layout.annotations if "floor" in (a.text or ""))
        assert label.xanchor == side, (floor, label.xanchor)


def test_shape_colour_scale_is_the_metrics_range():
    """Regression: the colour scale ran 94-100 %, so 94.4 % showed as dark red."""
    d = {"baseline": pd.DataFrame({"column": ["a", "b"], "score": [0.944, 0.99]})}
    fig = viz.shape_breakdown_plot(d)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (0.0, 1.0)


def test_user_text_in_figures_is_inert(run):
    """Plotly turns <a href> in a label into a live link (issue 12 item 3): user text is escaped."""
    _, res, train = run
    evil = '<a href="https://evil.example">x</a>'
    t = train.data.copy()
    t["y"] = np.where(np.arange(len(t)) % 2, evil, "<b>no</b>")
    t = t.rename(columns={"c1": evil})
    from memviz.tables.data import Table
    from memviz.tables.schema import Schema

    s = train.schema
    schema = Schema(numerical=s.numerical, categorical=tuple(evil if c == "c1" else c for c in s.categorical),
                    target="y", task="binary")
    bad = Table(t, schema, "evil")
    removed = bad.data.index[:3]
    figs = [viz.class_balance_plot(bad, removed), viz.column_shift_plot(bad, removed, evil),
            viz.shape_breakdown_plot({"baseline": pd.DataFrame({"column": [evil], "score": [0.9]})}),
            viz.comparison_plot(results_frame().assign(method=lambda d: d["method"].where(d["method"] != "random", evil)))]
    for fig in figs:
        for text in _strings(fig.to_plotly_json()):
            assert "<a" not in text and "<b>" not in text, text
    redacted = viz.class_balance_plot(bad, removed, redact_salt="k")
    assert not [x for x in redacted.data[0].x if "evil" in x or "no" in x]
    assert all(x.startswith("cat-") for x in redacted.data[0].x)


# ------------------------------------------------------------------ the floor pages
def _floored_per_check(run):
    """The planted run's per-check table with the excess columns of a simulated floor."""
    from memviz.measure.floor import excess_columns, floor_from_attributions

    store, res, train = run
    rng = np.random.default_rng(0)
    floor = floor_from_attributions(train.row_ids, rng.choice(train.row_ids, 200), rng.uniform(0, 1, 200),
                                    distance="paper")
    return excess_columns(res.per_check, floor), floor


def test_check_curves_draw_the_floor_band_and_each_checks_excess_interval(run):
    pc, floor = _floored_per_check(run)
    fig = viz.check_curves(pc)
    assert_readable(fig, "check_curves with a floor")
    band = [t for t in fig.data if (t.name or "").startswith("floor: real rows never seen")]
    assert len(band) == 1 and band[0].y[0] == pytest.approx(floor.low)
    line = next(t for t in fig.data if (t.name or "").startswith("floor "))
    assert set(line.y) == {floor.floor}
    mem = next(t for t in fig.data if (t.name or "").startswith("mem ratio"))
    # the bar spans floor + excess_low .. floor + excess_high around the mem ratio point
    np.testing.assert_allclose(np.asarray(mem.y) + np.asarray(mem.error_y.array), floor.floor + pc["excess_high"])
    np.testing.assert_allclose(np.asarray(mem.y) - np.asarray(mem.error_y.arrayminus), floor.floor + pc["excess_low"])
    auc = next(t for t in fig.data if (t.name or "").startswith("Mem-AUC"))
    assert auc.yaxis == "y2" and "Mem-AUC" in fig.layout.yaxis2.title.text    # not on the axis of shares
    assert fig.layout.yaxis.range[0] == 0
    plain = viz.check_curves(run[1].per_check)
    assert not any((t.name or "").startswith("floor") for t in plain.data) and "no hold-out" in viz.caption(plain)


def test_copies_null_plot_shows_observed_bars_and_the_expected_line(run):
    from memviz.leaks.rows import copies_vs_null

    store, res, train = run
    _, floor = _floored_per_check(run)
    tab = copies_vs_null(floor, res.dynamics.total, res.per_check["n_synthetic"].sum())
    fig = viz.copies_null_plot(tab)
    assert_readable(fig, "copies_null_plot")
    bars, line = fig.data
    assert list(bars.y) == tab["observed"].tolist() and np.allclose(line.y, tab["expected"])
    assert fig.layout.yaxis.type == "log" and viz.copies_null_plot(tab, log_y=False).layout.yaxis.type == "linear"
    with pytest.raises(MemvizError, match="expected"):
        viz.copies_null_plot(tab.drop(columns="expected"))


def test_null_findings_plot_places_each_statistic_in_its_null():
    from memviz.viz.dynamics import NULL_CLIP, null_position

    frame = pd.DataFrame({
        "label": ["a", "b", "c", "d", "e"], "circular": [True, True, False, False, False],
        "direction": ["higher", "lower", "higher", "lower", "higher"],
        "observed": [3.0, -3.0, 0.5, 1.0, np.nan], "null_median": [1.0, 1.0, 1.0, 1.0, 1.0],
        "null_low": [0.0, 0.0, 0.0, 0.0, 0.0], "null_high": [2.0, 3.0, 2.0, 2.0, 2.0],
        "verdict": ["holds", "holds", "not shown", "not shown", "undefined"]})
    x = null_position(frame["observed"], frame["null_median"], frame["null_low"], frame["null_high"],
                      frame["direction"])
    assert x[0] == 2.0 and x[1] == 4.0 and x[2] == -0.5 and x[3] == 0.0 and np.isnan(x[4])
    assert null_position([100.0], [1.0], [0.0], [1.0], ["higher"])[0] == NULL_CLIP
    assert null_position([5.0], [1.0], [1.0], [1.0], ["higher"])[0] == NULL_CLIP   # a null without spread
    fig = viz.null_findings_plot(frame)
    assert_readable(fig, "null_findings_plot")
    ys = [y for t in fig.data for y in t.y]
    assert "paper's (circular): a" in ys and "non-circular: c" in ys
    assert {t.name for t in fig.data} == {"holds", "not shown", "undefined"}
    with pytest.raises(MemvizError, match="verdict"):
        viz.null_findings_plot(frame.drop(columns="verdict"))


def test_dcr_plot_draws_the_hold_out_reference():
    """Issue 20 item 9: the DCR plot had no hold-out reference."""
    rng = np.random.default_rng(2)
    ref = rng.gamma(2, 0.05, 400)
    fig = viz.dcr_plot({"baseline": rng.gamma(2, 0.02, 300)}, reference=ref)
    line = next(t for t in fig.data if t.name.startswith("hold-out reference"))
    assert np.asarray(line.y).sum() == pytest.approx(1.0) and line.line.dash == "dot"
    assert f"median {np.median(ref):.3g}" in line.name
    assert not [t for t in viz.dcr_plot({"baseline": ref}).data if t.name.startswith("hold-out")]


def test_capped_null_points_are_marked():
    """Issue 20 item 7: the Dynamics null chart capped points at ±4 with no marker."""
    frame = pd.DataFrame({"label": ["far", "near"], "circular": [False, False], "direction": ["higher", "higher"],
                          "observed": [100.0, 1.0], "null_median": [1.0, 1.0], "null_low": [0.0, 0.0],
                          "null_high": [2.0, 2.0], "verdict": ["holds", "not shown"]})
    fig = viz.null_findings_plot(frame)
    symbols = {t.name: list(t.marker.symbol) for t in fig.data}
    assert symbols == {"holds": ["triangle-right"], "not shown": ["circle"]}
    assert "≥ 4" in list(fig.layout.xaxis.ticktext)


def test_concentration_marks_are_labelled_on_a_background_beside_their_point():
    """The walk's screenshots: the "top 1 %" label sat on its curve (scatter text has no background),
    so the curve and the even-spread diagonal ran through it. Each mark is now a point plus an
    annotation at that point, on a white box, carrying the share it reads."""
    dyn, _ = _dyn(n_rows=5000, n_syn=3000)
    fig = viz.concentration_plot(dyn)
    marks = [t for t in fig.data if t.mode == "markers"]
    labels = [a for a in fig.layout.annotations if a.text.startswith("top ")]
    assert len(marks) == len(labels) >= 2
    for m, a in zip(marks, labels):
        assert not m.text                                          # no text drawn on the curve itself
        assert (a.x, a.y) == (m.x[0], m.y[0]) and not a.showarrow
        assert a.bgcolor and a.bgcolor.startswith("rgba(255, 255, 255")
        assert a.xanchor == "left" and a.yanchor == "top"
