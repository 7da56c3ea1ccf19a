"""Per-row risk factors of a training table, from the table alone (no model, no warm-up).

For training row i of N, with the memorization distance d (:mod:`memviz.engine.neighbors`, the one
engine; the audit's ``paper`` distance by default) and its nearest *other* training rows
j_1(i), j_2(i), ... (ties to the lowest position, the row itself left out):

* **isolation**        I_i = d(i, j_k(i)), the distance to the k-th nearest other row (k = 5 by default;
  Meeus et al. 2023 rank records by their distance to their nearest neighbours);
  against the table's distribution: the ratio ρ_i = I_i / median_j I_j and the percentile
  π_i = #{j : I_j < I_i} / N ("more isolated than π_i of the rows");
* **nearest**          D_i = d(i, j_1(i)), the distance to the nearest other row;
* **exact duplicates** E_i = #{j ≠ i : x_j = x_i on every distance column} (missing equals missing);
* **near duplicates**  A_i = #{j ≠ i : 0 < d(i, j) ≤ δ · median_j I_j} among the ``n_near`` nearest
  other rows (δ = 0.1 by default: a tenth of a typical row's isolation; counted up to ``n_near``);
* **value rarity**     v_i = min over categorical columns c of n_c(x_ic) / N, the share of rows that share
  the row's rarest value (and which column holds it);
* **pair rarity**      w_i = min over pairs of categorical columns (c, c') of n_cc'(x_ic, x_ic') / N, the
  share of rows sharing the row's rarest pair of values (and which pair; ties to the pair whose
  values are the most common alone, so the pair names a combination rarer than its values);
* **combination**      m_i = #{j : x_j = x_i on every categorical column} (the row itself included);
* **extremeness**      t_i = min over numerical columns c of min(#{j : x_jc ≤ x_ic}, #{j : x_jc ≥ x_ic}) / N,
  the share of rows as far out on the same side as the row's most extreme value (and which column);
  missing values are left out of their column.

Categorical columns are the distance's (a class target counts); numerical columns likewise. Every count
includes the row itself where said, so a value no other row holds has n = 1.

:func:`isolation_order` is the pre-training ranking (most isolated first, ties to the lowest row_id), which
the ``isolation`` method of :mod:`memviz.compare.methods` prunes by.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption
from memviz.tables.data import ROW_ID, Table
from memviz.tables.encoding import canonical_series

#: the neighbour whose distance is a row's isolation (Meeus et al. 2023 use the 5 nearest)
DEFAULT_K = 5
#: a near duplicate lies within this share of the table's median isolation
NEAR_SHARE = 0.1
#: near duplicates are counted among this many nearest other rows
N_NEAR = 10
#: the distance of the factors: the memorization test's (audit, warm-up), so isolation speaks its metric
DEFAULT_DISTANCE = "paper"

#: the factor columns of :attr:`RiskFactors.frame` that a model reads (numbers; the *_column ones name where)
FACTORS = ("isolation", "isolation_ratio", "isolation_pct", "nearest", "exact_duplicates", "near_duplicates",
           "value_rarity", "pair_rarity", "combination_count", "extremeness")
#: what each factor is, in the user's words (the "why these rows" panel and ``memviz explain``)
FACTOR_WORDS = {
    "isolation": "isolation (the distance to its k-th nearest other row)",
    "isolation_ratio": "isolation against a typical row's (ratio to the median)",
    "isolation_pct": "the share of rows less isolated",
    "nearest": "the distance to its nearest other row",
    "exact_duplicates": "its exact duplicates in the table",
    "near_duplicates": "its near duplicates in the table",
    "value_rarity": "the share of rows holding its rarest value",
    "pair_rarity": "the share of rows holding its rarest pair of values",
    "combination_count": "the rows sharing all its categories",
    "extremeness": "the share of rows as extreme on its most extreme number",
}
#: a factor in two or three words (figures, sentences)
FACTOR_SHORT = {"isolation": "isolation", "isolation_ratio": "isolation ratio", "isolation_pct": "isolation rank",
                "nearest": "nearest-row distance", "exact_duplicates": "exact duplicates",
                "near_duplicates": "near duplicates", "value_rarity": "rarest value", "pair_rarity": "rarest pair",
                "combination_count": "shared categories", "extremeness": "extreme number"}


@dataclass(frozen=True)
class RiskFactors:
    """The factors of every training row (module docstring).

    frame : one row per training row, indexed by ``row_id`` in table order: the columns of :data:`FACTORS`
        and ``rarest_value_column``, ``rarest_pair`` ("c | c'"), ``extreme_column`` (None where the table
        has no such column).
    k, distance, near_share : the settings.  median_isolation : median_j I_j.
    seconds : wall time of the computation (the pre-training ranking's cost).
    """

    frame: pd.DataFrame
    k: int
    distance: str
    near_share: float
    median_isolation: float
    seconds: float

    @property
    def row_ids(self) -> np.ndarray:
        return self.frame.index.to_numpy(dtype=np.int64)

    def order(self) -> np.ndarray:
        """row_ids, most isolated first (:func:`isolation_order`)."""
        return isolation_order(self.frame["isolation"].to_numpy(dtype=np.float64), self.row_ids)


def isolation_order(isolation: np.ndarray, row_ids: np.ndarray) -> np.ndarray:
    """row_ids by isolation, largest first, ties to the lowest row_id (as DynamicCut's ranking breaks them)."""
    iso = np.asarray(isolation, dtype=np.float64)
    ids = np.asarray(row_ids, dtype=np.int64)
    return ids[np.lexsort((ids, -iso))]


def risk_factors(train: Table, *, k: int = DEFAULT_K, distance: str = DEFAULT_DISTANCE,
                 near_share: float = NEAR_SHARE, n_near: int = N_NEAR, device: str = "cpu",
                 engine: NeighborEngine | None = None) -> RiskFactors:
    """Every factor of every row of ``train`` (module docstring).

    Parameters
    ----------
    train : the training table.
    k : the neighbour of the isolation, 1 ≤ k < N.
    distance : ``paper`` (default) or ``standardized``.
    near_share : δ of the near duplicates, > 0.
    n_near : near duplicates are counted among this many nearest other rows.
    device : of the engine.
    engine : a :class:`~memviz.engine.neighbors.NeighborEngine` already fitted on ``train`` with ``distance``
        (reused; e.g. the audit's).
    """
    n = len(train)
    if isinstance(k, bool) or int(k) != k or not 1 <= int(k) < n:
        raise BadOption(f"{train.source}: isolation's k={k!r} must be a whole number from 1 to {n - 1} "
                        f"(the table has {n} rows)")
    if not near_share > 0:
        raise BadOption(f"near_share {near_share!r}: must be > 0")
    k = int(k)
    t0 = time.perf_counter()
    dist = other_distances(train, max(k, int(n_near)), distance=distance, device=device, engine=engine)
    iso = dist[:, k - 1]
    med = float(np.median(iso))
    radius = near_share * med
    frame = pd.DataFrame({"isolation": iso}, index=pd.Index(train.row_ids, name=ROW_ID))
    frame["isolation_ratio"] = iso / med if med > 0 else np.where(iso > 0, np.inf, 1.0)
    frame["isolation_pct"] = np.searchsorted(np.sort(iso), iso, side="left") / n
    frame["nearest"] = dist[:, 0]
    frame["exact_duplicates"] = _exact_duplicates(train)
    frame["near_duplicates"] = ((dist > 0) & (dist <= radius)).sum(axis=1).astype(np.int64)
    frame = frame.join(_categorical_rarity(train)).join(_extremeness(train))
    return RiskFactors(frame[list(FACTORS) + ["rarest_value_column", "rarest_pair", "extreme_column"]], k,
                       distance, float(near_share), med, time.perf_counter() - t0)


def other_distances(train: Table, k: int, *, distance: str = DEFAULT_DISTANCE, device: str = "cpu",
                    engine: NeighborEngine | None = None) -> np.ndarray:
    """(N, min(k, N - 1)) distances of each row to its nearest other rows, nearest first (the engine's query
    of the table against itself, with each row itself left out)."""
    n = len(train)
    if engine is None:
        engine = NeighborEngine(distance=distance, device=device).fit(train)
    nb = engine.kneighbors(train, k=min(n, int(k) + 1))
    return _others(nb.pos, nb.dist)


def isolation_scores(train: Table, k: int = DEFAULT_K, *, distance: str = DEFAULT_DISTANCE,
                     device: str = "cpu") -> np.ndarray:
    """(N,) I_i = d(i, j_k(i)) in table order: the isolation alone (the pre-training ranking's score)."""
    n = len(train)
    if isinstance(k, bool) or int(k) != k or not 1 <= int(k) < n:
        raise BadOption(f"{train.source}: isolation's k={k!r} must be a whole number from 1 to {n - 1} "
                        f"(the table has {n} rows)")
    return other_distances(train, int(k), distance=distance, device=device)[:, int(k) - 1]


def _others(pos: np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Each row's neighbour distances with itself left out: its own position where it is listed, else the
    last entry (then K rows at distance 0 precede it: exact duplicates at lower positions)."""
    n, K = pos.shape
    own = pos == np.arange(n)[:, None]                                       # (N, K)
    drop = np.where(own.any(axis=1), own.argmax(axis=1), K - 1)
    keep = np.ones_like(own)
    keep[np.arange(n), drop] = False
    return dist[keep].reshape(n, K - 1)


def _canonical(train: Table, columns) -> pd.DataFrame:
    return pd.DataFrame({c: canonical_series(train.data[c]) for c in columns}, index=train.data.index)


def _exact_duplicates(train: Table) -> np.ndarray:
    """E_i: other rows equal on every distance column (numbers and categories as canonical text)."""
    s = train.schema
    cols = list(s.distance_numerical) + list(s.distance_categorical)
    canon = _canonical(train, cols)
    sizes = canon.groupby(cols, sort=False, dropna=False)[cols[0]].transform("size").to_numpy()
    return (sizes - 1).astype(np.int64)


def _categorical_rarity(train: Table) -> pd.DataFrame:
    """value_rarity, rarest_value_column, pair_rarity, rarest_pair, combination_count (module docstring)."""
    cats = list(train.schema.distance_categorical)
    n = len(train)
    out = pd.DataFrame(index=train.data.index)
    if not cats:
        out["value_rarity"], out["rarest_value_column"] = 1.0, None
        out["pair_rarity"], out["rarest_pair"] = 1.0, None
        out["combination_count"] = n
        return out
    canon = _canonical(train, cats)
    single = np.column_stack([canon.groupby(c, sort=False)[c].transform("size").to_numpy() for c in cats])  # (N, q)
    j = single.argmin(axis=1)
    out["value_rarity"] = single[np.arange(n), j] / n
    out["rarest_value_column"] = np.array(cats, dtype=object)[j]
    if len(cats) >= 2:
        pairs = list(combinations(range(len(cats)), 2))
        counts = np.column_stack([canon.groupby([cats[a], cats[b]], sort=False)[cats[a]].transform("size").to_numpy()
                                  for a, b in pairs])                         # (N, P)
        alone = np.column_stack([np.minimum(single[:, a], single[:, b]) for a, b in pairs])
        # the rarest pair; among equally rare pairs, the one whose values are the most common alone
        best = _argmin_then_max(counts, alone)
        out["pair_rarity"] = counts[np.arange(n), best] / n
        names = np.array([f"{cats[a]} | {cats[b]}" for a, b in pairs], dtype=object)
        out["rarest_pair"] = names[best]
    else:
        out["pair_rarity"], out["rarest_pair"] = out["value_rarity"], None
    out["combination_count"] = canon.groupby(cats, sort=False)[cats[0]].transform("size").to_numpy().astype(np.int64)
    return out


def _argmin_then_max(primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
    """Per row, the column with the smallest ``primary``, ties to the largest ``secondary``, then the first."""
    m = primary.min(axis=1, keepdims=True)
    sec = np.where(primary == m, secondary, -np.inf)
    return sec.argmax(axis=1)


def _extremeness(train: Table) -> pd.DataFrame:
    """extremeness and extreme_column (module docstring)."""
    nums = list(train.schema.distance_numerical)
    n = len(train)
    out = pd.DataFrame(index=train.data.index)
    if not nums:
        out["extremeness"], out["extreme_column"] = 1.0, None
        return out
    tails = np.full((n, len(nums)), np.inf)
    for c, col in enumerate(nums):
        v = pd.to_numeric(train.data[col], errors="coerce").to_numpy(dtype=np.float64)
        ok = np.isfinite(v)
        s = np.sort(v[ok])
        below = np.searchsorted(s, v[ok], side="right")                      # #{x_j ≤ x_i}
        above = len(s) - np.searchsorted(s, v[ok], side="left")              # #{x_j ≥ x_i}
        tails[ok, c] = np.minimum(below, above) / n
    j = tails.argmin(axis=1)
    t = tails[np.arange(n), j]
    out["extremeness"] = np.where(np.isfinite(t), t, 1.0)
    out["extreme_column"] = np.where(np.isfinite(t), np.array(nums, dtype=object)[j], None)
    return out
