"""The data-copying test of Meehan, Chaudhuri & Dasgupta (AISTATS 2020), cell by cell.

A model copies when its rows lie *closer* to the training rows than fresh real rows do. With
T the training rows, Q the generated rows (m), P the hold-out rows (n, real rows the model never
saw) and a partition of the space into cells π:

* cells: k-means (:func:`kmeans`: k-means++ seeding, Lloyd's iterations) with k = ``n_cells`` on the training rows, in the coordinates of the engine's
  encoding: each numerical column standardized by its training range, (x − min) / range
  (missing values at the training mean), and each categorical column one-hot at weight 1/√2,
  so that squared Euclidean distance there is Σ_j Δz_j² + h (h: categorical mismatches). Fitted
  on at most :data:`KMEANS_ROWS` training rows (seeded), every row then assigned to its nearest
  centre. Default k = min(:data:`MAX_CELLS`, ⌊n / :data:`HOLDOUT_PER_CELL`⌋), at least 2: 10 cells
  of at least 100 hold-out rows each.
* each generated or hold-out row x belongs to the cell of its nearest training row NN1(x)
  (cells are then unions of the training rows' Voronoi regions: a partition of the space fixed
  by T alone), and L(x) = d(x, NN1(x)) = d(x, T) = d(x, T_π): the distance to the nearest
  training row of its cell, as in the authors' code, obtained from one search over all of T (the
  one engine fitted on T, scaled by T) instead of one per cell. That search is exactly what the
  ratio test's pass over the generated rows (its NN1) and the floor's pass over the hold-out
  compute, so with the same distance the test needs no further neighbour search
  (:func:`memviz.evidence.suite.audit_evidence` passes them in). Without NN1 positions (only
  ``distances``), x goes to its nearest k-means centre;
  Z_U(π) = the Mann–Whitney z of L(Q_π) against L(P_π) (:mod:`memviz.evidence.ranktests`, with
  the tie correction, without the continuity correction). Z_U < 0: the generated rows of the
  cell are closer to the training rows than fresh rows are.
* cells enter the statistic when they hold more than τ·m generated rows, τ·m = ``min_generated``
  (default 20: a cell the model rarely visits says nothing about copying; the paper's Π_τ) and
  at least one hold-out row;
* C_T = Σ_{π ∈ Π_τ} P_n(π) Z_U(π) / Σ_{π ∈ Π_τ} P_n(π), P_n(π) = share of hold-out rows in π
  (the paper's statistic). **C_T < 0 reads as copying, C_T > 0 as under-fitting** (generated
  rows farther than fresh ones), about 0 as neither.
* significance (memviz's addition): under no copying the Z_U(π) are independent and about
  N(0, 1), so C_T has variance Σ w_π² with w_π = P_n(π) / Σ P_n; z = C_T / sqrt(Σ w_π²), and the
  one-sided p-value of copying is Φ(z). Per cell p_π = Φ(Z_U(π)) with Benjamini–Hochberg
  q-values over Π_τ; a cell **copies** when q_π ≤ ``alpha`` (default 0.05).

The cells are described in the user's units: per numerical column the median of the cell's
training rows, per categorical column its most common value, the three columns that set the
cell most apart from the whole table first.

Default distance: the standardized one (:mod:`memviz.evidence.membership` says why).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from memviz.errors import BadOption
from memviz.measure.closeness import fit_spread
from memviz.tables.holdout import CheckedHoldout, as_table, checked_holdout
from memviz.evidence.membership import DEFAULT_DISTANCE, check_distance
from memviz.engine.neighbors import NeighborEngine
from memviz.evidence.ranktests import json_safe, mann_whitney_z, one_sided_p
from memviz.measure.multiplicity import bh_qvalues
from memviz.tables.data import Table
from memviz.tables.encoding import Encoder, canonical_series

MAX_CELLS = 10
HOLDOUT_PER_CELL = 100
#: τ·m: a cell enters C_T with more generated rows than this
MIN_GENERATED = 20
#: k-means is fitted on at most this many training rows
KMEANS_ROWS = 5_000
#: Lloyd iterations at most
KMEANS_ITER = 100
ALPHA = 0.05
#: columns named in a cell's description
DESCRIBED_COLUMNS = 3
FORMAT = "memviz.measure.datacopying/1"  # a format name, kept when the module moved


@dataclass(frozen=True, eq=False)
class DataCopyingResult:
    """The test's figures (module docstring).

    c_t : the paper's statistic; z, p_value : its standardization and one-sided p of copying.
    cells : one row per cell: cell, n_train, n_holdout, n_synthetic, holdout_share, synthetic_share,
        z, p_value, q_value, included (in Π_τ), copies, description (in the user's values), columns (the
        columns that set it apart, names only: what a redacted text may say), and the distances a person checks there
        (:func:`cell_distances`: median_synthetic, median_holdout, close_synthetic, close_expected).
    centres : per cell {column: median or most common value} in the user's units.
    rows : per training row: row_id, cell, in_copying_cell (its cell copies).
    synthetic_cells, holdout_cells : (m,), (n,) the cell of each generated and hold-out row (None: not kept).
    synthetic_distances, holdout_distances : (m,), (n,) L of each generated and hold-out row (None: not kept).
    """

    distance: str
    n_cells: int
    min_generated: int
    alpha: float
    c_t: float
    z: float
    p_value: float
    cells: pd.DataFrame
    centres: tuple
    rows: pd.DataFrame
    n_train: int
    n_holdout: int
    n_synthetic: int
    seed: int = 0
    seconds: float = 0.0
    synthetic_cells: np.ndarray | None = None
    holdout_cells: np.ndarray | None = None
    synthetic_distances: np.ndarray | None = None
    holdout_distances: np.ndarray | None = None

    def cell_distances(self, cell: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(L of the generated rows, L of the hold-out rows) inside ``cell`` (None: not kept)."""
        if self.synthetic_cells is None or self.synthetic_distances is None:
            return None
        return (self.synthetic_distances[self.synthetic_cells == cell],
                self.holdout_distances[self.holdout_cells == cell])

    @property
    def copying(self) -> bool:
        return bool(self.p_value < self.alpha)

    @property
    def flags_copying(self) -> bool:
        """Supporting evidence of copying for the audit's verdict (:mod:`memviz.verdict.verdict`): :attr:`copying`."""
        return self.copying

    @property
    def copying_cells(self) -> pd.DataFrame:
        return self.cells[self.cells["copies"]].sort_values("z")

    def to_dict(self) -> dict:
        cells = [{k: getattr(r, k) for k in ("cell", "n_train", "n_holdout", "n_synthetic", "holdout_share",
                                             "synthetic_share", "z", "p_value", "q_value", "included", "copies",
                                             "description", "median_synthetic", "median_holdout",
                                             "close_synthetic", "close_expected") if hasattr(r, k)}
                 for r in self.cells.itertuples()]
        return json_safe({
            "format": FORMAT, "test": "data_copying", "distance": self.distance, "n_cells": self.n_cells,
            "min_generated": self.min_generated, "alpha": self.alpha, "c_t": self.c_t, "z": self.z,
            "p_value": self.p_value, "copying": self.copying, "flags_copying": self.flags_copying, "n_copying_cells": int(self.cells["copies"].sum()),
            "copying_share": float(self.cells.loc[self.cells["copies"], "holdout_share"].sum()),
            "cells": cells, "n_train": self.n_train, "n_holdout": self.n_holdout, "n_synthetic": self.n_synthetic,
            "seed": self.seed, "figures": self.figures(), "seconds": self.seconds})

    def figures(self) -> dict:
        """The headline figures under their :data:`memviz.metrics.EVIDENCE_METRICS` keys."""
        return {"data_copying_ct": self.c_t, "data_copying_p": self.p_value,
                "data_copying_share": float(self.cells.loc[self.cells["copies"], "holdout_share"].sum())}



