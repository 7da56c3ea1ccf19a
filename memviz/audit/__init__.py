"""Audit: one result object behind every sentence, page, report and JSON about a synthetic table."""
from memviz.audit.build import audit, from_run  # noqa: E402
from memviz.audit.result import Audit  # noqa: E402

__all__ = ["Audit", "audit", "from_run"]
