"""The report's "Other tests" is a Section of the one report builder (no splice into the document) and
prints its numbers through the one set of formatters (memviz.text)."""
from __future__ import annotations

import math

from memviz.auditing.evidence_html import HEADING, other_tests_section
from memviz.auditing.html import audit_html
from memviz.auditing.report import Part, Section
from memviz.text import MISSING, number
from memviz.verdict.evidence_words import evidence_sentences


def test_other_tests_is_a_section_of_parts_one_per_test(fresh_audit):
    sec = other_tests_section(fresh_audit)
    assert isinstance(sec, Section) and sec.heading == HEADING and sec.intro
    assert all(isinstance(p, Part) for p in sec.parts)
    assert [p.heading.lower() for p in sec.parts] == [label.lower() for label, _ in evidence_sentences(fresh_audit.evidence)]
    assert [p.sentence for p in sec.parts] == [s for _, s in evidence_sentences(fresh_audit.evidence)]
    assert all(p.note and p.facts for p in sec.parts)        # each test: its glossary entry and its figures


def test_other_tests_follows_the_audits_own_parts_and_precedes_a_callers_sections(fresh_audit):
    doc = audit_html(fresh_audit, sections=[Section("Comparison on run Z", facts=[("Cells", "2")])])
    own, other, caller = (doc.index(h) for h in ("<h2>What the run shows", f"<h2>{HEADING}</h2>",
                                                 "<h2>Comparison on run Z</h2>"))
    assert own < other < caller and doc.count(f"<h2>{HEADING}</h2>") == 1
    assert doc.index("<h2>Settings</h2>") > caller


def test_number_is_fixed_decimals_never_minus_zero_and_missing_for_no_number():
    assert number(0.5) == "0.50" and number(0.12345, 3) == "0.123" and number(2, 1, signed=True) == "+2.0"
    assert number(-0.001) == "0.00" and number(-0.001, signed=True) == "+0.00" and number(-0.006) == "-0.01"
    assert all(number(x) == MISSING for x in (None, math.nan, math.inf, "abc"))
