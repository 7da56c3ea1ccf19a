"""Attribute inference with a control (memviz.evidence.attribute)."""
import json

import numpy as np
import pytest
from evidence_tables import numeric_table, plant, three_parts
from scipy.stats import chi2_contingency

from memviz.errors import MemvizError
from memviz.evidence.attribute import attribute_inference, pooled_z, resolve_secrets
from memviz.verdict.evidence_words import attribute_sentence


@pytest.fixture(scope="module")
def parts(sample):
    return three_parts(sample[0], 500, seed=21)


def test_pooled_z_is_the_root_of_the_uncorrected_chi2():
    for x1, n1, x0, n0 in ((40, 200, 25, 180), (3, 50, 0, 40), (99, 100, 90, 100)):
        chi2 = chi2_contingency([[x1, n1 - x1], [x0, n0 - x0]], correction=False)[0]
        z = pooled_z(x1, n1, x0, n0)
        assert z ** 2 == pytest.approx(chi2, rel=1e-9) and np.sign(z) == np.sign(x1 / n1 - x0 / n0)
    assert pooled_z(0, 10, 0, 10) == 0.0


def test_secrets_default_to_every_column_target_first(parts):
    tr = parts[0]
    s = resolve_secrets(tr.schema, None)
    assert s[0] == tr.schema.target and set(s) == set(tr.schema.columns) and len(s) == len(tr.schema.columns)
    with pytest.raises(MemvizError, match="nope"):
        resolve_secrets(tr.schema, "nope")


def test_guesses_follow_the_nearest_generated_row_on_the_known_columns(parts):
    tr, sy, ho = parts
    res = attribute_inference(tr, sy, ho, secret="sex", known=["relationship"], n_rows=200, device="cpu")
    assert res.known == {"sex": ["relationship"]}
    # with one known categorical column, the nearest generated row is the first with the same relationship
    syn = sy.data.reset_index(drop=True)
    first = {v: syn["sex"].iloc[syn.index[syn["relationship"] == v][0]] for v in syn["relationship"].unique()}
    rows = res.rows.set_index("row_id")
    truth = tr.data.loc[rows.index]
    expect = [first.get(r) == s for r, s in zip(truth["relationship"], truth["sex"])]
    np.testing.assert_array_equal(rows["sex"].to_numpy(), np.array(expect))
    c = res.columns.iloc[0]
    assert c["rate"] == pytest.approx(np.mean(expect)) and c["n"] == 200 and c["n_control"] == 200
    assert c["excess"] == pytest.approx(c["rate"] - c["control"])
    assert c["excess_low"] <= c["excess"] <= c["excess_high"]


def test_fresh_rows_cover_zero_and_copies_are_given_away(parts):
    tr, sy, ho = parts
    secrets = ["income", "age", "occupation", "relationship"]
    null = attribute_inference(tr, sy, ho, secret=secrets, device="cpu")
    assert not null.columns["given_away"].any() and "no more often" in attribute_sentence(null)
    syn, copied = plant(tr, sy, 0.3, seed=1)
    res = attribute_inference(tr, syn, ho, secret=secrets, device="cpu")
    assert res.columns["given_away"].all() and (res.columns["excess_low"] > 0).all()
    assert "more often than an outsider's in 4 of 4 columns" in attribute_sentence(res)
    top = res.rows[res.rows["row_id"].isin(copied)]
    assert (top["n_revealed"] == len(secrets)).all()                    # a copy gives every secret away
    json.dumps(res.to_dict(), allow_nan=False)


def test_numerical_secret_uses_the_spread_tolerance():
    t = numeric_table(900, seed=3)
    tr, sy, ho = three_parts(t, 300, seed=1)
    syn = sy.data.reset_index(drop=True).copy()
    syn.iloc[:300] = tr.data.to_numpy()                                  # every training row copied ...
    syn["x0"] = syn["x0"] + 0.05 * (tr.data["x0"].quantile(0.75) - tr.data["x0"].quantile(0.25))
    res = attribute_inference(tr, syn, ho, secret="x0", device="cpu")   # ... and x0 moved by 0.05 IQR
    assert res.columns.iloc[0]["rate"] == 1.0 and res.columns.iloc[0]["given_away"]
    syn["x0"] = syn["x0"] + 0.2 * (tr.data["x0"].quantile(0.75) - tr.data["x0"].quantile(0.25))
    res = attribute_inference(tr, syn, ho, secret="x0", device="cpu")   # 0.25 IQR off: not revealed
    assert res.columns.iloc[0]["rate"] < 0.5


def test_bad_arguments_are_one_line(parts):
    tr, sy, ho = parts
    with pytest.raises(MemvizError, match="known column 'zzz'"):
        attribute_inference(tr, sy, ho, secret="sex", known=["zzz"])
    with pytest.raises(MemvizError, match="no known column"):
        attribute_inference(tr, sy, ho, secret="sex", known=["sex"])
    with pytest.raises(MemvizError, match="n_rows"):
        attribute_inference(tr, sy, ho, secret="sex", n_rows=0)


def test_one_secret_reads_as_that_column_not_any_of_1_column(parts):
    """The audit of the sample read "no more often than an outsider's in any of 1 column": with one
    secret the sentence names the column it attacked."""
    tr, sy, ho = parts
    res = attribute_inference(tr, sy, ho, secret="sex", known=["relationship"], n_rows=200, device="cpu")
    text = attribute_sentence(res)
    assert "1 column" not in text and "any of" not in text
    assert "the one column attacked" in text and "(sex: right for" in text
