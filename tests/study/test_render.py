"""The study document is rendered from the committed files alone, and every arm gets the same budget."""
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from memviz.models import make_model
from memviz.study import run_study
from memviz.study.findings import claim_tests
from memviz.study.mitigation import baseline_steps, collect, merge_stored, with_steps
from memviz.study.scales import SCALES
from memviz.study.tables import three_way_rows

PARTS = ("floors", "knobs", "budget", "warmups", "main")


@pytest.fixture()
def data_dir(tmp_path):
    """The bundled Adult sample as a data folder (named shoppers: the tiny scale's budget runs use that name)."""
    d = tmp_path / "data" / "shoppers"
    d.mkdir(parents=True)
    for f in ("train.csv", "test.csv", "meta.json"):
        shutil.copy(ROOT / "sample_data" / f, d / f)
    return tmp_path / "data"


@pytest.mark.slow
def test_render_from_the_committed_files_gives_the_same_document(data_dir, tmp_path):
    """Regression (issue 22): the run folders are not committed, and a render-only rerun without them
    dropped the mitigation tables. Render, delete every runs/ folder, render again: the same document."""
    out = tmp_path / "o"
    kw = dict(scales=("tiny",), datasets=("shoppers",), device="cpu", n_jobs=1)
    run_study(data_dir, out, parts=PARTS, **kw)
    first = (out / "study.md").read_text()
    results = pd.read_csv(out / "tiny" / "shoppers" / "results.csv")
    assert "DynamicCut (raw) lowers memorization more than random pruning" in first
    assert "Holm p̃" in first and "power at the paper's effect" in first
    # equal optimisation budgets: every TabDDPM arm ran the baseline's steps, measured, not derived
    tab = results[results["model"] == "tabddpm"]
    assert tab["steps_recorded"].all() and tab["steps"].nunique() == 1
    assert int(tab["steps"].iloc[0]) == baseline_steps(SCALES["tiny"], 200)
    assert (tab.loc[tab["method"] == "baseline", "n_train_used"] > tab.loc[tab["method"] == "dynamiccut",
                                                                           "n_train_used"].to_numpy()).all()
    pruned = results[(results["model"] == "tabddpm") & results["method"].isin(["dynamiccut", "random"])]
    assert pruned["control_kept_cross"].between(0, 1).all()       # the other seed's baseline against these kept rows
    assert "other seeds' baselines vs kept" in first
    for runs in (out / "tiny").rglob("runs"):
        shutil.rmtree(runs)
    run_study(data_dir, out, parts=(), **kw)
    assert (out / "study.md").read_text() == first
    pd.testing.assert_frame_equal(pd.read_csv(out / "tiny" / "shoppers" / "results.csv"), results)


def _res(rows):
    base = {"model": "tabddpm", "status": "ok", "grid": "main", "mem_ratio_pruned": np.nan}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_merge_stored_puts_rerun_cells_in_place(tmp_path):
    stored = _res([{"method": "baseline", "seed": 0, "mem_ratio": 0.5}, {"method": "tabcutmix", "seed": 0,
                                                                          "mem_ratio": 0.6}])
    stored.to_csv(tmp_path / "results.csv", index=False)
    fresh = _res([{"method": "tabcutmix", "seed": 0, "mem_ratio": 0.4, "steps": 4000},
                  {"method": "tabcutmix", "seed": 1, "mem_ratio": 0.45, "steps": 4000}])
    m = merge_stored(tmp_path / "results.csv", fresh)
    assert list(zip(m["method"], m["seed"], m["mem_ratio"])) == [("baseline", 0, 0.5), ("tabcutmix", 0, 0.4),
                                                                  ("tabcutmix", 1, 0.45)]
    assert m["relative_reduction"].iloc[1] == pytest.approx(0.2)
    assert merge_stored(tmp_path / "nope.csv", None) is None
    assert merge_stored(tmp_path / "results.csv", None)["mem_ratio"].tolist() == [0.5, 0.6]


