"""Background jobs for the dashboard: start them, queue them, read their state, cancel them.

A job runs in a detached process (``python -m memviz.jobs.worker SPEC``, its own session), so a
page refresh, a closed tab, a second user or a restart of the dashboard neither stops it
nor mixes it with another job. Its folders under the runs root (``$MEMVIZ_RUNS``, default
``./runs``)::

    <root>/<job_id>/                 warm-up: the run directory (memviz.warmup.store.RunStore)
    <root>/compare/<job_id>/         comparison: its results directory
    <root>/.jobs/<job_id>/spec.json  what to run (memviz.jobs.spec.JobSpec)
    <root>/.jobs/<job_id>/events.jsonl   what happened (memviz.jobs.spec: started, check, cell, ...)
    <root>/.jobs/<job_id>/job.json   the process: pid, start time, label
    <root>/.jobs/<job_id>/log.txt    the process' stdout and stderr (for debugging only)
    <root>/.jobs/<job_id>/train.parquet, test.parquet, schema.json   its inputs

The state of a job is read, never held in memory: its events, whether its process lives,
and (warm-ups) the run's manifest. At most ``$MEMVIZ_MAX_JOBS`` warm-ups and comparisons
run at once under a runs root (default: half the CPU cores, at least 1): a job beyond that
waits, in state ``queued``, first in first out, for a slot (a lock file under
``<root>/.jobs/slots/`` held by the running process, so a crashed job frees its slot; see
:mod:`memviz.jobs.queue`).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from memviz.compare import CompareConfig
from memviz.compare.config import CheckedCompare
from memviz.errors import BadOption, MemvizError, TooLarge
from memviz.io import (
    DISK_FULL,
    DiskFull,
    atomic_write_json,
    atomic_write_parquet,
    atomic_write_text,
    disk_full,
    read_json,
)
from memviz.jobs.queue import (  # noqa: F401 (re-exported)
    JOBS,
    MAX_JOBS_ENV,
    MAX_QUEUED_ENV,
    MAX_SESSION_JOBS,
    max_jobs,
    max_queued,
    pid_alive,
    proc_start_ticks,
    take_slot,
)
from memviz.jobs.spec import (  # noqa: F401 (EventLog re-exported)
    EVENTS,
    FINAL_EVENTS,
    SPEC,
    EventLog,
    JobSpec,
    read_events,
    read_events_counted,
    read_spec,
    write_spec,
)
from memviz.jobs.status import (  # noqa: F401 (re-exported: the reading half)
    CANCEL,
    COMPARE,
    DETAILS_SUFFIX,
    FINAL,
    KINDS,
    RUNS_ENV,
    STATES,
    Job,
    JobStatus,
    job_for,
    job_status,
    list_jobs,
    new_job_id,
    read_log,
    run_dir_named,
    runs_root,
    wait,
)
from memviz.folders import hold
from memviz.tables.data import ROW_ID, Table
from memviz.warmup.run import WarmupConfig
from memviz.warmup.store import MANIFEST, RunStore


def _spawn(job: Job, spec: JobSpec, queued: bool = True, session: str = "") -> Job:
    """Write the spec and start ``python -m memviz.jobs.worker SPEC`` detached, logging to the job's log."""
    write_spec(job.spec_path, spec)
    cmd = [sys.executable, "-m", "memviz.jobs.worker", str(job.spec_path)]
    if not queued:
        cmd.append("--no-queue")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # the package must be importable from the child whatever the dashboard's cwd
    pkg_parent = str(Path(__file__).resolve().parent.parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (pkg_parent, env.get("PYTHONPATH", "")) if p)
    with open(job.log_path, "ab") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True, close_fds=True)

    def reap():  # no zombie while the dashboard lives; record the exit code
        rc = proc.wait()
        try:
            atomic_write_text(job.job_dir / "exit_code", str(rc))
        except (OSError, MemvizError):  # a full disk, or a job folder removed after a failed start
            pass

    reaper = threading.Thread(target=reap, name=f"memviz-reap-{job.job_id}", daemon=True)
    reaper.start()
    try:
        atomic_write_json(job.job_dir / "job.json", {
            "job_id": job.job_id, "kind": job.kind, "pid": proc.pid, "start_ticks": proc_start_ticks(proc.pid),
            "started": time.time(), "command": cmd, "out": str(job.out), "label": spec.label,
            "run_dir": spec.config.get("run_dir"), "session": session})
    except BaseException:
        try:  # a job nobody can follow: stop it (and its group) now; the reaper collects it
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        reaper.join(timeout=30)  # collected (and done writing) before the caller removes the folder
        raise
    return job


