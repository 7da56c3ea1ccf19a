"""One verdict, derived only from an :class:`~memviz.auditing.result.Audit`: a code and one plain sentence.

Every page, the report and the CLI print :attr:`Audit.verdict` verbatim. The evidence is one family of
tests, Holm-adjusted (:mod:`memviz.auditing.family`): the ratio test against its floor, the too-close
share, the identical share, the data-copying test's regions, and the per-row test of close copies, each
read against real rows the model never saw. The **code** is the first row of this table that applies:

=======================  =======  ===========================================================================
code                     tone     when
=======================  =======  ===========================================================================
``no_holdout``           warn     no hold-out: nothing tells copying from resemblance (refused)
``copying``              bad      a member of the family other than the per-row test holds: the table copies
                                  (the sentence says which evidence carries it)
``rows_over_copied``     warn     only the per-row test holds: some training rows have far more close copies
                                  than real rows give them: review them
``quality_too_low``      bad      nothing holds, but Shape is more than :data:`QUALITY_GAP` below the reference
                                  (the hold-out's Shape): the output is too unlike the data for "no copying"
                                  to mean anything (refused)
``no_copying``           good     no member holds
=======================  =======  ===========================================================================

So "no copying" never stands beside an identical or too-close share the family finds above the hold-out's,
and no generator's other rows can cancel its copies: each test reads how close every generated row is, not
an average of flags, and the too-close share is read at the tail too (nearer than 99 % of real rows, and than
every one of them: :data:`memviz.measure.dcr.TAIL_QUANTILES`), so copies that fill no more than α's 5 % quota
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
``evidence_disagrees``  a supporting test outside the family (the membership attack, the data-copying test's
                        global statistic) points to copying the family did not find; the clause names it
======================  =====================================================================================

Plain text only: callers escape it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memviz.viz.text import pct, percent, points, share_digits

if TYPE_CHECKING:
    from memviz.auditing.result import Audit

#: above this floor (its whole interval) the ratio test flags almost every real row: it cannot see copying
HIGH_FLOOR = 0.80
#: Shape (0–1) this far below the reference (the hold-out's Shape) refuses a "no copying". On Adult TabDDPM
#: scores 0.95, TVAE 0.84 and CTGAN 0.86 (README, bench_warmup) where fresh real rows score 0.97–0.99;
#: uniform noise in every column scores 0.47 on the sample (tests/auditing): TVAE passes, noise does not
QUALITY_GAP = 0.25
#: a run with fewer checks than this gets the ``few_checks`` qualifier
MIN_CHECKS = 3

CODES = {"no_holdout": "warn", "copying": "bad", "rows_over_copied": "warn", "quality_too_low": "bad",
         "no_copying": "good"}
QUALIFIERS = ("run_cancelled", "run_interrupted", "run_running", "run_failed", "few_checks", "rows_untested",
              "rows_low_power", "ratio_blind", "quality_unknown", "evidence_disagrees")
#: what a copy share below zero (the model's rows flagged less often than the floor) is said as, wherever
#: the share is shown: a negative share of copies has no meaning of its own
BELOW_FLOOR = "below the floor (the test flags the model's rows less often than real rows)"
#: the codes that refuse to judge
REFUSALS = ("no_holdout", "quality_too_low")


#: a release gate (``memviz audit --fail-on``): the codes each level fails on; a refusal fails every level but
#: ``never`` (a gate that passed whenever it could not judge would pass a table audited without a hold-out)
GATES = {"copying": ("copying",), "rows": ("copying", "rows_over_copied"), "never": ()}
#: exit codes of the gate: passed, failed on the verdict, failed because the audit could not judge
#: (2 stays a user mistake, as for every command)
EXIT_PASSED, EXIT_FAILED, EXIT_REFUSED = 0, 3, 4


def gate(code: str, fail_on: str) -> int:
    """The exit code of a release gate at level ``fail_on`` (:data:`GATES`) for verdict ``code``."""
    if fail_on not in GATES:
        from memviz.errors import MemvizError
        raise MemvizError(f"--fail-on {fail_on!r}: use {', '.join(GATES)}")
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
    "copying": "Look at the copied rows (rows.csv, the report: how close each copy is), then try pruning them and "
               "check the effect with at least 3 seeds before sharing generated data.",
    "rows_over_copied": "Review the named rows (rows.csv): each has far more close copies than real rows would give "
                        "it; consider removing them from the training table.",
    "no_copying": "No evidence that the model copies beyond chance at these sizes; keep the hold-out apart and "
                  "audit again after retraining.",
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


def _blind(a: "Audit") -> bool:
    return a.floor_ci is not None and a.floor_ci[0] > HIGH_FLOOR


def _disagreeing(a: "Audit") -> list[str]:
    """The supporting tests outside the family that read as copying."""
    return [k for k, e in a.evidence.items() if getattr(e, "flags_copying", None) is True]


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


def _evidence_clause(a: "Audit") -> str:
    """Names the supporting tests outside the family that read as copying: "the membership attack points to
    copying"."""
    from memviz.evidence.suite import TEST_NAMES

    names = [TEST_NAMES.get(k, k.replace("_", " ")) for k in _disagreeing(a)]
    said = " and ".join(names) if len(names) < 3 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{said} point{'s' * (len(names) == 1)} to copying the other tests did not find"


