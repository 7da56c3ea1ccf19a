"""Loading tables, inferring schemas, and validating user data.

A :class:`Table` is a pandas DataFrame whose index is the stable ``row_id`` (by
default the 0-based position of the row in the loaded file) plus its
:class:`~memviz.tables.schema.Schema`. The ``row_id`` travels from load to prune and into
every output; nothing downstream keys rows by position.

The user's row key
------------------
A column that identifies rows (an ID: integers, with gaps or not, or text, with one
distinct value per row; SDV's ``id`` sdtype) is no feature: inference makes it the
schema's ``key``, it stays out of the distance, and the table keeps its values
(:attr:`Table.keys`, indexed by ``row_id``) to name rows the way the user knows them:
:meth:`Table.key_of`, :meth:`Table.row_names`, :meth:`Table.with_keys`,
:meth:`Table.to_frame` (the key column written back into every table memviz writes).

A composite key (several columns that together name a row, e.g. ``branch`` and
``account_no``; declared, never inferred) is kept as one column per key column
(:attr:`Table.keys` is then a DataFrame): files carry each column under its own name,
JSON an object per row (:meth:`Table.key_list`), text ``branch=North, account_no=17``
(:meth:`Table.row_names`). The combination must be unique in the training table
(:func:`check_composite_key`: one line naming the columns and one repeated value).

Missing values
--------------
* categorical (and target) cells: a missing value is a category of its own; it
  equals another missing value and nothing else;
* numerical cells: kept as NaN in the table. The memorization distance replaces a
  missing numerical by the mean of that column in the training table (for the
  training rows and the synthetic rows alike), as the reference TabDDPM pipeline
  does; the generators impute the same way.
"""
from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from memviz.errors import BadTable
from memviz.tables.describe import kind_reasons
from memviz.tables.read import (  # noqa: F401 (the reading half, re-exported)
    MAX_CATEGORIES,
    MAX_COLUMNS,
    check_frame,
    read_csv_bytes,
    read_frame,
)
from memviz.tables.infer import (  # noqa: F401 (the inference half, re-exported)
    KEY_DENSITY,
    KEY_MIN_ROWS,
    KEY_NAMES,
    KEY_SHARE,
    MAX_INT_CATEGORIES,
    MIN_ROWS,
    NEAR_UNIQUE,
    KeyNote,
    SchemaWarning,
    TargetSuggestion,
    is_date_like,
    is_integer_valued,
    infer_schema,
    key_reason,
    suggest_target,
)
from memviz.tables.infer import key_named, repeats
from memviz.tables.redact import key_labels
from memviz.tables.schema import INFERRED, Schema, key_text

ROW_ID = "row_id"


