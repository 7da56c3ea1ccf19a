"""Side-by-side comparison: mitigation methods × generators × seeds.

One **cell** = (method, model, seed):

1. build the method's training table from the ORIGINAL training table
   (:func:`memviz.methods.apply_method`, seeded with the cell's seed);
2. fit the model (``make_model(model, epochs=..., device=..., seed=seed)``; epochs:
   each model's CPU preset unless ``epochs`` overrides them all);
3. sample as many rows as the ORIGINAL training table (``sample(N, seed=seed)``);
4. evaluate:

   * ``mem_ratio``, ``mem_auc``: memorization against the ORIGINAL training table
     (the removed rows are still private), with one fitted
     :class:`~memviz.neighbors.NeighborEngine` per process, reused by every cell;
   * ``mem_ratio_pruned``, ``mem_auc_pruned``: against the table the model saw. Choice
     (``pruned_reference``): ``"kept"`` (default) = the ORIGINAL rows that were kept
     (original minus removed, augmented rows left out: they are no private data, and
     a copy of a mixed row is not a copy of a person); ``"trained"`` = the method's
     whole training table, augmented rows included. With ``"kept"`` the two figures
     are equal for baseline, tabcutmix, tabcutmixplus and smote;
   * ``shape``, ``trend`` (:func:`memviz.evaluate.quality`, in [0, 1], the papers
     report × 100), ``mle`` (:func:`memviz.evaluate.mle`) with ``mle_real`` its
     reference line (the same booster fitted on the real training table, computed
     once per seed), ``dcr_share`` (:func:`memviz.evaluate.dcr_share`); all against
     the ORIGINAL training table and the real test split;
   * wall-clock seconds per phase (mitigate, fit, sample, memorize, quality, mle, dcr;
     ``evaluate_seconds`` = memorize + quality + mle + dcr), ``total_seconds``, and
     ``cpu_seconds``: the CPU time of the worker process during the cell (all its
     threads; on a shared machine it tells work from waiting; with several cells in one
     process, as dask threads, it includes their work too).

Relative reduction (per model and seed, against the baseline cell)::

    relative_reduction = (mem_ratio(baseline) − mem_ratio(method)) / mem_ratio(baseline)

DynamicCut needs a ranking: from a finished warm-up ``run_dir`` on the SAME training
table (checked with the run's data fingerprint), or, without one, a warm-up run first
into ``OUT/warmup`` (TabDDPM ``cpu-quick`` preset, seed 0, ``epochs`` when given,
reused on a rerun). The same TabDDPM ranking prunes the data of every model and seed
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
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from .data import Table
from .dynamiccut import DEFAULT_K, DEFAULT_P, _check_k, dynamiccut_selection, prune_budget
from .errors import MemvizError, RunError
from .methods import AUGMENTS, NEEDS_SELECTION, apply_method, check_methods, random_count, removed_ids
from .mitigate import DEFAULT_RATIO
from .models import MODELS, make_model

FORMAT = "memviz.compare/1"
BACKENDS = ("local", "dask")
PRUNED_REFERENCES = ("kept", "trained")
FIGURES = ("mem_ratio", "mem_ratio_pruned", "mem_auc", "mem_auc_pruned", "relative_reduction",
           "relative_reduction_auc", "shape", "trend", "mle", "mle_real", "dcr_share")
TIMINGS = ("mitigate_seconds", "fit_seconds", "sample_seconds", "memorize_seconds", "quality_seconds",
           "mle_seconds", "dcr_seconds", "evaluate_seconds", "total_seconds", "cpu_seconds")
COLUMNS = ("method", "model", "seed", *FIGURES, "mle_metric", "dcr_ideal", "n_train_used", "n_removed", "n_added",
           "n_synthetic", "epochs", "device", *TIMINGS, "status", "error", "notes", "key", "synthetic")
Progress = Callable[[int, int, str], None]


# ------------------------------------------------------------------ cells
@dataclass(frozen=True)
class CellSpec:
    """One cell of the grid; ``key`` hashes the settings that change its result."""

    method: str
    model: str
    seed: int
    key: str

    @property
    def name(self) -> str:
        return f"{self.method}_{self.model}_{self.seed}"


@dataclass(frozen=True)
class GridContext:
    """What every cell needs (shipped once to each worker)."""

    train: Table
    test: Table | None
    train_key: str
    selection: np.ndarray | None
    p: float
    ratio: float
    epochs: int | None
    model_params: dict
    device: str
    distance: str
    pruned_reference: str
    mle_real: dict = field(default_factory=dict)   # seed -> reference MLE
    threads: int | None = None                      # torch threads per cell (None: leave as is)


@dataclass(frozen=True)
class CellOutput:
    record: dict
    synthetic: pd.DataFrame | None
    traceback: str = ""


_ENGINES: dict = {}
_ENGINES_LOCK = threading.Lock()


def original_engine(ctx: GridContext):
    """The NeighborEngine fitted on the original training table, one per process (cached)."""
    from .neighbors import NeighborEngine

    key = (ctx.train_key, ctx.distance, ctx.device)
    with _ENGINES_LOCK:
        if key not in _ENGINES:
            if len(_ENGINES) >= 4:
                _ENGINES.clear()
            _ENGINES[key] = NeighborEngine(distance=ctx.distance, device=ctx.device).fit(ctx.train)
        return _ENGINES[key]


def pruned_reference(ctx: GridContext, mitigated) -> Table | None:
    """The reference of ``mem_ratio_pruned``; None when it is the original table itself."""
    if ctx.pruned_reference == "trained":
        return mitigated.table if (mitigated.added or len(mitigated.removed)) else None
    return ctx.train.drop(mitigated.removed) if len(mitigated.removed) else None


def torch_threads(n: int | None):
    """torch's intra-op threads set to ``n`` inside (None or 0: unchanged), restored on exit."""
    from .device import torch_threads as _threads
    return _threads(int(n) if n else None)


