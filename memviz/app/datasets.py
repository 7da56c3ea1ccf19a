"""The Data page's library side: which tables there are, uploads, schema edits, the target, the test split.

Uploads are parsed as data only: CSV with :func:`memviz.tables.data.read_csv_bytes`, Parquet
with pyarrow from memory; nothing is unpickled or evaluated. An upload may expand to at most
:func:`max_upload_cells` cells (rows × columns) and :data:`MAX_UPLOAD_BYTES` bytes of decoded
values, checked before the table is built: a compressed Parquet file can hold far more than
its size says (0.26 MB of zstd expanded to 340 MB in pandas).

Uploads and the table in use are kept with the runs by :mod:`memviz.app.uploads`.
"""
from __future__ import annotations

import io
import os
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from memviz.errors import BadTable, MemvizError
from memviz.io import parse_json
from memviz.tables.data import (
    NEAR_UNIQUE,
    KeyNote,
    SchemaWarning,
    Table,
    TargetSuggestion,
    check_same_columns,
    infer_schema,
    key_reason,
    read_csv_bytes,
    read_frame,
    sample_data_dir,
    suggest_target,
    table_from_frame,
)
from memviz.tables.read import check_frame, check_parquet_schema
from memviz.tables.schema import KINDS, Schema

#: the kinds the schema editor offers (the target has its own picker)
FEATURE_KINDS = tuple(k for k in KINDS if k != "target")

DATASETS_ENV = "MEMVIZ_DATASETS"
PARQUET_MAGIC = b"PAR1"
MAX_CELLS_ENV = "MEMVIZ_MAX_UPLOAD_CELLS"
#: rows × columns an upload may hold (a 200 MB CSV of numbers is about 10 million cells)
MAX_UPLOAD_CELLS = 10_000_000
#: decoded bytes a Parquet upload may hold (its values as Arrow holds them, strings included)
MAX_UPLOAD_BYTES = 1 << 30


# ====================================================================== datasets
@dataclass(frozen=True)
class DatasetChoice:
    """A table the Data page offers: the bundled sample or a shared benchmark folder."""

    key: str
    label: str
    folder: Path

    @property
    def has_test(self) -> bool:
        return (self.folder / "test.csv").exists()


def shared_datasets_dir() -> Path | None:
    """``$MEMVIZ_DATASETS``, else ``../shared/datasets`` next to the repository (None if absent)."""
    env = os.environ.get(DATASETS_ENV)
    folder = Path(env) if env else sample_data_dir().parent.parent / "shared" / "datasets"
    return folder if folder.is_dir() else None


def dataset_choices() -> list[DatasetChoice]:
    """The sample first, then every shared benchmark folder holding a train.csv."""
    out = [DatasetChoice("sample", "Bundled sample (UCI Adult)", sample_data_dir())]
    shared = shared_datasets_dir()
    if shared is not None:
        for d in sorted(shared.iterdir()):
            if (d / "train.csv").exists():
                out.append(DatasetChoice(f"shared:{d.name}", f"Benchmark: {d.name}", d))
    return out


def choice_by_key(key: str) -> DatasetChoice:
    for c in dataset_choices():
        if c.key == key:
            return c
    raise BadTable(f"dataset {key!r}: not available here")


@dataclass(frozen=True)
class RawData:
    """A table as read, before the schema is applied (what the schema editor works on).

    ``test`` is the companion test file when the source has one; ``schema`` is the
    shipped schema (meta.json) or the inferred one; ``notes`` are inference warnings (a column left
    out or re-typed); ``facts`` what inference found and says as information (the row key detected:
    :class:`memviz.tables.infer.KeyNote`); ``suggestion`` is the target an inferred schema suggests (None
    when the schema was given: its target is the file's own).
    """

    frame: pd.DataFrame
    test: pd.DataFrame | None
    schema: Schema
    source: str
    label: str
    notes: tuple[str, ...] = ()
    suggestion: TargetSuggestion | None = None
    facts: tuple[str, ...] = ()