@dataclass(frozen=True)
class Table:
    """A table ready for memviz: schema columns only, indexed by ``row_id``.

    Attributes
    ----------
    data : pandas.DataFrame
        Columns ``schema.columns`` in that order; index named ``row_id`` (int64, unique).
    schema : Schema
    source : str
        Where the table came from (a path or a description), used in messages.
    """

    data: pd.DataFrame
    schema: Schema
    source: str = "table"
    #: the user's row key (``schema.key``) of every row, indexed by row_id like ``data``: a Series for a
    #: one-column key, a DataFrame of the key's columns for a composite key; None when the table has no key
    #: (or it was built without one, e.g. generated rows)
    keys: pd.Series | pd.DataFrame | None = field(default=None, compare=False, repr=False)
    #: the user's column order (the file's) of the key and the schema columns; () when unknown
    order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: where the schema came from (:data:`memviz.tables.describe.ORIGINS`: inferred, file, sdv, given; "" unknown)
    origin: str = field(default="", compare=False, repr=False)
    #: {column: why it has its kind} for every column of the file it was read from
    #: (:func:`memviz.tables.describe.kind_reasons`; {} when unknown)
    why: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.data)

    @property
    def row_ids(self) -> np.ndarray:
        return self.data.index.to_numpy(dtype=np.int64)

    def _keys_for(self, data: pd.DataFrame) -> pd.Series | None:
        if self.keys is None:
            return None
        if self.keys.index.equals(data.index):
            return self.keys
        return self.keys.reindex(data.index) if data.index.isin(self.keys.index).all() else None

    def subset(self, row_ids) -> "Table":
        """Rows with these row_ids, in the given order (ids and keys are kept)."""
        data = self.data.loc[np.asarray(row_ids, dtype=np.int64)]
        return replace(self, data=data, keys=self._keys_for(data))

    def drop(self, row_ids) -> "Table":
        """All rows but these row_ids, in table order (ids and keys are kept)."""
        keep = ~self.data.index.isin(np.asarray(row_ids, dtype=np.int64))
        data = self.data.loc[keep]
        return replace(self, data=data, keys=self._keys_for(data))

    def with_data(self, data: pd.DataFrame, source: str | None = None) -> "Table":
        return replace(self, data=data, source=source or self.source, keys=self._keys_for(data))

    # ------------------------------------------------------------ the user's row key
    @property
    def key(self) -> str | tuple[str, ...] | None:
        """The user's row key (``schema.key``: a column name, or a tuple of them for a composite key), None when
        the table carries no key."""
        return self.schema.key if self.keys is not None else None

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The columns of the user's row key (() when the table carries none)."""
        return self.schema.key_columns if self.keys is not None else ()

    @property
    def composite(self) -> bool:
        """Whether the table's row key is several columns."""
        return len(self.key_columns) > 1

    def key_of(self, row_ids) -> np.ndarray:
        """The user's key of each of these row_ids (an object array, in their order; a tuple of the key's values
        per row for a composite key); the row_ids themselves when the table has no key. KeyError names an unknown
        row_id."""
        ids = np.asarray(row_ids, dtype=np.int64).reshape(-1)
        if self.keys is None:
            missing = ~np.isin(ids, self.data.index.to_numpy())
            if missing.any():
                raise KeyError(int(ids[missing][0]))
            return ids.astype(object)
        if self.composite:
            out = np.empty(len(ids), dtype=object)
            out[:] = list(self.keys.loc[ids].itertuples(index=False, name=None))
            return out
        return self.keys.loc[ids].to_numpy(dtype=object)

    def key_list(self, row_ids) -> list:
        """:meth:`key_of` as plain Python values for JSON (int, float, str; None for a missing key); a composite
        key's value as ``{column: value}``."""
        if self.composite:
            return [dict(zip(self.key_columns, map(plain_key, v))) for v in self.key_of(row_ids)]
        return [plain_key(v) for v in self.key_of(row_ids)]

    def row_names(self, row_ids, *, redacted: bool = False, salt: str | None = None) -> list[str]:
        """How a reader names each of these rows: ``"<key> <value>"`` (e.g. ``"rownames 2705"``)
        when the table has a key, ``"branch=North, account_no=17"`` for a composite key, else ``"row <row_id>"``
        (memviz's own number: the row's 0-based position in the file it was read from). A missing key value reads
        ``missing``; ``redacted``: the key's value hashed (:func:`memviz.tables.redact.key_labels`, keyed by
        ``salt``; each column of a composite key hashed on its own)."""
        if self.keys is None:
            return [f"row {int(i)}" for i in np.asarray(row_ids, dtype=np.int64).reshape(-1)]
        if self.composite:
            return self.key_texts(row_ids, redacted=redacted, salt=salt)
        return [f"{self.key} {v}" for v in self.key_texts(row_ids, redacted=redacted, salt=salt)]

    def key_texts(self, row_ids, *, redacted: bool = False, salt: str | None = None) -> list[str]:
        """The key of each row as text, hashed when ``redacted`` (row_ids as text when the table has no key; a
        composite key as ``branch=North, account_no=17``, the very text :meth:`row_names` gives)."""
        values = self.key_of(row_ids)
        if self.composite:
            parts = [self.key_part_texts(values, i, col, redacted=redacted, salt=salt)
                     for i, col in enumerate(self.key_columns)]
            return [", ".join(f"{c}={p}" for c, p in zip(self.key_columns, row)) for row in zip(*parts)]
        if redacted and self.keys is not None:
            return key_labels(values, str(self.key), salt=salt)
        return ["missing" if _missing(v) else str(v) for v in values]

    @staticmethod
    def key_part_texts(values, i: int, column: str, *, redacted: bool, salt: str | None) -> list[str]:
        """Part ``i`` (column ``column``) of composite key values as text, hashed when ``redacted``."""
        part = [v[i] for v in values]
        if redacted:
            return key_labels(part, column, salt=salt)
        return ["missing" if _missing(v) else str(v) for v in part]

    def key_header(self) -> str:
        """The header of a column naming rows: the key's name (a composite key's names joined by ", "), else
        ``row_id``."""
        return ", ".join(self.key_columns) if self.keys is not None else ROW_ID

    def with_keys(self, frame: pd.DataFrame, column: str = ROW_ID, *, keep_row_id: bool = True,
                  redacted: bool = False, salt: str | None = None) -> pd.DataFrame:
        """``frame`` (whose ``column`` holds row_ids of this table) with the user's key inserted just
        before that column (under the key's name; ``"<key> (key)"`` if ``frame`` already has a column of
        that name; hashed when ``redacted``, see :meth:`key_texts`). Without ``keep_row_id`` the row_id
        column is dropped when a key took its place. Unchanged when the table has no key."""
        if self.keys is None or column not in frame.columns:
            return frame
        ids = frame[column].to_numpy()
        out = frame.copy()
        if self.composite:                      # one column per key column, each under its own name
            values = self.key_of(ids)
            at = int(out.columns.get_loc(column))
            for i, col in enumerate(self.key_columns):
                name = col if col not in frame.columns else f"{col} (key)"
                out.insert(at + i, name, self.key_part_texts(values, i, col, redacted=True, salt=salt) if redacted
                           else self.keys.loc[ids, col].array)
            return out.drop(columns=[column]) if not keep_row_id else out
        name = self.key if self.key not in frame.columns else f"{self.key} (key)"
        out.insert(int(out.columns.get_loc(column)), name,
                   self.key_texts(ids, redacted=True, salt=salt) if redacted else self.key_of(ids))
        return out.drop(columns=[column]) if not keep_row_id else out

    def to_frame(self, order=None, *, row_id: bool = True) -> pd.DataFrame:
        """The table as a file holds it: ``row_id`` first (unless ``row_id=False``), then the key
        and the schema columns in ``order`` (default: :attr:`order`, the user's file's column order;
        else the key first, then the schema's order), any column it does not name after them."""
        data = self.data
        if self.keys is not None and self.composite:
            data = data.copy()
            for i, col in enumerate(self.key_columns):
                data.insert(i, col, self.keys[col].to_numpy())
        elif self.keys is not None:
            data = data.copy()
            data.insert(0, self.schema.key, self.keys.to_numpy())
        data = data[self.ordered(data.columns, order)]
        return data.reset_index() if row_id else data.reset_index(drop=True)

    def ordered(self, columns, order=None) -> list[str]:
        """``columns`` in the user's order (``order``, default :attr:`order`); columns it does not name
        keep their place after those it does. E.g. a generated table's columns, for a download."""
        order = self.order if order is None else order
        columns = list(columns)
        first = [c for c in order if c in set(columns)]
        return first + [c for c in columns if c not in set(first)]


