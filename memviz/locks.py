"""The one file lock of memviz (``filelock``: ``flock`` on POSIX, ``LockFileEx`` on Windows).

A writer's lock (a run, an attack folder, an output folder), a job's slot and the job starter's lock
are each one lock file held for the holder's life: the operating system frees it when the holding
process ends, however it ends. A lock file holds its holder's pid, so a refusal can name it.

* :func:`try_hold`: the lock now, or None when another holder has it (waiting up to ``wait`` seconds).
* :func:`hold`: the lock, waiting as long as it takes.
* :func:`is_held`: whether some holder (this process included) has it now.
* :func:`holder`: `` (pid N)`` from the lock file, for a refusal's line.
* :class:`WriterLock`: a folder's writer's lock as one object holds it (a run, an attack folder): taken,
  let go, and probed for any holder.
"""
from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout


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
