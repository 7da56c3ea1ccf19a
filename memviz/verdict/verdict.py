"""One verdict, derived only from an :class:`~memviz.auditing.result.Audit`: a code and one plain sentence.

Every page, the report and the CLI print :attr:`Audit.verdict` verbatim. The evidence is one family of
tests, Holm-adjusted (:mod:`memviz.verdict.family`): the ratio test against its floor, the too-close
share, the identical share, the data-copying test's regions, and the per-row test of close copies, each
read against real rows the model never saw. The **code** is the first row of this table that applies:

=======================  =======  ===========================================================================
code                     tone     when
=======================  =======  ===========================================================================
``no_holdout``           warn     no hold-out: nothing tells copying from resemblance (refused)
``copying``              bad      a member that reads the whole table holds (the ratio test, too close,
                                  identical, near-verbatim: :data:`memviz.verdict.family.TABLE_MEMBERS`): the
                                  table copies (the sentence says which evidence carries it)
``rows_over_copied``     warn     no such member holds but training rows are named: some have far more close
                                  copies than real rows give them: review them
``regional_copying``     warn     only the data-copying test's regions hold: in one part of the data the
                                  generated rows sit nearer the training rows than real rows do, while no
                                  row-level test finds copies (the sentence names the region and its distances)
``quality_too_low``      bad      nothing holds, but Shape is more than :data:`QUALITY_GAP` below the reference
                                  (the hold-out's Shape): the output is too unlike the data for "no copying"
                                  to mean anything (refused)
``no_copying``           good     no member holds
=======================  =======  ===========================================================================

One region alone does not make ``copying``: the data-copying test compares the distances of the generated and
the real rows inside k-means cells, and an honest model that places its rows near the dense parts of a region
moves them there without copying any row (memviz's own TabDDPM sample on an unseen table: every row-level
figure within chance, one region at Holm 0.016: ``benchmarks/bench_verdict.py``'s ``models`` part measures how
often). ``--fail-on copying`` passes it; ``--fail-on rows`` fails on it, as on named rows.

So "no copying" never stands beside an identical or too-close share the family finds above the hold-out's,
and no generator's other rows can cancel its copies: each test reads how close every generated row is, not
an average of flags, and the too-close share is read at the tail too (nearer than 99 % of real rows, and than
every one of them: :data:`memviz.measure.tooclose.TAIL_QUANTILES`), so copies that fill no more than α's 5 % quota
are still seen. A quality too low refuses only a clean bill: verbatim copies are copying whatever the
quality of the rest.

**Qualifiers** (``Verdict.qualifiers``, in this order) weaken the code; each adds a clause before
the sentence:

======================  =====================================================================================
qualifier               when
======================  =====================================================================================
``run_cancelled``       the warm-up run was cancelled (its last check is not the end of training)
``run_interrupted``     the run's writer is gone without finishing (killed, machine restarted)
``run_running``         the run is still training
``run_failed``          the run stopped with an error
``few_checks``          a run with fewer than :data:`MIN_CHECKS` checks: its trajectory is not known
``rows_untested``       the closeness tests did not run (the hold-out's rows were not at hand)
``rows_low_power``      the per-row test needs more than 20 close copies to name a row at these sizes
``ratio_blind``         the ratio test flags real rows too often to see copying here (its floor's interval lies
                        above :data:`HIGH_FLOOR`): the verdict rests on how close the rows are (the
                        standardized distance), and says so
``quality_unknown``     no quality figure (Shape): the verdict cannot rule out a useless model
``evidence_disagrees``  a supporting test outside the family (the membership attack, the density-ratio attack,
                        the data-copying test's global statistic) points to copying the family did not find,
                        and would hold inside it (its p, Holm-adjusted with the family's members, is at most
                        α); the clause names it
======================  =====================================================================================

Plain text only: callers escape it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, get_args

from memviz.errors import BadOption
from memviz.evidence.suite import TEST_NAMES, Evidence
from memviz.io import to_jsonable
from memviz.measure.multiplicity import holm
from memviz.text import pct, percent, points, share_digits
from memviz.verdict.family import MEMBER_NAMES, Family
from memviz.verdict.provenance import Provenance
from memviz.verdict.rowtest import RowTest

if TYPE_CHECKING:
    import pandas as pd

    from memviz.measure.tooclose import CloseCopies


class AuditFigures(Protocol):
    """What the verdict and the release gate read of an audit: its figures, its tests and where it came from.

    :class:`memviz.auditing.result.Audit` is one; the verdict's room names only what it reads, so it needs
    nothing from the room above it that carries the result and its writers.
    """

    @property
    def mem_ratio(self) -> float: ...
    @property
    def floor(self) -> float | None: ...
    @property
    def floor_ci(self) -> tuple[float, float] | None: ...
    @property
    def excess(self) -> float | None: ...
    @property
    def excess_ci(self) -> tuple[float, float] | None: ...
    @property
    def copy_share(self) -> float | None: ...
    @property
    def n_over_copied(self) -> int: ...
    @property
    def identical_share(self) -> float: ...
    @property
    def shape(self) -> float | None: ...
    @property
    def shape_reference(self) -> float | None: ...
    @property
    def row_test(self) -> RowTest: ...
    @property
    def provenance(self) -> Provenance: ...
    @property
    def evidence(self) -> Evidence: ...
    @property
    def close(self) -> CloseCopies | None: ...
    @property
    def family(self) -> Family: ...
    @property
    def over_copied_rows(self) -> pd.DataFrame: ...
    @property
    def verbatim_rows(self) -> pd.DataFrame: ...
    @property
    def near_verbatim_rows(self) -> pd.DataFrame: ...

#: above this floor (its whole interval) the ratio test flags almost every real row: it cannot see copying
HIGH_FLOOR = 0.80
#: Shape (0–1) this far below the reference (the hold-out's Shape) refuses a "no copying". On Adult TabDDPM
#: scores 0.95, TVAE 0.84 and CTGAN 0.86 (README, bench_warmup) where fresh real rows score 0.97–0.99;
#: uniform noise in every column scores 0.47 on the sample (tests/auditing): TVAE passes, noise does not
QUALITY_GAP = 0.25
#: a run with fewer checks than this gets the ``few_checks`` qualifier
MIN_CHECKS = 3

#: a verdict's code
Code = Literal["no_holdout", "copying", "rows_over_copied", "regional_copying", "quality_too_low", "no_copying"]
#: a verdict's tone (a card line's :data:`memviz.viz.card.TONES` but neutral)
VerdictTone = Literal["good", "bad", "warn"]
#: what qualifies a verdict (a run not finished, few checks, a test that cannot see, ...)
Qualifier = Literal["run_cancelled", "run_interrupted", "run_running", "run_failed", "few_checks", "rows_untested",
                    "rows_low_power", "ratio_blind", "quality_unknown", "evidence_disagrees"]
#: each code's tone, in the order of :data:`Code`
CODES: dict[Code, VerdictTone] = {"no_holdout": "warn", "copying": "bad", "rows_over_copied": "warn",
                                  "regional_copying": "warn", "quality_too_low": "bad", "no_copying": "good"}
QUALIFIERS: tuple[Qualifier, ...] = get_args(Qualifier)
#: what a copy share below zero (the model's rows flagged less often than the floor) is said as, wherever
#: the share is shown: a negative share of copies has no meaning of its own
BELOW_FLOOR = "below the floor (the test flags the model's rows less often than real rows)"
#: the codes that refuse to judge
REFUSALS: tuple[Code, ...] = ("no_holdout", "quality_too_low")


#: a release gate (``memviz audit --fail-on``): the codes each level fails on; a refusal fails every level but
#: ``never`` (a gate that passed whenever it could not judge would pass a table audited without a hold-out)
GATES = {"copying": ("copying",), "rows": ("copying", "rows_over_copied", "regional_copying"), "never": ()}
#: exit codes of the gate: passed, failed on the verdict, failed because the audit could not judge
#: (2 stays a user mistake, as for every command)
EXIT_PASSED, EXIT_FAILED, EXIT_REFUSED = 0, 3, 4


def gate(code: str, fail_on: str) -> int:
    """The exit code of a release gate at level ``fail_on`` (:data:`GATES`) for verdict ``code``."""
    if fail_on not in GATES:
        raise BadOption(f"--fail-on {fail_on!r}: use {', '.join(GATES)}")
    if fail_on == "never":
        return EXIT_PASSED
    if code in REFUSALS:
        return EXIT_REFUSED
    return EXIT_FAILED if code in GATES[fail_on] else EXIT_PASSED


#: what to do next, per code (plain text; the dashboard's "Next step" line)
NEXT_STEPS = {
    "no_holdout": "Give real rows the model never saw (a test split) as the hold-out: they measure what resemblance "
                  "alone gives, so copying can be told apart from it.",
    "quality_too_low": "Improve the generator first (train longer, or another model): privacy figures of rows this "
                       "unlike the data do not say whether it would copy once it works.",
    "copying": "Do not release this table as it is. Look at the copied rows (rows.csv, the report: how close each "
               "copy is); whoever trained the model can remove them from the training table (memviz prune) and "
               "audit the retrained model's rows again.",
    "rows_over_copied": "Review the named rows (rows.csv): each has far more close copies than real rows would give "
                        "it; the generated rows near them should not be released, and whoever trained the model can "
                        "remove them from the training table.",
    "regional_copying": "Look at the region the sentence names (the report's distances there): no generated row is "
                        "shown to copy one training row, but in that part of the data the generated rows sit nearer "
                        "the training rows than real rows do.",
    "no_copying": "No evidence that the model copies beyond chance at these sizes; keep the hold-out apart and "
                  "audit again after retraining.",
}


@dataclass(frozen=True)
class Verdict:
    """code (a key of :data:`CODES`), sentence (plain text), tone (good / bad / warn), qualifiers, and
    next_step (:data:`NEXT_STEPS`, prefixed when the run is not finished)."""

    code: Code
    sentence: str
    tone: VerdictTone
    qualifiers: tuple[Qualifier, ...] = ()
    next_step: str = ""

    def to_dict(self) -> dict:
        return {"code": self.code, "sentence": self.sentence, "tone": self.tone, "qualifiers": list(self.qualifiers),
                "next_step": self.next_step}


def _rows(n: int) -> str:
    return f"{n:,} training row{'s' * (n != 1)}"


def qualifiers(a: AuditFigures) -> tuple[Qualifier, ...]:
    """The qualifiers that apply to ``a`` (module docstring), in table order."""
    out = []
    run = a.provenance.run
    if run is not None:
        status = {"cancelled": "run_cancelled", "interrupted": "run_interrupted", "running": "run_running",
                  "failed": "run_failed"}.get(run.status)
        if status:
            out.append(status)
        if run.n_checks < MIN_CHECKS:
            out.append("few_checks")
    if a.floor is not None:
        if a.row_test.status == "untested":
            out.append("rows_untested")
        elif a.row_test.status == "low_power":
            out.append("rows_low_power")
        if _blind(a):
            out.append("ratio_blind")
    if a.shape is None:
        out.append("quality_unknown")
    if not a.family.copying and _disagreeing(a):
        out.append("evidence_disagrees")
    return tuple(out)


def _blind(a: AuditFigures) -> bool:
    return a.floor_ci is not None and a.floor_ci[0] > HIGH_FLOOR


def _disagreeing(a: AuditFigures) -> list[str]:
    """The supporting tests outside the family that read as copying and would hold inside it: their one-sided p,
    Holm-adjusted together with the family's members, at most α (a test that flags at its own level alone is
    one of several chances to flag by luck: 5 of 132 fresh-row audits carried the membership clause)."""
    flagged = {k: _support_p(e) for k, e in a.evidence.items() if getattr(e, "flags_copying", None) is True}
    flagged = {k: p for k, p in flagged.items() if p is not None and math.isfinite(p)}
    if not flagged:
        return []
    ps = [m.p for m in a.family.members] + list(flagged.values())
    adj = holm(ps)[len(a.family.members):]
    return [k for k, q in zip(flagged, adj) if q <= a.family.alpha]


def _support_p(e) -> float | None:
    """A supporting test's one-sided p of copying: its attack reading's, else its own ``p_value``."""
    reading = getattr(e, "reading", None)
    if callable(reading):
        return float(reading().p_value)
    p = getattr(e, "p_value", None)
    return None if p is None else float(p)


def _prefix(a: AuditFigures, quals: tuple[str, ...]) -> str:
    run = a.provenance.run
    bits = []
    for q in quals:
        if q.startswith("run_") and run is not None:
            word = {"run_cancelled": "was cancelled", "run_interrupted": "was interrupted",
                    "run_running": "is still running", "run_failed": "failed"}[q]
            at = f" at epoch {run.epoch} of {run.epochs}" if run.epochs else f" at epoch {run.epoch}"
            bits.append(f"the run {word}{at if q != 'run_running' else ''}")
        elif q == "few_checks" and run is not None:
            bits.append(f"only {run.n_checks} check{'s' * (run.n_checks != 1)}")
        elif q == "rows_untested":
            bits.append("how close the rows are was not measured (the hold-out's rows were not at hand)")
        elif q == "rows_low_power":
            need = a.row_test.copies_needed
            bits.append("the per-row test has little power at these sizes"
                        + (f" (a row needs {need:,} close copies)" if need else ""))
        elif q == "ratio_blind":
            bits.append(f"the ratio test flags {pct(a.floor)} of real rows on this table, so it cannot see copying "
                        "and the verdict reads how close the rows are")
        elif q == "quality_unknown":
            bits.append("quality not measured")
        elif q == "evidence_disagrees":
            bits.append(_evidence_clause(a))
    if not bits:
        return ""
    provisional = any(q.startswith("run_") or q == "few_checks" for q in quals)
    return ("Provisional" if provisional else "Qualified") + " (" + "; ".join(bits) + "): "


def _evidence_clause(a: AuditFigures) -> str:
    """Names the supporting tests outside the family that read as copying: "the membership attack points to
    copying"."""
    names = [TEST_NAMES.get(k, k.replace("_", " ")) for k in _disagreeing(a)]
    said = " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{said} point{'s' * (len(names) == 1)} to copying the other tests did not find"


