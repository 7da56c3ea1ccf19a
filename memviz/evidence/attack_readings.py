"""Membership attacks read on one scale: each attack's headline at its own calibrated level.

Every membership attack memviz runs (the distance attack, :mod:`memviz.evidence.membership`; the
density-ratio attack, :mod:`memviz.evidence.densityratio`; the targeted shadow-model attack,
:mod:`memviz.attacks.shadow`) gives an :class:`AttackReading` through its result's ``reading()``:
the statistic it is judged by, its interval, the value it takes by chance, and a one-sided p-value
of "better than chance" whose calibration the attack states (``calibration``). ``flags`` is
``p_value < level``, the attack's own rule.

:func:`strongest` is the worst case over attacks: the reading whose p-value is smallest relative to
its level (p / level), so that each attack is read at its own calibrated level. Taking the worst of
K attacks raises the chance that one flags by luck up to K times each level; a verdict that reads
it as one finding controls that (e.g. Holm over the readings: :func:`holm_flags`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from memviz.evidence.ranktests import json_safe


@dataclass(frozen=True)
class AttackReading:
    """One attack's headline (module docstring).

    test : the attack's key in the :class:`~memviz.evidence.suite.Evidence` (``membership``,
        ``density_ratio``, ``targeted``). attack : its name in words.
    statistic : what is read (``AUC``, ``TPR at 0.1 % FPR``). value, low, high : it and its 95 % interval.
    chance : its value when the attacker learns nothing (0.5 for an AUC, α for a TPR at FPR α).
    p_value : one-sided p-value of "better than chance". level : the attack's level; flags = p < level.
    calibration : how the p-value is calibrated, in words. (The attack's sentence is made where a reading is
    read, above the figures: :func:`memviz.verdict.evidence_words.result_sentence`.)
    """

    test: str
    attack: str
    statistic: str
    value: float
    low: float
    high: float
    chance: float
    p_value: float
    level: float
    flags: bool
    calibration: str

    @property
    def strength(self) -> float:
        """p / level: below 1 flags; the smaller, the stronger the evidence at the attack's own level."""
        return self.p_value / self.level if self.level > 0 else math.inf

    def to_dict(self) -> dict:
        return json_safe(asdict(self))


def strongest(readings) -> AttackReading | None:
    """The reading with the smallest p / level (ties: the larger value above chance); None when none."""
    rs = [r for r in readings if r is not None and math.isfinite(r.p_value)]
    if not rs:
        return None
    return min(rs, key=lambda r: (r.strength, -(r.value - r.chance)))


