"""Shared fixtures: small seeded tables from the bundled sample, tiny model settings."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import memviz

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"

from helpers import TINY_MODEL  # noqa: F401, E402  (re-exported for fixtures)

# every test's runs root starts as the test makes it: the dashboard's demo run (memviz.app.demo) is installed only
# where a test asks for it (tests/app/test_demo.py sets MEMVIZ_DEMO=1); the servers the tests start inherit this
os.environ["MEMVIZ_DEMO"] = "0"


@pytest.fixture(scope="session")
def sample():
    """(train, test) Tables of the bundled 3,000 / 1,000-row Adult sample."""
    return memviz.load_dataset(ROOT / "sample_data")


@pytest.fixture(scope="session")
def small_train(sample):
    """The first 150 training rows of the sample (row_ids 0..149)."""
    train, _ = sample
    return train.subset(train.row_ids[:150])


@pytest.fixture(scope="session")
def holdout_split(sample):
    """(reference, hold-out, fresh) from the sample: 2,000 training rows (seeded, kept in
    shuffled order), the other 1,000 training rows, and the 1,000 test rows."""
    import numpy as np

    train, test = sample
    ids = np.random.default_rng(0).permutation(train.row_ids)
    return train.subset(ids[:2000]), train.subset(ids[2000:]), test


@pytest.fixture(scope="session")
def split_engine(holdout_split):
    from memviz.engine.neighbors import NeighborEngine

    return NeighborEngine(distance="paper", device="cpu").fit(holdout_split[0])


@pytest.fixture(scope="session")
def split_floor(holdout_split, split_engine):
    from memviz.measure.floor import holdout_floor

    return holdout_floor(holdout_split[0], holdout_split[1], engine=split_engine)


#: the browser tests (minutes each) in the order they start: with pytest-xdist (pyproject's addopts,
#: ``-n 2 --dist loadgroup``) they run one after another on one worker, from the start, while the
#: other worker takes the short tests; so no two browsers compete for the cores, and none is left for the end
BROWSER_FIRST = ("test_browser.py", "test_walk_browser.py", "test_audit_browser.py", "test_offline.py")


def pytest_collection_modifyitems(config, items):
    browser = [item for item in items if item.get_closest_marker("browser")]
    for item in browser:
        item.add_marker(pytest.mark.xdist_group("browser"))
    rank = {name: i for i, name in enumerate(BROWSER_FIRST)}
    first = sorted(browser, key=lambda item: rank.get(item.path.name, len(BROWSER_FIRST)))   # stable
    chosen = set(first)
    items[:] = first + [item for item in items if item not in chosen]
