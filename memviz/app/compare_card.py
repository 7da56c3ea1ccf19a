"""The Compare page's verdict card: what a comparison means, in four plain lines.

The privacy verdict is not assembled here: every sentence about copying is the
:attr:`memviz.Audit.verdict` of the audit it is about, formatted as a card by
:func:`memviz.app.audits.card` (a run's check, an uploaded table) or, for a comparison, passed to
:func:`compare_verdict` (the Audit of its unmitigated model). This module adds what only a
comparison knows, and never contradicts that audit:

1. **Flagged output**: the unmitigated model's Audit verdict, verbatim (without an audit, for
   older folders whose inputs are gone: the share of its rows flagged against the floor, the
   excess δ = p1 − p0 and its Newcombe 95 % interval, :func:`memviz.verdict.words.excess_sentence`);
2. **Pruning**: the change of the memorization ratio, per seed s paired with the baseline of
   the same generator and seed, d_s = m_method(s) − m_baseline(s), shown as mean ± standard
   deviation (ddof 1) over the n seeds; "clear" when n ≥ 3 and the paired t statistic
   |mean| / (sd / √n) exceeds the two-sided 95 % quantile of Student's t with n − 1 degrees of
   freedom; "indicative" below 3 seeds; beside random pruning of as many rows when present;
3. **Utility**: the paired change of MLE and Shape, in points;
4. **Next step**: one recommendation that follows from the audit's verdict code and the two lines
   above (e.g. "rows_over_copied" never reads "nothing to remove").

Plain text only (no Markdown, no HTML): callers escape it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from memviz.verdict.verdict import REFUSALS
from memviz.verdict.words import excess_sentence
from memviz.compare.methods import method_label
from memviz.measure.floor import Excess, Floor, newcombe_interval, wilson_interval
from memviz.viz.card import Card, Line, tone
from memviz.viz.style import model_label
from memviz.text import pct, points

#: below this many seeds a difference is "indicative"
MIN_SEEDS = 3
#: a utility drop up to this many points (Shape, Trend, MLE) counts as "little"
SMALL_COST_POINTS = 1.0
#: methods that prune by a ranking, in the order the verdict prefers them
PRUNING = ("dynamiccut", "dynamiccut_excess", "dynamiccutmix")
NO_FLOOR = ("Real rows a model never saw are often flagged by this test too (20 to 30 % on public tables), "
            "and there is no floor here to tell the two apart")


#: the Compare page's card is the one card type of :mod:`memviz.viz.card`
Verdict = Card


def seeds_text(n: int) -> str:
    """'1 seed', '3 seeds'."""
    return f"{n} seed{'s' * (n != 1)}"


# ------------------------------------------------------------------ flagged output
def flagged_line(mem_ratio: float, ex: Excess | None, who: str = "The model's rows") -> Line:
    """Line 1: the flagged share against the floor (or a plain warning that there is none)."""
    if ex is None:
        return Line("Flagged output", f"{who} are flagged as memorized at {pct(mem_ratio)}. {NO_FLOOR}: this "
                                      "number alone does not show copying.", "warn")
    tone = "bad" if ex.low > 0 else "good"
    return Line("Flagged output", excess_sentence(ex), tone)


# ------------------------------------------------------------------ comparisons
def _has(df: pd.DataFrame, *cols: str) -> bool:
    return all(c in df.columns for c in cols) and df[list(cols)].notna().all(axis=None) and len(df) > 0


def pooled_excess(cells: pd.DataFrame, floor: Floor | None = None) -> Excess | None:
    """The floor sentence's figures pooled over seeds: X = Σ_s round(m_s n_s) flagged of M = Σ_s n_s
    generated rows against the floor's K = round(p0 H) of H hold-out rows (the floor depends on
    the reference rows and the distance only, so it is the same for every seed).

    The floor comes from the cells' floor columns, else from ``floor`` (a warm-up's floor of the
    same training rows and distance); None without either.
    """
    if not _has(cells, "mem_ratio", "n_synthetic"):
        return None
    if _has(cells, "floor", "n_holdout"):
        h = float(cells["n_holdout"].iloc[0])
        k = float(round(float(cells["floor"].iloc[0]) * h))
    elif floor is not None:
        h, k = float(floor.n_holdout), float(floor.n_flagged)
    else:
        return None
    n = cells["n_synthetic"].to_numpy(dtype=float)
    x = float(np.round(cells["mem_ratio"].to_numpy(dtype=float) * n).sum())
    m = float(n.sum())
    if m < 1 or h < 1:
        return None
    lo0, hi0 = wilson_interval(k, h)
    d, lo, hi = newcombe_interval(x, m, k, h)
    return Excess(x / m, int(m), int(x), k / h, float(lo0), float(hi0), int(h), float(d), float(lo), float(hi))


@dataclass(frozen=True)
class Paired:
    """Per-seed differences method − baseline of one figure: d_s, their mean, sd and the verdict."""

    diffs: np.ndarray
    base: float
    value: float

    @property
    def n(self) -> int:
        return int(len(self.diffs))

    @property
    def mean(self) -> float:
        return float(np.mean(self.diffs)) if self.n else math.nan

    @property
    def sd(self) -> float:
        return float(np.std(self.diffs, ddof=1)) if self.n > 1 else math.nan

    @property
    def clear(self) -> bool:
        """Paired two-sided t test at 5 % with n ≥ MIN_SEEDS (see the module docstring)."""
        if self.n < MIN_SEEDS or not np.isfinite(self.sd):
            return False
        if self.sd == 0:
            return self.mean != 0

        return abs(self.mean) / (self.sd / math.sqrt(self.n)) > float(student_t.ppf(0.975, self.n - 1))

    def spread(self) -> str:
        """'-4.4 points ± 1.2 over 3 seeds' (no ± with one seed)."""
        sd = f" ± {100 * self.sd:.1f}" if np.isfinite(self.sd) else ""
        return f"{points(self.mean)}{sd} over {seeds_text(self.n)}"


def paired(results: pd.DataFrame, model: str, method: str, figure: str) -> Paired | None:
    """Per-seed differences of ``figure`` between ``method`` and the baseline of ``model`` (None if no pair)."""
    if figure not in results.columns:
        return None
    sub = results[results["model"] == model]
    b = sub[sub["method"] == "baseline"].groupby("seed")[figure].mean()
    m = sub[sub["method"] == method].groupby("seed")[figure].mean()
    both = pd.concat([b, m], axis=1, keys=["b", "m"]).dropna()
    if both.empty:
        return None
    return Paired((both["m"] - both["b"]).to_numpy(dtype=float), float(both["b"].mean()), float(both["m"].mean()))


def pick_method(methods) -> str | None:
    """The pruning method the verdict speaks about: DynamicCut first, else the first mitigation."""
    present = [m for m in dict.fromkeys(methods) if m != "baseline"]
    for m in PRUNING:
        if m in present:
            return m
    rest = [m for m in present if m != "random"]
    return rest[0] if rest else (present[0] if present else None)


def pick_model(results: pd.DataFrame, model: str | None = None) -> str | None:
    """The generator a card speaks about: ``model`` when it has finished cells, else the first one with a
    baseline cell, else the first one (None without cells)."""
    ok = results[results["status"] == "ok"] if "status" in results.columns else results
    if ok.empty or "model" not in ok.columns:
        return None
    models = list(dict.fromkeys(ok["model"]))
    if model in models:
        return model
    has_base = ok["method"] == "baseline" if "method" in ok.columns else pd.Series(False, index=ok.index)
    return next((m for m in models if (has_base & (ok["model"] == m)).any()), models[0])


def compare_verdict(results: pd.DataFrame, model: str | None = None, method: str | None = None, *,
                    floor: Floor | None = None, audit=None) -> Verdict:
    """The Compare page's and the report's card for one generator (default: the first one).

    ``results``: a comparison's results (``memviz.compare.results``; cells with status ok are used).
    ``audit``: the :class:`memviz.Audit` of this generator's unmitigated cells
    (:func:`memviz.app.audits.compare_audit`); its verdict is the Flagged output line, verbatim, and
    decides the next step. ``floor``: without an audit, the floor to use when the results carry none
    (older comparisons): the warm-up's floor, valid only when that warm-up measured the same
    training rows with the same distance (:func:`memviz.app.comparisons.run_floor` checks it).
    """
    ok = results[results["status"] == "ok"] if "status" in results.columns else results
    if ok.empty or not {"method", "model", "seed", "mem_ratio"} <= set(ok.columns):
        return Verdict("No finished cell yet", (Line("Next step", "Wait for the comparison's first cells."),))
    model = pick_model(ok, model)
    sub = ok[ok["model"] == model]
    method = method if method in set(sub["method"]) and method != "baseline" else pick_method(sub["method"])
    mlabel = model_label(model)
    base = sub[sub["method"] == "baseline"]
    lines: list[Line] = []
    ex = None
    if base.empty:
        lines.append(Line("Flagged output", f"No baseline cell for {mlabel}: add the method Baseline (no mitigation) "
                                            "to compare against.", "warn"))
    else:
        ex = pooled_excess(base, floor)
        n_base = int(base["seed"].nunique())
        who = f"{mlabel} without mitigation ({seeds_text(n_base)}): its rows"
        if audit is not None:
            v = audit.verdict
            pooled = f", {audit.provenance.n_synthetic:,} generated rows pooled" if n_base > 1 else ""
            lines.append(Line("Flagged output", f"{mlabel} without mitigation ({seeds_text(n_base)}{pooled}). {v.sentence}",
                              tone(v.tone)))
        else:
            lines.append(flagged_line(float(base["mem_ratio"].mean()), ex, who))
            if ex is not None:
                lines[-1] = Line(lines[-1].topic, f"{mlabel} without mitigation ({seeds_text(n_base)}). {excess_sentence(ex)}",
                                 lines[-1].tone)
    pr = paired(ok, model, method, "mem_ratio") if method and not base.empty else None
    n = pr.n if pr is not None else 0
    indicative = 0 < n < MIN_SEEDS
    if pr is not None:
        lines.append(_pruning_line(ok, model, method, pr))
        lines.append(_utility_line(ok, model, method))
    elif method is None:
        lines.append(Line("Pruning", "No mitigation in this comparison: only the unmitigated model was run."))
    if not base.empty:      # every other arm beside it (the dynamic threshold, TabCutMix, DP-SGD…): the card read one
        lines.extend(_arm_line(ok, model, m) for m in dict.fromkeys(sub["method"])
                     if m not in ("baseline", "random", method))
    lines.append(Line("Next step", _next_step(ok, model, method, ex, pr, audit)))
    title = f"{mlabel}: " + (f"{method_label(method)} against no mitigation" if pr is not None
                             else "memorization without mitigation")
    if indicative:
        title += f" (indicative: {seeds_text(n)})"
    sentence = audit.verdict.sentence if audit is not None else (excess_sentence(ex) if ex is not None else "")
    return Verdict(title, tuple(lines), sentence, n, indicative)


def _pruning_line(ok: pd.DataFrame, model: str, method: str, pr: Paired) -> Line:
    label = method_label(method)
    text = (f"{label} changed the flagged share from {pct(pr.base)} to {pct(pr.value)} "
            f"({pr.spread()}{', paired by seed' if pr.n > 1 else ''})")
    if pr.n < MIN_SEEDS:
        text += f"; indicative only: with fewer than {MIN_SEEDS} seeds the spread is unknown"
    elif pr.clear:
        text += "; a clear change (paired t test, 5 %)"
    else:
        text += "; not a clear change: the seeds disagree"
    rnd = paired(ok, model, "random", "mem_ratio") if method != "random" else None
    if rnd is not None:
        text += f". Removing as many random rows changed it by {points(rnd.mean)}"
    kept = ok[(ok["model"] == model) & (ok["method"] == method)]
    if _has(kept, "mem_ratio_kept", "control_kept"):
        text += (f". Against the rows it kept, the pruned model is flagged at {pct(kept['mem_ratio_kept'].mean())} "
                 f"and the unpruned model's rows at {pct(kept['control_kept'].mean())} (the control)")
        if _has(kept, "floor_kept"):
            text += f", real rows it never saw at {pct(kept['floor_kept'].mean())}"
    tone = "good" if pr.clear and pr.mean < 0 else ("bad" if pr.clear and pr.mean > 0 else "neutral")
    return Line("Pruning", text + ".", tone)


def _arm_line(ok: pd.DataFrame, model: str, method: str) -> Line:
    """One line for another mitigation of the comparison: how it moved the flagged share against no mitigation,
    and what it cost (the cost line's own words)."""
    pr = paired(ok, model, method, "mem_ratio")
    if pr is None:
        return Line(method_label(method), "No cell paired with the unmitigated model by seed: not compared.")
    text = f"{method_label(method)} changed the flagged share from {pct(pr.base)} to {pct(pr.value)} ({pr.spread()})"
    text += ("; indicative only" if pr.n < MIN_SEEDS else
             "; a clear change (paired t test, 5 %)" if pr.clear else "; not a clear change: the seeds disagree")
    cost = _utility_line(ok, model, method)
    if cost.text.startswith(("Utility lost", "Little utility lost")):
        text += ". " + cost.text.split(". ", 1)[0]
    tone = "good" if pr.clear and pr.mean < 0 else ("bad" if pr.clear and pr.mean > 0 else "neutral")
    return Line(method_label(method), text + ".", tone)


#: the quality figures the cost line names, in the order of the Compare table (Trend, every column pair, was left
#: out though it was the walk's largest loss: 92.1 → 87.3 beside "little utility lost")
UTILITY = (("shape", "Shape (column distributions)"), ("trend", "Trend (relations between column pairs)"),
           ("mle", "MLE (ROC AUC on real test rows)"))


def _worst_cost(ok: pd.DataFrame, model: str, method: str) -> float:
    """The largest quality loss (a negative paired change, as a fraction) over Shape, Trend and MLE; 0 for none."""
    return _worst(ok, model, method)[1]


def _worst(ok: pd.DataFrame, model: str, method: str) -> tuple[str, float]:
    """(the name of the figure that loses most, its paired change as a fraction; 0 and "" when none loses)."""
    changes = [(name, p.mean) for fig, name in UTILITY
               if (p := paired(ok, model, method, fig)) is not None and np.isfinite(p.mean)]
    return min([("", 0.0), *changes], key=lambda c: c[1])


def _utility_line(ok: pd.DataFrame, model: str, method: str) -> Line:
    """"Utility lost: Trend … −4.8 points (more than 1 point). Shape …; Trend …; MLE …": the verdict first, next
    to the figure that decides it (it stood after the last figure, often one that had not moved)."""
    parts = []
    for fig, name in UTILITY:
        p = paired(ok, model, method, fig)
        if p is None or not np.isfinite(p.mean):
            continue
        parts.append(f"{name} {pct(p.base)} → {pct(p.value)} ({points(p.mean)})")
    if not parts:
        return Line("Utility cost", "No utility figure in these results.")
    name, worst = _worst(ok, model, method)
    allowance = f"{SMALL_COST_POINTS:g} point{'s' * (SMALL_COST_POINTS != 1)}"
    if -100 * worst <= SMALL_COST_POINTS:
        lost = points(-worst, signed=False) if worst < 0 else points(0.0, signed=False)
        return Line("Utility cost", f"Little utility lost: at most {lost} on any figure (within {allowance}). "
                                    f"{'; '.join(parts)}.", "good")
    return Line("Utility cost", f"Utility lost: {name} {points(worst)} (more than {allowance}). {'; '.join(parts)}.",
                "bad")


def _next_step(ok, model, method, ex: Excess | None, pr: Paired | None, audit=None) -> str:
    label = method_label(method) if method else ""
    code = audit.verdict.code if audit is not None else None
    if code in REFUSALS or code == "no_copying":
        return audit.verdict.next_step
    if code == "rows_over_copied":
        n = int(audit.n_over_copied)
        did = ""
        if pr is not None:
            did = (f" {label} changed the flagged share by {points(pr.mean)} ({seeds_text(pr.n)}); check on the Memorization "
                   "page whether the rows it removed are those rows.")
        return (f"No copying of the table as a whole, but {n:,} training row{'s have' if n != 1 else ' has'} far more "
                f"close copies than real rows would give {'them' if n != 1 else 'it'}. {audit.verdict.next_step}{did}")
    if code is None and ex is None:
        return ("Measure the floor before acting: choose a test split on the Data page and start a warm-up (or a "
                "comparison) with it, so that copying can be told apart from resemblance.")
    if code is None and ex.low <= 0:
        return ("The unmitigated model's rows are not flagged more than real rows it never saw overall; the "
                "training rows it copies more than chance are not known here (this comparison's tables are not "
                "kept). Audit its synthetic tables (Audit page) before concluding there is nothing to remove.")
    if pr is None:
        return "Add DynamicCut and random pruning to see whether removing rows lowers the excess."
    if pr.n < MIN_SEEDS:
        return f"Run at least {MIN_SEEDS} seeds (e.g. 0,1,2) before acting: with {seeds_text(pr.n)} the spread is unknown."
    if not (pr.clear and pr.mean < 0):
        return f"{label} did not clearly lower memorization here; do not rely on it for this table."
    rnd = paired(ok, model, "random", "mem_ratio")
    if rnd is not None and rnd.mean <= pr.mean:
        return (f"{label} lowers memorization, but no more than removing random rows: its ranking adds nothing "
                "on this table.")
    if -100 * _worst_cost(ok, model, method) > SMALL_COST_POINTS:   # the cost line's own reading
        return f"{label} lowers memorization but costs utility: weigh the two before using the pruned table."
    return f"{label} lowers memorization at little cost: download the pruned table (Report page) and train on it."
