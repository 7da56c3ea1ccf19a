"""Issue 51 on the Audit page: a ready example for the officer's path; the files survive a reload (kept with the
runs and named in the address, as the Data page's uploads); a new audit hides the previous verdict at once."""
from __future__ import annotations

import pytest
from dash_helpers import APP

from memviz.app import bounds, demo, uploads
from memviz.jobs import control as jobs

TIMEOUT = 180


def audit_page(root, monkeypatch, params=None):
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(root))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    at.run()
    at.switch_page("screens/8_audit.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def headline(at) -> str:
    return " ".join(m.value for m in at.main.markdown)


def test_the_example_is_one_click_away_and_names_its_planted_rows(tmp_path, monkeypatch):
    at = audit_page(tmp_path, monkeypatch)
    assert any("Upload the training table" in i.value for i in at.info)       # nothing audited yet
    at.button(key="audit_example").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "copies" in headline(at).lower() or "copied" in headline(at).lower()
    rows = at.dataframe[-1].value                      # the over-copied rows (the last table)
    assert len(rows) >= 24, len(rows)                 # the 30 planted rows, named
    assert any("example" in c.value.lower() for c in at.main.caption)
    # kept with the runs and named in the address: a reload finds the same files
    key = at.query_params["audit"][0] if isinstance(at.query_params["audit"], list) else at.query_params["audit"]
    kept = uploads.load_audit_files(tmp_path, key)
    assert kept["names"][1] == "example_synthetic.csv" and kept["current"] is False


def test_a_reload_finds_the_files_again(tmp_path, monkeypatch):
    """The session is gone after a reload; the address names the kept files (they were lost before)."""
    files = demo.example_files()
    key = uploads.save_audit_files(tmp_path, tuple(files[r][0] for r in uploads.AUDIT_ROLES),
                                   tuple(files[r][1] for r in uploads.AUDIT_ROLES))
    at = audit_page(tmp_path, monkeypatch, {"audit": key})
    assert len(at.dataframe[-1].value) >= 24
    assert any("kept with the runs" in c.value for c in at.main.caption)


@pytest.mark.parametrize("key", ["0123456789abcdef", "../../etc", ""])
def test_an_address_naming_no_kept_files_says_so_in_one_line(tmp_path, monkeypatch, key):
    at = audit_page(tmp_path, monkeypatch, {"audit": key})
    if key:
        assert any("gone" in w.value for w in at.warning), [w.value for w in at.warning]
    assert not at.get("plotly_chart")


def test_the_audit_cache_says_what_it_holds_without_computing():
    calls = []

    @uploads.byte_cached()
    def f(a, _b):
        calls.append(a)
        return a * 2

    assert not f.cached("x", object())
    f("x", object())
    assert f.cached("x", None) and not f.cached("y", None) and calls == ["x"]


def test_kept_audit_files_count_in_the_uploads_quota(tmp_path, monkeypatch):
    monkeypatch.setenv(bounds.UPLOAD_QUOTA_ENV, "3000")
    a = uploads.save_audit_files(tmp_path, ("t.csv", "s.csv", None, None), (b"a" * 1000, b"b" * 1000, None, None))
    b = uploads.save_audit_files(tmp_path, ("t.csv", "s.csv", None, None), (b"c" * 1000, b"d" * 1000, None, None))
    kept = {p.name for _, _, p in bounds.kept_folders(tmp_path / uploads.UPLOADS)}
    assert b in kept and a not in kept
