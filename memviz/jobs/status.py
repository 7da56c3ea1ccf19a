"""Reading jobs: where a job lives (:class:`Job`), its state read from disk (:func:`job_status`,
:class:`JobStatus`), the list of jobs under a runs root (:func:`list_jobs`).

Nothing here holds state in memory: a job's state is its events, whether its process lives,
and (warm-ups) its run's manifest. A malformed event line or job record is skipped, never
raised (:func:`memviz.jobs.spec.read_events_counted`); a folder under the root that is a
symlink, or resolves outside the root, is not listed or opened (:func:`memviz.jobs.guard.inside`).
"""
from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from memviz.errors import BadOption, BadRunFolder
from memviz.io import read_json
from memviz.jobs.guard import inside
from memviz.jobs.queue import JOBS, pid_alive
from memviz.jobs.spec import EVENTS, FINAL_EVENTS, KINDS, SPEC, read_events_counted  # noqa: F401  (KINDS re-exported)
from memviz.warmup.store import CANCEL, INTERRUPTED, MANIFEST, RunStore  # noqa: F401  (CANCEL re-exported)

RUNS_ENV = "MEMVIZ_RUNS"

COMPARE = "compare"
DETAILS_SUFFIX = "-details"
#: states a job can be in; the last four are final
STATES = ("queued", "starting", "running", "finished", "cancelled", "failed", "lost")
FINAL = ("finished", "cancelled", "failed", "lost")


def runs_root(root: str | Path | None = None) -> Path:
    """The runs root: ``root`` if given, else ``$MEMVIZ_RUNS``, else ``./runs``."""
    return Path(root if root is not None else os.environ.get(RUNS_ENV) or "runs").expanduser()


def run_dir_named(name: str | None, root: str | Path | None = None) -> Path | None:
    """The run folder ``root/name`` when ``name`` is a plain folder name (what the dashboard
    puts in its ``?run=`` URL) naming a run there; None otherwise, never a path outside the
    runs root (``..``, ``a/b``, an absolute path, a hidden folder such as ``.jobs``)."""
    if not name or not isinstance(name, str) or name.startswith(".") or "/" in name or "\\" in name \
            or name != Path(name).name or "\x00" in name:
        return None
    path = runs_root(root) / name
    if path.is_symlink() or (path / MANIFEST).is_symlink() or not inside(path, runs_root(root)):
        return None  # a link pointing out of the root is not opened
    return path if (path / MANIFEST).is_file() else None


def new_job_id(kind: str) -> str:
    """A unique, sortable id: ``20250101-120000-warmup-a1b2c3``."""
    if kind not in KINDS:
        raise BadOption(f"job kind {kind!r}: unknown (use {', '.join(KINDS)})")
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{kind}-{secrets.token_hex(3)}"


