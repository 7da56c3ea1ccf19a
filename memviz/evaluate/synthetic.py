"""Quality, utility and privacy of a synthetic table, SDMetrics-style.

One metric, one function, each returning a frozen result with the value and its
breakdown:

* :func:`quality`  -- Shape and Trend (SDMetrics QualityReport) against the training table;
* :func:`column_shapes`, :func:`shape` -- Shape alone, per column and its mean (:class:`ColumnShapes`,
  the one implementation of the per-column KS and TV complements in memviz, equal to SDMetrics');
* :func:`mle`      -- machine-learning efficacy: train on synthetic, test on real;
* :func:`dcr_share` -- distance to closest record: is a synthetic row nearer the
  training split than the test split?
* :func:`evaluate_synthetic` -- all of them as one flat dict for a run.

Categorical values are canonicalized first (``1``, ``1.0`` and ``"1"`` are one
category, see :func:`memviz.tables.encoding.canonical_value`), so a synthetic table read
back from a CSV compares equal to the training table.
"""
from __future__ import annotations

import itertools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from memviz.engine.distributed import on_cluster
from memviz.engine.encoded import EncodedTables
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadTable
from memviz.tables.data import Table, check_same_columns
from memviz.tables.encoding import MISSING, canonical_series
from memviz.tables.holdout import CheckedHoldout

#: hyper-parameter grid of the MLE booster, searched on a 1/9 hold-out of the fit table
MLE_GRID = {"learning_rate": (0.05, 0.1, 0.2), "max_leaf_nodes": (15, 31, 63)}
MLE_DEFAULT = {"learning_rate": 0.1, "max_leaf_nodes": 31}
MAX_CATEGORIES = 254  # HistGradientBoosting: category codes must stay below max_bins = 255


# ---------------------------------------------------------------- input checks
def synthetic_frame(train: Table, synthetic, source: str = "synthetic") -> pd.DataFrame:
    """The synthetic rows as a DataFrame with the schema's columns, numericals as float.

    Raises :class:`BadTable` naming the column when a column is missing or a
    numerical column holds text.
    """
    df = synthetic.data if isinstance(synthetic, Table) else synthetic
    if not isinstance(df, pd.DataFrame):
        raise BadTable(f"{source}: expected a DataFrame or Table, got {type(synthetic).__name__}")
    check_same_columns(train, df, source)
    out = df.loc[:, list(train.schema.columns)].reset_index(drop=True).copy()
    for col in train.schema.distance_numerical:
        s = out[col]
        conv = pd.to_numeric(s, errors="coerce")
        bad = conv.isna() & s.notna()
        if bad.any():
            raise BadTable(f"{source}: column {col!r}: numerical column holds text ({s[bad].iloc[0]!r})")
        out[col] = conv.astype("float64")
    return out


def canonical_frame(df: pd.DataFrame, schema) -> pd.DataFrame:
    """Categoricals as canonical strings (missing -> NaN), numericals as float."""
    out = df.loc[:, list(schema.columns)].reset_index(drop=True).copy()
    for col in schema.distance_categorical:
        canon = canonical_series(out[col])
        out[col] = pd.Series(canon, dtype=object).where(canon != MISSING, np.nan)
    for col in schema.distance_numerical:
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
    return out


# ---------------------------------------------------------------------- quality
@dataclass(frozen=True, eq=False)
class QualityResult:
    """Shape and Trend of a synthetic table.

    Attributes
    ----------
    shape : float in [0, 1], mean of ``column_shapes.score``.
    trend : float in [0, 1], mean of ``column_pairs.score`` (over the pairs that
        meet the real-correlation thresholds; all pairs by default).
    column_shapes : DataFrame with columns ``column, metric, score``.
    column_pairs : DataFrame with columns ``column_1, column_2, metric, score`` and
        SDMetrics' extra columns (``real_correlation``, ``synthetic_correlation``, ...).
    """

    shape: float
    trend: float
    column_shapes: pd.DataFrame
    column_pairs: pd.DataFrame