def run_cell(spec: CellSpec, ctx: GridContext) -> CellOutput:
    """Mitigate, fit, sample and evaluate one cell; a failure is recorded, not raised."""
    rec = {"method": spec.method, "model": spec.model, "seed": spec.seed, "key": spec.key,
           "status": "ok", "error": "", "notes": ""}
    t_start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with torch_threads(ctx.threads):
            t0 = time.perf_counter()
            mit = apply_method(spec.method, ctx.train, selection=ctx.selection, seed=spec.seed, p=ctx.p,
                               ratio=ctx.ratio)
            t1 = time.perf_counter()
            params = dict(ctx.model_params.get(spec.model, {}))
            if ctx.epochs is not None:
                params["epochs"] = int(ctx.epochs)
            model = make_model(spec.model, device=ctx.device, seed=spec.seed, **params).fit(mit.table)
            t2 = time.perf_counter()
            syn = model.sample(len(ctx.train), seed=spec.seed)
            t3 = time.perf_counter()
            rec.update(mitigate_seconds=t1 - t0, fit_seconds=t2 - t1, sample_seconds=t3 - t2,
                       n_train_used=len(mit.table), n_removed=int(len(mit.removed)), n_added=int(mit.added),
                       n_synthetic=len(syn), epochs=getattr(model, "epoch_", None),
                       device=str(getattr(model, "device_", ctx.device)))
            rec.update(evaluate_cell(ctx, mit, syn, spec.seed))
    except Exception as exc:  # recorded in the cell; the grid goes on
        msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        rec.update(status="failed", error=msg, total_seconds=time.perf_counter() - t_start,
                   cpu_seconds=time.process_time() - cpu_start)
        return CellOutput(rec, None, traceback.format_exc())
    rec.update(total_seconds=time.perf_counter() - t_start, cpu_seconds=time.process_time() - cpu_start)
    return CellOutput(rec, syn)


