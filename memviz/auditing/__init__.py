"""Auditing: one result object behind every sentence, page, report and JSON about a synthetic table
(the package behind the function :func:`memviz.audit`)."""
from memviz.auditing.build import audit, from_run  # noqa: E402
from memviz.auditing.result import Audit  # noqa: E402

__all__ = ["Audit", "audit", "from_run"]
