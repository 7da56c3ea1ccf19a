"""A self-contained HTML report of a memviz analysis (returned as a string; the caller saves it).

The page holds everything it needs: plotly.js inline once (not per figure), inline CSS,
no external URL, and a Content-Security-Policy that forbids loading anything from the
network. The page and its blocks are jinja2 templates (``memviz/templates``, drawn through
:mod:`memviz.auditing.templating`) with autoescape on: every user-provided string (titles, setting names
and values, column names, method names, table cells) is escaped; figure data is embedded by plotly
as JSON with ``<``, ``>`` and ``/`` escaped. This module prepares what the templates print (numbers
in words, a table's cells and classes); it writes no markup.

Order: the plain floor sentence and the verdict card first (what a reader needs), then the
run's facts in words, the results table (named columns, scrolls sideways), the figures, the
most-copied rows and a glossary. No internal key reaches the page.

Redaction (default): row-level content (the optional leak tables) is shown through
:func:`memviz.tables.redact.redact` with ranges from the whole training table and category hashes
keyed per column and per report; figures are aggregates (counts, shares, distances) and
name columns, methods and internal row ids only; class values in figures are hashed too.
User text inside figures is made inert with :func:`memviz.text.plain`.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from markupsafe import Markup

from memviz.auditing.templating import blocks, render
from memviz.errors import BadTable, MemvizError
from memviz.text import MISSING, cut, number, percent, seconds
from memviz.viz import glossary as words
from memviz.viz.card import Card
from memviz.viz.compare import THREE_WAY_NOTE, by_method, results_display, three_way_table
from memviz.viz.style import caption
from memviz.warmup.frontier import StopRule, recommend

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data: blob:; font-src data:")
#: identifiers printed without thousands separators
PLAIN_INT_COLUMNS = ("synthetic_id", "row_id", "check", "epoch", "seed")
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;margin:0 auto;max-width:1100px;
 padding:24px;color:#222;line-height:1.45}
h1{margin-bottom:4px} h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:36px}
.meta{color:#666;font-size:0.9em}
.banner{padding:10px 14px;border-radius:6px;margin:16px 0}
.redacted{background:#eef6ee;border:1px solid #9c9}
.raw{background:#fdecea;border:1px solid #e57373}
table{border-collapse:collapse;font-size:0.88em;margin:8px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:right;vertical-align:top}
th{background:#f4f4f4} td.text,th.text{text-align:left}
td.match{background:#ffcccb;font-weight:bold}
.scroll{overflow-x:auto;max-width:100%} .scroll td,.scroll th{white-space:nowrap}
.scroll tbody th,.scroll thead th:first-child{position:sticky;left:0;z-index:1} .scroll tbody th{background:#fff}
.wrap td,.wrap th{white-space:normal;overflow-wrap:anywhere}
figure{margin:24px 0} figcaption{color:#444;font-size:0.95em;margin-top:4px}
.plot{width:100%;height:480px}
.sentence{font-size:1.15em;margin:12px 0}
.verdict{border:1px solid #ccc;border-radius:8px;padding:8px 16px;margin:12px 0}
.verdict h3{margin:6px 0} .verdict p{margin:6px 0}
.tone-good{border-left:4px solid #2e7d32;padding-left:8px} .tone-bad{border-left:4px solid #c62828;padding-left:8px}
.tone-warn{border-left:4px solid #ef6c00;padding-left:8px} .tone-neutral{border-left:4px solid #9e9e9e;padding-left:8px}
.verdict.tone-good{border-left-width:8px;background:#edf7ee} .verdict.tone-bad{border-left-width:8px;background:#fdeceb}
.verdict.tone-warn{border-left-width:8px;background:#fff4e5} .verdict.tone-neutral{border-left-width:8px}
dl.glossary dt{font-weight:bold;margin-top:8px} dl.glossary dd{margin-left:16px}
"""