def evaluate_cell(ctx: GridContext, mitigated, syn: pd.DataFrame, seed: int) -> dict:
    """The figures of one synthetic table (see the module docstring), with their timings."""
    from .evaluate import dcr_share, mle, quality
    from .memorization import memorization

    out, notes = {}, []
    t0 = time.perf_counter()
    mem = memorization(ctx.train, syn, engine=original_engine(ctx))
    ref = pruned_reference(ctx, mitigated)
    mem_p = mem if ref is None else memorization(ref, syn, distance=ctx.distance, device=ctx.device)
    t1 = time.perf_counter()
    q = quality(ctx.train, syn)
    t2 = time.perf_counter()
    out.update(mem_ratio=mem.mem_ratio, mem_auc=mem.mem_auc, mem_ratio_pruned=mem_p.mem_ratio,
               mem_auc_pruned=mem_p.mem_auc, shape=q.shape, trend=q.trend, mle=np.nan, mle_real=np.nan,
               mle_metric="", dcr_share=np.nan, dcr_ideal=np.nan)
    if ctx.test is None:
        notes.append("no test split: MLE and DCR share not computed")
    elif ctx.train.schema.target is None:
        notes.append("no target column: MLE not computed")
    else:
        m = mle(ctx.train, syn, ctx.test, seed=seed, real_score=ctx.mle_real.get(seed))
        out.update(mle=m.score, mle_real=m.real_score, mle_metric=m.metric)
        if m.note:
            notes.append(f"MLE: {m.note}")
    t3 = time.perf_counter()
    if ctx.test is not None:
        d = dcr_share(ctx.train, ctx.test, syn, device=ctx.device, seed=seed)
        out.update(dcr_share=d.share, dcr_ideal=d.ideal)
    t4 = time.perf_counter()
    out.update(memorize_seconds=t1 - t0, quality_seconds=t2 - t1, mle_seconds=t3 - t2, dcr_seconds=t4 - t3,
               evaluate_seconds=t4 - t0, notes="; ".join(notes))
    return out


# ------------------------------------------------------------- the ranking
def selection_from_run(run_dir, train: Table, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None):
    """DynamicCut selection from a finished warm-up made on ``train`` (same fingerprint)."""
    from .store import RunStore, fingerprint
    from .warmup import load_warmup

    store = RunStore.open(run_dir)
    m = store.manifest()
    data = m.get("data", {})
    if m.get("kind", "warmup") != "warmup":
        raise RunError(f"{run_dir}: not a warm-up run (kind {m.get('kind')!r})")
    if data.get("fingerprint") != fingerprint(train):
        raise RunError(f"{run_dir}: this warm-up was trained on another table ({data.get('source')}, "
                       f"{data.get('n_rows')} rows), not on {train.source} ({len(train)} rows); "
                       "give a run made on the same training table, or leave out --run")
    if m.get("status") != "finished":
        raise RunError(f"{run_dir}: the warm-up is {m.get('status')!r}, not finished "
                       "(finish it with memviz warmup --resume)")
    return dynamiccut_selection(load_warmup(run_dir).dynamics, p=p, k=k, T=T)


def auto_warmup(train: Table, run_dir: Path, config, progress: Progress | None = None) -> Path:
    """Run (or resume, or reuse) the warm-up of a comparison in ``run_dir``."""
    from .store import MANIFEST, RunStore, fingerprint
    from .warmup import run_warmup

    def forward(ev):
        if progress is not None and ev.get("stage") == "train":
            progress(int(ev["epoch"]), int(ev["epochs"]), "warm-up (TabDDPM ranking)")

    if (run_dir / MANIFEST).exists():
        m = RunStore(run_dir).manifest()
        if m.get("data", {}).get("fingerprint") != fingerprint(train):
            raise RunError(f"{run_dir}: warm-up left by a comparison on another table; "
                           "choose another --out or delete that folder")
        if m.get("status") == "finished":
            names = ("preset", "epochs", "seed", "model_params")
            saved = {k: m.get("config", {}).get(k) for k in names}
            want = _plain({k: getattr(config.resolved(len(train)), k) for k in names})
            if _plain(saved) != want:
                raise RunError(f"{run_dir}: warm-up made with other settings {saved}; delete it or pass --run")
            return run_dir
        run_warmup(train, config, run_dir, resume=True, progress=forward)
    else:
        run_warmup(train, config, run_dir, progress=forward)
    return run_dir


