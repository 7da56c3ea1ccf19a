"""One implementation of SDMetrics' Column Shapes (issue 37 item 4, "one Shape").

:class:`memviz.evaluate.synthetic.ColumnShapes` is the only code in memviz that computes a column's KS or
TV complement; its scores equal SDMetrics' (the QualityReport's Column Shapes details and the single-column
metrics the audit's gate called) bit for bit, and the warm-up's per-check quality reads them from it.
"""
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import memviz
from memviz.evaluate.quality import CheckQuality
from memviz.evaluate.synthetic import (
    KS_EXACT_ROWS,
    canonical_frame,
    column_shapes,
    ks_complement,
    quality,
    shape,
    shape_values,
    synthetic_frame,
)
from memviz.tables.data import table_from_frame

SOURCE = Path(memviz.__file__).parent
OWNER = "memviz/evaluate/synthetic.py"
#: modules that still compute a column shape of their own, until they call the owner (none: the audit's
#: gate calls memviz.evaluate.synthetic.shape)
PENDING: set[str] = set()


def _adult(sample):
    train, test = sample
    return train, test.data.sample(1500, replace=True, random_state=1).reset_index(drop=True)


def _numerical_with_missing():
    rng = np.random.default_rng(3)
    real = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    real.loc[real.index[:20], "b"] = np.nan
    real["e"] = np.round(rng.exponential(2, 300), 1)                         # ties
    syn = pd.DataFrame(rng.normal(size=(200, 4)) * [1, 2, 1, 1], columns=list("abcd"))
    syn.loc[syn.index[5:30], "c"] = np.nan
    syn["e"] = np.round(rng.exponential(2.5, 200), 1)
    return table_from_frame(real), syn


def _mixed_with_unseen_categories():
    rng = np.random.default_rng(5)

    def frame(n, p):
        return pd.DataFrame({"x": rng.normal(0, 1, n),
                             "c": rng.choice(list("abcdefghijk"), n, p=p).astype(object),
                             "d": rng.choice(["p", "q"], n).astype(object)})

    p = np.linspace(1, 3, 11) / np.linspace(1, 3, 11).sum()
    real = frame(600, p)
    real.loc[real.index[30:70], "c"] = np.nan
    syn = frame(500, p[::-1])
    syn.loc[syn.index[100:130], "c"] = [f"new{i % 9}" for i in range(30)]  # nine categories never seen
    syn.loc[syn.index[:10], "d"] = np.nan
    return table_from_frame(real, overrides={"c": "categorical", "d": "categorical"}, suggest=False), syn


def _tables(sample):
    return {"adult": _adult(sample), "numerical": _numerical_with_missing(), "mixed": _mixed_with_unseen_categories()}


def _sdmetrics_per_column(train, syn):
    """The audit's gate as it was (memviz.verdict.build.shape_score): SDMetrics' single-column metrics."""
    from sdmetrics.single_column import KSComplement, TVComplement  # lazy: sdmetrics, an extra (sdv)

    schema = train.schema
    real, s = canonical_frame(train.data, schema), canonical_frame(synthetic_frame(train, syn), schema)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for col in schema.columns:
            metric = KSComplement if col in schema.distance_numerical else TVComplement
            r, s_ = real[col].dropna(), s[col].dropna()
            if len(r) and len(s_):
                out[col] = float(metric.compute(r, s_))
    return out


@pytest.mark.parametrize("name", ["adult", "numerical", "mixed"])
def test_column_shapes_equal_the_quality_report_bit_for_bit(sample, name):
    train, syn = _tables(sample)[name]
    mine = column_shapes(train, syn)
    report = quality(train, syn).column_shapes
    assert list(mine) == list(report["column"])
    assert [mine[c] for c in report["column"]] == report["score"].tolist()   # exact, not approx
    assert shape(train, syn) == pytest.approx(quality(train, syn).shape, abs=1e-15)


@pytest.mark.parametrize("name", ["adult", "numerical", "mixed"])
def test_shape_is_a_drop_in_for_the_audit_gate(sample, name):
    train, syn = _tables(sample)[name]
    ref = _sdmetrics_per_column(train, syn)
    assert column_shapes(train, syn) == ref
    assert shape(train, syn) == float(np.mean(list(ref.values())))          # bit for bit


def test_ks_complement_equals_sdmetrics_beyond_scipys_exact_sizes():
    """Over 10,000 values scipy's ks_2samp is asymptotic and leaves D as computed."""
    from sdmetrics.single_column import KSComplement  # lazy: sdmetrics, an extra (sdv)

    rng = np.random.default_rng(7)
    for n1, n2 in ((KS_EXACT_ROWS + 1, 3_001), (12_345, 9_999), (KS_EXACT_ROWS, 7)):
        a, b = np.round(rng.normal(size=n1), 3), np.round(rng.normal(0.05, 1.1, n2), 3)
        assert ks_complement(shape_values(a), shape_values(b)) == KSComplement.compute(a, b)


@pytest.mark.parametrize("name", ["adult", "numerical", "mixed"])
def test_the_warm_up_check_reads_the_same_column_shapes(sample, name):
    train, syn = _tables(sample)[name]
    fast = CheckQuality(train).scores(syn)
    assert fast["column_shapes"] == column_shapes(train, syn)
    assert fast["shape"] == shape(train, syn)


def test_a_column_without_values_is_left_out():
    train, syn = _numerical_with_missing()
    syn = syn.assign(a=np.nan)
    scores = column_shapes(train, syn)
    assert np.isnan(scores["a"])
    assert shape(train, syn) == float(np.mean([v for c, v in scores.items() if c != "a"]))


#: code that computes a column's KS or TV complement: SDMetrics' single-column metrics or scipy's KS test
#: called, or a function of memviz's own named after them
_SHAPE_CODE = re.compile(r"\b(KSComplement|TVComplement|ks_2samp|kstest|get_frequencies)\b"
                         r"|def\s+_?\w*(ks_complement|tv_complement|ks_statistic|total_variation|kolmogorov)\w*\s*\(",
                         re.IGNORECASE)


def test_one_module_computes_the_column_shapes():
    found = {}
    for path in sorted(SOURCE.rglob("*.py")):
        rel = path.relative_to(SOURCE.parent).as_posix()
        code = [line for line in path.read_text(encoding="utf-8").splitlines()
                if not line.lstrip().startswith("#")]
        hits = sorted({m.group(0) for line in code for m in _SHAPE_CODE.finditer(line)
                       if not line.lstrip().startswith(("from memviz", "import memviz"))})
        if hits and rel != OWNER:
            found[rel] = hits
    assert set(found) == PENDING, (
        f"only {OWNER} may compute a column's KS/TV complement (call memviz.evaluate.synthetic.column_shapes, "
        f"shape or ColumnShapes); found {found}" + ("" if set(found) >= PENDING else
                                                    f"; {sorted(PENDING - set(found))} no longer do: drop "
                                                    "them from PENDING"))
