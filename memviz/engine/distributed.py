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

The audit (``memviz.audit(..., backend="dask")``, ``memviz audit --backend dask``) wraps each engine it
fits through one :class:`Remote` (each engine sent once): its memorization pass, floor, closeness tests
and membership attack search on the cluster (``memviz.verdict.build`` says which searches stay here);
:class:`DaskEngine` also offers ``reference_arrays`` for the data-copying test's cells.

On each worker the first task raises glibc's mmap and trim thresholds (:func:`_tune_malloc`):
under the thresholds Dask's nanny sets, a worker spent about twice the local CPU time on the
same rows, mostly faulting in fresh pages for every temporary array.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import ctypes
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from typing import Callable

import numpy as np
import pandas as pd

from memviz.engine.neighbors import NeighborEngine, Neighbors
from memviz.errors import BadOption, MemvizError, MissingExtra
from memviz.tables.data import Table

#: query rows per task unless given: enough to keep a worker's pass efficient, small
#: enough for every worker to get several blocks
ROWS_PER_TASK = 8192


#: seconds to reach a scheduler and finish dask's handshake with it, retries included: a port that
#: accepts and never answers, or answers in another protocol, is refused within this
CONNECT_TIMEOUT = 10.0
#: seconds tasks may wait on a cluster without a worker before the run is given up
NO_WORKER_TIMEOUT = 30.0
#: seconds between two looks at the cluster while no task finishes (and the longest a scheduler
#: may take to say how many workers it has)
POLL_SECONDS = 2.0
#: address schemes a scheduler is reached by
SCHEMES = ("tcp", "tls", "inproc", "ws", "wss", "ucx")


def check_address(scheduler) -> str:
    """``scheduler`` as a dask address (``tcp://HOST:PORT``; a bare ``HOST:PORT`` is tcp), or a
    MemvizError naming it: empty, no port, an unknown scheme, a port out of range."""
    text = str(scheduler).strip()
    shown = repr(str(scheduler)[:200])
    if not text:
        raise BadOption("dask scheduler '': empty address (give tcp://HOST:PORT, or leave out --scheduler for a "
                          "local cluster)")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    if scheme not in SCHEMES:
        raise BadOption(f"dask scheduler {shown}: unknown scheme {scheme!r} (use tcp://HOST:PORT)")
    if scheme in ("tcp", "tls", "ws", "wss"):
        host, colon, port = rest.rpartition(":")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536 or "/" in host:
            raise BadOption(f"dask scheduler {shown}: not HOST:PORT with a port in 1-65535 (e.g. "
                              "tcp://127.0.0.1:8786)")
    return f"{scheme}://{rest}"


def _handshake(address: str, timeout: float) -> None:
    """Reach ``address`` and finish dask's handshake within ``timeout`` seconds in all, or a MemvizError
    (one line): dask's own connect bounds the TCP connection but not the handshake, so a port that
    accepts and never answers held ``Client`` for good, and one that answers HTTP had it read a frame
    length of 3 EiB."""
    from distributed.comm import connect as comm_connect  # lazy: dask is optional (memviz[dask])

    async def probe():
        comm = await comm_connect(address, timeout=timeout)
        await comm.close()

    _reach(address, timeout)
    try:
        asyncio.run(asyncio.wait_for(probe(), timeout))
    except (asyncio.TimeoutError, TimeoutError):
        raise BadOption(f"dask scheduler {address}: no dask scheduler answered within {timeout:g} s") from None
    except Exception as exc:  # refused, unreachable, or not dask's protocol (MemoryError from a garbage frame length)
        raise BadOption(f"dask scheduler {address}: cannot connect ({_why(exc)})") from None


def _reach(address: str, timeout: float) -> None:
    """A TCP connection to a ``tcp://`` address, or a MemvizError saying it cannot connect: dask's own
    connect retries a refused port until its timeout, so a closed port read as "no answer within 10 s"
    rather than as refused."""
    scheme, _, rest = address.partition("://")
    if scheme != "tcp":
        return
    host, _, port = rest.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise BadOption(f"dask scheduler {address}: cannot connect ({_why(exc)})") from None