def code_of(a: AuditFigures) -> Code:
    """The verdict code of ``a`` (first row of the module's table that applies)."""
    if a.floor is None:
        return "no_holdout"
    if a.family.copying:
        return "copying"
    if a.n_over_copied:
        return "rows_over_copied"
    if a.family.regional:
        return "regional_copying"
    if a.shape is not None and a.shape_reference is not None and a.shape < a.shape_reference - QUALITY_GAP:
        return "quality_too_low"
    return "no_copying"


def _finding(a: AuditFigures, name: str) -> str:
    """One member of the family in words, with its figures."""
    c = a.close
    if name == "identical":
        return _identical(c)
    if name == "too_close":
        return _too_close(c.carrying_level)
    if name == "partial":
        return _partial(c.carrying_partial)
    if name == "ratio":
        return (f"the ratio test flags {pct(a.mem_ratio)} of its rows against {pct(a.floor)} of real rows (copy share "
                f"{pct(a.copy_share)})")
    if name == "local":
        return _region(a)
    if name == "rows":
        return _named(a) if a.n_over_copied else "some training rows have more close copies than real rows give them"
    return ""


def _identical(c) -> str:
    """"1.0 % of its rows are identical to a training row against 0.0 % of real rows it never saw (and 0.0 % of
    the training rows repeat another)"."""
    ref = c.identical
    if ref is None:
        return (f"{pct(c.identical_share)} of its rows are identical to a training row against "
                f"{pct(c.holdout_identical_share)} of real rows it never saw")
    d = share_digits(ref.reference_share) if ref.share > 0 else 1
    own = (f", and {pct(ref.training_share, d)} of the training rows repeat another" if ref.pooled else "")
    return (f"{pct(ref.share, d)} of its rows ({ref.n:,}) are identical to a training row against "
            f"{pct(ref.holdout_share, d)} of real rows it never saw{own}")


