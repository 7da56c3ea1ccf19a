"""The study, one seeded and resumable command (``memviz study``).

Parts (``parts``; every one reuses what a previous run finished):

* ``floors``  — the floor table: the official test split against the full training split,
  both distances (:mod:`.floors`);
* ``knobs``   — TabDDPM's excess against epochs and training rows (:mod:`.knobs`);
* ``budget``  — MLE of CTGAN / TVAE against epochs on one dataset (:mod:`.knobs`);
* ``warmups`` — one warm-up per seed with its floor; dynamics against the null model;
  selections and their overlap (:mod:`.warmups`);
* ``main``, ``early``, ``transfer``, ``stop`` — the mitigation grids (:mod:`.mitigation`);
* ``pilot`` — the pilot across scales (:mod:`.pilot`; hours on a CPU): **opt-in**, not in
  :data:`DEFAULT_PARTS`, run only when named;
* the summaries and ``study.md`` are always rebuilt from what is stored.

**Committed seeds are not rerun.** The run folders (``runs/``) are not committed. A seed whose
warm-up record is in the committed ``summary.json`` and whose cells of every grid asked for are
``ok`` in the committed ``results.csv`` is skipped: no warm-up, no cell; its committed rows of
``per_check.csv``, ``null.csv``, ``selections.csv`` and ``results.csv`` are kept. So a later session
(a fresh clone) rerunning the same command continues with the seeds not yet committed. A seed whose
finished warm-up is in the run folders here is read from them again (they are newer than the
committed tables; finished warm-ups and cells are reused, not rerun). Seeds not in ``--seeds`` keep
their committed rows.

Output (``OUT`` = ``--out``)::

    OUT/floors/{dataset}_{distance}.json          part 1
    OUT/{scale}/knobs/{dataset}/knob_*.json        part 2 (knob runs)
    OUT/{scale}/budget/budget_*.json               part 6
    OUT/{scale}/{dataset}/summary.json             everything below, summarized
    OUT/{scale}/{dataset}/results.csv              every cell (all grids, all seeds)
    OUT/{scale}/{dataset}/selections.csv           DynamicCut's removed rows per warm-up seed, score, T
    OUT/{scale}/{dataset}/per_check.csv            every warm-up's per-check mem, floor, excess
    OUT/{scale}/{dataset}/null.csv                 every statistic against its null, per warm-up seed
    OUT/{scale}/{dataset}/runs/                    warm-ups and comparison folders (bulky, not committed)
    OUT/figures.html                               the figures
"""
from __future__ import annotations

import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Callable

import pandas as pd

from memviz.compare.threeway import three_way
from memviz.device import resolve_device
from memviz.errors import BadOption, BadTable
from memviz.io import atomic_write_csv, atomic_write_json, atomic_write_text, read_json
from memviz.measure.floor import holdout_floor
from memviz.mitigate.associations import cluster_rules
from memviz.study.figures import write_figures
from memviz.study.findings import claim_tests, heavy_tail_test, null_findings
from memviz.study.floors import DISTANCES, floor_table, study_tables
from memviz.study.inference import adjust
from memviz.study.knobs import budget_table, knob_table
from memviz.study.markdown import render_markdown
from memviz.study.mitigation import (
    GRIDS,
    available_methods,
    collect,
    dataset_methods,
    grid_specs,
    merge_stored,
    method_summary,
    run_seed_grid,
    stop_records,
    stop_warmup_dir,
    with_steps,
)
from memviz.study.pilot import (
    PILOT,
    refresh_pilot,
    run_pilot,
    stored_design,
    stored_pilot,
)
from memviz.study.scales import SCALES, StudyScale
from memviz.study.warmups import dataset_warmups, selection_frame, selection_overlap
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore

PARTS = ("floors", "pilot", "knobs", "budget", "warmups", "main", "early", "transfer", "stop", "private")
#: what a plain ``memviz study`` runs: every part but the pilot (hours), which runs only when named
DEFAULT_PARTS = tuple(p for p in PARTS if p != "pilot")
DATASETS = ("adult", "default", "shoppers")


def _scale(name: str, seeds=None) -> StudyScale:
    if name not in SCALES:
        raise BadOption(f"scale {name!r}: unknown (use {', '.join(SCALES)})")
    sc = SCALES[name]
    return sc if seeds is None else replace(sc, seeds=tuple(int(s) for s in seeds))


def _check_parts(parts) -> tuple:
    parts = tuple(parts)
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise BadOption(f"part {bad[0]!r}: unknown (use {', '.join(PARTS)})")
    return parts


