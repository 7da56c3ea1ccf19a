"""Side by side: mitigation methods × generators × seeds (:func:`run_grid`).

Each cell is :func:`memviz.compare.cell.run_cell`; the figures are described in
:mod:`memviz.compare.cell` and :mod:`memviz.compare.results`, the settings in
:class:`memviz.compare.config.CompareConfig`.

DynamicCut needs a ranking: from a finished warm-up ``config.run_dir`` on the SAME
training table (checked with the run's data fingerprint), or, without one, a warm-up
run first into ``OUT/warmup`` (:func:`memviz.warmup.run.ensure_warmup`: reused or resumed on
a rerun) with the test split as its hold-out, so that it measures its floor. The same
TabDDPM ranking prunes the data of every model and seed (transferability).
``dynamiccut_excess`` ranks by the excess score, which needs that warm-up's floor: a
warm-up without one is a one-line error before any cell starts.

With a test split, every cell gets the floor and its excess over it, and every pruning
cell its figures against the kept rows and the baseline's control
(:mod:`memviz.compare.protocol`), computed after the cells.

Output folder::

    OUT/experiment.json        settings, data fingerprints, selection size, the floor
    OUT/selection.csv          the (raw) DynamicCut ranking (row_id, score, rank, removed)
    OUT/selections/{method}_{seed}.parquet         each pruning cell's selection: row_id,
                               removed (and score, rank for a ranked method)
    OUT/cells/{method}_{model}_{seed}_{key}.json   one per finished cell
    OUT/synthetic/{method}_{model}_{seed}.parquet  the generated rows of each cell
    OUT/floors/, OUT/protocol/ the floors and the controls (:mod:`memviz.compare.protocol`)
    OUT/results.csv            every cell of the grid, rewritten as each one finishes
    OUT/column_fidelity.csv    every finished cell's per-column fidelity (method, model, seed, column,
                               kind, metric, value, reference: :mod:`memviz.evaluate.fidelity`)
    OUT/writer.lock            held by the process writing the folder (the run store's lock: a
                               second ``run_grid`` into the same folder is a one-line BadRunFolder)

``key`` hashes every setting that changes a cell (data fingerprints, epochs, model
parameters, device, ratio, the selection for the methods that use it, a DP arm's privacy
settings, the dynamic threshold's...): a rerun skips the cells whose JSON exists with status
``ok`` and recomputes the others. A DP arm that cannot run here (:func:`blocked_arms`: Opacus or OpenDP missing, an
ε no noise reaches) has its cells recorded ``failed`` with that one line, and every other cell runs. The methods
only TabDDPM runs (``dp@ε``, ``dynamic_threshold``:
:data:`memviz.compare.methods.TABDDPM_ONLY`) have no cell for the other generators (the manifest
lists them under ``skipped``).

Progress is reported as event dicts: the warm-up's own (``{"event": "epoch", ...}``,
``{"event": "check", ...}``) with ``"phase": "warmup"`` added, then one
``{"event": "cell", "done", "total", "method", "model", "seed", "status", "mem_ratio",
"seconds"}`` per finished cell; with ``cell_progress``, each cell's own ``cell_phase`` and
``cell_epoch`` events while it runs (:mod:`memviz.compare.cell`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from memviz.compare.backends import run_cells
from memviz.compare.cell import CellOutput, CellSpec, GridContext, original_engine
from memviz.compare.config import CheckedCompare, CompareConfig
from memviz.compare.methods import (
    AUGMENTS,
    IMPLEMENTATION,
    NEEDS_FLOOR,
    NEEDS_SELECTION,
    PRETRAINING,
    PRUNES,
    SELECTION_SCORE,
    SHORTENS,
    TABDDPM_ONLY,
    DPArm,
    EarlyStop,
    base_method,
    pretraining_key,
    random_count,
    removed_ids,
    removed_rows,
)
from memviz.compare.protocol import Floors, protocol_pass, with_protocol
from memviz.compare.ranking import check_run, selections_from_run
from memviz.compare.results import COLUMNS, results_frame
from memviz.device import torch_threads
from memviz.errors import BadOption, BadRunFolder, MemvizError
from memviz.evaluate.fidelity import FIDELITY_COLUMNS
from memviz.evaluate.quality import CheckQuality
from memviz.evaluate.synthetic import mle
from memviz.io import (
    atomic_write_csv,
    atomic_write_json,
    atomic_write_parquet,
    read_json,
    settings_key,
    strict_loads,
)
from memviz.models.privacy import PrivacyConfig
from memviz.tables.data import Table, fingerprint
from memviz.warmup.frontier import StopRule, recommend
from memviz.warmup.run import WarmupConfig, ensure_warmup, load_warmup
from memviz.warmup.store import RunStore, versions

FORMAT = "memviz.compare/1"
EXPERIMENT = "experiment.json"
FIDELITY = "column_fidelity.csv"
Progress = Callable[[dict], None]


def run_grid(train: Table, test: Table | None, config: CompareConfig | CheckedCompare, out_dir: str | Path, *,
             progress: Progress | None = None, cell_progress: Progress | None = None) -> pd.DataFrame:
    """Run every (method, model, seed) cell not finished yet; return the results of the whole grid.

    Parameters
    ----------
    train, test : the original training table and the real test split (None: no MLE/DCR and
        no floor). The test split is also the floor's hold-out (:mod:`.protocol`).
    config : a :class:`CheckedCompare`, run as given; or a :class:`CompareConfig`, checked here once
        (:meth:`CompareConfig.checked`), before any work.
    out_dir : results folder (see the module docstring); reruns skip finished cells.
    progress : called with event dicts (see the module docstring).
    cell_progress : called with each cell's in-cell events (``cell_phase``, ``cell_epoch``:
        :mod:`memviz.compare.cell`) from the process that runs the cell, so it must pickle
        when cells run in other processes (the job's :class:`memviz.jobs.spec.EventLog` does).

    Returns
    -------
    DataFrame, one row per cell of the grid (:data:`memviz.compare.results.COLUMNS`), grid
    order, with ``relative_reduction`` filled where the baseline cell of the same model and
    seed is there, the floor and excess where there is a test split, and the kept-rows
    figures of the pruning cells (:mod:`memviz.compare.protocol`).
    """
    t_start = time.perf_counter()
    checked = config if isinstance(config, CheckedCompare) else config.checked()
    cfg = checked.settings
    dc = cfg.dynamiccut  # (p, k, T) checked once, by checked(): below, nothing checks them again
    if dc is not None:
        dc.budget(len(train))  # a p removing every row fails now, not after a warm-up
    scores = tuple(dict.fromkeys(SELECTION_SCORE[m] for m in cfg.methods if m in NEEDS_SELECTION)) or ("raw",)
    if NEEDS_FLOOR & set(cfg.methods):
        if cfg.run_dir is not None:
            check_run(cfg.run_dir, train, need_floor=True)
        elif test is None:
            raise BadOption("dynamiccut_excess needs a floor: give a test split (the warm-up's hold-out) or a "
                              "warm-up run measured with a hold-out")
    blocked = blocked_arms(cfg, checked.arms, train)
    threads = cfg.threads
    if threads is None and not (cfg.backend == "dask" and cfg.scheduler is not None):
        threads = 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writer = RunStore(out).acquire()  # one writer per folder (the run store's lock): BadRunFolder for a second
    try:
        return _run_grid(train, test, checked, out, threads, scores, progress, t_start, cell_progress, blocked)
    finally:
        writer.release()


def _run_grid(train: Table, test: Table | None, compared: CheckedCompare, out: Path, threads, scores,
              progress: Progress | None, t_start: float,
              cell_progress: Progress | None = None, blocked: dict | None = None) -> pd.DataFrame:
    """:func:`run_grid` once it holds the folder's writer lock (``blocked``: :func:`blocked_arms`, whose cells are
    recorded failed with their reason, never run)."""
    cfg = compared.settings
    dc = cfg.dynamiccut
    selections, sel_info, stop = {}, {}, None
    if cfg.needs_ranking:
        run_dir = cfg.run_dir
        if run_dir is None:
            with torch_threads(threads):
                wres = ensure_warmup(train, ranking_warmup_config(cfg), out / "warmup", progress=_tagged(progress, "warmup"),
                                     holdout=test, quality=CheckQuality)
            run_dir = out / "warmup"
            if "excess" in scores and wres.floor is None:
                raise BadRunFolder(f"{run_dir}: this warm-up was made without a floor; delete it to rerun it with the "
                                   "test split as hold-out, or leave dynamiccut_excess out")
        sels = selections_from_run(run_dir, train, params=dc, scores=scores)
        sel = sels.get("raw") or next(iter(sels.values()))
        atomic_write_csv(out / "selection.csv", sel.to_frame())
        selections = {score: removed_ids(x) for score, x in sels.items()}
        sel_info = {"run_dir": str(run_dir), "k": sel.k, "T": sel.T, "n_removed": int(sel.n_remove),
                    "scores": list(sels)}
        if SHORTENS & set(cfg.methods):
            stop = early_stop_point(run_dir, compared.stop_rule)
    else:
        sels = {}
    train_fp = fingerprint(train)
    test_fp = fingerprint(test) if test is not None else None
    shared = {"v": 1, "train": train_fp, "test": test_fp,
              "epochs": cfg.epochs, "device": cfg.device, "distance": cfg.distance,
              "pruned_reference": cfg.pruned_reference}
    sel_fp = {score: settings_key(np.sort(ids).tolist()) for score, ids in selections.items()}
    raw_ids = selections.get("raw", next(iter(selections.values()), None))
    n_random = random_count(train, raw_ids, dc) if "random" in cfg.methods else None

    def key(method, model, seed):
        d = {**shared, "method": method, "model": model, "seed": seed, "params": cfg.model_params.get(model, {})}
        if method in NEEDS_SELECTION:
            d["selection"] = sel_fp[SELECTION_SCORE[method]]
        if method == "random":
            d["n_remove"] = n_random
        if method in PRETRAINING:
            d["ranking"] = pretraining_key(method, len(train), dc)
        if method in AUGMENTS:
            d["ratio"] = cfg.ratio
        if method in SHORTENS:
            d["stop"] = {"epoch": stop.epoch, "warmup_epochs": stop.warmup_epochs}
        if base_method(method) in IMPLEMENTATION:
            d["implementation"] = IMPLEMENTATION[base_method(method)]
        if base_method(method) == "dp":
            d["privacy"] = cfg.privacy
        if method == "dynamic_threshold":
            d["dynamic"] = cfg.dynamic
        return settings_key(d)

    def runs(method, model) -> bool:
        return base_method(method) not in TABDDPM_ONLY or model == "tabddpm"

    specs = [CellSpec(me, mo, s, key(me, mo, s)) for s in cfg.seeds for mo in cfg.models for me in cfg.methods
             if runs(me, mo)]
    skipped = [f"{me} x {mo}" for mo in cfg.models for me in cfg.methods if not runs(me, mo)]
    removed_by = {(me, s): removed_rows(me, train, selection=selections.get(SELECTION_SCORE.get(me, "raw"), raw_ids),
                                        seed=s, p=dc)
                  for me in cfg.methods if me in PRUNES for s in cfg.seeds}
    _write_selections(out, train, sels, removed_by)
    manifest = {"format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "config": cfg.to_dict(), **shared,
                "methods": cfg.methods, "models": cfg.models, "seeds": cfg.seeds, "p": cfg.p, "ratio": cfg.ratio,
                "model_params": cfg.model_params, "selection": sel_info,
                "early_stop": stop.to_dict() if stop is not None else None,
                "train_source": train.source,
                "n_train": len(train), "test_source": test.source if test is not None else None,
                "skipped": skipped, "versions": versions()}
    atomic_write_json(out / EXPERIMENT, manifest)
    records = {s.name: r for s in specs if (r := _finished(out, s)) is not None}
    todo = [s for s in specs if s.name not in records]
    total = len(specs)
    ctx = GridContext(train, test, train_fp, selections, dc, cfg.ratio, cfg.epochs, cfg.model_params,
                      cfg.device, cfg.distance, cfg.pruned_reference, _mle_reference(train, test, {s.seed for s in todo}),
                      threads, stop, cell_progress, compared.arms, compared.dynamic)
    floors = None if test is None else Floors(out, train, test, train_fp, test_fp, cfg.distance, cfg.device)
    floor = None
    if floors is not None:
        floor = floors.cached([])
        if floor is None:
            with torch_threads(threads):
                floor = floors.get([], engine=original_engine(ctx))
        manifest["floor"] = {"floor": floor.floor, "floor_ci": list(floor.ci), "n_holdout": floor.n_holdout,
                             "key": floors.key([])}
    extra: dict = {}

    def table():
        return results_frame([with_protocol(records[s.name], floor, extra.get(s.name)) for s in specs
                              if s.name in records])

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
        atomic_write_csv(out / "results.csv", table())
        atomic_write_csv(out / FIDELITY, fidelity_frame(records, specs))
        if progress is not None:
            progress({"event": "cell", "done": len(records), "total": total, "method": spec.method,
                      "model": spec.model, "seed": spec.seed, "status": rec["status"],
                      "mem_ratio": rec.get("mem_ratio"), "error": rec.get("error") or "",
                      "seconds": rec.get("total_seconds")})

    if progress is not None:
        progress({"event": "cells", "done": len(records), "total": total})
    for spec in [s for s in todo if s.method in (blocked or {})]:   # an arm that cannot run costs no other cell
        finished(CellOutput({"method": spec.method, "model": spec.model, "seed": spec.seed, "key": spec.key,
                             "status": "failed", "error": blocked[spec.method], "notes": ""}, None))
    todo = [s for s in todo if s.method not in (blocked or {})]
    if todo:
        run_cells(todo, ctx, cfg.n_jobs, cfg.backend, cfg.scheduler, finished)
    with torch_threads(threads):
        extra.update(protocol_pass(out, records, specs, removed_by, train, floors, lambda: original_engine(ctx),
                                   cfg.distance, cfg.device))
    results = table()
    atomic_write_csv(out / "results.csv", results)
    atomic_write_csv(out / FIDELITY, fidelity_frame(records, specs))
    manifest.update(seconds=time.perf_counter() - t_start, cells=total, ran=len(todo),
                    failed=int((results["status"] != "ok").sum()))
    atomic_write_json(out / EXPERIMENT, manifest)
    return results


def blocked_arms(cfg: CompareConfig, arms: tuple[PrivacyConfig, ...], train: Table) -> dict[str, str]:
    """arm name -> the one line why it cannot train privately on ``train`` here (Opacus or OpenDP missing, an ε
    no noise reaches, a column whose statistics could never be released...), found before any work from public
    facts only; its cells are recorded failed, the others run."""
    from memviz.models.tabddpm import TabDDPM  # lazy: loads sklearn, torch (optional)

    out = {}
    for privacy in arms:
        name = DPArm(privacy.epsilon).name
        params = {**cfg.model_params.get("tabddpm", {}), **({"epochs": cfg.epochs} if cfg.epochs else {})}
        try:
            TabDDPM(device="cpu", privacy=privacy, **params).check_privacy(len(train), train.schema)
        except MemvizError as exc:
            out[name] = str(exc)
    return out


def _write_selections(out: Path, train: Table, sels: dict, removed_by: dict) -> None:
    """``OUT/selections/{method}_{seed}.parquet`` of every pruning method and seed: row_id and
    removed for every training row, plus score and rank (1 = removed first) for a ranked method."""
    for (method, seed), removed in removed_by.items():
        score = SELECTION_SCORE.get(method)
        if score is not None:
            frame = sels[score].to_frame().sort_values("row_id", kind="stable")
            frame = frame[["row_id", "removed", "score", "rank"]]
        else:
            frame = pd.DataFrame({"row_id": train.row_ids, "removed": np.isin(train.row_ids, removed)})
        atomic_write_parquet(out / "selections" / f"{method}_{seed}.parquet", frame.reset_index(drop=True))


def ranking_warmup_config(cfg: CompareConfig) -> WarmupConfig:
    """The warm-up a comparison runs for its ranking when it is given none."""
    base = {"epochs": cfg.epochs, "seed": 0, "device": cfg.device, "distance": cfg.distance,
            "model_params": dict(cfg.model_params.get("tabddpm", {}))}
    return WarmupConfig(**{**base, **(cfg.warmup or {})})


def early_stop_point(run_dir, rule: StopRule) -> EarlyStop:
    """Early stop's epoch: the warm-up's recommended check (:func:`memviz.warmup.frontier.recommend`
    with ``rule``; every check can be chosen, since the cells retrain) with its reason."""
    res = load_warmup(run_dir)
    return EarlyStop(recommend(res.per_check, rule), int(res.config.epochs))


def read_experiment(out_dir: str | Path) -> dict:
    """A comparison's experiment.json (BadRunFolder when missing or unreadable)."""
    return read_json(Path(out_dir) / EXPERIMENT, "comparison manifest")