def _missing(v) -> bool:
    try:
        return bool(pd.isna(v))
    except (TypeError, ValueError):
        return False


def plain_key(v):
    """One key value as a plain Python value for JSON (int, float, str; None when missing)."""
    if _missing(v):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v if isinstance(v, (int, float, str)) else str(v)


def check_composite_key(df: pd.DataFrame, columns, source: str) -> None:
    """One line (BadTable) when a composite key's columns do not name each training row once: the columns and
    one repeated combination (``branch=North, account_no=17``)."""
    dup = df.duplicated(list(columns), keep=False)
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        first = df[list(columns)].iloc[i].tolist()
        n = int((df[list(columns)] == df[list(columns)].iloc[i]).all(axis=1).sum()) or int(dup.sum())
        raise BadTable(f"{source}: columns {', '.join(map(repr, columns))}: the row key does not identify the rows: "
                        f"{key_text(columns, first)} names {n:,} rows (each combination must name one row)")


def _single_key(df: pd.DataFrame, schema: Schema, source: str) -> Schema:
    """The schema again when its one key column names each training row once (missing cells aside). A key that
    repeats a value would name two rows alike: a declared one (:meth:`Schema.declared`) is refused in one line
    naming the column and the value; an inferred one (a schema inferred from another table; inference itself and a
    schema file's unlisted columns never take a key that repeats: :func:`memviz.tables.infer.repeats`) is left out
    of the distance (excluded) and names no row, said in a :class:`SchemaWarning`."""
    col = schema.key
    if not repeats(df[col]):
        return schema
    v = df[col].dropna()
    value = v[v.duplicated(keep=False)].iloc[0]
    n = int((v == value).sum())
    what = f"{value!r} names {n:,} rows" if isinstance(value, str) else f"{plain_key(value)} names {n:,} rows"
    if schema.declared(col):
        raise BadTable(f"{source}: column {col!r}: the row key does not identify the rows: {what} (each key "
                        f"value must name one row; name another key, or none)")
    warnings.warn(f"{source}: column {col!r} nearly identifies rows but repeats values ({what}): it is left out "
                  f"of the distance and names no row (rows are named by their position)", SchemaWarning, stacklevel=3)
    return replace(schema, key=None, excluded=(*schema.excluded, col))


