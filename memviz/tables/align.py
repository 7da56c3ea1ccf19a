"""Another table read in the training table's own coding.

A generated table or a hold-out is compared with the training table cell by cell: a category written
another way matches nothing, and a table of verbatim training rows then looks far from them (500 verbatim
Adult rows with the target written 0/1 read "no copying"). So, before any distance, each categorical
column of the other table is read against the training column's categories (canonical values,
:func:`memviz.tables.encoding.canonical_series`: ``1`` = ``1.0`` = ``"1"``):

* a value carrying the spreadsheet guard (a leading ``'`` before ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return, as memviz's own CSV exports write it, :func:`memviz.io.neutralise_csv`) whose unguarded
  form is a training category, and is not one itself, is read as that category; so is a header;
* values still unknown to the training column are refused, in one line naming the file, the column and
  the values, when they are clearly more than fresh real rows would hold (another coding: 0/1 for
  ``<=50K``/``>50K``, codes for words). Fresh rows do hold some: a category too rare to be among the
  training rows. Their expected share is the training column's Good–Turing estimate of the unseen mass,
  n₁ / N (n₁ values seen exactly once among N rows), at least :data:`UNSEEN_LIMIT`; a column is refused
  when its count u of unknown values among n rows is improbable under that share, P(Bin(n, share) ≥ u)
  < :data:`UNSEEN_P`. Kept unknown values are said in a notice: such a cell matches no training row.

Missing values are never "unknown": a missing cell is a category of its own everywhere.
"""
from __future__ import annotations

import warnings
from dataclasses import replace

import pandas as pd
from scipy import stats

from memviz.errors import BadTable
from memviz.io import FORMULA_STARTS
from memviz.tables.encoding import MISSING, canonical_series
from memviz.tables.infer import SchemaWarning, is_integer_valued
from memviz.tables.schema import ADAPTED, UNJUDGED

#: the least share of unknown categories a fresh row may hold (module docstring)
UNSEEN_LIMIT = 0.01
#: a column whose unknown categories are this improbable for fresh rows is refused
UNSEEN_P = 1e-3
#: values named in a refusal or a notice
SHOWN_VALUES = 3


def unguard(value: str) -> str | None:
    """The value without the spreadsheet guard (``"'-"`` → ``"-"``), or None when it carries none."""
    if isinstance(value, str) and len(value) > 1 and value[0] == "'" and value[1:].startswith(FORMULA_STARTS):
        return value[1:]
    return None