def quality(train: Table, synthetic, *, real_correlation_threshold: float = 0.0,
            real_association_threshold: float = 0.0) -> QualityResult:
    """SDMetrics' single-table QualityReport of ``synthetic`` against ``train``.

    Column Shapes (one score per column c, real values R, synthetic values S,
    missing values dropped):

    * numerical: KS complement ``1 - sup_x |F_R(x) - F_S(x)|``;
    * categorical: TV complement ``1 - ½ Σ_k |P_R(k) - P_S(k)|``.

    Column Pair Trends (one score per pair a, b):

    * two numericals: correlation similarity ``1 - |ρ_R(a,b) - ρ_S(a,b)| / 2``
      (Pearson ρ);
    * otherwise: contingency similarity ``1 - ½ Σ_{k,l} |P_R(k,l) - P_S(k,l)|``,
      a numerical cut into 10 equal-width bins. As in SDMetrics, each table is
      binned on **its own** range (``np.histogram_bin_edges``), so a synthetic
      column whose minimum or maximum differs from the real one loses score on
      these pairs even when its dependencies are right (a fresh sample of a
      normal column scores about 0.7 on them); the papers' figures share this.

    ``shape`` and ``trend`` are the means of those scores; the papers report them
    × 100. The thresholds choose which pairs enter ``trend``: SDMetrics ≥ 0.32
    defaults to pairs whose real |ρ| exceeds 0.5 (Cramér's V above 0.3 for the
    contingency pairs); the papers' SDMetrics counted every pair, which is the
    default here (both thresholds 0). With a single column, ``trend`` is NaN. For Shape alone,
    :func:`shape` (and :func:`column_shapes`) give the same scores without the pairs' cost.
    """
    syn = synthetic_frame(train, synthetic)
    schema = train.schema
    real = canonical_frame(train.data, schema)
    syn = canonical_frame(syn, schema)
    columns = {c: {"sdtype": "numerical"} for c in schema.distance_numerical}
    columns.update({c: {"sdtype": "categorical"} for c in schema.distance_categorical})
    metadata = {"columns": {c: columns[c] for c in schema.columns}}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning)
        warnings.filterwarnings("ignore", module=r"sdmetrics(\..*)?$")
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        from sdmetrics.reports.single_table import QualityReport  # lazy: sdmetrics, an extra (sdv)

        report = QualityReport()
        if hasattr(report, "real_correlation_threshold"):
            report.real_correlation_threshold = float(real_correlation_threshold)
            report.real_association_threshold = float(real_association_threshold)
        report.generate(real, syn, metadata, verbose=False)
        props = report.get_properties().set_index("Property")["Score"]
        shapes = _snake(report.get_details("Column Shapes"))
        pairs = _snake(report.get_details("Column Pair Trends"))
    return QualityResult(shape=float(props.get("Column Shapes", np.nan)),
                         trend=float(props.get("Column Pair Trends", np.nan)),
                         column_shapes=shapes, column_pairs=pairs)


# ---------------------------------------------------------------- column shapes
#: SDMetrics' MAX_DECIMALS (``sys.float_info.dig - 1``): numerical values are rounded to it before the KS test
SHAPE_DECIMALS = 14
#: samples up to this size get scipy's exact two-sample KS test (``ks_2samp``'s MAX_AUTO_N), which returns D
#: as the nearest multiple of 1 / lcm(n_R, n_S); :func:`ks_complement` does the same, to equal it bit for bit
KS_EXACT_ROWS = 10_000
#: SDMetrics' regularization: a category seen only in the synthetic rows gets this real count
TV_REGULARIZATION = 1e-6


