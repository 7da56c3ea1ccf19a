"""An :class:`~memviz.auditing.result.Audit` kept on disk whole, so that it is computed once.

The audit of an Adult-size run (32,561 training rows, 25 checks) takes 12–18 s on two cores, most of it
the per-row test's calibration (200 simulated copy-free resamples); the dashboard's first Memorization
visit waited for it. The job worker now audits a warm-up's last check when the run stops
(:func:`memviz.jobs.spec.run_spec`) and keeps it here; every page and process then reads the same
object back in a fraction of a second.

Layout of ``FOLDER`` (``RUN/audit_cache`` for a run): ``index.json`` (the object tree, the run token it
was computed for, the memviz version), and one Parquet file per DataFrame and one ``.npy`` per array
that the tree names. ``index.json`` is written last and atomically, and names only files already
written, so a reader sees the previous audit or the new one, never half of one.

The tree is plain JSON: a result dataclass is stored as its class name and fields, tuples and mappings
keep their type, numpy scalars their dtype. A class name is looked up in :func:`kept_classes`, the
dataclasses defined in the result packages (:data:`RESULT_PACKAGES`, named here in code), never
imported by a name the file gives: a crafted index naming ``memviz.__main__`` ran the CLI inside the
dashboard's server. Nothing is unpickled: arrays are read with ``allow_pickle=False``. A value of any
other type or class refuses the save (:class:`TypeError`), and the caller computes the audit as before;
a name the registry lacks makes the load None (computed again).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import os
import pkgutil
import re
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.io import VERSION, atomic_write_parquet, atomic_write_text

#: 7: the too-close tests' module is memviz.measure.tooclose (CloseCopies, Nearest; was measure.dcr);
#: 6: the verdict's room below viz: Family, Provenance, RunInfo and RowTest in memviz.verdict;
#: 5: NullFit in measure.nullfit; a composite key's parts in the per-row table;
#: 4: RunInfo, Provenance (auditing.provenance) and RowTest (auditing.rowtest) in modules of their own;
#: 3: the near-verbatim member, ties, the pooled identical test, regions; rows named by the key
FORMAT = "memviz.audit.stored/7"
_OWN = re.compile(r"[0-9a-f]{12}_[0-9]+\.(parquet|npy)")   # the files a save writes (others are left alone)
INDEX = "index.json"
#: the folder of a run's kept audit
RUN_FOLDER = "audit_cache"
#: the packages whose dataclasses an audit holds (its figures, verdict, evidence and floors); the only
#: classes a kept audit is read back into
RESULT_PACKAGES = ("memviz.verdict", "memviz.auditing", "memviz.evidence", "memviz.measure")


@functools.lru_cache(maxsize=1)
def kept_classes() -> dict:
    """{"module:QualName": class} of every dataclass defined at the top of a module of
    :data:`RESULT_PACKAGES`: the allow-list of :func:`load_audit` (module docstring)."""
    out = {}
    for package in RESULT_PACKAGES:
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__, package + "."):
            mod = importlib.import_module(info.name)
            for obj in vars(mod).values():
                if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == mod.__name__:
                    out[f"{obj.__module__}:{obj.__qualname__}"] = obj
    return out


def save_audit(audit, folder: str | Path, token: int | None = None) -> Path:
    """Write ``audit`` to ``folder`` (module docstring); ``token`` ties it to a run state (its manifest's
    time, :func:`memviz.app.runs.run_token`). Returns the index path."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex[:12]
    files: list[str] = []
    tree = _encode(audit, folder, tag, files)
    atomic_write_text(folder / INDEX, json.dumps({"format": FORMAT, "version": VERSION, "token": token,
                                                  "files": files, "tree": tree}) + "\n")
    for p in folder.iterdir():  # what an earlier save left (after the index that named it was replaced)
        if _OWN.fullmatch(p.name) and p.name not in files:
            try:
                p.unlink()
            except OSError:
                pass
    return folder / INDEX


