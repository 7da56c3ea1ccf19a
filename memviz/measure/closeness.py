"""How close a "copy" really is: gaps in spreads, exact and near-exact flags, identical rows.

The ratio test r = d(g, NN1) / d(g, NN2) < 1/3 is relative (docs/method.md §7). With the paper's
distance the numerical part is min-max scaled over all training rows **for each generated
row**, so the numerically nearest training row always scores 0 on numbers, and a generated
row matching it on every category gets r = 0 however far apart the numbers are (an age-31
training row with "copies" aged 90). This module says, for a generated row g and a training
row x (usually NN1(g)), how far apart they are in the data's own units.

Notation: numerical distance columns j = 1..p, categorical ones k = 1..q (class target
included), as in :mod:`memviz.engine.neighbors`.

Spread of a numerical column (fitted on the training rows, missing values left out)
----------------------------------------------------------------------------------
* s_j = IQR_j = Q75_j − Q25_j, the width of the middle half of the training values;
* where IQR_j = 0 (a column that is mostly one value: Adult's capital-gain is 0 in 92 % of
  rows), s_j = the training standard deviation σ_j;
* where σ_j = 0 too (a constant column), s_j = 1 (original units).

The IQR rather than the range (the standardized distance's scale): a range is set by the
most extreme row, so on capital-gain (range 99,999) a gap of 5,000 would read as 0.05 of
the range, "close", although 5,000 is a rare and identifying amount.

Per pair (g, x)
---------------
* gap_j       = (g_j − x_j) / s_j, signed, in spreads (0 when both are missing, NaN when
              one is: a missing value is never near a present one);
* max_gap     = max_j |gap_j| (∞ when some gap is NaN; 0 when p = 0);
* n_cat_diff  = #{k : g_k ≠ x_k} (canonical values, :func:`memviz.tables.encoding.canonical_series`);
* exact       = every distance column equal: numericals |g_j − x_j| ≤ 1e-9 · max(|g_j|, |x_j|)
              or both missing, categories equal (:func:`cell_matches`);
* near_exact  = not exact, n_cat_diff = 0 and max_gap ≤ NEAR_GAP (0.1 spread: on Adult
              within 2 years of age, 0.5 hours per week, 12,000 of fnlwgt);
* e_num       = ||g_num − x_num||_2 in raw units, missing values replaced by the training
              mean as the engine does;
* zero_by_scaling = (paper distance) r < ZERO_RATIO (5e-4: r shows as 0.000), n_cat_diff = 0
              and e_num > 0 (not exact): a ratio of (about) 0 that comes from the per-row
              min-max scaling, not from equal numbers. r = 0 exactly when NN1 is the
              numerically nearest training row and matches every category; a far-away training
              row (an outlier in a wide column such as fnlwgt) makes max e − min e so large that
              e'(NN1) stays below 1e-3 even for an age gap of 59 years. ``level`` still says
              whether the numbers are in fact near.

Share of identical rows
-----------------------
As mostlyai-qa's identical match share (IMS, "share of synthetic samples that are
identical to a training sample"): identical_share = (1/M) #{g : g equals some training
row on every distance column}. Under either distance d(g, x) = 0 exactly when g equals x
(paper: e(x) = 0 = min e, so e'(x) = 0, and h(x) = 0), so g equals some training row
exactly when it equals NN1(g), and the share is read from the NN1 pairs (ties at d = 0 are
duplicated training rows, equal to each other). The reference for it is the same share among
real rows the model never saw (:attr:`memviz.measure.floor.Floor.n_identical`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadTable
from memviz.tables.data import Table
from memviz.tables.encoding import canonical_series
from memviz.tables.schema import Schema

#: relative tolerance of numerical cell equality
RTOL = 1e-9
#: near-exact: every numerical gap within this many spreads (and every category equal)
NEAR_GAP = 0.1
#: zero_by_scaling: r below this (shown as 0.000)
ZERO_RATIO = 5e-4
LEVELS = ("exact", "near-exact", "differs")


# ----------------------------------------------------------------------- cell equality
def cell_matches(generated: pd.DataFrame, reference: pd.DataFrame, schema: Schema,
                 rtol: float = RTOL) -> pd.DataFrame:
    """Row-by-row (positional) equality of two frames on the schema's distance columns.

    numerical: |g − x| ≤ rtol · max(|g|, |x|) (so 0 equals only 0), or both missing;
    categorical: equal canonical values (``1`` = ``1.0`` = ``"1"``, missing = missing).

    Returns
    -------
    DataFrame of bool, index of ``generated``, the schema columns present in both (schema order).
    """
    if len(generated) != len(reference):
        raise BadTable(f"cannot compare {len(generated)} generated rows with {len(reference)} reference rows")
    num, cat = set(schema.distance_numerical), set(schema.distance_categorical)
    out = {}
    for col in schema.columns:
        if col not in generated.columns or col not in reference.columns:
            continue
        if col in num:
            g, x = _numbers(generated[col]), _numbers(reference[col])
            with np.errstate(invalid="ignore"):
                eq = np.abs(g - x) <= rtol * np.maximum(np.abs(g), np.abs(x))
            out[col] = eq | (np.isnan(g) & np.isnan(x))
        elif col in cat:
            out[col] = canonical_series(generated[col]) == canonical_series(reference[col])
    return pd.DataFrame(out, index=generated.index, dtype=bool)


def _numbers(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)


# ----------------------------------------------------------------------------- spread
@dataclass(frozen=True)
class Spread:
    """Per numerical distance column: its spread s_j and which rule gave it (module docstring).

    columns : the numerical distance columns, schema order.
    values : (p,) float64 s_j > 0.  kinds : ``"IQR"``, ``"std"`` or ``"unit"`` per column.
    means : (p,) training means (the engine's imputation of missing values).
    """

    columns: tuple[str, ...]
    values: np.ndarray
    kinds: tuple[str, ...]
    means: np.ndarray

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"column": list(self.columns), "spread": self.values, "kind": list(self.kinds)})


def fit_spread(train: Table) -> Spread:
    """s_j = IQR, else the standard deviation, else 1, of each numerical distance column of ``train``."""
    cols = tuple(c for c in train.schema.distance_numerical if c in train.data.columns)
    values, kinds, means = [], [], []
    for c in cols:
        v = _numbers(train.data[c])
        v = v[np.isfinite(v)]                                                    # (n,)
        if v.size == 0:
            values.append(1.0), kinds.append("unit"), means.append(0.0)
            continue
        q25, q75 = np.quantile(v, [0.25, 0.75])
        sd = float(np.std(v))
        s, kind = (q75 - q25, "IQR") if q75 > q25 else (sd, "std") if sd > 0 and np.isfinite(sd) else (1.0, "unit")
        values.append(float(s)), kinds.append(kind), means.append(float(np.mean(v)))
    return Spread(cols, np.asarray(values, dtype=np.float64), tuple(kinds), np.asarray(means, dtype=np.float64))


# -------------------------------------------------------------------------- closeness
@dataclass(frozen=True, eq=False)
class Closeness:
    """How close each generated row is to its training row (module docstring).

    pairs : DataFrame, one row per pair (index of the generated rows): exact, near_exact,
        zero_by_scaling, level (``exact`` / ``near-exact`` / ``differs``), n_cat_diff,
        max_gap, worst_column (the numerical column of max_gap, or the first differing
        category when no numerical gap exceeds NEAR_GAP; "" when exact), e_num.
    gaps : DataFrame (n, p), the signed gaps gap_j in spreads.
    match : DataFrame of bool (n, p + q), :func:`cell_matches`.
    spread : the :class:`Spread` used.
    """

    pairs: pd.DataFrame
    gaps: pd.DataFrame
    match: pd.DataFrame
    spread: Spread

    @property
    def identical_share(self) -> float:
        """Share of the pairs that are exact (NaN for none)."""
        return float(self.pairs["exact"].mean()) if len(self.pairs) else float("nan")

    def gap_text(self) -> pd.Series:
        """Per pair, the largest difference in words: ``age +3.1 IQR``, ``workclass differs``,
        ``"none"`` for exact pairs (display only: column names are the user's)."""
        out = []
        where = {c: j for j, c in enumerate(self.spread.columns)}
        units = [{"IQR": "IQR", "std": "SD", "unit": "units"}[k] for k in self.spread.kinds]
        gaps = self.gaps.to_numpy()                                              # (n, p)
        p = self.pairs
        for i, (exact, col, n_cat) in enumerate(zip(p["exact"], p["worst_column"], p["n_cat_diff"])):
            if exact:
                out.append("none")
            elif col in where:
                gap = gaps[i, where[col]]
                out.append(f"{col} missing on one side" if not np.isfinite(gap)
                           else f"{col} {gap:+.2g} {units[where[col]]}")
            else:
                out.append(f"{col} differs" + (f" (+{n_cat - 1} more)" if n_cat > 1 else ""))
        return pd.Series(out, index=p.index, dtype=object)


def closeness(generated: pd.DataFrame, reference: pd.DataFrame, train: Table, *, ratio=None,
              distance: str = "paper", spread: Spread | None = None, rtol: float = RTOL) -> Closeness:
    """How close generated row j is to reference row j, for every j (positional pairs).

    Parameters
    ----------
    generated, reference : DataFrame
        Same length; the schema's columns in original units (``reference`` usually the
        NN1 training rows of ``generated``).
    train : Table
        The training table: its schema, and the spreads when ``spread`` is not given.
    ratio : (n,) array, optional
        r of each generated row; with ``distance="paper"`` it sets ``zero_by_scaling``.
    distance : ``paper`` or ``standardized`` (only the paper's distance has the per-row scaling).
    spread : :func:`fit_spread` of ``train``, when the caller already holds it.

    Returns
    -------
    Closeness
    """
    if len(generated) != len(reference):
        raise BadTable(f"cannot compare {len(generated)} generated rows with {len(reference)} reference rows")
    spread = spread if spread is not None else fit_spread(train)
    schema = train.schema
    match = cell_matches(generated, reference, schema, rtol)                     # (n, p + q)
    n, cols = len(generated), list(spread.columns)
    g = np.column_stack([_numbers(generated[c]) for c in cols]) if cols else np.zeros((n, 0))   # (n, p)
    x = np.column_stack([_numbers(reference[c]) for c in cols]) if cols else np.zeros((n, 0))
    both_missing = np.isnan(g) & np.isnan(x)
    with np.errstate(invalid="ignore", over="ignore"):
        gaps = np.where(both_missing, 0.0, (g - x) / spread.values)              # (n, p), NaN: one side missing
        diff = np.where(np.isnan(g), spread.means, g) - np.where(np.isnan(x), spread.means, x)
        scale = np.max(np.abs(diff), axis=1, initial=0.0)                       # (n,) exact scaling: no overflow
        e_num = scale * np.sqrt(np.sum((diff / np.where(scale > 0, scale, 1.0)[:, None]) ** 2, axis=1))
        abs_gap = np.where(np.isnan(gaps), np.inf, np.abs(gaps))                # (n, p)
    max_gap = abs_gap.max(axis=1, initial=0.0)                                   # (n,)
    cat_cols = [c for c in schema.distance_categorical if c in match.columns]
    cat_diff = ~match[cat_cols].to_numpy() if cat_cols else np.zeros((n, 0), dtype=bool)   # (n, q)
    n_cat_diff = cat_diff.sum(axis=1)
    exact = match.to_numpy().all(axis=1) if match.shape[1] else np.ones(n, dtype=bool)
    near = ~exact & (n_cat_diff == 0) & (max_gap <= NEAR_GAP)
    if ratio is not None and distance == "paper":
        r = np.asarray(ratio, dtype=np.float64)
        if r.shape != (n,):
            raise BadOption(f"ratio: {r.shape[0] if r.ndim == 1 else r.shape} values for {n} generated rows")
        zero = (r < ZERO_RATIO) & (e_num > 0)
    else:
        zero = np.zeros(n, dtype=bool)
    worst = np.full(n, "", dtype=object)
    if cols:
        worst[:] = np.asarray(cols, dtype=object)[np.argmax(abs_gap, axis=1)]
    if cat_cols:
        first_cat = np.asarray(cat_cols, dtype=object)[np.argmax(cat_diff, axis=1)]
        worst = np.where((n_cat_diff > 0) & (max_gap <= NEAR_GAP), first_cat, worst)
    worst = np.where(exact, "", worst)
    zero &= ~exact & (n_cat_diff == 0)
    level = np.where(exact, LEVELS[0], np.where(near, LEVELS[1], LEVELS[2]))
    pairs = pd.DataFrame({"exact": exact, "near_exact": near, "zero_by_scaling": zero, "level": level,
                          "n_cat_diff": n_cat_diff.astype(np.int64), "max_gap": max_gap, "worst_column": worst,
                          "e_num": e_num}, index=generated.index)
    return Closeness(pairs, pd.DataFrame(gaps, index=generated.index, columns=cols), match, spread)


def nn1_closeness(train: Table, generated: pd.DataFrame, nn1, *, ratio=None, distance: str = "paper",
                  spread: Spread | None = None) -> Closeness:
    """:func:`closeness` of generated rows to their NN1 training rows, given by row_id (n,)."""
    ids = np.asarray(nn1, dtype=np.int64)
    pos = train.data.index.get_indexer(ids)
    if (pos < 0).any():
        raise BadOption(f"nn1 {ids[pos < 0][0]} is not a training row_id")
    ref = train.data.iloc[pos].set_axis(generated.index)
    return closeness(generated, ref, train, ratio=ratio, distance=distance, spread=spread)


def summary(c: Closeness, memorized=None) -> dict:
    """Shares over all pairs and over the flagged ones (``memorized``, (n,) bool).

    identical_share (all pairs, mostlyai-qa's IMS); over flagged pairs: n_flagged, and the
    shares flagged_exact, flagged_near_exact, flagged_differs, flagged_zero_by_scaling.
    """
    p = c.pairs
    m = np.ones(len(p), dtype=bool) if memorized is None else np.asarray(memorized, dtype=bool)
    f = p[m]
    share = (lambda s: float(s.mean()) if len(f) else float("nan"))             # noqa: E731
    return {"n_pairs": int(len(p)), "identical_share": c.identical_share, "n_identical": int(p["exact"].sum()),
            "n_flagged": int(m.sum()), "flagged_exact": share(f["exact"]), "flagged_near_exact": share(f["near_exact"]),
            "flagged_differs": share(f["level"] == LEVELS[2]), "flagged_zero_by_scaling": share(f["zero_by_scaling"]),
            "n_zero_by_scaling": int(f["zero_by_scaling"].sum())}
