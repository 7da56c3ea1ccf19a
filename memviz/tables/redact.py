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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memviz.errors import BadOption
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


def key_labels(values, column: str, *, salt: str | None = None) -> list[str]:
    """The user's row keys as a redacted page or report shows them: ``key-`` and the first
    :data:`HASH_DIGITS` hex digits of HMAC-SHA256(salt, column NUL value), keyed like
    :func:`category_labels` (one key, one label within a report; no label tells the key); a missing
    key stays "missing"."""
    key = (salt if salt is not None else _SESSION_SALT).encode()
    canon = canonical_series(pd.Series(list(values), dtype=object))
    return ["missing" if u == MISSING else
            "key-" + hmac.new(key, f"{column}\x00{u}".encode(), hashlib.sha256).hexdigest()[:HASH_DIGITS]
            for u in canon]


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


# ------------------------------------------------------------------ joint k
#: every shown row's tuple of redacted values is shared by at least this many training rows
MIN_GROUP = 10
#: the label of a suppressed cell
SUPPRESSED = "suppressed"
JOINT_MODES = ("coarsen", "suppress")


@dataclass(frozen=True)
class JointK:
    """The smallest group size of what a redacted table shows jointly.

    For a shown row i and the set U_i of its columns not suppressed, its group is
    g_i = #{training rows x : redacted(x)_c = redacted(i)_c for every c in U_i}, over the
    redacted training table (same ranges, same category keys). ``k`` = min_i g_i: each shown
    row's combination of ranges and categories is shared by at least k training rows (joint
    k-anonymity of what is shown; the per-column ranges alone only bound each column's group).

    columns : the columns shown jointly.  target : the k asked for.
    n_rows, n_below, n_unique : shown rows, those with g_i < target, those with g_i ≤ 1.
    n_suppressed : cells suppressed.  n_ranges : per numerical column, its number of ranges.
    """

    columns: tuple[str, ...]
    k: int
    target: int
    n_rows: int
    n_below: int
    n_unique: int
    n_suppressed: int = 0
    n_ranges: dict = field(default_factory=dict)

    @property
    def holds(self) -> bool:
        return self.k >= self.target

    def to_dict(self) -> dict:
        return {"columns": list(self.columns), "k": int(self.k), "target": int(self.target),
                "holds": self.holds, "n_rows": int(self.n_rows), "n_below": int(self.n_below),
                "n_unique": int(self.n_unique), "n_suppressed": int(self.n_suppressed),
                "n_ranges": {c: int(v) for c, v in self.n_ranges.items()}, "sentence": self.sentence()}

    def sentence(self) -> str:
        rows = "training row" if self.k == 1 else "training rows"
        shown = f"Every row shown here matches at least {self.k:,} {rows} on all the values it shows together"
        if self.holds:
            extra = f" ({self.n_suppressed:,} values suppressed to get there)" if self.n_suppressed else ""
            return f"{shown}{extra}."
        return (f"{shown}; {self.n_below:,} of {self.n_rows:,} shown rows match fewer than {self.target} "
                f"({self.n_unique:,} match at most one), so a reader could single them out.")


