"""The report names every run, comparison and p/k/T it draws on, per section, and says when a run
was cancelled (issue 19: the report used to pair run B's settings with the verdict of a comparison
ranked on run A with another p, and gave a cancelled run a clean verdict)."""
from __future__ import annotations

import inspect
import io
import json
import re
import shutil
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dash_helpers import copier_run, finished_compare, floored_run
from helpers import memviz_cli

from memviz.app import audits, compare_card, comparisons, reports, runs
from memviz.auditing import html as audit_html
from memviz.auditing.json_schema import validate
from memviz.io import atomic_write_json
from memviz.jobs import control as jobs
from memviz.viz.card import Card, Line
from memviz.warmup.frontier import recommend
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
    return unescape(re.sub(r"<[^>]+>", " ", html))


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
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    root, out = two_runs
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = "run-B-bbbb"
    at.session_state["dc_params"] = runs.PruneParams("run-B-bbbb", 0.21, 3, None).to_dict()
    at.run()
    at.switch_page("screens/7_report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="report_compare").value == str(out)       # the only finished comparison
    assert at.selectbox(key="report_compare").options == ["— none —", "DynamicCut, Random × TabDDPM · fixture"]
    heads = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown if m.value.startswith("**")]
    run_head = next(h for h in heads if "run-B-bbbb" in h)
    cmp_head = next(h for h in heads if h.startswith("**Comparison"))
    assert "p=0.21" in run_head and "p=0.10" not in run_head
    assert "run-A-aaaa" in cmp_head and "p=0.10" in cmp_head and "p=0.21" not in cmp_head
    assert any("not on run-B-bbbb" in re.sub(r"\\(.)", r"\1", w.value) for w in at.warning)


def test_a_comparison_is_labelled_by_its_methods_generators_table_and_start_not_its_job_id(two_runs, tmp_path):
    """The comparison pickers (Compare, Report) used to show the job id ("20261202-…-compare-a1b2")."""
    root, out = two_runs
    row = jobs.list_jobs(root, kind="compare").iloc[0]
    label = comparisons.compare_label(out, "adult", "2026-12-02 14:05:33")
    assert label == "DynamicCut, Random × TabDDPM · adult · 12-02 14:05" and row.job_id not in label
    twin = jobs.Job("twin-job", "compare", tmp_path)                    # the same comparison started again
    twin.job_dir.mkdir(parents=True)
    jobs.write_spec(twin.spec_path, jobs.read_spec(jobs.job_for(out).spec_path))
    both = pd.DataFrame([row, row]).assign(out=[str(out), str(twin.out)], job_id=[row.job_id, "twin-job"])
    labels = comparisons.compare_labels(both)
    assert labels == {str(out): f"DynamicCut, Random × TabDDPM · fixture · {row.job_id}",
                      str(twin.out): "DynamicCut, Random × TabDDPM · fixture · twin-job"}


# ------------------------------------------------------------------ memviz report RUN (the CLI)
def _cli(capsys, *args):
    """(exit code, the last stdout line as JSON, stderr) of ``memviz ARGS`` (:func:`helpers.memviz_cli`)."""
    code, last, err = memviz_cli(capsys, *args)
    return code, json.loads(last or "{}"), err


def test_memviz_report_covers_the_comparisons_ranked_on_the_run_each_with_its_own_run_and_p(two_runs, tmp_path,
                                                                                             capsys):
    """Issue 19: `memviz report RUN` used to write the run's audit only. Run A with p = 0.21 tuned on it and a
    comparison ranked on A with p = 0.10: the report has a section for the comparison naming it, run A and
    p=0.10 (never 0.21), the run's settings say p 0.21, and the comparison's own audit is written beside it."""
    root, out = two_runs
    rc, head, err = _cli(capsys, "report", root / "run-A-aaaa", "--p", "0.21", "--out", tmp_path / "a", "--no-quality")
    assert rc == 0, err
    [cmp] = head["comparisons"]
    assert cmp["comparison"] == out.name and cmp["ranked_on"] == "run-A-aaaa" and cmp["p"] == 0.10
    doc = (tmp_path / "a" / "report.html").read_text()
    secs = {h: text(s) for h, s in sections(doc).items()}
    heads = [h for h in secs if h.startswith("Comparison")]
    assert heads, list(secs)
    for h in heads:
        s = h + " " + secs[h]
        assert out.name in h and "run-A-aaaa" in h and "p=0.10" in h and "p=0.21" not in s, s[:600]
    assert "changed the flagged share" in " ".join(secs[h] for h in heads)
    settings = secs["Settings"]
    assert re.search(r"DynamicCut p\s+0\.21\b", settings)        # the run's p, from its provenance
    assert json.loads((tmp_path / "a" / "audit.json").read_text())["provenance"]["run"]["p"] == 0.21
    sub = tmp_path / "a" / "comparisons" / out.name
    validate(json.loads((sub / "audit.json").read_text()))
    assert (sub / "rows.csv").is_file() and cmp["verdict"]
    own = text((sub / "report.html").read_text())
    assert "run-A-aaaa" in own and "p=0.10" in own and "p=0.21" not in own


