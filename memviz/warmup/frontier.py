"""When to stop: privacy and quality at every check, and the check a rule recommends.

Per check (:func:`frontier_columns`, added to a warm-up's ``per_check`` table):

* ``shape``, ``trend``: SDMetrics' Column Shapes and Column Pair Trends of the check's
  generated rows against the training table (:mod:`memviz.evaluate.quality`, on the run's
  ``quality_rows``), and ``quality = (shape + trend) / 2`` (the QualityReport's overall score);
* with a floor f: ``copy_share = excess / (1 − f)`` with ``copy_share_low``, ``copy_share_high``
  from the excess interval. If a share c of the generated rows were copies (always flagged) and
  the rest behaved like fresh real rows (flagged at f), the mem ratio would be
  ``c + (1 − c) f``; c solves that: the share of rows the model copies beyond chance.

The rule (:func:`recommend`, parameters in :class:`StopRule`):

1. the reference quality is the best ``metric`` over the checks (``quality``, ``shape`` or
   ``trend``); the **eligible** checks are those within ``tolerance`` of it;
2. with a floor: the **earliest** eligible check whose excess interval reaches down to
   ``max_excess`` (default 0: not significantly above the floor, ``excess_low ≤ 0``);
   if none does, the eligible check with the **lowest excess** (earliest on ties);
3. without a floor (no hold-out), the eligible check with the lowest mem ratio, said to be
   uncalibrated; without quality (a run made before it was measured), every check is
   eligible and step 2 picks the **latest** check whose interval reaches ``max_excess``
   (the most trained model still at its floor), else the lowest excess.

Only checks whose checkpoint was kept can be recommended when ``available`` is given (a
table can be sampled from them), so the recommended check is always one ``memviz sample``
can release from.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from memviz.errors import BadOption, BadRunFolder
from memviz.text import percent

METRICS = ("quality", "shape", "trend")
QUALITY_COLUMNS = ("shape", "trend", "quality_rows")


def frontier_columns(per_check: pd.DataFrame, summaries) -> pd.DataFrame:
    """``per_check`` plus shape, trend, quality_rows, quality (from the check summaries, matched
    by ``check``; NaN where a check has none) and, with a floor, copy_share (low, high)."""
    out = per_check.copy()
    by_check = {int(s["check"]): s for s in (summaries or []) if isinstance(s, dict) and "check" in s}
    if any("shape" in s for s in by_check.values()):
        for col in QUALITY_COLUMNS:
            vals = [by_check.get(int(c), {}).get(col) for c in out["check"]]
            out[col] = pd.to_numeric(pd.Series(vals, index=out.index, dtype=object), errors="coerce")
        out["quality"] = (out["shape"] + out["trend"]) / 2
    if "excess" in out:
        room = 1.0 - out["floor"]
        for a, b in (("copy_share", "excess"), ("copy_share_low", "excess_low"), ("copy_share_high", "excess_high")):
            out[a] = np.where(room > 0, out[b] / room.where(room > 0, 1.0), np.nan)
    return out


@dataclass(frozen=True)
class StopRule:
    """Parameters of :func:`recommend`.

    tolerance : eligible checks score at least ``best − tolerance`` on ``metric`` (0.02 = 2 points).
    metric : ``quality`` (mean of Shape and Trend), ``shape`` or ``trend``.
    max_excess : a check passes when its excess interval's lower end is at most this (0: not
        significantly above the floor; 0.02 accepts up to 2 points above it).
    """

    tolerance: float = 0.02
    metric: str = "quality"
    max_excess: float = 0.0

    def validated(self) -> "StopRule":
        for name in ("tolerance", "max_excess"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) or not 0 <= v <= 1:
                raise BadOption(f"{name}={v!r}: must be a number between 0 and 1")
        if self.metric not in METRICS:
            raise BadOption(f"metric={self.metric!r}: use {', '.join(METRICS)}")
        return StopRule(float(self.tolerance), self.metric, float(self.max_excess))

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Recommendation:
    """The recommended check, its epoch, and why (one sentence)."""

    check: int
    epoch: int
    reason: str
    rule: StopRule
    eligible: tuple                  # check numbers within tolerance of the best quality
    passed: bool                     # its excess interval reaches max_excess (with a floor)

    def to_dict(self) -> dict:
        return {"recommended_check": self.check, "recommended_epoch": self.epoch, "recommendation": self.reason,
                "rule": self.rule.to_dict(), "eligible_checks": list(self.eligible), "passes": self.passed}


def recommend(per_check: pd.DataFrame, rule: StopRule | None = None, available=None) -> Recommendation:
    """The check to release from (see the module docstring for the rule).

    Parameters
    ----------
    per_check : a warm-up's per-check table (check, epoch, mem_ratio; excess columns with a
        floor; quality columns when measured: :func:`frontier_columns`).
    rule : :class:`StopRule` (default: tolerance 0.02 on quality, max_excess 0).
    available : checks that can be chosen (those with a kept checkpoint); None: all.
    """
    rule = (rule or StopRule()).validated()
    pc = per_check
    if available is not None:
        pc = pc[pc["check"].isin([int(c) for c in available])]
    if pc.empty:
        raise BadRunFolder("no check to recommend: the run kept no checkpoint of any check" if available is not None
                           else "no check to recommend: the run has no finished check")
    pc = pc.sort_values("check", kind="stable")
    has_q = rule.metric in pc and pc[rule.metric].notna().any()
    has_floor = "excess_low" in pc and pc["excess_low"].notna().any()
    kept = "" if available is None or len(pc) == len(per_check) else f" (among the {len(pc)} checks with a kept checkpoint)"
    if has_q:
        q = pc[rule.metric]
        best_i = q.idxmax()
        best, best_epoch = float(q[best_i]), int(pc.loc[best_i, "epoch"])
        eligible = pc[q >= best - rule.tolerance - 1e-12]
        def quality_text(row) -> str:
            return (f"its {rule.metric} {float(row[rule.metric]):.3f} is within {rule.tolerance:.3f} of the best "
                    f"({best:.3f} at epoch {best_epoch})")
    else:
        eligible = pc

        def quality_text(row) -> str:
            return "quality was not measured in this run"
    names = tuple(int(c) for c in eligible["check"])
    if not has_floor:
        row = eligible.loc[eligible["mem_ratio"].idxmin()]
        text = quality_text(row)
        reason = (f"Check {int(row['check'])} (epoch {int(row['epoch'])}){kept}: {text}, and it has the lowest mem "
                  f"ratio of those checks ({row['mem_ratio']:.1%}); this run has no floor, so whether that is above "
                  "what fresh real rows score is unknown.")
        return Recommendation(int(row["check"]), int(row["epoch"]), reason, rule, names, False)
    ok = eligible[eligible["excess_low"] <= rule.max_excess + 1e-12]
    bound = "the floor" if rule.max_excess == 0 else f"{100 * rule.max_excess:.1f} points above the floor"
    if len(ok):
        row = ok.iloc[0] if has_q else ok.iloc[-1]
        which = "the earliest such check" if has_q else "the latest check"
        passed = True
        privacy = (f"its excess {_pts(row['excess'])} points (95 % interval {_pts(row['excess_low'])} to "
                   f"{_pts(row['excess_high'])}) is not significantly above {bound}: {which}")
    else:
        row = eligible.loc[eligible["excess"].idxmin()]
        passed = False
        privacy = (f"no such check is within {bound} (every interval lies above it), and its excess "
                   f"{_pts(row['excess'])} points (95 % interval {_pts(row['excess_low'])} to "
                   f"{_pts(row['excess_high'])}) is the lowest of them")
    reason = f"Check {int(row['check'])} (epoch {int(row['epoch'])}){kept}: {quality_text(row)}, and {privacy}."
    return Recommendation(int(row["check"]), int(row["epoch"]), reason, rule, names, passed)


def _pts(x: float) -> str:
    return percent(x, signed=True, unit="")