def load_choice(choice: DatasetChoice | str) -> RawData:
    """Read a dataset folder: train.csv, test.csv when present, meta.json or an inferred schema."""
    if isinstance(choice, str):
        choice = choice_by_key(choice)
    frame = read_frame(choice.folder / "train.csv")
    test = read_frame(choice.folder / "test.csv") if choice.has_test else None
    meta = choice.folder / "meta.json"
    if meta.exists():
        schema, notes = Schema.load(meta), ()
        if not schema.name:
            schema = Schema.from_dict({**schema.to_dict(), "name": choice.folder.name})
    else:
        return _inferred(frame, test, None, str(choice.folder / "train.csv"), choice.label)
    return RawData(frame, test, schema, str(choice.folder / "train.csv"), choice.label, notes)


def max_upload_cells() -> int:
    """Rows × columns an upload may hold: ``$MEMVIZ_MAX_UPLOAD_CELLS``, else :data:`MAX_UPLOAD_CELLS`."""
    raw = os.environ.get(MAX_CELLS_ENV, "").strip()
    if not raw:
        return MAX_UPLOAD_CELLS
    try:
        return max(1, int(raw))
    except ValueError:
        raise BadTable(f"${MAX_CELLS_ENV}={raw!r}: expected a whole number of cells") from None


def _check_size(name: str, rows: int, cols: int, decoded: int | None = None) -> None:
    """BadTable (one line) when an upload would expand past the caps."""
    cap = max_upload_cells()
    if rows * cols > cap:
        raise BadTable(f"{name}: {rows:,} rows × {cols:,} columns = {rows * cols:,} cells, more than an upload "
                       f"may hold ({cap:,}; set ${MAX_CELLS_ENV} to change it, or use the memviz CLI)")
    if decoded is not None and decoded > MAX_UPLOAD_BYTES:
        raise BadTable(f"{name}: its values expand to {decoded / 2**20:,.0f} MiB, more than an upload may hold "
                       f"({MAX_UPLOAD_BYTES / 2**20:,.0f} MiB; use the memviz CLI for it)")


def _read_parquet_upload(name: str, raw: bytes) -> pd.DataFrame:
    """An uploaded Parquet file, its size checked from the footer (rows, columns, encoded
    bytes) and from its strings' decoded lengths before anything is expanded."""
    try:
        meta = pq.ParquetFile(io.BytesIO(raw)).metadata
        _check_size(name, meta.num_rows, meta.num_columns,
                    sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)))
        schema = pq.read_schema(io.BytesIO(raw))
        check_parquet_schema(schema, name)  # the column cap, nested columns
        texts = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                 or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
        table = pq.read_table(io.BytesIO(raw), read_dictionary=texts)  # strings stay dictionary-encoded
        decoded = 0
        for col in table.columns:
            for chunk in col.chunks:
                if pa.types.is_dictionary(chunk.type):  # the bytes its strings take once decoded
                    lengths = pc.binary_length(chunk.dictionary)
                    decoded += (pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0) + 8 * len(chunk)
                else:
                    decoded += chunk.nbytes
        _check_size(name, table.num_rows, table.num_columns, decoded)
        return table.cast(schema).to_pandas()
    except BadTable:
        raise
    except Exception as exc:  # pyarrow raises many types
        raise BadTable(f"{name}: not a readable Parquet file ({type(exc).__name__})") from None


def _check_csv_size(name: str, raw: bytes) -> None:
    """Rows (line breaks) × columns (separators in the first line, the most frequent of , ; tab |)
    of a CSV upload, against the cap, before pandas parses it."""
    first = raw[:raw.find(b"\n")] if b"\n" in raw else raw
    cols = 1 + max(first.count(sep) for sep in (b",", b";", b"\t", b"|"))
    _check_size(name, max(0, raw.count(b"\n") - 1), cols)  # minus the header line


