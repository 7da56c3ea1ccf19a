"""Encoding cells: the vocabulary and the codes from one factorization per column equal
their definitions through the canonical strings."""
import contextvars
import threading

import numpy as np
import pandas as pd

from memviz.tables import encoding
from memviz.tables.encoding import MISSING, Encoder, _vocabulary, canonical_series, shared_factorizations

VALUES = [1, "1", 1.0, "1.0", None, np.nan, "", " ", "a", "A", " a", True, "True", 2.5, "x", pd.NA]


def test_the_vocabulary_is_the_canonical_values_in_order_of_first_appearance():
    """Random columns mixing numbers, their strings, blanks, NaN/None/NA and booleans: the
    same canonical values in the same order as ``pd.unique(canonical_series(s))``, the missing
    category placed where its first cell (NaN or a blank string) appears."""
    rng = np.random.default_rng(0)
    for _ in range(2000):
        s = pd.Series([VALUES[i] for i in rng.integers(0, len(VALUES), rng.integers(0, 30))], dtype=object)
        want = list(pd.unique(canonical_series(s)))
        assert list(_vocabulary(s)) == want
        assert list(_vocabulary(s).values()) == list(range(len(want)))


def test_category_codes_equal_the_canonical_strings_mapped():
    """One lookup per distinct value gives the codes the canonical strings give: 1, 1.0, "1"
    and "1.0" one category; NaN, None, "" and "  " the missing one; unseen values -1."""
    train = pd.DataFrame({"c": [1, "1.0", None, "a", " b ", 2.0]})
    enc = Encoder.fit(train, (), ("c",))
    query = pd.DataFrame({"c": ["1", 1.0, np.nan, "", "  ", "b", "zz", 2, "2.0", None, 7]})
    canon = canonical_series(query["c"])
    want = np.array([enc.vocab[0].get(v, -1) for v in canon])
    np.testing.assert_array_equal(enc.transform(query).cat[:, 0], want)
    assert want[2] == want[3] == want[4] == want[9] == enc.vocab[0][MISSING] and want[6] == want[10] == -1


def test_shared_factorizations_factorize_each_column_once_and_answer_the_same(monkeypatch):
    """Inside shared_factorizations every column's memory is factorized once, whichever encoder
    reads it (a fit, a transform, a vocabulary, a frame of the same column arrays, a thread run
    in a copy of the context); the codes, vocabularies and canonical strings equal those computed
    outside it, the memo's codes are read-only, and outside the block nothing is kept."""
    rng = np.random.default_rng(2)
    n = 3_000
    df = pd.DataFrame({"x": rng.normal(size=n), "a": rng.choice(["u", "v", None, "1", 1, 1.0], n),
                       "b": rng.choice([True, False], n), "c": pd.Categorical(rng.choice(list("pq"), n))})
    other = pd.DataFrame({"x": rng.normal(size=n), "a": rng.choice(["u", "w"], n), "b": rng.choice([False, True], n),
                          "c": pd.Categorical(rng.choice(list("pqr"), n))})
    cols = ("a", "b", "c")
    plain_fit = Encoder.fit(df, ("x",), cols)
    plain = [plain_fit.transform(t).cat for t in (df, other)]
    plain_canon = canonical_series(df["a"])
    calls = []
    real = pd.factorize
    monkeypatch.setattr(encoding.pd, "factorize", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    with shared_factorizations():
        fit = Encoder.fit(df, ("x",), cols)
        assert fit.vocab == plain_fit.vocab
        n_fit = len(calls)
        assert n_fit == 3                                         # a, b and c, once each
        shared = pd.DataFrame({c: df[c] for c in ("a", "b")}, copy=False)           # the same arrays
        out = [fit.transform(t).cat for t in (df, other)]
        np.testing.assert_array_equal(Encoder.fit(shared, (), ("a", "b")).transform(shared).cat, out[0][:, :2])
        box = []
        t = threading.Thread(target=contextvars.copy_context().run, args=(lambda: box.append(fit.transform(df).cat),))
        t.start(), t.join()
        np.testing.assert_array_equal(box[0], out[0])
        np.testing.assert_array_equal(canonical_series(df["a"]), plain_canon)
        codes, _ = encoding._distinct(df["a"])
        assert not codes.flags.writeable
        # df's a and b never again; c (categorical dtype, no numpy values) on each of its two more
        # reads (transform, the thread's); other's a, b and c once
        assert len(calls) == n_fit + 2 + 3
    for a, b in zip(out, plain):
        np.testing.assert_array_equal(a, b)
    before = len(calls)
    Encoder.fit(df, ("x",), cols).transform(df)
    assert len(calls) == before + 6                               # outside: every read factorizes