#: the run summary's keys (:meth:`memviz.dynamics.summaries.DynamicsSummary.to_dict`, flattened) in words;
#: keys not listed here are not shown (they are internal)
SUMMARY_WORDS = {
    "run": "Run", "run_id": "Run", "dataset": "Dataset",
    "n_rows": "Training rows", "n_checks": "Checks", "total_copies": "Copies over all checks",
    "top_frac": "Top group: share of training rows", "concentration.0.01": "Share of copies held by the top 1 % of rows",
    "concentration.0.1": "Share of copies held by the top 10 % of rows",
    "heavy_tail.zero_share": "Training rows never copied", "heavy_tail.max_count": "Most copies of one row",
    "heavy_tail.median_count": "Median copies per row",
}
SUMMARY_PERCENT = ("top_frac", "concentration.0.01", "concentration.0.1", "heavy_tail.zero_share")


def _fmt_value(v) -> str:
    if v is None or v is pd.NA:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    if isinstance(v, (float, np.floating)):
        if math.isnan(v):
            return "n/a"
        if float(v).is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if not 1e-3 <= abs(v) < 1e15:
            return f"{v:.4g}"
        decimals = max(0, 5 - int(math.floor(math.log10(abs(v)))))  # 6 significant digits, no exponent
        return f"{v:,.{decimals}f}".rstrip("0").rstrip(".")
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, default=str)
    return str(v)


def _flatten(d: Mapping, prefix: str = "") -> list[tuple[str, object]]:
    out = []
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping) and v:
            out.extend(_flatten(v, key + "."))
        else:
            out.append((key, v))
    return out


def _words(key: str) -> str:
    """A setting's key as words: ``check_every`` -> ``check every``."""
    return str(key).replace("_", " ").replace(".", " · ")


def kv_pairs(d: Mapping | Sequence) -> list[tuple[str, str]]:
    """(label, value) pairs as a report prints them: a mapping's flattened keys in words, values in words,
    durations ("36 s", "12 min 04 s") rather than "seconds 36.4743"."""
    pairs = list(d) if not isinstance(d, Mapping) else [(_words(k), v) for k, v in _flatten(d)]
    pairs = [(("time taken" if str(k).lower() in ("seconds", "total seconds") else k),
              (seconds(v) if str(k).lower() in ("seconds", "total seconds") and v is not None else v))
             for k, v in pairs]
    return [(k, _fmt_value(v)) for k, v in pairs]


def kv_table(d: Mapping | Sequence) -> str:
    """A two-column table of (label, value) pairs, or of a mapping's flattened keys in words (:func:`kv_pairs`)."""
    return blocks().kv_table(kv_pairs(d))


def summary_facts(summary: Mapping) -> list[tuple[str, str]]:
    """The run summary as (label in words, value) pairs: only the keys of :data:`SUMMARY_WORDS`,
    shares as percentages. Internal keys (statistics, p-values) are left out."""
    flat = dict(_flatten(summary or {}))
    out = []
    for key, label in SUMMARY_WORDS.items():
        if key in flat and flat[key] is not None:
            v = flat[key]
            text = percent(v) if key in SUMMARY_PERCENT and number(v) != MISSING else _fmt_value(v)
            out.append((label, text))
    return out


@dataclass(frozen=True)
class TableCells:
    """A table as the templates print it (``frame_table`` in ``blocks.html.j2``): the index's name, each
    column's (header, is text) and each row's (label, [(cell text, its classes)])."""

    index_name: str
    head: Sequence[tuple[str, bool]]
    rows: Sequence[tuple[str, Sequence[tuple[str, str]]]]