def read_upload(name: str, raw: bytes) -> pd.DataFrame:
    """Parse an uploaded CSV or Parquet file (data only; one-line BadTable on a bad file or
    one that would expand past :func:`max_upload_cells` cells or :data:`MAX_UPLOAD_BYTES`)."""
    if raw[:4] == PARQUET_MAGIC or name.lower().endswith((".parquet", ".pq")):
        if raw[:4] != PARQUET_MAGIC:
            raise BadTable(f"{name}: not a Parquet file (no PAR1 magic bytes)")
        df = _read_parquet_upload(name, raw)
        df.columns = [str(c) for c in df.columns]
        if df.columns.duplicated().any():
            dup = df.columns[df.columns.duplicated()][0]
            raise BadTable(f"{name}: column {dup!r}: duplicate column name")
        if df.shape[1] == 0:
            raise BadTable(f"{name}: the table has no columns")
        if len(df) == 0:
            raise BadTable(f"{name}: the table has a header but no rows")
        check_frame(df, name)
        return df.reset_index(drop=True)
    _check_csv_size(name, raw)
    return read_csv_bytes(raw, name)


def _infer(frame: pd.DataFrame, target: str | None, source: str) -> tuple[Schema, tuple[str, ...], tuple[str, ...]]:
    """(the inferred schema, its warnings, its facts: see :class:`RawData`)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SchemaWarning)
        schema = infer_schema(frame, target=target, source=source)
    name = Path(source).stem
    schema = Schema.from_dict({**schema.to_dict(), "name": name})
    said = [w for w in caught if issubclass(w.category, SchemaWarning)]
    return (schema, tuple(str(w.message) for w in said if not issubclass(w.category, KeyNote)),
            tuple(str(w.message) for w in said if issubclass(w.category, KeyNote)))


def _inferred(frame: pd.DataFrame, test: pd.DataFrame | None, target: str | None, source: str,
              label: str) -> RawData:
    """RawData with an inferred schema whose target is ``target``, else the one the table suggests
    (:func:`memviz.tables.data.suggest_target`, kept in ``suggestion`` with its reason, for the
    pages to show as a suggestion the user confirms or changes)."""
    schema, notes, facts = _infer(frame, None, source)
    tip = suggest_target(frame, schema)
    chosen = target if target is not None else tip.column
    if chosen is not None:
        schema = with_target(schema, frame, chosen)
    return RawData(frame, test, schema, source, label, notes, tip, facts)


def raw_from_upload(name: str, raw: bytes, test_name: str | None = None, test_raw: bytes | None = None,
                    target: str | None = None) -> RawData:
    """An uploaded table (and optional test file) with an inferred schema: its target is ``target``,
    else the suggested one (:func:`_inferred`; no column name decides it)."""
    frame = read_upload(name, raw)
    test = read_upload(test_name or "test", test_raw) if test_raw is not None else None
    return _inferred(frame, test, target, name, f"Upload: {name}")


#: bytes a schema or SDV metadata upload may hold
MAX_SCHEMA_BYTES = 1 << 20


def is_sdv_metadata(d) -> bool:
    """Does this JSON value look like SDV metadata (``METADATA_SPEC_VERSION``, ``tables``, or columns
    carrying an ``sdtype``) rather than memviz's meta.json?"""
    if not isinstance(d, dict):
        return False
    if "METADATA_SPEC_VERSION" in d or "tables" in d:
        return True
    cols = d.get("columns")
    return isinstance(cols, dict) and any(isinstance(v, dict) and "sdtype" in v for v in cols.values())


