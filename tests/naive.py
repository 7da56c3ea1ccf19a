"""A straightforward row-at-a-time float64 implementation of the papers' metric (the reference)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from memviz.tables.encoding import canonical_value


def naive_memorization(train: pd.DataFrame, syn: pd.DataFrame, num_cols, cat_cols, distance="paper"):
    """Return nn1_pos, nn2_pos, d1, d2, ratio arrays, one generated row at a time."""
    tn = train[list(num_cols)].to_numpy(dtype=float)
    means = np.nanmean(tn, axis=0) if len(num_cols) else np.zeros(0)
    tn = np.where(np.isnan(tn), means, tn)
    sn = syn[list(num_cols)].to_numpy(dtype=float)
    sn = np.where(np.isnan(sn), means, sn)
    if distance == "standardized" and len(num_cols):
        lo, rng = tn.min(0), tn.max(0) - tn.min(0)
        rng = np.where(rng > 0, rng, 1.0)
        tn, sn = (tn - lo) / rng, (sn - lo) / rng
    tc = np.array([[canonical_value(v) for v in train[c]] for c in cat_cols], dtype=object).T.reshape(len(train), len(cat_cols))
    sc = np.array([[canonical_value(v) for v in syn[c]] for c in cat_cols], dtype=object).T.reshape(len(syn), len(cat_cols))
    n = len(num_cols) + len(cat_cols)
    out = {k: [] for k in ("nn1", "nn2", "d1", "d2", "ratio")}
    for i in range(len(syn)):
        e = np.sqrt(((tn - sn[i]) ** 2).sum(1)) if len(num_cols) else np.zeros(len(train))
        if distance == "paper":
            lo, hi = e.min(), e.max()
            e = (e - lo) / (hi - lo) if hi > lo else np.zeros_like(e)
        h = (tc != sc[i]).sum(1) if len(cat_cols) else np.zeros(len(train))
        d = (e + h) / n
        order = np.lexsort((np.arange(len(d)), d))
        i1, i2 = order[0], order[1]
        d1, d2 = d[i1], d[i2]
        for name, v in (("nn1", i1), ("nn2", i2), ("d1", d1), ("d2", d2)):
            out[name].append(v)
        out["ratio"].append(d1 / d2 if d2 > 0 else np.nan)
    return {k: np.array(v) for k, v in out.items()}