def _whole(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 1e11  # a Unix time


def _text(v) -> bool:
    return isinstance(v, str)


def _any(v) -> bool:
    return True


#: the types of the job record's fields the readers use
_RECORD_TYPES = {"pid": _whole, "start_ticks": _whole, "started": _number, "label": _text, "kind": _text,
                 "job_id": _text, "out": _text, "run_dir": _text, "session": _text}


@dataclass(frozen=True)
class Job:
    """Where a job lives. ``out`` is the run directory (warm-up) or results directory (compare)."""

    job_id: str
    kind: str
    root: Path

    @property
    def job_dir(self) -> Path:
        return self.root / JOBS / self.job_id

    @property
    def out(self) -> Path:
        if self.kind == "warmup":
            return self.root / self.job_id
        return self.root / COMPARE / self.job_id.removesuffix(DETAILS_SUFFIX)

    @property
    def spec_path(self) -> Path:
        return self.job_dir / SPEC

    @property
    def events_path(self) -> Path:
        return self.job_dir / EVENTS

    @property
    def log_path(self) -> Path:
        return self.job_dir / "log.txt"

    def info(self) -> dict:
        """The job.json record ({} when missing or unreadable); a field of the wrong type
        (``"pid": "x"``) is dropped, so that readers never raise on it."""
        try:
            rec = read_json(self.job_dir / "job.json", "job record")
        except BadRunFolder:
            return {}
        return {k: v for k, v in rec.items() if _RECORD_TYPES.get(k, _any)(v)}


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of a job, read from disk.

    Attributes
    ----------
    state : one of :data:`STATES`; ``lost`` = the process died without a final event
        (killed, machine restarted).
    done, total : progress in the unit of ``unit`` (``epoch`` or ``cell``).
    phase : what is running now: ``queue``, ``warm-up``, ``cells`` or ``""``.
    checks : the finished checks' summaries (warm-up: check, epoch, mem_ratio, mem_auc, ...).
    message : the error line for failed jobs, else a short description of the last event.
    result : the ``finished`` event's figures.
    updated : Unix time of the last event (None before any).
    skipped : malformed event lines that were skipped (:func:`memviz.jobs.spec.read_events_counted`).
    checks_total : a warm-up's checks in all (from its check events; 0 before the first). Its
        checks may trail its epochs (they are measured beside training and the last ones after
        it: :mod:`memviz.warmup.checkqueue`), so a warm-up's bar is the smaller of the epochs'
        share and the share up to the next check, and once training is done the readout says
        the checks are being measured.
    """

    job_id: str
    kind: str
    state: str
    done: int = 0
    total: int = 0
    unit: str = "epoch"
    phase: str = ""
    checks: list = field(default_factory=list)
    message: str = ""
    result: dict | None = None
    alive: bool = False
    started: float | None = None
    updated: float | None = None
    skipped: int = 0
    checks_total: int = 0

    @property
    def final(self) -> bool:
        return self.state in FINAL

    @property
    def measuring_checks(self) -> bool:
        """A running warm-up whose training is done and whose last checks are still being measured."""
        return (self.kind == "warmup" and not self.final and self.unit == "epoch" and self.total > 0
                and self.done >= self.total and len(self.checks) < self.checks_total)

    @property
    def fraction(self) -> float:
        """done / total in [0, 1] (0 when unknown; 1 when finished)."""
        if self.state == "finished":
            return 1.0
        share = min(1.0, self.done / self.total) if self.total else 0.0
        if self.kind == "warmup" and self.checks_total:
            share = min(share, (len(self.checks) + 1) / self.checks_total)   # up to the next check
        return share

    @property
    def per_check(self) -> pd.DataFrame:
        """The finished checks' figures (with the floor band's columns when the run has a floor)."""
        cols = ["check", "epoch", "mem_ratio", "mem_auc", "floor", "floor_low", "floor_high", "excess",
                "excess_low", "excess_high"]
        df = pd.DataFrame(self.checks)
        return df[[c for c in cols if c in df.columns]] if len(df) else pd.DataFrame(columns=cols)

    def readout(self) -> str:
        """The one progress line shown wherever this job is shown (sidebar and page alike)."""
        parts = [self.state]
        if self.phase == "audit" and not self.final:
            parts.append("auditing the last check")
        elif self.measuring_checks:
            return f"{self.state} · training done, measuring the checks: {len(self.checks)} of {self.checks_total}"
        elif self.total and not self.final:
            what = "warm-up epoch" if self.phase == "warm-up" and self.kind == "compare" else self.unit
            parts.append(f"{what} {self.done:,}/{self.total:,}")
        if self.kind == "warmup" and (self.checks or self.state in ("running", "finished")):
            n = len(self.checks)
            parts.append(f"{n} check{'s' * (n != 1)}")
        if self.state in ("failed", "lost") and self.message:
            parts.append(self.message)
        return " · ".join(parts)

    def updated_at(self) -> str:
        """The local time of the job's last event (or its start), ``14:03:12``; "–" before any."""
        when = self.updated or self.started
        return time.strftime("%H:%M:%S", time.localtime(when)) if when else "–"

    def banner(self) -> str:
        """The analysis pages' line while a job is not final: what it does now and when it last wrote."""
        what = "Run" if self.kind == "warmup" else "Comparison"
        return (f"{what} in progress ({self.readout()}), updated at {self.updated_at()}. The figures below are "
                "from the checks finished so far; this page refreshes when a new one is in.")


# ------------------------------------------------------------------ reading jobs
def job_for(run_dir: str | Path) -> Job:
    """The job of a warm-up run directory (or of a compare results directory)."""
    run_dir = Path(run_dir)
    if run_dir.parent.name == COMPARE:
        return Job(run_dir.name, "compare", run_dir.parent.parent)
    return Job(run_dir.name, "warmup", run_dir.parent)


def read_log(job: Job, max_bytes: int = 64_000) -> str:
    """The last ``max_bytes`` of the job's process log ('' when none): for debugging only."""
    try:
        with open(job.log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - max_bytes))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def _count(v) -> int:
    """A non-negative count from an event field (0 when missing or malformed)."""
    try:
        return max(0, int(v))
    except (TypeError, ValueError):
        return 0


def _describe(ev: dict) -> str:
    """A short line for the last event."""
    kind = ev.get("event")
    if kind == "queued":
        return f"queued: waiting for a free slot ({ev.get('slots')} job{'s' * (ev.get('slots') != 1)} at a time)"
    if kind == "failed":
        return str(ev.get("error") or "failed")
    if kind == "cancelled":
        return str(ev.get("message") or "cancelled")
    if kind == "cell":
        what = "failed" if ev.get("status") != "ok" else f"mem {ev.get('mem_ratio') or 0:.1%}"
        return f"{ev.get('method')}/{ev.get('model')}/seed {ev.get('seed')}: {what}"
    if kind == "auditing":
        return "auditing the last check"
    if kind == "check":
        return f"check at epoch {ev.get('epoch')}: mem {ev.get('mem_ratio') or 0:.1%}"
    return str(kind)


