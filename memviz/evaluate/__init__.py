"""Evaluate: a synthetic table's quality (Shape, Trend), utility (MLE) and distance to the
closest record (report)."""
