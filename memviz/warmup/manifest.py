"""The run manifest (``manifest.json``): its format, its validation, and the typed view readers use.

A manifest is validated once, when read (:func:`validate_manifest`: one BadRunFolder line naming the
file, the field and the problem), and read through :class:`Manifest`'s attributes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import jsonschema

from memviz.errors import MemvizError, BadRunFolder
from memviz.tables.schema import Schema

FORMAT = "memviz.run/1"
#: statuses a manifest holds; a reader reports a "running" run whose writer is gone as interrupted
STATUSES = ("running", "finished", "cancelled", "failed")


def _got(v) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "an integer",
             float: "a number", type(None): "null"}
    return names.get(type(v), type(v).__name__)


#: top-level manifest fields: name -> (kind, required)
_FIELDS = {"status": ("string", True), "config": ("object", True), "schema": ("object", True),
           "data": ("object", True), "kind": ("string", False), "run_id": ("string", False),
           "created": ("string", False), "updated": ("string", False), "device": ("string", False),
           "checks": ("list", False), "progress": ("object", False), "timings": ("object", False),
           "versions": ("object", False), "summary": ("object", False), "error": ("string", False)}
#: the manifest's words for a JSON Schema type
_JSON = {"object": "object", "list": "array", "string": "string", "integer": "integer", "number": "number"}


def _t(kind: str, optional: bool = False) -> dict:
    return {"type": [_JSON[kind], "null"] if optional else _JSON[kind]}


_CHECK_KEYS = (("check", "integer", False), ("epoch", "integer", False), ("mem_ratio", "number", True))

#: manifest.json as a JSON Schema (draft 2020-12; ``integer`` excludes 1.0, as Python's int does). The schema
#: field's own rules are :meth:`Schema.from_dict`'s; the config's, :func:`memviz.warmup.run.saved_config`'s.
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": f"memviz run manifest ({FORMAT})",
    "type": "object",
    "required": ["format", *(n for n, (_, required) in _FIELDS.items() if required)],
    "properties": {
        "format": {"const": FORMAT},
        **{n: _t(kind, optional=not required) for n, (kind, required) in _FIELDS.items()},
        "status": {"type": "string", "enum": list(STATUSES)},
        "data": {"type": "object", "required": ["fingerprint", "n_rows"],
                 "properties": {"fingerprint": _t("string"), "n_rows": _t("integer"),
                                "source": _t("string", optional=True)}},
        "checks": {"type": ["array", "null"],
                   "items": {"type": "object", "required": [k for k, _, opt in _CHECK_KEYS if not opt],
                             "properties": {k: _t(kind, opt) for k, kind, opt in _CHECK_KEYS}}},
        "progress": {"type": ["object", "null"], "additionalProperties": _t("number", optional=True)},
        "timings": {"type": ["object", "null"], "additionalProperties": _t("number", optional=True)},
    },
}

_FIELD_ORDER = list(_FIELDS)
_SCHEMA_STEP = 3          # the schema field's own check runs after steps 0-2 (fields, status, data)


@functools.lru_cache(maxsize=1)
def _validator():
    strict = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, v: isinstance(v, int) and not isinstance(v, bool))
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=strict)(SCHEMA)


def _problem(e, m: dict) -> tuple[tuple, str]:
    """A JSON Schema error of manifest ``m`` as (its place in the order the fields are read, the line saying
    it): a reader meets the first problem of the manifest in that order, whatever the validator's order."""
    path = list(e.absolute_path)
    if not path and e.validator == "required":
        name = next(n for n in e.validator_value if n not in m)
        if name == "format":
            return (-1,), f"not a {FORMAT} manifest"
        return (0, _FIELD_ORDER.index(name), 0), f"manifest lacks the field {name!r}"
    if not path or path[0] == "format":
        return (-1,), f"not a {FORMAT} manifest"
    name, v = path[0], e.instance
    if len(path) == 1 and e.validator != "required":
        if name == "status" and e.validator == "enum":
            return (1,), f"manifest field 'status': {v!r} is not one of {', '.join(STATUSES)}"
        return (0, _FIELD_ORDER.index(name), 1), _type_line(name, v, _FIELDS[name][0])
    if name == "data":
        key = path[1] if len(path) > 1 else None
        if e.validator == "required":
            key = next(k for k in e.validator_value if k not in e.instance)
            return (2, ("fingerprint", "n_rows").index(key), 0), f"manifest lacks the field 'data.{key}'"
        kind = {"fingerprint": "string", "n_rows": "integer", "source": "string"}[key]
        return (2, ("fingerprint", "n_rows", "source").index(key), 1), _type_line(f"data.{key}", v, kind)
    if name == "checks":
        i = path[1]
        if len(path) == 2:
            if e.validator == "required":
                key = next(k for k, _, _ in _CHECK_KEYS if k not in e.instance)
                return (4, i, [k for k, _, _ in _CHECK_KEYS].index(key), 0), f"manifest lacks the field 'checks[{i}].{key}'"
            return (4, i, -1), _type_line(f"checks[{i}]", v, "object")
        j, (key, kind, _) = next((j, c) for j, c in enumerate(_CHECK_KEYS) if c[0] == path[2])
        return (4, i, j, 1), _type_line(f"checks[{i}].{key}", v, kind)
    key = path[1]                                        # progress, timings: numbers or null
    return (5, ("progress", "timings").index(name), list(m[name]).index(key)), _type_line(f"{name}.{key}", v, "number")


