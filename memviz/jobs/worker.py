"""The background worker: ``python -m memviz.jobs.worker SPEC [--no-queue]``.

Reads a job spec (:class:`memviz.jobs.spec.JobSpec`), checks that every path it names lies
under the runs root (:func:`memviz.jobs.guard.confine`), waits for a job slot (first in,
first out; see :func:`memviz.jobs.queue.take_slot`), runs it with
:func:`memviz.jobs.spec.run_spec`, and writes every event to ``events.jsonl`` beside the
spec: ``queued``, ``started``, the progress events, then exactly one of ``finished``,
``cancelled`` (SIGINT, or a cancelled warm-up) or ``failed`` (one line). Exit code 0,
130 (cancelled), 2 (a user mistake, a full disk) or 1 (a bug; its traceback goes to the
process log).

A full disk: the worker holds a small reserve file (:class:`memviz.jobs.guard.Reserve`) and
frees it, so that the ``failed`` event (naming the folder) and a warm-up's ``failed`` status
are written. A watchdog (:func:`memviz.jobs.guard.start_watchdog`) kills the worker's process
group once the worker has died, so no joblib child computes on for minutes after a ``kill -9``.
SIGTERM ends the worker through Python's exit path, so its temporary files are removed.
"""
from __future__ import annotations

import os
import signal
import sys
import traceback
from pathlib import Path

from memviz.device import set_cpu_sharing
from memviz.errors import MemvizError
from memviz.io import DISK_FULL, DiskFull, disk_full, remove_stale_temps
from memviz.jobs.guard import Reserve, confine, start_watchdog
from memviz.jobs.queue import JOBS, max_jobs, running_jobs, take_slot
from memviz.jobs.spec import EVENTS, EventLog, read_spec, run_spec
from memviz.warmup.store import MANIFEST, RunStore


def _sigterm(signum, frame):
    raise SystemExit(128 + signum)


def spec_root(spec_path: Path) -> Path:
    """The runs root of a spec at ``<root>/.jobs/<job_id>/spec.json`` (else the spec's folder)."""
    return spec_path.parent.parent.parent if spec_path.parent.parent.name == JOBS else spec_path.parent


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        print("usage: python -m memviz.jobs.worker SPEC [--no-queue]", file=sys.stderr)
        return 2
    spec_path = Path(argv[0])
    start_watchdog()  # before any lock is taken: the watchdog must not share the slot's open file
    # Cancel is SIGINT; a parent started with `nohup ... &` passes SIGINT on as ignored, and
    # Python then raises no KeyboardInterrupt: take the default handler back
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _sigterm)
    events = EventLog(spec_path.parent / EVENTS)
    reserve = Reserve(spec_path.parent)
    try:
        return _run(spec_path, argv, events, reserve)
    finally:
        reserve.close()


def _run(spec_path: Path, argv: list, events: EventLog, reserve: Reserve) -> int:
    root = spec_root(spec_path)
    spec = None
    try:
        spec = confine(read_spec(spec_path), root)
        remove_stale_temps(Path(spec.paths["out"]))  # what a killed writer of this run left
        if "--no-queue" not in argv:
            slots = max_jobs()
            take_slot(root, slots, spec_path.parent.name, on_queued=lambda: events({"event": "queued", "slots": slots}))
            set_cpu_sharing(lambda: running_jobs(root))   # a large network takes its share of the cores
        events({"event": "started", "pid": os.getpid(), "kind": spec.kind})
        result = run_spec(spec, emit=events)
    except KeyboardInterrupt:
        events({"event": "cancelled", "message": "cancelled"})
        return 130
    except (DiskFull, OSError) as exc:
        if not isinstance(exc, DiskFull) and exc.errno not in DISK_FULL:
            return _bug(exc, events)
        reserve.free()  # room for the event and the run's status
        error = str(exc) if isinstance(exc, DiskFull) else str(disk_full(Path(exc.filename or root).parent))
        _mark_failed(spec, error)
        events({"event": "failed", "error": error})
        return 2
    except MemvizError as exc:
        events({"event": "failed", "error": str(exc)})
        return 2
    except Exception as exc:  # a bug: one line for the user, the traceback for the log
        return _bug(exc, events)
    if result.get("status") == "cancelled":
        events({"event": "cancelled", "message": "cancelled; the finished checks are kept", **result})
        return 130
    events({"event": "finished", **result})
    return 0


def _bug(exc: BaseException, events: EventLog) -> int:
    traceback.print_exc()
    events({"event": "failed", "error": " ".join(f"{type(exc).__name__}: {exc}".split())[:500]})
    return 1


def _mark_failed(spec, error: str) -> None:
    """A warm-up whose manifest still says ``running`` is marked ``failed`` with ``error`` (its own
    handler could not write it on a full disk)."""
    if spec is None or spec.kind != "warmup":
        return

    store = RunStore(spec.paths["out"])
    try:
        if (store.path / MANIFEST).exists() and store.manifest()["status"] == "running":
            store.update(status="failed", error=error)
    except (MemvizError, OSError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
