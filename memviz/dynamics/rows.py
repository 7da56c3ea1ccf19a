"""Per-training-row memorization dynamics from a warm-up's checks table.

Input is the long **checks table** the warm-up tracker writes: one row per
(check, synthetic row) with columns ``check`` (0-based check index), ``epoch``
(epochs finished at that check), ``synthetic_id``, ``nn1`` (``row_id`` of the
nearest training row), ``d1``, ``d2``, ``ratio`` = d1 / d2 (NaN for 0/0) and
``memorized`` (ratio < 1/3). Synthetic rows are fresh samples at every check, so
everything here is keyed by the *training* row they are attributed to (their NN1).

Notation: training row i (``row_id``), check e (in check order), synthetic row g
with nearest training row NN1(g) and ratio r_g.

* copy count          c_i(e) = #{g at check e : NN1(g) = i and g memorized}
* per-row Mem-AUC     A_i(e) = sum over g at check e with NN1(g) = i and r_g finite of (1 - r_g)
  (over **all** synthetic rows whose NN1 is i, memorized or not; docs/method.md section 2)
* cumulative count    C_i(e) = sum_{e' <= e} c_i(e');  total count  C_i = C_i(last check)
* first memorization  the epoch of the first check with c_i(e) > 0 (censored when none)
* forgetting events   F_i = #{consecutive checks (e, e+) : c_i(e) > 0 and c_i(e+) = 0}
* Top group           the ceil(top_frac * N) rows with the largest total count,
  ties broken by the lowest ``row_id``

These are the paper's definitions. Statistics that compare Top with Non-Top on the same
checks that formed the groups are circular (see :func:`memviz.dynamics.summaries.summarize`); the non-circular
versions are in :mod:`memviz.dynamics.splithalf` and the null model in :mod:`memviz.dynamics.nullmodel`;
concentration, the heavy tail and the paper's Top vs Non-Top summary in :mod:`memviz.dynamics.summaries`.

Everything is held densely (N training rows x C checks) in :class:`RowDynamics`, so
rescoring (see :mod:`memviz.dynamics.dynamiccut`) is pure numpy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadTable
from memviz.measure.memorization import auc_terms

CHECK_COLUMNS = ("check", "epoch", "synthetic_id", "nn1", "d1", "d2", "ratio", "memorized")
DEFAULT_TOP_FRAC = 0.10


def ceil_share(share: float, n: int) -> int:
    """Number of rows in a share: ``ceil(share * n)``, robust to float noise.

    ``0.1 * 30`` is ``3.0000000000000004`` in floating point; the product is rounded
    to 9 decimals before the ceiling so it gives 3, not 4.
    """
    return int(math.ceil(round(share * n, 9)))


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class RowDynamics:
    """Dense per-row dynamics: N training rows (sorted by ``row_id``) x C checks.

    Attributes
    ----------
    row_ids : ndarray, int64, (N,)
        All training ``row_id`` values, ascending; every other (N, ...) array is aligned to it.
    checks : ndarray, int64, (C,)
        Check indices as found in the checks table, ascending.
    epochs : ndarray, int64, (C,)
        Epochs finished at each check (non-decreasing).
    n_synthetic : ndarray, int64, (C,)
        Synthetic rows evaluated at each check.
    counts : ndarray, int32, (N, C)
        Copy counts c_i(e).
    auc : ndarray, float64, (N, C)
        Per-row Mem-AUC A_i(e) = sum of (1 - r) over synthetic rows with NN1 = i and finite r: in
        [0, n_synthetic[e]], not [0, 1] (the run's Mem-AUC is sum_i A_i(e) / n_synthetic[e], in [0, 1]).
    cumulative : ndarray, int64, (N, C)
        C_i(e) = cumsum of ``counts`` along checks.
    total : ndarray, int64, (N,)
        Total count C_i = cumulative[:, -1].
    first_check : ndarray, int64, (N,)
        Position (0..C-1) of the first check with c_i > 0; -1 when never memorized.
    first_epoch : ndarray, float64, (N,)
        ``epochs[first_check]``; NaN when never memorized (censored).
    censored : ndarray, bool, (N,)
        True when the row was never memorized during the warm-up.
    forgetting_events : ndarray, int64, (N,)
        F_i = #{e : c_i(e) > 0 and c_i(e+1) = 0}.
    top : ndarray, bool, (N,)
        Membership of the Top group (see :func:`top_mask`).
    top_frac : float
        The share used for ``top``.
    """

    row_ids: np.ndarray
    checks: np.ndarray
    epochs: np.ndarray
    n_synthetic: np.ndarray
    counts: np.ndarray
    auc: np.ndarray
    cumulative: np.ndarray
    total: np.ndarray
    first_check: np.ndarray
    first_epoch: np.ndarray
    censored: np.ndarray
    forgetting_events: np.ndarray
    top: np.ndarray
    top_frac: float = DEFAULT_TOP_FRAC

    @property
    def n_rows(self) -> int:
        return int(self.row_ids.shape[0])

    @property
    def n_checks(self) -> int:
        return int(self.epochs.shape[0])

    @property
    def ever_memorized(self) -> np.ndarray:
        """(N,) bool: C_i > 0."""
        return self.total > 0

    def to_frame(self) -> pd.DataFrame:
        """One row per training row (RangeIndex; ``row_id`` is a column).

        Columns: row_id, total_count, ever_memorized, first_check, first_epoch, censored,
        forgetting_events, copy_checks (#checks with c_i > 0), mem_auc_sum (sum_e A_i(e)),
        mem_auc_max (max_e A_i(e)), top.
        """
        return pd.DataFrame({
            "row_id": self.row_ids,
            "total_count": self.total,
            "ever_memorized": self.ever_memorized,
            "first_check": self.first_check,
            "first_epoch": self.first_epoch,
            "censored": self.censored,
            "forgetting_events": self.forgetting_events,
            "copy_checks": (self.counts > 0).sum(axis=1).astype(np.int64),
            "mem_auc_sum": self.auc.sum(axis=1),
            "mem_auc_max": self.auc.max(axis=1),
            "top": self.top,
        })

    def to_long(self) -> pd.DataFrame:
        """Tidy (N * C rows, row-major: all checks of the first row first).

        Columns: row_id, check, epoch, count, mem_auc, cumulative.
        """
        n, c = self.counts.shape
        return pd.DataFrame({
            "row_id": np.repeat(self.row_ids, c),
            "check": np.tile(self.checks, n),
            "epoch": np.tile(self.epochs, n),
            "count": self.counts.ravel(),
            "mem_auc": self.auc.ravel(),
            "cumulative": self.cumulative.ravel(),
        })


def top_mask(total: np.ndarray, row_ids: np.ndarray, top_frac: float = DEFAULT_TOP_FRAC) -> np.ndarray:
    """Top group: the ``ceil(top_frac * N)`` rows with the largest ``total`` (any per-row count).

    Ties are broken by the lowest ``row_id``, so the group is a deterministic function of
    the counts. When fewer than ``ceil(top_frac * N)`` rows were ever copied, the Top group
    is filled with never-copied rows of lowest ``row_id`` (it always has that size).
    """
    if not 0.0 < float(top_frac) <= 1.0:
        raise BadOption(f"top_frac must be in (0, 1], got {top_frac}")
    n_top = ceil_share(float(top_frac), len(total))
    order = np.lexsort((row_ids, -np.asarray(total, dtype=np.int64)))  # descending count, then row_id
    mask = np.zeros(len(total), dtype=bool)
    mask[order[:n_top]] = True
    return mask


def _check_columns(checks: pd.DataFrame) -> None:
    if not isinstance(checks, pd.DataFrame):
        raise BadTable(f"checks table must be a pandas DataFrame, got {type(checks).__name__}")
    missing = [c for c in ("check", "epoch", "nn1", "ratio", "memorized") if c not in checks.columns]
    if missing:
        raise BadTable(f"checks table is missing column(s) {', '.join(missing)}")
    if len(checks) == 0:
        raise BadTable("checks table is empty: the warm-up recorded no check")


def _int_column(checks: pd.DataFrame, name: str) -> np.ndarray:
    col = checks[name].to_numpy()
    if col.dtype.kind in "iu":
        return col.astype(np.int64, copy=False)
    as_float = np.asarray(col, dtype=np.float64)
    if not np.all(np.isfinite(as_float)) or np.any(as_float != np.round(as_float)):
        raise BadTable(f"checks table column {name} must hold integers")
    return as_float.astype(np.int64)


def _check_index(checks: pd.DataFrame):
    """Distinct checks, their epochs and each table row's check position."""
    check = _int_column(checks, "check")
    epoch = _int_column(checks, "epoch")
    uniq, inverse = np.unique(check, return_inverse=True)  # (C,), (S_total,)
    epochs = np.zeros(len(uniq), dtype=np.int64)
    epochs[inverse] = epoch
    if np.any(epochs[inverse] != epoch):
        bad = uniq[np.unique(inverse[epochs[inverse] != epoch])[0]]
        raise BadTable(f"checks table: check {bad} has more than one epoch")
    if np.any(np.diff(epochs) < 0):
        raise BadTable("checks table: epochs decrease as the check index grows")
    return uniq, epochs, inverse


def _row_positions(nn1: np.ndarray, row_ids: np.ndarray) -> np.ndarray:
    """Map training row_ids to positions in the sorted ``row_ids`` (searchsorted)."""
    pos = np.searchsorted(row_ids, nn1)
    pos_clip = np.minimum(pos, len(row_ids) - 1)
    unknown = row_ids[pos_clip] != nn1
    if np.any(unknown):
        bad = np.unique(nn1[unknown])
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        raise BadTable(f"checks table: nn1 {bad[0]}{more} is not a training row_id")
    return pos


def _train_ids(train_row_ids) -> np.ndarray:
    ids = np.asarray(train_row_ids)
    if ids.ndim != 1 or ids.size == 0 or ids.dtype.kind not in "iu":
        raise BadTable("train_row_ids must be a non-empty 1-D array of integer row_ids")
    ids = np.sort(ids.astype(np.int64))
    if np.any(ids[1:] == ids[:-1]):
        dup = ids[1:][ids[1:] == ids[:-1]][0]
        raise BadTable(f"train_row_ids: row_id {dup} appears more than once")
    return ids


@dataclass(frozen=True, eq=False)
class CheckEvents:
    """The checks table as flat per-event arrays (one event = one synthetic row at one check).

    Attributes
    ----------
    row_ids, check_ids, epochs : ndarray, int64, (N,), (C,), (C,)
        As in :class:`RowDynamics`.
    row_pos : ndarray, int64, (S,)
        Position of each event's NN1 in ``row_ids``.
    check_pos : ndarray, int64, (S,)
        Position of each event's check in ``check_ids``.
    value : ndarray, float64, (S,)
        The event's Mem-AUC term 1 - r (0 when r is not finite), rounded to a multiple of
        2**-30 so that every sum of these terms is exact in float64.
    memorized : ndarray, bool, (S,)
        The table's ``memorized`` column (the metric's decision, r < 1/3), as given.
    """

    row_ids: np.ndarray
    check_ids: np.ndarray
    epochs: np.ndarray
    row_pos: np.ndarray
    check_pos: np.ndarray
    value: np.ndarray
    memorized: np.ndarray


def check_events(checks: pd.DataFrame, train_row_ids) -> CheckEvents:
    """Validate a checks table and flatten it to :class:`CheckEvents`.

    Raises
    ------
    MemvizError
        As :func:`compute_dynamics`.
    """
    _check_columns(checks)
    row_ids = _train_ids(train_row_ids)
    check_ids, epochs, check_pos = _check_index(checks)  # (C,), (C,), (S,)
    row_pos = _row_positions(_int_column(checks, "nn1"), row_ids)  # (S,)
    ratio = checks["ratio"].to_numpy(dtype=np.float64)
    one_minus_r = auc_terms(ratio)  # (S,), NaN ratio counts 0; exact sums, order-free
    return CheckEvents(row_ids=row_ids, check_ids=check_ids, epochs=epochs, row_pos=row_pos,
                       check_pos=check_pos, value=one_minus_r,
                       memorized=checks["memorized"].to_numpy(dtype=bool))


def dynamics_from_events(ev: CheckEvents, top_frac: float = DEFAULT_TOP_FRAC, *,
                         row_pos: np.ndarray | None = None, check_pos: np.ndarray | None = None,
                         value: np.ndarray | None = None) -> RowDynamics:
    """:class:`RowDynamics` of a :class:`CheckEvents`, optionally with its events reassigned.

    ``row_pos``, ``check_pos`` and ``value`` (each (S,), aligned with ``ev.memorized``)
    replace the events' own; the null model (:mod:`memviz.dynamics.nullmodel`) passes resampled ones.
    """
    row_pos = ev.row_pos if row_pos is None else row_pos
    check_pos = ev.check_pos if check_pos is None else check_pos
    value = ev.value if value is None else value
    n, c = len(ev.row_ids), len(ev.check_ids)
    flat = row_pos * c + check_pos  # (S,) index into the (N, C) matrices
    counts = np.bincount(flat[ev.memorized], minlength=n * c).reshape(n, c).astype(np.int32)  # (N, C)
    auc = np.bincount(flat, weights=value, minlength=n * c).reshape(n, c)  # (N, C)
    n_synthetic = np.bincount(check_pos, minlength=c).astype(np.int64)  # (C,)
    return dynamics_from_matrices(ev.row_ids, ev.check_ids, ev.epochs, n_synthetic, counts, auc, top_frac)


def dynamics_from_matrices(row_ids, check_ids, epochs, n_synthetic, counts, auc,
                           top_frac: float = DEFAULT_TOP_FRAC) -> RowDynamics:
    """:class:`RowDynamics` from c_i(e) (``counts``, (N, C)) and A_i(e) (``auc``, (N, C)).

    Derived fields: C_i(e) = cumsum_e c_i(e), first check = argmax_e [c_i(e) > 0],
    F_i = sum_e [c_i(e) > 0][c_i(e+1) = 0], Top = :func:`top_mask` of C_i.
    """
    cumulative = np.cumsum(counts, axis=1, dtype=np.int64)  # (N, C)
    total = cumulative[:, -1].copy()
    copied = counts > 0  # (N, C)
    first_check = np.where(total > 0, np.argmax(copied, axis=1), -1).astype(np.int64)
    censored = first_check < 0
    first_epoch = np.where(censored, np.nan, epochs[np.maximum(first_check, 0)].astype(np.float64))
    forgetting = (copied[:, :-1] & ~copied[:, 1:]).sum(axis=1).astype(np.int64)
    top = top_mask(total, row_ids, top_frac)
    return RowDynamics(
        row_ids=_frozen(row_ids), checks=_frozen(check_ids), epochs=_frozen(epochs),
        n_synthetic=_frozen(n_synthetic), counts=_frozen(counts), auc=_frozen(auc),
        cumulative=_frozen(cumulative), total=_frozen(total), first_check=_frozen(first_check),
        first_epoch=_frozen(first_epoch), censored=_frozen(censored),
        forgetting_events=_frozen(forgetting), top=_frozen(top), top_frac=float(top_frac),
    )


def compute_dynamics(checks: pd.DataFrame, train_row_ids, top_frac: float = DEFAULT_TOP_FRAC) -> RowDynamics:
    """Build :class:`RowDynamics` from a checks table.

    Parameters
    ----------
    checks : DataFrame
        The long checks table (columns ``check``, ``epoch``, ``nn1``, ``ratio``,
        ``memorized``; others are ignored). ``memorized`` is taken as given (the metric's
        decision, r < 1/3), not recomputed from ``ratio``.
    train_row_ids : array of int
        **All** training row_ids (order irrelevant): rows never copied get zero counts.
    top_frac : float, default 0.10
        Share of rows in the Top group (by total count, ties to the lowest row_id).

    Returns
    -------
    RowDynamics
        c_i(e) and A_i(e) are computed with ``np.bincount`` on the flat index
        ``position(i) * C + check_position(e)``, then
        C_i(e) = cumsum_e c_i(e), first check = argmax_e [c_i(e) > 0],
        F_i = sum_e [c_i(e) > 0][c_i(e+1) = 0]. Each term 1 - r is first rounded to a
        multiple of 2**-30 (error < 1e-9), which makes the float sums exact and so
        independent of the order of the table's rows: equal scores stay exactly equal.

    Raises
    ------
    MemvizError
        A missing column, an empty table, a check with two epochs, epochs decreasing with
        the check index, duplicated train row_ids, or an ``nn1`` that is not a training row_id.
    """
    return dynamics_from_events(check_events(checks, train_row_ids), top_frac)


def check_summary(checks: pd.DataFrame) -> pd.DataFrame:
    """Whole-table memorization at every check.

    Columns: check, epoch, n_synthetic, n_memorized,
    mem_ratio = n_memorized / n_synthetic, and
    mem_auc = (1 / S) * sum_g (1 - r_g) with the term counted as 0 when r_g is not finite
    (an NaN ratio, 0/0, is below no threshold), i.e. integral_0^1 MemRatio(tau) dtau.
    """
    _check_columns(checks)
    check_ids, epochs, check_pos = _check_index(checks)
    c = len(check_ids)
    ratio = checks["ratio"].to_numpy(dtype=np.float64)
    one_minus_r = np.where(np.isfinite(ratio), 1.0 - ratio, 0.0)
    n_syn = np.bincount(check_pos, minlength=c)
    n_mem = np.bincount(check_pos, weights=checks["memorized"].to_numpy(dtype=bool), minlength=c)
    auc_sum = np.bincount(check_pos, weights=one_minus_r, minlength=c)
    return pd.DataFrame({
        "check": check_ids, "epoch": epochs, "n_synthetic": n_syn.astype(np.int64),
        "n_memorized": n_mem.astype(np.int64), "mem_ratio": n_mem / n_syn, "mem_auc": auc_sum / n_syn,
    })
