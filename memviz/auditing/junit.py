"""The audit as JUnit XML, the test report every CI system reads (``memviz audit --junit FILE``).

One test suite, ``memviz audit``; one test case per member of the verdict's family
(:mod:`memviz.verdict.family`, whatever members it holds), failing where the member holds, its failure
carrying the verdict's sentence and the member's p-values; one test case per threshold
(:mod:`memviz.verdict.thresholds`), failing above its limit; and, where the verdict refuses to judge
(``no_holdout``, ``quality_too_low``), one test case ``verdict`` in error with the sentence. The suite's
properties carry the verdict's code and the figures of :meth:`~memviz.auditing.result.Audit.headline`.

GitHub Actions (through a JUnit reporting action) and GitLab (``artifacts: reports: junit:``) show each
case by name: docs/ci.md.
"""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from memviz.io import atomic_write_text
from memviz.verdict.family import MEMBER_NAMES
from memviz.verdict.verdict import REFUSALS

if TYPE_CHECKING:
    from memviz.auditing.result import Audit

#: characters XML 1.0 cannot hold (a user's column name may carry them): replaced by U+FFFD
_NOT_XML = re.compile("[^\u0009\u000A\u000D\u0020-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _text(s) -> str:
    return _NOT_XML.sub("\ufffd", str(s))


def _p(x: float) -> str:
    return "not computed" if x is None or not math.isfinite(x) else f"{x:.3g}"


def junit_xml(a: "Audit", readings=(), seconds: float | None = None, source: str = "") -> str:
    """The JUnit XML document of audit ``a`` and its threshold ``readings`` (module docstring)."""
    v = a.verdict
    cases = []
    for m in a.family.members:
        words = MEMBER_NAMES.get(m.name, m.name.replace("_", " "))
        case = ET.Element("testcase", classname="audit.family", name=_text(f"{m.name}: {words}"), time="0")
        detail = (f"{words}: p = {_p(m.p)}, Holm-adjusted p = {_p(m.p_adjusted)} "
                  f"{'≤' if m.holds else '>'} α = {a.family.alpha:g}")
        if m.holds:
            f = ET.SubElement(case, "failure", message=_text(v.sentence), type=_text(v.code))
            f.text = _text(detail)
        else:
            ET.SubElement(case, "system-out").text = _text(detail)
        cases.append(case)
    for r in readings:
        case = ET.Element("testcase", classname="audit.thresholds", name=_text(r.threshold.option), time="0")
        if r.passes:
            ET.SubElement(case, "system-out").text = _text(r.sentence())
        else:
            ET.SubElement(case, "failure", message=_text(r.sentence()), type="threshold").text = _text(r.sentence())
        cases.append(case)
    if v.code in REFUSALS:
        case = ET.Element("testcase", classname="audit", name="verdict", time="0")
        ET.SubElement(case, "error", message=_text(v.sentence), type=_text(v.code)).text = _text(v.next_step)
        cases.append(case)
    failures = sum(c.find("failure") is not None for c in cases)
    errors = sum(c.find("error") is not None for c in cases)
    total = "0" if seconds is None else f"{seconds:.3f}"
    suites = ET.Element("testsuites", name="memviz audit", tests=str(len(cases)), failures=str(failures),
                        errors=str(errors), time=total)
    suite = ET.SubElement(suites, "testsuite", name=_text("memviz audit" + (f": {source}" if source else "")),
                          tests=str(len(cases)), failures=str(failures), errors=str(errors), skipped="0", time=total)
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="verdict", value=_text(v.code))
    ET.SubElement(props, "property", name="sentence", value=_text(v.sentence))
    for name, value in a.to_metrics().items():
        ET.SubElement(props, "property", name=_text(name), value=f"{value:.6g}")
    suite.extend(cases)
    ET.indent(suites)
    return "<?xml version='1.0' encoding='UTF-8'?>\n" + ET.tostring(suites, encoding="unicode") + "\n"


def write_junit(path: str | Path, a: "Audit", readings=(), seconds: float | None = None, source: str = "") -> Path:
    """:func:`junit_xml` written atomically to ``path`` (:func:`memviz.io.atomic_write_text`)."""
    path = Path(path)
    atomic_write_text(path, junit_xml(a, readings, seconds, source))
    return path