def load_audit(folder: str | Path, token: int | None = None):
    """The audit kept in ``folder``, or None when there is none, it was made for another run state
    (``token``) or another memviz version, or a file it names is missing or unreadable."""
    folder = Path(folder)
    try:
        index = json.loads((folder / INDEX).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(index, dict) or index.get("format") != FORMAT or index.get("version") != VERSION:
        return None
    if token is not None and index.get("token") != token:
        return None
    try:
        return _decode(index["tree"], folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def save_table(df: pd.DataFrame, folder: str | Path, name: str, token: int | None) -> Path:
    """Keep a table computed from one run state beside the audit (``NAME_TOKEN.parquet``, atomically;
    the same name for other states is removed)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_{token}.parquet"
    atomic_write_parquet(path, df)
    for p in folder.glob(f"{name}_*.parquet"):
        if p != path:
            try:
                p.unlink()
            except OSError:
                pass
    return path


def load_kept_table(folder: str | Path, name: str, token: int | None) -> pd.DataFrame | None:
    """The table :func:`save_table` kept for this run state, or None."""
    try:
        return pd.read_parquet(Path(folder) / f"{name}_{token}.parquet")
    except (OSError, ValueError):
        return None


# ------------------------------------------------------------------ the tree
def _encode(v, folder: Path, tag: str, files: list):
    if v is None or isinstance(v, (bool, str)) or type(v) in (int, float):
        return v
    if isinstance(v, np.generic):
        if v.dtype.kind not in "biuf":
            raise TypeError(f"numpy scalar of dtype {v.dtype}")
        return {"__np__": v.dtype.str, "v": v.item()}
    if isinstance(v, pd.DataFrame):
        name = f"{tag}_{len(files)}.parquet"
        v.to_parquet(folder / name)
        files.append(name)
        return {"__df__": name}
    if isinstance(v, np.ndarray):
        if v.dtype.hasobject:
            raise TypeError("object array")
        name = f"{tag}_{len(files)}.npy"
        np.save(folder / name, v, allow_pickle=False)
        files.append(name)
        return {"__nd__": name}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        cls = type(v)
        name = f"{cls.__module__}:{cls.__qualname__}"
        if kept_classes().get(name) is not cls:
            raise TypeError(f"{name}: not a result class of {', '.join(RESULT_PACKAGES)}")
        return {"__dc__": name,
                "fields": {f.name: _encode(getattr(v, f.name), folder, tag, files) for f in dataclasses.fields(v)}}
    if isinstance(v, tuple):
        return {"__tuple__": [_encode(x, folder, tag, files) for x in v]}
    if isinstance(v, list):
        return [_encode(x, folder, tag, files) for x in v]
    if isinstance(v, dict):
        return {"__map__": [[_encode(k, folder, tag, files), _encode(x, folder, tag, files)] for k, x in v.items()]}
    raise TypeError(f"{type(v).__name__}: not kept by memviz.auditing.stored")


def _decode(v, folder: Path):
    if not isinstance(v, (dict, list)):
        return v
    if isinstance(v, list):
        return [_decode(x, folder) for x in v]
    if "__np__" in v:
        return np.dtype(v["__np__"]).type(v["v"])
    if "__df__" in v:
        return pd.read_parquet(_member(folder, v["__df__"]))
    if "__nd__" in v:
        return np.load(_member(folder, v["__nd__"]), allow_pickle=False)
    if "__tuple__" in v:
        return tuple(_decode(x, folder) for x in v["__tuple__"])
    if "__map__" in v:
        return {_decode(k, folder): _decode(x, folder) for k, x in v["__map__"]}
    if "__dc__" in v:
        cls = kept_classes().get(str(v["__dc__"]))       # looked up, never imported by the file's name
        if cls is None:
            raise TypeError(f"{str(v['__dc__'])[:100]!r}: not a result class")
        if not isinstance(v.get("fields"), dict):
            raise TypeError(f"{v['__dc__']}: no fields")
        obj = object.__new__(cls)  # the stored state as it was: no __init__ or __post_init__ runs again
        names = {f.name for f in dataclasses.fields(cls)}
        for k, x in v["fields"].items():
            if k not in names:
                raise TypeError(f"{v['__dc__']}: no field {k!r}")
            object.__setattr__(obj, k, _decode(x, folder))
        missing = names - set(v["fields"])
        if missing:
            raise TypeError(f"{v['__dc__']}: fields missing: {', '.join(sorted(missing))}")
        return obj
    raise TypeError("an unknown node")


def _member(folder: Path, name: str) -> Path:
    """A file the index names, inside ``folder`` (a name with a path in it is refused)."""
    if os.path.basename(name) != name or name.startswith("."):
        raise ValueError(f"{name!r}: not a file of this folder")
    return folder / name