# ------------------------------------------------------------------ cells
def cell_arrays(encoder: Encoder, df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(n, p) standardized numericals and (n, q) category codes of ``df`` under ``encoder``."""
    enc = encoder.transform(df)
    z = encoder.standardize(enc.num) if enc.num.shape[1] else np.zeros((len(df), 0))
    return z, enc.cat


#: the one-hot weight of a category: squared Euclidean distance there adds 2 w² = 1 per mismatch
ONE_HOT = 1.0 / math.sqrt(2.0)


@dataclass(frozen=True)
class CellSpace:
    """The k-means coordinates x = [z | w·onehot(cat_1) | … | w·onehot(cat_q)] (D = p + Σ sizes),
    held as the arrays and never as the (n, D) matrix.

    z : (n, p) standardized numericals (non-finite entries at 0); cat : (n, q) codes (-1: none);
    sizes : (q,) categories per column. With c = [c_z | c_1 | … | c_q] a centre (D,),

        ‖x − c‖² = Σ_j (z_j − c_z,j)² + Σ_l (‖c_l‖² − 2 w c_l[cat_l] + w² [cat_l ≥ 0]).
    """

    z: np.ndarray
    cat: np.ndarray
    sizes: tuple

    @classmethod
    def of(cls, encoder: Encoder, z: np.ndarray, cat: np.ndarray) -> "CellSpace":
        """From :func:`cell_arrays`' (or a standardized engine's) arrays."""
        return cls(np.nan_to_num(z, nan=0.0, posinf=0.0, neginf=0.0), np.asarray(cat),
                   tuple(int(s) for s in encoder.n_categories))

    def __len__(self) -> int:
        return len(self.z)

    @cached_property
    def offsets(self) -> np.ndarray:
        """(q + 1,) where each column's one-hot block starts in D, then D (formed once)."""
        return self.z.shape[1] + np.concatenate([[0], np.cumsum(self.sizes, dtype=np.int64)])

    def take(self, rows: np.ndarray) -> "CellSpace":
        return CellSpace(self.z[rows], self.cat[rows], self.sizes)

    def row(self, i: int) -> np.ndarray:
        """(D,) row i as a dense vector."""
        out = np.zeros(int(self.offsets[-1]))
        out[: self.z.shape[1]] = self.z[i]
        for o, c in zip(self.offsets[:-1], self.cat[i]):
            if c >= 0:
                out[o + c] = ONE_HOT
        return out

    def dense(self) -> np.ndarray:
        """(n, D): the matrix itself (tests, small tables)."""
        out = np.zeros((len(self), int(self.offsets[-1])))
        out[:, : self.z.shape[1]] = self.z
        for l, o in enumerate(self.offsets[:-1]):
            ok = self.cat[:, l] >= 0
            out[np.flatnonzero(ok), o + self.cat[ok, l]] = ONE_HOT
        return out

    def _blocks(self, centres: np.ndarray):
        """Per categorical column l: (n, k) c_l[cat_l] of every row against every centre (0 where none)."""
        for l, o in enumerate(self.offsets[:-1]):
            block = np.vstack([centres[:, o:o + self.sizes[l]].T, np.zeros((1, len(centres)))])   # (size + 1, k)
            yield block[self.cat[:, l]]                                                           # -1: the zero row

    def sq_to(self, c: np.ndarray) -> np.ndarray:
        """(n,) ‖x − c‖² of every row to one centre (class docstring)."""
        p = self.z.shape[1]
        d = np.square(self.z - c[:p]).sum(axis=1)
        for l, block in enumerate(self._blocks(c[None, :])):
            o = self.offsets[l]
            b = c[o:o + self.sizes[l]]
            d += float(b @ b) - 2.0 * ONE_HOT * block[:, 0] + ONE_HOT ** 2 * (self.cat[:, l] >= 0)
        return d

    def nearest(self, centres: np.ndarray) -> np.ndarray:
        """(n,) each row's nearest centre: the argmin of ‖c‖² − 2 x·c (‖x‖² does not change it; ties to
        the lowest index)."""
        p = self.z.shape[1]
        score = (centres * centres).sum(1)[None, :] - 2.0 * (self.z @ centres[:, :p].T)          # (n, k)
        for block in self._blocks(centres):
            score -= 2.0 * ONE_HOT * block
        return score.argmin(axis=1).astype(np.int64)

    def means(self, labels: np.ndarray, centres: np.ndarray) -> np.ndarray:
        """(k, D) each cell's mean row (a cell without rows keeps its centre): per numerical column the
        mean of z, per category w × its share in the cell."""
        k = len(centres)
        n_in = np.bincount(labels, minlength=k).astype(np.float64)                              # (k,)
        out = centres.copy()
        full = n_in > 0
        p = self.z.shape[1]
        for j in range(p):
            out[full, j] = np.bincount(labels, weights=self.z[:, j], minlength=k)[full] / n_in[full]
        for l, o in enumerate(self.offsets[:-1]):
            size, codes = self.sizes[l], self.cat[:, l]
            ok = codes >= 0
            cnt = np.bincount(labels[ok] * size + codes[ok], minlength=k * size).reshape(k, size)
            out[full, o:o + size] = ONE_HOT * cnt[full] / n_in[full, None]
        return out


