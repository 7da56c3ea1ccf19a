"""Figures of the Memorization screen: copies per row, concentration, per-check curves, column leaks."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from memviz.dynamics.rows import RowDynamics
from memviz.dynamics.summaries import concentration_curve
from memviz.errors import BadOption, BadTable
from memviz.text import count, pct, percent, plain_all
from memviz.viz.style import (
    BEFORE_COLOR,
    MAX_CURVE_POINTS,
    REST_COLOR,
    TOP_COLOR,
    add_note,
    base_layout,
    new_figure,
    rgba,
)


# ------------------------------------------------------------------ memorization screen
def copies_histogram(dyn: RowDynamics, log_y: bool = True, *, max_bins: int = 60) -> go.Figure:
    """Heavy-tailed histogram of the total copy count C_i of every training row.

    C_i = sum over checks of c_i(e) (generated rows memorized and attributed to row i).
    Counts up to ``max_bins`` get one bar each; beyond that, bar 0 stays on its own and the
    positive counts are grouped in bins of equal integer width w = ceil(max C_i / (max_bins - 1)).

    Parameters
    ----------
    dyn : RowDynamics
    log_y : bool, default True
        Logarithmic row-count axis (the tail is invisible on a linear axis).
    max_bins : int, default 60
    """
    tot = np.asarray(dyn.total, dtype=np.int64)  # (N,)
    n = len(tot)
    mx = int(tot.max()) if n else 0
    width = 1 if mx < max_bins else math.ceil(mx / (max_bins - 1))
    # bin 0 holds C_i = 0; bin b >= 1 holds 1 + (b - 1) w <= C_i <= b w
    bin_of = np.where(tot > 0, 1 + (tot - 1) // width, 0)  # (N,)
    counts = np.bincount(bin_of, minlength=int(bin_of.max()) + 1 if n else 1)  # (B,)
    lo = np.concatenate([[0], 1 + width * np.arange(len(counts) - 1)])
    hi = np.concatenate([[0], np.minimum(lo[1:] + width - 1, mx)])
    labels = [f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in zip(lo, hi)]
    fig = new_figure(
        f"Copies per training row ({count(n)} rows, {dyn.n_checks} checks)",
        "Total copies of the row over all checks (generated rows" + (")" if width == 1 else f", bins of {width:,})"),
        "Training rows (count" + (", log scale)" if log_y else ")"),
        "Each bar counts training rows by how many generated copies they received over the warm-up; "
        "a tall bar at 0 with a short tail is good, a long tail to the right means a few rows are copied "
        "again and again and are the leak candidates.")
    fig.add_bar(x=labels, y=counts, marker_color=[BEFORE_COLOR] + [TOP_COLOR] * (len(counts) - 1),
                name="training rows", customdata=counts / max(n, 1),
                hovertemplate="%{x} copies: %{y:,} rows (%{customdata:.2%})<extra></extra>")
    fig.update_yaxes(type="log" if log_y else "linear", tickformat=",")
    fig.update_xaxes(type="category")
    if mx == 0:
        add_note(fig, "No training row was copied at any check")
    elif dyn.top.any():
        start = int(tot[dyn.top].min())
        if start > 0:
            fig.add_vline(x=1 + (start - 1) // width - 0.5, line_dash="dash", line_color="#555",
                          annotation_text=f"Top {100 * dyn.top_frac:g}% group: ≥ {start:,} copies",
                          annotation_position="top right")
    fig.update_layout(showlegend=False, bargap=0.05)
    return fig


def concentration_plot(dyn: RowDynamics, *, marks: Sequence[float] = (0.01, 0.10)) -> go.Figure:
    """Concentration curve: share of all copies held by the top x share of training rows.

    y(x) = (sum of the ceil(x N) largest C_i) / sum_i C_i (see
    :func:`memviz.dynamics.summaries.concentration_curve`); the diagonal y = x is an even spread.
    The curve is thinned to at most ``MAX_CURVE_POINTS`` points (it is concave, so
    straight segments between kept points are within a pixel).
    """
    x, y = concentration_curve(dyn)  # (N+1,)
    n = dyn.n_rows
    fig = new_figure(f"Concentration of copies ({count(dyn.total.sum())} copies over {count(n)} rows)",
                  "Most-copied training rows (% of all rows)", "Share of all copies (%)",
                  "The curve shows what share of all copies comes from the most-copied x% of training rows; "
                  "a curve close to the dashed diagonal means copies are spread thinly, a curve that shoots up "
                  "at the left means a small group of rows accounts for most of the leak.")
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dash", "color": "#999"},
                    name="even spread", hoverinfo="skip")
    if np.isnan(y).all():
        add_note(fig, "No training row was copied at any check")
    else:
        # linear plus geometric spacing: the steep start (the few most-copied rows) keeps its detail
        grid = np.concatenate([np.linspace(0, n, MAX_CURVE_POINTS // 2), np.geomspace(1, n, MAX_CURVE_POINTS // 2)])
        idx = np.unique(np.round(grid).astype(np.int64))
        fig.add_scatter(x=x[idx], y=y[idx], mode="lines", line={"color": TOP_COLOR, "width": 3},
                        fill="tozeroy", fillcolor=rgba(TOP_COLOR, 0.1), name="copies",
                        hovertemplate="top %{x:.2%} of rows hold %{y:.1%} of copies<extra></extra>")
        for share in marks:
            j = min(n, int(math.ceil(round(share * n, 9))))
            fig.add_scatter(x=[x[j]], y=[y[j]], mode="markers", marker={"color": "#333", "size": 8},
                            showlegend=False, hoverinfo="skip")
            # on a white box below right of its point: the curve and the diagonal do not run through it
            fig.add_annotation(x=x[j], y=y[j], text=f"top {percent(share, 0, unit='%')}: {pct(y[j])}", showarrow=False,
                               xanchor="left", yanchor="top", xshift=6, yshift=-4,
                               bgcolor="rgba(255, 255, 255, 0.85)", font={"size": 12})
    fig.update_xaxes(tickformat=".0%", range=[0, 1])
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return fig


FLOOR_COLOR = "#7f7f7f"


def check_curves(per_check: pd.DataFrame) -> go.Figure:
    """Memorization ratio at every check against the epoch, with the floor when the run has one;
    Mem-AUC (not a share) in its own panel below, on the same epochs.

    mem_ratio = (1 / S) * #{g : r_g < 1/3};  mem_auc = (1 / S) * sum_g (1 - r_g)
    (non-finite r counts 0); see :func:`memviz.dynamics.rows.check_summary`.

    With the columns of :func:`memviz.measure.floor.excess_columns` (floor, floor_low, floor_high,
    excess, excess_low, excess_high): a grey band is the floor's 95 % interval (real rows
    the model never saw) and the dashed line its value; each mem ratio carries the 95 %
    interval of its excess over the floor, drawn around the point as
    [floor + excess_low, floor + excess_high], so the bar reaches the dashed line exactly
    when the excess is not distinguishable from 0.
    """
    missing = [c for c in ("epoch", "mem_ratio", "mem_auc") if c not in per_check.columns]
    if missing:
        raise BadTable(f"per-check table is missing column(s) {', '.join(missing)}")
    pc = per_check.sort_values("epoch")
    floored = all(c in pc.columns for c in ("floor", "floor_low", "floor_high", "excess", "excess_low",
                                            "excess_high")) and len(pc) > 0
    text = ("The red line is the share of generated rows the paper's test flags at each check"
            + ("; the grey band is the share of real rows the model never saw that the same test flags (the "
               "floor), and only a red point whose bar stays above the dashed floor line shows copying beyond "
               "resemblance to the population (the lower panel is Mem-AUC, the mean of 1 − r)."
               if floored else
               " (the lower panel is Mem-AUC, the mean of 1 − r); this run has no hold-out, so there is no "
               "floor to tell copying from the rate at which the test flags any real row."))
    fig = new_figure("Memorization during the warm-up" + (", against the floor" if floored else ""),
                  "Epoch (training epochs finished)", "Share of generated rows flagged (%)", text, height=520)
    extra = pc["n_memorized"] if "n_memorized" in pc else pd.Series(np.nan, index=pc.index)
    x = pc["epoch"].to_numpy()
    if floored:
        f, lo, hi = (float(pc[c].iloc[0]) for c in ("floor", "floor_low", "floor_high"))
        span = [x.min() - 0.5, x.max() + 0.5] if len(x) else [0, 1]
        fig.add_scatter(x=span, y=[hi, hi], mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip")
        fig.add_scatter(x=span, y=[lo, lo], mode="lines", line={"width": 0}, fill="tonexty",
                        fillcolor=rgba(FLOOR_COLOR, 0.25), name="floor: real rows never seen (95% interval)",
                        hoverinfo="skip")
        fig.add_scatter(x=span, y=[f, f], mode="lines", line={"color": FLOOR_COLOR, "dash": "dash"},
                        name=f"floor {pct(f)}", hovertemplate=f"floor {pct(f)} ({pct(lo)}–{pct(hi)})<extra></extra>")
        ex, exl, exh = (pc[c].to_numpy(dtype=float) for c in ("excess", "excess_low", "excess_high"))
        custom = np.stack([extra.to_numpy(dtype=float), 100 * ex, 100 * exl, 100 * exh], axis=1)
        fig.add_scatter(x=x, y=pc["mem_ratio"], mode="lines+markers", name="mem ratio (bar: excess 95% interval)",
                        line={"color": TOP_COLOR}, customdata=custom,
                        error_y={"type": "data", "symmetric": False, "array": exh - ex, "arrayminus": ex - exl,
                                 "color": TOP_COLOR, "thickness": 1.5},
                        hovertemplate="epoch %{x:,}: mem ratio %{y:.1%} (%{customdata[0]:,} rows); "
                                      "%{customdata[1]:+.1f} points above the floor "
                                      "(%{customdata[2]:+.1f} to %{customdata[3]:+.1f})<extra></extra>")
    else:
        fig.add_scatter(x=x, y=pc["mem_ratio"], mode="lines+markers", name="mem ratio",
                        line={"color": TOP_COLOR}, customdata=extra,
                        hovertemplate="epoch %{x:,}: mem ratio %{y:.1%} (%{customdata:,} rows)<extra></extra>")
    fig.add_scatter(x=x, y=pc["mem_auc"], mode="lines+markers", name="Mem-AUC (lower panel)", yaxis="y2",
                    line={"color": REST_COLOR, "dash": "dot"},
                    hovertemplate="epoch %{x:,}: Mem-AUC %{y:.3f}<extra></extra>")
    if len(pc) == 0:
        add_note(fig, "No finished check yet")
    top = max(1e-9, float(np.nanmax(np.r_[pc["mem_ratio"].to_numpy(dtype=float),
                                           (pc["floor_high"].to_numpy(dtype=float) if floored else []),
                                           ((pc["floor"] + pc["excess_high"]).to_numpy(dtype=float)
                                            if floored else [])]))) if len(pc) else 1.0
    fig.update_layout(yaxis={"tickformat": ".0%", "range": [0, min(1.0, top * 1.15 + 0.01)], "domain": [0.36, 1.0]},
                      yaxis2={"title": {"text": "Mem-AUC"}, "domain": [0.0, 0.24], "anchor": "x",
                              "range": [0, 1], "tickformat": ".1f", "dtick": 0.5},
                      xaxis={"anchor": "y2", "tickformat": ","})
    return fig


def copies_null_plot(table: pd.DataFrame, log_y: bool = True) -> go.Figure:
    """Training rows by copies over the warm-up: observed (bars) and expected if the generated
    rows were fresh real rows (line), from :func:`memviz.leaks.rows.copies_vs_null`.

    expected(b) = Σ_i P(C_i in bin b) under each row's Gamma–Poisson predictive fitted on the
    hold-out (:mod:`memviz.measure.rownull`).
    """
    missing = [c for c in ("low", "high", "observed", "expected") if c not in table.columns]
    if missing:
        raise BadTable(f"copies table is missing column(s) {', '.join(missing)}")
    labels = [f"{a:,}" if a == b else f"{a:,}–{b:,}" for a, b in zip(table["low"], table["high"])]
    n = int(table["observed"].sum())
    fig = new_figure(f"Copies per training row: the model vs fresh real rows ({count(n)} rows)",
                  "Total copies of the row over all checks (generated rows)",
                  "Training rows (count" + (", log scale)" if log_y else ")"),
                  "Bars count training rows by how many flagged generated rows the model credited to them, the "
                  "line how many rows would get that many if the model's rows were real rows it never saw (below "
                  "0.1 row it leaves the chart); bars standing above the line at the right are rows copied more "
                  "often than resemblance explains.")
    fig.add_bar(x=labels, y=table["observed"], name="the model's rows (observed)", marker_color=TOP_COLOR,
                hovertemplate="%{x} copies: %{y:,} rows<extra>observed</extra>")
    fig.add_scatter(x=labels, y=table["expected"], mode="lines+markers", name="fresh real rows (expected)",
                    line={"color": FLOOR_COLOR, "width": 2}, marker={"size": 5},
                    hovertemplate="%{x} copies: %{y:,.1f} rows expected<extra>fresh real rows</extra>")
    if log_y:  # expected counts far below one row would stretch the axis: the axis starts at 0.1 row
        top = max(1.0, float(np.nanmax(np.r_[table["observed"].to_numpy(float), table["expected"].to_numpy(float)])))
        fig.update_yaxes(type="log", range=[-1, np.log10(top) + 0.3], tickformat=",")
    else:
        fig.update_yaxes(type="linear", tickformat=",")
    fig.update_xaxes(type="category")
    fig.update_layout(bargap=0.05)
    if n == 0:
        add_note(fig, "No training row")
    return fig


def closeness_plot(generated, holdout, threshold: float, *, region: str = "") -> go.Figure:
    """How close every row is to its nearest training row: the cumulative share of the generated rows
    and of the hold-out's real rows within each distance D (the standardized distance,
    :mod:`memviz.measure.tooclose`), identical rows (D = 0) at the left edge, the too-close threshold t marked;
    ``region`` (words: "the region set apart by sex and age") titles the figure of one region's rows.

    share(x) = #{rows with D ≤ x} / rows, per group; a generated curve above the real one at the left is
    copying: more generated rows sit that close to a training row than real rows the model never saw.
    """
    g, h = np.sort(np.asarray(generated, dtype=float)), np.sort(np.asarray(holdout, dtype=float))
    if not len(g) or not len(h):
        raise BadOption("closeness_plot: needs generated and hold-out distances")
    positive = np.r_[g[g > 0], h[h > 0]]
    floor = float(positive.min()) / 2 if len(positive) else 1e-6                # where D = 0 is drawn
    fig = new_figure("How close each row is to its nearest training row" + (f", in {region}" if region else ""),
                     "Distance to the nearest training row (standardized; log scale, identical rows at the left)",
                     "Share of rows at most this close",
                     "The red curve is the generated rows, the grey one real rows the model never saw; where the "
                     "red curve rises above the grey one at the left, more generated rows sit that close to a "
                     "training row than real rows do: copies. The dashed line is the too-close threshold (all but "
                     "5 % of real rows are farther).")
    for d, name, color in ((g, "the model's rows", TOP_COLOR), (h, "real rows it never saw", FLOOR_COLOR)):
        x = np.maximum(d, floor)
        y = np.arange(1, len(d) + 1) / len(d)
        if len(x) > MAX_CURVE_POINTS:                                               # thin the curve, keep its ends
            keep = np.unique(np.r_[np.linspace(0, len(x) - 1, MAX_CURVE_POINTS).astype(int), len(x) - 1])
            x, y = x[keep], y[keep]
        fig.add_scatter(x=x, y=y, mode="lines", name=name, line={"color": color, "width": 2, "shape": "hv"},
                        hovertemplate="D ≤ %{x:.3g}: %{y:.1%} of rows<extra>" + name + "</extra>")
    if np.isfinite(threshold) and threshold > 0:
        fig.add_vline(x=threshold, line={"color": REST_COLOR, "dash": "dash", "width": 1})
    fig.update_xaxes(type="log")
    fig.update_yaxes(range=[0, 1], tickformat=".0%")
    return fig


# ---------------------------------------------------------------------------- leaks
#: columns drawn by :func:`leak_heatmap` at most (a p x p pair panel of 2,000 columns is 43 MB of JSON)
MAX_LEAK_COLUMNS = 30


def _column_rates(column_rates) -> pd.DataFrame:
    if hasattr(column_rates, "columns") and not isinstance(column_rates, pd.DataFrame):
        column_rates = column_rates.columns  # a ColumnLeak
    missing = [c for c in ("column", "memorized_rate", "non_memorized_rate") if c not in column_rates.columns]
    if missing:
        raise BadTable(f"column rates table is missing column(s) {', '.join(missing)}")
    return column_rates


def top_leak_columns(column_rates, max_columns: int | None = MAX_LEAK_COLUMNS) -> pd.DataFrame:
    """The columns that leak most, at most ``max_columns`` of them (None: all), most-leaking first.

    A column's leak is its excess exact-match rate among memorized generated rows,

        leak(a) = memorized_rate(a) - non_memorized_rate(a),

    (a column that equals its NN1 value as often in both groups is a common value, not a leak;
    NaN rates count as no leak and go last); the kept columns are then ordered by
    ``memorized_rate``, highest first, as in :func:`leak_heatmap`.

    Parameters
    ----------
    column_rates : DataFrame or ColumnLeak
        ``column, memorized_rate, non_memorized_rate``.
    max_columns : int or None, default MAX_LEAK_COLUMNS
    """
    cr = _column_rates(column_rates)
    if max_columns is not None and len(cr) > max_columns:
        leak = (cr["memorized_rate"].astype(float) - cr["non_memorized_rate"].astype(float)).fillna(-np.inf)
        keep = np.argsort(-leak.to_numpy(), kind="stable")[:max(0, int(max_columns))]
        cr = cr.iloc[np.sort(keep)]
    return cr.sort_values("memorized_rate", ascending=False, na_position="last")


def leak_heatmap(column_rates, pair_rates=None, *, max_columns: int | None = MAX_LEAK_COLUMNS) -> go.Figure:
    """How often a generated row's column equals its NN1 training row, memorized vs not.

    ``column_rates``: DataFrame ``column, memorized_rate, non_memorized_rate`` (or a
    :class:`memviz.leaks.columns.ColumnLeak`); rows are sorted by memorized rate. ``pair_rates``:
    optional column x column DataFrame of pair rates (both columns equal; its panel is
    named after ``pair_rates.attrs["group"]``, set by ``column_match_rates``), or a mapping
    title -> such DataFrame (e.g. ``{"memorized": leak.pairs_memorized, "not memorized":
    leak.pairs_non_memorized}``), drawn as extra panels. See
    :func:`memviz.leaks.columns.column_match_rates` for the formulas.

    With more than ``max_columns`` columns only the ``max_columns`` that leak most are drawn
    (:func:`top_leak_columns`: leak = memorized_rate - non_memorized_rate), in both panels, and
    the title says so: the figure stays k x k cells, not p x p. None draws every column.
    """
    all_rates = _column_rates(column_rates)
    cr = top_leak_columns(all_rates, max_columns)
    shown = set(cr["column"])
    if pair_rates is None:
        pairs = {}
    elif isinstance(pair_rates, pd.DataFrame):
        group = pair_rates.attrs.get("group")
        pairs = {f"pairs, {group}" if group else "column pairs": pair_rates}
    else:
        pairs = {f"pairs, {k}": v for k, v in pair_rates.items()}
    if len(cr) < len(all_rates):  # only the shown columns' pairs: k x k cells
        pairs = {name: m.loc[[c for c in m.index if c in shown], [c for c in m.columns if c in shown]]
                 for name, m in pairs.items()}
    titles = ["columns"] + list(pairs)
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.12,
                        column_widths=[1.0] + [2.0] * len(pairs))
    text = ("Each cell is how often a generated row's value equals its nearest training row's value exactly; "
            "columns far redder for memorized rows than for the others are the attributes that leak, similar "
            "rates in both columns mean the match is just a common value.")
    title = "Which attributes leak: exact matches with the nearest training row"
    if len(cr) < len(all_rates):
        title += f" ({count(len(cr))} of {count(len(all_rates))} columns: those that leak most)"
        text += (f" Only the {count(len(cr))} columns with the largest leak (match rate among memorized rows "
                 "minus among the others) are drawn.")
    fig.update_layout(**base_layout(title, text,
                                height=max(360, 140 + 24 * len(cr))))
    z = cr[["memorized_rate", "non_memorized_rate"]].to_numpy(dtype=float)
    cols = plain_all(cr["column"])
    heat = dict(colorscale="Reds", zmin=0.0, zmax=1.0, texttemplate="%{text}", xgap=1, ygap=1)
    fig.add_heatmap(z=z, x=["memorized", "not memorized"], y=cols, text=np.vectorize(pct)(z) if z.size else z,
                    colorbar={"title": "match rate", "tickformat": ".0%"},
                    hovertemplate="%{y}, %{x} rows: %{z:.1%} equal to NN1<extra></extra>", row=1, col=1, **heat)
    for j, (name, m) in enumerate(pairs.items(), start=2):
        order = [c for c in cr["column"] if c in m.index] + [c for c in m.index if c not in set(cr["column"])]
        m = m.reindex(index=order, columns=order)  # same order as the column panel
        mz = m.to_numpy(dtype=float)
        fig.add_heatmap(z=mz, x=plain_all(m.columns), y=plain_all(m.index), showscale=False,
                        hovertemplate="%{y} & %{x}: %{z:.1%} both equal to NN1<extra>" + name + "</extra>",
                        row=1, col=j, colorscale="Reds", zmin=0.0, zmax=1.0, xgap=1, ygap=1)
        # same rows as the column panel (its labels): no second set of labels drawn over that panel's cells
        fig.update_yaxes(autorange="reversed", type="category", showticklabels=False, row=1, col=j)
        fig.update_xaxes(type="category", tickangle=-45, row=1, col=j)
    fig.update_xaxes(title_text="Generated rows (match rate, %)", row=1, col=1, type="category")
    fig.update_yaxes(title_text="Column", autorange="reversed", type="category", row=1, col=1)
    if len(cr) == 0:
        add_note(fig, "No column to compare")
    return fig
