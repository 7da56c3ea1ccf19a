"""Figures of the Compare screen: methods side by side, privacy vs utility, breakdowns, transfer."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..errors import MemvizError
from ..metrics import METRICS
from .style import (PALETTE, REMOVED_COLOR, _figure, _key, _method_sort, _model_sort, _note, _pct,
                    method_label, model_label)


# ------------------------------------------------------------------------ compare screen
def fractions(values: pd.Series) -> pd.Series:
    """Results metrics as floats. They are fractions by contract (``results.csv`` of
    :mod:`memviz.compare.results`); no guessing of percent scales, which would misread a
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
    df["value"] = fractions(results[metric])
    g = df.groupby(["method", "model"], sort=False)["value"].agg(["mean", "std", "count"]).reset_index()
    return g.fillna({"std": 0.0})


def comparison_plot(results: pd.DataFrame, metric: str = "mem_ratio") -> go.Figure:
    """Bars per method, one colour per model: mean over seeds ± one standard deviation.

    ``metric`` is a column of the results table (declared in :data:`memviz.metrics.METRICS`): e.g. ``mem_ratio``,
    ``relative_reduction`` = (m_baseline - m_method) / m_baseline, ``shape``, ``trend``,
    ``mle``, ``dcr_share``. MLE shows the real-data reference (``mle_real``) as a dashed
    line, DCR share the 50 % ideal. Other numeric columns are shown in their own units.
    """
    _check_results(results, metric)
    m = METRICS.get(metric)
    label, good, pct = (m.name, m.better, m.percent) if m else (metric, "", False)
    ref = (m.reference or m.target) if m else None
    fmt = ".2%" if pct else ",.4g"
    agg = _aggregate(results, metric)
    seeds = int(agg["count"].max()) if len(agg) else 0
    direction = f"{good} is better" if good else ""
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
    ulabel = METRICS[utility].name if utility in METRICS else utility
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