def table_cells(df: pd.DataFrame, text_cols=(), match: pd.DataFrame | None = None, na: str = "n/a") -> TableCells:
    """``df``'s cells in words (:class:`TableCells`): numbers formatted, identifiers without separators, a
    missing value as ``na``, a long cell or label cut with a mark; ``match`` marks cells."""
    head = [(c, c in text_cols) for c in df.columns]
    rows = []
    for r, (label, row) in enumerate(df.iterrows()):
        cells = []
        for j, c in enumerate(df.columns):
            cls = ["text"] if c in text_cols else []
            if match is not None and bool(match.iat[r, j]):
                cls.append("match")
            v = row[c]
            if c in PLAIN_INT_COLUMNS and isinstance(v, (int, np.integer)):
                text = str(int(v))
            elif v is pd.NA or v is None or (isinstance(v, float) and math.isnan(v)):
                text = na
            else:
                text = _fmt_value(v)
            cells.append((cut(text), " ".join(cls)))          # a long cell cut, with a mark
        rows.append((cut(label), cells))
    return TableCells(df.index.name or "", head, rows)


def frame_table(df: pd.DataFrame, text_cols=(), match: pd.DataFrame | None = None, na: str = "n/a") -> str:
    """An HTML table of ``df`` (index as row headers, :func:`table_cells`), every string escaped; ``match`` marks
    cells."""
    return blocks().frame_table(table_cells(df, text_cols, match, na))


@dataclass(frozen=True)
class FigureCells:
    """A figure as the templates print it: its number (from 1), plotly's ``<div>`` (Markup) and its caption."""

    number: int
    div: str
    caption: str


def figure_cells(fig, i: int) -> FigureCells:
    """Figure ``fig`` as the report's ``i``-th (from 0): plotly's ``<div>`` with id ``memviz-fig-i``, no script
    of its own (the page holds plotly.js once), its caption (:func:`memviz.viz.style.caption`)."""
    import plotly.io as pio  # lazy: plotly, an optional extra (memviz[plots]): a report without figures loads none

    div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"memviz-fig-{i}",
                      config={"displaylogo": False, "responsive": True}, default_height="480px")
    return FigureCells(i + 1, Markup(div), caption(fig))


@dataclass(frozen=True)
class LeakCells:
    """One training row beside its copies as the templates print it: the heading and the table."""

    head: str
    table: TableCells


def leak_cells(view, redacted: bool, salt: str | None = None) -> LeakCells:
    """A :class:`memviz.leaks.rows.LeakView` in words: redacted (ranges, keyed hashes) or raw numbers exactly as
    stored (shortest repr, no exponent); cells equal to the training row marked."""
    t = view.table(redacted, salt=salt).astype(object)
    t["ratio"] = [("" if pd.isna(r) else f"{r:.3f}") for r in t["ratio"]]
    if not redacted:  # raw numbers exactly as stored (shortest repr, no exponent)
        for c in view.schema.distance_numerical:
            t[c] = [np.format_float_positional(float(x), trim="-") if pd.notna(x) else "missing"
                    for x in pd.to_numeric(t[c], errors="coerce")]
    shown = len(view.copies)
    head = f"{cut(view.title(redacted, salt=salt))}: {view.n_copies:,} copies"
    if shown < view.n_copies:
        head += f" (closest {shown} shown)"
    text_cols = tuple(t.columns) if redacted else tuple(view.schema.distance_categorical)
    return LeakCells(head, table_cells(t, text_cols=text_cols, match=view.mask(), na=""))


