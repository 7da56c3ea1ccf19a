"""Per reference row: are its copies more than fresh real rows would give it?

Notation as in :mod:`memviz.measure.floor`: reference rows i = 1..N (arrays aligned with their
row_ids ascending), H hold-out rows, K of them flagged, h_i the flagged hold-out rows whose
NN1 is i, a_i their per-row Mem-AUC; c_i the flagged generated rows whose NN1 is i, among M
generated rows.

The null (empirical-Bayes Gamma–Poisson)
----------------------------------------
Under the null "generated rows are fresh real rows", row i receives a flagged copy with
probability π_i per generated row, so h_i ~ Poisson(H π_i) and its copies
c_i ~ Poisson(M π_i) (M = Σ_e M_e over C checks: the checks are independent draws given π_i).
Most rows have h_i = 0, so π_i is shrunk with a prior fitted across rows:

* prior       π_i ~ Gamma(shape α, rate α / μ), μ = K / (N H)  (K = 0: μ = 0.5 / (N H));
              marginally h_i ~ NegBin(size α, mean H μ). μ is the maximum-likelihood mean.
* spread      1/α is the squared coefficient of variation of π_i across rows. Its
              uncertainty is integrated out: weights w_k ∝ exp ℓ(α_k) on the grid
              log α_k = −7, −6.8, ..., 14 (a flat prior on log α; 0.001 puts almost all weight
              on a row's own hits, 1.2e6 is Poisson), with the profile log-likelihood
              ℓ(α) = Σ_i [lnΓ(h_i + α) − lnΓ(α) + α ln(α / (α + m)) + h_i ln(m / (α + m))],
              m = H μ; grid points holding less than 1e-9 of the weight in all are dropped
              (fitted on the hold-out by :mod:`memviz.measure.nullfit`, which the floor stores).
              Plugging in the MLE instead is badly anti-conservative with a small hold-out (a
              100-row hold-out often "finds" no spread: 16 false over-copied rows of 3,000 on
              average at M = 3,000), and the lower confidence bound of α over-corrects (no
              power); the mixture does neither (measured: see :func:`memviz.measure.nullfit.fit_hits_prior`).
* posterior   π_i | h_i, α ~ Gamma(α + h_i, b(α)), b(α) = α / μ + H.
* predictive  c_i ~ Σ_k w_k NegBin(size α_k + h_i, success probability b_k / (b_k + M)):
              expected_i = M Σ_k w_k (α_k + h_i) / b_k, and Σ_i expected_i = M K / H = M · floor (K > 0).
* p-value     p_i = P(C ≥ c_i) = Σ_k w_k I_{M/(b_k+M)}(c_i, α_k + h_i) (regularised
              incomplete beta; 1 when c_i = 0). This upper tail is what is reported:
              conservative for a discrete law, hence valid for Benjamini–Hochberg.
              Calibration checks use the mid-p P(C > c) + ½ P(C = c) or the randomised
              P(C > c) + U · P(C = c), which is exactly uniform when the predictive is the true law.
* q-value     Benjamini–Hochberg over the N rows: q_(k) = min_{m ≥ k} p_(m) N / m;
              above_chance = q < 0.05 (the ratio test's count above what fresh rows give; the audit's named
              rows are another test: :mod:`memviz.measure.tooclose`).

Calibration: the spread from the hits and the copies together
-------------------------------------------------------------
The predictive's width at M ≫ H is set by the spread α: for a row with h_i = 0 the posterior is
nearly the prior, and the predictive NegBin(α, mean M E[π_i]) has variance m + m²/α. The hold-out
alone cannot see the spread when its mean hits per row H μ is small (≈ 0.1 at H = 1,233 on
Adult's 3,000 rows): ℓ_h is flat towards Poisson (large α), the weights follow, and the predictive
is far too narrow. Measured with fresh Adult rows as the synthetic table (N = 3,000, M = 60,000,
100 resamples; ``benchmarks/bench_audit.py``): resamples with any false over-copied row 26 / 7 / 14 %
at H = 300 / 1,233 / 3,000 (``spread="holdout"``), where BH promises ≤ 5 %.

Under the null the copies carry the same spread: c_i | π_i ~ Poisson(M π_i), so marginally
c_i ~ NegBin(size α, mean m_c) with the same α. ``spread="joint"`` therefore weighs the grid by both
likelihoods,

    w_k ∝ exp(ℓ_h(α_k) + ℓ_c(α_k)),   ℓ_c(α) = Σ_i [lnΓ(c_i + α) − lnΓ(α) + α ln(α / (α + m_c)) + c_i ln(m_c / (α + m_c))],

m_c = mean_i c_i (each likelihood with its own mean, so a model that flags more or less than the
floor does not move α), and keeps μ, the posterior and the predictive of above with these weights
(Σ_i expected_i = M K / H still holds for any α). One α gives the prior a Gamma tail, and Adult's
most-attributed rows (π_i ≈ 1.1e-3, 12 μ: 47–54 flagged NN1 of 45,842 fresh rows, about twice as
many rows at ≥ 40 as the Gamma fit gives) that draw no hold-out hit by chance (e^-3.3 ≈ 3 % each at
H = 3,000) are then called over-copied with their 70–90 natural copies: measured below, 8 % of
resamples at H = 3,000.

The default: a heavier tail (``spread="mixture"``, :data:`DEFAULT_SPREAD`)
--------------------------------------------------------------------------
``mixture`` lets α vary by row: log α ~ Normal(centre, spread) on the grid (weights v_g, fitted on the
copies by :func:`mixture_prior`), per row the responsibilities r_g(h_i) ∝ v_g NegBin(h_i; α_g, H μ), the
posterior Gamma(α_g + h_i, b_g) per component and the predictive

    C_i ~ Σ_g r_g(h_i) NegBin(size α_g + h_i, success probability (b_g/λ) / (b_g/λ + M)),
    p_i = Σ_g r_g(h_i) I_{M/(b_g/λ+M)}(c_i, α_g + h_i),   expected_i = M Σ_g r_g(h_i) λ (α_g + h_i) / b_g,

the rates scaled by λ = N μ / Σ_i E[π_i | h_i] so that Σ_i expected_i = M K / H still holds. A row with
no hold-out hit shifts its weight to the small shapes (heavier tails), which is what the hubs above
need. The law is per row (given h_i): :func:`predictive_counts` gives Σ_i P(C_i = x), which
:func:`memviz.leaks.rows.copies_vs_null` draws, so the figure and the q-values share one null.

Measured (``benchmarks/bench_audit.py``, one run, 100 resamples per H and test; fresh Adult rows as the
synthetic table, N = 3,000, M = 60,000): resamples with any false over-copied row

    ========  ==========  ==========  ======================================================
    H         mixture     joint       power, 10 planted rows, +5 / +20 / +50 / +100 / +200 copies
    ========  ==========  ==========  ======================================================
    300       0 %         1 %         mixture 0/0/0/0/46 %;   joint 0/0/0/64/100 %
    1,233     0 %         0 %         mixture 0/0/0/33/91 %;  joint 0/0/0/92/100 %
    3,000     1 %         8 %         mixture 0/0/0/85/99 %;  joint 0/0/2/98/100 %
    ========  ==========  ==========  ======================================================

(the hold-out-only spread, the first test: 26 / 7 / 14 % in an earlier run of the same benchmark).
The price is power where H ≪ N: the fitted tail also covers rows given +100 to +200 copies (about
5 copies per row at M = 60,000, SD about 8, natural maximum about 90); +5 and +20 extra copies are
within the natural spread for every test. At a fifth of the size (N = 600, M = 12,000,
H = 120 / 247 / 600; tests/measure/test_rownull.py) the default holds BH's 5 % too. The aggregate
excess and copy share (:mod:`memviz.measure.floor`) are the figures for broad copying; this test
names rows copied beyond the table's natural spread. ``spread="joint"`` and ``spread="holdout"`` are
kept to reproduce the former tests.

The prior mean does **not** use the row's unflagged NN1 count u_i = n_i − h_i ("hub-ness")
as a covariate. Measured (Adult, 3,000 reference rows, 1,000 hold-out rows, fresh rows as
synthetic, 20 splits, both with the spread's MLE plugged in): a NegBin regression
log μ_i = θ0 + θ1 log(1 + u_i) fits θ1 ≈ 0.7 but calibrates worse (randomised p < 0.001 at
1.2–2.0× nominal against 1.0–1.6× for the flat prior, more false over-copied rows) with no
gain in recall. The rows the Gamma prior fits
worst are a handful of extreme hubs (h up to 90 per 45,842 fresh rows) whose attributions
are nearly all flagged, so u_i does not point to them.

Expected Mem-AUC per generated row (for DynamicCut's "excess" score A_i(e) − M_e τ_i) is
a linear credibility (Bühlmann) estimate, the same linear shrinkage as the Gamma–Poisson
posterior mean but without a distributional assumption on 1 − r:

    τ_i = Z a_i / H + (1 − Z) ā / H,   ā = mean_i a_i,
    s² = Σ_j (1 − r_j)² / (N H²)   (mean within-row variance of a_i / H),
    t² = max(0, var_i(a_i / H) − s²),   Z = t² / (t² + s²).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import special

from memviz.errors import BadOption
from memviz.measure.floor import Floor, positions
from memviz.measure.multiplicity import bh_qvalues
from memviz.measure.nullfit import LOG_ALPHA_GRID, WEIGHT_DROPPED, NullFit, spread_loglik, spread_weights

#: above_chance = q < Q_LEVEL
Q_LEVEL = 0.05
#: the per-row test's prior (:func:`row_null`'s ``spread``): a per-row mixture over the Gamma shape,
#: calibrated where the generated rows far outnumber the hold-out (module docstring)
DEFAULT_SPREAD = "mixture"
ROW_COLUMNS = ("row_id", "copies", "holdout_hits", "expected", "excess", "p_value", "q_value", "above_chance")


@dataclass(frozen=True, eq=False)
class RowNull:
    """Observed copies against the copies expected from fresh real rows, per reference row.

    row_ids, copies, hits, expected, p_value, q_value : (N,) arrays aligned with the floor's
    row_ids; n_generated : M = Σ_e M_e; null : the :class:`NullFit` the p-values used.
    """

    row_ids: np.ndarray
    copies: np.ndarray
    hits: np.ndarray
    expected: np.ndarray
    p_value: np.ndarray
    q_value: np.ndarray
    n_generated: int
    null: NullFit | None = None

    @property
    def excess(self) -> np.ndarray:
        """(N,) copies − expected."""
        return self.copies - self.expected

    @property
    def above_chance(self) -> np.ndarray:
        """(N,) q < 0.05: more ratio-test copies than fresh rows give the row. Not the audit's named rows (its
        per-row test of close copies, :mod:`memviz.measure.tooclose`), which can differ: a row copied with one cell
        moved is no ratio-test copy."""
        return self.q_value < Q_LEVEL

    def to_frame(self) -> pd.DataFrame:
        """Columns row_id, copies, holdout_hits, expected, excess, p_value, q_value, above_chance."""
        return pd.DataFrame({"row_id": self.row_ids, "copies": self.copies, "holdout_hits": self.hits,
                             "expected": self.expected, "excess": self.excess, "p_value": self.p_value,
                             "q_value": self.q_value, "above_chance": self.above_chance}, columns=list(ROW_COLUMNS))


def _generated(n_generated) -> int:
    m = int(np.sum(n_generated))
    if m < 1:
        raise BadOption(f"n_generated={m}: at least one generated row is needed")
    return m


def _copies(floor: Floor, copies) -> np.ndarray:
    c = np.asarray(copies)
    if c.shape != floor.row_ids.shape:
        raise BadOption(f"copies: {c.shape[0] if c.ndim == 1 else c.shape} values for "
                          f"{floor.n_reference} reference rows")
    if c.dtype.kind not in "iu" or np.any(c < 0):
        raise BadOption("copies: must be non-negative integer counts")
    return c.astype(np.int64)


def predictive_pvalues(floor: Floor, copies, n_generated, kind: str = "upper",
                       rng: np.random.Generator | None = None) -> np.ndarray:
    """(N,) one-sided p-values of the copies under the NegBin predictive (module docstring).

    kind : ``upper`` P(C ≥ c) (reported), ``mid`` P(C > c) + ½ P(C = c), or ``randomized``
        P(C > c) + U · P(C = c) with U ~ Uniform(0, 1) from ``rng`` (calibration checks).
    """
    if kind not in ("upper", "mid", "randomized"):
        raise BadOption(f"kind={kind!r}: use upper, mid or randomized")
    c, m = _copies(floor, copies), _generated(n_generated)
    # p depends on (c_i, h_i) only: compute it once per distinct pair (hundreds, not N)
    base = int(floor.hits.max()) + 1
    pairs, inverse = np.unique(c * base + floor.hits, return_inverse=True)   # (P,), (N,)
    uc, uh = pairs // base, pairs % base                                    # (P,) c, h
    upper, pmf = np.zeros(len(pairs)), np.zeros(len(pairs))                 # (P,) P(C ≥ c), P(C = c)
    for a, b, w in zip(*floor.null.components(floor.n_holdout)):
        size, tail = a + uh, m / (b + m)                                    # (P,) α_k + h; 1 − success prob.
        upper += w * special.betainc(np.maximum(uc, 1), size, tail)       # c = 0 is set to 1 below
        if kind != "upper":
            pmf += w * np.exp(special.gammaln(uc + size) - special.gammaln(size) - special.gammaln(uc + 1)
                              + size * np.log1p(-tail) + uc * np.log(tail))
    upper = np.where(uc > 0, upper, 1.0)                                    # P(C ≥ 0) = 1 exactly, not Σ w
    upper, pmf = upper[inverse], pmf[inverse]                               # (N,)
    if kind == "upper":
        return np.minimum(upper, 1.0)
    if kind == "mid":
        return np.clip(upper - 0.5 * pmf, 0.0, 1.0)
    u = (rng or np.random.default_rng()).random(len(c))                    # randomized
    return np.clip(upper - u * pmf, 0.0, 1.0)


def joint_floor(floor: Floor, copies) -> Floor:
    """``floor`` with the spread's weights refitted on the hold-out's hits **and** the copies (module
    docstring, "Calibration"): w_k ∝ exp(ℓ_h(α_k) + ℓ_c(α_k)), the prior mean μ still the hold-out's."""
    c = _copies(floor, copies)
    alphas, weights = spread_weights(spread_loglik(floor.hits) + spread_loglik(c))
    null = replace(floor.null, alphas=tuple(map(float, alphas)), weights=tuple(map(float, weights)),
                   alpha=float(np.exp(np.dot(weights, np.log(alphas)))))
    return replace(floor, null=null)