def dataset_study(name: str, folder: Path, scale: StudyScale, out: Path, parts=DEFAULT_PARTS, device: str = "cpu",
                  n_jobs: int = 2, progress: Callable[[str], None] | None = None) -> dict:
    """Warm-ups, null model, selections and grid of one dataset at one scale; writes and returns its summary."""
    say = progress or (lambda msg: None)
    train, test, n_full = study_tables(folder, scale)
    d_out = Path(out) / scale.name / name
    runs = d_out / "runs"
    summary_path = d_out / "summary.json"
    prev = read_json(summary_path, "study summary") if summary_path.exists() else {}
    rec = {"dataset": name, "scale": asdict(scale), "n_train": len(train), "n_train_full": n_full,
           "n_test": len(test)}
    rec["floors"] = prev.get("floors") or {d: _floor_figures(train, test, d, device) for d in DISTANCES}
    analyses = None
    grids = [g for g in GRIDS if g in parts
             and (g != "transfer" or scale.transfer_datasets is None or name in scale.transfer_datasets)]
    specs = grid_specs(scale, name, 0, {f"{f:g}": 1 for f in scale.T_fracs}, runs, device, n_jobs, len(train))
    budget = {g: specs[g].model_params.get("tabddpm", {}).get("steps") for g in grids if g in specs}
    done = committed_seeds(prev, d_out / "results.csv", {g: specs[g].methods for g in grids if g in specs},
                           scale.seeds, steps=budget) if prev else set()
    done -= {s for s in done if (runs / f"analysis_s{s}.json").is_file()}  # run folders here are newer: reread
    todo = replace(scale, seeds=tuple(s for s in scale.seeds if s not in done))
    # the stop grid runs its own warm-ups (:func:`memviz.study.mitigation.stop_warmup_dir`), not the scale's;
    # the private grid needs none
    warm = "warmups" in parts or any(g not in ("stop", "private") for g in grids)
    if done and (warm or grids):
        say(f"{scale.name}/{name}: seeds {', '.join(map(str, sorted(done)))} committed, not rerun")
    if todo.seeds and warm:
        say(f"{scale.name}/{name}: {len(todo.seeds)} warm-ups on {len(train):,} rows")
        analyses = dataset_warmups(train, test, todo, runs, device, n_jobs)
        sel = _with_committed(d_out / "selections.csv", selection_frame(analyses), todo.seeds)
        atomic_write_csv(d_out / "selections.csv", sel)
        atomic_write_csv(d_out / "per_check.csv", _with_committed(d_out / "per_check.csv", pd.concat(
            [pd.DataFrame(a["per_check"]).assign(seed=a["seed"]) for a in analyses], ignore_index=True), todo.seeds))
        atomic_write_csv(d_out / "null.csv", _with_committed(
            d_out / "null.csv", pd.DataFrame([f for a in analyses for f in a["null"]]), todo.seeds))
        kept = [w for w in prev.get("warmups", []) if w["seed"] not in todo.seeds]
        rec["warmups"] = sorted(kept + [{k: a[k] for k in ("seed", "epochs", "n_checks", "T", "seconds", "summary",
                                                           "early", "per_check", "heavy_tail_null", "floor") if k in a}
                                        for a in analyses], key=lambda w: w["seed"])
        rec["overlap"] = selection_overlap(sel, len(train))
    else:
        rec.update({k: prev[k] for k in ("warmups", "overlap") if k in prev})
    # the null-model findings are recomputed from the committed per-seed comparisons (null.csv)
    null_csv = d_out / "null.csv"
    rec["null"] = null_findings(pd.read_csv(null_csv)).to_dict(orient="records") if null_csv.is_file() else []
    rec["heavy_tail"] = heavy_tail_test([w.get("heavy_tail_null") for w in rec.get("warmups", [])])
    seeds_T = {w["seed"]: w["T"] for w in rec.get("warmups", [])}
    for grid in grids:
        for seed in todo.seeds:
            say(f"{scale.name}/{name}: {grid} grid of seed {seed}")
            run_seed_grid(grid, train, test, scale, name, seed, seeds_T[seed], runs, device, n_jobs,
                          progress=lambda ev: _say_cell(say, f"{scale.name}/{name}", ev))
    stop_frontier(d_out, runs, scale.seeds)
    # cells finished in the run folders replace the committed ones of the same grid, method, model and seed;
    # without run folders (they are not committed) the committed results.csv is the table
    results = merge_stored(d_out / "results.csv", collect(train, scale, seeds_T, runs, device))
    if results is not None:
        results = with_steps(results, scale)
        atomic_write_csv(d_out / "results.csv", results)
        results = pd.read_csv(d_out / "results.csv")  # one code path: what is rendered is what is committed
    rec["clusters"] = prev.get("clusters") or _clusters(train)
    if results is not None:
        rec["methods_left_out"] = list(available_methods(dataset_methods(scale, name))[1])
        rec["summary"] = method_summary(results).to_dict(orient="records")
        rec["stop"] = stop_records(results)
        rec["tests"] = claim_tests(results)
        rec["three_way"] = three_way(results[results["model"] == "tabddpm"]).to_dict(orient="records")
        rec["cells"] = _cell_costs(results)
    atomic_write_json(summary_path, rec)
    return rec


