"""The hold-out, checked once: :func:`checked_holdout` makes a :class:`CheckedHoldout`, and every privacy test
takes either one (used as is) or a raw hold-out (checked through :func:`checked_holdout`).

The checks, in this order, each refusing in one line naming the hold-out's source:

* its columns are the training table's (a Table of the same schema, or a DataFrame holding every schema column);
* it has rows;
* at most half of its rows are training rows (equal on every schema column,
  :func:`~memviz.tables.encoding.row_keys`): those are members, and every test would read "no difference".

A :class:`CheckedHoldout` remembers the training table it was checked against; handed to a test with another
training table it is checked again against that one. :func:`memviz.evidence.suite.audit_evidence`,
:func:`memviz.evidence.suite.privacy_evidence` and :func:`memviz.audit` make it once and pass it to every test
(issue 37 item 4: one audit checked the hold-out's columns and emptiness six times over, and no boolean flag
says "checked already" any more).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from memviz.errors import MemvizError
from memviz.measure.floor import SAME_ROWS_LIMIT
from memviz.tables.data import Table, check_same_columns, table_from_frame
from memviz.tables.encoding import row_keys

#: what :class:`CheckedHoldout` accepts from :func:`checked_holdout` alone
_MADE = object()


def as_table(train: Table, other, role: str, what: str) -> Table:
    """``other`` (a Table or a DataFrame with the training columns) as a Table of the training schema,
    refused when its columns differ or it has no rows."""
    if isinstance(other, Table):
        if tuple(other.schema.columns) != tuple(train.schema.columns):
            raise MemvizError(f"{other.source}: the {what}'s columns differ from the training table's")
        t = other
    else:
        check_same_columns(train, other, what)
        t = table_from_frame(other.loc[:, list(train.schema.columns)], train.schema, source=what, role=role)
    if len(t) == 0:
        raise MemvizError(f"{t.source}: the {what} has no rows")
    return t


@dataclass(frozen=True, eq=False)
class CheckedHoldout:
    """A hold-out that passed :func:`checked_holdout` against ``train`` (module docstring); made by that
    function only.

    table : the hold-out as a Table of the training schema.
    train : the training table it was checked against (compared by identity).
    """

    table: Table
    train: Table = field(repr=False)
    token: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.token is not _MADE:
            raise TypeError("a CheckedHoldout is made by memviz.evidence.holdout.checked_holdout(train, holdout)")

    def __len__(self) -> int:
        return len(self.table)

    @property
    def source(self) -> str:
        return self.table.source


def checked_holdout(train: Table, holdout) -> CheckedHoldout:
    """The hold-out checked once against ``train``: columns, rows, training rows (module docstring).

    Parameters
    ----------
    train : the training table.
    holdout : a :class:`CheckedHoldout` (returned as is when checked against ``train``), a Table of the
        training schema or a DataFrame holding the training columns.

    Returns
    -------
    CheckedHoldout

    Raises
    ------
    MemvizError
        Other columns, no rows, or more than half of its rows training rows.
    """
    if isinstance(holdout, CheckedHoldout):
        if holdout.train is train:
            return holdout
        holdout = holdout.table
    hold = as_table(train, holdout, "test", "hold-out")
    cols = list(train.schema.columns)
    same = int(np.isin(row_keys(hold.data, cols), row_keys(train.data, cols)).sum())
    if same > SAME_ROWS_LIMIT * len(hold):
        raise MemvizError(f"{hold.source}: {same} of {len(hold)} hold-out rows are training rows; pass real rows "
                          "the model never trained on (the test split or a hold-out)")
    return CheckedHoldout(hold, train, _MADE)
