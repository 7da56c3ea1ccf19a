"""Figures of the Compare screen: methods side by side, privacy vs utility, breakdowns, transfer; the
three-way view in words (privacy gain, quality change and cost per method:
:func:`memviz.compare.threeway.three_way`)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from memviz.compare.methods import method_label
from memviz.compare.threeway import three_way
from memviz.errors import BadTable
from memviz.metrics import METRICS
from memviz.text import MISSING, number, pct, percent, plain, plain_all
from memviz.viz.style import (
    PALETTE,
    REMOVED_COLOR,
    add_note,
    method_order,
    model_label,
    model_order,
    name_key,
    new_figure,
    pct_axis,
    rgba,
)

if TYPE_CHECKING:
    import plotly.graph_objects as go  # imported where a figure is made: the audit's report needs no plotly

FLOOR_COLOR = "#7f7f7f"


def seeds_phrase(n: int) -> str:
    """'over 3 seeds' or '1 seed: no spread' (a non-breaking space keeps the number with its word
    when a long title wraps)."""
    return "1\u00a0seed: no spread, indicative" if n == 1 else f"mean ± sd over {n}\u00a0seeds"


def floor_band(results: pd.DataFrame) -> tuple[float, float, float] | None:
    """(floor, low, high) of the comparison's reference rows from the results' floor columns
    (the same for every cell measured against the original training table), or None when the
    results carry no floor (older comparisons)."""
    need = ("floor", "floor_low", "floor_high")
    if not all(c in results.columns for c in need):
        return None
    f = results[list(need)].apply(pd.to_numeric, errors="coerce").dropna()
    if f.empty:
        return None
    return float(f["floor"].iloc[0]), float(f["floor_low"].iloc[0]), float(f["floor_high"].iloc[0])


def _add_floor(fig: go.Figure, band, axis: str, span: float | None = None) -> None:
    """The floor as a grey band (its 95 % interval) with a dashed line, on the x or y axis.

    On the x axis the label is written beside the line on the side with room: to its left when
    the line lies in the right half of ``[0, span]`` (the axis' end), so it is never cut at the edge."""
    f, lo, hi = band
    text = f"floor: real rows never seen, {pct(f)}"
    if axis == "y":
        fig.add_hrect(y0=lo, y1=hi, fillcolor=rgba(FLOOR_COLOR, 0.18), line_width=0, layer="below")
        fig.add_hline(y=f, line_dash="dot", line_color=FLOOR_COLOR, annotation_text=text,
                      annotation_position="bottom right")
    else:
        fig.add_vrect(x0=lo, x1=hi, fillcolor=rgba(FLOOR_COLOR, 0.18), line_width=0, layer="below")
        side = "left" if span and f > span / 2 else "right"
        fig.add_vline(x=f, line_dash="dot", line_color=FLOOR_COLOR, annotation_text=text,
                      annotation_position=f"top {side}")


# ------------------------------------------------------------------------ compare screen
def fractions(values: pd.Series) -> pd.Series:
    """Results metrics as floats. They are fractions by contract (``results.csv`` of
    :mod:`memviz.compare.results`); no guessing of percent scales, which would misread a
    relative reduction of -3,420 % (-34.2) as -34 %."""
    return pd.to_numeric(values, errors="coerce").astype(float)


def _check_results(results: pd.DataFrame, *cols: str) -> None:
    if not isinstance(results, pd.DataFrame):
        raise BadTable(f"results must be a pandas DataFrame, got {type(results).__name__}")
    missing = [c for c in ("method", "model", *cols) if c not in results.columns]
    if missing:
        raise BadTable(f"results table is missing column(s) {', '.join(missing)}")


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
    label, good, pct = (m.name, m.better, m.percent) if m else \
        (SHOWN_COLUMNS.get(metric, metric), "", metric in SHOWN_COLUMNS and metric not in COUNTS)
    ref = (m.reference or m.target) if m else None
    fmt = ".2%" if pct else ",.4g"
    agg = _aggregate(results, metric)
    seeds = int(agg["count"].max()) if len(agg) else 0
    direction = f"{good} is better" if good else ""
    band = floor_band(results) if metric == "mem_ratio" else None
    fig = new_figure(f"{plain(label)} by method and generator ({seeds_phrase(seeds)})",
                  "Method", f"{plain(label)} (%)" if pct else plain(label),
                  f"Each bar is one method on one generator{f' ({direction})' if direction else ''}; compare every "
                  "method with the baseline bar of the same colour, read error bars that overlap as no clear "
                  "difference" + (", and bars inside the grey floor band as no more than real rows the model "
                                  "never saw." if band else "."),
                  barmode="group")
    methods = method_order(agg["method"].unique())
    for i, model in enumerate(model_order(agg["model"].unique())):
        sub = agg[agg["model"] == model].set_index("method").reindex(methods)
        fig.add_bar(x=plain_all(method_label(m) for m in methods), y=sub["mean"], name=plain(model_label(model)),
                    marker_color=PALETTE[i % len(PALETTE)],
                    error_y={"type": "data", "array": sub["std"].to_numpy(), "visible": seeds > 1},
                    customdata=np.stack([sub["std"].to_numpy(), sub["count"].fillna(0).to_numpy()], axis=1),
                    hovertemplate=f"%{{x}}: %{{y:{fmt}}} ± %{{customdata[0]:{fmt}}} (%{{customdata[1]}} seeds)"
                                  "<extra>%{fullData.name}</extra>")
    if isinstance(ref, str) and ref in results.columns and results[ref].notna().any():
        fig.add_hline(y=float(fractions(results[ref]).mean()), line_dash="dash", line_color="#555",
                      annotation_text="real training data", annotation_position="top left")
    elif isinstance(ref, float):
        fig.add_hline(y=ref, line_dash="dash", line_color="#555", annotation_text=f"ideal {percent(ref, 0, unit='%')}",
                      annotation_position="top left")
    if band is not None:
        _add_floor(fig, band, "y")
    if agg.empty or agg["mean"].isna().all():
        add_note(fig, f"No {plain(label)} value in the results")
    fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".2~%" if pct else ",.3~g", rangemode="tozero")
    return fig