def _sdtype_of(d: dict, column: str | None):
    """The sdtype SDV metadata ``d`` gives ``column`` (None when it gives none, or the metadata is malformed:
    :meth:`Schema.from_sdv` then says what is wrong, in one line)."""
    tables = d.get("tables")
    body = next(iter(tables.values()), None) if isinstance(tables, dict) and tables else d
    cols = body.get("columns") if isinstance(body, dict) else None
    spec = cols.get(column) if isinstance(cols, dict) and column else None
    return spec.get("sdtype") if isinstance(spec, dict) else None


def schema_from_upload(name: str, raw: bytes, frame: pd.DataFrame, target: str | None = None) -> Schema:
    """A schema from an uploaded JSON file: SDV single-table metadata (:meth:`Schema.from_sdv`, with
    ``target`` as its label when the metadata lists that column) or memviz's meta.json; every column
    it names must be in ``frame``. One BadTable line naming the file (and column) otherwise."""
    if len(raw) > MAX_SCHEMA_BYTES:
        raise BadTable(f"{name}: {len(raw):,} bytes is too large for a schema file")
    d = parse_json(raw, name, "schema file")   # one line: not UTF-8, not JSON, nested too deeply
    if is_sdv_metadata(d):
        kind = _sdtype_of(d, target)
        try:
            schema = Schema.from_sdv(d, target=target if kind in ("numerical", "categorical", "boolean", "ordinal")
                                     else None)
        except BadTable as exc:
            raise BadTable(f"{name}: {str(exc).removeprefix('SDV metadata: ')}") from None
        if schema.target is not None and schema.target in frame.columns and schema.task == "binary":
            schema = replace(schema, task=target_task(frame[schema.target]))   # SDV metadata has no task
    elif isinstance(d, dict):
        schema = Schema.from_dict(d, source=name)
    else:
        raise BadTable(f"{name}: expected a JSON object (meta.json or SDV metadata)")
    missing = [c for c in (*schema.columns, *schema.excluded, *schema.key_columns)
               if c not in frame.columns]
    if missing:
        raise BadTable(f"{name}: column {missing[0]!r}: in the schema but not in the table")
    listed = schema.extra.get("sdv_columns")
    if listed:   # SDV refuses data with a column its metadata does not list, and so does memviz
        extra = [c for c in frame.columns if str(c) not in {str(x) for x in listed}]
        if extra:
            raise BadTable(f"{name}: column {extra[0]!r}: in the table but not in the SDV metadata (SDV refuses "
                           "such data too: add it to the metadata, or drop it from the table)")
    return schema


# ================================================================ the target
def _feature_kind(series: pd.Series) -> str:
    """numerical or categorical for a column that stops being the target (as inference decides)."""
    try:
        return infer_schema(series.to_frame()).kind_of(series.name)
    except (KeyError, MemvizError):
        return "categorical"


def with_target(schema: Schema, frame: pd.DataFrame, target: str | None) -> Schema:
    """``schema`` with ``target`` as its target column (None: no target), in one step.

    The new target leaves the feature lists; the old target becomes a feature of the kind
    inference gives it; the task (binary, multiclass, regression) is read from the column.
    BadTable names a column that is not in the table.
    """
    if target is not None and target not in frame.columns:
        raise BadTable(f"target {target!r}: not a column of the table")
    if target == schema.target:
        return schema
    num = [c for c in schema.numerical if c != target]
    cat = [c for c in schema.categorical if c != target]
    exc = [c for c in schema.excluded if c != target]
    key = tuple(c for c in schema.key_columns if c != target) or None     # a target is no part of the key
    old = schema.target
    if old is not None and old in frame.columns:
        (num if _feature_kind(frame[old]) == "numerical" else cat).append(old)
    order = {c: i for i, c in enumerate(frame.columns)}
    num.sort(key=lambda c: order.get(c, len(order)))
    cat.sort(key=lambda c: order.get(c, len(order)))
    if not num and not cat:
        raise BadTable(f"target {target!r}: no feature column would be left")
    task = target_task(frame[target]) if target is not None else "none"
    return Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task, excluded=tuple(exc),
                  name=schema.name, extra=dict(schema.extra), key=key)


