"""Mitigate: the data-side methods besides DynamicCut's pruning (:mod:`memviz.dynamics.dynamiccut`):
TabCutMix, TabCutMixPlus, SMOTE-NC and random pruning (augment), and the column clusters
TabCutMixPlus swaps together (associations)."""
