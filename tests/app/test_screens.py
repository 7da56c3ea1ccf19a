"""The dashboard in Streamlit's AppTest: every page renders, and its main widgets act.

Two finished runs live in a temporary runs root (MEMVIZ_RUNS):

* ``tiny``: a real warm-up (300 sample rows, 6 epochs, tiny TabDDPM);
* ``copier``: the run store of a "generator" that returns exact copies of rows 0-9
  next to column-shuffled rows, measured with the real memorization engine, so the
  leak explorer and the column heatmap have copies to show.

plus a comparison results folder registered as a finished background job.
"""
from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib
from dash_helpers import N_COPIED, copier_run, finished_compare, floored_run, open_page
from helpers import live_job

from memviz.app import glossary, readings, uploads
from memviz.app import runs as app_runs
from memviz.jobs import control as jobs
from memviz.warmup.run import WarmupConfig, run_warmup
from memviz.warmup.store import RunStore

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90
RUN_PAGES = ["screens/3_memorization.py", "screens/4_dynamics.py", "screens/5_tune.py"]
ALL_PAGES = ["screens/1_data.py", "screens/2_warmup.py", *RUN_PAGES, "screens/6_compare.py", "screens/7_report.py"]


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory, sample):
    root = tmp_path_factory.mktemp("runs")
    train, _ = sample
    small = train.subset(train.row_ids[:300])
    run_warmup(small, WarmupConfig(epochs=6, check_every=2, device="cpu",
                                   model_params={"layers": [32, 32], "n_timesteps": 10}), root / "tiny")
    copier_run(small, root / "copier")
    finished_compare(root, small, np.random.default_rng(0))
    return root


@pytest.fixture
def app(runs_root, monkeypatch):
    """An AppTest on the fixture runs root; ``app(run)`` opens with that run selected."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(runs_root))

    def make(run: str | None = "tiny"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        if run:
            at.query_params["run"] = run
        return at
    return make


def runs_of(run_dir) -> int:
    """The number of training rows of a stored run."""
    return int(RunStore(run_dir).manifest()["data"]["n_rows"])


def shown(md: str) -> str:
    """What a reader sees of Markdown source written with screens/_ui.esc (backslash escapes removed)."""
    return re.sub(r"\\([^\w\s])", r"\1", md)


def figures(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def no_exception(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def table_with(at, column: str) -> pd.DataFrame:
    """The first st.dataframe holding this column (dataframes without selection carry no key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def metric(at, label: str) -> str:
    """A figure of the Data page; its target and row key are one line of text (a metric cut "rownames")."""
    if label in ("target", "row key"):
        line = next(m.value for m in at.main.markdown if m.value.startswith("**Target:**"))
        found = re.fullmatch(r"\*\*Target:\*\* (.*) · \*\*Row key:\*\* (.*)", line)
        return re.sub(r"\\(.)", r"\1", found.group(1 if label == "target" else 2))
    return next(m.value for m in at.metric if m.label == label)


# ---------------------------------------------------------------------- pages
def test_first_visit_shows_the_sample_ready_to_use(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))   # no run yet
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    no_exception(at)
    assert metric(at, "rows") == "3,000" and metric(at, "test rows") == "1,000"
    assert metric(at, "target") == "income"
    assert at.button(key="use_table").disabled  # the sample is already the current table
    assert "3,000 training rows" in at.sidebar.caption[0].value


def test_a_new_tab_shows_the_table_of_the_run_it_opens(app):
    """Issue 20 item 1: a new tab (no URL) opened the newest run while the sidebar said "Bundled sample":
    the run's table is the session's table (here the 300 rows the run trained on, kept in the run)."""
    at = app(None).run()
    no_exception(at)
    run = at.sidebar.selectbox(key="run_pick").value
    assert run
    n = runs_of(run)
    assert f"{n:,} training rows" in at.sidebar.caption[0].value and n != 3000
    assert not at.button(key="use_table").disabled           # the Data page offers the sample as another table
    # said in the sidebar beside the dataset, once: a toast sat over the top right of the page it opened
    assert not at.toast and any("Switched the table" in i.value for i in at.sidebar.info)
    at.switch_page("screens/3_memorization.py").run()
    assert not any("Switched the table" in i.value for i in at.sidebar.info)
    no_exception(at)
    assert f"{n:,} training rows" in at.sidebar.caption[0].value


@pytest.mark.parametrize("page", ALL_PAGES)
def test_every_page_renders_on_a_finished_run(app, page):
    at = app("tiny").run()
    at.switch_page(page).run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert at.sidebar.selectbox(key="run_pick").value.endswith("tiny")
    figs = figures(at)
    if page in RUN_PAGES or page.endswith("2_warmup.py"):
        assert figs, "a page of a finished run shows figures"
    # every figure has its one-sentence reading guide under it
    captions = {c.value for c in at.caption}
    for f in figs:
        text = f["layout"]["meta"]["caption"]
        assert text and text in captions


@pytest.mark.parametrize("page", RUN_PAGES)
def test_run_pages_without_a_run_say_what_to_do(tmp_path, monkeypatch, page):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page(page).run()
    no_exception(at)
    assert any("Warm-up" in i.value for i in at.info)
    assert not figures(at)


