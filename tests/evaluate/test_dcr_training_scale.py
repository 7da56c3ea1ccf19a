"""The DCR share inside an audit takes the audit's training encoder (:class:`memviz.engine.encoded.EncodedTables`)
for its scale instead of fitting it again, and reads a balanced subsample's vocabulary and arrays from the
training rows' codes: the same figures bit for bit (missing numbers and categories, categories unseen by the
training rows in the hold-out and in the generated rows, either split the larger, balanced or not), with no fit
on the training rows and only the test reference's own vocabulary fitted."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from memviz.engine.encoded import encode_tables
from memviz.evaluate.synthetic import dcr_share
from memviz.tables import encoding
from memviz.tables.data import Table, table_from_frame

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from unseen_tables import credit_like  # noqa: E402


def _tables(n_train, n_test):
    df = credit_like(n_train + n_test + 150, seed=5)
    train = table_from_frame(df.iloc[:n_train].reset_index(drop=True), None, source="train", target="Status")
    test = df.iloc[n_train:n_train + n_test].reset_index(drop=True).astype({"Job": object})
    test.loc[:2, "Job"] = "seasonal"                                   # unseen by the training rows
    syn = df.iloc[n_train + n_test:].reset_index(drop=True).astype({"Job": object})
    syn.loc[:4, "Job"] = "contractor"
    return train, Table(test, train.schema, "test"), Table(syn, train.schema, "synthetic")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("n_train", "n_test", "balance"), [(300, 120, True), (100, 200, True), (150, 150, True),
                                                            (300, 120, False)])
def test_the_share_on_the_audits_training_encoder_is_the_same_without_fitting_it(monkeypatch, n_train, n_test,
                                                                                 balance):
    train, test, syn = _tables(n_train, n_test)
    before = dcr_share(train, test, syn, balance=balance, seed=3, every_train_row=True)
    encoded = encode_tables(train, syn, test)
    fits = []
    fit = encoding.Encoder.fit.__func__

    def counted(cls, df, num_cols, cat_cols):
        fits.append((len(df), len(num_cols)))
        return fit(cls, df, num_cols, cat_cols)

    monkeypatch.setattr(encoding.Encoder, "fit", classmethod(counted))
    after = dcr_share(train, test, syn, balance=balance, seed=3, every_train_row=True, encoded=encoded)
    monkeypatch.undo()
    for field in ("dcr_train", "dcr_test", "dcr_train_all"):
        np.testing.assert_array_equal(getattr(before, field), getattr(after, field))
    assert (before.share, before.median_train, before.median_test, before.median_train_balanced, before.ideal) == (
        after.share, after.median_train, after.median_test, after.median_train_balanced, after.ideal)
    # no fit on the training rows nor their subsample: the test reference's vocabulary only (no numerical column)
    n_ref_test = min(n_train, n_test) if balance else n_test
    assert fits == [(n_ref_test, 0)]
