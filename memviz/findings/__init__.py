"""Findings: the dynamics statistics against a null with no row-level dynamics (split-half
groups, forgetting as a rate, the null model)."""