def test_bad_upload_shows_one_line_error_and_the_app_keeps_working(app):
    at = app().run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload_train").set_value(("table.csv", b"\x00\x01\x02binary\x00", "text/csv")).run()
    no_exception(at)
    assert len(at.error) == 1 and "binary content" in at.error[0].value and "\n" not in at.error[0].value
    at.file_uploader(key="upload_train").set_value(("table.parquet", b"PAR1 not really", "application/octet-stream"))
    at.run()
    assert "Parquet" in at.error[0].value
    at.radio(key="data_source").set_value("sample").run()  # back to a good table
    no_exception(at)
    assert not at.error and metric(at, "rows") == "3,000"
    at.switch_page("screens/5_tune.py").run()
    no_exception(at)
    assert figures(at)


def test_the_tune_page_says_what_pruning_does_not_buy(app):
    """A privacy officer reads, beside the rows that would go, that pruning protects those rows and not
    the table (the study's measured result), and where to check a pruned model."""
    at = app("copier").run()
    at.switch_page("screens/5_tune.py").run()
    no_exception(at)
    said = [c.value for c in at.caption if c.value.startswith("What pruning buys")]
    assert said == ["What pruning buys: " + glossary.explain("Pruning")]
    assert "kept rows" in said[0] and "random" in said[0] and "Compare page" in said[0]


def test_upload_then_schema_edit_then_use(app, sample):
    train, _ = sample
    csv = train.data.head(120).to_csv(index=False).encode()
    at = app().run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload_train").set_value(("people.csv", csv, "text/csv")).run()
    no_exception(at)
    assert metric(at, "target") == "income"  # a label-like column is guessed
    n_num = int(metric(at, "numerical"))
    editor = next(d for d in at.data_editor)
    age = int(np.flatnonzero(editor.value["column"].to_numpy() == "age")[0])
    at.session_state[editor.key] = {"edited_rows": {age: {"kind": "excluded"}}, "added_rows": [], "deleted_rows": []}
    at.radio(key="data_split").set_value("random").run()
    no_exception(at)
    assert int(metric(at, "numerical")) == n_num - 1
    assert metric(at, "test rows") == "30"  # 25 % of 120
    at.button(key="use_table").click().run()
    no_exception(at)
    assert "people.csv" in shown(at.sidebar.caption[0].value) and "90 training rows" in at.sidebar.caption[0].value


def test_log_toggle_changes_the_histogram_axis(app):
    at = app("copier").run()
    at.switch_page("screens/3_memorization.py").run()

    def hist_axis():
        hist = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Copies per training row"))
        return hist["layout"]["yaxis"].get("type", "linear")

    assert hist_axis() == "log"
    at.toggle(key="hist_log").set_value(False).run()
    no_exception(at)
    assert hist_axis() == "linear"


def test_leak_explorer_shows_copies_and_redacts(app, sample):
    train, _ = sample
    at = app("copier").run()
    at.switch_page("screens/3_memorization.py").run()
    no_exception(at)
    top = table_with(at, "copies")  # no floor: ranked by raw copies
    # the copied rows lead (shuffled rows are sometimes flagged too: the paper's distance is relative)
    assert set(top["training row"].head(5)) <= set(range(N_COPIED))
    leak = table_with(at, "generated row no.")
    assert "synthetic_id" not in leak.columns  # issue 20 item 2: readable headers, no raw keys
    assert len(leak) > 1
    raw_value = str(train.data.loc[int(top["training row"].iloc[0]), "workclass"])
    # redacted by default (issue 20 item 9: the same default as Tune & prune and the report)
    assert at.toggle(key="redact").value is True
    assert raw_value not in leak["workclass"].astype(str).tolist()
    assert leak["workclass"].astype(str).str.startswith(("cat-", "missing")).all()
    at.toggle(key="redact").set_value(False).run()
    no_exception(at)
    leak = table_with(at, "generated row no.")
    assert raw_value in leak["workclass"].astype(str).tolist()
    heat = next(f for f in figures(at) if "leak" in f["layout"]["title"]["text"].lower())
    assert heat["data"][0]["type"] == "heatmap"


def test_p_slider_changes_the_rows_that_would_go(app):
    at = app("tiny").run()
    at.switch_page("screens/5_tune.py").run()
    assert metric(at, "rows that would go") == "30"  # ceil(0.10 * 300)
    removed = table_with(at, "DynamicCut score")
    assert len(removed) == 30
    at.slider(key="tune_p").set_value(0.25).run()
    no_exception(at)
    assert metric(at, "rows that would go") == "75"
    assert len(table_with(at, "DynamicCut score")) == 75
    at.slider(key="tune_k").set_value(1).run()
    no_exception(at)


def test_tune_page_offers_the_isolation_cut_beside_dynamiccut_issue_52(app):
    """The same p without a warm-up: as many rows as DynamicCut's, their overlap and the cost, moving with p."""
    at = app("tiny").run()
    at.switch_page("screens/5_tune.py").run()
    no_exception(at)
    # p is kept with the run (another test may have moved it): the same count as DynamicCut's, whatever p is
    assert metric(at, "rows the isolation cut would remove") == metric(at, "rows that would go")
    assert metric(at, "overlap with DynamicCut").endswith(" %") and metric(at, "ranking cost").endswith(" s")
    assert any("isolation cut" in c.value for c in at.caption)
    at.slider(key="tune_p").set_value(0.2).run()
    no_exception(at)
    assert metric(at, "rows the isolation cut would remove") == "60"             # ceil(0.2 * 300)
    at.slider(key="tune_p").set_value(0.1).run()                                  # kept with the run: put back


