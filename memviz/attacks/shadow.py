"""Running a targeted shadow-model attack: train the shadows of the plan, one committed folder each, then test.

Python::

    from memviz.attacks.design import ShadowConfig, choose_targets
    from memviz.attacks.shadow import attack_run, targeted_attack

    # on any table: the targets, the settings, a folder (a rerun resumes it)
    targets = choose_targets(train, holdout, top=ids, n_random=20, n_holdout=20)
    res = targeted_attack(train, targets, ShadowConfig(n_shadows=32, model_params={"epochs": 300}),
                          "attack_out", holdout=holdout, release=synthetic_frame)
    # on a warm-up run: DynamicCut's top rows, random rows, hold-out controls, the run's last check as
    # the release, the run's own model settings; written to RUN/attacks/targeted
    res = attack_run("runs/adult", n_top=20, n_random=20, n_holdout=20, n_shadows=32)
    res.groups, res.comparison("top", "random"), res.release, res.sentence()

Each shadow (:mod:`memviz.attacks.design`) trains TabDDPM on its training rows (CPU or CUDA: the
``device`` of :class:`~memviz.attacks.design.ShadowConfig`, ``auto`` by default), samples ``n_samples``
rows, reads the features of every target (:mod:`memviz.attacks.features`) and is committed to the
attack folder as it finishes (:mod:`memviz.attacks.store`): killed at any point, a rerun reuses every
committed shadow and trains the rest; the result (:mod:`memviz.attacks.lira`) is computed from the
committed features once all are there.

Sizes (measured on one shared CPU core, ``benchmarks/bench_attacks.py``): a shadow at the study's
regime scale (250 rows, cpu-quick, 4,000 steps, 2,000 generated rows) takes about 20–40 s, so 32
shadows about 15–20 min; the paper network on full Adult needs a GPU (``benchmarks/gpu_attacks.sh``).
"""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from memviz.attacks.design import ShadowConfig, Targets, choose_targets, dynamiccut_top, make_plan, shadow_seed
from memviz.attacks.features import FeatureSpace
from memviz.attacks.lira import TargetedResult, analyse
from memviz.attacks.store import AttackStore, run_attack_dir
from memviz.errors import BadOption, BadRunFolder, BadTable, MemvizError
from memviz.models.presets import PRESETS
from memviz.tables.data import Table, fingerprint, load_companion
from memviz.tables.holdout import checked_holdout
from memviz.warmup.run import load_warmup
from memviz.warmup.store import RunStore


def _fit_shadow(table: Table, cfg: ShadowConfig, seed: int):
    from memviz.models.tabddpm import TabDDPM  # lazy: loads sklearn, torch (optional)

    return TabDDPM(cfg.preset, **cfg.model_params, device=cfg.device, seed=seed).fit(table)


def targeted_attack(train: Table, targets: Targets, config: ShadowConfig, out, *, holdout: Table | None = None,
                    release: pd.DataFrame | None = None, run: dict | None = None, keep_samples: bool = True,
                    progress: Callable[[dict], None] | None = None,
                    should_stop: Callable[[], bool] | None = None) -> TargetedResult | None:
    """Train the plan's shadows into ``out`` (resuming what is there) and test; None when stopped early.

    Parameters
    ----------
    train : the training table (the real model's).
    targets : :func:`~memviz.attacks.design.choose_targets`.
    config : :class:`~memviz.attacks.design.ShadowConfig`.
    out : the attack folder (:mod:`memviz.attacks.store`).
    holdout : real rows outside ``train``: the replacements of out targets and the hold-out targets.
    release : the released model's generated rows (schema columns), for the release reading; its size
        is the shadows' ``n_samples`` unless the config sets one.
    run : where the targets came from, recorded with the result.
    keep_samples : keep each shadow's generated rows (samples.parquet).
    progress : called with ``{"event": "shadow", "shadow", "done", "total", "seconds"}`` after each
        shadow and ``{"event": "done", ...}`` at the end.
    should_stop : polled before each shadow; True stops (the committed shadows stay).
    """
    cfg = config.checked()
    if holdout is not None:      # refused as every command refuses it (memviz.tables.holdout.checked_holdout)
        holdout = checked_holdout(train, holdout).table
    cols = list(train.schema.columns)
    if release is not None:
        missing = [c for c in cols if c not in release.columns]
        if missing:
            raise BadTable(f"release: column {missing[0]!r} of the training table is missing")
        release = release[cols]
    plan = make_plan(train, holdout, targets, cfg)
    rows = targets.rows(train, holdout)
    space = FeatureSpace.fit(train.data.loc[plan.background, cols], rows, train.schema, cfg.k,
                             others=[holdout.data] if holdout is not None else ())
    n_samples = int(cfg.n_samples or (len(release) if release is not None else len(train)))
    spec = {"config": cfg.to_dict(), "n_samples": n_samples, "targets": targets.to_records(), "plan": plan.to_dict(),
            "train": fingerprint(train), "holdout": fingerprint(holdout) if holdout is not None else "",
            "release": None if release is None else {"rows": len(release),
                                                     "fingerprint": fingerprint(Table(release, train.schema))},
            "run": run}
    store = AttackStore(out).acquire()
    try:
        store.begin(spec)
        done = set(store.done())
        T = len(targets)
        for s in range(cfg.n_shadows):
            if s in done:
                continue
            if should_stop is not None and should_stop():
                return None
            t0 = time.perf_counter()
            frame = plan.shadow_frame(s, train, holdout, targets)
            seed = shadow_seed(cfg.seed, s)
            model = _fit_shadow(Table(frame, train.schema, f"shadow {s}"), cfg, seed)
            gen = model.sample(n_samples, seed=seed)
            feats = space.features(gen)
            secs = time.perf_counter() - t0
            store.commit(s, feats, np.arange(T), {"seconds": secs, "rows": len(frame), "seed": seed,
                                                  "device": str(model.device_), "n_samples": n_samples,
                                                  "steps": int(model.step_)},
                         gen if keep_samples else None)
            done.add(s)
            if progress is not None:
                progress({"event": "shadow", "shadow": s, "done": len(done), "total": cfg.n_shadows, "seconds": secs})
        shadows, F = store.features(T)
        rel = space.features(release) if release is not None else None
        result = analyse(F, plan.inside[shadows], targets.named(train, holdout), release_features=rel,
                         config={**cfg.to_dict(), "n_samples": n_samples}, run=run, seconds=store.seconds(),
                         seed=cfg.seed)
        store.write_result(result)
        if progress is not None:
            progress({"event": "done", "total": cfg.n_shadows, "seconds": result.seconds})
        return result
    finally:
        store.release()