#: the mixture prior's log α centres and spreads searched (:func:`mixture_prior`)
MIXTURE_CENTRES = np.round(np.arange(-4.0, 6.0 + 1e-9, 0.25), 10)
MIXTURE_SPREADS = (0.01, 0.5, 1.0, 1.5, 2.0, 3.0)


def _nb_logpmf(x, alphas: np.ndarray, mean: float) -> np.ndarray:
    """(G, U) log NegBin(x_u; size α_g, mean)."""
    a, x = alphas[:, None], np.asarray(x, dtype=float)[None, :]
    return (special.gammaln(x + a) - special.gammaln(a) - special.gammaln(x + 1) + a * np.log(a / (a + mean))
            + x * np.log(mean / (a + mean)))


def mixture_prior(copies) -> tuple[np.ndarray, float, float]:
    """(v_g, centre, spread): weights on the α grid of a per-row mixture prior, log α ~ Normal(centre,
    spread) discretised on :data:`LOG_ALPHA_GRID`, the pair of :data:`MIXTURE_CENTRES` ×
    :data:`MIXTURE_SPREADS` maximising Σ_i ln Σ_g v_g NegBin(c_i; α_g, mean_i c_i)."""
    c = np.asarray(copies, dtype=np.int64)
    values, count = np.unique(c, return_counts=True)
    lik = np.exp(_nb_logpmf(values, np.exp(LOG_ALPHA_GRID), max(float(c.mean()), 0.5 / len(c))))   # (G, U)
    centre, sd = (g.ravel() for g in np.meshgrid(MIXTURE_CENTRES, MIXTURE_SPREADS, indexing="ij"))  # (S,) pairs
    v = np.exp(-0.5 * ((LOG_ALPHA_GRID[None, :] - centre[:, None]) / sd[:, None]) ** 2)          # (S, G)
    v /= v.sum(axis=1, keepdims=True)
    ll = np.log(v @ lik + 1e-300) @ count                                                         # (S,)
    best = int(np.argmax(ll))                                                 # first maximum: as the loop did
    return v[best], float(centre[best]), float(sd[best])