def align_to(frame: pd.DataFrame, train_frame: pd.DataFrame, categorical, source: str,
             ) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``frame`` with its guarded headers and categories read in ``train_frame``'s coding (module docstring).

    Parameters
    ----------
    frame : the other table (generated rows, or a hold-out).
    train_frame : the training rows.
    categorical : the categorical columns to read (the schema's, target included).
    source : the other table's name, for the refusal and the notices.

    Returns
    -------
    (frame, notices) : a new frame where anything changed (else ``frame`` itself) and the notices.

    Raises
    ------
    BadTable
        A column whose unknown categories exceed :data:`UNSEEN_LIMIT` of its rows.
    """
    train_cols = set(train_frame.columns)
    rename = {c: unguard(c) for c in frame.columns
              if c not in train_cols and unguard(c) is not None and unguard(c) in train_cols}
    out = frame.rename(columns=rename) if rename else frame
    notices = []
    for col in categorical:
        if col not in out.columns or col not in train_cols:
            continue
        known = pd.unique(canonical_series(train_frame[col]))
        canon = canonical_series(out[col])                                 # (n,) object
        unseen = ~pd.Series(canon).isin(known).to_numpy() & (canon != MISSING)
        if not unseen.any():
            continue
        fixed = {v: unguard(v) for v in pd.unique(canon[unseen])}
        fixed = {v: u for v, u in fixed.items() if u is not None and u in set(known)}
        if fixed:
            take = unseen & pd.Series(canon).isin(list(fixed)).to_numpy()
            if out is frame:
                out = frame.copy()
            values = out[col].astype(object).to_numpy().copy()
            values[take] = [fixed[v] for v in canon[take]]
            out[col] = values
            unseen &= ~take
        if not unseen.any():
            continue
        counts = pd.Series(canon[unseen]).value_counts()
        shown = ", ".join(repr(v) for v in counts.index[:SHOWN_VALUES]) + (", ..." if len(counts) > SHOWN_VALUES else "")
        share = unseen.sum() / max(1, len(canon))
        if _improbable(int(unseen.sum()), len(canon), train_frame[col]):
            cats = [v for v in known if v != MISSING]
            example = ", ".join(repr(v) for v in cats[:SHOWN_VALUES]) + (", ..." if len(cats) > SHOWN_VALUES else "")
            raise BadTable(f"{source}: column {col!r}: {100 * share:.0f} % of its rows hold values the training "
                           f"table does not have ({shown}; the training table has {example}): write them in the "
                           "training table's coding")
        notices.append(f"{source}: column {col!r}: {int(unseen.sum()):,} rows hold categories the training table "
                       f"does not have ({shown}); those cells match no training row")
    return out, tuple(notices)


def _improbable(unseen: int, n: int, train_column: pd.Series) -> bool:
    """Whether ``unseen`` unknown values among ``n`` rows are more than fresh rows would hold (module docstring)."""
    counts = pd.Series(canonical_series(train_column)).value_counts()
    good_turing = float((counts == 1).sum()) / max(1, len(train_column))
    return bool(stats.binom.sf(unseen - 1, n, max(UNSEEN_LIMIT, good_turing)) < UNSEEN_P)



# ------------------------------------------------------------------ a guessed schema corrected by generated rows
#: a column whose generated values are at least this share unknown to the training table, and more varied than
#: its own categories, holds a generator's own values (fake personal data), not another coding of the training ones
FOREIGN_SHARE = 0.5


def adapt_to(train, frame: pd.DataFrame, source: str):
    """``train`` (a :class:`~memviz.tables.data.Table`) with its **inferred** kinds corrected by the generated table
    ``frame``, and the notices that say so (``(train, ())`` when nothing changes). A categorical column whose
    unknown values :func:`align_to` would refuse, and whose kind no one declared
    (:meth:`memviz.tables.schema.Schema.declared`; never the target), is

    * read as **numerical** when the training column holds integers and the unknown generated values are numbers
      too (a generator writes integers between the training values: inference read at most 20 distinct integers
      as categories);
    * **left out of the distance** when at least :data:`FOREIGN_SHARE` of the generated rows hold unknown values
      and those are more varied than the training column's categories (a generator's fake personal data, e.g.
      state names SDV anonymizes); the audit says it could not judge it (``extra["unjudged"]``).

    A declared column is left as it is (:func:`align_to` refuses it). Each notice is a :class:`SchemaWarning`, and
    kept in the schema's ``extra["adapted"]`` so that whoever audits the table says them too."""
    s = train.schema
    changes, why, notices, unjudged = {}, {}, [], []
    for col in s.distance_categorical:
        if col == s.target or col not in frame.columns or s.declared(col):
            continue
        known = pd.unique(canonical_series(train.data[col]))
        canon = canonical_series(frame[col])
        unseen = ~pd.Series(canon).isin(known).to_numpy() & (canon != MISSING)
        u = int(unseen.sum())
        if not u or not _improbable(u, len(canon), train.data[col]):
            continue
        share = u / max(1, len(canon))
        values = pd.to_numeric(pd.Series(frame[col].to_numpy()[unseen]), errors="coerce")
        n_cats = len([v for v in known if v != MISSING])
        if is_integer_valued(train.data[col]) and values.notna().all():
            changes[col] = "numerical"
            why[col] = f"read as numerical: {100 * share:.0f} % of the generated rows hold other numbers"
            notices.append(f"{source}: column {col!r}: {100 * share:.0f} % of its rows hold numbers the training "
                           f"table does not have ({', '.join(map(str, values.drop_duplicates().head(SHOWN_VALUES)))}"
                           f", ...): read as numerical, not as {n_cats} categories (declare it --categorical to "
                           "refuse such a table)")
        elif share >= FOREIGN_SHARE and len(pd.unique(canon[unseen])) > n_cats:
            changes[col] = "excluded"
            unjudged.append(col)
            why[col] = f"left out: {100 * share:.0f} % of the generated rows hold values the training table lacks"
            notices.append(f"{source}: column {col!r}: {100 * share:.0f} % of its rows hold values the training "
                           f"table does not have, {len(pd.unique(canon[unseen])):,} different ones against its "
                           f"{n_cats:,} categories (a generator's own values, such as fake personal data): left out "
                           "of the distance, not judged")
    if not changes:
        return train, ()

    for note in notices:                                   # said where the table is read (the CLI: one line each)
        warnings.warn(note, SchemaWarning, stacklevel=3)
    extra = {**s.extra, ADAPTED: [*s.extra.get(ADAPTED, ()), *notices],
             UNJUDGED: [*s.extra.get(UNJUDGED, ()), *unjudged]}
    schema = replace(s.with_overrides(changes, source=source), extra=extra)
    data = train.data[list(schema.columns)].copy()
    for col, kind in changes.items():
        if kind == "numerical":
            data[col] = pd.to_numeric(data[col]).astype(float)
    return replace(train, schema=schema, data=data, why={**train.why, **why}), tuple(notices)
