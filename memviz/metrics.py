"""What every reported figure means: its name, its goal and its range, declared once.

As in SDMetrics, a metric declares its own ``name``, ``goal`` (maximize, minimize, or a
target value) and range (``min_value``, ``max_value``); tables, figures and verdicts read
these declarations instead of restating them. The formulas live where the figures are
computed (the module named in ``source``); this registry only describes them.

Shares are stored as fractions in [0, 1] and shown as percentages.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAXIMIZE, MINIMIZE, TARGET = "maximize", "minimize", "target"

#: per-term Mem-AUC contributions are rounded to multiples of 1 / AUC_QUANTUM_INV (about 1e-9)
AUC_QUANTUM_INV = float(2 ** 30)


def auc_terms(ratio: np.ndarray) -> np.ndarray:
    """The Mem-AUC term of each generated row: ``1 - r``, 0 where r is NaN, on a 2**-30 grid.

    Mem-AUC(x) = sum over checks c and generated rows g with NN1(g) = x of (1 - r_c(g)).
    Quantized to multiples of 2**-30, every sum of up to 2**23 terms is exact in float64,
    hence independent of the order of the rows (ties rank the same). Shape: (S,) -> (S,).
    """
    ratio = np.asarray(ratio, dtype=np.float64)
    one_minus_r = np.where(np.isfinite(ratio), 1.0 - ratio, 0.0)
    return np.round(one_minus_r * AUC_QUANTUM_INV) / AUC_QUANTUM_INV


@dataclass(frozen=True)
class Metric:
    """One reported figure.

    Attributes
    ----------
    key : column name in results tables (``mem_ratio``, ``shape``, ...).
    name : what a reader sees ("Memorization ratio").
    goal : ``"maximize"``, ``"minimize"`` or ``"target"`` (closest to ``target`` is best).
    min_value, max_value : the range the figure can take (None: unbounded on that side).
    target : the ideal value when ``goal == "target"``.
    percent : shown as a percentage (a share in [0, 1]).
    reference : the results column holding this metric's reference line, if any.
    source : the module that computes it (and documents its formula).
    """

    key: str
    name: str
    goal: str
    min_value: float | None = 0.0
    max_value: float | None = 1.0
    target: float | None = None
    percent: bool = True
    reference: str | None = None
    source: str = ""

    @property
    def better(self) -> str:
        """"lower", "higher" or "closer to X" (for captions and legends)."""
        if self.goal == MINIMIZE:
            return "lower"
        if self.goal == MAXIMIZE:
            return "higher"
        return f"closer to {self.target:.0%}" if self.percent else f"closer to {self.target:g}"

    def is_better(self, a: float, b: float) -> bool:
        """Is value ``a`` better than value ``b``?"""
        if self.goal == MINIMIZE:
            return a < b
        if self.goal == MAXIMIZE:
            return a > b
        return abs(a - self.target) < abs(b - self.target)


_M = "memviz.measure.memorization"
_F = "memviz.measure.floor"
_E = "memviz.evaluate.report"
_C = "memviz.compare.results"
_P = "memviz.compare.protocol"
_MI = "memviz.measure.membership"
_DC = "memviz.measure.datacopying"
_AI = "memviz.measure.attribute"
_R = "memviz.tables.redact"

#: every figure of a comparison's results table, in display order
METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("mem_ratio", "Memorization ratio", MINIMIZE, source=_M),
    Metric("mem_ratio_pruned", "Memorization ratio vs the kept rows", MINIMIZE, source=_M),
    Metric("mem_auc", "Mem-AUC", MINIMIZE, source=_M),
    Metric("mem_auc_pruned", "Mem-AUC vs the kept rows", MINIMIZE, source=_M),
    Metric("relative_reduction", "Relative reduction of the mem ratio vs baseline", MAXIMIZE, None, 1.0, source=_C),
    Metric("relative_reduction_auc", "Relative reduction of Mem-AUC vs baseline", MAXIMIZE, None, 1.0, source=_C),
    Metric("floor", "Floor: fresh real rows flagged", MINIMIZE, source=_F),
    Metric("floor_low", "Floor, 95 % interval low", MINIMIZE, source=_F),
    Metric("floor_high", "Floor, 95 % interval high", MINIMIZE, source=_F),
    Metric("n_holdout", "Hold-out rows (real rows no model trained on)", MAXIMIZE, 0.0, None, percent=False,
           source=_F),
    Metric("excess", "Excess over the floor", MINIMIZE, -1.0, 1.0, source=_F),
    Metric("excess_low", "Excess over the floor, 95 % interval low", MINIMIZE, -1.0, 1.0, source=_F),
    Metric("excess_high", "Excess over the floor, 95 % interval high", MINIMIZE, -1.0, 1.0, source=_F),
    Metric("mem_ratio_kept", "Memorization ratio vs the kept original rows (pruning)", MINIMIZE, source=_P),
    Metric("floor_kept", "Floor vs the kept rows: fresh real rows flagged (pruning)", MINIMIZE, source=_P),
    Metric("floor_kept_low", "Floor vs the kept rows, 95 % interval low", MINIMIZE, source=_P),
    Metric("floor_kept_high", "Floor vs the kept rows, 95 % interval high", MINIMIZE, source=_P),
    Metric("control_kept", "Control: the baseline's rows vs the same kept rows (pruning)", MINIMIZE, source=_P),
    Metric("n_flagged_removed", "Flagged generated rows whose nearest row was removed", MINIMIZE, 0.0, None,
           percent=False, source=_P),
    Metric("shape", "Shape (column shapes similarity)", MAXIMIZE, source=_E),
    Metric("trend", "Trend (column pair trends similarity)", MAXIMIZE, source=_E),
    Metric("mle", "MLE (score on the real test split)", MAXIMIZE, reference="mle_real", source=_E),
    Metric("dcr_share", "DCR share (closest real row is a training row)", TARGET, target=0.5, source=_E),
    # an audit's figures (memviz.audit)
    Metric("copy_share", "Copy share: generated rows copied beyond chance", MINIMIZE, None, 1.0,
           source="memviz.audit.share"),
    Metric("identical_share", "Generated rows identical to a training row", MINIMIZE,
           source="memviz.measure.closeness"),
    Metric("holdout_identical_share", "Hold-out rows identical to a training row", MINIMIZE, source=_F),
    Metric("n_over_copied", "Training rows copied far more than chance (q < 0.05)", MINIMIZE, 0.0, None,
           percent=False, source="memviz.measure.rownull"),
)}

#: the tests beyond the ratio test (``memviz.measure.evidence``): each read against the hold-out
EVIDENCE_METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("mia_auc", "Membership attack AUC (0.5 = chance)", TARGET, target=0.5, percent=False, source=_MI),
    Metric("mia_tpr_1pct", "Membership attack: training rows found at 1 % false alarms", MINIMIZE, source=_MI),
    Metric("mia_tpr_01pct", "Membership attack: training rows found at 0.1 % false alarms", MINIMIZE, source=_MI),
    Metric("mia_exposed", "Training rows exposed at 1 % false alarms", MINIMIZE, 0.0, None, percent=False,
           source=_MI),
    Metric("data_copying_ct", "Data-copying statistic C_T (negative = copying)", TARGET, None, None, target=0.0,
           percent=False, source=_DC),
    Metric("data_copying_p", "Data-copying p-value (small = copying)", MAXIMIZE, percent=False, source=_DC),
    Metric("data_copying_share", "Share of the data in regions that copy", MINIMIZE, source=_DC),
    Metric("attribute_rate", "Attribute attack: training rows whose secret is revealed", MINIMIZE, source=_AI),
    Metric("attribute_control", "Attribute attack on fresh rows (the control)", MINIMIZE, source=_AI),
    Metric("attribute_excess", "Attribute attack: excess over the control", MINIMIZE, -1.0, 1.0, source=_AI),
    Metric("joint_k", "Smallest group of training rows sharing what a report shows", MAXIMIZE, 0.0, None,
           percent=False, source=_R),
)}


def metric(key: str) -> Metric:
    """The declaration of ``key`` (KeyError names the known keys)."""
    try:
        return METRICS[key] if key in METRICS else EVIDENCE_METRICS[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r} (known: {', '.join([*METRICS, *EVIDENCE_METRICS])})") from None
