"""Figures of the Dynamics screen: Top vs Non-Top over the warm-up, timelines of chosen rows."""
from __future__ import annotations


import numpy as np
import plotly.graph_objects as go

from ..dynamics import RowDynamics
from ..errors import MemvizError
from .style import (TOP_COLOR,
                    _check_labels, _figure, _groups, _note, _positions, _rgba)


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
