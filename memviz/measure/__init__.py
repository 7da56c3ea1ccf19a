"""Measure: the one nearest-neighbour engine, memorization of a synthetic table, the hold-out
floor, the per-row null and how close a copy really is."""
