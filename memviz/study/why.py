"""The "why these rows" study (``docs/study-why.md``, issue 52): which rows are memorized and why, and whether
a ranking from the table alone prunes as well as DynamicCut's.

``run`` — per table, the scale ``why`` through the study's own machinery (:func:`memviz.study.run.dataset_study`:
warm-ups, the ``main`` grid of baseline / DynamicCut / random / isolation cut, the paired claims of
:mod:`memviz.study.findings`), then the committed per-row records (:func:`row_records`):

    OUT/why/{table}/rows.csv     every warm-up's rows: seed, row_id, total_count, top, first_epoch, forgetting
    OUT/why/{table}/factors.csv  the risk factors of the training rows (:mod:`memviz.risk.factors`)
    OUT/why/{table}/copies.csv   every cell's copies per nearest training row: method, seed, row_id, copies

``analyse`` — the declared tests (:mod:`memviz.study.whytests`) from those files alone, and the results
section of the design document; ``render`` — the documents again from the committed ``OUT/why/results.json``
(and the hand-written ``OUT/why/reading.md``), nothing recomputed.

``python -m memviz.study.why run --data-dir DIR --datasets adult`` (resumable; one table per process)
``python -m memviz.study.why analyse --data-dir DIR --markdown docs/study-why.md``
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.io import atomic_write_csv, read_parquet
from memviz.measure.memorization import memorization
from memviz.risk.factors import risk_factors
from memviz.study.floors import study_tables
from memviz.study.run import dataset_study
from memviz.study.scales import SCALES
from memviz.study.whytests import render_results, write_results
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore

SCALE = "why"
DATASETS = ("adult", "default", "shoppers")


def table_dir(out: Path, dataset: str) -> Path:
    return Path(out) / SCALE / dataset


def run_table(data_dir, dataset: str, out, device: str = "cpu", say=print) -> dict:
    """Warm-ups, cells and claims of one table (resumable), then its per-row records."""
    rec = dataset_study(dataset, Path(data_dir) / dataset, SCALES[SCALE], Path(out), parts=("warmups", "main"),
                        device=device, n_jobs=1, progress=say)
    row_records(data_dir, dataset, out, device)
    return rec


def row_records(data_dir, dataset: str, out, device: str = "cpu") -> None:
    """rows.csv, factors.csv and copies.csv of one table (module docstring), from its run folders; seeds and
    cells whose folders are not here keep their committed rows."""
    scale = SCALES[SCALE]
    d_out = table_dir(out, dataset)
    runs = d_out / "runs"
    train, _, _ = study_tables(Path(data_dir) / dataset, scale)
    atomic_write_csv(d_out / "factors.csv", risk_factors(train, device=device).frame.reset_index())
    frames = []
    for s in scale.seeds:
        w = runs / f"warmup_s{s}"
        if (w / "manifest.json").is_file() and RunStore.open(w).read().status == "finished":
            f = load_warmup(w).dynamics.to_frame()
            frames.append(f[["row_id", "total_count", "top", "first_epoch", "forgetting_events"]].assign(seed=s))
    _merge(d_out / "rows.csv", frames, ["seed"])
    copies = []
    for s in scale.seeds:
        for method in scale.methods:
            f = runs / f"main_s{s}" / "synthetic" / f"{method}_tabddpm_{s}.parquet"
            if not f.is_file():
                continue
            m = memorization(train, read_parquet(f, "generated rows"), device=device)
            ids, n = np.unique(m.nn1[m.memorized], return_counts=True)
            copies.append(pd.DataFrame({"method": method, "seed": s, "row_id": ids, "copies": n}))
    _merge(d_out / "copies.csv", copies, ["method", "seed"])


def _merge(path: Path, frames: list, keys: list) -> None:
    """The committed table at ``path`` with the groups (``keys``) of ``frames`` put in place of its own."""
    if not frames:
        return
    fresh = pd.concat(frames, ignore_index=True)
    if Path(path).is_file():
        old = pd.read_csv(path)
        done = pd.MultiIndex.from_frame(fresh[keys].drop_duplicates().astype(str))
        old = old[~pd.MultiIndex.from_frame(old[keys].astype(str)).isin(done)]
        fresh = pd.concat([old, fresh], ignore_index=True)
    atomic_write_csv(path, fresh.sort_values(keys + ["row_id"], kind="stable"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m memviz.study.why", description=__doc__.splitlines()[0])
    p.add_argument("what", choices=("run", "records", "analyse", "render"))
    p.add_argument("--data-dir", required=True)
    p.add_argument("--out", default="docs/study", help="the study's folder (tables go to OUT/why/TABLE)")
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--device", default="cpu")
    p.add_argument("--markdown", help="the design document whose results section is rewritten (analyse)")
    args = p.parse_args(argv)
    names = args.datasets.split(",")
    say = lambda m: print(m, flush=True)  # noqa: E731
    if args.what == "run":
        for ds in names:
            run_table(args.data_dir, ds, args.out, args.device, say)
    elif args.what == "records":
        for ds in names:
            row_records(args.data_dir, ds, args.out, args.device)
    elif args.what == "render":
        render_results(args.out, args.markdown)
    else:
        write_results(args.data_dir, args.out, names, args.markdown, say)
    return 0


if __name__ == "__main__":
    sys.exit(main())
