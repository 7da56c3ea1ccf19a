"""Plotly figures of memviz results (pure functions; the dashboard and the report show them).

Every function returns a :class:`plotly.graph_objects.Figure` with a title, axis titles
with units, formatted hover numbers, and a one-sentence reading guide (what is good,
what is bad) in ``fig.layout.meta["caption"]``; :func:`caption` reads it back.

Data are aggregated with numpy before they reach plotly (a histogram is a bar per bin,
a curve over 32k rows is thinned to a few hundred points), so a figure of an
Adult-size run (32,561 rows x 25 checks) builds in milliseconds and a slider move
sends kilobytes, not the raw rows.

Shares are given to plotly as fractions and shown as percentages. Metric columns of a
results table that hold percentages already (any |value| > 1.5) are divided by 100 first.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .data import Table
from .dynamics import RowDynamics, concentration_curve
from .encoding import canonical_series
from .errors import MemvizError

TOP_COLOR, REST_COLOR = "#d62728", "#1f77b4"
BEFORE_COLOR, AFTER_COLOR, REMOVED_COLOR = "#9e9e9e", "#1f77b4", "#d62728"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
METHOD_ORDER = ("baseline", "dynamiccut", "dynamiccutmix", "tabcutmix", "tabcutmixplus", "smote", "random")
METHOD_LABELS = {"baseline": "Baseline", "dynamiccut": "DynamicCut", "dynamiccutmix": "DynamicCutMix",
                 "tabcutmix": "TabCutMix", "tabcutmixplus": "TabCutMixPlus", "smote": "SMOTE", "random": "Random"}
MODEL_LABELS = {"tabddpm": "TabDDPM", "ctgan": "CTGAN", "tvae": "TVAE"}
#: results column -> (label, which direction is good, reference value or None)
METRICS = {
    "mem_ratio": ("Memorization ratio", "lower", None),
    "mem_ratio_pruned": ("Memorization ratio vs the pruned table", "lower", None),
    "mem_auc": ("Mem-AUC", "lower", None),
    "mem_auc_pruned": ("Mem-AUC vs the pruned table", "lower", None),
    "relative_reduction": ("Relative reduction of the mem ratio vs baseline", "higher", None),
    "relative_reduction_auc": ("Relative reduction of Mem-AUC vs baseline", "higher", None),
    "shape": ("Shape (column shapes similarity)", "higher", None),
    "trend": ("Trend (column pair trends similarity)", "higher", None),
    "mle": ("MLE (ROC AUC on the real test split)", "higher", "mle_real"),
    "dcr_share": ("DCR share (closest real row is a training row)", "closer to 50%", 0.5),
}
MAX_CURVE_POINTS = 400


# ---------------------------------------------------------------------------- helpers
def caption(fig: go.Figure) -> str:
    """The one-sentence reading guide stored in ``fig.layout.meta["caption"]`` ("" if none)."""
    meta = fig.layout.meta
    return str(meta.get("caption", "")) if isinstance(meta, Mapping) else ""


#: a small white template (plotly's "plotly_white" costs ~50 ms per figure to copy)
TEMPLATE = {"layout": {
    "paper_bgcolor": "white", "plot_bgcolor": "white", "font": {"color": "#2a3f5f"}, "hovermode": "closest",
    "colorway": list(PALETTE), "hoverlabel": {"align": "left", "namelength": -1},
    "xaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True,
              "title": {"standoff": 15}},
    "yaxis": {"gridcolor": "#EBF0F8", "linecolor": "#EBF0F8", "zerolinecolor": "#EBF0F8", "automargin": True,
              "title": {"standoff": 15}},
}}


#: title characters per line: a half-width dashboard column (about 560 px) holds ~60
TITLE_WIDTH = 60


def wrap_title(title: str, width: int = TITLE_WIDTH) -> str:
    """Break a long title into lines of at most ``width`` characters (plotly ``<br>``);
    plotly never wraps a title and cuts it at the figure's edge."""
    import textwrap

    if len(title) <= width or "<br>" in title:
        return title
    return "<br>".join(textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False))


def _layout(title: str, text: str, **layout) -> dict:
    base = dict(title={"text": wrap_title(title), "x": 0.01, "xanchor": "left", "yref": "container", "y": 0.98, "yanchor": "top"},
                template=TEMPLATE, meta={"caption": text}, margin={"t": 100, "r": 20, "l": 60, "b": 60},
                legend={"orientation": "h", "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom"})
    base.update(layout)
    return base


def _figure(title: str, x_title: str, y_title: str, text: str, **layout) -> go.Figure:
    """An empty figure with title, axis titles and the caption in ``layout.meta``."""
    return go.Figure(layout=_layout(title, text, xaxis={"title": {"text": x_title}},
                                    yaxis={"title": {"text": y_title}}, **layout))


def _note(fig: go.Figure, text: str) -> go.Figure:
    """A centred message for figures without data (no copies, no rows chosen...)."""
    fig.add_annotation(text=text, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False,
                       font={"size": 14, "color": "#555"})
    return fig


def _int(n) -> str:
    return f"{int(n):,}"


def _pct(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}%"


def _key(name) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


def method_label(name) -> str:
    """Display name of a method (``dynamic_cut`` -> ``DynamicCut``); unknown names as given."""
    return METHOD_LABELS.get(_key(name), str(name))


def model_label(name) -> str:
    return MODEL_LABELS.get(_key(name), str(name))


def _method_sort(names) -> list:
    rank = {m: i for i, m in enumerate(METHOD_ORDER)}
    return sorted(names, key=lambda n: (rank.get(_key(n), len(rank)), str(n)))


def _model_sort(names) -> list:
    rank = {m: i for i, m in enumerate(MODEL_LABELS)}
    return sorted(names, key=lambda n: (rank.get(_key(n), len(rank)), str(n)))


