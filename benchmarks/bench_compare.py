"""Benchmark: the default comparison on the bundled sample, and where the time goes.

The default comparison is 7 methods (baseline, dynamiccut, dynamiccutmix, tabcutmix,
tabcutmixplus, smote, random) x 3 models (tabddpm, ctgan, tvae) x 1 seed with the CPU
presets (TabDDPM cpu-quick 150 epochs, CTGAN 30, TVAE 200) on the 3,000-row Adult sample,
plus the cpu-quick TabDDPM warm-up that ranks the rows for DynamicCut. Target: <= 20
minutes on 2 cores.

Reported:

* the warm-up's seconds (skipped with ``--run``);
* per cell: mitigate / fit / sample / memorize / quality / mle / dcr seconds (wall) and the
  worker's CPU seconds;
* sums per model, per method and per phase; the grid's wall time and its parallel
  speed-up (sum of cell seconds / grid wall time);
* a projection of the full 7 x 3 grid from the cells measured (when ``--methods`` or
  ``--models`` is a subset): per model, fit seconds per training row times each method's
  training rows (0.9 N pruned, 1.3 N augmented, 1.17 N for dynamiccutmix), other phases
  as measured, divided by ``--n-jobs``, plus the warm-up; and the same scaled by the
  cells' CPU / wall ratio plus the warm-up's CPU seconds (roughly what a quiet machine
  takes with one thread per cell);
* the pruning protocol's own cost (:mod:`memviz.compare.protocol`: the floor of the test
  split, one floor per kept set, the baseline's rows against each pruning cell's kept
  rows), measured by running the finished grid again without its stored floors and
  controls (every cell cached), minus a rerun with everything cached; and its share of
  the grid's wall time;
* the load average before and after: on a shared machine wall times are inflated.

Usage::

    python benchmarks/bench_compare.py                       # the full default comparison
    python benchmarks/bench_compare.py --methods baseline,tabcutmix   # reduced, with a projection

The last stdout line is a JSON object with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import pandas as pd

from memviz.compare import CompareConfig, run_grid
from memviz.compare.methods import DEFAULT_METHODS, NEEDS_SELECTION
from memviz.device import torch_threads
from memviz.models import MODELS
from memviz.tables.data import load_dataset, sample_data_dir
from memviz.warmup.run import WarmupConfig, ensure_warmup

PHASES = ["mitigate_seconds", "fit_seconds", "sample_seconds", "memorize_seconds", "quality_seconds",
          "mle_seconds", "dcr_seconds"]
ROW_FACTOR = {"baseline": 1.0, "dynamiccut": 0.9, "dynamiccut_excess": 0.9, "random": 0.9,
              "dynamiccutmix": 0.9 * 1.3, "tabcutmix": 1.3, "tabcutmixplus": 1.3, "tabcutmixplus_dtype": 1.3,
              "smote": 1.3, "smote_nc": 1.3}


def project(cells: pd.DataFrame, n_jobs: int) -> float:
    """Wall seconds of the full 7 x 3 grid from the measured cells (see the module docstring)."""
    total = 0.0
    for model in MODELS:
        mine = cells[cells["model"] == model]
        if mine.empty:
            continue
        factor = mine["method"].map(ROW_FACTOR)
        n = float((mine["n_train_used"] / factor).mean())                 # the original N
        fit_per_row = float((mine["fit_seconds"] / mine["n_train_used"]).mean())
        other = float((mine["total_seconds"] - mine["fit_seconds"]).mean())
        total += sum(fit_per_row * ROW_FACTOR[m] * n + other for m in DEFAULT_METHODS)
    return total * len(MODELS) / cells["model"].nunique() / n_jobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(sample_data_dir()), help="folder with train.csv, test.csv, meta.json")
    ap.add_argument("--methods", default=",".join(DEFAULT_METHODS))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--n-jobs", type=int, default=2, help="cells in parallel (processes)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads per cell and for the warm-up (default 1, as run_grid)")
    ap.add_argument("--run", default=None, help="an existing warm-up on the same table (skips the warm-up)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--epochs", type=int, default=None, help="override every model's epochs (smoke tests)")
    ap.add_argument("--out", default=None, help="results folder (default: a temporary one)")
    ap.add_argument("--target-minutes", type=float, default=20.0)
    args = ap.parse_args()

    train, test = load_dataset(args.data)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    seeds = [int(s) for s in args.seeds.split(",")]
    out = Path(args.out or tempfile.mkdtemp(prefix="bench_compare_"))
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    run_dir, warmup_s, warmup_cpu = args.run, 0.0, 0.0
    if run_dir is None and any(m in NEEDS_SELECTION for m in methods):
        cfg = WarmupConfig(preset="cpu-quick", epochs=args.epochs, seed=0, device=args.device)
        t, c = time.perf_counter(), time.process_time()
        with torch_threads(args.threads or 1):
            ensure_warmup(train, cfg, out / "warmup", holdout=test)
        run_dir = str(out / "warmup")
        warmup_s, warmup_cpu = time.perf_counter() - t, time.process_time() - c
        print(f"warm-up: {warmup_s:.0f} s", flush=True)

    def progress(ev):
        if ev.get("event") == "cell":
            print(f"[{time.perf_counter() - t0:7.0f} s] {ev['done']}/{ev['total']} {ev['method']}/{ev['model']}/"
                  f"seed {ev['seed']}: {ev['status']} ({ev.get('seconds') or 0:.0f} s)", flush=True)

    t = time.perf_counter()
    config = CompareConfig(methods=tuple(methods), models=tuple(models), seeds=tuple(seeds), run_dir=run_dir,
                           device=args.device, epochs=args.epochs, n_jobs=args.n_jobs, threads=args.threads)
    res = run_grid(train, test, config, out, progress=progress)
    grid_s = time.perf_counter() - t
    total_s = time.perf_counter() - t0
    t = time.perf_counter()
    run_grid(train, test, config, out)                                     # everything cached
    cached_s = time.perf_counter() - t
    for name in ("floors", "protocol"):
        shutil.rmtree(out / name, ignore_errors=True)
    t = time.perf_counter()
    run_grid(train, test, config, out)                                     # cells cached, protocol measured again
    protocol_s = time.perf_counter() - t - cached_s
    ok = res[res["status"] == "ok"].copy()
    cols = PHASES + ["total_seconds", "cpu_seconds"]
    pd.set_option("display.width", 200)
    print("\nper cell (seconds):")
    print(ok[["model", "method", "n_train_used"] + cols].round(1).to_string(index=False))
    print("\nper model (sum over methods):")
    print(ok.groupby("model", sort=False)[cols].sum().round(0).to_string())
    print("\nper method (sum over models):")
    print(ok.groupby("method", sort=False)[cols].sum().round(0).to_string())
    phase = ok[PHASES].sum()
    print("\nper phase (share of cell seconds):")
    print((phase / phase.sum()).round(3).to_string())
    serial = float(ok["total_seconds"].sum())
    full = len(methods) == len(DEFAULT_METHODS) and len(models) == len(MODELS)
    grid_proj = project(ok, args.n_jobs)
    proj_wall = warmup_s + grid_proj
    proj_cpu = warmup_cpu + grid_proj * float(ok["cpu_seconds"].sum() / ok["total_seconds"].sum())
    summary = {
        "cells": int(len(res)), "failed": int((res["status"] != "ok").sum()), "n_jobs": args.n_jobs,
        "warmup_seconds": round(warmup_s, 1), "warmup_cpu_seconds": round(warmup_cpu, 1),
        "grid_seconds": round(grid_s, 1), "protocol_seconds": round(protocol_s, 2),
        "protocol_share_of_grid": round(protocol_s / grid_s, 4) if grid_s else None,
        "total_minutes": round(total_s / 60, 2), "target_minutes": args.target_minutes,
        "within_target": bool(total_s / 60 <= args.target_minutes) if full else None,
        "sum_cell_seconds": round(serial, 1), "parallel_speedup": round(serial / grid_s, 2) if grid_s else None,
        "phase_seconds": {k: round(float(v), 1) for k, v in phase.items()},
        "model_seconds": {k: round(float(v), 1) for k, v in ok.groupby("model")["total_seconds"].sum().items()},
        "projected_full_minutes_wall": round(proj_wall / 60, 2),
        "projected_full_minutes_cpu": round(proj_cpu / 60, 2),
        "loadavg_before": [round(x, 2) for x in load_before], "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "out": str(out),
    }
    print(f"\ntotal {total_s / 60:.1f} min (warm-up {warmup_s / 60:.1f}, grid {grid_s / 60:.1f}) "
          f"vs target {args.target_minutes:.0f} min; projected full 7x3 grid: {proj_wall / 60:.1f} min from wall "
          f"times, {proj_cpu / 60:.1f} min from CPU times; the pruning protocol's passes: {protocol_s:.1f} s "
          f"({100 * protocol_s / grid_s:.1f} % of the grid)")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
