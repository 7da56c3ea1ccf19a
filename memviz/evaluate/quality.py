"""Shape and Trend cheaply enough to measure at every check of a warm-up.

:func:`memviz.evaluate.synthetic.quality` runs SDMetrics' QualityReport, which rebuilds both
tables' groupings for every one of the n(n−1)/2 column pairs: about 0.4 s on the 3,000-row
Adult sample, a third of a warm-up check. :class:`CheckQuality` computes the same two
properties, by the same definitions, with the real table's side prepared once:

* Column Shapes: numerical columns ``1 − sup_x |F_R(x) − F_S(x)|`` (KS complement, values
  rounded to 14 decimals, missing dropped); categorical columns ``1 − ½ Σ_k |P_R(k) − P_S(k)|``
  (TV complement over the non-missing values, a category seen only in S given a real count
  of 1e-6, as SDMetrics does). Not computed here: :class:`memviz.evaluate.synthetic.ColumnShapes`,
  the one implementation of the per-column Shape, scores them (equal to SDMetrics bit for bit);
* Column Pair Trends: two numericals ``1 − |ρ_R − ρ_S| / 2`` (Pearson over the rows where both
  are present; NaN for a constant column); otherwise ``1 − ½ Σ_{k,l} |P_R(k,l) − P_S(k,l)|``,
  missing values a category of their own and a numerical cut into 10 equal-width bins on
  **its own table's** range (``np.histogram_bin_edges`` then ``np.digitize``, so a missing
  value shares the top bin's index, exactly as SDMetrics 0.32 bins);
* ``shape``, ``trend``: the means of the column and pair scores, NaN scores left out.

The results equal :func:`memviz.evaluate.synthetic.quality` to rounding, the column shapes bit for
bit (tested on Adult, a table with missing values and unseen categories, an all-numerical one and
one with a constant column). Categoricals are canonicalized first, as there.

Subsample: ``rows`` caps the generated rows scored, taking the first ``rows`` of them (the
rows of one sampling pass are independent draws, so the first ``rows`` are a random
subsample); the real side is always the whole training table. Shape and Trend of a sample
of M rows are biased low by sampling noise (Trend more: a 10 × 10 contingency table of 500
rows scores lower than one of 3,000 rows of the same distribution), so compare checks
measured with the same ``rows``, never with the full report on another size.
"""
from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd

from memviz.errors import BadOption
from memviz.evaluate.synthetic import ColumnShapes, canonical_frame, shape_mean, synthetic_frame
from memviz.tables.data import Table

#: generated rows scored per check (None: all of them; see the module docstring)
DEFAULT_QUALITY_ROWS = None
_BINS = 10         # np.histogram_bin_edges' default, SDMetrics' num_discrete_bins


class CheckQuality:
    """Shape and Trend of generated rows against one training table, the real side prepared once.

    Parameters
    ----------
    train : the training table (the real side).
    rows : score at most this many generated rows, the first ones (None: all).

    Calling it with a DataFrame of generated rows returns ``{"shape", "trend",
    "quality_rows", "quality_seconds"}``.
    """

    def __init__(self, train: Table, rows: int | None = DEFAULT_QUALITY_ROWS):
        if rows is not None and int(rows) < 1:
            raise BadOption(f"quality_rows={rows}: must be at least 1 (or None for every generated row)")
        self.train, self.rows = train, None if rows is None else int(rows)
        schema = train.schema
        self.shapes = ColumnShapes(train)                                   # the real side of Column Shapes
        self.numerical, self.categorical = list(self.shapes.numerical), list(self.shapes.categorical)
        self.columns = list(self.shapes.columns)
        real = canonical_frame(train.data, schema)
        self.n_real = len(real)
        self.real_num = {c: real[c].to_numpy(np.float64) for c in self.numerical}
        self.real_bins = {c: _bins(v) for c, v in self.real_num.items()}
        self.pairs = list(itertools.combinations(self.columns, 2))

    def __call__(self, samples: pd.DataFrame) -> dict:
        t0 = time.perf_counter()
        syn = synthetic_frame(self.train, samples)
        if self.rows is not None:
            syn = syn.iloc[:self.rows]
        res = self.scores(syn)
        return {"shape": res["shape"], "trend": res["trend"], "quality_rows": int(len(syn)),
                "quality_seconds": time.perf_counter() - t0}

    def scores(self, syn: pd.DataFrame) -> dict:
        """``shape``, ``trend`` and the per-column and per-pair scores of ``syn`` (all its rows)."""
        syn = canonical_frame(syn, self.train.schema)
        n_syn = len(syn)
        num = {c: syn[c].to_numpy(np.float64) for c in self.numerical}
        codes, sizes, real_codes = {}, {}, {}
        for c in self.numerical:
            codes[c], real_codes[c], sizes[c] = _bins(num[c]), self.real_bins[c], _BINS + 2
        seen = {}
        for c in self.categorical:
            cats, allc = self.shapes.categories[c], self.shapes.categories_of(c, syn[c])
            codes[c] = self.shapes.codes(syn[c], allc)
            seen[c] = (codes[c], allc)
            rc = self.shapes.real_codes[c]
            real_codes[c] = np.where(rc == len(cats), len(allc), rc)               # missing: the last code
            sizes[c] = len(allc) + 1                                        # + the missing category
        shapes = self.shapes.scores(syn, codes=seen)
        pairs = {}
        for a, b in self.pairs:
            if a in num and b in num:
                pairs[(a, b)] = _correlation_similarity(self.real_num[a], self.real_num[b], num[a], num[b])
            else:
                kb = sizes[b]
                size = sizes[a] * kb
                pr = np.bincount(real_codes[a] * kb + real_codes[b], minlength=size) / self.n_real
                ps = np.bincount(codes[a] * kb + codes[b], minlength=size) / n_syn if n_syn else np.zeros(size)
                pairs[(a, b)] = 1.0 - 0.5 * float(np.abs(pr - ps).sum()) if n_syn else np.nan
        shape = shape_mean(shapes.values())
        trend = _nanmean(list(pairs.values()))
        return {"shape": shape, "trend": trend, "column_shapes": shapes, "column_pairs": pairs}


def _nanmean(values) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")


def _bins(v: np.ndarray) -> np.ndarray:
    """SDMetrics' discretization: 10 equal-width bins over the column's own non-missing range,
    ``np.digitize`` against those edges (a missing value gets index 11, as the maximum does)."""
    present = v[~np.isnan(v)]
    if not len(present):
        return np.full(len(v), _BINS + 1, dtype=np.int64)
    edges = np.histogram_bin_edges(present, bins=_BINS)
    return np.digitize(v, bins=edges).astype(np.int64)


def _correlation_similarity(ra, rb, sa, sb) -> float:
    """1 − |ρ_R − ρ_S| / 2 with Pearson ρ over the rows where both values are present."""
    def rho(x, y):
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
            return float("nan")
        x, y = x - x.mean(), y - y.mean()
        return float((x @ y) / np.sqrt((x @ x) * (y @ y)))

    r, s = rho(ra, rb), rho(sa, sb)
    return 1.0 - abs(r - s) / 2.0 if np.isfinite(r) and np.isfinite(s) else float("nan")
