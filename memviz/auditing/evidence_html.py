"""The report's "Other tests" section: the tests beyond the ratio test, from the :class:`Audit`'s evidence.

Per test (:mod:`memviz.evidence.suite`): its plain sentence (:func:`memviz.verdict.evidence_words.evidence_sentences`, the
same text the Memorization page prints), what it is (:data:`memviz.metrics.TERMS`) and its
figures (:data:`memviz.metrics.EVIDENCE_METRICS` labels). :func:`other_tests_section` returns a
:class:`memviz.auditing.report.Section` of :class:`~memviz.auditing.report.Part` blocks, one per test, which
:func:`memviz.auditing.report.build_report` draws after the audit's own parts; the report's writer
escapes every string, user text included (column names, category values in a cell's
description): it renders as inert text.
"""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from memviz.auditing.report import Part, Section
from memviz.evidence.article29 import Article29Result
from memviz.evidence.attribute import AttributeResult
from memviz.evidence.datacopying import DataCopyingResult
from memviz.evidence.densityratio import DensityRatioResult
from memviz.evidence.membership import MembershipResult
from memviz.metrics import EVIDENCE_METRICS as M
from memviz.metrics import TERMS
from memviz.text import MISSING, number, percent
from memviz.verdict.evidence_words import evidence_sentences

HEADING = "Other tests"
INTRO = ("Each is read against the hold-out (real rows the model never saw); they support the verdict and never "
         "replace it.")
#: the glossary entry of each test (memviz.metrics.TERMS)
TERM_OF = {"membership": "Membership attack", "data_copying": "Data-copying test", "attribute": "Attribute attack",
           "density_ratio": "Density-ratio attack", "targeted": "Targeted attack", "singling_out": "Singling out",
           "linkability": "Linkability"}


#: what a redacted report shows in place of a region's description (raw values of real rows)
HIDDEN = "(values hidden in the redacted report)"


def shown(evidence, redacted: bool):
    """``evidence`` as a report shows it. Redacted, every result that describes rows in raw values (a
    ``cells`` table with a ``description``: data copying's regions, "rows like: sex Female, income >50K")
    has each description replaced by :data:`HIDDEN`, in its sentence and its figures alike."""
    if not redacted:
        return evidence

    def hide(e):
        cells = getattr(e, "cells", None)
        if dataclasses.is_dataclass(e) and isinstance(cells, pd.DataFrame) and "description" in cells:
            return dataclasses.replace(e, cells=cells.assign(description=HIDDEN))
        return e
    typed = {f.name: hide(getattr(evidence, f.name)) for f in dataclasses.fields(evidence)
             if f.name not in ("extra", "distance", "seconds")}
    return dataclasses.replace(evidence, **typed, extra=tuple((k, hide(v)) for k, v in evidence.extra))


def _figures(name: str, e) -> list[tuple[str, str]]:
    """(label, value) pairs of one test's figures (labels from EVIDENCE_METRICS); none for a caller's own test."""
    if isinstance(e, MembershipResult):
        t1, t2 = e.tpr
        return [(M["mia_auc"].name, f"{number(e.auc)} ({number(e.auc_low)} to {number(e.auc_high)})"),
                (M["mia_tpr_1pct"].name, f"{percent(t1['tpr'])} ({percent(t1['low'])} to {percent(t1['high'])})"),
                (M["mia_tpr_01pct"].name, f"{percent(t2['tpr'])}" + ("" if t2["resolved"] else " (hold-out too small "
                                                                     "to allow a false alarm)")),
                (M["mia_exposed"].name, f"{e.n_exposed:,} of {e.n_train:,}"),
                ("Rows compared", f"{e.n_train:,} training, {e.n_holdout:,} hold-out, {e.n_synthetic:,} generated")]
    if isinstance(e, Article29Result):
        return [(M[f"{e.test}_rate"].name, f"{percent(e.main_rate)} ({percent(e.main_ci[0])} to "
                                           f"{percent(e.main_ci[1])})"),
                ("The same attack on real rows never seen (the control)", f"{percent(e.control_rate)} "
                                                                          f"({percent(e.control_ci[0])} to "
                                                                          f"{percent(e.control_ci[1])})"),
                (M[f"{e.test}_risk"].name, f"{number(e.risk)} (exact p {e.p_value:.2g})"),
                ("How", e.detail)]
    if isinstance(e, DensityRatioResult):
        t1, t2 = e.tpr
        return [(M["dr_auc"].name, f"{number(e.auc)} ({number(e.auc_low)} to {number(e.auc_high)})"),
                (M["dr_tpr_1pct"].name, f"{percent(t1['tpr'])} ({percent(t1['low'])} to {percent(t1['high'])}; "
                                        f"exact p {t1['p_value']:.2g})"),
                (M["dr_tpr_01pct"].name, f"{percent(t2['tpr'])} (exact p {t2['p_value']:.2g})"),
                ("Rows compared", f"{e.n_members:,} training and {e.n_nonmembers:,} hold-out rows; densities from "
                                  f"{e.n_synthetic_centres:,} generated and {e.n_reference_centres:,} other hold-out "
                                  f"rows (bandwidth {number(e.encoding['bandwidth'])})")]
    if isinstance(e, DataCopyingResult):
        cc = e.copying_cells
        out = [(M["data_copying_ct"].name, f"{number(e.c_t, signed=True)} (z {number(e.z, signed=True)})"
                                              if math.isfinite(e.c_t) else MISSING),
               (M["data_copying_p"].name, f"{e.p_value:.3g}" if math.isfinite(e.p_value) else MISSING),
               ("Regions (k-means cells) that copy", f"{len(cc)} of {e.n_cells}"),
               (M["data_copying_share"].name, percent(float(cc["holdout_share"].sum()) if len(cc) else 0.0))]
        out += [(f"Region {int(r.cell)} (z {number(r.z, 1, signed=True)}, {percent(r.holdout_share)} of the data)",
                 r.description) for r in cc.head(5).itertuples()]
        return out
    if isinstance(e, AttributeResult):
        return [(f"Secret {r.secret}", f"right for {percent(r.rate)} of training rows, {percent(r.control)} of fresh rows "
                                       f"(excess {percent(r.excess, signed=True, unit=' points')}, "
                                       f"{percent(r.excess_low, signed=True, unit='')} to "
                                       f"{percent(r.excess_high, signed=True, unit='')}; q {r.q_value:.2g})")
                for r in e.columns.itertuples()]
    figures = getattr(e, "report_figures", None)          # the targeted attack (memviz.attacks.lira)
    return list(figures()) if callable(figures) else []


def other_tests_section(a, redacted: bool = False):
    """The "Other tests" :class:`~memviz.auditing.report.Section` of audit ``a`` (module docstring), raw values
    hidden when ``redacted`` (:func:`shown`); None when it carries no evidence."""
    ev = shown(a.evidence, redacted)
    if not len(ev):
        return None
    parts = tuple(Part(label[0].upper() + label[1:], sentence, TERMS.get(TERM_OF.get(name, ""), ""),
                       tuple(_figures(name, e)))
                  for (name, e), (label, sentence) in zip(ev.items(), evidence_sentences(ev)))
    return Section(HEADING, intro=INTRO, parts=parts)
