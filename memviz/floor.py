"""The floor: how often the metric flags real rows the model never saw, and what is above it.

The ratio test r = d(g, NN1) / d(g, NN2) < 1/3 is relative: it also flags real rows that
no model has seen (METHOD.md §7). Memorization is what a model adds **above** that floor,
against the same reference rows R and the same distance.

Notation: reference rows i = 1..N (the training table, or the kept rows after pruning;
arrays are aligned with their row_ids sorted ascending), H hold-out rows j (real rows
**not** in R: the test split, or a hold-out), r_j their ratio, NN1(j) their nearest
reference row, f_j = [r_j < 1/3] (NaN is not flagged); M generated rows.

Floor and excess
----------------
* floor        p0 = K / H,  K = Σ_j f_j, with a 95 % **Wilson score** interval
               (p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n), z = Φ⁻¹(0.975).
* excess       δ = p1 − p0, p1 = X / M the mem ratio, with **Newcombe's hybrid score**
               interval (Newcombe 1998, method 10), (l, u) the Wilson limits of each:
               L = δ − sqrt((p1 − l1)² + (u0 − p0)²),  U = δ + sqrt((u1 − p1)² + (p0 − l0)²).
  Given R (and the model), hold-out flags and generated flags are two independent binomial
  samples. Newcombe's interval accounts for both, keeps the Wilson asymmetry near 0 and 1,
  stays inside [−1, 1], and covered close to 95 % in his comparison of eleven methods over
  small, unequal samples (the Wald interval under-covers there); it is closed form and
  vectorises over checks.

Per reference row (from the hold-out)
-------------------------------------
* hits   h_i = #{j : NN1(j) = i, f_j}           flagged hold-out rows attributed to i
* nn1    n_i = #{j : NN1(j) = i}                 all hold-out rows attributed to i
* auc    a_i = Σ_{j : NN1(j) = i, r_j finite} (1 − r_j)   (per-row Mem-AUC, METHOD.md §2;
         each term rounded to a multiple of 2⁻³⁰ as in :mod:`memviz.dynamics`)

Per-row null (empirical-Bayes Gamma–Poisson)
--------------------------------------------
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
              m = H μ; grid points holding less than 1e-9 of the weight in all are dropped.
              Plugging in the MLE instead is badly anti-conservative with a small hold-out (a
              100-row hold-out often "finds" no spread: 16 false over-copied rows of 3,000 on
              average at M = 3,000), and the lower confidence bound of α over-corrects (no
              power); the mixture does neither (measured: see :func:`fit_spread`).
* posterior   π_i | h_i, α ~ Gamma(α + h_i, b(α)), b(α) = α / μ + H.
* predictive  c_i ~ Σ_k w_k NegBin(size α_k + h_i, success probability b_k / (b_k + M)):
              expected_i = M Σ_k w_k (α_k + h_i) / b_k, and Σ_i expected_i = M K / H = M · floor.
* p-value     p_i = P(C ≥ c_i) = Σ_k w_k I_{M/(b_k+M)}(c_i, α_k + h_i) (regularised
              incomplete beta; 1 when c_i = 0). This upper tail is what is reported:
              conservative for a discrete law, hence valid for Benjamini–Hochberg.
              Calibration checks use the mid-p P(C > c) + ½ P(C = c) or the randomised
              P(C > c) + U · P(C = c), which is exactly uniform when the predictive is the true law.
* q-value     Benjamini–Hochberg over the N rows: q_(k) = min_{m ≥ k} p_(m) N / m;
              over_copied = q < 0.05.

The prior mean does **not** use the row's unflagged NN1 count u_i = n_i − h_i ("hub-ness")
as a covariate. Measured (Adult, 3,000 reference rows, 1,000 hold-out rows, fresh rows as
synthetic, 20 splits): a NegBin regression log μ_i = θ0 + θ1 log(1 + u_i) fits θ1 ≈ 0.7 but
calibrates worse (randomised p < 0.001 at 1.2–2.0× nominal against 1.0–1.6× for the flat
prior, more false over-copied rows) with no gain in recall. The rows the Gamma prior fits
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

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import Table, check_same_columns, table_from_frame
from .dynamics import AUC_QUANTUM_INV
from .errors import MemvizError

#: z for a two-sided 95 % interval, Φ⁻¹(0.975)
Z95 = 1.959963984540054
#: over_copied = q < Q_LEVEL
Q_LEVEL = 0.05
#: grid of log α for the spread's posterior (α from 0.001: almost all weight on a row's own
#: hits, to 1.2e6: Poisson)
LOG_ALPHA_GRID = np.round(np.arange(-7.0, 14.0 + 1e-9, 0.2), 10)
#: grid points whose weights add up to less than this are dropped
WEIGHT_DROPPED = 1e-9
#: a hold-out with more than this share of rows identical to reference rows is refused
SAME_ROWS_LIMIT = 0.5
FORMAT = "memviz.floor/1"
ROW_COLUMNS = ("row_id", "copies", "holdout_hits", "expected", "excess", "p_value", "q_value", "over_copied")


# ------------------------------------------------------------------ intervals
def wilson_interval(k, n, z: float = Z95):
    """Wilson score interval of a binomial proportion k / n (arrays broadcast), as (low, high)."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    p = k / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * np.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))      # exact ends, not rounding residue
    high = np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    return low, high


