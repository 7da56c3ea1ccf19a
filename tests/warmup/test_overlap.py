"""Checks beside training (MemorizationTracker's ``overlap``): the same run, written in the same order."""
import threading
import time

import numpy as np
import pandas as pd
import pytest
import torch
from helpers import Crash
from helpers import tiny_warmup as tiny

import memviz.measure.memorization as memorization_module
import memviz.models.tabddpm as tabddpm
from memviz.errors import MemvizError
from memviz.models.callbacks import Callback
from memviz.warmup import run as run_module
from memviz.warmup.run import WarmupConfig, run_warmup
from memviz.warmup.store import RunStore
from memviz.warmup.tracking import MemorizationTracker


@pytest.fixture
def threads_seen(monkeypatch):
    """The names of the threads that measured each check."""
    seen = []
    original = MemorizationTracker._check

    def recorded(self, *args):
        seen.append(threading.current_thread().name)
        return original(self, *args)

    monkeypatch.setattr(MemorizationTracker, "_check", recorded)
    return seen


def overlap(monkeypatch, on: bool):
    monkeypatch.setattr(run_module.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(run_module, "OVERLAP_ROWS", 1 if on else 10 ** 9)


def _tensors_equal(a, b):
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_tensors_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_tensors_equal(x, y) for x, y in zip(a, b))
    return a == b


def test_checks_beside_training_give_the_same_run_and_checkpoint(small_train, sample, tmp_path, monkeypatch,
                                                                  threads_seen):
    holdout = sample[1].subset(sample[1].row_ids[:200])
    overlap(monkeypatch, False)
    seq = run_warmup(small_train, tiny(), tmp_path / "seq", holdout=holdout)
    assert len(threads_seen) == 3 and not any(t.startswith("memviz-check") for t in threads_seen)
    threads_seen.clear()
    overlap(monkeypatch, True)
    both = run_warmup(small_train, tiny(), tmp_path / "both", holdout=holdout)
    assert len(threads_seen) == 3 and all(t.startswith("memviz-check") for t in threads_seen), threads_seen
    pd.testing.assert_frame_equal(both.checks, seq.checks)
    pd.testing.assert_frame_equal(both.per_check, seq.per_check)
    np.testing.assert_array_equal(both.dynamics.counts, seq.dynamics.counts)
    manifest = lambda run: RunStore(tmp_path / run).manifest()["checks"]  # noqa: E731
    plain = lambda checks: [{k: v for k, v in c.items() if "seconds" not in k} for c in checks]  # noqa: E731
    assert plain(manifest("both")) == plain(manifest("seq"))
    # the checkpoint holds the model and optimizer as they were at the check, not as training left them
    a, b = RunStore(tmp_path / "both").load_checkpoint(), RunStore(tmp_path / "seq").load_checkpoint()
    assert a["epoch"] == b["epoch"] == 6
    assert _tensors_equal(a["model"]["model"], b["model"]["model"])
    assert _tensors_equal(a["model"]["optimizer"], b["model"]["optimizer"])



def test_a_run_killed_with_a_check_in_flight_resumes_to_the_uninterrupted_result(small_train, tmp_path,
                                                                                   monkeypatch):
    overlap(monkeypatch, True)
    full = run_warmup(small_train, tiny(), tmp_path / "full")
    original_fit = tabddpm.TabDDPM.fit

    def crashing_fit(self, table, callbacks=(), resume_state=None):
        return original_fit(self, table, list(callbacks) + [Crash(5)], resume_state)

    monkeypatch.setattr(tabddpm.TabDDPM, "fit", crashing_fit)
    with pytest.raises(RuntimeError):
        run_warmup(small_train, tiny(), tmp_path / "part")
    store = RunStore(tmp_path / "part")
    # the check of epoch 4 was in flight beside epoch 5: written (and checkpointed) before the status
    assert store.manifest()["status"] == "failed" and store.finished_checks() == [0, 1]
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", original_fit)
    resumed = run_warmup(small_train, tiny(), tmp_path / "part", resume=True)
    pd.testing.assert_frame_equal(resumed.checks, full.checks)


