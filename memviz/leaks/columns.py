"""Which attributes leak: how often a generated row's column equals its NN1 training row's.

Per column and per column pair, for memorized and non-memorized generated rows (the
dashboard's column heatmap). Cell equality is :func:`memviz.measure.closeness.cell_matches`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadRunFolder, BadTable
from memviz.leaks.rows import resolve_run
from memviz.measure.closeness import RTOL, cell_matches
from memviz.tables.data import Table


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
            raise BadTable(f"{name} is missing column(s) {', '.join(missing)}")
    keys = ["synthetic_id"]
    if "check" in long.columns and long["check"].nunique() > 1:
        if "check" not in samples.columns:
            raise BadTable("the long table spans several checks: give samples a check column, or one check's rows")
        keys = ["check", "synthetic_id"]
    missing = [c for c in train.schema.columns if c not in samples.columns]
    if missing:
        raise BadTable(f"samples: column {missing[0]!r} of the training table is missing")
    idx = pd.MultiIndex.from_frame(samples[keys]) if len(keys) > 1 else pd.Index(samples["synthetic_id"])
    want = pd.MultiIndex.from_frame(long[keys]) if len(keys) > 1 else pd.Index(long["synthetic_id"])
    pos = idx.get_indexer(want)
    if (pos < 0).any():
        raise BadTable(f"generated row {want[int(np.flatnonzero(pos < 0)[0])]} of the long table is not in samples")
    gen = samples.iloc[pos]  # (G, ...) aligned with long
    nn1 = long["nn1"].to_numpy(dtype=np.int64)
    rpos = train.data.index.get_indexer(nn1)
    if (rpos < 0).any():
        raise BadTable(f"nn1 {nn1[rpos < 0][0]} is not a training row_id")
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
    store, long = resolve_run(store_or_result)
    long = checks if checks is not None else long
    if store is None:
        raise BadRunFolder("this run is held in memory only: its generated rows were not kept")
    long = store.checks() if long is None else long
    if long.empty:
        raise BadRunFolder("the run has no finished check yet")
    check = int(long["check"].max()) if check is None else int(check)
    sub = long[long["check"] == check]
    if sub.empty:
        raise BadOption(f"check {check} is not a finished check of this run")
    return column_match_rates(train if train is not None else store.train(), store.samples(check), sub)