def _mixture(floor: Floor, c: np.ndarray, m: int):
    """The per-row mixture predictive of ``spread="mixture"`` (module docstring), by distinct pair (c, h):
    (uc, uh, inverse, a, b, r): a (G,) α_g; b (G,) b_g / λ; r (G, P) responsibilities r_g(h) of each pair."""
    v, _, _ = mixture_prior(c)
    a = np.exp(LOG_ALPHA_GRID)                                               # (G,)
    h_rows, mu = floor.n_holdout, floor.null.rate
    base = int(floor.hits.max()) + 1
    pairs, inverse = np.unique(c * base + floor.hits, return_inverse=True)  # (P,)
    uc, uh = pairs // base, pairs % base
    log_r = np.log(v + 1e-300)[:, None] + _nb_logpmf(uh, a, h_rows * mu)    # (G, P)
    r = np.exp(log_r - log_r.max(axis=0))
    r /= r.sum(axis=0)
    b = a / mu + h_rows                                                      # (G,)
    rate = (r * (a[:, None] + uh) / b[:, None]).sum(axis=0)                 # (P,) E[π | h]
    lam = len(c) * mu / float(rate[inverse].sum())                           # Σ_i E[π_i | h_i] = N μ
    keep = r.max(axis=1) > WEIGHT_DROPPED                                    # components no pair needs dropped
    return uc, uh, inverse, a[keep], b[keep] / lam, r[keep] / r[keep].sum(axis=0)