def privacy_utility_plot(results: pd.DataFrame, utility: str = "mle") -> go.Figure:
    """Memorization ratio (x) against a utility metric (y), one point per method x model.

    Points are means over seeds with ± one standard deviation bars; ``utility`` is
    ``mle`` (ROC AUC on the real test split) or ``shape`` (or ``trend``). Both axes start
    at 0 (a share compared across methods is shown from zero, so a 1-point gap looks like
    one), the utility axis ends at the metric's maximum, and the floor (fresh real rows
    flagged) is a grey band when the results carry it. Marker shapes name the generators
    only when there are several.
    """
    _check_results(results, "mem_ratio", utility)
    ux = _aggregate(results, "mem_ratio")
    uy = _aggregate(results, utility).rename(columns={"mean": "ymean", "std": "ystd", "count": "ycount"})
    agg = ux.merge(uy, on=["method", "model"])
    m = METRICS.get(utility)
    ulabel = plain(m.name if m else utility)
    short = ulabel.split(" (")[0]
    n_seeds = int(agg["count"].max()) if len(agg) else 0
    models = model_order(agg["model"].unique())
    band = floor_band(results)
    fig = new_figure(f"Privacy–utility trade-off: memorization vs {short} ({seeds_phrase(n_seeds)})",
                  "Memorization ratio (%, lower is more private)", f"{ulabel} (%)",
                  "Up and to the left is best (fewer flagged rows, utility kept), both axes start at zero so "
                  "distances are true to scale, and a method that moves left of the baseline without dropping is a "
                  "privacy gain only if the move is larger than its error bars" +
                  (" and it leaves the grey floor band." if band else "."))
    symbols = ("circle", "square", "diamond", "triangle-up", "x", "star")
    for i, method in enumerate(method_order(agg["method"].unique())):
        sub = agg[agg["method"] == method]
        sym = [symbols[models.index(mo) % len(symbols)] for mo in sub["model"]]
        fig.add_scatter(x=sub["mean"], y=sub["ymean"], mode="markers", name=plain(method_label(method)),
                        marker={"color": PALETTE[i % len(PALETTE)], "size": 13, "symbol": sym,
                                "line": {"width": 2 if name_key(method) == "baseline" else 0, "color": "#000"}},
                        error_x={"type": "data", "array": sub["std"].to_numpy(), "thickness": 1,
                                 "visible": n_seeds > 1},
                        error_y={"type": "data", "array": sub["ystd"].to_numpy(), "thickness": 1,
                                 "visible": n_seeds > 1},
                        customdata=np.array(plain_all(model_label(mo) for mo in sub["model"]), dtype=object),
                        hovertemplate="%{customdata}: memorization ratio %{x:.1%}, " + short +
                                      " %{y:.1%}<extra>%{fullData.name}</extra>")
    if len(models) > 1:  # a legend of the marker shapes, drawn in the shapes of the plot
        for j, mo in enumerate(models):
            fig.add_scatter(x=[None], y=[None], mode="markers", name=f"{plain(model_label(mo))} (marker shape)",
                            marker={"symbol": symbols[j % len(symbols)], "color": "rgba(0,0,0,0)", "size": 10,
                                    "line": {"width": 1.5, "color": "#333"}})
    if agg.empty or agg["ymean"].isna().all():
        add_note(fig, f"No {ulabel} value in the results")
    xs = np.concatenate([(agg["mean"] + agg["std"]).to_numpy(float), [band[2]] if band else []])
    xs = xs[np.isfinite(xs)]
    x_end = float(xs.max()) if xs.size else 1.0
    if band is not None:
        _add_floor(fig, band, "x", span=x_end)
    pct_axis(fig, "x", 0.0, x_end)
    top = m.max_value if m is not None and m.max_value is not None else None
    if top is None:
        ys = (agg["ymean"] + agg["ystd"]).to_numpy(float)
        top = float(np.nanmax(ys)) if np.isfinite(ys).any() else 1.0
    pct_axis(fig, "y", 0.0, top, pad=0.02)
    return fig


