"""memviz.app.readings: the floor pages' library side (excess, per-row null, closeness, distances,
the dynamics against their null, typed row ids)."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from dash_helpers import floored_run

from memviz.app import comparisons, readings, runs
from memviz.compare import results_frame
from memviz.errors import MemvizError
from memviz.leaks.rows import closeness_by_row
from memviz.verdict.words import excess_sentence


@pytest.fixture(scope="module")
def floored(sample, tmp_path_factory):
    """A copier run of 300 sample rows with its floor measured on 500 other training rows."""
    train, _ = sample
    small, holdout = train.subset(train.row_ids[:300]), train.subset(train.row_ids[300:800])
    run_dir = tmp_path_factory.mktemp("floor") / "floored"
    floored_run(small, holdout, run_dir)
    return runs.load_run(run_dir), holdout


def test_last_excess_and_row_null_of_a_run_with_a_floor(floored, view):
    v, _ = floored
    ex = readings.last_excess(v)
    last = v.per_check.iloc[-1]
    assert ex.excess == pytest.approx(last["excess"]) and (ex.low, ex.high) == pytest.approx(
        (last["excess_low"], last["excess_high"]))
    assert ex.low > 0 and "come from the model" in excess_sentence(ex)           # the copier copies
    null = readings.run_row_null(v)
    assert null.n_generated == int(v.per_check["n_synthetic"].sum())
    assert set(np.flatnonzero(null.above_chance)) >= set(range(5))            # rows 0-9 are copied again and again
    tab = readings.copies_null_table(v)
    assert tab["observed"].sum() == len(v.train) and tab["expected"].sum() == pytest.approx(len(v.train))
    # a run without a floor: None everywhere, never a number
    assert readings.last_excess(view) is None and readings.run_row_null(view) is None and readings.copies_null_table(view) is None
    assert readings.stored_distance(view).floor is None and readings.run_holdout(view) is None


def test_leak_ranking_and_closeness_of_a_run(floored):
    v, _ = floored
    flagged = readings.run_closeness(v)
    assert len(flagged) == int(v.result.checks["memorized"].sum())
    ranked = readings.leak_ranking(v, "excess", 10, readings.run_row_null(v))
    assert set(ranked["row_id"].head(8)) <= set(range(10)) and (ranked["exact_copies"].head(8) > 0).all()
    per_row = closeness_by_row(flagged).set_index("row_id")                  # the listed rows' copies only
    assert (ranked.set_index("row_id")["exact_copies"] == per_row.loc[ranked["row_id"], "exact_copies"]).all()
    assert "exact_copies" not in readings.leak_ranking(v, "copies", 5, closeness=False).columns
    assert list(ranked.columns[-len(v.train.schema.columns):]) == list(v.train.schema.columns)
    with pytest.raises(MemvizError, match="floor"):
        readings.leak_ranking(v, "excess", 10, None)
    close = readings.check_closeness(v)
    n_copies = 20 * len(v.per_check)                                          # the copier's last check
    assert close["n_identical"] >= n_copies and close["identical_share"] == pytest.approx(
        close["n_identical"] / close["n_pairs"])
    assert close["holdout_identical_share"] == 0.0


def test_the_hold_out_is_found_only_when_it_is_the_floors(floored, sample):
    v, holdout = floored
    found = readings.run_holdout(v)                                               # through the job's spec
    assert found is not None and found.data.equals(holdout.data)
    train, test = sample
    (v.path.parent / ".jobs" / v.path.name / "spec.json").rename(v.path.parent / "spec.moved")
    try:
        assert readings.run_holdout(v, (test,)) is None                          # other real rows: refused
        assert readings.run_holdout(v, (test, holdout)).data.equals(holdout.data)
    finally:
        (v.path.parent / "spec.moved").rename(v.path.parent / ".jobs" / v.path.name / "spec.json")


def test_measuring_the_run_distance_again_gives_the_stored_figures(floored):
    v, holdout = floored
    stored = readings.stored_distance(v)
    again = readings.measure_distance(v, "paper", holdout)
    assert again.mem_ratio == stored.mem_ratio and again.floor.floor == stored.floor.floor
    assert again.excess.ci == pytest.approx(stored.excess.ci) and not again.stored
    other = readings.measure_distance(v, "standardized", holdout)
    assert other.floor.distance == "standardized" and 0 <= other.mem_ratio <= 1
    assert readings.measure_distance(v, "standardized").floor is None             # no hold-out: no floor
    table = readings.distance_table([stored, other, readings.measure_distance(v, "standardized")])
    assert table["floor"].iloc[2] == "no hold-out" and table["floor"].iloc[0].endswith("%")


def test_null_comparison_needs_four_checks_and_labels_the_paper_statistics(floored, view):
    v, _ = floored
    f = readings.null_comparison(v, replicates=40)
    assert len(f) == 8 and f["circular"].sum() == 4 and f.attrs["n_replicates"] == 40
    shown = readings.findings_table(f)
    assert shown["kind"].tolist()[:4] == ["paper's (circular)"] * 4 and len(shown.columns) == 8
    with pytest.raises(MemvizError, match="4 checks"):
        readings.null_comparison(view)                                            # 3 checks


def test_typed_row_ids_match_exactly_and_display_names_stay_unique():
    good, bad = readings.parse_row_ids("1, 13; x , 99999, ", np.arange(100))
    assert good == [1, 13] and bad == ["x", "99999"]
    frame = pd.DataFrame([[1, 2, 3]], columns=["copies", "excess", "copies"])
    assert list(readings.display_names(frame, {"copies": "copies", "excess": "copies above expected"}).columns) == \
        ["copies", "copies above expected", "copies (column)"]


def test_a_run_without_stored_generated_rows_says_so(floored, tmp_path):
    v, holdout = floored
    bare = tmp_path / "bare"
    shutil.copytree(v.path, bare)
    shutil.rmtree(bare / "samples")
    b = runs.load_run(bare)
    assert readings.run_closeness(b) is None and readings.check_closeness(b) is None
    assert readings.last_excess(b) is not None                                    # the floor needs no samples
    with pytest.raises(MemvizError, match="kept no generated rows"):
        readings.measure_distance(b, "standardized", holdout)


def test_dynamics_has_a_plain_one_line_summary(view):
    """Issue 20 item 8: Dynamics had no plain one-line summary."""
    dyn = view.dynamics
    text = readings.dynamics_sentence(dyn)
    share = dyn.total[dyn.top].sum() / dyn.total.sum()
    assert f"{100 * share:.1f} %" in text and "\n" not in text and text.endswith(".")
    assert f"{int(dyn.ever_memorized.sum()):,} of {dyn.n_rows:,} rows were copied" in text
    findings = pd.DataFrame({"circular": [True, False, False], "verdict": ["holds", "holds", "not shown"]})
    assert "1 of 2 fair (non-circular) tests" in readings.dynamics_sentence(dyn, findings)


def test_results_csv_has_readable_headers_and_a_data_dictionary():
    """Issue 20 item 6: the results CSV had about 50 raw column names and no dictionary."""
    recs = [{"method": m, "model": "tabddpm", "seed": 0, "status": "ok", "mem_ratio": r, "shape": 0.9, "mle": 0.8,
             "n_removed": 30.0, "key": "abc", "synthetic": "synthetic/x.parquet"}
            for m, r in (("baseline", 0.3), ("dynamiccut", 0.24))]
    raw = results_frame(recs)
    out = comparisons.readable_results(raw)
    assert "key" not in raw.columns or "key" not in out.columns
    assert not [c for c in out.columns if "_" in c], [c for c in out.columns if "_" in c]
    assert list(out["Method"]) == ["Baseline", "DynamicCut"]
    assert out["Memorization ratio (%)"].tolist() == [30.0, 24.0]
    assert out["Training rows removed"].dtype.name == "Int64"
    d = comparisons.data_dictionary(raw)
    assert list(d["column"]) == list(out.columns)                       # one line per readable column
    row = d.set_index("raw_name").loc["mem_ratio"]
    assert row["unit"] == "%" and row["better"] == "lower" and row["range"] == "0 to 100"
    assert "floor" in row["meaning"]
    assert (d["meaning"] != "").all()
