"""Uploads and the table in use, kept with the runs, so that a reload of the page finds them
again (the run it shows was trained on them)::

    <runs root>/.uploads/<key>/upload.json, train.bin[, test.bin]     an upload as received
    <runs root>/.uploads/tables/<key>/info.json, schema.json, train.parquet[, test.parquet]
                                                                      a table in use (schema and split applied)

Keys are content hashes: the same upload or table is kept once.
"""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from memviz.app.datasets import RawData, raw_from_upload
from memviz.errors import DataError, MemvizError
from memviz.io import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_parquet,
    read_json,
)
from memviz.tables.data import ROW_ID, Table, fingerprint, load_table
from memviz.tables.schema import Schema

UPLOADS = ".uploads"
TABLES = "tables"


def _uploads(root: str | Path) -> Path:
    return Path(root) / UPLOADS


def _key(*parts: bytes | str | None) -> str:
    h = hashlib.sha256()
    for p in parts:
        b = b"" if p is None else (p.encode() if isinstance(p, str) else p)
        h.update(len(b).to_bytes(8, "little") + b)
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class StoredUpload:
    """An upload kept under the runs root (its bytes exactly as received)."""

    key: str
    name: str
    test_name: str | None
    created: float
    folder: Path

    @property
    def label(self) -> str:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(self.created))
        return f"{self.name}" + (f" + {self.test_name}" if self.test_name else "") + f" ({when})"


def save_upload(root: str | Path, name: str, raw: bytes, test_name: str | None = None,
                test_raw: bytes | None = None) -> StoredUpload:
    """Keep an upload (and its test file) under ``root/.uploads``; the same bytes are kept once."""
    key = _key(name, raw, test_name, test_raw)
    folder = _uploads(root) / key
    info = folder / "upload.json"
    if not info.exists():
        atomic_write_bytes(folder / "train.bin", raw)
        if test_raw is not None:
            atomic_write_bytes(folder / "test.bin", test_raw)
        atomic_write_json(info, {"key": key, "name": str(name), "test_name": test_name, "created": time.time()})
    return _stored(folder)


def _stored(folder: Path) -> StoredUpload:
    d = read_json(folder / "upload.json", "stored upload")
    return StoredUpload(folder.name, str(d.get("name") or "upload"), d.get("test_name"),
                        float(d.get("created") or 0.0), folder)


def list_uploads(root: str | Path) -> list[StoredUpload]:
    """The uploads kept under ``root``, newest first (unreadable ones are skipped)."""
    folder = _uploads(root)
    out = []
    if folder.is_dir():
        for d in folder.iterdir():
            if d.is_dir() and (d / "upload.json").exists():
                try:
                    out.append(_stored(d))
                except MemvizError:
                    continue
    return sorted(out, key=lambda u: u.created, reverse=True)


def load_upload(root: str | Path, key: str) -> RawData:
    """A kept upload, parsed again (:func:`raw_from_upload`)."""
    folder = _uploads(root) / str(key)
    if not key or not str(key).isalnum() or not (folder / "upload.json").exists():
        raise DataError(f"upload {key!r}: not kept under {_uploads(root)}")
    up = _stored(folder)
    test = folder / "test.bin"
    return raw_from_upload(up.name, (folder / "train.bin").read_bytes(), up.test_name,
                           test.read_bytes() if test.exists() else None)


def save_tables(root: str | Path, train: Table, test: Table | None, label: str, choice: str = "") -> str:
    """Keep the table in use (schema and split applied) under the runs root; returns its key.

    ``choice`` is where it came from (``sample``, ``shared:NAME``, ``upload:KEY``), for the Data
    page. The same tables give the same key (kept once).
    """
    train_print = fingerprint(train)
    test_print = fingerprint(test) if test is not None else ""
    key = _key(train_print, test_print, label)
    folder = _uploads(root) / TABLES / key
    if not (folder / "info.json").exists():
        atomic_write_parquet(folder / "train.parquet", train.data.reset_index())
        if test is not None:
            atomic_write_parquet(folder / "test.parquet", test.data.reset_index())
        train.schema.save(folder / "schema.json")
        atomic_write_json(folder / "info.json", {"key": key, "label": label, "choice": choice,
                                                 "train_fingerprint": train_print, "test_fingerprint": test_print,
                                                 "train_source": train.source,
                                                 "test_source": test.source if test is not None else None,
                                                 "created": time.time()})
    return key


def load_tables(root: str | Path, key: str) -> tuple[Table, Table | None, str, str]:
    """(train, test, label, choice) of :func:`save_tables`; DataError when not kept."""
    folder = _uploads(root) / TABLES / str(key)
    if not key or not str(key).isalnum() or not (folder / "info.json").exists():
        raise DataError(f"table {key!r}: not kept under {_uploads(root)}")
    info = read_json(folder / "info.json", "kept table")
    schema = Schema.load(folder / "schema.json")
    train = load_table(folder / "train.parquet", schema, row_id_column=ROW_ID)
    train = Table(train.data, train.schema, str(info.get("train_source") or train.source))
    test = None
    if (folder / "test.parquet").exists():
        t = load_table(folder / "test.parquet", schema, row_id_column=ROW_ID, role="test")
        test = Table(t.data, t.schema, str(info.get("test_source") or t.source))
    return train, test, str(info.get("label") or "kept table"), str(info.get("choice") or "")


def tables_for(root: str | Path, train_fingerprint: str) -> str | None:
    """The key of the newest kept table whose training rows have this fingerprint (a run's), or None."""
    folder = _uploads(root) / TABLES
    best = None
    if folder.is_dir() and train_fingerprint:
        for d in folder.iterdir():
            try:
                info = json.loads((d / "info.json").read_text())
            except (OSError, ValueError):
                continue
            if info.get("train_fingerprint") == train_fingerprint and (best is None or info["created"] > best[0]):
                best = (info.get("created", 0), d.name)
    return best[1] if best else None
