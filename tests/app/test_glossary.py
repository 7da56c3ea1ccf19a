"""Issue 42, item 7, the privacy officer's minute: every statistical word on the Memorization page and in the
reports either in plain words or one click from the glossary."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from dash_helpers import floored_run

from memviz.app import audits, glossary, reports, runs
from memviz.auditing.html import audit_html
from memviz.jobs import control as jobs

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")

#: the statistical words the walk found unexplained, and the glossary entry each one is explained under
STATISTICAL = {"Floor": "Floor", "Excess": "Excess", "Mem-AUC": "Mem-AUC", "q-value": "q-value",
               "holds": "Holds", "within chance": "Holds", "95 %": "95 % interval", "AUC": "AUC"}


def shown(md: str) -> str:
    return re.sub(r"\\([^\w\s])", r"\1", md)


@pytest.fixture(scope="module")
def run_root(tmp_path_factory, sample):
    root = tmp_path_factory.mktemp("words")
    train, _ = sample
    floored_run(train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800]), root / "floored")
    return root


def test_the_glossary_explains_the_statistics_in_plain_words():
    terms = dict(glossary.entries())
    for term in set(STATISTICAL.values()):
        assert term in terms and terms[term].endswith("."), term
    assert "Holm" in terms["Holds"] and "5 %" in terms["Holds"]
    assert "DeLong" in terms["AUC"] and "0.5" in terms["AUC"]
    assert "19 times out of 20" in terms["95 % interval"]


def test_the_memorization_pages_words_are_plain_or_one_click_away(run_root, monkeypatch):
    """The walk: "q < 0.05 after Benjamini–Hochberg" and the figures' "holds" reached the privacy officer
    unexplained. The page says the test in plain words, and one expander on it explains each word it uses."""
    from streamlit.testing.v1 import AppTest  # lazy: streamlit is optional (memviz[app])

    monkeypatch.setenv(jobs.RUNS_ENV, str(run_root))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["run"] = "floored"
    at.run()
    at.switch_page("screens/3_memorization.py").run()
    assert not at.exception, [e.value for e in at.exception]
    box = next(e for e in at.main.expander if e.label == "What the words on this page mean")
    words = shown(" ".join(m.value for m in box.markdown))
    glossed = {m.value for m in box.markdown}                      # the glossary may name the methods
    text = shown(" ".join(m.value for m in at.main.markdown if m.value not in glossed) + " "
                 + " ".join(c.value for c in at.main.caption))
    assert "Benjamini" not in text and "q < 0.05" not in text
    assert "fewer than 1 in 20" in text
    for said, term in STATISTICAL.items():
        assert f"**{term}**" in words, (said, term)


def test_the_reports_words_are_one_click_from_its_glossary(run_root):
    """The report prints its glossary at the end; a line under "In short" links every glossary word the report
    uses to its entry, so each is one click away. The audit's report (memviz report, the Audit page's download)
    had no glossary at all beside "Holm" and "DeLong"."""
    html = reports.report_html(runs.load_run(run_root / "floored"))
    ids = set(re.findall(r"<dt id='(g-[^']+)'>", html))
    links = re.findall(r"<a href='#(g-[^']+)'>([^<]+)</a>", html)
    assert {"g-floor", "g-excess", "g-mem-auc", "g-holds", "g-95-interval"} <= ids
    linked = dict((t, i) for i, t in links)
    assert {"Floor", "Mem-AUC", "Top group"} <= set(linked), linked
    assert all(i in ids for i, _ in links)
    assert html.index("Words in this report") < html.index("<h2>What the words mean</h2>")


def test_the_audits_report_has_the_glossary_and_links_its_statistics(sample):
    train, test = sample
    small = train.subset(train.row_ids[:300])
    a = audits.tables_audit(small, test.subset(test.row_ids[:300]), train.subset(train.row_ids[300:800]))
    html = audit_html(a, train=small)
    assert "<h2>What the words mean</h2>" in html
    linked = {t for _, t in re.findall(r"<a href='#(g-[^']+)'>([^<]+)</a>", html)}
    assert {"Holds", "Floor", "AUC"} <= linked, linked