def shape_breakdown_plot(column_shapes) -> go.Figure:
    """Per-column Shape score (KS / TV complement) for each method, as a heatmap.

    ``column_shapes``: a DataFrame with columns ``method, column, score`` (rows for
    several models or seeds are averaged), or a mapping method -> DataFrame with
    ``column, score`` (e.g. :attr:`memviz.evaluate.synthetic.QualityResult.column_shapes`).
    """
    if isinstance(column_shapes, Mapping):
        parts = [pd.DataFrame({"method": m, "column": d["column"], "score": d["score"]})
                 for m, d in column_shapes.items()]
        df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "column", "score"])
    elif isinstance(column_shapes, pd.DataFrame):
        df = column_shapes
    else:
        raise BadTable("column_shapes must be a DataFrame or a dict of DataFrames, "
                          f"got {type(column_shapes).__name__}")
    missing = [c for c in ("method", "column", "score") if c not in df.columns]
    if missing:
        raise BadTable(f"column shapes table is missing column(s) {', '.join(missing)}")
    df = df.assign(score=fractions(df["score"]))
    piv = df.pivot_table(index="column", columns="method", values="score", aggfunc="mean", sort=False)
    methods = method_order(list(piv.columns))
    piv = piv[methods] if methods else piv
    base = next((m for m in methods if name_key(m) == "baseline"), None)
    diff = piv.sub(piv[base], axis=0) if base is not None else piv * np.nan
    fig = new_figure("Column shapes per method (100% = same distribution as the training data)", "Method",
                  "Column",
                  "Each cell is how closely a method reproduces one column's distribution (KS or TV complement), "
                  "on a fixed colour scale from 0 % (red) to 100 % (green), and a cell paler than the baseline in "
                  "its row means that method damaged that column.")
    if piv.size:
        z = piv.to_numpy(dtype=float)
        shape = METRICS["shape"]
        fig.add_heatmap(z=z, x=plain_all(method_label(m) for m in methods), y=plain_all(piv.index),
                        colorscale="RdYlGn", zmin=shape.min_value, zmax=shape.max_value,
                        text=np.vectorize(lambda v: pct(v))(z), texttemplate="%{text}",
                        customdata=diff.to_numpy(dtype=float), colorbar={"title": "score", "tickformat": ".0%"},
                        hovertemplate="%{y} · %{x}: %{z:.1%} (vs baseline %{customdata:+.1%})<extra></extra>")
        fig.update_layout(height=max(320, 120 + 24 * len(piv)))
    else:
        add_note(fig, "No column shapes to show")
    fig.update_xaxes(type="category", side="top")
    fig.update_yaxes(type="category", autorange="reversed")
    return fig


