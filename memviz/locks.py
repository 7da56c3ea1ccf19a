"""The one file lock of memviz (``filelock``: ``flock`` on POSIX, ``LockFileEx`` on Windows).

A writer's lock (a run, an attack folder, an output folder), a job's slot and the job starter's lock
are each one lock file held for the holder's life: the operating system frees it when the holding
process ends, however it ends. A lock file holds its holder's pid, so a refusal can name it.

* :func:`try_hold`: the lock now, or None when another holder has it (waiting up to ``wait`` seconds).
* :func:`hold`: the lock, waiting as long as it takes.
* :func:`is_held`: whether some holder (this process included) has it now.
* :func:`holder`: `` (pid N)`` from the lock file, for a refusal's line.
"""
from __future__ import annotations

import os
from pathlib import Path


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
    from filelock import FileLock

    # the lock file stays on release on every system (a run's or a slot's lock file is part of its folder)
    return FileLock(str(path), thread_local=False, preserve_lock_file=True)


def try_hold(path: Path | str, wait: float = 0.0) -> Held | None:
    """The lock of ``path`` (created if missing), or None when another holder keeps it ``wait`` seconds."""
    from filelock import Timeout

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
