"""Issue 51 item 3 on the Compare page, in Chromium: a comparison that is running shows each finished cell when it
finishes (they came in about 3 minutes late: the results were drawn only on a whole rerun), and once it finishes
the page shows the finished state without a navigation (the Cancel button stayed, and the chart showed 2 of its
3 methods).

The comparison is a job record whose process is this test (alive while it runs), its results written as a
comparison writes them, cell by cell; every wait is for a state on the page (helpers.WAIT_MS)."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pandas as pd
import pytest
from helpers import WAIT_MS, drawn, launch_chromium, need_browser, no_exception, serve_dashboard

from memviz.compare import results_frame
from memviz.io import atomic_write_csv, atomic_write_parquet
from memviz.jobs import control as jobs
from memviz.jobs.spec import EventLog, JobSpec, write_spec

pytestmark = [pytest.mark.browser, pytest.mark.slow]

METHODS = ("baseline", "dynamiccut", "random")


def results(train, methods, rng) -> pd.DataFrame:
    rows = []
    for m, base in zip(methods, (0.30, 0.24, 0.29)):
        rows.append({"method": m, "model": "tabddpm", "seed": 0, "status": "ok", "mem_ratio": base,
                     "mem_ratio_pruned": base, "mem_auc": 0.5, "shape": 0.9, "trend": 0.85,
                     "mle": 0.85 + rng.normal(0, 0.01), "mle_real": 0.9, "dcr_share": 0.5, "dcr_ideal": 0.5})
    return results_frame(rows)


def test_cells_come_in_as_they_finish_and_the_end_shows_the_finished_state(tmp_path, sample):
    need_browser()
    from playwright.sync_api import sync_playwright  # lazy: playwright is optional (browser tests only)

    train, _ = sample
    train = train.subset(train.row_ids[:200])
    rng = np.random.default_rng(0)
    root = tmp_path / "runs"
    job = jobs.Job(jobs.new_job_id("compare"), "compare", root)
    job.job_dir.mkdir(parents=True)
    (job.job_dir / "job.json").write_text(json.dumps({
        "job_id": job.job_id, "kind": "compare", "pid": os.getpid(),
        "start_ticks": jobs.proc_start_ticks(os.getpid()), "started": 0, "out": str(job.out), "label": "live"}))
    write_spec(job.spec_path, JobSpec("compare", {"methods": list(METHODS), "models": ["tabddpm"]},
                                      {"out": str(job.out)}, label="live"))
    out = job.out
    shapes = pd.concat([pd.DataFrame({"method": m, "model": "tabddpm", "seed": 0, "column": list(train.schema.columns),
                                      "metric": "KSComplement", "score": 0.9}) for m in METHODS])
    atomic_write_csv(out / "details" / "column_shapes.csv", shapes)
    atomic_write_parquet(out / "details" / "dcr.parquet", pd.concat(
        [pd.DataFrame({"method": m, "model": "tabddpm", "seed": 0, "dcr_train": rng.gamma(2, 0.05, 50),
                       "dcr_test": rng.gamma(2, 0.06, 50)}) for m in METHODS]))
    log = EventLog(job.events_path, min_interval=0)
    log({"event": "started", "pid": os.getpid(), "kind": "compare"})
    log({"event": "cells", "done": 0, "total": 3})
    for i, m in enumerate(METHODS[:2]):
        atomic_write_csv(out / "results.csv", results(train, METHODS[: i + 1], rng))
        log({"event": "cell", "done": i + 1, "total": 3, "method": m, "model": "tabddpm", "seed": 0, "status": "ok",
             "mem_ratio": 0.3, "seconds": 10.0})
    log({"event": "cell_phase", "method": "random", "model": "tabddpm", "seed": 0, "phase": "fit", "epochs": 60})
    log({"event": "cell_epoch", "method": "random", "model": "tabddpm", "seed": 0, "epoch": 12, "epochs": 60})

    def methods_drawn(page) -> set[str]:
        chart = page.locator("[data-testid='stPlotlyChart']").filter(has_text=re.compile("by method")).first
        chart.locator(".main-svg").first.wait_for(timeout=WAIT_MS)
        return {t.strip() for t in chart.locator(".xtick text, .legendtext").all_text_contents()}

    with serve_dashboard(root, "--server.headless", "true") as url, sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(f"{url}/compare", timeout=WAIT_MS)
            page.locator("h1").filter(has_text="Compare").first.wait_for(timeout=WAIT_MS)
            drawn(page)
            no_exception(page)
            cancel = page.get_by_role("button", name="Cancel")
            cancel.wait_for(timeout=WAIT_MS)
            page.get_by_text("fitting, epoch 12/60").first.wait_for(timeout=WAIT_MS)     # inside the running cell
            page.locator("[data-testid='stMain'] [data-testid='stProgress']").filter(
                has_text=re.compile(r"2/3 .*about .* left")).first.wait_for(timeout=WAIT_MS)    # cells done, time left
            assert "Random" not in methods_drawn(page)
            # the third cell finishes: it appears by itself
            atomic_write_csv(out / "results.csv", results(train, METHODS, rng))
            log({"event": "cell", "done": 3, "total": 3, "method": "random", "model": "tabddpm", "seed": 0,
                 "status": "ok", "mem_ratio": 0.29, "seconds": 10.0})
            page.wait_for_function("""() => [...document.querySelectorAll("[data-testid='stPlotlyChart']")]
                .some(c => c.textContent.includes("by method") && c.textContent.includes("Random"))""", timeout=WAIT_MS)
            # the job ends: the finished state, no Cancel, every method, without a navigation
            log({"event": "finished", "out": str(out)})
            cancel.wait_for(state="detached", timeout=WAIT_MS)
            page.locator("[data-testid='stProgress']").get_by_text("finished").first.wait_for(timeout=WAIT_MS)
            drawn(page)
            assert {"Baseline", "DynamicCut", "Random"} <= methods_drawn(page)
            no_exception(page)
        finally:
            browser.close()