# ------------------------------------------------------------------- grid
def _hash(obj) -> str:
    from .store import _jsonable
    return hashlib.sha256(json.dumps(_jsonable(obj), sort_keys=True, default=str).encode()).hexdigest()[:12]


def _check_grid(methods, models, seeds, n_jobs, backend, scheduler, pruned_reference_, device):
    from .device import resolve_device

    methods = check_methods(methods)
    models = tuple(dict.fromkeys(str(m).strip().lower() for m in models))
    for m in models:
        if m not in MODELS:
            raise MemvizError(f"unknown model {m!r} (use {', '.join(MODELS)})")
    if not models:
        raise MemvizError(f"no model given (use {', '.join(MODELS)})")
    try:
        seeds = tuple(dict.fromkeys(int(s) for s in seeds))
    except (TypeError, ValueError):
        raise MemvizError(f"seeds must be integers, got {list(seeds)!r}") from None
    if not seeds:
        raise MemvizError("no seed given")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise MemvizError(f"n_jobs must be an integer >= 1, got {n_jobs!r}")
    if backend not in BACKENDS:
        raise MemvizError(f"backend {backend!r}: unknown (use {', '.join(BACKENDS)})")
    if scheduler is not None and backend != "dask":
        raise MemvizError("a scheduler address needs the dask backend (--backend dask)")
    if pruned_reference_ not in PRUNED_REFERENCES:
        raise MemvizError(f"pruned_reference {pruned_reference_!r}: use {' or '.join(PRUNED_REFERENCES)}")
    resolve_device(device)  # a bad or missing device fails here, not in every cell
    return methods, models, seeds


