"""Issue 50: ``dcr_median_train`` is the distance to the closest of EVERY training row (it was measured against a
random subsample the size of the test split, so exact copies of rows left out of it read as far)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from memviz.engine.neighbors import NeighborEngine
from memviz.evaluate.synthetic import dcr_share, evaluate_synthetic
from memviz.tables.data import table_from_frame
from memviz.tables.schema import Schema


def _tables(n_train=2000, n_test=200, seed=0):
    rng = np.random.default_rng(seed)

    def frame(n):
        return pd.DataFrame({"ref": np.arange(n) * 3 + 11, "amount": rng.lognormal(3, 1, n),
                             "days": rng.integers(0, 400, n), "plan": rng.choice(["a", "b", "c", "d"], n),
                             "lapsed": rng.choice([0, 1], n)})

    schema = Schema(numerical=("amount", "days"), categorical=("plan",), target="lapsed", task="binary", key="ref")
    train = table_from_frame(frame(n_train), schema)
    test = table_from_frame(frame(n_test), schema, role="test")
    return train, test


def test_the_median_is_against_every_training_row_and_counts_every_copy():
    train, test = _tables()
    rng = np.random.default_rng(1)
    copies = train.data.iloc[rng.choice(len(train), 100, replace=False)]          # 5 % exact copies
    fresh = _tables(seed=7)[0].data.iloc[:1900]
    syn = pd.concat([copies, fresh], ignore_index=True).loc[:, list(train.schema.columns)]
    d = dcr_share(train, test, syn, device="cpu", every_train_row=True)
    full = NeighborEngine(distance="standardized", device="cpu").fit(train).kneighbors(syn, k=1).dist[:, 0]
    assert d.median_train == np.median(full)
    assert (d.dcr_train_all == 0).mean() >= 0.05                                  # every copy reads as one
    assert d.median_train_balanced >= d.median_train and d.n_train == len(test)    # the share's, balanced
    share_only = dcr_share(train, test, syn, device="cpu")       # the audit's: the share, no extra search
    assert share_only.share == d.share and np.isnan(share_only.median_train) and share_only.dcr_train_all is None
    out = evaluate_synthetic(train, test, syn, device="cpu")
    assert out["dcr_median_train"] == np.median(full)
    assert out["dcr_median_train_balanced"] == d.median_train_balanced
