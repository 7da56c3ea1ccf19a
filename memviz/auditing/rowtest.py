"""What the per-row test can see at an audit's sizes.

The per-row test of close copies (:mod:`memviz.measure.dcr`) is an exact conditional test: given the
close copies n_i a training row draws from the generated and the reference rows together, its generated
count is Binomial(n_i, s) under the null, s = M / (M + R), whatever the rows' own propensities. So its
calibration needs no simulation (rows are named only once the verdict's family holds, so with no copying
a row is named at most 5 % of the time; ``benchmarks/bench_verdict.py`` measures it on fresh real rows),
and its power has a closed form: a row with c close copies and no close real row has p = s^c, and it is
named on its own when s^c is at most the level over the rows that entered
(:meth:`memviz.measure.dcr.CloseCopies.copies_needed`). That count is what the audit states: few copies
where the reference outnumbers the generated rows, many where M ≫ R.
"""
from __future__ import annotations

from memviz.auditing.family import ALPHA
from memviz.auditing.result import LOW_POWER_COPIES, RowTest


def row_test(close, n_reference_rows: int, n_holdout: int, n_generated: int) -> RowTest:
    """The :class:`RowTest` of a :class:`~memviz.measure.dcr.CloseCopies` (None: the test did not run, or
    ``n_holdout`` = 0: no hold-out). The count needed is the one that names a lone row at the level rows are
    named at once the family holds (α, :attr:`memviz.auditing.family.Family.naming_level`)."""
    if n_holdout == 0:
        return RowTest("no_holdout", n_reference_rows, 0, n_generated)
    if close is None:
        return RowTest("untested", 0, n_holdout, n_generated)
    need = close.copies_needed(ALPHA)
    status = "exact" if need is not None and need <= LOW_POWER_COPIES else "low_power"
    return RowTest(status, close.n_reference, close.n_holdout, close.n_generated, share=close.share,
                   copies_needed=need, note=close.reference_note)
