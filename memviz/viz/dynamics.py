"""Figures of the Dynamics screen: Top vs Non-Top over the warm-up, timelines of chosen rows."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from memviz.dynamics.rows import RowDynamics
from memviz.errors import BadOption, BadTable
from memviz.viz.style import (
    TOP_COLOR,
    add_note,
    check_labels,
    new_figure,
    rgba,
    row_positions,
    top_groups,
)


# ----------------------------------------------------------------------- dynamics screen
def first_epoch_plot(dyn: RowDynamics) -> go.Figure:
    """First-memorization epoch of Top vs Non-Top rows; "never" collects censored rows.

    For each group G: share(e) = #{i in G : first check of i = e} / |G|, plus the share
    never copied during the warm-up (censored).
    """
    c = dyn.n_checks
    labels = check_labels(dyn) + ["never"]
    fig = new_figure("First memorization: Top vs Non-Top rows", "First check with a copy (epoch)",
                  "Rows of the group (%)",
                  "Bars show when each group's rows were first copied ('never': not copied during the warm-up); "
                  "Top = the most-copied rows over all checks (the paper's circular grouping), so Top bars lean "
                  "left even with no dynamics at all: read the test against the null before concluding "
                  "that the most-copied rows are memorized early.", barmode="group")
    fc = np.where(dyn.first_check < 0, c, dyn.first_check)  # (N,) censored -> last bin
    for name, mask, color in top_groups(dyn):
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
    fig = new_figure("Forgetting events: Top vs Non-Top rows",
                  "Forgetting events per row (copied, not at the next check)", "Rows of the group (%)",
                  "Each bar is the share of a group's rows forgotten that many times (the paper's count): a row "
                  "copied more often has more chances to be forgotten, so Top leads here even with no dynamics, "
                  "and the forgetting rate per memorized check in the test against the null is the fair reading.",
                  barmode="group")
    for name, mask, color in top_groups(dyn):
        size = int(mask.sum())
        counts = np.bincount(f[mask], minlength=mx + 1)
        mean = f[mask].mean() if size else float("nan")
        fig.add_bar(x=np.arange(mx + 1), y=counts / max(size, 1), name=f"{name} (mean {mean:.2f})",
                    marker_color=color, customdata=counts,
                    hovertemplate="%{x} events: %{y:.1%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
    if dyn.n_checks < 2:
        add_note(fig, "One check only: forgetting needs two checks")
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
        raise BadOption(f"quantity {quantity!r}: use one of {', '.join(BAND_QUANTITIES)}")
    title, y_title, fmt = BAND_QUANTITIES[quantity]
    values = {"cumulative": dyn.cumulative, "mem_auc": dyn.auc, "counts": dyn.counts}[quantity]  # (N, C)
    fig = new_figure(f"{title}: Top vs Non-Top (median and 25–75% band)", "Epoch (training epochs finished)", y_title,
                  "Solid lines are each group's median and shaded bands hold the middle half of its rows; Top is "
                  "chosen from these same counts, so its band sits above Non-Top even with no dynamics, and only "
                  "the test against the null says whether the rows that will leak stand out early.")
    x = dyn.epochs
    for name, mask, color in top_groups(dyn):
        if not mask.any():
            continue
        q25, q50, q75 = np.percentile(values[mask], [25, 50, 75], axis=0)  # (C,) each
        if len(x) > 1:
            fig.add_scatter(x=x, y=q75, mode="lines", line={"width": 0}, showlegend=False, hoverinfo="skip",
                            legendgroup=name)
            fig.add_scatter(x=x, y=q25, mode="lines", line={"width": 0}, fill="tonexty",
                            fillcolor=rgba(color, 0.2), name=f"{name} 25–75%", legendgroup=name, hoverinfo="skip")
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


def row_timeline(dyn: RowDynamics, row_ids, *, max_rows: int = 200, names=None) -> go.Figure:
    """Memorized (at least one copy) or not at every check, for chosen training rows.

    Cell (i, e) is coloured when c_i(e) > 0 and shows c_i(e); rows keep the given order
    (at most ``max_rows``). ``names``: each row's name for a reader (e.g. ``customer_id 1077``, the user's key;
    default its row_id).
    """
    ids = list(row_ids)[:max_rows]
    fig = new_figure("Memorization timeline of chosen rows", "Check (epoch)", "Training row",
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
        return add_note(fig, "Choose training rows to follow")
    pos = row_positions(dyn, ids)
    counts = dyn.counts[pos]  # (R, C)
    shown = [str(n) for n in names[:len(ids)]] if names is not None else [str(int(r)) for r in dyn.row_ids[pos]]
    seen: dict[str, int] = {}
    for i, n in enumerate(shown):       # a category axis needs one label per line (a key may repeat)
        seen[n] = seen.get(n, 0) + 1
        shown[i] = n if seen[n] == 1 else f"{n} #{seen[n]}"
    labels = [f"{n}{' (Top)' if t else ''}" for n, t in zip(shown, dyn.top[pos])]
    fig.add_heatmap(z=(counts > 0).astype(np.int8), x=check_labels(dyn), y=labels, zmin=0, zmax=1,
                    colorscale=[[0, "#eeeeee"], [0.5, "#eeeeee"], [0.5, TOP_COLOR], [1, TOP_COLOR]],
                    showscale=False, xgap=2, ygap=2, customdata=counts,
                    text=np.where(counts > 0, counts.astype(str), ""), texttemplate="%{text}",
                    hovertemplate=("%{y}" if names is not None else "row %{y}")
                    + ", epoch %{x}: %{customdata:,} copies<extra></extra>")
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_layout(height=max(300, 120 + 22 * len(ids)), plot_bgcolor="white")
    return fig


# ------------------------------------------------------------------ against the null
VERDICT_COLORS = {"holds": TOP_COLOR, "reversed": "#1f77b4", "not shown": "#7f7f7f", "undefined": "#bbbbbb"}
NULL_CLIP = 4.0


def null_position(observed, median, low, high, direction) -> np.ndarray:
    """Where each observed effect lies in its null distribution, on the paper's side:

    x = (o − m) / (q97.5 − m) when o ≥ m, else (o − m) / (m − q2.5), negated for statistics whose
    paper direction is "lower"; so the null's central 95 % interval is exactly [−1, 1] and
    x > 1 is beyond the null in the paper's direction. Clipped to ±4; NaN when undefined.
    """
    o, m, lo, hi = (np.asarray(v, dtype=np.float64) for v in (observed, median, low, high))
    with np.errstate(divide="ignore", invalid="ignore"):
        up, down = hi - m, m - lo
        x = np.where(o >= m, (o - m) / np.where(up > 0, up, np.nan), (o - m) / np.where(down > 0, down, np.nan))
        x = np.where((o == m), 0.0, x)
        x = np.where(np.isnan(x) & np.isfinite(o) & np.isfinite(m), np.sign(o - m) * np.inf, x)
    sign = np.where(np.asarray(direction) == "lower", -1.0, 1.0)
    return np.clip(sign * x, -NULL_CLIP, NULL_CLIP)


def null_findings_plot(findings) -> go.Figure:
    """Each Top vs Non-Top statistic beside its null (:func:`memviz.dynamics.nullmodel.compare_to_null`).

    ``findings``: its frame (name, label, circular, direction, observed, null_median,
    null_low, null_high, verdict). Each statistic is placed by :func:`null_position`: the
    grey band [−1, 1] is the central 95 % of what a warm-up with no row-level dynamics gives
    (constant per-row propensities), and a point right of it is beyond that null on the
    paper's side. The paper's definitions (groups and statistic from the same checks) are
    labelled as such; the non-circular ones are the reading to trust.
    """
    need = ("label", "circular", "direction", "observed", "null_median", "null_low", "null_high", "verdict")
    missing = [c for c in need if c not in findings.columns]
    if missing:
        raise BadTable(f"findings table is missing column(s) {', '.join(missing)}")
    f = findings.reset_index(drop=True)
    x = null_position(f["observed"], f["null_median"], f["null_low"], f["null_high"], f["direction"])
    names = [("paper's (circular): " if c else "non-circular: ") + str(lab) for lab, c in zip(f["label"], f["circular"])]
    fig = new_figure("Dynamics findings against a null with no row-level dynamics",
                  "Observed effect, in units of the null's spread<br>(the paper's direction to the right)", "Statistic",
                  "Each point is one Top vs Non-Top statistic placed within what fixed per-row copy rates give "
                  "(the grey band holds 95% of that null; an arrow at the edge lies further out), so only a point right "
                  "of the band is evidence of the "
                  "dynamics the paper describes, and the non-circular statistics are the ones to trust because "
                  "the paper's own definitions select the Top group from the very counts they test.",
                  height=max(320, 140 + 40 * len(f)))
    fig.add_shape(type="rect", x0=-1, x1=1, y0=0, y1=1, yref="paper", fillcolor=rgba("#7f7f7f", 0.18),
                  line={"width": 0}, layer="below")
    fig.add_vline(x=0, line_dash="dot", line_color="#7f7f7f")
    for verdict, color in VERDICT_COLORS.items():
        sel = (f["verdict"] == verdict).to_numpy()
        if not sel.any():
            continue
        custom = np.stack([f.loc[sel, c].to_numpy(dtype=float) for c in ("observed", "null_median", "null_low",
                                                                        "null_high")], axis=1)
        xs = x[sel]
        # a point beyond the axis is drawn at its edge as an arrow pointing further out (not as a value of ±4)
        capped = np.isfinite(xs) & (np.abs(xs) >= NULL_CLIP)
        symbols = np.where(capped, np.where(xs > 0, "triangle-right", "triangle-left"), "circle")
        fig.add_scatter(x=np.where(np.isfinite(xs), xs, np.nan), y=np.asarray(names, dtype=object)[sel],
                        mode="markers", marker={"color": color, "size": np.where(capped, 15, 12).tolist(),
                                                "symbol": symbols.tolist()},
                        name=f"{verdict}", customdata=custom,
                        hovertemplate="%{y}<br>observed effect %{customdata[0]:.4g}; null median %{customdata[1]:.4g} "
                                      "(95%: %{customdata[2]:.4g} to %{customdata[3]:.4g})<extra>%{fullData.name}</extra>")
    fig.update_xaxes(range=[-NULL_CLIP - 0.3, NULL_CLIP + 0.3], zeroline=False,
                     tickvals=[-NULL_CLIP, -2, -1, 0, 1, 2, NULL_CLIP],
                     ticktext=[f"≤ −{NULL_CLIP:g}", "−2", "−1", "0", "1", "2", f"≥ {NULL_CLIP:g}"])
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=names, autorange="reversed")
    if len(f) == 0:
        add_note(fig, "No statistic")
    return fig
