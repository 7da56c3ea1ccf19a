"""Stored runs and comparison folders for the dashboard tests (real engine, no training), and a page of
the app opened on one of them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from memviz.io import atomic_write_csv, atomic_write_parquet, atomic_write_text
from memviz.jobs import control as jobs
from memviz.warmup.run import WarmupConfig
from memviz.warmup.store import RunStore

APP = str(Path(__file__).resolve().parents[1] / "app.py")

#: the copier run copies training rows 0..N_COPIED-1
N_COPIED = 10


def copier_run(train, run_dir: Path, epochs=(2, 4, 6)) -> None:
    """A stored run whose generated rows copy training rows 0..N_COPIED-1 (more at each check)."""
    from memviz.dynamics.rows import compute_dynamics
    from memviz.dynamics.summaries import summarize
    from memviz.measure.memorization import memorization
    from memviz.warmup.tracking import long_table

    rng = np.random.default_rng(0)
    cfg = WarmupConfig(epochs=epochs[-1], check_every=2, device="cpu").resolved(len(train))
    store = RunStore.create(run_dir, train, cfg.to_dict(), device="cpu")
    summaries = []
    for c, epoch in enumerate(epochs):
        n_copies = 20 * (c + 1)
        copied = train.data.iloc[rng.integers(0, N_COPIED, size=n_copies)]
        shuffled = pd.DataFrame({col: rng.permutation(train.data[col].to_numpy()) for col in train.data.columns})
        samples = pd.concat([copied, shuffled.iloc[: len(train) - n_copies]], ignore_index=True)
        res = memorization(train, samples, device="cpu")
        samples.insert(0, "synthetic_id", np.arange(len(samples), dtype=np.int64))
        store.write_check(c, long_table(c, epoch, res), samples)
        summaries.append({"check": c, "epoch": epoch, "mem_ratio": res.mem_ratio, "mem_auc": res.mem_auc})
        store.update(checks=summaries, progress={"epoch": epoch, "epochs": epochs[-1]})
    dyn = compute_dynamics(store.checks(), train.row_ids, top_frac=cfg.top_frac)
    store.consolidate(dyn.to_frame(), dyn.to_long())
    store.update(status="finished", summary=summarize(dyn).to_dict(), timings={"total_seconds": 0.0})


def finished_compare(root: Path, train, rng) -> Path:
    """A comparison results folder (results, synthetic tables, details) registered as a finished job."""
    from memviz.compare import results_frame

    job = jobs.Job(jobs.new_job_id("compare"), "compare", root)
    out = job.out
    records, shapes, dcr = [], [], []
    for seed in (0, 1):
        for method, base in (("baseline", 0.30), ("dynamiccut", 0.24), ("random", 0.29)):
            syn = train.data.sample(len(train), replace=True, random_state=int(rng.integers(1 << 30)))
            rel = f"synthetic/{method}_tabddpm_{seed}.parquet"
            atomic_write_parquet(out / rel, syn.reset_index(drop=True))
            records.append({"method": method, "model": "tabddpm", "seed": seed, "status": "ok", "synthetic": rel,
                            "mem_ratio": base + rng.normal(0, 0.01), "mem_ratio_pruned": base,
                            "mem_auc": 0.5, "mem_auc_pruned": 0.5, "shape": 0.9 + rng.normal(0, 0.01),
                            "trend": 0.85, "mle": 0.85 + rng.normal(0, 0.01), "mle_real": 0.9,
                            "dcr_share": 0.5 + rng.normal(0, 0.02), "dcr_ideal": 0.5})
            shapes.append(pd.DataFrame({"method": method, "model": "tabddpm", "seed": seed,
                                        "column": list(train.schema.columns), "metric": "KSComplement",
                                        "score": rng.uniform(0.8, 1.0, len(train.schema.columns))}))
            dcr.append(pd.DataFrame({"method": method, "model": "tabddpm", "seed": seed,
                                     "dcr_train": rng.gamma(2.0, 0.05, 200), "dcr_test": rng.gamma(2.0, 0.06, 200)}))
    atomic_write_csv(out / "results.csv", results_frame(records))
    atomic_write_csv(out / "details" / "column_shapes.csv", pd.concat(shapes))
    atomic_write_parquet(out / "details" / "dcr.parquet", pd.concat(dcr))
    atomic_write_text(out / "experiment.json", json.dumps({"seconds": 1.0}))
    job.job_dir.mkdir(parents=True)
    atomic_write_text(job.job_dir / "job.json", json.dumps({"job_id": job.job_id, "kind": "compare", "pid": None,
                                                             "started": 0, "label": "fixture"}))
    jobs.write_spec(job.spec_path, jobs.JobSpec("compare", {}, {"out": str(out)}, label="fixture"))
    jobs.EventLog(job.events_path)({"event": "finished", "out": str(out)})
    return out


def floored_run(train, holdout, run_dir: Path, epochs=(2, 4, 6, 8)) -> None:
    """:func:`copier_run` plus the floor of ``train`` measured on ``holdout`` (real rows outside
    it), stored as a warm-up stores it, and a job spec naming the hold-out file, as the
    dashboard's warm-up jobs leave them (so the floor pages can measure the other distance)."""
    from memviz.measure.floor import holdout_floor

    copier_run(train, run_dir, epochs=epochs)
    floor = holdout_floor(train, holdout, device="cpu")
    RunStore(run_dir).write_floor(floor.to_dict(), floor.to_frame())
    RunStore(run_dir).write_holdout(holdout)                 # as run_warmup keeps it, for the check's audit
    job = jobs.Job(run_dir.name, "warmup", run_dir.parent)
    job.job_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_parquet(job.job_dir / "holdout.parquet", holdout.data.reset_index())
    jobs.write_spec(job.spec_path, jobs.JobSpec("warmup", {}, {"out": str(run_dir), "row_id": "row_id",
                                                               "holdout": str(job.job_dir / "holdout.parquet")}))


def open_page(run: str | None, page: str, timeout: float = 120):
    """Streamlit's AppTest of app.py switched to ``page`` (e.g. ``screens/3_memorization.py``) with
    ``?run=run`` (None: no run in the URL), asserting the page raised no exception. The runs root is the
    caller's ($MEMVIZ_RUNS, set with monkeypatch)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    if run:
        at.query_params["run"] = run
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    return at
