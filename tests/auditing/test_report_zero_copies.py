"""`memviz report` on a run whose named rows have 0 copies at the audited check (issue 42, item 5).

The walk's two runs crashed with ``ValueError: No objects to concatenate`` in ``leak_views`` and left
rows.csv alone in the output folder: the per-row test pooled every check, so a row copied early and
never at the last check was named, and its leak view concatenated a list of zero training rows.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from helpers import memviz_cli


def early_copier_run(train, holdout, run_dir, epochs=(2, 4, 6)):
    """A stored run (real engine, no training) whose first checks copy training rows 0..9 and whose
    last check copies none of them (shuffled columns only), with its floor measured on ``holdout``."""
    from memviz.dynamics.rows import compute_dynamics
    from memviz.dynamics.summaries import summarize
    from memviz.measure.floor import holdout_floor
    from memviz.measure.memorization import memorization
    from memviz.warmup.run import WarmupConfig
    from memviz.warmup.store import RunStore
    from memviz.warmup.tracking import long_table

    rng = np.random.default_rng(5)
    cfg = WarmupConfig(epochs=epochs[-1], check_every=2, device="cpu").resolved(len(train))
    store = RunStore.create(run_dir, train, cfg.to_dict(), device="cpu")
    summaries = []
    for c, epoch in enumerate(epochs):
        n_copies = 0 if c == len(epochs) - 1 else 60
        copied = train.data.iloc[rng.integers(0, 10, size=n_copies)]
        shuffled = pd.DataFrame({col: rng.permutation(train.data[col].to_numpy()) for col in train.data.columns})
        samples = pd.concat([copied, shuffled.iloc[: len(train) - n_copies]], ignore_index=True)
        res = memorization(train, samples, device="cpu")
        samples.insert(0, "synthetic_id", np.arange(len(samples), dtype=np.int64))
        store.write_check(c, long_table(c, epoch, res), samples)
        summaries.append({"check": c, "epoch": epoch, "mem_ratio": res.mem_ratio, "mem_auc": res.mem_auc})
        store.update(checks=summaries, progress={"epoch": epoch, "epochs": epochs[-1]})
    dyn = compute_dynamics(store.checks(), train.row_ids, top_frac=cfg.top_frac)
    store.consolidate(dyn.to_frame(), dyn.to_long())
    floor = holdout_floor(train, holdout, device="cpu")
    store.write_floor(floor.to_dict(), floor.to_frame())
    store.update(status="finished", summary=summarize(dyn).to_dict(), timings={"total_seconds": 0.0})
    store.release()


@pytest.fixture(scope="module")
def early_run(sample, tmp_path_factory):
    train, test = sample
    small = train.subset(train.row_ids[:300])
    run_dir = tmp_path_factory.mktemp("zero") / "run"
    early_copier_run(small, test.subset(test.row_ids[:300]), run_dir)
    return small, run_dir


def test_leak_views_take_a_named_row_with_no_copy_at_the_check(early_run):
    """A named row with 0 copies at the audited check gets a leak view saying 0 copies (no exception)."""
    from memviz.auditing.html import leak_views
    from memviz.auditing.result import Audit
    from memviz.tables.data import Table
    from memviz.warmup.store import RunStore

    train, run_dir = early_run
    a = Audit.from_run(run_dir, quality=False, evidence=False)
    store = RunStore(run_dir)
    samples = store.samples(2).drop(columns="synthetic_id")
    syn = Table(samples[list(train.schema.columns)], train.schema, "check 2")
    rows = a.per_row.copy()
    zero = int(rows.loc[rows["copies"] == 0, "row_id"].iloc[0])
    rows["over_copied"] = rows["row_id"] == zero            # named, whatever the per-row test decides
    rows["q_value"] = np.where(rows["over_copied"], 1e-4, 1.0)
    named = dataclasses.replace(a, per_row=rows)
    views = leak_views(named, train, syn)
    assert [v.row_id for v in views] == [zero]
    assert views[0].n_copies == 0 and len(views[0].copies) == 0
    assert "training row" in views[0].table(redacted=True).index[0]


def test_memviz_report_writes_its_three_files_when_named_rows_have_no_copy(early_run, tmp_path, capsys):
    _, run_dir = early_run
    rc, last, err = memviz_cli(capsys, "report", run_dir, "--out", tmp_path / "rep", "--no-quality", "--no-evidence")
    assert rc == 0, err
    assert {"audit.json", "report.html", "rows.csv"} <= {p.name for p in (tmp_path / "rep").iterdir()}
    assert json.loads(last)["report"].endswith("report.html")
