"""Pairwise association between columns and clusters of correlated columns.

Used by TabCutMixPlus (:func:`memviz.mitigate.augment.tabcutmixplus`), which swaps whole
clusters of correlated columns instead of single columns.

Association of two columns, always in [0, 1]:

* numerical–numerical: ``|r|``, the absolute Pearson correlation;
* categorical–categorical: Cramér's V with Bergsma's (2013) bias correction;
* categorical–numerical: the correlation ratio ``η = sqrt(η²)``.

Which measure a pair gets depends on the column kinds, chosen by a ``rule``:

* ``"schema"`` (memviz's default): kinds follow the memorization distance, so a
  classification target is categorical and a regression target numerical, and an
  integer-coded categorical (Default's ``PAY_*``) is categorical;
* ``"dtype"`` (the TabCutMix reference's rule): kinds follow the pandas dtype, so every
  integer or float column (bool excluded) is numerical, whatever its role, and every other
  column categorical; as in the reference (scipy's ``chi2_contingency``), Pearson's χ² of
  a 2 × 2 table then has Yates' continuity correction. The reference tests the dtypes
  ``int64`` / ``float64`` exactly; here any integer or float width counts as numerical.

Missing values: a missing numerical is replaced by its column mean, a missing categorical
is a category of its own. A constant column has association 0 with every other column
(1 with itself).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from memviz.errors import BadOption
from memviz.tables.data import Table

DEFAULT_THRESHOLD = 0.3
#: how the column kinds (hence the association measure) are chosen; "schema" is the default
RULES = ("schema", "dtype")


# ------------------------------------------------------------------ encodings
def _codes(values) -> tuple[np.ndarray, int]:
    """Integer codes of a categorical column (missing is a category of its own)."""
    codes, uniques = pd.factorize(pd.Series(values).reset_index(drop=True), use_na_sentinel=False)
    return codes.astype(np.int64), max(len(uniques), 1)


def _standardized(values) -> np.ndarray:
    """z-scores of a numerical column after mean imputation; all zeros if constant."""
    x = pd.to_numeric(pd.Series(values).reset_index(drop=True), errors="coerce").to_numpy(dtype=float)
    mean = np.nanmean(x) if np.isfinite(x).any() else 0.0
    x = np.where(np.isnan(x), mean, x) - mean
    sd = x.std()
    return x / sd if sd > 0 else np.zeros_like(x)


# ------------------------------------------------------------------ measures
def _cramers_v_codes(cx: np.ndarray, kx: int, cy: np.ndarray, ky: int, bias_correction: bool,
                     yates: bool = False) -> float:
    n = len(cx)
    if n < 2 or kx < 2 or ky < 2:
        return 0.0
    obs = np.bincount(cx * ky + cy, minlength=kx * ky).reshape(kx, ky).astype(float)  # (kx, ky)
    rows, cols = obs.sum(1), obs.sum(0)
    if yates and kx == 2 and ky == 2:
        # Yates: each O_ij moves by min(0.5, |E_ij − O_ij|) towards E_ij = r_i c_j / n
        exp = np.outer(rows, cols) / n  # (2, 2)
        adj = obs + np.sign(exp - obs) * np.minimum(0.5, np.abs(exp - obs))
        chi2 = float(((adj - exp) ** 2 / exp).sum())
    else:
        # Pearson chi² = n (Σ O_ij² / (r_i c_j) − 1); empty rows/columns cannot occur (codes are dense)
        chi2 = n * ((obs ** 2 / np.outer(rows, cols)).sum() - 1.0)
    phi2 = max(chi2 / n, 0.0)
    r, k = kx, ky
    if bias_correction:
        # Bergsma (2013): φ²~ = max(0, φ² − (k−1)(r−1)/(n−1)), r~ = r − (r−1)²/(n−1), same for k
        phi2 = max(0.0, phi2 - (k - 1) * (r - 1) / (n - 1))
        r = r - (r - 1) ** 2 / (n - 1)
        k = k - (k - 1) ** 2 / (n - 1)
    denom = min(k - 1, r - 1)
    return float(np.clip(np.sqrt(phi2 / denom), 0.0, 1.0)) if denom > 0 else 0.0


def cramers_v(x, y, *, bias_correction: bool = True) -> float:
    """Cramér's V of two categorical arrays (missing is a category of its own).

    ``V = sqrt(φ² / min(k − 1, r − 1))`` with ``φ² = χ² / n`` (Pearson's χ², no Yates
    continuity correction), for an ``r × k`` contingency table of ``n`` rows. With
    ``bias_correction`` (Bergsma 2013)::

        φ²~ = max(0, φ² − (k − 1)(r − 1) / (n − 1))
        r~  = r − (r − 1)² / (n − 1),   k~ = k − (k − 1)² / (n − 1)
        V~  = sqrt(φ²~ / min(k~ − 1, r~ − 1))

    Returns 0 when a column has a single category.
    """
    cx, kx = _codes(x)
    cy, ky = _codes(y)
    if len(cx) != len(cy):
        raise BadOption(f"cramers_v: arrays of different lengths ({len(cx)} and {len(cy)})")
    return _cramers_v_codes(cx, kx, cy, ky, bias_correction)


def _eta_codes(codes: np.ndarray, k: int, z: np.ndarray) -> np.ndarray:
    """η of one categorical (codes) against standardized numericals ``z`` (n, p) -> (p,)."""
    n = len(codes)
    onehot = sparse.csr_matrix((np.ones(n), (codes, np.arange(n))), shape=(k, n))  # (k, n)
    sums = np.asarray(onehot @ z)  # (k, p): Σ_{i in c} z_i
    counts = np.bincount(codes, minlength=k).astype(float)[:, None]  # (k, 1)
    # z has mean 0 and Σ z² = n (or is all zero): η² = Σ_c n_c z̄_c² / n
    eta2 = (sums ** 2 / np.maximum(counts, 1)).sum(0) / n
    return np.sqrt(np.clip(eta2, 0.0, 1.0))


def correlation_ratio(categories, values) -> float:
    """Correlation ratio η of a numerical array given a categorical one.

    ``η² = Σ_c n_c (ȳ_c − ȳ)² / Σ_i (y_i − ȳ)²`` (between-class over total sum of
    squares); returns ``η = sqrt(η²)``, 0 for a constant ``values``. Missing values:
    mean-imputed numbers, missing category as a category of its own.
    """
    codes, k = _codes(categories)
    z = _standardized(values)
    if len(codes) != len(z):
        raise BadOption(f"correlation_ratio: arrays of different lengths ({len(codes)} and {len(z)})")
    return float(_eta_codes(codes, k, z[:, None])[0])


# ------------------------------------------------------------------ matrix
def _check_rule(rule: str) -> str:
    if rule not in RULES:
        raise BadOption(f"cluster rule {rule!r}: unknown (use {' or '.join(RULES)})")
    return rule


def numeric_columns(table: Table, rule: str = "schema") -> list[str]:
    """The columns a ``rule`` treats as numerical (module docstring), in schema order."""
    schema, df = table.schema, table.data
    if _check_rule(rule) == "schema":
        return [c for c in schema.columns if c in schema.distance_numerical]
    return [c for c in schema.columns
            if pd.api.types.is_numeric_dtype(df[c].dtype) and not pd.api.types.is_bool_dtype(df[c].dtype)]


def association_matrix(table: Table, rule: str = "schema") -> pd.DataFrame:
    """Association of every pair of the table's columns (target included).

    Returns a symmetric DataFrame indexed and labelled by ``schema.columns``, with 1 on
    the diagonal and values in [0, 1]: ``|Pearson r|`` for two numericals, bias-corrected
    Cramér's V (:func:`cramers_v`) for two categoricals, correlation ratio η
    (:func:`correlation_ratio`) for a categorical and a numerical. ``rule`` picks the
    column kinds (:data:`RULES`, module docstring).
    """
    schema, df = table.schema, table.data
    cols = list(schema.columns)
    num = numeric_columns(table, rule)
    cat = [c for c in cols if c not in num]
    yates = rule == "dtype"
    pos = {c: i for i, c in enumerate(cols)}
    a = np.zeros((len(cols), len(cols)))
    n = len(df)
    if num:
        z = np.column_stack([_standardized(df[c]) for c in num])  # (n, p_num)
        r = np.abs(z.T @ z) / max(n, 1)  # |Pearson| (zero rows for constant columns)
        idx = [pos[c] for c in num]
        a[np.ix_(idx, idx)] = r
    codes = {c: _codes(df[c]) for c in cat}
    for i, ci in enumerate(cat):
        for cj in cat[i + 1:]:
            v = _cramers_v_codes(*codes[ci], *codes[cj], bias_correction=True, yates=yates)
            a[pos[ci], pos[cj]] = a[pos[cj], pos[ci]] = v
        if num:
            eta = _eta_codes(*codes[ci], z)  # (p_num,)
            for cn, e in zip(num, eta):
                a[pos[ci], pos[cn]] = a[pos[cn], pos[ci]] = e
    a = np.clip(a, 0.0, 1.0)
    np.fill_diagonal(a, 1.0)
    return pd.DataFrame(a, index=cols, columns=cols)


def column_clusters(table: Table, threshold: float = DEFAULT_THRESHOLD, *,
                    drop_target: bool = False, rule: str = "schema") -> list[list[str]]:
    """Clusters of correlated columns (TabCutMixPlus).

    Distance ``d(i, j) = 1 − association(i, j)`` (:func:`association_matrix`, target
    included); average-linkage agglomerative clustering, cut where the cophenetic
    distance exceeds ``threshold`` (``scipy.cluster.hierarchy.fcluster`` with
    ``criterion="distance"``): columns in one cluster have mean association of at least
    ``1 − threshold`` at every merge.

    Parameters
    ----------
    threshold : float >= 0
        Distance at which the dendrogram is cut (0.3 as in the TabCutMix paper).
    drop_target : bool
        Remove the target from its cluster after clustering (and drop the cluster if it
        held only the target); TabCutMixPlus never swaps the target.
    rule : ``"schema"`` or ``"dtype"``, the association rule of :func:`association_matrix`.

    Returns
    -------
    list of list of str
        Clusters in the order of their first column in ``schema.columns``, columns in
        schema order.
    """
    if not np.isfinite(threshold) or threshold < 0:
        raise BadOption(f"column_clusters: threshold must be a number >= 0, got {threshold!r}")
    _check_rule(rule)
    cols = list(table.schema.columns)
    if len(cols) == 1:
        groups = [cols]
    else:
        dist = 1.0 - association_matrix(table, rule).to_numpy()
        np.fill_diagonal(dist, 0.0)
        tree = linkage(squareform(dist, checks=False), method="average")
        labels = fcluster(tree, t=threshold, criterion="distance")
        groups = {}
        for c, lab in zip(cols, labels):
            groups.setdefault(lab, []).append(c)
        groups = list(groups.values())  # dict keeps first-seen order = schema order
    if drop_target and table.schema.target is not None:
        groups = [[c for c in g if c != table.schema.target] for g in groups]
        groups = [g for g in groups if g]
    return groups


def cluster_rules(table: Table, threshold: float = DEFAULT_THRESHOLD) -> dict[str, list[list[str]]]:
    """The clusters (target included) each association rule gives for ``table``:
    ``{"schema": [...], "dtype": [...]}`` (:func:`column_clusters` with each of :data:`RULES`)."""
    return {rule: column_clusters(table, threshold, rule=rule) for rule in RULES}
