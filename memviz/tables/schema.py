"""The column roles of a table: numerical, categorical, target.

The schema file format is the one of ``../shared/datasets/*/meta.json``::

    {"name": "adult", "target": "income", "task": "binary",
     "numerical": ["age", ...], "categorical": ["workclass", ...]}

``categorical`` never lists the target. For the memorization distance a
classification target counts as one more categorical column; a regression target
counts as one more numerical column. An optional ``"key": "column"`` names the user's
row key (an ID column): it is left out of the distance and names the rows in every
output (:attr:`memviz.tables.data.Table.keys`). A composite key, several columns that
together name a row (``"key": ["branch", "account_no"]``), is a tuple of column names
(:attr:`Schema.key_columns`); a list of one column is that column's name.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

import pandas as pd

from memviz.errors import BadTable
from memviz.io import atomic_write_text, parse_json

TASKS = ("binary", "multiclass", "regression", "none")
KINDS = ("numerical", "categorical", "target", "key", "excluded")
#: ``Schema.extra`` flag of an inferred schema: its kinds are guesses that a generated table may correct (an
#: integer column read as categories whose generated values are other integers, :mod:`memviz.tables.align`);
#: the columns a user set (an override, an edit) are listed under :data:`DECLARED`. Neither is written to a file.
INFERRED = "inferred"
DECLARED = "declared"
#: ``Schema.extra`` record of what a generated table changed in an inferred schema (:func:`memviz.tables.align.adapt_to`):
#: its notices, and the columns left out as not judged; neither is written to a file
ADAPTED = "adapted"
UNJUDGED = "unjudged"
#: the ``extra`` entries that describe one reading of a table, never written to a schema file
READING = (INFERRED, DECLARED, ADAPTED, UNJUDGED)


def _read_json(path: Path, what: str) -> Mapping:
    """A JSON file's value; one BadTable line naming the file on any problem."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadTable(f"{path}: {what} not found") from None
    except OSError as exc:
        raise BadTable(f"{path}: cannot read {what} ({exc.strerror})") from None
    return parse_json(raw, str(path), what)   # one line for bad text, bad JSON or deep nesting


def key_of_names(key):
    """A schema's ``key`` as kept: None, a column name, or a tuple of two or more column names (a list or tuple
    of one is that name). BadTable for anything else, or a column named twice."""
    if key is None or isinstance(key, str):
        return key
    if isinstance(key, (list, tuple)) and key and all(isinstance(k, str) for k in key):
        if len(set(key)) != len(key):
            raise BadTable(f"schema: 'key' names a column twice ({', '.join(map(repr, key))})")
        return key[0] if len(key) == 1 else tuple(key)
    raise BadTable("schema: 'key' must be a column name, a list of distinct column names (a composite key) or null")


