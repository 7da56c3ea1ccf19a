"""memviz.engine.encoded: the tables of one audit encoded once, and engines that take them as they are.

An engine fitted with :class:`EncodedTables` returns exactly what one that encodes its own rows returns (both
distances; missing numbers, missing and unseen categories, a table with a key), fits no encoder, and encodes
only rows the value does not hold."""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

from memviz.engine.encoded import encode_tables
from memviz.engine.neighbors import NeighborEngine
from memviz.tables import encoding
from memviz.tables.data import Table, table_from_frame

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from unseen_tables import credit_like  # noqa: E402


@pytest.fixture(scope="module")
def tables():
    df = credit_like(500, seed=3)
    train = table_from_frame(df.iloc[:250].reset_index(drop=True), None, source="train", target="Status")
    syn = df.iloc[250:420].reset_index(drop=True).copy()
    syn.loc[:3, "Job"] = "contractor"                               # unseen by the training rows
    syn = Table(syn, train.schema, "synthetic")
    hold = Table(df.iloc[420:].reset_index(drop=True), train.schema, "holdout")
    return train, syn, hold


def _counting(monkeypatch):
    n = {"fit": 0, "transform": 0}
    fit, transform = encoding.Encoder.fit.__func__, encoding.Encoder.transform

    def counted_fit(cls, *a, **k):
        n["fit"] += 1
        return fit(cls, *a, **k)

    def counted_transform(self, df):
        n["transform"] += 1
        return transform(self, df)

    monkeypatch.setattr(encoding.Encoder, "fit", classmethod(counted_fit))
    monkeypatch.setattr(encoding.Encoder, "transform", counted_transform)
    return n


@pytest.mark.parametrize("distance", ["paper", "standardized"])
@pytest.mark.parametrize("algorithm", ["dense", "pruned", "wide"])
def test_an_engine_on_encoded_tables_answers_as_one_that_encodes_its_own(tables, distance, algorithm):
    train, syn, hold = tables
    encoded = encode_tables(train, syn, hold)
    own = NeighborEngine(distance=distance, algorithm=algorithm).fit(train)
    given = NeighborEngine(distance=distance, algorithm=algorithm).fit(train, encoded=encoded)
    beside = NeighborEngine(distance="standardized" if distance == "paper" else "paper").fit(train, like=given)
    assert given.encoder_ is encoded.encoder and beside.encoded_ is encoded       # like= passes them on
    for q in (syn, hold, train, syn.data.iloc[5:40]):
        a, b = own.kneighbors(q, k=2), given.kneighbors(q, k=2)
        np.testing.assert_array_equal(a.pos, b.pos)
        np.testing.assert_array_equal(a.dist, b.dist)                            # bit for bit
    np.testing.assert_array_equal(own.reference_arrays()[1], given.reference_arrays()[1])


def test_the_held_tables_are_not_encoded_again_and_others_are(tables, monkeypatch):
    train, syn, hold = tables
    encoded = encode_tables(train, syn, hold, syn)                  # a table given twice is encoded once
    assert len(encoded.frames) == 3
    n = _counting(monkeypatch)
    engine = NeighborEngine().fit(train, encoded=encoded)
    engine.kneighbors(syn, k=2), engine.kneighbors(hold.data, k=1), engine.kneighbors(train, k=2)
    assert n == {"fit": 0, "transform": 0}
    engine.kneighbors(syn.data.copy(), k=1)                          # equal values, another frame: encoded
    assert n == {"fit": 0, "transform": 1}
    assert encoded.transform(hold.data) is encoded.of(hold) and n["transform"] == 1
    more = encoded.including(syn, None, syn.data.copy())             # the same encoder: one new frame encoded
    assert n == {"fit": 0, "transform": 2} and more.encoder is encoded.encoder and len(more.frames) == 4
    assert more.of(syn) is encoded.of(syn)


def test_the_arrays_are_read_only_and_stay_home_when_the_engine_is_pickled(tables):
    train, syn, hold = tables
    encoded = encode_tables(train, syn, hold)
    assert not any(a.num.flags.writeable or a.cat.flags.writeable for a in encoded.arrays)
    engine = NeighborEngine(algorithm="dense").fit(train, encoded=encoded)
    copy = pickle.loads(pickle.dumps(engine))                        # what a Dask worker gets
    assert copy.encoded_ is None
    np.testing.assert_array_equal(copy.kneighbors(syn, k=2).dist, engine.kneighbors(syn, k=2).dist)


