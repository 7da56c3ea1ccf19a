"""One verdict, derived only from an :class:`~memviz.auditing.result.Audit`: a code and one plain sentence.

Every page, the report and the CLI print :attr:`Audit.verdict` verbatim. The **code** is the
first row of this table that applies (refusals first, then the findings):

=======================  =======  ===========================================================================
code                     tone     when
=======================  =======  ===========================================================================
``no_holdout``           warn     no hold-out: nothing tells copying from the test's own floor (refused)
``floor_too_high``       warn     floor above :data:`HIGH_FLOOR` (80 %): the test flags nearly every real row
                                  too, so it cannot see copying (refused; e.g. wilt, magic, all-numerical tables)
``quality_too_low``      bad      Shape more than :data:`QUALITY_GAP` below the reference (the hold-out's Shape
                                  against the training table): the output is too unlike the data for its
                                  privacy to mean anything (refused)
``copying``              bad      the excess's 95 % interval lies above 0: the model copies beyond chance
``rows_over_copied``     warn     no copying overall, but n rows are copied far more than chance (q < 0.05 in
                                  the per-row test): review them
``no_copying``           good     the excess's interval covers 0 or lies below it, and no row is over-copied
=======================  =======  ===========================================================================

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
``rows_untested``       hold-out too small for the per-row test (the test is not run; see
                        :mod:`memviz.auditing.rowtest`)
``rows_uncalibrated``   the per-row test's simulated false-alarm rate at these sizes exceeds 5 %
``rows_low_power``      the per-row test finds fewer than half of 10 rows planted with 20 extra copies
``quality_unknown``     no quality figure (Shape): the verdict cannot rule out a useless model
``evidence_disagrees``  supporting evidence (``Audit.evidence``: the membership attack or the data-copying
                        test, :mod:`memviz.evidence.suite`) points to copying the main test did not see
                        (its excess interval does not lie above 0, or the floor is too high for it to see);
                        the clause names the tests. Under no copying each fires at about its level (MIA:
                        AUC interval above 0.5, 2.5 %; data copying: p < 0.05), together at most 7.5 %
======================  =====================================================================================

Plain text only: callers escape it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memviz.viz.text import pct, percent, points

if TYPE_CHECKING:
    from memviz.auditing.result import Audit

#: above this floor the ratio test flags almost every real row: it cannot see copying
HIGH_FLOOR = 0.80
#: Shape (0–1) this far below the reference (the hold-out's Shape) refuses the verdict. On Adult TabDDPM
#: scores 0.95, TVAE 0.84 and CTGAN 0.86 (README, bench_warmup) where fresh real rows score 0.97–0.99;
#: uniform noise in every column scores 0.47 on the sample (tests/audit): TVAE passes, noise does not
QUALITY_GAP = 0.25
#: a run with fewer checks than this gets the ``few_checks`` qualifier
MIN_CHECKS = 3

CODES = {"no_holdout": "warn", "floor_too_high": "warn", "quality_too_low": "bad", "copying": "bad",
         "rows_over_copied": "warn", "no_copying": "good"}
QUALIFIERS = ("run_cancelled", "run_interrupted", "run_running", "run_failed", "few_checks", "rows_untested",
              "rows_uncalibrated", "rows_low_power", "quality_unknown", "evidence_disagrees")


#: what to do next, per code (plain text; the dashboard's "Next step" line)
NEXT_STEPS = {
    "no_holdout": "Give real rows the model never saw (a test split) as the hold-out: they measure the floor, so "
                  "copying can be told apart from resemblance.",
    "floor_too_high": "Try the standardized distance (its floor is far lower on all-numerical tables): with this "
                      "one the test cannot judge copying on this table.",
    "quality_too_low": "Improve the generator first (train longer, or another model): privacy figures of rows this "
                       "unlike the data do not say whether it would copy once it works.",
    "copying": "Look at the over-copied rows (rows.csv, the report), then try pruning them and check the effect "
               "with at least 3 seeds.",
    "rows_over_copied": "Review the over-copied rows (rows.csv): each is copied far more often than real rows "
                        "would resemble it; consider removing them from the training table.",
    "no_copying": "No evidence that the model copies beyond chance; check the exact copies (identical share) "
                  "before sharing generated data.",
}


@dataclass(frozen=True)
class Verdict:
    """code (a key of :data:`CODES`), sentence (plain text), tone (good / bad / warn), qualifiers, and
    next_step (:data:`NEXT_STEPS`, prefixed when the run is not finished)."""

    code: str
    sentence: str
    tone: str
    qualifiers: tuple[str, ...] = ()
    next_step: str = ""

    @property
    def qualified(self) -> bool:
        return bool(self.qualifiers)

    def to_dict(self) -> dict:
        return {"code": self.code, "sentence": self.sentence, "tone": self.tone, "qualifiers": list(self.qualifiers),
                "next_step": self.next_step}


def _rows(n: int) -> str:
    return f"{n:,} training row{'s' * (n != 1)}"


def qualifiers(a: "Audit") -> tuple[str, ...]:
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
    rt = a.row_test
    if a.floor is not None:
        if rt.status == "too_small":
            out.append("rows_untested")
        elif rt.status == "uncalibrated":
            out.append("rows_uncalibrated")
        elif rt.status == "low_power":
            out.append("rows_low_power")
    if a.shape is None:
        out.append("quality_unknown")
    if any(getattr(e, "flags_copying", None) is True for e in a.evidence.values()) and not (
            a.excess_ci is not None and a.excess_ci[0] > 0):
        out.append("evidence_disagrees")
    return tuple(out)


def _prefix(a: "Audit", quals: tuple[str, ...]) -> str:
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
            bits.append(f"the hold-out ({a.row_test.n_holdout:,} rows) is too small for the per-row test")
        elif q == "rows_uncalibrated":
            bits.append("the per-row test is not calibrated at these sizes")
        elif q == "rows_low_power":
            bits.append("the per-row test has little power at these sizes")
        elif q == "quality_unknown":
            bits.append("quality not measured")
        elif q == "evidence_disagrees":
            bits.append(_evidence_clause(a))
    if not bits:
        return ""
    provisional = any(q.startswith("run_") or q == "few_checks" for q in quals)
    return ("Provisional" if provisional else "Qualified") + " (" + "; ".join(bits) + "): "


def _evidence_clause(a: "Audit") -> str:
    """Names the supporting tests that read as copying: "the membership attack and the data-copying test
    point to copying" (with "that the ratio test cannot see" on a high-floor table)."""
    from memviz.evidence.suite import TEST_NAMES

    names = [TEST_NAMES.get(k, k.replace("_", " ")) for k, e in a.evidence.items()
             if getattr(e, "flags_copying", None) is True]
    said = " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]
    blind = a.floor is not None and a.floor > HIGH_FLOOR
    return f"{said} point{'s' * (len(names) == 1)} to copying" + (" that the ratio test cannot see" if blind else "")


