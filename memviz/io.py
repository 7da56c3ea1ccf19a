"""File I/O every floor shares: atomic writes, strict JSON, Parquet-safe frames.

Every file memviz writes goes to a temporary name in the same folder and is renamed
over the target (``os.replace``), so a killed process never leaves a half-written file
and a reader sees either the old file or the new one. An output folder of several files
(``memviz audit``, ``memviz report``) is written the same way as a whole (:func:`folder_unit`):
staged beside it, listed with hashes in ``contents.json``, renamed into place, under a lock.

CSV files handed to people (``memviz prune --out``, ``memviz memorize --out``, the
dashboard's downloads) go through :func:`export_csv` / :func:`csv_bytes`, which neutralise
spreadsheet formulas (:func:`neutralise_csv`); memviz's own CSV files (results, selections)
stay as they are, since memviz reads them back.

This module sits at the bottom of the house: it imports nothing from memviz but the
errors, so the schema, the run store, the comparison and the dashboard can all use it.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.errors import MemvizError, RunError

#: the package's version (``memviz.__version__``). A base module holds it so that any layer can record it
#: (a run's manifest, an audit's provenance) without importing the package's face, which imports the audit
VERSION = "0.1.0"

_UMASK = os.umask(0)
os.umask(_UMASK)


# ------------------------------------------------------------------ atomic writes
#: errno values of a full disk (no space, or the user's quota)
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFull(MemvizError):
    """A write ran out of disk space: one line naming the folder (a half-written file is removed)."""


def disk_full(folder: Path | str, what: str = "") -> DiskFull:
    return DiskFull(f"{folder}: no space left on the disk{f' (writing {what})' if what else ''}; free some "
                    "space and try again")


def _atomic(path: Path, write) -> None:
    """Write ``path`` through a hidden temporary file in its folder, then rename it over.

    A target that is a folder is a MemvizError naming it; an OS error renaming names the
    target, never the temporary file; a full disk is :class:`DiskFull` naming the folder.
    The temporary file is removed on every exit path but a kill (``-9``); its name carries
    the writer's pid (``.NAME.<pid>.<random>.tmp``), so :func:`remove_stale_temps` removes
    what a killed writer left.
    """
    path = Path(path)
    if path.is_dir():
        raise MemvizError(f"{path}: is a folder; give a file name")
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent)
        os.close(fd)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600 files; give the usual permissions
        write(tmp)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from None
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise disk_full(path.parent, path.name) from None
        raise


TEMP_SUFFIX = ".tmp"
_TEMP = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")


def remove_stale_temps(folder: Path | str, recursive: bool = True) -> int:
    """Remove the temporary files of :func:`_atomic` under ``folder`` whose writer is gone (a
    writer killed with ``-9``, or a machine that restarted): the pid in the name runs no more,
    or the file is over a day old. Returns how many were removed. Symlinks are not followed."""
    folder = Path(folder)
    n = 0
    if not folder.is_dir():
        return 0
    walk = os.walk(folder, followlinks=False) if recursive else [(str(folder), [], os.listdir(folder))]
    now = time.time()
    for base, _dirs, files in walk:
        for name in files:
            m = _TEMP.match(name)
            if not m:
                continue
            f = Path(base) / name
            try:
                st = f.lstat()
            except OSError:
                continue
            pid = int(m.group(1))
            if _pid_running(pid) and now - st.st_mtime < 86_400:
                continue
            try:
                f.unlink()
                n += 1
            except OSError:
                pass
    return n


def _pid_running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def atomic_write_text(path: Path, text: str) -> None:
    def w(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    _atomic(path, w)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    def w(tmp):
        with open(tmp, "wb") as f:
            f.write(data)
    _atomic(path, w)


def atomic_write_parquet(path: Path, df: pd.DataFrame) -> None:
    _atomic(path, lambda tmp: parquet_safe(df).to_parquet(tmp, index=False))


def atomic_write_csv(path: Path, df: pd.DataFrame) -> None:
    """memviz's own CSV files (read back by memviz): written as they are. Files for people:
    :func:`export_csv`."""
    _atomic(path, lambda tmp: df.to_csv(tmp, index=False))


def atomic_write_json(path: Path, obj, indent: int | None = 1) -> None:
    """``obj`` as strict JSON (NaN and infinities become null), written atomically."""
    atomic_write_text(path, dumps(obj, indent=indent))


def atomic_torch_save(path: Path, obj) -> None:
    import torch
    _atomic(path, lambda tmp: torch.save(obj, tmp))


# --------------------------------------------------------------- CSV for people
#: a cell starting with one of these is a formula to a spreadsheet (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _neutral(v):
    """A text cell starting with a formula character, prefixed with ``'``; a text cell that is
    a plain number (``-5``, ``+1.5e3``) and every other value unchanged."""
    if isinstance(v, str) and v.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(v):
        return "'" + v
    return v


def neutralise_csv(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` safe to open in a spreadsheet: every text cell and header that starts with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (the OWASP rule), so
    that Excel, LibreOffice or Sheets show it as text instead of running it. Numbers stay
    numbers: numeric columns are untouched, and so is text that is a plain number (``-5``).
    Returns ``df`` itself when nothing needs changing."""
    cols = [_neutral(c) for c in df.columns]
    out = df
    if cols != list(df.columns):
        out = df.copy()
        out.columns = cols
    for i in range(df.shape[1]):
        s = df.iloc[:, i]
        if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s) \
                or pd.api.types.is_datetime64_any_dtype(s):
            continue
        s = s.astype(object)
        changed = {v: _neutral(v) for v in pd.unique(s.dropna()) if _neutral(v) is not v}  # per distinct value
        if changed:
            if out is df:
                out = df.copy()  # same headers: they needed no change
            mask = s.isin(list(changed))
            s = s.copy()
            s[mask] = s[mask].map(changed)
            out.isetitem(i, s)
    return out


