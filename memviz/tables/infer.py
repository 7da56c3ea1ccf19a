"""Schema inference: the role of every column of a table memviz has never seen, its row key, and the
target it suggests (the user confirms or changes both: the Data and Audit pages, ``--target``).

A row key is a column that identifies rows (:func:`key_reason`): it names the rows and stays out of
the distance. The target is never picked by a column's name (:func:`suggest_target`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.errors import BadTable
from memviz.tables.read import MAX_CATEGORIES
from memviz.tables.schema import INFERRED, Schema

MIN_ROWS = 10
#: an integer column with at most this many distinct values is inferred categorical
MAX_INT_CATEGORIES = 20
#: a text column with more distinct values than this share of its rows (and more than
#: ``max_int_categories``) nearly identifies rows: inference leaves it out
NEAR_UNIQUE = 0.5
#: a column with at least this many distinct values per row (missing cells count as rows) is a
#: row key candidate: text, or integers spread densely enough (:data:`KEY_DENSITY`) or named as an ID
KEY_SHARE = 0.95
#: an integer key candidate's distinct values over the width of its range (max - min + 1): a sample
#: of a keyed table keeps a good share of its ids (3,563 of 4,454: 0.8), a measured quantity
#: spreads thin (Adult's fnlwgt: 2,987 values over 1.2 million)
KEY_DENSITY = 0.1
#: the fewest rows an integer column needs to be taken for a key by its values alone (fewer rows
#: can hold any measured integer once each: 19 ages in 20 rows); a name like an ID needs none
KEY_MIN_ROWS = 100
#: column names that say "identifier" (compared lower-case, stripped): they make any unique
#: integer column a key, however sparse its values
KEY_NAMES = ("id", "index", "key", "row", "rownames", "row_id", "rowid", "uuid", "unnamed: 0", "")

class SchemaWarning(UserWarning):
    """A column was left out or re-typed during schema inference."""


class KeyNote(SchemaWarning):
    """A column was taken for the row key: what was found, said as information (the dashboard shows it in an
    information box, not a warning); the CLI prints it as every :class:`SchemaWarning`."""

# ------------------------------------------------------------------ inference
def key_named(name) -> bool:
    """Whether a column's name says it is an identifier (:data:`KEY_NAMES`, ``*_id``, ``*ID``)."""
    low = str(name).strip().lower()
    return low in KEY_NAMES or low.endswith(("_id", " id", "-id", ".id")) or (
        str(name).strip().endswith(("ID", "Id")) and len(str(name).strip()) > 2)


def repeats(s: pd.Series) -> bool:
    """Whether a key candidate repeats a value (missing cells aside): it would name two rows alike."""
    return bool(s.dropna().duplicated().any())


def key_reason(s: pd.Series) -> str | None:
    """Why ``s`` identifies rows (a phrase for the notice), or None when it does not.

    A row key has (nearly) one distinct value per row (at least :data:`KEY_SHARE` of the rows,
    missing cells counted as rows) and is either text, or integers (integer-valued floats
    included: an integer column with missing cells) whose distinct values fill at least
    :data:`KEY_DENSITY` of their range, or whose name says it is an identifier (:data:`KEY_NAMES`,
    ``*_id``, ``*ID``); integers not so named need :data:`KEY_MIN_ROWS` rows. Gaps in the
    integers do not matter; non-integer numbers never make a key.
    """
    n = len(s)
    if n < MIN_ROWS or pd.api.types.is_bool_dtype(s):
        return None
    v = s.dropna()
    k = int(v.nunique())
    if k < KEY_SHARE * n:
        return None
    gap = "" if k == n else f", {n - k:,} missing or repeated"
    if pd.api.types.is_numeric_dtype(s):
        if not is_integer_valued(s):
            return None
        lo, hi = float(v.min()), float(v.max())
        density = k / (hi - lo + 1.0)
        if key_named(s.name) or (density >= KEY_DENSITY and n >= KEY_MIN_ROWS):
            spread = "consecutive integers" if k == hi - lo + 1 else "integers with gaps"
            return f"{k:,} distinct {spread} in {n:,} rows{gap}"
        return None
    return f"{k:,} distinct values in {n:,} rows{gap}"


