"""Issue 42, item 6: the Compare page and the report readable. The method stays in view while the quality
columns scroll, the verdict card's cost line names Shape, Trend and MLE, and a report whose run and comparison
read opposite verdicts says why in one sentence."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
from dash_helpers import finished_compare, floored_run

from memviz.app import comparisons, reports, runs
from memviz.app.compare_card import compare_verdict
from memviz.io import atomic_write_parquet, atomic_write_text
from memviz.jobs import control as jobs
from memviz.auditing.report import CSS, results_cells
from memviz.auditing.templating import blocks


def walk_results(n_seeds: int = 3) -> pd.DataFrame:
    """The walk's comparison: DynamicCut costs little Shape and MLE, and Trend 92.1 -> 87.3 (the largest loss)."""
    rows = []
    for s in range(n_seeds):
        for method, mem, trend in (("baseline", 0.30, 0.921), ("dynamiccut", 0.22, 0.873), ("random", 0.29, 0.92)):
            rows.append({"method": method, "model": "tabddpm", "seed": s, "status": "ok", "n_synthetic": 3000,
                         "mem_ratio": mem + 0.001 * s, "shape": 0.95 - (0.004 if method == "dynamiccut" else 0),
                         "trend": trend, "mle": 0.88 - (0.003 if method == "dynamiccut" else 0), "mle_real": 0.9,
                         "floor": 0.25, "floor_low": 0.23, "floor_high": 0.27, "n_holdout": 1000})
    return pd.DataFrame(rows)


def test_the_cost_line_names_shape_trend_and_mle():
    """The walk: the cost line named Shape and MLE and left out Trend, the largest loss (92.1 -> 87.3): it read
    'little utility lost'."""
    v = compare_verdict(walk_results())
    cost = next(ln for ln in v.lines if ln.topic == "Utility cost")
    listed = cost.text.split(". ", 1)[1]          # the verdict first, beside the figure that decides it (issue 51)
    assert listed.index("Shape") < listed.index("Trend") < listed.index("MLE"), cost.text
    assert "92.1 % → 87.3 %" in cost.text and "-4.8 points" in cost.text
    assert "little" not in cost.text and cost.tone == "bad"
    step = next(ln for ln in v.lines if ln.topic == "Next step")
    assert "costs utility" in step.text and "little cost" not in step.text


def test_the_compare_table_keeps_the_method_in_view(tmp_path, sample, monkeypatch):
    """The walk: Shape, Trend and MLE were reachable only by scrolling right, and the Method column scrolled away
    with them. The method and generator are pinned: they stay while the other columns scroll."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    train, _ = sample
    finished_compare(tmp_path, train.subset(train.row_ids[:200]), np.random.default_rng(0))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("screens/6_compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    for column in ("Memorization ratio", "Privacy gain: mem ratio reduction"):   # side by side, the three-way view
        table = next(d for d in at.dataframe if column in d.value.columns)
        config = json.loads(table.proto.columns or "{}")
        pinned = {name for name, c in config.items() if c.get("pinned")}
        assert {"Method", "Generator"} <= pinned, (column, config)


def test_the_reports_results_keep_the_method_in_view():
    """The report's results scroll sideways too: each row is headed by its method and generator, and that header
    column stays (position: sticky) while Shape, Trend and MLE scroll in."""
    html = blocks().results(results_cells(walk_results()))
    tables = re.findall(r"<table>.*?</table>", html)
    assert len(tables) == 2                                          # side by side, and against the baseline
    for t in tables:
        heads = re.findall(r"<tr><th class='text'>([^<]*)</th>", t)
        assert heads[0] == "Method · generator" and "DynamicCut · TabDDPM" in heads, heads
    assert re.search(r"\.scroll tbody th[^{]*\{[^}]*position:\s*sticky", CSS)


def test_a_report_says_why_its_run_and_its_comparison_read_different_verdicts(tmp_path, sample):
    """The walk: one report, the run's section "4 training rows ... review them", the comparison's (same table,
    same model family) "no training row is copied more than chance", nothing said about why. A run that copies
    beside a comparison whose unmitigated model's rows are fresh real rows: the comparison's section says, in one
    sentence, which generated rows each audit read (the run's check, the comparison's retrained model and seeds)
    and how many of the run's named rows the comparison names."""
    train, test = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(small, holdout, tmp_path / "run")
    out = finished_compare(tmp_path, small, np.random.default_rng(0))
    fresh = test.data.reset_index(drop=True)
    for seed in (0, 1):                            # the unmitigated model's rows: real rows no model saw
        atomic_write_parquet(out / f"synthetic/baseline_tabddpm_{seed}.parquet",
                             fresh.iloc[300 * seed:300 * (seed + 1)].reset_index(drop=True))
    atomic_write_text(out / "experiment.json", json.dumps({"seconds": 1.0, "config": {"run_dir": str(tmp_path / "run")}}))
    view, cv = runs.load_run(tmp_path / "run"), comparisons.load_compare(out)
    run_sec, cmp_sec = reports.sections(view, cv)
    assert run_sec.card.sentence.startswith("The model copies")
    assert not cmp_sec.card.sentence.startswith("The model copies")
    why = [s for s in cmp_sec.note.split(". ") if "verdicts differ" in s]
    assert len(why) == 1, cmp_sec.note
    assert "check 3 of 0–3 (epoch 8)" in why[0] and "TabDDPM trained again without mitigation" in why[0]
    assert "seeds 0, 1 pooled" in why[0] and "the run's audit names 10 training rows, the comparison's 0" in why[0]
    html = reports.report_html(view, cv)
    assert "The two verdicts differ because" in html