#: RFC 4180 line ends: with them a cell holding a carriage return is quoted (with ``\n`` alone,
#: pandas leaves it bare, and a spreadsheet starts a new row there: ``x\r=1+1`` would run ``=1+1``)
CSV_LINE_END = "\r\n"


def csv_bytes(df: pd.DataFrame, raw: bool = False) -> bytes:
    """``df`` as UTF-8 CSV bytes (no index, CRLF line ends) for a download, formulas
    neutralised (:func:`neutralise_csv`) unless ``raw``."""
    buf = io.StringIO()
    (df if raw else neutralise_csv(df)).to_csv(buf, index=False, lineterminator=CSV_LINE_END)
    return buf.getvalue().encode("utf-8")


def export_csv(path: Path, df: pd.DataFrame, raw: bool = False) -> None:
    """Write ``df`` as a CSV file for people (no index, CRLF line ends), atomically, formulas
    neutralised (:func:`neutralise_csv`) unless ``raw`` (``--raw-csv``). The temporary files a
    killed writer left in that folder are removed first (:func:`remove_stale_temps`)."""
    data = df if raw else neutralise_csv(df)
    remove_stale_temps(Path(path).parent, recursive=False)  # what a killed export left there
    _atomic(path, lambda tmp: data.to_csv(tmp, index=False, lineterminator=CSV_LINE_END))


# ------------------------------------------------------------------------- JSON
def to_jsonable(obj):
    """Plain JSON values: numpy scalars and arrays unwrapped, non-finite floats as None,
    paths as strings, dict keys as strings."""
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return None if not np.isfinite(obj) else float(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    return obj


def dumps(obj, indent: int | None = None) -> str:
    """Strict JSON text of ``obj`` (see :func:`to_jsonable`)."""
    return json.dumps(to_jsonable(obj), indent=indent, default=str, allow_nan=False)


def settings_key(obj) -> str:
    """12 hex digits of SHA-256 over the sorted JSON of ``obj``: the key under which a finished
    run, cell or floor is found again when its settings are the same."""
    return hashlib.sha256(json.dumps(to_jsonable(obj), sort_keys=True, default=str).encode()).hexdigest()[:12]


#: a schema or metadata file nested deeper than this is refused (a 100,000-level file raised RecursionError)
MAX_JSON_DEPTH = 64


def parse_json(raw: bytes | str, source: str, what: str = "file", max_depth: int = MAX_JSON_DEPTH):
    """The JSON value of ``raw`` (a file's bytes or text), or a DataError in one line naming ``source``: not
    UTF-8, not JSON (with the line), NaN or infinities, nested deeper than ``max_depth`` levels."""
    from memviz.errors import DataError

    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DataError(f"{source}: {what} is not UTF-8 text") from None

    def refuse(const):
        raise ValueError(f"{const} is not a JSON number")

    try:
        value = json.loads(raw, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise DataError(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise DataError(f"{source}: {what} nested too deeply (at most {max_depth} levels)") from None
    except ValueError as exc:
        raise DataError(f"{source}: not valid JSON ({exc})") from None
    if json_depth(value) > max_depth:
        raise DataError(f"{source}: {what} nested too deeply (at most {max_depth} levels)")
    return value


def json_depth(value) -> int:
    """How deeply lists and objects nest in a parsed JSON value (0 for a plain value), without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            deepest = max(deepest, d)
            todo.extend((x, d + 1) for x in v if isinstance(x, (dict, list)))
    return deepest


def read_json(path: Path, what: str = "file") -> dict:
    """A JSON object from ``path``; RunError (one line) when missing, unreadable or not an object."""
    path = Path(path)
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunError(f"{path}: no such {what}") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RunError(f"{path}: unreadable {what} ({type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise RunError(f"{path}: {what} is not a JSON object")
    return obj


# ---------------------------------------------------------------------- Parquet
def parquet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Parquet needs one type per column: object columns mixing types become strings."""
    out = df
    for c in df.columns:
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c].dropna().to_numpy()[:1000]}
            if len(kinds) > 1:
                if out is df:
                    out = df.copy()
                out[c] = df[c].map(lambda v: v if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))
    return out


