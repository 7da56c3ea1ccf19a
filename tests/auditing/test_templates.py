"""The report's jinja2 templates: hostile user text in every slot stays text (escaped, no tag, no link, no
template expression evaluated), the CSP and the redaction kept, an undefined name refused, the templates
shipped as package data."""
from __future__ import annotations

import warnings
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path

import jinja2
import numpy as np
import pandas as pd
import pytest
import tomllib

from memviz.auditing.report import CSP, Part, Section, build_report
from memviz.auditing.templating import environment, render
from memviz.viz.card import Card, Line

ROOT = Path(__file__).resolve().parents[2]
#: what a user may type where memviz prints a name or a value
HOSTILE = ("<script>alert(1)</script>", "\"><img src=x onerror=alert(2)>", "' onmouseover='alert(3)",
           "javascript:alert(4)", "{{ 7*7 }}", "{% raw %}x", "[x](http://e.example)")


class Page(HTMLParser):
    """The tags, attributes and text a browser would read."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.code = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self.code = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self.code = None

    def handle_data(self, data):
        if self.code is None:                    # what a reader sees: not plotly's code, not the stylesheet
            self.text.append(data)


def read(doc: str) -> Page:
    p = Page()
    p.feed(doc)
    p.close()
    return p


def assert_inert(doc: str, shown=HOSTILE) -> Page:
    """No tag or attribute of the user's, every link an anchor of the glossary, the user's text read back as typed."""
    page = read(doc)
    assert not [t for t, _ in page.tags if t in ("img", "iframe", "object", "embed", "link", "base", "form")]
    assert not [(t, a) for t, attrs in page.tags for a in attrs if a.startswith("on")]
    assert all(attrs.get("href", "").startswith("#g-") for t, attrs in page.tags if t == "a")
    n_fig = sum(t == "figure" for t, _ in page.tags)       # plotly.js once, then one script per figure: no other
    assert sum(t == "script" for t, _ in page.tags) == (1 + n_fig if n_fig else 0)
    text = "".join(page.text)
    for h in shown:
        assert h in text, h            # read back as typed: escaped, not dropped, {{ 7*7 }} never evaluated
    return page


def test_hostile_text_in_every_slot_of_a_report_stays_text():
    h = " | ".join(HOSTILE)
    results = pd.DataFrame({"method": ["baseline", h], "model": ["tabddpm", h], "seed": [0, 0],
                            "mem_ratio": [0.3, 0.2], h: [1.0, 2.0]})
    card = Card(h, (Line(h, h, h), Line("Next step", h, "bad")), tone=h)
    sec = Section(h, h, card, note=h, facts=[(h, h)], results=results, results_note=h, settings={h: h},
                  settings_name=h, intro=h, parts=(Part(h, h, h, ((h, h),)),))
    for redacted in (True, False):
        doc = build_report({"run_id": h}, [], results, {h: [h], "nested": {h: h}}, redacted=redacted, title=h,
                           created=h, verdict=card, sentence=h, glossary=[(h, h), ("Floor", h)], name=h,
                           sections=[sec], settings_name=h)
        assert "<script>alert" not in doc and "<img" not in doc and "{{ 7*7 }}" in doc
        assert f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">" in doc     # the CSP as it was
        assert_inert(doc)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in doc and "&quot;&gt;&lt;img src=x" in doc


@pytest.fixture(scope="module")
def hostile_audit():
    """A keyed table whose column names, category values and keys are hostile, 12 of its rows copied 3 times."""
    from unseen_tables import credit_like

    import memviz
    from memviz.tables.data import table_from_frame
    from memviz.tables.infer import infer_schema

    df = credit_like(700, seed=5).rename(columns={"Job": HOSTILE[0], "Home": HOSTILE[1], "Records": HOSTILE[4]})
    df[HOSTILE[0]] = df[HOSTILE[0]].map({"fixed": HOSTILE[2], "partime": HOSTILE[3], "freelance": HOSTILE[5],
                                         "others": HOSTILE[6]})
    df["rownames"] = [f"{HOSTILE[1]} {i}" for i in range(len(df))]
    train_df, hold, fresh = df.iloc[:400], df.iloc[400:550], df.iloc[550:].reset_index(drop=True)
    syn = fresh.copy()
    syn.iloc[:36] = train_df.iloc[np.repeat(np.arange(12), 3)].to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                           # the inferred schema's notes
        schema = infer_schema(train_df)
    train = table_from_frame(train_df, schema, source="train", role="train")
    a = memviz.audit(train, syn, hold, quality=False, evidence=False)
    assert a.n_over_copied > 0
    return a, train, syn


def test_an_audit_of_a_hostile_table_reports_its_names_as_text_and_its_values_redacted(hostile_audit):
    from memviz.auditing.html import audit_html

    a, train, syn = hostile_audit
    raw = audit_html(a, redacted=False, train=train, synthetic=syn)
    text = "".join(assert_inert(raw, (HOSTILE[0], HOSTILE[1], HOSTILE[4], f"{HOSTILE[1]} 3")).text)
    assert sum(v in text for v in (HOSTILE[2], HOSTILE[3], HOSTILE[5], HOSTILE[6])) >= 2   # the raw cells, as typed
    red = audit_html(a, redacted=True, train=train, synthetic=syn)
    text = "".join(assert_inert(red, (HOSTILE[0], HOSTILE[1], HOSTILE[4])).text)   # the column names: shown
    for value in (HOSTILE[2], HOSTILE[3], HOSTILE[5], HOSTILE[6], f"{HOSTILE[1]} 3"):  # values and keys: hashed
        assert value not in text
    assert "cat-" in red and "key-" in red
    from memviz.auditing.notebook import audit_fragment

    fragment = audit_fragment(a, train=train, redacted=False)          # a notebook's view, the keys as typed
    assert not [t for t, _ in read(fragment).tags if t in ("script", "img")]
    assert f"{HOSTILE[1]} 3" in "".join(read(fragment).text)


def test_a_template_refuses_an_undefined_name():
    with pytest.raises(jinja2.UndefinedError):
        render("report.html.j2", title="t")                       # no body, no csp: an error, not an empty page
    assert environment().autoescape("report.html.j2") and environment().autoescape("any.html")


def test_every_template_ships_as_package_data():
    """A non-editable install reads the templates from the package: pyproject's package data covers each."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["memviz"]
    names = sorted(p.relative_to(ROOT / "memviz").as_posix() for p in (ROOT / "memviz/templates").iterdir())
    assert names and all(any(fnmatch(n, pat) for pat in patterns) for n in names), names
    assert set(environment().list_templates()) >= {n.removeprefix("templates/") for n in names}
