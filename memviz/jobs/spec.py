"""The job contract: a JSON spec in, JSON-lines events out.

A **job** is a warm-up, a comparison or a comparison's details. Whoever starts one — the
dashboard (:mod:`memviz.jobs.control`, through the background worker ``python -m
memviz.jobs.worker SPEC``) or the CLI (in its own process) — describes it with a
:class:`JobSpec` and runs it with :func:`run_spec`: one code path for both.

Spec (``spec.json`` in the job's folder)::

    {"format": "memviz.job/1", "kind": "warmup" | "compare" | "details",
     "config": {...},             # WarmupConfig / CompareConfig fields, or {"device": ...}
     "paths": {"train": ..., "schema": ..., "test": ..., "holdout": ..., "out": ...,
               "row_id": "row_id",   # the id column of the train/test files, if any
               "target": ...,        # the label column (of an inferred schema, or replacing the file's)
               "overrides": {...}},  # {column: kind} on top of the schema (the CLI's --numerical, --key, ...)
     "resume": false, "label": "..."}

Events (``events.jsonl``, one JSON object per line, appended as they happen; each has
``"event"`` and ``"t"``, the Unix time)::

    queued    {"slots"}                         waiting for a free job slot
    floor     {"floor", "n_holdout", ...}       a warm-up's floor, measured before training
    started   {"pid", "kind"}                   the work begins
    epoch     {"epoch", "epochs", "loss", "phase"?}   after a training epoch (throttled)
    check     {"check", "epoch", "mem_ratio", "mem_auc", "checks", ...}   after a warm-up check
    cells     {"done", "total"}                 a comparison's grid, before its first cell
    cell_phase {"method", "model", "seed", "phase", "epochs"}   a cell enters mitigate, fit, sample, evaluate
    cell_epoch {"method", "model", "seed", "epoch", "epochs"}   during a cell's fit (at most 1 a second)
    cell      {"done", "total", "method", "model", "seed", "status", "mem_ratio", "seconds"}
    auditing  {}                                a stopped warm-up's last check is audited and kept
                                                (:func:`keep_audit`), before ``finished``
    finished  {...the result}                   the job's result (:func:`run_spec`'s dict)
    cancelled {"message"}                       stopped by the user (finished checks are kept)
    failed    {"error"}                         one line: a user mistake or the exception

``phase`` is ``"warmup"`` for the epochs and checks of a comparison's own warm-up.
"""
from __future__ import annotations

import json
import os
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from memviz.auditing.result import Audit
from memviz.auditing.stored import RUN_FOLDER, save_audit, save_table
from memviz.compare import (
    CompareConfig,
    format_summary,
    read_experiment,
    run_grid,
    summary_table,
)
from memviz.compare.details import compute_details
from memviz.errors import BadOption, BadRunFolder, MemvizError
from memviz.evaluate.quality import CheckQuality
from memviz.io import atomic_write_json, dumps, read_json
from memviz.leaks.rows import closeness_by_row, flagged_closeness
from memviz.tables.data import SchemaWarning, Table, load_companion, load_table
from memviz.tables.describe import schema_block
from memviz.tables.schema import Schema
from memviz.warmup.run import WarmupConfig, load_warmup, run_warmup
from memviz.warmup.store import RunStore, run_token

FORMAT = "memviz.job/1"
SPEC = "spec.json"
EVENTS = "events.jsonl"
KINDS = ("warmup", "compare", "details")
FINAL_EVENTS = ("finished", "cancelled", "failed")
PATH_KEYS = ("train", "schema", "metadata", "test", "holdout", "out", "row_id", "target", "overrides")
Emit = Callable[[dict], None]
#: how a reader of the schema block changes a column (the CLI's options; the dashboard's Data page edits kinds)
OVERRIDE_HINT = "change a column with --numerical, --categorical, --key, --ignore or --target"


