"""The column roles of a table: numerical, categorical, target.

The schema file format is the one of ``../shared/datasets/*/meta.json``::

    {"name": "adult", "target": "income", "task": "binary",
     "numerical": ["age", ...], "categorical": ["workclass", ...]}

``categorical`` never lists the target. For the memorization distance a
classification target counts as one more categorical column; a regression target
counts as one more numerical column.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from memviz.errors import DataError

TASKS = ("binary", "multiclass", "regression", "none")
KINDS = ("numerical", "categorical", "target", "excluded")


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
    """

    numerical: tuple[str, ...]
    categorical: tuple[str, ...]
    target: str | None = None
    task: str = "binary"
    excluded: tuple[str, ...] = ()
    name: str = ""
    extra: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "numerical", tuple(self.numerical))
        object.__setattr__(self, "categorical", tuple(self.categorical))
        object.__setattr__(self, "excluded", tuple(self.excluded))
        if self.target is None:
            object.__setattr__(self, "task", "none")
        if self.task not in TASKS:
            raise DataError(f"schema: task {self.task!r} is not one of {', '.join(TASKS)}")
        if self.target is not None and self.task == "none":
            raise DataError(f"schema: target {self.target!r} given with task 'none'")
        seen: set[str] = set()
        for col in self.columns:
            if col in seen:
                raise DataError(f"schema: column {col!r} is given more than one role")
            seen.add(col)

    # ------------------------------------------------------------------ views
    @property
    def columns(self) -> tuple[str, ...]:
        """Model columns: numericals, categoricals, then the target."""
        tail = (self.target,) if self.target is not None else ()
        return self.numerical + self.categorical + tail

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
        if column in self.numerical:
            return "numerical"
        if column in self.categorical:
            return "categorical"
        if column in self.excluded:
            return "excluded"
        raise KeyError(column)

    # --------------------------------------------------------------- editing
    def with_overrides(self, overrides: Mapping[str, str], source: str = "schema") -> "Schema":
        """Return a schema with some columns moved to another kind.

        ``overrides`` maps a column to ``"numerical"``, ``"categorical"``, ``"target"`` or
        ``"excluded"``. Making a column the target demotes the previous target to a
        categorical feature (numerical for regression).
        """
        num, cat, exc = list(self.numerical), list(self.categorical), list(self.excluded)
        target, task = self.target, self.task
        known = set(self.columns) | set(self.excluded)
        for col, kind in overrides.items():
            if kind not in KINDS:
                raise DataError(f"{source}: column {col!r}: unknown type {kind!r} (use {', '.join(KINDS)})")
            if col not in known:
                raise DataError(f"{source}: column {col!r}: no such column")
            for lst in (num, cat, exc):
                if col in lst:
                    lst.remove(col)
            if col == target:
                target, task = None, "none"
            if kind == "numerical":
                num.append(col)
            elif kind == "categorical":
                cat.append(col)
            elif kind == "excluded":
                exc.append(col)
            else:
                if target is not None:
                    (num if task == "regression" else cat).append(target)
                target, task = col, "binary"
        return replace(self, numerical=tuple(num), categorical=tuple(cat), excluded=tuple(exc),
                       target=target, task=task)

    # ------------------------------------------------------------------- I/O
    def to_dict(self) -> dict:
        out = dict(self.extra)
        out.update({"name": self.name, "target": self.target, "task": self.task,
                    "numerical": list(self.numerical), "categorical": list(self.categorical)})
        if self.excluded:
            out["excluded"] = list(self.excluded)
        return out

    @classmethod
    def from_dict(cls, d: Mapping, source: str = "schema") -> "Schema":
        if not isinstance(d, Mapping):
            raise DataError(f"{source}: expected a JSON object with 'numerical' and 'categorical' lists")
        for key in ("numerical", "categorical"):
            val = d.get(key, [])
            if not isinstance(val, list) or not all(isinstance(v, str) for v in val):
                raise DataError(f"{source}: '{key}' must be a list of column names")
        target = d.get("target")
        if target is not None and not isinstance(target, str):
            raise DataError(f"{source}: 'target' must be a column name or null")
        task = d.get("task") or ("binary" if target is not None else "none")
        known = {"name", "target", "task", "numerical", "categorical", "excluded"}
        extra = {k: v for k, v in d.items() if k not in known}
        categorical = [c for c in d.get("categorical", []) if c != target]
        try:
            return cls(numerical=tuple(d.get("numerical", [])), categorical=tuple(categorical),
                       target=target, task=task, excluded=tuple(d.get("excluded", []) or []),
                       name=str(d.get("name") or ""), extra=extra)
        except DataError as exc:  # name the file, not just "schema"
            msg = str(exc)
            raise DataError(f"{source}: {msg[len('schema: '):] if msg.startswith('schema: ') else msg}") from None

    @classmethod
    def load(cls, path: str | Path) -> "Schema":
        """Read a schema file (the ``meta.json`` format)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise DataError(f"{path}: schema file not found") from None
        except UnicodeDecodeError:
            raise DataError(f"{path}: schema file is not UTF-8 text") from None
        except OSError as exc:
            raise DataError(f"{path}: cannot read schema file ({exc.strerror})") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
        return cls.from_dict(d, source=str(path))

    def save(self, path: str | Path) -> None:
        from memviz.io import atomic_write_text

        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=1))
