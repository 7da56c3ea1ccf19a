"""Many tests at once: Benjamini–Hochberg q-values (the false discovery rate) and Holm's step-down
adjustment (the family-wise error rate).

* :func:`bh_qvalues`  q_(k) = min_{m ≥ k} p_(m) · n / m, capped at 1 (Benjamini & Hochberg 1995).
  Under the global null the smallest q-value is Simes' p-value of "some hypothesis is false". Equal to
  ``scipy.stats.false_discovery_control(p, method="bh")`` to one rounding (scipy forms p · (n / m), so the
  last bit of about a third of q-values differs; this form keeps rows.csv's q-values and audit.json's
  ``p_rows`` and adjusted p-values as they were, so scipy's is the cross-check in the tests, not the code).
* :func:`holm`        p̃_(k) = max_{j ≤ k} min(1, (m − j + 1) p_(j)) (Holm 1979): reject every hypothesis
  with p̃ ≤ α and the family-wise error rate is at most α whatever the dependence between the tests.
* :func:`bonferroni`  min(1, m · min_j p_j): Bonferroni's p of "some hypothesis is false" (Holm's smallest p̃),
  valid whatever the dependence.
"""
from __future__ import annotations

import numpy as np


def bh_qvalues(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg q-values: q_(k) = min_{m ≥ k} p_(m) · n / m, capped at 1; NaN entries stay NaN and
    do not count in n (as in :func:`holm`)."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    n = ok.size
    if n == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]                           # (n,)
    q = p[order] * n / np.arange(1, n + 1)
    q = np.minimum.accumulate(q[::-1])[::-1]                               # step-up
    out[order] = np.minimum(q, 1.0)
    return out


def holm(p) -> np.ndarray:
    """Holm-adjusted p-values (module docstring); NaN entries stay NaN and do not count in m."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = ok.size
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adj
    return out


def bonferroni(p) -> float:
    """Bonferroni's p of "some hypothesis is false": min(1, m · min_j p_j) over the m p-values (NaN for none)."""
    p = np.asarray(p, dtype=float)
    return float(min(1.0, p.size * p.min())) if p.size else float("nan")