@dataclass(frozen=True)
class JobSpec:
    """What to run (see the module docstring)."""

    kind: str
    config: dict = field(default_factory=dict)
    paths: dict = field(default_factory=dict)
    resume: bool = False
    label: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise BadRunFolder(f"job kind {self.kind!r}: unknown (use {', '.join(KINDS)})")
        bad = [k for k in self.paths if k not in PATH_KEYS]
        if bad:
            raise BadRunFolder(f"job paths: unknown key {bad[0]!r} (use {', '.join(PATH_KEYS)})")
        if not self.paths.get("out"):
            raise BadRunFolder("job paths: 'out' is required")

    def to_dict(self) -> dict:
        return {"format": FORMAT, **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict, source: str = "job spec") -> "JobSpec":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise BadRunFolder(f"{source}: not a {FORMAT} spec")
        try:
            return cls(kind=d["kind"], config=dict(d.get("config") or {}), paths=dict(d.get("paths") or {}),
                       resume=bool(d.get("resume", False)), label=str(d.get("label", "")))
        except (KeyError, TypeError, ValueError) as exc:
            raise BadRunFolder(f"{source}: malformed spec ({type(exc).__name__}: {exc})") from None


def write_spec(path: str | Path, spec: JobSpec) -> None:
    atomic_write_json(Path(path), spec.to_dict())


def read_spec(path: str | Path) -> JobSpec:
    return JobSpec.from_dict(read_json(Path(path), "job spec"), str(path))


# ------------------------------------------------------------------------ events
class EventLog:
    """Append events to a JSON-lines file (one ``write`` per line, so readers never see half
    a line from another writer); ``epoch`` events at most every ``min_interval`` seconds."""

    def __init__(self, path: str | Path, min_interval: float = 0.5):
        self.path, self.min_interval = Path(path), min_interval
        self._last_epoch = 0.0
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, event: dict) -> None:
        now = time.time()
        if event.get("event") == "epoch":
            final = event.get("epoch") == event.get("epochs")
            if not final and now - self._last_epoch < self.min_interval:
                return
            self._last_epoch = now
        line = (dumps({**event, "t": now}) + "\n").encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def read_events(path: str | Path, max_bytes: int = 1 << 20) -> list[dict]:
    """The events of a job, oldest first ([] when none); see :func:`read_events_counted`."""
    return read_events_counted(path, max_bytes)[0]


#: the typed fields of each event (any other field is free); "int" is a whole number, "num" any
#: finite-or-not number, "str" text; every field but ``t`` may be null or absent
EVENT_FIELDS = {
    "queued": {"slots": "int"},
    "started": {"pid": "int", "kind": "str"},
    "epoch": {"epoch": "int", "epochs": "int", "loss": "num", "phase": "str"},
    "check": {"check": "int", "epoch": "int", "checks": "int", "mem_ratio": "num", "mem_auc": "num",
              "phase": "str"},
    "cells": {"done": "int", "total": "int"},
    "cell": {"done": "int", "total": "int", "method": "str", "model": "str", "status": "str",
             "mem_ratio": "num", "seconds": "num", "error": "str"},
    "floor": {"floor": "num", "n_holdout": "int"},
    "schema": {"text": "str"},
    "finished": {"status": "str"},
    "cancelled": {"message": "str"},
    "failed": {"error": "str"},
}


def _typed(v, kind: str) -> bool:
    if v is None:
        return True
    if kind == "str":
        return isinstance(v, str)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return kind == "num" or isinstance(v, int) or float(v).is_integer()


def valid_event(ev) -> bool:
    """Is ``ev`` an event the readers can use: a dict with a text ``event``, a numeric ``t``, and
    its kind's fields (:data:`EVENT_FIELDS`) of their types?"""
    if not isinstance(ev, dict) or not isinstance(ev.get("event"), str):
        return False
    t = ev.get("t")
    if isinstance(t, bool) or not isinstance(t, (int, float)):
        return False
    return all(_typed(ev.get(k), kind) for k, kind in EVENT_FIELDS.get(ev["event"], {}).items())