def _group_sizes(shown: pd.DataFrame, ref: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """(n,) g_i over the columns ``cols`` (no suppression), by one group-by of the training labels."""
    if not cols:
        return np.full(len(shown), len(ref), dtype=np.int64)
    sizes = ref.groupby(cols, dropna=False, sort=False).size()
    key = pd.MultiIndex.from_frame(shown[cols]) if len(cols) > 1 else pd.Index(shown[cols[0]])
    return sizes.reindex(key).fillna(0).to_numpy(dtype=np.int64)


def _suppress(shown: pd.DataFrame, ref: pd.DataFrame, cols: list[str], k: int, sizes: np.ndarray) -> int:
    """Suppress cells of the rows with g_i < k, per row the cell whose removal enlarges its group most
    first, until g_i ≥ k; returns the number of cells suppressed (``shown`` is changed in place)."""
    n_ref = len(ref)
    codes = {}
    for c in cols:                         # one integer code per label, shared by shown and training rows
        both = pd.factorize(pd.concat([ref[c], shown[c]], ignore_index=True).to_numpy(dtype=object))[0]
        codes[c] = (both[:n_ref], both[n_ref:])
    n = 0
    for i in np.flatnonzero(sizes < k):
        eq = np.stack([codes[c][0] == codes[c][1][i] for c in cols])          # (C, N) matches per column
        active = [j for j, c in enumerate(cols) if shown.iloc[i][c] != SUPPRESSED]
        g = int(eq[active].all(axis=0).sum()) if active else n_ref
        while g < k and active:
            trials = [int(eq[[a for a in active if a != j]].all(axis=0).sum()) if len(active) > 1 else n_ref
                      for j in active]
            best = int(np.argmax(trials))
            g = trials[best]
            shown.iat[i, shown.columns.get_loc(cols[active.pop(best)])] = SUPPRESSED
            n += 1
        sizes[i] = g
    return n


def redact_joint(df: pd.DataFrame, schema: Schema, *, reference: pd.DataFrame, k: int = MIN_GROUP,
                 enforce: bool = True, mode: str = "coarsen", salt: str | None = None, columns=None,
                 n_bins: int = N_BINS, min_rows: int = MIN_BIN_ROWS) -> tuple[pd.DataFrame, JointK]:
    """:func:`redact` with the joint group size stated and, when ``k`` is given, enforced.

    Parameters
    ----------
    df : the rows to show.  reference : the whole training table (ranges and groups come from it).
    k : every shown row must match at least k training rows on all its shown values together
        (default :data:`MIN_GROUP`).
    enforce : make it so (default); False: only state the smallest group (:class:`JointK`).
    mode : ``"coarsen"`` (default): first widen the ranges of one numerical column at a time (the
        one that brings the most shown rows to k: its ranges rebuilt from half as many round
        bins, :func:`bin_edges`), as long as that helps, then suppress cells of the rows still below k;
        ``"suppress"``: suppress cells only, per row the one that enlarges its group most first.
        A suppressed cell reads :data:`SUPPRESSED`.
    columns : the columns shown jointly (default: the schema's distance columns in ``df``).

    Returns
    -------
    (DataFrame, JointK) : the redacted rows (same shape and index as ``df``) and their joint k.
    """
    if mode not in JOINT_MODES:
        raise BadOption(f"mode {mode!r}: unknown (use {' or '.join(JOINT_MODES)})")
    cols = [c for c in (columns if columns is not None else schema.distance_numerical + schema.distance_categorical)
            if c in df.columns]
    num = [c for c in schema.distance_numerical if c in cols]
    per_col = {c: n_bins for c in num}
    bins = redaction_bins(reference, schema, n_bins, min_rows)
    shown = redact(df, schema, bins=bins, salt=salt)
    ref = redact(reference.loc[:, cols], schema, bins=bins, salt=salt)
    sizes = _group_sizes(shown, ref, cols)
    n_sup = 0
    if enforce and mode == "coarsen":
        values = {c: pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=np.float64) for c in num}
        ref_values = {c: pd.to_numeric(reference[c], errors="coerce").to_numpy(dtype=np.float64) for c in num}
        while (sizes < k).any():
            best = None
            for c in num:
                if len(bins[c]) <= 2 or per_col[c] <= 1:
                    continue
                edges = bin_edges(ref_values[c], per_col[c] // 2, min_rows)
                if len(edges) >= len(bins[c]):
                    continue
                trial_s, trial_r = shown.copy(), ref.copy()
                trial_s[c] = _range_labels(values[c], edges)
                trial_r[c] = _range_labels(ref_values[c], edges)
                s = _group_sizes(trial_s, trial_r, cols)
                if (s < k).sum() < (sizes < k).sum() and (best is None or (s < k).sum() < (best[1] < k).sum()):
                    best = (c, s, edges, trial_s, trial_r)
            if best is None:
                break
            c, sizes, bins[c], shown, ref = best
            per_col[c] //= 2
    if enforce:
        n_sup = _suppress(shown, ref, cols, k, sizes)
    result = JointK(tuple(cols), int(sizes.min()) if len(sizes) else len(reference), int(k), len(shown),
                    int((sizes < k).sum()), int((sizes <= 1).sum()), n_sup, {c: len(bins[c]) - 1 for c in num})
    return shown, result


def joint_k(df: pd.DataFrame, schema: Schema, *, reference: pd.DataFrame, k: int = MIN_GROUP,
            salt: str | None = None, columns=None) -> JointK:
    """The joint group size of ``df`` redacted as :func:`redact` does it (nothing enforced)."""
    return redact_joint(df, schema, reference=reference, k=k, enforce=False, salt=salt, columns=columns)[1]
