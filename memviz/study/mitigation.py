"""The mitigation grid of one dataset at one scale (parts 4, 5, 6), on the comparison floor.

For every seed s, three grids (:func:`memviz.compare.run_grid`, parts of the study of the
same names) prune with the DynamicCut ranking of **warm-up seed s** (same training rows, its
own floor):

* ``main`` — TabDDPM × the scale's methods, T = the first half;
* ``early`` — TabDDPM × ``early_methods`` with T = the first quarter (named ``<method>_q``);
* ``transfer`` — the transfer models × ``transfer_methods`` (TabDDPM's ranking), T = the
  first half;
* ``stop`` — TabDDPM × ``stop_methods`` (``early_stop``): retrained for E* epochs, E* the
  recommended epoch of seed s's own warm-up (``runs/stopwarmup_s{seed}``: the scale's settings, Shape
  and Trend at every check; the other grids' warm-ups and their committed records are left alone) (:func:`memviz.warmup.frontier.recommend`, default rule: the
  earliest check within 0.02 of the best quality whose excess interval reaches 0), compared with
  the ``main`` baseline of the same seed; its cells train E* · ⌈N / min(B, N)⌉ steps (recorded), not
  the baseline's: stopping earlier is the method;
* ``private`` — TabDDPM × ``private_methods`` (issue 38): DP-SGD at each ε (``dp@ε``, δ = 1/(10 N), the whole
  pipeline's: the transforms' histograms from 0.1 of it, the bounds and categories public, :mod:`memviz.study.public`) and
  the dynamic threshold (its checks draw the scale's ``warmup_samples`` rows), at the baseline's optimiser
  steps; no warm-up (neither ranks rows by a warm-up's), compared with the ``main`` grid's cells of the
  same seed;
* ``steps`` (collected only, run by ``docs/study/reruns``) — cells rerun at the baseline's
  optimiser steps where the second edition's budgets differed, named ``<method>_eq``.

Each writes its own folder (``runs/{grid}_s{seed}``); a rerun skips finished cells. The
finished cells of every grid are concatenated into one results table (:func:`collect`) with
columns ``grid`` and ``warmup_seed``, and ``relative_reduction`` recomputed against the
``main`` baseline of the same model and seed.

**Equal optimisation budgets.** Every TabDDPM cell of a scale trains for the same number of
optimiser steps, the baseline's: S = E · ⌈N / min(B, N)⌉ (E epochs, N training rows of the
scale, batch B), passed as TabDDPM's ``steps``; a method that adds rows (TabCutMix, SMOTE)
or removes them (pruning) therefore makes fewer or more passes over its rows, not more or
fewer optimiser steps (the reference TabDDPM trains for a number of steps too). ``steps`` is
recorded per cell; cells run before this rule (no ``steps`` column) get it derived from their
recorded epochs and training rows, E · ⌈n / min(B, n)⌉ (:func:`with_steps`), so the table
shows which comparisons the old budgets confound.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from memviz.compare import CompareConfig, run_grid
from memviz.compare.methods import METHODS, base_method
from memviz.io import read_parquet
from memviz.measure.memorization import memorization
from memviz.models.presets import PRESETS
from memviz.study.public import PUBLIC
from memviz.study.scales import StudyScale
from memviz.study.warmups import warmup_config, warmup_job


def available_methods(wanted) -> tuple[tuple, tuple]:
    """(methods the installed comparison knows, methods left out). ``smote`` is taken only when
    ``smote_nc`` exists too: before that, ``smote`` named imbalanced-learn's SMOTE-NC."""
    have = set(METHODS)
    ok = tuple(m for m in wanted if base_method(m) in have and (m != "smote" or "smote_nc" in have))
    return ok, tuple(m for m in wanted if m not in ok)