def job_status(job: Job) -> JobStatus:
    """Read the state of a job from its events, its process and (warm-ups) its run (a few small reads)."""
    info = job.info()
    alive = pid_alive(info.get("pid"), info.get("start_ticks")) if info else False
    events, skipped = read_events_counted(job.events_path)
    resumed = max((i for i, e in enumerate(events) if e["event"] == "resumed"), default=None)
    if resumed is not None:  # a resumed job: its state is read from the new start on
        events = events[resumed + 1:]
    final = next((e for e in reversed(events) if e["event"] in FINAL_EVENTS), None)
    kinds = [e["event"] for e in events]
    checks, done, total, unit, phase = [], 0, 0, "epoch", ""
    manifest, problem, store = None, "", RunStore(job.out)
    if job.kind == "warmup" and (job.out / MANIFEST).exists():
        try:
            manifest = store.manifest()
            checks = list(manifest.get("checks") or [])
            total = int(manifest["config"].get("epochs") or 0)
            done = int((manifest.get("progress") or {}).get("epoch") or 0)
        except (BadRunFolder, TypeError, ValueError, AttributeError, KeyError) as exc:
            manifest, problem = None, str(exc) if isinstance(exc, BadRunFolder) else f"malformed manifest ({exc})"
    checks_total = 0
    for ev in events:  # the latest progress wins
        if ev["event"] == "check":
            checks_total = _count(ev.get("checks"))
        if ev["event"] == "epoch":
            done, total = int(ev.get("epoch") or 0), int(ev.get("epochs") or 0)
            unit, phase = "epoch", "warm-up"
        elif ev["event"] in ("cell", "cells"):
            done, total, unit, phase = int(ev.get("done") or 0), int(ev.get("total") or 0), "cell", "cells"
        elif ev["event"] == "auditing":
            phase = "audit"
    if final is not None:
        state = final["event"]
        if state == "finished" and final.get("status") == "cancelled":
            state = "cancelled"
    elif alive:
        if "started" in kinds:
            state = "running"
        elif kinds and kinds[-1] == "queued":
            state, phase = "queued", "queue"
        else:
            state = "starting"
    elif info:
        state = "cancelled" if (job.job_dir / CANCEL).exists() else "lost"
    elif manifest is not None:  # a run started from the CLI: no job record, its manifest and lock tell
        state = store.status(manifest)
        state = "lost" if state == INTERRUPTED else state
    elif problem:  # a run folder nobody started from here, and unreadable
        state = "failed"
    else:
        raise BadRunFolder(f"{job.job_dir}: no such job")
    if state == "finished":
        done = total = max(total, done, 1)
    message = _describe(events[-1]) if events else ""
    if state == "lost":
        message = "the process stopped without a word (killed, or the machine restarted)"
    elif problem and state == "failed":
        message = problem
    elif state == "failed" and manifest is not None and not message:
        message = str(manifest.get("error") or "")
    return JobStatus(job.job_id, job.kind, state, done, total, unit, phase, checks, message,
                     final if final is not None and final["event"] == "finished" else None, alive,
                     info.get("started"), events[-1]["t"] if events else None, skipped, checks_total)


def wait(job: Job, timeout: float = 600.0, poll: float = 0.5) -> JobStatus:
    """Block until the job reaches a final state (tests, scripts); raises BadRunFolder on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        st = job_status(job)
        if st.final:
            return st
        if time.monotonic() > deadline:
            raise BadRunFolder(f"job {job.job_id}: still {st.state} after {timeout:.0f} s")
        time.sleep(poll)


def list_jobs(root: str | Path | None = None, kind: str | None = None) -> pd.DataFrame:
    """One row per job started from the dashboard under the root, newest first."""
    root = runs_root(root)
    rows = []
    folder = root / JOBS
    if folder.is_dir():
        for d in sorted(folder.iterdir(), reverse=True):
            if not d.is_dir() or d.is_symlink() or d.name == "slots" or d.name == "queue":
                continue
            info = Job(d.name, "warmup", root).info()
            if not info or info.get("kind") not in KINDS or (kind and info.get("kind") != kind):
                continue
            job = Job(d.name, info["kind"], root)
            try:
                st = job_status(job)
            except BadRunFolder:
                continue
            rows.append({"job_id": job.job_id, "kind": job.kind, "state": st.state, "label": info.get("label") or "",
                         "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info.get("started") or 0)),
                         "out": str(job.out), "run_dir": info.get("run_dir")})
    return pd.DataFrame(rows, columns=["job_id", "kind", "state", "label", "started", "out", "run_dir"])

