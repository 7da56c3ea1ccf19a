"""The Report page's library side: the report's sections, each naming what it draws on, and the HTML document.

A report covers a warm-up run, a comparison, or both. Each gets its own section
(:class:`SectionHead`), headed by its :class:`memviz.app.audits.Source`: the run with the check and
the DynamicCut p/k/T tuned on it, the comparison with the run its ranking came from and the
p/k/T it was started with. A verdict is never printed beside settings it did not use: the
comparison's card sits under the comparison's heading, with the floor of the run it was ranked on.
"""
from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from memviz.app import audits, glossary, why
from memviz.app.compare_card import compare_verdict, pick_model
from memviz.app.comparisons import (
    CompareView,
    data_dictionary,
    readable_results,
    run_floor,
    synthetic_files,
    verdicts_differ,
)
from memviz.app.runs import RunView, load_run, rankings
from memviz.compare.grid import grid_progress
from memviz.compare.methods import method_label
from memviz.dynamics.dynamiccut import (
    DEFAULTS,
    DynamicCutParams,
    Selection,
    dynamiccut_selection,
    early_identification_curve,
    params_of,
)
from memviz.dynamics.summaries import concentration, heavy_tail
from memviz.errors import BadRunFolder, MemvizError
from memviz.io import csv_bytes
from memviz.leaks.rows import copies_of, most_copied
from memviz.tables.data import read_frame
from memviz.auditing import report as vr
from memviz.viz import why as viz_why
from memviz.viz.card import Card, Line
from memviz.viz.style import model_label
from memviz.text import pct
from memviz.verdict.words import progress_sentence
from memviz.warmup import checkpoints


def _tuning(params: DynamicCutParams | None, p=None, k=None, T=None) -> DynamicCutParams:
    """``params`` when given (checked when made), else (p, k, T) checked now, None for p or k meaning
    DynamicCut's default (:data:`memviz.dynamics.dynamiccut.DEFAULTS`): the report's functions take
    either, and read the defaults here only."""
    if params is not None:
        return params
    return params_of(None, DEFAULTS.p if p is None else p, DEFAULTS.k if k is None else k, T)


# ------------------------------------------------------------------ sections
@dataclass(frozen=True, eq=False)
class SectionHead:
    """One part of the report: what it draws on (``source``), its heading, its opening sentence
    (for "In short"), its verdict card, and (for a comparison on another run) a note saying so."""

    source: audits.Source
    heading: str
    sentence: str
    card: Card | None
    note: str = ""


def _when_to_stop(view: RunView):
    """(frontier figure, recommendation sentence) of a run (:func:`memviz.auditing.report.when_to_stop`, among
    the checks with a kept checkpoint)."""
    return vr.when_to_stop(view.per_check, checkpoints.kept(view.path) if view.path is not None else None)


def run_section(view: RunView, p: float | None = None, k: int | None = None, T=None, *,
                params: DynamicCutParams | None = None) -> SectionHead:
    """The run's section: its last check's audit, headed by the run, its check and the p/k/T tuned on it
    (``params``: checked when made; given, ``p``, ``k`` and ``T`` are not read); its card ends with the
    recommended check and why (issue 23: when to stop)."""
    params = _tuning(params, p, k, T)
    src = audits.run_source(view, params=params)
    card = audits.run_card(view)
    card = replace(card, lines=(*card.lines, Line("When to stop", _when_to_stop(view)[1])))
    return SectionHead(src, f"{src.label()} · DynamicCut {src.settings}", f"{src.label()}: {card.sentence}", card)


def ranked_run(compare: CompareView, source: audits.Source | None = None) -> RunView | None:
    """The warm-up run a comparison was ranked on, opened (None when it is not there any more)."""
    source = source or audits.compare_source(compare)
    if not source.run_dir or not Path(source.run_dir).is_dir():
        return None
    try:
        return load_run(source.run_dir)
    except MemvizError:
        return None


def compare_progress(compare: CompareView):
    """The comparison's :class:`memviz.compare.grid.GridProgress` (its cells done of its grid's)."""
    return grid_progress(compare.path, len(compare.results))


