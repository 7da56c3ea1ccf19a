"""Rank statistics shared by the tests beyond the ratio test (membership, data copying).

Notation: two samples of scores, x (n_x,) and y (n_y,); ψ(a, b) = 1 if a < b, ½ if a = b, else 0.

* ROC AUC of "small score = member" with x the members, y the non-members:
  A = (1 / (n_x n_y)) Σ_i Σ_j ψ(x_i, y_j), computed from sorted y in O((n_x + n_y) log n_y).
  It equals ``sklearn.metrics.roc_auc_score(labels, -scores)`` (tested).
* **DeLong** (DeLong, DeLong & Clarke-Pearson 1988) variance of A: the structural components
  V10_i = (1 / n_y) Σ_j ψ(x_i, y_j), V01_j = (1 / n_x) Σ_i ψ(x_i, y_j),
  Var(A) = S10 / n_x + S01 / n_y with S10, S01 their sample variances (ddof 1); the 95 %
  interval is A ± z·sqrt(Var(A)), clipped to [0, 1] (tested against a bootstrap).
* **Mann–Whitney** z of sample a against sample b: U_a = Σ_i Σ_j [a_i > b_j] + ½ [a_i = b_j]
  (scipy's U of its first sample), E[U] = n_a n_b / 2,
  Var[U] = n_a n_b / 12 · ((N + 1) − Σ_t (t³ − t) / (N (N − 1))), N = n_a + n_b, t the sizes of
  tied groups; z = (U − E[U]) / sqrt(Var[U]), no continuity correction (0 when Var[U] = 0).
  z < 0: a's values are smaller. Equals ``scipy.stats.mannwhitneyu(a, b, use_continuity=False,
  method="asymptotic")`` through Φ(z) = its one-sided "less" p-value (tested).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm, rankdata

from memviz.measure.floor import Z95


def json_safe(value):
    """``value`` with numpy scalars and arrays made Python, and NaN / ±inf made None (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


def _psi_rows(a: np.ndarray, sorted_b: np.ndarray) -> np.ndarray:
    """(n_a,) Σ_j ψ(a_i, b_j) = #{b > a_i} + ½ #{b = a_i}."""
    left = np.searchsorted(sorted_b, a, side="left")
    right = np.searchsorted(sorted_b, a, side="right")
    return (len(sorted_b) - right) + 0.5 * (right - left)


def auc_delong(x: np.ndarray, y: np.ndarray, z: float = Z95) -> tuple[float, float, float, float]:
    """(A, low, high, se): the AUC of small-score-means-member (module docstring) with DeLong's interval."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    nx, ny = len(x), len(y)
    if nx == 0 or ny == 0:
        return math.nan, math.nan, math.nan, math.nan
    v10 = _psi_rows(x, np.sort(y)) / ny                                  # (n_x,)
    # ψ(x_i, y_j) seen from y_j: #{x < y_j} + ½ #{x = y_j}
    xs = np.sort(x)
    left, right = np.searchsorted(xs, y, side="left"), np.searchsorted(xs, y, side="right")
    v01 = (left + 0.5 * (right - left)) / nx                              # (n_y,)
    a = float(v10.mean())
    s10 = float(v10.var(ddof=1)) if nx > 1 else 0.0
    s01 = float(v01.var(ddof=1)) if ny > 1 else 0.0
    se = math.sqrt(max(s10 / nx + s01 / ny, 0.0))
    return a, max(0.0, a - z * se), min(1.0, a + z * se), se


def mann_whitney_z(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(U_a, z) of the Mann–Whitney test of ``a`` against ``b`` (module docstring); (nan, nan) if one is empty."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = len(a), len(b)
    if na == 0 or nb == 0:
        return math.nan, math.nan
    both = np.concatenate([a, b])
    ranks = rankdata(both)                                                # midranks
    u = float(ranks[:na].sum() - na * (na + 1) / 2.0)
    n = na + nb
    _, t = np.unique(both, return_counts=True)
    ties = float(np.sum(t.astype(np.float64) ** 3 - t)) / (n * (n - 1)) if n > 1 else 0.0
    var = na * nb / 12.0 * ((n + 1) - ties)
    if var <= 0:
        return u, 0.0
    return u, (u - na * nb / 2.0) / math.sqrt(var)


def one_sided_p(z: float) -> float:
    """Φ(z): the p-value of "smaller than chance" for a standard normal statistic."""
    return float(norm.cdf(z)) if math.isfinite(z) else math.nan
