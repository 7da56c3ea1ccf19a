"""The paper's findings on real tables: one seeded command that regenerates the evidence.

For each dataset folder (``train.csv``, ``test.csv``, ``meta.json``) under ``data_dir``:

1. **heavy tail**: a TabDDPM warm-up; the distribution of copies per training row and the
   share of all copies from the top 1 / 5 / 10 % rows (plus the Gini coefficient);
2. **Top vs Non-Top**: first-memorization epoch, forgetting events and early Mem-AUC,
   each with a two-sided Mann–Whitney U test;
3. **early identification**: precision / recall of the DynamicCut set scored on the
   first T epochs against the final Top group, for several T;
4. **comparison**: baseline, DynamicCut, DynamicCutMix, TabCutMix, TabCutMixPlus, SMOTE
   and random pruning × TabDDPM, CTGAN, TVAE over seeds (mean ± std): mem ratio,
   relative reduction, Shape, Trend, MLE and the real-data MLE line;
5. **transferability**: the TabDDPM ranking pruning CTGAN's and TVAE's data, against
   their own random-pruning control.

Scales (rows are subsampled with a fixed seed, keeping the original row positions as
``row_id``):

* ``tiny``  — seconds; what the tests run so that the command cannot silently break;
* ``cpu``   — a few hours on 2 CPU cores: 3,000 training rows and at most 1,000 test rows
  per dataset, the ``cpu-quick`` TabDDPM, CPU epochs for CTGAN/TVAE, 3 seeds;
* ``paper`` — the reference configuration for a GPU: full splits, the ``paper`` TabDDPM
  preset, 5 seeds.
"""
from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ..compare import CompareConfig, run_grid, summary_table
from ..data import Table, load_dataset
from ..dynamiccut import early_identification, early_identification_curve
from ..summaries import summarize
from ..errors import MemvizError
from ..io import atomic_write_json, atomic_write_text
from ..warmup import WarmupConfig, ensure_warmup
from ..viz.report import build_report, report_figures
from .findings import PAIRS, paired_difference
from .markdown import render_markdown
from .scales import REFERENCE, SCALES, StudyScale
from .util import _float

def subsample(table: Table, n: int | None, seed: int = 0) -> Table:
    """``n`` rows drawn without replacement (seeded), in their original order; ids kept."""
    if n is None or n >= len(table):
        return table
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(table.row_ids, size=n, replace=False))
    return table.subset(ids)


def _T_values(epochs: np.ndarray, fracs) -> list[int]:
    """Check epochs closest to (and at most) each fraction of the warm-up."""
    out = []
    for f in fracs:
        target = f * epochs.max()
        ok = epochs[epochs <= target + 1e-9]
        out.append(int(ok.max() if ok.size else epochs.min()))
    return sorted(set(out))


