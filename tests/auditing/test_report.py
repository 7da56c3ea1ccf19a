"""The HTML report: self-contained, escaped, captioned, redacted by default."""
import html
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from planted import planted_run
from plotly.offline import get_plotlyjs

from memviz import viz
from memviz.auditing.report import build_report
from memviz.errors import MemvizError
from memviz.leaks.rows import copies_of, most_copied
from memviz.viz.compare import results_display
from memviz.warmup.run import load_warmup
from tests.viz.test_figures import results_frame

EVIL = "<script>alert(1)</script>"


class Tags(HTMLParser):
    """Collects start tags with their attributes and checks nesting of the container tags."""

    CONTAINERS = {"html", "head", "body", "table", "tr", "figure", "div", "script", "style"}

    def __init__(self):
        super().__init__()
        self.tags, self.stack, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in self.CONTAINERS:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.CONTAINERS:
            if not self.stack or self.stack[-1] != tag:
                self.errors.append(f"unexpected </{tag}> (open: {self.stack[-3:]})")
            else:
                self.stack.pop()


def parse(doc: str) -> Tags:
    p = Tags()
    p.feed(doc)
    p.close()
    return p


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store = planted_run(tmp_path_factory.mktemp("report") / "run")
    res = load_warmup(store.path)
    views = [copies_of(store, int(r), limit=5) for r in most_copied(res.dynamics, n=2)["row_id"]]
    figs = [viz.copies_histogram(res.dynamics), viz.check_curves(res.per_check),
            viz.first_epoch_plot(res.dynamics)]
    return store, res, views, figs


def test_report_is_self_contained_html(run):
    _, _, views, figs = run
    doc = build_report({"run_id": "r1", "total_copies": 1234}, figs, results_frame(), {"epochs": 6}, leaks=views)
    assert doc.startswith("<!DOCTYPE html>") and doc.rstrip().endswith("</html>")
    p = parse(doc)
    assert not p.errors and not p.stack, p.errors or p.stack
    for tag, attrs in p.tags:
        for key in ("src", "href"):
            assert not str(attrs.get(key, "")).lower().startswith(("http", "//")), (tag, attrs)
    assert not [a for t, a in p.tags if t == "script" and "src" in a]
    assert not [t for t, _ in p.tags if t in ("link", "iframe", "img")]
    assert ("meta", {"charset": "utf-8"}) in p.tags
    assert doc.count(get_plotlyjs()[:300]) == 1  # plotly.js inline once, not per figure
    assert sum(t == "script" for t, _ in p.tags) == 1 + len(figs)
    for fig in figs:
        assert html.escape(viz.caption(fig)) in doc
    assert "Content-Security-Policy" in doc


def test_report_without_figures_or_results():
    doc = build_report({}, [], pd.DataFrame(), {})          # a comparison asked for that gave nothing
    assert get_plotlyjs()[:300] not in doc and "No comparison results" in doc
    assert "No comparison results" not in build_report({}, [], None, {})   # no comparison at all: no heading
    assert not parse(doc).errors
    with pytest.raises(MemvizError, match="results"):
        build_report({}, [], [1, 2], {})


def test_report_escapes_user_strings(run):
    store, res, _, _ = run
    results = results_frame().rename(columns={"trend": EVIL})
    results.loc[0, "method"] = EVIL
    rates = pd.DataFrame({"column": [EVIL, "age"], "memorized_rate": [1.0, 0.5], "non_memorized_rate": [0.2, 0.1]})
    figs = [viz.leak_heatmap(rates), viz.comparison_plot(results, EVIL)]
    doc = build_report({EVIL: EVIL, "nested": {EVIL: 1}}, figs, results, {EVIL: [EVIL]}, title=EVIL,
                       redacted=False)
    assert EVIL not in doc
    assert html.escape(EVIL) in doc
    assert "<script>alert" not in doc.lower()
    assert not parse(doc).errors


def _raw_training_values(views) -> list[str]:
    vals = []
    for v in views:
        row = v.source.iloc[0]
        vals += [str(row["c1"]), f"{row['a']:,.1f}", f"{row['a']:.1f}", str(row["a"])]
    return vals


def test_report_is_redacted_by_default(run):
    _, _, views, figs = run
    secret = _raw_training_values(views)
    doc = build_report({"run_id": "r1"}, figs, None, {}, leaks=views)
    assert "Redacted report" in doc
    for value in secret:
        assert value not in doc, value
    assert "SECRET-" not in doc
    assert "cat-" in doc and re.search(r"<td class='[^']*\bmatch\b", doc)  # structure and matches still shown
    raw = build_report({"run_id": "r1"}, figs, None, {}, redacted=False, leaks=views)
    assert "Not redacted" in raw
    assert all(str(v.source.iloc[0]["c1"]) in raw and str(v.source.iloc[0]['a']) in raw for v in views)