def _type_line(name: str, v, kind: str) -> str:
    article = "an" if kind[0] in "aeiou" else "a"
    return f"manifest field {name!r}: expected {article} {kind}, got {_got(v)}"


def validate_manifest(m, f: Path) -> dict:
    """``m`` if it is a well-formed run manifest; BadRunFolder naming ``f``, the field and the problem.

    Checked against :data:`SCHEMA` (``jsonschema``): the format tag; the type of every known field;
    ``status`` among :data:`STATUSES`; ``data.fingerprint`` (string) and ``data.n_rows`` (integer);
    each check summary's ``check`` and ``epoch`` (integers) and ``mem_ratio`` (number or null);
    ``progress`` and ``timings`` values (numbers or null); then the schema (as :meth:`Schema.from_dict`
    reads it). Of several problems the line names the first in that order. The config's values are
    checked by its reader (:func:`memviz.warmup.run.saved_config`).
    """
    if not isinstance(m, dict):
        raise BadRunFolder(f"{f}: not a {FORMAT} manifest")
    problems = sorted((_problem(e, m) for e in _validator().iter_errors(m)), key=lambda p: p[0])
    if problems and problems[0][0] < (_SCHEMA_STEP,):
        raise BadRunFolder(f"{f}: {problems[0][1]}")
    try:
        Schema.from_dict(m["schema"], source="schema")
    except (MemvizError, TypeError, ValueError) as exc:
        raise BadRunFolder(f"{f}: manifest field 'schema': {str(exc).removeprefix('schema: ')}") from None
    if problems:
        raise BadRunFolder(f"{f}: {problems[0][1]}")
    return m


@dataclass(frozen=True)
class DataInfo:
    """What a run was trained on: the table's fingerprint (:func:`memviz.tables.data.fingerprint`),
    its row count and where it came from."""

    fingerprint: str
    n_rows: int
    source: str | None = None


@dataclass(frozen=True)
class Manifest:
    """A run's manifest, validated once (:func:`validate_manifest`) and read through attributes.

    ``config`` is the run's settings as stored (the warm-up reads them into a
    :class:`memviz.warmup.run.WarmupConfig` with :func:`memviz.warmup.run.saved_config`);
    ``checks`` the per-check summaries in check order; ``raw`` the dict as read, for writers.
    """

    status: str
    kind: str
    config: Mapping[str, Any]
    schema: Schema
    data: DataInfo
    run_id: str | None
    created: str | None
    updated: str | None
    device: str | None
    checks: tuple[Mapping[str, Any], ...]
    progress: Mapping[str, Any]
    timings: Mapping[str, Any]
    versions: Mapping[str, Any]
    summary: Mapping[str, Any] | None
    error: str | None
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_dict(cls, m, f: Path) -> "Manifest":
        """Validate ``m`` (BadRunFolder naming ``f``, the field and the problem) and type it."""
        m = validate_manifest(m, f)
        data = m["data"]
        return cls(status=m["status"], kind=m.get("kind") or "warmup", config=dict(m["config"]),
                   schema=Schema.from_dict(m["schema"], source=str(f)),
                   data=DataInfo(data["fingerprint"], int(data["n_rows"]), data.get("source")),
                   run_id=m.get("run_id"), created=m.get("created"), updated=m.get("updated"),
                   device=m.get("device"), checks=tuple(m.get("checks") or ()),
                   progress=dict(m.get("progress") or {}), timings=dict(m.get("timings") or {}),
                   versions=dict(m.get("versions") or {}), summary=m.get("summary"), error=m.get("error"),
                   raw=m)

    @property
    def total_seconds(self) -> float:
        """Seconds the run has computed, over every resume (0 before the first stop)."""
        return float(self.timings.get("total_seconds") or 0.0)

    @property
    def epochs(self) -> int:
        """The run's epochs E (0 when the config does not say)."""
        return int(self.config.get("epochs") or 0)

    @property
    def dataset(self) -> str | None:
        """The table's name for people: the schema's name, else where it came from."""
        return self.schema.name or self.data.source
