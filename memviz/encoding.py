"""Turning table cells into the arrays of the distance: canonical categories, imputed numericals."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

MISSING = "\x00<missing>"


def canonical_value(v) -> str:
    """One canonical string per category value, so that equal meanings compare equal.

    ``1``, ``1.0``, ``"1"`` and ``"1.0"`` all become ``"1"``; ``True`` and ``"True"``
    become ``"True"``; a missing value (NaN, None, pd.NA) becomes one "missing" category.
    """
    if v is None or v is pd.NA or v is pd.NaT:
        return MISSING
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return MISSING
        return str(int(v)) if float(v).is_integer() and abs(v) < 2**63 else repr(float(v))
    s = str(v).strip()
    if s == "":
        return MISSING
    try:
        f = float(s)
    except ValueError:
        return s
    if math.isfinite(f) and f.is_integer() and s.lstrip("+-").replace(".", "", 1).isdigit():
        return str(int(f))
    return s


def canonical_series(s: pd.Series) -> np.ndarray:
    """Canonical strings of a column, computed once per distinct value."""
    values = s.to_numpy(dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    canon = np.array([canonical_value(u) for u in uniques] + [MISSING], dtype=object)
    return canon[codes]  # sentinel -1 picks the trailing MISSING


@dataclass(frozen=True)
class Encoded:
    """Arrays of one table in the distance's coordinates.

    num : (n, p) float64, missing numericals replaced by the training mean.
    cat : (n, q) int64 category codes of the training vocabulary; -1 = unseen category.
    """

    num: np.ndarray
    cat: np.ndarray


@dataclass(frozen=True)
class Encoder:
    """Vocabulary and imputation values learnt from the training (reference) table."""

    num_cols: tuple[str, ...]
    cat_cols: tuple[str, ...]
    means: np.ndarray              # (p,) training means used for missing numericals
    mins: np.ndarray               # (p,) training minimum
    ranges: np.ndarray             # (p,) training max - min (1 where 0)
    vocab: tuple[dict, ...]        # per categorical column: canonical value -> code

    @classmethod
    def fit(cls, df: pd.DataFrame, num_cols, cat_cols) -> "Encoder":
        num = df.loc[:, list(num_cols)].to_numpy(dtype=np.float64) if num_cols else np.zeros((len(df), 0))
        means = np.nanmean(num, axis=0) if num.shape[1] else np.zeros(0)
        means = np.where(np.isfinite(means), means, 0.0)
        filled = np.where(np.isnan(num), means, num)
        mins = filled.min(axis=0) if len(filled) else np.zeros(num.shape[1])
        ranges = (filled.max(axis=0) - mins) if len(filled) else np.ones(num.shape[1])
        ranges = np.where(ranges > 0, ranges, 1.0)
        vocab = []
        for c in cat_cols:
            uniq = pd.unique(canonical_series(df[c]))
            vocab.append({u: i for i, u in enumerate(uniq)})
        return cls(tuple(num_cols), tuple(cat_cols), means, mins, ranges, tuple(vocab))

    @property
    def n_categories(self) -> np.ndarray:
        return np.array([len(v) for v in self.vocab], dtype=np.int64)

    def transform(self, df: pd.DataFrame) -> Encoded:
        n = len(df)
        if self.num_cols:
            num = df.loc[:, list(self.num_cols)].to_numpy(dtype=np.float64)
            num = np.where(np.isnan(num), self.means, num)
        else:
            num = np.zeros((n, 0))
        cat = np.empty((n, len(self.cat_cols)), dtype=np.int64)
        for j, c in enumerate(self.cat_cols):
            canon = canonical_series(df[c])
            cat[:, j] = pd.Series(canon, dtype=object).map(self.vocab[j]).fillna(-1).to_numpy(dtype=np.int64)
        return Encoded(num, cat)