def dcr_plot(dcr_by_method: Mapping[str, np.ndarray], *, bins: int = 60, clip_quantile: float = 0.995,
             reference: np.ndarray | None = None) -> go.Figure:
    """Distance-to-closest-record distributions, one line per method, medians dashed.

    DCR(g) = min over training rows x of d(g, x) (standardized distance, see
    :func:`memviz.evaluate.synthetic.dcr_share`). Shares per bin over ``bins`` shared equal-width bins
    from 0 to the ``clip_quantile`` quantile of all values (farther values go to the last
    bin); the share of exact copies (DCR = 0) is given in the legend. ``reference``: the hold-out
    reference, min over the real test rows t of d(g, t) for the baseline's generated rows, drawn
    grey and dotted: a method whose line sits left of it is closer to the training rows than to
    real rows it never saw.
    """
    if not isinstance(dcr_by_method, Mapping):
        raise BadTable(f"dcr_by_method must be a dict method -> distances, got {type(dcr_by_method).__name__}")
    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in dcr_by_method.items()}
    arrays = {k: v[np.isfinite(v)] for k, v in arrays.items()}
    ref = None if reference is None else np.asarray(reference, dtype=np.float64).ravel()
    ref = None if ref is None else ref[np.isfinite(ref)]
    allv = np.concatenate([v for v in arrays.values()] + ([ref] if ref is not None else [])) if arrays else np.zeros(0)
    fig = new_figure("Distance to the closest training record (median dashed)",
                  "Distance to the closest training row (standardized)", "Generated rows (%)",
                  "Mass piled up near 0 means generated rows sit on top of training rows, and the legend's "
                  "\"identical\" share counts generated rows equal to a training row, a far stricter test than "
                  "\"memorized\" (closer to one training row than to the others), so a model can have many "
                  "memorized rows and no identical one.")
    if allv.size == 0:
        return add_note(fig, "No distances to show")
    hi = float(np.quantile(allv, clip_quantile)) or float(allv.max()) or 1.0
    edges = np.linspace(0.0, hi, bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    for i, method in enumerate(method_order(arrays)):
        v = arrays[method]
        if v.size == 0:
            continue
        color = PALETTE[i % len(PALETTE)]
        counts = np.histogram(np.minimum(v, hi), bins=edges)[0]
        med, zero = float(np.median(v)), float(np.mean(v == 0))
        name = f"{plain(method_label(method))} (median {med:.3g}, identical to a training row {pct(zero)})"
        fig.add_scatter(x=centres, y=counts / v.size, mode="lines", line={"color": color, "shape": "hvh"}, name=name,
                        legendgroup=plain(method), customdata=counts,
                        hovertemplate="distance %{x:.3g}: %{y:.2%} (%{customdata:,} rows)"
                                      "<extra>%{fullData.name}</extra>")
        fig.add_vline(x=med, line_dash="dash", line_color=color)
    if ref is not None and ref.size:
        counts = np.histogram(np.minimum(ref, hi), bins=edges)[0]
        fig.add_scatter(x=centres, y=counts / ref.size, mode="lines", name=f"hold-out reference: distance to the "
                        f"closest real test row (median {float(np.median(ref)):.3g})",
                        line={"color": FLOOR_COLOR, "dash": "dot", "width": 3, "shape": "hvh"}, customdata=counts,
                        hovertemplate="distance %{x:.3g}: %{y:.2%} (%{customdata:,} rows)<extra>hold-out</extra>")
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
    wanted = {name_key(m) for m in methods}
    sub = results[[name_key(m) in wanted for m in results["method"]]]
    agg = _aggregate(sub, "relative_reduction")
    fig = new_figure("Does the TabDDPM ranking transfer? Relative reduction per generator",
                  "Generator", "Relative reduction of the mem ratio vs baseline (%)",
                  "DynamicCut bars above the random-pruning bars for a generator mean the rows ranked by the TabDDPM "
                  "warm-up are also the ones that generator copies (the ranking transfers); bars at the random level "
                  "or below mean it does not.", barmode="group")
    models = model_order(agg["model"].unique())
    for i, method in enumerate(method_order(agg["method"].unique())):
        s = agg[agg["method"] == method].set_index("model").reindex(models)
        color = REMOVED_COLOR if name_key(method) == "dynamiccut" else PALETTE[(i + 2) % len(PALETTE)]
        fig.add_bar(x=plain_all(model_label(m) for m in models), y=s["mean"], name=plain(method_label(method)),
                    marker_color=color, error_y={"type": "data", "array": s["std"].to_numpy(),
                                                 "visible": bool((s["count"] > 1).any())},
                    customdata=s["std"].to_numpy(),
                    hovertemplate="%{x}: %{y:.1%} ± %{customdata:.1%}<extra>%{fullData.name}</extra>")
    present = {name_key(m) for m in agg["method"]}
    if agg.empty:
        add_note(fig, "No DynamicCut or random-pruning result to compare")
    elif len(present) < len(wanted):   # one arm alone answers nothing: the question is DynamicCut against random
        missing = ", ".join(method_label(m) for m in methods if name_key(m) not in present)
        add_note(fig, f"No {missing} arm in these results: the transfer cannot be read without it")
    fig.add_hline(y=0, line_color="#333", line_width=1)
    fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".2~%", rangemode="tozero")
    return fig


