"""Audit: one result object behind every sentence, page, report and JSON about a synthetic table."""
