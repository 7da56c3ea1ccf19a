"""Where the cells of a grid run: in this process, in joblib worker processes, or on dask.

Each backend calls ``on_done(CellOutput)`` in this process as cells finish (in any
order), so results are written by one writer whatever the backend.
"""
from __future__ import annotations

import uuid

from memviz.compare.cell import run_cell
from memviz.engine.distributed import connect, results, scatter
from memviz.errors import stop_behind


def run_cells(todo, ctx, n_jobs: int, backend: str, scheduler, on_done) -> None:
    """Run every cell of ``todo`` with the chosen backend (``local`` or ``dask``)."""
    (_run_dask if backend == "dask" else _run_local)(todo, ctx, n_jobs, scheduler, on_done)


def _run_local(todo, ctx, n_jobs, scheduler, on_done) -> None:
    """Cells in this process (n_jobs = 1) or in joblib's worker processes, handled as they finish."""
    if n_jobs == 1 or len(todo) == 1:
        for spec in todo:
            on_done(run_cell(spec, ctx))
        return
    from joblib import Parallel, delayed  # lazy: joblib is optional (memviz[train])

    jobs = Parallel(n_jobs=min(n_jobs, len(todo)), return_as="generator_unordered")
    try:
        for res in jobs(delayed(run_cell)(spec, ctx) for spec in todo):
            on_done(res)
    except Exception as exc:                # joblib's clean-up failing on the way out of a stop: the stop
        stop = stop_behind(exc)
        if stop is None:
            raise
        raise stop from None


def _run_dask(todo, ctx, n_jobs, scheduler, on_done) -> None:
    """Cells as dask.distributed tasks; results are written here, in the client, as they finish.
    The client is :func:`memviz.engine.distributed.connect`'s (the one dask set-up)."""
    with connect(scheduler, n_workers=n_jobs) as client:
        shared = scatter(client, ctx)
        tag = uuid.uuid4().hex[:8]
        futures = [client.submit(run_cell, spec, shared, key=f"memviz-{spec.name}-{spec.key}-{tag}")
                   for spec in todo]
        for _, out in results(client, futures, "cell"):   # a lost worker or scheduler: one line
            on_done(out)