def _columns_said(by_column, n: int) -> str:
    """"'hour'" when one column holds most of the rows, else "'hour' (100), 'age' (40) and others"."""
    if not by_column:
        return "one column"
    (top, k), rest = by_column[0], by_column[1:]
    if k >= 0.8 * n or not rest:
        return f"'{top}'" + (f" ({k:,} of them)" if rest else "")
    shown = ", ".join(f"'{c}' ({v:,})" for c, v in by_column[:3])
    return shown + (" and others" if len(by_column) > 3 else "")


def _partial(lv) -> str:
    """"150 rows (5.0 %) equal a training row in every column but 'hour', against 0.3 % of real rows"."""
    if lv is None:
        return ""
    but = "one" if lv.altered == 1 else f"at most {lv.altered}"
    d = share_digits(lv.reference_share)
    cols = _columns_said(lv.by_column, lv.n)
    where = f"but {cols}" if lv.altered == 1 else f"but {but} ({cols} among them)"
    return (f"{lv.n:,} of its rows ({pct(lv.share, d)}) equal a training row in every column {where}, against "
            f"{pct(lv.reference_share, d)} of real rows")


def _too_close(level) -> str:
    """One level of the too-close test in words: "5.0 % are nearer a training row than any real row it never saw
    (0.1 % expected)", or "than 95 % of real rows are"."""
    than = level.than + (" it never saw" if level.every else " are")
    d = share_digits(level.expected_share)
    return f"{pct(level.share, d)} are nearer a training row than {than} ({pct(level.expected_share, d)} expected)"


