"""The background worker: ``python -m memviz.jobs.worker SPEC [--no-queue]``.

Reads a job spec (:class:`memviz.jobs.spec.JobSpec`), waits for a job slot (first in,
first out; see :func:`memviz.jobs.queue.take_slot`), runs it with
:func:`memviz.jobs.spec.run_spec`, and writes every event to ``events.jsonl`` beside the
spec: ``queued``, ``started``, the progress events, then exactly one of ``finished``,
``cancelled`` (SIGINT, or a cancelled warm-up) or ``failed`` (one line). Exit code 0,
130 (cancelled), 2 (a user mistake) or 1 (a bug; its traceback goes to the process log).
"""
from __future__ import annotations

import os
import signal
import sys
import traceback
from pathlib import Path

from memviz.device import set_cpu_sharing
from memviz.errors import MemvizError
from memviz.jobs.queue import JOBS, max_jobs, running_jobs, take_slot
from memviz.jobs.spec import EVENTS, EventLog, read_spec, run_spec


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        print("usage: python -m memviz.jobs.worker SPEC [--no-queue]", file=sys.stderr)
        return 2
    spec_path = Path(argv[0])
    # Cancel is SIGINT; a parent started with `nohup ... &` passes SIGINT on as ignored, and
    # Python then raises no KeyboardInterrupt: take the default handler back
    signal.signal(signal.SIGINT, signal.default_int_handler)
    events = EventLog(spec_path.parent / EVENTS)
    try:
        spec = read_spec(spec_path)
    except MemvizError as exc:
        events({"event": "failed", "error": str(exc)})
        return 2
    try:
        if "--no-queue" not in argv:
            root = spec_path.parent.parent.parent if spec_path.parent.parent.name == JOBS else spec_path.parent
            slots = max_jobs()
            take_slot(root, slots, spec_path.parent.name, on_queued=lambda: events({"event": "queued", "slots": slots}))
            set_cpu_sharing(lambda: running_jobs(root))   # a job alone takes every core; two share
        events({"event": "started", "pid": os.getpid(), "kind": spec.kind})
        result = run_spec(spec, emit=events)
    except KeyboardInterrupt:
        events({"event": "cancelled", "message": "cancelled"})
        return 130
    except MemvizError as exc:
        events({"event": "failed", "error": str(exc)})
        return 2
    except Exception as exc:  # a bug: one line for the user, the traceback for the log
        traceback.print_exc()
        events({"event": "failed", "error": " ".join(f"{type(exc).__name__}: {exc}".split())[:500]})
        return 1
    if result.get("status") == "cancelled":
        events({"event": "cancelled", "message": "cancelled; the finished checks are kept", **result})
        return 130
    events({"event": "finished", **result})
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