def report_figures(dynamics=None, per_check: pd.DataFrame | None = None, *, early_curve: pd.DataFrame | None = None,
                   train=None, removed=None, results: pd.DataFrame | None = None,
                   column_shapes: pd.DataFrame | None = None, dcr: Mapping | None = None,
                   redact_salt: str | None = None) -> list:
    """The report's figures, in order (the one list the dashboard's report and the study share).

    A run (``dynamics`` and its ``per_check`` table): copies per row, concentration,
    per-check curves, first memorization, forgetting and Mem-AUC bands; with
    ``early_curve`` the early-identification curve; with ``train`` and ``removed`` the
    class balance of that pruning. A comparison (``results``, finished cells): memorization
    by method, privacy vs utility, transfer when DynamicCut or random pruning is there;
    ``column_shapes`` and ``dcr`` (one model's) add their breakdowns. ``redact_salt``: class
    values appear as keyed hashes (a redacted report), never as they are.
    """
    from memviz.viz import compare as fc  # lazy: plotly, an optional extra: a report without figures loads none
    from memviz.viz import dynamics as fd  # lazy: plotly, an optional extra: a report without figures loads none
    from memviz.viz import memorization as fm  # lazy: plotly, an optional extra: a report without figures loads none
    from memviz.viz import tune as ft  # lazy: plotly, an optional extra: a report without figures loads none

    figs = []
    if dynamics is not None:
        figs += [fm.copies_histogram(dynamics), fm.concentration_plot(dynamics), fm.check_curves(per_check),
                 fd.first_epoch_plot(dynamics), fd.forgetting_plot(dynamics), fd.group_band_plot(dynamics, "mem_auc")]
    if early_curve is not None:
        figs.append(ft.early_identification_plot(early_curve))
    if train is not None and removed is not None:
        figs.append(ft.class_balance_plot(train, removed, redact_salt=redact_salt))
    if results is not None and len(results):
        figs += [fc.comparison_plot(results, "mem_ratio"), fc.privacy_utility_plot(results, "mle")]
        if {"dynamiccut", "random"} & set(results["method"]):
            figs.append(fc.transferability_plot(results))
        if column_shapes is not None:
            figs.append(fc.shape_breakdown_plot(column_shapes))
        if dcr is not None:
            figs.append(fc.dcr_plot(dcr))
    return figs


def when_to_stop(per_check: pd.DataFrame, available=None, rule=None):
    """The when-to-stop part of a run's report (issue 23): the frontier figure (excess against quality
    over the checks, :func:`memviz.viz.frontier.frontier_plot`) with the recommended check ringed, and
    the recommendation's sentence (:func:`memviz.warmup.frontier.recommend`, default
    :class:`memviz.warmup.frontier.StopRule`, among the checks in ``available``: those with a kept
    checkpoint, None for all). Returns (figure, sentence); the sentence says why there is no
    recommendation when there is none."""
    from memviz.viz.frontier import frontier_plot  # lazy: plotly, an optional extra

    rule = rule or StopRule()
    try:
        rec = recommend(per_check, rule, available=available or None)
    except MemvizError as exc:
        return frontier_plot(per_check, None, rule.metric), f"No recommended check: {exc}."
    return frontier_plot(per_check, rec.check, rule.metric), rec.reason


REDACTED_NOTE = ("Redacted report: training and generated rows appear only in redacted form (numbers replaced by "
                 "ranges of round numbers that each hold at least 10 training rows, categories by hashes keyed for this "
                 "report and column; cells that equal the training row stay marked). Figures show aggregates "
                 "(counts, shares, distances), column names and internal row ids; class values are hashed.")
RAW_NOTE = ("Not redacted: this report contains raw values of training rows. Share it only with people allowed to "
            "see the training data.")


@dataclass(frozen=True)
class Part:
    """One titled block of a :class:`Section` (e.g. one test of the audit's "Other tests"): a
    heading (``<h3>``), a plain sentence, a note in small print and (label, value) facts."""

    heading: str
    sentence: str = ""
    note: str = ""
    facts: Sequence[tuple[str, str]] = ()


@dataclass(frozen=True, eq=False)
class Section:
    """One part of a report, under a heading that names what it draws on (a run and its check, a
    comparison and the run it was ranked on, with the DynamicCut p/k/T each used).

    heading : the section's heading; its figures and most-copied rows repeat it, so figures of two
        sources never share a heading.
    sentence : its opening sentence, printed under "In short" ("" for none).
    card : its verdict card (:class:`memviz.viz.card.Card`), printed first in the section.
    note : a warning printed under the heading (e.g. "ranked on another run").
    facts : (label, value) pairs in words. results : a comparison's results (shown in words by
        :func:`memviz.viz.compare.results_display`), with ``results_note`` above them.
    figures : plotly figures; leaks : :class:`memviz.leaks.rows.LeakView` of its most-copied rows.
    settings : the settings it used (shown under "Settings", headed by ``settings_name``).
    intro : a note in small print under the heading. parts : its :class:`Part` blocks, after its facts.
    """

    heading: str
    sentence: str = ""
    card: Card | None = None
    note: str = ""
    facts: Sequence[tuple[str, str]] = ()
    results: pd.DataFrame | None = None
    results_note: str = ""
    figures: Sequence = ()
    leaks: Sequence = ()
    settings: Mapping | None = None
    settings_name: str = ""
    intro: str = ""
    parts: Sequence[Part] = ()


