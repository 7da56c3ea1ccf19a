"""Dynamics: per-row copy counts, first memorization, forgetting and Mem-AUC over a warm-up's
checks (rows), and the summaries drawn from them (concentration, the heavy tail, Top vs Non-Top)."""
