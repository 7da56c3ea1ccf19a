"""Which training rows leak, and which of their attributes: the leak explorer's computations.

* :func:`most_copied` ranks training rows by total copies C_i; :func:`rank_rows` ranks them by
  their **excess** copies over what fresh real rows would give them (:mod:`memviz.measure.rownull`),
  or by raw copies, with how close their copies really are (:mod:`memviz.measure.closeness`);
* :func:`copies_vs_null` counts training rows by copies, observed and expected under the null;
* :func:`copies_of` gathers the generated rows credited to one training row (memorized,
  NN1 = that row) beside it, with a cell-by-cell match mask and each copy's closeness;
* :func:`flagged_closeness` measures how close every flagged generated row of a run is to
  its NN1 training row;
* the column heatmap's match rates are in :mod:`memviz.leaks.columns`, the redaction of shown
  rows in :mod:`memviz.tables.redact`.

Cell equality (:func:`memviz.measure.closeness.cell_matches`, re-exported here), for a generated
value g and a training value x: numerical columns (``schema.distance_numerical``):
|g - x| <= rtol * max(|g|, |x|) (rtol = 1e-9, so 0 equals only 0), and two missing values
match; categorical columns (``schema.distance_categorical``, class target included): equal
canonical values (:func:`memviz.tables.encoding.canonical_series`: ``1`` = ``1.0`` = ``"1"``,
missing = missing).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from memviz.dynamics.rows import RowDynamics
from memviz.errors import BadOption, BadRunFolder, BadTable
from memviz.measure.closeness import (  # noqa: F401 (re-exported)
    RTOL,
    Closeness,
    Spread,
    cell_matches,
    fit_spread,
    nn1_closeness,
)
from memviz.measure.rownull import DEFAULT_SPREAD, predictive_counts
from memviz.tables.data import ROW_ID, Table
from memviz.tables.redact import key_labels, redact, redaction_bins
from memviz.tables.schema import Schema, key_text
from memviz.warmup.store import RunStore

COPY_COLUMNS = ("synthetic_id", "check", "epoch", "ratio")


# ------------------------------------------------------------------------ ranking rows
def most_copied(dyn: RowDynamics, n: int = 20, *, include_uncopied: bool = False) -> pd.DataFrame:
    """The ``n`` training rows with the most copies, most-copied first (ties: lowest row_id).

    Columns: row_id, total_count (C_i), first_epoch (NaN if never copied),
    forgetting_events (F_i), top (in the Top group), copy_checks (#checks with c_i > 0).
    Rows never copied are left out unless ``include_uncopied``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise BadOption(f"n must be an integer >= 1, got {n!r}")
    order = np.lexsort((dyn.row_ids, -dyn.total))  # (N,) positions
    if not include_uncopied:
        order = order[dyn.total[order] > 0]
    order = order[:n]
    return pd.DataFrame({
        "row_id": dyn.row_ids[order], "total_count": dyn.total[order], "first_epoch": dyn.first_epoch[order],
        "forgetting_events": dyn.forgetting_events[order], "top": dyn.top[order],
        "copy_checks": (dyn.counts[order] > 0).sum(axis=1).astype(np.int64),
    })


RANK_BY = ("excess", "copies")
#: per-row closeness counts of :func:`closeness_by_row`, in display order
CLOSENESS_COUNTS = ("exact_copies", "near_exact_copies", "differing_copies", "zero_by_scaling_copies")


def rank_rows(dyn: RowDynamics, null=None, *, by: str = "excess", n: int = 20,
              closeness_rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """The ``n`` leading training rows among those copied at least once.

    ``by="excess"`` (needs ``null``, a :class:`memviz.measure.rownull.RowNull` of ``dyn.total``):
    largest excess_i = C_i − expected_i first, the copies above what real rows the model
    never saw would give row i (:func:`memviz.measure.rownull.row_null`); ``by="copies"``: largest
    C_i first (:func:`most_copied`). Ties: more copies, then lowest row_id.

    Columns: row_id, copies (C_i), then with ``null`` expected, excess, q_value,
    above_chance (q < 0.05: the ratio test's count, not the audit's named rows); with ``closeness_rows`` (:func:`closeness_by_row`) the counts of
    its copies that are exact, near-exact, differ, and have r ≈ 0 only from the paper
    distance's per-row scaling; then first_epoch, top, copy_checks.
    """
    if by not in RANK_BY:
        raise BadOption(f"by={by!r}: use {' or '.join(RANK_BY)}")
    if by == "excess" and null is None:
        raise BadOption("ranking by excess needs the run's floor (a hold-out); rank by copies instead")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise BadOption(f"n must be an integer >= 1, got {n!r}")
    total = np.asarray(dyn.total, dtype=np.int64)                               # (N,)
    cols = {"row_id": dyn.row_ids, "copies": total}
    if null is not None:
        if not np.array_equal(null.row_ids, dyn.row_ids) or not np.array_equal(null.copies, total):
            raise BadOption("the per-row null was computed for other rows or other copy counts")
        cols.update(expected=null.expected, excess=null.excess, q_value=null.q_value, above_chance=null.above_chance)
    key = null.excess if by == "excess" else total
    order = np.lexsort((dyn.row_ids, -total, -key))                              # (N,) positions
    order = order[total[order] > 0][:n]
    out = pd.DataFrame({k: np.asarray(v)[order] for k, v in cols.items()})
    if closeness_rows is not None:
        counts = closeness_rows.set_index("row_id").reindex(out["row_id"])
        for c in CLOSENESS_COUNTS:
            out[c] = counts[c].fillna(0).to_numpy(dtype=np.int64)
    out["first_epoch"] = dyn.first_epoch[order]
    out["top"] = dyn.top[order]
    out["copy_checks"] = (dyn.counts[order] > 0).sum(axis=1).astype(np.int64)
    return out


def copies_vs_null(floor, copies, n_generated, *, max_bins: int = 60, spread: str = DEFAULT_SPREAD) -> pd.DataFrame:
    """Training rows by number of copies: observed, and expected if the generated rows were
    fresh real rows.

    observed(b) = #{i : C_i in bin b}; expected(b) = Σ_i P(C_i in bin b), each row's copies following
    its own predictive of the per-row test :func:`memviz.measure.rownull.row_null` with the same
    ``spread`` (default the test's: the per-row mixture prior, whose law for row i is a NegBin mixture
    given h_i; :func:`memviz.measure.rownull.predictive_counts`), M = Σ n_generated; so the figure and the
    row table's expected_i and q-values come from one null. Bins as
    :func:`memviz.viz.memorization.copies_histogram`: 0 alone, then integer width
    w = 1 when max C_i < ``max_bins``, else ceil(max C_i / (max_bins − 1)); the last bin
    also holds the expected rows beyond max C_i.

    Returns
    -------
    DataFrame with columns low, high (bin edges, inclusive), observed, expected.
    """
    c = np.asarray(copies, dtype=np.int64)                                       # (N,)
    if c.shape != floor.row_ids.shape:
        raise BadOption(f"copies: {c.shape[0]} values for {floor.n_reference} reference rows")
    m = int(np.sum(n_generated))
    mx = int(c.max()) if c.size else 0
    width = 1 if mx < max_bins else math.ceil(mx / (max_bins - 1))
    n_bins = 1 + (math.ceil(mx / width) if mx > 0 else 0)
    bin_of = np.where(c > 0, 1 + (c - 1) // width, 0)                           # (N,)
    observed = np.bincount(bin_of, minlength=n_bins)
    grid = np.arange(mx + 1)                                                      # (mx + 1,) counts 0..max
    pmf = predictive_counts(floor, c, m, mx, spread=spread)                       # (mx + 1,) Σ_i P(C_i = x)
    grid_bin = np.where(grid > 0, 1 + (grid - 1) // width, 0)
    expected = np.bincount(grid_bin, weights=pmf, minlength=n_bins)
    expected[-1] += max(0.0, len(c) - pmf.sum())                                  # mass beyond max C_i
    low = np.concatenate([[0], 1 + width * np.arange(n_bins - 1)])
    high = np.concatenate([[0], np.minimum(low[1:] + width - 1, mx)]) if n_bins > 1 else np.array([0])
    return pd.DataFrame({"low": low.astype(np.int64), "high": high.astype(np.int64),
                         "observed": observed.astype(np.int64), "expected": expected})


# ------------------------------------------------------------------------ closeness
def flagged_closeness(train: Table, long: pd.DataFrame, samples: Callable[[int], pd.DataFrame], *,
                      distance: str = "paper", spread: Spread | None = None, flagged_only: bool = True) -> pd.DataFrame:
    """How close each flagged generated row of a run is to its NN1 training row.

    Parameters
    ----------
    train : the run's training table.
    long : the long checks table (check, synthetic_id, nn1, ratio, memorized), any checks.
    samples : check -> that check's generated rows (``synthetic_id`` and the schema columns).
    distance : the run's distance (sets ``zero_by_scaling``, :mod:`memviz.measure.closeness`).
    flagged_only : only the memorized rows (False: every generated row, e.g. for the share of
        identical rows).

    Returns
    -------
    DataFrame, one row per generated row: check, synthetic_id, nn1, ratio, memorized, then
    :attr:`memviz.measure.closeness.Closeness.pairs` (exact, near_exact, zero_by_scaling, level, ...).
    """
    spread = spread if spread is not None else fit_spread(train)
    rows = long[long["memorized"].to_numpy(dtype=bool)] if flagged_only else long
    parts = []
    for c, sub in rows.groupby("check", sort=True):
        gen = samples(int(c))
        key = pd.Index(gen["synthetic_id"].to_numpy() if "synthetic_id" in gen else np.arange(len(gen)))
        pos = key.get_indexer(sub["synthetic_id"].to_numpy())
        if (pos < 0).any():
            raise BadTable(f"check {c}: generated row {sub['synthetic_id'].to_numpy()[pos < 0][0]} "
                           "is missing from the stored samples")
        g = gen.iloc[pos].reset_index(drop=True)
        cl = nn1_closeness(train, g, sub["nn1"].to_numpy(), ratio=sub["ratio"].to_numpy(), distance=distance,
                           spread=spread)
        head = sub[["check", "synthetic_id", "nn1", "ratio", "memorized"]].reset_index(drop=True)
        parts.append(pd.concat([head, cl.pairs.reset_index(drop=True)], axis=1))
    if not parts:
        return pd.DataFrame(columns=["check", "synthetic_id", "nn1", "ratio", "memorized", "exact", "near_exact",
                                     "zero_by_scaling", "level", "n_cat_diff", "max_gap", "worst_column", "e_num"])
    return pd.concat(parts, ignore_index=True)


def closeness_by_row(flagged: pd.DataFrame) -> pd.DataFrame:
    """Per training row (``nn1`` of :func:`flagged_closeness`'s flagged rows): row_id,
    exact_copies, near_exact_copies, differing_copies, zero_by_scaling_copies."""
    f = flagged[flagged["memorized"].to_numpy(dtype=bool)] if len(flagged) else flagged
    g = pd.DataFrame({"row_id": f["nn1"].to_numpy(dtype=np.int64),
                      "exact_copies": f["exact"].to_numpy(dtype=bool),
                      "near_exact_copies": f["near_exact"].to_numpy(dtype=bool),
                      "differing_copies": (f["level"] == "differs").to_numpy(dtype=bool),
                      "zero_by_scaling_copies": f["zero_by_scaling"].to_numpy(dtype=bool)})
    return g.groupby("row_id", sort=True).sum().astype(np.int64).reset_index()


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
    closeness : Closeness, optional
        How close each shown copy really is to the training row (:mod:`memviz.measure.closeness`),
        same index as ``copies``.
    bins : dict column -> edges, optional
        The redaction ranges of the numerical columns, from the whole training table
        (:func:`redaction_bins`); :meth:`table` uses them when redacting.
    key, key_name : optional
        The training row's value of the user's row key and that column's name (the table's
        :attr:`memviz.tables.data.Table.key`; for a composite key a tuple of values and a tuple of
        column names), so the row is named as the user knows it (:meth:`label`); None when the
        table has no key.
    """

    row_id: int
    source: pd.DataFrame
    copies: pd.DataFrame
    match: pd.DataFrame
    schema: Schema
    n_copies: int
    closeness: Closeness | None = None
    bins: dict | None = None
    key: int | float | str | tuple | None = None      # the user's key (a tuple for a composite key; NaN: missing)
    key_name: str | tuple[str, ...] | None = None

    def label(self, redacted: bool = False, *, salt: str | None = None) -> str:
        """``training row rownames 2705`` (the user's key; hashed when ``redacted``, keyed by ``salt``),
        else ``training row 17`` (memviz's row_id)."""
        if self.key_name is None:
            return f"training row {self.row_id}"
        if not isinstance(self.key_name, str):          # a composite key: branch=North, account_no=17

            parts = [key_labels([v], c, salt=salt)[0] for c, v in zip(self.key_name, self.key)] if redacted else \
                self.key
            return f"training row {key_text(self.key_name, parts)}"
        if redacted:
            return f"training row {self.key_name} {key_labels([self.key], self.key_name, salt=salt)[0]}"
        return f"training row {self.key_name} {'missing' if pd.isna(self.key) else self.key}"

    def title(self, redacted: bool = False, *, salt: str | None = None) -> str:
        """:meth:`label` as a heading ("Training row ...")."""
        return "T" + self.label(redacted, salt=salt)[1:]

    def table(self, redacted: bool = False, *, salt: str | None = None) -> pd.DataFrame:
        """Display table: the training row first, then its copies.

        Index labels :meth:`label` and ``copy <j>``; columns check, epoch, ratio,
        then (with a closeness) ``how close`` (exact copy / near-exact / differs),
        ``largest difference`` (e.g. ``age +3.1 IQR``) and ``r ≈ 0 from scaling`` ("yes" where
        the ratio is about 0 only because of the paper distance's per-row scaling),
        synthetic_id, then the schema columns (redacted with :func:`redact` when asked,
        with ranges from the whole training table when :attr:`bins` is set).
        """
        cols = list(self.schema.columns)
        src = self.source[cols].copy()
        src.index = pd.Index([self.label(redacted, salt=salt)])
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
        if self.closeness is not None:
            p = self.closeness.pairs
            label = {"exact": "exact copy", "near-exact": "near-exact", "differs": "differs"}
            close = pd.DataFrame({"how close": [""] + [label[v] for v in p["level"]],
                                  "largest difference": [""] + list(self.closeness.gap_text()),
                                  "r ≈ 0 from scaling": [""] + ["yes" if z else "" for z in p["zero_by_scaling"]]},
                                 index=body.index)
            meta = pd.concat([meta[["check", "epoch", "ratio"]], close, meta[["synthetic_id"]]], axis=1)
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
                  salt: str | None = None, names: dict | None = None):
    """A pandas ``Styler`` of :meth:`LeakView.table` with the matching cells highlighted.

    The mask is computed on the raw values, so matches stay visible when ``redacted``.
    ``names``: display headers of the table's own columns (check, epoch, ratio, synthetic_id,
    ...); the schema columns keep the user's names.
    """
    t = view.table(redacted, salt=salt)
    for c in ("check", "epoch", "synthetic_id", "ratio"):  # the training row has none: blank, not "None"
        fmt = "{:.3f}".format if c == "ratio" else str
        t[c] = pd.Series(["" if pd.isna(v) else fmt(v) for v in t[c]], index=t.index, dtype=object)
    own = set(view.schema.columns)
    t.columns = [names.get(c, c) if names and c not in own else c for c in t.columns]
    m = view.mask()
    style = np.where(m.to_numpy(), f"background-color: {color}; font-weight: bold", "")
    styler = t.style.apply(lambda _: pd.DataFrame(style, index=t.index, columns=t.columns), axis=None)
    styler = styler.format(na_rep="")  # the training row has no check, epoch or ratio
    num = [c for c in view.schema.distance_numerical if c in t.columns and not redacted]
    return styler.format({c: "{:,.6g}" for c in num}, na_rep="")


def resolve_run(store_or_result):
    """(RunStore or None, long checks table or None) from a store, a path or a WarmupResult."""
    if isinstance(store_or_result, RunStore):
        return store_or_result, None
    if isinstance(store_or_result, (str, Path)):
        return RunStore.open(store_or_result), None
    checks = getattr(store_or_result, "checks", None)
    run_dir = getattr(store_or_result, "run_dir", None)
    if isinstance(checks, pd.DataFrame):
        return (RunStore.open(run_dir) if run_dir is not None else None), checks
    raise BadOption(f"expected a RunStore, a run folder or a WarmupResult, got {type(store_or_result).__name__}")


def copies_of(store_or_result, row_id: int, check: int | None = None, limit: int = 20, *,
              checks: pd.DataFrame | None = None, train: Table | None = None,
              samples: Callable[[int], pd.DataFrame] | None = None, distance: str | None = None,
              spread: Spread | None = None) -> LeakView:
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
    distance : the run's distance (default: read from the run's settings, else ``paper``),
        for the copies' closeness (:mod:`memviz.measure.closeness`).
    spread : :func:`memviz.measure.closeness.fit_spread` of the training table, when already held.

    Raises
    ------
    MemvizError
        Unknown row_id or check, a run without stored generated rows.
    """
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
        raise BadOption(f"limit must be an integer >= 1, got {limit!r}")
    store, long = resolve_run(store_or_result)
    long = checks if checks is not None else long
    if long is None:
        long = store.checks()
    if train is None:
        if store is None:
            raise BadRunFolder("this run is held in memory only: pass train= (and it kept no generated rows)")
        train = store.train()
    row_id = int(row_id)
    if row_id not in train.data.index:
        raise BadOption(f"row_id {row_id} is not a training row of this run")
    if check is not None and not (long["check"] == check).any():
        raise BadOption(f"check {check} is not a finished check of this run")
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
            raise BadRunFolder("this run is held in memory only: its generated rows were not kept")
        samples = store.samples
    for c in pd.unique(hits["check"]):
        gen = samples(int(c))
        ids = hits.loc[hits["check"] == c, "synthetic_id"].to_numpy()
        key = gen["synthetic_id"].to_numpy() if "synthetic_id" in gen else np.arange(len(gen))
        pos = np.asarray(ids, dtype=np.int64)
        if (pos >= len(key)).any() or (pos < 0).any() or np.any(key[np.clip(pos, 0, len(key) - 1)] != ids):
            pos = pd.Index(key).get_indexer(ids)  # synthetic_id is not the row position
        if (pos < 0).any():
            raise BadTable(f"check {c}: generated row {ids[pos < 0][0]} is missing from the stored samples")
        part = gen.iloc[pos][cols].copy()
        part.index = hits.index[hits["check"] == c]
        parts.append(part)
    values = pd.concat(parts).sort_index() if parts else pd.DataFrame(columns=cols, index=hits.index)
    copies = pd.concat([hits, values], axis=1)
    source = train.data.loc[[row_id], cols].reset_index()
    source = source.rename(columns={source.columns[0]: ROW_ID})
    if distance is None:
        distance = _run_distance(store_or_result, store)
    close = nn1_closeness(train, copies[cols], np.full(len(copies), row_id, dtype=np.int64),
                          ratio=copies["ratio"].to_numpy(dtype=float), distance=distance, spread=spread)
    return LeakView(row_id=row_id, source=source, copies=copies, match=close.match, schema=train.schema,
                    n_copies=int(n_copies), closeness=close, bins=redaction_bins(train.data, train.schema),
                    **row_key(train, row_id))


def row_key(train: Table, row_id: int) -> dict:
    """The ``key`` and ``key_name`` of a :class:`LeakView` of this training row ({} without a key)."""
    if train.key is None:
        return {}
    return {"key": train.key_of([int(row_id)])[0], "key_name": train.key}


def _run_distance(store_or_result, store) -> str:
    """The distance a run measured with: its config, else its manifest, else ``paper``."""
    cfg = getattr(store_or_result, "config", None)
    if getattr(cfg, "distance", None):
        return cfg.distance
    if store is not None:
        return store.read().config.get("distance") or "paper"
    return "paper"
