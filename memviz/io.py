"""File I/O every floor shares: atomic writes, strict JSON, Parquet-safe frames.

Every file memviz writes goes to a temporary name in the same folder and is renamed
over the target (``os.replace``), so a killed process never leaves a half-written file
and a reader sees either the old file or the new one. An output folder of several files
(``memviz audit``, ``memviz report``) is written the same way as a whole
(:func:`memviz.folders.folder_unit`).

CSV files handed to people (``memviz prune --out``, ``memviz memorize --out``, the
dashboard's downloads) go through :func:`export_csv` / :func:`csv_bytes`, which neutralise
spreadsheet formulas (:func:`neutralise_csv`); memviz's own CSV files (results, selections)
stay as they are, since memviz reads them back.

This module sits at the bottom of the house: it imports nothing from memviz but the
errors, so the schema, the run store, the comparison and the dashboard can all use it.
"""
from __future__ import annotations

import errno
import hashlib
import io
import json
import math
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.errors import BadRunFolder, BadTable, MemvizError

#: the package's version (``memviz.__version__``). A base module holds it so that any layer can record it
#: (a run's manifest, an audit's provenance) without importing the package's face, which imports the audit
VERSION = "0.1.0"

UMASK = os.umask(0)
os.umask(UMASK)


# ------------------------------------------------------------------ atomic writes
#: errno values of a full disk (no space, or the user's quota)
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


class DiskFull(MemvizError):
    """A write ran out of disk space: one line naming the folder (a half-written file is removed)."""


def disk_full(folder: Path | str, what: str = "") -> DiskFull:
    return DiskFull(f"{folder}: no space left on the disk{f' (writing {what})' if what else ''}; free some "
                    "space and try again")


def _atomic(path, write) -> None:
    """Write ``path`` through a hidden temporary file in its folder, then rename it over.

    ``path`` is a :class:`Path` (memviz's own files) or an :class:`OutputFile` (a file the user named:
    written through a symlink to the file it names, refused when it has become one of the command's inputs).
    A target that is a folder, a device, a FIFO or a socket is a MemvizError naming it (renaming over
    ``/dev/null`` replaced the system's /dev/null with a regular file); an OS error names the target, never
    the temporary file; a full disk is :class:`DiskFull` naming the folder. The temporary file is removed on
    every exit path but a kill (``-9``); its name carries the writer's pid (``.NAME.<pid>.<random>.tmp``), so
    :func:`remove_stale_temps` removes what a killed writer left.
    """
    out = path if isinstance(path, OutputFile) else None
    path = out.target if out is not None else Path(path)
    shown = out.path if out is not None else path
    refuse_special(path, shown)
    tmp = None
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise OutputRefused(f"{shown}: a part of its folder is a file, not a folder") from None
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=path.parent)
        except OSError as exc:   # the folder takes no new file (read-only, /proc): name the user's path
            raise OSError(exc.errno, exc.strerror, str(shown)) from None
        os.close(fd)
        os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp makes 0600 files; give the usual permissions
        write(tmp)
        if out is not None:
            out.recheck()             # the target may have become an input (a link moved) while we wrote
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(shown)) from None
    except BaseException as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise disk_full(path.parent, path.name) from None
        raise


# ------------------------------------------------------------- files the user names
class OutputRefused(MemvizError):
    """An output path memviz will not write: one of the command's inputs, a folder, a device, a FIFO or a
    socket. Nothing was written."""


