"""The per-row null's prior, fitted on a hold-out: how often fresh real rows land on each reference row.

Notation and derivation in :mod:`memviz.measure.rownull` ("The null"): the flagged hold-out hits h_i
of reference row i are NegBin(size α, mean H μ) under the Gamma prior π_i ~ Gamma(α, α / μ), μ the
maximum-likelihood mean K / (N H); the spread 1/α is integrated out on a grid, weights
w_k ∝ exp ℓ(α_k) with the profile log-likelihood

    ℓ(α) = Σ_i [lnΓ(h_i + α) − lnΓ(α) + α ln(α / (α + m)) + h_i ln(m / (α + m))],  m = H μ.

:class:`NullFit` is what the hold-out floor (:mod:`memviz.measure.floor`) stores and the per-row
p-values read.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: grid of log α for the spread's posterior (α from 0.001: almost all weight on a row's own
#: hits, to 1.2e6: Poisson)
LOG_ALPHA_GRID = np.round(np.arange(-7.0, 14.0 + 1e-9, 0.2), 10)
#: grid points whose weights add up to less than this are dropped
WEIGHT_DROPPED = 1e-9


@dataclass(frozen=True)
class NullFit:
    """The empirical-Bayes null fitted on a hold-out (see the module docstring).

    rate : μ, prior mean of π_i (flagged attributions per fresh row, per reference row).
    alphas, weights : the grid values α_k of the Gamma shape and their posterior weights w_k.
    alpha : exp Σ_k w_k log α_k (reported). alpha_mle : the grid's maximum-likelihood α (reported).
    auc_mean : ā / H, the mean expected Mem-AUC per generated row of a reference row.
    auc_weight : Z, the credibility weight of a row's own hold-out Mem-AUC.
    """

    rate: float
    alphas: tuple[float, ...]
    weights: tuple[float, ...]
    alpha: float
    alpha_mle: float
    auc_mean: float
    auc_weight: float

    def to_dict(self) -> dict:
        return {**self.__dict__, "alphas": list(self.alphas), "weights": list(self.weights)}

    def components(self, n_holdout: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(α_k, b_k = α_k / μ + H, w_k), each (K,)."""
        a = np.asarray(self.alphas, dtype=float)
        return a, a / self.rate + n_holdout, np.asarray(self.weights, dtype=float)


def spread_loglik(counts: np.ndarray) -> np.ndarray:
    """(G,) ℓ(α_k) on :data:`LOG_ALPHA_GRID` of counts (N,) under NegBin(size α, mean m = their mean):
    Σ_i [lnΓ(x_i + α) − lnΓ(α) + α ln(α / (α + m)) + x_i ln(m / (α + m))] (m = 0.5 / N for all-zero counts)."""
    from scipy import special  # lazy: reading a run (memviz.warmup.run) loads this module, not scipy

    x = np.asarray(counts, dtype=np.int64)
    values, count = np.unique(x, return_counts=True)                        # (k,), (k,)
    values = values.astype(float)
    m = (int(x.sum()) or 0.5) / len(x)                                      # mean per row
    a = np.exp(LOG_ALPHA_GRID)[:, None]                                     # (G, 1)
    return (count * (special.gammaln(values + a) - special.gammaln(a) + a * np.log(a / (a + m))
                     + values * np.log(m / (a + m)))).sum(axis=1)            # (G,)


def spread_weights(loglik: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(α_k, w_k) kept: the grid's posterior weights, points holding < WEIGHT_DROPPED in all dropped."""
    a = np.exp(LOG_ALPHA_GRID)
    w = np.exp(loglik - loglik.max())
    w /= w.sum()
    order = np.argsort(w)
    dropped = np.zeros(len(w), dtype=bool)
    dropped[order] = np.cumsum(w[order]) < WEIGHT_DROPPED
    keep = ~dropped
    return a[keep], w[keep] / w[keep].sum()


def fit_hits_prior(hits: np.ndarray, n_holdout: int):
    """(μ, α_k, w_k, α̂): the prior mean, the spread's grid and posterior weights, and its MLE.

    Measured on Adult (3,000 reference rows, fresh rows as synthetic, 20 splits; false =
    rows over-copied without any copying, recall = 10 rows given 10 extra copies each):

    ========  =======  ======================  ======================  =====================
    hold-out  M        plug-in MLE             lower 95 % bound of α   this mixture
    ========  =======  ======================  ======================  =====================
    100       3,000    false 15.6, recall .80  false 0, recall 0       false 0, recall .80
    300       3,000    false 0.25, recall .85  false 0, recall .11     false 0.35, recall .85
    1,000     3,000    false 0.10, recall .99  false 0.05, recall .95  false 0.10, recall .99
    1,000     30,000   false 0.55              false 0.10              false 0.30
    ========  =======  ======================  ======================  =====================
    """
    h = np.asarray(hits, dtype=np.int64)
    m = (int(h.sum()) or 0.5) / len(h)                                      # mean hits per row
    loglik = spread_loglik(h)                                               # (G,) ℓ(α)
    alphas, weights = spread_weights(loglik)
    return m / n_holdout, alphas, weights, float(np.exp(LOG_ALPHA_GRID[np.argmax(loglik)]))


def fit_null(hits: np.ndarray, auc: np.ndarray, auc_sq_sum: float, n_holdout: int) -> NullFit:
    """Fit the prior of π_i (:func:`fit_hits_prior`) and the credibility weight of the Mem-AUC rate."""
    rate, alphas, weights, alpha_mle = fit_hits_prior(hits, n_holdout)
    per_row = np.asarray(auc, dtype=float) / n_holdout                     # (N,) a_i / H
    within = auc_sq_sum / (len(per_row) * n_holdout ** 2)                  # s²
    between = max(0.0, float(per_row.var()) - within)                      # t²
    weight = between / (between + within) if between + within > 0 else 0.0
    alpha = float(np.exp(np.dot(weights, np.log(alphas))))
    return NullFit(rate, tuple(map(float, alphas)), tuple(map(float, weights)), alpha, alpha_mle,
                   float(per_row.mean()), float(weight))
