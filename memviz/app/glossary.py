"""The words of the dashboard and the report, explained once for someone who has not read the papers,
generated from the declarations in :mod:`memviz.metrics` (``TERMS`` and each metric's ``explain``).

Every page links to this glossary (the sidebar's "What the words mean"); every report prints it at its
end and links the words it uses to it. Plain text only: no Markdown, no HTML (the callers escape or show
it as it is). The glossary itself is :mod:`memviz.viz.glossary` (below the reports that print it).
"""
from __future__ import annotations

from memviz.viz.glossary import GLOSSARY, entries, explain  # noqa: F401  (the dashboard's names)

__all__ = ["GLOSSARY", "entries", "explain"]
