"""Data-side mitigations of memorization: augmentation (TabCutMix, TabCutMixPlus,
SMOTE as the TabCutMix reference runs it, imbalanced-learn's SMOTE-NC) and pruning (a
given set of rows, or random rows as the DynamicCut control).

Every function takes a :class:`~memviz.tables.data.Table` first, its options as keywords
(``seed`` always a keyword), and returns a :class:`MitigationResult` holding a NEW
table: the input is never modified; the schema, columns and dtypes are kept;
original rows keep their ``row_id`` and new rows are appended with fresh ids
``max(row_id) + 1, max(row_id) + 2, ...``.

The number of new rows of an augmentation is ``round(ratio · N)`` (half rounds up).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from memviz.errors import BadOption, BadTable, MissingExtra
from memviz.mitigate.associations import DEFAULT_THRESHOLD, RULES, column_clusters
from memviz.tables.data import ROW_ID, Table

DEFAULT_RATIO = 0.3
#: regression target: rows are paired within quantile bins of the target
DEFAULT_REGRESSION_BINS = 10


@dataclass(frozen=True, eq=False)
class MitigationResult:
    """A mitigated table and what was done to get it.

    Attributes
    ----------
    table : Table
        The new table (original rows first, in their order, then the new rows).
    removed : numpy.ndarray of int64
        Sorted row_ids removed from the input (empty for an augmentation).
    added : int
        Number of rows appended (0 for a pruning).
    method : str
        ``"tabcutmix"``, ``"tabcutmixplus"``, ``"smote_reference"``, ``"smote"`` (SMOTE-NC),
        ``"random_prune"`` or ``"prune"``.
    params : dict
        The options used (and, for TabCutMixPlus, the column ``clusters``).
    sources : pandas.DataFrame or None
        For TabCutMix(Plus) and the reference SMOTE: one row per new row (index: its new
        ``row_id``), columns ``a`` and ``b`` (row_ids of the two parents) and ``lam`` (the
        drawn λ).
    """

    table: Table
    removed: np.ndarray
    added: int
    method: str
    params: dict = field(default_factory=dict)
    sources: pd.DataFrame | None = None


# ------------------------------------------------------------------ helpers
def _n_new(table: Table, ratio: float, method: str) -> int:
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real) or not np.isfinite(ratio) or ratio < 0:
        raise BadOption(f"{method}: ratio must be a number >= 0, got {ratio!r}")
    if len(table) == 0:
        raise BadTable(f"{table.source}: the table has no rows")
    return int(np.floor(ratio * len(table) + 0.5))


def _group_codes(table: Table, regression_bins: int, method: str) -> np.ndarray:
    """Pairing groups (n,) int: the class of a classification target (missing is a class),
    the quantile bin of a regression target (missing is a bin), one group without target."""
    schema, n = table.schema, len(table)
    if schema.target is None:
        return np.zeros(n, dtype=np.int64)
    y = table.data[schema.target].reset_index(drop=True)
    if schema.target_is_categorical:
        return pd.factorize(y, use_na_sentinel=False)[0].astype(np.int64)
    if isinstance(regression_bins, bool) or not isinstance(regression_bins, numbers.Integral) or regression_bins < 1:
        raise BadOption(f"{method}: regression_bins must be an integer >= 1, got {regression_bins!r}")
    bins = pd.qcut(pd.to_numeric(y, errors="coerce"), q=int(regression_bins), labels=False, duplicates="drop")
    codes = bins.to_numpy(dtype=float)
    codes[np.isnan(codes)] = np.nanmax(codes) + 1 if np.isfinite(codes).any() else 0
    return pd.factorize(codes.astype(np.int64))[0].astype(np.int64)


def _append(table: Table, new: pd.DataFrame, method: str) -> Table:
    """Append ``new`` (schema columns) with fresh row_ids max(row_id)+1, ... ."""
    start = int(table.row_ids.max()) + 1 if len(table) else 0
    new.index = pd.Index(np.arange(start, start + len(new), dtype=np.int64), name=ROW_ID)
    data = pd.concat([table.data, new], axis=0) if len(new) else table.data.copy()
    for col in table.data.columns:  # concat may widen a dtype; keep the input's
        if data[col].dtype != table.data[col].dtype:
            data[col] = data[col].astype(table.data[col].dtype)
    return Table(data, table.schema, f"{table.source} + {method}")


def _take(df: pd.DataFrame, src: np.ndarray) -> pd.DataFrame:
    """Column j of the result is column j of ``df`` at positions ``src[:, j]`` (m, p); dtypes kept."""
    return pd.DataFrame({c: df[c].array.take(src[:, j]) for j, c in enumerate(df.columns)})


# ------------------------------------------------------------------ TabCutMix
def _cutmix(table: Table, groups: list[list[str]], *, ratio, seed, regression_bins, method, params):
    """Shared TabCutMix(Plus) core: swap int(λ·K) of the K column ``groups`` from b into a."""
    n_new = _n_new(table, ratio, method)
    rng = np.random.default_rng(seed)
    df, n, k_groups = table.data, len(table), len(groups)
    g = _group_codes(table, regression_bins, method)  # (n,)
    lam = rng.random(n_new)  # (m,) λ ~ U(0, 1)
    a = rng.integers(0, n, size=n_new)  # (m,) positions of row a, uniform
    # b uniform among the rows of a's group: rows sorted by group, offset into a's block
    order = np.argsort(g, kind="stable")
    counts = np.bincount(g)
    starts = np.cumsum(counts) - counts
    ga = g[a]
    offset = np.minimum(np.floor(rng.random(n_new) * counts[ga]).astype(np.int64), counts[ga] - 1)
    b = order[starts[ga] + offset]  # (m,)
    # choose int(λ·K) groups per row: rank of uniform noise in a random permutation < k_i
    k = np.floor(lam * k_groups).astype(np.int64)  # (m,)
    rank = np.argsort(np.argsort(rng.random((n_new, k_groups)), axis=1), axis=1)  # (m, K)
    swap = rank < k[:, None]  # (m, K) True: group taken from b
    group_of = {c: j for j, grp in enumerate(groups) for c in grp}
    src = np.empty((n_new, df.shape[1]), dtype=np.int64)  # (m, p) source position per cell
    for j, col in enumerate(df.columns):
        gi = group_of.get(col)  # None for the target: always from a
        src[:, j] = a if gi is None else np.where(swap[:, gi], b, a)
    out = _append(table, _take(df, src), method)
    ids = table.row_ids
    new_ids = out.row_ids[n:]
    sources = pd.DataFrame({"a": ids[a], "b": ids[b], "lam": lam}, index=pd.Index(new_ids, name=ROW_ID))
    return MitigationResult(out, np.empty(0, dtype=np.int64), n_new, method, params, sources)


def _swappable(table: Table) -> list[str]:
    return [c for c in table.schema.columns if c != table.schema.target]


def tabcutmix(table: Table, *, ratio: float = DEFAULT_RATIO, seed=0,
              regression_bins: int = DEFAULT_REGRESSION_BINS) -> MitigationResult:
    """TabCutMix: append ``round(ratio · N)`` rows mixed from same-class pairs.

    For each new row: ``λ ~ U(0, 1)``; row ``a`` uniform over the table; row ``b``
    uniform over the rows with ``a``'s target (``a`` itself included); the new row is a
    copy of ``a`` in which ``int(λ · M)`` non-target columns, chosen uniformly, take
    ``b``'s value (``M`` = number of non-target columns). The target stays ``a``'s.
    Whole values are swapped, never blended. Vectorized: all draws at once.

    Choices the paper leaves open: without a target, ``b`` is uniform over the whole
    table and every column may be swapped; for a regression target, ``a`` and ``b`` are
    drawn within the same quantile bin of the target (``regression_bins`` bins, ties
    merged; a missing target is a bin of its own). A missing class is a class.

    Parameters
    ----------
    ratio : float >= 0
        New rows as a share of N (0.3 as in the paper).
    seed : int or numpy.random.Generator
    regression_bins : int
        Number of target quantile bins for a regression target.
    """
    params = {"ratio": ratio, "seed": seed, "regression_bins": regression_bins}
    groups = [[c] for c in _swappable(table)]
    return _cutmix(table, groups, ratio=ratio, seed=seed, regression_bins=regression_bins,
                   method="tabcutmix", params=params)


def tabcutmixplus(table: Table, *, ratio: float = DEFAULT_RATIO, seed=0, threshold: float = DEFAULT_THRESHOLD,
                  regression_bins: int = DEFAULT_REGRESSION_BINS, rule: str = "schema") -> MitigationResult:
    """TabCutMixPlus: TabCutMix swapping whole clusters of correlated columns.

    Columns (target included) are clustered by :func:`memviz.mitigate.associations.column_clusters`
    (distance ``1 − association``, average linkage, cut at ``threshold``); the target is
    then removed from its cluster. Each new row copies ``int(λ · K)`` whole clusters
    from ``b`` into a copy of ``a``; otherwise as :func:`tabcutmix`. The clusters (target
    left out) are in ``result.params["clusters"]``.

    ``rule`` (:data:`memviz.mitigate.associations.RULES`):

    * ``"schema"``: the association follows the schema's column kinds, and a cluster that
      held only the target is dropped (``K`` = clusters without the target);
    * ``"dtype"``: the TabCutMix reference's rule: the association follows the pandas dtype
      (integer-coded categoricals are numbers), and a cluster that holds only the target
      still counts in ``K``: drawing it swaps nothing (the reference swaps it, but ``b``
      has ``a``'s class and the label is reset to ``a``'s), so fewer columns change on
      average. It is kept in ``params["clusters"]`` as an empty list.
    """
    if rule not in RULES:
        raise BadOption(f"tabcutmixplus: rule {rule!r} is unknown (use {' or '.join(RULES)})")
    target = table.schema.target
    groups = [[c for c in g if c != target] for g in column_clusters(table, threshold, rule=rule)]
    if rule == "schema":
        groups = [g for g in groups if g]
    params = {"ratio": ratio, "seed": seed, "threshold": threshold, "regression_bins": regression_bins,
              "rule": rule, "clusters": groups}
    return _cutmix(table, groups, ratio=ratio, seed=seed, regression_bins=regression_bins,
                   method="tabcutmixplus", params=params)


# ------------------------------------------------------------------ SMOTE
def _allocate(counts: np.ndarray, n_new: int, balance: bool) -> np.ndarray:
    """New rows per group (G,): proportional to the group sizes (largest remainder), or,
    with ``balance``, water-filling the smallest groups first. Groups of < 2 rows get 0."""
    ok = counts >= 2
    alloc = np.zeros(len(counts), dtype=np.int64)
    if n_new == 0:
        return alloc
    if not balance:
        quota = n_new * np.where(ok, counts, 0) / counts[ok].sum()
        alloc = np.floor(quota).astype(np.int64)
        rest = n_new - alloc.sum()
        alloc[np.argsort(-(quota - alloc), kind="stable")[:rest]] += 1
        return alloc
    lo, hi = int(counts[ok].min()), int(counts[ok].max()) + n_new
    while lo < hi:  # largest level L with Σ max(0, L − n_c) <= n_new
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if np.maximum(0, mid - counts[ok]).sum() <= n_new else (lo, mid - 1)
    alloc[ok] = np.maximum(0, lo - counts[ok])
    rest = n_new - alloc.sum()
    at_level = np.flatnonzero(ok & (counts + alloc == lo))
    alloc[at_level[:rest]] += 1
    return alloc


def _impute_class_means(raw: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Replace missing numericals (n, p) by their class mean (column mean for a class with
    none observed, 0 for an all-missing column), so interpolation stays in the class range."""
    frame = pd.DataFrame(raw)
    col_mean = frame.mean().fillna(0.0)
    filled = frame.fillna(frame.groupby(g).transform("mean")).fillna(col_mean)
    return filled.to_numpy(dtype=float)


