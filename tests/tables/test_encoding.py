"""Encoding cells: the vocabulary and the codes from one factorization per column equal
their definitions through the canonical strings."""
import numpy as np
import pandas as pd

from memviz.tables.encoding import MISSING, Encoder, _vocabulary, canonical_series

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
