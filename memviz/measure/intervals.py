"""Student's t interval of a mean over a few values (seeds, targets): the one definition the comparison's
three-way view and the study's claims read.

    mean ± t_{(1+level)/2, n−1} · s / √n,   s the sample standard deviation (ddof 1), over the finite values.

Equal to :meth:`scipy.stats.ttest_1samp`'s ``confidence_interval`` (tests/measure/test_intervals.py).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import t


def t_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): mean ± t_{(1+level)/2, n−1} · sd / √n over the finite values of ``x`` (NaN bounds
    below 2 values, all NaN for none)."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if x.size < 2:
        return (m, math.nan, math.nan)
    h = float(t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return (m, m - h, m + h)
