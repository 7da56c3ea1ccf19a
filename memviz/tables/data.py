"""Loading tables, inferring schemas, and validating user data.

A :class:`Table` is a pandas DataFrame whose index is the stable ``row_id`` (by
default the 0-based position of the row in the loaded file) plus its
:class:`~memviz.tables.schema.Schema`. The ``row_id`` travels from load to prune and into
every output; nothing downstream keys rows by position.

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

import numpy as np
import pandas as pd

from memviz.errors import DataError
from memviz.tables.read import (  # noqa: F401 (the reading half, re-exported)
    MAX_CATEGORIES,
    MAX_COLUMNS,
    check_frame,
    read_csv_bytes,
    read_frame,
)
from memviz.tables.schema import Schema

MIN_ROWS = 10
#: an integer column with at most this many distinct values is inferred categorical
MAX_INT_CATEGORIES = 20
ROW_ID = "row_id"
#: a text column with more distinct values than this share of its rows (and more than
#: ``max_int_categories``) nearly identifies rows: inference leaves it out
NEAR_UNIQUE = 0.5


class SchemaWarning(UserWarning):
    """A column was left out or re-typed during schema inference."""


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

    def __len__(self) -> int:
        return len(self.data)

    @property
    def row_ids(self) -> np.ndarray:
        return self.data.index.to_numpy(dtype=np.int64)

    def subset(self, row_ids) -> "Table":
        """Rows with these row_ids, in the given order (ids are kept)."""
        return Table(self.data.loc[np.asarray(row_ids, dtype=np.int64)], self.schema, self.source)

    def drop(self, row_ids) -> "Table":
        """All rows but these row_ids, in table order (ids are kept)."""
        keep = ~self.data.index.isin(np.asarray(row_ids, dtype=np.int64))
        return Table(self.data.loc[keep], self.schema, self.source)

    def with_data(self, data: pd.DataFrame, source: str | None = None) -> "Table":
        return Table(data, self.schema, source or self.source)


# ------------------------------------------------------------------ inference
def _is_id_like(s: pd.Series) -> bool:
    n = len(s)
    if n < MIN_ROWS or s.isna().any() or s.nunique() != n:
        return False
    name = str(s.name).strip().lower()
    named = name in ("id", "index", "row_id", "uuid", "key") or name.endswith("_id") or name.endswith(" id")
    if pd.api.types.is_integer_dtype(s):
        v = np.sort(s.to_numpy())
        consecutive = bool((np.diff(v) == 1).all())
        return named or consecutive
    if pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s):
        return True  # unique text in every row identifies rows, it is no category
    return named


def infer_schema(df: pd.DataFrame, target: str | None = None, source: str = "table",
                 max_int_categories: int = MAX_INT_CATEGORIES) -> Schema:
    """Guess the role of every column.

    * text, boolean and category dtypes: categorical;
    * integer columns with at most ``max_int_categories`` distinct values: categorical;
    * other numbers: numerical;
    * text columns that are numbers but for a few cells (at most 5 %), numbers that
      would be inferred numerical: numerical, so that validation names the stray text;
    * ID-like columns (unique in every row: consecutive integers, ``*_id`` names, or
      unique text), near-unique text (more than :data:`MAX_CATEGORIES` distinct values, or
      more than ``max_int_categories`` and over :data:`NEAR_UNIQUE` of the rows: one-hot
      columns for each would make training crawl) and all-missing columns are excluded with
      a :class:`SchemaWarning`.

    ``target`` defaults to none; its task is ``binary`` for two classes, ``multiclass``
    for a categorical target with more, ``regression`` for a numerical one.
    """
    if target is not None and target not in df.columns:
        raise DataError(f"{source}: column {target!r}: target column not in the table")
    num, cat, exc = [], [], []
    for col in df.columns:
        s = df[col]
        if s.isna().all():
            warnings.warn(f"{source}: column {col!r} is all missing and is left out", SchemaWarning, stacklevel=2)
            exc.append(col)
            continue
        if col != target and _mostly_numeric(s, max_int_categories):
            num.append(col)  # numbers with stray text: validate() names the text cell
            continue
        if col != target and _is_id_like(s):
            warnings.warn(f"{source}: column {col!r} looks like a row identifier and is left out",
                          SchemaWarning, stacklevel=2)
            exc.append(col)
            continue
        if col == target:
            continue
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            k = s.nunique(dropna=True)
            if k > MAX_CATEGORIES or (k > max_int_categories and k > NEAR_UNIQUE * len(s)):
                warnings.warn(f"{source}: column {col!r} has {k:,} distinct values in {len(s):,} rows (text that "
                              f"nearly identifies rows, such as an ID) and is left out: a categorical column "
                              f"holds at most {MAX_CATEGORIES:,} categories and fewer than half the rows",
                              SchemaWarning, stacklevel=2)
                exc.append(col)
                continue
            cat.append(col)
        elif _is_integer_valued(s) and s.nunique(dropna=True) <= max_int_categories:
            cat.append(col)
        else:
            num.append(col)
    task = "none"
    if target is not None:
        t = df[target]
        numeric_target = pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
        k = t.nunique(dropna=True)
        if numeric_target and not (_is_integer_valued(t) and k <= max_int_categories):
            task = "regression"
        else:
            task = "binary" if k <= 2 else "multiclass"
    return Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task,
                  excluded=tuple(exc), name=Path(source).parent.name if source else "")


def _mostly_numeric(s: pd.Series, max_int_categories: int) -> bool:
    """A text column whose cells are numbers, but for at most 5 % (stray text such as
    ``"n/a!"``), and whose numbers would be inferred numerical (not few integers): a
    numerical column holding text. It is inferred numerical so that validation reports
    the text (the user may override the column to categorical)."""
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return False
    v = s.dropna()
    conv = pd.to_numeric(v, errors="coerce")
    if len(v) == 0 or conv.notna().mean() < 0.95:
        return False
    nums = conv.dropna()
    return not (_is_integer_valued(nums) and nums.nunique() <= max_int_categories)


def _is_integer_valued(s: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(s) or pd.api.types.is_bool_dtype(s):
        return True
    if not pd.api.types.is_float_dtype(s):
        return False
    v = s.dropna().to_numpy()
    return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)))


# ------------------------------------------------------------------ validation
def validate(df: pd.DataFrame, schema: Schema, source: str, role: str = "train") -> pd.DataFrame:
    """Check ``df`` against ``schema`` and return its schema columns, typed.

    ``role`` is ``"train"`` (all checks), ``"test"`` or ``"synthetic"`` (no minimum row
    count, no class-count check).
    """
    missing = [c for c in schema.columns if c not in df.columns]
    if missing:
        raise DataError(f"{source}: column {missing[0]!r}: named in the schema but not in the file")
    if role == "train" and len(df) < MIN_ROWS:
        raise DataError(f"{source}: only {len(df)} rows; at least {MIN_ROWS} are needed")
    out = df.loc[:, list(schema.columns)].copy()
    for col in schema.columns:
        s = out[col]
        if s.isna().all():
            raise DataError(f"{source}: column {col!r}: all values are missing")
    for col in schema.distance_numerical:
        s = out[col]
        if pd.api.types.is_bool_dtype(s):
            out[col] = s.astype(float)
            continue
        if not pd.api.types.is_numeric_dtype(s):
            conv = pd.to_numeric(s, errors="coerce")
            bad = conv.isna() & s.notna()
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise DataError(f"{source}: column {col!r}: numerical column holds text "
                                f"({s.iloc[i]!r} in data row {i + 1})")
            out[col] = conv
        if np.isinf(out[col].to_numpy(dtype=float)).any():
            raise DataError(f"{source}: column {col!r}: holds infinite values")
    if role == "train":
        cats = list(schema.categorical) + ([schema.target] if schema.target_is_categorical else [])
        for col in cats:
            k = out[col].nunique(dropna=False)
            if k > MAX_CATEGORIES:
                raise DataError(f"{source}: column {col!r}: {k:,} categories; a categorical column holds at most "
                                f"{MAX_CATEGORIES:,} (leave it out, or make it numerical)")
    if role == "train" and schema.target_is_categorical:
        k = out[schema.target].nunique(dropna=False)
        if k < 2:
            raise DataError(f"{source}: column {schema.target!r}: the target has only one class")
    return out


def load_table(path: str | Path, schema: Schema | str | Path | None = None, *, target: str | None = None,
               overrides: Mapping[str, str] | None = None, role: str = "train",
               row_id_column: str | None = None) -> Table:
    """Load a CSV/Parquet file as a :class:`Table`.

    Parameters
    ----------
    path : path of the table.
    schema : a :class:`Schema`, a schema file (meta.json format), or None to infer one.
    target : the target column when the schema is inferred.
    overrides : {column: kind} applied on top of the schema (see :meth:`Schema.with_overrides`).
    role : ``"train"``, ``"test"`` or ``"synthetic"`` (see :func:`validate`).
    row_id_column : use this column as ``row_id`` instead of the row position.
    """
    df = read_frame(path)
    return table_from_frame(df, schema, source=str(path), target=target, overrides=overrides,
                            role=role, row_id_column=row_id_column)


def table_from_frame(df: pd.DataFrame, schema: Schema | str | Path | None = None, *, source: str = "table",
                     target: str | None = None, overrides: Mapping[str, str] | None = None,
                     role: str = "train", row_id_column: str | None = None) -> Table:
    """Like :func:`load_table` for a DataFrame already in memory (uploads, tests)."""
    if isinstance(schema, (str, Path)):
        schema = Schema.load(schema)
    if schema is None:
        with warnings.catch_warnings():
            warnings.simplefilter("always", SchemaWarning)
            schema = infer_schema(df.drop(columns=[row_id_column]) if row_id_column else df,
                                  target=target, source=source)
    if overrides:
        schema = schema.with_overrides(overrides, source=source)
        if schema.target is not None and overrides.get(schema.target) == "target" and schema.target in df.columns:
            # the schema alone cannot tell a new target's task; its values can
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SchemaWarning)
                task = infer_schema(df[[schema.target]], target=schema.target, source=source).task
            schema = replace(schema, task=task)
    data = validate(df, schema, source, role=role)
    if row_id_column is not None:
        if row_id_column not in df.columns:
            raise DataError(f"{source}: column {row_id_column!r}: row id column not in the file")
        ids = pd.to_numeric(df[row_id_column], errors="coerce")
        if ids.isna().any() or not (ids == ids.round()).all() or ids.duplicated().any():
            raise DataError(f"{source}: column {row_id_column!r}: row ids must be unique integers")
        data.index = pd.Index(ids.astype(np.int64).to_numpy(), name=ROW_ID)
    else:
        data.index = pd.RangeIndex(len(data), name=ROW_ID)
        data.index = data.index.astype(np.int64)
    return Table(data, schema, source)


def check_same_columns(train: Table, other: pd.DataFrame, source: str) -> None:
    """Train and synthetic/test tables must share the schema's columns."""
    missing = [c for c in train.schema.columns if c not in other.columns]
    if missing:
        raise DataError(f"{source}: column {missing[0]!r}: in the training table but not in this one")


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
        raise DataError(f"{folder}: no train.csv in this folder")
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