# ================================================================ schema editing
def column_reason(schema: Schema, column: str, series: pd.Series | None = None) -> str:
    """Why a column has its kind, in a few words, for the key and the columns left out ("" for a
    feature): the row key's evidence, all values missing, text that nearly identifies rows, a
    further ID, an SDV sdtype (personal data, dates, ids), else the user's or the schema file's choice."""
    try:
        kind = schema.kind_of(column)
    except KeyError:
        kind = "excluded"
    why = key_reason(series) if series is not None else None
    if kind == "key":
        return "row key: names the rows, left out of the distance" + (f" ({why})" if why else "")
    if kind != "excluded":
        return ""
    x = schema.extra
    for field, text in (("sdv_personal", "personal data in the SDV metadata"), ("sdv_dates", "a date in the SDV "
                        "metadata: the distance has no dates"), ("sdv_ids", "another id in the SDV metadata")):
        hits = [v for v in (x.get(field) or []) if v == column or str(v).startswith(f"{column} (")]
        if hits:
            return f"left out: {text}" + (f" ({hits[0]})" if hits[0] != column else "")
    if series is not None:
        n, k = len(series), int(series.nunique(dropna=True))
        if series.isna().all():
            return "left out: every value is missing"
        if why:
            return f"left out: identifies rows too ({why})"
        if not pd.api.types.is_numeric_dtype(series) and k > NEAR_UNIQUE * n:
            return f"left out: {k:,} distinct values in {n:,} rows nearly identify rows"
    return "left out (your choice, or the schema file's)"


