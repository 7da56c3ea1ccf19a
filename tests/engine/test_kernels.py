"""The engine's small exact kernels against their plain definitions."""
import numpy as np
import pytest
import torch

from memviz.engine.kernels import codes_by_column, mismatch_counts
from memviz.engine.pruned import PrunedIndex


@pytest.mark.parametrize("q", [1, 3, 8, 300])
def test_mismatch_counts_equal_the_plain_count(q):
    """Per column into uint8 (int16 from 256 columns): equal to the (b, N, q) comparison, an
    unseen category (-1) matching nothing."""
    rng = np.random.default_rng(q)
    x = rng.integers(0, 4, (500, q))
    g = rng.integers(-1, 4, (37, q))
    want = ((x[None] != g[:, None]) | (g[:, None] < 0)).sum(-1)
    got = mismatch_counts(torch.from_numpy(codes_by_column(x)), torch.from_numpy(g)).numpy()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == (np.uint8 if q < 256 else np.int16)


@pytest.mark.parametrize("p", range(1, 11))
def test_pruned_sums_of_squares_are_numpys_own_bit_for_bit(p):
    """Below 8 columns the pruned search sums squares column by column: the same left-to-right
    order as numpy's reduction over the last axis (the dense path's and the box tree's bound
    rely on it), on magnitudes from 1e-150 to 1e150 and on rows gathered by index."""
    rng = np.random.default_rng(p)
    y = rng.normal(size=(400, p)) * 10.0 ** rng.integers(-150, 150, (400, p))
    g = rng.normal(size=(60, p)) * 10.0 ** rng.integers(-150, 150, (60, p))
    index = PrunedIndex(y, np.zeros((400, 0), dtype=np.int64), np.zeros(0, dtype=np.int64), "standardized")
    rows, at = rng.integers(0, 400, 5000), rng.integers(0, 60, 5000)
    want = np.square(y[rows] - g[at]).sum(axis=-1)
    np.testing.assert_array_equal(index.squared_distances(g, rows, at), want)
    np.testing.assert_array_equal(index.squared_distances(g[at], rows), want)