def copying_region(a: AuditFigures):
    """The region the data-copying test finds copying in most strongly (a row of its cells, most negative z),
    or None."""
    dc = a.evidence.get("data_copying")
    if dc is None:
        return None
    cc = dc.copying_cells
    return cc.iloc[0] if len(cc) else None


def _region(a: AuditFigures) -> str:
    """The region in the user's column names (its values are data: the pages and the report show them beside,
    redacted where they redact), with the distances a person checks there: "in one region of the data (set apart
    by relationship, marital-status and sex; 15.6 % of the generated rows, 10.7 % of the real ones) the generated
    rows sit nearer a training row than real rows do: median distance 0.12 against 0.31, and 22 % of them nearer
    than 95 % of the region's real rows (5 % of those real rows)"."""
    dc = a.evidence.get("data_copying")
    cell = copying_region(a)
    if cell is None:
        return "the data-copying test finds copying in a region of the data"
    n = int(dc.cells["copies"].sum())
    where = "one region of the data" if n == 1 else f"the strongest of {n} regions of the data"
    cols = [c for c in str(cell.get("columns", "")).split(", ") if c]
    by = ("set apart by " + (", ".join(cols[:-1]) + " and " + cols[-1] if len(cols) > 1 else cols[0]) + "; "
          if cols else "")
    text = (f"in {where} ({by}{pct(cell['synthetic_share'])} of the generated rows, "
            f"{pct(cell['holdout_share'])} of the real ones) the generated rows sit nearer a training row than real "
            "rows do")
    if "median_synthetic" in cell and cell["median_synthetic"] == cell["median_synthetic"]:
        text += (f": median distance {cell['median_synthetic']:.3g} against {cell['median_holdout']:.3g}, and "
                 f"{pct(cell['close_synthetic'])} of them nearer than 95 % of the region's real rows "
                 f"({pct(cell['close_expected'])} of those real rows)")
    return text