def _positions(dyn: RowDynamics, row_ids) -> np.ndarray:
    ids = np.asarray(list(row_ids), dtype=np.int64)
    pos = np.searchsorted(dyn.row_ids, ids)
    bad = (pos >= dyn.n_rows) | (dyn.row_ids[np.minimum(pos, dyn.n_rows - 1)] != ids)
    if bad.any():
        raise MemvizError(f"row_id {ids[bad][0]} is not a training row of this run")
    return pos


def _check_labels(dyn: RowDynamics) -> list[str]:
    """One x label per check: its epoch (check index added where epochs repeat)."""
    ep = [str(int(e)) for e in dyn.epochs]
    dup = {e for e in ep if ep.count(e) > 1}
    return [f"{e} (check {int(c)})" if e in dup else e for e, c in zip(ep, dyn.checks)]


def _groups(dyn: RowDynamics):
    share = f"{100 * dyn.top_frac:g}%"
    return ((f"Top {share}", dyn.top, TOP_COLOR), (f"Non-Top {100 - 100 * dyn.top_frac:g}%", ~dyn.top, REST_COLOR))


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


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
    fig = _figure(
        f"Copies per training row ({_int(n)} rows, {dyn.n_checks} checks)",
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
        _note(fig, "No training row was copied at any check")
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
    :func:`memviz.dynamics.concentration_curve`); the diagonal y = x is an even spread.
    The curve is thinned to at most ``MAX_CURVE_POINTS`` points (it is concave, so
    straight segments between kept points are within a pixel).
    """
    x, y = concentration_curve(dyn)  # (N+1,)
    n = dyn.n_rows
    fig = _figure(f"Concentration of copies ({_int(dyn.total.sum())} copies over {_int(n)} rows)",
                  "Most-copied training rows (% of all rows)", "Share of all copies (%)",
                  "The curve shows what share of all copies comes from the most-copied x% of training rows; "
                  "a curve close to the dashed diagonal means copies are spread thinly, a curve that shoots up "
                  "at the left means a small group of rows accounts for most of the leak.")
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line={"dash": "dash", "color": "#999"},
                    name="even spread", hoverinfo="skip")
    if np.isnan(y).all():
        _note(fig, "No training row was copied at any check")
    else:
        # linear plus geometric spacing: the steep start (the few most-copied rows) keeps its detail
        grid = np.concatenate([np.linspace(0, n, MAX_CURVE_POINTS // 2), np.geomspace(1, n, MAX_CURVE_POINTS // 2)])
        idx = np.unique(np.round(grid).astype(np.int64))
        fig.add_scatter(x=x[idx], y=y[idx], mode="lines", line={"color": TOP_COLOR, "width": 3},
                        fill="tozeroy", fillcolor=_rgba(TOP_COLOR, 0.1), name="copies",
                        hovertemplate="top %{x:.2%} of rows hold %{y:.1%} of copies<extra></extra>")
        for share in marks:
            j = min(n, int(math.ceil(round(share * n, 9))))
            fig.add_scatter(x=[x[j]], y=[y[j]], mode="markers+text", marker={"color": "#333", "size": 8},
                            text=[f" top {share:.0%}: {_pct(y[j])}"], textposition="bottom right",
                            showlegend=False, hoverinfo="skip")
    fig.update_xaxes(tickformat=".0%", range=[0, 1])
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return fig


def check_curves(per_check: pd.DataFrame) -> go.Figure:
    """Memorization ratio and Mem-AUC at every check, against the epoch.

    mem_ratio = (1 / S) * #{g : r_g < 1/3};  mem_auc = (1 / S) * sum_g (1 - r_g)
    (non-finite r counts 0); see :func:`memviz.dynamics.check_summary`.
    """
    missing = [c for c in ("epoch", "mem_ratio", "mem_auc") if c not in per_check.columns]
    if missing:
        raise MemvizError(f"per-check table is missing column(s) {', '.join(missing)}")
    fig = _figure("Memorization during the warm-up", "Epoch (training epochs finished)", "Share of generated rows (%)",
                  "Both curves should stay low and flat; rising curves mean the model copies more training rows "
                  "as it trains (mem ratio = share of generated rows with r < 1/3, Mem-AUC = mean of 1 − r).")
    pc = per_check.sort_values("epoch")
    extra = pc["n_memorized"] if "n_memorized" in pc else pd.Series(np.nan, index=pc.index)
    fig.add_scatter(x=pc["epoch"], y=pc["mem_ratio"], mode="lines+markers", name="mem ratio",
                    line={"color": TOP_COLOR}, customdata=extra,
                    hovertemplate="epoch %{x:,}: mem ratio %{y:.2%} (%{customdata:,} rows)<extra></extra>")
    fig.add_scatter(x=pc["epoch"], y=pc["mem_auc"], mode="lines+markers", name="Mem-AUC",
                    line={"color": REST_COLOR, "dash": "dot"},
                    hovertemplate="epoch %{x:,}: Mem-AUC %{y:.2%}<extra></extra>")
    if len(pc) == 0:
        _note(fig, "No finished check yet")
    fig.update_yaxes(tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(tickformat=",")
    return fig


# ----------------------------------------------------------------------- dynamics screen
def first_epoch_plot(dyn: RowDynamics) -> go.Figure:
    """First-memorization epoch of Top vs Non-Top rows; "never" collects censored rows.

    For each group G: share(e) = #{i in G : first check of i = e} / |G|, plus the share
    never copied during the warm-up (censored).
    """
    c = dyn.n_checks
    labels = _check_labels(dyn) + ["never"]
    fig = _figure("First memorization: Top vs Non-Top rows", "First check with a copy (epoch)",
                  "Rows of the group (%)",
                  "Bars show when each group's rows were first copied ('never': not copied during the warm-up); "
                  "Top bars leaning further left than Non-Top mean the most-copied rows are memorized early, "
                  "which is what lets DynamicCut find them after a short warm-up.", barmode="group")
    fc = np.where(dyn.first_check < 0, c, dyn.first_check)  # (N,) censored -> last bin
    for name, mask, color in _groups(dyn):
        size = int(mask.sum())
        counts = np.bincount(fc[mask], minlength=c + 1)  # (C+1,)
        mem = mask & ~dyn.censored
        med = f", median epoch {np.median(dyn.first_epoch[mem]):,.0f}" if mem.any() else ""
        fig.add_bar(x=labels, y=counts / max(size, 1), name=f"{name} (n={size:,}{med})", marker_color=color,
                    customdata=counts,
                    hovertemplate="epoch %{x}: %{y:.1%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
    fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".0%")
    return fig


def forgetting_plot(dyn: RowDynamics) -> go.Figure:
    """Forgetting events per row, Top vs Non-Top.

    F_i = #{e : c_i(e) > 0 and c_i(e+1) = 0}; bars give #{i in G : F_i = f} / |G|.
    """
    f = np.asarray(dyn.forgetting_events, dtype=np.int64)
    mx = int(f.max()) if f.size else 0
    fig = _figure("Forgetting events: Top vs Non-Top rows",
                  "Forgetting events per row (copied, then not at the next check)", "Rows of the group (%)",
                  "Each bar is the share of a group's rows that were forgotten that many times; Top rows forgetting "
                  "more often than Non-Top rows means their memorization flickers from check to check, so a single "
                  "check can miss them and a score over several checks is safer.", barmode="group")
    for name, mask, color in _groups(dyn):
        size = int(mask.sum())
        counts = np.bincount(f[mask], minlength=mx + 1)
        mean = f[mask].mean() if size else float("nan")
        fig.add_bar(x=np.arange(mx + 1), y=counts / max(size, 1), name=f"{name} (mean {mean:.2f})",
                    marker_color=color, customdata=counts,
                    hovertemplate="%{x} events: %{y:.1%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
    if dyn.n_checks < 2:
        _note(fig, "One check only: forgetting needs two checks")
    fig.update_xaxes(dtick=1, tickformat=",")
    fig.update_yaxes(tickformat=".0%")
    return fig


BAND_QUANTITIES = {
    "cumulative": ("Cumulative copies per row", "Copies so far (generated rows)", ",.0f"),
    "mem_auc": ("Per-row Mem-AUC at each check", "Per-row Mem-AUC A_i(e) (sum of 1 − r)", ",.3f"),
    "counts": ("Copies per row at each check", "Copies at this check (generated rows)", ",.0f"),
}


def group_band_plot(dyn: RowDynamics, quantity: str = "cumulative", *, show_mean: bool = True) -> go.Figure:
    """Median and 25–75 % band of a per-row quantity over checks, Top vs Non-Top.

    ``quantity``: ``cumulative`` (C_i(e)), ``mem_auc`` (A_i(e) = sum of 1 - r over the
    generated rows whose NN1 is i) or ``counts`` (c_i(e)). Band = 25th to 75th
    percentile over the group's rows at each check; the dotted line is the mean, which
    shows the heavy tail when the median sits at 0.
    """
    if quantity not in BAND_QUANTITIES:
        raise MemvizError(f"quantity {quantity!r}: use one of {', '.join(BAND_QUANTITIES)}")
    title, y_title, fmt = BAND_QUANTITIES[quantity]
    values = {"cumulative": dyn.cumulative, "mem_auc": dyn.auc, "counts": dyn.counts}[quantity]  # (N, C)
    fig = _figure(f"{title}: Top vs Non-Top (median and 25–75% band)", "Epoch (training epochs finished)", y_title,
                  "Solid lines are each group's median, shaded bands hold the middle half of its rows; a Top band "
                  "well above the Non-Top band early in training means the rows that will leak stand out early, "
                  "overlapping bands mean they cannot yet be told apart.")
    x = dyn.epochs
    for name, mask, color in _groups(dyn):
        if not mask.any():
            continue
        q25, q50, q75 = np.percentile(values[mask], [25, 50, 75], axis=0)  # (C,) each
        if len(x) > 1:
            fig.add_scatter(x=x, y=q75, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip",
                            legendgroup=name)
            fig.add_scatter(x=x, y=q25, mode="lines", line={"width": 0}, fill="tonexty",
                            fillcolor=_rgba(color, 0.2), name=f"{name} 25–75%", legendgroup=name, hoverinfo="skip")
        fig.add_scatter(x=x, y=q50, mode="lines+markers", line={"color": color, "width": 3}, name=f"{name} median",
                        legendgroup=name, customdata=np.stack([q25, q75], axis=1),
                        error_y=None if len(x) > 1 else {"type": "data", "symmetric": False,
                                                         "array": q75 - q50, "arrayminus": q50 - q25},
                        hovertemplate=f"epoch %{{x:,}}: median %{{y:{fmt}}} "
                                      f"(25–75%: %{{customdata[0]:{fmt}}}–%{{customdata[1]:{fmt}}})"
                                      "<extra>%{fullData.name}</extra>")
        if show_mean:
            fig.add_scatter(x=x, y=values[mask].mean(axis=0), mode="lines", name=f"{name} mean", legendgroup=name,
                            line={"color": color, "dash": "dot", "width": 1.5},
                            hovertemplate=f"epoch %{{x:,}}: mean %{{y:{fmt}}}<extra>%{{fullData.name}}</extra>")
    fig.update_xaxes(tickformat=",")
    fig.update_yaxes(tickformat=fmt.replace("f", "~f") if quantity == "mem_auc" else ",", rangemode="tozero")
    return fig


def row_timeline(dyn: RowDynamics, row_ids, *, max_rows: int = 200) -> go.Figure:
    """Memorized (at least one copy) or not at every check, for chosen training rows.

    Cell (i, e) is coloured when c_i(e) > 0 and shows c_i(e); rows keep the given order
    (at most ``max_rows``).
    """
    ids = list(row_ids)[:max_rows]
    fig = _figure("Memorization timeline of chosen rows", "Check (epoch)", "Training row",
                  "Each line is one training row and each red cell a check at which the model copied it (the "
                  "number is how many generated rows); rows red from the start are memorized early, and white gaps "
                  "between red cells are forgetting events.")
    fig.add_scatter(x=[None], y=[None], mode="markers", marker={"symbol": "square", "size": 12, "color": TOP_COLOR},
                    name="memorized (≥ 1 copy)")
    fig.add_scatter(x=[None], y=[None], mode="markers", marker={"symbol": "square", "size": 12, "color": "#eeeeee"},
                    name="not memorized")
    if not ids:
        fig.update_xaxes(showticklabels=False)
        fig.update_yaxes(showticklabels=False)
        return _note(fig, "Choose training rows to follow")
    pos = _positions(dyn, ids)
    counts = dyn.counts[pos]  # (R, C)
    labels = [f"{int(r)}{' (Top)' if t else ''}" for r, t in zip(dyn.row_ids[pos], dyn.top[pos])]
    fig.add_heatmap(z=(counts > 0).astype(np.int8), x=_check_labels(dyn), y=labels, zmin=0, zmax=1,
                    colorscale=[[0, "#eeeeee"], [0.5, "#eeeeee"], [0.5, TOP_COLOR], [1, TOP_COLOR]],
                    showscale=False, xgap=2, ygap=2, customdata=counts,
                    text=np.where(counts > 0, counts.astype(str), ""), texttemplate="%{text}",
                    hovertemplate="row %{y}, epoch %{x}: %{customdata:,} copies<extra></extra>")
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(height=max(300, 120 + 22 * len(ids)), plot_bgcolor="white")
    return fig


# --------------------------------------------------------------------- tune & prune screen
def early_identification_plot(curve: pd.DataFrame) -> go.Figure:
    """Precision, recall and Jaccard of the DynamicCut selection at T vs the final Top group.

    Input: :func:`memviz.dynamiccut.early_identification_curve`. With S the selected rows
    and Top the final Top group: precision = |S ∩ Top| / |S|, recall = |S ∩ Top| / |Top|,
    Jaccard = |S ∩ Top| / |S ∪ Top|; dashed lines are a random selection's expectations
    |Top| / N (precision) and |S| / N (recall).
    """
    need = ("T", "precision", "recall", "jaccard", "random_precision", "random_recall")
    missing = [c for c in need if c not in curve.columns]
    if missing:
        raise MemvizError(f"early-identification table is missing column(s) {', '.join(missing)}")
    cv = curve.sort_values("T")
    params = ([f"p = {cv['p'].iloc[0]:.0%}"] if "p" in cv and len(cv) else []) + \
        ([f"k = {int(cv['k'].iloc[0])}"] if "k" in cv and len(cv) else [])
    fig = _figure("Early identification of the final Top group" + (f" ({', '.join(params)})" if params else ""),
                  "Warm-up window T (epochs)", "Overlap with the final Top group (%)",
                  "Precision is the share of rows DynamicCut would remove after T epochs that end up in the final "
                  "Top group, recall the share of that group they cover; solid lines well above their dashed random "
                  "levels at small T mean a short warm-up is enough, lines near them mean the ranking is no better "
                  "than chance.")
    for col, name, color in (("precision", "precision", TOP_COLOR), ("recall", "recall", REST_COLOR),
                             ("jaccard", "Jaccard", "#2ca02c")):
        fig.add_scatter(x=cv["T"], y=cv[col], mode="lines+markers", name=name, line={"color": color},
                        hovertemplate=f"T = %{{x:,}}: {name} %{{y:.1%}}<extra></extra>")
    for col, name, color in (("random_precision", "random precision", TOP_COLOR),
                             ("random_recall", "random recall", REST_COLOR)):
        fig.add_scatter(x=cv["T"], y=cv[col], mode="lines", name=name,
                        line={"color": color, "dash": "dash", "width": 1},
                        hovertemplate=f"{name} %{{y:.1%}}<extra></extra>")
    if len(cv) == 0:
        _note(fig, "No warm-up window to evaluate")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    fig.update_xaxes(tickformat=",")
    return fig


def _removed_mask(train: Table, removed_ids) -> np.ndarray:
    ids = np.asarray(list(removed_ids) if not isinstance(removed_ids, np.ndarray) else removed_ids, dtype=np.int64)
    index = train.data.index
    unknown = ~np.isin(ids, index.to_numpy())
    if unknown.any():
        raise MemvizError(f"removed row_id {ids[unknown][0]} is not in the training table")
    return index.isin(ids)  # (N,)


def _shares(values: np.ndarray, cats: np.ndarray) -> np.ndarray:
    if len(values) == 0:
        return np.zeros(len(cats))
    codes = pd.Categorical(values, categories=cats).codes
    return np.bincount(codes[codes >= 0], minlength=len(cats)) / len(values)


def class_balance_plot(train: Table, removed_ids) -> go.Figure:
    """Class shares of the target before pruning, after it, and among the removed rows.

    share_before(k) = #{i : y_i = k} / N; share_after(k) over the kept rows; classes are
    compared by their canonical value (``1`` = ``1.0``). A regression target is shown with
    :func:`column_shift_plot`.
    """
    schema = train.schema
    if schema.target is not None and not schema.target_is_categorical:
        return column_shift_plot(train, removed_ids, schema.target)
    removed = _removed_mask(train, removed_ids)
    n_rm = int(removed.sum())
    fig = _figure(f"Class balance before and after pruning ({n_rm:,} of {len(train):,} rows removed)",
                  "Class", "Rows (%)",
                  "Compare each class's share before (grey) and after (blue) pruning; bars of equal height are good, "
                  "a class that shrinks noticeably means pruning removed mostly that class and the retrained model "
                  "may under-represent it.", barmode="group")
    if schema.target is None:
        return _note(fig, "The table has no target column")
    y = canonical_series(train.data[schema.target])  # (N,)
    cats = pd.Series(y).value_counts().index.to_numpy()
    for name, vals, color in (("before (all rows)", y, BEFORE_COLOR), ("after (kept rows)", y[~removed], AFTER_COLOR),
                              ("removed rows", y[removed], REMOVED_COLOR)):
        sh = _shares(vals, cats)
        fig.add_bar(x=cats.astype(str), y=sh, name=f"{name}, n={len(vals):,}", marker_color=color,
                    customdata=np.round(sh * len(vals)).astype(np.int64),
                    hovertemplate="%{x}: %{y:.2%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
    fig.update_xaxes(type="category", title_text=f"Class of {schema.target}")
    fig.update_yaxes(tickformat=".0%")
    return fig


def _ks(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample KS statistic sup_x |F_a(x) - F_b(x)|."""
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, "right") / len(a)
    fb = np.searchsorted(b, grid, "right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def column_shift_plot(train: Table, removed_ids, column: str, *, bins: int = 30,
                      max_categories: int = 20) -> go.Figure:
    """A column's distribution before pruning, after it, and among the removed rows.

    Numerical: shares per bin of ``bins`` equal-width bins over the whole column (one bar
    per value when the column holds at most ``bins`` distinct integers); the title gives
    the KS distance sup_x |F_before(x) - F_after(x)|. Categorical: shares per category
    (the ``max_categories`` most frequent, the rest as "other"); the title gives the total
    variation distance ½ Σ_k |P_before(k) - P_after(k)|. Missing values are left out of
    numerical bins and form their own category.
    """
    schema = train.schema
    if column not in schema.columns:
        raise MemvizError(f"column {column!r}: not a column of the training table")
    removed = _removed_mask(train, removed_ids)
    n_rm = int(removed.sum())
    text = ("Grey is the column in the full training table, blue after pruning and red among the removed rows "
            "alone; blue matching grey (a small distance in the title) means pruning leaves this attribute intact, "
            "a visible gap means the removed rows are atypical for it.")
    if column in schema.distance_numerical:
        v = pd.to_numeric(train.data[column], errors="coerce").to_numpy(dtype=np.float64)  # (N,)
        ok = np.isfinite(v)
        uniq = np.unique(v[ok])
        if len(uniq) <= bins and np.all(uniq == np.round(uniq)):
            edges = np.concatenate([uniq - 0.5, [uniq[-1] + 0.5]]) if len(uniq) else np.array([0.0, 1.0])
            centres, labels = uniq, [f"{u:,.0f}" for u in uniq]
            bar_width = 0.8 * (float(np.diff(uniq).min()) if len(uniq) > 1 else 1.0)
        else:
            edges = np.histogram_bin_edges(v[ok], bins=bins) if ok.any() else np.array([0.0, 1.0])
            centres = (edges[:-1] + edges[1:]) / 2
            labels = [f"{a:,.4g} – {b:,.4g}" for a, b in zip(edges[:-1], edges[1:])]
            bar_width = np.diff(edges)
        dist = _ks(v[ok], v[ok & ~removed])
        fig = _figure(f"{column}: before and after pruning (KS distance {_pct(dist)}, {n_rm:,} rows removed)",
                      f"{column} (units of the data)", "Rows (%)", text, barmode="overlay")
        for name, sel, color in (("before (all rows)", ok, BEFORE_COLOR),
                                 ("after (kept rows)", ok & ~removed, AFTER_COLOR),
                                 ("removed rows", ok & removed, REMOVED_COLOR)):
            counts = np.histogram(v[sel], bins=edges)[0]
            share = counts / max(int(sel.sum()), 1)
            trace = dict(x=centres, y=share, name=f"{name}, n={int(sel.sum()):,}", customdata=np.stack(
                [np.asarray(labels, dtype=object), counts], axis=1),
                hovertemplate="%{customdata[0]}: %{y:.2%} (%{customdata[1]:,} rows)<extra>%{fullData.name}</extra>")
            if name.startswith("removed"):
                fig.add_scatter(mode="lines+markers", line={"color": color}, **trace)
            else:
                fig.add_bar(marker_color=color, opacity=0.55 if name.startswith("before") else 0.6,
                            width=bar_width, **trace)
        fig.update_xaxes(tickformat=",")
    else:
        y = canonical_series(train.data[column])
        freq = pd.Series(y).value_counts()
        cats = freq.index.to_numpy()
        if len(cats) > max_categories:
            top = set(cats[:max_categories])
            y = np.where(pd.Series(y).isin(top), y, "(other)")
            cats = np.concatenate([cats[:max_categories], ["(other)"]])
        before, after = _shares(y, cats), _shares(y[~removed], cats)
        dist = 0.5 * float(np.abs(before - after).sum())
        fig = _figure(f"{column}: before and after pruning (TV distance {_pct(dist)}, {n_rm:,} rows removed)",
                      f"{column} (category)", "Rows (%)", text, barmode="group")
        for name, vals, color in (("before (all rows)", y, BEFORE_COLOR),
                                  ("after (kept rows)", y[~removed], AFTER_COLOR),
                                  ("removed rows", y[removed], REMOVED_COLOR)):
            sh = _shares(vals, cats)
            fig.add_bar(x=[c.replace("\x00<missing>", "(missing)") for c in cats.astype(str)], y=sh,
                        name=f"{name}, n={len(vals):,}", marker_color=color,
                        customdata=np.round(sh * len(vals)).astype(np.int64),
                        hovertemplate="%{x}: %{y:.2%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
        fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".0%")
    return fig


