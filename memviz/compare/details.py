"""Per-column Shape scores and DCR distances of a finished comparison (heavy: a background job).

For each finished cell with a stored synthetic table (``synthetic/{method}_{model}_{seed}.parquet``):
:func:`memviz.evaluate.synthetic.quality` against the training table gives the column shapes (KS / TV
complement per column), and :func:`memviz.evaluate.synthetic.dcr_share` against the training and test
tables gives DCR_train(g) = min_x d(g, x) per generated row (standardized distance,
balanced references, seeded with the cell's seed). Written atomically to ``OUT/details/``.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memviz.errors import BadRunFolder
from memviz.evaluate.synthetic import dcr_share, quality
from memviz.io import atomic_write_csv, atomic_write_parquet, read_parquet
from memviz.tables.data import Table

DETAILS = "details"
SHAPES_FILE = "column_shapes.csv"
DCR_FILE = "dcr.parquet"
SHAPE_COLUMNS = ["method", "model", "seed", "column", "metric", "score"]
DCR_COLUMNS = ["method", "model", "seed", "dcr_train", "dcr_test"]


def read_results(out_dir: str | Path) -> pd.DataFrame:
    """A comparison's results.csv (BadRunFolder when it has none yet or it is unreadable)."""
    f = Path(out_dir) / "results.csv"
    if not f.is_file():
        raise BadRunFolder(f"{out_dir}: no results.csv yet")
    try:
        df = pd.read_csv(f)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError) as exc:
        raise BadRunFolder(f"{f}: unreadable results ({type(exc).__name__})") from None
    for c in ("method", "model", "seed", "status"):
        if c not in df.columns:
            raise BadRunFolder(f"{f}: results lack the column {c!r}")
    return df


def compute_details(out_dir: str | Path, train: Table, test: Table | None, device: str = "auto") -> dict:
    """Compute and store the details of every finished cell (see the module docstring)."""
    out_dir = Path(out_dir)
    results = read_results(out_dir)
    shapes, dcrs = [], []
    for _, r in results[results["status"] == "ok"].iterrows():
        syn_path = r.get("synthetic")
        if not isinstance(syn_path, str) or not (out_dir / syn_path).exists():
            continue
        syn = read_parquet(out_dir / syn_path, "synthetic table")
        key = {"method": r["method"], "model": r["model"], "seed": int(r["seed"])}
        cs = quality(train, syn).column_shapes
        shapes.append(pd.DataFrame({**key, "column": cs["column"].to_numpy(),
                                    "metric": cs["metric"].to_numpy() if "metric" in cs else "",
                                    "score": cs["score"].to_numpy(dtype=float)}))
        if test is not None:
            d = dcr_share(train, test, syn, device=device, seed=int(r["seed"]))
            dcrs.append(pd.DataFrame({**key, "dcr_train": d.dcr_train, "dcr_test": d.dcr_test}))
    shapes_df = pd.concat(shapes, ignore_index=True) if shapes else pd.DataFrame(columns=SHAPE_COLUMNS)
    dcr_df = pd.concat(dcrs, ignore_index=True) if dcrs else pd.DataFrame(columns=DCR_COLUMNS)
    atomic_write_csv(out_dir / DETAILS / SHAPES_FILE, shapes_df)
    atomic_write_parquet(out_dir / DETAILS / DCR_FILE, dcr_df)
    return {"out": str(out_dir), "cells": len(shapes), "dcr_cells": len(dcrs)}


def read_details(out_dir: str | Path) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """(column shapes, DCR values) once computed, else (None, None) for the missing part."""
    folder = Path(out_dir) / DETAILS
    shapes = pd.read_csv(folder / SHAPES_FILE) if (folder / SHAPES_FILE).is_file() else None
    dcr = read_parquet(folder / DCR_FILE, "DCR details") if (folder / DCR_FILE).is_file() else None
    return shapes, dcr


def details_done(out_dir: str | Path) -> bool:
    return (Path(out_dir) / DETAILS / DCR_FILE).exists()


def details_files(out_dir: str | Path) -> tuple[Path, ...]:
    """The files whose changes a cache of the comparison must notice."""
    folder = Path(out_dir) / DETAILS
    return Path(out_dir) / "results.csv", folder / SHAPES_FILE, folder / DCR_FILE