def _named(a: AuditFigures) -> str:
    """"{n} training rows have far more close copies than real rows would give them (k copied verbatim)"."""
    rows = a.over_copied_rows
    n = len(rows)
    verbatim = int((rows["identical_copies"] > 0).sum()) if "identical_copies" in rows else 0
    how = (f", {'all' if verbatim == n else verbatim} copied verbatim" if verbatim else "")
    return f"{_rows(n)} {'have' if n != 1 else 'has'} far more close copies than real rows would give {'them' if n != 1 else 'it'}{how}"


def rows_within_chance(a: AuditFigures) -> str:
    """What the per-row test says when it names no row, with its figure: the smallest q-value and its Holm
    adjustment when some row stands out before the family's correction, so that no sentence denies a row whose
    own p in rows.csv is small."""
    m = a.family.get("rows")
    if a.close is None or m is None:
        return "no training row was tested"
    if m.p <= a.family.alpha:
        return (f"no training row has more close copies than chance once the family's tests are counted together "
                f"(the per-row test's smallest q-value {m.p:.2g}, {m.p_adjusted:.2g} after Holm)")
    return "no training row has more close copies than chance"


def _main_sentence(a: AuditFigures, code: str) -> str:
    if code == "no_holdout":
        return (f"{pct(a.mem_ratio)} of the generated rows are flagged, but without real rows the model never saw "
                "(a hold-out) nothing tells copying from resemblance: give a hold-out to judge.")
    if code == "quality_too_low":
        return (f"Quality too low to judge privacy: Shape {a.shape:.2f} against {a.shape_reference:.2f} for real "
                "rows, so the generated rows are too unlike the data for their closeness to mean anything.")
    order = ("identical", "partial", "too_close", "ratio", "local")
    if code == "copying":
        found = [_finding(a, m.name) for m in sorted(a.family.members, key=lambda m: order.index(m.name)
                                                      if m.name in order else len(order))
                 if m.holds and m.name != "rows"]
        which = []
        if "identical" in a.family.holding:
            v = len(a.verbatim_rows)
            ref = a.close.identical
            chance = a.close.n_generated * (ref.reference_share if ref is not None else a.close.holdout_identical_share)
            which.append(f"{_rows(v)} appear{'s' * (v == 1)} verbatim (real rows would give about {chance:.0f} "
                         f"identical row{'s' * (round(chance) != 1)})")
        if "partial" in a.family.holding:
            v = len(a.near_verbatim_rows)
            lv = next((lv for lv in a.close.partial if lv.altered == 1), None)
            chance = a.close.n_generated * lv.reference_share if lv is not None else 0.0
            which.append(f"{_rows(v)} appear{'s' * (v == 1)} with one cell changed (real rows would give about "
                         f"{chance:.0f} such row{'s' * (round(chance) != 1)})")
        if a.n_over_copied:
            which.append(_named(a))
        return "The model copies: " + "; ".join(found) + ("; " + " and ".join(which) + ": review them." if which else ".")
    if code == "rows_over_copied":
        region = f"; {_region(a)}" if a.family.regional else ""
        return f"No copying of the table as a whole, but {_named(a)}{region}: review them."
    if code == "regional_copying":
        return ("No generated row is shown to copy a training row, and the table as a whole does not copy; but "
                f"{_region(a)}.")
    parts = []
    if a.close is not None:
        every = a.close.every_level
        tail = ""
        if every is not None:
            d = share_digits(every.expected_share)
            tail = f" and {pct(every.share, d)} nearer than any of them ({pct(every.expected_share, d)} expected)"
        parts.append(f"{pct(a.close.too_close_share)} of the generated rows are nearer a training row than "
                     f"{percent(1 - a.close.alpha, 0)} of real rows it never saw are ({pct(a.close.expected_share)} "
                     f"expected){tail}, {pct(a.close.identical_share)} are identical to one against "
                     f"{pct(a.close.holdout_identical_share)} of real rows")
        lv = a.close.carrying_partial
        if lv is not None and lv.altered == 1:
            parts.append(f"{pct(lv.share)} equal one in every column but one against {pct(lv.reference_share)} of "
                         "real rows")
    below = a.excess_ci[1] < 0
    parts.append(f"the ratio test flags {pct(a.mem_ratio)} against {pct(a.floor)} for real rows (excess "
                 f"{points(a.excess)}, {percent(a.excess_ci[0], signed=True, unit='')} to "
                 f"{percent(a.excess_ci[1], signed=True, unit='')}" + (", less often than real rows" if below else "")
                 + ")")
    return "No copying beyond chance: " + ", ".join(parts) + ", and " + rows_within_chance(a) + "."