def _dense_helpers():
    """SMOTE-NC one-hot encodes into a sparse matrix; sparse neighbour search and sparse
    inverse one-hot are ~3x slower on Adult than dense ones, so densify (same neighbours
    up to floating-point ties)."""
    from sklearn.neighbors import NearestNeighbors  # lazy: sklearn, an extra (train)
    from sklearn.preprocessing import OneHotEncoder  # lazy: sklearn, an extra (train)

    def dense(x):
        return x.toarray() if sparse.issparse(x) else x

    class DenseNearestNeighbors(NearestNeighbors):
        def fit(self, X, y=None):
            return super().fit(dense(X))

        def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
            return super().kneighbors(None if X is None else dense(X), n_neighbors, return_distance)

    class DenseInverseOneHot(OneHotEncoder):
        def inverse_transform(self, X):
            return super().inverse_transform(dense(X))

    return DenseNearestNeighbors, DenseInverseOneHot


def smote(table: Table, *, ratio: float = DEFAULT_RATIO, seed=0, k_neighbors: int = 5, balance: bool = False,
          standardize: bool = True, regression_bins: int = DEFAULT_REGRESSION_BINS) -> MitigationResult:
    """SMOTE augmentation: append ``round(ratio · N)`` interpolated rows.

    Uses imbalanced-learn: SMOTE-NC for mixed tables, SMOTEN when every feature is
    categorical, SMOTE when every feature is numerical. A new row of class c is
    ``x + u (x_nn − x)``, ``u ~ U(0, 1)``, for a row ``x`` of class c and one of its
    ``k`` nearest neighbours ``x_nn`` in class c; with SMOTE-NC each categorical takes
    the most frequent value among the ``k`` neighbours.

    Choices: the new rows are spread over the classes in proportion to the class sizes
    (augmentation, not re-balancing; ``balance=True`` fills the smallest classes first).
    Classes of fewer than 2 rows get no new rows, and ``k`` is lowered to (smallest
    receiving class − 1) when needed. A regression target is a numerical feature and the
    classes are its quantile bins (``regression_bins``); without a target the table is one
    class. For the neighbour search and interpolation, missing numericals are replaced by
    their class mean (so new rows have no missing numericals and stay inside the class's
    observed range) and a missing categorical is a category of its own (so new rows may
    have missing categoricals); with ``standardize`` numericals are z-scored first
    (interpolation is unchanged, only the neighbours change). New numericals are clipped to
    their class's observed range (guards round-off) and rounded for integer columns.
    Without a target, imbalanced-learn (which needs two classes) gets a one-row dummy class
    that receives nothing; SMOTEN's value-difference metric is then uninformative.

    Parameters
    ----------
    ratio : float >= 0
        New rows as a share of N.
    seed : int or numpy.random.Generator
    k_neighbors : int
        Neighbours per class (5, the SMOTE default).
    balance : bool
        Fill the smallest classes first instead of keeping the class proportions.
    standardize : bool
        z-score numericals for the neighbour search.
    regression_bins : int
        Number of target quantile bins (the classes) for a regression target.
    """
    try:
        from imblearn.over_sampling import SMOTE, SMOTEN, SMOTENC  # lazy: imblearn, an extra (train)
    except ImportError:
        raise MissingExtra("smote: needs the package imbalanced-learn (pip install imbalanced-learn)") from None
    if isinstance(k_neighbors, bool) or not isinstance(k_neighbors, numbers.Integral) or k_neighbors < 1:
        raise BadOption(f"smote: k_neighbors must be an integer >= 1, got {k_neighbors!r}")
    params = {"ratio": ratio, "seed": seed, "k_neighbors": k_neighbors, "balance": balance,
              "standardize": standardize, "regression_bins": regression_bins}
    n_new = _n_new(table, ratio, "smote")
    schema, df = table.schema, table.data
    g = _group_codes(table, regression_bins, "smote")  # (n,)
    counts = np.bincount(g)
    if n_new and counts.max() < 2:
        raise BadTable(f"{table.source}: smote needs a class with at least 2 rows")
    alloc = _allocate(counts, n_new, balance)  # (G,)
    if n_new == 0:
        return MitigationResult(_append(table, df.iloc[:0].copy(), "smote"), np.empty(0, np.int64), 0, "smote", params)
    num = list(schema.distance_numerical)
    cat = list(schema.categorical)
    raw = df[num].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)  # (n, p_num)
    raw = _impute_class_means(raw, g)
    mean = raw.mean(0)  # (p_num,)
    sd = raw.std(0) if standardize else np.ones(len(num))
    sd = np.where(sd > 0, sd, 1.0)
    codes = [pd.factorize(df[c], use_na_sentinel=False)[0] for c in cat]
    x = np.column_stack([(raw - mean) / sd] + [c[:, None] for c in codes]).astype(float)  # (n, p)
    y = g.copy()
    strategy = {int(c): int(counts[c] + alloc[c]) for c in range(len(counts))}
    if len(counts) == 1:  # imblearn needs 2 classes: a dummy copy of row 0, dropped below
        x, y = np.vstack([x, x[:1]]), np.append(y, 1)
        strategy[1] = 1
    k = int(min(k_neighbors, counts[alloc > 0].min() - 1))
    rs = int(np.random.default_rng(seed).integers(2 ** 31 - 1))
    if num and cat:
        dense_nn, dense_ohe = _dense_helpers()
        sampler = SMOTENC(categorical_features=list(range(len(num), x.shape[1])), sampling_strategy=strategy,
                          k_neighbors=dense_nn(n_neighbors=k + 1), categorical_encoder=dense_ohe(
                              handle_unknown="ignore"), random_state=rs)
    elif cat:
        sampler = SMOTEN(sampling_strategy=strategy, k_neighbors=k, random_state=rs)
    else:
        sampler = SMOTE(sampling_strategy=strategy, k_neighbors=k, random_state=rs)
    x_res, y_res = sampler.fit_resample(x, y)
    new, cls = np.asarray(x_res[len(x):], dtype=float), np.asarray(y_res[len(x):], dtype=np.int64)  # (m, p), (m,)
    out = {}
    if num:
        grp = pd.DataFrame(raw).groupby(g)
        lo, hi = grp.min().to_numpy()[cls], grp.max().to_numpy()[cls]  # (m, p_num) class range
        vals = np.clip(new[:, :len(num)] * sd + mean, lo, hi)
        for j, col in enumerate(num):
            dtype = df[col].dtype
            v = np.rint(vals[:, j]) if pd.api.types.is_integer_dtype(dtype) else vals[:, j]
            out[col] = pd.array(v).astype(dtype) if not isinstance(dtype, np.dtype) else v.astype(dtype)
    for j, col in enumerate(cat):
        first = pd.Series(np.arange(len(df))).groupby(codes[j]).first().to_numpy()  # code -> a row position
        out[col] = df[col].array.take(first[np.rint(new[:, len(num) + j]).astype(np.int64)])
    if schema.target_is_categorical:
        first = pd.Series(np.arange(len(df))).groupby(g).first().to_numpy()
        out[schema.target] = df[schema.target].array.take(first[cls])
    frame = pd.DataFrame(out)[list(df.columns)]
    return MitigationResult(_append(table, frame, "smote"), np.empty(0, np.int64), n_new, "smote", params)