def read_events_counted(path: str | Path, max_bytes: int = 1 << 20) -> tuple[list[dict], int]:
    """(the events of a job, oldest first; how many lines were skipped as malformed).

    Reads at most the last ``max_bytes``; a line cut by that window or still being written is
    skipped silently; a complete line that is not JSON, or not a valid event
    (:func:`valid_event`: e.g. ``{"event": "cell", "done": "x"}``) is skipped and counted, so
    that one bad line never breaks a page that reads the job."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            raw = f.read()
    except OSError:
        return [], 0
    out, skipped = [], 0
    lines = raw.split(b"\n")
    last = lines.pop()  # after the last newline: empty, or a line still being written
    if size > max_bytes and lines:
        lines = lines[1:]  # the first line is probably cut
    for line in lines + ([last] if last.strip().endswith(b"}") else []):
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            skipped += line is not last
            continue
        if valid_event(ev):
            out.append(ev)
        else:
            skipped += 1
    return out, skipped


# ------------------------------------------------------------------- running
def _table(spec: JobSpec, key: str, train: Table | None = None, role: str = "train") -> Table | None:
    path = spec.paths.get(key)
    if not path:
        return None
    row_id = spec.paths.get("row_id")
    if train is None:
        schema = spec.paths.get("schema")
        if not schema and spec.paths.get("metadata"):  # SDV single-table metadata

            schema = Schema.from_sdv(spec.paths["metadata"])
            for note in schema.sdv_notes():   # each said (the CLI prints a SchemaWarning as one line)
                warnings.warn(note, SchemaWarning, stacklevel=2)
        return load_table(path, schema, row_id_column=row_id, target=spec.paths.get("target"),
                          overrides=spec.paths.get("overrides") or None)
    return load_companion(train, path, role=role, row_id_column=row_id)


def keep_audit(run_dir: Path, emit: Emit | None = None, device: str = "auto") -> bool:
    """Audit a stopped warm-up's last check and keep it in ``RUN/audit_cache`` (:mod:`memviz.auditing.stored`),
    so that no page waits for it (12–18 s on an Adult-size run, against 0.03 s to read it back).

    Emits ``auditing`` first. The warm-up is done by then, so nothing here fails it: a run with no finished
    check, an audit that fails on a user's table, a bug (its traceback goes to the job's log), a full disk
    or a cancel while auditing keep nothing, and the pages compute the audit as before (saying what goes
    wrong). Returns whether it was kept.
    """
    token = run_token(run_dir)
    if emit is not None:
        emit({"event": "auditing"})
    try:
        audit = Audit.from_run(run_dir, device=device)
        if run_token(run_dir) != token:   # the run changed while it was audited (resumed elsewhere)
            return False
        save_audit(audit, Path(run_dir) / RUN_FOLDER, token=token)
        _keep_row_closeness(Path(run_dir), token)
    except (MemvizError, KeyboardInterrupt):
        return False
    except Exception:  # noqa: BLE001  (a bug, or the disk: the finished run stays finished)
        traceback.print_exc()
        return False
    return True


#: the kept table of every training row's flagged copies by closeness, over all checks
ROW_CLOSENESS = "row_closeness"


def _keep_row_closeness(run_dir: Path, token: int) -> None:
    """How close each training row's flagged copies of every check are (the leak explorer's columns,
    :func:`memviz.leaks.rows.closeness_by_row`), kept beside the audit: a page would read every check's
    generated rows for it (about 1 s at Adult size). Nothing is kept when the run kept no generated rows."""
    store = RunStore.open(run_dir)
    wr = load_warmup(run_dir)
    try:
        flagged = flagged_closeness(store.train(), wr.checks, store.samples, distance=wr.config.distance)
    except MemvizError:  # no stored generated rows
        return
    save_table(closeness_by_row(flagged), run_dir / RUN_FOLDER, ROW_CLOSENESS, token)


def _say_schema(train: Table, emit: Emit | None) -> None:
    """The schema the training table was read with (:func:`memviz.tables.describe.schema_block`) as a ``schema``
    event, once every table is read and before any work (the CLI prints it on stderr)."""
    if emit is not None and train.why:
        emit({"event": "schema", "text": schema_block(train, overrides_hint=OVERRIDE_HINT)})


def run_spec(spec: JobSpec, emit: Emit | None = None, *, config=None) -> dict:
    """Run a job in this process; returns its result (the ``finished`` event's figures).

    ``emit`` receives the progress events (see the module docstring); the caller (the
    worker, or the CLI's progress bar) adds ``started`` / ``finished`` / ``failed``.
    ``config``: a compare job's :class:`~memviz.compare.config.CheckedCompare`, checked by the caller
    (``memviz compare``'s, whose ``to_dict`` is ``spec.config``): run as given, not read back from the
    spec and checked again. A user mistake raises MemvizError (one line).
    """
    t0 = time.perf_counter()
    out = Path(spec.paths["out"])
    train = _table(spec, "train")
    if train is None:
        raise BadRunFolder(f"{spec.kind}: the job needs a training table (paths.train)")
    if spec.kind == "warmup":
        config = _warmup_config(spec.config)
        holdout = _table(spec, "holdout", train, role="test")
        _say_schema(train, emit)

        res = run_warmup(train, config, out, resume=spec.resume, progress=emit, holdout=holdout, quality=CheckQuality)
        keep_audit(out, emit, device=config.device)
        priv = getattr(res.model, "privacy_", None)   # a private run: its (ε, δ), parts, cover and assumptions
        return {"run_dir": str(out), "status": res.status, "checks": int(res.per_check.shape[0]),
                "final_mem_ratio": res.final_mem_ratio, "epochs": res.config.epochs,
                "seconds": round(time.perf_counter() - t0, 3),
                **({"privacy": {k: priv[k] for k in PRIVACY_KEYS if k in priv}} if priv else {})}
    test = _table(spec, "test", train, role="test")
    _say_schema(train, emit)
    if spec.kind == "details":
        return compute_details(out, train, test, device=str(spec.config.get("device", "auto")))
    config = config if config is not None else CompareConfig.from_dict(spec.config)
    # the cells report their own epochs from the processes that run them: only a file-backed
    # log (picklable, one O_APPEND write per line) can take them there
    res = run_grid(train, test, config, out, progress=emit,
                   cell_progress=emit if isinstance(emit, EventLog) else None)
    failed = res[res["status"] != "ok"]
    if len(res) and len(failed) == len(res):
        raise BadOption(f"every cell failed; first error: {failed['error'].iloc[0]}")
    ok = res[res["status"] == "ok"]
    by_method = ok.groupby("method", sort=False)
    exp = read_experiment(out)
    return {"results_csv": str(out / "results.csv"), "out": str(out), "cells": int(len(res)),
            "ran": exp.get("ran"), "failed": int(len(failed)), "seconds": round(time.perf_counter() - t0, 3),
            "n_removed": (exp.get("selection") or {}).get("n_removed"),
            "run_dir": (exp.get("selection") or {}).get("run_dir"),
            "mem_ratio": {m: float(g["mem_ratio"].mean()) for m, g in by_method},
            "relative_reduction": {m: float(g["relative_reduction"].mean()) for m, g in by_method},
            "floor": float(ok["floor"].mean()) if "floor" in ok and ok["floor"].notna().any() else None,
            "excess": {m: float(g["excess"].mean()) for m, g in by_method} if "excess" in ok else {},
            "failed_cells": [f"{r.method}/{r.model}/seed {r.seed}: {r.error}" for r in failed.itertuples()]}


#: what the CLI's JSON says of a private run (memviz.models.privacy.guarantee)
PRIVACY_KEYS = ("epsilon", "delta", "epsilon_spent", "delta_spent", "epsilon_preprocessing", "delta_preprocessing",
                "epsilon_sgd", "delta_sgd", "composition", "covers", "assumes_public")


def compare_summary_text(out_dir: str | Path) -> str:
    """The fixed-width summary table of a comparison's results (the CLI prints it)."""
    return format_summary(summary_table(pd.read_csv(Path(out_dir) / "results.csv")))


def _warmup_config(d: dict) -> WarmupConfig:
    known = WarmupConfig.__dataclass_fields__
    bad = [k for k in d if k not in known]
    if bad:
        raise BadRunFolder(f"warm-up config: unknown setting {bad[0]!r}")
    return WarmupConfig(**d)
