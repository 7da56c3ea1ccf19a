"""The hold-out, checked once: :func:`checked_holdout` makes a :class:`CheckedHoldout`, and the floor
(:func:`memviz.measure.floor.holdout_floor`), the DCR share (:func:`memviz.evaluate.synthetic.dcr_share`) and
the privacy tests (:mod:`memviz.evidence`) take one as is; a raw hold-out handed to them is checked through
:func:`checked_holdout` (the DCR share alone keeps its own, older and weaker checks of a raw test split).

The checks, in this order, each refusing in one line naming the hold-out's source, in the words of what
it is checked against (:data:`REFERENCE`, the floor's; :data:`TRAINING`, the privacy tests'):

* its columns are the reference's (a Table of the same schema, or a DataFrame holding every schema column);
* it has rows;
* it shares rows with the training table no more than the training table shares with itself
  (:func:`shared_rows`, the rule docs/refused.md states), the rows as the distance sees them (imputed
  numericals, category codes: :func:`row_hashes`): a training row in the hold-out is a member, and every test
  would read "no difference". Their number is kept (:attr:`CheckedHoldout.n_identical`, the floor's figure);
* it is not the training table itself, row for row (a low-cardinality table repeats nearly all its rows, so
  the rule above cannot tell it from a fresh sample).

The rule compares the hold-out's share of rows equal to a training row, m = I_H / H, with the training table's
leave-one-out share, s = I_N / N (a training row equal to another training row: what a fresh row meets by
chance). A hold-out of which a share c are training rows has m = c + (1 − c) s in expectation, so it is
refused when, at confidence 1 − :data:`SHARED_ROWS_P`, c exceeds :data:`SHARED_ROWS_MARGIN`: when the exact
(Clopper–Pearson) lower bound of m at one-sided level P/2 exceeds s⁺ + δ (1 − s⁺), s⁺ the exact upper bound of
s at level P/2 (two bounds at P/2 each: a fresh hold-out is refused with probability at most P). A
low-cardinality table whose training rows repeat 77.7 % of themselves accepts a hold-out 78.4 % of whose rows
meet a training row; half training rows in a hold-out of a table that repeats none are refused.

The rows of both tables are hashed once here, and a :class:`CheckedHoldout` remembers the table it was
checked against; handed to a function with another reference it is checked again against that one.
:func:`memviz.audit` makes it once and passes it to the floor, the DCR share and the privacy tests (issue 37
item 4). The closeness tests' own refusal (:func:`memviz.measure.tooclose.check_holdout`) is another test: an
exact test of the hold-out's identical share against the training table's own repeats, read from the
standardized distances.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from memviz.errors import BadTable, RefusedVerdict
from memviz.tables.data import Table, check_same_columns, fingerprint, table_from_frame
from memviz.tables.encoding import Encoder

#: the hold-out rule's level (module docstring): a fresh hold-out is refused with probability at most this
SHARED_ROWS_P = 1e-3
#: δ, the share of a hold-out's rows that may be training rows beyond chance before it is refused (2 % of
#: training rows in a hold-out move its floor by under 2 points; 45 % moved it from 23 % to 58 %)
SHARED_ROWS_MARGIN = 0.02

class _Made:
    """The type of :data:`_MADE`: the token only :func:`checked_holdout` passes."""


#: what :class:`CheckedHoldout` accepts from :func:`checked_holdout` alone
_MADE = _Made()


@dataclass(frozen=True)
class Against:
    """What a hold-out is checked against, in the refusals' words (module docstring); its rows are refused
    in one message whatever it is checked against (:meth:`SharedRows.message`), so that every command says
    the same.

    columns : whose columns the hold-out's differ from ("the reference's").
    fingerprints : keep both tables' fingerprints (the floor's provenance reads them).
    empty_first : refuse an empty DataFrame before it is read as a Table (the floor's order).
    """

    columns: str
    fingerprints: bool = False
    empty_first: bool = False


#: the floor's words: the hold-out against the reference rows R
REFERENCE = Against("the reference's", True, True)
#: the privacy tests' words: the hold-out against the training table
TRAINING = Against("the training table's")


@dataclass(frozen=True)
class SharedRows:
    """The hold-out rule's reading (module docstring): I_H of H hold-out rows equal a training row, I_N of N
    training rows equal another training row.

    holdout_low : the exact lower bound of m = I_H / H at one-sided level P / 2.
    train_high : the exact upper bound s⁺ of s = I_N / N at one-sided level P / 2.
    allowed : s⁺ + δ (1 − s⁺), what ``holdout_low`` may reach.
    itself : the hold-out is the training table, row for row.
    """

    n_matching: int
    n_holdout: int
    n_repeated: int
    n_train: int
    holdout_low: float
    train_high: float
    allowed: float
    itself: bool = False

    @property
    def refused(self) -> bool:
        return self.itself or self.holdout_low > self.allowed

    def message(self, source: str) -> str:
        """The one refusal, whichever command reads the hold-out (``audit``'s words)."""
        i_h, h, i_n, n = self.n_matching, self.n_holdout, self.n_repeated, self.n_train
        why = (", row for row: it is the training table itself" if self.itself and self.holdout_low <= self.allowed
               else f", where the training table repeats {100 * i_n / max(n, 1):.1f} % of its own rows")
        return (f"{source}: {i_h:,} of its {h:,} rows ({100 * i_h / max(h, 1):.1f} %) are rows of the training "
                f"table{why}: pass real rows the model never saw (a test split or a hold-out)")


def shared_rows(n_matching: int, n_holdout: int, n_repeated: int, n_train: int, *, itself: bool = False,
                p: float = SHARED_ROWS_P, margin: float = SHARED_ROWS_MARGIN) -> SharedRows:
    """The hold-out rule (module docstring) on the counts.

    Parameters
    ----------
    n_matching, n_holdout : I_H, the hold-out rows equal to a training row, of H.
    n_repeated, n_train : I_N, the training rows equal to another training row, of N.
    itself : the hold-out is the training table row for row (refused whatever the counts).
    p, margin : the level P and the margin δ.

    Returns
    -------
    SharedRows
        ``refused`` when L(I_H, H) > s⁺ + δ (1 − s⁺), with the Clopper–Pearson bounds
        L(x, n) = B⁻¹(P/2; x, n − x + 1) (0 when x = 0) and s⁺ = B⁻¹(1 − P/2; I_N + 1, N − I_N) (1 when
        I_N = N), B⁻¹ the Beta quantile.
    """
    i_h, h, i_n, n = int(n_matching), int(n_holdout), int(n_repeated), int(n_train)
    low = float(stats.beta.ppf(p / 2, i_h, h - i_h + 1)) if i_h > 0 else 0.0
    high = float(stats.beta.ppf(1 - p / 2, i_n + 1, n - i_n)) if i_n < n else 1.0
    return SharedRows(i_h, h, i_n, n, low, high, high + margin * (1 - high), bool(itself))


def refuse_shared_rows(source: str, n_matching: int, n_holdout: int, n_repeated: int, n_train: int, *,
                       itself: bool = False) -> SharedRows:
    """:func:`shared_rows`, refused in one line naming ``source`` (:meth:`SharedRows.message`): the one door
    of the hold-out rule, for :func:`checked_holdout` and the closeness tests'
    :func:`memviz.measure.tooclose.check_holdout`."""
    r = shared_rows(n_matching, n_holdout, n_repeated, n_train, itself=itself)
    if r.refused:
        raise RefusedVerdict(r.message(source))
    return r


def as_table(train: Table, other, role: str, what: str, *, empty_first: bool = False,
             columns: str = "the training table's") -> Table:
    """``other`` (a Table or a DataFrame with the training columns) as a Table of the training schema,
    refused when its columns differ or it has no rows (``empty_first``: an empty DataFrame before it is read)."""
    if isinstance(other, Table):
        if tuple(other.schema.columns) != tuple(train.schema.columns):
            raise BadTable(f"{other.source}: the {what}'s columns differ from {columns}")
        t = other
    else:
        check_same_columns(train, other, what)
        if empty_first and len(other) == 0:
            raise BadTable(f"{what}: the {what} has no rows")
        t = table_from_frame(other.loc[:, list(train.schema.columns)], train.schema, source=what, role=role)
    if len(t) == 0:
        raise BadTable(f"{t.source}: the {what} has no rows")
    return t


def row_hashes(encoder: Encoder, df: pd.DataFrame) -> np.ndarray:
    """(n,) uint64 hash of each row as the distance sees it (imputed numericals, category codes)."""
    enc = encoder.transform(df)
    return pd.util.hash_pandas_object(pd.DataFrame(np.hstack([enc.num, enc.cat.astype(float)])),
                                      index=False).to_numpy()


@dataclass(frozen=True, eq=False)
class CheckedHoldout:
    """A hold-out that passed :func:`checked_holdout` against ``train`` (module docstring); made by that
    function only.

    table : the hold-out as a Table of the training schema.
    train : the table it was checked against (compared by identity).
    n_identical : its rows identical to a row of ``train`` as the distance sees them.
    fingerprint, train_fingerprint : both tables' :func:`~memviz.tables.data.fingerprint` ("" unless checked
        against :data:`REFERENCE`, whose refusal of the reference itself reads them).
    """

    table: Table
    train: Table = field(repr=False)
    n_identical: int = 0
    fingerprint: str = field(default="", repr=False)
    train_fingerprint: str = field(default="", repr=False)
    token: _Made | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.token is not _MADE:
            raise TypeError("a CheckedHoldout is made by memviz.tables.holdout.checked_holdout(train, holdout)")

    def __len__(self) -> int:
        return len(self.table)

    @property
    def source(self) -> str:
        return self.table.source


def checked_holdout(train: Table, holdout, *, against: Against = TRAINING,
                    encoder: Encoder | None = None) -> CheckedHoldout:
    """The hold-out checked once against ``train``: columns, rows, the table itself, its rows (module docstring).

    Parameters
    ----------
    train : the table the hold-out must stay out of (the training table, or the floor's reference rows).
    holdout : a :class:`CheckedHoldout` (returned as is when checked against ``train``), a Table of the
        training schema or a DataFrame holding the training columns.
    against : :data:`TRAINING` or :data:`REFERENCE`, the refusals' words.
    encoder : the distance's encoder fitted on ``train`` (an engine's ``encoder_``); None: fitted here.

    Returns
    -------
    CheckedHoldout

    Raises
    ------
    MemvizError
        Other columns, no rows, or rows shared with ``train`` beyond what it shares with itself, or ``train``
        itself (:func:`shared_rows`).
    """
    if isinstance(holdout, CheckedHoldout):
        if holdout.train is train and (holdout.fingerprint or not against.fingerprints):
            return holdout
        holdout = holdout.table
    hold = as_table(train, holdout, "test", "hold-out", empty_first=against.empty_first, columns=against.columns)
    if encoder is None:
        s = train.schema
        encoder = Encoder.fit(train.data, s.distance_numerical, s.distance_categorical)
    h_hash, t_hash = row_hashes(encoder, hold.data), row_hashes(encoder, train.data)
    same = int(np.isin(h_hash, t_hash).sum())
    _, first, counts = np.unique(t_hash, return_inverse=True, return_counts=True)
    repeated = int((counts[first] > 1).sum())          # training rows equal to another training row
    refuse_shared_rows(hold.source, same, len(hold), repeated, len(train),
                       itself=len(h_hash) == len(t_hash) and bool(np.array_equal(h_hash, t_hash)))
    prints = (fingerprint(hold), fingerprint(train)) if against.fingerprints else ("", "")
    return CheckedHoldout(hold, train, same, prints[0], prints[1], _MADE)