def code_of(a: "Audit") -> str:
    """The verdict code of ``a`` (first row of the module's table that applies)."""
    if a.floor is None:
        return "no_holdout"
    if a.family.copying:
        return "copying"
    if a.n_over_copied:
        return "rows_over_copied"
    if a.shape is not None and a.shape_reference is not None and a.shape < a.shape_reference - QUALITY_GAP:
        return "quality_too_low"
    return "no_copying"


def _finding(a: "Audit", name: str) -> str:
    """One member of the family in words, with its figures."""
    c = a.close
    if name == "identical":
        return (f"{pct(c.identical_share)} of its rows are identical to a training row against "
                f"{pct(c.holdout_identical_share)} of real rows it never saw")
    if name == "too_close":
        return _too_close(c.carrying_level)
    if name == "ratio":
        return (f"the ratio test flags {pct(a.mem_ratio)} of its rows against {pct(a.floor)} of real rows (copy share "
                f"{pct(a.copy_share)})")
    if name == "local":
        dc = a.evidence.get("data_copying")
        n = int(dc.cells["copies"].sum()) if dc is not None else 0
        return f"the data-copying test finds copying in {n} region{'s' * (n != 1)} of the data"
    return ""


def _too_close(level) -> str:
    """One level of the too-close test in words: "5.0 % are nearer a training row than any real row it never saw
    (0.1 % expected)", or "than 95 % of real rows are"."""
    than = level.than + (" it never saw" if level.every else " are")
    d = share_digits(level.expected_share)
    return f"{pct(level.share, d)} are nearer a training row than {than} ({pct(level.expected_share, d)} expected)"


def _named(a: "Audit") -> str:
    """"{n} training rows have far more close copies than real rows would give them (k copied verbatim)"."""
    rows = a.over_copied_rows
    n = len(rows)
    verbatim = int((rows["identical_copies"] > 0).sum()) if "identical_copies" in rows else 0
    how = (f", {'all' if verbatim == n else verbatim} copied verbatim" if verbatim else "")
    return f"{_rows(n)} {'have' if n != 1 else 'has'} far more close copies than real rows would give {'them' if n != 1 else 'it'}{how}"


def _main_sentence(a: "Audit", code: str) -> str:
    if code == "no_holdout":
        return (f"{pct(a.mem_ratio)} of the generated rows are flagged, but without real rows the model never saw "
                "(a hold-out) nothing tells copying from resemblance: give a hold-out to judge.")
    if code == "quality_too_low":
        return (f"Quality too low to judge privacy: Shape {a.shape:.2f} against {a.shape_reference:.2f} for real "
                "rows, so the generated rows are too unlike the data for their closeness to mean anything.")
    order = ("identical", "too_close", "ratio", "local")
    if code == "copying":
        found = [_finding(a, m.name) for m in sorted(a.family.members, key=lambda m: order.index(m.name)
                                                      if m.name in order else len(order))
                 if m.holds and m.name != "rows"]
        which = []
        if "identical" in a.family.holding:
            v = len(a.verbatim_rows)
            chance = a.close.n_generated * a.close.holdout_identical_share
            which.append(f"{_rows(v)} appear{'s' * (v == 1)} verbatim (real rows would give about {chance:.0f} "
                         f"identical row{'s' * (round(chance) != 1)})")
        if a.n_over_copied:
            which.append(_named(a))
        return "The model copies: " + "; ".join(found) + ("; " + " and ".join(which) + ": review them." if which else ".")
    if code == "rows_over_copied":
        return f"No copying of the table as a whole, but {_named(a)}: review them."
    parts = []
    if a.close is not None:
        every = a.close.every_level
        tail = ""
        if every is not None:
            d = share_digits(every.expected_share)
            tail = f" and {pct(every.share, d)} nearer than any of them ({pct(every.expected_share, d)} expected)"
        parts.append(f"{pct(a.close.too_close_share)} of the generated rows are nearer a training row than "
                     f"{100 * (1 - a.close.alpha):.0f} % of real rows it never saw are ({pct(a.close.expected_share)} "
                     f"expected){tail}, {pct(a.close.identical_share)} are identical to one against "
                     f"{pct(a.close.holdout_identical_share)} of real rows")
    below = a.excess_ci[1] < 0
    parts.append(f"the ratio test flags {pct(a.mem_ratio)} against {pct(a.floor)} for real rows (excess "
                 f"{points(a.excess)}, {percent(a.excess_ci[0], signed=True, unit='')} to "
                 f"{percent(a.excess_ci[1], signed=True, unit='')}" + (", less often than real rows" if below else "")
                 + ")")
    rows = ("no training row has more close copies than chance" if a.close is not None
            else "no training row was tested")
    return "No copying beyond chance: " + ", ".join(parts) + ", and " + rows + "."


def verdict_of(a: "Audit") -> Verdict:
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