def run_grid(train: Table, test: Table | None, methods, models, seeds, out_dir, *, run_dir=None,
             p: float = DEFAULT_P, k: int = DEFAULT_K, T=None, epochs: int | None = None, device: str = "auto",
             n_jobs: int = 1, backend: str = "local", scheduler=None, progress: Progress | None = None,
             ratio: float = DEFAULT_RATIO, model_params: dict | None = None, distance: str = "paper",
             pruned_reference: str = "kept", warmup_config=None, threads: int | None = None) -> pd.DataFrame:
    """Run every (method, model, seed) cell not finished yet; return the results of the whole grid.

    Parameters
    ----------
    train, test : the original training table and the real test split (None: no MLE/DCR).
    methods : names from :data:`memviz.methods.METHODS`.
    models : names from :data:`memviz.models.MODELS`.
    seeds : ints; each seeds the mitigation, the model, its sampling and the evaluation.
    out_dir : results folder (see the module docstring); reruns skip finished cells.
    run_dir : finished warm-up on ``train`` giving the DynamicCut ranking; None: a warm-up
        is run into ``out_dir/warmup`` when a method needs one (``warmup_config``,
        default ``WarmupConfig("cpu-quick", epochs=epochs, seed=0, device=device,
        model_params=model_params["tabddpm"])``).
    p, k, T : DynamicCut's pruning share, top-k checks and window (see
        :func:`memviz.dynamiccut.dynamiccut_selection`).
    epochs : training epochs of every model (None: each model's CPU preset).
    device : ``auto``, ``cpu`` or ``cuda`` (models and distances).
    n_jobs : parallel cells (local: joblib processes; dask with no scheduler: LocalCluster workers).
    backend : ``"local"`` (joblib) or ``"dask"`` (dask.distributed).
    scheduler : with dask: a scheduler address, a ``Client`` or a cluster object;
        None starts a LocalCluster of ``n_jobs`` single-threaded worker processes.
    progress : ``progress(done, total, message)`` after each cell (and each warm-up epoch).
    ratio : augmentation size as a share of the rows mixed from.
    model_params : {model: {param: value}} extra parameters of :func:`memviz.models.make_model`.
    distance : memorization distance, ``paper`` or ``standardized``.
    pruned_reference : ``"kept"`` or ``"trained"``, see the module docstring.
    threads : torch threads per cell and for the warm-up (None: 1; with an external dask
        scheduler, the workers' setting is left alone). One thread is the default on
        purpose: these networks are small (200 x 256 matrices), so a second thread gains
        little on an idle machine (the cpu-quick warm-up: 42 s with 2 threads vs about
        53 s estimated with 1), while on a busy one OpenMP's waiting threads make every
        op far slower (a 200 x 256 @ 256 x 256 matmul: 0.3 ms with 1 thread, 7.7 ms with
        2, on 2 shared cores). Parallelism comes from ``n_jobs`` cells at a time.

    Returns
    -------
    DataFrame, one row per cell of the grid (:data:`COLUMNS`), grid order, with
    ``relative_reduction`` filled where the baseline cell of the same model and seed is there.
    """
    from .store import atomic_write_csv, atomic_write_text, fingerprint, versions

    t_start = time.perf_counter()
    methods, models, seeds = _check_grid(methods, models, seeds, n_jobs, backend, scheduler, pruned_reference,
                                         device)
    if run_dir is not None or any(m in NEEDS_SELECTION or m == "random" for m in methods):
        prune_budget(p, len(train))  # a bad p fails now, not after a warm-up of minutes
        _check_k(k)
    model_params = {m: dict(v) for m, v in (model_params or {}).items()}
    if threads is None and not (backend == "dask" and scheduler is not None):
        threads = 1
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    selection, sel_info = None, {}
    if run_dir is not None or any(m in NEEDS_SELECTION for m in methods):
        if run_dir is None:
            from .warmup import WarmupConfig
            cfg = warmup_config or WarmupConfig(preset="cpu-quick", epochs=epochs, seed=0, device=device,
                                                distance=distance, model_params=model_params.get("tabddpm", {}))
            with torch_threads(threads):
                run_dir = auto_warmup(train, out / "warmup", cfg, progress)
        sel = selection_from_run(run_dir, train, p=p, k=k, T=T)
        atomic_write_csv(out / "selection.csv", sel.to_frame())
        selection = removed_ids(sel)
        sel_info = {"run_dir": str(run_dir), "k": sel.k, "T": sel.T, "n_removed": int(sel.n_remove)}
    train_fp = fingerprint(train)
    shared = {"v": 1, "train": train_fp, "test": fingerprint(test) if test is not None else None,
              "epochs": epochs, "device": device, "distance": distance, "pruned_reference": pruned_reference}
    sel_fp = _hash(np.sort(selection).tolist()) if selection is not None else None
    n_random = random_count(train, selection, p) if "random" in methods else None

    def key(method, model, seed):
        d = {**shared, "method": method, "model": model, "seed": seed, "params": model_params.get(model, {})}
        if method in NEEDS_SELECTION:
            d["selection"] = sel_fp
        if method == "random":
            d["n_remove"] = n_random
        if method in AUGMENTS:
            d["ratio"] = ratio
        return _hash(d)

    specs = [CellSpec(me, mo, s, key(me, mo, s)) for s in seeds for mo in models for me in methods]
    manifest = {"format": FORMAT, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "methods": methods,
                "models": models, "seeds": seeds, "p": p, "ratio": ratio, "model_params": model_params, **shared,
                "selection": sel_info, "train_source": train.source, "n_train": len(train),
                "test_source": test.source if test is not None else None, "versions": versions()}
    atomic_write_text(out / "experiment.json", json.dumps(_plain(manifest), indent=1))
    records = {s.name: r for s in specs if (r := _finished(out, s)) is not None}
    todo = [s for s in specs if s.name not in records]
    total, done = len(specs), len(records)
    if progress is not None:
        progress(done, total, f"{done} cells already finished" if done else "starting")
    mle_real = _mle_reference(train, test, {s.seed for s in todo})
    ctx = GridContext(train, test, train_fp, selection, p, ratio, epochs, model_params, device, distance,
                      pruned_reference, mle_real, threads)

    def finished(res: CellOutput) -> None:
        nonlocal done
        spec = CellSpec(res.record["method"], res.record["model"], res.record["seed"], res.record["key"])
        rec = dict(res.record)
        if res.synthetic is not None:
            from .store import _mixed_object_columns, atomic_write_parquet
            path = out / "synthetic" / f"{spec.name}.parquet"
            atomic_write_parquet(path, _mixed_object_columns(res.synthetic.reset_index(drop=True)))
            rec["synthetic"] = str(path.relative_to(out))
        body = {**rec, "settings_key": spec.key, "traceback": res.traceback}
        atomic_write_text(out / "cells" / f"{spec.name}_{spec.key}.json", json.dumps(_plain(body), indent=1))
        records[spec.name] = rec
        done += 1
        atomic_write_csv(out / "results.csv", results_frame([records[s.name] for s in specs if s.name in records]))
        if progress is not None:
            what = f"mem {rec['mem_ratio']:.1%}" if rec["status"] == "ok" else "FAILED"
            progress(done, total, f"{spec.method}/{spec.model}/seed {spec.seed}: {what} "
                                  f"({rec.get('total_seconds', 0):.0f} s)")

    if todo:
        (_run_dask if backend == "dask" else _run_local)(todo, ctx, n_jobs, scheduler, finished)
    results = results_frame([records[s.name] for s in specs if s.name in records])
    atomic_write_csv(out / "results.csv", results)
    manifest.update(seconds=time.perf_counter() - t_start, cells=total, ran=len(todo),
                    failed=int((results["status"] != "ok").sum()))
    atomic_write_text(out / "experiment.json", json.dumps(_plain(manifest), indent=1))
    return results


