"""The verdict's evidence as one family of tests, its error controlled by Holm's step-down.

Each member tests "the generated rows are fresh real rows" against one way of copying, each read against
the hold-out (real rows the model never saw), each with a one-sided p-value that is valid under that
null:

==============  ==========================================================================================
member          the test
==============  ==========================================================================================
``ratio``       the ratio test's flagged share against the floor, p1 = X/M vs p0 = K/H: the one-sided score
                test z = (p1 − p0) / sqrt(p̄ (1 − p̄) (1/M + 1/H)), p̄ = (X + K)/(M + H), p = 1 − Φ(z)
                (:func:`memviz.measure.floor.excess_p_value`)
``too_close``   generated rows nearer their training row than all but 5 % of the hold-out rows, than all but
                1 %, and than every one: exact Beta-Binomial p at each level, Bonferroni over the levels
                (:mod:`memviz.measure.tooclose`)
``identical``   generated rows equal to a training row, against the hold-out's share and (when they repeat each
                other as often) the training rows' own: Fisher's exact p
``partial``     generated rows equal to a training row in every column but one (or two), against the same share
                of the reference rows: Fisher's exact p, Bonferroni over the two levels
                (:mod:`memviz.measure.partial`)
``rows``        some training row has more close copies than real rows give it: Simes' p of the exact per-row
                test, the same test that names the rows (:mod:`memviz.measure.tooclose`)
``local``       some region of the data copies (the data-copying test's cells,
                :mod:`memviz.evidence.datacopying`): the smallest cell q-value; a member only when the
                test ran
==============  ==========================================================================================

Holm (:func:`memviz.measure.multiplicity.holm`) adjusts the m members' p-values; a member holds when its
adjusted p is at most :data:`ALPHA` (5 %), so under the null the chance that any holds is at most 5 %,
whatever the dependence between them. The verdict (:mod:`memviz.verdict.verdict`) is ``copying`` when
a member that reads the whole table holds (ratio, too_close, identical, partial), ``rows_over_copied`` when
rows are named without it, ``regional_copying`` when only ``local`` holds, and says which members carry it.

Rows are named in a second stage, gated by the first (Benjamini & Bogomolov's selective inference, one
family selected): only when some member holds, the per-row test with the training rows added to the
reference names the rows whose q-value is at most α (:attr:`Family.naming_level`). So with no copying at all
a row is named at most as often as the family holds (≤ α), and where the table copies the named rows keep
the false discovery rate of Benjamini–Hochberg at α.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from memviz.io import to_jsonable
from memviz.measure.multiplicity import holm
from memviz.measure.tails import positive

#: the family-wise error rate
ALPHA = 0.05
MEMBERS = ("ratio", "too_close", "identical", "partial", "local", "rows")
#: the members that read the whole table: one of them holding is ``copying``
TABLE_MEMBERS = ("ratio", "too_close", "identical", "partial")
#: each member in words (the verdict's "carried by", the report)
MEMBER_NAMES = {"ratio": "the ratio test", "too_close": "the too-close share", "identical": "the identical share",
                "partial": "the near-verbatim share",
                "local": "the data-copying test's regions", "rows": "the per-row test"}


@dataclass(frozen=True)
class Member:
    """One test of the family: name (:data:`MEMBERS`), p, p_adjusted (Holm), holds (p_adjusted ≤ α), and
    level: the α / (m − j) Holm compared its p with (j its rank from the smallest), NaN when an earlier one
    failed first."""

    name: str
    p: float
    p_adjusted: float
    holds: bool
    level: float

    def to_dict(self) -> dict:
        return to_jsonable({"name": self.name, "p": self.p, "p_adjusted": self.p_adjusted, "holds": self.holds,
                            "level": self.level})


@dataclass(frozen=True)
class Family:
    """The members that ran, in :data:`MEMBERS` order, and α."""

    members: tuple[Member, ...] = ()
    alpha: float = ALPHA

    def get(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)

    @property
    def holding(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.members if m.holds)

    @property
    def copying(self) -> bool:
        """A member that reads the whole table holds (:data:`TABLE_MEMBERS`): the table copies."""
        return any(m.holds and m.name in TABLE_MEMBERS for m in self.members)

    @property
    def regional(self) -> bool:
        """The data-copying test's regions hold (``local``)."""
        m = self.get("local")
        return m is not None and m.holds

    @property
    def naming_level(self) -> float:
        """The q-value level at which training rows are named: α when some member holds, else 0 (no row is
        named: module docstring)."""
        return self.alpha if self.holding else 0.0

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "members": [m.to_dict() for m in self.members], "holding": list(self.holding)}


def family(pvalues: dict[str, float], alpha: float = ALPHA) -> Family:
    """The :class:`Family` of the members given (name → p; None or NaN: the member did not run)."""
    names = [n for n in MEMBERS if pvalues.get(n) is not None and math.isfinite(float(pvalues[n]))]
    p = np.array([positive(pvalues[n]) for n in names])        # a tail that underflowed is tiny, never 0
    if not len(names):
        return Family((), alpha)
    adj = holm(p)
    order = np.argsort(p, kind="stable")
    m = len(names)
    level = np.full(m, math.nan)
    for j, i in enumerate(order):                       # step-down: stop at the first that fails
        level[i] = alpha / (m - j)
        if p[i] > level[i]:
            break
    return Family(tuple(Member(n, float(p[i]), float(adj[i]), bool(adj[i] <= alpha), float(level[i]))
                        for i, n in enumerate(names)), alpha)