def infer_schema(df: pd.DataFrame, target: str | None = None, source: str = "table",
                 max_int_categories: int = MAX_INT_CATEGORIES) -> Schema:
    """Guess the role of every column.

    * text, boolean and category dtypes: categorical;
    * integer columns with at most ``max_int_categories`` distinct values: categorical;
    * other numbers: numerical;
    * text columns that are numbers but for a few cells (at most 5 %), numbers that
      would be inferred numerical: numerical, so that validation names the stray text;
    * a row key (:func:`key_reason`: one distinct value per row, text or integers with gaps or
      not): the schema's ``key``, left out of the distance and kept to name the rows, with a
      :class:`SchemaWarning`; the first one named like an identifier, else the first one; any
      further key-like column is excluded, said the same way;
    * near-unique text (more than :data:`MAX_CATEGORIES` distinct values, or more than
      ``max_int_categories`` and over :data:`NEAR_UNIQUE` of the rows: one-hot columns for each
      would make training crawl) and all-missing columns are excluded with a
      :class:`SchemaWarning`.

    ``target`` defaults to none (:func:`suggest_target` proposes one, with its reason); its task
    is ``binary`` for two classes, ``multiclass`` for a categorical target with more,
    ``regression`` for a numerical one.
    """
    if target is not None and target not in df.columns:
        raise BadTable(f"{source}: column {target!r}: target column not in the table")
    num, cat, exc, keys = [], [], [], []
    for col in df.columns:
        s = df[col]
        if s.isna().all():
            warnings.warn(f"{source}: column {col!r} is all missing and is left out", SchemaWarning, stacklevel=2)
            exc.append(col)
            continue
        if col == target:
            continue
        if is_date_like(s):
            warnings.warn(f"{source}: column {col!r} holds dates or durations and is left out: the distance has no "
                          "dates (give it as numbers in a unit you choose to measure it)", SchemaWarning,
                          stacklevel=2)
            exc.append(col)
            continue
        if _mostly_numeric(s, max_int_categories):
            num.append(col)  # numbers with stray text: validate() names the text cell
            continue
        why = key_reason(s)
        if why is not None:
            keys.append((col, why))
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
        elif is_integer_valued(s) and s.nunique(dropna=True) <= max_int_categories:
            cat.append(col)
        else:
            num.append(col)
    key = None
    if keys:
        unique = [c for c, _ in keys if not repeats(df[c])]          # a key names each row once
        named = [c for c in unique if key_named(c)]
        key = named[0] if named else (unique[0] if unique else None)
        for col, why in keys:
            if col == key:
                warnings.warn(f"{source}: column {col!r} identifies rows ({why}): it is the row key, left out of "
                              "the distance and kept to name the rows", KeyNote, stacklevel=2)
            elif col not in unique:
                warnings.warn(f"{source}: column {col!r} nearly identifies rows ({why}) but repeats values, so it "
                              "cannot name them: it is left out of the distance", SchemaWarning, stacklevel=2)
                exc.append(col)
            else:
                warnings.warn(f"{source}: column {col!r} also identifies rows ({why}) and is left out (the row key "
                              f"is {key!r})", SchemaWarning, stacklevel=2)
                exc.append(col)
        order = {c: i for i, c in enumerate(df.columns)}
        exc.sort(key=order.get)
    task = "none"
    if target is not None:
        t = df[target]
        numeric_target = pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t)
        k = t.nunique(dropna=True)
        if numeric_target and not (is_integer_valued(t) and k <= max_int_categories):
            task = "regression"
        else:
            task = "binary" if k <= 2 else "multiclass"
    return Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task,
                  excluded=tuple(exc), name=Path(source).parent.name if source else "", key=key,
                  extra={INFERRED: True})


@dataclass(frozen=True)
class TargetSuggestion:
    """The target a table suggests, and why (the Data and Audit pages show both; the user picks).

    ``column`` None: no column is suggested, ``reason`` says why. memviz never reads a column's
    name to pick a label: a label is usually the last column (else the first), and a
    classification label has few values.
    """

    column: str | None
    reason: str


def suggest_target(df: pd.DataFrame, schema: Schema | None = None,
                   max_int_categories: int = MAX_INT_CATEGORIES) -> TargetSuggestion:
    """A likely label column of ``df``: its last feature column when that one has 2 to
    ``max_int_categories`` distinct values, else its first one when that one has; else none.
    The row key and excluded columns of ``schema`` (inferred when not given) are never suggested.
    """
    if schema is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SchemaWarning)
            schema = infer_schema(df)
    out = {*schema.key_columns, *schema.excluded}
    features = [c for c in df.columns if c not in out]
    if not features:
        return TargetSuggestion(None, "no feature column to predict")
    cols = list(df.columns)
    last = "the last column" + (" before the row key" if cols[-1] != features[-1] else "") + " of the table"
    first = "the first column" + (" after the row key" if cols[0] != features[0] else "") + " of the table"
    for col, where in ((features[-1], last), (features[0], first)):
        k = int(df[col].nunique(dropna=True))
        if 2 <= k <= max_int_categories:
            what = "two values" if k == 2 else f"{k} values"
            return TargetSuggestion(col, f"{where}, with {what}: a label is usually placed at one end of a table "
                                         "and has few values")
        if col == features[0]:
            break
    return TargetSuggestion(None, f"neither the first nor the last column has 2 to {max_int_categories} values; "
                                  "pick the label column, or keep no target")


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
    return not (is_integer_valued(nums) and nums.nunique() <= max_int_categories)


def is_date_like(s: pd.Series) -> bool:
    """Dates or durations (datetime64, timedelta64): no distance reads them as numbers (they would be
    nanoseconds)."""
    return pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s)


def is_integer_valued(s: pd.Series) -> bool:
    if pd.api.types.is_integer_dtype(s) or pd.api.types.is_bool_dtype(s):
        return True
    if not pd.api.types.is_float_dtype(s):
        return False
    v = s.dropna().to_numpy()
    return bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)))
