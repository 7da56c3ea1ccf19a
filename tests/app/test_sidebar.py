"""app.py's sidebar in Streamlit's AppTest, against hostile run folders and URLs.

At 9a38467: a run folder whose manifest lacked ``"data"`` (still valid JSON) made every page
show a KeyError and the navigation disappear, for every session; and ``?run=..`` selected
the runs root's parent folder as the current run.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from dash_helpers import copier_run

from memviz.jobs import control as jobs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90
PAGES = ["screens/1_data.py", "screens/2_warmup.py", "screens/3_memorization.py", "screens/4_dynamics.py",
         "screens/5_tune.py", "screens/6_compare.py", "screens/7_report.py"]


@pytest.fixture(scope="module")
def good_run(sample, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("sidebar") / "good"
    copier_run(sample[0].subset(sample[0].row_ids[:120]), run)
    return run


def _app(root, monkeypatch, run=None):
    import streamlit as st  # lazy: streamlit is optional (memviz[app])
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    st.cache_data.clear()
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if run is not None:
        at.query_params["run"] = run
    return at


def test_a_malformed_run_folder_leaves_every_page_working(good_run, tmp_path, monkeypatch):
    root = tmp_path / "runs"
    shutil.copytree(good_run, root / "good")
    for name, change in (("no_data", lambda m: m.pop("data")), ("config_list", lambda m: m.update(config=[]))):
        shutil.copytree(good_run, root / name)
        m = json.loads((root / name / "manifest.json").read_text())
        change(m)
        (root / name / "manifest.json").write_text(json.dumps(m))
    at = _app(root, monkeypatch, "good").run()
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.sidebar.selectbox(key="run_pick").value == str(root / "good")
    pick = at.sidebar.selectbox(key="run_pick")
    assert str(root / "no_data") in pick.options or any("no_data" in o for o in pick.options)
    # opening the bad one says why, in one line, and the app goes on
    at = _app(root, monkeypatch, "no_data").run()
    at.switch_page("screens/3_memorization.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # shown as text: Markdown punctuation is escaped (user text never becomes a link)
    assert any("manifest lacks the field 'data'" in i.value.replace("\\", "") for i in at.info), \
        [i.value for i in at.info]


@pytest.mark.parametrize("wanted", ["..", "../..", "/", "."])
def test_the_run_in_the_url_never_leaves_the_runs_root(good_run, tmp_path, monkeypatch, wanted):
    outside = Path(shutil.copytree(good_run, tmp_path / "outside"))  # a run folder that is the root's parent
    root = outside / "runs"
    root.mkdir()
    at = _app(root, monkeypatch, wanted).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.selectbox(key="run_pick").value == ""
    at.switch_page("screens/3_memorization.py").run()
    assert any("No warm-up run selected" in i.value for i in at.info)
