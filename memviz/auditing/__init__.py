"""Auditing: one result object behind every sentence, page, report and JSON about a synthetic table
(the package behind ``memviz.audit`` and :class:`memviz.Audit`)."""
from memviz.auditing.result import Audit, audit  # noqa: E402

__all__ = ["Audit", "audit"]
