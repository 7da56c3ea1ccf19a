"""A model of which rows a warm-up memorizes, from each row's columns and risk factors, with attributions.

Label: membership of the **Top group** (:mod:`memviz.dynamics.rows`: the ⌈10 % · N⌉ rows with the most copies over
the warm-up's checks), one column per warm-up when several warm-ups of the same rows are given (an (N, S)
matrix). Features x_i: the row's columns (numbers as they are, missing as NaN; categories as integer codes of
their canonical text, missing its own code) and its risk factors (:data:`MODEL_FACTORS`, from
:mod:`memviz.risk.factors`).

* **Model**: scikit-learn's ``GradientBoostingClassifier`` (its defaults: 100 trees of depth 3, learning rate
  0.1; ``random_state`` = ``seed``). With S warm-ups, row i enters once as a positive with weight k_i (the
  warm-ups that put it in Top) and once as a negative with weight S − k_i, the same fit as on the N · S
  (row, warm-up) pairs.
* **Held-out AUC**: out-of-fold scores ŝ_i from ``folds``-fold cross-validation over rows (stratified on
  k_i > 0, shuffled with ``seed``): no row is in both a fit and the fold it is scored in. AUC = the mean over
  warm-ups s of AUC(ŝ, y_s), each the Mann–Whitney statistic with mid-ranks (:func:`rank_auc`).
  **Interval**: percentile bootstrap over rows (``n_boot`` resamples; a row carries its label in every warm-up,
  so a row, not a (row, warm-up) pair, is the unit). **Strength** in words (:func:`strength`), from the interval:
  a weak explanation is said to be weak.
* **Attributions**: SHAP values (Lundberg & Lee 2017; ``shap.TreeExplainer`` on the model fitted on all rows),
  φ_ij in log-odds of Top, Σ_j φ_ij + φ_0 = the model's log-odds for row i. Per feature: mean |φ_j| and its
  share of Σ_j mean |φ_j|, and its direction (the Spearman correlation of x_j and φ_j); per row: its φ_ij; per
  value (:func:`value_attributions`): the mean φ_cj over the rows holding value v of column c (numbers in
  quintile ranges of the table), "which column values carry memorization".

``shap`` is the optional extra ``explain`` (``pip install 'memviz[explain]'``); without it :func:`explain_rows`
raises one line saying so.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata, spearmanr

from memviz.errors import BadTable, MissingExtra
from memviz.risk.factors import FACTOR_SHORT, RiskFactors, risk_factors
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series
from memviz.tables.redact import redact

#: the factors the model reads (ratio and percentile of isolation are monotone in it: left out, so that the
#: attributions do not split one signal three ways)
MODEL_FACTORS = ("isolation", "nearest", "exact_duplicates", "near_duplicates", "value_rarity", "pair_rarity",
                 "combination_count", "extremeness")
N_FOLDS = 5
N_BOOT = 1000
#: AUC bands of the words (Hosmer & Lemeshow, Applied Logistic Regression, 2nd ed., 5.2.4)
STRENGTH_BANDS = ((0.8, "strong"), (0.7, "moderate"), (0.5, "weak"))


def rank_auc(score: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """AUC of ``score`` for each label column: (U of the positives) / (n₁ n₀), mid-ranks for ties.

    score : (N,) or (N, B) (B resampled score columns, each against the same column of ``labels``).
    labels : (N,) or (N, S) bool. Returns (S,) (or (B,) / scalar shapes broadcast likewise); NaN for a
    column with no positive or no negative.
    """
    s = np.asarray(score, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    s2 = s[:, None] if s.ndim == 1 else s
    y2 = y[:, None] if y.ndim == 1 else y
    r = rankdata(s2, axis=0)                                                  # (N, B) mid-ranks
    n1 = y2.sum(axis=0).astype(np.float64)
    n0 = y2.shape[0] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((r * y2).sum(axis=0) - n1 * (n1 + 1) / 2) / (n1 * n0)
    auc = np.where((n1 > 0) & (n0 > 0), auc, np.nan)
    return auc[0] if (s.ndim == 1 and y.ndim == 1) else auc


def mean_auc(score: np.ndarray, labels: np.ndarray) -> float:
    """The mean over label columns (warm-ups) of :func:`rank_auc`."""
    a = np.atleast_1d(rank_auc(score, labels))
    return float(np.nanmean(a)) if np.isfinite(a).any() else math.nan


def bootstrap_auc(score: np.ndarray, labels: np.ndarray, n_boot: int = N_BOOT, seed: int = 0) -> tuple[float, float]:
    """Percentile 95 % interval of :func:`mean_auc` over rows resampled with replacement (a row keeps its
    labels in every column)."""
    y = np.asarray(labels, dtype=bool)
    y = y[:, None] if y.ndim == 1 else y
    s = np.asarray(score, dtype=np.float64)
    rng = np.random.default_rng(seed)
    stats = np.empty(n_boot)
    for b in range(n_boot):
        idx = rng.integers(0, len(s), len(s))
        stats[b] = mean_auc(s[idx], y[idx])
    stats = stats[np.isfinite(stats)]
    if not stats.size:
        return math.nan, math.nan
    lo, hi = np.quantile(stats, [0.025, 0.975])
    return float(lo), float(hi)


def strength(auc: float, low: float) -> str:
    """"no better than chance" when the interval reaches 0.5, else the band of the AUC: "weak" (< 0.7),
    "moderate" (< 0.8), "strong"."""
    if not (math.isfinite(auc) and math.isfinite(low)) or low <= 0.5:
        return "no better than chance"
    return next(word for cut, word in STRENGTH_BANDS if auc >= cut)


def feature_frame(train: Table, factors: RiskFactors) -> pd.DataFrame:
    """x_i (module docstring): the row's distance columns (categories as integer codes of their canonical text)
    and :data:`MODEL_FACTORS`, indexed by row_id."""
    s = train.schema
    out = {}
    for c in s.distance_numerical:
        out[c] = pd.to_numeric(train.data[c], errors="coerce").to_numpy(dtype=np.float64)
    for c in s.distance_categorical:
        out[c] = pd.factorize(pd.Series(canonical_series(train.data[c])))[0].astype(np.float64)
    x = pd.DataFrame(out, index=train.data.index)
    f = factors.frame.loc[train.data.index, list(MODEL_FACTORS)].astype(np.float64)
    f.columns = [_factor_name(c, x.columns) for c in f.columns]
    return pd.concat([x, f], axis=1)


def feature_label(feature: str, kind: str) -> str:
    """What a reader sees: a factor in words (:data:`memviz.risk.factors.FACTOR_SHORT`), a column by its name."""
    return FACTOR_SHORT.get(feature.removesuffix(" (factor)"), feature) if kind == "factor" else str(feature)


def _factor_name(name: str, columns) -> str:
    """A factor's feature name; ``name (factor)`` when the table has a column of that name."""
    return f"{name} (factor)" if name in columns else name


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain_rows` found.

    auc, auc_low, auc_high : the held-out AUC (mean over warm-ups) and its bootstrap interval.
    strength : its words (:func:`strength`).  n_rows, n_warmups, n_top : rows, label columns, mean Top size.
    importance : feature, kind ("column" / "factor"), mean_abs_shap, share, direction (Spearman ρ of x and φ),
        largest first.
    shap : (N, F) φ_ij, indexed by row_id, one column per feature.  base_value : φ_0.
    features : x_ij as the model read them.  oof : (N,) out-of-fold scores ŝ_i (row_id index).
    factor_names : the features that are risk factors.  top_share : (N,) k_i / S, each row's share of
    warm-ups that put it in Top (row_id index).  seconds : the fit's wall time.
    """

    auc: float
    auc_low: float
    auc_high: float
    strength: str
    n_rows: int
    n_warmups: int
    n_top: float
    importance: pd.DataFrame
    shap: pd.DataFrame
    base_value: float
    features: pd.DataFrame
    oof: pd.Series
    factor_names: tuple
    top_share: pd.Series
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"auc": _f(self.auc), "auc_low": _f(self.auc_low), "auc_high": _f(self.auc_high),
                "strength": self.strength, "n_rows": self.n_rows, "n_warmups": self.n_warmups,
                "n_top": _f(self.n_top), "base_value": _f(self.base_value),
                "importance": [{k: (_f(v) if isinstance(v, float) else v) for k, v in r.items()}
                               for r in self.importance.to_dict(orient="records")]}


def _f(x):
    x = float(x)
    return x if math.isfinite(x) else None


def explain_rows(train: Table, labels, *, factors: RiskFactors | None = None, folds: int = N_FOLDS,
                 n_boot: int = N_BOOT, seed: int = 0, device: str = "cpu") -> Explanation:
    """Fit, score out of fold and attribute (module docstring).

    Parameters
    ----------
    train : the training table.
    labels : Top membership per row: (N,) bool aligned to ``train``'s rows, or (N, S) for S warm-ups of them,
        or a :class:`~memviz.dynamics.rows.RowDynamics` (its ``top``, aligned by row_id).
    factors : the table's :func:`~memviz.risk.factors.risk_factors` (computed when None).
    folds : cross-validation folds (at least 2, at most the rows in the smaller class).
    """
    t0 = time.perf_counter()
    y = _labels(train, labels)                                                # (N, S) bool
    n, S = y.shape
    k = y.sum(axis=1)
    if not (k > 0).any() or not (k < S).any():
        raise BadTable(f"{train.source}: every row is on the same side of the Top group: nothing to explain")
    if factors is None:
        factors = risk_factors(train, device=device)
    x = feature_frame(train, factors)
    X = model_input(x)
    ever = k > 0
    n_min = int(min(ever.sum(), (~ever).sum()))
    folds = int(folds)
    if folds < 2 or n_min < folds:
        raise BadTable(f"{train.source}: {n_min} rows on the smaller side of the Top group: too few for "
                       f"{folds}-fold cross-validation (at least {max(folds, 2)} needed)")
    from sklearn.model_selection import StratifiedKFold  # lazy: sklearn, an extra (train)

    oof = np.empty(n)
    for fit_idx, test_idx in StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, ever):
        oof[test_idx] = fit_model(X[fit_idx], k[fit_idx], S, seed).predict_proba(X[test_idx])[:, 1]
    auc = mean_auc(oof, y)
    low, high = bootstrap_auc(oof, y, n_boot, seed)
    model = fit_model(X, k, S, seed)
    phi, base = _shap(model, X)
    shap_frame = pd.DataFrame(phi, index=x.index, columns=x.columns)
    factor_names = tuple(_factor_name(c, [c2 for c2 in x.columns if c2 not in MODEL_FACTORS]) for c in MODEL_FACTORS)
    imp = _importance(x, shap_frame, factor_names)
    return Explanation(auc, low, high, strength(auc, low), n, S, float(y.sum(axis=0).mean()), imp, shap_frame,
                       base, x, pd.Series(oof, index=x.index, name="score"), factor_names,
                       pd.Series(k / S, index=x.index, name="top_share"), time.perf_counter() - t0)


def _labels(train: Table, labels) -> np.ndarray:
    if hasattr(labels, "top") and hasattr(labels, "row_ids"):
        top = pd.Series(np.asarray(labels.top, dtype=bool), index=np.asarray(labels.row_ids, dtype=np.int64))
        missing = ~np.isin(train.row_ids, top.index)
        if missing.any():
            raise BadTable(f"{train.source}: row_id {int(train.row_ids[missing][0])} is not in the warm-up's rows")
        return top.loc[train.row_ids].to_numpy()[:, None]
    y = np.asarray(labels)
    y = y[:, None] if y.ndim == 1 else y
    if y.shape[0] != len(train):
        raise BadTable(f"{train.source}: {y.shape[0]} labels for {len(train)} rows")
    return y.astype(bool)


#: a missing number's value for the trees: its own region below every value (scikit-learn's gradient boosting
#: takes no NaN)
MISSING_VALUE = -1e12


def model_input(features: pd.DataFrame) -> np.ndarray:
    """(N, F) float64 the model reads: :func:`feature_frame`'s values, a missing number as :data:`MISSING_VALUE`."""
    X = features.to_numpy(dtype=np.float64)
    return np.where(np.isnan(X), MISSING_VALUE, X)


def fit_model(X: np.ndarray, k: np.ndarray, S: int, seed: int):
    """The classifier of the module docstring on :func:`model_input` rows (``k``: each row's Top count of S):
    each row twice: positive with weight k_i, negative with weight S − k_i."""
    from sklearn.ensemble import GradientBoostingClassifier  # lazy: sklearn, an extra (train)

    w = np.concatenate([k, S - k]).astype(np.float64)
    keep = w > 0
    Xd = np.concatenate([X, X])[keep]
    yd = np.concatenate([np.ones(len(X)), np.zeros(len(X))])[keep]
    return GradientBoostingClassifier(random_state=seed).fit(Xd, yd, sample_weight=w[keep])


def _shap(model, X: np.ndarray) -> tuple[np.ndarray, float]:
    try:
        import shap  # lazy: shap, an extra (explain)
    except ImportError:
        raise MissingExtra("explaining memorization needs SHAP: pip install 'memviz[explain]' (or pip install shap)") \
            from None
    ex = shap.TreeExplainer(model)
    phi = np.asarray(ex.shap_values(X), dtype=np.float64)
    if phi.ndim == 3:                                                         # (N, F, classes) in some versions
        phi = phi[..., -1]
    base = np.asarray(ex.expected_value, dtype=np.float64).ravel()[-1]
    return phi, float(base)


def _importance(x: pd.DataFrame, phi: pd.DataFrame, factor_names) -> pd.DataFrame:
    mabs = phi.abs().mean(axis=0)
    total = float(mabs.sum()) or 1.0
    rows = []
    for c in x.columns:
        xv, pv = x[c].to_numpy(dtype=np.float64), phi[c].to_numpy(dtype=np.float64)
        ok = np.isfinite(xv)
        rho = float(spearmanr(xv[ok], pv[ok])[0]) if ok.sum() > 2 and np.ptp(xv[ok]) > 0 and np.ptp(pv[ok]) > 0 \
            else math.nan
        rows.append({"feature": c, "kind": "factor" if c in factor_names else "column",
                     "mean_abs_shap": float(mabs[c]), "share": float(mabs[c]) / total, "direction": rho})
    return pd.DataFrame(rows).sort_values("mean_abs_shap", ascending=False, kind="stable").reset_index(drop=True)


def value_attributions(train: Table, explanation: Explanation, *, redacted: bool = False, salt: str | None = None,
                       min_rows: int = 3, n_bins: int = 5) -> pd.DataFrame:
    """Per (column, value): the rows holding it, their mean SHAP value φ of that column (log-odds of Top), the
    odds multiplier exp(mean φ) and their Top share, largest mean φ first. Numbers are grouped in ``n_bins``
    quantile ranges of the table ("a – b"); ``redacted``: categories as their keyed hashes and numbers in the
    redaction ranges (round numbers, each holding at least 10 training rows: :mod:`memviz.tables.redact`).
    Values held by fewer than ``min_rows`` rows are left out (one row's value is that row, not a pattern)."""
    s = train.schema
    phi = explanation.shap
    cols = [c for c in list(s.distance_categorical) + list(s.distance_numerical) if c in phi.columns]
    if redacted:
        texts = redact(train.data[cols], s, reference=train.data, salt=salt)
    else:
        texts = pd.DataFrame(index=train.data.index)
        for c in cols:
            if c in s.distance_categorical:
                texts[c] = pd.Series(canonical_series(train.data[c]), index=train.data.index).map(
                    lambda v: "missing" if v.startswith("\x00") else v)
            else:
                texts[c] = quantile_ranges(pd.to_numeric(train.data[c], errors="coerce"), n_bins)
    rows = []
    for c in cols:
        for value, idx in texts[c].groupby(texts[c], sort=False).groups.items():
            if len(idx) < min_rows:
                continue
            m = float(phi.loc[idx, c].mean())
            rows.append({"column": c, "value": str(value), "rows": int(len(idx)), "mean_shap": m,
                         "odds_factor": float(np.exp(m)), "top_share": float(explanation.top_share.loc[idx].mean())})
    out = pd.DataFrame(rows, columns=["column", "value", "rows", "mean_shap", "odds_factor", "top_share"])
    return out.sort_values("mean_shap", ascending=False, kind="stable").reset_index(drop=True)


def quantile_ranges(v: pd.Series, n_bins: int) -> pd.Series:
    """Each value's quantile range "a – b" of the column (missing: "missing")."""
    fin = v.dropna()
    if fin.empty:
        return pd.Series("missing", index=v.index)
    edges = np.unique(np.quantile(fin, np.linspace(0, 1, n_bins + 1)))
    if len(edges) < 2:
        return pd.Series(np.where(v.isna(), "missing", f"{fin.iloc[0]:g}"), index=v.index)
    j = np.clip(np.searchsorted(edges, v.to_numpy(dtype=np.float64), side="right") - 1, 0, len(edges) - 2)
    lab = np.array([f"{a:g} – {b:g}" for a, b in zip(edges[:-1], edges[1:])], dtype=object)
    return pd.Series(np.where(v.isna(), "missing", lab[j]), index=v.index)
