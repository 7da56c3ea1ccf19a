"""A self-contained HTML report of a memviz analysis (returned as a string; the caller saves it).

The page holds everything it needs: plotly.js inline once (not per figure), inline CSS,
no external URL, and a Content-Security-Policy that forbids loading anything from the
network. Every user-provided string (titles, setting names and values, column names,
method names, table cells) is escaped with :func:`html.escape`; figure data is embedded
by plotly as JSON with ``<``, ``>`` and ``/`` escaped.

Order: the plain floor sentence and the verdict card first (what a reader needs), then the
run's facts in words, the results table (named columns, scrolls sideways), the figures, the
most-copied rows and a glossary. No internal key reaches the page.

Redaction (default): row-level content (the optional leak tables) is shown through
:func:`memviz.tables.redact.redact` with ranges from the whole training table and category hashes
keyed per column and per report; figures are aggregates (counts, shares, distances) and
name columns, methods and internal row ids only; class values in figures are hashed too.
User text inside figures is made inert with :func:`memviz.viz.text.plain`.
"""
from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.errors import MemvizError
from memviz.metrics import MISSING, number
from memviz.viz import glossary as words
from memviz.viz.card import Card, tone
from memviz.viz.compare import by_method, results_display, three_way_html
from memviz.viz.style import caption
from memviz.viz.text import cut, isolate, seconds

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


def _e(x) -> str:
    """``x`` escaped for HTML, its bidirectional controls isolated (:func:`memviz.viz.text.isolate`)."""
    return html.escape(isolate(str(x)), quote=True)


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


def kv_table(d: Mapping | Sequence) -> str:
    """A two-column table of (label, value) pairs, or of a mapping's flattened keys in words."""
    pairs = list(d) if not isinstance(d, Mapping) else [(_words(k), v) for k, v in _flatten(d)]
    # durations in words ("36 s", "12 min 04 s"), not "seconds 36.4743"
    pairs = [(("time taken" if str(k).lower() in ("seconds", "total seconds") else k),
              (seconds(v) if str(k).lower() in ("seconds", "total seconds") and v is not None else v))
             for k, v in pairs]
    if not pairs:
        return "<p class='meta'>none</p>"
    rows = "".join(f"<tr><th class='text'>{_e(k)}</th><td class='text'>{_e(_fmt_value(v))}</td></tr>"
                   for k, v in pairs)
    return f"<div class='scroll wrap'><table>{rows}</table></div>"


def summary_facts(summary: Mapping) -> list[tuple[str, str]]:
    """The run summary as (label in words, value) pairs: only the keys of :data:`SUMMARY_WORDS`,
    shares as percentages. Internal keys (statistics, p-values) are left out."""
    flat = dict(_flatten(summary or {}))
    out = []
    for key, label in SUMMARY_WORDS.items():
        if key in flat and flat[key] is not None:
            v = flat[key]
            text = f"{100 * float(v):.1f} %" if key in SUMMARY_PERCENT and number(v) != MISSING else _fmt_value(v)
            out.append((label, text))
    return out


def frame_table(df: pd.DataFrame, text_cols=(), match: pd.DataFrame | None = None, na: str = "n/a") -> str:
    """An HTML table of ``df`` (index as row headers), every string escaped; ``match`` marks cells."""
    head = f"<th class='text'>{_e(df.index.name or '')}</th>" + \
        "".join(f"<th{' class=text' if c in text_cols else ''}>{_e(c)}</th>" for c in df.columns)
    body = []
    for r, (label, row) in enumerate(df.iterrows()):
        cells = []
        for j, c in enumerate(df.columns):
            cls = ["text"] if c in text_cols else []
            if match is not None and bool(match.iat[r, j]):
                cls.append("match")
            attr = f" class='{' '.join(cls)}'" if cls else ""
            v = row[c]
            if c in PLAIN_INT_COLUMNS and isinstance(v, (int, np.integer)):
                text = str(int(v))
            elif v is pd.NA or v is None or (isinstance(v, float) and math.isnan(v)):
                text = na
            else:
                text = _fmt_value(v)
            cells.append(f"<td{attr}>{_e(cut(text))}</td>")          # a long cell cut, with a mark
        body.append(f"<tr><th class='text'>{_e(cut(label))}</th>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def figure_block(fig, i: int) -> str:
    import plotly.io as pio

    div = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"memviz-fig-{i}",
                      config={"displaylogo": False, "responsive": True}, default_height="480px")
    return (f"<figure id='figure-{i + 1}'><h3>Figure {i + 1}</h3>{div}"
            f"<figcaption>{_e(caption(fig))}</figcaption></figure>")


def leak_block(view, redacted: bool, salt: str | None = None) -> str:
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
    return f"<h3>{_e(head)}</h3><div class='scroll'>" + frame_table(t, text_cols=text_cols, match=view.mask(),
                                                                     na="") + "</div>"


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
    from memviz.viz import compare as fc
    from memviz.viz import dynamics as fd
    from memviz.viz import memorization as fm
    from memviz.viz import tune as ft

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
    from memviz.viz.frontier import frontier_plot
    from memviz.warmup.frontier import StopRule, recommend

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


def card_block(verdict: Card | None, sentence: str = "") -> str:
    """The plain sentence and the verdict card (:class:`memviz.viz.card.Card`), each escaped; a line's
    tone outside :data:`memviz.viz.card.TONES` is drawn as neutral."""
    parts = []
    if sentence:
        parts.append(f"<p class='sentence'>{_e(sentence)}</p>")
    if verdict is not None:
        lines = "".join(f"<p class='tone-{tone(ln.tone)}'><b>{_e(ln.topic)}:</b> {_e(ln.text)}</p>"
                        for ln in verdict.lines)
        parts.append(f"<div class='verdict'><h3>{_e(verdict.title)}</h3>{lines}</div>")
    return "".join(parts)


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


