"""Issue 51 item 1: ready on first open. The bundled sample's finished warm-up and comparison (``sample_data/demo``,
recorded by ``sample_data/make_demo.py``) are installed into an empty runs root and read by the pages with the
code that reads any run; the Audit page's example names its planted rows.

These tests fail when the shipped folder no longer matches the code (a manifest, audit or job format, the
sample, the memviz version its audit was kept with): run ``python sample_data/make_demo.py`` again then."""
from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from dash_helpers import APP, copier_run

from memviz.app import audits, comparisons, datasets, demo, runs
from memviz.auditing import stored
from memviz.jobs import control as jobs
from memviz.tables.data import fingerprint

#: the packed demo's size bound (it is in the repository)
MAX_BYTES = 6 * 2**20


@pytest.fixture
def installed(tmp_path, monkeypatch):
    monkeypatch.setenv(demo.DEMO_ENV, "1")
    root = tmp_path / "runs"
    assert demo.install(root)
    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    return root


def test_the_shipped_demo_is_small_and_names_no_machine():
    folder = demo.demo_dir()
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= MAX_BYTES
    for p in files:
        if p.suffix in (".json", ".jsonl"):
            text = p.read_text(encoding="utf-8")
            assert "/tmp/" not in text and "/work/" not in text and "/home/" not in text, p
    assert not any(p.name in ("writer.lock", "log.txt", "model.pt") for p in files)


def test_it_is_installed_once_into_an_empty_root_and_read_as_any_run(installed, monkeypatch):
    root = installed
    assert not demo.install(root)                                  # once
    table = runs.runs_table(root)
    assert list(table["status"]) == ["finished"]
    view = runs.load_run(table["path"][0])
    # the audit the worker kept is the one read: the copy has the manifest time it was kept for
    assert stored.load_audit(view.path / stored.RUN_FOLDER, token=runs.run_token(view.path)) is not None
    # trained on the table the Data page's first visit builds: the pages switch no table
    raw = datasets.load_choice("sample")
    train, test = datasets.build_tables(raw, raw.schema, "file")
    assert view.manifest["data"]["fingerprint"] == fingerprint(train)
    assert view.result.floor is not None and len(view.per_check) >= 10
    listed = jobs.list_jobs(root, kind="compare")
    assert list(listed["state"]) == ["finished"]
    cv = comparisons.load_compare(listed["out"][0])
    assert {"baseline", "dynamiccut", "random", "dynamic_threshold"} <= set(cv.ok["method"])
    assert cv.column_shapes is not None and cv.dcr is not None
    assert audits.ranked_on(cv, view.path)                         # its paths point into this root
    for spec in root.glob(".jobs/*/spec.json"):
        paths = json.loads(spec.read_text())["paths"]
        for key in ("train", "test", "holdout", "out"):
            if paths.get(key):
                assert Path(paths[key]).exists() and str(root.resolve()) in paths[key], (spec, key)


def test_it_never_lands_beside_a_users_runs_nor_when_turned_off(tmp_path, monkeypatch, sample):
    monkeypatch.setenv(demo.DEMO_ENV, "1")
    root = tmp_path / "mine"
    train, _ = sample
    copier_run(train.subset(train.row_ids[:100]), root / "mine")
    assert not demo.install(root)
    assert [p.name for p in root.iterdir() if not p.name.startswith(".")] == ["mine"]
    monkeypatch.setenv(demo.DEMO_ENV, "0")
    assert not demo.install(tmp_path / "empty")
    monkeypatch.setenv(demo.DEMO_ENV, "1")
    assert demo.install(tmp_path / "again")
    for p in [p for p in (tmp_path / "again").iterdir() if p.name != demo.MARK]:   # the user deletes it all
        __import__("shutil").rmtree(p) if p.is_dir() else p.unlink()
    assert not demo.install(tmp_path / "again")                                     # not brought back


@pytest.mark.parametrize("page", ["screens/3_memorization.py", "screens/4_dynamics.py", "screens/5_tune.py",
                                  "screens/6_compare.py", "screens/7_report.py"])
def test_every_analysis_page_shows_the_demo_on_a_first_start(installed, page):
    """A first start with no URL: the sidebar picks the demo run, and each page draws it (no "No warm-up run")."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("No warm-up run" in i.value or "No comparison yet" in i.value for i in at.info)
    if page.endswith("6_compare.py"):
        said = " ".join(m.value for m in at.main.markdown)
        assert "Flagged output" in said and "Dynamic threshold" in said
    elif page.endswith(("3_memorization.py", "4_dynamics.py", "5_tune.py")):
        assert len(at.get("plotly_chart")) >= 2


def test_the_audit_pages_example_names_its_planted_rows(sample):
    """The officer's path: the example's 30 training rows planted 10 times each are named."""
    files = demo.example_files()
    train, synthetic, holdout = audits.upload_tables(
        files["train"][0], files["train"][1], files["synthetic"][0], files["synthetic"][1],
        files["holdout"][0], files["holdout"][1], schema_name=files["schema"][0], schema_raw=files["schema"][1])
    assert len(synthetic) == 3000
    a = audits.tables_audit(train, synthetic, holdout)
    assert a.verdict.tone == "bad"
    syn = pd.read_csv(demo.sample_data_dir() / demo.EXAMPLE)
    merged = syn.merge(pd.read_csv(demo.sample_data_dir() / "train.csv").drop_duplicates(), how="inner")
    assert len(merged) >= demo.PLANTED_ROWS * demo.PLANTED_TIMES
    assert int(a.n_over_copied) >= 0.8 * demo.PLANTED_ROWS


def test_audit_again_remakes_only_the_kept_audit(tmp_path, monkeypatch):
    """``make_demo.py --audit-again``: the kept audit made by today's code, what was recorded kept as it was. A stale
    audit (another stored format) is made readable again; the checks, the comparison and the tokens stay."""
    monkeypatch.setenv(demo.DEMO_ENV, "1")
    spec = importlib.util.spec_from_file_location("make_demo", Path(APP).parent / "sample_data" / "make_demo.py")
    make_demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_demo)
    out = tmp_path / "demo"
    shutil.copytree(demo.demo_dir(), out)
    index = next(out.glob("*/audit_cache/index.json"))
    stale = json.loads(index.read_text())
    token = stale["token"]
    index.write_text(json.dumps({**stale, "format": "memviz.audit.stored/0"}))
    kept = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and "audit_cache" not in p.parts
            and p.suffix != ".json"}
    make_demo.audit_again(out)
    assert json.loads(index.read_text())["token"] == token
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file() and "audit_cache" not in p.parts
            and p.suffix != ".json"} == kept
    root = tmp_path / "runs"
    assert demo.install(root, out)
    run = next(p for p in root.iterdir() if (p / "manifest.json").is_file())
    assert stored.load_audit(run / stored.RUN_FOLDER, token=runs.run_token(run)) is not None
