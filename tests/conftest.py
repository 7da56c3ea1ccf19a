"""Shared fixtures: small seeded tables from the bundled sample, tiny model settings."""
from __future__ import annotations

from pathlib import Path

import pytest

import memviz

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"

from helpers import TINY_MODEL  # noqa: F401  (re-exported for fixtures)


@pytest.fixture(scope="session")
def sample():
    """(train, test) Tables of the bundled 3,000 / 1,000-row Adult sample."""
    return memviz.load_dataset(ROOT / "sample_data")


@pytest.fixture(scope="session")
def small_train(sample):
    """The first 150 training rows of the sample (row_ids 0..149)."""
    train, _ = sample
    return train.subset(train.row_ids[:150])