def test_leak_explorer_says_why_the_row_is_at_risk_redacted_issue_52(app, sample):
    """The chosen row's reasons, from the training table alone, in the same redaction as its table."""
    train, _ = sample
    at = app("copier").run()
    at.switch_page("screens/3_memorization.py").run()
    no_exception(at)
    why = [shown(m.value) for m in at.markdown if shown(m.value).startswith(("At risk", "Nothing in the table alone"))]
    assert len(why) == 1
    row = int(at.selectbox(key="leak_row_redacted").value)      # one widget per redaction (redacted by default)
    cats = [str(train.data.loc[row, c]) for c in train.schema.distance_categorical]
    assert not any(f"= {v} " in why[0] or f"= {v})" in why[0] for v in cats if len(v) > 3)
    at.toggle(key="redact").set_value(False).run()
    no_exception(at)
    assert any(shown(m.value).startswith(("At risk", "Nothing in the table alone")) for m in at.markdown)


@pytest.mark.slow
def test_why_these_rows_panel_explains_the_top_group_issue_52(app):
    """One click: the model's sentence with its held-out AUC and strength, the SHAP figure, the values and rows."""
    pytest.importorskip("shap")
    at = app("copier").run()
    at.switch_page("screens/3_memorization.py").run()
    at.button(key="why_button").click().run()
    no_exception(at)
    assert any("held-out AUC" in shown(m.value) for m in at.markdown)
    assert any("What carries the model of the Top group" in f["layout"]["title"]["text"] for f in figures(at))
    rows = table_with(at, "why")
    assert len(rows) == 10 and rows["why"].str.len().gt(0).all()


def test_warmup_page_starts_a_background_run_that_can_be_cancelled(app, runs_root):
    at = app("tiny").run()
    at.switch_page("screens/2_warmup.py").run()
    readout = next(c.value for c in at.sidebar.caption if c.value.startswith("finished"))
    assert readout == "finished · 3 checks"                      # one readout: the sidebar's is the page's
    assert at.get("progress")[0].proto.text == readout
    at.number_input(key="wu_epochs").set_value(2)
    at.number_input(key="wu_every").set_value(1)
    at.selectbox(key="wu_device").set_value("cpu")
    next(b for b in at.button if b.label == "Start warm-up").click().run()
    no_exception(at)
    new = at.sidebar.selectbox(key="run_pick").value
    assert new and Path(new).parent == runs_root and Path(new).name != "tiny"
    job = jobs.job_for(new)
    assert job.info()["pid"]
    jobs.cancel(job)
    status = jobs.wait(job, timeout=120)
    assert status.state in ("cancelled", "finished")
    assert (runs_root / "tiny" / "manifest.json").exists()  # other runs untouched


def test_compare_page_shows_results_side_by_side(app):
    at = app("tiny").run()
    at.switch_page("screens/6_compare.py").run()
    no_exception(at)
    titles = [f["layout"]["title"]["text"].replace("<br>", "") for f in figures(at)]   # titles wrap
    assert any("by method and generator" in t for t in titles)
    assert any("Privacy" in t for t in titles)
    assert any("transfer" in t for t in titles)
    assert any("Column shapes" in t for t in titles) and any("closest" in t for t in titles)
    before = next(t for t in titles if "by method and generator" in t)
    at.selectbox(key="cmp_metric").set_value("shape").run()
    no_exception(at)
    after = next(t for t in (f["layout"]["title"]["text"].replace("<br>", "") for f in figures(at))
                 if "by method and generator" in t)
    assert after != before


def test_compare_page_ignores_prune_settings_tuned_on_another_run(app, runs_root):
    """Regression: p/k/T tuned on run A (Tune & prune) were used for run B's comparison."""
    (runs_root / "tiny" / "tuning.json").unlink(missing_ok=True)   # nothing kept with the run either
    at = app("tiny").run()
    at.session_state["dc_params"] = {"p": 0.3, "k": 2, "T": 4, "run": "copier"}
    at.switch_page("screens/6_compare.py").run()
    no_exception(at)
    assert at.number_input(key="cmp_p").value == pytest.approx(0.10)
    ranking = next(c.value for c in at.caption if "ranking of run" in c.value)
    assert "tiny" in ranking and "k=3" in ranking and "T=default" in ranking
    at.session_state["dc_params"] = {"p": 0.3, "k": 2, "T": 4, "run": "tiny"}  # tuned on this run: used
    at.switch_page("screens/6_compare.py").run()
    ranking = next(c.value for c in at.caption if "ranking of run" in c.value)
    assert "k=2" in ranking and "T=4" in ranking


