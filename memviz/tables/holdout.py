"""The hold-out, checked once: :func:`checked_holdout` makes a :class:`CheckedHoldout`, and the floor
(:func:`memviz.measure.floor.holdout_floor`), the DCR share (:func:`memviz.evaluate.synthetic.dcr_share`) and
the privacy tests (:mod:`memviz.evidence`) take one as is; a raw hold-out handed to them is checked through
:func:`checked_holdout` (the DCR share alone keeps its own, older and weaker checks of a raw test split).

The checks, in this order, each refusing in one line naming the hold-out's source, in the words of what
it is checked against (:data:`REFERENCE`, the floor's; :data:`TRAINING`, the privacy tests'):

* its columns are the reference's (a Table of the same schema, or a DataFrame holding every schema column);
* it has rows;
* (:data:`REFERENCE` only) it is not the reference table itself (equal :func:`~memviz.tables.data.fingerprint`);
* at most :data:`SAME_ROWS_LIMIT` of its rows are reference rows, the rows as the distance sees them
  (imputed numericals, category codes: :func:`row_hashes`): those are members, and every test would read
  "no difference". Their number is kept (:attr:`CheckedHoldout.n_identical`, the floor's figure).

The rows of both tables are hashed once here, and a :class:`CheckedHoldout` remembers the table it was
checked against; handed to a function with another reference it is checked again against that one.
:func:`memviz.audit` makes it once and passes it to the floor, the DCR share and the privacy tests (issue 37
item 4). The closeness tests' own refusal (:func:`memviz.measure.dcr.check_holdout`) is another test: an
exact test of the hold-out's identical share against the training table's own repeats, read from the
standardized distances.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memviz.errors import MemvizError
from memviz.tables.data import Table, check_same_columns, fingerprint, table_from_frame
from memviz.tables.encoding import Encoder

#: a hold-out with more than this share of rows identical to reference rows is refused
SAME_ROWS_LIMIT = 0.5

#: what :class:`CheckedHoldout` accepts from :func:`checked_holdout` alone
_MADE = object()


@dataclass(frozen=True)
class Against:
    """What a hold-out is checked against, in the refusals' words (module docstring).

    columns : whose columns the hold-out's differ from ("the reference's").
    rows : what its rows are and what to pass instead ("reference rows; pass real rows outside the reference").
    itself : the refusal of the reference table itself ("" : no such refusal, the row count says it).
    empty_first : refuse an empty DataFrame before it is read as a Table (the floor's order).
    """

    columns: str
    rows: str
    itself: str = ""
    empty_first: bool = False


#: the floor's words: the hold-out against the reference rows R
REFERENCE = Against("the reference's", "reference rows; pass real rows outside the reference",
                    "the hold-out is the reference table itself; pass real rows it does not hold", True)
#: the privacy tests' words: the hold-out against the training table
TRAINING = Against("the training table's", "training rows; pass real rows the model never trained on")


def as_table(train: Table, other, role: str, what: str, *, empty_first: bool = False,
             columns: str = "the training table's") -> Table:
    """``other`` (a Table or a DataFrame with the training columns) as a Table of the training schema,
    refused when its columns differ or it has no rows (``empty_first``: an empty DataFrame before it is read)."""
    if isinstance(other, Table):
        if tuple(other.schema.columns) != tuple(train.schema.columns):
            raise MemvizError(f"{other.source}: the {what}'s columns differ from {columns}")
        t = other
    else:
        check_same_columns(train, other, what)
        if empty_first and len(other) == 0:
            raise MemvizError(f"{what}: the {what} has no rows")
        t = table_from_frame(other.loc[:, list(train.schema.columns)], train.schema, source=what, role=role)
    if len(t) == 0:
        raise MemvizError(f"{t.source}: the {what} has no rows")
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
    token: object = field(default=None, repr=False, compare=False)

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
        Other columns, no rows, the reference itself, or more than half of its rows ``train``'s rows.
    """
    if isinstance(holdout, CheckedHoldout):
        if holdout.train is train and (holdout.fingerprint or not against.itself):
            return holdout
        holdout = holdout.table
    hold = as_table(train, holdout, "test", "hold-out", empty_first=against.empty_first, columns=against.columns)
    prints = ("", "")
    if against.itself:
        prints = (fingerprint(hold), fingerprint(train))
        if prints[0] == prints[1]:
            raise MemvizError(f"{hold.source}: {against.itself}")
    if encoder is None:
        s = train.schema
        encoder = Encoder.fit(train.data, s.distance_numerical, s.distance_categorical)
    same = int(np.isin(row_hashes(encoder, hold.data), row_hashes(encoder, train.data)).sum())
    if same > SAME_ROWS_LIMIT * len(hold):
        raise MemvizError(f"{hold.source}: {same} of {len(hold)} hold-out rows are {against.rows} "
                          "(the test split or a hold-out)")
    return CheckedHoldout(hold, train, same, prints[0], prints[1], _MADE)
