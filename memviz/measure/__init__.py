"""Measure: the metric. Memorization of a synthetic table (the ratio test), the hold-out floor and
the excess, the per-row null and how close a copy really is; every search goes through the one
engine (:mod:`memviz.engine`)."""