# ------------------------------------------------------------------------ results in words
#: the results columns a reader sees, in order, named in words (raw names appear only in downloads)
SHOWN_COLUMNS = {
    "mem_ratio": "Memorization ratio",
    "floor": "Floor: fresh real rows flagged",
    "excess": "Excess over the floor",
    "relative_reduction": "Relative reduction vs baseline",
    "mem_ratio_kept": "Memorization vs the kept rows",
    "mem_ratio_pruned": "Memorization vs the kept rows",
    "floor_kept": "Floor vs the kept rows",
    "control_kept": "Control: unpruned model vs the kept rows",
    "n_flagged_removed": "Flagged rows whose nearest row was removed",
    "shape": "Shape (column distributions)",
    "trend": "Trend (column pairs)",
    "mle": "MLE (ROC AUC on real test rows)",
    "mle_real": "MLE of the real training data",
    "dcr_share": "DCR share (ideal 50 %)",
}
#: columns in percentage points (differences of shares), not shares
POINTS = ("excess",)
COUNTS = ("n_flagged_removed",)


def _cell(values: np.ndarray, col: str, low: np.ndarray | None, high: np.ndarray | None) -> str:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return "–"
    if col in COUNTS:
        return f"{v.mean():,.0f}" + (f" ± {v.std(ddof=1):,.0f}" if v.size > 1 else "")
    sign = "+" if col in POINTS or col == "relative_reduction" else ""
    unit = " points" if col in POINTS else " %"
    head = f"{100 * v.mean():{sign}.1f}{unit}"
    if v.size > 1:
        return head + f" ± {100 * v.std(ddof=1):.1f}"
    if low is not None and high is not None and np.isfinite(low).all() and np.isfinite(high).all() and low.size:
        return head + f" ({100 * low[0]:{sign}.1f} to {100 * high[0]:{sign}.1f})"
    return head


def results_display(results: pd.DataFrame) -> pd.DataFrame:
    """A comparison's finished cells in words: one row per method × generator, named columns
    (:data:`SHOWN_COLUMNS`, those present), mean ± standard deviation over seeds; with one seed
    the floor and the excess show their 95 % interval instead. Old results without the floor
    columns simply lack them."""
    ok = results[results["status"] == "ok"] if "status" in results.columns else results
    cols = [c for c in SHOWN_COLUMNS if c in ok.columns and ok[c].notna().any()]
    if "mem_ratio_kept" in cols and "mem_ratio_pruned" in cols:
        cols.remove("mem_ratio_pruned")
    rows = []
    for model in model_order(ok["model"].unique()):
        for method in method_order(ok.loc[ok["model"] == model, "method"].unique()):
            g = ok[(ok["model"] == model) & (ok["method"] == method)]
            row = {"Method": method_label(method), "Generator": model_label(model), "Seeds": int(g["seed"].nunique())}
            for c in cols:
                if c == "relative_reduction" and name_key(method) == "baseline":
                    row[SHOWN_COLUMNS[c]] = "reference"
                    continue
                lo = f"{c}_low" if f"{c}_low" in g.columns else None
                hi = f"{c}_high" if f"{c}_high" in g.columns else None
                row[SHOWN_COLUMNS[c]] = _cell(fractions(g[c]).to_numpy(), c,
                                              fractions(g[lo]).to_numpy() if lo else None,
                                              fractions(g[hi]).to_numpy() if hi else None)
            rows.append(row)
    return pd.DataFrame(rows, columns=["Method", "Generator", "Seeds", *[SHOWN_COLUMNS[c] for c in cols]])