def tabddpm_params(scale: StudyScale, n_train: int | None = None) -> dict:
    """TabDDPM's parameters in the cells (the warm-up's preset, epochs and overrides) and, given the
    scale's training rows, ``steps``: the baseline's optimiser steps (module docstring)."""
    params = {"preset": scale.preset, **scale.tabddpm_params}
    if scale.epochs is not None:
        params["epochs"] = int(scale.epochs)
    if n_train is not None:
        params["steps"] = baseline_steps(scale, n_train)
    return params


def _preset(scale: StudyScale):
    return PRESETS[scale.preset]


def baseline_steps(scale: StudyScale, n_train: int) -> int:
    """S = E · ⌈N / min(B, N)⌉: the optimiser steps of TabDDPM trained on the scale's N rows."""
    cfg = _preset(scale)
    epochs = int(scale.epochs if scale.epochs is not None else scale.tabddpm_params.get("epochs", cfg.epochs))
    b = int(scale.tabddpm_params.get("batch_size", cfg.batch_size))
    return epochs * -(-int(n_train) // min(b, int(n_train)))


GRIDS = ("main", "early", "transfer", "stop", "private")


def dataset_methods(scale: StudyScale, dataset: str, which: str = "methods") -> tuple:
    """The scale's methods (``which``: the field, ``methods`` or ``stop_methods``) that run on ``dataset``
    (``scale.method_datasets`` limits some)."""
    return tuple(m for m in getattr(scale, which) if dataset in scale.method_datasets.get(m, (dataset,)))


def grid_specs(scale: StudyScale, dataset: str, seed: int, Ts: dict, runs: Path, device: str, n_jobs: int,
               n_train: int | None = None) -> dict:
    """grid name -> CompareConfig of one seed (module docstring); ``Ts`` maps "0.25" / "0.5" to T.
    A grid with no method (e.g. no transfer model at this scale) is left out."""
    quarter, half = Ts[f"{min(scale.T_fracs):g}"], Ts[f"{max(scale.T_fracs):g}"]
    base = dict(models=("tabddpm",), seeds=(seed,), p=scale.p, k=scale.k, run_dir=str(Path(runs) / f"warmup_s{seed}"),
                device=device, n_jobs=n_jobs, model_params={"tabddpm": tabddpm_params(scale, n_train)})
    specs = {"main": CompareConfig(methods=available_methods(dataset_methods(scale, dataset))[0], T=half, **base)}
    if available_methods(scale.early_methods)[0]:
        specs["early"] = CompareConfig(methods=available_methods(scale.early_methods)[0], T=quarter, **base)
    stop = available_methods(dataset_methods(scale, dataset, "stop_methods"))[0]
    if stop:  # no steps budget: the comparison sets early stop's epochs, and a steps budget would override them
        specs["stop"] = CompareConfig(methods=stop, T=half, **{**base, "run_dir": str(stop_warmup_dir(runs, seed)),
                                                             "model_params": {"tabddpm": tabddpm_params(scale)}})
    private = available_methods(dataset_methods(scale, dataset, "private_methods"))[0]
    if private:  # no ranking, hence no warm-up: DP-SGD and the dynamic threshold score rows themselves or not at all
        dynamic = {"n_samples": int(scale.warmup_samples)} if scale.warmup_samples else {}
        specs["private"] = CompareConfig(methods=private, T=half, dynamic=dynamic, privacy=dict(PUBLIC.get(dataset, {})),
                                         **{**base, "run_dir": None})
    if scale.transfer_models:
        params = {m: {"epochs": int(e)} for m, e in scale.model_epochs.items() if m in scale.transfer_models}
        specs["transfer"] = CompareConfig(methods=available_methods(scale.transfer_methods)[0], T=half,
                                          **{**base, "models": tuple(scale.transfer_models), "model_params": params})
    return specs


def stop_warmup_dir(runs: Path, seed: int) -> Path:
    """The ``stop`` grid's own warm-up of ``seed`` (same settings as the scale's, with Shape and Trend per check)."""
    return Path(runs) / f"stopwarmup_s{seed}"


def run_seed_grid(grid: str, train, test, scale: StudyScale, dataset: str, seed: int, Ts: dict, runs: Path,
                  device: str, n_jobs: int, progress: Callable[[dict], None] | None = None) -> None:
    """Run (or finish) one grid of one seed into ``runs/{grid}_s{seed}``. The ``stop`` grid first runs (or
    reuses) its own warm-up (:func:`stop_warmup_dir`): the committed cells of the other grids were pruned with
    the scale's warm-ups, whose records (``per_check.csv``, ``null.csv``, ``selections.csv``) it leaves as
    they are."""
    cfg = grid_specs(scale, dataset, seed, Ts, runs, device, n_jobs, len(train)).get(grid)
    if cfg is not None and grid == "stop":
        warmup_job(train, test, warmup_config(scale, seed, device), stop_warmup_dir(runs, seed))
    if cfg is not None:
        run_grid(train, test, cfg, Path(runs) / f"{grid}_s{seed}",
                 progress=None if progress is None else (lambda ev: progress({**ev, "grid": grid})))


def collect(train, scale: StudyScale, seeds_T: dict, runs: Path, device: str) -> pd.DataFrame | None:
    """Every finished grid's results (``runs/{grid}_s{seed}/results.csv``), concatenated with ``grid``,
    ``warmup_seed`` and ``T``; the early grid's methods renamed ``<method>_q`` with their control.
    None when no grid has results yet."""
    frames = []
    for grid in GRIDS + ("steps",):
        for seed, Ts in seeds_T.items():
            f = Path(runs) / f"{grid}_s{seed}" / "results.csv"
            if not f.is_file():
                continue
            res = pd.read_csv(f)
            if grid == "steps":  # an equal-steps rerun of confounded cells (docs/study/reruns): its own arms
                frames.append(res.assign(grid=grid, warmup_seed=seed, T=np.nan, method=res["method"] + "_eq"))
                continue
            frac = min(scale.T_fracs) if grid == "early" else max(scale.T_fracs)
            res = res.assign(grid=grid, warmup_seed=seed, T=Ts[f"{frac:g}"])
            if grid == "early":
                res = early_control(res, train, Path(runs), seed, device)
                res["method"] = res["method"] + "_q"
            if grid == "main":
                res = cross_seed_control(res, train, Path(runs), seed, list(seeds_T), device)
            frames.append(res)
    return with_reductions(pd.concat(frames, ignore_index=True)) if frames else None


#: what names one cell of the study's results (a rerun of it replaces it)
CELL_ID = ("grid", "method", "model", "seed")


def merge_stored(path: Path, fresh: pd.DataFrame | None) -> pd.DataFrame | None:
    """The committed results (``path``) with the cells of ``fresh`` (from the run folders) put in place of
    those of the same :data:`CELL_ID`, new ones appended; the relative reductions recomputed. None when
    there is neither."""
    stored = pd.read_csv(path) if Path(path).is_file() else None
    if stored is None or stored.empty:
        return None if fresh is None else with_reductions(fresh)
    if fresh is None or fresh.empty:
        return with_reductions(stored)
    ident = lambda df: pd.MultiIndex.from_frame(df[list(CELL_ID)].astype(str))  # noqa: E731
    new = {k: i for i, k in enumerate(ident(fresh))}
    rows, used = [], set()
    for i, k in enumerate(ident(stored)):
        if k in new:
            rows.append(fresh.iloc[[new[k]]])
            used.add(k)
        else:
            rows.append(stored.iloc[[i]])
    rows += [fresh.iloc[[i]] for k, i in new.items() if k not in used]
    return with_reductions(pd.concat(rows, ignore_index=True))


def with_steps(results: pd.DataFrame, scale: StudyScale) -> pd.DataFrame:
    """``steps`` filled where a cell has none: E · ⌈n / min(B, n)⌉ from its recorded epochs and training rows
    (TabDDPM cells; the scale's batch), and ``steps_recorded`` saying which were measured."""
    res = results.copy()
    if "steps" not in res.columns:
        res["steps"] = np.nan
    rec = pd.to_numeric(res["steps"], errors="coerce")
    b = int(scale.tabddpm_params.get("batch_size", _preset(scale).batch_size))
    n = pd.to_numeric(res.get("n_train_used"), errors="coerce")
    e = pd.to_numeric(res.get("epochs"), errors="coerce")
    derived = e * np.ceil(n / np.minimum(b, n))
    fill = rec.isna() & (res["model"] == "tabddpm") & (res["status"] == "ok")
    prev = res["steps_recorded"] if "steps_recorded" in res.columns else pd.Series(None, index=res.index)
    res["steps_recorded"] = [bool(p) if isinstance(p, (bool, np.bool_)) else bool(r)   # a stored flag is kept
                             for p, r in zip(prev, rec.notna())]
    res["steps"] = rec.where(~fill, derived)
    return res


def early_control(res: pd.DataFrame, train, runs: Path, seed: int, device: str) -> pd.DataFrame:
    """``control_kept`` of the ``early`` grid's pruning cells, which has no baseline cell of its own:
    the ``main`` grid's TabDDPM baseline rows of the same seed against the early cell's kept rows
    (its selection as stored by the comparison). Left NaN when either file is missing."""
    base = Path(runs) / f"main_s{seed}" / "synthetic" / f"baseline_tabddpm_{seed}.parquet"
    if not base.is_file() or "control_kept" not in res.columns:
        return res
    res = res.copy()
    syn = read_parquet(base, "baseline rows")
    for i, row in res.iterrows():
        sel = Path(runs) / f"early_s{seed}" / "selections" / f"{row['method']}_{seed}.parquet"
        if row["status"] != "ok" or row["model"] != "tabddpm" or not sel.is_file() or pd.notna(row["control_kept"]):
            continue
        frame = read_parquet(sel, "selection")
        kept = train.drop(frame.loc[frame["removed"].astype(bool), "row_id"].to_numpy())
        res.loc[i, "control_kept"] = memorization(kept, syn, device=device).mem_ratio
    return res


def cross_seed_control(res: pd.DataFrame, train, runs: Path, seed: int, seeds: list, device: str) -> pd.DataFrame:
    """``control_kept_cross`` of the ``main`` grid's TabDDPM pruning cells of ``seed``: the mean, over the
    other seeds s', of the mem ratio of seed s' baseline rows against this cell's kept rows. The same-seed
    control (``control_kept``) shares the warm-up seed with the cell; this one does not, so it says whether
    the kept rows are copied because of what the pruning left or because they are rows any baseline copies.
    Left NaN when the files are missing (run folders are not committed)."""
    others = [s for s in seeds if s != seed
              and (Path(runs) / f"main_s{s}" / "synthetic" / f"baseline_tabddpm_{s}.parquet").is_file()]
    res = res.copy()
    if "control_kept_cross" not in res.columns:
        res["control_kept_cross"] = np.nan
    if not others:
        return res
    syns = {s: read_parquet(Path(runs) / f"main_s{s}" / "synthetic" / f"baseline_tabddpm_{s}.parquet",
                            "baseline rows") for s in others}
    for i, row in res.iterrows():
        sel = Path(runs) / f"main_s{seed}" / "selections" / f"{row['method']}_{seed}.parquet"
        if row["status"] != "ok" or row["model"] != "tabddpm" or not sel.is_file():
            continue
        frame = read_parquet(sel, "selection")
        removed = frame.loc[frame["removed"].astype(bool), "row_id"].to_numpy()
        if not len(removed):
            continue
        kept = train.drop(removed)
        res.loc[i, "control_kept_cross"] = float(np.mean([memorization(kept, syn, device=device).mem_ratio
                                                          for syn in syns.values()]))
    return res


def with_reductions(results: pd.DataFrame) -> pd.DataFrame:
    """``relative_reduction`` = (baseline − method) / baseline of mem_ratio, against the ``main``
    grid's baseline of the same model and seed (transfer models: their own baseline), and the
    paper-style ``relative_reduction_pruned`` = (baseline − method's mem_ratio_pruned) / baseline:
    the method's rows measured against the table it trained on (for pruning: the kept rows, whose
    own floor is lower), the baseline's against the original table."""
    ok = results["status"] == "ok"
    base = results[ok & (results["method"] == "baseline")].drop_duplicates(["model", "seed"]).set_index(
        ["model", "seed"])["mem_ratio"]  # an equal-steps rerun ("_eq" arms) is measured against the same baseline
    b = base.reindex(pd.MultiIndex.from_frame(results[["model", "seed"]])).to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rr = np.where(ok & (b > 0), (b - results["mem_ratio"].to_numpy(dtype=float)) / b, np.nan)
        pr = pd.to_numeric(results.get("mem_ratio_pruned", np.nan), errors="coerce").to_numpy(dtype=float)
        rp = np.where(ok & (b > 0), (b - pr) / b, np.nan)
    return results.assign(relative_reduction=rr, relative_reduction_pruned=rp)


#: figures summarized per method (those present in the results)
SUMMARY_FIGURES = ("mem_ratio", "mem_ratio_pruned", "mem_ratio_kept", "control_kept", "floor", "floor_kept",
                   "excess", "excess_low", "excess_high", "n_flagged_removed", "relative_reduction",
                   "relative_reduction_pruned", "control_kept_cross", "shape",
                   "trend", "mle", "mle_real", "n_removed", "n_added", "steps", "total_seconds", "cpu_seconds",
                   "trend_report", "wasserstein_mean", "jsd_mean", "dcr_median_train", "epsilon_spent",
                   "noise_multiplier", "row_epochs_left_out", "rows_left_out")


def method_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and std (ddof 1) over seeds per model × method, finished cells only, grid order."""
    ok = results[results["status"] == "ok"]
    rows = []
    for (model, method), g in ok.groupby(["model", "method"], sort=False):
        row = {"model": model, "method": method, "n_seeds": int(g["seed"].nunique())}
        for c in SUMMARY_FIGURES:
            if c in g.columns:
                v = pd.to_numeric(g[c], errors="coerce").to_numpy(dtype=float)
                v = v[np.isfinite(v)]
                row[f"{c}_mean"] = float(v.mean()) if v.size else None
                row[f"{c}_std"] = float(v.std(ddof=1)) if v.size > 1 else None
        rows.append(row)
    return pd.DataFrame(rows)


#: figures of an early-stop cell and of the same seed's baseline, side by side (:func:`stop_records`)
STOP_FIGURES = ("mem_ratio", "excess", "excess_low", "excess_high", "floor", "shape", "trend", "mle")


def stop_records(results: pd.DataFrame) -> list[dict]:
    """Per seed, early stop's cell (its epochs E*, the warm-up's recommended epoch, and its steps) beside the
    ``main`` baseline of the same seed: ``{seed, epochs, steps, es_<figure>, base_<figure>}`` (TabDDPM)."""
    ok = results[(results["status"] == "ok") & (results["model"] == "tabddpm")]
    es = ok[ok["method"] == "early_stop"].drop_duplicates("seed").set_index("seed")
    base = ok[(ok["method"] == "baseline") & (ok["grid"] == "main")].drop_duplicates("seed").set_index("seed")
    num = lambda row, c: float(row[c]) if c in row and pd.notna(row[c]) else None  # noqa: E731
    out = []
    for seed, row in es.sort_index().iterrows():
        b = base.loc[seed] if seed in base.index else pd.Series(dtype=float)
        out.append({"seed": int(seed), "epochs": num(row, "epochs"), "steps": num(row, "steps"),
                    **{f"es_{c}": num(row, c) for c in STOP_FIGURES}, **{f"base_{c}": num(b, c) for c in STOP_FIGURES}})
    return out