def _k_nearest(x: np.ndarray, k: int) -> np.ndarray:
    """(n, k) positions of each row's k nearest rows of ``x`` (n, p) by Euclidean distance,
    itself excluded (when a duplicate displaces it from the k + 1 found, the farthest goes)."""
    from sklearn.neighbors import NearestNeighbors  # lazy: sklearn, an extra (train)

    idx = NearestNeighbors(n_neighbors=k + 1).fit(x).kneighbors(x, return_distance=False)  # (n, k+1)
    is_self = idx == np.arange(len(x))[:, None]
    return np.take_along_axis(idx, np.argsort(is_self, axis=1, kind="stable"), axis=1)[:, :k]


def smote_reference(table: Table, *, ratio: float = DEFAULT_RATIO, seed=0, k_neighbors: int = 5) -> MitigationResult:
    """SMOTE as the TabCutMix reference runs it: ``round(ratio · N)`` new rows, all of the
    minority class.

    With c the least frequent class (ties: the first in table order), M its rows and N the
    whole table's size, each new row is built from a base row x drawn uniformly from M and a
    neighbour x' drawn uniformly from x's k nearest rows of M (Euclidean distance on the raw,
    unscaled numericals; x itself excluded), with λ ~ U(0, 1):

    * each numerical:   λ · x + (1 − λ) · x'  (between the two parents; integer columns are
      rounded, which keeps them between the parents);
    * each categorical: x's value, replaced by x''s with probability 0.5, independently per
      column (never a value neither parent has);
    * the target:       c.

    Where memviz differs from the reference code: the count rounds half up (the reference
    truncates, ``int(0.3 · N)``: at most one row fewer); x is excluded from its neighbours
    explicitly (the reference drops the first one found, which a duplicate of x can be); k
    is lowered to |M| − 1 for a small class; missing numericals are replaced by M's column
    mean; without a numerical column every row of M is equally near, so x' is uniform over
    the other rows of M. ``sources`` holds each new row's parents (``a`` = x, ``b`` = x')
    and λ.

    Raises
    ------
    MemvizError
        No class target (regression or none: use :func:`smote`, SMOTE-NC), bad ratio or k.
    BadTable
        A minority class of fewer than 2 rows.
    """
    schema, df = table.schema, table.data
    if not schema.target_is_categorical:
        raise BadTable(f"{table.source}: the reference SMOTE oversamples the minority class and needs a class "
                       "target; use smote_nc")
    if isinstance(k_neighbors, bool) or not isinstance(k_neighbors, numbers.Integral) or k_neighbors < 1:
        raise BadOption(f"smote: k_neighbors must be an integer >= 1, got {k_neighbors!r}")
    n_new = _n_new(table, ratio, "smote_reference")
    params = {"ratio": ratio, "seed": seed, "k_neighbors": k_neighbors}
    codes = pd.factorize(df[schema.target].reset_index(drop=True), use_na_sentinel=False)[0]  # (n,) first-seen order
    members = np.flatnonzero(codes == int(np.argmin(np.bincount(codes))))  # (n_min,) positions of M
    params["minority"] = df[schema.target].iloc[members[0]] if len(members) else None
    if n_new == 0:
        return MitigationResult(_append(table, df.iloc[:0].copy(), "smote_reference"), np.empty(0, np.int64), 0,
                                "smote_reference", params)
    n_min = len(members)
    if n_min < 2:
        raise BadTable(f"{table.source}: the reference SMOTE needs a minority class of at least 2 rows "
                       f"(class {params['minority']!r} has {n_min})")
    k = int(min(k_neighbors, n_min - 1))
    num, cat = list(schema.numerical), list(schema.categorical)
    rng = np.random.default_rng(seed)
    base = rng.integers(0, n_min, n_new)  # (m,) x, as positions in M
    lam = rng.random(n_new)  # (m,)
    if num:
        x = df[num].iloc[members].apply(pd.to_numeric, errors="coerce")
        x = x.fillna(x.mean()).fillna(0.0).to_numpy(dtype=float)  # (n_min, p), missing -> M's mean
        other = _k_nearest(x, k)[base, rng.integers(0, k, n_new)]  # (m,) x' in M
    else:
        other = (base + rng.integers(1, n_min, n_new)) % n_min  # uniform over M without x
    take_other = rng.random((n_new, len(cat))) < 0.5  # (m, q)
    a, b = members[base], members[other]  # (m,) positions in the table
    out = {}
    for j, col in enumerate(num):
        lo, hi = np.minimum(x[base, j], x[other, j]), np.maximum(x[base, j], x[other, j])
        v = np.clip(lam * x[base, j] + (1 - lam) * x[other, j], lo, hi)  # (m,) clip: round-off only
        dtype = df[col].dtype
        v = np.rint(v) if pd.api.types.is_integer_dtype(dtype) else v
        out[col] = pd.array(v).astype(dtype) if not isinstance(dtype, np.dtype) else v.astype(dtype)
    for j, col in enumerate(cat):
        out[col] = df[col].array.take(np.where(take_other[:, j], b, a))
    out[schema.target] = df[schema.target].array.take(a)
    frame = pd.DataFrame(out)[list(df.columns)]
    res = _append(table, frame, "smote_reference")
    ids = table.row_ids
    sources = pd.DataFrame({"a": ids[a], "b": ids[b], "lam": lam}, index=pd.Index(res.row_ids[len(table):], name=ROW_ID))
    return MitigationResult(res, np.empty(0, np.int64), n_new, "smote_reference", params, sources)