def test_an_error_in_a_check_beside_training_fails_the_run(small_train, tmp_path, monkeypatch):
    """Check 1 fails once check 0 is stored. It used to fail on the second call of the ratio test, which was
    check 0's own when training ended first and two workers measured checks 0 and 1 at once (check 0 then
    never stored: a failure drops what is not handed over yet), so the test failed now and then."""
    overlap(monkeypatch, True)
    original = MemorizationTracker._check

    def failing(self, model, c, *args):
        if c == 1:
            store, bound = RunStore(tmp_path / "r"), time.monotonic() + 300
            while 0 not in store.finished_checks():       # a state: check 0 handed over and written
                assert time.monotonic() < bound, "check 0 was never stored"
                time.sleep(0.01)
            raise MemvizError("disk gone")
        return original(self, model, c, *args)

    monkeypatch.setattr(MemorizationTracker, "_check", failing)
    with pytest.raises(MemvizError, match="disk gone"):
        run_warmup(small_train, tiny(), tmp_path / "r")
    store = RunStore(tmp_path / "r")
    assert store.manifest()["status"] == "failed" and store.finished_checks() == [0]
    assert not any(t.name.startswith("memviz-check") for t in threading.enumerate())   # the thread ended


def test_overlap_is_chosen_for_a_cpu_with_two_cores_and_large_checks(monkeypatch):
    cpu, cfg = torch.device("cpu"), WarmupConfig(n_samples=run_module.OVERLAP_ROWS)
    monkeypatch.setattr(run_module.os, "cpu_count", lambda: 2)
    assert run_module.overlap_checks(cpu, cfg)
    assert not run_module.overlap_checks(cpu, WarmupConfig(n_samples=run_module.OVERLAP_ROWS - 1))
    assert not run_module.overlap_checks(torch.device("cuda"), cfg)
    monkeypatch.setattr(run_module.os, "cpu_count", lambda: 1)
    assert not run_module.overlap_checks(cpu, cfg)


class _Release(Callback):
    """Sets ``event`` when training finishes epoch ``at``."""

    def __init__(self, at, event):
        self.at, self.event = at, event

    def on_epoch_end(self, model, epoch, logs):
        if epoch == self.at:
            self.event.set()


def _with_callback(monkeypatch, callback):
    original_fit = tabddpm.TabDDPM.fit

    def fit(self, table, callbacks=(), resume_state=None):
        return original_fit(self, table, [callback] + list(callbacks), resume_state)

    monkeypatch.setattr(tabddpm.TabDDPM, "fit", fit)
    return original_fit


def test_training_does_not_wait_for_a_slow_check(small_train, tmp_path, monkeypatch):
    overlap(monkeypatch, True)
    full = run_warmup(small_train, tiny(), tmp_path / "full")
    trained = threading.Event()
    _with_callback(monkeypatch, _Release(6, trained))
    original = memorization_module.memorization

    def slow_first(*args, **kw):     # check 0 (epoch 2) ends only once the last epoch is trained
        if not trained.is_set() and not trained.wait(10):
            raise AssertionError("training waited for the check of epoch 2")
        return original(*args, **kw)

    monkeypatch.setattr(memorization_module, "memorization", slow_first)
    ahead = run_warmup(small_train, tiny(), tmp_path / "ahead")
    pd.testing.assert_frame_equal(ahead.checks, full.checks)
    assert RunStore(tmp_path / "ahead").finished_checks() == [0, 1, 2]


def test_a_cancel_with_checks_queued_drops_them_and_resumes_to_the_uninterrupted_result(small_train, tmp_path,
                                                                                        monkeypatch):
    overlap(monkeypatch, True)
    full = run_warmup(small_train, tiny(), tmp_path / "full")
    stop = threading.Event()
    original_fit = _with_callback(monkeypatch, _Release(5, stop))
    original = memorization_module.memorization

    def slow(*args, **kw):           # no check ends before the cancel: checks 0 and 1 are queued
        stop.wait(10)
        return original(*args, **kw)

    monkeypatch.setattr(memorization_module, "memorization", slow)
    part = run_warmup(small_train, tiny(), tmp_path / "part", should_stop=stop.is_set)
    store = RunStore(tmp_path / "part")
    assert part.status == "cancelled" and store.manifest()["status"] == "cancelled"
    assert store.finished_checks() in ([0], [0, 1])    # the check in flight is kept, the rest may go
    assert not any(t.name.startswith("memviz-check") for t in threading.enumerate())
    monkeypatch.setattr(memorization_module, "memorization", original)
    monkeypatch.setattr(tabddpm.TabDDPM, "fit", original_fit)
    resumed = run_warmup(small_train, tiny(), tmp_path / "part", resume=True)
    pd.testing.assert_frame_equal(resumed.checks, full.checks)