def newcombe_interval(x1, n1, x0, n0, z: float = Z95):
    """Difference p1 − p0 of two independent proportions with Newcombe's hybrid score
    interval (module docstring), as (difference, low, high); arrays broadcast."""
    p1, p0 = np.asarray(x1, float) / np.asarray(n1, float), np.asarray(x0, float) / np.asarray(n0, float)
    l1, u1 = wilson_interval(x1, n1, z)
    l0, u0 = wilson_interval(x0, n0, z)
    d = p1 - p0
    return d, d - np.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2), d + np.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)


def bh_qvalues(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg q-values: q_(k) = min_{m ≥ k} p_(m) · n / m, capped at 1."""
    p = np.asarray(p, dtype=float)
    n = len(p)
    order = np.argsort(p, kind="stable")                                   # (n,)
    q = p[order] * n / np.arange(1, n + 1)
    q = np.minimum.accumulate(q[::-1])[::-1]                               # step-up
    out = np.empty(n)
    out[order] = np.minimum(q, 1.0)
    return out


# ------------------------------------------------------------------ the fitted null
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


def fit_spread(hits: np.ndarray, n_holdout: int):
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
    from scipy import special  # here: reading a run (the dashboard) never pays its import

    h = np.asarray(hits, dtype=np.int64)
    values, count = np.unique(h, return_counts=True)                        # (k,), (k,)
    values = values.astype(float)
    m = (int(h.sum()) or 0.5) / len(h)                                      # mean hits per row
    a = np.exp(LOG_ALPHA_GRID)[:, None]                                     # (G, 1)
    loglik = (count * (special.gammaln(values + a) - special.gammaln(a) + a * np.log(a / (a + m))
                       + values * np.log(m / (a + m)))).sum(axis=1)          # (G,) ℓ(α)
    w = np.exp(loglik - loglik.max())
    w /= w.sum()
    order = np.argsort(w)
    dropped = np.zeros(len(w), dtype=bool)
    dropped[order] = np.cumsum(w[order]) < WEIGHT_DROPPED
    keep = ~dropped
    alphas, weights = a[keep, 0], w[keep] / w[keep].sum()
    return m / n_holdout, alphas, weights, float(a[np.argmax(loglik), 0])


def fit_null(hits: np.ndarray, auc: np.ndarray, auc_sq_sum: float, n_holdout: int) -> NullFit:
    """Fit the prior of π_i (:func:`fit_spread`) and the credibility weight of the Mem-AUC rate."""
    rate, alphas, weights, alpha_mle = fit_spread(hits, n_holdout)
    per_row = np.asarray(auc, dtype=float) / n_holdout                     # (N,) a_i / H
    within = auc_sq_sum / (len(per_row) * n_holdout ** 2)                  # s²
    between = max(0.0, float(per_row.var()) - within)                      # t²
    weight = between / (between + within) if between + within > 0 else 0.0
    alpha = float(np.exp(np.dot(weights, np.log(alphas))))
    return NullFit(rate, tuple(map(float, alphas)), tuple(map(float, weights)), alpha, alpha_mle,
                   float(per_row.mean()), float(weight))


# ------------------------------------------------------------------ the floor
def _positions(row_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Positions of ``ids`` in the sorted ``row_ids``."""
    pos = np.searchsorted(row_ids, ids)
    if np.any(row_ids[np.minimum(pos, len(row_ids) - 1)] != ids):
        raise MemvizError("nearest-row ids that are not reference row_ids")
    return pos


@dataclass(frozen=True, eq=False)
class Floor:
    """The non-member baseline of one reference set and one distance.

    Attributes
    ----------
    distance : ``paper`` or ``standardized``.
    n_reference, n_holdout : N and H.
    n_flagged : K, flagged hold-out rows.
    floor, low, high : K / H and its 95 % Wilson interval.
    row_ids : (N,) int64 reference row_ids, ascending; the arrays below are aligned to it.
    hits, nn1 : (N,) int64 h_i and n_i.
    auc : (N,) float64 a_i.
    auc_sq_sum : Σ_j (1 − r_j)² over hold-out rows with finite r (for the credibility weight).
    null : the fitted :class:`NullFit`.
    n_identical : hold-out rows identical (in the distance's columns) to a reference row,
        natural duplicates of the population (0.1–1.4 % on the three tables).
    holdout_source, holdout_fingerprint, reference_fingerprint : provenance.
    seconds : time of the engine pass and fit.
    """

    distance: str
    n_reference: int
    n_holdout: int
    n_flagged: int
    floor: float
    low: float
    high: float
    row_ids: np.ndarray
    hits: np.ndarray
    nn1: np.ndarray
    auc: np.ndarray
    auc_sq_sum: float
    null: NullFit
    n_identical: int = 0
    holdout_source: str = ""
    holdout_fingerprint: str = ""
    reference_fingerprint: str = ""
    seconds: float = 0.0
    interval: str = "wilson"

    @property
    def ci(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def expected_rate(self) -> np.ndarray:
        """(N,) posterior mean E[π_i | h_i] = Σ_k w_k (α_k + h_i) / b_k."""
        a, b, w = self.null.components(self.n_holdout)                    # (K,) each
        return ((a[:, None] + self.hits) / b[:, None] * w[:, None]).sum(axis=0)

    @property
    def expected_auc_rate(self) -> np.ndarray:
        """(N,) τ_i, expected per-row Mem-AUC per generated row under the null (module docstring)."""
        z = self.null.auc_weight
        return z * self.auc / self.n_holdout + (1 - z) * self.null.auc_mean

    def to_dict(self) -> dict:
        """The figures (JSON-ready, no per-row arrays)."""
        return {"format": FORMAT, "distance": self.distance, "n_reference": self.n_reference,
                "n_holdout": self.n_holdout, "n_flagged": self.n_flagged, "floor": self.floor,
                "floor_ci": [self.low, self.high], "interval": self.interval, "n_identical": self.n_identical,
                "auc_sq_sum": self.auc_sq_sum, "null": self.null.to_dict(), "holdout_source": self.holdout_source,
                "holdout_fingerprint": self.holdout_fingerprint,
                "reference_fingerprint": self.reference_fingerprint, "seconds": self.seconds}

    def to_frame(self) -> pd.DataFrame:
        """Per reference row: row_id, hits, nn1, auc."""
        return pd.DataFrame({"row_id": self.row_ids, "hits": self.hits, "nn1": self.nn1, "auc": self.auc})

    @classmethod
    def from_stored(cls, info: dict, rows: pd.DataFrame) -> "Floor":
        """Rebuild from :meth:`to_dict` and :meth:`to_frame` (the stored null is reused as is)."""
        if info.get("format") != FORMAT:
            raise MemvizError(f"floor: not a {FORMAT} record")
        low, high = info["floor_ci"]
        return cls(info["distance"], int(info["n_reference"]), int(info["n_holdout"]), int(info["n_flagged"]),
                   float(info["floor"]), float(low), float(high), _frozen(rows["row_id"], np.int64),
                   _frozen(rows["hits"], np.int64), _frozen(rows["nn1"], np.int64), _frozen(rows["auc"], float),
                   float(info["auc_sq_sum"]), _null_fit(info["null"]), int(info.get("n_identical", 0)),
                   info.get("holdout_source", ""), info.get("holdout_fingerprint", ""),
                   info.get("reference_fingerprint", ""), float(info.get("seconds", 0.0)),
                   info.get("interval", "wilson"))


def _null_fit(d: dict) -> NullFit:
    return NullFit(**{**d, "alphas": tuple(d["alphas"]), "weights": tuple(d["weights"])})


def _frozen(values, dtype) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(values, dtype=dtype))
    a.setflags(write=False)
    return a


def floor_from_attributions(reference_row_ids, nn1, ratio, *, distance: str, **provenance) -> Floor:
    """A :class:`Floor` from the hold-out rows' NN1 row_ids (H,) and ratios (H,).

    ``provenance``: n_identical, holdout_source, holdout_fingerprint, reference_fingerprint, seconds.
    """
    row_ids = np.sort(np.asarray(reference_row_ids, dtype=np.int64))          # (N,)
    ratio = np.asarray(ratio, dtype=float)                                     # (H,)
    h_total = len(ratio)
    if h_total == 0:
        raise MemvizError("hold-out: no rows; the floor needs real rows outside the reference")
    pos = _positions(row_ids, np.asarray(nn1, dtype=np.int64))                 # (H,)
    with np.errstate(invalid="ignore"):
        flagged = ratio < 1.0 / 3.0                                            # NaN is not flagged
    finite = np.isfinite(ratio)
    closeness = np.round(np.where(finite, 1.0 - ratio, 0.0) * AUC_QUANTUM_INV) / AUC_QUANTUM_INV  # (H,)
    n = len(row_ids)
    hits = np.bincount(pos[flagged], minlength=n)                              # (N,)
    nn1_counts = np.bincount(pos, minlength=n)                                 # (N,)
    auc = np.bincount(pos, weights=closeness, minlength=n)                     # (N,)
    auc_sq_sum = float(np.sum(closeness ** 2))
    k = int(flagged.sum())
    low, high = wilson_interval(k, h_total)
    return Floor(distance, n, h_total, k, k / h_total, float(low), float(high), _frozen(row_ids, np.int64),
                 _frozen(hits, np.int64), _frozen(nn1_counts, np.int64), _frozen(auc, float), auc_sq_sum,
                 fit_null(hits, auc, auc_sq_sum, h_total), **provenance)


def _row_hashes(engine, df: pd.DataFrame) -> np.ndarray:
    """(n,) uint64 hash of each row as the distance sees it (imputed numericals, category codes)."""
    enc = engine.encoder_.transform(df)
    return pd.util.hash_pandas_object(pd.DataFrame(np.hstack([enc.num, enc.cat.astype(float)])),
                                      index=False).to_numpy()


def holdout_floor(reference: Table, holdout: Table | pd.DataFrame, *, distance: str = "paper",
                  engine=None, device: str = "auto") -> Floor:
    """The floor of ``reference``: the metric's flagged share of real rows outside it.

    Parameters
    ----------
    reference : the reference rows R (the training table, or the kept rows after pruning).
    holdout : **real rows the model never trained on** (the test split, or a hold-out cut
        from the data before training), with the reference's columns. Never pass training
        rows: the floor would then measure the model's own training data. The obvious misuse
        (the reference itself, or a hold-out mostly made of reference rows) is refused.
    distance : ``paper`` or ``standardized``.
    engine : a :class:`~memviz.neighbors.NeighborEngine` already fitted on ``reference``
        (the warm-up's), so that a floor costs one query pass and no second fit.
    device : for a new engine.

    Returns
    -------
    Floor
        K / H with its Wilson interval, per-row hits / nn1 / auc and the fitted null.

    Raises
    ------
    MemvizError
        An empty hold-out, missing or other columns, an engine of another reference or
        distance, or a hold-out that is the reference.
    """
    from .memorization import memorization
    from .neighbors import NeighborEngine
    from .store import fingerprint

    t0 = time.perf_counter()
    source = holdout.source if isinstance(holdout, Table) else "hold-out"
    if isinstance(holdout, Table):
        if tuple(holdout.schema.columns) != tuple(reference.schema.columns):
            raise MemvizError(f"{source}: the hold-out's columns differ from the reference's")
    else:
        check_same_columns(reference, holdout, source)
        if len(holdout) == 0:
            raise MemvizError(f"{source}: the hold-out has no rows")
        holdout = table_from_frame(holdout.loc[:, list(reference.schema.columns)], reference.schema,
                                   source=source, role="test")
    if len(holdout) == 0:
        raise MemvizError(f"{source}: the hold-out has no rows")
    ref_print, hold_print = fingerprint(reference), fingerprint(holdout)
    if ref_print == hold_print:
        raise MemvizError(f"{source}: the hold-out is the reference table itself; pass real rows it does not hold")
    if engine is None:
        engine = NeighborEngine(distance=distance, device=device).fit(reference)
    elif engine.distance != distance:
        raise MemvizError(f"engine: uses the {engine.distance} distance, the floor asked for {distance}")
    elif engine.n_reference_ != len(reference) or not np.array_equal(engine.row_ids_, reference.row_ids):
        raise MemvizError("engine: fitted on other rows than the reference")
    identical = int(np.isin(_row_hashes(engine, holdout.data), _row_hashes(engine, reference.data)).sum())
    if identical > SAME_ROWS_LIMIT * len(holdout):
        raise MemvizError(f"{source}: {identical} of {len(holdout)} hold-out rows are reference rows; "
                          "pass real rows outside the reference (the test split or a hold-out)")
    res = memorization(reference, holdout, engine=engine)
    return floor_from_attributions(reference.row_ids, res.nn1, res.ratio, distance=distance,
                                   n_identical=identical, holdout_source=source, holdout_fingerprint=hold_print,
                                   reference_fingerprint=ref_print, seconds=time.perf_counter() - t0)


# ------------------------------------------------------------------ excess
@dataclass(frozen=True)
class Excess:
    """Mem ratio above the floor: δ = p1 − p0 with Newcombe's hybrid score 95 % interval.

    mem_ratio : p1 = n_memorized / n_synthetic.  floor, floor_low, floor_high : p0 and its interval.
    excess, low, high : δ and its interval.
    """

    mem_ratio: float
    n_synthetic: int
    n_memorized: int
    floor: float
    floor_low: float
    floor_high: float
    n_holdout: int
    excess: float
    low: float
    high: float

    @property
    def ci(self) -> tuple[float, float]:
        return self.low, self.high

    @property
    def covers_zero(self) -> bool:
        return self.low <= 0.0 <= self.high

    def figures(self) -> dict:
        """The plain sentence's numbers, in percent and percentage points (1 decimal)."""
        pct = lambda v: round(100.0 * v, 1)                                    # noqa: E731
        return {"floor_pct": pct(self.floor), "floor_ci_pct": [pct(self.floor_low), pct(self.floor_high)],
                "mem_pct": pct(self.mem_ratio), "excess_points": pct(self.excess),
                "excess_ci_points": [pct(self.low), pct(self.high)], "n_holdout": self.n_holdout,
                "n_synthetic": self.n_synthetic}

    def sentence(self) -> str:
        """'Real rows the model never saw are flagged at Y %; the model's rows at X %; so Z points (interval)
        come from the model.' (worded for an interval that covers 0 or lies below it)."""
        f = self.figures()
        head = (f"Real rows the model never saw are flagged at {f['floor_pct']:.1f} % "
                f"({f['n_holdout']:,} hold-out rows); the model's rows at {f['mem_pct']:.1f} %")
        lo, hi = f["excess_ci_points"]
        ci = f"{lo:+.1f} to {hi:+.1f}"
        if self.low > 0:
            return f"{head}; so {f['excess_points']:.1f} points ({ci}) come from the model."
        if self.high < 0:
            return f"{head}; so the model's rows are flagged less often than real rows ({f['excess_points']:+.1f} points, {ci})."
        return (f"{head}; so the model's rows are not flagged more than real rows it never saw "
                f"({f['excess_points']:+.1f} points, {ci}).")


def excess(mem_ratio: float, n_synthetic: int, floor: Floor) -> Excess:
    """Excess of a mem ratio over the floor (X = round(mem_ratio · n_synthetic) memorized rows)."""
    n = int(n_synthetic)
    if n < 1:
        raise MemvizError(f"n_synthetic={n}: at least one generated row is needed")
    if not 0.0 <= float(mem_ratio) <= 1.0:
        raise MemvizError(f"mem_ratio={mem_ratio}: must be between 0 and 1")
    x = int(round(float(mem_ratio) * n))
    d, lo, hi = newcombe_interval(x, n, floor.n_flagged, floor.n_holdout)
    return Excess(x / n, n, x, floor.floor, floor.low, floor.high, floor.n_holdout, float(d), float(lo), float(hi))


def excess_columns(per_check: pd.DataFrame, floor: Floor) -> pd.DataFrame:
    """``per_check`` (with n_synthetic and n_memorized, as :func:`~memviz.dynamics.check_summary`)
    plus floor, floor_low, floor_high, excess, excess_low, excess_high per check."""
    out = per_check.copy()
    d, lo, hi = newcombe_interval(per_check["n_memorized"].to_numpy(float), per_check["n_synthetic"].to_numpy(float),
                                  floor.n_flagged, floor.n_holdout)
    out["floor"], out["floor_low"], out["floor_high"] = floor.floor, floor.low, floor.high
    out["excess"], out["excess_low"], out["excess_high"] = d, lo, hi
    return out


# ------------------------------------------------------------------ per-row null
@dataclass(frozen=True, eq=False)
class RowNull:
    """Observed copies against the copies expected from fresh real rows, per reference row.

    row_ids, copies, hits, expected, p_value, q_value : (N,) arrays aligned with the floor's
    row_ids; n_generated : M = Σ_e M_e.
    """

    row_ids: np.ndarray
    copies: np.ndarray
    hits: np.ndarray
    expected: np.ndarray
    p_value: np.ndarray
    q_value: np.ndarray
    n_generated: int

    @property
    def excess(self) -> np.ndarray:
        """(N,) copies − expected."""
        return self.copies - self.expected

    @property
    def over_copied(self) -> np.ndarray:
        """(N,) q < 0.05."""
        return self.q_value < Q_LEVEL

    def to_frame(self) -> pd.DataFrame:
        """Columns row_id, copies, holdout_hits, expected, excess, p_value, q_value, over_copied."""
        return pd.DataFrame({"row_id": self.row_ids, "copies": self.copies, "holdout_hits": self.hits,
                             "expected": self.expected, "excess": self.excess, "p_value": self.p_value,
                             "q_value": self.q_value, "over_copied": self.over_copied}, columns=list(ROW_COLUMNS))


def _generated(n_generated) -> int:
    m = int(np.sum(n_generated))
    if m < 1:
        raise MemvizError(f"n_generated={m}: at least one generated row is needed")
    return m


def _copies(floor: Floor, copies) -> np.ndarray:
    c = np.asarray(copies)
    if c.shape != floor.row_ids.shape:
        raise MemvizError(f"copies: {c.shape[0] if c.ndim == 1 else c.shape} values for "
                          f"{floor.n_reference} reference rows")
    if c.dtype.kind not in "iu" or np.any(c < 0):
        raise MemvizError("copies: must be non-negative integer counts")
    return c.astype(np.int64)


def predictive_pvalues(floor: Floor, copies, n_generated, kind: str = "upper",
                       rng: np.random.Generator | None = None) -> np.ndarray:
    """(N,) one-sided p-values of the copies under the NegBin predictive (module docstring).

    kind : ``upper`` P(C ≥ c) (reported), ``mid`` P(C > c) + ½ P(C = c), or ``randomized``
        P(C > c) + U · P(C = c) with U ~ Uniform(0, 1) from ``rng`` (calibration checks).
    """
    from scipy import special

    if kind not in ("upper", "mid", "randomized"):
        raise MemvizError(f"kind={kind!r}: use upper, mid or randomized")
    c, m = _copies(floor, copies), _generated(n_generated)
    upper, pmf = np.zeros(len(c)), np.zeros(len(c))                       # (N,) P(C ≥ c), P(C = c)
    for a, b, w in zip(*floor.null.components(floor.n_holdout)):
        size, tail = a + floor.hits, m / (b + m)                            # (N,) α_k + h_i; 1 − success prob.
        upper += w * np.where(c > 0, special.betainc(np.maximum(c, 1), size, tail), 1.0)
        if kind != "upper":
            pmf += w * np.exp(special.gammaln(c + size) - special.gammaln(size) - special.gammaln(c + 1)
                              + size * np.log1p(-tail) + c * np.log(tail))
    if kind == "upper":
        return np.minimum(upper, 1.0)
    if kind == "mid":
        return np.clip(upper - 0.5 * pmf, 0.0, 1.0)
    u = (rng or np.random.default_rng()).random(len(c))                    # randomized
    return np.clip(upper - u * pmf, 0.0, 1.0)


def row_null(floor: Floor, copies, n_generated) -> RowNull:
    """Per-row test of the copies against the null at M = Σ n_generated generated rows.

    Parameters
    ----------
    floor : the :class:`Floor` of the reference the copies were counted against.
    copies : (N,) int, flagged generated rows per reference row, aligned with ``floor.row_ids``
        (e.g. :func:`copies_per_row`, or a warm-up's ``RowDynamics.total``).
    n_generated : M, or the per-check sizes M_e (summed).

    Returns
    -------
    RowNull
        expected_i = M E[π_i | h_i], p_i = P(C ≥ c_i), BH q-values.
    """
    c, m = _copies(floor, copies), _generated(n_generated)
    p = predictive_pvalues(floor, c, m)
    return RowNull(floor.row_ids, c, floor.hits, m * floor.expected_rate, p, bh_qvalues(p), m)


def copies_per_row(floor: Floor, nn1, memorized) -> np.ndarray:
    """(N,) flagged generated rows per reference row from their NN1 row_ids and flags."""
    pos = _positions(floor.row_ids, np.asarray(nn1, dtype=np.int64))
    return np.bincount(pos[np.asarray(memorized, dtype=bool)], minlength=floor.n_reference).astype(np.int64)