# ------------------------------------------------------------------------ compare screen
def fractions(values: pd.Series) -> pd.Series:
    """Results metrics as floats. They are fractions by contract (``results.csv`` of
    :mod:`memviz.experiment`); no guessing of percent scales, which would misread a
    relative reduction of -3,420 % (-34.2) as -34 %."""
    return pd.to_numeric(values, errors="coerce").astype(float)


def _check_results(results: pd.DataFrame, *cols: str) -> None:
    if not isinstance(results, pd.DataFrame):
        raise MemvizError(f"results must be a pandas DataFrame, got {type(results).__name__}")
    missing = [c for c in ("method", "model", *cols) if c not in results.columns]
    if missing:
        raise MemvizError(f"results table is missing column(s) {', '.join(missing)}")


def _aggregate(results: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean, std and count over seeds per (method, model) of a metric (``METRICS`` ones as fractions)."""
    df = results[["method", "model"]].copy()
    df["value"] = fractions(results[metric]) if metric in METRICS else \
        pd.to_numeric(results[metric], errors="coerce").astype(float)
    g = df.groupby(["method", "model"], sort=False)["value"].agg(["mean", "std", "count"]).reset_index()
    return g.fillna({"std": 0.0})


def comparison_plot(results: pd.DataFrame, metric: str = "mem_ratio") -> go.Figure:
    """Bars per method, one colour per model: mean over seeds ± one standard deviation.

    ``metric`` is a column of the results table (see ``METRICS``): e.g. ``mem_ratio``,
    ``relative_reduction`` = (m_baseline - m_method) / m_baseline, ``shape``, ``trend``,
    ``mle``, ``dcr_share``. MLE shows the real-data reference (``mle_real``) as a dashed
    line, DCR share the 50 % ideal. Other numeric columns are shown in their own units.
    """
    _check_results(results, metric)
    label, good, ref = METRICS.get(metric, (metric, "", None))
    pct = metric in METRICS
    fmt = ".2%" if pct else ",.4g"
    agg = _aggregate(results, metric)
    seeds = int(agg["count"].max()) if len(agg) else 0
    direction = {"lower": "lower is better", "higher": "higher is better"}.get(good, good)
    fig = _figure(f"{label} by method and model (mean ± sd over {seeds} seed{'s' * (seeds != 1)})",
                  "Method", f"{label} (%)" if pct else label,
                  f"Each bar is one method on one generator{f' ({direction})' if direction else ''}; compare every "
                  "method with the baseline bar of the same colour, and read error bars that overlap as no clear "
                  "difference.",
                  barmode="group")
    methods = _method_sort(agg["method"].unique())
    for i, model in enumerate(_model_sort(agg["model"].unique())):
        sub = agg[agg["model"] == model].set_index("method").reindex(methods)
        fig.add_bar(x=[method_label(m) for m in methods], y=sub["mean"], name=model_label(model),
                    marker_color=PALETTE[i % len(PALETTE)],
                    error_y={"type": "data", "array": sub["std"].to_numpy(), "visible": True},
                    customdata=np.stack([sub["std"].to_numpy(), sub["count"].fillna(0).to_numpy()], axis=1),
                    hovertemplate=f"%{{x}}: %{{y:{fmt}}} ± %{{customdata[0]:{fmt}}} (%{{customdata[1]}} seeds)"
                                  "<extra>%{fullData.name}</extra>")
    if isinstance(ref, str) and ref in results.columns and results[ref].notna().any():
        fig.add_hline(y=float(fractions(results[ref]).mean()), line_dash="dash", line_color="#555",
                      annotation_text="real training data", annotation_position="top left")
    elif isinstance(ref, float):
        fig.add_hline(y=ref, line_dash="dash", line_color="#555", annotation_text=f"ideal {ref:.0%}",
                      annotation_position="top left")
    if agg.empty or agg["mean"].isna().all():
        _note(fig, f"No {label} value in the results")
    fig.update_xaxes(type="category")
    fine = metric in ("relative_reduction", "mem_ratio", "mem_ratio_pruned")
    fig.update_yaxes(tickformat=(".1%" if fine else ".0%") if pct else ",.3~g")
    return fig


def privacy_utility_plot(results: pd.DataFrame, utility: str = "mle") -> go.Figure:
    """Memorization ratio (x) against a utility metric (y), one point per method x model.

    Points are means over seeds with ± one standard deviation bars; ``utility`` is
    ``mle`` (ROC AUC on the real test split) or ``shape`` (or ``trend``).
    """
    _check_results(results, "mem_ratio", utility)
    ux = _aggregate(results, "mem_ratio")
    uy = _aggregate(results, utility).rename(columns={"mean": "ymean", "std": "ystd", "count": "ycount"})
    agg = ux.merge(uy, on=["method", "model"])
    ulabel = METRICS.get(utility, (utility,))[0]
    fig = _figure(f"Privacy–utility trade-off: memorization vs {ulabel.split(' (')[0]}",
                  "Memorization ratio (%, lower is more private)", f"{ulabel} (%)",
                  "Up and to the left is best (fewer copies, utility kept); a method that moves left of the baseline "
                  "of the same model without dropping is a free privacy gain, one that drops a lot pays for it in "
                  "utility.")
    symbols = ("circle", "square", "diamond", "triangle-up", "x", "star")
    models = _model_sort(agg["model"].unique())
    for i, method in enumerate(_method_sort(agg["method"].unique())):
        sub = agg[agg["method"] == method]
        sym = [symbols[models.index(m) % len(symbols)] for m in sub["model"]]
        fig.add_scatter(x=sub["mean"], y=sub["ymean"], mode="markers", name=method_label(method),
                        marker={"color": PALETTE[i % len(PALETTE)], "size": 13, "symbol": sym,
                                "line": {"width": 2 if _key(method) == "baseline" else 0, "color": "#000"}},
                        error_x={"type": "data", "array": sub["std"].to_numpy(), "thickness": 1},
                        error_y={"type": "data", "array": sub["ystd"].to_numpy(), "thickness": 1},
                        customdata=np.array([model_label(m) for m in sub["model"]], dtype=object),
                        hovertemplate="%{customdata}: mem ratio %{x:.2%}, " + ulabel.split(" (")[0] +
                                      " %{y:.2%}<extra>%{fullData.name}</extra>")
    for j, m in enumerate(models):  # legend entries for the marker shapes
        fig.add_scatter(x=[None], y=[None], mode="markers", name=model_label(m),
                        marker={"symbol": symbols[j % len(symbols)], "color": "#777", "size": 10})
    if agg.empty or agg["ymean"].isna().all():
        _note(fig, f"No {ulabel} value in the results")
    fig.update_xaxes(tickformat=".0%")
    fig.update_yaxes(tickformat=".0%")
    return fig


def shape_breakdown_plot(column_shapes) -> go.Figure:
    """Per-column Shape score (KS / TV complement) for each method, as a heatmap.

    ``column_shapes``: a DataFrame with columns ``method, column, score`` (rows for
    several models or seeds are averaged), or a mapping method -> DataFrame with
    ``column, score`` (e.g. :attr:`memviz.evaluate.QualityResult.column_shapes`).
    """
    if isinstance(column_shapes, Mapping):
        parts = [pd.DataFrame({"method": m, "column": d["column"], "score": d["score"]})
                 for m, d in column_shapes.items()]
        df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "column", "score"])
    elif isinstance(column_shapes, pd.DataFrame):
        df = column_shapes
    else:
        raise MemvizError("column_shapes must be a DataFrame or a dict of DataFrames, "
                          f"got {type(column_shapes).__name__}")
    missing = [c for c in ("method", "column", "score") if c not in df.columns]
    if missing:
        raise MemvizError(f"column shapes table is missing column(s) {', '.join(missing)}")
    df = df.assign(score=fractions(df["score"]))
    piv = df.pivot_table(index="column", columns="method", values="score", aggfunc="mean", sort=False)
    methods = _method_sort(list(piv.columns))
    piv = piv[methods] if methods else piv
    base = next((m for m in methods if _key(m) == "baseline"), None)
    diff = piv.sub(piv[base], axis=0) if base is not None else piv * np.nan
    fig = _figure("Column shapes per method (100% = same distribution as the training data)", "Method",
                  "Column",
                  "Each cell is how closely a method reproduces one column's distribution (KS or TV complement); "
                  "green everywhere is good, a cell paler than the baseline in its row means that method damaged "
                  "that column.")
    if piv.size:
        z = piv.to_numpy(dtype=float)
        fig.add_heatmap(z=z, x=[method_label(m) for m in methods], y=[str(c) for c in piv.index],
                        colorscale="RdYlGn", zmin=max(0.0, float(np.nanmin(z)) if np.isfinite(z).any() else 0.0),
                        zmax=1.0, text=np.vectorize(lambda v: _pct(v))(z), texttemplate="%{text}",
                        customdata=diff.to_numpy(dtype=float), colorbar={"title": "score", "tickformat": ".0%"},
                        hovertemplate="%{y} · %{x}: %{z:.1%} (vs baseline %{customdata:+.1%})<extra></extra>")
        fig.update_layout(height=max(320, 120 + 24 * len(piv)))
    else:
        _note(fig, "No column shapes to show")
    fig.update_xaxes(type="category", side="top")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def dcr_plot(dcr_by_method: Mapping[str, np.ndarray], *, bins: int = 60, clip_quantile: float = 0.995) -> go.Figure:
    """Distance-to-closest-record distributions, one line per method, medians dashed.

    DCR(g) = min over training rows x of d(g, x) (standardized distance, see
    :func:`memviz.evaluate.dcr_share`). Shares per bin over ``bins`` shared equal-width bins
    from 0 to the ``clip_quantile`` quantile of all values (farther values go to the last
    bin); the share of exact copies (DCR = 0) is given in the legend.
    """
    if not isinstance(dcr_by_method, Mapping):
        raise MemvizError(f"dcr_by_method must be a dict method -> distances, got {type(dcr_by_method).__name__}")
    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in dcr_by_method.items()}
    arrays = {k: v[np.isfinite(v)] for k, v in arrays.items()}
    allv = np.concatenate([v for v in arrays.values()]) if arrays else np.zeros(0)
    fig = _figure("Distance to the closest training record (median dashed)",
                  "Distance to the closest training row (standardized, unitless)", "Generated rows (%)",
                  "Mass piled up near 0 means generated rows sit on top of training rows; after pruning the curve "
                  "and its dashed median should move right, away from 0, while staying close to the baseline shape.")
    if allv.size == 0:
        return _note(fig, "No distances to show")
    hi = float(np.quantile(allv, clip_quantile)) or float(allv.max()) or 1.0
    edges = np.linspace(0.0, hi, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    for i, method in enumerate(_method_sort(arrays)):
        v = arrays[method]
        if v.size == 0:
            continue
        color = PALETTE[i % len(PALETTE)]
        counts = np.histogram(np.minimum(v, hi), bins=edges)[0]
        med, zero = float(np.median(v)), float(np.mean(v == 0))
        name = f"{method_label(method)} (median {med:.3g}, exact copies {_pct(zero)})"
        fig.add_scatter(x=centres, y=counts / v.size, mode="lines", line={"color": color, "shape": "hvh"}, name=name,
                        legendgroup=str(method), customdata=counts,
                        hovertemplate="distance %{x:.3g}: %{y:.2%} (%{customdata:,} rows)"
                                      "<extra>%{fullData.name}</extra>")
        fig.add_vline(x=med, line_dash="dash", line_color=color)
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(tickformat=".0%")
    return fig


def transferability_plot(results: pd.DataFrame, methods: Sequence[str] = ("dynamiccut", "random")) -> go.Figure:
    """Relative reduction of the memorization ratio per generator: DynamicCut vs random pruning.

    relative_reduction = (m_baseline - m_method) / m_baseline, mean ± sd over seeds. The
    DynamicCut ranking comes from a TabDDPM warm-up; bars for the other generators show
    whether that ranking transfers.
    """
    _check_results(results, "relative_reduction")
    wanted = {_key(m) for m in methods}
    sub = results[[_key(m) in wanted for m in results["method"]]]
    agg = _aggregate(sub, "relative_reduction")
    fig = _figure("Does the TabDDPM ranking transfer? Relative reduction per generator",
                  "Generator", "Relative reduction of the mem ratio vs baseline (%)",
                  "DynamicCut bars above the random-pruning bars for a generator mean the rows ranked by the TabDDPM "
                  "warm-up are also the ones that generator copies (the ranking transfers); bars at the random level "
                  "or below mean it does not.", barmode="group")
    models = _model_sort(agg["model"].unique())
    for i, method in enumerate(_method_sort(agg["method"].unique())):
        s = agg[agg["method"] == method].set_index("model").reindex(models)
        color = REMOVED_COLOR if _key(method) == "dynamiccut" else PALETTE[(i + 2) % len(PALETTE)]
        fig.add_bar(x=[model_label(m) for m in models], y=s["mean"], name=method_label(method), marker_color=color,
                    error_y={"type": "data", "array": s["std"].to_numpy(), "visible": True},
                    customdata=s["std"].to_numpy(),
                    hovertemplate="%{x}: %{y:.1%} ± %{customdata:.1%}<extra>%{fullData.name}</extra>")
    if agg.empty:
        _note(fig, "No DynamicCut or random-pruning result to compare")
    fig.add_hline(y=0, line_color="#333", line_width=1)
    fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".0%")
    return fig


# ---------------------------------------------------------------------------- leaks
def leak_heatmap(column_rates, pair_rates=None) -> go.Figure:
    """How often a generated row's column equals its NN1 training row, memorized vs not.

    ``column_rates``: DataFrame ``column, memorized_rate, non_memorized_rate`` (or a
    :class:`memviz.leaks.ColumnLeak`); rows are sorted by memorized rate. ``pair_rates``:
    optional column x column DataFrame of pair rates (both columns equal; its panel is
    named after ``pair_rates.attrs["group"]``, set by ``column_match_rates``), or a mapping
    title -> such DataFrame (e.g. ``{"memorized": leak.pairs_memorized, "not memorized":
    leak.pairs_non_memorized}``), drawn as extra panels. See
    :func:`memviz.leaks.column_match_rates` for the formulas.
    """
    if hasattr(column_rates, "columns") and not isinstance(column_rates, pd.DataFrame):
        column_rates = column_rates.columns  # a ColumnLeak
    missing = [c for c in ("column", "memorized_rate", "non_memorized_rate") if c not in column_rates.columns]
    if missing:
        raise MemvizError(f"column rates table is missing column(s) {', '.join(missing)}")
    if pair_rates is None:
        pairs = {}
    elif isinstance(pair_rates, pd.DataFrame):
        group = pair_rates.attrs.get("group")
        pairs = {f"pairs, {group}" if group else "column pairs": pair_rates}
    else:
        pairs = {f"pairs, {k}": v for k, v in pair_rates.items()}
    cr = column_rates.sort_values("memorized_rate", ascending=False, na_position="last")
    titles = ["columns"] + list(pairs)
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.12,
                        column_widths=[1.0] + [2.0] * len(pairs))
    text = ("Each cell is how often a generated row's value equals its nearest training row's value exactly; "
            "columns far redder for memorized rows than for the others are the attributes that leak, similar "
            "rates in both columns mean the match is just a common value.")
    fig.update_layout(**_layout("Which attributes leak: exact matches with the nearest training row", text,
                                height=max(360, 140 + 24 * len(cr))))
    z = cr[["memorized_rate", "non_memorized_rate"]].to_numpy(dtype=float)
    cols = [str(c) for c in cr["column"]]
    heat = dict(colorscale="Reds", zmin=0.0, zmax=1.0, texttemplate="%{text}", xgap=1, ygap=1)
    fig.add_heatmap(z=z, x=["memorized", "not memorized"], y=cols, text=np.vectorize(_pct)(z) if z.size else z,
                    colorbar={"title": "match rate", "tickformat": ".0%"},
                    hovertemplate="%{y}, %{x} rows: %{z:.1%} equal to NN1<extra></extra>", row=1, col=1, **heat)
    for j, (name, m) in enumerate(pairs.items(), start=2):
        order = [c for c in cr["column"] if c in m.index] + [c for c in m.index if c not in set(cr["column"])]
        m = m.reindex(index=order, columns=order)  # same order as the column panel
        mz = m.to_numpy(dtype=float)
        fig.add_heatmap(z=mz, x=[str(c) for c in m.columns], y=[str(c) for c in m.index], showscale=False,
                        hovertemplate="%{y} & %{x}: %{z:.1%} both equal to NN1<extra>" + name + "</extra>",
                        row=1, col=j, colorscale="Reds", zmin=0.0, zmax=1.0, xgap=1, ygap=1)
        fig.update_yaxes(autorange="reversed", type="category", row=1, col=j)
        fig.update_xaxes(type="category", tickangle=-45, row=1, col=j)
    fig.update_xaxes(title_text="Generated rows (match rate, %)", row=1, col=1, type="category")
    fig.update_yaxes(title_text="Column", autorange="reversed", type="category", row=1, col=1)
    if len(cr) == 0:
        _note(fig, "No column to compare")
    return fig
