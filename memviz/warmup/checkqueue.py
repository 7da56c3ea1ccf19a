"""Checks measured beside training: a queue of model snapshots, handed over in order.

While training runs, one worker thread measures the queued checks, oldest first (the second
core of a CPU); training never waits for a check unless the snapshots queued would exceed
:data:`QUEUE_BYTES` (back-pressure). When training ends, the checks still queued are measured
by up to ``workers`` threads at once, so the backlog a fast trainer leaves behind takes every
core. Whatever order the checks finish in, ``hand_over`` sees them one at a time and in the
order they were submitted, so the run's files are written exactly as a sequential run writes
them; after a check fails (or its hand-over does), no later check is handed over.

With training on one core and checks on the other, a run of R seconds of training and W
seconds of checks (W > R) takes about R + (W - R) / workers instead of W: on full Adult's
default warm-up (25 checks of 32,561 rows, 2 cores) training ends at 153 s, W is 245 s, and the
run takes 207 s, against 288 s when training waited for each check (benchmarks/bench_warmup.py
--full).
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable

#: most bytes of model snapshots queued while training runs (a submit beyond it waits)
QUEUE_BYTES = 1 << 30


class CheckQueue:
    """Measure jobs on worker threads; hand their results over in submission order.

    Parameters
    ----------
    measure : job -> result, run on a worker thread (may take seconds).
    hand_over : result -> None, called in submission order, one at a time.
    budget_bytes : most bytes of queued, not yet started, jobs (:data:`QUEUE_BYTES`).
    name : the worker threads' name prefix.
    """

    def __init__(self, measure: Callable[[Any], Any], hand_over: Callable[[Any], None], *,
                 budget_bytes: int = QUEUE_BYTES, name: str = "memviz-check"):
        self.measure, self.hand_over = measure, hand_over
        self.budget_bytes, self.name = int(budget_bytes), name
        self._cond = threading.Condition()
        self._hand = threading.Lock()          # one hand-over at a time
        self._jobs: deque = deque()            # (seq, job, nbytes): submitted, not started
        self._done: dict = {}                  # seq -> result: measured, not yet handed over
        self._queued_bytes = 0
        self._submitted = self._handed = 0
        self._running, self._slots, self._workers = 0, 1, 0
        self._threads: list[threading.Thread] = []
        self._error: BaseException | None = None
        self._raised = False

    # ------------------------------------------------------------ the trainer's side
    def submit(self, job, nbytes: int = 0) -> None:
        """Queue one job (it runs after every earlier one has started); raises a worker's error."""
        with self._cond:
            self._raise_locked()
            while self._jobs and self._queued_bytes + nbytes > self.budget_bytes and self._error is None:
                self._cond.wait()                       # back-pressure: a worker starts the oldest
            self._raise_locked()
            self._jobs.append((self._submitted, job, int(nbytes)))
            self._submitted += 1
            self._queued_bytes += int(nbytes)
            self._spawn_locked()
            self._cond.notify_all()

    def close(self, *, workers: int = 1, drop: bool = False) -> None:
        """Finish: measure what is queued on up to ``workers`` threads (``drop``: forget the jobs not
        started), wait until every measured job is handed over, end the threads; raise the first
        error of a job or a hand-over (once)."""
        with self._cond:
            if drop:
                self._drop_locked()
            self._slots = max(1, int(workers))
            self._spawn_locked()
            self._cond.notify_all()
            while self._error is None and (self._jobs or self._running or self._handed < self._submitted):
                self._cond.wait()
            self._slots = 0                             # workers leave
            self._cond.notify_all()
            threads, self._threads = self._threads, []
        for t in threads:
            t.join()
        with self._cond:
            self._raise_locked()

    @property
    def pending(self) -> int:
        """Jobs submitted and not yet handed over."""
        with self._cond:
            return self._submitted - self._handed

    # ------------------------------------------------------------ the workers' side
    def _spawn_locked(self) -> None:
        # a worker counts itself out in the same critical section as it decides to leave, so a job
        # queued after that decision always finds a worker
        self._threads = [t for t in self._threads if t.is_alive()]
        while self._workers < min(self._slots, self._running + len(self._jobs)):
            t = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}")
            self._workers += 1
            self._threads.append(t)
            t.start()

    def _work(self) -> None:
        while True:
            with self._cond:
                while self._error is None and self._jobs and self._running >= self._slots:
                    self._cond.wait()
                if self._error is not None or not self._jobs:
                    self._workers -= 1
                    self._cond.notify_all()
                    return
                seq, job, nbytes = self._jobs.popleft()
                self._queued_bytes -= nbytes
                self._running += 1
                self._cond.notify_all()                 # a waiting submit may go on
            try:
                result = self.measure(job)
            except BaseException as exc:                # noqa: BLE001 - raised on the trainer's side
                self._fail(exc, leaving=True)
                return
            finally:
                job = None                              # the snapshot can go
            with self._cond:
                self._done[seq] = result
            self._hand_over_ready()
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def _hand_over_ready(self) -> None:
        with self._hand:
            while True:
                with self._cond:
                    if self._error is not None or self._handed not in self._done:
                        return
                    result = self._done.pop(self._handed)
                try:
                    self.hand_over(result)
                except BaseException as exc:            # noqa: BLE001
                    self._fail(exc)
                    return
                with self._cond:
                    self._handed += 1
                    self._cond.notify_all()

    def _fail(self, exc: BaseException, leaving: bool = False) -> None:
        with self._cond:
            if self._error is None:
                self._error = exc
            self._drop_locked()
            self._done.clear()
            if leaving:                                 # the worker whose job failed ends
                self._running -= 1
                self._workers -= 1
            self._cond.notify_all()

    def _drop_locked(self) -> None:
        self._submitted -= len(self._jobs)              # never to be handed over
        self._jobs.clear()
        self._queued_bytes = 0

    def _raise_locked(self) -> None:
        if self._error is not None and not self._raised:
            self._raised = True
            raise self._error
