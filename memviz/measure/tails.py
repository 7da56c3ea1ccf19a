"""Upper tails of the counting laws the verdict's tests read, exact to the last digit a float holds.

Every member of the verdict's family is an exact count test: its p-value is an upper tail P(X ≥ x) of a
Beta-Binomial (the too-close levels), a hypergeometric (Fisher's exact test: the identical and
near-verbatim shares, the ratio test against its floor) or a binomial law (the per-row test). scipy's
``betabinom.sf`` is 1 − cdf: 14 % low at 1e-12 and 0 below about 1e-16, so audit.json could print p = 0
beside a sentence that reads a level. Here the tails are sums of probabilities computed in log space:

* Beta-Binomial(n, a, b):  log P(X = j) = log C(n, j) + log B(j + a, n − j + b) − log B(a, b), and
  log P(X ≥ x) = logsumexp_{j = x..n} log P(X = j) (no cancellation: every term is positive).
* hypergeometric and binomial: scipy's survival functions (boost's complement and the regularized
  incomplete beta), which keep relative precision in the tail.

A p-value below the smallest normal double (2.2e-308) is returned as that number, never as 0: the JSON
and the sentences then read "below 1e-300" rather than an impossible zero (:data:`SMALLEST`).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import betaln, gammaln, logsumexp
from scipy.stats import binom, hypergeom

#: the smallest p any test reports: a tail below it is said as this number, never as 0
SMALLEST = float(np.finfo(float).tiny)


def positive(p: float) -> float:
    """``p`` with a floor at :data:`SMALLEST` (a tail that underflowed is tiny, not impossible); NaN stays NaN."""
    p = float(p)
    return p if not p < SMALLEST else SMALLEST


def betabinom_logsf(x: int, n: int, a: float, b: float) -> float:
    """log P(X ≥ x) for X ~ Beta-Binomial(n, a, b), summed in log space over j = x..n (module docstring)."""
    x, n = int(x), int(n)
    if x <= 0:
        return 0.0
    if x > n:
        return -math.inf
    j = np.arange(x, n + 1, dtype=np.float64)
    logpmf = (gammaln(n + 1.0) - gammaln(j + 1.0) - gammaln(n - j + 1.0) + betaln(j + a, n - j + b) - betaln(a, b))
    return float(min(0.0, logsumexp(logpmf)))


def betabinom_sf(x: int, n: int, a: float, b: float) -> float:
    """P(X ≥ x) for X ~ Beta-Binomial(n, a, b) (:func:`betabinom_logsf`), never below :data:`SMALLEST`."""
    return positive(math.exp(betabinom_logsf(x, n, a, b)))


def hypergeom_sf(x: int, total: int, successes: int, draws: int) -> float:
    """P(X ≥ x) for X ~ Hypergeometric(total, successes, draws) (Fisher's exact one-sided p), never below
    :data:`SMALLEST`; 1 for x ≤ 0."""
    if x <= 0:
        return 1.0
    return positive(min(1.0, float(hypergeom.sf(x - 1, total, successes, draws))))


def binom_sf(x, n, p) -> np.ndarray:
    """P(X ≥ x) for X ~ Binomial(n, p), elementwise, never below :data:`SMALLEST`; 1 where x ≤ 0."""
    x, n = np.asarray(x), np.asarray(n)
    out = np.where(x > 0, binom.sf(x - 1, n, p), 1.0)
    return np.maximum(out, SMALLEST)
