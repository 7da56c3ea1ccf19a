"""Which training rows leak, and which of their attributes: the leak explorer's computations.

* :func:`most_copied` ranks training rows by total copies C_i;
* :func:`copies_of` gathers the generated rows credited to one training row (memorized,
  NN1 = that row) beside it, with a cell-by-cell match mask;
* :func:`column_match_rates` measures, per column and per column pair, how often a
  generated row's value equals its NN1 training row's value, for memorized and
  non-memorized generated rows;
* :func:`redact` replaces raw values by coarse ranges and salted category hashes, so
  the structure of a leak (which cells match) can be shown without the values.

Cell equality (:func:`cell_matches`), for a generated value g and a training value x:
numerical columns (``schema.distance_numerical``): |g - x| <= rtol * max(|g|, |x|)
(rtol = 1e-9, so 0 equals only 0), and two missing values match; categorical columns
(``schema.distance_categorical``, class target included): equal canonical values
(:func:`memviz.encoding.canonical_series`: ``1`` = ``1.0`` = ``"1"``, missing = missing).
"""
from __future__ import annotations

import hashlib
import hmac
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .data import ROW_ID, Table
from .dynamics import RowDynamics
from .encoding import MISSING, canonical_series
from .errors import MemvizError
from .schema import Schema

RTOL = 1e-9
#: per-process key of the category hashes of :func:`redact` (hashes cannot be looked up
#: from a list of common values without it; pass ``salt`` for reproducible hashes)
_SESSION_SALT = secrets.token_hex(16)
COPY_COLUMNS = ("synthetic_id", "check", "epoch", "ratio")


# ------------------------------------------------------------------------- equality
def cell_matches(generated: pd.DataFrame, reference: pd.DataFrame, schema: Schema,
                 rtol: float = RTOL) -> pd.DataFrame:
    """Row-by-row (positional) equality of two frames on the schema columns.

    Parameters
    ----------
    generated, reference : DataFrame
        Same number of rows; row j of ``generated`` is compared with row j of ``reference``.
    schema : Schema
    rtol : float, default 1e-9
        Relative tolerance of numerical equality: |g - x| <= rtol * max(|g|, |x|).

    Returns
    -------
    DataFrame of bool, index of ``generated``, columns = the schema columns present in both.
    """
    if len(generated) != len(reference):
        raise MemvizError(f"cannot compare {len(generated)} generated rows with {len(reference)} reference rows")
    num, cat = set(schema.distance_numerical), set(schema.distance_categorical)
    out = {}
    for col in schema.columns:
        if col not in generated.columns or col not in reference.columns:
            continue
        if col in num:
            g = pd.to_numeric(generated[col], errors="coerce").to_numpy(dtype=np.float64)
            x = pd.to_numeric(reference[col], errors="coerce").to_numpy(dtype=np.float64)
            with np.errstate(invalid="ignore"):
                eq = np.abs(g - x) <= rtol * np.maximum(np.abs(g), np.abs(x))
            out[col] = eq | (np.isnan(g) & np.isnan(x))
        elif col in cat:
            out[col] = canonical_series(generated[col]) == canonical_series(reference[col])
    return pd.DataFrame(out, index=generated.index, dtype=bool)


