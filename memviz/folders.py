"""Output folders written as a unit: staged beside their place, listed with hashes, renamed into place.

``memviz audit`` and ``memviz report`` write several files into one folder (audit.json, report.html,
rows.csv, comparisons/NAME/...). Written one by one, each atomically, a full disk or a kill -9 after
rows.csv left a new rows.csv beside an older audit's audit.json and report.html, and two writers of one
folder mixed their files. :func:`folder_unit` stages the folder beside its place, writes
:data:`CONTENTS` (every file's size and SHA-256) last, and renames the folder into place, under a lock
held from the start; :func:`check_folder` is the reader's side.

It also holds memviz's one file lock (``filelock``: ``flock`` on POSIX, ``LockFileEx`` on Windows), the
lock an output folder's writer holds and a run's, an attack folder's and a job slot's too. Each is one lock
file held for the holder's life: the operating system frees it when the holding process ends, however it
ends. A lock file holds its holder's pid, so a refusal can name it.

* :func:`try_hold`: the lock now, or None when another holder has it (waiting up to ``wait`` seconds).
* :func:`hold`: the lock, waiting as long as it takes.
* :func:`is_held`: whether some holder (this process included) has it now.
* :func:`holder`: `` (pid N)`` from the lock file, for a refusal's line.
* :class:`WriterLock`: a folder's writer's lock as one object holds it (a run, an attack folder): taken,
  let go, and probed for any holder.

A base module: it imports nothing from memviz but the errors and :mod:`memviz.io`.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import threading
import warnings
import time
from pathlib import Path

from filelock import FileLock, Timeout

from memviz.errors import BadRunFolder, Busy
from memviz.io import (
    DISK_FULL,
    TEMP,
    UMASK,
    VERSION,
    OutputRefused,
    atomic_write_json,
    disk_full,
    path_kind,
    pid_running,
)

#: the file an output folder's writer writes last: every other file of the folder, its size and SHA-256
CONTENTS = "contents.json"
CONTENTS_FORMAT = "memviz.folder/1"
_UNIT_TEMP = re.compile(r"^\.(.+)\.(\d+)\.[0-9a-f]{8}\.(unit|old)$")
_ACTIVE = threading.local()   # the staging folders this thread is filling (a nested unit writes straight into one)


class ReplacedFolder(UserWarning):
    """An output folder was written over an earlier one (said, in one line, by the CLI)."""


class FolderBusy(Busy):
    """Another process is writing the same output folder."""


def output_folder(out, option: str = "--out") -> Path:
    """The one door of every folder a command writes for the user (``--out`` of warmup, compare, study, attack,
    audit, report): OutputRefused in one line naming ``out`` when something other than a folder is there (a file,
    a device, a FIFO, a socket), before any work. What a command may do with a folder already there is its own
    rule (:func:`folder_unit` replaces an earlier output folder whole; a run or a comparison continues)."""
    what = path_kind(out)
    if what not in (None, "a folder"):
        raise OutputRefused(f"{out}: is {what}, not a folder; give a folder for {option}")
    return Path(out)


@contextlib.contextmanager
def folder_unit(out: Path | str, names: tuple[str, ...] = (), inputs=None):
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
    A folder holding anything else is refused in one line: its files would be lost; so is one holding a file
    the command reads (``inputs``: :func:`memviz.io.input_identities`), even one memviz wrote there (an earlier
    audit's rows.csv given as --synthetic). Replacing an earlier output folder is said by a :class:`ReplacedFolder` warning (one line from the CLI).

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
        raise OutputRefused(f"{out}: give a folder name for the output (not the current or the parent folder)")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputRefused(f"{parent}: is a file, not a folder") from None
    output_folder(out)
    lock = _lock_folder(out, parent)
    stage = None
    try:
        _remove_stale_units(parent, out.name)
        _check_replaceable(out, names, inputs)
        stage = parent / f".{out.name}.{os.getpid()}.{os.urandom(4).hex()}.unit"
        try:
            stage.mkdir()
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise disk_full(parent, out.name) from None
            raise
        os.chmod(stage, 0o777 & ~UMASK)
        _ACTIVE.stages = active + [stage]
        try:
            yield stage
        finally:
            _ACTIVE.stages = active
        atomic_write_json(stage / CONTENTS, {"format": CONTENTS_FORMAT, "version": VERSION,
                                             "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                             "files": _hashes(stage)})
        replacing = _check_replaceable(out, names, inputs)  # again: nobody else writes it (the lock), but a
        _swap_into_place(stage, out)                         # person may have
        if replacing:
            warnings.warn(f"{out}: replaced the earlier output folder there", ReplacedFolder, stacklevel=3)
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
    """The writer's lock of ``out`` (``parent/.NAME.lock``), held (:func:`try_hold`); :class:`FolderBusy`
    when another process holds it."""
    path = parent / f".{out.name}.lock"
    try:
        held = try_hold(path)
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise disk_full(parent, out.name) from None
        raise
    if held is None:
        raise FolderBusy(f"{out}: another process is writing this folder{holder(path)}; wait for it to finish, or "
                         "give another --out") from None
    return held.write_pid()


def _unlock(lock) -> None:
    if lock is None:
        return
    try:
        os.unlink(lock.path)    # while still held: a waiting writer then locks a new file
    except OSError:
        pass
    lock.release()


def _remove_stale_units(parent: Path, name: str) -> None:
    """The staging and earlier folders a writer of ``parent/name`` killed with -9 left (its pid runs no more)."""
    try:
        entries = os.listdir(parent)
    except OSError:
        return
    for e in entries:
        m = _UNIT_TEMP.match(e)
        if m and m.group(1) == name and not pid_running(int(m.group(2))):
            shutil.rmtree(parent / e, ignore_errors=True)


def _check_replaceable(out: Path, names, inputs=None) -> bool:
    """Whether ``out`` holds an earlier output folder that writing replaces (False: nothing is there); refused in
    one line when what is there would be lost: not a folder, a file memviz did not write, or a file the command
    reads."""
    if not out.exists() and not out.is_symlink():
        return False
    if out.is_symlink() or not out.is_dir():
        what = path_kind(out) or "a broken link"
        raise OutputRefused(f"{out}: is {'a link' if out.is_symlink() else what}, not a folder; give a folder for "
                            "the output")
    entries = {e for e in os.listdir(out) if not TEMP.match(e)}   # a killed atomic write's temporary file
    ours = set(names) | {CONTENTS}
    try:
        listed = json.loads((out / CONTENTS).read_text(encoding="utf-8")).get("files") or {}
        ours |= {str(k).split("/")[0] for k in listed}
    except (OSError, ValueError, AttributeError):
        pass
    other = sorted(entries - ours)
    if other:
        shown = ", ".join(repr(x) for x in other[:3]) + (f" and {len(other) - 3} more" if len(other) > 3 else "")
        raise OutputRefused(f"{out}: the folder holds files memviz did not write there ({shown}); an output folder "
                            "is replaced whole: give a new or empty folder")
    if inputs:
        for base, _dirs, files in os.walk(out):
            for name in files:
                st = os.stat(Path(base) / name)
                clash = inputs.get((st.st_dev, st.st_ino))
                if clash is not None:
                    raise OutputRefused(f"{out}: holds an input of this command ({clash}); an output folder is "
                                        "replaced whole: give another folder")
    return bool(entries)


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
        raise BadRunFolder(f"{folder}: no such {what}")
    try:
        doc = json.loads((folder / CONTENTS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadRunFolder(f"{folder}: incomplete {what} (no {CONTENTS}: its writer stopped before the end, or "
                           "an older memviz wrote it); write it again") from None
    except (OSError, ValueError) as exc:
        raise BadRunFolder(f"{folder}: unreadable {CONTENTS} ({type(exc).__name__})") from None
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict) or doc.get("format") != CONTENTS_FORMAT:
        raise BadRunFolder(f"{folder}: {CONTENTS} is not a memviz folder listing")
    for rel, meta in files.items():
        p = folder / str(rel)
        if ".." in Path(str(rel)).parts or not isinstance(meta, dict):
            raise BadRunFolder(f"{folder}: {CONTENTS} names {rel!r}, not a file of this folder")
        if not p.is_file():
            raise BadRunFolder(f"{folder}: incomplete {what}: {rel} is missing")
        if p.stat().st_size != meta.get("bytes") or _sha256(p) != meta.get("sha256"):
            raise BadRunFolder(f"{folder}: {rel} differs from the one written with this folder (changed or torn)")
    return doc


# ------------------------------------------------------------------ the one file lock
class Held:
    """A held lock: :meth:`release` lets go (the end of the process does too)."""

    def __init__(self, lock, path: Path):
        self._lock, self.path = lock, path

    def write_pid(self) -> "Held":
        """The holder's pid into the lock file (its whole content), for :func:`holder`."""
        with open(self.path, "r+") as f:
            f.truncate()
            f.write(f"{os.getpid()}\n")
        return self

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release(force=True)
            self._lock = None