def _write_inputs(job: Job, train: Table, test: Table | None, key: str = "test") -> dict:
    """The job's input files (row_id kept as a column), as the spec's paths; ``test`` is stored
    under ``key`` (``test`` for a comparison, ``holdout`` for a warm-up's floor)."""
    job.job_dir.mkdir(parents=True, exist_ok=False)
    paths = {"train": str(job.job_dir / "train.parquet"), "schema": str(job.job_dir / "schema.json"),
             "out": str(job.out), "row_id": ROW_ID}
    atomic_write_parquet(job.job_dir / "train.parquet", train.to_frame())   # row_id, the user's key, the columns
    if test is not None:
        atomic_write_parquet(job.job_dir / f"{key}.parquet", test.to_frame())
        paths[key] = str(job.job_dir / f"{key}.parquet")
    train.schema.save(job.job_dir / "schema.json")
    return paths


# ---------------------------------------------------------------- starting jobs
@contextmanager
def _starting(job: Job, session: str = "", check_room: bool = True, remove: bool = True):
    """Start ``job`` alone (a lock under ``<root>/.jobs``), within the queue's bounds
    (:func:`check_room_for`); on any failure remove what was made of it unless not ``remove``
    (a full disk is one :class:`~memviz.io.DiskFull` line naming the folder)."""
    folder = job.root / JOBS
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = hold(folder / "start.lock")
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise disk_full(folder) from None
        raise
    try:
        if check_room:
            check_room_for(job.root, session)
        try:
            yield
        except BaseException as exc:
            if remove:
                shutil.rmtree(job.job_dir, ignore_errors=True)
            if isinstance(exc, OSError) and not isinstance(exc, DiskFull) and exc.errno in DISK_FULL:
                raise disk_full(job.job_dir.parent, job.job_id) from None
            raise
    finally:
        lock.release()


@dataclass(frozen=True)
class QueueUse:
    """How much of the queue's bounds is in use (what :func:`check_room_for` refuses on).

    waiting : jobs of the runs root waiting for a slot (queued or starting), of at most ``max_waiting``
        (:func:`max_queued`, ``$MEMVIZ_MAX_QUEUED``).
    session_jobs : unfinished jobs of the asking session (0 without one), of at most ``max_session_jobs``.
    """

    waiting: int
    max_waiting: int
    session_jobs: int = 0
    max_session_jobs: int = MAX_SESSION_JOBS
    session: bool = False

    def refusal(self, root: Path) -> str | None:
        """The one-line reason a new job is refused now, or None when it may start."""
        if self.waiting >= self.max_waiting:
            return (f"{root}: {self.waiting} jobs already wait for a free slot (at most {self.max_waiting} may wait, "
                    f"${MAX_QUEUED_ENV}); cancel one, or start this one when one has finished")
        if self.session and self.session_jobs >= self.max_session_jobs:
            return (f"this session already has {self.session_jobs} unfinished jobs (at most {self.max_session_jobs} "
                    "at a time); wait for one to finish, or cancel one")
        return None

    def caption(self) -> str:
        """The bounds in plain words, for beside a start button (before anything is refused)."""
        text = (f"Queue: {self.waiting} of {self.max_waiting} queue slots used (a job waits in one while others "
                "run)")
        if self.session:
            text += f" · this session: {self.session_jobs} of {self.max_session_jobs} unfinished jobs"
        return text


def queue_use(root: Path, session: str = "") -> QueueUse:
    """Count the jobs :func:`check_room_for` bounds: those waiting for a slot under ``root`` and the
    unfinished ones of ``session`` (living processes only; finished, failed and lost jobs do not count)."""
    waiting = mine = 0
    folder = Path(root) / JOBS
    for d in (folder.iterdir() if folder.is_dir() else ()):
        if not d.is_dir() or d.is_symlink() or d.name.endswith(DETAILS_SUFFIX) or (d / "exit_code").exists():
            continue
        info = Job(d.name, "warmup", Path(root)).info()
        if info.get("kind") not in ("warmup", "compare") or not pid_alive(info.get("pid"), info.get("start_ticks")):
            continue
        st = job_status(Job(d.name, info["kind"], Path(root)))
        if st.final:
            continue
        waiting += st.state in ("queued", "starting")
        mine += bool(session) and info.get("session") == session
    return QueueUse(waiting, max_queued(), mine, session=bool(session))


def check_room_for(root: Path, session: str = "") -> None:
    """MemvizError when a new job would exceed the queue's bounds (:func:`queue_use`): at most
    :func:`max_queued` jobs waiting for a slot under the root (``$MEMVIZ_MAX_QUEUED``), and at most
    :data:`MAX_SESSION_JOBS` unfinished jobs of one dashboard session. Each waiting job is a
    process of about 300 MB: unbounded, a few dozen clicks would fill the machine's memory."""
    why = queue_use(root, session).refusal(root)
    if why:
        raise TooLarge(why)