def test_report_page_offers_every_download(app, runs_root):
    at = app("tiny").run()
    at.switch_page("screens/7_report.py").run()
    no_exception(at)
    keys = {b.key for b in at.get("download_button")}
    assert "dl_report" in keys and "dl_pruned_report" in keys
    out = jobs.list_jobs(runs_root, kind="compare")["out"].iloc[0]
    at.selectbox(key="report_compare").set_value(out).run()
    no_exception(at)
    keys = {b.key for b in at.get("download_button")}
    assert "dl_results" in keys and any(k.startswith("dl_syn_") for k in keys)


def test_run_stays_selected_when_its_status_changes_between_reruns(tmp_path, runs_root, monkeypatch):
    """Regression: a selectbox answers with the label it last showed. The sidebar used to
    label runs with their status and check count, so right after a warm-up finished the
    next page switch sent a label that matched no option; Streamlit handed that label
    back as the value and the current run was dropped ("No warm-up run selected")."""
    import streamlit as st  # lazy: streamlit is optional (memviz[app])
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])
    from streamlit.testing.v1.element_tree import Selectbox  # lazy: streamlit is optional (memviz[app])

    root = tmp_path / "runs"
    shutil.copytree(runs_root / "tiny", root / "live")
    manifest = root / "live" / "manifest.json"
    m = json.loads(manifest.read_text())
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    manifest.write_text(json.dumps({**m, "status": "running", "checks": m["checks"][:1]}))
    writer = RunStore(root / "live").acquire()          # a live writer: without one, a running run reads as lost
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = "live"
    at.run()
    assert at.sidebar.selectbox(key="run_pick").value == str(root / "live")
    assert "running" in " ".join(c.value for c in at.sidebar.caption)
    # What the browser keeps: the label it was shown. The frontend leaves a keyed
    # selectbox's value alone when only its options change, so it keeps answering with it.
    shown = at.sidebar.selectbox(key="run_pick")._widget_state.string_value
    real = Selectbox._widget_state

    def like_a_browser(self):
        ws = real.fget(self)
        if self.key == "run_pick":
            ws.string_value = shown
        return ws
    monkeypatch.setattr(Selectbox, "_widget_state", property(like_a_browser))
    manifest.write_text(json.dumps(m))                  # the run finishes with all its checks
    writer.release()
    st.cache_data.clear()                               # the runs list is re-read (ttl 3 s)
    at.run()                                            # the full rerun when the run ends
    at.switch_page("screens/3_memorization.py").run()
    no_exception(at)
    assert not any("No warm-up run selected" in i.value for i in at.info)
    assert at.sidebar.selectbox(key="run_pick").value == str(root / "live")
    assert "finished" in " ".join(c.value for c in at.sidebar.caption)
    assert figures(at)


def test_sidebar_says_queued_for_a_run_waiting_for_a_slot(tmp_path, monkeypatch):
    """A run whose job waits for a slot has no manifest yet; the sidebar shows it as queued."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    job = live_job(tmp_path, "warmup")                  # this test process stands in for the waiting job
    jobs.EventLog(job.events_path)({"event": "queued", "slots": 1})
    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["memviz_run"] = str(job.out)
    at.run()
    no_exception(at)
    assert at.sidebar.selectbox(key="run_pick").value == str(job.out)
    assert any(c.value.startswith("queued") for c in at.sidebar.caption)


# ------------------------------------------------------------ issue 13: the dashboard as a privacy officer reads it
MARKDOWN_ELEMENTS = ("markdown", "caption", "info", "warning", "error", "success")


def rendered_markdown(at) -> list[str]:
    """The Markdown source of every text element of the page and the sidebar."""
    out = []
    for kind in MARKDOWN_ELEMENTS:
        out += [el.value for el in at.get(kind)]
        out += [el.value for el in at.sidebar.get(kind)]
    return out


def live_markdown_link(text: str) -> bool:
    """Would this Markdown source render a link or an image (an unescaped ``](``)?"""
    return re.search(r"(?<!\\)\]\(", text) is not None


def one_check_root(tmp_path, small, monkeypatch):
    root = tmp_path / "runs"
    copier_run(small, root / "one", epochs=(2,))
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return root


@pytest.fixture(scope="module")
def small(sample):
    train, _ = sample
    return train.subset(train.row_ids[:300])


def test_tune_page_with_exactly_one_check_does_not_crash(tmp_path, small, monkeypatch):
    """Regression: the k slider had min = max = 1 (StreamlitInvalidMinMaxError) for a run with one check."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    one_check_root(tmp_path, small, monkeypatch)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = "one"
    at.run()
    at.switch_page("screens/5_tune.py").run()
    no_exception(at)
    assert metric(at, "rows that would go") == "30" and metric(at, "checks scored (epoch ≤ T)") == "1"
    early = next(f for f in figures(at) if f["layout"]["title"]["text"].startswith("Early identification"))
    assert "One check only" in early["layout"]["annotations"][0]["text"]   # nothing early to identify yet
    at.slider(key="tune_p").set_value(0.2).run()
    no_exception(at)
    assert metric(at, "rows that would go") == "60"


