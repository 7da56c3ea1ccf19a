"""Running an engine's dense blocks and reporting progress (:mod:`memviz.engine.neighbors`)."""
from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from threadpoolctl import threadpool_limits


class BlockRunner(Protocol):
    """What :func:`map_blocks` asks of an engine (:class:`memviz.engine.neighbors.NeighborEngine` is one):
    its device, how many worker threads it may use, and a fresh workspace for blocks of ``b`` query rows."""

    device_: Any

    def n_jobs_(self) -> int: ...

    def workspace(self, b: int) -> Any: ...


class RowsDone:
    """The query rows done so far: calls progress(done, total) as parts of them finish (thread-safe)."""

    def __init__(self, fn, total):
        self.fn, self.total, self.done, self.lock = fn, total, 0, threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += n
            self.fn(self.done, self.total)


_BLAS = threading.Lock()
_BLAS_USERS = [0, None]     # searches inside one_blas_thread, and the limiter they share


@contextlib.contextmanager
def one_blas_thread():
    """numpy's BLAS (OpenBLAS, MKL) on one thread inside, restored when the last search that
    asked for it leaves (thread-safe: concurrent searches share one limit): the searches run
    one block per worker thread, and a BLAS pool of its own under each would oversubscribe
    the cores."""
    with _BLAS:
        if _BLAS_USERS[0] == 0:
            _BLAS_USERS[1] = threadpool_limits(limits=1, user_api="blas")
        _BLAS_USERS[0] += 1
    try:
        yield
    finally:
        with _BLAS:
            _BLAS_USERS[0] -= 1
            if _BLAS_USERS[0] == 0:
                _BLAS_USERS[1].restore_original_limits()
                _BLAS_USERS[1] = None


def map_blocks(engine: BlockRunner, starts, b, block, progress, counter) -> None:
    """Run ``block(start, workspace)`` over the starts; on CPU, one thread per core, each
    with its own cache-sized workspace (blocks are independent: numpy and scipy release the
    GIL over each block's arrays). On CUDA one after another (the GPU runs each block)."""
    def run(start, ws):
        n_ties, n_rows = block(start, ws)
        counter[0] += n_ties
        if progress is not None:
            progress(n_rows)

    n_jobs = min(engine.n_jobs_(), len(starts))
    if engine.device_.type != "cpu" or n_jobs <= 1:
        ws = engine.workspace(b)
        for start in starts:
            run(start, ws)
        return
    local = threading.local()
    lock = threading.Lock()

    def work(start):
        if not hasattr(local, "ws"):
            local.ws = engine.workspace(b)
        n_ties, n_rows = block(start, local.ws)
        with lock:
            counter[0] += n_ties
            if progress is not None:
                progress(n_rows)

    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        list(pool.map(work, starts))