def compare_section(compare: CompareView, view: RunView | None = None) -> SectionHead:
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
    if view is not None and audit is not None:   # the run's and the comparison's verdicts differ: say why, once
        try:
            run_audit = audits.run_audit(view)
        except MemvizError:
            run_audit = None
        why = verdicts_differ(run_audit, audits.run_source(view), audit, model, compare)
        note = " ".join(t for t in (note, why) if t)
    note = " ".join(t for t in (progress_sentence(compare_progress(compare)), note) if t)    # unfinished: said first
    opening = ""
    if card is not None:
        lines = {ln.topic: ln.text for ln in card.lines}
        opening = " ".join(t for t in (card.sentence or lines.get("Flagged output", ""), lines.get("Next step", ""))
                           if t)
    return SectionHead(src, src.label(), f"{src.label()}: {opening}" if opening else "", card, note)


def sections(view: RunView | None, compare: CompareView | None = None, p: float | None = None,
             k: int | None = None, T=None, *, params: DynamicCutParams | None = None) -> list[SectionHead]:
    """The report's sections, in order: the run's, then the comparison's (when it has finished cells).
    ``params``: as :func:`run_section`."""
    out = []
    if view is not None:
        out.append(run_section(view, params=_tuning(params, p, k, T)))
    if compare is not None and len(compare.ok):
        out.append(compare_section(compare, view))
    return out


# ------------------------------------------------------------------ DynamicCut on the run
@dataclass(frozen=True, eq=False)
class RunPruning:
    """DynamicCut on a run at one (p, k, T), as the report shows it: the selection (its facts, its
    class-balance figure) and the early-identification curve, read from one set of rankings."""

    params: DynamicCutParams
    selection: Selection
    curve: pd.DataFrame


def run_pruning(view: RunView, params: DynamicCutParams = DEFAULTS, ranked: dict | None = None) -> RunPruning:
    """The selection and the early-identification curve of DynamicCut at ``params`` on the run, both
    read from ``ranked`` ({T: ranking} at params.k: :func:`memviz.app.runs.rankings`, the one the Tune
    & prune page keeps) when given; else the rankings are computed here, once for both."""
    dyn = view.dynamics
    ranked = ranked if ranked is not None else rankings(view, params.k)
    sel = dynamiccut_selection(dyn, ranking=ranked.get(params.window(dyn)), params=params)
    return RunPruning(params, sel, early_identification_curve(dyn, rankings=ranked, params=params))


# ------------------------------------------------------------------ the run's facts
def run_facts(view: RunView, p: float | None = None, k: int | None = None, T=None, *,
              pruning: RunPruning | None = None) -> list[tuple[str, str]]:
    """What the run shows, as (label in words, value) pairs: no internal key, no p-value.
    ``pruning``: :func:`run_pruning` when the caller has it (given, ``p``, ``k`` and ``T`` are not read)."""
    pruning = pruning if pruning is not None else run_pruning(view, _tuning(None, p, k, T))
    params = pruning.params
    dyn, pc = view.dynamics, view.per_check
    last = pc.iloc[-1]
    ht = heavy_tail(dyn)
    settings = view.settings()
    floor = view.result.floor
    src = audits.run_source(view, params=params)
    sel = pruning.selection
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


def _run_figures(view: RunView, pruning: RunPruning, salt, why_view: why.WhyView | None = None) -> list:
    """A run's figures in the report: the dynamics (:func:`memviz.auditing.report.report_figures`), then the frontier,
    then what carries the model of its Top group (``why_view``, :func:`memviz.app.why.why_of`; computed when None)."""
    why_view = why_view if why_view is not None else why.why_of(view)
    figs = [*vr.report_figures(view.dynamics, view.per_check, early_curve=pruning.curve, train=view.train,
                               removed=pruning.selection.removed, redact_salt=salt), _when_to_stop(view)[0]]
    if why_view.explanation is not None:
        figs.append(viz_why.why_plot(why_view.explanation.importance))
    return figs


def _compare_figures(compare: CompareView, salt) -> list:
    model = compare.models[0] if compare.models else None
    return vr.report_figures(
        results=compare.ok, redact_salt=salt,
        column_shapes=compare.shapes_for(model) if compare.column_shapes is not None and model else None,
        dcr=compare.dcr_for(model) if compare.dcr is not None and model else None)