def ks_complement(real: np.ndarray, synthetic: np.ndarray) -> float:
    """Column Shape of a numerical column: the KS complement ``1 − sup_x |F_R(x) − F_S(x)|``.

    Parameters
    ----------
    real, synthetic : the column's values, prepared by :func:`shape_values` (missing dropped,
        rounded to :data:`SHAPE_DECIMALS`; ``real`` may be prepared once and reused).

    Returns
    -------
    float in [0, 1] (1: the same empirical distribution), NaN when either side is empty. Equal
    bit for bit to SDMetrics' ``KSComplement.compute`` (``1 − scipy.stats.ks_2samp(R, S).statistic``:
    D over every observed value, then, for samples of at most :data:`KS_EXACT_ROWS` values, rounded
    to the nearest multiple of 1 / lcm(n_R, n_S) as scipy's exact mode does).
    """
    n1, n2 = len(real), len(synthetic)
    if n1 == 0 or n2 == 0:
        return float("nan")
    d = ks_statistic(real, synthetic)
    if max(n1, n2) <= KS_EXACT_ROWS:                         # scipy's exact mode snaps D to a multiple of 1/lcm
        lcm = (n1 // math.gcd(n1, n2)) * n2
        d = int(np.round(d * lcm)) * 1.0 / lcm
    return float(1 - d)


def shape_values(values) -> np.ndarray:
    """A numerical column as :func:`ks_complement` reads it: non-missing float values rounded to
    :data:`SHAPE_DECIMALS`, sorted."""
    v = np.asarray(values, dtype=np.float64)
    return np.sort(np.round(v[~np.isnan(v)], SHAPE_DECIMALS))


def tv_complement(real_counts: np.ndarray, synthetic_counts: np.ndarray) -> float:
    """Column Shape of a categorical column: the TV complement ``1 − ½ Σ_k |P_R(k) − P_S(k)|``.

    Parameters
    ----------
    real_counts, synthetic_counts : how many non-missing real and synthetic values fall in each
        category k, aligned: the real categories in the order they first occur in the real column,
        then those seen only in the synthetic one, in the order they first occur there.

    Returns
    -------
    float in [0, 1] (1: the same category shares), NaN when either side has no value. A category
    seen only in the synthetic rows has a real count of :data:`TV_REGULARIZATION`, as in SDMetrics;
    the terms are summed in SDMetrics' order, so the result equals ``TVComplement.compute`` bit for bit.
    """
    r = np.asarray(real_counts, dtype=np.float64)
    s = np.asarray(synthetic_counts, dtype=np.float64)
    if r.sum() == 0 or s.sum() == 0:
        return float("nan")
    keep = (r > 0) | (s > 0)
    unseen = int(((r == 0) & (s > 0)).sum())
    r_total = float(r.sum())                                                  # exact: integer counts
    for _ in range(unseen):                                                   # SDMetrics adds them one by one
        r_total += TV_REGULARIZATION
    r = np.where(r > 0, r, TV_REGULARIZATION)[keep]
    terms = np.abs(s[keep] / s.sum() - r / r_total)
    return float(1 - 0.5 * np.cumsum(terms)[-1])                              # cumsum: a left-to-right sum


class ColumnShapes:
    """SDMetrics' Column Shapes of generated rows against one training table, the real side prepared once.

    One score per column c of the schema (real values R = the training column, synthetic values S,
    both canonicalized as in :func:`quality`, missing values dropped):

    * numerical: the KS complement ``1 − sup_x |F_R(x) − F_S(x)|`` (:func:`ks_complement`, values
      rounded to 14 decimals);
    * categorical: the TV complement ``1 − ½ Σ_k |P_R(k) − P_S(k)|`` (:func:`tv_complement`).

    A column with no value on either side scores NaN and is left out of the mean, ``shape``
    (metric ``"shape"`` of :mod:`memviz.metrics`: maximize, in [0, 1]). The scores equal the Column
    Shapes details of SDMetrics' QualityReport (:func:`quality`) bit for bit; this is the one place
    memviz computes them (:func:`column_shapes`, :func:`shape`, the audit's utility gate and the
    warm-up's per-check quality, :class:`memviz.evaluate.quality.CheckQuality`, all call it).

    Parameters
    ----------
    train : the training table (the real side).
    """

    def __init__(self, train: Table):
        self.train = train
        schema = train.schema
        real = canonical_frame(train.data, schema)
        numerical = set(schema.distance_numerical)
        self.columns = tuple(schema.columns)
        self.numerical = tuple(c for c in self.columns if c in numerical)
        self.categorical = tuple(c for c in self.columns if c not in numerical)
        self.real_sorted = {c: shape_values(real[c].to_numpy(np.float64)) for c in self.numerical}
        self.categories, self.real_codes, self.real_counts = {}, {}, {}
        for c in self.categorical:
            cats = pd.Index(pd.unique(real[c].dropna()))
            self.categories[c] = cats
            self.real_codes[c] = self.codes(real[c], cats)
            self.real_counts[c] = np.bincount(self.real_codes[c], minlength=len(cats) + 1)[:len(cats)]

    def __call__(self, synthetic) -> dict:
        """``{column: score}`` of ``synthetic`` (a DataFrame or Table with the training columns)."""
        return self.scores(canonical_frame(synthetic_frame(self.train, synthetic), self.train.schema))

    def categories_of(self, column: str, values: pd.Series) -> pd.Index:
        """The real categories of ``column``, then those seen only in ``values``, in first-seen order."""
        cats = self.categories[column]
        return cats.append(pd.Index(pd.unique(values.dropna())).difference(cats, sort=False))

    @staticmethod
    def codes(values: pd.Series, categories: pd.Index) -> np.ndarray:
        """Positions of ``values`` (canonical) in ``categories``; a missing value gets ``len(categories)``."""
        codes = categories.get_indexer(values.to_numpy(dtype=object))
        return np.where(values.isna().to_numpy(), len(categories), codes).astype(np.int64)

    def scores(self, synthetic: pd.DataFrame, codes: Mapping | None = None) -> dict:
        """``{column: score}`` in schema order, of a frame already canonicalized (:func:`canonical_frame`).

        ``codes`` may hold, per categorical column, ``(codes, categories)`` of the synthetic values
        as :meth:`codes` and :meth:`categories_of` give them (to reuse work already done).
        """
        out = {}
        for c in self.columns:
            if c in self.real_sorted:
                out[c] = ks_complement(self.real_sorted[c], shape_values(synthetic[c].to_numpy(np.float64)))
                continue
            if codes is not None and c in codes:
                code, cats = codes[c]
            else:
                cats = self.categories_of(c, synthetic[c])
                code = self.codes(synthetic[c], cats)
            real = np.zeros(len(cats), dtype=np.int64)
            real[:len(self.categories[c])] = self.real_counts[c]
            out[c] = tv_complement(real, np.bincount(code, minlength=len(cats) + 1)[:len(cats)])
        return out


def column_shapes(train: Table, synthetic) -> dict:
    """SDMetrics' Column Shapes of ``synthetic`` against ``train``, per column.

    Parameters
    ----------
    train : the training table (the real side).
    synthetic : DataFrame or Table with the training table's columns.

    Returns
    -------
    dict column -> score in [0, 1], in schema order: the KS complement ``1 − sup_x |F_R(x) − F_S(x)|``
    for a numerical column, the TV complement ``1 − ½ Σ_k |P_R(k) − P_S(k)|`` for a categorical one,
    missing values dropped (NaN when a side has none). See :class:`ColumnShapes`.
    """
    return ColumnShapes(train)(synthetic)


def shape(train: Table, synthetic) -> float:
    """SDMetrics' Column Shapes score (memviz's Shape): the mean of :func:`column_shapes` over the columns
    with a score (NaN when none has), without the pair trends :func:`quality` also computes."""
    return shape_mean(column_shapes(train, synthetic).values())


def shape_mean(scores) -> float:
    """The mean of the non-NaN column scores (NaN when there is none)."""
    kept = [float(v) for v in scores if not np.isnan(v)]
    return float(np.mean(kept)) if kept else float("nan")


def _snake(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out.columns = [str(c).strip().rstrip("?").lower().replace(" ", "_") for c in out.columns]
    return out.reset_index(drop=True)


# -------------------------------------------------------------------------- MLE
@dataclass(frozen=True)
class MLEResult:
    """Machine-learning efficacy.

    Attributes
    ----------
    score : float, the model trained on the synthetic table, scored on the real test split
        (NaN when undefined, see ``note``).
    metric : ``"roc_auc"`` (binary), ``"roc_auc_ovr_macro"`` (multiclass) or ``"r2"``.
    real_score : float, the same procedure trained on the real training table.
    note : str, why a score is NaN (empty otherwise).
    params : the hyper-parameters picked on the synthetic hold-out.
    """

    score: float
    metric: str
    real_score: float
    note: str = ""
    params: Mapping = field(default_factory=dict)


def mle(train: Table, synthetic, test: Table, seed: int = 0, *, real_score: float | None = None,
        grid: Mapping | None = None, max_iter: int = 100, n_threads: int | None = 1) -> MLEResult:
    """Train on synthetic, test on real.

    A ``HistGradientBoostingClassifier`` (``Regressor`` for a regression target),
    with the categorical features declared as categorical, is fitted on the
    synthetic table and scored on the real test split:

    * binary: ROC AUC ``P(p(x⁺) > p(x⁻))`` over positive/negative test pairs (ties ½);
    * multiclass: macro one-vs-rest AUC ``(1/|C|) Σ_c AUC(1[y = c], p_c)`` over the
      classes C present in the test split (a class the model never saw has p_c = 0);
    * regression: ``R² = 1 - Σ (y - ŷ)² / Σ (y - ȳ)²``.

    Hyper-parameters: 1/9 of the fit table (stratified on the class when possible,
    seeded) is held out; every combination of ``grid`` (default :data:`MLE_GRID`,
    learning_rate × max_leaf_nodes, ``max_iter`` boosting rounds, no early stopping)
    is fitted on the other 8/9 and scored on the hold-out with the same metric; the
    best is refitted on the whole fit table. A grid of one combination is used as
    is; tables under 18 rows skip the search (default parameters).

    Encoding: categoricals become codes of the fit table's categories (the 254 most
    frequent; a missing value is a category of its own); categories unseen in the
    fit table are passed as missing. Rows whose target is missing, or (classification)
    a class absent from the real training table, are dropped.

    ``real_score`` is the reference line: the same procedure fitted on ``train``;
    pass a precomputed value to skip that fit. When the synthetic table holds a single
    class, AUC is undefined: ``score`` is NaN and ``note`` says why (no error).

    ``n_threads`` caps the booster's OpenMP threads while it runs (None: no cap).
    The default, 1, is deliberate: these fits are small, and on a busy machine
    OpenMP's spinning threads made one fit of the 3,000-row Adult sample take 15 s
    instead of 0.1 s.
    """
    schema = train.schema
    if schema.target is None:
        raise BadTable(f"{train.source}: MLE needs a target column (the schema has none)")
    if not schema.numerical and not schema.categorical:
        raise BadTable(f"{train.source}: MLE needs at least one feature column besides the target")
    syn = synthetic_frame(train, synthetic)
    grid = dict(MLE_GRID if grid is None else grid)
    metric = {"binary": "roc_auc", "multiclass": "roc_auc_ovr_macro"}.get(schema.task, "r2")

    with threadpool_limits(limits=n_threads, user_api="openmp"):
        score, note, params = _fit_and_score(syn, train.data, test.data, schema, seed, grid, max_iter)
        if real_score is None:
            real_score, real_note, _ = _fit_and_score(train.data, train.data, test.data, schema, seed, grid,
                                                      max_iter)
            if not note and real_note:
                note = f"real reference: {real_note}"
    return MLEResult(score=score, metric=metric, real_score=float(real_score), note=note, params=params)


def _fit_and_score(fit_df, real_train_df, test_df, schema, seed, grid, max_iter):
    """-> (score, note, params) of the booster fitted on ``fit_df`` and scored on ``test_df``."""
    target = schema.target
    features = list(schema.numerical) + list(schema.categorical)
    classes = None
    if schema.target_is_categorical:
        classes = sorted(set(canonical_series(real_train_df[target])) - {MISSING})
    y_fit, keep_fit = _target(fit_df[target], classes)
    y_test, keep_test = _target(test_df[target], classes)
    fit_df, test_df = fit_df.loc[keep_fit], test_df.loc[keep_test]
    if classes is not None and len(np.unique(y_fit)) < 2:
        return np.nan, f"the fit table holds a single class of {target!r}: AUC is undefined", {}
    if len(y_fit) < 2 or len(y_test) < 2:
        return np.nan, "too few rows with a target value to fit or to score", {}
    codes = _CategoryCodes.fit(fit_df, schema.categorical)
    X_fit, X_test = _features(fit_df, schema, codes), _features(test_df, schema, codes)
    cat_mask = np.array([c in schema.categorical for c in features], dtype=bool)

    combos = [{**MLE_DEFAULT, **dict(zip(grid, vals))} for vals in itertools.product(*grid.values())]
    params = combos[0] if len(combos) == 1 else dict(MLE_DEFAULT)
    if len(y_fit) >= 18 and len(combos) > 1:
        idx_tr, idx_va = _holdout(y_fit, classes is not None, seed)
        best = -np.inf
        for combo in combos:
            model = _booster(classes, cat_mask, combo, seed, max_iter).fit(X_fit[idx_tr], y_fit[idx_tr])
            val = _score(model, X_fit[idx_va], y_fit[idx_va], classes)
            if np.isfinite(val) and val > best:
                best, params = val, combo
    model = _booster(classes, cat_mask, params, seed, max_iter).fit(X_fit, y_fit)
    score = _score(model, X_test, y_test, classes)
    note = "" if np.isfinite(score) else "the test split gives no defined score (a single class or a constant target)"
    return float(score), note, params


def _holdout(y: np.ndarray, stratify: bool, seed: int):
    """Positions of the 8/9 fit part and the 1/9 hold-out (stratified when every class allows)."""
    from sklearn.model_selection import train_test_split  # lazy: sklearn, an extra (train)

    pos = np.arange(len(y))
    if stratify and np.min(np.unique(y, return_counts=True)[1]) >= 2:
        try:
            return train_test_split(pos, test_size=1 / 9, random_state=seed, stratify=y)
        except ValueError:  # more classes than hold-out rows
            pass
    return train_test_split(pos, test_size=1 / 9, random_state=seed)


def _target(s: pd.Series, classes):
    """-> (y, keep mask): class indices into ``classes`` (or floats for regression)."""
    if classes is None:
        y = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
        keep = np.isfinite(y)
        return y[keep], keep
    index = {c: i for i, c in enumerate(classes)}
    y = pd.Series(canonical_series(s), dtype=object).map(index)
    keep = y.notna().to_numpy()
    return y[keep].to_numpy(dtype=np.int64), keep


class _CategoryCodes:
    """Per categorical column: canonical value -> code, most frequent first (ties by value)."""

    def __init__(self, maps):
        self.maps = maps

    @classmethod
    def fit(cls, df: pd.DataFrame, columns):
        maps = {}
        for c in columns:
            counts = pd.Series(canonical_series(df[c])).value_counts()
            order = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CATEGORIES]
            maps[c] = {v: float(i) for i, (v, _) in enumerate(order)}
        return cls(maps)

    def transform(self, s: pd.Series, column: str) -> np.ndarray:
        return pd.Series(canonical_series(s), dtype=object).map(self.maps[column]).to_numpy(dtype=np.float64)


def _features(df: pd.DataFrame, schema, codes: _CategoryCodes) -> np.ndarray:
    cols = [pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=np.float64) for c in schema.numerical]
    cols += [codes.transform(df[c], c) for c in schema.categorical]
    return np.column_stack(cols)                                                    # (n, n_features)


