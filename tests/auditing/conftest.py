"""Small tables for the audit's tests: fresh real rows, planted copies, a high-floor table, tiny runs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memviz.tables.data import table_from_frame


@pytest.fixture(scope="session")
def fresh_split(sample):
    """(train 800, hold-out 400, fresh 600): disjoint rows of the sample's 4,000 Adult rows (seeded)."""
    train, test = sample
    allf = pd.concat([train.data, test.data], ignore_index=True)
    idx = np.random.default_rng(11).permutation(len(allf))
    part = lambda a, b, name, role: table_from_frame(allf.iloc[idx[a:b]].reset_index(drop=True),  # noqa: E731
                                                     train.schema, source=name, role=role)
    return part(0, 800, "train", "train"), part(800, 1200, "holdout", "test"), part(1200, 1800, "fresh", "synthetic")


@pytest.fixture(scope="session")
def fresh_audit(fresh_split):
    import memviz

    tr, ho, fresh = fresh_split
    return memviz.audit(tr, fresh.data, ho)


@pytest.fixture(scope="session")
def planted(fresh_split):
    """The fresh rows with 180 of 600 (30 %) replaced by verbatim copies of 12 training rows (15 each)."""
    tr, ho, fresh = fresh_split
    rng = np.random.default_rng(4)
    sources = np.sort(rng.choice(tr.row_ids, 12, replace=False))
    syn = fresh.data.reset_index(drop=True).copy()
    where = rng.choice(len(syn), 180, replace=False)
    syn.iloc[where] = tr.data.loc[np.repeat(sources, 15)].to_numpy()
    return syn, sources, where