def _describe(train: Table, labels: np.ndarray, n_cells: int, encoder: Encoder | None = None,
              cat: np.ndarray | None = None) -> tuple[tuple, list[str], list[str]]:
    """Per cell its centre in the user's units and a short description (module docstring).
    ``encoder`` and ``cat``: an encoder fitted on ``train`` and ``train``'s (N, q) codes under
    it, which (first appearance of each canonical value) are then read instead of factorizing
    the canonical strings again."""
    schema, data = train.schema, train.data
    spread = fit_spread(train)
    s_of = dict(zip(spread.columns, spread.values))
    num = [c for c in schema.distance_numerical if c in data.columns]
    cats = [c for c in schema.distance_categorical if c in data.columns]
    vals = {c: pd.to_numeric(data[c], errors="coerce").to_numpy(dtype=float) for c in num}
    overall_med = {c: float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan for c, v in vals.items()}
    counts, uniques, overall_share = {}, {}, {}
    from_enc = {c: j for j, c in enumerate(encoder.cat_cols)} if encoder is not None and cat is not None else {}
    for c in cats:                         # per cell counts of each category in one bincount
        if c in from_enc:
            codes, uniq = cat[:, from_enc[c]], np.array(list(encoder.vocab[from_enc[c]]), dtype=object)
        else:
            codes, uniq = pd.factorize(pd.Series(canonical_series(data[c])), sort=False)
        u = len(uniq)
        counts[c] = np.bincount(labels * u + codes, minlength=n_cells * u).reshape(n_cells, u)
        uniques[c] = uniq
        overall_share[c] = counts[c].sum(0) / max(len(codes), 1)
    centres, texts, tops = [], [], []
    for k in range(n_cells):
        mask = labels == k
        centre, score = {}, {}
        if not mask.any():
            centres.append({}), texts.append("an empty region"), tops.append("")
            continue
        for c in num:
            v = vals[c][mask]
            med = float(np.nanmedian(v)) if np.isfinite(v).any() else math.nan
            centre[c] = med
            score[c] = abs(med - overall_med[c]) / s_of.get(c, 1.0) if math.isfinite(med) else 0.0
        for c in cats:
            row = counts[c][k]
            j = int(np.argmax(row))                                              # the most common (first on ties)
            mode = uniques[c][j]
            centre[c] = "missing" if mode == "\x00<missing>" else mode
            score[c] = float(row[j] / row.sum() - overall_share[c][j]) * 4.0   # a share lift of 0.25 ~ 1 spread
        top = sorted(score, key=lambda c: -score[c])[:DESCRIBED_COLUMNS]
        texts.append(", ".join(f"{c} about {_fmt(centre[c])}" if c in num else f"{c} {centre[c]}" for c in top))
        tops.append(", ".join(str(c) for c in top))
        centres.append(centre)
    return tuple(centres), texts, tops


