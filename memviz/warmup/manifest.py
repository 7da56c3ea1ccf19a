"""The run manifest (``manifest.json``): its format, its validation, and the typed view readers use.

A manifest is validated once, when read (:func:`validate_manifest`: one RunError line naming the
file, the field and the problem), and read through :class:`Manifest`'s attributes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from memviz.errors import MemvizError, RunError
from memviz.tables.schema import Schema

FORMAT = "memviz.run/1"
#: statuses a manifest holds; a reader reports a "running" run whose writer is gone as interrupted
STATUSES = ("running", "finished", "cancelled", "failed")


_KINDS = {"object": dict, "list": list, "string": str}


def _is(v, kind: str) -> bool:
    if kind == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if kind == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, _KINDS[kind])


def _got(v) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "an integer",
             float: "a number", type(None): "null"}
    return names.get(type(v), type(v).__name__)


def _expect(f: Path, name: str, v, kind: str, optional: bool = False) -> None:
    if v is None and optional:
        return
    if not _is(v, kind):
        article = "an" if kind[0] in "aeiou" else "a"
        raise RunError(f"{f}: manifest field {name!r}: expected {article} {kind}, got {_got(v)}")


#: top-level manifest fields: name -> (kind, required)
_FIELDS = {"status": ("string", True), "config": ("object", True), "schema": ("object", True),
           "data": ("object", True), "kind": ("string", False), "run_id": ("string", False),
           "created": ("string", False), "updated": ("string", False), "device": ("string", False),
           "checks": ("list", False), "progress": ("object", False), "timings": ("object", False),
           "versions": ("object", False), "summary": ("object", False), "error": ("string", False)}


def validate_manifest(m, f: Path) -> dict:
    """``m`` if it is a well-formed run manifest; RunError naming ``f``, the field and the problem.

    Checked: the format tag; the type of every known field; ``status`` among :data:`STATUSES`;
    ``data.fingerprint`` (string) and ``data.n_rows`` (integer); the schema (as
    :meth:`Schema.from_dict` reads it); each check summary's ``check`` and ``epoch`` (integers)
    and ``mem_ratio`` (number or null); ``progress`` and ``timings`` values (numbers or null).
    The config's values are checked by its reader (:func:`memviz.warmup.run.saved_config`).
    """
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise RunError(f"{f}: not a {FORMAT} manifest")
    for name, (kind, required) in _FIELDS.items():
        if name not in m:
            if required:
                raise RunError(f"{f}: manifest lacks the field {name!r}")
            continue
        _expect(f, name, m[name], kind, optional=not required)
    if m["status"] not in STATUSES:
        raise RunError(f"{f}: manifest field 'status': {m['status']!r} is not one of {', '.join(STATUSES)}")
    data = m["data"]
    for key, kind in (("fingerprint", "string"), ("n_rows", "integer")):
        if key not in data:
            raise RunError(f"{f}: manifest lacks the field 'data.{key}'")
        _expect(f, f"data.{key}", data[key], kind)
    _expect(f, "data.source", data.get("source"), "string", optional=True)
    try:
        Schema.from_dict(m["schema"], source="schema")
    except (MemvizError, TypeError, ValueError) as exc:
        raise RunError(f"{f}: manifest field 'schema': {str(exc).removeprefix('schema: ')}") from None
    for i, c in enumerate(m.get("checks") or []):
        _expect(f, f"checks[{i}]", c, "object")
        for key, kind, optional in (("check", "integer", False), ("epoch", "integer", False),
                                    ("mem_ratio", "number", True)):
            if key not in c and not optional:
                raise RunError(f"{f}: manifest lacks the field 'checks[{i}].{key}'")
            _expect(f, f"checks[{i}].{key}", c.get(key), kind, optional)
    for name in ("progress", "timings"):
        for key, v in (m.get(name) or {}).items():
            _expect(f, f"{name}.{key}", v, "number", optional=True)
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
        """Validate ``m`` (RunError naming ``f``, the field and the problem) and type it."""
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