#: what a path is, by its ``stat`` mode (the first test that holds)
_KINDS = ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def path_kind(path, shown=None) -> str | None:
    """What ``path`` is, in words ('a file', 'a folder', 'a device', 'a FIFO (named pipe)', 'a socket'), following
    symlinks; None when nothing is there. A path that cannot be looked at (a symlink loop, no permission) is
    OutputRefused naming ``shown`` (the path the user gave)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputRefused(f"{shown or path}: cannot be written ({exc.strerror})") from None
    return next((what for test, what in _KINDS if test(mode)), "not a file")


def refuse_special(target: Path, shown: Path | str | None = None) -> None:
    """OutputRefused when ``target`` exists and is not a regular file (a folder, a device, a FIFO, a socket):
    renaming a new file over it would replace it. ``shown`` is the path the user gave (a symlink to it)."""
    what = path_kind(target, shown)
    if what in (None, "a file"):
        return
    via = f" (it links to {target})" if shown is not None and Path(shown) != Path(target) else ""
    fix = "give a file name inside it" if what == "a folder" else "give a path for a new or regular file"
    raise OutputRefused(f"{shown or target}: is {what}{via}, not a file memviz can replace; {fix}")


def _identity(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def input_identities(inputs) -> dict[tuple[int, int], str]:
    """``{(device, inode): 'OPTION PATH'}`` of every file a command reads: ``inputs`` maps an option (``--train``,
    ``RUN``) to a path, a list of paths, or None; a folder counts with every file under it (a run folder's
    tables). A path that does not exist is left out (reading it fails with its own message)."""
    ids: dict[tuple[int, int], str] = {}
    for option, value in inputs.items():
        for p in value if isinstance(value, (list, tuple)) else [value]:
            if p is None:
                continue
            p = Path(p)
            key = _identity(p)
            if key is None:
                continue
            ids.setdefault(key, f"{option} {p}")
            if p.is_dir():
                for base, _dirs, files in os.walk(p):
                    for name in files:
                        k = _identity(Path(base) / name)
                        if k is not None:
                            ids.setdefault(k, f"{option} {Path(base) / name}")
    return ids


@dataclass(frozen=True)
class OutputFile:
    """A file the user named for a command's output, checked at the door by :func:`output_file`.

    ``path`` is the path as given (every message names it); ``target`` the regular file the bytes land on
    (through symlinks: a link is written through and stays a link, so ``--out latest.csv`` linked to a dated
    file updates that file); ``option`` the option that named it; ``inputs`` the identities of the files the
    command reads, which the target may never be.
    """
    path: Path
    target: Path
    option: str
    inputs: Mapping[tuple[int, int], str] = field(default_factory=dict, repr=False)

    def recheck(self) -> None:
        """The door's checks again, just before the rename (a link may have moved while the command worked)."""
        refuse_special(self.target, self.path)
        clash = self.inputs.get(_identity(self.target))
        if clash is not None:
            raise OutputRefused(f"{self.path}: is an input of this command ({clash}); writing it would replace it: "
                                f"give {self.option} another path")


def output_file(path, option: str = "--out", inputs=None, taken: Mapping[Path, str] | None = None) -> OutputFile:
    """The one door of every file a command writes for the user (``--out``, ``--rows-out``, ``--removed-out``,
    ``--markdown``): refused in one line naming ``path``, before any work, when it is one of the command's
    ``inputs`` (the same file by identity, not by name: a hard link, ``./x.csv`` or a symlink to it count), a
    folder, a device (``/dev/null``), a FIFO or a socket, or the same file as another output already named
    (``taken``: ``{target: option}``). A symlink is written through (:class:`OutputFile`); a symlink loop or a
    link into a missing folder is refused.

    Parameters
    ----------
    path : str or Path
        The path as the user gave it.
    option : str
        The option that named it, for the message.
    inputs : mapping, optional
        ``{(device, inode): 'OPTION PATH'}`` from :func:`input_identities`.
    taken : mapping, optional
        Targets of the command's other outputs, with their options.
    """
    shown = Path(path)
    if str(path) in ("", "-"):
        raise OutputRefused(f"{option} {str(path)!r}: give a file path (memviz writes no output to stdout here)")
    if os.path.islink(shown):
        try:
            target = Path(os.path.realpath(shown, strict=True))
        except FileNotFoundError:   # a link to a file not there yet: write the file it names
            target = Path(os.path.realpath(shown))
        except OSError as exc:
            raise OutputRefused(f"{shown}: is a link that cannot be followed ({exc.strerror}); give another "
                                f"{option}") from None
    else:
        target = shown
    out = OutputFile(shown, target, option, dict(inputs or {}))
    out.recheck()
    for other, name in (taken or {}).items():
        if os.path.abspath(other) == os.path.abspath(target) or (
                _identity(other) is not None and _identity(other) == _identity(target)):
            raise OutputRefused(f"{shown}: {option} names the same file as {name}; give each output its own path")
    return out


TEMP_SUFFIX = ".tmp"
TEMP = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")


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
            m = TEMP.match(name)
            if not m:
                continue
            f = Path(base) / name
            try:
                st = f.lstat()
            except OSError:
                continue
            pid = int(m.group(1))
            if pid_running(pid) and now - st.st_mtime < 86_400:
                continue
            try:
                f.unlink()
                n += 1
            except OSError:
                pass
    return n


def pid_running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def atomic_write_text(path: Path | OutputFile, text: str) -> None:
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
    import torch  # lazy: torch, an extra (train): memviz.io is loaded by the CPU audit
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


