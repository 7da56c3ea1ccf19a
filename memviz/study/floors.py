"""The study's tables and the floor table (part 1).

The floor (:mod:`memviz.measure.floor`) is the metric's flagged share of real rows no model has
seen, measured against the same reference rows and distance as a model's mem ratio.
Part 1 measures it at full size: the official test split as the "generated" table against
the full official training split, with both distances, beside the published TabDDPM mem
ratios. Each scale's own floors (its training subset against its test rows) come with the
warm-ups (:mod:`memviz.study.warmups`).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from memviz.engine import DISTANCES
from memviz.errors import BadTable
from memviz.io import settings_key
from memviz.measure.floor import holdout_floor
from memviz.study.scales import REFERENCE, StudyScale
from memviz.study.util import save_record, stored
from memviz.tables.data import Table, fingerprint, load_dataset


def subsample(table: Table, n: int | None, seed: int = 0) -> Table:
    """``n`` rows drawn without replacement (seeded), in their original order; ids kept."""
    if n is None or n >= len(table):
        return table
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(table.row_ids, size=n, replace=False))
    return table.subset(ids)


def study_tables(folder: Path, scale: StudyScale, n_train: int | None = None) -> tuple[Table, Table, int]:
    """(training rows, test rows, full training size) of one dataset at a scale.

    Training rows: ``n_train`` (default ``scale.max_train``) drawn from the official
    training split with seed 0; test rows: ``scale.max_test`` drawn from the test split
    with seed 1. Row ids are the rows' positions in the official files.
    """
    train_full, test_full = load_dataset(folder)
    if test_full is None:
        raise BadTable(f"{folder}: the study needs a test.csv beside train.csv")
    n = scale.max_train if n_train is None else n_train
    return subsample(train_full, n, seed=0), subsample(test_full, scale.max_test, seed=1), len(train_full)


def full_floor(folder: Path, name: str, distance: str, out: Path, device: str = "cpu") -> dict:
    """Floor of the full training split with the whole test split as hold-out (stored, reused)."""
    train, test = load_dataset(folder)
    key = settings_key({"train": fingerprint(train), "test": fingerprint(test), "distance": distance})
    path = out / f"{name}_{distance}.json"
    if (rec := stored(path, key)) is not None:
        return rec
    t0 = time.perf_counter()
    fl = holdout_floor(train, test, distance=distance, device=device)
    return save_record(path, key, {"dataset": name, "distance": distance, "n_reference": fl.n_reference,
                            "n_holdout": fl.n_holdout, "n_flagged": fl.n_flagged, "floor": fl.floor,
                            "low": fl.low, "high": fl.high, "n_identical": fl.n_identical,
                            "seconds": time.perf_counter() - t0,
                            "published_tabddpm": (REFERENCE.get(name) or {}).get("tabddpm_mem")})


def floor_table(data_dir: Path, datasets, out: Path, device: str = "cpu") -> list[dict]:
    """Part 1: one record per dataset and distance (see :func:`full_floor`)."""
    return [full_floor(Path(data_dir) / name, name, d, Path(out), device) for name in datasets for d in DISTANCES]