def _plain(obj):
    from .store import _jsonable
    return _jsonable(obj)


def _finished(out: Path, spec: CellSpec) -> dict | None:
    f = out / "cells" / f"{spec.name}_{spec.key}.json"
    if not f.exists():
        return None
    try:
        rec = json.loads(f.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError):
        return None
    if rec.get("status") != "ok" or not (out / str(rec.get("synthetic", ""))).is_file():
        return None
    return {c: rec.get(c) for c in COLUMNS if c in rec}


def _mle_reference(train: Table, test: Table | None, seeds) -> dict:
    """seed -> score of the MLE booster fitted on the real training table (the reference line)."""
    from .evaluate import mle

    if test is None or train.schema.target is None:
        return {}
    # the "synthetic" table IS the real training table here, so .score is the reference
    # (real_score is passed to skip fitting the same booster a second time)
    return {s: mle(train, train, test, seed=s, real_score=float("nan")).score for s in sorted(seeds)}


# ---------------------------------------------------------------- backends
def _run_local(todo, ctx, n_jobs, scheduler, on_done) -> None:
    """Cells in this process (n_jobs = 1) or in joblib's worker processes, handled as they finish."""
    if n_jobs == 1 or len(todo) == 1:
        for spec in todo:
            on_done(run_cell(spec, ctx))
        return
    from joblib import Parallel, delayed

    jobs = Parallel(n_jobs=min(n_jobs, len(todo)), return_as="generator_unordered")
    for res in jobs(delayed(run_cell)(spec, ctx) for spec in todo):
        on_done(res)


