"""The schema a table was read with, in words: each column of the file with its kind and why.

The CLI prints it as one block on stderr before any work (:func:`schema_block`); the reasons are those
inference applies (:func:`memviz.tables.infer.infer_schema`), a schema file's or SDV metadata's word, or the
user's own override. A reason is computed once, when the table is read
(:func:`memviz.tables.data.table_from_frame` keeps them in :attr:`memviz.tables.data.Table.why`).
"""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from memviz.tables.infer import (
    MAX_INT_CATEGORIES,
    is_date_like,
    is_integer_valued,
    key_reason,
)
from memviz.tables.schema import DECLARED, Schema

#: where a schema came from (:attr:`memviz.tables.data.Table.origin`)
ORIGINS = {"inferred": "inferred from the table", "file": "the schema file", "sdv": "the SDV metadata",
           "given": "the schema given"}
#: the words a block uses for each kind
KIND_WORDS = {"numerical": "numerical", "categorical": "categorical", "target": "target", "key": "row key",
              "excluded": "left out"}


def inferred_reason(s: pd.Series, kind: str, max_int_categories: int = MAX_INT_CATEGORIES) -> str:
    """Why inference gives column ``s`` its ``kind`` (the rules of :func:`memviz.tables.infer.infer_schema`)."""
    n, k = len(s), int(s.nunique(dropna=True))
    if kind == "key":
        return f"identifies rows ({key_reason(s) or f'{k:,} distinct values in {n:,} rows'}): names the rows"
    if kind == "excluded":
        if s.isna().all():
            return "every value is missing"
        if is_date_like(s):
            return "dates or durations: the distance has no dates"
        why = key_reason(s)
        if why:
            return f"identifies rows too ({why}); one row key is kept"
        return f"{k:,} distinct values in {n:,} rows: text that nearly identifies rows"
    numeric = pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)
    if kind == "categorical":
        if pd.api.types.is_bool_dtype(s):
            return "true / false"
        if numeric:
            return f"{k:,} distinct integers (at most {max_int_categories}: read as categories)"
        return f"text, {k:,} distinct values"
    if kind == "numerical":
        if not numeric and not pd.api.types.is_bool_dtype(s):
            return "numbers, with a few text cells"
        if is_integer_valued(s):
            return f"{k:,} distinct integers (more than {max_int_categories}: read as a quantity)"
        return f"numbers, {k:,} distinct values"
    return ""


def kind_reasons(df: pd.DataFrame, schema: Schema, *, origin: str, overrides: Mapping[str, str] | None = None,
                 unlisted: Mapping[str, str] | None = None) -> dict[str, str]:
    """{column: why it has its kind} for every column of ``df``: the user's override (``overrides``), a column
    the schema file does not list (``unlisted``: its reason), else the schema's ``origin`` (``inferred``: the
    inference rule; ``file``, ``sdv``, ``given``: that source's word)."""
    overrides, unlisted = dict(overrides or {}), dict(unlisted or {})
    out = {}
    for col in df.columns:
        kind = kind_of(schema, col)
        if col in overrides or col in schema.extra.get(DECLARED, ()):
            out[col] = "set by you"
        elif col in unlisted:
            out[col] = unlisted[col]
        elif kind == "target":
            out[col] = f"the label ({schema.task}), " + ("as you named it" if origin == "inferred" else
                                                         f"as {ORIGINS.get(origin, origin)} says")
        elif origin == "inferred":
            out[col] = inferred_reason(df[col], kind)
        else:
            out[col] = f"as {ORIGINS.get(origin, origin)} says"
    return out


def kind_of(schema: Schema, column: str) -> str:
    """The column's kind in ``schema``; ``excluded`` for a column it does not name."""
    try:
        return schema.kind_of(column)
    except KeyError:
        return "excluded"


def schema_block(table, *, overrides_hint: str = "") -> str:
    """The schema ``table`` was read with, as one block: a heading naming the file and where the schema came
    from, then one line per column of the file (its name, kind and why), then the target (or why there is
    none). ``overrides_hint``: how to change a column (the CLI names its options)."""
    s = table.schema
    columns = list(table.why) or [*s.key_columns, *s.columns, *s.excluded]
    width = min(28, max([len(str(c)) for c in columns] + [6]))
    head = f"schema of {table.source} ({ORIGINS.get(table.origin, table.origin or 'given')}"
    head += f"; {overrides_hint})" if overrides_hint else ")"
    lines = [head + ":"]
    for col in columns:
        kind = KIND_WORDS[kind_of(s, col)]
        why = table.why.get(col, "")
        lines.append(f"  {str(col):<{width}}  {kind:<11}" + (f"  {why}" if why else ""))
    if len(s.key_columns) > 1:
        lines.append(f"  row key: {' + '.join(map(str, s.key_columns))} (together)")
    if s.target is None:
        lines.append("  (no target)")
    return "\n".join(lines)

