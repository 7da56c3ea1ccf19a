"""Processes and the job queue: who is alive, and at most N jobs at once, first in first out.

At most ``$MEMVIZ_MAX_JOBS`` warm-ups and comparisons run at once under one runs root
(default: half the CPU cores, at least 1). A job beyond that waits for a slot: a lock file
under ``<root>/.jobs/slots/`` held by the running process (flock locks belong to the open
file, so the kernel frees a slot when its process ends, however it ends). Waiting jobs hold
tickets under ``<root>/.jobs/queue/`` and take slots in the order they asked. At most
``$MEMVIZ_MAX_QUEUED`` jobs (default 4) may wait under a root, and one dashboard session may
have at most :data:`MAX_SESSION_JOBS` unfinished jobs (:func:`memviz.jobs.control.check_room_for`).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

from memviz.errors import BadOption, BadRunFolder
from memviz.io import atomic_write_json, read_json
from memviz.folders import is_held, try_hold

MAX_JOBS_ENV = "MEMVIZ_MAX_JOBS"
MAX_QUEUED_ENV = "MEMVIZ_MAX_QUEUED"
#: jobs that may wait for a slot under one runs root, unless ``$MEMVIZ_MAX_QUEUED`` says otherwise
DEFAULT_MAX_QUEUED = 4
#: unfinished warm-ups and comparisons one dashboard session may have at once
MAX_SESSION_JOBS = 3
JOBS = ".jobs"


def max_jobs() -> int:
    """Jobs that may run at once under one runs root: ``$MEMVIZ_MAX_JOBS``, else half the cores."""
    raw = os.environ.get(MAX_JOBS_ENV, "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise BadOption(f"${MAX_JOBS_ENV}={raw!r}: expected a whole number of jobs") from None
    return max(1, (os.cpu_count() or 1) // 2)


def max_queued() -> int:
    """Jobs that may wait for a slot under one runs root: ``$MEMVIZ_MAX_QUEUED``, else
    :data:`DEFAULT_MAX_QUEUED` (a waiting worker is a process of about 300 MB)."""
    raw = os.environ.get(MAX_QUEUED_ENV, "").strip()
    if raw:
        try:
            return max(0, int(raw))
        except ValueError:
            raise BadOption(f"${MAX_QUEUED_ENV}={raw!r}: expected a whole number of jobs") from None
    return DEFAULT_MAX_QUEUED


def proc_start_ticks(pid: int) -> int | None:
    """Start time of a process in clock ticks since boot (Linux), None elsewhere or if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields_ = stat[stat.rindex(")") + 2:].split()
    if fields_[0] == "Z":  # a zombie has finished
        return None
    return int(fields_[19])


def pid_alive(pid: int | None, start_ticks: int | None = None) -> bool:
    """True when ``pid`` runs and (on Linux) is the same process that was started."""
    if not pid:
        return False
    if Path("/proc").is_dir():
        ticks = proc_start_ticks(int(pid))
        return ticks is not None and (start_ticks is None or ticks == start_ticks)
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_SLOT = None  # this process' slot (a held memviz.folders lock), held until it exits


def take_slot(root: Path, slots: int, job_id: str, on_queued=None, poll: float = 0.5) -> None:
    """Block until one of ``slots`` lock files under ``root/.jobs/slots`` is ours, first in first out.

    Each waiting job holds a ticket ``root/.jobs/queue/<time>-<job_id>`` (with its pid); it
    tries the slots only when no older ticket of a living process waits. A slot is a
    :mod:`memviz.folders` lock: the system frees it when its process ends, however it ends
    (on Windows too). ``on_queued()`` is called once if the job has to wait.
    """
    global _SLOT

    folder, queue = root / JOBS / "slots", root / JOBS / "queue"
    folder.mkdir(parents=True, exist_ok=True)
    queue.mkdir(parents=True, exist_ok=True)
    pid = os.getpid()
    ticket = queue / f"{time.time_ns():020d}-{job_id}"
    atomic_write_json(ticket, {"pid": pid, "start_ticks": proc_start_ticks(pid)})
    announced = False
    try:
        while True:
            if not _older_waiters(queue, ticket):
                for i in range(slots):
                    held = try_hold(folder / f"{i}.lock")
                    if held is not None:
                        _SLOT = held
                        return
            if not announced and on_queued is not None:
                on_queued()
                announced = True
            time.sleep(poll)
    finally:
        ticket.unlink(missing_ok=True)


def running_jobs(root: Path) -> int:
    """How many slots under ``root/.jobs/slots`` are held now (jobs running, the caller's
    own included): a slot whose lock cannot be taken now is held (:func:`memviz.folders.is_held`)."""
    return sum(is_held(path) for path in sorted((root / JOBS / "slots").glob("*.lock")))


def _older_waiters(queue: Path, mine: Path) -> bool:
    """Is a living process's ticket ahead of ``mine``? (Dead processes' tickets are removed.)"""
    for t in sorted(queue.iterdir()):
        if t.name >= mine.name:
            return False
        try:
            rec = read_json(t, "queue ticket")
        except BadRunFolder:
            continue
        if pid_alive(rec.get("pid"), rec.get("start_ticks")):
            return True
        t.unlink(missing_ok=True)
    return False
