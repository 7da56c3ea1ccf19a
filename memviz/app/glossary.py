"""The words of the dashboard and the report, explained once for someone who has not read the papers,
generated from the declarations in :mod:`memviz.metrics` (``TERMS`` and each metric's ``explain``).

Every page links to this glossary (the sidebar's "What the words mean"); the report prints it
at its end. Plain text only: no Markdown, no HTML (the callers escape or show it as it is).
"""
from __future__ import annotations

from memviz.metrics import METRICS, TERMS

#: the glossary's headword of a metric whose display name is long ("Floor: fresh real rows flagged" -> "Floor")
_SHORT = {"floor": "Floor", "excess": "Excess", "mem_ratio": "Memorization ratio", "mem_auc": "Mem-AUC",
          "shape": "Shape", "trend": "Trend", "mle": "MLE", "dcr_share": "DCR share",
          "relative_reduction": "Relative reduction", "mem_ratio_kept": "Memorization vs the kept rows"}

#: term -> its explanation, in reading order: the terms, then every metric that explains itself
#: (generated from :mod:`memviz.metrics`: the declarations are the one source of these words)
_ORDER = ("Memorized", "Copy", "Floor", "Excess", "Memorization ratio", "Mem-AUC", "Top group", "DynamicCut score",
          "Pruning")
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
