"""Running an engine's dense blocks and reporting progress (:mod:`memviz.engine.neighbors`)."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import torch

from memviz.device import torch_threads

if TYPE_CHECKING:
    from memviz.engine.neighbors import NeighborEngine


class Progress:
    """Calls progress(done, total) as parts of the query rows finish (thread-safe)."""

    def __init__(self, fn, total):
        self.fn, self.total, self.done, self.lock = fn, total, 0, threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.done += n
            self.fn(self.done, self.total)


def map_blocks(engine: NeighborEngine, starts, b, block, progress, counter) -> None:
    """Run ``block(start, workspace)`` over the starts; on CPU, one thread per core, each
    with its own cache-sized workspace and a single intra-op thread (blocks are
    independent, so this scales without the per-operation synchronisation of intra-op
    parallelism on small blocks)."""
    def run(start, ws):
        with torch.no_grad():
            n_ties, n_rows = block(start, ws)
        counter[0] += n_ties
        if progress is not None:
            progress(n_rows)

    n_jobs = min(engine.n_jobs_(), len(starts))
    if engine.device_.type != "cpu" or n_jobs <= 1:
        ws = engine._workspace(b)        # one block (milliseconds) on one intra-op thread: two lose ~10x
        with torch_threads(1 if len(starts) == 1 and engine.device_.type == "cpu" else None):  # beside a busy core
            for start in starts:
                run(start, ws)
        return
    local = threading.local()
    lock = threading.Lock()

    def work(start):
        if not hasattr(local, "ws"):
            local.ws = engine._workspace(b)
        with torch.no_grad():
            n_ties, n_rows = block(start, local.ws)
        with lock:
            counter[0] += n_ties
            if progress is not None:
                progress(n_rows)

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            list(pool.map(work, starts))
    finally:
        torch.set_num_threads(previous)
