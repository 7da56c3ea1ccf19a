"""The words of the verdict's room: sentences composed from the results of the layers below, which keep their
figures and say nothing themselves (issue 53 item 2: numbers below words).

* :func:`excess_sentence` — the floor's sentence: how often real rows the model never saw are flagged, how often
  the model's rows are, and what comes from the model (:class:`memviz.measure.floor.Excess`'s figures);
* :func:`progress_sentence` — what a reader of an unfinished comparison must know
  (:class:`memviz.compare.grid.GridProgress`);
* :func:`explanation_sentence` — the model of the Top group in one sentence, with its strength
  (:class:`memviz.risk.explanation.Explanation`);
* :func:`with_sentence` — a record (a result's ``to_dict()``) with its sentence at the place its file holds it.

(The privacy tests beyond the ratio test have theirs beside: :mod:`memviz.verdict.evidence_words`.)

Plain text only: callers escape it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from memviz.risk.explanation import feature_label

if TYPE_CHECKING:
    from memviz.compare.grid import GridProgress
    from memviz.measure.floor import Excess
    from memviz.risk.explanation import Explanation


def excess_sentence(ex: Excess) -> str:
    """'Real rows the model never saw are flagged at Y %; the model's rows at X %; so Z points (interval)
    come from the model.' (worded for an interval that covers 0 or lies below it), from
    :meth:`~memviz.measure.floor.Excess.figures`."""
    f = ex.figures()
    head = (f"Real rows the model never saw are flagged at {f['floor_pct']:.1f} % "
            f"({f['n_holdout']:,} hold-out rows); the model's rows at {f['mem_pct']:.1f} %")
    lo, hi = f["excess_ci_points"]
    ci = f"{lo:+.1f} to {hi:+.1f}"
    if ex.low > 0:
        return f"{head}; so {f['excess_points']:.1f} points ({ci}) come from the model."
    if ex.high < 0:
        return (f"{head}; so the model's rows are flagged less often than real rows "
                f"({f['excess_points']:+.1f} points, {ci}).")
    return (f"{head}; so the model's rows are not flagged more than real rows it never saw "
            f"({f['excess_points']:+.1f} points, {ci}).")


def with_sentence(record: dict, sentence: str, before: str | None = None) -> dict:
    """``record`` with ``"sentence": sentence`` placed just before the key ``before`` (where ``record`` has one
    already, or last, when ``before`` is None or not in it): a file keeps its keys in the order it always had when
    its sentence is worded above the figures."""
    if before is None or before not in record or "sentence" in record:
        return {**record, "sentence": sentence}
    out = {}
    for k, v in record.items():
        if k == before:
            out["sentence"] = sentence
        if k != "sentence":
            out[k] = v
    return out


def progress_sentence(progress: GridProgress) -> str:
    """"" when the comparison finished; else what a reader of its figures must know."""
    if progress.finished:
        return ""
    return (f"This comparison is unfinished: {progress.done} of its {progress.total} cells are done, and its results "
            "and figures read those cells only.")


def explanation_sentence(ex: Explanation) -> str:
    """The model of the Top group's reading in one sentence, with its strength and the three features that carry
    it most."""
    top = ex.importance.head(3)
    names = ", ".join(feature_label(f, k) for f, k in zip(top["feature"], top["kind"]))
    return (f"A model of which rows are in the Top group from their columns and risk factors tells them from "
            f"the others with a held-out AUC of {ex.auc:.2f} (95 % interval {ex.auc_low:.2f} to "
            f"{ex.auc_high:.2f}; 0.50 is chance): {ex.strength}. The features that carry it most: {names}.")
