"""CheckQueue: training never waits for a check, and the checks are handed over in order, once."""
import threading
import time

import pytest

import memviz.device as device
from memviz.warmup.checkqueue import CheckQueue
from memviz.warmup.tracking import check_workers

WAIT = 10   # seconds a test waits for something that should happen at once


class Gate:
    """measure(job): blocks job ``j`` until ``open(j)``; records the order jobs start and how many run at once."""

    def __init__(self):
        self.events, self.started = {}, []
        self.running = self.most = 0
        self.lock = threading.Lock()

    def _event(self, j):
        with self.lock:
            return self.events.setdefault(j, threading.Event())

    def open(self, *jobs):
        for j in jobs:
            self._event(j).set()

    def __call__(self, job):
        with self.lock:
            self.started.append(job)
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if not self._event(job).wait(WAIT):
                raise AssertionError(f"job {job} was never released")
            if isinstance(job, str) and job.startswith("fail"):
                raise ValueError(job)
            return job
        finally:
            with self.lock:
                self.running -= 1


def wait_until(cond):
    end = time.monotonic() + WAIT
    while not cond():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def test_submit_does_not_wait_for_the_checks_in_flight():
    gate, handed = Gate(), []
    q = CheckQueue(gate, handed.append)
    for j in range(5):
        q.submit(j)                 # the first is blocked in measure: the rest queue behind it
    assert q.pending == 5 and handed == []
    wait_until(lambda: gate.started == [0])
    assert gate.most == 1           # while training runs, one check at a time (the other core trains)
    gate.open(*range(5))
    q.close()
    assert handed == [0, 1, 2, 3, 4] and q.pending == 0


def test_the_backlog_runs_on_every_worker_and_is_handed_over_in_order():
    gate, handed = Gate(), []
    q = CheckQueue(gate, handed.append)
    for j in range(4):
        q.submit(j)
    closing = threading.Thread(target=q.close, kwargs={"workers": 2})
    closing.start()
    wait_until(lambda: gate.running == 2)       # two checks at once after training
    gate.open(3, 1)                             # 1 finishes before 0: it waits for its turn
    wait_until(lambda: 2 in gate.started)       # 1 was measured: its worker took the next job
    time.sleep(0.05)
    assert handed == []
    gate.open(0, 2)
    closing.join(WAIT)
    assert not closing.is_alive()
    assert handed == [0, 1, 2, 3] and gate.most == 2
    assert not any(t.name.startswith("memviz-check") for t in threading.enumerate())


def test_back_pressure_holds_the_trainer_when_the_queued_snapshots_exceed_the_budget():
    gate, handed = Gate(), []
    q = CheckQueue(gate, handed.append, budget_bytes=10)
    q.submit(0, nbytes=6)
    wait_until(lambda: gate.started == [0])     # started: no longer counted against the budget
    q.submit(1, nbytes=6)                       # queued: 6 of 10 bytes
    third = threading.Thread(target=q.submit, args=(2,), kwargs={"nbytes": 6})
    third.start()
    time.sleep(0.1)
    assert third.is_alive()                     # 12 > 10: waits
    gate.open(0)                                # job 1 starts, its bytes leave the queue
    third.join(WAIT)
    assert not third.is_alive()
    gate.open(1, 2)
    q.close()
    assert handed == [0, 1, 2]


def test_a_single_snapshot_larger_than_the_budget_still_goes_in():
    handed = []
    q = CheckQueue(lambda j: j, handed.append, budget_bytes=1)
    q.submit("big", nbytes=100)
    q.close()
    assert handed == ["big"]


def test_a_failed_check_stops_every_later_hand_over_and_is_raised_once():
    gate, handed = Gate(), []
    q = CheckQueue(gate, handed.append)
    for j in (0, "fail-1", 2, 3):
        q.submit(j)
    gate.open(0, "fail-1", 2, 3)
    wait_until(lambda: handed == [0] and gate.running == 0 and len(gate.started) >= 2)
    with pytest.raises(ValueError, match="fail-1"):
        q.close(workers=2)
    assert handed == [0]
    q.close()                                   # raised once: a second close is quiet
    assert not any(t.name.startswith("memviz-check") for t in threading.enumerate())


def test_the_error_reaches_the_trainer_at_its_next_submit():
    q = CheckQueue(lambda j: (_ for _ in ()).throw(OSError("disk gone")), lambda r: None)
    q.submit(0)
    wait_until(lambda: q._error is not None)
    with pytest.raises(OSError, match="disk gone"):
        q.submit(1)
    q.close()


def test_a_failed_hand_over_stops_the_later_ones():
    handed = []

    def hand_over(r):
        if r == 1:
            raise OSError("manifest unwritable")
        handed.append(r)

    gate = Gate()
    q = CheckQueue(gate, hand_over)
    for j in range(4):                          # held until all are queued: the failure cannot reach a submit
        q.submit(j)
    gate.open(0, 1, 2, 3)
    with pytest.raises(OSError, match="manifest unwritable"):
        q.close(workers=2)
    assert handed == [0]


def test_drop_forgets_the_checks_not_started_and_hands_over_the_one_in_flight():
    gate, handed = Gate(), []
    q = CheckQueue(gate, handed.append)
    for j in range(4):
        q.submit(j)
    wait_until(lambda: gate.started == [0])
    closing = threading.Thread(target=q.close, kwargs={"workers": 2, "drop": True})
    closing.start()
    wait_until(lambda: q.pending == 1)          # 1, 2 and 3 dropped before 0 can end
    gate.open(0, 1, 2, 3)
    closing.join(WAIT)
    assert handed == [0] and gate.started == [0] and q.pending == 0


def test_a_submit_after_the_last_worker_left_finds_a_worker():
    handed = []
    q = CheckQueue(lambda j: j, handed.append)
    for j in range(50):             # each worker may leave between two submits: none is lost
        q.submit(j)
        if j % 7 == 0:
            wait_until(lambda: q.pending == 0)
    q.close()
    assert handed == list(range(50))


def test_the_backlog_takes_the_jobs_share_of_the_cores(monkeypatch):
    class OneThread:
        def cpu_threads(self):
            return 1

    monkeypatch.setattr(device.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(device, "_JOBS_SHARING", lambda: 1)      # alone: every core, one check each
    assert check_workers(OneThread()) == 4
    monkeypatch.setattr(device, "_JOBS_SHARING", lambda: 2)      # two jobs share: half of them
    assert check_workers(OneThread()) == 2
    monkeypatch.setattr(device, "_JOBS_SHARING", lambda: 8)
    assert check_workers(OneThread()) == 1
    monkeypatch.setattr(device, "_JOBS_SHARING", lambda: 1)
    OneThread.cpu_threads = lambda self: 4                         # a check that takes every core itself
    assert check_workers(OneThread()) == 1
