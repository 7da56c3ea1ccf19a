"""The warm-up's callbacks: a training loop reports epochs, these sample, measure, cancel, report.

Check ``c`` samples with seed ``seed * 1_000_003 + c`` (:func:`check_seed`) from a generator
separate from training's, so a resumed run reproduces an uninterrupted one exactly. The long
table of a check (:func:`long_table`) has one row per generated row: ``check, epoch,
synthetic_id, nn1 (row_id), nn2, d1, d2, ratio, memorized``.
"""
from __future__ import annotations

import copy
import os
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from memviz.device import shared_cpu_threads
from memviz.measure import memorization as ratio_test
from memviz.models.callbacks import STOP, Callback
from memviz.tables.data import Table
from memviz.warmup.checkqueue import CheckQueue


@dataclass(frozen=True)
class CheckResult:
    """One check: the long table rows, the generated rows and timings."""

    check: int
    epoch: int
    long: pd.DataFrame
    samples: pd.DataFrame
    mem_ratio: float
    mem_auc: float
    loss: float | None
    sample_seconds: float
    memorize_seconds: float
    quality: dict = field(default_factory=dict)   # shape, trend, quality_rows, quality_seconds (or empty)
    state: dict | None = None    # the model's state at the check when it was measured beside training

    def summary(self) -> dict:
        return {"check": self.check, "epoch": self.epoch, "mem_ratio": self.mem_ratio, "mem_auc": self.mem_auc,
                "loss": self.loss, "sample_seconds": self.sample_seconds,
                "memorize_seconds": self.memorize_seconds, **self.quality}


def long_table(check: int, epoch: int, res) -> pd.DataFrame:
    """The long-table rows of one check from a :class:`MemorizationResult`."""
    m = len(res.ratio)
    return pd.DataFrame({
        "check": np.full(m, check, dtype=np.int64), "epoch": np.full(m, epoch, dtype=np.int64),
        "synthetic_id": np.arange(m, dtype=np.int64), "nn1": res.nn1.astype(np.int64),
        "nn2": res.nn2.astype(np.int64), "d1": res.d1, "d2": res.d2, "ratio": res.ratio,
        "memorized": res.memorized.astype(bool)})


def check_seed(seed: int, check: int) -> int:
    return int(seed) * 1_000_003 + int(check)


class MemorizationTracker(Callback):
    """Samples and measures memorization at the given epochs; hands each check to ``on_check``.

    ``quality``: called with the check's generated rows, returns its Shape and Trend
    (:class:`memviz.evaluate.quality.CheckQuality`); None: not measured.

    ``overlap``: a check is sampled and measured on a second thread, from a copy of the model's
    state at its epoch, while training goes on (:class:`memviz.warmup.checkqueue.CheckQueue`:
    training does not wait for the checks; ``on_check`` runs on a check thread, in check order,
    with :attr:`CheckResult.state` set). When training ends, the checks still queued are measured
    on every core the job has (:func:`check_workers`) and :meth:`on_fit_end` waits for the last;
    when it was stopped (``stopping()`` true: the cancel button), the checks not yet started are
    dropped, and a resume redoes them from the last checkpoint written. The generated rows are
    the same either way: check c samples with its own seed from the same weights. On a CPU with
    two cores it puts the second core to work without intra-op threads (which lose far more than
    they gain beside a busy core: :class:`memviz.models.tabddpm.TabDDPM`).
    """

    def __init__(self, train: Table, check_epochs, n_samples: int, seed: int, engine,
                 on_check: Callable[[CheckResult], None], first_check: int = 0, quality=None,
                 overlap: bool = False):
        self.train, self.engine, self.on_check = train, engine, on_check
        self.check_epochs = list(check_epochs)
        self.index = {e: i for i, e in enumerate(self.check_epochs)}
        self.n_samples, self.seed = n_samples, seed
        self.first_check = first_check
        self.quality = quality
        self.overlap = bool(overlap)
        self.stopping: Callable[[], bool] | None = None
        self._queue = None

    def on_epoch_end(self, model, epoch, logs):
        c = self.index.get(epoch)
        if c is None or c < self.first_check:
            return None
        if not self.overlap:
            self.on_check(self._check(model, c, epoch, logs.get("loss"), None))
            return None

        state = copy.deepcopy(model.state_dict())            # the optimizer's tensors are live
        frozen = type(model).from_state_dict(state, device=str(model.device_))
        if self._queue is None:
            self._queue = CheckQueue(lambda job: self._check(*job), self.on_check)
        self._queue.submit((frozen, c, epoch, logs.get("loss"), state), nbytes=2 * _tensor_bytes(state))
        return None

    def _check(self, model, c: int, epoch: int, loss, state) -> CheckResult:
        t0 = time.perf_counter()
        samples = model.sample(self.n_samples, seed=check_seed(self.seed, c))
        t1 = time.perf_counter()
        res = ratio_test.memorization(self.train, samples, engine=self.engine)  # read from its module at each call
        t2 = time.perf_counter()
        scores = dict(self.quality(samples)) if self.quality is not None else {}
        samples = samples.reset_index(drop=True)
        samples.insert(0, "synthetic_id", np.arange(len(samples), dtype=np.int64))
        return CheckResult(c, epoch, long_table(c, epoch, res), samples, res.mem_ratio, res.mem_auc,
                           loss, t1 - t0, t2 - t1, scores, state)

    def close(self, model=None, drop: bool = False) -> None:
        """Measure and hand over the checks still queued (``drop``: only those already started) on
        :func:`check_workers` threads, then end the check threads; a check's error is raised here."""
        queue, self._queue = self._queue, None
        if queue is not None:
            queue.close(workers=check_workers(model) if model is not None and not drop else 1, drop=drop)

    def on_fit_end(self, model) -> None:
        self.close(model, drop=bool(self.stopping is not None and self.stopping()))


def _tensor_bytes(obj) -> int:
    """Bytes of the tensors in a (nested) state dict."""
    import torch  # lazy: torch, an extra (train)

    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_tensor_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_tensor_bytes(v) for v in obj)
    return 0


def check_workers(model) -> int:
    """Checks measured at once after training: the cores this job may use (the job queue's share,
    :func:`memviz.device.shared_cpu_threads`, else every core) over the threads one check's
    sampling takes (:meth:`memviz.models.tabddpm.TabDDPM.cpu_threads`); at least 1."""
    cores = shared_cpu_threads() or os.cpu_count() or 1
    per_check = model.cpu_threads() if hasattr(model, "cpu_threads") else None
    return max(1, cores // max(1, per_check or cores))


class StopCallback(Callback):
    """Ends training when ``should_stop()`` says so (the dashboard's cancel button)."""

    def __init__(self, should_stop: Callable[[], bool]):
        self.should_stop = should_stop
        self.stopped = False

    def on_epoch_end(self, model, epoch, logs):
        if self.should_stop():
            self.stopped = True
            return STOP
        return None


class ProgressEvents(Callback):
    """Forwards epoch progress as ``progress({"event": "epoch", "epoch", "epochs", "loss"})``."""

    def __init__(self, progress: Callable[[dict], None], epochs: int):
        self.progress, self.epochs = progress, epochs

    def on_epoch_end(self, model, epoch, logs):
        self.progress({"event": "epoch", "epoch": epoch, "epochs": self.epochs, "loss": logs.get("loss")})
        return None