def dataset_study(name: str, folder: Path, out: Path, scale: StudyScale, device: str = "auto",
                  progress: Callable[[str], None] | None = None, n_jobs: int = 2) -> dict:
    """Run the five parts of the study on one dataset; returns a JSON-able dict (also saved)."""
    say = progress or (lambda msg: None)
    t0 = time.perf_counter()
    train_full, test_full = load_dataset(folder)
    if test_full is None:
        raise MemvizError(f"{folder}: the study needs a test.csv beside train.csv")
    train = subsample(train_full, scale.max_train, seed=0)
    test = subsample(test_full, scale.max_test, seed=1)
    out.mkdir(parents=True, exist_ok=True)

    # 1-3: warm-up and dynamics -------------------------------------------------------
    run_dir = out / "warmup"
    cfg = WarmupConfig(preset=scale.preset, epochs=scale.warmup_epochs, check_every=scale.check_every, seed=0,
                       device=device, model_params=dict(scale.model_params.get("tabddpm", {})))
    say(f"{name}: warm-up on {len(train)} rows")
    wres = ensure_warmup(train, cfg, run_dir)
    dyn = wres.dynamics
    summ = summarize(dyn).to_dict()
    totals = np.asarray(dyn.total)
    hist_edges = [0, 1, 2, 3, 5, 10, 20, 50, 100, 1000, 10 ** 9]
    hist = np.histogram(totals, bins=hist_edges)[0].tolist()
    Ts = _T_values(np.asarray(dyn.epochs), scale.T_fracs)
    early = [asdict(early_identification(dyn, p=scale.p, k=scale.k, T=T)) for T in Ts]

    # 4-5: comparison grid ---------------------------------------------------------------
    say(f"{name}: comparison grid {len(scale.methods)} methods x {len(scale.models)} models x "
        f"{len(scale.seeds)} seeds")
    config = CompareConfig(methods=scale.methods, models=scale.models, seeds=scale.seeds, p=scale.p, k=scale.k,
                           run_dir=str(run_dir), epochs=scale.model_epochs, device=device,
                           model_params=dict(scale.model_params), n_jobs=n_jobs)
    results = run_grid(train, test, config, out / "compare", progress=lambda ev: _say_cell(say, name, ev))
    summary = summary_table(results)
    # the ranking's transfer: each model's DynamicCut and random rows of the summary
    by_cell = summary.set_index(["model", "method"])
    transfer = []
    for model in scale.models:
        row = {"model": model}
        for method in ("dynamiccut", "random"):
            cell = by_cell.loc[(model, method)] if (model, method) in by_cell.index else None
            row[f"{method}_mean"] = None if cell is None else _float(cell["relative_reduction_mean"])
            row[f"{method}_std"] = None if cell is None else _float(cell["relative_reduction_std"])
        transfer.append(row)

    paired = [paired_difference(results, model, a, b) for model in scale.models
              for a, b in PAIRS if {a, b} <= set(scale.methods)]
    study = {
        "dataset": name, "scale": asdict(scale), "n_train": len(train), "n_train_full": len(train_full),
        "n_test": len(test), "warmup": {"run_dir": str(run_dir), "config": wres.config.to_dict(),
                                        "checks": int(len(wres.per_check)), "seconds": wres.seconds,
                                        "per_check": wres.per_check.to_dict(orient="list")},
        "heavy_tail": {"summary": summ, "histogram": {"edges": hist_edges, "counts": hist}},
        "early_identification": early,
        "comparison": summary.to_dict(orient="records"),
        "transferability": transfer,
        "paired": paired,
        "reference": REFERENCE.get(name),
        "seconds": time.perf_counter() - t0,           # this invocation (reused parts cost nothing)
        # what the results cost to compute, whenever they were computed: the warm-up's
        # wall time and the sum of the comparison cells' wall times (n_jobs run at once)
        "compute_seconds": {"warmup": float(wres.seconds),
                            "cells": float(pd.to_numeric(results.loc[results["status"] == "ok", "total_seconds"],
                                                         errors="coerce").sum()),
                            "n_cells": int((results["status"] == "ok").sum()), "n_jobs": int(n_jobs)},
    }
    atomic_write_json(out / "study.json", study)
    _write_report(out, name, wres, results)
    return study


def _say_cell(say, name: str, ev: dict) -> None:
    if ev.get("event") == "cell":
        what = f"mem {ev['mem_ratio']:.1%}" if ev.get("status") == "ok" else "FAILED"
        say(f"{name}: {ev['done']}/{ev['total']} {ev['method']}/{ev['model']}/seed {ev['seed']}: {what}")


def _write_report(out: Path, name: str, wres, results: pd.DataFrame) -> None:
    """A self-contained HTML report of one dataset's study (figures + results)."""
    ok = results[results["status"] == "ok"]
    figs = report_figures(wres.dynamics, wres.per_check, early_curve=early_identification_curve(wres.dynamics),
                          results=ok)
    html = build_report({"dataset": name, **{k: v for k, v in wres.summary().items() if k != "concentration"}},
                        figs, ok, {"dataset": name, **wres.config.to_dict()}, redacted=True,
                        title=f"memviz study: {name}")
    atomic_write_text(out / "report.html", html)


def run_study(data_dir: str | Path, out: str | Path, scale: str = "cpu", datasets=("adult", "default", "shoppers"),
              seeds=None, device: str = "auto", progress: Callable[[str], None] | None = None,
              n_jobs: int = 2) -> dict:
    """Run the study on every dataset; writes ``OUT/<dataset>/...``, ``OUT/study.json`` and ``OUT/study.md``.

    ``n_jobs`` comparison cells run in parallel (processes, one torch thread each). A rerun
    of the same command reuses the finished warm-ups and cells (e.g. to add seeds).
    """
    if scale not in SCALES:
        raise MemvizError(f"scale {scale!r}: unknown (use {', '.join(SCALES)})")
    sc = SCALES[scale]
    if seeds is not None:
        sc = StudyScale(**{**asdict(sc), "seeds": tuple(seeds)})
    data_dir, out = Path(data_dir), Path(out)
    if not data_dir.is_dir():
        raise MemvizError(f"{data_dir}: data folder not found")
    studies = {}
    for name in datasets:
        folder = data_dir / name
        if not (folder / "train.csv").exists():
            raise MemvizError(f"{folder}: no train.csv (dataset {name!r} not in {data_dir})")
        studies[name] = dataset_study(name, folder, out / name, sc, device=device, progress=progress, n_jobs=n_jobs)
    atomic_write_json(out / "study.json", studies)
    atomic_write_text(out / "study.md", render_markdown(studies, sc))
    return studies