def key_values(s: pd.Series) -> pd.Series:
    """A key column's values as kept: integer-valued floats (integers with missing cells) as
    nullable integers, so a key reads ``2705``, not ``2705.0``; anything else as it is."""
    if pd.api.types.is_float_dtype(s) and is_integer_valued(s):
        return s.astype("Int64")
    return s


# ------------------------------------------------------------------ validation
def validate_frame(df: pd.DataFrame, schema: Schema, source: str, role: str = "train") -> pd.DataFrame:
    """Check ``df`` against ``schema`` and return its schema columns, typed.

    ``role`` is ``"train"`` (all checks), ``"test"`` or ``"synthetic"`` (no minimum row
    count, no class-count check).
    """
    missing = [c for c in schema.columns if c not in df.columns]
    if missing:
        raise BadTable(f"{source}: column {missing[0]!r}: named in the schema but not in the file")
    if role == "train" and len(df) < MIN_ROWS:
        raise BadTable(f"{source}: only {len(df)} rows; at least {MIN_ROWS} are needed")
    out = df.loc[:, list(schema.columns)].copy()
    for col in schema.columns:
        s = out[col]
        if s.isna().all():
            raise BadTable(f"{source}: column {col!r}: all values are missing")
    for col in schema.distance_numerical:
        s = out[col]
        if is_date_like(s):                   # read as numbers, they would be nanoseconds
            raise BadTable(f"{source}: column {col!r}: holds dates or durations, which the distance cannot read "
                           "as numbers (leave it out of the schema, or give it as numbers in a unit you choose)")
        if pd.api.types.is_bool_dtype(s):
            out[col] = s.astype(float)
            continue
        if not pd.api.types.is_numeric_dtype(s):
            conv = pd.to_numeric(s, errors="coerce")
            bad = conv.isna() & s.notna()
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise BadTable(f"{source}: column {col!r}: numerical column holds text "
                               f"({s.iloc[i]!r} in data row {i + 1})")
            out[col] = conv
        if np.isinf(out[col].to_numpy(dtype=float)).any():
            raise BadTable(f"{source}: column {col!r}: holds infinite values")
    if role == "train":
        cats = list(schema.categorical) + ([schema.target] if schema.target_is_categorical else [])
        for col in cats:
            k = out[col].nunique(dropna=False)
            if k > MAX_CATEGORIES:
                raise BadTable(f"{source}: column {col!r}: {k:,} categories; a categorical column holds at most "
                               f"{MAX_CATEGORIES:,} (leave it out, or make it numerical)")
    if role == "train" and schema.target_is_categorical:
        k = out[schema.target].nunique(dropna=False)
        if k < 2:
            raise BadTable(f"{source}: column {schema.target!r}: the target has only one class")
    return out


def check_column_names(df: pd.DataFrame, source: str) -> None:
    """One line (BadTable) for column names a file cannot have: a MultiIndex, or a name used twice (a
    DataFrame built in Python may have both; selecting such a column gave pandas' tracebacks)."""
    if isinstance(df.columns, pd.MultiIndex):
        raise BadTable(f"{source}: column names must be single labels (a MultiIndex of {df.columns.nlevels} "
                       "levels was given): flatten them first, e.g. with '_'.join")
    repeated = df.columns[df.columns.duplicated()]
    if len(repeated):
        name = repeated[0]
        raise BadTable(f"{source}: column {name!r} appears {int((df.columns == name).sum())} times: each column "
                       "needs its own name")


