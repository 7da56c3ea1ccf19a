"""Memorization on Dask: blocks of query rows mapped to workers, one fitted engine scattered once.

:class:`DaskEngine` wraps a fitted :class:`~memviz.engine.neighbors.NeighborEngine` and
offers what :func:`memviz.measure.memorization.memorization` and
:func:`memviz.measure.floor.holdout_floor` read from an engine (``distance``,
``n_reference_``, ``row_ids_``, ``encoder_``, ``kneighbors``), so both take it in place of
the local engine::

    from memviz.engine.distributed import DaskEngine, connect
    with connect("tcp://scheduler:8786") as client:
        engine = DaskEngine(NeighborEngine().fit(train), client)
        res = memorization(train, synthetic, engine=engine)
        floor = holdout_floor(train, holdout, engine=engine)

The engine is sent to every worker once (``client.scatter(..., broadcast=True)``: 23 MB at
Adult's 32,561 rows); each task answers one block of ``rows_per_task`` query rows with
``engine.kneighbors`` and the blocks are put back in order. Every row's answer depends on
that row alone (the engine's result is exact, whatever the blocks, the threads or the path
that answered it), so the output equals the local run's, byte for byte
(``tests/engine/test_distributed.py``).

On each worker the first task raises glibc's mmap and trim thresholds (:func:`_tune_malloc`):
under the thresholds Dask's nanny sets, a worker spent about twice the local CPU time on the
same rows, mostly faulting in fresh pages for every temporary array.
"""
from __future__ import annotations

import contextlib
import copy
import os
import threading
import uuid
import weakref
from typing import Callable

import numpy as np
import pandas as pd

from memviz.errors import MemvizError
from memviz.engine.neighbors import NeighborEngine, Neighbors
from memviz.tables.data import Table

#: query rows per task unless given: enough to keep a worker's pass efficient, small
#: enough for every worker to get several blocks
ROWS_PER_TASK = 8192


@contextlib.contextmanager
def connect(scheduler=None, n_workers: int | None = None):
    """A dask.distributed client: to ``scheduler`` (an address such as
    ``tcp://host:8786``, a cluster object or a client, which is then not closed), or, when
    None, to a new local cluster of ``n_workers`` single-threaded worker processes (default:
    the CPU cores). Refuses a missing package or an unreachable scheduler in one line."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise MemvizError("the dask backend needs the package distributed (pip install distributed)") from None
    cluster = client = None
    own = True
    try:
        if scheduler is None:
            cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1,
                                   processes=True, dashboard_address=None)  # no web dashboard
            client = Client(cluster)
        elif isinstance(scheduler, Client):
            client, own = scheduler, False
        elif hasattr(scheduler, "scheduler_address"):
            client = Client(scheduler)
        else:
            try:
                client = Client(str(scheduler), timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise MemvizError(f"dask scheduler {scheduler}: cannot connect ({type(exc).__name__})") from None
        yield client
    finally:
        if client is not None and own:
            client.close()
        if cluster is not None:
            cluster.close()


#: per worker process: the scattered engine -> its copy with the worker's thread count, kept
#: for the life of the engine so that what a query builds on first use (the dense pass's
#: tensors) is built once per worker, not once per task
_WORKER_COPIES: "weakref.WeakKeyDictionary[NeighborEngine, NeighborEngine]" = weakref.WeakKeyDictionary()
_COPIES_LOCK = threading.Lock()


#: glibc's mmap threshold and trim threshold on workers (32 MiB and 64 MiB; module docstring)
MMAP_THRESHOLD, TRIM_THRESHOLD = 32 << 20, 64 << 20
_MALLOC_TUNED = []


def _tune_malloc() -> None:
    """Once per worker process: let glibc keep freed blocks for reuse. Dask's nanny starts
    workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes glibc's mmap threshold
    at 128 KiB, so every temporary array above it (a query block's bounds and distances, about
    1 MB each) is a fresh mmap whose pages fault in again: the same query then costs about
    2x the CPU of the local run (measured in ``benchmarks/bench_dask.py``). A no-op off glibc."""
    with _COPIES_LOCK:
        if _MALLOC_TUNED:
            return
        _MALLOC_TUNED.append(True)
        try:
            import ctypes
            libc = ctypes.CDLL("libc.so.6")
            libc.mallopt(-3, MMAP_THRESHOLD)                                  # M_MMAP_THRESHOLD
            libc.mallopt(-1, TRIM_THRESHOLD)                                  # M_TRIM_THRESHOLD
        except (OSError, AttributeError):
            pass


def _worker_engine(engine: NeighborEngine) -> NeighborEngine:
    """The engine a task on this worker uses: itself when its ``n_jobs`` is set, else one
    shallow copy per worker (arrays shared, not copied) with the worker's thread count. A
    copy, not the scattered object: with an in-process cluster that object is the caller's."""
    if engine.n_jobs is not None:
        return engine
    with _COPIES_LOCK:
        local = _WORKER_COPIES.get(engine)
        if local is None:
            local = copy.copy(engine)
            try:
                from distributed import get_worker
                local.n_jobs = max(1, int(get_worker().state.nthreads))
            except (ImportError, ValueError, AttributeError):
                pass
            _WORKER_COPIES[engine] = local
    return local