def figures(view: RunView | None, compare: CompareView | None = None, p: float | None = None, k: int | None = None,
            T: int | None = None, *, redact_salt: str | None = None, params: DynamicCutParams | None = None,
            ranked: dict | None = None) -> list:
    """The figures of a run's and a comparison's report (:func:`memviz.auditing.report.report_figures`);
    ``redact_salt``: class values hashed (a redacted report); ``params``, ``ranked``: as :func:`report_html`."""
    out = (_run_figures(view, run_pruning(view, _tuning(params, p, k, T), ranked), redact_salt)
           if view is not None else [])
    if compare is not None and len(compare.ok):
        out += _compare_figures(compare, redact_salt)
    return out


# ------------------------------------------------------------------ the page's side
def first_verdict_card(view: RunView | None, compare: CompareView | None = None) -> Card | None:
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
def _run_part(sec: SectionHead, view: RunView, pruning: RunPruning, fig_salt, n_leaks: int) -> vr.Section:
    leaks = []
    if view.path is not None and n_leaks:
        for rid in most_copied(view.dynamics, n=n_leaks)["row_id"]:
            try:
                leaks.append(copies_of(view.result, int(rid), limit=5, checks=view.result.checks, train=view.train))
            except MemvizError:
                break
    p, k, T = pruning.params.p, pruning.params.k, pruning.params.T
    s = dict(view.settings())
    s.update({"DynamicCut p (share of rows removed)": p, "DynamicCut k (largest checks averaged)": k,
              "DynamicCut T (last epoch scored)": T if T is not None else "default (half the checks)"})
    why_view = why.why_of(view)    # why these rows (memviz.app.why): a model of the Top group, its attributions
    figs = _run_figures(view, pruning, fig_salt, why_view)
    return vr.Section(sec.heading, sec.sentence, sec.card, sec.note, facts=run_facts(view, pruning=pruning),
                      figures=figs, leaks=leaks, settings=s, settings_name=f"Warm-up run {view.run_id}",
                      parts=(why.report_part(view, why_view, redacted=fig_salt is not None, salt=fig_salt),))


def compare_part(sec: SectionHead, compare: CompareView, fig_salt=None) -> vr.Section:
    """A comparison's :class:`SectionHead` as a report part (card, results, figures, and the run it was ranked on
    with the p/k/T it was started with as its settings); ``fig_salt``: class values hashed in its figures."""
    src = sec.source
    settings = {"ranked on warm-up run": src.run_id or ("its own warm-up" if src.ranked else "none"),
                "DynamicCut p": src.p, "DynamicCut k": src.k,
                "DynamicCut T": src.T if src.T is not None else "default (half the checks)"}
    return vr.Section(sec.heading, sec.sentence, sec.card, sec.note, results=compare.ok, results_note=src.label(),
                      figures=_compare_figures(compare, fig_salt), settings=settings,
                      settings_name=f"Comparison {compare.path.name}")


def report_parts(view: RunView | None, compare: CompareView | None = None, *, p: float | None = None,
                 k: int | None = None, T: int | None = None, redacted: bool = True, salt: str | None = None,
                 n_leaks: int = 3, params: DynamicCutParams | None = None,
                 ranked: dict | None = None) -> list[vr.Section]:
    """The report's sections as :class:`memviz.auditing.report.Section` (for
    :func:`memviz.auditing.report.build_report`): the run's (card, facts, figures, most-copied rows, the
    p/k/T tuned on it), then the comparison's (card, results, figures, the run it was ranked on and
    the p/k/T it was started with), each under a heading naming its source. ``params``, ``ranked``: as
    :func:`report_html`."""
    fig_salt = salt if redacted else None
    params = _tuning(params, p, k, T)
    pruning = run_pruning(view, params, ranked) if view is not None else None   # the run's rankings read once
    out = []
    for sec in sections(view, compare, params=params):
        out.append(_run_part(sec, view, pruning, fig_salt, n_leaks) if sec.source.kind == "run"
                   else compare_part(sec, compare, fig_salt))
    return out


