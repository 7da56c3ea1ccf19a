"""Per-column fidelity (Wasserstein on the training range, Jensen-Shannon in bits) against hand-written
versions, and Trend as SDMetrics' QualityReport ships it on two tables."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memviz.evaluate.fidelity import REFERENCE, column_fidelity, fidelity_figures, report_trend
from memviz.evaluate.synthetic import canonical_frame, quality
from memviz.tables.data import infer_schema, load_table, table_from_frame
from memviz.tables.schema import Schema

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from unseen_tables import credit_like  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _w1(a, b):
    """W₁ between two samples from the quantile functions: ∫₀¹ |F_a⁻¹(u) − F_b⁻¹(u)| du on the merged grid."""
    a, b = np.sort(a), np.sort(b)
    u = np.union1d(np.arange(1, a.size + 1) / a.size, np.arange(1, b.size + 1) / b.size)
    qa = a[np.minimum(np.ceil(u * a.size - 1e-12).astype(int) - 1, a.size - 1)]
    qb = b[np.minimum(np.ceil(u * b.size - 1e-12).astype(int) - 1, b.size - 1)]
    return float(np.sum(np.abs(qa - qb) * np.diff(np.concatenate([[0.0], u]))))


def _jsd_bits(p, q):
    p, q = np.asarray(p, float) / np.sum(p), np.asarray(q, float) / np.sum(q)
    m = (p + q) / 2
    kl = lambda x, y: float(np.sum(np.where(x > 0, x * np.log2(np.where(x > 0, x, 1) / y), 0.0)))  # noqa: E731
    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


def test_each_column_against_a_hand_written_distance_on_a_table_with_gaps_and_missing_values():
    df = credit_like(600, 0).drop(columns=["rownames"])
    schema = infer_schema(df, target="Status")
    train = table_from_frame(df.iloc[:400], schema)
    syn = df.iloc[400:].reset_index(drop=True)
    out = column_fidelity(train, syn).set_index("column")
    assert list(out.index) == [c for c in schema.columns]
    for c in schema.distance_numerical:
        r = pd.to_numeric(train.data[c], errors="coerce").dropna().to_numpy(float)
        s = pd.to_numeric(syn[c], errors="coerce").dropna().to_numpy(float)
        assert out.loc[c, "metric"] == "wasserstein" and out.loc[c, "reference"] == REFERENCE["wasserstein"]
        assert out.loc[c, "value"] == pytest.approx(_w1(r, s) / (r.max() - r.min()), rel=1e-9)
    for c in schema.distance_categorical:
        r = train.data[c].astype(object).where(train.data[c].notna(), "NA").astype(str).value_counts()
        s = syn[c].astype(object).where(syn[c].notna(), "NA").astype(str).value_counts()
        cats = r.index.union(s.index)
        expect = _jsd_bits(r.reindex(cats, fill_value=0), s.reindex(cats, fill_value=0))
        assert out.loc[c, "metric"] == "jsd" and out.loc[c, "reference"] == REFERENCE["jsd"]
        assert out.loc[c, "value"] == pytest.approx(expect, rel=1e-9, abs=1e-12)


def test_identical_tables_score_zero_and_disjoint_categories_one_bit():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=200), "k": rng.choice(["a", "b"], 200)})
    train = table_from_frame(df, Schema(numerical=("x",), categorical=("k",)))
    same = fidelity_figures(column_fidelity(train, df))
    assert same["wasserstein_max"] == 0 and same["jsd_max"] == 0
    other = df.assign(k="z", x=df["x"] + (df["x"].max() - df["x"].min()))        # moved by one whole range
    f = column_fidelity(train, other).set_index("column")["value"]
    assert f["k"] == pytest.approx(1.0) and f["x"] == pytest.approx(1.0)
    assert fidelity_figures(column_fidelity(train, other))["fidelity_worst"] in ("x", "k")


def test_all_numerical_and_all_categorical_tables_have_nan_for_the_missing_kind():
    rng = np.random.default_rng(1)
    num = table_from_frame(pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50)}),
                           Schema(numerical=("a", "b"), categorical=()))
    f = fidelity_figures(column_fidelity(num, num.data))
    assert np.isnan(f["jsd_mean"]) and f["wasserstein_mean"] == 0


@pytest.mark.parametrize("name", ["adult_sample", "default"])
def test_report_trend_is_the_shipped_quality_report_and_trend_counts_every_pair(name):
    """On two real tables: memviz's trend equals the QualityReport with both thresholds at 0 (every pair,
    the papers' reading); trend_report equals the report as users run it, untouched (thresholds 0.5 / 0.3)."""
    from sdmetrics.reports.single_table import QualityReport  # lazy: sdmetrics, an extra (sdv)

    if name == "adult_sample":
        train = load_table(ROOT / "sample_data/train.csv", ROOT / "sample_data/meta.json")
        syn = load_table(ROOT / "sample_data/test.csv", ROOT / "sample_data/meta.json").data.iloc[:600]
    else:
        d = ROOT.parent / "shared/datasets/default"
        if not d.is_dir():
            pytest.skip("../shared/datasets/default is not here")
        full = load_table(d / "train.csv", d / "meta.json")
        train = table_from_frame(full.data.iloc[:1500], full.schema)
        syn = full.data.iloc[1500:2100]

    real, fake = canonical_frame(train.data, train.schema), canonical_frame(syn, train.schema)
    meta = {"columns": {c: {"sdtype": "numerical" if c in train.schema.distance_numerical else "categorical"}
                        for c in train.schema.columns}}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shipped = QualityReport()
        shipped.generate(real, fake, meta, verbose=False)
    expect = float(shipped.get_properties().set_index("Property")["Score"]["Column Pair Trends"])
    assert report_trend(train, syn) == pytest.approx(expect, abs=1e-12)
    assert quality(train, syn).trend < expect                    # the weak pairs it leaves out score lowest