# ------------------------------------------------------------------------ ranking rows
def most_copied(dyn: RowDynamics, n: int = 20, *, include_uncopied: bool = False) -> pd.DataFrame:
    """The ``n`` training rows with the most copies, most-copied first (ties: lowest row_id).

    Columns: row_id, total_count (C_i), first_epoch (NaN if never copied),
    forgetting_events (F_i), top (in the Top group), copy_checks (#checks with c_i > 0).
    Rows never copied are left out unless ``include_uncopied``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise MemvizError(f"n must be an integer >= 1, got {n!r}")
    order = np.lexsort((dyn.row_ids, -dyn.total))  # (N,) positions
    if not include_uncopied:
        order = order[dyn.total[order] > 0]
    order = order[:n]
    return pd.DataFrame({
        "row_id": dyn.row_ids[order], "total_count": dyn.total[order], "first_epoch": dyn.first_epoch[order],
        "forgetting_events": dyn.forgetting_events[order], "top": dyn.top[order],
        "copy_checks": (dyn.counts[order] > 0).sum(axis=1).astype(np.int64),
    })


# ------------------------------------------------------------------------ leak explorer
@dataclass(frozen=True, eq=False)
class LeakView:
    """One training row beside its generated copies.

    Attributes
    ----------
    row_id : int
    source : DataFrame
        One row: ``row_id`` then the schema columns (raw training values).
    copies : DataFrame
        One row per shown copy (RangeIndex): synthetic_id, check, epoch, ratio, then the
        schema columns; closest copies (lowest ratio r = d1 / d2) first.
    match : DataFrame of bool
        Same index as ``copies``, the schema columns: the cell equals the training row's
        (see :func:`cell_matches`).
    schema : Schema
    n_copies : int
        Copies found before ``limit`` was applied.
    bins : dict column -> edges, optional
        The redaction ranges of the numerical columns, from the whole training table
        (:func:`redaction_bins`); :meth:`table` uses them when redacting.
    """

    row_id: int
    source: pd.DataFrame
    copies: pd.DataFrame
    match: pd.DataFrame
    schema: Schema
    n_copies: int
    bins: dict | None = None

    @property
    def match_share(self) -> pd.Series:
        """Per column, the share of the shown copies equal to the training row."""
        return self.match.mean(axis=0) if len(self.match) else self.match.sum(axis=0).astype(float) * np.nan

    def table(self, redacted: bool = False, *, salt: str | None = None) -> pd.DataFrame:
        """Display table: the training row first, then its copies.

        Index labels ``training row <id>`` and ``copy <j>``; columns check, epoch, ratio,
        synthetic_id, then the schema columns (redacted with :func:`redact` when asked,
        with ranges from the whole training table when :attr:`bins` is set).
        """
        cols = list(self.schema.columns)
        src = self.source[cols].copy()
        src.index = pd.Index([f"training row {self.row_id}"])
        cps = self.copies[cols].copy()
        cps.index = pd.Index([f"copy {j + 1}" for j in range(len(cps))])
        body = pd.concat([src, cps]) if len(cps) else src
        if redacted:
            body = redact(body, self.schema, bins=self.bins, salt=salt)
        meta = pd.DataFrame({"check": [pd.NA] + list(self.copies["check"]),
                             "epoch": [pd.NA] + list(self.copies["epoch"]),
                             "ratio": [np.nan] + list(self.copies["ratio"].astype(float)),
                             "synthetic_id": [pd.NA] + list(self.copies["synthetic_id"])},
                            index=body.index)
        meta[["check", "epoch", "synthetic_id"]] = meta[["check", "epoch", "synthetic_id"]].astype("Int64")
        return pd.concat([meta, body], axis=1)

    def mask(self) -> pd.DataFrame:
        """Boolean frame aligned with :meth:`table`: True on copy cells equal to the training
        row, and on training-row cells matched by at least one copy."""
        t = self.table()
        m = pd.DataFrame(False, index=t.index, columns=t.columns)
        cols = list(self.match.columns)
        if len(self.match):
            m.iloc[1:, [t.columns.get_loc(c) for c in cols]] = self.match[cols].to_numpy()
            m.iloc[0, [t.columns.get_loc(c) for c in cols]] = self.match[cols].any(axis=0).to_numpy()
        return m


def style_matches(view: LeakView, redacted: bool = False, *, color: str = "#ffcccb",
                  salt: str | None = None):
    """A pandas ``Styler`` of :meth:`LeakView.table` with the matching cells highlighted.

    The mask is computed on the raw values, so matches stay visible when ``redacted``.
    """
    t = view.table(redacted, salt=salt)
    m = view.mask()
    style = np.where(m.to_numpy(), f"background-color: {color}; font-weight: bold", "")
    styler = t.style.apply(lambda _: pd.DataFrame(style, index=t.index, columns=t.columns), axis=None)
    num = [c for c in view.schema.distance_numerical if c in t.columns and not redacted]
    return styler.format({"ratio": "{:.3f}", **{c: "{:,.6g}" for c in num}}, na_rep="")


def _resolve_run(store_or_result):
    """(RunStore or None, long checks table or None) from a store, a path or a WarmupResult."""
    from .store import RunStore

    if isinstance(store_or_result, RunStore):
        return store_or_result, None
    if isinstance(store_or_result, (str, Path)):
        return RunStore.open(store_or_result), None
    checks = getattr(store_or_result, "checks", None)
    run_dir = getattr(store_or_result, "run_dir", None)
    if isinstance(checks, pd.DataFrame):
        return (RunStore.open(run_dir) if run_dir is not None else None), checks
    raise MemvizError(f"expected a RunStore, a run folder or a WarmupResult, got {type(store_or_result).__name__}")


def copies_of(store_or_result, row_id: int, check: int | None = None, limit: int = 20, *,
              checks: pd.DataFrame | None = None, train: Table | None = None,
              samples: Callable[[int], pd.DataFrame] | None = None) -> LeakView:
    """The generated rows credited to training row ``row_id``, beside it.

    A generated row g of check e is a copy of training row i when g is memorized
    (r = d1 / d2 < 1/3) and NN1(g) = i. Copies are ordered by ratio (closest first), then
    check and synthetic_id; the first ``limit`` are returned, reading the stored samples
    of only the checks they come from.

    Parameters
    ----------
    store_or_result : RunStore, run folder, or WarmupResult (with a run directory)
    row_id : int
        A training row_id.
    check : int, optional
        Only copies generated at this check (default: all checks).
    limit : int, default 20
    checks, train : optional
        The run's long checks table and training table, when the caller already holds
        them (saves reading them again).
    samples : callable check -> DataFrame, optional
        Returns a check's generated rows (default ``RunStore.samples``); pass a cached
        loader to avoid reading a check's file again (reading is most of the cost: about
        50 ms per check on Adult).

    Raises
    ------
    MemvizError
        Unknown row_id or check, a run without stored generated rows.
    """
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise MemvizError(f"limit must be an integer >= 1, got {limit!r}")
    store, long = _resolve_run(store_or_result)
    long = checks if checks is not None else long
    if long is None:
        long = store.checks()
    if train is None:
        if store is None:
            raise MemvizError("this run is held in memory only: pass train= (and it kept no generated rows)")
        train = store.train()
    row_id = int(row_id)
    if row_id not in train.data.index:
        raise MemvizError(f"row_id {row_id} is not a training row of this run")
    if check is not None and not (long["check"] == check).any():
        raise MemvizError(f"check {check} is not a finished check of this run")
    sel = (long["nn1"].to_numpy() == row_id) & long["memorized"].to_numpy(dtype=bool)
    if check is not None:
        sel &= long["check"].to_numpy() == check
    rows = np.flatnonzero(sel)  # (H,) positions in the long table
    cols_np = {c: long[c].to_numpy()[rows] for c in COPY_COLUMNS}
    order = np.lexsort((cols_np["synthetic_id"], cols_np["check"], cols_np["ratio"]))[:int(limit)]
    n_copies = len(rows)
    hits = pd.DataFrame({c: v[order] for c, v in cols_np.items()})
    cols = list(train.schema.columns)
    parts = []
    if samples is None and len(hits):
        if store is None:
            raise MemvizError("this run is held in memory only: its generated rows were not kept")
        samples = store.samples
    for c in pd.unique(hits["check"]):
        gen = samples(int(c))
        ids = hits.loc[hits["check"] == c, "synthetic_id"].to_numpy()
        key = gen["synthetic_id"].to_numpy() if "synthetic_id" in gen else np.arange(len(gen))
        pos = np.asarray(ids, dtype=np.int64)
        if (pos >= len(key)).any() or (pos < 0).any() or np.any(key[np.clip(pos, 0, len(key) - 1)] != ids):
            pos = pd.Index(key).get_indexer(ids)  # synthetic_id is not the row position
        if (pos < 0).any():
            raise MemvizError(f"check {c}: generated row {ids[pos < 0][0]} is missing from the stored samples")
        part = gen.iloc[pos][cols].copy()
        part.index = hits.index[hits["check"] == c]
        parts.append(part)
    values = pd.concat(parts).sort_index() if parts else pd.DataFrame(columns=cols, index=hits.index)
    copies = pd.concat([hits, values], axis=1)
    source = train.data.loc[[row_id], cols].reset_index()
    source = source.rename(columns={source.columns[0]: ROW_ID})
    ref = pd.concat([train.data.loc[[row_id], cols]] * len(copies)) if len(copies) else train.data.loc[[], cols]
    match = cell_matches(copies[cols], ref.set_axis(copies.index), train.schema)
    return LeakView(row_id=row_id, source=source, copies=copies, match=match, schema=train.schema,
                    n_copies=int(n_copies), bins=redaction_bins(train.data, train.schema))


# --------------------------------------------------------------------------- redaction
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


# --------------------------------------------------------------------- column heatmap
@dataclass(frozen=True, eq=False)
class ColumnLeak:
    """How often generated rows equal their NN1 training row, per column and column pair.

    With M the memorized generated rows, U the others, x = NN1(g) and [.] the cell
    equality of :func:`cell_matches`:

    memorized_rate(c)   = (1 / |M|) sum_{g in M} [g_c = x_c]
    pairs_memorized(a, b) = (1 / |M|) sum_{g in M} [g_a = x_a][g_b = x_b]   (diagonal = the column rate)

    and the same over U for ``non_memorized_rate`` and ``pairs_non_memorized``; NaN when
    the group is empty.

    Attributes
    ----------
    columns : DataFrame with columns column, kind, memorized_rate, non_memorized_rate
        (schema column order).
    pairs_memorized, pairs_non_memorized : DataFrame, column x column.
    n_memorized, n_non_memorized : int, |M| and |U|.
    """

    columns: pd.DataFrame
    pairs_memorized: pd.DataFrame
    pairs_non_memorized: pd.DataFrame
    n_memorized: int
    n_non_memorized: int


def _rates(b: np.ndarray, names: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Column rates (p,) and pair rates (p, p) of a (G, p) boolean match matrix."""
    if b.shape[0] == 0:
        return np.full(len(names), np.nan), pd.DataFrame(np.nan, index=names, columns=names)
    f = b.astype(np.float64)  # (G, p)
    pairs = f.T @ f / b.shape[0]  # (p, p)
    return f.mean(axis=0), pd.DataFrame(pairs, index=names, columns=names)