def _lock(path: Path):
    # the lock file stays on release on every system (a run's or a slot's lock file is part of its folder)
    return FileLock(str(path), thread_local=False, preserve_lock_file=True)


def try_hold(path: Path | str, wait: float = 0.0) -> Held | None:
    """The lock of ``path`` (created if missing), or None when another holder keeps it ``wait`` seconds."""
    path = Path(path)
    lock = _lock(path)
    try:
        lock.acquire(timeout=wait, poll_interval=0.05)
    except Timeout:
        return None
    return Held(lock, path)


def hold(path: Path | str) -> Held:
    """The lock of ``path`` (created if missing), waiting for any other holder to let go."""
    path = Path(path)
    lock = _lock(path)
    lock.acquire(timeout=-1, poll_interval=0.05)
    return Held(lock, path)


def is_held(path: Path | str) -> bool:
    """Does a holder (this process included) have the lock of ``path`` now? A missing lock file: no."""
    path = Path(path)
    if not path.exists():
        return False
    probe = try_hold(path)
    if probe is None:
        return True
    probe.release()
    return False


def holder(path: Path | str) -> str:
    """`` (pid N)`` when the lock file names its holder, else ""."""
    try:
        pid = Path(path).read_text().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


class WriterLock:
    """A folder's writer's lock (``path``, its lock file) as one object sees it: :meth:`take` holds it with this
    process's pid written in it, :meth:`release` lets go, :meth:`alive` says whether any holder (this object
    included) has it now, :meth:`holder` names the holder for a refusal's line."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._held: Held | None = None

    @property
    def mine(self) -> bool:
        """Does this object hold the lock?"""
        return self._held is not None

    def take(self, wait: float = 0.0) -> bool:
        """Hold the lock (True; at once when this object holds it already), or False when another holder keeps
        it ``wait`` seconds."""
        if self._held is None:
            held = try_hold(self.path, wait=wait)
            if held is None:
                return False
            self._held = held.write_pid()
        return True

    def release(self) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None

    def alive(self) -> bool:
        """Does a holder (this object included) have the lock now?"""
        return self._held is not None or is_held(self.path)

    def holder(self) -> str:
        return holder(self.path)