# ------------------------------------------------------------------ pruning
def random_removed(row_ids, n_remove: int, *, seed=0) -> np.ndarray:
    """The sorted row_ids :func:`random_prune` removes: ``n_remove`` drawn uniformly without
    replacement from ``row_ids`` (in table order) with ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(np.asarray(row_ids, dtype=np.int64), size=int(n_remove), replace=False)).astype(np.int64)


def random_prune(table: Table, n_remove: int, *, seed=0) -> MitigationResult:
    """Remove exactly ``n_remove`` rows drawn uniformly without replacement (the
    control for DynamicCut, which removes the same number of chosen rows)."""
    if isinstance(n_remove, bool) or not isinstance(n_remove, numbers.Integral) or not 0 <= n_remove <= len(table):
        raise BadOption(f"random_prune: n_remove must be an integer in [0, {len(table)}], got {n_remove!r}")
    removed = random_removed(table.row_ids, int(n_remove), seed=seed)
    out = table.drop(removed)
    return MitigationResult(Table(out.data.copy(), out.schema, f"{table.source} - random_prune"), removed, 0,
                            "random_prune", {"n_remove": int(n_remove), "seed": seed})


def prune(table: Table, row_ids) -> MitigationResult:
    """Remove the rows with these row_ids (duplicates ignored); an id not in the table
    is an error naming it."""
    ids = np.asarray(row_ids).ravel()
    if ids.size and not (np.issubdtype(ids.dtype, np.integer)
                         or (np.issubdtype(ids.dtype, np.floating) and np.all(ids == np.round(ids)))):
        raise BadOption(f"prune: row_ids must be integers, got {ids[:3].tolist()!r}...")
    ids = ids.astype(np.int64)
    unknown = ids[~np.isin(ids, table.row_ids)]
    if unknown.size:
        raise BadTable(f"{table.source}: prune: row_id {int(unknown[0])} is not in the table"
                       + (f" ({unknown.size} unknown ids)" if unknown.size > 1 else ""))
    removed = np.unique(ids)
    out = table.drop(removed)
    return MitigationResult(Table(out.data.copy(), out.schema, f"{table.source} - prune"), removed, 0, "prune",
                            {"n_remove": int(removed.size)})
