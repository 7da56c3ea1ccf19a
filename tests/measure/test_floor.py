"""The floor and the excess over it, on the bundled Adult sample (split: see conftest's
``holdout_split``: 2,000 reference rows in shuffled order, so that the per-row arrays'
alignment with the sorted row_ids is tested; the other 1,000 training rows as hold-out)."""
import json

import numpy as np
import pandas as pd
import pytest

from memviz.errors import MemvizError
from memviz.measure.floor import (
    Floor,
    excess,
    excess_columns,
    holdout_floor,
    newcombe_interval,
    wilson_interval,
)
from memviz.measure.memorization import memorization
from memviz.tables.data import Table
from memviz.verdict.words import excess_sentence


def test_floor_is_the_flagged_share_of_the_holdout_rows(holdout_split, split_engine, split_floor):
    ref, hold, _ = holdout_split
    res = memorization(ref, hold, engine=split_engine)
    assert split_floor.n_holdout == len(hold) and split_floor.n_reference == len(ref)
    assert split_floor.n_flagged == res.memorized.sum() and split_floor.floor == pytest.approx(res.mem_ratio)
    assert split_floor.low < split_floor.floor < split_floor.high and split_floor.interval == "wilson"
    # per-row arrays follow the reference's row_ids sorted ascending, not the table order
    np.testing.assert_array_equal(split_floor.row_ids, np.sort(ref.row_ids))
    for i in np.unique(res.nn1)[:50]:
        at = split_floor.row_ids == i
        assert split_floor.nn1[at] == (res.nn1 == i).sum()
        assert split_floor.hits[at] == (res.memorized & (res.nn1 == i)).sum()
    assert split_floor.hits.sum() == split_floor.n_flagged and split_floor.nn1.sum() == split_floor.n_holdout
    assert split_floor.auc.sum() / split_floor.n_holdout == pytest.approx(res.mem_auc, abs=1e-8)
    # the same figures without a warm engine
    again = holdout_floor(ref, hold.data, device="cpu")
    assert again.floor == split_floor.floor and np.array_equal(again.auc, split_floor.auc)


def test_the_reference_is_never_its_own_holdout(holdout_split, split_engine):
    ref, hold, _ = holdout_split
    shuffled = ref.subset(ref.row_ids[::-1])
    with pytest.raises(MemvizError, match="2,000 of its 2,000 rows .* are rows of the training table"):
        holdout_floor(ref, ref, engine=split_engine)
    for misuse in (shuffled, ref.data.reset_index(drop=True),
                   pd.concat([ref.data.iloc[:700], hold.data.iloc[:300]], ignore_index=True)):
        with pytest.raises(MemvizError, match="rows .* are rows of the training table, where the training table repeats"):
            holdout_floor(ref, misuse, engine=split_engine)


def _without_age(ref, hold):
    """A Table whose schema leaves 'age' out."""
    schema = ref.schema.with_overrides({"age": "excluded"})
    return Table(hold.data.drop(columns=["age"]), schema, "other.csv")


@pytest.mark.parametrize("bad, message", [
    (lambda ref, hold: hold.data.iloc[:0], "no rows"),
    (lambda ref, hold: hold.data.drop(columns=["age"]), "'age'"),
    (_without_age, "other.csv: the hold-out's columns differ"),
])
def test_bad_holdouts_are_one_line_errors(holdout_split, split_engine, bad, message):
    ref, hold, _ = holdout_split
    with pytest.raises(MemvizError, match=message) as err:
        holdout_floor(ref, bad(ref, hold), engine=split_engine)
    assert "\n" not in str(err.value)


def test_an_engine_of_other_rows_or_distance_is_refused(holdout_split, split_engine):
    ref, hold, _ = holdout_split
    with pytest.raises(MemvizError, match="standardized"):
        holdout_floor(ref, hold, distance="standardized", engine=split_engine)
    with pytest.raises(MemvizError, match="other rows"):
        holdout_floor(ref.subset(ref.row_ids[:1500]), hold, engine=split_engine)


