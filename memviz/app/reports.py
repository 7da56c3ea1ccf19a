"""The Report page's library side: the report's sections, each naming what it draws on, and the HTML document.

A report covers a warm-up run, a comparison, or both. Each gets its own section
(:class:`Section`), headed by its :class:`memviz.app.audits.Source`: the run with the check and
the DynamicCut p/k/T tuned on it, the comparison with the run its ranking came from and the
p/k/T it was started with. A verdict is never printed beside settings it did not use: the
comparison's card sits under the comparison's heading, with the floor of the run it was ranked on.
"""
from __future__ import annotations

import html
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memviz.app import audits, glossary
from memviz.app.comparisons import CompareView, run_floor
from memviz.app.runs import RunView, load_run
from memviz.app.verdict import Verdict, compare_verdict, pick_model
from memviz.dynamics.summaries import concentration, heavy_tail
from memviz.errors import MemvizError
from memviz.io import csv_bytes
from memviz.leaks.rows import copies_of, most_copied
from memviz.mitigate.dynamiccut import (
    DEFAULT_K,
    DEFAULT_P,
    dynamiccut_selection,
    early_identification_curve,
)
from memviz.tables.data import read_frame
from memviz.viz import report as vr
from memviz.viz.compare import results_display
from memviz.viz.text import pct


def _e(x) -> str:
    return html.escape(str(x), quote=True)


# ------------------------------------------------------------------ sections
@dataclass(frozen=True, eq=False)
class Section:
    """One part of the report: what it draws on (``source``), its heading, its opening sentence
    (for "In short"), its verdict card, and (for a comparison on another run) a note saying so."""

    source: audits.Source
    heading: str
    sentence: str
    card: Verdict | None
    note: str = ""


def run_section(view: RunView, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None) -> Section:
    """The run's section: its last check's audit, headed by the run, its check and the p/k/T tuned on it."""
    src = audits.run_source(view, p, k, T)
    card = audits.run_card(view)
    return Section(src, f"{src.label()} · DynamicCut {src.settings}", f"{src.label()}: {card.sentence}", card)


def ranked_run(compare: CompareView, source: audits.Source | None = None) -> RunView | None:
    """The warm-up run a comparison was ranked on, opened (None when it is not there any more)."""
    source = source or audits.compare_source(compare)
    if not source.run_dir or not Path(source.run_dir).is_dir():
        return None
    try:
        return load_run(source.run_dir)
    except MemvizError:
        return None


def compare_section(compare: CompareView, view: RunView | None = None) -> Section:
    """The comparison's section: its card with the floor of the run it was ranked on, headed by that
    run and the p/k/T it was started with; a note when that is not the report's run ``view``."""
    src = audits.compare_source(compare)
    ranked = view if view is not None and src.run_dir and Path(src.run_dir).resolve() == Path(view.path).resolve() \
        else ranked_run(compare, src)
    floor = run_floor(compare, ranked) if ranked is not None else None
    model = pick_model(compare.ok)
    audit = audits.compare_audit(compare, model) if model is not None else None
    card = compare_verdict(compare.ok, model, floor=floor, audit=audit) if len(compare.ok) else None
    note = ""
    if view is not None and src.run_id != view.run_id:
        note = (f"This comparison was ranked on warm-up run {src.run_id}, not on {view.run_id}: its pruning figures "
                f"come from {src.run_id}'s ranking." if src.run_id else
                f"This comparison ranked its rows with its own warm-up, not on {view.run_id}." if src.ranked else "")
    opening = ""
    if card is not None:
        lines = {ln.topic: ln.text for ln in card.lines}
        opening = " ".join(t for t in (card.sentence or lines.get("Flagged output", ""), lines.get("Next step", ""))
                           if t)
    return Section(src, src.label(), f"{src.label()}: {opening}" if opening else "", card, note)


def sections(view: RunView | None, compare: CompareView | None = None, p: float = DEFAULT_P,
             k: int = DEFAULT_K, T=None) -> list[Section]:
    """The report's sections, in order: the run's, then the comparison's (when it has finished cells)."""
    out = []
    if view is not None:
        out.append(run_section(view, p, k, T))
    if compare is not None and len(compare.ok):
        out.append(compare_section(compare, view))
    return out