def _fmt(x: float) -> str:
    if not math.isfinite(x):
        return "missing"
    return f"{x:,.0f}" if abs(x) >= 100 or float(x).is_integer() else f"{x:.3g}"


def kmeans(x: CellSpace, k: int, seed: int, max_iter: int = KMEANS_ITER) -> np.ndarray:
    """(k, D) centres: k-means++ seeding (Arthur & Vassilvitskii 2007, seeded), then Lloyd's iterations
    (assign to the nearest centre, move each centre to its rows' mean) until no assignment changes or
    ``max_iter``. A centre left without rows stays where it is (its cell is then empty). On the
    :class:`CellSpace` arrays, O(n (p + q)) per step instead of O(n D): the cells only partition the
    space, any fixed partition keeps the test valid."""
    rng = np.random.default_rng(seed)
    n = len(x)
    centres = np.empty((k, int(x.offsets[-1])))
    centres[0] = x.row(int(rng.integers(n)))
    d2 = x.sq_to(centres[0])
    for j in range(1, k):
        d2 = np.maximum(d2, 0.0)                # exact zeros at the chosen rows; never a negative weight
        tot = float(d2.sum())
        centres[j] = x.row(int(rng.choice(n, p=d2 / tot) if tot > 0 else rng.integers(n)))
        d2 = np.minimum(d2, x.sq_to(centres[j]))
    labels = None
    for _ in range(max_iter):
        new = x.nearest(centres)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = x.means(labels, centres)
    return centres