def start_warmup(train: Table, config: WarmupConfig | None = None, *, holdout: Table | None = None,
                 root: str | Path | None = None, label: str = "", session: str = "", **settings) -> Job:
    """Start a warm-up of ``train`` in the background; its run directory is ``job.out``.

    ``config`` (or its fields as ``settings``) is a :class:`memviz.warmup.run.WarmupConfig`; a bad
    setting raises MemvizError here, before anything starts. ``holdout``: real rows outside
    ``train`` (the test split or the Data page's hold-out) for the floor; None: no floor.
    ``session``: the dashboard session asking (bounded by :func:`check_room_for`). A full disk,
    or a queue at its bound, is one MemvizError line, and leaves no job folder.
    Returns at once; follow the job with :func:`job_status`.
    """
    config = config or WarmupConfig(**settings)
    config.resolved(len(train), train.schema)  # validates
    job = Job(new_job_id("warmup"), "warmup", runs_root(root))
    with _starting(job, session):
        paths = _write_inputs(job, train, holdout, key="holdout")
        return _spawn(job, JobSpec("warmup", config.to_dict(), paths, label=label or train.source), session=session)


def start_compare(train: Table, test: Table, config: CompareConfig | CheckedCompare | None = None, *,
                  root: str | Path | None = None, label: str = "", session: str = "", **settings) -> Job:
    """Start a comparison in the background; its results directory is ``job.out``.

    ``config`` (or its fields as ``settings``) is a :class:`memviz.compare.CompareConfig` (checked here) or a
    :class:`memviz.compare.config.CheckedCompare`;
    ``run_dir`` is the warm-up whose ranking DynamicCut uses (trained on ``train``). A bad
    setting raises MemvizError here, in one line, not in the worker (and so do a full disk and
    a full queue, as in :func:`start_warmup`).
    """
    if not isinstance(config, CheckedCompare):   # the worker reads its spec back and checks it there: a new door
        config = (config or CompareConfig(**settings)).checked()
    job = Job(new_job_id("compare"), "compare", runs_root(root))
    with _starting(job, session):
        paths = _write_inputs(job, train, test)
        job.out.parent.mkdir(parents=True, exist_ok=True)
        return _spawn(job, JobSpec("compare", {k: v for k, v in config.to_dict().items() if k != "scheduler"},
                                   paths, label=label or train.source), session=session)


def resume_compare(job: Job, session: str = "") -> Job:
    """Start a ``lost`` (or cancelled) comparison again in its own folder: the cells it finished
    are reused (as a CLI rerun does), the others run. MemvizError for a job in another state."""
    st = job_status(job)
    if job.kind != "compare" or st.state not in ("lost", "cancelled"):
        raise BadOption(f"job {job.job_id}: only a lost or cancelled comparison can be resumed (it is {st.state})")
    spec = read_spec(job.spec_path)
    with _starting(job, session, remove=False):  # the folder holds the inputs and the finished cells
        for name in (CANCEL, "exit_code"):
            (job.job_dir / name).unlink(missing_ok=True)
        EventLog(job.events_path)({"event": "resumed"})  # the readers start from here
        return _spawn(job, spec, session=session)


def start_details(compare: Job, device: str = "auto") -> Job | None:
    """Compute per-column Shapes and DCR values of a finished comparison in the background.

    At most one such job per comparison: the job folder is created exclusively, so two
    tabs asking at once start one job (the other gets None). The comparison's spec is read
    first: a missing one is a BadRunFolder and leaves nothing behind (a left-over empty folder
    blocked every later try).
    """
    if compare.kind != "compare":
        raise BadOption(f"job {compare.job_id}: details are computed for comparisons only")
    job = details_job(compare)
    src = read_json(compare.spec_path, "job spec").get("paths", {})
    src = src if isinstance(src, dict) else {}
    paths = {k: v for k, v in src.items() if k in ("train", "schema", "test", "row_id")}
    paths["out"] = str(compare.out)
    _remove_abandoned(job)
    try:
        job.job_dir.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        return None
    # short, and asked for by the page showing the results: not queued behind long runs
    try:
        with _starting(job, check_room=False):
            return _spawn(job, JobSpec("details", {"device": device}, paths, label=f"details of {compare.job_id}"),
                          queued=False)
    except BaseException:
        shutil.rmtree(job.job_dir, ignore_errors=True)
        raise


def details_job(compare: Job) -> Job:
    return Job(compare.job_id + DETAILS_SUFFIX, "details", compare.root)


def _remove_abandoned(job: Job, grace: float = 30.0) -> None:
    """Remove a job folder a failed start left without its process record (older than ``grace``
    seconds, so that a start under way in another tab is left alone)."""
    d = job.job_dir
    try:
        if d.is_dir() and not d.is_symlink() and not (d / "job.json").exists() \
                and time.time() - d.stat().st_mtime > grace:
            shutil.rmtree(d, ignore_errors=True)
    except OSError:
        pass


def cancel(job: Job) -> None:
    """Ask a job to stop. A warm-up with a run store stops after the current epoch and keeps its checks."""
    info = job.info()
    atomic_write_text(job.job_dir / CANCEL, time.strftime("%Y-%m-%dT%H:%M:%S"))
    if job.kind == "warmup" and (job.out / MANIFEST).exists():
        RunStore(job.out).request_cancel()
        return
    pid = info.get("pid")
    if pid and pid_alive(pid, info.get("start_ticks")):
        try:
            os.kill(int(pid), signal.SIGINT)  # the worker turns it into a "cancelled" event
        except ProcessLookupError:
            pass
