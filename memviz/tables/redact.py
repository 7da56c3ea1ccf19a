"""Redaction: show the structure of a leak (which cells match) without the values.

Numbers become ranges of round numbers taken from the WHOLE training column and merged
until each holds at least :data:`MIN_BIN_ROWS` training rows, so a range never narrows a
person down; categories become hashes keyed per column and per report (a salt), so equal
hashes in two columns or two reports say nothing.
"""
from __future__ import annotations

import hashlib
import hmac
import math
import secrets

import numpy as np
import pandas as pd

from memviz.tables.encoding import MISSING, canonical_series
from memviz.tables.schema import Schema

#: per-process key of the category hashes (hashes cannot be looked up from a list of common
#: values without it; pass ``salt`` for reproducible hashes)
_SESSION_SALT = secrets.token_hex(16)

#: a redacted range holds at least this many reference (training) rows
MIN_BIN_ROWS = 10
#: about this many ranges over a column's full training range
N_BINS = 5
#: hex digits of a category hash (16^6 labels: no collisions among a column's categories in practice)
HASH_DIGITS = 6


def _step(span: float, n_bins: int) -> float:
    """A round bin width (1, 2 or 5 times a power of ten) giving about ``n_bins`` bins over ``span``."""
    raw = span / max(n_bins, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw * (1 - 1e-12))


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 or x == int(x) else f"{x:,.3g}"


def bin_edges(reference: np.ndarray, n_bins: int = N_BINS, min_rows: int = MIN_BIN_ROWS) -> np.ndarray:
    """Edges of the redaction ranges of one numerical column, from its **full** reference range.

    A grid of round numbers: width w = the 1-2-5 x 10^k number just above span / ``n_bins``
    (span = max - min of the finite reference values, or max(|value|, 1) when they are all
    equal), edges j w from floor(min / w) w to (floor(max / w) + 1) w. Adjacent bins are then
    merged, left to right, until each holds at least ``min_rows`` reference rows (a short last
    run joins the bin before it), so no range singles out a handful of training rows. Edges
    are multiples of w, never data values. Returns (K + 1,) increasing edges; empty when the
    reference has no finite value.
    """
    fin = np.asarray(reference, dtype=np.float64)
    fin = fin[np.isfinite(fin)]
    if fin.size == 0:
        return np.zeros(0)
    lo_v, hi_v = float(fin.min()), float(fin.max())
    span = hi_v - lo_v if hi_v > lo_v else max(abs(lo_v), 1.0)
    w = _step(span, n_bins)
    lo, hi = math.floor(lo_v / w), math.floor(hi_v / w) + 1
    grid = np.arange(lo, hi + 1, dtype=np.float64) * w                      # (B + 1,)
    counts = np.histogram(fin, bins=grid)[0]                                  # (B,)
    edges, acc = [grid[0]], 0
    for j, c in enumerate(counts):
        acc += int(c)
        if acc >= min_rows:
            edges.append(grid[j + 1])
            acc = 0
    if acc > 0 or len(edges) == 1:  # a short tail joins the range before it
        if len(edges) > 1:
            edges[-1] = grid[-1]
        else:
            edges.append(grid[-1])
    return np.asarray(edges)


def redaction_bins(frame: pd.DataFrame, schema: Schema, n_bins: int = N_BINS,
                   min_rows: int = MIN_BIN_ROWS) -> dict[str, np.ndarray]:
    """:func:`bin_edges` of every numerical column of ``frame`` (give it the whole training table)."""
    return {c: bin_edges(pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=np.float64), n_bins, min_rows)
            for c in schema.distance_numerical if c in frame.columns}


def _range_labels(v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each value replaced by the range "a – b" of its bin (values beyond the edges: "below a", "b or more")."""
    out = np.full(len(v), "missing", dtype=object)
    finite = np.isfinite(v)
    if len(edges) < 2 or not finite.any():
        return out
    labels = np.array([f"{_fmt(a)} – {_fmt(b)}" for a, b in zip(edges[:-1], edges[1:])]
                      + [f"below {_fmt(edges[0])}", f"{_fmt(edges[-1])} or more"], dtype=object)
    j = np.searchsorted(edges, v[finite], side="right") - 1                   # bin index, -1 below, K above
    j = np.where(j < 0, len(edges) - 1, j)                                    # below the first edge
    j = np.where(v[finite] >= edges[-1], len(edges), j)                       # at or above the last edge
    out[finite] = labels[j]
    return out


def category_labels(values, column: str, *, salt: str | None = None) -> dict:
    """{canonical value: label}: ``cat-`` and the first :data:`HASH_DIGITS` hex digits of
    HMAC-SHA256(salt, column NUL value); missing stays "missing". Keyed per column, so one value
    gets different labels in different columns, and per ``salt`` (default: a random key drawn
    once per process; a report draws its own)."""
    key = (salt if salt is not None else _SESSION_SALT).encode()
    canon = canonical_series(pd.Series(list(values), dtype=object))
    return {u: "missing" if u == MISSING else
            "cat-" + hmac.new(key, f"{column}\x00{u}".encode(), hashlib.sha256).hexdigest()[:HASH_DIGITS]
            for u in pd.unique(canon)}


def redact(df: pd.DataFrame, schema: Schema, *, reference: pd.DataFrame | None = None,
           bins: dict[str, np.ndarray] | None = None, salt: str | None = None, n_bins: int = N_BINS,
           min_rows: int = MIN_BIN_ROWS) -> pd.DataFrame:
    """Replace raw values by ranges and category hashes; same shape, index and columns.

    Numerical columns (``schema.distance_numerical``) become ranges "a – b" of
    :func:`bin_edges`, computed from the full training column: pass ``bins``
    (:func:`redaction_bins` of the training table) or ``reference`` (the training table);
    without either, the ranges come from ``df`` itself, which is only safe when ``df`` is
    the whole table (a few rows on screen would give narrow, revealing ranges). Categorical
    columns (``schema.distance_categorical``) become :func:`category_labels` (keyed per column
    and per ``salt``). Missing values become "missing". Other columns are left as they are.
    """
    if bins is None:
        bins = redaction_bins(reference if reference is not None else df, schema, n_bins, min_rows)
    out = df.copy()
    for col in schema.distance_numerical:
        if col in df.columns:
            v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
            edges = bins.get(col)
            if edges is None:
                edges = bin_edges(v, n_bins, min_rows)
            out[col] = pd.Series(_range_labels(v, edges), index=df.index, dtype=object)
    for col in schema.distance_categorical:
        if col in df.columns:
            canon = canonical_series(df[col])
            lab = category_labels(pd.unique(canon), col, salt=salt)
            out[col] = pd.Series(pd.Series(canon, dtype=object).map(lab).to_numpy(), index=df.index, dtype=object)
    return out