def key_text(columns, values) -> str:
    """A composite key's value as a reader sees it: ``branch=North, account_no=17`` (a missing part reads
    ``missing``)."""
    def one(v):
        try:
            if pd.isna(v):
                return "missing"
        except (TypeError, ValueError):
            pass
        return str(v)

    return ", ".join(f"{c}={one(v)}" for c, v in zip(columns, values))


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of a table.

    Parameters
    ----------
    numerical, categorical : tuple of str
        Feature columns by kind, in table order. ``categorical`` excludes the target.
    target : str or None
        The label column, if any.
    task : {"binary", "multiclass", "regression", "none"}
        What the target is. ``"none"`` when there is no target.
    excluded : tuple of str
        Columns present in the file but left out (IDs, all-missing columns, user choice).
    name : str
        A display name for the table.
    key : str, tuple of str, or None
        The user's row key: a column that identifies rows (an ID, integers with gaps or
        text), or several columns that do so together (a composite key, e.g.
        ``("branch", "account_no")``), left out of the distance and kept to name the rows.
    """

    numerical: tuple[str, ...]
    categorical: tuple[str, ...]
    target: str | None = None
    task: str = "binary"
    excluded: tuple[str, ...] = ()
    name: str = ""
    extra: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)
    key: str | tuple[str, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "key", key_of_names(self.key))
        object.__setattr__(self, "numerical", tuple(self.numerical))
        object.__setattr__(self, "categorical", tuple(self.categorical))
        object.__setattr__(self, "excluded", tuple(self.excluded))
        if self.target is None:
            object.__setattr__(self, "task", "none")
        if self.task not in TASKS:
            raise BadTable(f"schema: task {self.task!r} is not one of {', '.join(TASKS)}")
        if self.target is not None and self.task == "none":
            raise BadTable(f"schema: target {self.target!r} given with task 'none'")
        seen: set[str] = set()
        for col in self.columns:
            if col in seen:
                raise BadTable(f"schema: column {col!r} is given more than one role")
            seen.add(col)
        for col in self.key_columns:
            if col in seen or col in self.excluded:
                raise BadTable(f"schema: column {col!r} is the row key and has another role")

    # ------------------------------------------------------------------ views
    @property
    def columns(self) -> tuple[str, ...]:
        """Model columns: numericals, categoricals, then the target."""
        tail = (self.target,) if self.target is not None else ()
        return self.numerical + self.categorical + tail

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The row key's columns: () without a key, one for a single key, several for a composite key."""
        return () if self.key is None else (self.key,) if isinstance(self.key, str) else tuple(self.key)

    @property
    def target_is_categorical(self) -> bool:
        return self.target is not None and self.task in ("binary", "multiclass")

    @property
    def distance_numerical(self) -> tuple[str, ...]:
        """Numerical columns of the memorization distance (regression target included)."""
        if self.target is not None and not self.target_is_categorical:
            return self.numerical + (self.target,)
        return self.numerical

    @property
    def distance_categorical(self) -> tuple[str, ...]:
        """Categorical columns of the memorization distance (class target included)."""
        if self.target_is_categorical:
            return self.categorical + (self.target,)
        return self.categorical

    def kind_of(self, column: str) -> str:
        if column == self.target:
            return "target"
        if column in self.key_columns:
            return "key"
        if column in self.numerical:
            return "numerical"
        if column in self.categorical:
            return "categorical"
        if column in self.excluded:
            return "excluded"
        raise KeyError(column)

    def declared(self, column: str) -> bool:
        """Whether ``column``'s kind was stated (a schema file, SDV metadata, the user's override or edit) rather
        than guessed by inference (:data:`INFERRED`)."""
        return not self.extra.get(INFERRED) or column in self.extra.get(DECLARED, ())

    # --------------------------------------------------------------- editing
    def with_overrides(self, overrides: Mapping[str, str], source: str = "schema") -> "Schema":
        """Return a schema with some columns moved to another kind.

        ``overrides`` maps a column to ``"numerical"``, ``"categorical"``, ``"target"``, ``"key"``
        or ``"excluded"``. Making a column the target demotes the previous target to a
        categorical feature (numerical for regression); making one the key leaves the
        previous key out (excluded); several columns made the key in one call are one composite key
        (in the order given), and a column of a composite key given another kind leaves the rest as the key.
        """
        num, cat, exc = list(self.numerical), list(self.categorical), list(self.excluded)
        target, task, key = self.target, self.task, list(self.key_columns)
        known = set(self.columns) | set(self.excluded) | set(key)
        new_key = False
        for col, kind in overrides.items():
            if kind not in KINDS:
                raise BadTable(f"{source}: column {col!r}: unknown type {kind!r} (use {', '.join(KINDS)})")
            if col not in known:
                parts = [c.strip() for c in str(col).split(",")]
                hint = (f" (a composite key is one --key per column: {' '.join(f'--key {c}' for c in parts)})"
                        if kind == "key" and len(parts) > 1 and all(c in known for c in parts) else "")
                raise BadTable(f"{source}: column {col!r}: no such column{hint}")
            for lst in (num, cat, exc):
                if col in lst:
                    lst.remove(col)
            if col == target:
                target, task = None, "none"
            if col in key:
                key.remove(col)
            if kind == "numerical":
                num.append(col)
            elif kind == "categorical":
                cat.append(col)
            elif kind == "excluded":
                exc.append(col)
            elif kind == "key":
                if not new_key:                      # the first key column given replaces the previous key
                    exc.extend(key)
                    key, new_key = [], True
                key.append(col)
            else:
                if target is not None:
                    (num if task == "regression" else cat).append(target)
                target, task = col, "binary"
        declared = sorted({*self.extra.get(DECLARED, ()), *map(str, overrides)})
        return replace(self, numerical=tuple(num), categorical=tuple(cat), excluded=tuple(exc),
                       target=target, task=task, key=tuple(key) or None, extra={**self.extra, DECLARED: declared})

    # ------------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        out = {k: v for k, v in self.extra.items() if k not in READING}
        out.update({"name": self.name, "target": self.target, "task": self.task,
                    "numerical": list(self.numerical), "categorical": list(self.categorical)})
        if self.excluded:
            out["excluded"] = list(self.excluded)
        if self.key is not None:
            out["key"] = self.key if isinstance(self.key, str) else list(self.key)
        return out

    @classmethod
    def from_dict(cls, d: Mapping, source: str = "schema") -> "Schema":
        if not isinstance(d, Mapping):
            raise BadTable(f"{source}: expected a JSON object with 'numerical' and 'categorical' lists")
        if "numerical" not in d and "categorical" not in d:
            hint = " (SDV metadata? give it as --metadata)" if "columns" in d or "tables" in d else ""
            raise BadTable(f"{source}: no 'numerical' or 'categorical' list of column names{hint}")
        for key in ("numerical", "categorical", "excluded"):
            val = d.get(key, []) if key != "excluded" else (d.get(key) or [])
            if not isinstance(val, list) or not all(isinstance(v, str) for v in val):  # "age" is no list of a, g, e
                raise BadTable(f"{source}: '{key}' must be a list of column names")
        target = d.get("target")
        if target is not None and not isinstance(target, str):
            raise BadTable(f"{source}: 'target' must be a column name or null")
        task = d.get("task") or ("binary" if target is not None else "none")
        key = d.get("key")
        if isinstance(key, list) and key and all(isinstance(k, str) for k in key) and len(set(key)) == len(key):
            key = tuple(key)
        elif key is not None and not isinstance(key, str):
            raise BadTable(f"{source}: 'key' must be a column name, a list of distinct column names (a composite "
                            "key) or null")
        known = {"name", "target", "task", "numerical", "categorical", "excluded", "key"}
        extra = {k: v for k, v in d.items() if k not in known}
        categorical = [c for c in d.get("categorical", []) if c != target]
        try:
            return cls(numerical=tuple(d.get("numerical", [])), categorical=tuple(categorical),
                       target=target, task=task, excluded=tuple(d.get("excluded", []) or []),
                       name=str(d.get("name") or ""), extra=extra, key=key)
        except BadTable as exc:  # name the file, not just "schema"
            msg = str(exc)
            raise BadTable(f"{source}: {msg[len('schema: '):] if msg.startswith('schema: ') else msg}") from None

    @classmethod
    def load(cls, path: str | Path) -> "Schema":
        """Read a schema file (the ``meta.json`` format)."""
        path = Path(path)
        return cls.from_dict(_read_json(path, "schema file"), source=str(path))

    # ------------------------------------------------------------------- SDV metadata
    @classmethod
    def from_sdv(cls, metadata: Mapping | str | Path, target: str | None = None, *, table: str | None = None,
                 task: str | None = None) -> "Schema":
        """A schema from SDV single-table metadata (a dict, or a path to its JSON file).

        Both forms are read: the current ``{"tables": {name: {"columns": {...}}}, ...}``
        (``METADATA_SPEC_VERSION`` V1; one table, or the one named ``table``) and the older
        single-table ``{"columns": {...}}`` (``SINGLE_TABLE_V1``). Every column is read, and
        every one not measured as it is typed is said (:meth:`sdv_notes`). sdtypes map as:

        ========================================  ==========================================
        sdtype                                    role here
        ========================================  ==========================================
        numerical                                 numerical
        categorical                               categorical
        boolean, ordinal                          categorical (said: the order is not used)
        id                                        the row key (the table's ``primary_key``,
                                                  else the first id column); other id columns
                                                  excluded (said)
        datetime                                  excluded (said: the distance has no dates)
        every other sdtype: PII (email, address,  excluded (said: personal data is no feature)
        phone_number, ...) or unknown
        ========================================  ==========================================

        ``target`` names the label column (SDV metadata has none); its task is ``regression``
        for a numerical column, else ``binary`` (pass ``task`` for ``multiclass``). The
        metadata's column names are kept (``extra["sdv_columns"]``): a training table holding a
        column the metadata does not list is refused in one line, as SDV refuses it
        (:func:`memviz.tables.data.validate_frame`).
        """
        source = str(metadata) if isinstance(metadata, (str, Path)) else "SDV metadata"
        if isinstance(metadata, (str, Path)):
            d = _read_json(Path(metadata), "SDV metadata file")
        else:
            d = metadata
        if not isinstance(d, Mapping):
            raise BadTable(f"{source}: expected a JSON object (SDV metadata)")
        name = ""
        if "tables" in d:
            tables = d["tables"]
            if not isinstance(tables, Mapping) or not tables:
                raise BadTable(f"{source}: 'tables' must map a table name to its metadata")
            if table is None:
                if len(tables) != 1:
                    raise BadTable(f"{source}: {len(tables)} tables ({', '.join(map(str, tables))}); "
                                   "memviz reads one table: name it")
                table = next(iter(tables))
            if table not in tables:
                raise BadTable(f"{source}: no table {table!r} (tables: {', '.join(map(str, tables))})")
            name, d = str(table), tables[table]
        cols = d.get("columns") if isinstance(d, Mapping) else None
        if not isinstance(cols, Mapping) or not cols:
            raise BadTable(f"{source}: no 'columns' object (SDV single-table metadata)")
        num, cat, ids, dates, other, mapped = [], [], [], [], [], []
        for col, spec in cols.items():
            sdtype = spec.get("sdtype") if isinstance(spec, Mapping) else None
            if not isinstance(sdtype, str):
                raise BadTable(f"{source}: column {col!r}: no sdtype")
            if sdtype == "numerical":
                num.append(col)
            elif sdtype == "categorical":
                cat.append(col)
            elif sdtype in ("boolean", "ordinal"):
                cat.append(col)
                mapped.append(f"{col} ({sdtype})")
            elif sdtype == "id":
                ids.append(col)
            elif sdtype == "datetime":
                dates.append(col)
            else:
                other.append(f"{col} ({sdtype})")
        primary = d.get("primary_key")
        key = primary if isinstance(primary, str) and primary in ids else (ids[0] if ids else None)
        kept = set(num) | set(cat) | {key}
        exc = [c for c in cols if c not in kept]   # in the metadata's order
        if target is not None:
            if target not in num and target not in cat:
                kind = "not in the metadata" if target not in cols else "an excluded column"
                raise BadTable(f"{source}: column {target!r}: the target is {kind}")
            task = task or ("regression" if target in num else "binary")
            num = [c for c in num if c != target]
            cat = [c for c in cat if c != target]
        notes = {"sdv_columns": [str(c) for c in cols]}
        for what, items in (("sdv_mapped", mapped), ("sdv_personal", other), ("sdv_dates", dates),
                            ("sdv_ids", [c for c in ids if c != key])):
            if items:
                notes[what] = items
        try:
            return cls(numerical=tuple(num), categorical=tuple(cat), target=target,
                       task=task or ("binary" if target else "none"), excluded=tuple(exc), name=name,
                       extra=notes, key=key)
        except BadTable as exc_:
            msg = str(exc_)
            raise BadTable(f"{source}: {msg[len('schema: '):] if msg.startswith('schema: ') else msg}") from None

    def sdv_notes(self) -> tuple[str, ...]:
        """One line per way the SDV metadata's reading departs from its sdtypes (() when none): the
        key, the boolean and ordinal columns read as categories, the personal-data, date and further
        id columns left out."""
        x = self.extra
        out = []
        if x.get("sdv_columns") and self.key is not None:
            out.append(f"SDV metadata: {self.key} (id) is the row key: it names the rows and is left out of the "
                       "distance")
        if x.get("sdv_mapped"):
            out.append(f"SDV metadata: {', '.join(x['sdv_mapped'])} read as categorical (the distance counts a "
                       "differing value as one mismatch; an order is not used)")
        if x.get("sdv_personal"):
            out.append(f"SDV metadata: left out as personal data or unknown sdtype: {', '.join(x['sdv_personal'])} "
                       "(memviz measures numerical and categorical columns; change the sdtype to measure one)")
        if x.get("sdv_dates"):
            out.append(f"SDV metadata: left out {', '.join(x['sdv_dates'])} (datetime: the distance has no dates)")
        if x.get("sdv_ids"):
            out.append(f"SDV metadata: left out {', '.join(x['sdv_ids'])} (id: one row key is kept, "
                       f"{self.key})")
        if x.get("sdv_excluded"):  # schemas saved before the notes above
            out.append(f"SDV metadata: left out {', '.join(x['sdv_excluded'])} (memviz measures numerical and "
                       "categorical columns)")
        return tuple(out)

    def to_sdv(self, table: str | None = None) -> dict:
        """SDV metadata (current form, ``METADATA_SPEC_VERSION`` V1) for this schema: numericals as
        ``numerical``, categoricals as ``categorical``, the target by its task, the key as ``id`` (the
        table's ``primary_key``; SDV's primary key is one column, so a composite key's columns are ``id``
        columns and the table has no ``primary_key``), excluded columns left out."""
        columns = {}
        for col in self.key_columns:
            columns[col] = {"sdtype": "id"}
        for col in self.columns:
            kind = "numerical" if col in self.distance_numerical else "categorical"
            columns[col] = {"sdtype": kind}
        body = {"columns": columns, **({"primary_key": self.key} if isinstance(self.key, str) else {})}
        return {"tables": {table or self.name or "table": body}, "relationships": [],
                "METADATA_SPEC_VERSION": "V1"}

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=1))