def _run_dask(todo, ctx, n_jobs, scheduler, on_done) -> None:
    """Cells as dask.distributed tasks; results are written here, in the client, as they finish."""
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise MemvizError("the dask backend needs the package distributed (pip install distributed)") from None
    cluster = client = None
    own_client = True
    try:
        if scheduler is None:
            cluster = LocalCluster(n_workers=n_jobs, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        elif isinstance(scheduler, Client):
            client, own_client = scheduler, False
        elif hasattr(scheduler, "scheduler_address"):
            client = Client(scheduler)
        else:
            try:
                client = Client(str(scheduler), timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise MemvizError(f"dask scheduler {scheduler}: cannot connect ({type(exc).__name__})") from None
        shared = client.scatter(ctx, broadcast=True)
        tag = uuid.uuid4().hex[:8]
        futures = [client.submit(run_cell, spec, shared, key=f"memviz-{spec.name}-{spec.key}-{tag}")
                   for spec in todo]
        for fut in as_completed(futures):
            on_done(fut.result())
    finally:
        if client is not None and own_client:
            client.close()
        if cluster is not None:
            cluster.close()


# ----------------------------------------------------------------- results
def results_frame(records) -> pd.DataFrame:
    """Records -> DataFrame with :data:`COLUMNS` and the relative reductions vs the baseline."""
    df = pd.DataFrame(list(records))
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    df = df.loc[:, list(COLUMNS)]
    for c in FIGURES + TIMINGS:
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    ok = df["status"] == "ok"
    base = df[ok & (df["method"] == "baseline")].set_index(["model", "seed"])
    idx = pd.MultiIndex.from_frame(df[["model", "seed"]])
    for fig, col in (("mem_ratio", "relative_reduction"), ("mem_auc", "relative_reduction_auc")):
        b = base[fig].reindex(idx).to_numpy(dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            rr = np.where(b > 0, (b - df[fig].to_numpy(dtype=float)) / b, np.nan)
        df[col] = np.where(ok, rr, np.nan)
    return df.reset_index(drop=True)


def summary_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation (ddof = 1; NaN with one seed) over seeds per method × model.

    Finished cells only. Columns: ``method, model, n_seeds`` then ``{figure}_mean`` and
    ``{figure}_std`` for every figure and timing. ``relative_reduction_mean`` is the mean
    of the per-seed (paired) reductions against the baseline of the same model and seed.
    """
    ok = results[results["status"] == "ok"]
    cols = list(FIGURES + TIMINGS)
    rows = []
    for (method, model), g in ok.groupby(["method", "model"], sort=False):
        row = {"method": method, "model": model, "n_seeds": int(g["seed"].nunique())}
        for c in cols:
            v = g[c].to_numpy(dtype=float)
            fin = v[np.isfinite(v)]
            row[f"{c}_mean"] = float(fin.mean()) if fin.size else np.nan
            row[f"{c}_std"] = float(fin.std(ddof=1)) if fin.size > 1 else np.nan
        rows.append(row)
    out = pd.DataFrame(rows, columns=["method", "model", "n_seeds"] + [f"{c}_{s}" for c in cols
                                                                       for s in ("mean", "std")])
    order = {m: i for i, m in enumerate(results["method"].drop_duplicates())}
    morder = {m: i for i, m in enumerate(results["model"].drop_duplicates())}
    return out.sort_values(["model", "method"], key=lambda s: s.map(morder if s.name == "model" else order),
                           kind="stable").reset_index(drop=True)


def format_summary(summary: pd.DataFrame) -> str:
    """A fixed-width text table of :func:`summary_table` (percentages, ± std over seeds)."""
    def pct(row, c, signed=False):
        m, s = row[f"{c}_mean"], row[f"{c}_std"]
        if not np.isfinite(m):
            return "-"
        txt = f"{m * 100:+.1f}%" if signed else f"{m * 100:.1f}%"
        return txt + (f" ±{s * 100:.1f}" if np.isfinite(s) else "")

    def num(row, c, fmt="{:.3f}"):
        m = row[f"{c}_mean"]
        return fmt.format(m) if np.isfinite(m) else "-"

    head = ["model", "method", "seeds", "mem ratio", "reduction", "mem (pruned)", "Mem-AUC", "shape", "trend",
            "MLE (real)", "DCR", "fit s", "eval s"]
    body = []
    for _, r in summary.iterrows():
        body.append([r["model"], r["method"], str(r["n_seeds"]), pct(r, "mem_ratio"),
                     pct(r, "relative_reduction", signed=True) if r["method"] != "baseline" else "",
                     pct(r, "mem_ratio_pruned"), num(r, "mem_auc"), pct(r, "shape"), pct(r, "trend"),
                     f"{num(r, 'mle')} ({num(r, 'mle_real')})", num(r, "dcr_share", "{:.2f}"),
                     num(r, "fit_seconds", "{:.0f}"), num(r, "evaluate_seconds", "{:.0f}")])
    if not body:
        return "no finished cell"
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    return "\n".join([lines[0], "  ".join("-" * w for w in widths)] + lines[1:])


# --------------------------------------------------------------------- CLI
def _split(text: str, what: str) -> list[str]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if not items:
        raise MemvizError(f"--{what}: empty list")
    return items


def _seeds(text: str) -> list[int]:
    try:
        return [int(x) for x in _split(text, "seeds")]
    except ValueError:
        raise MemvizError(f"--seeds: expected integers separated by commas, got {text!r}") from None


def cli_compare(args) -> dict:
    """``memviz compare``: run the grid, print the summary table; returns the final JSON line's dict.

    Progress goes to stderr (one bar for the warm-up, one for the cells); failed cells
    are listed on stderr. Every cell failing is an error (exit code 2).

    Returned keys: ``results_csv, out, cells`` (in the grid), ``ran`` (computed now, the
    others were finished), ``failed, seconds, n_removed, run_dir`` (the ranking's warm-up),
    ``mem_ratio`` and ``relative_reduction``: {method: mean over models and seeds}.
    """
    import sys

    from .cli import Bar
    from .data import load_companion, load_table

    t0 = time.perf_counter()
    methods = check_methods(_split(args.methods, "methods"))
    models, seeds = _split(args.models, "models"), _seeds(args.seeds)
    train = load_table(args.train, args.schema)
    test = load_companion(train, args.test, role="test")
    bars = {"warm-up": Bar("warm-up"), "cells": Bar("compare")}

    def progress(done, total, msg):
        if not args.quiet:
            bars["warm-up" if msg.startswith("warm-up") else "cells"](done, total, msg)

    model_params = None
    if getattr(args, "model_params", None):
        try:
            model_params = json.loads(args.model_params)
        except json.JSONDecodeError as exc:
            raise MemvizError(f"--model-params: not valid JSON ({exc.msg} at character {exc.pos})") from None
        if not isinstance(model_params, dict) or not all(isinstance(v, dict) for v in model_params.values()):
            raise MemvizError("--model-params: expected a JSON object {model: {param: value}}")
    res = run_grid(train, test, methods, models, seeds, args.out, run_dir=args.run, p=args.p, k=args.k, T=args.T,
                   epochs=args.epochs, device=args.device, n_jobs=args.n_jobs, backend=args.backend,
                   scheduler=args.scheduler, progress=progress, ratio=getattr(args, "ratio", 0.3),
                   model_params=model_params, threads=getattr(args, "threads", None))
    failed = res[res["status"] != "ok"]
    for _, r in failed.iterrows():
        sys.stderr.write(f"memviz compare: cell {r['method']}/{r['model']}/seed {r['seed']} failed: {r['error']}\n")
    if len(failed) == len(res):
        raise MemvizError(f"every cell failed; first error: {failed['error'].iloc[0]}")
    sys.stdout.write(format_summary(summary_table(res)) + "\n")
    sys.stdout.flush()
    ok = res[res["status"] == "ok"]
    by_method = ok.groupby("method", sort=False)
    exp = json.loads((Path(args.out) / "experiment.json").read_text(encoding="utf-8"))
    return {"results_csv": str(Path(args.out) / "results.csv"), "out": str(args.out), "cells": int(len(res)),
            "ran": exp.get("ran"), "failed": int(len(failed)), "seconds": round(time.perf_counter() - t0, 3),
            "n_removed": exp.get("selection", {}).get("n_removed"), "run_dir": exp.get("selection", {}).get("run_dir"),
            "mem_ratio": {m: float(g["mem_ratio"].mean()) for m, g in by_method},
            "relative_reduction": {m: float(g["relative_reduction"].mean()) for m, g in by_method}}
