"""Leaks: which training rows were copied and how (rows: ranking and the leak explorer), and
which columns leak (columns: the heatmap)."""