def test_intervals_match_newcombe_1998():
    # Newcombe (1998), Stat Med 17:857 and 17:873: 81/263; 56/70 - 48/80; 9/10 - 3/10
    np.testing.assert_allclose(wilson_interval(81, 263), (0.2553, 0.3662), atol=5e-5)
    np.testing.assert_allclose(newcombe_interval(56, 70, 48, 80), (0.2, 0.0524, 0.3339), atol=5e-5)
    np.testing.assert_allclose(newcombe_interval(9, 10, 3, 10), (0.6, 0.1705, 0.8090), atol=5e-5)
    lo, hi = wilson_interval(0, 50)
    assert lo == 0 and 0 < hi < 0.1


def test_excess_figures_and_per_check_columns(split_floor):
    ex = excess(0.40, 2000, split_floor)
    assert ex.n_memorized == 800 and ex.low < ex.excess < ex.high and not ex.low <= 0 <= ex.high
    f = ex.figures()
    assert f["floor_pct"] == round(100 * split_floor.floor, 1) and f["n_holdout"] == split_floor.n_holdout
    assert f"{f['excess_points']:.1f} points" in excess_sentence(ex)
    per_check = pd.DataFrame({"check": [0, 1], "n_synthetic": [2000, 2000], "n_memorized": [800, 500]})
    cols = excess_columns(per_check, split_floor)
    assert cols.loc[0, "excess"] == pytest.approx(ex.excess) and cols.loc[0, "excess_low"] == pytest.approx(ex.low)
    assert list(cols.columns[:3]) == ["check", "n_synthetic", "n_memorized"]
    with pytest.raises(MemvizError):
        excess(0.4, 0, split_floor)


def test_expected_auc_rate_sums_to_the_holdout_mem_auc(split_floor):
    tau = split_floor.expected_auc_rate
    assert tau.shape == (split_floor.n_reference,) and np.all(tau > 0)
    assert tau.sum() == pytest.approx(split_floor.auc.sum() / split_floor.n_holdout)
    assert 0 < split_floor.null.auc_weight < 1
    order = np.argsort(split_floor.auc)
    assert np.all(np.diff(tau[order]) >= -1e-15)                      # shrunk, not reordered


def test_floor_survives_json_and_parquet(split_floor, tmp_path):
    (tmp_path / "f.json").write_text(json.dumps(split_floor.to_dict()))
    split_floor.to_frame().to_parquet(tmp_path / "f.parquet")
    back = Floor.from_stored(json.loads((tmp_path / "f.json").read_text()), pd.read_parquet(tmp_path / "f.parquet"))
    assert back.to_dict() == split_floor.to_dict()
    for name in ("row_ids", "hits", "nn1", "auc", "expected_rate", "expected_auc_rate"):
        np.testing.assert_array_equal(getattr(back, name), getattr(split_floor, name))


@pytest.mark.parametrize("p, n1, n0", [(0.997, 3000, 300), (0.997, 60000, 300), (0.27, 3000, 300), (0.02, 3000, 300)])
def test_the_excess_p_value_keeps_its_level_where_the_floor_is_near_0_or_1(p, n1, n0):
    """The verdict's ratio member: its one-sided p must hold its level under the null (both shares equal), by
    exact enumeration of the two binomials. The score test's normal approximation did not where almost every
    real row is flagged (an all-numerical table's floor of 99.7 %): size 6.9 % at H = 300, 6.3 % at M = 60,000."""
    from scipy import stats

    from memviz.measure.floor import excess_p_value

    def support(n):
        x = np.arange(n + 1)
        w = stats.binom.pmf(x, n, p)
        keep = w > 1e-12
        return x[keep], w[keep]

    x1, w1 = support(n1)
    x0, w0 = support(n0)
    size = sum(a * b for i, a in zip(x1, w1) for j, b in zip(x0, w0) if excess_p_value(int(i), n1, int(j), n0) <= 0.05)
    assert size <= 0.05, size
    assert excess_p_value(int(n1 * 0.5), n1, int(n0 * 0.2), n0) < 1e-6             # a clear excess is still seen
    for a, b in ((int(n1 * p), int(n0 * p)), (int(n1 * p) + 7, int(n0 * p) - 2)):   # Fisher's test, as scipy has it
        want = stats.fisher_exact([[a, n1 - a], [b, n0 - b]], alternative="greater")[1]
        assert excess_p_value(a, n1, b, n0) == pytest.approx(want, rel=1e-9)
