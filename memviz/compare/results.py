"""The results table of a comparison: one row per cell, summaries over seeds.

Relative reduction (per model and seed, against the baseline cell)::

    relative_reduction = (mem_ratio(baseline) − mem_ratio(method)) / mem_ratio(baseline)

The floor, the excess and the pruning cells' figures against the kept rows (with the
baseline's control) are defined in :mod:`memviz.compare.protocol`. The figures' names,
goals and ranges are declared in :mod:`memviz.metrics`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from memviz.compare.protocol import COLUMNS as PROTOCOL
from memviz.text import percent_pm

FIGURES = ("mem_ratio", "mem_ratio_pruned", "mem_auc", "mem_auc_pruned", "relative_reduction",
           "relative_reduction_auc", "shape", "trend", "mle", "mle_real", "dcr_share", "floor", "excess",
           "mem_ratio_kept", "floor_kept", "control_kept", "n_flagged_removed", "trend_report",
           "wasserstein_mean", "wasserstein_max", "jsd_mean", "jsd_max", "dcr_median_train", "dcr_median_test",
           "dcr_median_train_balanced",
           "epsilon", "epsilon_spent", "delta", "delta_spent", "epsilon_preprocessing", "epsilon_sgd",
           "noise_multiplier", "row_epochs_left_out", "rows_left_out")
TIMINGS = ("mitigate_seconds", "fit_seconds", "sample_seconds", "memorize_seconds", "quality_seconds",
           "mle_seconds", "dcr_seconds", "evaluate_seconds", "total_seconds", "cpu_seconds")
COLUMNS = ("method", "model", "seed", *FIGURES, *(c for c in PROTOCOL if c not in FIGURES), "mle_metric", "dcr_ideal", "n_train_used", "n_removed", "n_added",
           "n_synthetic", "epochs", "steps", "device", *TIMINGS, "status", "error", "notes", "key", "synthetic")


def results_frame(records) -> pd.DataFrame:
    """Records -> DataFrame with :data:`COLUMNS` and the relative reductions vs the baseline."""
    df = pd.DataFrame(list(records))
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    df = df.loc[:, list(COLUMNS)]
    for c in dict.fromkeys(FIGURES + PROTOCOL + TIMINGS):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    ok = df["status"] == "ok"
    base = df[ok & (df["method"] == "baseline")].set_index(["model", "seed"])
    idx = pd.MultiIndex.from_frame(df[["model", "seed"]])
    for fig, col in (("mem_ratio", "relative_reduction"), ("mem_auc", "relative_reduction_auc")):
        b = base[fig].reindex(idx).to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            rr = np.where(b > 0, (b - df[fig].to_numpy(dtype=float)) / b, np.nan)
        df[col] = np.where(ok, rr, np.nan)
    return df.reset_index(drop=True)


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1; NaN with one seed) over seeds per method × model.

    Finished cells only. Columns: ``method, model, n_seeds`` then ``{figure}_mean`` and
    ``{figure}_std`` for every figure and timing. ``relative_reduction_mean`` is the mean
    of the per-seed (paired) reductions against the baseline of the same model and seed.
    """
    ok = results[results["status"] == "ok"]
    cols = list(FIGURES + TIMINGS)
    rows = []
    for (method, model), g in ok.groupby(["method", "model"], sort=False):
        row = {"method": method, "model": model, "n_seeds": int(g["seed"].nunique())}
        for c in cols:
            v = g[c].to_numpy(dtype=float)
            fin = v[np.isfinite(v)]
            row[f"{c}_mean"] = float(fin.mean()) if fin.size else np.nan
            row[f"{c}_std"] = float(fin.std(ddof=1)) if fin.size > 1 else np.nan
        rows.append(row)
    out = pd.DataFrame(rows, columns=["method", "model", "n_seeds"] + [f"{c}_{s}" for c in cols
                                                                       for s in ("mean", "std")])
    order = {m: i for i, m in enumerate(results["method"].drop_duplicates())}
    morder = {m: i for i, m in enumerate(results["model"].drop_duplicates())}
    return out.sort_values(["model", "method"], key=lambda s: s.map(morder if s.name == "model" else order),
                           kind="stable").reset_index(drop=True)


def format_summary(summary: pd.DataFrame) -> str:
    """A fixed-width text table of :func:`summary_table` (percentages, ± std over seeds).

    ``floor`` and ``excess`` (percentage points over the floor) need a test split; ``mem vs
    kept``, ``floor vs kept`` and ``control`` (the baseline's rows against the same kept
    rows) are shown for the pruning methods only; "-" where a figure does not apply.
    """
    def pct(row, c, signed=False, unit="%"):
        m, s = row[f"{c}_mean"], row[f"{c}_std"]
        if not np.isfinite(m):
            return "-"
        return percent_pm(m, s, signed=signed, unit=unit, sep=" ±")

    def num(row, c, fmt="{:.3f}"):
        m = row[f"{c}_mean"]
        return fmt.format(m) if np.isfinite(m) else "-"

    head = ["model", "method", "seeds", "mem ratio", "reduction", "floor", "excess (points)", "mem vs kept",
            "floor vs kept", "control", "Mem-AUC", "shape", "trend", "MLE (real)", "DCR", "fit s", "eval s"]
    body = []
    for _, r in summary.iterrows():
        body.append([r["model"], r["method"], str(r["n_seeds"]), pct(r, "mem_ratio"),
                     pct(r, "relative_reduction", signed=True) if r["method"] != "baseline" else "",
                     pct(r, "floor"), pct(r, "excess", signed=True, unit=""), pct(r, "mem_ratio_kept"), pct(r, "floor_kept"),
                     pct(r, "control_kept"), num(r, "mem_auc"), pct(r, "shape"), pct(r, "trend"),
                     f"{num(r, 'mle')} ({num(r, 'mle_real')})", num(r, "dcr_share", "{:.2f}"),
                     num(r, "fit_seconds", "{:.0f}"), num(r, "evaluate_seconds", "{:.0f}")])
    if not body:
        return "no finished cell"
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths)] + lines[1:])
