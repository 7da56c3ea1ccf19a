"""Prune and augment: the DynamicCut score and pruning (dynamiccut), TabCutMix, TabCutMixPlus,
SMOTE-NC and random pruning (augment), and the column clusters TabCutMixPlus swaps together
(associations)."""
