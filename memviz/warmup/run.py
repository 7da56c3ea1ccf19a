"""The memorization warm-up: train TabDDPM and, every few epochs, measure who is copied.

Every ``check_every`` epochs (and after the last epoch) the tracker samples
``n_samples`` rows (default: as many as training rows, as in the papers) and runs the
memorization engine against the training table; each memorized generated row is
credited to its NN1 training row. The long table of a check has one row per generated
row: ``check, epoch, synthetic_id, nn1 (row_id), nn2, d1, d2, ratio, memorized``.
Per-row quantities are derived from it by :func:`memviz.dynamics.rows.compute_dynamics`.

Given a hold-out (real rows the model never trains on), the warm-up measures the floor of
the training rows once, before training, with its own engine (:mod:`memviz.measure.floor`), and
every check's summary gains its excess over that floor with a 95 % interval. Without a
hold-out there is no floor (``None``), never a number.

The training loop knows nothing of this: the tracking callbacks of :mod:`memviz.warmup.tracking`
sample and measure, cancel and report progress, and the run store is written from the
tracker's ``on_check`` hook.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, TYPE_CHECKING

import pandas as pd

from memviz.device import describe_device, resolve_device
from memviz.dynamics.rows import (
    DEFAULT_TOP_FRAC,
    RowDynamics,
    check_summary,
    compute_dynamics,
)
from memviz.dynamics.summaries import summarize
from memviz.engine.neighbors import NeighborEngine
from memviz.errors import BadOption, BadRunFolder, MemvizError, SEED_MAX, checked_seed
from memviz.io import to_jsonable
from memviz.measure.floor import Floor, excess, excess_columns, holdout_floor
from memviz.models.callbacks import Callback
from memviz.models.presets import PRESETS
from memviz.tables.data import Table, fingerprint
from memviz.warmup import checkpoints
from memviz.warmup.checkpoints import check_retention
from memviz.warmup.frontier import frontier_columns
from memviz.warmup.manifest import Manifest
from memviz.warmup.store import MANIFEST, RunStore
from memviz.warmup.tracking import (
    CheckResult,
    MemorizationTracker,
    ProgressEvents,
    StopCallback,
)

if TYPE_CHECKING:
    from memviz.models.tabddpm import TabDDPM

# torch-heavy modules (memorization, neighbors, models) are imported where used, so that
# reading a finished run (the dashboard) never loads torch.

DEFAULT_CHECKS = 25
#: a check beside training from this many generated rows per check (:func:`overlap_checks`)
OVERLAP_ROWS = 2_000
#: the settings that define what a warm-up computes: a resume (``run_warmup(resume=True)``) and a
#: reuse (``ensure_warmup``, the comparison's and the study's) both refuse a run where any differs.
#: Not in it: device, keep_samples, checkpoint_every and keep_checkpoints change where and what is
#: kept, not the result.
IDENTITY = ("preset", "epochs", "check_every", "n_samples", "seed", "distance", "top_frac", "model_params",
            "quality_rows")


@dataclass(frozen=True)
class WarmupConfig:
    """Settings of a warm-up run.

    Parameters
    ----------
    preset : TabDDPM preset (``cpu-quick`` or ``paper``).
    epochs : training epochs E (None: the preset's).
    check_every : m, epochs between checks (None: ``ceil(E / 25)``, i.e. about 25 checks).
    n_samples : G, generated rows per check (None: the number of training rows).
    seed : seeds the model, training and every check's sampling.
    device : ``auto``, ``cpu`` or ``cuda``.
    distance : ``paper`` or ``standardized``.
    top_frac : share of rows in the Top group (highest total copy count).
    keep_samples : store the generated rows of every check (for the leak explorer).
    checkpoint_every : save a model checkpoint every this many checks (resume point).
    model_params : further TabDDPM overrides (``layers``, ``lr``, ``n_timesteps``...).
    keep_checkpoints : which checks keep their weights for sampling (``all``, ``every:K``,
        ``last:N``, ``none``; :mod:`memviz.warmup.checkpoints`, with the disk cost).
    quality_rows : generated rows whose Shape and Trend each check measures, the first ones
        (None: all; 0: no quality), when the run is given a ``quality`` scorer
        (:func:`run_warmup`).
    """

    preset: str = "cpu-quick"
    epochs: int | None = None
    check_every: int | None = None
    n_samples: int | None = None
    seed: int = 0
    device: str = "auto"
    distance: str = "paper"
    top_frac: float = DEFAULT_TOP_FRAC
    keep_samples: bool = True
    checkpoint_every: int = 1
    model_params: dict = field(default_factory=dict)
    keep_checkpoints: str = "all"
    quality_rows: int | None = None

    def resolved(self, n_train: int, schema=None) -> "WarmupConfig":
        """Fill epochs, check_every and n_samples; validate (with the training table's ``schema``, also that a
        private run's column statistics can be released: :meth:`memviz.models.tabddpm.TabDDPM.check_privacy`)."""
        if self.preset not in PRESETS:
            raise BadOption(f"preset {self.preset!r}: unknown (use {', '.join(PRESETS)})")
        if not isinstance(self.model_params, dict):  # before .get below; the values after epochs
            raise BadOption(f"model_params: expected a dict of TabDDPM parameters, "
                            f"got {type(self.model_params).__name__}")
        epochs = self.epochs if self.epochs is not None else self.model_params.get("epochs")
        epochs = PRESETS[self.preset].epochs if epochs is None else epochs
        if not _is_whole(epochs):
            raise BadOption(f"epochs={epochs!r}: must be a whole number")
        epochs = int(epochs)
        if epochs < 1:
            raise BadOption(f"epochs={epochs}: must be at least 1")
        every = int(self.check_every) if self.check_every is not None else max(1, math.ceil(epochs / DEFAULT_CHECKS))
        if every < 1:
            raise BadOption(f"check_every={every}: must be at least 1")
        n = int(self.n_samples) if self.n_samples is not None else n_train
        if n < 1:
            raise BadOption(f"n_samples={n}: must be at least 1")
        if not 0 < self.top_frac < 1:
            raise BadOption(f"top_frac={self.top_frac}: must be between 0 and 1")
        checked_seed(self.seed)
        _check_model_params(self.preset, self.model_params, epochs, n_train, schema)

        q = self.quality_rows
        if q is not None and (not _is_whole(q) or q < 0):
            raise BadOption(f"quality_rows={q!r}: must be a whole number >= 0 (0: no quality; None: every row)")
        return WarmupConfig(self.preset, epochs, every, n, int(self.seed), self.device, self.distance,
                            float(self.top_frac), self.keep_samples, max(1, int(self.checkpoint_every)),
                            dict(self.model_params), keep_checkpoints=check_retention(self.keep_checkpoints),
                            quality_rows=None if q is None else int(q))

    def check_epochs(self) -> list[int]:
        """m, 2m, ... and E."""
        eps = list(range(self.check_every, self.epochs + 1, self.check_every))
        if not eps or eps[-1] != self.epochs:
            eps.append(self.epochs)
        return eps

    def to_dict(self) -> dict:
        return asdict(self)

    def identity(self) -> tuple:
        """What makes two warm-ups the same run: the :data:`IDENTITY` settings, as canonical JSON
        (so ``[256, 256]`` and ``(256, 256)`` are one value). Resume and reuse both compare it."""
        return tuple(json.dumps(to_jsonable(getattr(self, k)), sort_keys=True) for k in IDENTITY)

    def differs_from(self, other: "WarmupConfig") -> str | None:
        """``None`` when ``other`` is the same run, else one line naming the first setting that
        differs (``"model_params={...} differs from the run's {...}"``). Both configs resolved."""
        for name, mine, theirs in zip(IDENTITY, self.identity(), other.identity()):
            if mine != theirs:
                return f"{name}={theirs} differs from the run's {mine}"
        return None


def _is_whole(v) -> bool:
    """An integer, or a float with an integer value (JSON may say 100.0); never a bool."""
    if isinstance(v, bool):
        return False
    return isinstance(v, int) or (isinstance(v, float) and math.isfinite(v) and v == int(v))


def saved_config(manifest: Manifest, source) -> WarmupConfig:
    """The :class:`WarmupConfig` stored in a run's (validated) manifest; BadRunFolder naming
    ``source`` and the field when a value has the wrong type or range."""
    cfg = manifest.config
    kinds = {"preset": (str,), "epochs": (int,), "check_every": (int,), "n_samples": (int,), "seed": (int,),
             "device": (str,), "distance": (str,), "top_frac": (int, float), "keep_samples": (bool,),
             "checkpoint_every": (int,), "model_params": (dict,), "keep_checkpoints": (str,),
             "quality_rows": (int, type(None))}
    kw = {k: v for k, v in cfg.items() if k in WarmupConfig.__dataclass_fields__}
    for k, v in kw.items():
        bad = not isinstance(v, kinds[k]) or (isinstance(v, bool) and bool not in kinds[k])
        if k in ("epochs", "check_every", "n_samples", "checkpoint_every") and not bad:
            bad = v < 1
        if k == "quality_rows" and not bad and v is not None:
            bad = v < 0
        if k == "seed" and not bad:
            bad = not 0 <= v <= SEED_MAX
        if bad:
            raise BadRunFolder(f"{source}: manifest field 'config.{k}': {v!r} is not a valid {k}")
    if not 0 < kw.get("top_frac", DEFAULT_TOP_FRAC) < 1:
        raise BadRunFolder(f"{source}: manifest field 'config.top_frac': must be between 0 and 1")
    return WarmupConfig(**kw)


#: TabDDPM parameters a warm-up sets itself (not allowed in ``model_params``)
_OWN_PARAMS = ("preset", "device", "seed")


def _check_model_params(preset: str, model_params, epochs: int, n_train: int, schema=None) -> None:
    """Unknown or badly typed TabDDPM overrides are a user error (one line), not a TypeError; so is a
    privacy setting that cannot train ``epochs`` epochs of ``n_train`` rows privately."""
    from memviz.models.tabddpm import TabDDPM  # lazy: torch (memviz.models.tabddpm); memviz warmup --help loads this module

    if not isinstance(model_params, dict):
        raise BadOption(f"model_params: expected a dict of TabDDPM parameters, got {type(model_params).__name__}")
    allowed = [k for k in TabDDPM().get_params() if k not in _OWN_PARAMS]
    for k in model_params:
        if k not in allowed:
            raise BadOption(f"model_params: unknown TabDDPM parameter {k!r} (use {', '.join(allowed)})")
    try:
        model = TabDDPM(preset, **{**model_params, "epochs": epochs})  # validates the values (TabDDPM.config)
    except (TypeError, ValueError) as exc:
        raise BadOption(f"model_params: invalid value ({exc})") from None
    model.check_privacy(n_train, schema)


@dataclass(frozen=True)
class WarmupResult:
    """What a warm-up produced (also readable later from its run directory)."""

    config: WarmupConfig
    checks: pd.DataFrame           # the long table
    per_check: pd.DataFrame        # check, epoch, mem_ratio, mem_auc, ...
    dynamics: RowDynamics
    status: str
    seconds: float
    run_dir: Path | None = None
    model: TabDDPM | None = None
    floor: Floor | None = None     # None: the run was given no hold-out

    @property
    def final_mem_ratio(self) -> float:
        return float(self.per_check["mem_ratio"].iloc[-1]) if len(self.per_check) else float("nan")

    def summary(self) -> dict:
        return summarize(self.dynamics).to_dict()


def run_warmup(train: Table, config: WarmupConfig | None = None, run_dir: str | Path | None = None, *,
               resume: bool = False, progress: Callable[[dict], None] | None = None,
               should_stop: Callable[[], bool] | None = None, holdout: Table | None = None,
               quality: Callable | None = None) -> WarmupResult:
    """Train TabDDPM on ``train`` for E epochs, checking memorization every m epochs.

    Parameters
    ----------
    train : the training table.
    config : :class:`WarmupConfig` (defaults: cpu-quick preset, ~25 checks, G = N).
    run_dir : where to store the run (None: in memory only).
    resume : continue the run in ``run_dir`` from its last checkpoint; the result equals
        an uninterrupted run with the same seed.
    progress : called with event dicts: ``{"event": "floor", ...}`` once before training (with a
        hold-out), ``{"event": "epoch", "epoch", "epochs", "loss"}`` after every epoch,
        ``{"event": "check", ...}`` (the check's summary and ``checks``, the number of checks)
        after every check, ``{"event": "done", "status", "seconds"}``.
    should_stop : polled after every epoch; True cancels (finished checks are kept).
    holdout : real rows the model never trains on (the test split or a hold-out), never
        training rows. The floor of ``train`` is measured on them once, before training, with
        the warm-up's engine, stored (``floor.json``) and reused on resume; each check's
        summary then carries ``floor``, ``excess``, ``excess_low`` and ``excess_high``.
        None: no floor.
    quality : a scorer factory, ``quality(train, rows)`` -> a callable that takes a check's
        generated rows and returns ``{"shape", "trend", "quality_rows", "quality_seconds"}``
        (:class:`memviz.evaluate.quality.CheckQuality`, which the CLI, the dashboard and the
        comparison pass: the warm-up sits below the evaluation layer). Each check's summary then
        carries them. None (or ``config.quality_rows == 0``): no quality.
    """
    held: list[RunStore] = []  # the run store once created or opened: its lock is let go however this ends
    try:
        return _warmup(train, config, run_dir, resume, progress, should_stop, holdout, held, quality)
    finally:
        for store in held:
            store.release()


def _warmup(train: Table, config: WarmupConfig | None, run_dir, resume: bool, progress, should_stop,
            holdout: Table | None, held: list, quality=None) -> WarmupResult:
    """:func:`run_warmup`'s work; the store it creates or opens goes into ``held``."""
    from memviz.models.tabddpm import TabDDPM  # lazy: torch (memviz.models.tabddpm); memviz warmup --help loads this module

    t_start = time.perf_counter()
    config = (config or WarmupConfig()).resolved(len(train), train.schema)
    device = resolve_device(config.device)
    store, state, first_check, done_checks, floor = None, None, 0, [], None
    engine = NeighborEngine(distance=config.distance, device=config.device).fit(train)
    if run_dir is not None and resume:
        store = RunStore.open(run_dir).acquire()  # a second writer of a live run: BadRunFolder
        held.append(store)
        state, first_check, done_checks = _prepare_resume(store, train, config)
        floor = _resumed_floor(store, holdout)
        checkpoints.drop_after(store.path, first_check - 1)
    if floor is None and holdout is not None:  # before the run folder exists: a bad hold-out leaves nothing
        floor = holdout_floor(train, holdout, distance=config.distance, engine=engine)
    if run_dir is not None and not resume:
        store = RunStore.create(run_dir, train, config.to_dict(), device=describe_device(device))
        held.append(store)
    if store is not None and floor is not None and store.read_floor() is None:
        store.write_floor(floor.to_dict(), floor.to_frame())
    if store is not None and holdout is not None and floor is not None and store.holdout() is None:
        store.write_holdout(holdout)                 # the audit of a check reads closeness against these rows
    if progress is not None and floor is not None:
        progress({"event": "floor", "floor": floor.floor, "floor_ci": list(floor.ci), "n_holdout": floor.n_holdout})
    params = {k: v for k, v in config.model_params.items() if k != "epochs"}
    model = TabDDPM(config.preset, epochs=config.epochs, device=config.device, seed=config.seed, **params)
    check_epochs = config.check_epochs()
    collected: list[pd.DataFrame] = []
    summaries: list[dict] = [_with_excess(s, config.n_samples, floor) for s in done_checks]
    timings = {"sample_seconds": 0.0, "memorize_seconds": 0.0}

    def on_check(cr: CheckResult) -> None:
        timings["sample_seconds"] += cr.sample_seconds
        timings["memorize_seconds"] += cr.memorize_seconds
        timings["quality_seconds"] = timings.get("quality_seconds", 0.0) + cr.quality.get("quality_seconds", 0.0)
        summary = _with_excess(cr.summary(), len(cr.long), floor)
        if (eps := model.epsilon_at(cr.epoch)) is not None:   # private training: a table from this check has it
            summary["epsilon_spent"] = eps
        summaries.append(summary)
        if store is not None:
            # check files (and the check's weights), then the manifest, then the checkpoint: a kill
            # between any two leaves a checkpoint no newer than the manifest's checks, so a resume
            # redoes what is missing
            store.write_check(cr.check, cr.long, cr.samples if config.keep_samples else None)
            state = cr.state if cr.state is not None else model.state_dict()
            checkpoints.save_checkpoint(store.path, cr.check, state, config.keep_checkpoints, final=len(check_epochs) - 1)
            store.update(checks=summaries, progress={"epoch": cr.epoch, "epochs": config.epochs})
            if (cr.check + 1) % config.checkpoint_every == 0 or cr.epoch == config.epochs:
                store.save_checkpoint({"model": state, "check": cr.check, "epoch": cr.epoch})
        else:
            collected.append(cr.long)
        if progress is not None:
            progress({"event": "check", **summary, "checks": len(check_epochs)})

    scorer = quality(train, config.quality_rows) if quality is not None and config.quality_rows != 0 else None
    tracker = MemorizationTracker(train, check_epochs, config.n_samples, config.seed, engine, on_check,
                                  first_check=first_check, quality=scorer, overlap=overlap_checks(device, config))
    callbacks: list[Callback] = [tracker]
    stopper = None
    if should_stop is not None or store is not None:
        stopper = StopCallback(lambda: bool((should_stop and should_stop()) or (store and store.cancel_requested())))
        callbacks.append(stopper)
        tracker.stopping = lambda: stopper.stopped     # a cancel drops the checks not yet started
    if progress is not None:
        callbacks.append(ProgressEvents(progress, config.epochs))
    status = "finished"
    try:
        if state is not None and state["epoch"] >= config.epochs:
            model = TabDDPM.from_state_dict(state, device=config.device)
        else:
            model.fit(train, callbacks=callbacks, resume_state=state)
        if stopper is not None and stopper.stopped:
            status = "cancelled"
    except BaseException as exc:
        try:                                           # the checks started (after a failure, every check
            tracker.close(model, drop=isinstance(exc, KeyboardInterrupt))   # queued) are written before the status
        except BaseException:                          # noqa: BLE001 - its error, or a second Ctrl-C: the
            pass                                       # status below is written, the first error raised
        if store is not None:
            status = "cancelled" if isinstance(exc, KeyboardInterrupt) else "failed"
            store.update(status=status, error=f"{type(exc).__name__}: {exc}"[:500])
        raise
    checks = store.checks() if store is not None else (
        pd.concat(collected, ignore_index=True) if collected else pd.DataFrame())
    if checks.empty:
        raise BadRunFolder("the warm-up stopped before its first check; nothing to analyse")
    dyn = compute_dynamics(checks, train.row_ids, top_frac=config.top_frac)
    per_check = frontier_columns(_per_check(checks, floor), summaries)
    seconds = time.perf_counter() - t_start
    if store is not None:
        store.consolidate(dyn.to_frame(), dyn.to_long())
        prev = store.read().total_seconds if resume else 0.0
        privacy = {"privacy": dict(model.privacy_)} if getattr(model, "privacy_", None) else {}
        store.update(status=status, timings={"total_seconds": prev + seconds, **timings},
                     summary={**summarize(dyn).to_dict(), **privacy})
        store.clear_cancel()
    if progress is not None:
        progress({"event": "done", "status": status, "seconds": seconds})
    return WarmupResult(config, checks, per_check, dyn, status, seconds,
                        Path(run_dir) if run_dir is not None else None, model, floor)


def overlap_checks(device, config: WarmupConfig) -> bool:
    """Whether the checks run beside training (:class:`MemorizationTracker`'s ``overlap``): on a
    CPU with at least two cores, when a check generates at least :data:`OVERLAP_ROWS` rows (below
    that a check takes a fraction of a second and a second thread gains nothing)."""
    return device.type == "cpu" and (os.cpu_count() or 1) >= 2 and config.n_samples >= OVERLAP_ROWS


def _with_excess(summary: dict, n_synthetic: int, floor: Floor | None) -> dict:
    """A check's summary plus floor, floor_low, floor_high, excess, excess_low, excess_high
    (unchanged without a floor, or when they are there already: a resumed run's earlier checks),
    so a live view draws the same floor band as the finished run's per-check table."""
    if floor is None or "excess" in summary:
        return summary
    ex = excess(summary["mem_ratio"], n_synthetic, floor)
    return {**summary, "floor": ex.floor, "floor_low": floor.low, "floor_high": floor.high, "excess": ex.excess,
            "excess_low": ex.low, "excess_high": ex.high}


def _per_check(checks: pd.DataFrame, floor: Floor | None) -> pd.DataFrame:
    """check_summary, plus floor, floor_low, floor_high, excess, excess_low, excess_high with a floor."""
    per_check = check_summary(checks)
    return per_check if floor is None else excess_columns(per_check, floor)


def _stored_floor(store: RunStore) -> Floor | None:
    stored = store.read_floor()
    if stored is None:
        return None
    try:
        return Floor.from_stored(*stored)
    except (KeyError, TypeError, ValueError, MemvizError):
        raise BadRunFolder(f"{store.path}: floor.json is not a readable floor") from None


def _resumed_floor(store: RunStore, holdout: Table | None) -> Floor | None:
    """The run's stored floor; a hold-out given on resume must be the one it was measured on."""
    floor = _stored_floor(store)
    if floor is not None and holdout is not None and floor.holdout_fingerprint != fingerprint(holdout):
        raise BadRunFolder(f"{store.path}: this run's floor was measured on another hold-out; resume with the same one")
    return floor


def _prepare_resume(store: RunStore, train: Table, config: WarmupConfig):
    m = store.read()
    if m.data.fingerprint != fingerprint(train):
        raise BadRunFolder(f"{store.path}: this run was trained on another table; resume it with the same data")
    differs = saved_config(m, store.path / MANIFEST).differs_from(config)
    if differs:
        raise BadRunFolder(f"{store.path}: {differs}; resume with the run's settings")
    ck = store.load_checkpoint()
    if ck is None:
        store.drop_checks_after(-1)
        return None, 0, []
    last = int(ck["check"])
    store.drop_checks_after(last)
    done = [dict(c) for c in m.checks if c["check"] <= last]
    store.clear_cancel()
    store.update(status="running")
    return ck["model"], last + 1, done


def load_warmup(run_dir: str | Path | RunStore) -> WarmupResult:
    """Reopen a stored run (no unpickling): checks, per-check summary, dynamics and the floor
    (None for a run without a hold-out, older runs included). ``status`` is the manifest's, or
    ``interrupted`` for a run that says ``running`` but whose writer is gone
    (:meth:`RunStore.status`). Anything malformed in the folder is one BadRunFolder line.
    Given an open :class:`RunStore`, its manifest and training table are read once for both."""
    store = run_dir if isinstance(run_dir, RunStore) else RunStore.open(run_dir)
    run_dir = store.path
    m = store.read()
    cfg = saved_config(m, store.path / MANIFEST)
    checks = store.checks()
    train = store.train()
    if checks.empty:
        raise BadRunFolder(f"{store.path}: the run has no finished check yet")
    dyn = compute_dynamics(checks, train.row_ids, top_frac=cfg.top_frac)
    floor = _stored_floor(store)
    return WarmupResult(cfg, checks, frontier_columns(_per_check(checks, floor), m.checks), dyn,
                        store.status(m), m.total_seconds, Path(run_dir), floor=floor)


def ensure_warmup(train: Table, config: WarmupConfig, run_dir: str | Path,
                  progress: Callable[[dict], None] | None = None, holdout: Table | None = None,
                  quality: Callable | None = None) -> WarmupResult:
    """Reuse, resume or start the warm-up in ``run_dir`` (the comparison's and the study's).

    * no run there: start one;
    * a finished run on the same table with the same :data:`IDENTITY` settings: reuse it;
    * an unfinished run on the same table: resume it (same result as uninterrupted).

    ``holdout``: real rows outside ``train`` for the floor, ``quality``: the per-check scorer
    (see :func:`run_warmup`).

    A run on another table, or a finished one with other settings, is a BadRunFolder: the
    folder is not silently overwritten.
    """
    run_dir = Path(run_dir)
    if not (run_dir / MANIFEST).exists():
        return run_warmup(train, config, run_dir, progress=progress, holdout=holdout, quality=quality)
    m = RunStore.open(run_dir).read()
    if m.data.fingerprint != fingerprint(train):
        raise BadRunFolder(f"{run_dir}: a warm-up of another table is there; choose another folder or delete it")
    if m.status != "finished":
        return run_warmup(train, config, run_dir, resume=True, progress=progress, holdout=holdout, quality=quality)
    differs = saved_config(m, run_dir / MANIFEST).differs_from(config.resolved(len(train)))
    if differs:
        raise BadRunFolder(f"{run_dir}: a finished warm-up made with other settings is there ({differs}); "
                           "delete it or choose another folder")
    return load_warmup(run_dir)
