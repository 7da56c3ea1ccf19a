"""Small helpers of the study: formatting, stored jobs, parallel runs."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from memviz.errors import stop_behind
from memviz.io import atomic_write_json, strict_loads
from memviz.text import as_float


def _num(x) -> str:
    x = as_float(x)
    return "–" if x is None else f"{x:g}"


def p_text(x) -> str:
    x = as_float(x)
    return "–" if x is None else (f"{x:.1e}" if x < 1e-3 else f"{x:.3f}")


def stored(path: Path, key: str) -> dict | None:
    """The record of a finished job at ``path`` when it was made with settings ``key``."""
    try:
        rec = strict_loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and rec.get("key") == key else None


def run_jobs(fn: Callable, jobs: list, n_jobs: int) -> list:
    """``[fn(*job) for job in jobs]``, in joblib worker processes when ``n_jobs > 1`` (order kept)."""
    if n_jobs <= 1 or len(jobs) <= 1:
        return [fn(*job) for job in jobs]
    from joblib import Parallel, delayed  # lazy: joblib is optional (memviz[train])

    try:
        return list(Parallel(n_jobs=min(n_jobs, len(jobs)))(delayed(fn)(*job) for job in jobs))
    except Exception as exc:                # joblib's clean-up failing on the way out of a stop: the stop
        stop = stop_behind(exc)
        if stop is None:
            raise
        raise stop from None


def save_record(path: Path, key: str, record: dict) -> dict:
    """Write a job's record with its settings key; returns it."""
    rec = {"key": key, **record}
    atomic_write_json(Path(path), rec)
    return rec