@dataclass(frozen=True)
class Finding:
    """One member of the verdict's family as a reader checks it: the figures the verdict rests on.

    member : its key (:data:`memviz.verdict.family.MEMBERS`); test : its name in words.
    observed, expected : the share the member reads among the generated rows and the share real rows give
        (None where the member reads no share: the per-row test).
    p, p_adjusted, holds : its one-sided p, Holm's adjustment over the family, and whether it holds.
    text : the finding in words, as the verdict's sentence says it.
    """

    member: str
    test: str
    observed: float | None
    expected: float | None
    p: float
    p_adjusted: float
    holds: bool
    text: str

    def to_dict(self) -> dict:
        return to_jsonable(dict(self.__dict__))


def _shares(a: AuditFigures, name: str) -> tuple[float | None, float | None]:
    c = a.close
    if name == "ratio":
        return a.mem_ratio, a.floor
    if name == "too_close" and c is not None and c.carrying_level is not None:
        return c.carrying_level.share, c.carrying_level.expected_share
    if name == "identical" and c is not None and c.identical is not None:
        return c.identical.share, c.identical.reference_share
    if name == "partial" and c is not None and c.carrying_partial is not None:
        return c.carrying_partial.share, c.carrying_partial.reference_share
    if name == "local":
        cell = copying_region(a)
        if cell is not None and "close_synthetic" in cell:
            return float(cell["close_synthetic"]), float(cell["close_expected"])
    return None, None


