"""One progress model for every job the dashboard shows: read from the job's events, drawn the
same way in the sidebar, on the job's page and in Saved runs.

:func:`job_progress` reads a job (:func:`memviz.jobs.control.job_status`, plus the in-cell
events a comparison's cells write: ``cell_phase`` and ``cell_epoch``, see
:mod:`memviz.compare.cell`) into a :class:`Progress`; :meth:`Progress.readout` is the one line
shown everywhere, :meth:`Progress.cell_lines` the running cells of a comparison.

A cell's share of its work (for the bar and the estimate) is read from its phase:
mitigate 0, fit ``FIT_SHARE × epoch / epochs``, sample ``FIT_SHARE``, evaluate
``EVALUATE_AT`` (the study's measurements: fitting is about 83 % of a cell's time, the
evaluation about 11 %; ``benchmarks/bench_compare.py``). The time left is
``mean finished cell seconds × (cells left − their done shares) / cells at once`` once a
cell has finished; before that, the running cells' own pace (elapsed / done share).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from memviz.compare.methods import method_label
from memviz.errors import MemvizError
from memviz.jobs import control as jobs
from memviz.jobs.spec import read_events
from memviz.viz.style import model_label
from memviz.text import count, seconds

FIT_SHARE, EVALUATE_AT = 0.83, 0.89
PHASE_SHARE = {"mitigate": 0.0, "fit": 0.0, "sample": FIT_SHARE, "evaluate": EVALUATE_AT}


@dataclass(frozen=True)
class CellNow:
    """A comparison cell that is running: who, where it is, since when (Unix time)."""

    method: str
    model: str
    seed: int
    phase: str
    epoch: int | None
    epochs: int | None
    since: float
    updated: float

    @property
    def share(self) -> float:
        """Its done share in [0, 1) (see the module docstring)."""
        if self.phase == "fit" and self.epoch and self.epochs:
            return FIT_SHARE * min(1.0, self.epoch / self.epochs)
        return PHASE_SHARE.get(self.phase, 0.0)

    def line(self, now: float | None = None) -> str:
        now = time.time() if now is None else now
        where = (f"fitting, epoch {count(self.epoch)}/{count(self.epochs)}" if self.phase == "fit" and self.epoch
                 and self.epochs else {"mitigate": "preparing its training table", "fit": "fitting",
                                       "sample": "generating rows", "evaluate": "measuring"}.get(self.phase,
                                                                                                self.phase))
        return (f"{method_label(self.method)} × {model_label(self.model)}, seed {self.seed}: {where} "
                f"({seconds(now - self.since)} so far)")


@dataclass(frozen=True)
class Progress:
    """A job's progress as every page shows it (see the module docstring)."""

    status: jobs.JobStatus
    cells: tuple = ()              # CellNow of the running cells (comparisons)
    cell_seconds: tuple = ()       # seconds of the finished cells, in finishing order
    left_seconds: float | None = None
    fraction: float = 0.0
    now: float = field(default_factory=time.time)

    @property
    def final(self) -> bool:
        return self.status.final

    def readout(self) -> str:
        """The one line: the job's own readout, then its running cells and the time left."""
        parts = [self.status.readout()]
        if self.cells and not self.final:
            parts.append(f"{len(self.cells)} cell{'s' * (len(self.cells) != 1)} running")
        if self.left_seconds is not None and not self.final:
            parts.append(f"about {seconds(self.left_seconds)} left")
        return " · ".join(parts)

    def cell_lines(self) -> list[str]:
        """One line per running cell, then the finished cells' timing."""
        out = [c.line(self.now) for c in self.cells]
        if self.cell_seconds:
            mean = sum(self.cell_seconds) / len(self.cell_seconds)
            out.append(f"{len(self.cell_seconds)} cell{'s' * (len(self.cell_seconds) != 1)} finished, "
                       f"{seconds(mean)} each on average")
        return out


def _running_cells(events: list[dict]) -> tuple[list[CellNow], list[float]]:
    """The cells with in-cell events and no ``cell`` event after them; the finished cells' seconds."""
    running: dict = {}
    done: list[float] = []
    for ev in events:
        kind = ev.get("event")
        if kind not in ("cell_phase", "cell_epoch", "cell"):
            continue
        try:
            key = (str(ev.get("method")), str(ev.get("model")), int(ev.get("seed") or 0))
            t = float(ev.get("t") or 0.0)
        except (TypeError, ValueError):
            continue  # a malformed line is skipped, never raised
        if kind == "cell":
            running.pop(key, None)
            try:
                done.append(float(ev["seconds"]))
            except (KeyError, TypeError, ValueError):
                pass
            continue
        old = running.get(key)
        phase = str(ev.get("phase") or "fit") if kind == "cell_phase" else "fit"
        epoch = _int(ev.get("epoch")) if kind == "cell_epoch" else (old.epoch if old and phase == "fit" else None)
        epochs = _int(ev.get("epochs")) or (old.epochs if old else None)
        running[key] = CellNow(*key, phase, epoch, epochs, old.since if old else t, t)
    return list(running.values()), done


def _int(v) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None


def cells_estimate(events: list[dict], finished: int, total: int, now: float
                   ) -> tuple[tuple[CellNow, ...], tuple[float, ...], float | None, float]:
    """(the running cells, the finished cells' seconds, the seconds left or None, the done share) of a comparison
    from its events, ``finished`` of its ``total`` cells done (the module docstring's estimate): the page's bar
    and the CLI's line read the same figures."""
    cells, done = _running_cells(events)
    in_cells = sum(c.share for c in cells)
    fraction = min(1.0, (finished + in_cells) / total) if total else 0.0
    left = None
    if total:
        at_once = max(1, len(cells))
        todo = max(0.0, total - finished - in_cells)
        if done:
            left = sum(done) / len(done) * todo / at_once
        else:
            paces = [(now - c.since) / c.share for c in cells if c.share > 0.05]
            if paces:
                left = sum(paces) / len(paces) * todo / at_once
    return tuple(cells), tuple(done), left, fraction


def job_progress(job: jobs.Job, now: float | None = None) -> Progress:
    """Read a job's progress (a few small reads; MemvizError when there is no such job)."""
    status = jobs.job_status(job)
    now = time.time() if now is None else now
    if job.kind != "compare":
        return Progress(status, fraction=status.fraction, now=now)
    events = read_events(job.events_path)
    if status.final:
        return Progress(status, (), tuple(_running_cells(events)[1]), None, status.fraction, now)
    if status.unit != "cell":        # its own warm-up, before the cells
        cells, done = _running_cells(events)
        return Progress(status, tuple(cells), tuple(done), None, status.fraction, now)
    cells, done, left, fraction = cells_estimate(events, status.done, status.total, now)
    return Progress(status, cells, done, left, fraction, now)


def readout(run_dir: str) -> str:
    """The one progress line of a warm-up run or a comparison folder ("starting" before it is readable)."""
    try:
        return job_progress(jobs.job_for(run_dir)).readout()
    except MemvizError:
        return "starting"