RESULTS_NOTE = ("Mean ± standard deviation over seeds (with one seed, the floor and the excess show their 95 % "
                "interval); percentages of generated rows, excess in percentage points. The table scrolls sideways; "
                "each row's method and generator stay in view.")


@dataclass(frozen=True)
class ResultsCells:
    """A comparison's results as the templates print them: the note above, the table in words and, when the
    results have a baseline to pair with, privacy, quality and cost against it (``three``) under its note."""

    note: str
    table: TableCells
    three: TableCells | None
    three_note: str = THREE_WAY_NOTE


def results_cells(results: pd.DataFrame, note: str = "") -> ResultsCells:
    """A comparison's results in words (:func:`memviz.viz.compare.results_display`), each row's method and
    generator first (they stay in view while the rest scrolls), and the three-way table
    (:func:`memviz.viz.compare.three_way_table`)."""
    table = by_method(results_display(results))
    three = three_way_table(results)
    return ResultsCells(f"{note}. {RESULTS_NOTE}" if note else RESULTS_NOTE,
                        table_cells(table, text_cols=tuple(table.columns)),
                        None if three is None else table_cells(three, text_cols=tuple(three.columns)))


@dataclass(frozen=True)
class SectionCells:
    """A :class:`Section` as the templates print it: its texts, its facts, results, parts, figures and rows in
    words."""

    heading: str
    note: str
    intro: str
    card: Card | None
    facts: Sequence[tuple[str, str]]
    results: ResultsCells | None
    parts: Sequence[Part]
    figures: Sequence[FigureCells]
    leaks: Sequence[LeakCells]


def section_cells(sec: Section, first_figure: int, redacted: bool, salt: str | None) -> SectionCells:
    """Section ``sec`` in words; its figures numbered from ``first_figure`` (from 0)."""
    has_results = sec.results is not None and len(sec.results)
    parts = [dataclasses.replace(p, facts=kv_pairs(list(p.facts))) for p in sec.parts]
    return SectionCells(sec.heading, sec.note, sec.intro, sec.card, kv_pairs(list(sec.facts)),
                        results_cells(sec.results, sec.results_note) if has_results else None, parts,
                        [figure_cells(f, first_figure + i) for i, f in enumerate(sec.figures)],
                        [leak_cells(v, redacted, salt) for v in sec.leaks])