# ------------------------------------------------------------------ the test
#: a region's real rows' quantile its generated rows are read against (:func:`cell_distances`)
CELL_QUANTILE = 0.05


def cell_distances(synthetic: np.ndarray, holdout: np.ndarray) -> dict:
    """What a person checks inside one cell: the median distance L to the nearest training row of its generated
    and of its real rows (median_synthetic, median_holdout), and the share of its generated rows nearer a training
    row than all but :data:`CELL_QUANTILE` of its real rows, L(q) < the real rows' 5 % quantile (close_synthetic;
    about 5 % for fresh rows: close_expected, the real rows' own share below it). NaN where the cell holds none."""
    out = {"median_synthetic": math.nan, "median_holdout": math.nan, "close_synthetic": math.nan,
           "close_expected": math.nan}
    if len(synthetic):
        out["median_synthetic"] = float(np.median(synthetic))
    if len(holdout):
        out["median_holdout"] = float(np.median(holdout))
        t = float(np.quantile(holdout, CELL_QUANTILE))
        out["close_expected"] = float(np.mean(holdout < t))
        if len(synthetic):
            out["close_synthetic"] = float(np.mean(synthetic < t))
    return out


def data_copying_test(train: Table, synthetic, holdout: CheckedHoldout | Table | pd.DataFrame, *,
                      distance: str = DEFAULT_DISTANCE,
                      n_cells: int | None = None, min_generated: int = MIN_GENERATED, alpha: float = ALPHA,
                      engine: NeighborEngine | None = None, device: str = "auto", seed: int = 0,
                      distances: tuple[np.ndarray, np.ndarray] | None = None,
                      positions: tuple[np.ndarray, np.ndarray] | None = None) -> DataCopyingResult:
    """Meehan et al.'s C_T of ``synthetic`` against ``train``, with ``holdout`` as the fresh real rows.

    Parameters
    ----------
    train, synthetic, holdout : the training table, the generated rows and real rows the model
        never saw (Tables, or DataFrames with the training columns; the hold-out: a :class:`~memviz.tables.holdout.CheckedHoldout` (used as is), else checked by
        :func:`~memviz.tables.holdout.checked_holdout`).
    distance : ``"standardized"`` (default) or ``"paper"``.
    n_cells : k-means cells (default: module docstring).
    min_generated : τ·m, cells with at most this many generated rows are left out of C_T.
    alpha : level of the copying verdict and of the per-cell q-values.
    engine : an engine fitted on ``train`` with ``distance`` (the memorization pass's): its encoding
        gives the cells' coordinates and, without ``distances``, it answers L(x). Default: one is fitted.
    seed : k-means seed (and its subsample).
    distances : (L(Q), L(P)), the generated and the hold-out rows' distances to their nearest
        training row under ``distance`` (the memorization pass's d1 and the floor's), in row order:
        no neighbour search is run.
    positions : (NN1(Q), NN1(P)), the training positions (0-based) of those nearest rows: they
        give each row's cell (module docstring).

    Returns
    -------
    DataCopyingResult
    """
    t0 = time.perf_counter()
    check_distance(distance)
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    hold = checked_holdout(train, holdout).table
    if engine is not None and engine.distance != distance:
        raise BadOption(f"engine: uses the {engine.distance} distance, the data-copying test asked for {distance}")
    if engine is None:
        engine = NeighborEngine(distance=distance, device=device).fit(train)
    elif engine.n_reference_ != len(train) or not np.array_equal(engine.row_ids_, train.row_ids):
        raise BadOption("engine: fitted on other rows than the training table")
    encoder = engine.encoder_
    if distances is None:
        nq, np_ = engine.kneighbors(synth, k=1), engine.kneighbors(hold, k=1)
        dq_all, dp_all = nq.dist[:, 0], np_.dist[:, 0]                            # (m,), (n,) L(Q), L(P)
        positions = (nq.pos[:, 0], np_.pos[:, 0])
    else:
        dq_all, dp_all = (np.asarray(d, dtype=np.float64) for d in distances)
        if dq_all.shape != (len(synth),) or dp_all.shape != (len(hold),):
            raise BadOption(f"distances: expected {len(synth)} generated and {len(hold)} hold-out distances, "
                            f"got {dq_all.shape} and {dp_all.shape}")
    k = n_cells if n_cells is not None else max(2, min(MAX_CELLS, len(hold) // HOLDOUT_PER_CELL))
    if k < 1 or k > len(train):
        raise BadOption(f"n_cells={k}: must be between 1 and the {len(train)} training rows")
    # a standardized engine's coordinates are the standardized numericals
    z_t, cat_t = engine.reference_arrays() if engine.distance == "standardized" else cell_arrays(encoder, train.data)
    xt = CellSpace.of(encoder, z_t, cat_t)                                          # N rows in D coordinates
    rng = np.random.default_rng(seed)
    fit_rows = xt if len(xt) <= KMEANS_ROWS else xt.take(rng.choice(len(xt), KMEANS_ROWS, replace=False))
    centres = kmeans(fit_rows, k, seed)
    lt = xt.nearest(centres)                                                        # (N,)
    if positions is not None:
        pq, pp = (np.asarray(p_, dtype=np.int64) for p_ in positions)
        if pq.shape != (len(synth),) or pp.shape != (len(hold),) or len(pq) and pq.max() >= len(train) \
                or len(pp) and pp.max() >= len(train):
            raise BadOption("positions: expected one training position per generated and per hold-out row")
        lq, lp = lt[pq], lt[pp]                                                     # the cell of NN1(x)
    else:
        lq, lp = (CellSpace.of(encoder, *cell_arrays(encoder, t.data)).nearest(centres) for t in (synth, hold))
    m, n = len(synth), len(hold)
    recs = []
    for c in range(k):
        tc, qc, pc = np.flatnonzero(lt == c), np.flatnonzero(lq == c), np.flatnonzero(lp == c)
        z = math.nan
        if len(tc) and len(qc) and len(pc):
            z = mann_whitney_z(dq_all[qc], dp_all[pc])[1]
        recs.append({"cell": c, "n_train": len(tc), "n_holdout": len(pc), "n_synthetic": len(qc),
                     "holdout_share": len(pc) / n, "synthetic_share": len(qc) / m, "z": z,
                     **cell_distances(dq_all[qc], dp_all[pc])})
    cells = pd.DataFrame(recs)
    cells["included"] = (cells["n_synthetic"] > min_generated) & (cells["n_holdout"] > 0) & cells["z"].notna()
    inc = cells["included"].to_numpy()
    w = cells["holdout_share"].to_numpy()[inc]
    zs = cells["z"].to_numpy()[inc]
    if w.sum() > 0:
        wn = w / w.sum()
        c_t = float(wn @ zs)
        z_all = c_t / math.sqrt(float(np.sum(wn ** 2)))
    else:
        c_t = z_all = math.nan
    cells["p_value"] = [one_sided_p(z) if math.isfinite(z) else math.nan for z in cells["z"]]
    q = np.full(k, math.nan)
    if inc.any():
        q[inc] = bh_qvalues(cells["p_value"].to_numpy()[inc])
    cells["q_value"] = q
    cells["copies"] = inc & (q <= alpha) & (cells["z"].to_numpy() < 0)
    centres, texts, tops = _describe(train, lt, k, encoder, cat_t)
    cells["description"] = texts
    cells["columns"] = tops
    rows = pd.DataFrame({"row_id": train.row_ids, "cell": lt.astype(np.int64),
                         "in_copying_cell": cells["copies"].to_numpy()[lt]})
    return DataCopyingResult(distance, k, int(min_generated), float(alpha), c_t, z_all,
                             one_sided_p(z_all), cells, centres, rows, len(train), n, m, seed,
                             time.perf_counter() - t0, synthetic_cells=lq.astype(np.int64),
                             holdout_cells=lp.astype(np.int64), synthetic_distances=dq_all, holdout_distances=dp_all)
