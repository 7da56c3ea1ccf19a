"""The words of the verdict's room: sentences composed from the results of the layers below, which keep their
figures and say nothing themselves (issue 53 item 2: numbers below words).

* :func:`excess_sentence` — the floor's sentence: how often real rows the model never saw are flagged, how often
  the model's rows are, and what comes from the model (:class:`memviz.measure.floor.Excess`'s figures).

Plain text only: callers escape it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memviz.measure.floor import Excess


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
