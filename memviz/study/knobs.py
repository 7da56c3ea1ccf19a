"""Separate training runs: the excess against a knob (part 2) and generators' budgets (part 6).

Knob run (TabDDPM, the scale's preset): ``n`` training rows drawn from the training split
(seed 0, so n = the scale's rows gives the scale's own table), ``epochs`` epochs, then G
generated rows (seed s). Its floor is measured on the same n rows with the scale's test
rows (the floor depends on n and on the subset), and

    excess = mem ratio − floor, 95 % Newcombe hybrid score interval (:func:`memviz.measure.floor.excess`).

Budget run (any generator): the scale's training and test rows, ``epochs`` epochs, as many
generated rows as training rows; MLE (ROC AUC of a booster trained on the generated rows,
scored on the test rows) beside the real-data line (the same booster trained on the real
rows), plus mem ratio and excess. It says at which cost a generator is good enough for its
memorization to mean something.

Each run is one JSON record, reused when its settings are unchanged.
"""
from __future__ import annotations

import time
from pathlib import Path

from memviz.device import torch_threads
from memviz.evaluate.synthetic import mle, quality
from memviz.io import settings_key
from memviz.measure.floor import excess, holdout_floor
from memviz.measure.memorization import memorization
from memviz.models import make_model
from memviz.study.floors import study_tables
from memviz.study.scales import StudyScale
from memviz.study.util import run_jobs, save_record, stored
from memviz.tables.data import fingerprint


def _fit(model_name: str, train, seed: int, device: str, params: dict):
    t0, c0 = time.perf_counter(), time.process_time()
    model = make_model(model_name, device=device, seed=seed, **params).fit(train)
    return model, time.perf_counter() - t0, time.process_time() - c0


def knob_run(folder: Path, scale: StudyScale, n_rows: int, epochs: int, seed: int, out: Path,
             device: str = "cpu") -> dict:
    """One TabDDPM run of the knob table (module docstring); stored as ``out/knob_{n}_{E}_s{seed}.json``."""
    train, test, _ = study_tables(folder, scale, n_train=n_rows)
    params = {"preset": scale.preset, **scale.tabddpm_params, "epochs": int(epochs)}
    key = settings_key({"train": fingerprint(train), "test": fingerprint(test), "params": params, "seed": seed,
                        "g": scale.knob_samples, "device": device})
    path = Path(out) / f"knob_{n_rows}_{epochs}_s{seed}.json"
    if (rec := stored(path, key)) is not None:
        return {**rec, "dataset": Path(folder).name}
    with torch_threads(1):
        fl = holdout_floor(train, test, device=device)
        model, fit_s, fit_cpu = _fit("tabddpm", train, seed, device, params)
        t0 = time.perf_counter()
        syn = model.sample(scale.knob_samples, seed=seed + 7)
        sample_s = time.perf_counter() - t0
    mem = memorization(train, syn, device=device)
    ex = excess(mem.mem_ratio, len(syn), fl)
    return save_record(path, key, {"dataset": Path(folder).name, "n_rows": n_rows, "epochs": int(epochs), "seed": seed,
                            "steps": int(model.step_),
                            "n_synthetic": len(syn), "mem_ratio": mem.mem_ratio, "floor": fl.floor,
                            "floor_low": fl.low, "floor_high": fl.high, "n_holdout": fl.n_holdout,
                            "excess": ex.excess, "excess_low": ex.low, "excess_high": ex.high,
                            "shape": quality(train, syn).shape, "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu,
                            "sample_seconds": sample_s})


def budget_run(folder: Path, scale: StudyScale, model_name: str, epochs: int, seed: int, out: Path,
               device: str = "cpu") -> dict:
    """One budget run (module docstring); stored as ``out/budget_{model}_{E}_s{seed}.json``."""
    train, test, _ = study_tables(folder, scale)
    params = {"epochs": int(epochs), "n_threads": 1}
    if model_name == "tabddpm":
        params.update(preset=scale.preset, **scale.tabddpm_params)
    key = settings_key({"train": fingerprint(train), "test": fingerprint(test), "model": model_name,
                        "params": params, "seed": seed, "device": device})
    path = Path(out) / f"budget_{model_name}_{epochs}_s{seed}.json"
    if (rec := stored(path, key)) is not None:
        return {**rec, "dataset": Path(folder).name}
    with torch_threads(1):
        fl = holdout_floor(train, test, device=device)
        model, fit_s, fit_cpu = _fit(model_name, train, seed, device, params)
        syn = model.sample(len(train), seed=seed)
    mem = memorization(train, syn, device=device)
    ex = excess(mem.mem_ratio, len(syn), fl)
    m = mle(train, syn, test, seed=seed)
    return save_record(path, key, {"dataset": Path(folder).name, "model": model_name, "epochs": int(epochs), "seed": seed,
                            "mle": m.score,
                            "mle_real": m.real_score, "mle_gap": m.real_score - m.score, "mem_ratio": mem.mem_ratio,
                            "floor": fl.floor, "excess": ex.excess, "excess_low": ex.low, "excess_high": ex.high,
                            "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu})


def knob_table(data_dir: Path, datasets, scale: StudyScale, out: Path, n_jobs: int = 2,
               device: str = "cpu") -> list[dict]:
    """Every knob run of the scale on every dataset (parallel, reused)."""
    jobs = [(Path(data_dir) / d, scale, n, e, s, Path(out) / d, device) for d in datasets
            for (n, e) in scale.knobs for s in scale.knob_seeds]
    return run_jobs(knob_run, jobs, n_jobs)


def budget_table(data_dir: Path, scale: StudyScale, out: Path, n_jobs: int = 2, device: str = "cpu") -> list[dict]:
    """Every budget run of the scale (on ``scale.budget_dataset``; parallel, reused)."""
    if not scale.budget_dataset or not scale.budget_runs:
        return []
    folder = Path(data_dir) / scale.budget_dataset
    jobs = [(folder, scale, m, e, 0, Path(out), device) for m, e in scale.budget_runs]
    return run_jobs(budget_run, jobs, n_jobs)
