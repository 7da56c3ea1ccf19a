"""Figures of the Tune & prune screen: early identification, class balance, column shifts."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from memviz.errors import BadOption, BadTable
from memviz.evaluate.synthetic import ks_statistic
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series
from memviz.tables.redact import category_labels
from memviz.text import pct, percent, plain, plain_all
from memviz.viz.style import (
    AFTER_COLOR,
    BEFORE_COLOR,
    REMOVED_COLOR,
    REST_COLOR,
    TOP_COLOR,
    add_note,
    new_figure,
    rgba,
)


# --------------------------------------------------------------------- tune & prune screen
def early_identification_plot(curve: pd.DataFrame) -> go.Figure:
    """Precision, recall and Jaccard of the DynamicCut selection at T vs the final Top group.

    Input: :func:`memviz.dynamics.dynamiccut.early_identification_curve`. With S the selected rows
    and Top the final Top group: precision = |S ∩ Top| / |S|, recall = |S ∩ Top| / |Top|,
    Jaccard = |S ∩ Top| / |S ∪ Top|; dashed lines are a random selection's expectations
    |Top| / N (precision) and |S| / N (recall).
    """
    need = ("T", "precision", "recall", "jaccard", "random_precision", "random_recall")
    missing = [c for c in need if c not in curve.columns]
    if missing:
        raise BadTable(f"early-identification table is missing column(s) {', '.join(missing)}")
    cv = curve.sort_values("T")
    params = ([f"p = {percent(cv['p'].iloc[0], 0, unit='%')}"] if "p" in cv and len(cv) else []) + \
        ([f"k = {int(cv['k'].iloc[0])}"] if "k" in cv and len(cv) else [])
    fig = new_figure("Early identification of the final Top group" + (f" ({', '.join(params)})" if params else ""),
                  "Warm-up window T (epochs)", "Overlap with the final Top group (%)",
                  "Precision is the share of rows DynamicCut would remove after T epochs that end up in the final "
                  "Top group, recall the share of that group they cover; solid lines well above their dashed random "
                  "levels at small T mean a short warm-up is enough, lines near them mean the ranking is no better "
                  "than chance.")
    # precision is drawn wide and pale under the others: when p equals the Top group's share,
    # |S| = |Top| and recall equals precision, so the two lines coincide and both must stay visible
    same = len(cv) > 0 and np.allclose(cv["precision"], cv["recall"])
    styles = (("precision", "precision (wide line)", {"color": rgba(TOP_COLOR, 0.45), "width": 9}, "circle"),
              ("recall", "recall" + (" (equal to precision here)" if same else ""), {"color": REST_COLOR, "width": 2},
               "diamond"),
              ("jaccard", "Jaccard", {"color": "#2ca02c", "width": 2}, "square"))
    for col, name, line, symbol in styles:
        fig.add_scatter(x=cv["T"], y=cv[col], mode="lines+markers", name=name, line=line,
                        marker={"symbol": symbol, "size": 7, "color": line["color"]},
                        hovertemplate=f"T = %{{x:,}}: {col} %{{y:.1%}}<extra></extra>")
    for col, name, color in (("random_precision", "random precision", TOP_COLOR),
                             ("random_recall", "random recall", REST_COLOR)):
        fig.add_scatter(x=cv["T"], y=cv[col], mode="lines", name=name,
                        line={"color": color, "dash": "dash", "width": 1},
                        hovertemplate=f"{name} %{{y:.1%}}<extra></extra>")
    if len(cv) == 0:
        add_note(fig, "No warm-up window to evaluate")
    elif len(cv) == 1:  # the selection and the final Top group come from the same single check
        add_note(fig, "One check only: the selection and the final Top group come from the same check, "
                   "so there is nothing early to identify yet")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    ticks = cv["T"].to_numpy()
    if 0 < len(ticks) <= 15:  # the check epochs themselves: no "epoch 1.5" between two checks
        fig.update_xaxes(tickmode="array", tickvals=ticks, ticktext=[f"{int(t):,}" for t in ticks])
    else:
        fig.update_xaxes(tickformat=",d")
    return fig


def _removed_mask(train: Table, removed_ids) -> np.ndarray:
    ids = np.asarray(list(removed_ids) if not isinstance(removed_ids, np.ndarray) else removed_ids, dtype=np.int64)
    index = train.data.index
    unknown = ~np.isin(ids, index.to_numpy())
    if unknown.any():
        raise BadOption(f"removed row_id {ids[unknown][0]} is not in the training table")
    return index.isin(ids)  # (N,)


def _shares(values: np.ndarray, cats: np.ndarray) -> np.ndarray:
    if len(values) == 0:
        return np.zeros(len(cats))
    codes = pd.Categorical(values, categories=cats).codes
    return np.bincount(codes[codes >= 0], minlength=len(cats)) / len(values)


def class_balance_plot(train: Table, removed_ids, *, redact_salt: str | None = None) -> go.Figure:
    """Class shares of the target before pruning, after it, and among the removed rows.

    share_before(k) = #{i : y_i = k} / N; share_after(k) over the kept rows; classes are
    compared by their canonical value (``1`` = ``1.0``). A regression target is shown with
    :func:`column_shift_plot`. ``redact_salt``: show the classes as keyed hashes
    (:func:`memviz.tables.redact.category_labels`) instead of their values (a redacted report).
    """
    schema = train.schema
    if schema.target is not None and not schema.target_is_categorical:
        return column_shift_plot(train, removed_ids, schema.target, redacted=redact_salt is not None)
    removed = _removed_mask(train, removed_ids)
    n_rm = int(removed.sum())
    fig = new_figure(f"Class balance before and after pruning ({n_rm:,} of {len(train):,} rows removed)",
                  "Class", "Rows (%)",
                  "Compare each class's share before (grey) and after (blue) pruning; bars of equal height are good, "
                  "a class that shrinks noticeably means pruning removed mostly that class and the retrained model "
                  "may under-represent it.", barmode="group")
    if schema.target is None:
        return add_note(fig, "The table has no target column")
    y = canonical_series(train.data[schema.target])  # (N,)
    cats = pd.Series(y).value_counts().index.to_numpy()
    if redact_salt is not None:
        lab = category_labels(cats, schema.target, salt=redact_salt)
        shown = [lab[c] for c in cats]
    else:
        shown = plain_all(c.replace("\x00<missing>", "(missing)") for c in cats.astype(str))
    for name, vals, color in (("before (all rows)", y, BEFORE_COLOR), ("after (kept rows)", y[~removed], AFTER_COLOR),
                              ("removed rows", y[removed], REMOVED_COLOR)):
        sh = _shares(vals, cats)
        fig.add_bar(x=shown, y=sh, name=f"{name}, n={len(vals):,}", marker_color=color,
                    customdata=np.round(sh * len(vals)).astype(np.int64),
                    hovertemplate="%{x}: %{y:.2%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
    fig.update_xaxes(type="category", title_text=f"Class of {plain(schema.target)}"
                     + (" (hashed: redacted report)" if redact_salt is not None else ""))
    fig.update_yaxes(tickformat=".0%")
    return fig


def column_shift_plot(train: Table, removed_ids, column: str, *, bins: int = 30,
                      max_categories: int = 20, redacted: bool = False) -> go.Figure:
    """A column's distribution before pruning, after it, and among the removed rows.

    Numerical: shares per bin of ``bins`` equal-width bins over the whole column (one bar
    per value when the column holds at most ``bins`` distinct integers); the title gives
    the KS distance sup_x |F_before(x) - F_after(x)|. Categorical: shares per category
    (the ``max_categories`` most frequent, the rest as "other"); the title gives the total
    variation distance ½ Σ_k |P_before(k) - P_after(k)|. Missing values are left out of
    numerical bins and form their own category. ``redacted``: no bin or category value in
    the labels (bins are numbered, categories hashed), for a redacted report.
    """
    schema = train.schema
    if column not in schema.columns:
        raise BadOption(f"column {column!r}: not a column of the training table")
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
        if redacted:
            centres, bar_width = np.arange(len(edges) - 1, dtype=float), 0.8
            labels = [f"bin {j + 1}" for j in range(len(edges) - 1)]
        dist = ks_statistic(v[ok], v[ok & ~removed])
        fig = new_figure(f"{plain(column)}: before and after pruning (KS distance {pct(dist)}, {n_rm:,} rows removed)",
                      f"{plain(column)} ({'bins, values hidden' if redacted else 'units of the data'})", "Rows (%)",
                      text, barmode="overlay")
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
        fig.update_xaxes(tickformat=",", showticklabels=not redacted)
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
        fig = new_figure(f"{plain(column)}: before and after pruning (TV distance {pct(dist)}, {n_rm:,} rows removed)",
                      f"{plain(column)} (category)", "Rows (%)", text, barmode="group")
        if redacted:
            lab = category_labels([c for c in cats if c != "(other)"], column)
            shown = [lab.get(c, "(other)") for c in cats]
        else:
            shown = plain_all(c.replace("\x00<missing>", "(missing)") for c in cats.astype(str))
        for name, vals, color in (("before (all rows)", y, BEFORE_COLOR),
                                  ("after (kept rows)", y[~removed], AFTER_COLOR),
                                  ("removed rows", y[removed], REMOVED_COLOR)):
            sh = _shares(vals, cats)
            fig.add_bar(x=shown, y=sh,
                        name=f"{name}, n={len(vals):,}", marker_color=color,
                        customdata=np.round(sh * len(vals)).astype(np.int64),
                        hovertemplate="%{x}: %{y:.2%} (%{customdata:,} rows)<extra>%{fullData.name}</extra>")
        fig.update_xaxes(type="category")
    fig.update_yaxes(tickformat=".0%")
    return fig