# ------------------------------------------------------------------ the three-way view
THREE_WAY_NOTE = (
    "Each method against the baseline of the same generator and seed, mean over seeds with the 95 % interval over "
    "seeds in brackets (none with one seed). Privacy gain: how much lower the memorization ratio is, as a share of "
    "the baseline's, and how many points of excess over the floor it removes (positive = more private). Quality "
    "change: Shape, Trend (every column pair) and MLE minus the baseline's, in points (negative = quality lost). "
    "Cost: wall time of the cell against the baseline's, the privacy budget (ε, δ) spent (DP-SGD only: a formal "
    "guarantee for the whole pipeline, the column transforms' statistics and the network, by basic sequential "
    "composition of the two parts; it assumes public the schema, the number of training rows and the bounds and "
    "categories given as public; the other methods have none), and the training rows left out times the epochs "
    "they were left out of (pruning).")
THREE_WAY_HEADERS = {
    "model": "Generator", "method": "Method", "family": "Family", "n_seeds": "Seeds",
    "gain_rel": "Privacy gain: mem ratio reduction", "gain_points": "Privacy gain: excess removed (points)",
    "shape_change": "Shape change (points)", "trend_change": "Trend change (points)",
    "mle_change": "MLE change (points)", "time_ratio": "Wall time (x baseline)", "epsilon_spent": "(ε, δ) spent",
    "row_epochs_left_out": "Row-epochs left out"}


def three_way_display(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`memviz.compare.threeway.three_way` as display strings with readable headers (empty when
    there is no baseline)."""
    signed = lambda v: percent(v, signed=True, unit="")                   # noqa: E731  points, or % of a share
    rows = []
    for _, r in three_way(results).iterrows():
        rows.append({
            "model": model_label(r["model"]), "method": method_label(r["method"]), "family": r["family"],
            "n_seeds": str(int(r["n_seeds"])),
            "gain_rel": _interval_text(r, "gain_rel", lambda v: percent(v, signed=True, unit=" %"), signed),
            **{c: _interval_text(r, c, signed, signed)
               for c in ("gain_points", "shape_change", "trend_change", "mle_change")},
            "time_ratio": _interval_text(r, "time_ratio", lambda v: f"{number(v, 2)}x", lambda v: number(v, 2)),
            "epsilon_spent": (f"ε {number(r['epsilon_spent'], 2)}, δ {r['delta_spent']:.2g}"
                              if np.isfinite(r["epsilon_spent"]) and np.isfinite(r.get("delta_spent", np.nan))
                              else number(r["epsilon_spent"], 2) if np.isfinite(r["epsilon_spent"]) else "none"),
            "row_epochs_left_out": (f"{r['row_epochs_left_out']:,.0f}" if np.isfinite(r["row_epochs_left_out"])
                                    else MISSING),
        })
    return pd.DataFrame(rows, columns=list(THREE_WAY_HEADERS)).rename(columns=THREE_WAY_HEADERS)


def _interval_text(r, name: str, fmt, fmt_bound) -> str:
    """``mean (low, high)`` of figure ``name`` of a three-way row (the mean alone without bounds)."""
    m, lo, hi = r[name], r[f"{name}_low"], r[f"{name}_high"]
    if not np.isfinite(m):
        return MISSING
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return fmt(m)
    return f"{fmt(m)} ({fmt_bound(lo)}, {fmt_bound(hi)})"


def by_method(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its Method and Generator columns as the row headers ("DynamicCut · TabDDPM"), which the
    report's scrolling tables keep in view while the other columns scroll."""
    if not {"Method", "Generator"} <= set(table.columns):
        return table
    out = table.drop(columns=["Method", "Generator"])
    out.index = pd.Index([f"{m} · {g}" for m, g in zip(table["Method"], table["Generator"])],
                         name="Method · generator")
    return out


def three_way_table(results: pd.DataFrame) -> pd.DataFrame | None:
    """The report's privacy, quality and cost against the baseline (:func:`three_way_display`), each row headed
    by its method and generator (:func:`by_method`); None when the results have no baseline to pair with."""
    if not {"method", "model", "seed"} <= set(results.columns):
        return None
    three = three_way_display(results)
    if not len(three):
        return None
    return by_method(three)             # the method and generator head each row, in view while the rest scrolls