def committed_seeds(prev: dict, results_csv: Path, grid_methods: dict, seeds, steps: dict | None = None) -> set:
    """The seeds of ``seeds`` whose warm-up is recorded in the committed summary (``prev``) and whose cells
    of every grid in ``grid_methods`` (grid -> methods) are ``ok`` in the committed ``results_csv``.

    ``steps`` (grid -> the optimiser steps its TabDDPM cells get now, None for a grid with no budget, such
    as ``stop``): a TabDDPM cell committed with other steps (the second edition's augmented arms at 250
    rows: 8,000 against the baseline's 4,000) does not count, so a rerun under the equal-steps budget
    reruns its seed instead of skipping it."""
    have = {int(w["seed"]) for w in prev.get("warmups", [])} & {int(s) for s in seeds}
    if not grid_methods:
        return have
    if not Path(results_csv).is_file():
        return set()
    res = pd.read_csv(results_csv)
    ok = res[res["status"] == "ok"]
    for g, budget in (steps or {}).items():
        if budget is not None and "steps" in ok.columns:
            tab = (ok["grid"].astype(str) == g) & (ok.get("model", "tabddpm") == "tabddpm")
            ok = ok[~tab | (pd.to_numeric(ok["steps"], errors="coerce") == int(budget))]
    cells = set(zip(ok["grid"].astype(str), ok["method"].astype(str), ok["seed"].astype(int)))
    need = lambda g, m: m + "_q" if g == "early" else m  # noqa: E731  (collect's renaming)
    return {int(s) for s in seeds if int(s) in have
            and all((g, need(g, m), int(s)) in cells for g, ms in grid_methods.items() for m in ms)}


def stop_frontier(d_out: Path, runs: Path, seeds) -> None:
    """``stop_per_check.csv``: every check of the stop grid's warm-ups (mem ratio, floor, excess with its
    interval, copy share, Shape, Trend, quality), the frontier early stop chose from; seeds with a finished
    warm-up in the run folders replace their committed rows."""
    frames = []
    for s in seeds:
        w = stop_warmup_dir(runs, s)
        if (w / "manifest.json").is_file() and RunStore.open(w).read().status == "finished":  # not one still running
            frames.append(load_warmup(w).per_check.assign(seed=s))
    if frames:
        fresh = pd.concat(frames, ignore_index=True)
        path = Path(d_out) / "stop_per_check.csv"
        atomic_write_csv(path, _with_committed(path, fresh, sorted(fresh["seed"].unique())))


def _with_committed(path: Path, fresh: pd.DataFrame, rerun) -> pd.DataFrame:
    """``fresh`` (the seeds in ``rerun``) with the committed rows of every other seed (kept: skipped, or
    not asked for by ``--seeds``), by seed."""
    if not Path(path).is_file():
        return fresh
    old = pd.read_csv(path)
    return pd.concat([old[~old["seed"].isin(list(rerun))], fresh], ignore_index=True).sort_values("seed",
                                                                                                   kind="stable")


def _clusters(train) -> dict:
    """TabCutMixPlus's column clusters under each association rule (empty before the comparison has them)."""
    return {rule: [list(c) for c in cl] for rule, cl in cluster_rules(train).items()}


def _floor_figures(train, test, distance: str, device: str) -> dict:
    fl = holdout_floor(train, test, distance=distance, device=device)
    return {"floor": fl.floor, "low": fl.low, "high": fl.high, "n_holdout": fl.n_holdout,
            "n_reference": fl.n_reference, "seconds": fl.seconds}