def test_memviz_report_of_another_run_includes_no_comparison_unless_named_and_then_says_so(two_runs, tmp_path,
                                                                                             capsys):
    root, out = two_runs
    rc, head, err = _cli(capsys, "report", root / "run-B-bbbb", "--out", tmp_path / "b", "--no-quality")
    assert rc == 0, err
    assert head["comparisons"] == [] and "Comparison" not in text((tmp_path / "b" / "report.html").read_text())
    rc, head, err = _cli(capsys, "report", root / "run-B-bbbb", "--p", "0.21", "--compare", out, "--out",
                         tmp_path / "c", "--no-quality")
    assert rc == 0, err
    doc = text((tmp_path / "c" / "report.html").read_text())
    assert "not on run-B-bbbb" in doc and "p=0.10" in doc and head["comparisons"][0]["ranked_on"] == "run-A-aaaa"
    # a folder that is no comparison: one line naming it, and nothing written
    rc, _, err = _cli(capsys, "report", root / "run-B-bbbb", "--compare", tmp_path / "nothing", "--out", tmp_path / "d")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "nothing" in err and not (tmp_path / "d").exists()


# ------------------------------------------------------------------ when to stop (issue 23)
def test_the_runs_report_carries_the_frontier_and_the_recommended_check(two_runs, tmp_path, capsys):
    """The frontier figure and the recommendation's sentence are in the dashboard's report and in
    `memviz report`'s (they were on the Warm-up and Memorization pages only)."""
    root, _ = two_runs
    view = runs.load_run(root / "run-A-aaaa")
    reason = recommend(view.per_check).reason
    for doc in (reports.report_html(view),
                (_cli(capsys, "report", root / "run-A-aaaa", "--out", tmp_path / "f", "--no-quality", "--no-compare"),
                 (tmp_path / "f" / "report.html").read_text())[1]):
        assert "When to stop: privacy against quality" in doc
        assert reason in text(doc)


# ------------------------------------------------------------------ one card, one builder
def test_one_card_type_and_no_private_report_helper_outside_viz():
    """The audit's report and the app's cards are one type (memviz.viz.card.Card), and the app's report calls
    only the report builder's public helpers (it called five private ones)."""
    assert compare_card.Verdict is Card and compare_card.Line is Line and audits.Card is Card
    assert not hasattr(audit_html, "_Card") and not hasattr(audit_html, "_Line")
    assert not re.search(r"\bvr\._", inspect.getsource(reports))


# ------------------------------------------------------------------ the Report page's downloads (issue 20)
def test_the_report_pages_downloads_carry_readable_labels_not_raw_keys(two_runs):
    """The synthetic tables' buttons said `baseline_tabddpm_0` and the results CSV had ~50 raw column names:
    now each table is 'TabDDPM · Baseline · seed 0' and the results carry the data dictionary's headers."""
    _, out = two_runs
    cv = comparisons.load_compare(out)
    downloads = reports.synthetic_downloads(cv)
    assert len(downloads) == 6
    labels = {d.label for d in downloads}
    assert "TabDDPM · Baseline · seed 0" in labels and "TabDDPM · DynamicCut · seed 1" in labels
    for d in downloads:
        assert "_tabddpm_" not in d.label and "_tabddpm_" not in d.file_name and d.path.is_file()
    assert len({d.file_name for d in downloads}) == 6
    res = pd.read_csv(io.BytesIO(reports.results_csv(cv)))
    raw = set(cv.results.columns)
    assert not raw & set(res.columns) - {"n_synthetic"}, sorted(raw & set(res.columns))
    assert "synthetic" not in res.columns and "key" not in res.columns
    dic = pd.read_csv(io.BytesIO(reports.dictionary_csv(cv)))
    assert list(dic["column"]) == list(res.columns)


def test_the_report_page_offers_the_readable_downloads(two_runs, monkeypatch):
    """The Report page's download buttons for a comparison use the readable labels (no raw key)."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    root, out = two_runs
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=180)
    at.query_params["run"] = "run-A-aaaa"
    at.run()
    at.switch_page("screens/7_report.py").run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    assert any("When to stop:" in m for m in shown), shown          # the recommended check, on the page too
    labels = [b.label for b in at.get("download_button")]
    assert "TabDDPM · Baseline · seed 0" in labels, labels
    assert not [x for x in labels if "_tabddpm_" in x] and "Results (CSV, readable column names)" in labels


def test_memviz_report_finds_a_comparison_memviz_compare_wrote_beside_the_run(tmp_path, sample, capsys):
    """A comparison made by ``memviz compare --out ROOT/compare`` (a folder, not a dashboard job) was missed by
    ``memviz report RUN`` without --compare, though its help says every finished comparison under the run's
    folder's parent; the README had to name it."""
    root = tmp_path / "runs"
    train, _ = sample
    a_train, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(a_train, holdout, root / "run-A-aaaa")
    out = compare_on(root, a_train, root / "run-A-aaaa", p=0.10)
    job_dir = jobs.job_for(out).job_dir
    shutil.move(str(out), str(root / "cli-compare"))                 # as memviz compare --out leaves it
    shutil.rmtree(job_dir, ignore_errors=True)
    rc, head, err = _cli(capsys, "report", root / "run-A-aaaa", "--out", tmp_path / "r", "--no-quality",
                         "--no-evidence")
    assert rc == 0, err
    assert [c["comparison"] for c in head["comparisons"]] == ["cli-compare"]
