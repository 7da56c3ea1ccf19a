"""What the per-row test can see at an audit's sizes.

The per-row test of close copies (:mod:`memviz.measure.tooclose`) is an exact conditional test: given the
close copies n_i a training row draws from the generated and the reference rows together, its generated
count is Binomial(n_i, s) under the null, s = M / (M + R), whatever the rows' own propensities. So its
calibration needs no simulation (rows are named only once the verdict's family holds, so with no copying
a row is named at most 5 % of the time; ``benchmarks/bench_verdict.py`` measures it on fresh real rows),
and its power has a closed form: a row with c close copies and no close real row has p = s^c, and it is
named on its own when s^c is at most the level over the rows that entered
(:meth:`memviz.measure.tooclose.CloseCopies.copies_needed`). That count is what the audit states: few copies
where the reference outnumbers the generated rows, many where M ≫ R.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from memviz.io import to_jsonable
from memviz.verdict.family import ALPHA


@dataclass(frozen=True)
class RowTest:
    """What the per-row test of close copies (:mod:`memviz.measure.tooclose`) can see at these sizes
    (:func:`memviz.verdict.rowtest.row_test`).

    status : ``exact`` (it ran: an exact conditional test, so it names a row falsely at most at its level
        whatever the table), ``low_power`` (it ran, but a row needs more than :data:`LOW_POWER_COPIES` close
        copies to be named), ``untested`` (the hold-out's rows were not at hand) or ``no_holdout``.
    n_reference, n_holdout, n_generated : training rows in the reference (0: the hold-out alone), H and M.
    share : M / (M + R), the chance that a close copy of a row comes from the generated rows under the null.
    copies_needed : the fewest close copies that name a row with no close real row (None: none up to 10,000).
    note : why the training rows are not in the reference, if they are not.
    """

    status: str
    n_reference: int
    n_holdout: int
    n_generated: int
    share: float = math.nan
    copies_needed: int | None = None
    note: str = ""

    def sentence(self) -> str:
        if self.status == "no_holdout":
            return "The per-row test needs a hold-out."
        if self.status == "untested":
            return "The per-row test did not run: the hold-out's rows were not at hand."
        ref = (f"{self.n_holdout:,} hold-out rows and the {self.n_reference:,} training rows themselves"
               if self.n_reference else f"{self.n_holdout:,} hold-out rows")
        need = (f"a row needs at least {self.copies_needed:,} close copies, and no close real row, to be named"
                if self.copies_needed else "no number of close copies can name a row")
        return (f"Per-row test (exact, {self.n_generated:,} generated rows against {ref}): a training row is named "
                f"when it has more close copies than real rows would give it; at these sizes {need}."
                + (f" {self.note[0].upper()}{self.note[1:]}." if self.note else ""))

    def to_dict(self) -> dict:
        return to_jsonable({"status": self.status, "n_reference": self.n_reference, "n_holdout": self.n_holdout,
                            "n_generated": self.n_generated, "share": self.share,
                            "copies_needed": self.copies_needed, "note": self.note, "sentence": self.sentence()})


#: a per-row test that needs more close copies than this to name a row is ``low_power``
LOW_POWER_COPIES = 20


def row_test(close, n_reference_rows: int, n_holdout: int, n_generated: int) -> RowTest:
    """The :class:`RowTest` of a :class:`~memviz.measure.tooclose.CloseCopies` (None: the test did not run, or
    ``n_holdout`` = 0: no hold-out). The count needed is the one that names a lone row at the level rows are
    named at once the family holds (α, :attr:`memviz.verdict.family.Family.naming_level`)."""
    if n_holdout == 0:
        return RowTest("no_holdout", n_reference_rows, 0, n_generated)
    if close is None:
        return RowTest("untested", 0, n_holdout, n_generated)
    need = close.copies_needed(ALPHA)
    status = "exact" if need is not None and need <= LOW_POWER_COPIES else "low_power"
    return RowTest(status, close.n_reference, close.n_holdout, close.n_generated, share=close.share,
                   copies_needed=need, note=close.reference_note)