def test_with_steps_derives_the_old_cells_budget():
    """Cells run before the steps column: E · ceil(n / min(256, n)). At 250 rows the augmented arms
    (325 rows) took 2 batches per epoch: 8,000 steps against the baseline's 4,000 (issue 22)."""
    res = _res([{"method": "baseline", "seed": 0, "epochs": 4000, "n_train_used": 250},
                {"method": "tabcutmix", "seed": 0, "epochs": 4000, "n_train_used": 325},
                {"method": "dynamiccutmix", "seed": 0, "epochs": 4000, "n_train_used": 293},
                {"method": "dynamiccut", "seed": 0, "epochs": 4000, "n_train_used": 225, "steps": 4000}])
    out = with_steps(res, SCALES["regime"])
    assert out["steps"].tolist() == [4000, 8000, 8000, 4000]
    assert out["steps_recorded"].tolist() == [False, False, False, True]
    again = with_steps(out, SCALES["regime"])                         # a second pass keeps which were measured
    assert again["steps_recorded"].tolist() == [False, False, False, True] and again["steps"].equals(out["steps"])
    assert baseline_steps(SCALES["regime"], 250) == 4000 and baseline_steps(SCALES["cpu"], 3000) == 2400


def test_tabddpm_steps_budget_is_equal_across_table_sizes(sample):
    train, _ = sample
    small, big = train.subset(train.row_ids[:100]), train.subset(train.row_ids[:150])
    params = dict(preset="cpu-quick", layers=[16], dim_t=8, n_timesteps=5, batch_size=64, epochs=3, device="cpu")
    a = make_model("tabddpm", steps=12, **params).fit(small)          # 2 batches an epoch: 6 epochs
    b = make_model("tabddpm", steps=12, **params).fit(big)            # 3 batches an epoch: 4 epochs
    c = make_model("tabddpm", steps=10, **params).fit(big)            # the last epoch stops after 1 of 3 batches
    assert (a.step_, a.epoch_, b.step_, b.epoch_, c.step_, c.epoch_) == (12, 6, 12, 4, 10, 4)
    # steps = epochs · batches per epoch is the epochs budget, bit for bit
    d = make_model("tabddpm", **params).fit(big)
    e = make_model("tabddpm", steps=9, **params).fit(big)
    assert d.loss_history_ == e.loss_history_ and d.step_ == e.step_ == 9
    with pytest.raises(Exception, match="steps"):
        make_model("tabddpm", steps=0, **params)



def test_equal_steps_reruns_are_their_own_arms(tmp_path):
    """An equal-steps rerun of confounded cells (grid "steps") enters as <method>_eq, beside the confounded
    cells it does not replace, and its claim pairs only the rerun arms."""
    (tmp_path / "steps_s0").mkdir()
    _res([{"method": "baseline", "seed": 0, "mem_ratio": 0.55, "steps": 4000},
          {"method": "tabcutmix", "seed": 0, "mem_ratio": 0.50, "steps": 4000}]).drop(columns="grid").to_csv(
        tmp_path / "steps_s0" / "results.csv", index=False)
    res = collect(None, SCALES["regime"], {0: {"0.25": 960, "0.5": 1920}}, tmp_path, "cpu")
    assert sorted(res["method"]) == ["baseline_eq", "tabcutmix_eq"] and set(res["grid"]) == {"steps"}
    [t] = [t for t in claim_tests(res) if t["key"] == "tcm_eq_vs_baseline_eq"]
    assert t["d"] == pytest.approx([0.05]) and t["family"] == "augmentation"