def load_table(path: str | Path, schema: Schema | str | Path | None = None, *, target: str | None = None,
               overrides: Mapping[str, str] | None = None, role: str = "train",
               row_id_column: str | None = None, suggest: bool = True) -> Table:
    """Load a CSV/Parquet file as a :class:`Table`.

    Parameters
    ----------
    path : path of the table.
    schema : a :class:`Schema`, a schema file (meta.json format), or None to infer one.
    target : the target column when the schema is inferred.
    overrides : {column: kind} applied on top of the schema (see :meth:`Schema.with_overrides`).
    role : ``"train"``, ``"test"`` or ``"synthetic"`` (see :func:`validate_frame`).
    row_id_column : use this column as ``row_id`` instead of the row position.
    suggest : when no target is given, say which column :func:`suggest_target` would take (False where
        nothing is measured on a target, as in ``memviz memorize``).
    """
    df = read_frame(path)
    return table_from_frame(df, schema, source=str(path), target=target, overrides=overrides,
                            role=role, row_id_column=row_id_column, suggest=suggest)


def table_from_frame(df: pd.DataFrame, schema: Schema | str | Path | None = None, *, source: str = "table",
                     target: str | None = None, overrides: Mapping[str, str] | None = None,
                     role: str = "train", row_id_column: str | None = None, suggest: bool = True) -> Table:
    """Like :func:`load_table` for a DataFrame already in memory (uploads, tests).

    ``target`` names the label of an inferred schema, or replaces a given schema's target (the
    previous one becomes a feature). An inferred schema without a target says which column
    :func:`suggest_target` would take, in a :class:`SchemaWarning`. The schema's row key is read
    into :attr:`Table.keys`: required in a training table, kept when a test table has it.
    """
    check_column_names(df, source)
    origin = "file" if isinstance(schema, (str, Path)) else "inferred" if schema is None else (
        "sdv" if schema.extra.get("sdv_columns") else "inferred" if schema.extra.get(INFERRED) else "given")
    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    unlisted: dict[str, str] = {}
    if schema is not None and origin in ("file", "given") and role == "train":
        schema, unlisted = _unlisted(df, schema, source, row_id_column)
    if schema is None:
        frame = df.drop(columns=[row_id_column]) if row_id_column else df
        with warnings.catch_warnings():
            warnings.simplefilter("always", SchemaWarning)
            schema = infer_schema(frame, target=target, source=source)
            if target is None and role == "train" and suggest:
                tip = suggest_target(frame, schema)
                if tip.column is not None:
                    warnings.warn(f"{source}: no target given, so none is measured (suggested: {tip.column!r}, "
                                  f"{tip.reason}; name it with --target)", SchemaWarning, stacklevel=2)
    elif target is not None and target != schema.target:
        if target not in df.columns:
            raise BadTable(f"{source}: column {target!r}: target column not in the table")
        overrides = {**(overrides or {}), target: "target"}
    if overrides:
        schema = schema.with_overrides(overrides, source=source)
        if schema.target is not None and overrides.get(schema.target) == "target" and schema.target in df.columns:
            # the schema alone cannot tell a new target's task; its values can
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                task = infer_schema(df[[schema.target]], target=schema.target, source=source).task
            schema = replace(schema, task=task)
    if role == "train" and schema.extra.get("sdv_columns"):
        listed = {str(c) for c in schema.extra["sdv_columns"]} | {row_id_column}
        extra = [c for c in df.columns if str(c) not in listed]
        if extra:
            raise BadTable(f"{source}: column {extra[0]!r}: in the data but not in the SDV metadata (SDV refuses "
                           "such data too: add it to the metadata, with sdtype numerical or categorical, or drop it)")
    data = validate_frame(df, schema, source, role=role)
    if row_id_column is not None:
        if row_id_column not in df.columns:
            raise BadTable(f"{source}: column {row_id_column!r}: row id column not in the file")
        ids = pd.to_numeric(df[row_id_column], errors="coerce")
        if ids.isna().any() or not (ids == ids.round()).all() or ids.duplicated().any():
            raise BadTable(f"{source}: column {row_id_column!r}: row ids must be unique integers")
        data.index = pd.Index(ids.astype(np.int64).to_numpy(), name=ROW_ID)
    else:
        data.index = pd.RangeIndex(len(data), name=ROW_ID)
        data.index = data.index.astype(np.int64)
    keys = None
    if len(schema.key_columns) > 1:
        absent = [c for c in schema.key_columns if c not in df.columns]
        if absent and role == "train":
            raise BadTable(f"{source}: column {absent[0]!r}: the row key named in the schema is not in the file")
        if not absent:
            if role == "train":
                check_composite_key(df, schema.key_columns, source)
            keys = pd.DataFrame({c: key_values(df[c]).to_numpy() for c in schema.key_columns}, index=data.index)
    elif schema.key is not None:
        if schema.key in df.columns and role == "train":
            schema = _single_key(df, schema, source)     # its key None when an inferred one repeats
        if schema.key is None:
            keys = None
        elif schema.key in df.columns:
            keys = pd.Series(key_values(df[schema.key]).to_numpy(), index=data.index, name=schema.key)
        elif role == "train":
            raise BadTable(f"{source}: column {schema.key!r}: the row key named in the schema is not in the file")
    kept = set(data.columns) | (set(schema.key_columns) if keys is not None else set())

    why = kind_reasons(df.drop(columns=[row_id_column]) if row_id_column else df, schema, origin=origin,
                       overrides=overrides, unlisted=unlisted) if role == "train" else {}
    return Table(data, schema, source, keys, tuple(c for c in df.columns if c in kept), origin, why)