def column_match_rates(train: Table, samples: pd.DataFrame, long: pd.DataFrame, *,
                       rtol: float = RTOL) -> ColumnLeak:
    """Per-column and per-pair exact-match rates with the NN1 row (see :class:`ColumnLeak`).

    Parameters
    ----------
    train : Table
        The training table the run measured against.
    samples : DataFrame
        Generated rows: ``synthetic_id`` and the schema columns (one check, as
        ``RunStore.samples(check)``; several checks when it also has a ``check`` column).
    long : DataFrame
        The long checks table rows of those generated rows: ``synthetic_id``, ``nn1``,
        ``memorized`` (and ``check`` when it spans several checks).
    rtol : float, default 1e-9
        Relative tolerance of numerical equality.
    """
    for name, df, need in (("samples", samples, ("synthetic_id",)),
                           ("long table", long, ("synthetic_id", "nn1", "memorized"))):
        missing = [c for c in need if c not in df.columns]
        if missing:
            raise MemvizError(f"{name} is missing column(s) {', '.join(missing)}")
    keys = ["synthetic_id"]
    if "check" in long.columns and long["check"].nunique() > 1:
        if "check" not in samples.columns:
            raise MemvizError("the long table spans several checks: give samples a check column, or one check's rows")
        keys = ["check", "synthetic_id"]
    missing = [c for c in train.schema.columns if c not in samples.columns]
    if missing:
        raise MemvizError(f"samples: column {missing[0]!r} of the training table is missing")
    idx = pd.MultiIndex.from_frame(samples[keys]) if len(keys) > 1 else pd.Index(samples["synthetic_id"])
    want = pd.MultiIndex.from_frame(long[keys]) if len(keys) > 1 else pd.Index(long["synthetic_id"])
    pos = idx.get_indexer(want)
    if (pos < 0).any():
        raise MemvizError(f"generated row {want[int(np.flatnonzero(pos < 0)[0])]} of the long table is not in samples")
    gen = samples.iloc[pos]  # (G, ...) aligned with long
    nn1 = long["nn1"].to_numpy(dtype=np.int64)
    rpos = train.data.index.get_indexer(nn1)
    if (rpos < 0).any():
        raise MemvizError(f"nn1 {nn1[rpos < 0][0]} is not a training row_id")
    ref = train.data.iloc[rpos]
    b = cell_matches(gen.reset_index(drop=True), ref.reset_index(drop=True), train.schema, rtol)
    names = list(b.columns)
    m = long["memorized"].to_numpy(dtype=bool)
    bm = b.to_numpy()
    mem_rate, mem_pairs = _rates(bm[m], names)
    non_rate, non_pairs = _rates(bm[~m], names)
    mem_pairs.attrs["group"], non_pairs.attrs["group"] = "memorized rows", "non-memorized rows"
    cols = pd.DataFrame({"column": names, "kind": [train.schema.kind_of(c) for c in names],
                         "memorized_rate": mem_rate, "non_memorized_rate": non_rate})
    return ColumnLeak(columns=cols, pairs_memorized=mem_pairs, pairs_non_memorized=non_pairs,
                      n_memorized=int(m.sum()), n_non_memorized=int((~m).sum()))


def run_column_match_rates(store_or_result, check: int | None = None, *, checks: pd.DataFrame | None = None,
                           train: Table | None = None) -> ColumnLeak:
    """:func:`column_match_rates` for one check of a stored run (default: the last check)."""
    store, long = _resolve_run(store_or_result)
    long = checks if checks is not None else long
    if store is None:
        raise MemvizError("this run is held in memory only: its generated rows were not kept")
    long = store.checks() if long is None else long
    if long.empty:
        raise MemvizError("the run has no finished check yet")
    check = int(long["check"].max()) if check is None else int(check)
    sub = long[long["check"] == check]
    if sub.empty:
        raise MemvizError(f"check {check} is not a finished check of this run")
    return column_match_rates(train if train is not None else store.train(), store.samples(check), sub)
