"""Auditing, the report room: one result object behind every sentence, page, report and JSON about a synthetic
table (the package behind ``memviz.audit`` and :class:`memviz.Audit`), and its writers (the HTML report, the
notebook's view, JUnit XML, audit.json's JSON Schema, the stored audit). It sits above the figures it draws
(:mod:`memviz.viz`); the verdict it carries is computed below them, in :mod:`memviz.verdict`."""
from memviz.auditing.result import Audit, audit  # noqa: E402

__all__ = ["Audit", "audit"]