def test_encodings_of_other_rows_or_columns_are_not_taken(tables):
    train, syn, hold = tables
    of_syn = encode_tables(syn, train)                               # fitted on the generated rows
    engine = NeighborEngine().fit(train, encoded=of_syn)             # train is held, but as a query
    assert engine.encoded_ is None and engine.encoder_ is not of_syn.encoder
    np.testing.assert_array_equal(engine.kneighbors(syn, k=2).dist, NeighborEngine().fit(train).kneighbors(syn, k=2).dist)
    # a reference the value was fitted on but whose columns it does not encode: encoded here
    narrow = Table(syn.data, syn.schema.__class__(numerical=("Age",), categorical=("Job",)), "narrow")
    e = NeighborEngine().fit(narrow, encoded=of_syn)
    assert e.encoded_ is None and e.encoder_.num_cols == ("Age",)
    # with a scale table the encoder is another one: encoded here
    s = NeighborEngine(distance="standardized").fit(hold, scale_table=train, encoded=encode_tables(hold))
    assert s.encoded_ is None


@pytest.mark.parametrize("algorithm", ["dense", "pruned"])
def test_a_scale_tables_encoder_is_taken_and_the_references_vocabulary_stays_its_own(tables, monkeypatch, algorithm):
    """``fit(reference, scale_table=train, encoded=...)`` with the training rows' encoding: the training scale is
    taken, not fitted again; the training rows themselves take their arrays too (no fit, no encoding); other rows
    (the hold-out, with a category the training rows lack) fit their own vocabulary only. The same distances."""
    train, syn, hold = tables
    h = hold.data.copy()
    h.loc[:2, "Job"] = "seasonal"
    hold = Table(h, train.schema, "holdout")
    encoded = encode_tables(train, syn, hold)
    for ref, fits, held in ((train, 0, True), (hold, 1, False)):
        n = _counting(monkeypatch)
        given = NeighborEngine(distance="standardized", algorithm=algorithm).fit(ref, scale_table=train,
                                                                                 encoded=encoded)
        assert n["fit"] == fits and (given.encoded_ is encoded) == held
        assert given.encoder_.means is encoded.encoder.means                   # the training scale, taken
        monkeypatch.undo()
        own = NeighborEngine(distance="standardized", algorithm=algorithm).fit(ref, scale_table=train)
        assert given.encoder_.vocab == own.encoder_.vocab
        for q in (syn, hold, train):
            a, b = own.kneighbors(q, k=2), given.kneighbors(q, k=2)
            np.testing.assert_array_equal(a.pos, b.pos)
            np.testing.assert_array_equal(a.dist, b.dist)


def test_a_subset_of_the_training_rows_has_its_own_vocabulary_read_from_the_training_codes(tables, monkeypatch):
    """:meth:`EncodedTables.subset`: the vocabulary (codes in order of first appearance, the missing category
    included) and the arrays that fitting the subsample's own vocabulary on the training scale gives, without a
    fit or an encoding; an engine on it answers bit for bit as one fitted with ``scale_table``."""
    train, syn, hold = tables
    encoded = encode_tables(train, syn)
    missing = np.flatnonzero(train.data["Status"].isna().to_numpy())[:1]   # a missing category among the rows
    keep = np.union1d(np.random.default_rng(0).choice(len(train), 40, replace=False), missing)
    keep = keep[train.data["Home"].to_numpy()[keep] != "priv"]             # a category the subsample lacks
    small = Table(train.data.iloc[keep], train.schema, train.source)
    n = _counting(monkeypatch)
    sub = encoded.subset(small, keep)
    given = NeighborEngine(distance="standardized").fit(small, encoded=sub)
    assert n == {"fit": 0, "transform": 0} and given.encoded_ is sub and sub.serves(small)
    monkeypatch.undo()
    own = NeighborEngine(distance="standardized").fit(small, scale_table=train)
    fitted = encoding.Encoder.fit(small.data, (), train.schema.distance_categorical).vocab
    assert [list(v.items()) for v in sub.encoder.vocab] == [list(v.items()) for v in fitted]   # order too
    assert any(encoding.MISSING in v for v in fitted)                     # a missing category among them
    assert any(len(a) < len(b) for a, b in zip(fitted, encoded.encoder.vocab))   # a category the subsample lacks
    for mine, theirs in zip(given.reference_arrays(), own.reference_arrays()):
        np.testing.assert_array_equal(mine, theirs)
    for q in (syn, train):
        np.testing.assert_array_equal(given.kneighbors(q, k=3).dist, own.kneighbors(q, k=3).dist)
    assert not (sub.arrays[0].num.flags.writeable or sub.arrays[0].cat.flags.writeable)