def report_html(view: RunView | None, compare: CompareView | None = None, *, p: float | None = None,
                k: int | None = None, T: int | None = None, redacted: bool = True, n_leaks: int = 3,
                params: DynamicCutParams | None = None, ranked: dict | None = None) -> str:
    """The self-contained HTML report of a run and a comparison, drawn by the one report builder
    (:func:`memviz.auditing.report.build_report`: inline plotly, a CSP forbidding the network, every
    string escaped).

    "In short" comes first, one sentence per section naming its source; then each section under
    headings naming its run (check, status) or comparison (the run it was ranked on) and the p/k/T it
    used (its card and facts or results, then its figures and most-copied rows); then the settings of
    each and the glossary. A redacted report draws its own key for the
    category hashes, so two reports' hashes cannot be matched.

    ``params``: DynamicCut's (p, k, T), checked when made (given, ``p``, ``k`` and ``T`` are not read);
    ``ranked``: the run's {T: ranking} at its k (:func:`memviz.app.runs.rankings`, kept by the Tune &
    prune page): the report's selection and curve are read from it, nothing is ranked again.
    """
    if view is None and compare is None:
        raise BadRunFolder("nothing to report: open a warm-up run or a comparison first")
    salt = secrets.token_hex(16)
    parts = report_parts(view, compare, redacted=redacted, salt=salt, n_leaks=n_leaks,
                         params=_tuning(params, p, k, T), ranked=ranked)
    title = f"memviz report · {view.run_id}" if view is not None else f"memviz report · {compare.path.name}"
    return vr.build_report(title=title, redacted=redacted, sections=parts, salt=salt, glossary=glossary.entries(),
                           settings={"report": "redacted" if redacted else "raw values included"})


def results_csv(compare: CompareView) -> bytes:
    """The comparison's results for people and the next tool: readable headers, labels and units
    (:func:`memviz.app.comparisons.readable_results`), internal columns left out, formulas neutralised."""
    return csv_bytes(readable_results(compare.results))


def dictionary_csv(compare: CompareView) -> bytes:
    """The data dictionary of :func:`results_csv`: each header, its raw name, unit, goal, range and meaning
    (:func:`memviz.app.comparisons.data_dictionary`)."""
    return csv_bytes(data_dictionary(compare.results))


@dataclass(frozen=True)
class Download:
    """A synthetic table of a comparison as the Report page offers it: a readable label
    ("TabDDPM · DynamicCut · seed 0"), a readable file name and the stored file."""

    label: str
    file_name: str
    path: Path


def synthetic_downloads(compare: CompareView) -> list[Download]:
    """The comparison's synthetic tables with labels from the results' method, generator and seed (the
    stored file names are internal keys such as ``baseline_tabddpm_0``); files not in the results keep
    their stem."""
    res = compare.results
    cells = {}
    if {"synthetic", "method", "model", "seed"} <= set(res.columns):
        for r in res.dropna(subset=["synthetic"]).itertuples():
            cells[str(r.synthetic)] = (str(r.model), str(r.method), int(r.seed))
    out = []
    for rel, path in synthetic_files(compare.path).items():
        cell = cells.get(rel) or cells.get(Path(rel).as_posix())
        if cell is None:
            out.append(Download(Path(rel).stem, f"{Path(rel).stem}.csv", path))
            continue
        model, method, seed = cell
        label = f"{model_label(model)} · {method_label(method)} · seed {seed}"
        stem = re.sub(r"[^A-Za-z0-9]+", "_", f"{model_label(model)} {method_label(method)} seed {seed}").strip("_")
        out.append(Download(label, f"{compare.path.name}_{stem}.csv", path))
    return out


def table_csv(path: str | Path, raw: bool = False) -> bytes:
    """An output table (CSV or Parquet) as CSV bytes, spreadsheet formulas neutralised unless
    ``raw`` (:func:`memviz.io.csv_bytes`)."""
    return csv_bytes(read_frame(path), raw=raw)


__all__ = ["SectionHead", "sections", "run_section", "compare_section", "figures", "run_facts", "first_verdict_card",
           "sentence", "report_name", "report_parts", "compare_part", "report_html", "table_csv", "results_csv", "dictionary_csv", "Download",
           "synthetic_downloads"]
