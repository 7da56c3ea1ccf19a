"""Stub generators and a grid helper for the comparison tests (fast: no model is trained)."""
import numpy as np

from memviz.compare import CompareConfig, run_grid

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 64}


class Stub:
    """A 'generator' that resamples its training rows (a perfect copier); counts fits."""

    fits = []

    def __init__(self, name, epochs=None, device="cpu", seed=0, **params):
        self.name, self.epochs, self.seed = name, epochs, seed

    def fit(self, table, callbacks=()):
        Stub.fits.append((self.name, len(table)))
        self.table_, self.epoch_, self.device_ = table, self.epochs or 1, "cpu"
        return self

    def sample(self, n, seed=None):
        rng = np.random.default_rng(seed)
        return self.table_.data.iloc[rng.integers(0, len(self.table_), n)].reset_index(drop=True)


def grid(train, test, methods, models, seeds, out, **settings):
    """run_grid with a CompareConfig of these settings (one cell at a time unless given)."""
    settings.setdefault("n_jobs", 1)
    return run_grid(train, test, CompareConfig(methods=tuple(methods), models=tuple(models), seeds=tuple(seeds),
                                               **settings), out)