def code_of(a: "Audit") -> str:
    """The verdict code of ``a`` (first row of the module's table that applies)."""
    if a.floor is None:
        return "no_holdout"
    if a.floor > HIGH_FLOOR:
        return "floor_too_high"
    if a.shape is not None and a.shape_reference is not None and a.shape < a.shape_reference - QUALITY_GAP:
        return "quality_too_low"
    if a.excess_ci[0] > 0:
        return "copying"
    if a.n_over_copied:
        return "rows_over_copied"
    return "no_copying"


def _main_sentence(a: "Audit", code: str) -> str:
    if code == "no_holdout":
        return (f"{pct(a.mem_ratio)} of the generated rows are flagged, but without real rows the model never saw "
                "(a hold-out) nothing tells copying from the test's own floor: give a hold-out to judge.")
    if code == "floor_too_high":
        return (f"Real rows the model never saw are flagged at {pct(a.floor)} on this table, so the test cannot "
                "see copying here: no privacy verdict.")
    if code == "quality_too_low":
        return (f"Quality too low to judge privacy: Shape {a.shape:.2f} against {a.shape_reference:.2f} for real "
                "rows, so the generated rows are too unlike the data for their copy rate to mean anything.")
    lo, hi = a.copy_share_ci
    if code == "copying":
        return (f"The model copies: {pct(a.copy_share)} of its rows are copies beyond chance ({pct(lo)} to "
                f"{pct(hi)}; flagged {pct(a.mem_ratio)} against {pct(a.floor)} for real rows)"
                + (f", and {_rows(a.n_over_copied)} are copied far more than chance: review them."
                   if a.n_over_copied else "."))
    if code == "rows_over_copied":
        return (f"No copying overall (flagged {pct(a.mem_ratio)} against {pct(a.floor)} for real rows, excess "
                f"{points(a.excess)}), but {_rows(a.n_over_copied)} are copied far more than chance: "
                "review them.")
    below = a.excess_ci[1] < 0
    return (f"No copying beyond chance: the model's rows are flagged at {pct(a.mem_ratio)} against "
            f"{pct(a.floor)} for real rows it never saw (excess {points(a.excess)}, "
            f"{percent(a.excess_ci[0], signed=True, unit='')} to {percent(a.excess_ci[1], signed=True, unit='')})"
            + (", less often than real rows" if below else "") + ", and no training row is copied more than chance.")


def verdict_of(a: "Audit") -> Verdict:
    """The :class:`Verdict` of ``a``: its code, its qualifiers and the sentence that says both."""
    code = code_of(a)
    quals = qualifiers(a)
    if code in ("no_holdout", "floor_too_high"):
        quals = tuple(q for q in quals if not q.startswith("rows_"))
    sentence = _prefix(a, quals) + _main_sentence(a, code)
    if quals and sentence[len(_prefix(a, quals))].isupper():
        head = _prefix(a, quals)
        body = sentence[len(head):]
        sentence = head + body[0].lower() + body[1:]
    step = NEXT_STEPS[code]
    if any(q in ("run_cancelled", "run_interrupted", "run_running", "run_failed") for q in quals):
        step = "The run did not finish: these figures are from its last check and may change. " + step
    return Verdict(code, sentence, CODES[code], quals, step)
