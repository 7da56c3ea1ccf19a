"""The DynamicCut ranking a comparison prunes with: from a finished warm-up on the same table."""
from __future__ import annotations

from pathlib import Path

from ..data import Table
from ..dynamiccut import DEFAULT_K, DEFAULT_P, Selection, dynamiccut_selection
from ..errors import RunError
from ..store import RunStore, fingerprint
from ..warmup import load_warmup


def selection_from_run(run_dir: str | Path, train: Table, p: float = DEFAULT_P, k: int = DEFAULT_K,
                       T=None) -> Selection:
    """DynamicCut selection from a finished warm-up made on ``train`` (same fingerprint)."""
    store = RunStore.open(run_dir)
    m = store.manifest()
    data = m.get("data") or {}
    if m.get("kind", "warmup") != "warmup":
        raise RunError(f"{run_dir}: not a warm-up run (kind {m.get('kind')!r})")
    if data.get("fingerprint") != fingerprint(train):
        raise RunError(f"{run_dir}: this warm-up was trained on another table ({data.get('source')}, "
                       f"{data.get('n_rows')} rows), not on {train.source} ({len(train)} rows); "
                       "give a run made on the same training table, or leave out --run")
    if m.get("status") != "finished":
        raise RunError(f"{run_dir}: the warm-up is {m.get('status')!r}, not finished "
                       "(finish it with memviz warmup --resume)")
    return dynamiccut_selection(load_warmup(run_dir).dynamics, p=p, k=k, T=T)
