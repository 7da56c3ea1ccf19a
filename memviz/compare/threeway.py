"""The three-way view: each method's privacy gain, quality change and cost, beside the baseline.

For one generator, each method m other than the baseline and each seed s where both cells
finished (paired: same model, same seed)::

    gain_rel(s)    = (mem_B(s) − mem_m(s)) / mem_B(s)           relative reduction of the mem ratio
    gain_points(s) = excess_B(s) − excess_m(s)                  points of excess over the floor removed
    Δshape(s), Δtrend(s), Δmle(s) = figure_m(s) − figure_B(s)   (negative: quality lost)
    time_ratio(s)  = total_seconds_m(s) / total_seconds_B(s)    wall time against the baseline's

and the table gives each as the mean over seeds with the 95 % t interval over seeds,
mean ± t₀.₉₇₅,ₙ₋₁ · sd / √n (the spread of runs in general; NaN bounds with one seed). The cost
columns beside them: the ε spent (DP-SGD arms), the row-epochs left out (pruning methods;
:mod:`memviz.compare.cell`). ``family`` groups the methods as the DynamicCut write-up's table
does: pruning, differential privacy, augmentation (feature mixing), pruning + mixing, stopping.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memviz.compare.methods import AUGMENTS, PRUNES, SHORTENS, base_method
from memviz.measure.intervals import t_interval

#: method -> the write-up's family (every other method: its own name)
FAMILIES = {**{m: "pruning" for m in PRUNES}, "dynamic_threshold": "pruning", "dp": "differential privacy",
            **{m: "augmentation" for m in AUGMENTS}, "dynamiccutmix": "pruning + mixing",
            **{m: "stopping" for m in SHORTENS}}
#: (output name, results column, how): the paired figures, each with _low and _high
PAIRED = (("gain_rel", "mem_ratio", "relative"), ("gain_points", "excess", "drop"), ("shape_change", "shape", "diff"),
          ("trend_change", "trend", "diff"), ("mle_change", "mle", "diff"),
          ("time_ratio", "total_seconds", "ratio"))
COLUMNS = ["model", "method", "family", "n_seeds",
           *[f"{name}{s}" for name, _, _ in PAIRED for s in ("", "_low", "_high")],
           "epsilon_spent", "delta_spent", "row_epochs_left_out"]


def three_way(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, method ≠ baseline) with a paired baseline cell (module docstring), in the
    results' order; empty (with :data:`COLUMNS`) when there is no baseline."""
    ok = results[results["status"] == "ok"] if "status" in results else results
    rows = []
    for model in ok["model"].drop_duplicates():
        mine = ok[ok["model"] == model]
        base = mine[mine["method"] == "baseline"].drop_duplicates("seed").set_index("seed")
        if base.empty:
            continue
        for method in mine["method"].drop_duplicates():
            if method == "baseline":
                continue
            cells = mine[mine["method"] == method].drop_duplicates("seed").set_index("seed")
            seeds = cells.index.intersection(base.index)
            if not len(seeds):
                continue
            row = {"model": model, "method": method, "family": FAMILIES.get(base_method(method), method),
                   "n_seeds": len(seeds)}
            for name, col, how in PAIRED:
                a = _col(base, col, seeds)
                b = _col(cells, col, seeds)
                with np.errstate(divide="ignore", invalid="ignore"):
                    d = {"relative": (a - b) / np.where(a > 0, a, np.nan), "drop": a - b, "diff": b - a,
                         "ratio": b / np.where(a > 0, a, np.nan)}[how]
                row[name], row[f"{name}_low"], row[f"{name}_high"] = t_interval(d)
            for col in ("epsilon_spent", "delta_spent", "row_epochs_left_out"):
                v = _col(cells, col, seeds)
                v = v[np.isfinite(v)]
                row[col] = float(v.mean()) if v.size else math.nan
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _col(frame: pd.DataFrame, col: str, seeds) -> np.ndarray:
    if col not in frame:
        return np.full(len(seeds), np.nan)
    return pd.to_numeric(frame.loc[seeds, col], errors="coerce").to_numpy(dtype=float)