# ------------------------------------------------------------------ the run's facts
def run_facts(view: RunView, p: float = DEFAULT_P, k: int = DEFAULT_K, T=None) -> list[tuple[str, str]]:
    """What the run shows, as (label in words, value) pairs: no internal key, no p-value."""
    dyn, pc = view.dynamics, view.per_check
    last = pc.iloc[-1]
    ht = heavy_tail(dyn)
    settings = view.settings()
    floor = view.result.floor
    src = audits.run_source(view, p, k, T)
    sel = dynamiccut_selection(dyn, p=p, k=k, T=T)
    facts = [("Run", view.run_id), ("Dataset", str(settings.get("dataset") or "–")),
             ("Status", src.label().removeprefix(f"Warm-up run {view.run_id}").strip(" ()") or view.status),
             ("Training rows", f"{dyn.n_rows:,}"),
             ("Checks", f"{dyn.n_checks} (epochs {int(dyn.epochs[0])} to {int(dyn.epochs[-1])})"),
             ("Generated rows flagged as memorized at the last check", pct(last["mem_ratio"])),
             ("Floor: real rows the model never saw, flagged by the same test",
              f"{pct(floor.floor)} (95 % interval {pct(floor.low)} to {pct(floor.high)}, "
              f"{floor.n_holdout:,} hold-out rows)" if floor is not None else
              "not measured: the run was started without a test split or hold-out"),
             ("Mem-AUC at the last check (0 = nothing close, 1 = every row on a training row)",
              f"{float(last['mem_auc']):.3f}"),
             ("Training rows never copied", pct(ht.zero_share)),
             ("Share of all copies held by the 1 % most-copied rows", pct(concentration(dyn, 0.01))),
             ("Most copies of one training row", f"{ht.max_count:,}"),
             ("Top group", f"the {dyn.top_frac:.0%} most-copied rows ({int(dyn.top.sum()):,} rows)"),
             (f"DynamicCut at {src.settings} (tuned on Tune & prune)",
              f"{int(sel.n_remove):,} of {dyn.n_rows:,} training rows would go")]
    return facts


def _run_figures(view: RunView, p, k, T, salt) -> list:
    dyn = view.dynamics
    return vr.report_figures(dyn, view.per_check, early_curve=early_identification_curve(dyn, p=p, k=k),
                             train=view.train, removed=dynamiccut_selection(dyn, p=p, k=k, T=T).removed,
                             redact_salt=salt)


def _compare_figures(compare: CompareView, salt) -> list:
    model = compare.models[0] if compare.models else None
    return vr.report_figures(
        results=compare.ok, redact_salt=salt,
        column_shapes=compare.shapes_for(model) if compare.column_shapes is not None and model else None,
        dcr=compare.dcr_for(model) if compare.dcr is not None and model else None)


def figures(view: RunView | None, compare: CompareView | None = None, p: float = DEFAULT_P, k: int = DEFAULT_K,
            T: int | None = None, *, redact_salt: str | None = None) -> list:
    """The figures of a run's and a comparison's report (:func:`memviz.viz.report.report_figures`);
    ``redact_salt``: class values hashed (a redacted report)."""
    out = _run_figures(view, p, k, T, redact_salt) if view is not None else []
    if compare is not None and len(compare.ok):
        out += _compare_figures(compare, redact_salt)
    return out


# ------------------------------------------------------------------ the page's side
def verdict(view: RunView | None, compare: CompareView | None = None) -> Verdict | None:
    """The first section's card (the run's when there is a run, else the comparison's)."""
    secs = sections(view, compare)
    return secs[0].card if secs else None


def sentence(view: RunView | None, compare: CompareView | None = None) -> str:
    """The first section's opening sentence, naming its source ("" when there is none)."""
    secs = sections(view, compare)
    return secs[0].sentence if secs else ""


def report_name(view: RunView | None, compare: CompareView | None, redacted: bool) -> str:
    """The download's file name: distinct for redacted and raw reports."""
    base = view.run_id if view is not None else (compare.path.name if compare is not None else "memviz")
    return f"memviz_report_{base}_{'redacted' if redacted else 'RAW_VALUES'}.html"


# ------------------------------------------------------------------ the document
def _card(card: Verdict | None) -> str:
    return vr._verdict_block(card, "") if card is not None else ""