def build_report(run_summary: Mapping | Sequence | None = None, figures: Sequence = (),
                 results: pd.DataFrame | None = None, settings: Mapping | None = None, redacted: bool = True,
                 title: str = "memviz report", *, leaks: Sequence = (), created: str | None = None, verdict=None,
                 sentence: str = "", glossary: Sequence[tuple[str, str]] | None = None, salt: str | None = None,
                 sections: Sequence[Section] = (), settings_name: str = "This report", name: str = "") -> str:
    """Self-contained HTML report: the one builder of every memviz report (the audit's, the
    dashboard's, ``memviz report``'s).

    Parameters
    ----------
    run_summary : list of (label, value) pairs, or dict
        The report's own facts in words; a dict (``memviz.dynamics.summaries.summarize(dyn).to_dict()``)
        is shown through :func:`summary_facts` (known keys in words, internal ones left out).
    figures : list of plotly Figure
        Shown in order, each with its title and :func:`memviz.viz.caption`.
    results : DataFrame or None
        The comparison results (method, model, seed, metrics); shown in words by
        :func:`memviz.viz.compare.results_display`; an empty frame says "No comparison results",
        None leaves the heading out (a report with no comparison, e.g. an audit's).
    settings : dict
        The settings that produced the run and the results (keys shown as words).
    redacted : bool, default True
        Show row-level content (``leaks``) redacted; the report states which it is.
    title : str
    leaks : sequence of :class:`memviz.leaks.rows.LeakView`, optional
        Most-copied training rows beside their copies, matching cells marked.
    created : str, optional
        Timestamp printed in the header (default: now).
    verdict : :class:`memviz.viz.card.Card`, optional
        Printed first.
    sentence : str
        The plain floor sentence (:func:`memviz.verdict.words.excess_sentence`), printed first.
    glossary : (term, explanation) pairs, printed last, each linked where the report uses it (default: the one).
    salt : key of the category hashes of the redacted leak tables (one per report).
    sections : sequence of :class:`Section`
        Parts that each name their source, after the report's own facts, results, figures and rows:
        their opening sentences (and notes) join "In short", their settings join "Settings".
        With sections, an empty facts list or results table of the report's own is left out.
    settings_name : str
        With sections, the heading of the report's own ``settings`` beside theirs.
    name : str
        What the report's own facts, results, figures and rows draw on (e.g. "warm-up run X, check 3,
        DynamicCut p=0.21, k=3, T=default"); appended to their headings, so that beside sections
        about other sources every heading names its own.

    Returns
    -------
    str
        The HTML document (UTF-8 text).
    """
    if results is not None and not isinstance(results, pd.DataFrame):
        raise BadTable(f"results must be a pandas DataFrame or None, got {type(results).__name__}")
    figures = list(figures or [])
    sections = list(sections or [])
    created = created or time.strftime("%Y-%m-%d %H:%M:%S %Z")
    facts = summary_facts(run_summary) if isinstance(run_summary, Mapping) else list(run_summary or [])
    n_fig = len(figures)
    shown = []
    for sec in sections:
        shown.append(section_cells(sec, n_fig, redacted, salt))
        n_fig += len(sec.figures)
    named = [(s.settings_name or s.heading, s.settings) for s in sections if s.settings is not None]
    if named:  # the report's own settings first when they belong to a source of its own (``name``)
        if settings:
            named.insert(0 if name else len(named), (settings_name, settings))
        settings_shown = [(heading, kv_pairs(values)) for heading, values in named]
    else:
        settings_shown = [(None, kv_pairs(settings or {}))]
    openings = [s.sentence for s in sections if s.sentence]
    values = dict(
        title=title, created=created, redacted=redacted, banner=REDACTED_NOTE if redacted else RAW_NOTE,
        in_short=bool(sentence or verdict is not None or openings), verdict=verdict, sentence=sentence,
        openings=openings, notes=[s.note for s in sections if s.note], name=name,
        show_facts=bool(facts or not sections), facts=kv_pairs(facts),
        has_results=results is not None,
        results=results_cells(results) if results is not None and not results.empty else None,
        figures=[figure_cells(f, i) for i, f in enumerate(figures)],
        leaks=[leak_cells(v, redacted, salt) for v in leaks], sections=shown, settings=settings_shown)
    glossary = words.entries() if glossary is None else list(glossary)
    used = []
    if glossary:      # the words this report uses, each linked to its entry: one click away
        used = words.used_in(words.text_of(render("report_body.html.j2", **values, words=[], glossary=[])),
                             [t for t, _ in glossary])
    body = render("report_body.html.j2", **values, words=used, glossary=glossary)
    plotlyjs = ""
    if n_fig:
        from plotly.offline import get_plotlyjs  # lazy: plotly, an optional extra: a report without figures loads none

        plotlyjs = get_plotlyjs()

    return render("report.html.j2", csp=Markup(CSP), css=Markup(CSS), plotlyjs=Markup(plotlyjs), title=title,
                  body=Markup(body)) + "\n"
