"""The "why these rows" panel's library side (Memorization page, leak explorer, report, ``memviz explain``).

:func:`why_of` reads a run once: the risk factors of its training rows (:mod:`memviz.risk.factors`) and, where
SHAP is installed and the run's Top group allows a cross-validated fit, the model of its Top group
(:mod:`memviz.risk.explanation`); :func:`feature_lines` and :func:`value_table` put them in the user's words,
:func:`row_risk_sentence` says why one row is at risk (:mod:`memviz.risk.words`), redacted on request.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.compare.methods import isolation_removed
from memviz.errors import MemvizError
from memviz.risk.explanation import Explanation, explain_rows, value_attributions
from memviz.risk.factors import DEFAULT_K, FACTOR_WORDS, RiskFactors, risk_factors
from memviz.risk.words import row_sentence
from memviz.auditing.report import Part
from memviz.verdict.words import explanation_sentence


@dataclass(frozen=True, eq=False)
class WhyView:
    """A run's factors, and its explanation or the one line that says why there is none."""

    factors: RiskFactors
    explanation: Explanation | None
    error: str = ""


def run_factors(view) -> RiskFactors:
    """The risk factors of a run's training rows, in the run's distance (k = 5, or N − 1 on a smaller table)."""
    distance = getattr(view.result.config, "distance", None) or "paper"
    return risk_factors(view.train, k=max(1, min(DEFAULT_K, len(view.train) - 1)), distance=distance)


def why_of(view, factors: RiskFactors | None = None) -> WhyView:
    """The factors and the model of the run's Top group (module docstring); a run whose Top group cannot be
    modelled (SHAP missing, too few rows on one side) gets its reason in ``error``."""
    factors = factors if factors is not None else run_factors(view)
    try:
        ex = explain_rows(view.train, view.dynamics, factors=factors)
    except MemvizError as exc:
        return WhyView(factors, None, str(exc))
    return WhyView(factors, ex)


def feature_lines(ex: Explanation, n: int = 5) -> list[str]:
    """The features that carry the model most, in words: a factor by what it means and which way it pushes, a
    column by its name (its values: :func:`value_table`)."""
    out = []
    for r in ex.importance.head(n).itertuples(index=False):
        share = f"{100 * r.share:.0f} % of the attributions"
        if r.kind == "factor":
            base = r.feature.removesuffix(" (factor)")
            words = FACTOR_WORDS.get(base, base)
            way = "" if not math.isfinite(r.direction) else (
                " (the larger, the more often in the Top group)" if r.direction > 0 else
                " (the smaller, the more often in the Top group)")
            out.append(f"{words[0].upper()}{words[1:]}{way}: {share}")
        else:
            out.append(f"column {r.feature}: {share} (which of its values: the table below)")
    return out


def value_table(view, why: WhyView, *, redacted: bool = True, n: int = 12) -> pd.DataFrame:
    """The column values that carry memorization most (:func:`memviz.risk.explanation.value_attributions`),
    under readable headers; redacted by default."""
    if why.explanation is None:
        return pd.DataFrame()
    v = value_attributions(view.train, why.explanation, redacted=redacted).head(n)
    return pd.DataFrame({"column": v["column"], "value": v["value"], "rows": v["rows"],
                         "odds of the Top group ×": v["odds_factor"].round(2),
                         "rows in the Top group": (100 * v["top_share"]).round(0).astype(int).astype(str) + " %"})


def row_risk_sentence(view, factors: RiskFactors, row_id: int, *, redacted: bool = True, salt: str | None = None) -> str:
    """Why this training row is at risk, in one sentence (:func:`memviz.risk.words.row_sentence`)."""
    return row_sentence(view.train, factors, int(row_id), redacted=redacted, salt=salt)