def report_html(view: RunView | None, compare: CompareView | None = None, *, p: float = DEFAULT_P,
                k: int = DEFAULT_K, T: int | None = None, redacted: bool = True, n_leaks: int = 3) -> str:
    """The self-contained HTML report of a run and a comparison (the style and the safeguards of
    :func:`memviz.viz.report.build_report`: inline plotly, a CSP forbidding the network, every string
    escaped).

    "In short" comes first, one sentence per section naming its source; then each section under
    headings naming its run (check, status) or comparison (the run it was ranked on) and the p/k/T it
    used (its card and facts or results, then its figures and most-copied rows); then the settings of
    each and the glossary. A redacted report draws its own key for the
    category hashes, so two reports' hashes cannot be matched.
    """
    if view is None and compare is None:
        raise MemvizError("nothing to report: open a warm-up run or a comparison first")
    salt = secrets.token_hex(16)
    fig_salt = salt if redacted else None
    secs = sections(view, compare, p, k, T)
    title = f"memviz report · {view.run_id}" if view is not None else f"memviz report · {compare.path.name}"
    parts = [f"<h1>{_e(title)}</h1><p class='meta'>created {_e(time.strftime('%Y-%m-%d %H:%M:%S %Z'))} by memviz"
             "</p>", f"<div class='banner {'redacted' if redacted else 'raw'}'>"
             f"{_e(vr.REDACTED_NOTE if redacted else vr.RAW_NOTE)}</div>"]
    if secs:
        parts.append("<h2>In short</h2>")
        parts += [f"<p class='sentence'>{_e(s.sentence)}</p>" for s in secs if s.sentence]
        parts += [f"<p class='meta'>{_e(s.note)}</p>" for s in secs if s.note]
    n_fig = 0
    settings: dict = {}
    for sec in secs:
        parts.append(f"<h2>{_e(sec.heading)}</h2>")
        if sec.note:
            parts.append(f"<p class='tone-warn'>{_e(sec.note)}</p>")
        parts.append(_card(sec.card))
        if sec.source.kind == "run":
            parts += ["<h3>Facts</h3>", vr._kv_table(run_facts(view, p, k, T))]
            figs = _run_figures(view, p, k, T, fig_salt)
            leaks = []
            if view.path is not None and n_leaks:
                for rid in most_copied(view.dynamics, n=n_leaks)["row_id"]:
                    try:
                        leaks.append(copies_of(view.result, int(rid), limit=5, checks=view.result.checks,
                                               train=view.train))
                    except MemvizError:
                        break
            s = dict(view.settings())
            s.update({"DynamicCut p (share of rows removed)": p, "DynamicCut k (largest checks averaged)": k,
                      "DynamicCut T (last epoch scored)": T if T is not None else "default (half the checks)"})
            settings[f"Warm-up run {view.run_id}"] = s
        else:
            leaks = []
            table = results_display(compare.ok)
            table.index = pd.RangeIndex(1, len(table) + 1, name="#")
            parts += ["<h3>Results</h3>",
                      f"<p class='meta'>{_e(sec.source.label())}. Mean ± standard deviation over seeds (with one "
                      "seed, the floor and the excess show their 95 % interval); percentages of generated rows, "
                      "excess in percentage points. The table scrolls sideways.</p>",
                      "<div class='scroll'>" + vr._frame_table(table, text_cols=tuple(table.columns)) + "</div>"]
            figs = _compare_figures(compare, fig_salt)
            settings[f"Comparison {compare.path.name}"] = {
                "ranked on warm-up run": sec.source.run_id or ("its own warm-up" if sec.source.ranked else "none"),
                "DynamicCut p": sec.source.p, "DynamicCut k": sec.source.k,
                "DynamicCut T": sec.source.T if sec.source.T is not None else "default (half the checks)"}
        if figs:  # every heading names its source: figures of two sources never share one
            parts.append(f"<h2>Figures · {_e(sec.heading)}</h2>")
            parts += [vr._figure_block(f, n_fig + i) for i, f in enumerate(figs)]
            n_fig += len(figs)
        if leaks:
            parts.append(f"<h2>Most-copied training rows · {_e(sec.heading)}</h2>")
            parts += [vr._leak_block(v, redacted, salt) for v in leaks]
    parts.append("<h2>Settings</h2>")
    for name, values in settings.items():
        parts += [f"<h3>{_e(name)}</h3>", vr._kv_table(values)]
    parts += ["<h3>This report</h3>", vr._kv_table({"report": "redacted" if redacted else "raw values included"})]
    items = "".join(f"<dt>{_e(t)}</dt><dd>{_e(x)}</dd>" for t, x in glossary.entries())
    parts += ["<h2>What the words mean</h2>", f"<dl class='glossary'>{items}</dl>"]
    head = (f"<meta charset='utf-8'><meta http-equiv='Content-Security-Policy' content=\"{vr.CSP}\">"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'><title>{_e(title)}</title>"
            f"<style>{vr.CSS}</style>")
    if n_fig:
        from plotly.offline import get_plotlyjs

        head += f"<script type='text/javascript'>{get_plotlyjs()}</script>"
    return f"<!DOCTYPE html><html lang='en'><head>{head}</head><body>{''.join(parts)}</body></html>\n"


def table_csv(path: str | Path, raw: bool = False) -> bytes:
    """An output table (CSV or Parquet) as CSV bytes, spreadsheet formulas neutralised unless
    ``raw`` (:func:`memviz.io.csv_bytes`)."""
    return csv_bytes(read_frame(path), raw=raw)


__all__ = ["Section", "sections", "run_section", "compare_section", "figures", "run_facts", "verdict",
           "sentence", "report_name", "report_html", "table_csv"]
