"""Side by side: mitigation methods × generators × seeds (:func:`run_grid`).

Each cell is :func:`memviz.compare.cell.run_cell`; the figures are described in
:mod:`memviz.compare.cell` and :mod:`memviz.compare.results`, the settings in
:class:`memviz.compare.config.CompareConfig`.

DynamicCut needs a ranking: from a finished warm-up ``config.run_dir`` on the SAME
training table (checked with the run's data fingerprint), or, without one, a warm-up
run first into ``OUT/warmup`` (:func:`memviz.warmup.ensure_warmup`: reused or resumed on
a rerun). The same TabDDPM ranking prunes the data of every model and seed
(transferability).

Output folder::

    OUT/experiment.json        settings, data fingerprints, selection size
    OUT/selection.csv          the DynamicCut ranking (row_id, score, rank, removed)
    OUT/cells/{method}_{model}_{seed}_{key}.json   one per finished cell
    OUT/synthetic/{method}_{model}_{seed}.parquet  the generated rows of each cell
    OUT/results.csv            every cell of the grid, rewritten as each one finishes

``key`` hashes every setting that changes a cell (data fingerprints, epochs, model
parameters, device, ratio, the selection for the methods that use it...): a rerun
skips the cells whose JSON exists with status ``ok`` and recomputes the others.

Progress is reported as event dicts: the warm-up's own (``{"event": "epoch", ...}``,
``{"event": "check", ...}``) with ``"phase": "warmup"`` added, then one
``{"event": "cell", "done", "total", "method", "model", "seed", "status", "mem_ratio",
"seconds"}`` per finished cell.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..data import Table
from ..device import torch_threads
from ..dynamiccut import prune_budget
from ..evaluate import mle
from ..io import atomic_write_csv, atomic_write_json, atomic_write_parquet, read_json, to_jsonable
from ..store import fingerprint, versions
from ..warmup import WarmupConfig, ensure_warmup
from .backends import run_cells
from .cell import CellOutput, CellSpec, GridContext
from .config import CompareConfig
from .methods import AUGMENTS, NEEDS_SELECTION, random_count, removed_ids
from .ranking import selection_from_run
from .results import COLUMNS, results_frame

FORMAT = "memviz.compare/1"
EXPERIMENT = "experiment.json"
Progress = Callable[[dict], None]


def run_grid(train: Table, test: Table | None, config: CompareConfig, out_dir: str | Path, *,
             progress: Progress | None = None) -> pd.DataFrame:
    """Run every (method, model, seed) cell not finished yet; return the results of the whole grid.

    Parameters
    ----------
    train, test : the original training table and the real test split (None: no MLE/DCR).
    config : :class:`CompareConfig` (validated here, before any work).
    out_dir : results folder (see the module docstring); reruns skip finished cells.
    progress : called with event dicts (see the module docstring).

    Returns
    -------
    DataFrame, one row per cell of the grid (:data:`memviz.compare.results.COLUMNS`), grid
    order, with ``relative_reduction`` filled where the baseline cell of the same model and
    seed is there.
    """
    t_start = time.perf_counter()
    cfg = config.validated()
    if cfg.needs_ranking or "random" in cfg.methods:
        prune_budget(cfg.p, len(train))  # a p removing every row fails now, not after a warm-up
    threads = cfg.threads
    if threads is None and not (cfg.backend == "dask" and cfg.scheduler is not None):
        threads = 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    selection, sel_info = None, {}
    if cfg.needs_ranking:
        run_dir = cfg.run_dir
        if run_dir is None:
            with torch_threads(threads):
                ensure_warmup(train, warmup_config(cfg), out / "warmup", progress=_tagged(progress, "warmup"))
            run_dir = out / "warmup"
        sel = selection_from_run(run_dir, train, p=cfg.p, k=cfg.k, T=cfg.T)
        atomic_write_csv(out / "selection.csv", sel.to_frame())
        selection = removed_ids(sel)
        sel_info = {"run_dir": str(run_dir), "k": sel.k, "T": sel.T, "n_removed": int(sel.n_remove)}
    train_fp = fingerprint(train)
    shared = {"v": 1, "train": train_fp, "test": fingerprint(test) if test is not None else None,
              "epochs": cfg.epochs, "device": cfg.device, "distance": cfg.distance,
              "pruned_reference": cfg.pruned_reference}
    sel_fp = _hash(np.sort(selection).tolist()) if selection is not None else None
    n_random = random_count(train, selection, cfg.p) if "random" in cfg.methods else None

    def key(method, model, seed):
        d = {**shared, "method": method, "model": model, "seed": seed, "params": cfg.model_params.get(model, {})}
        if method in NEEDS_SELECTION:
            d["selection"] = sel_fp
        if method == "random":
            d["n_remove"] = n_random
        if method in AUGMENTS:
            d["ratio"] = cfg.ratio
        return _hash(d)

    specs = [CellSpec(me, mo, s, key(me, mo, s)) for s in cfg.seeds for mo in cfg.models for me in cfg.methods]
    manifest = {"format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "config": cfg.to_dict(), **shared,
                "methods": cfg.methods, "models": cfg.models, "seeds": cfg.seeds, "p": cfg.p, "ratio": cfg.ratio,
                "model_params": cfg.model_params, "selection": sel_info, "train_source": train.source,
                "n_train": len(train), "test_source": test.source if test is not None else None,
                "versions": versions()}
    atomic_write_json(out / EXPERIMENT, manifest)
    records = {s.name: r for s in specs if (r := _finished(out, s)) is not None}
    todo = [s for s in specs if s.name not in records]
    total = len(specs)
    ctx = GridContext(train, test, train_fp, selection, cfg.p, cfg.ratio, cfg.epochs, cfg.model_params,
                      cfg.device, cfg.distance, cfg.pruned_reference, _mle_reference(train, test, {s.seed for s in todo}),
                      threads)

    def finished(res: CellOutput) -> None:
        spec = CellSpec(res.record["method"], res.record["model"], res.record["seed"], res.record["key"])
        rec = dict(res.record)
        if res.synthetic is not None:
            path = out / "synthetic" / f"{spec.name}.parquet"
            atomic_write_parquet(path, res.synthetic.reset_index(drop=True))
            rec["synthetic"] = str(path.relative_to(out))
        atomic_write_json(out / "cells" / f"{spec.name}_{spec.key}.json",
                          {**rec, "settings_key": spec.key, "traceback": res.traceback})
        records[spec.name] = rec
        atomic_write_csv(out / "results.csv", results_frame([records[s.name] for s in specs if s.name in records]))
        if progress is not None:
            progress({"event": "cell", "done": len(records), "total": total, "method": spec.method,
                      "model": spec.model, "seed": spec.seed, "status": rec["status"],
                      "mem_ratio": rec.get("mem_ratio"), "error": rec.get("error") or "",
                      "seconds": rec.get("total_seconds")})

    if progress is not None:
        progress({"event": "cells", "done": len(records), "total": total})
    if todo:
        run_cells(todo, ctx, cfg.n_jobs, cfg.backend, cfg.scheduler, finished)
    results = results_frame([records[s.name] for s in specs if s.name in records])
    atomic_write_csv(out / "results.csv", results)
    manifest.update(seconds=time.perf_counter() - t_start, cells=total, ran=len(todo),
                    failed=int((results["status"] != "ok").sum()))
    atomic_write_json(out / EXPERIMENT, manifest)
    return results


def warmup_config(cfg: CompareConfig) -> WarmupConfig:
    """The warm-up a comparison runs for its ranking when it is given none."""
    base = {"epochs": cfg.epochs, "seed": 0, "device": cfg.device, "distance": cfg.distance,
            "model_params": dict(cfg.model_params.get("tabddpm", {}))}
    return WarmupConfig(**{**base, **(cfg.warmup or {})})


def read_experiment(out_dir: str | Path) -> dict:
    """A comparison's experiment.json (RunError when missing or unreadable)."""
    return read_json(Path(out_dir) / EXPERIMENT, "comparison manifest")


def _tagged(progress: Progress | None, phase: str) -> Progress | None:
    if progress is None:
        return None
    return lambda ev: progress({**ev, "phase": phase})


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(to_jsonable(obj), sort_keys=True, default=str).encode()).hexdigest()[:12]


def _finished(out: Path, spec: CellSpec) -> dict | None:
    f = out / "cells" / f"{spec.name}_{spec.key}.json"
    if not f.exists():
        return None
    try:
        rec = json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(rec, dict) or rec.get("status") != "ok" or not (out / str(rec.get("synthetic", ""))).is_file():
        return None
    return {c: rec.get(c) for c in COLUMNS if c in rec}


def _mle_reference(train: Table, test: Table | None, seeds) -> dict:
    """seed -> score of the MLE booster fitted on the real training table (the reference line)."""
    if test is None or train.schema.target is None:
        return {}
    # the "synthetic" table IS the real training table here, so .score is the reference
    # (real_score is passed to skip fitting the same booster a second time)
    return {s: mle(train, train, test, seed=s, real_score=float("nan")).score for s in sorted(seeds)}
