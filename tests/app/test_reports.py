"""The report names every run, comparison and p/k/T it draws on, per section, and says when a run
was cancelled (issue 19: the report used to pair run B's settings with the verdict of a comparison
ranked on run A with another p, and gave a cancelled run a clean verdict)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from dash_helpers import copier_run, finished_compare, floored_run

from memviz.app import comparisons, reports, runs
from memviz.io import atomic_write_json
from memviz.jobs import control as jobs
from memviz.warmup.store import RunStore


def sections(doc: str) -> dict[str, str]:
    """The report's body split at its <h2> headings: {heading text: the section's HTML}."""
    body = doc[doc.index("<body>"):]
    parts = re.split(r"<h2[^>]*>", body)[1:]
    out = {}
    for part in parts:
        head, _, rest = part.partition("</h2>")
        out[re.sub(r"<[^>]+>", "", head)] = rest
    return out


def text(html: str) -> str:
    """What a reader sees of an HTML fragment (tags removed, entities as characters)."""
    import html as h

    return h.unescape(re.sub(r"<[^>]+>", " ", html))


def compare_on(root: Path, train, run_dir: Path, p: float, k: int = 3, T=None) -> Path:
    """A finished comparison ranked on ``run_dir`` with DynamicCut (p, k, T), as a comparison job leaves it."""
    out = finished_compare(root, train, np.random.default_rng(1))
    cfg = {"methods": ["baseline", "dynamiccut", "random"], "models": ["tabddpm"], "seeds": [0, 1], "p": p,
           "k": k, "T": T, "run_dir": str(run_dir), "distance": "paper"}
    atomic_write_json(out / "experiment.json", {"format": "memviz.compare/1", "config": cfg, "p": p,
                                                "selection": {"run_dir": str(run_dir), "k": k, "T": 4,
                                                              "n_removed": 30}, "seconds": 1.0})
    job = jobs.job_for(out)
    spec = json.loads(job.spec_path.read_text())
    spec["config"] = cfg
    job.spec_path.write_text(json.dumps(spec))
    return out


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, sample):
    """Run A (with a floor), a comparison ranked on A with p = 0.10, then run B (another table)."""
    root = tmp_path_factory.mktemp("report_runs")
    train, _ = sample
    a_train, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(a_train, holdout, root / "run-A-aaaa")
    out = compare_on(root, a_train, root / "run-A-aaaa", p=0.10)
    copier_run(train.subset(train.row_ids[1000:1200]), root / "run-B-bbbb")
    return root, out


def test_each_section_names_its_run_and_its_p(two_runs):
    """Warm-up A, Compare on A with p = 0.10, warm-up B, p = 0.21 tuned on B, report: the
    comparison's section names run A and p = 0.10, the run's section run B and p = 0.21 (it
    used to say only "Run B · p=0.21" above the comparison's verdict: run A appeared nowhere)."""
    root, out = two_runs
    view_b = runs.load_run(root / "run-B-bbbb")
    cv = comparisons.load_compare(out)
    doc = reports.report_html(view_b, cv, p=0.21, k=3, T=None, redacted=True)
    secs = {h: text(s) for h, s in sections(doc).items()}
    cmp_secs = [h for h, s in secs.items() if "changed the flagged share" in s]
    assert cmp_secs, list(secs)
    for h in cmp_secs:                    # the comparison's verdict stands beside its own run and p
        s = h + " " + secs[h]
        assert "run-A-aaaa" in s and "p=0.10" in s, s[:600]
        assert "p=0.21" not in s and "run-B-bbbb" not in s.replace("not on run-B-bbbb", ""), s[:600]
    run_secs = [h for h, s in secs.items() if "Training rows never copied" in s]
    assert run_secs
    for h in run_secs:                    # the run's facts beside the p tuned on it
        s = h + " " + secs[h]
        assert "run-B-bbbb" in s and "p=0.21" in s and "p=0.10" not in s, s[:600]
    # the opening names whose rows it speaks of
    short = next(s for h, s in secs.items() if h.startswith("In short"))
    assert "run-B-bbbb" in short and "run-A-aaaa" in short
    assert out.name in text(doc)


def test_a_comparison_on_another_run_is_said_to_be_on_another_run(two_runs):
    root, out = two_runs
    doc = text(reports.report_html(runs.load_run(root / "run-B-bbbb"), comparisons.load_compare(out), p=0.21))
    assert "not on run-B-bbbb" in doc


def test_the_comparisons_verdict_uses_the_floor_of_the_run_it_was_ranked_on(two_runs):
    """Results without floor columns: the floor is the one of run A (the comparison's), never B's."""
    root, out = two_runs
    doc = reports.report_html(runs.load_run(root / "run-B-bbbb"), comparisons.load_compare(out), p=0.21)
    cmp = next(text(s) for h, s in sections(doc).items() if h.startswith("Comparison"))
    flagged = cmp[cmp.index("Flagged output"):cmp.index("Pruning")]
    a_floor = runs.load_run(root / "run-A-aaaa").result.floor
    assert f"{100 * a_floor.floor:.1f} %" in flagged and "no floor" not in flagged


@pytest.fixture(scope="module")
def cancelled(tmp_path_factory, sample):
    root = tmp_path_factory.mktemp("cancelled_runs")
    train, _ = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(small, holdout, root / "stopped")
    store = RunStore(root / "stopped")
    store.update(status="cancelled", config={**store.manifest()["config"], "epochs": 100})  # stopped at 8 of 100
    return root


def test_a_cancelled_runs_report_says_so_first(cancelled):
    """Cancel at epoch 15 of 100: the report's opening and verdict say the run was cancelled
    (they used to give it a clean verdict; 'cancelled' appeared nowhere in them)."""
    doc = reports.report_html(runs.load_run(cancelled / "stopped"))
    short = text(next(s for h, s in sections(doc).items() if h.startswith("In short")))
    assert "cancelled" in short.lower()
    assert "epoch 8 of 100" in short                          # where it stopped


def test_a_finished_run_is_not_called_cancelled(two_runs):
    root, _ = two_runs
    doc = reports.report_html(runs.load_run(root / "run-A-aaaa"))
    short = text(next(s for h, s in sections(doc).items() if h.startswith("In short")))
    assert "cancelled" not in short.lower() and "run-A-aaaa" in short


def test_the_report_page_names_each_sections_run_and_p(two_runs, monkeypatch):
    """The Report page with run B open, p = 0.21 tuned on B and the comparison on A included: the run's
    heading says p=0.21, the comparison's says run A and p=0.10, and a warning says it is another run."""
    from streamlit.testing.v1 import AppTest

    root, out = two_runs
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = "run-B-bbbb"
    at.session_state["dc_params"] = runs.PruneParams("run-B-bbbb", 0.21, 3, None).to_dict()
    at.run()
    at.switch_page("screens/7_report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="report_compare").value == str(out)       # the only finished comparison
    heads = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown if m.value.startswith("**")]
    run_head = next(h for h in heads if "run-B-bbbb" in h)
    cmp_head = next(h for h in heads if h.startswith("**Comparison"))
    assert "p=0.21" in run_head and "p=0.10" not in run_head
    assert "run-A-aaaa" in cmp_head and "p=0.10" in cmp_head and "p=0.21" not in cmp_head
    assert any("not on run-B-bbbb" in re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)
