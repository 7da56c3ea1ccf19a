"""The Report page's library side: the report's figures and the HTML document."""
from __future__ import annotations

from pathlib import Path

from ..data import read_frame
from ..dynamiccut import DEFAULT_K, DEFAULT_P, dynamiccut_selection, early_identification_curve
from ..dynamics import summarize
from ..errors import MemvizError
from ..io import csv_bytes
from ..leaks import copies_of, most_copied
from ..viz.report import build_report, report_figures
from .comparisons import CompareView
from .runs import RunView


def figures(view: RunView | None, compare: CompareView | None = None, p: float = DEFAULT_P, k: int = DEFAULT_K,
            T: int | None = None) -> list:
    """The figures of a run's and a comparison's report (:func:`memviz.viz.report.report_figures`)."""
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
    return report_figures(**kw)


def report_html(view: RunView | None, compare: CompareView | None = None, *, p: float = DEFAULT_P,
                k: int = DEFAULT_K, T: int | None = None, redacted: bool = True, n_leaks: int = 3) -> str:
    """The self-contained HTML report (:func:`memviz.viz.report.build_report`) of a run and a comparison."""
    if view is None and compare is None:
        raise MemvizError("nothing to report: open a warm-up run or a comparison first")
    summary, settings, leak_views = {}, {}, []
    if view is not None:
        summary = {"run": view.run_id, **summarize(view.dynamics).to_dict()}
        settings = dict(view.settings())
        settings.update({"DynamicCut p": p, "DynamicCut k": k, "DynamicCut T": T if T is not None else "default"})
        if view.path is not None and n_leaks:
            for rid in most_copied(view.dynamics, n=n_leaks)["row_id"]:
                try:
                    leak_views.append(copies_of(view.result, int(rid), limit=5, checks=view.result.checks,
                                                train=view.train))
                except MemvizError:
                    break
    if compare is not None:
        settings["comparison"] = str(compare.path.name)
    title = f"memviz report · {view.run_id}" if view is not None else f"memviz report · {compare.path.name}"
    return build_report(summary, figures(view, compare, p, k, T), compare.results if compare else None,
                        settings, redacted=redacted, title=title, leaks=leak_views)


def table_csv(path: str | Path, raw: bool = False) -> bytes:
    """An output table (CSV or Parquet) as CSV bytes, spreadsheet formulas neutralised unless
    ``raw`` (:func:`memviz.io.csv_bytes`)."""
    return csv_bytes(read_frame(path), raw=raw)