def _query(engine: NeighborEngine, rows: pd.DataFrame, k: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """One task: the engine's answer for a block of rows, on the worker's own threads."""
    _tune_malloc()
    nb = _worker_engine(engine).kneighbors(rows, k=k)
    return nb.pos, nb.dist, nb.n_exhaustive, nb.n_pruned


class DaskEngine:
    """A fitted engine whose queries run on a Dask cluster (module docstring).

    Parameters
    ----------
    engine : a fitted NeighborEngine (its device is the workers'; each task uses its
        ``n_jobs`` threads, or when None the worker's thread count).
    client : a ``dask.distributed.Client`` (see :func:`connect`).
    rows_per_task : query rows per task (default ``ROWS_PER_TASK``).
    """

    def __init__(self, engine: NeighborEngine, client, rows_per_task: int | None = None):
        if not hasattr(engine, "encoder_"):
            raise RuntimeError("DaskEngine needs a fitted NeighborEngine")
        self.engine = engine
        self.client = client
        self.rows_per_task = ROWS_PER_TASK if rows_per_task is None else int(rows_per_task)
        if self.rows_per_task < 1:
            raise MemvizError(f"rows_per_task={self.rows_per_task}: must be at least 1")
        self._remote = client.scatter(engine, broadcast=True)                             # once

    # what memorization() and holdout_floor() read from an engine
    @property
    def distance(self) -> str:
        return self.engine.distance

    @property
    def n_reference_(self) -> int:
        return self.engine.n_reference_

    @property
    def row_ids_(self) -> np.ndarray:
        return self.engine.row_ids_

    @property
    def encoder_(self):
        return self.engine.encoder_

    def kneighbors(self, queries: pd.DataFrame | Table, k: int = 2,
                   progress: Callable[[int, int], None] | None = None) -> Neighbors:
        """The engine's ``kneighbors``, one task per block of query rows."""
        from dask.distributed import as_completed

        df = queries.data if isinstance(queries, Table) else queries
        N = self.engine.n_reference_
        if k < 1 or k > N:
            raise MemvizError(f"k={k}: must be between 1 and the {N} reference rows")
        M, b = len(df), self.rows_per_task
        tag = uuid.uuid4().hex[:12]                                                      # one per call
        futures = {self.client.submit(_query, self._remote, df.iloc[s:s + b], k, key=f"memviz-knn-{tag}-{s}"): s
                   for s in range(0, M, b)}
        pos = np.empty((M, k), dtype=np.int64)
        dist = np.empty((M, k), dtype=np.float64)
        n_exh = n_pru = done = 0
        for fut in as_completed(futures):
            s = futures[fut]
            p_, d_, e_, r_ = fut.result()
            pos[s:s + len(p_)], dist[s:s + len(p_)] = p_, d_
            n_exh, n_pru, done = n_exh + e_, n_pru + r_, done + len(p_)
            if progress is not None:
                progress(done, M)
        return Neighbors(pos=pos, row_id=self.engine.row_ids_[pos], dist=dist, n_exhaustive=n_exh, n_pruned=n_pru)