def report_part(view, why_view: WhyView, *, redacted: bool = True, salt: str | None = None, n_rows: int = 3):
    """The report's "Why these rows" block (:class:`memviz.auditing.report.Part`): the model's held-out AUC and its
    strength, what carries it, the column values and the riskiest rows with their reasons (redacted with the
    report's key ``salt``)."""
    ex = why_view.explanation
    if ex is None:
        return Part("Why these rows", f"No explanation for this run: {why_view.error}")
    values = value_attributions(view.train, ex, redacted=redacted, salt=salt).head(5)
    rows = ex.oof.sort_values(ascending=False, kind="stable").head(n_rows).index
    names = view.train.key_texts(np.asarray(rows, dtype=np.int64), redacted=redacted, salt=salt)
    facts = [("Held-out AUC of the model (95 % interval)", f"{ex.auc:.2f} ({ex.auc_low:.2f} to {ex.auc_high:.2f}): "
                                                           f"{ex.strength}"),
             ("What carries it", "; ".join(feature_lines(ex, 3))),
             ("Column values that carry it", "; ".join(f"{r.column} = {r.value}: odds × {r.odds_factor:.2f} "
                                                       f"({r.rows} rows)" for r in values.itertuples()))]
    facts += [(f"Row {name}", row_sentence(view.train, why_view.factors, int(i), redacted=redacted, salt=salt))
              for name, i in zip(names, rows)]
    return Part("Why these rows", explanation_sentence(ex), "A gradient-boosted model of the Top group from each row's columns and "
                "its risk factors (from the training table alone), SHAP attributions; AUC held out over 5 folds of "
                "rows. One warm-up's Top group is noisy at a few hundred rows.", facts)


def riskiest_rows(view, why: WhyView, n: int = 10, *, redacted: bool = True, salt: str | None = None) -> pd.DataFrame:
    """The ``n`` rows the model scores riskiest (out of fold), with whether the warm-up put them in Top and why,
    named by the user's key."""
    if why.explanation is None:
        return pd.DataFrame()
    score = why.explanation.oof.sort_values(ascending=False, kind="stable").head(n)
    top = pd.Series(np.asarray(view.dynamics.top, dtype=bool), index=np.asarray(view.dynamics.row_ids))
    frame = pd.DataFrame({"row_id": score.index.to_numpy(dtype=np.int64), "model score": score.round(3).to_numpy(),
                          "in the Top group": ["yes" if top.get(i, False) else "no" for i in score.index],
                          "why": [row_sentence(view.train, why.factors, int(i), redacted=redacted, salt=salt)
                                  for i in score.index]})
    return view.train.with_keys(frame, redacted=redacted, salt=salt, keep_row_id=view.train.key is None)


@dataclass(frozen=True)
class IsolationPreview:
    """The isolation cut on a run's training table at DynamicCut's p (the Tune & prune page).

    removed : the row_ids it would remove, most isolated first.  n_top : of them, rows the warm-up put in Top.
    overlap : |isolation ∩ DynamicCut| / |isolation ∪ DynamicCut| (Jaccard) of the two removals.
    seconds : the ranking's wall time here.  warmup_seconds : the warm-up's training and checks up to T
    (its recorded time × T / E), what DynamicCut's ranking costs.
    """

    removed: np.ndarray
    n_top: int
    overlap: float
    seconds: float
    warmup_seconds: float | None

    def sentence(self) -> str:
        cost = "" if not self.warmup_seconds else (
            f" It took {self.seconds:.2f} s from the table alone, against about {self.warmup_seconds:,.0f} s of "
            f"warm-up up to T for DynamicCut's ranking.")
        return (f"Without a warm-up, the isolation cut would remove the {len(self.removed):,} most isolated rows (the "
                f"distance to the 5th-nearest other row): {self.n_top:,} of them are in the Top group, and the two "
                f"removals overlap by {100 * self.overlap:.0f} % (Jaccard).{cost}")


def isolation_preview(view, params, dynamiccut_removed) -> IsolationPreview:
    """The isolation cut at ``params.p`` (:func:`memviz.compare.methods.isolation_removed`, the comparison's one
    definition) beside DynamicCut's ``dynamiccut_removed`` row_ids, with both costs."""
    t0 = time.perf_counter()
    removed = isolation_removed(view.train, params)
    seconds = time.perf_counter() - t0
    top = set(np.asarray(view.dynamics.row_ids)[np.asarray(view.dynamics.top, dtype=bool)].tolist())
    a, b = set(removed.tolist()), set(np.asarray(dynamiccut_removed).tolist())
    total = float((view.manifest.get("timings") or {}).get("total_seconds") or 0.0)
    E = max(int(e) for e in view.epochs) if view.epochs else 0
    T = params.T if params.T is not None else None
    warm = total * (float(T) / E) if (total and E and T is not None) else (total or None)
    return IsolationPreview(removed, len(a & top), len(a & b) / len(a | b) if (a | b) else float("nan"), seconds, warm)
