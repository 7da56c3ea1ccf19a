"""What a background job may touch, and what it leaves behind.

* :func:`confine` — every path of a job spec (and a comparison's ``run_dir``), resolved with its
  symlinks, must lie under the runs root: the worker trusts nothing a spec names (a spec naming
  a system file outside the root is refused before it is read, and no run is written outside).
* :func:`inside` — a folder found under the runs root that is a symlink, or resolves outside the
  root, is not listed or opened.
* :class:`Reserve` — a few hundred KB the worker holds on the runs root's disk and lets go when
  the disk fills, so that its ``failed`` event and the run's ``failed`` status can still be written.
* :func:`start_watchdog` — a tiny forked process that kills the worker's process group when the
  worker dies, however it dies (``kill -9`` included), so that its joblib/loky children (about
  500 MB each) do not compute on for minutes.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

from memviz.errors import BadRunFolder

#: spec paths that are files or folders (``row_id`` is a column name)
FILE_KEYS = ("train", "schema", "test", "holdout", "out")
RESERVE = ".reserve"
RESERVE_BYTES = 512 * 1024


def inside(path: str | Path, root: str | Path) -> bool:
    """Does ``path``, resolved with its symlinks, lie under ``root`` (resolved)?"""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the name
        return False


def confine(spec, root: str | Path):
    """``spec`` (a :class:`memviz.jobs.spec.JobSpec`) with its paths resolved, or a MemvizError
    naming the first path that leaves ``root``."""
    root = Path(root).resolve()
    paths = dict(spec.paths)
    for key in FILE_KEYS:
        p = paths.get(key)
        if not p:
            continue
        if not isinstance(p, str) or "\x00" in p:
            raise BadRunFolder(f"job spec: paths.{key}: not a path")
        if not inside(p, root):
            raise BadRunFolder(f"job spec: paths.{key}: {p!r} lies outside the runs root {root}; refused")
        paths[key] = str(Path(p).resolve())
    config = dict(spec.config)
    run_dir = config.get("run_dir")
    if run_dir is not None:
        if not isinstance(run_dir, str) or not inside(run_dir, root):
            raise BadRunFolder(f"job spec: config.run_dir: {run_dir!r} lies outside the runs root {root}; refused")
        config["run_dir"] = str(Path(run_dir).resolve())
    return replace(spec, paths=paths, config=config)


class Reserve:
    """A file of :data:`RESERVE_BYTES` in ``folder``, freed when the disk fills (:meth:`free`) and
    removed when the job ends (:meth:`close`)."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / RESERVE
        try:
            with open(self.path, "wb") as f:
                f.write(b"\0" * RESERVE_BYTES)
                f.flush()
                os.fsync(f.fileno())
        except OSError:  # a disk already full: nothing held
            self.free()

    def free(self) -> None:
        try:
            self.path.unlink()
        except OSError:
            pass

    close = free


def start_watchdog(poll: float = 0.5) -> int | None:
    """Fork a watchdog that kills this process's group (SIGKILL) once this process has died.

    Only for a process that leads its own process group (the dashboard starts the worker in a
    new session), so that nothing outside the job is touched. Returns the watchdog's pid, or
    None when not a group leader or without ``fork``."""
    if not hasattr(os, "fork") or os.getpgid(0) != os.getpid():
        return None
    parent, group = os.getpid(), os.getpgid(0)
    pid = os.fork()
    if pid:
        return pid
    try:  # the watchdog: no Python cleanup of the parent's state, only a poll
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Cancel is for the worker
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        while os.getppid() == parent:
            time.sleep(poll)
        os.killpg(group, signal.SIGKILL)  # the worker is gone: its children go too (and this one)
    finally:
        os._exit(0)