def _booster(classes, cat_mask, params, seed, max_iter):
    from sklearn.ensemble import (  # lazy: sklearn, an extra (train)
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    cls = HistGradientBoostingRegressor if classes is None else HistGradientBoostingClassifier
    return cls(categorical_features=cat_mask if cat_mask.any() else None, max_iter=max_iter,
               early_stopping=False, random_state=seed, **params)


def _score(model, X, y, classes) -> float:
    from sklearn.metrics import r2_score, roc_auc_score  # lazy: sklearn, an extra (train)

    if classes is None:
        return float(r2_score(y, model.predict(X))) if len(y) > 1 and np.ptp(y) > 0 else np.nan
    proba = np.zeros((len(y), len(classes)))                                        # (n, K)
    proba[:, model.classes_] = model.predict_proba(X)
    aucs = [roc_auc_score(y == c, proba[:, c]) for c in (np.unique(y) if len(classes) > 2 else [1])
            if 0 < (y == c).sum() < len(y)]
    return float(np.mean(aucs)) if aucs else np.nan


# -------------------------------------------------------------------------- DCR
@dataclass(frozen=True, eq=False)
class DCRResult:
    """Distance to closest record.

    Attributes
    ----------
    share : float, fraction of synthetic rows closer to the training reference than
        to the test reference (ties ½); ``ideal`` for a model that copies nothing.
    dcr_train, dcr_test : (M,) float64, per synthetic row (in row order), the distance
        to the closest row of the training / test reference (the share's, balanced).
    dcr_train_all : (M,) float64, the distance to the closest of EVERY training row.
    median_train : float, the median of ``dcr_train_all``: the distance to the closest training row, every
        training row searched (one more search of the engine when the share's reference is a subsample).
    median_test : float, the median of ``dcr_test``.
    median_train_balanced : float, the median of ``dcr_train`` (the balanced subsample the share reads).
    n_train, n_test : reference rows used by the share.
    ideal : float, ``n_train / (n_train + n_test)``: 0.5 when balanced.
    """

    share: float
    dcr_train: np.ndarray
    dcr_test: np.ndarray
    median_train: float
    median_test: float
    n_train: int = 0
    n_test: int = 0
    ideal: float = 0.5
    dcr_train_all: np.ndarray | None = None
    median_train_balanced: float = float("nan")


def dcr_share(train: Table, test, synthetic, device: str = "auto", *, balance: bool = True,
              seed: int = 0, remote=None, every_train_row: bool = False,
              encoded: EncodedTables | None = None) -> DCRResult:
    """Share of synthetic rows whose closest real row is a training row.

    For each synthetic row g, with the standardized distance of
    :class:`memviz.engine.neighbors.NeighborEngine` (numericals divided by their training
    range, L2, plus the number of categorical mismatches, target included, over
    n_num + n_cat)::

        DCR_train(g) = min_{x ∈ train} d(g, x),   DCR_test(g) = min_{x ∈ test} d(g, x)
        share = (1/M) Σ_g [ 1(DCR_train < DCR_test) + ½ · 1(DCR_train = DCR_test) ]

    A row drawn from the data distribution is, by symmetry, closer to the training
    reference with probability n_train / (n_train + n_test); 0.5 is the ideal only
    with equal sizes. ``balance=True`` (default) therefore subsamples the larger
    reference without replacement (``seed``) to the size of the smaller one; with
    ``balance=False`` both splits are used whole and ``ideal`` says what to expect.
    Ranges and the means imputed for missing numericals come from the whole ``train``.
    Values well above ``ideal`` mean the generator stays closer to its training rows
    than to unseen real rows. ``every_train_row``: also search every training row when the share's reference
    is a subsample (``dcr_train_all``, ``median_train``; otherwise those are the subsample's only when it is the
    whole table, else None and NaN: never the subsample's under the other name). ``remote`` (:func:`memviz.verdict.build.searches`): the two searches run on
    its cluster (the engines are fitted here). ``test``: a Table with the training columns, or a
    :class:`~memviz.tables.holdout.CheckedHoldout` checked against ``train`` (used as is: its columns and
    rows were checked once, :func:`memviz.audit`); a raw Table keeps these checks (non-empty, the training
    columns), not the hold-out's refusal of training rows, which a DCR share of any split may read.
    ``encoded``: the audit's tables encoded once (:class:`memviz.engine.encoded.EncodedTables`, the encoder fitted
    on these very ``train`` rows): the scale taken from it, not fitted again (the same figures: the encoder of the
    same rows), the training rows' arrays read for a reference of training rows (whole, or the balanced subsample
    with its own vocabulary: :meth:`~memviz.engine.encoded.EncodedTables.subset`); the test reference's
    vocabulary is still its own.
    """
    syn = synthetic_frame(train, synthetic)
    if isinstance(test, CheckedHoldout) and test.train is train:      # checked once already: used as is
        ref_train, ref_test = train, test.table
    else:
        test = test.table if isinstance(test, CheckedHoldout) else test
        if test is None or len(test) == 0 or len(train) == 0:
            raise BadTable("DCR share needs a non-empty training and test split")
        check_same_columns(train, test.data, test.source)
        ref_train, ref_test = train, test.with_data(test.data.loc[:, list(train.schema.columns)])
    encoded_small = None
    if balance and len(ref_train) != len(ref_test):
        rng = np.random.default_rng(seed)
        m = min(len(ref_train), len(ref_test))
        big = ref_train if len(ref_train) > len(ref_test) else ref_test
        keep = np.sort(rng.choice(len(big), size=m, replace=False))
        small = Table(big.data.iloc[keep], big.schema, big.source)
        ref_train, ref_test = (small, ref_test) if big is ref_train else (ref_train, small)
        if big is train and encoded is not None and encoded.serves(train):
            encoded_small = encoded.subset(small, keep)          # the training scale, the subsample's vocabulary
    dist = {}
    refs = [("train", ref_train), ("test", ref_test)] + ([("all", train)] if every_train_row and ref_train is not train
                                                         else [])
    for name, ref in refs:
        engine = NeighborEngine(distance="standardized", device=device)
        engine = (engine.fit(ref, encoded=encoded_small) if encoded_small is not None and ref is ref_train else
                  engine.fit(ref, scale_table=train, encoded=encoded))      # the scale of the whole training table
        eng = on_cluster(engine, remote)
        dist[name] = eng.kneighbors(syn, k=1).dist[:, 0]                             # (M,)
    d_tr, d_te = dist["train"], dist["test"]
    d_all = dist.get("all", d_tr if ref_train is train else None)
    share = float(np.mean((d_tr < d_te) + 0.5 * (d_tr == d_te))) if len(syn) else np.nan
    n_tr, n_te = len(ref_train), len(ref_test)
    med = lambda d: float(np.median(d)) if len(d) else np.nan                        # noqa: E731
    return DCRResult(share=share, dcr_train=d_tr, dcr_test=d_te,
                     median_train=med(d_all) if d_all is not None else np.nan, median_test=med(d_te),
                     n_train=n_tr, n_test=n_te, ideal=n_tr / (n_tr + n_te), dcr_train_all=d_all,
                     median_train_balanced=med(d_tr))


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov statistic D = sup_x |F_a(x) − F_b(x)| (NaN if a sample is empty).

    F_a, F_b are the empirical CDFs; evaluated at every observed value (sorted, O((n+m) log(n+m))).
    """
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, "right") / len(a)
    fb = np.searchsorted(b, grid, "right") / len(b)
    return float(np.max(np.abs(fa - fb)))


# ------------------------------------------------------------------ all at once
def evaluate_synthetic(train: Table, test: Table | None, synthetic, *, original_train: Table | None = None,
                       seed: int = 0, device: str = "auto", real_mle: float | None = None) -> dict:
    """Shape, Trend, MLE and DCR share of one synthetic table, as a flat dict.

    ``train`` is the table the generator was fitted on. For runs that prune or
    augment it, pass the unmodified real training split as ``original_train``: every
    figure is then measured against it (removed rows are still private data, and
    augmented rows are not real), so it replaces ``train`` throughout.
    ``real_mle`` skips the reference fit of :func:`mle` (it depends only on the
    real splits and ``seed``). Without a test split (or a target, for MLE) the
    figures that need one are NaN and ``notes`` says why.

    Keys: ``shape, trend, mle, mle_real, mle_metric, dcr_share, dcr_median_train (against every training
    row), dcr_median_test, dcr_median_train_balanced (against the share's balanced subsample), dcr_ideal, notes`` and the wall-clock ``quality_seconds``,
    ``mle_seconds``, ``dcr_seconds``. Memorization ratios, Trend as shipped and the per-column
    fidelity (:mod:`memviz.evaluate.fidelity`) are added by the runner
    (:func:`memviz.compare.cell.evaluate_cell`).
    """
    real = original_train if original_train is not None else train
    t0 = time.perf_counter()
    q = quality(real, synthetic)
    t1 = time.perf_counter()
    out = {"shape": q.shape, "trend": q.trend, "mle": np.nan, "mle_real": np.nan, "mle_metric": "",
           "dcr_share": np.nan, "dcr_median_train": np.nan, "dcr_median_test": np.nan,
           "dcr_median_train_balanced": np.nan,
           "dcr_ideal": np.nan, "notes": ""}
    notes = []
    t2 = t3 = t1
    if test is None:
        notes.append("no test split: MLE and DCR share not computed")
    else:
        if real.schema.target is None:
            notes.append("no target column: MLE not computed")
        else:
            m = mle(real, synthetic, test, seed=seed, real_score=real_mle)
            out.update(mle=m.score, mle_real=m.real_score, mle_metric=m.metric)
            if m.note:
                notes.append(f"MLE: {m.note}")
        t2 = time.perf_counter()
        d = dcr_share(real, test, synthetic, device=device, seed=seed, every_train_row=True)
        out.update(dcr_share=d.share, dcr_median_train=d.median_train, dcr_median_test=d.median_test,
                   dcr_median_train_balanced=d.median_train_balanced, dcr_ideal=d.ideal)
        t3 = time.perf_counter()
    out.update(notes="; ".join(notes), quality_seconds=t1 - t0, mle_seconds=t2 - t1, dcr_seconds=t3 - t2)
    return out
