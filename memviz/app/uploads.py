"""Uploads and the table in use, kept with the runs, so that a reload of the page finds them
again (the run it shows was trained on them)::

    <runs root>/.uploads/<key>/upload.json, train.bin[, test.bin]     an upload as received
    <runs root>/.uploads/tables/<key>/info.json, schema.json, train.parquet[, test.parquet]
                                                                      a table in use (schema and split applied)
    <runs root>/.uploads/audits/<key>/files.json, train.bin, synthetic.bin, ...
                                                                      the Audit page's files as received

Keys are content hashes: the same upload or table is kept once. A write that fails (a full
disk) leaves no half-made folder, and parsed uploads are kept in memory by :class:`ByteCache`,
bounded in bytes (``$MEMVIZ_UPLOAD_CACHE_BYTES``, default 512 MiB), not in entries: three
300k-row uploads from closed sessions kept 1.49 GB in the server. That one budget is shared by every
cache of parsed tables and audits of the dashboard (:class:`ByteCache`). Kept uploads and tables take
at most ``$MEMVIZ_UPLOAD_QUOTA_BYTES`` on disk in all; the least recently saved go first
(:mod:`memviz.app.bounds`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.app import bounds
from memviz.app.datasets import RawData, raw_from_upload
from memviz.errors import BadOption, BadTable, MemvizError
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
UPLOAD_CACHE_ENV = "MEMVIZ_UPLOAD_CACHE_BYTES"
DEFAULT_UPLOAD_CACHE_BYTES = 512 * 2**20


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
    bounds.check_upload_size(len(raw) + len(test_raw or b""), str(name))   # one upload above the quota
    if not info.exists():
        with _whole(folder):
            atomic_write_bytes(folder / "train.bin", raw)
            if test_raw is not None:
                atomic_write_bytes(folder / "test.bin", test_raw)
            atomic_write_json(info, {"key": key, "name": str(name), "test_name": test_name, "created": time.time()})
    _within_quota(root, folder)
    return _stored(folder)


def _within_quota(root, folder: Path) -> None:
    """``folder`` marked as just used, then the oldest kept uploads and tables removed beyond the quota
    (:func:`memviz.app.bounds.prune_uploads`)."""
    bounds.touch(folder)
    bounds.prune_uploads(_uploads(root), keep=folder)


class _whole:
    """Remove ``folder`` if this block made it and fails (a full disk): no half-made upload."""

    def __init__(self, folder: Path):
        self.folder, self.made = folder, not folder.exists()

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if exc is not None and self.made:
            shutil.rmtree(self.folder, ignore_errors=True)
        return False


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
        raise BadTable(f"upload {key!r}: not kept under {_uploads(root)}")
    up = _stored(folder)
    test = folder / "test.bin"
    return raw_from_upload(up.name, (folder / "train.bin").read_bytes(), up.test_name,
                           test.read_bytes() if test.exists() else None)


#: the Audit page's files, in the order the page keeps them (:func:`save_audit_files`)
AUDIT_ROLES = ("train", "synthetic", "holdout", "schema")
AUDITS = "audits"


def save_audit_files(root: str | Path, names: tuple, raws: tuple, current: bool = False) -> str:
    """Keep the Audit page's files (``names`` and ``raws`` in :data:`AUDIT_ROLES` order, None where not given;
    ``current``: the training table and hold-out are the session's current table) under
    ``root/.uploads/audits/<key>``, as received, so that a reload finds them; returns the key (a content hash:
    the same files are kept once). Within the uploads' quota, as the Data page's uploads."""
    names, raws = tuple(names), tuple(raws)
    if len(names) != len(AUDIT_ROLES) or len(raws) != len(AUDIT_ROLES):
        raise BadOption(f"audit files: expected {len(AUDIT_ROLES)} names and contents")
    key = _key("audit", b"1" if current else b"0", *(x for pair in zip(names, raws) for x in pair))
    folder = _uploads(root) / AUDITS / key
    bounds.check_upload_size(sum(len(r or b"") for r in raws), ", ".join(str(n) for n in names if n))
    if not (folder / "files.json").exists():
        with _whole(folder):
            for role, raw in zip(AUDIT_ROLES, raws):
                if raw is not None:
                    atomic_write_bytes(folder / f"{role}.bin", raw)
            atomic_write_json(folder / "files.json", {"key": key, "current": bool(current), "created": time.time(),
                                                      "names": dict(zip(AUDIT_ROLES, names))})
    _within_quota(root, folder)
    return key


def load_audit_files(root: str | Path, key: str) -> dict:
    """``{"current", "names", "raws"}`` of :func:`save_audit_files` (the Audit page's kept files); BadTable when
    not kept (a key from an old link, removed beyond the quota)."""
    folder = _uploads(root) / AUDITS / str(key)
    if not key or not str(key).isalnum() or not (folder / "files.json").exists():
        raise BadTable(f"audit files {key!r}: not kept under {_uploads(root)} (removed, or from another machine)")
    info = read_json(folder / "files.json", "kept audit files")
    names = info.get("names") if isinstance(info.get("names"), dict) else {}
    raws = tuple((folder / f"{r}.bin").read_bytes() if (folder / f"{r}.bin").is_file() else None for r in AUDIT_ROLES)
    return {"current": bool(info.get("current")), "raws": raws,
            "names": tuple(str(names[r]) if raw is not None and names.get(r) else None
                           for r, raw in zip(AUDIT_ROLES, raws))}


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
        with _whole(folder):
            atomic_write_parquet(folder / "train.parquet", train.to_frame())   # with the user's row key
            if test is not None:
                atomic_write_parquet(folder / "test.parquet", test.to_frame())
            train.schema.save(folder / "schema.json")
            atomic_write_json(folder / "info.json", {"key": key, "label": label, "choice": choice,
                                                     "train_fingerprint": train_print, "test_fingerprint": test_print,
                                                     "train_source": train.source,
                                                     "test_source": test.source if test is not None else None,
                                                     "created": time.time()})
    _within_quota(root, folder)
    return key


def load_tables(root: str | Path, key: str) -> tuple[Table, Table | None, str, str]:
    """(train, test, label, choice) of :func:`save_tables`; BadTable when not kept."""
    folder = _uploads(root) / TABLES / str(key)
    if not key or not str(key).isalnum() or not (folder / "info.json").exists():
        raise BadTable(f"table {key!r}: not kept under {_uploads(root)}")
    info = read_json(folder / "info.json", "kept table")
    schema = Schema.load(folder / "schema.json")
    train = load_table(folder / "train.parquet", schema, row_id_column=ROW_ID)
    train = dataclasses.replace(train, source=str(info.get("train_source") or train.source))
    test = None
    if (folder / "test.parquet").exists():
        t = load_table(folder / "test.parquet", schema, row_id_column=ROW_ID, role="test")
        test = dataclasses.replace(t, source=str(info.get("test_source") or t.source))
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


# ------------------------------------------------------------ the in-memory cache
def nbytes(obj, _seen: set | None = None) -> int:
    """The memory a cached value holds: its DataFrames' and Series' (``memory_usage(deep=True)``,
    strings included), arrays and bytes, found through dataclasses, other objects' attributes,
    tuples, lists and dicts (each object counted once)."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen or obj is None or isinstance(obj, (str, int, float, bool, type)):
        return 0
    seen.add(id(obj))
    if isinstance(obj, pd.DataFrame):
        return int(obj.memory_usage(deep=True, index=True).sum())
    if isinstance(obj, pd.Series):
        return int(obj.memory_usage(deep=True, index=True))
    if isinstance(obj, (bytes, bytearray)):
        return len(obj)
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if dataclasses.is_dataclass(obj):
        return sum(nbytes(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
    if isinstance(obj, (tuple, list, set, frozenset)):
        return sum(nbytes(v, seen) for v in obj)
    if isinstance(obj, dict):
        return sum(nbytes(v, seen) for v in obj.values())
    attrs = getattr(obj, "__dict__", None)
    return sum(nbytes(v, seen) for v in attrs.values()) if isinstance(attrs, dict) else 0


def upload_cache_bytes() -> int:
    """The one budget of the dashboard's caches of parsed tables and audits: ``$MEMVIZ_UPLOAD_CACHE_BYTES``,
    else 512 MiB."""
    raw = os.environ.get(UPLOAD_CACHE_ENV, "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            raise BadOption(f"${UPLOAD_CACHE_ENV}={raw!r}: expected a whole number of bytes") from None
    return DEFAULT_UPLOAD_CACHE_BYTES


class _Pool:
    """Least recently used values of several caches, at most ``max_bytes()`` in all."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.items: OrderedDict[tuple, tuple[object, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key):
        with self.lock:
            hit = self.items.get(key)
            if hit is not None:
                self.items.move_to_end(key)
            return hit

    def put(self, key, value, size: int) -> None:
        cap = self.max_bytes()
        with self.lock:
            if size <= cap:
                self.items[key] = (value, size)
                self.items.move_to_end(key)
            total = sum(n for _, n in self.items.values())
            while total > cap and self.items:
                _, (_, n) = self.items.popitem(last=False)
                total -= n

    def total(self, owner=None) -> int:
        with self.lock:
            return sum(n for k, (_, n) in self.items.items() if owner is None or k[0] == owner)


#: the one pool every dashboard cache of parsed tables and audits shares (module docstring)
SHARED = _Pool(upload_cache_bytes)


def cache_bytes() -> int:
    """What the shared caches hold now, in bytes (at most :func:`upload_cache_bytes`)."""
    return SHARED.total()


class ByteCache:
    """The least recently used results of ``fn``, shared by every session. Without ``max_bytes``, every
    such cache shares one budget, :func:`upload_cache_bytes` (read at each call): four 72 MB uploads on
    the Audit page had taken the server to 4.2 GB through caches bounded by their number of entries. With
    ``max_bytes``, the cache has a budget of its own. A result larger than the whole bound is returned but
    not kept; an exception is never kept. The key is made of the arguments (str, bytes, None, or their
    ``str``), leaving out parameters whose name starts with ``_`` (as ``st.cache_resource`` does: a
    table passed beside its fingerprint)."""

    def __init__(self, fn, max_bytes: int | None = None):
        self.fn, self._max = fn, max_bytes
        self._pool = SHARED if max_bytes is None else _Pool(lambda: max_bytes)
        self._id = object()
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._skip = {i for i, p in enumerate(params) if p.name.startswith("_")}
        self._skip_names = {p.name for p in params if p.name.startswith("_")}
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__

    @property
    def max_bytes(self) -> int:
        return self._pool.max_bytes()

    @property
    def total_bytes(self) -> int:
        return self._pool.total(self._id)

    def __len__(self) -> int:
        with self._pool.lock:
            return sum(1 for k in self._pool.items if k[0] is self._id)

    def clear(self) -> None:
        with self._pool.lock:
            for k in [k for k in self._pool.items if k[0] is self._id]:
                del self._pool.items[k]

    def _key(self, args, kwargs) -> str:
        parts = [a for i, a in enumerate(args) if i not in self._skip]
        parts += [f"{k}={v}" for k, v in sorted(kwargs.items()) if k not in self._skip_names]
        return _key(*(str(a) if not isinstance(a, (bytes, str, type(None))) else a for a in parts))

    def cached(self, *args, **kwargs) -> bool:
        """Whether a call with these arguments would be answered from the cache (nothing is computed)."""
        return self._pool.get((self._id, self._key(args, kwargs))) is not None

    def __call__(self, *args, **kwargs):
        key = (self._id, self._key(args, kwargs))
        hit = self._pool.get(key)
        if hit is not None:
            return hit[0]
        value = self.fn(*args, **kwargs)
        self._pool.put(key, value, nbytes(value))
        return value


def byte_cached(max_bytes: int | None = None):
    """Decorator: ``fn`` through a :class:`ByteCache` (by default on the one shared budget)."""
    return lambda fn: ByteCache(fn, max_bytes)