def read_parquet(path: Path, what: str = "table", columns=None) -> pd.DataFrame:
    """A Parquet file written by memviz; RunError (one line) when missing, truncated or
    lacking one of ``columns``."""
    path = Path(path)
    if not path.is_file():
        raise RunError(f"{path}: no such {what}")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types for a truncated or foreign file
        raise RunError(f"{path}: unreadable {what} ({type(exc).__name__})") from None
    missing = [c for c in (columns or ()) if c not in df.columns]
    if missing:
        raise RunError(f"{path}: {what} lacks column(s) {', '.join(map(str, missing))}")
    return df


# ------------------------------------------------------------ folders written as a unit
#: the file an output folder's writer writes last: every other file of the folder, its size and SHA-256
CONTENTS = "contents.json"
CONTENTS_FORMAT = "memviz.folder/1"
_UNIT_TEMP = re.compile(r"^\.(.+)\.(\d+)\.[0-9a-f]{8}\.(unit|old)$")
_ACTIVE = threading.local()   # the staging folders this thread is filling (a nested unit writes straight into one)


class FolderBusy(MemvizError):
    """Another process is writing the same output folder."""


@contextlib.contextmanager
def folder_unit(out: Path | str, names: tuple[str, ...] = ()):
    """Write the folder ``out`` as a unit: yields an empty staging folder beside it.

    What the block writes there appears at ``out`` all at once when the block ends: a file
    :data:`CONTENTS` naming every file with its size and SHA-256 is written last, then the staging
    folder is renamed into place (over an earlier output folder by an atomic exchange, where the
    file system has one, and the earlier folder removed). A block that fails (a full disk, an
    error) or a process killed with ``-9`` leaves ``out`` as it was: the earlier complete folder,
    or none; never a new file beside an older audit's. A lock (``.NAME.lock`` beside it, an flock,
    removed at the end) is held for the whole block: a second writer of the same folder is
    :class:`FolderBusy`, one line, before it writes anything.

    ``out`` may be absent, an empty folder, or an earlier output folder: one whose files are those
    its :data:`CONTENTS` names, or (written before it had one, or torn) only entries in ``names``.
    A folder holding anything else is refused in one line: its files would be lost.

    Inside the block of another unit (``out`` lies in that unit's staging folder, same thread),
    the block writes straight into ``out``: the outer unit covers it.
    """
    out = Path(out)
    active = getattr(_ACTIVE, "stages", [])
    if any(_inside(out, s) for s in active):
        out.mkdir(parents=True, exist_ok=True)
        yield out
        return
    parent = out.parent if str(out.parent) else Path(".")
    if out.name in ("", ".", "..") or out.resolve() == parent.resolve():
        raise MemvizError(f"{out}: give a folder name for the output (not the current or the parent folder)")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise MemvizError(f"{parent}: is a file, not a folder") from None
    lock = _lock_folder(out, parent)
    stage = None
    try:
        _remove_stale_units(parent, out.name)
        _check_replaceable(out, names)
        stage = parent / f".{out.name}.{os.getpid()}.{os.urandom(4).hex()}.unit"
        try:
            stage.mkdir()
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise disk_full(parent, out.name) from None
            raise
        os.chmod(stage, 0o777 & ~_UMASK)
        _ACTIVE.stages = active + [stage]
        try:
            yield stage
        finally:
            _ACTIVE.stages = active
        atomic_write_json(stage / CONTENTS, {"format": CONTENTS_FORMAT, "version": VERSION,
                                             "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                             "files": _hashes(stage)})
        _check_replaceable(out, names)  # again: nobody else writes it (the lock), but a person may have
        _swap_into_place(stage, out)
        stage = None
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise disk_full(parent, out.name) from None
        raise
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
        _unlock(lock)


def _inside(path: Path, folder: Path) -> bool:
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(folder))
        return True
    except ValueError:
        return False


def _lock_folder(out: Path, parent: Path):
    """The writer's lock of ``out`` (``parent/.NAME.lock``), held; :class:`FolderBusy` when another
    process holds it. Without ``fcntl`` (Windows) there is no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover
        return None
    path = parent / f".{out.name}.lock"
    while True:
        try:
            f = open(path, "a+")
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise disk_full(parent, out.name) from None
            raise
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            pid = f.read().strip()
            f.close()
            raise FolderBusy(f"{out}: another process is writing this folder{f' (pid {pid})' if pid.isdigit() else ''}; "
                             "wait for it to finish, or give another --out") from None
        try:  # the file may have been removed by the writer before us after we opened it: lock the one in place
            same = os.fstat(f.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        f.close()
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    return (f, path)


def _unlock(lock) -> None:
    if lock is None:
        return
    f, path = lock
    try:
        os.unlink(path)    # while still held: a waiting writer then locks a new file (see _lock_folder)
    except OSError:
        pass
    f.close()


def _remove_stale_units(parent: Path, name: str) -> None:
    """The staging and earlier folders a writer of ``parent/name`` killed with -9 left (its pid runs no more)."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for e in entries:
        m = _UNIT_TEMP.match(e)
        if m and m.group(1) == name and not _pid_running(int(m.group(2))):
            shutil.rmtree(parent / e, ignore_errors=True)


def _check_replaceable(out: Path, names) -> None:
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise MemvizError(f"{out}: is a file, not a folder; give a folder for the output")
    entries = {e for e in os.listdir(out) if not _TEMP.match(e)}   # a killed atomic write's temporary file
    ours = set(names) | {CONTENTS}
    try:
        listed = json.loads((out / CONTENTS).read_text(encoding="utf-8")).get("files") or {}
        ours |= {str(k).split("/")[0] for k in listed}
    except (OSError, ValueError, AttributeError):
        pass
    other = sorted(entries - ours)
    if other:
        shown = ", ".join(repr(x) for x in other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise MemvizError(f"{out}: the folder holds files memviz did not write there ({shown}); an output folder "
                          "is replaced whole: give a new or empty folder")


def _hashes(folder: Path) -> dict:
    out = {}
    for base, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            p = Path(base) / name
            rel = p.relative_to(folder).as_posix()
            if rel == CONTENTS:
                continue
            out[rel] = {"bytes": p.stat().st_size, "sha256": _sha256(p)}
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where it is not offered."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd = -100
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap_into_place(stage: Path, out: Path) -> None:
    """``stage`` becomes ``out``; an earlier ``out`` folder is removed. A reader sees the earlier
    folder or the new one (with the exchange) or, for the instant between two renames, none."""
    try:
        os.rename(stage, out)           # out absent, or an empty folder
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise OSError(exc.errno, exc.strerror, str(out)) from None
    old = stage.with_name(stage.name[:-len("unit")] + "old")
    if _exchange(stage, out):
        os.rename(stage, old)
    else:
        os.rename(out, old)
        os.rename(stage, out)
    shutil.rmtree(old, ignore_errors=True)


def check_folder(folder: Path | str, what: str = "output folder") -> dict:
    """The :data:`CONTENTS` of a folder written by :func:`folder_unit` after checking that every file it
    names is there with its size and SHA-256; MemvizError (one line) when one is missing or differs, or
    the folder has no :data:`CONTENTS` (a writer stopped before the end, or memviz before it wrote one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MemvizError(f"{folder}: no such {what}")
    try:
        doc = json.loads((folder / CONTENTS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MemvizError(f"{folder}: incomplete {what} (no {CONTENTS}: its writer stopped before the end, or "
                          "an older memviz wrote it); write it again") from None
    except (OSError, ValueError) as exc:
        raise MemvizError(f"{folder}: unreadable {CONTENTS} ({type(exc).__name__})") from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict) or doc.get("format") != CONTENTS_FORMAT:
        raise MemvizError(f"{folder}: {CONTENTS} is not a memviz folder listing")
    for rel, meta in files.items():
        p = folder / str(rel)
        if ".." in Path(str(rel)).parts or not isinstance(meta, dict):
            raise MemvizError(f"{folder}: {CONTENTS} names {rel!r}, not a file of this folder")
        if not p.is_file():
            raise MemvizError(f"{folder}: incomplete {what}: {rel} is missing")
        if p.stat().st_size != meta.get("bytes") or _sha256(p) != meta.get("sha256"):
            raise MemvizError(f"{folder}: {rel} differs from the one written with this folder (changed or torn)")
    return doc
