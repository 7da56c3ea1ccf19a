"""The report's "Other tests" section: the tests beyond the ratio test, from the :class:`Audit`'s evidence.

Per test (:mod:`memviz.measure.evidence`): its plain sentence (``Evidence.sentences()``, the
same text the Memorization page prints), what it is (:data:`memviz.metrics.TERMS`) and its
figures (:data:`memviz.metrics.EVIDENCE_METRICS` labels). Every string, user text included (column
names, category values in a cell's description), is HTML-escaped: it renders as inert text.
"""
from __future__ import annotations

import html
import math

from memviz.metrics import percent

HEADING = "<h2>Other tests</h2>"
#: the glossary entry of each test (memviz.metrics.TERMS)
TERM_OF = {"membership": "Membership attack", "data_copying": "Data-copying test", "attribute": "Attribute attack"}


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _num(x, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _figures(name: str, e) -> list[tuple[str, str]]:
    """(label, value) pairs of one test's figures (labels from EVIDENCE_METRICS); none for a caller's own test."""
    from memviz.measure.attribute import AttributeResult
    from memviz.measure.datacopying import DataCopyingResult
    from memviz.measure.membership import MembershipResult
    from memviz.metrics import EVIDENCE_METRICS as M

    if isinstance(e, MembershipResult):
        t1, t2 = e.tpr
        return [(M["mia_auc"].name, f"{_num(e.auc)} ({_num(e.auc_low)} to {_num(e.auc_high)})"),
                (M["mia_tpr_1pct"].name, f"{percent(t1['tpr'])} ({percent(t1['low'])} to {percent(t1['high'])})"),
                (M["mia_tpr_01pct"].name, f"{percent(t2['tpr'])}" + ("" if t2["resolved"] else " (hold-out too small "
                                                                     "to allow a false alarm)")),
                (M["mia_exposed"].name, f"{e.n_exposed:,} of {e.n_train:,}"),
                ("Rows compared", f"{e.n_train:,} training, {e.n_holdout:,} hold-out, {e.n_synthetic:,} generated")]
    if isinstance(e, DataCopyingResult):
        cc = e.copying_cells
        out = [(M["data_copying_ct"].name, f"{e.c_t:+.2f} (z {e.z:+.2f})" if math.isfinite(e.c_t) else "–"),
               (M["data_copying_p"].name, f"{e.p_value:.3g}" if math.isfinite(e.p_value) else "–"),
               ("Regions (k-means cells) that copy", f"{len(cc)} of {e.n_cells}"),
               (M["data_copying_share"].name, percent(float(cc["holdout_share"].sum()) if len(cc) else 0.0))]
        out += [(f"Region {int(r.cell)} (z {r.z:+.1f}, {percent(r.holdout_share)} of the data)", r.description)
                for r in cc.head(5).itertuples()]
        return out
    if isinstance(e, AttributeResult):
        return [(f"Secret {r.secret}", f"right for {percent(r.rate)} of training rows, {percent(r.control)} of fresh rows "
                                       f"(excess {100 * r.excess:+.1f} points, {100 * r.excess_low:+.1f} to "
                                       f"{100 * r.excess_high:+.1f}; q {r.q_value:.2g})")
                for r in e.columns.itertuples()]
    return []


def other_tests_html(a) -> str:
    """The "Other tests" section of audit ``a`` (module docstring); empty when it carries no evidence."""
    from memviz.metrics import TERMS

    ev = a.evidence
    if not len(ev):
        return ""
    parts = [HEADING, "<p class='meta'>Each is read against the hold-out (real rows the model never saw); they "
                      "support the verdict and never replace it.</p>"]
    for (name, e), (label, sentence) in zip(ev.items(), ev.sentences()):
        parts.append(f"<h3>{_e(label[0].upper() + label[1:])}</h3><p>{_e(sentence)}</p>")
        term = TERMS.get(TERM_OF.get(name, ""))
        if term:
            parts.append(f"<p class='meta'>{_e(term)}</p>")
        rows = _figures(name, e)
        if rows:
            parts.append("<table>" + "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
                         + "</table>")
    return "".join(parts)


def with_other_tests(document: str, a) -> str:
    """``document`` (the report's HTML) with the section inserted before "What the run shows" (else at the end)."""
    section = other_tests_html(a)
    if not section:
        return document
    anchor = "<h2>What the run shows</h2>"
    if anchor in document:
        return document.replace(anchor, section + anchor, 1)
    return document.replace("</body>", section + "</body>", 1)