def mixture_pvalues(floor: Floor, copies, n_generated) -> tuple[np.ndarray, np.ndarray]:
    """(p_i, expected_i) under the per-row mixture prior (``spread="mixture"``, module docstring):
    responsibilities r_g(h) ∝ v_g NegBin(h; α_g, H μ), rates scaled by λ so that Σ_i expected_i = M K / H,
    p_i = Σ_g r_g(h_i) I_{M/(b_g/λ + M)}(c_i, α_g + h_i), b_g = α_g / μ + H."""
    c, m = _copies(floor, copies), _generated(n_generated)
    uc, uh, inverse, a, b, r = _mixture(floor, c, m)
    upper = np.zeros(len(uc))
    for g in range(len(a)):
        upper += r[g] * special.betainc(np.maximum(uc, 1), a[g] + uh, m / (b[g] + m))   # c = 0: 1 below
    upper = np.where(uc > 0, np.minimum(upper, 1.0), 1.0)                  # P(C ≥ 0) = 1 exactly, not Σ r_g
    rate = (r * (a[:, None] + uh) / b[:, None]).sum(axis=0)                 # (P,) λ E[π | h]
    return upper[inverse], m * rate[inverse]


def predictive_counts(floor: Floor, copies, n_generated, upto: int, *, spread: str = DEFAULT_SPREAD) -> np.ndarray:
    """(upto + 1,) Σ_i P(C_i = x), x = 0..upto: the number of rows expected with x copies under the per-row
    predictive :func:`row_null` uses for ``spread`` (each row its own law, given its h_i: ``joint`` and
    ``holdout`` Σ_k w_k NegBin(α_k + h_i, b_k / (b_k + M)), ``mixture`` Σ_g r_g(h_i) NegBin(α_g + h_i,
    (b_g/λ) / (b_g/λ + M))). Σ_x x · P(C_i = x) over all x is expected_i."""
    c, m = _copies(floor, copies), _generated(n_generated)
    _check_spread(spread)
    x = np.arange(int(upto) + 1)                                             # (X,)
    if spread == "mixture":
        _, uh, inverse, a, b, r = _mixture(floor, c, m)
        hs, first = np.unique(uh, return_index=True)                         # r depends on h only
        n_rows = np.bincount(np.searchsorted(hs, uh[inverse]), minlength=len(hs))
        comps = [(a, b, r[:, j]) for j in first]
    else:
        fl = joint_floor(floor, c) if spread == "joint" else floor
        a, b, w = fl.null.components(fl.n_holdout)
        hs, n_rows = np.unique(fl.hits, return_counts=True)
        comps = [(a, b, w)] * len(hs)
    out = np.zeros(len(x))
    for h, cnt, (a, b, w) in zip(hs, n_rows, comps):
        size, tail = (a + h)[:, None], (m / (b + m))[:, None]                 # (K, 1)
        out += cnt * (w[:, None] * np.exp(_nb_logpmf_tail(x, size, tail))).sum(axis=0)
    return out


