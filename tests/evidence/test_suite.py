"""privacy_evidence: the three tests in one call; calibration with fresh real rows on two tables, power
with planted copies, and the high-floor table the ratio test cannot read."""
import json

import numpy as np
import pandas as pd
import pytest
from evidence_tables import numeric_table, plant, shuffled_table, three_parts

from memviz.errors import MemvizError
from memviz.evidence.suite import TESTS, privacy_evidence
from memviz.measure.floor import holdout_floor
from memviz.engine.neighbors import NeighborEngine
from memviz.metrics import EVIDENCE_METRICS, metric
from memviz.verdict.evidence_words import result_record, result_sentence


@pytest.fixture(scope="module")
def tables(sample):
    """Two real-like tables: the Adult sample (columns shuffled: not only Adult's order) and an
    all-numerical mixture."""
    adult = sample[0]
    return {"adult": shuffled_table(adult), "numeric": numeric_table(1500, seed=7)}


def test_one_call_gives_three_json_safe_results_with_sentences(sample):
    tr, sy, ho = three_parts(sample[0], 300, seed=1)
    eng = NeighborEngine(distance="standardized", device="cpu").fit(tr)
    ev = privacy_evidence(tr, sy, ho, engine=eng, secret=["income", "age"], device="cpu")
    assert tuple(ev) == TESTS
    for res in ev.values():
        assert "sentence" not in res.to_dict()              # the figures say nothing: worded above them
        d = result_record(res)
        json.dumps(d, allow_nan=False)
        assert d["sentence"] == result_sentence(res) and result_sentence(res).endswith(".")
        assert list(d)[-2:] == ["sentence", "seconds"]      # where audit.json has always held it
        assert "rows" in dir(res) and "row_id" in res.rows.columns
        assert set(res.rows["row_id"]) <= set(tr.row_ids)
    assert list(ev["attribute"].columns["secret"]) == ["income", "age"]
    only = privacy_evidence(tr, sy, ho, tests=("membership",), device="cpu")
    assert tuple(only) == ("membership",)
    with pytest.raises(MemvizError, match="unknown"):
        privacy_evidence(tr, sy, ho, tests=("dcr",))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["adult", "numeric"])
def test_calibration_with_fresh_real_rows(tables, name):
    """Fresh real rows as the synthetic table: the MIA interval covers 0.5 at about 95 %, the
    data-copying test is rarely significant, the attribute excess covers 0 at about 95 %."""
    table = tables[name]
    cover, dct, attr_cover, attr_n, R = 0, 0, 0, 0, 24
    secrets = ["x0", "x3"] if name == "numeric" else [table.schema.target, "age"]
    for r in range(R):
        tr, sy, ho = three_parts(table, 300 if name == "adult" else 500, seed=100 + r)
        tests = TESTS if r < 6 else ("membership",)
        ev = privacy_evidence(tr, sy, ho, secret=secrets, seed=r, tests=tests, device="cpu")
        m = ev["membership"]
        cover += m.auc_low <= 0.5 <= m.auc_high
        if "data_copying" in ev:
            dct += ev["data_copying"].copying
            a = ev["attribute"].columns
            attr_cover += int(((a["excess_low"] <= 0) & (a["excess_high"] >= 0)).sum())
            attr_n += len(a)
    assert cover >= R - 4                  # P(≤ 19 of 24 at 95 %) < 0.01
    assert dct <= 2                        # 6 tests at 5 %: P(≥ 3) < 0.003
    assert attr_cover >= attr_n - max(2, attr_n // 8)


@pytest.mark.slow
def test_power_with_planted_copies(sample):
    tr, sy, ho = three_parts(sample[0], 600, seed=3)
    syn20, _ = plant(tr, sy, 0.20, seed=1)
    ev = privacy_evidence(tr, syn20, ho, secret=["income", "relationship", "age"], device="cpu")
    assert ev["membership"].auc_low > 0.5
    assert ev["data_copying"].copying
    a = ev["attribute"].columns.set_index("secret")
    assert a.loc["age", "given_away"] and (a["excess"] > 0).all()   # a common class is right for outsiders too
    syn5, copied = plant(tr, sy, 0.05, seed=2)
    m = privacy_evidence(tr, syn5, ho, tests=("membership",), device="cpu")["membership"]
    assert m.tpr[0]["low"] > m.tpr[0]["fpr"]           # at 1 % false alarms it finds more than 1 %
    assert set(copied) <= set(m.rows.head(len(copied) + 5)["row_id"])


def test_high_floor_table_the_ratio_test_cannot_read(tables):
    """6 numerical columns, no categorical one: the ratio test flags fresh rows at > 80 %, so it
    cannot see copying; the membership and data-copying tests find 20 % planted copies."""
    tr, sy, ho = three_parts(tables["numeric"], 500, seed=4)
    floor = holdout_floor(tr, ho, distance="paper", device="cpu")
    assert floor.floor > 0.8
    null = privacy_evidence(tr, sy, ho, tests=("membership", "data_copying"), device="cpu")
    assert null["membership"].auc_low <= 0.5 <= null["membership"].auc_high and not null["data_copying"].copying
    syn, copied = plant(tr, sy, 0.2, seed=5)
    ev = privacy_evidence(tr, syn, ho, tests=("membership", "data_copying"), device="cpu")
    assert ev["membership"].auc_low > 0.5 and ev["data_copying"].copying
    assert set(ev["membership"].rows.head(len(copied))["row_id"]) == set(copied)
    np.testing.assert_array_equal(np.sort(copied), np.sort(ev["membership"].rows.query("score == 0")["row_id"]))


def test_headline_figures_are_declared_metrics_within_their_range(sample):
    tr, sy, ho = three_parts(sample[0], 250, seed=9)
    syn, _ = plant(tr, sy, 0.2, seed=1)
    ev = privacy_evidence(tr, syn, ho, secret=["income"], device="cpu")
    seen = set()
    for res in ev.values():
        for key, value in res.figures().items():
            if key == "attribute_secret":
                continue
            m = metric(key)
            assert (m.min_value is None or value >= m.min_value) and (m.max_value is None or value <= m.max_value)
            seen.add(key)
    assert seen | {"joint_k"} == set(EVIDENCE_METRICS)


def test_a_holdout_made_of_training_rows_is_refused(sample):
    """Training rows passed as the hold-out would make every test read "no difference"."""
    tr, sy, ho = three_parts(sample[0], 200, seed=2)
    for fn in ("membership", "data_copying", "attribute"):
        with pytest.raises(MemvizError, match="hold-out"):
            privacy_evidence(tr, sy, tr, tests=(fn,), secret="income", device="cpu")
    mixed = tr.data.iloc[:150].reset_index(drop=True)
    with pytest.raises(MemvizError, match="150 of its 200 rows"):
        privacy_evidence(tr, sy, pd.concat([mixed, ho.data.iloc[:50].reset_index(drop=True)]),
                         tests=("membership",), device="cpu")
