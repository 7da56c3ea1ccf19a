"""The words of the dashboard and the reports, explained once for someone who has not read the papers,
generated from the declarations in :mod:`memviz.metrics` (``TERMS`` and each metric's ``explain``).

The report builder (:func:`memviz.auditing.report.build_report`) reads it, so that every report (the
dashboard's, the audit's, ``memviz report``'s) prints it and links the words it uses to it (the report's
templates draw both: ``memviz/templates/blocks.html.j2``);
:mod:`memviz.app.glossary` is the dashboard's name for it. Plain text only: no Markdown, no HTML (the
callers escape or show it as it is).
"""
from __future__ import annotations

import html
import re

from memviz.metrics import METRICS, TERMS

#: the glossary's headword of a metric whose display name is long ("Floor: fresh real rows flagged" -> "Floor")
_SHORT = {"floor": "Floor", "excess": "Excess", "mem_ratio": "Memorization ratio", "mem_auc": "Mem-AUC",
          "shape": "Shape", "trend": "Trend", "mle": "MLE", "dcr_share": "DCR share",
          "relative_reduction": "Relative reduction", "mem_ratio_kept": "Memorization vs the kept rows"}

#: term -> its explanation, in reading order: the terms, then every metric that explains itself
#: (generated from :mod:`memviz.metrics`: the declarations are the one source of these words)
_ORDER = ("Memorized", "Copy", "Floor", "Excess", "95 % interval", "Holds", "Memorization ratio", "Mem-AUC", "AUC",
          "Top group", "DynamicCut score", "Pruning")
_ALL: dict[str, str] = {**TERMS, **{_SHORT.get(m.key, m.name): m.explain for m in METRICS.values() if m.explain}}
GLOSSARY: dict[str, str] = {**{t: _ALL[t] for t in _ORDER if t in _ALL}, **_ALL}


def entries() -> list[tuple[str, str]]:
    """(term, explanation) pairs in reading order."""
    return list(GLOSSARY.items())


def explain(term: str) -> str:
    """The explanation of ``term`` (KeyError names the known terms)."""
    try:
        return GLOSSARY[term]
    except KeyError:
        raise KeyError(f"no glossary entry {term!r} (known: {', '.join(GLOSSARY)})") from None


def anchor(term: str) -> str:
    """The id of ``term``'s entry in a report: ``"Mem-AUC" -> "g-mem-auc"``, ``"95 % interval" -> "g-95-interval"``."""
    return "g-" + (re.sub(r"[^a-z0-9]+", "-", str(term).lower()).strip("-") or "term")


def used_in(text: str, terms) -> list[str]:
    """The ``terms`` that ``text`` (plain text) uses, each as a whole word in any case, in ``terms``' order."""
    return [t for t in terms if re.search(r"(?<![\w-])" + re.escape(t) + r"(?![\w-])", text, re.IGNORECASE)]


def text_of(html_text: str) -> str:
    """The words a reader sees in HTML: tags, scripts and figure data left out, entities read (what
    :func:`used_in` reads in a drawn report)."""
    body = re.sub(r"<script\b.*?</script>", " ", html_text, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", " ", body))