def findings(a: AuditFigures) -> tuple[Finding, ...]:
    """The family's members as :class:`Finding` s, those that hold first (smallest adjusted p first), then the
    others by p: what a summary prints first is what the verdict rests on."""
    out = []
    for m in a.family.members:
        obs, exp = _shares(a, m.name)
        text = _finding(a, m.name) if (m.name != "local" or m.holds) else "no region of the data copies"
        out.append(Finding(m.name, MEMBER_NAMES.get(m.name, m.name), obs, exp, m.p, m.p_adjusted, m.holds, text))
    return tuple(sorted(out, key=lambda f: (not f.holds, f.p_adjusted if f.holds else f.p)))


def verdict_of(a: AuditFigures) -> Verdict:
    """The :class:`Verdict` of ``a``: its code, its qualifiers and the sentence that says both."""
    code = code_of(a)
    quals = qualifiers(a)
    if code == "no_holdout":
        quals = tuple(q for q in quals if not q.startswith("rows_") and q != "ratio_blind")
    sentence = _prefix(a, quals) + _main_sentence(a, code)
    if quals and sentence[len(_prefix(a, quals))].isupper():
        head = _prefix(a, quals)
        body = sentence[len(head):]
        sentence = head + body[0].lower() + body[1:]
    step = NEXT_STEPS[code]
    if any(q in ("run_cancelled", "run_interrupted", "run_running", "run_failed") for q in quals):
        step = "The run did not finish: these figures are from its last check and may change. " + step
    return Verdict(code, sentence, CODES[code], quals, step)