def test_no_error_links_in_a_privacy_tool():
    """The error box offered "Ask Google / Ask ChatGPT" links: a Streamlit option turns them off."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert cfg["client"]["showErrorLinks"] is False


def test_an_uploaded_test_file_becomes_the_split_and_is_used(app, sample):
    """Regression: after the test file was added, the split stayed on "a random hold-out" and training
    silently dropped from 3,000 to 2,250 rows."""
    train, test = sample
    at = app(None).run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload_train").set_value(("train.csv", train.data.to_csv(index=False).encode(),
                                                     "text/csv")).run()
    no_exception(at)
    assert at.radio(key="data_split").value == "random"      # no test file yet: a hold-out is the default
    at.file_uploader(key="upload_test").set_value(("test.csv", test.data.to_csv(index=False).encode(),
                                                   "text/csv")).run()
    no_exception(at)
    assert at.radio(key="data_split").value == "file"
    assert metric(at, "rows") == "3,000" and metric(at, "test rows") == "1,000"
    at.button(key="use_table").click().run()
    no_exception(at)
    assert "3,000 training rows · 1,000 test rows" in at.sidebar.caption[0].value


def test_target_picker_changes_the_target_in_one_step(app):
    at = app(None).run()
    assert metric(at, "target") == "income"
    at.selectbox(key="target_sample").set_value("sex").run()
    no_exception(at)
    assert not at.error and metric(at, "target") == "sex"
    editor = next(d for d in at.data_editor)
    assert "sex" not in set(editor.value["column"]) and "income" in set(editor.value["column"])
    at.selectbox(key="target_sample").set_value("").run()
    no_exception(at)
    assert metric(at, "target") == "none"


def test_a_reload_finds_the_uploaded_table_again(tmp_path, runs_root, monkeypatch, small, sample):
    """Regression: a reload kept the run but lost the uploaded table, and Compare refused ("trained on
    another table"). The table in use is kept with the runs and found from the URL (or the run)."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    _, test = sample
    root = tmp_path / "runs"
    shutil.copytree(runs_root / "tiny", root / "tiny")
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    key = uploads.save_tables(root, small, test, "Upload: people.csv", "upload:0123")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = "tiny"                     # what a reload keeps: the URL (here without the table)
    at.run()
    no_exception(at)
    assert "people.csv" in shown(at.sidebar.caption[0].value) and "300 training rows" in at.sidebar.caption[0].value
    assert at.query_params["table"] in (key, [key])     # the URL now names the table too
    again = AppTest.from_file(APP, default_timeout=TIMEOUT)
    again.query_params["table"] = key
    again.run()
    no_exception(again)
    assert "300 training rows" in again.sidebar.caption[0].value


def test_a_change_of_table_says_what_it_does_to_the_current_run(app):
    at = app("tiny").run()                              # tiny: 300 rows; the page offers the 3,000-row sample
    at.radio(key="data_split").set_value("random").run()
    note = next(c.value for c in at.caption if "deselects run" in c.value)
    assert "tiny" in shown(note) and "trained on another table" in note
    at.button(key="use_table").click().run()
    no_exception(at)
    assert at.sidebar.selectbox(key="run_pick").value == ""
    assert any("no longer selected" in t.value for t in at.toast)


def test_glossary_is_one_click_away_on_every_page(app):
    at = app("tiny").run()
    for page in ALL_PAGES:
        at.switch_page(page).run()
        box = next(e for e in at.sidebar.expander if "What the words mean" in e.label)
        text = " ".join(m.value for m in box.markdown)
        for term in ("Memorized", "Copy", "Floor", "Mem\\-AUC", "Top group", "DynamicCut score"):
            assert f"**{term}**" in text, (page, term)
        assert "relative closeness, not identity" in shown(text)


def test_user_text_never_renders_as_markdown_links_or_images(app):
    """Issue 12 item 3: a column named like a Markdown image made the browser fetch a URL from the Data
    page's warning; class values, file names and error messages were rendered the same way."""
    evil_col = "![t](http://127.0.0.1:8599/x.png)"
    df = pd.DataFrame({"x": np.arange(60) * 1.5, evil_col: [None] * 60,
                       "label": ["[a](https://example.org)", ":red[b]"] * 30})
    at = app(None).run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload_train").set_value(("[f](https://example.org).csv", df.to_csv(index=False).encode(),
                                                     "text/csv")).run()
    no_exception(at)
    texts = rendered_markdown(at)
    assert any("example.org" in shown(t) for t in texts)  # the class values are shown, as text
    assert not [t for t in texts if live_markdown_link(t)], [t for t in texts if live_markdown_link(t)]
    at.button(key="use_table").click().run()
    no_exception(at)
    assert not [t for t in rendered_markdown(at) if live_markdown_link(t)]
    bad = pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", "c"]}).to_csv(index=False).encode() + b"[z](https://e.org),4\n"
    at.file_uploader(key="upload_train").set_value(("t.csv", bad, "text/csv")).run()
    assert not [t for t in rendered_markdown(at) if live_markdown_link(t)]


@pytest.fixture
def live_app(tmp_path, runs_root, monkeypatch):
    """An AppTest on a copy of the ``tiny`` run made live (manifest ``running``, its writer lock
    held, as a warm-up in progress holds it); ``finish()`` ends it."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    root = tmp_path / "runs"
    shutil.copytree(runs_root / "tiny", root / "live")
    manifest = root / "live" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "running"}))
    writer = RunStore(root / "live").acquire()          # without a live writer, a running run reads as lost
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = "live"

    def finish():
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "finished"}))
        writer.release()

    yield at, finish
    writer.release()


def test_analysis_pages_say_a_run_is_still_going(live_app):
    at, finish = live_app
    at.run()
    assert not any("in progress" in i.value for i in at.info)            # not on the Data page
    for page in ("screens/3_memorization.py", "screens/4_dynamics.py", "screens/5_tune.py", "screens/7_report.py"):
        at.switch_page(page).run()
        no_exception(at)
        banner = next(i.value for i in at.info if "in progress" in i.value)
        assert "updated at" in banner and "3 checks" in banner
    finish()
    at.switch_page("screens/3_memorization.py").run()
    assert not any("in progress" in i.value for i in at.info)


def test_saved_runs_show_no_final_ratio_for_a_live_run(live_app):
    at, _ = live_app
    at.run()
    at.switch_page("screens/2_warmup.py").run()
    no_exception(at)
    saved = table_with(at, "final_mem_ratio")
    assert saved["final_mem_ratio"].isna().all()


def test_compare_page_leads_with_a_verdict_and_names_every_figure_in_words(app):
    at = app("tiny").run()
    at.switch_page("screens/6_compare.py").run()
    no_exception(at)
    card = " ".join(m.value for m in at.markdown)
    for topic in ("Flagged output", "Pruning", "Utility cost", "Next step"):
        assert f"**{topic}:**" in card
    assert "indicative" in shown(card) and "2 seeds" in shown(card)       # the fixture has 2 seeds
    summary = table_with(at, "Memorization ratio")
    assert "Memorization ratio" in summary.columns
    assert not [c for c in summary.columns if "_" in c]                   # no raw column name
    assert at.selectbox(key="cmp_metric").format_func("dcr_share").startswith("DCR share")


def test_report_includes_the_latest_finished_comparison_by_default(app, runs_root):
    at = app("tiny").run()
    at.switch_page("screens/7_report.py").run()
    no_exception(at)
    latest = jobs.list_jobs(runs_root, kind="compare")["out"].iloc[0]
    assert at.selectbox(key="report_compare").value == latest
    assert "dl_results" in {b.key for b in at.get("download_button")}
    card = " ".join(m.value for m in at.markdown)
    assert "**Flagged output:**" in card and "**Next step:**" in card


def test_warmup_from_the_page_measures_its_floor_on_the_test_split(app, runs_root):
    at = app("tiny").run()
    at.switch_page("screens/2_warmup.py").run()
    at.number_input(key="wu_epochs").set_value(1)
    at.number_input(key="wu_every").set_value(1)
    at.selectbox(key="wu_device").set_value("cpu")
    next(b for b in at.button if b.label == "Start warm-up").click().run()
    no_exception(at)
    job = jobs.job_for(at.sidebar.selectbox(key="run_pick").value)
    spec = json.loads(job.spec_path.read_text())
    jobs.cancel(job)
    # the session's table is the run's (300 rows, made without a hold-out); on the sample with its test
    # file the floor is measured on the 1,000 test rows (see below and tests/app/test_walk_browser.py)
    assert len(pd.read_parquet(spec["paths"]["train"])) == 300 and "holdout" not in spec["paths"]
    jobs.wait(job, timeout=120)
    at.switch_page("screens/1_data.py").run()
    at.button(key="use_table").click().run()                          # back to the sample and its test file
    at.switch_page("screens/2_warmup.py").run()
    at.number_input(key="wu_epochs").set_value(1)
    at.number_input(key="wu_every").set_value(1)
    at.selectbox(key="wu_device").set_value("cpu")
    next(b for b in at.button if b.label == "Start warm-up").click().run()
    no_exception(at)
    job = jobs.job_for(at.sidebar.selectbox(key="run_pick").value)
    spec = json.loads(job.spec_path.read_text())
    jobs.cancel(job)
    assert "holdout" in spec["paths"]                                  # the 1,000 test rows of the sample
    assert len(pd.read_parquet(spec["paths"]["holdout"])) == 1_000
    jobs.wait(job, timeout=120)


# ------------------------------------------------------------- the floor pages
@pytest.fixture(scope="session")
def floor_root(tmp_path_factory, sample):
    """``floored``: a copier run (4 checks) with its floor measured on 500 real rows outside its
    training rows and a job spec naming them; ``nofloor``: the same without a hold-out; ``short``:
    3 checks (too few for the split-half statistics)."""
    root = tmp_path_factory.mktemp("floor_runs")
    train, _ = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    floored_run(small, holdout, root / "floored")
    copier_run(small, root / "nofloor", epochs=(2, 4, 6, 8))
    copier_run(small, root / "short")
    return root


@pytest.fixture
def floor_app(floor_root, monkeypatch):
    monkeypatch.setenv(jobs.RUNS_ENV, str(floor_root))
    return lambda run, page: open_page(run, page, TIMEOUT)


def _title(fig) -> str:
    return fig["layout"]["title"]["text"].replace("<br>", "")


def test_memorization_with_a_floor_says_how_much_comes_from_the_model(floor_app):
    at = floor_app("floored", "screens/3_memorization.py")
    # one headline: the audit's sentence, then its evidence, each against real rows the model never saw
    heads = [m.value for m in at.markdown if m.value.startswith("**") and m.value.endswith(".**")]
    assert len(heads) == 1                                                 # the verdict, once
    assert metric(at, "ratio test above its floor").endswith("points")
    assert metric(at, "too close to a training row").endswith("%")
    assert metric(at, "identical to a training row").endswith("%")
    assert metric(at, "training rows named").isdigit()
    assert any(c.value.startswith("fresh real rows") for c in at.caption)
    assert not any("Real rows the model never saw are flagged at" in m.value for m in at.markdown)
    figs = {_title(f): f for f in figures(at)}
    curves = next(f for t, f in figs.items() if t.startswith("Memorization during the warm-up, against the floor"))
    names = [tr.get("name", "") for tr in curves["data"]]
    assert any(n.startswith("floor: real rows never seen") for n in names)
    mem = next(tr for tr in curves["data"] if tr.get("name", "").startswith("mem ratio"))
    assert mem["error_y"]["type"] == "data"                                  # the per-check excess interval
    assert any(t.startswith("Copies per training row: the model vs fresh real rows") for t in figs)
    # the leak explorer ranks by excess by default, raw copies one click away
    ranked = table_with(at, "copies above expected")
    assert ranked["copies above expected"].is_monotonic_decreasing
    assert {"expected from real rows", "ratio test: above chance", "exact copies", "near-exact copies",
            "look identical only after rescaling"} <= set(ranked.columns)
    assert set(ranked["training row"].head(5)) <= set(range(N_COPIED)) and ranked["ratio test: above chance"].head(5).all()
    assert (ranked["exact copies"].head(5) > 0).all()                       # the copier's copies are exact
    at.radio(key="rank_by").set_value("copies").run()
    no_exception(at)
    assert table_with(at, "copies above expected")["copies"].is_monotonic_decreasing
    leak = table_with(at, "how close")
    assert {"largest difference", "looks identical only after rescaling"} <= set(leak.columns)
    assert "r ≈ 0 from scaling" not in leak.columns  # issue 20 item 8: words an officer follows
    assert "exact copy" in set(leak["how close"])
    assert metric(at, "identical to a training row").endswith("%")


def test_memorization_without_a_floor_says_so_instead_of_a_number(floor_app):
    at = floor_app("nofloor", "screens/3_memorization.py")
    assert any("No floor for this run" in m.value for m in at.markdown)
    assert not any("Real rows the model never saw are flagged at" in m.value for m in at.markdown)
    assert metric(at, "floor: real rows never seen") == "not measured"
    assert not [m for m in at.metric if m.label == "too close to a training row"]
    assert not [r for r in at.radio if r.key == "rank_by"]                  # nothing to rank by excess against
    ranked = table_with(at, "copies")
    assert "copies above expected" not in ranked.columns and ranked["copies"].is_monotonic_decreasing
    curves = next(f for f in figures(at) if _title(f).startswith("Memorization during the warm-up"))
    assert not any(tr.get("name", "").startswith("floor") for tr in curves["data"])
    assert "no hold-out" in curves["layout"]["meta"]["caption"]


def test_memorization_measures_the_other_distance_with_its_own_floor(floor_app):
    at = floor_app("floored", "screens/3_memorization.py")
    assert len(table_with(at, "distance")) == 1
    at.button(key="measure_other").click().run()
    no_exception(at)
    dist = table_with(at, "distance")
    assert len(dist) == 2 and dist["distance"].tolist() == ["paper's", "standardized"]
    assert dist["floor"].str.endswith("%").all() and dist["how"].iloc[1].startswith("measured now")
    assert dist["floor"].iloc[0] != dist["floor"].iloc[1]                    # each distance has its own floor
    at.run()                                                                  # cached: shown again without a click
    assert len(table_with(at, "distance")) == 2


def test_dynamics_shows_each_statistic_beside_its_null(floor_app):
    at = floor_app("floored", "screens/4_dynamics.py")
    assert any(_title(f).startswith("Dynamics findings against a null") for f in figures(at))
    table = table_with(at, "verdict")
    assert len(table) == 8 and set(table["definition"]) == {"paper's (circular)", "non-circular"}
    assert set(table["verdict"]) <= {"holds", "reversed", "not shown", "undefined"}
    assert {"observed effect", "null median", "null 2.5–97.5 %"} <= set(table.columns)
    short = floor_app("short", "screens/4_dynamics.py")
    assert any("cannot run" in i.value and "4 checks" in i.value for i in short.info)
    assert figures(short)                                                     # the paper's views still show


def test_dynamics_row_picker_matches_typed_row_ids_exactly(floor_app):
    at = floor_app("floored", "screens/4_dynamics.py")
    at.multiselect(key="timeline_rows").set_value([]).run()
    at.text_input(key="timeline_more").input("1, 12345678, x").run()
    no_exception(at)
    timeline = next(f for f in figures(at) if _title(f).startswith("Memorization timeline"))
    heat = next(tr for tr in timeline["data"] if tr["type"] == "heatmap")
    assert [str(y).split(" ")[0] for y in heat["y"]] == ["1"]                # not rows 10-19
    assert any("Not a training row_id" in w.value for w in at.warning)
    assert any(t.value == "12345678, x" for t in at.text)                     # user text shown as plain text


def test_dynamics_of_a_big_run_asks_before_simulating_the_null(floor_app, monkeypatch):
    import streamlit as st  # lazy: streamlit is optional (memviz[app])

    st.cache_resource.clear()
    monkeypatch.setattr(readings, "NULL_AUTO_EVENTS", 0)                         # every run counts as big
    at = floor_app("nofloor", "screens/4_dynamics.py")
    assert not any(_title(f).startswith("Dynamics findings") for f in figures(at))
    assert figures(at)                                                        # the paper's views show at once
    at.button(key="run_null").click().run()
    no_exception(at)
    assert any(_title(f).startswith("Dynamics findings against a null") for f in figures(at))
    assert len(table_with(at, "verdict")) == 8


def test_redacted_ranges_get_room_instead_of_being_cut_off(app):
    """Regression: redacted cells were cut off ("170 – 17"): the grid sized the columns from the header."""
    at = app("copier").run()
    at.switch_page("screens/3_memorization.py").run()
    at.toggle(key="redact").set_value(True).run()
    no_exception(at)
    for el in at.dataframe:
        config = json.loads(el.proto.columns or "{}")
        if "age" in config:
            assert config["age"].get("width") == "medium"
            break
    else:
        raise AssertionError("no redacted table with a width for its columns")


def test_a_run_without_a_check_yet_says_so_in_words(tmp_path, monkeypatch):
    """A just-started run used to show "not a memviz run (no manifest.json)" with its folder path."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    job = live_job(tmp_path, "warmup")                  # this test process stands in for the starting job
    monkeypatch.setenv(jobs.RUNS_ENV, str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["memviz_run"] = str(job.out)
    at.run()
    at.switch_page("screens/3_memorization.py").run()
    no_exception(at)
    texts = [i.value for i in at.info]
    assert any("no finished check yet" in t for t in texts) and not any("manifest" in t for t in texts)
    assert any("in progress" in t for t in texts)      # and the banner


def test_tune_keeps_p_k_T_with_the_run_and_in_the_url_and_bounds_k(app, runs_root):
    """Issue 20 item 4: a reload reset p/k/T to the defaults; k could exceed the checks up to T."""
    (runs_root / "tiny" / "tuning.json").unlink(missing_ok=True)
    at = app("tiny").run()
    at.switch_page("screens/5_tune.py").run()
    no_exception(at)
    assert not at.warning                                              # the defaults: no complaint
    at.slider(key="tune_p").set_value(0.2).run()
    at.slider(key="tune_k").set_value(2).run()
    T = at.select_slider(key="tune_T").value
    assert at.query_params["p"] == "0.20" and at.query_params["k"] == "2" and at.query_params["T"] == str(T)
    # a new session on the run (another tab, a reload without the URL's values) finds them with the run
    again = app("tiny").run()
    again.switch_page("screens/5_tune.py").run()
    assert again.slider(key="tune_p").value == pytest.approx(0.2) and again.slider(key="tune_k").value == 2
    # a k above the checks at or before T, asked in the URL: bounded, with its one-line reason
    bad = app("tiny")
    bad.query_params.update({"p": "0.15", "k": "99", "T": "2"})
    bad.run()
    bad.switch_page("screens/5_tune.py").run()
    no_exception(bad)
    assert any(w.value.startswith("k = 99 is more than the 1 check at or before T = 2") for w in bad.warning)
    assert bad.slider(key="tune_p").value == pytest.approx(0.15)


def test_report_page_uses_the_tuning_kept_with_the_run(app, runs_root):
    """Regression (issue 19 item 6): a fresh session (a reload, another tab) opened on Report used the
    default p/k/T while Tune & prune had kept k=2, T=4 with the run; its headings named the defaults."""
    view = app_runs.load_run(runs_root / "tiny")
    try:
        app_runs.save_tuning(view, app_runs.PruneParams("tiny", 0.3, 2, 4))
        at = app("tiny").run()
        at.switch_page("screens/7_report.py").run()
        no_exception(at)
        headings = " ".join(m.value for m in at.markdown).replace("\\", "")   # Markdown escapes undone
        assert "p=0.30" in headings and "k=2" in headings and "T=4" in headings, headings
        assert "k=3" not in headings
    finally:
        (runs_root / "tiny" / "tuning.json").unlink(missing_ok=True)


def test_every_download_button_leaves_the_page_as_it_is():
    """A download click reran the page, which registered the button's deferred data again and
    revoked the id the click was fetching: under load the audit page's audit.json never came
    (CI, test_audit_browser). Every screen goes through ``_ui.download`` (on_click="ignore")."""
    import screens._ui as ui  # lazy: screens/_ui imports streamlit (optional, memviz[app])

    root = Path(ui.__file__).resolve().parent
    direct = []
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "download_button":
                direct.append(f"{path.name}:{node.lineno}")
    assert len(direct) == 1 and direct[0].startswith("_ui.py:"), direct     # only the helper calls it
    calls = []

    class Where:
        def download_button(self, *args, **kw):
            calls.append(kw)
            return False

    ui.download(Where(), "x", b"1", file_name="x.csv")
    assert calls == [{"on_click": "ignore", "file_name": "x.csv"}]