def export_csv(path: Path | OutputFile, df: pd.DataFrame, raw: bool = False) -> None:
    """Write ``df`` as a CSV file for people (no index, CRLF line ends), atomically, formulas
    neutralised (:func:`neutralise_csv`) unless ``raw`` (``--raw-csv``). The temporary files a
    killed writer left in that folder are removed first (:func:`remove_stale_temps`)."""
    data = df if raw else neutralise_csv(df)
    folder = (path.target if isinstance(path, OutputFile) else Path(path)).parent
    remove_stale_temps(folder, recursive=False)  # what a killed export left there
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
    """The JSON value of ``raw`` (a file's bytes or text), or a BadTable in one line naming ``source``: not
    UTF-8, not JSON (with the line), NaN or infinities, nested deeper than ``max_depth`` levels."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BadTable(f"{source}: {what} is not UTF-8 text") from None

    def refuse(const):
        raise ValueError(f"{const} is not a JSON number")

    try:
        value = json.loads(raw, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise BadTable(f"{source}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise BadTable(f"{source}: {what} nested too deeply (at most {max_depth} levels)") from None
    except ValueError as exc:
        raise BadTable(f"{source}: not valid JSON ({exc})") from None
    if json_depth(value) > max_depth:
        raise BadTable(f"{source}: {what} nested too deeply (at most {max_depth} levels)")
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


class NonFinite(json.JSONDecodeError):
    """A memviz file holding a number that is not finite (``NaN``, ``Infinity``, ``1e999``): memviz writes
    strict JSON (:func:`dumps`: null where it has no number), so such a number was put there by hand.
    ``field`` is where (``checks[0].shape``), ``token`` the text read. A JSONDecodeError, so a reader that
    drops an unreadable cache drops it too."""

    def __init__(self, field: str, token: str):
        self.field, self.token = field, token
        super().__init__(f"field {field!r}: {token} is not a finite number", "", 0)

    def sentence(self, path, what: str) -> str:
        """One line naming the file, the field and the problem."""
        return (f"{path}: {what} field {self.field!r} is {self.token}, not a finite number (memviz writes null "
                "where it has none: the file was edited)")


class _Bad:
    """A non-finite number met while parsing, kept where it was met until :func:`strict_loads` names its field."""

    def __init__(self, token: str):
        self.token = token


def _finite_float(text: str):
    v = float(text)
    return v if math.isfinite(v) else _Bad(text)


def _finite_int(text: str):
    v = int(text)
    return v if abs(v) <= MAX_FINITE_INT else _Bad(text if len(text) < 24 else text[:20] + "…")


#: the largest integer a float holds (a larger one becomes infinity when a figure is computed from it)
MAX_FINITE_INT = int(sys.float_info.max)


def strict_loads(text: str):
    """``json.loads`` of a file memviz wrote, refusing a number that is not finite: :class:`NonFinite` naming
    the first such field (``NaN``, ``Infinity``, ``-Infinity``, a float or an integer beyond float64)."""
    value = json.loads(text, parse_constant=_Bad, parse_float=_finite_float, parse_int=_finite_int)
    todo = [(value, "")]
    while todo:
        v, where = todo.pop()
        if isinstance(v, _Bad):
            raise NonFinite(where or "(the value)", v.token)
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in reversed(list(items)):
            if isinstance(x, (dict, list, _Bad)):
                todo.append((x, f"{where}[{k}]" if isinstance(k, int) else (f"{where}.{k}" if where else str(k))))
    return value


def read_json(path: Path, what: str = "file") -> dict:
    """A JSON object from ``path``; BadRunFolder (one line) when missing, unreadable, not an object, or holding a
    number that is not finite (:class:`NonFinite`, naming the field)."""
    path = Path(path)
    try:
        obj = strict_loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadRunFolder(f"{path}: no such {what}") from None
    except NonFinite as exc:
        raise BadRunFolder(exc.sentence(path, what)) from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRunFolder(f"{path}: unreadable {what} ({type(exc).__name__})") from None
    if not isinstance(obj, dict):
        raise BadRunFolder(f"{path}: {what} is not a JSON object")
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
    """A Parquet file written by memviz; BadRunFolder (one line) when missing, truncated or
    lacking one of ``columns``."""
    path = Path(path)
    if not path.is_file():
        raise BadRunFolder(f"{path}: no such {what}")
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types for a truncated or foreign file
        raise BadRunFolder(f"{path}: unreadable {what} ({type(exc).__name__})") from None
    missing = [c for c in (columns or ()) if c not in df.columns]
    if missing:
        raise BadRunFolder(f"{path}: {what} lacks column(s) {', '.join(map(str, missing))}")
    return df
