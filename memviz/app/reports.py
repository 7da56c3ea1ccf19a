"""The Report page's library side: the report's figures, its verdict, its facts in words and the HTML document."""
from __future__ import annotations

import secrets
from pathlib import Path

from memviz.app import glossary
from memviz.app.comparisons import CompareView, run_floor
from memviz.app.runs import RunView
from memviz.app.verdict import Verdict, compare_verdict, run_verdict
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
from memviz.viz.report import build_report, report_figures


def figures(view: RunView | None, compare: CompareView | None = None, p: float = DEFAULT_P, k: int = DEFAULT_K,
            T: int | None = None, *, redact_salt: str | None = None) -> list:
    """The figures of a run's and a comparison's report (:func:`memviz.viz.report.report_figures`);
    ``redact_salt``: class values hashed (a redacted report)."""
    kw = {}
    if view is not None:
        dyn = view.dynamics
        kw.update(dynamics=dyn, per_check=view.per_check, early_curve=early_identification_curve(dyn, p=p, k=k),
                  train=view.train, removed=dynamiccut_selection(dyn, p=p, k=k, T=T).removed)
    if compare is not None and len(compare.ok):
        model = compare.models[0] if compare.models else None
        kw.update(results=compare.ok,
                  column_shapes=compare.shapes_for(model) if compare.column_shapes is not None and model else None,
                  dcr=compare.dcr_for(model) if compare.dcr is not None and model else None)
    return report_figures(**kw, redact_salt=redact_salt)


def _pct(x) -> str:
    return "–" if x is None or x != x else f"{100 * float(x):.1f} %"


def run_facts(view: RunView) -> list[tuple[str, str]]:
    """What the run shows, as (label in words, value) pairs: no internal key, no p-value."""
    dyn, pc = view.dynamics, view.per_check
    last = pc.iloc[-1]
    ht = heavy_tail(dyn)
    settings = view.settings()
    floor = view.result.floor
    facts = [("Run", view.run_id), ("Dataset", str(settings.get("dataset") or "–")),
             ("Status", view.status if view.status != "running" else
              f"still running: figures from check {int(last['check'])} (epoch {int(last['epoch'])})"),
             ("Training rows", f"{dyn.n_rows:,}"),
             ("Checks", f"{dyn.n_checks} (epochs {int(dyn.epochs[0])} to {int(dyn.epochs[-1])})"),
             ("Generated rows flagged as memorized at the last check", _pct(last["mem_ratio"])),
             ("Floor: real rows the model never saw, flagged by the same test",
              f"{_pct(floor.floor)} (95 % interval {_pct(floor.low)} to {_pct(floor.high)}, "
              f"{floor.n_holdout:,} hold-out rows)" if floor is not None else
              "not measured: the run was started without a test split or hold-out"),
             ("Mem-AUC at the last check (0 = nothing close, 1 = every row on a training row)",
              f"{float(last['mem_auc']):.3f}"),
             ("Training rows never copied", _pct(ht.zero_share)),
             ("Share of all copies held by the 1 % most-copied rows", _pct(concentration(dyn, 0.01))),
             ("Most copies of one training row", f"{ht.max_count:,}"),
             ("Top group", f"the {dyn.top_frac:.0%} most-copied rows ({int(dyn.top.sum()):,} rows)")]
    return facts


def verdict(view: RunView | None, compare: CompareView | None = None) -> Verdict | None:
    """The report's card: the comparison's when there is one with finished cells, else the run's."""
    if compare is not None and len(compare.ok):
        return compare_verdict(compare.ok, floor=run_floor(compare, view) if view is not None else None)
    if view is not None:
        return run_verdict(view.per_check, view.result.floor, live=view.status == "running")
    return None


def sentence(view: RunView | None, compare: CompareView | None = None) -> str:
    """The plain floor sentence the report opens with: the run's last check against its floor,
    else the comparison's unmitigated model against its floor ("" when there is no floor)."""
    if view is not None:
        s = run_verdict(view.per_check, view.result.floor).sentence
        if s:  # say whose rows these are: the comparison's card below speaks of other models
            last = view.per_check.iloc[-1]
            return f"Warm-up run {view.run_id}, last check (epoch {int(last['epoch'])}): {s}"
    card = verdict(view, compare) if compare is not None else None
    return card.sentence if card is not None else ""


def report_name(view: RunView | None, compare: CompareView | None, redacted: bool) -> str:
    """The download's file name: distinct for redacted and raw reports."""
    base = view.run_id if view is not None else (compare.path.name if compare is not None else "memviz")
    return f"memviz_report_{base}_{'redacted' if redacted else 'RAW_VALUES'}.html"


def report_html(view: RunView | None, compare: CompareView | None = None, *, p: float = DEFAULT_P,
                k: int = DEFAULT_K, T: int | None = None, redacted: bool = True, n_leaks: int = 3) -> str:
    """The self-contained HTML report (:func:`memviz.viz.report.build_report`) of a run and a comparison.

    The plain floor sentence and the verdict come first; a redacted report draws its own key
    for the category hashes, so two reports' hashes cannot be matched.
    """
    if view is None and compare is None:
        raise MemvizError("nothing to report: open a warm-up run or a comparison first")
    salt = secrets.token_hex(16)
    facts, settings, leak_views = [], {}, []
    if view is not None:
        facts = run_facts(view)
        settings = dict(view.settings())
        settings.update({"DynamicCut p (share of rows removed)": p, "DynamicCut k (largest checks averaged)": k,
                         "DynamicCut T (last epoch scored)": T if T is not None else "default (half the checks)"})
        if view.path is not None and n_leaks:
            for rid in most_copied(view.dynamics, n=n_leaks)["row_id"]:
                try:
                    leak_views.append(copies_of(view.result, int(rid), limit=5, checks=view.result.checks,
                                                train=view.train))
                except MemvizError:
                    break
    card = verdict(view, compare)
    opening = sentence(view, compare)
    if compare is not None:
        settings["comparison"] = str(compare.path.name)
    settings["report"] = "redacted" if redacted else "raw values included"
    title = f"memviz report · {view.run_id}" if view is not None else f"memviz report · {compare.path.name}"
    return build_report(facts, figures(view, compare, p, k, T, redact_salt=salt if redacted else None),
                        compare.results if compare else None, settings, redacted=redacted, title=title,
                        leaks=leak_views, verdict=card, sentence=opening, glossary=glossary.entries(), salt=salt)


def table_csv(path: str | Path, raw: bool = False) -> bytes:
    """An output table (CSV or Parquet) as CSV bytes, spreadsheet formulas neutralised unless
    ``raw`` (:func:`memviz.io.csv_bytes`)."""
    return csv_bytes(read_frame(path), raw=raw)


__all__ = ["figures", "run_facts", "verdict", "sentence", "report_name", "report_html", "table_csv"]