def _cell_costs(results: pd.DataFrame) -> dict:
    ok = results[results["status"] == "ok"]
    return {"n_cells": int(len(ok)), "n_failed": int((results["status"] != "ok").sum()),
            "seconds": float(pd.to_numeric(ok["total_seconds"], errors="coerce").sum()),
            "cpu_seconds": float(pd.to_numeric(ok["cpu_seconds"], errors="coerce").sum())}


def _say_cell(say, where: str, ev: dict) -> None:
    if ev.get("event") == "cell":
        what = f"mem {ev['mem_ratio']:.1%}" if ev.get("status") == "ok" else f"FAILED {ev.get('error', '')}"
        say(f"{where}: {ev.get('grid')} {ev['method']}/{ev['model']}/seed {ev['seed']}: {what} "
            f"({ev.get('seconds') or 0:.0f} s)")


def run_study(data_dir: str | Path, out: str | Path, scales=("cpu", "regime"), datasets=DATASETS, seeds=None,
              parts=DEFAULT_PARTS, device: str = "auto", n_jobs: int = 2, markdown: str | Path | None = None,
              progress: Callable[[str], None] | None = None) -> dict:
    """Run the study's parts at each scale on each dataset, then write the summaries and the document.

    Returns ``{"floors": [...], scale: {"knobs": [...], "budget": [...], dataset: summary}}``.
    ``markdown``: where ``study.md`` goes (default ``OUT/study.md``). ``device`` ``"auto"`` is
    resolved first (``"cuda"`` or ``"cpu"``): runs and cells are keyed by the device they ran on.
    """
    say = progress or (lambda msg: None)
    device = resolve_device(device).type
    data_dir, out = Path(data_dir), Path(out)
    parts = _check_parts(parts)
    sc_list = [_scale(s, seeds) for s in scales]
    if not data_dir.is_dir():
        raise BadTable(f"{data_dir}: data folder not found")
    for name in datasets:
        if not (data_dir / name / "train.csv").exists():
            raise BadTable(f"{data_dir / name}: no train.csv (dataset {name!r} not in {data_dir})")
    t0 = time.perf_counter()
    study: dict = {"floors": floor_table(data_dir, datasets, out / "floors", device) if "floors" in parts
                   or (out / "floors").is_dir() else []}
    if "pilot" in parts and PILOT.dataset in datasets:
        run_pilot(data_dir, out, PILOT, device, say)
    refresh_pilot(out, PILOT)  # the run folders, where they are here, are newer than the committed table
    study["pilot"] = {"runs": stored_pilot(out), "design": stored_design(out)}
    for sc in sc_list:
        block: dict = {}
        if sc.knobs and ("knobs" in parts or (out / sc.name / "knobs").is_dir()):
            say(f"{sc.name}: knob runs")
            block["knobs"] = knob_table(data_dir, datasets, sc, out / sc.name / "knobs", n_jobs, device) \
                if "knobs" in parts else _stored_records(out / sc.name / "knobs")
        if sc.budget_runs and ("budget" in parts or (out / sc.name / "budget").is_dir()):
            say(f"{sc.name}: budget runs")
            block["budget"] = budget_table(data_dir, sc, out / sc.name / "budget", n_jobs, device) \
                if "budget" in parts else _stored_records(out / sc.name / "budget")
        names = [d for d in datasets if sc.datasets is None or d in sc.datasets]
        for name in names:
            block[name] = dataset_study(name, data_dir / name, sc, out, parts, device, n_jobs, progress)
        adjust_scale(block)
        for name in names:
            atomic_write_json(out / sc.name / name / "summary.json", block[name])
        study[sc.name] = block
    study["seconds"] = time.perf_counter() - t0

    write_figures(study, out)
    md = markdown if markdown is not None else out / "study.md"     # a path, or the CLI's checked OutputFile
    atomic_write_text(md, render_markdown(study, out, getattr(md, "path", md)))
    return study


def adjust_scale(block: dict) -> None:
    """Holm within each claim family over every dataset of one scale (:func:`memviz.study.inference.adjust`):
    the paired tests, the null-model statistics and the heavy tail get ``p_adj``, ``power`` and their label."""
    tests = []
    for s in block.values():
        if isinstance(s, dict) and "dataset" in s:
            tests += s.get("tests", []) + s.get("null", []) + ([s["heavy_tail"]] if s.get("heavy_tail") else [])
    adjust(tests)


def _stored_records(folder: Path) -> list[dict]:
    """Every JSON record under ``folder`` (knob or budget runs)."""
    return [{"dataset": f.parent.name, **read_json(f, "study record")} for f in sorted(Path(folder).rglob("*.json"))]