def test_results_are_formatted():
    res = results_frame(n_seeds=2)
    sub = res[(res["method"] == "dynamiccut") & (res["model"] == "ctgan")]["mem_ratio"]
    doc = build_report({}, [], res, {})
    shown = results_display(res)
    dc = shown[(shown["Method"] == "DynamicCut") & (shown["Generator"] == "CTGAN")].iloc[0]
    assert dc["Memorization ratio"] == f"{100 * sub.mean():.1f} % ± {100 * sub.std():.1f}" and dc["Memorization ratio"] in doc
    for raw_name in ("mem_ratio", "mle_real", "dcr_share", "relative_reduction"):  # names in words only
        assert f">{raw_name}<" not in doc


def test_redacted_report_has_no_class_value_and_no_link(run):
    """Plotly made <a href> in a class value a live link even in the redacted report, and raw class
    values appeared in it (issue 12 item 3)."""
    from memviz.auditing.report import report_figures
    from memviz.tables.data import Table

    store, res, views, _ = run
    train = store.train()
    evil = '<a href="https://evil.example">x</a>'
    t = train.data.assign(y=np.where(np.arange(len(train)) % 2, evil, "plain-class"))
    bad = Table(t, train.schema, "evil")
    figs = report_figures(res.dynamics, res.per_check, train=bad, removed=bad.data.index[:3], redact_salt="s1")
    doc = build_report({}, figs, None, {}, redacted=True)
    assert "evil.example" not in doc and "plain-class" not in doc
    raw = build_report({}, report_figures(train=bad, removed=bad.data.index[:3]), None, {}, redacted=False)
    body = raw[raw.index("<body>"):]                                  # (plotly.js itself, in the head, has links)
    assert "evil.example" in body and not re.findall(r"<a href=(?!'#g-)", body)   # only the glossary's own links
    assert "\\u003ca href" not in body                                # not even inside the figure's JSON


def test_report_tables_scroll_and_lead_with_the_verdict(run):
    from memviz.app.compare_card import compare_verdict

    _, _, _, figs = run
    res = results_frame(n_seeds=1)
    res["status"] = "ok"
    card = compare_verdict(res)
    doc = build_report([("Training rows", "3,000")], figs, res, {"check_every": 5}, verdict=card,
                       sentence="Real rows the model never saw are flagged at 25.0 %.")
    body = doc[doc.index("<body>"):]
    assert body.index("Real rows the model never saw") < body.index(card.title) < body.index("<h2>Results")
    assert body.index("<h2>Results") < body.index("<h2>Figures") < body.index("<h2>Settings")
    assert re.search(r"<div class='scroll'><table>.*?Memorization ratio", body)
    assert "check every" in body and "check_every" not in body


def test_sections_each_name_their_source_in_every_heading_and_escape_it():
    """build_report(sections=...): the one builder of the audit's and the dashboard's reports. Each
    section's heading (user text: escaped) heads its card, its figures and its settings; its opening
    joins "In short"; a line's unknown tone is drawn as neutral, never as a class of the caller's choosing."""
    from memviz.auditing.report import Section
    from memviz.viz.card import Card, Line

    fig = viz.frontier_plot(pd.DataFrame({"check": [0, 1], "epoch": [2, 4], "mem_ratio": [0.3, 0.35]}))
    a = Section(f"Run A {EVIL}", "Run A: fine.", Card("card A", (Line("Next step", "wait", f"bad' {EVIL}"),)),
                facts=[("Training rows", "300")], figures=[fig], settings={"p": 0.21}, settings_name="Run A")
    b = Section("Comparison C (ranked on run A, p=0.10)", "Comparison C: pruned.", note="ranked on another run",
                results=results_frame(), settings={"p": 0.10}, settings_name="Comparison C")
    doc = build_report(sections=[a, b], settings={"report": "redacted"})
    assert EVIL not in doc and html.escape(EVIL) in doc
    heads = [html.unescape(re.sub(r"<[^>]+>", "", h)) for h in re.findall(r"<h2>(.*?)</h2>", doc)]
    assert heads[0] == "In short" and "What the run shows" not in heads    # no empty block of its own
    assert f"Run A {EVIL}" in heads and f"Figures · Run A {EVIL}" in heads
    assert "Comparison C (ranked on run A, p=0.10)" in heads and "Settings" in heads
    short = doc[doc.index("In short"):doc.index("<h2>", doc.index("In short"))]
    assert "Run A: fine." in short and "Comparison C: pruned." in short and "ranked on another run" in short
    assert "class='tone-neutral'" in doc and "tone-bad'" not in doc
    settings = doc[doc.index("<h2>Settings</h2>"):]
    assert settings.index("Run A") < settings.index("Comparison C") < settings.index("This report")
    assert doc.count("memviz-fig-0") >= 1 and "Figure 1" in doc