def results_block(results: pd.DataFrame, note: str = "") -> str:
    """A comparison's results in words (:func:`memviz.viz.compare.results_display`), scrolling sideways with
    each row's method and generator in view."""
    table = by_method(results_display(results))
    head = f"{note}. {RESULTS_NOTE}" if note else RESULTS_NOTE
    return (f"<p class='meta'>{_e(head)}</p><div class='scroll'>" + frame_table(table, text_cols=tuple(table.columns))
            + "</div>" + three_way_html(results, frame_table))     # and privacy, quality and cost per method


def _section_parts(sec: Section, first_figure: int, redacted: bool, salt: str | None) -> list[str]:
    parts = [f"<h2>{_e(sec.heading)}</h2>"]
    if sec.note:
        parts.append(f"<p class='tone-warn'>{_e(sec.note)}</p>")
    if sec.intro:
        parts.append(f"<p class='meta'>{_e(sec.intro)}</p>")
    if sec.card is not None:
        parts.append(card_block(sec.card))
    if sec.facts:
        parts += ["<h3>Facts</h3>", kv_table(list(sec.facts))]
    if sec.results is not None and len(sec.results):
        parts += ["<h3>Results</h3>", results_block(sec.results, sec.results_note)]
    for part in sec.parts:
        parts.append(f"<h3>{_e(part.heading)}</h3>" + (f"<p>{_e(part.sentence)}</p>" if part.sentence else "")
                     + (f"<p class='meta'>{_e(part.note)}</p>" if part.note else ""))
        if part.facts:
            parts.append(kv_table(list(part.facts)))
    if sec.figures:
        parts.append(f"<h2>Figures · {_e(sec.heading)}</h2>")
        parts += [figure_block(f, first_figure + i) for i, f in enumerate(sec.figures)]
    if sec.leaks:
        parts.append(f"<h2>Most-copied training rows · {_e(sec.heading)}</h2>")
        parts += [leak_block(v, redacted, salt) for v in sec.leaks]
    return parts


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
        The plain floor sentence (:meth:`memviz.measure.floor.Excess.sentence`), printed first.
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
        raise MemvizError(f"results must be a pandas DataFrame or None, got {type(results).__name__}")
    figures = list(figures or [])
    sections = list(sections or [])
    created = created or time.strftime("%Y-%m-%d %H:%M:%S %Z")
    facts = summary_facts(run_summary) if isinstance(run_summary, Mapping) else list(run_summary or [])
    parts = [f"<h1>{_e(title)}</h1><p class='meta'>created {_e(created)} by memviz</p>",
             f"<div class='banner {'redacted' if redacted else 'raw'}'>"
             f"{_e(REDACTED_NOTE if redacted else RAW_NOTE)}</div>"]
    openings = [s.sentence for s in sections if s.sentence]
    if sentence or verdict is not None or openings:
        parts += ["<h2>In short</h2>", card_block(verdict, sentence)]
        parts += [f"<p class='sentence'>{_e(t)}</p>" for t in openings]
        parts += [f"<p class='meta'>{_e(s.note)}</p>" for s in sections if s.note]
    words_at = len(parts)                # the glossary's words this report uses, linked (below)
    own = f" · {_e(name)}" if name else ""
    if facts or not sections:
        parts += [f"<h2>What the run shows{own}</h2>", kv_table(facts)]
    if results is not None and not results.empty:
        parts += [f"<h2>Results{own}</h2>", results_block(results)]
    elif results is not None:                    # a comparison was asked for and gave nothing
        parts += [f"<h2>Results{own}</h2>", "<p class='meta'>No comparison results.</p>"]
    if figures:
        parts.append(f"<h2>Figures{own}</h2>")
        parts.extend(figure_block(f, i) for i, f in enumerate(figures))
    if leaks:
        parts.append(f"<h2>Most-copied training rows{own}</h2>")
        parts.extend(leak_block(v, redacted, salt) for v in leaks)
    n_fig = len(figures)
    for sec in sections:
        parts += _section_parts(sec, n_fig, redacted, salt)
        n_fig += len(sec.figures)
    parts.append("<h2>Settings</h2>")
    named = [(s.settings_name or s.heading, s.settings) for s in sections if s.settings is not None]
    if named:  # the report's own settings first when they belong to a source of its own (``name``)
        if settings:
            named.insert(0 if name else len(named), (settings_name, settings))
        for heading, values in named:
            parts += [f"<h3>{_e(heading)}</h3>", kv_table(values)]
    else:
        parts.append(kv_table(settings or {}))
    glossary = words.entries() if glossary is None else glossary
    if glossary:      # the words this report uses, each linked to its entry: one click away
        parts.insert(words_at, words.words_line(parts, glossary, _e))
        parts += ["<h2>What the words mean</h2>", words.glossary_list(glossary, _e)]
    head = (f"<meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{_e(title)}</title>"
            f"<style>{CSS}</style>")
    if n_fig:
        from plotly.offline import get_plotlyjs

        head += f"<script type='text/javascript'>{get_plotlyjs()}</script>"
    return f"<!DOCTYPE html><html lang='en'><head>{head}</head><body>{''.join(parts)}</body></html>\n"
