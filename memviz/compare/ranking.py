"""The DynamicCut rankings a comparison prunes with: from a finished warm-up on the same table.

``score="raw"`` is the paper's; ``score="excess"`` scores each row by its Mem-AUC above the
null's expectation (:func:`memviz.dynamics.dynamiccut.score_rows`), with the expected per-row Mem-AUC
rate of the warm-up's floor (:attr:`memviz.measure.floor.Floor.expected_auc_rate`): a warm-up run
without a hold-out has no floor and cannot give it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from memviz.errors import BadRunFolder
from memviz.dynamics.dynamiccut import (
    DEFAULTS,
    DynamicCutParams,
    Selection,
    dynamiccut_selection,
)
from memviz.tables.data import Table, fingerprint
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore


def check_run(run_dir: str | Path, train: Table, *, need_floor: bool = False) -> None:
    """A finished warm-up made on ``train`` (same fingerprint), with a floor when ``need_floor``;
    else a one-line BadRunFolder. Cheap (reads the manifest): called before any work starts."""
    store = RunStore.open(run_dir)
    m = store.read()
    if m.kind != "warmup":
        raise BadRunFolder(f"{run_dir}: not a warm-up run (kind {m.kind!r})")
    if m.data.fingerprint != fingerprint(train):
        raise BadRunFolder(f"{run_dir}: this warm-up was trained on another table ({m.data.source}, "
                           f"{m.data.n_rows} rows), not on {train.source} ({len(train)} rows); "
                           "give a run made on the same training table, or leave out --run")
    if m.status != "finished":
        raise BadRunFolder(f"{run_dir}: the warm-up is {m.status!r}, not finished "
                           "(finish it with memviz warmup --resume)")
    if need_floor and store.read_floor() is None:
        raise BadRunFolder(f"{run_dir}: this warm-up has no floor (it was run without a hold-out), and "
                           "dynamiccut_excess needs one; run the warm-up with --holdout, or leave that method out")


def selections_from_run(run_dir: str | Path, train: Table, *, params: DynamicCutParams = DEFAULTS,
                        scores=("raw",)) -> dict[str, Selection]:
    """{score: DynamicCut selection} from a finished warm-up made on ``train``, one per score
    in ``scores`` (``raw``, ``excess``), from one reading of the run, at ``params`` (p, k, T:
    checked when made, nothing is checked again)."""
    check_run(run_dir, train, need_floor="excess" in scores)
    res = load_warmup(run_dir)
    out = {}
    for score in dict.fromkeys(scores):
        rate = None
        if score == "excess":
            if not np.array_equal(res.floor.row_ids, res.dynamics.row_ids):
                raise BadRunFolder(f"{run_dir}: the floor's rows are not the warm-up's training rows")
            rate = res.floor.expected_auc_rate
        out[score] = dynamiccut_selection(res.dynamics, params=params, score=score, expected_auc_rate=rate)
    return out


