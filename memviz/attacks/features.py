"""What the targeted attacker reads in a generated table near each target row.

One encoding for every shadow and the release, fitted once on the background rows
(:class:`memviz.evidence.densityratio.KDESpace`: numericals standardized by the background's mean and
standard deviation, one-hot categories, a missing / present indicator per numerical column with
missing values; coordinates divided by h, Scott's factor for the background's size). With u(x) the
encoded target and u(g) the M generated rows, d(g) = ‖u(x) − u(g)‖ (direct differences, float64):

==============  ==============================================================================
``log_d1``      log(δ + min_g d(g)): how close the nearest generated row is (δ = 10⁻³)
``log_dk``      log(δ + mean of the k smallest d(g)): how close the k nearest are
``log_density`` log((1/M) Σ_g exp(−½ d(g)²)): the generated rows' kernel density at the target
``exact``       log(1 + #{g : d(g) = 0}): generated rows equal to the target in every encoded column
==============  ==============================================================================

Copying shows in all four (a copy sets d = 0); a model that only moves density towards a row shows in
``log_dk`` and ``log_density``. The features are the attack's, not a verdict: :mod:`memviz.attacks.lira`
learns per target what they look like with and without the target in the training data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from memviz.evidence.densityratio import KDESpace
from memviz.tables.schema import Schema

FEATURES = ("log_d1", "log_dk", "log_density", "exact")
DELTA = 1e-3


@dataclass(frozen=True, eq=False)
class FeatureSpace:
    """The encoding of the module docstring, with the targets encoded once."""

    space: KDESpace
    targets: np.ndarray          # (T, D) encoded targets
    k: int

    @classmethod
    def fit(cls, background: pd.DataFrame, targets: pd.DataFrame, schema: Schema, k: int,
            others=()) -> "FeatureSpace":
        """``others``: frames whose categories the one-hot blocks must hold too (the hold-out)."""
        num, cat = tuple(schema.distance_numerical), tuple(schema.distance_categorical)
        cols = list(num + cat)
        frames = [background[cols], targets[cols], *[o[cols] for o in others]]
        space = KDESpace.fit(background[cols], frames, num, cat)
        return cls(space, space.encode(targets[cols]).astype(np.float64), int(k))

    def features(self, generated: pd.DataFrame) -> np.ndarray:
        """(T, len(FEATURES)) of one generated table (module docstring). Categories the encoding has not
        seen are a zero block (a mismatch with every target)."""
        import torch  # lazy: torch is optional (memviz[train])

        cols = list(self.space.num_cols + self.space.cat_cols)
        g = torch.as_tensor(self.space.encode(generated[cols]).astype(np.float64))
        x = torch.as_tensor(self.targets)
        d = torch.cdist(x, g, compute_mode="donot_use_mm_for_euclid_dist").numpy()       # (T, M) direct
        k = min(self.k, d.shape[1])
        near = np.partition(d, k - 1, axis=1)[:, :k] if k < d.shape[1] else d
        d1 = near.min(axis=1)
        lk = -0.5 * d * d
        top = lk.max(axis=1, keepdims=True)
        dens = top[:, 0] + np.log(np.exp(lk - top).mean(axis=1))
        exact = np.log1p((d == 0).sum(axis=1))
        return np.stack([np.log(DELTA + d1), np.log(DELTA + near.mean(axis=1)), dens, exact], axis=1)