def _nb_logpmf_tail(x, size, tail):
    """log NegBin(x; size, failure probability ``tail``), broadcast."""
    return special.gammaln(x + size) - special.gammaln(size) - special.gammaln(x + 1.0) + size * np.log1p(-tail) \
        + x * np.log(tail)


def _check_spread(spread: str) -> None:
    if spread not in ("mixture", "joint", "holdout"):
        raise BadOption(f"spread={spread!r}: use joint, mixture or holdout")


def row_null(floor: Floor, copies, n_generated, *, spread: str = DEFAULT_SPREAD) -> RowNull:
    """Per-row test of the copies against the null at M = Σ n_generated generated rows.

    Parameters
    ----------
    floor : the :class:`Floor` of the reference the copies were counted against.
    copies : (N,) int, flagged generated rows per reference row, aligned with ``floor.row_ids``
        (e.g. :func:`copies_per_row`, or a warm-up's ``RowDynamics.total``).
    n_generated : M, or the per-check sizes M_e (summed).
    spread : ``mixture`` (:data:`DEFAULT_SPREAD`): a per-row mixture prior over the Gamma shape α fitted on
        the copies (:func:`mixture_pvalues`; module docstring, "The default: a heavier tail"); ``joint``: one
        α fitted on the hold-out's hits and the copies together (:func:`joint_floor`: more power, but its
        Gamma tail over-copies hubs that drew no hold-out hit where H ≈ N ≪ M); ``holdout``: on the
        hold-out's hits alone (the first test: anti-conservative when M ≫ H, kept to reproduce it).

    Returns
    -------
    RowNull
        expected_i = M E[π_i | h_i], p_i = P(C ≥ c_i), BH q-values; ``null`` the fit used (None for
        ``mixture``: its law is per row, :func:`predictive_counts` draws it).
    """
    _check_spread(spread)
    c, m = _copies(floor, copies), _generated(n_generated)
    if spread == "mixture":
        p, expected = mixture_pvalues(floor, c, m)
        return RowNull(floor.row_ids, c, floor.hits, expected, p, bh_qvalues(p), m, None)
    fl = joint_floor(floor, c) if spread == "joint" else floor
    p = predictive_pvalues(fl, c, m)
    return RowNull(fl.row_ids, c, fl.hits, m * fl.expected_rate, p, bh_qvalues(p), m, fl.null)


def copies_per_row(floor: Floor, nn1, memorized) -> np.ndarray:
    """(N,) flagged generated rows per reference row from their NN1 row_ids and flags."""
    pos = positions(floor.row_ids, np.asarray(nn1, dtype=np.int64))
    return np.bincount(pos[np.asarray(memorized, dtype=bool)], minlength=floor.n_reference).astype(np.int64)
