"""Dynamics: per-row copy counts, first memorization, forgetting and Mem-AUC over a warm-up's
checks (rows), the summaries drawn from them (concentration, the heavy tail, Top vs Non-Top), the
DynamicCut score and selection that read them (dynamiccut), and the same statistics against a null
with no row-level dynamics (splithalf, nullmodel)."""