def _why(exc: BaseException) -> str:
    """``ClassName: first line of the message`` (at most 160 characters), for a one-line error."""
    text = " ".join(str(exc).split())[:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def connect(scheduler=None, n_workers: int | None = None):
    """A dask.distributed client: to ``scheduler`` (an address such as
    ``tcp://host:8786``, a cluster object or a client, which is then not closed), or, when
    None, to a new local cluster of ``n_workers`` single-threaded worker processes (default:
    the CPU cores). Refuses a missing package, a malformed address, or a scheduler that does not
    finish dask's handshake within :data:`CONNECT_TIMEOUT` seconds in one line. dask's own log
    lines are silenced while the client lives: what fails is said by memviz, in one line."""
    try:
        from dask.distributed import Client, LocalCluster  # lazy: dask is optional (memviz[dask])
    except ImportError:
        raise MissingExtra("the dask backend needs the package distributed (pip install distributed)") from None
    cluster = client = None
    own = True
    quiet = _quiet_dask()
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
            address = check_address(scheduler)
            _handshake(address, CONNECT_TIMEOUT)
            try:
                client = Client(address, timeout=f"{CONNECT_TIMEOUT}s")
            except Exception as exc:
                raise BadOption(f"dask scheduler {address}: cannot connect ({_why(exc)})") from None
        yield client
    finally:
        try:
            if client is not None and own:
                client.close(timeout=CONNECT_TIMEOUT)
            if cluster is not None:
                cluster.close(timeout=CONNECT_TIMEOUT)
        except Exception:  # a lost scheduler: nothing left to close
            pass
        quiet.close()


class _quiet_dask:
    """dask.distributed's loggers at CRITICAL until :meth:`close` (a lost worker logs an ERROR line per
    lost key beside memviz's own one line)."""

    NAMES = ("distributed", "distributed.scheduler", "distributed.client", "distributed.worker",
             "distributed.nanny", "distributed.core", "distributed.comm")

    def __init__(self):
        self.levels = {n: logging.getLogger(n).level for n in self.NAMES}
        for n in self.NAMES:
            logging.getLogger(n).setLevel(logging.CRITICAL)

    def close(self) -> None:
        for n, level in self.levels.items():
            logging.getLogger(n).setLevel(level)


def results(client, futures, what: str = "task"):
    """``(future, result)`` for each of ``futures`` as it finishes, or a MemvizError (one line) when the
    cluster fails it: a worker lost with the data the task needed (dask cancels the task), a worker
    killed while running it (KilledWorker), the scheduler lost, or no worker in the cluster for
    :data:`NO_WORKER_TIMEOUT` seconds while tasks wait. An error the task itself raises is raised as it
    is (a MemvizError stays one line)."""
    from distributed import wait  # lazy: dask is optional (memviz[dask])

    pending, idle = set(futures), None
    while pending:
        try:
            done, pending = wait(pending, timeout=POLL_SECONDS, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        except Exception as exc:
            raise _lost(what, exc) from None
        for fut in done:
            try:
                yield fut, fut.result()
            except MemvizError:
                raise
            except Exception as exc:
                if _is_cluster_failure(exc):
                    raise _lost(what, exc) from None
                raise
        if done:
            idle = None
            continue
        try:
            workers = client.nthreads(callback_timeout=POLL_SECONDS)
        except Exception as exc:
            raise BadOption(f"dask: the scheduler stopped answering ({_why(exc)}); the {what}s are not "
                              "finished: start the cluster again and rerun") from None
        if workers:
            idle = None
        elif idle is None:
            idle = time.monotonic()
        elif time.monotonic() - idle > NO_WORKER_TIMEOUT:
            raise BadOption(f"dask: no worker in the cluster for {NO_WORKER_TIMEOUT:g} s while {len(pending)} "
                              f"{what}(s) wait; start workers and rerun")


def scatter(client, value):
    """``client.scatter(value, broadcast=True)`` within :data:`NO_WORKER_TIMEOUT` seconds, or a MemvizError
    (one line): a cluster without a worker held it for good."""
    try:
        return client.scatter(value, broadcast=True, timeout=NO_WORKER_TIMEOUT)
    except Exception as exc:
        raise BadOption(f"dask: cannot send the data to the workers within {NO_WORKER_TIMEOUT:g} s ({_why(exc)}); "
                          "is a worker connected to the scheduler?") from None


def _is_cluster_failure(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"FutureCancelledError", "KilledWorker", "CommClosedError", "CancelledError"}) or \
        isinstance(exc, (asyncio.CancelledError, concurrent.futures.CancelledError, OSError, TimeoutError))


def _lost(what: str, exc: BaseException) -> MemvizError:
    return MemvizError(f"dask: the cluster lost a {what} ({_why(exc)}): a worker died with the data it needed; "
                       "nothing was written, rerun")


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
                from distributed import get_worker  # lazy: dask is optional (memviz[dask])
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
            raise BadOption(f"rows_per_task={self.rows_per_task}: must be at least 1")
        self._remote = scatter(client, engine)                                            # once

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

    def reference_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The wrapped engine's :meth:`~memviz.engine.neighbors.NeighborEngine.reference_arrays` (the
        data-copying test's cells read them here: no search)."""
        return self.engine.reference_arrays()

    def kneighbors(self, queries: pd.DataFrame | Table, k: int = 2,
                   progress: Callable[[int, int], None] | None = None) -> Neighbors:
        """The engine's ``kneighbors``, one task per block of query rows; a lost worker or scheduler is one
        line (:func:`results`)."""
        df = queries.data if isinstance(queries, Table) else queries
        N = self.engine.n_reference_
        if k < 1 or k > N:
            raise BadOption(f"k={k}: must be between 1 and the {N} reference rows")
        M, b = len(df), self.rows_per_task
        tag = uuid.uuid4().hex[:12]                                                      # one per call
        futures = {self.client.submit(_query, self._remote, df.iloc[s:s + b], k, key=f"memviz-knn-{tag}-{s}"): s
                   for s in range(0, M, b)}
        pos = np.empty((M, k), dtype=np.int64)
        dist = np.empty((M, k), dtype=np.float64)
        n_exh = n_pru = done = 0
        for fut, (p_, d_, e_, r_) in results(self.client, futures, "block of query rows"):
            s = futures[fut]
            pos[s:s + len(p_)], dist[s:s + len(p_)] = p_, d_
            n_exh, n_pru, done = n_exh + e_, n_pru + r_, done + len(p_)
            if progress is not None:
                progress(done, M)
        return Neighbors(pos=pos, row_id=self.engine.row_ids_[pos], dist=dist, n_exhaustive=n_exh, n_pruned=n_pru)


class Remote:
    """The engines of one run sent to a cluster: ``remote(engine)`` is ``engine`` as a :class:`DaskEngine`
    on ``client``, the same one for the same engine (each fitted engine is sent to the workers once,
    however many passes read it).

    An engine pinned to ``n_jobs`` threads where it was fitted (the evidence's engines take half the
    caller's) is sent as a shallow copy with ``n_jobs=None``, so that each task uses its worker's own
    threads (:func:`_worker_engine`); the answer is the same whatever the threads.

    Parameters
    ----------
    client : a ``dask.distributed.Client`` (:func:`connect`).
    rows_per_task : query rows per task (default :data:`ROWS_PER_TASK`).
    """

    def __init__(self, client, rows_per_task: int | None = None):
        self.client, self.rows_per_task = client, rows_per_task
        self._sent: dict[int, tuple[NeighborEngine, DaskEngine]] = {}
        self._lock = threading.Lock()                   # the evidence wraps its engines on two threads

    def __call__(self, engine):
        if engine is None or isinstance(engine, DaskEngine):
            return engine
        key = id(engine)
        with self._lock:
            if key not in self._sent:                   # the engine is kept here: its id is not reused
                local = engine
                if engine.n_jobs is not None:
                    local = copy.copy(engine)
                    local.n_jobs = None
                self._sent[key] = (engine, DaskEngine(local, self.client, self.rows_per_task))
            return self._sent[key][1]


def on_cluster(engine, remote=None):
    """``engine`` itself when ``remote`` is None (every search here), else ``remote(engine)``: the same
    searches on its cluster (:class:`Remote`). The one place a caller's optional cluster is applied."""
    return engine if remote is None else remote(engine)