def _unlisted(df: pd.DataFrame, schema: Schema, source: str, row_id_column: str | None) -> tuple[Schema, dict]:
    """A schema file's (or a given schema's) reading of the columns it does not list, never silent: the first that
    identifies rows becomes the row key when the schema names none (one named like an ID first), the others are
    left out; each said in one :class:`SchemaWarning`. Returns (the schema, {column: why})."""
    listed = {*schema.columns, *schema.excluded, *schema.key_columns, row_id_column}
    extra = [c for c in df.columns if c not in listed]
    if not extra:
        return schema, {}
    why: dict[str, str] = {}
    if schema.key is None:
        keys = [(c, key_reason(df[c])) for c in extra]
        keys = [(c, w) for c, w in keys if w is not None and not repeats(df[c])]   # a key names each row once
        if keys:
            col, reason = next(((c, w) for c, w in keys if key_named(c)), keys[0])
            schema = replace(schema, key=col)
            why[col] = f"not in the schema; identifies rows ({reason}): names the rows"
            warnings.warn(f"{source}: column {col!r} is not in the schema and identifies rows ({reason}): it is "
                          "the row key, left out of the distance and kept to name the rows", KeyNote,
                          stacklevel=3)
    rest = [c for c in extra if c not in schema.key_columns]
    if rest:
        schema = replace(schema, excluded=(*schema.excluded, *rest))
        why.update({c: "not in the schema: left out" for c in rest})
        names = ", ".join(repr(c) for c in rest[:10]) + (f" and {len(rest) - 10:,} more" if len(rest) > 10 else "")
        warnings.warn(f"{source}: {'column' if len(rest) == 1 else f'{len(rest)} columns'} {names} not in the "
                      "schema, left out of the distance (name them in the schema, or pass --numerical or "
                      "--categorical)", SchemaWarning, stacklevel=3)
    return schema, why


def check_same_columns(train: Table, other: pd.DataFrame, source: str) -> None:
    """Train and synthetic/test tables must share the schema's columns."""
    missing = [c for c in train.schema.columns if c not in other.columns]
    if missing:
        raise BadTable(f"{source}: column {missing[0]!r}: in the training table but not in this one")


def load_companion(train: Table, path: str | Path, role: str = "synthetic", row_id_column: str | None = None) -> Table:
    """Load a synthetic or test table with the training table's schema."""
    df = read_frame(path)
    check_same_columns(train, df, str(path))
    return table_from_frame(df, train.schema, source=str(path), role=role, row_id_column=row_id_column)


# -------------------------------------------------------------------- datasets
def load_dataset(folder: str | Path) -> tuple[Table, Table | None]:
    """Load ``folder/train.csv`` (+ ``test.csv`` when present) with ``folder/meta.json``."""
    folder = Path(folder)
    if not (folder / "train.csv").exists():
        raise BadTable(f"{folder}: no train.csv in this folder")
    meta = folder / "meta.json"
    schema = Schema.load(meta) if meta.exists() else None
    train = load_table(folder / "train.csv", schema)
    test = load_companion(train, folder / "test.csv", role="test") if (folder / "test.csv").exists() else None
    return train, test


def sample_data_dir() -> Path:
    """The bundled sample (3,000 / 1,000 rows of UCI Adult)."""
    return Path(__file__).resolve().parents[2] / "sample_data"


def fingerprint(table: Table) -> str:
    """sha256 of the table's values and row_ids (order-sensitive), hex."""
    h = pd.util.hash_pandas_object(table.data, index=True).to_numpy()
    return hashlib.sha256(h.tobytes() + ",".join(table.data.columns).encode()).hexdigest()