@pytest.mark.slow
def test_a_rerun_in_a_fresh_clone_continues_with_the_seeds_not_committed(data_dir, tmp_path):
    """Issue 22 (the 10-seed test outlives a session): the run folders are not committed, so a rerun in a
    fresh clone redid every warm-up and cell. Seeds whose warm-up and cells are committed are kept as they
    are; only the others run. Issue 23: the study's warm-ups measure quality at every check, and the stop
    grid's early stop trains to the recommended epoch: fewer steps than the baseline's, recorded."""
    out = tmp_path / "o"
    kw = dict(scales=("tiny",), datasets=("shoppers",), device="cpu", n_jobs=1, parts=("warmups", "main", "stop"))
    d = out / "tiny" / "shoppers"
    run_study(data_dir, out, seeds=(0,), **{**kw, "parts": ("warmups", "main")})
    records = {f: (d / f).read_bytes() for f in ("per_check.csv", "null.csv", "selections.csv")}
    run_study(data_dir, out, seeds=(0,), **{**kw, "parts": ("stop",)})  # its own warm-up: the records stay
    assert {f: (d / f).read_bytes() for f in records} == records
    assert (d / "runs" / "stopwarmup_s0").is_dir()
    frontier = pd.read_csv(d / "stop_per_check.csv")                  # the checks early stop chose from
    assert set(frontier["seed"]) == {0} and frontier[["excess", "shape", "trend"]].notna().all().all()
    first = pd.read_csv(d / "results.csv")
    pc = pd.read_csv(d / "per_check.csv")
    assert pc[["shape", "trend", "copy_share"]].notna().all().all()    # quality at every check of the warm-up
    tab = first.set_index("method")
    assert tab.loc["early_stop", "grid"] == "stop" and tab.loc["early_stop", "steps_recorded"]
    assert tab.loc["early_stop", "steps"] == tab.loc["early_stop", "epochs"] * np.ceil(200 / 64)
    assert tab.loc["early_stop", "epochs"] <= SCALES["tiny"].epochs
    for runs in (out / "tiny").rglob("runs"):                          # a fresh clone: only committed files
        shutil.rmtree(runs)
    run_study(data_dir, out, seeds=(0, 1), **kw)
    assert not (d / "runs" / "warmup_s0").exists() and (d / "runs" / "warmup_s1").is_dir()
    again = pd.read_csv(d / "results.csv")
    assert sorted(again["seed"].unique()) == [0, 1]
    pd.testing.assert_frame_equal(again[again["seed"] == 0].reset_index(drop=True)[first.columns],
                                  first, check_dtype=False)
    assert sorted(pd.read_csv(d / "per_check.csv")["seed"].unique()) == [0, 1]
    assert sorted(pd.read_csv(d / "null.csv")["seed"].unique()) == [0, 1]
    assert [w["seed"] for w in json.loads((d / "summary.json").read_text())["warmups"]] == [0, 1]
    summary = json.loads((d / "summary.json").read_text())
    assert [r["seed"] for r in summary["stop"]] == [0, 1] and all(r["base_mem_ratio"] is not None
                                                                  for r in summary["stop"])
    text = (out / "study.md").read_text()
    assert "Early stop (issue 23), seed by seed" in text and "Early stop (the warm-up's recommended epoch)" in text
    assert "Early stop (retrained to the warm-up's recommended epoch) lowers memorization" in text


def test_the_three_way_table_states_each_arms_gain_quality_and_cost():
    """Issue 38 item 5: the study shows the write-up's three-way table (privacy gain, quality change, cost) with the
    ε a DP arm spent and the row-epochs a pruning arm left out; a scale without it renders no table."""
    rec = {"model": "tabddpm", "method": "dp@10", "family": "differential privacy", "n_seeds": 10,
           "gain_rel": 0.987, "gain_rel_low": 0.964, "gain_rel_high": 1.01, "gain_points": 0.488,
           "gain_points_low": 0.474, "gain_points_high": 0.501, "shape_change": -0.578, "shape_change_low": -0.622,
           "shape_change_high": -0.533, "trend_change": None, "mle_change": -0.416, "mle_change_low": None,
           "mle_change_high": None, "time_ratio": 2.06, "time_ratio_low": 1.33, "time_ratio_high": 2.79,
           "epsilon_spent": 9.998, "row_epochs_left_out": 0.0}
    thr = {**rec, "method": "dynamic_threshold", "family": "pruning", "epsilon_spent": None,
           "row_epochs_left_out": 186049.0}
    lines = three_way_rows({"adult": {"three_way": [rec, thr, {**rec, "model": "ctgan"}]}, "x": {}})
    body = [ln for ln in lines if ln.startswith("| adult")]
    assert len(body) == 2                                  # TabDDPM only
    cells = [c.strip() for c in body[0].strip("|").split("|")]
    assert cells[1] == "DP-SGD ε = 10" and cells[2] == "differential privacy" and cells[3] == "10"
    assert cells[4] == "+98.7 (+96.4, +101.0)" and cells[5] == "+48.8 (+47.4, +50.1)"
    assert cells[7] == "–" and cells[8] == "-41.6"         # a missing figure, a mean without its interval
    assert cells[9] == "2.06 (1.33, 2.79)" and cells[10] == "10.00" and cells[11] == "–"
    assert body[1].rstrip(" |").endswith("186,049")
    assert three_way_rows({"adult": {"summary": []}}) == []