@dataclass(frozen=True)
class GridProgress:
    """How far a comparison got: ``done`` of its ``total`` cells have a result (ok or failed); ``finished``
    when the grid ran to its end (experiment.json records its seconds)."""

    done: int
    total: int
    finished: bool

    def to_dict(self) -> dict:
        return {"cells_done": self.done, "cells_total": self.total, "finished": self.finished}


def grid_progress(out_dir: str | Path, done: int) -> GridProgress:
    """The progress of the comparison in ``out_dir`` with ``done`` cells in its results.csv: its grid's size from
    experiment.json (the cells it records at its end; before, its methods x models x seeds less the pairs it
    skips, per seed)."""
    m = read_experiment(out_dir)
    finished = "seconds" in m and isinstance(m.get("cells"), int)
    if finished:
        total = int(m["cells"])
    else:
        per_seed = len(m.get("methods") or ()) * len(m.get("models") or ()) - len(m.get("skipped") or ())
        total = max(per_seed * len(m.get("seeds") or ()), int(done))
    return GridProgress(int(done), total, finished)


def _tagged(progress: Progress | None, phase: str) -> Progress | None:
    if progress is None:
        return None
    return lambda ev: progress({**ev, "phase": phase})



def _finished(out: Path, spec: CellSpec) -> dict | None:
    f = out / "cells" / f"{spec.name}_{spec.key}.json"
    if not f.exists():
        return None
    try:
        rec = strict_loads(f.read_text(encoding="utf-8"))   # a hand-edited NaN: not finished
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None
    if not isinstance(rec, dict) or rec.get("status") != "ok" or not (out / str(rec.get("synthetic", ""))).is_file():
        return None
    return {c: rec.get(c) for c in (*COLUMNS, "column_fidelity") if c in rec}


def fidelity_frame(records: dict, specs) -> pd.DataFrame:
    """The per-column fidelity of every finished cell, in grid order (the module docstring's column_fidelity.csv)."""
    rows = [{"method": s.method, "model": s.model, "seed": s.seed, **r}
            for s in specs for r in (records.get(s.name) or {}).get("column_fidelity") or ()]
    return pd.DataFrame(rows, columns=["method", "model", "seed", *FIDELITY_COLUMNS])


def _mle_reference(train: Table, test: Table | None, seeds) -> dict:
    """seed -> score of the MLE booster fitted on the real training table (the reference line)."""
    if test is None or train.schema.target is None:
        return {}
    # the "synthetic" table IS the real training table here, so .score is the reference
    # (real_score is passed to skip fitting the same booster a second time)
    return {s: mle(train, train, test, seed=s, real_score=float("nan")).score for s in sorted(seeds)}
