"""Singling out and linkability (memviz.evidence.article29): read against their control, exact tests that fresh
rows rarely flag, that planted copies do flag, and figures that equal their definitions."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from memviz.evidence.article29 import ALPHA, halves, linkability, singling_out
from memviz.tables.data import table_from_frame
from memviz.tables.infer import infer_schema
from memviz.verdict.evidence_words import article29_sentence
from unseen_tables import credit_like


@pytest.fixture(scope="module")
def credit():
    """A credit-like table with a gapped key and missing values: train 1,500, hold-out 600, fresh 2,400."""
    df = credit_like(4500, seed=11)

    schema = infer_schema(df.iloc[:1500], target="Status")
    t = lambda f, role: table_from_frame(f.reset_index(drop=True), schema, source=role, role=role)  # noqa: E731
    return t(df.iloc[:1500], "train"), t(df.iloc[1500:2100], "test"), df.iloc[2100:].reset_index(drop=True), schema


def test_fresh_rows_are_read_as_no_risk_and_copies_as_one(credit):
    train, hold, fresh, schema = credit
    syn = table_from_frame(fresh.iloc[:1200], schema, source="fresh", role="synthetic")
    for attack in (singling_out, linkability):
        r = attack(train, syn, hold)
        assert r.control_rate >= 0 and not r.flags_risk, article29_sentence(r)
    copies = pd.concat([train.data.iloc[:1000].reset_index(drop=True), fresh.iloc[:200]], ignore_index=True)
    syn = table_from_frame(copies, schema, source="copies", role="synthetic")
    link = linkability(train, syn, hold)
    assert link.flags_risk and link.risk > 0.03 and "a risk of" in article29_sentence(link)
    assert set(link.rows["row_id"]) <= set(train.row_ids)
    so = singling_out(train, syn, hold)
    assert so.main_rate > so.control_rate and set(so.rows["row_id"]) <= set(train.row_ids)


def test_the_figures_equal_their_definitions(credit):
    train, hold, fresh, schema = credit
    syn = table_from_frame(pd.concat([train.data.iloc[:300], fresh.iloc[:900]], ignore_index=True), schema,
                           source="s", role="synthetic")
    r = linkability(train, syn, hold, n_attacks=400)
    xt, xc = round(r.main_rate * 400), round(r.control_rate * 400)
    assert r.p_value == pytest.approx(stats.fisher_exact([[xt, 400 - xt], [xc, 400 - xc]], alternative="greater")[1])
    assert r.risk == pytest.approx((r.main_rate - r.control_rate) / (1 - r.control_rate))
    assert r.to_dict()["figures"] == {"linkability_rate": r.main_rate, "linkability_risk": r.risk}
    a, b = halves(schema)
    assert set(a).isdisjoint(b) and len(a) - len(b) in (0, 1) and r.detail.count(",") >= 1


def test_fresh_rows_flag_singling_out_and_linkability_at_most_at_their_level():
    """60 fresh tables against one training table: each attack flags in about 5 % of them or fewer (its exact
    test's level: McNemar's and Fisher's are conservative with few discordant pairs)."""
    df = credit_like(6000, seed=12)

    schema = infer_schema(df.iloc[:1000], target="Status")
    train = table_from_frame(df.iloc[:1000].reset_index(drop=True), schema, source="t", role="train")
    pool = df.iloc[1000:].reset_index(drop=True)
    rng = np.random.default_rng(3)
    flags = {"singling_out": 0, "linkability": 0}
    n = 60
    for i in range(n):
        perm = rng.permutation(len(pool))
        hold = table_from_frame(pool.iloc[perm[:300]].reset_index(drop=True), schema, source="h", role="test")
        syn = table_from_frame(pool.iloc[perm[300:900]].reset_index(drop=True), schema, source="s", role="synthetic")
        flags["singling_out"] += singling_out(train, syn, hold, n_attacks=200, seed=i).flags_risk
        flags["linkability"] += linkability(train, syn, hold, n_attacks=300, seed=i).flags_risk
    bound = n * ALPHA + 3 * np.sqrt(n * ALPHA * (1 - ALPHA))
    assert all(v <= bound for v in flags.values()), flags