def schema_editor_frame(schema: Schema, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per file column: column, kind (numerical | categorical | target | key | excluded),
    dtype, distinct values, missing share, an example value and why a column is the key or left out
    (:func:`column_reason`), for ``st.data_editor`` and the Audit page's schema table."""
    cols = list(frame.columns) if frame is not None else (list(schema.columns) + list(schema.excluded)
                                                          + list(schema.key_columns))
    rows = []
    for c in cols:
        try:
            kind = schema.kind_of(c)
        except KeyError:
            kind = "excluded"
        row = {"column": c, "kind": kind}
        if frame is not None:
            s = frame[c]
            row.update({"dtype": str(s.dtype), "distinct": int(s.nunique(dropna=True)),
                        "missing %": round(100.0 * float(s.isna().mean()), 2),
                        "example": "" if s.dropna().empty else str(s.dropna().iloc[0])[:40]})
        row["why"] = column_reason(schema, c, frame[c] if frame is not None else None)
        rows.append(row)
    return pd.DataFrame(rows)


def target_line(schema: Schema, frame: pd.DataFrame, suggestion: TargetSuggestion | None = None) -> str:
    """The target in one line, for the Data and Audit pages: its name, task and missing share, and
    whether it is the table's suggestion (with the reason) or none ("no target: ...")."""
    if schema.target is None:
        tip = "" if suggestion is None or suggestion.column is None else \
            f" (suggested: {suggestion.column}, {suggestion.reason})"
        return ("No target: nothing is predicted, the attribute attack has no label to aim at and MLE is not "
                "measured" + tip + ".")
    s = frame[schema.target] if schema.target in frame.columns else None
    miss = "" if s is None else f", {float(s.isna().mean()):.1%} missing"
    line = f"Target: {schema.target} ({schema.task}{miss})"
    if suggestion is not None and suggestion.column == schema.target:
        line += f". Suggested, not known: {suggestion.reason}. Check it: the attribute attack and MLE use it"
    return line + "."


def target_task(series: pd.Series) -> str:
    """binary / multiclass / regression for a target column (as :func:`infer_schema` decides)."""
    return infer_schema(series.to_frame(), target=series.name).task


def apply_schema_edits(schema: Schema, edited: pd.DataFrame, frame: pd.DataFrame | None = None,
                       source: str = "schema editor") -> Schema:
    """The schema after the user's edits of :func:`schema_editor_frame` (kind column).

    Raises BadTable naming the column: unknown kind, more than one target, or no
    feature column left.
    """
    kinds = dict(zip(edited["column"].astype(str), edited["kind"]))
    for col, kind in kinds.items():
        if kind not in KINDS:
            raise BadTable(f"{source}: column {col!r}: unknown type {kind!r} (use {', '.join(KINDS)})")
    targets = [c for c, k in kinds.items() if k == "target"]
    if len(targets) > 1:
        raise BadTable(f"{source}: column {targets[1]!r}: only one column can be the target "
                        f"(also {targets[0]!r})")
    keys = [c for c, k in kinds.items() if k == "key"]     # several: a composite key, in the table's order
    num = [c for c, k in kinds.items() if k == "numerical"]
    cat = [c for c, k in kinds.items() if k == "categorical"]
    exc = [c for c, k in kinds.items() if k == "excluded"]
    if not num and not cat:
        raise BadTable(f"{source}: no feature column left (mark at least one numerical or categorical)")
    target = targets[0] if targets else None
    task = "none"
    if target is not None:
        if target == schema.target:
            task = schema.task
        elif frame is not None and target in frame.columns:
            task = target_task(frame[target])
        else:
            task = "binary"
    return Schema(numerical=tuple(num), categorical=tuple(cat), target=target, task=task, excluded=tuple(exc),
                  name=schema.name, extra=dict(schema.extra), key=tuple(keys) or None)


def build_tables(raw: RawData, schema: Schema, split: str = "file", test_share: float = 0.25,
                 seed: int = 0) -> tuple[Table, Table | None]:
    """Validate the raw data against ``schema`` and pick the test split.

    split : ``"file"`` (the companion test file), ``"random"`` (hold out ``test_share`` of
        the rows, seeded; the training rows are renumbered 0..n-1 so that their row_id is
        their position, as in a warm-up run) or ``"none"``.
    """
    if split == "random":
        if not 0.0 < test_share < 0.9:
            raise BadTable(f"test share {test_share}: choose between 0 and 0.9")
        rng = np.random.default_rng(seed)
        n = len(raw.frame)
        n_test = int(round(test_share * n))
        if n_test < 1 or n - n_test < 10:
            raise BadTable(f"{raw.source}: {n} rows are too few to hold out {test_share:.0%} as a test split")
        perm = rng.permutation(n)
        test_pos, train_pos = np.sort(perm[:n_test]), np.sort(perm[n_test:])
        train = table_from_frame(raw.frame.iloc[train_pos].reset_index(drop=True), schema, source=raw.source)
        test = table_from_frame(raw.frame.iloc[test_pos].reset_index(drop=True), schema,
                                source=f"{raw.source} (held-out {test_share:.0%})", role="test")
        return train, test
    train = table_from_frame(raw.frame, schema, source=raw.source)
    if split == "file" and raw.test is not None:
        src = f"{raw.source} (test)"
        check_same_columns(train, raw.test, src)
        return train, table_from_frame(raw.test, schema, source=src, role="test")
    if split not in ("file", "none"):
        raise BadTable(f"split {split!r}: use file, random or none")
    return train, None


def data_summary(train: Table, test: Table | None) -> dict:
    """Headline facts for the sidebar and the Data page."""
    s = train.schema
    out = {"rows": len(train), "test rows": len(test) if test is not None else 0,
           "numerical": len(s.numerical), "categorical": len(s.categorical), "target": s.target or "none",
           "row key": ", ".join(s.key_columns) or "none", "task": s.task}
    if s.target_is_categorical:
        shares = train.data[s.target].astype(str).value_counts(normalize=True)
        out["classes"] = ", ".join(f"{k}: {v:.0%}" for k, v in shares.head(5).items())
    return out