# ------------------------------------------------------------------ on a warm-up run
def attack_holdout(run_dir, train: Table, holdout=None) -> Table | None:
    """The run's hold-out: ``holdout`` (a Table or a file) if given, else the floor's own file when it still
    holds the same rows, else None."""
    if isinstance(holdout, Table):
        return holdout
    if holdout is not None:
        return load_companion(train, holdout, role="test")
    floor = load_warmup(run_dir).floor
    if floor is None or not floor.holdout_source or not Path(floor.holdout_source).is_file():
        return None
    try:
        t = load_companion(train, floor.holdout_source, role="test")
    except MemvizError:
        return None
    return t if fingerprint(t) == floor.holdout_fingerprint else None


def run_settings(run_dir, check: int | None = None) -> tuple[str, dict, int, int]:
    """(preset, TabDDPM params, check, epoch) of a run's check: the run's overrides with ``steps`` set to the
    optimiser steps the run had taken at that check, E_c · ⌈N / min(B, N)⌉ (so a shadow of another size
    trains as long)."""
    wr = load_warmup(run_dir)
    done = sorted(int(c) for c in wr.checks["check"].unique())
    check = done[-1] if check is None else int(check)
    if check not in done:
        raise BadOption(f"{run_dir}: check {check} is not a finished check (finished: {', '.join(map(str, done))})")
    epoch = int(wr.checks.loc[wr.checks["check"] == check, "epoch"].iloc[0])
    params = {k: v for k, v in dict(wr.config.model_params).items() if k not in ("epochs", "steps")}
    n = int(wr.dynamics.n_rows)
    b = int(params.get("batch_size", PRESETS[wr.config.preset].batch_size))
    params["steps"] = epoch * math.ceil(n / min(b, n))
    return wr.config.preset, params, check, epoch


def attack_run(run_dir, *, n_top: int = 20, named=(), n_random: int = 20, n_holdout: int = 20, n_shadows: int = 32,
               holdout=None, check: int | None = None, out=None, p: float | None = None, k: int | None = None,
               T=None, device: str = "auto", seed: int = 0, model_params: dict | None = None,
               keep_samples: bool = True, progress=None, should_stop=None) -> TargetedResult | None:
    """The targeted attack on a warm-up run (module docstring): DynamicCut's ``n_top`` highest-ranked rows
    (p, k, T: its defaults when None), the ``named`` rows (e.g. the audit's over-copied rows), ``n_random``
    random training rows and ``n_holdout`` hold-out rows; shadows with the run's settings at ``check``
    (default: the last), whose generated rows are the release; ``model_params`` override the run's.
    Written to ``out`` (default :func:`~memviz.attacks.store.run_attack_dir`)."""
    store = RunStore.open(run_dir)
    train = store.train()
    hold = attack_holdout(run_dir, train, holdout)
    if hold is not None:     # the training table (or much of it) as the controls would read "no better than chance"
        hold = checked_holdout(train, hold).table
    if hold is None and n_holdout:
        raise BadRunFolder(f"{run_dir}: hold-out targets need the run's hold-out; its file is gone or changed "
                          "(pass --holdout) or ask for none")
    preset, params, check, epoch = run_settings(run_dir, check)
    params.update(model_params or {})
    top = dynamiccut_top(run_dir, n_top, p, k, T) if n_top else np.zeros(0, np.int64)
    targets = choose_targets(train, hold, top=top, named=named, n_random=n_random, n_holdout=n_holdout, seed=seed)
    release = store.samples(check)[list(train.schema.columns)]
    cfg = ShadowConfig(n_shadows=n_shadows, preset=preset, model_params=params, seed=seed, device=device)
    m = store.manifest()
    run = {"run_dir": str(store.path), "run_id": str(m.get("run_id") or store.path.name), "check": check,
           "epoch": epoch, "p": p, "k": k, "T": T}
    return targeted_attack(train, targets, cfg, out if out is not None else run_attack_dir(run_dir), holdout=hold,
                           release=release, run=run, keep_samples=keep_samples, progress=progress,
                           should_stop=should_stop)
