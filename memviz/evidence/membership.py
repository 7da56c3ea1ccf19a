"""Distance-based membership inference, with the hold-out as the non-members.

The attack: an adversary holding the synthetic table S and a real row x guesses "x was a
training row" when x lies close to some generated row. Its score is

    s(x) = min_{g ∈ S} d(x, g)            (the one engine fitted on S; small = member)

for every training row (members, N) and every hold-out row (non-members, H: real rows the model
never saw). The distance d is the engine's (:mod:`memviz.engine.neighbors`), fitted on S alone
(its column ranges and missing-value means come from S: the attacker holds nothing else).

Figures
-------
* AUC = P(s(member) < s(non-member)) + ½ P(=), with DeLong's 95 % interval
  (:mod:`memviz.evidence.ranktests`). 0.5 is chance; a model that copies pushes it up.
* TPR at FPR α (1 % and 0.1 %): flag a real row when s(x) < y_(k+1), the (k+1)-th smallest
  hold-out score with k = ⌊α H⌋, so that at most k hold-out rows (FPR ≤ α) are flagged;
  TPR = share of training rows flagged, with its Wilson interval given the threshold. Under
  chance TPR ≈ α. With H < 1 / α no false alarm is allowed (k = 0): the figure is then the
  TPR at FPR 0, and ``resolved`` is False.
* ROC curve: (FPR(t), TPR(t)) at every distinct score t, FPR(t) = #{y ≤ t} / H, TPR(t) = #{x ≤ t} / N.
* Per training row: s(x), its nearest generated row, the empirical p-value
  p(x) = (1 + #{j : y_j ≤ s(x)}) / (H + 1) (how often a fresh real row is at least as close),
  Benjamini–Hochberg q-values, and ``exposed``: flagged at FPR 1 %.
* Overlap with the ratio test's over-copied rows (when given): |E ∩ F| beside its expectation
  |E| |F| / N if the two sets were unrelated.

Why the default distance is the standardized one: the paper's distance min-max scales the
numerical part over all reference rows separately for each query, so every query's
numerically nearest row scores 0 on numbers. On tables with few categorical columns s(x) is
then 0 for nearly every row, members and non-members alike, and the attack is as blind as the
ratio test there (docs/method.md §7). ``distance="paper"`` stays available.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from memviz.errors import BadOption
from memviz.evidence.attack_readings import AttackReading
from memviz.measure.floor import wilson_interval
from memviz.engine import DISTANCES
from memviz.engine.neighbors import NeighborEngine
from memviz.tables.holdout import CheckedHoldout, as_table, checked_holdout
from memviz.evidence.ranktests import auc_delong, json_safe
from memviz.measure.multiplicity import bh_qvalues
from memviz.tables.data import Table

#: the distance of the tests beyond the ratio test (module docstring: why not the paper's)
DEFAULT_DISTANCE = "standardized"
#: false-alarm rates at which the attack's hit rate is reported (the first one marks ``exposed``)
FPRS = (0.01, 0.001)
#: training rows named in ``to_dict`` (the full list is :attr:`MembershipResult.rows`)
N_NAMED = 10
#: ROC points kept in ``to_dict`` (a figure's worth; the full curve is on the result)
ROC_POINTS = 200
FORMAT = "memviz.measure.membership/1"  # a format name, kept when the module moved


# ------------------------------------------------------------------ shared plumbing
def check_distance(distance: str) -> str:
    if distance not in DISTANCES:
        raise BadOption(f"distance {distance!r}: unknown (use paper or standardized)")
    return distance


def synthetic_engine(synthetic: Table, distance: str, device: str = "auto", n_jobs: int | None = None) -> NeighborEngine:
    """The engine on the generated rows, scaled by them (ranges, missing-value means): the
    attacker holds the synthetic table only."""
    return NeighborEngine(distance=distance, device=device, n_jobs=n_jobs).fit(synthetic)


# ------------------------------------------------------------------ the result
@dataclass(frozen=True, eq=False)
class MembershipResult:
    """The distance attack's figures (module docstring).

    auc, auc_low, auc_high, auc_se : AUC and its DeLong 95 % interval.
    tpr : per α of :data:`FPRS`, a dict fpr, tpr, low, high (Wilson), false_alarms (k), resolved.
    roc_fpr, roc_tpr : (P,) the full ROC curve, from (0, 0) to (1, 1).
    rows : per training row, most exposed first: row_id, score, nearest_synthetic, p_value,
        q_value, exposed.
    holdout_scores : (H,) the non-members' scores.
    overlap : None, or n_flagged, n_exposed, n_both, expected (the ratio test's over-copied rows).
    """

    distance: str
    n_train: int
    n_holdout: int
    n_synthetic: int
    auc: float
    auc_low: float
    auc_high: float
    auc_se: float
    tpr: tuple
    roc_fpr: np.ndarray
    roc_tpr: np.ndarray
    rows: pd.DataFrame
    holdout_scores: np.ndarray
    overlap: dict | None = None
    seconds: float = 0.0

    @property
    def n_exposed(self) -> int:
        return int(self.rows["exposed"].sum())

    @property
    def better_than_chance(self) -> bool:
        return self.auc_low > 0.5

    @property
    def flags_copying(self) -> bool:
        """Supporting evidence of copying for the audit's verdict (:mod:`memviz.verdict.verdict`): the AUC's
        interval lies above 0.5 (:attr:`better_than_chance`)."""
        return self.better_than_chance

    def reading(self):
        """This attack as an :class:`~memviz.evidence.attack_readings.AttackReading`: the AUC, flagged when its
        DeLong interval lies above 0.5 (one-sided p = 1 − Φ((AUC − ½) / se) below 2.5 %)."""
        p = float(norm.sf((self.auc - 0.5) / self.auc_se)) if self.auc_se > 0 else float(not self.auc > 0.5)
        return AttackReading(test="membership", attack="the distance attack", statistic="AUC", value=self.auc,
                             low=self.auc_low, high=self.auc_high, chance=0.5, p_value=p, level=0.025,
                             flags=self.flags_copying, calibration="DeLong interval against the hold-out")

    def roc_points(self, n: int = ROC_POINTS) -> tuple[np.ndarray, np.ndarray]:
        """About ``n`` points of the ROC curve (:func:`thin_roc`)."""
        return thin_roc(self.roc_fpr, self.roc_tpr, self.n_holdout, n)

    def to_dict(self) -> dict:
        fpr, tpr = self.roc_points()
        named = self.rows.head(N_NAMED)
        return json_safe({
            "format": FORMAT, "test": "membership", "distance": self.distance, "n_train": self.n_train,
            "n_holdout": self.n_holdout, "n_synthetic": self.n_synthetic, "auc": self.auc,
            "auc_ci": [self.auc_low, self.auc_high], "auc_se": self.auc_se, "interval": "delong",
            "tpr_at_fpr": list(self.tpr), "n_exposed": self.n_exposed, "flags_copying": self.flags_copying, "roc": {"fpr": fpr, "tpr": tpr},
            "most_exposed": [{"row_id": int(r.row_id), "score": float(r.score), "p_value": float(r.p_value)}
                             for r in named.itertuples()],
            "overlap": self.overlap, "figures": self.figures(),
            "seconds": self.seconds})

    def figures(self) -> dict:
        """The headline figures under their :data:`memviz.metrics.EVIDENCE_METRICS` keys."""
        return {"mia_auc": self.auc, "mia_tpr_1pct": self.tpr[0]["tpr"], "mia_tpr_01pct": self.tpr[1]["tpr"],
                "mia_exposed": self.n_exposed}



# ------------------------------------------------------------------ the attack
def roc_curve_points(members: np.ndarray, nonmembers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(FPR, TPR) at every distinct score, flagging scores ≤ t; starts at (0, 0)."""
    t = np.unique(np.concatenate([members, nonmembers]))                       # (P,)
    fpr = np.searchsorted(np.sort(nonmembers), t, side="right") / len(nonmembers)
    tpr = np.searchsorted(np.sort(members), t, side="right") / len(members)
    return np.concatenate([[0.0], fpr]), np.concatenate([[0.0], tpr])


def thin_roc(fpr: np.ndarray, tpr: np.ndarray, n_negatives: int, n: int = ROC_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """About ``n`` points of an ROC curve (``fpr`` ascending), dense at small FPR and over [0, 1]: the curve's
    last point at or before each of n/2 FPRs on a log grid from max(1/n_negatives, 10⁻⁶) to 1 and n/2 on a
    linear grid over [0, 1], its first and last points kept. A curve of at most ``n`` points is kept whole."""
    if len(fpr) <= n:
        return fpr, tpr
    grid = np.unique(np.concatenate([np.geomspace(max(1.0 / max(n_negatives, 1), 1e-6), 1.0, n // 2),
                                     np.linspace(0.0, 1.0, n // 2)]))
    idx = np.unique(np.clip(np.searchsorted(fpr, grid, side="right") - 1, 0, len(fpr) - 1))
    idx = np.unique(np.concatenate([[0], idx, [len(fpr) - 1]]))
    return fpr[idx], tpr[idx]


def tpr_at_fpr(members: np.ndarray, nonmembers: np.ndarray, alpha: float) -> dict:
    """The hit rate at false-alarm rate ≤ α (module docstring), with its Wilson interval."""
    ys = np.sort(nonmembers)
    h = len(ys)
    k = int(np.floor(alpha * h + 1e-9))
    threshold = ys[k] if k < h else np.inf
    hits = int(np.sum(members < threshold))
    lo, hi = wilson_interval(hits, len(members))
    return {"fpr": alpha, "tpr": hits / len(members), "low": float(lo), "high": float(hi), "false_alarms": k,
            "resolved": bool(k >= 1), "threshold": float(threshold)}


def membership_inference(train: Table, synthetic, holdout: CheckedHoldout | Table | pd.DataFrame, *,
                         distance: str = DEFAULT_DISTANCE, engine: NeighborEngine | None = None,
                         device: str = "auto", flagged_row_ids=None) -> MembershipResult:
    """The distance attack against ``train`` with ``holdout`` as non-members.

    Parameters
    ----------
    train : the training table (the members).
    synthetic : the generated rows (a Table or a DataFrame with the training columns).
    holdout : real rows the model never trained on (the non-members): a
        :class:`~memviz.tables.holdout.CheckedHoldout` (used as is), else checked by
        :func:`~memviz.tables.holdout.checked_holdout`.
    distance : ``"standardized"`` (default, module docstring) or ``"paper"``.
    engine : a :class:`NeighborEngine` already fitted on ``synthetic`` (:func:`synthetic_engine`).
    flagged_row_ids : the ratio test's over-copied training rows, to count the overlap.

    Returns
    -------
    MembershipResult
    """
    t0 = time.perf_counter()
    check_distance(distance)
    synth = as_table(train, synthetic, "synthetic", "synthetic table")
    hold = checked_holdout(train, holdout).table
    if engine is None:
        engine = synthetic_engine(synth, distance, device)
    elif engine.distance != distance or engine.n_reference_ != len(synth):
        raise BadOption(f"engine: fitted with the {engine.distance} distance on {engine.n_reference_} rows; "
                        f"the attack needs one on the {len(synth)} generated rows with the {distance} distance")
    nb_train = engine.kneighbors(train, k=1)
    x = nb_train.dist[:, 0]                                                    # (N,)
    y = engine.kneighbors(hold, k=1).dist[:, 0]                                # (H,)
    auc, lo, hi, se = auc_delong(x, y)
    tpr = tuple(tpr_at_fpr(x, y, a) for a in FPRS)
    fpr_c, tpr_c = roc_curve_points(x, y)
    n_le = np.searchsorted(np.sort(y), x, side="right")                        # (N,) #{y ≤ s(x)}
    p = (1.0 + n_le) / (len(y) + 1.0)
    exposed = x < tpr[0]["threshold"]
    rows = pd.DataFrame({"row_id": train.row_ids, "score": x, "nearest_synthetic": nb_train.row_id[:, 0],
                         "p_value": p, "q_value": bh_qvalues(p), "exposed": exposed})
    rows = rows.sort_values(["score", "row_id"], kind="stable").reset_index(drop=True)
    overlap = None
    if flagged_row_ids is not None:
        flagged = np.intersect1d(np.asarray(flagged_row_ids, dtype=np.int64), train.row_ids)
        ex_ids = train.row_ids[exposed]
        overlap = {"n_flagged": int(len(flagged)), "n_exposed": int(len(ex_ids)),
                   "n_both": int(len(np.intersect1d(flagged, ex_ids))),
                   "expected": len(flagged) * len(ex_ids) / len(train)}
    return MembershipResult(distance, len(train), len(hold), len(synth), auc, lo, hi, se, tpr, fpr_c, tpr_c, rows,
                            y, overlap, time.perf_counter() - t0)
