"""DP-SGD arms and the dynamic threshold in a comparison: named, keyed, TabDDPM only, measured like
every arm (floor, excess, Shape, Trend, MLE, DCR, per-column fidelity) with their cost stated; from the CLI."""
from __future__ import annotations

import json
import math
from importlib import util

import numpy as np
import pandas as pd
import pytest

import memviz.viz.compare as vc
import memviz.viz.style as style
from memviz import viz
from memviz.app.comparisons import failed_cells, offered_methods
from memviz.cli import main
from memviz.compare import CompareConfig
from memviz.compare.methods import DPArm, check_methods, method_label
from memviz.errors import MemvizError
from memviz.tables.data import sample_data_dir

from .stubs import TINY, grid

pytest.importorskip("opacus")
META = sample_data_dir() / "meta.json"
#: Adult's bounds and categories as public knowledge: at 200 rows nothing could be released privately
from memviz.study.public import ADULT  # noqa: E402


def test_dp_arms_are_named_by_their_epsilon():
    cfg = CompareConfig(methods=("baseline", "dp", "dp@10"), models=("tabddpm",), epsilons=(1, 3)).validated()
    assert cfg.methods == ("baseline", "dp@1", "dp@3", "dp@10")
    assert method_label("dp@3") == "DP-SGD ε = 3" and method_label("dp@0.5") == "DP-SGD ε = 0.5"
    assert check_methods(["DP@3.0"]) == ("dp@3",)
    for methods, extra, words in ((("dp@0",), {}, "epsilon > 0"), (("dp@x",), {}, "epsilon > 0"),
                                  (("dp",), {"epsilons": ()}, "epsilons"),
                                  (("dp",), {"models": ("tvae",)}, "TabDDPM only"),
                                  (("dp",), {"privacy": {"epsilon": 2}}, "epsilons"),
                                  (("dp",), {"privacy": {"delta": 2}}, "delta"),
                                  (("dynamic_threshold",), {"dynamic": {"p0": 2}}, "p0")):
        with pytest.raises(MemvizError, match=words) as exc:
            CompareConfig(methods=methods, **{"models": ("tabddpm",), **extra}).validated()
        assert "\n" not in str(exc.value)
    round_trip = CompareConfig.from_dict(cfg.to_dict()).validated()
    assert round_trip == cfg


def test_a_grid_with_dp_and_the_dynamic_threshold(tables, tmp_path, checks):
    train, test = tables
    res = grid(train, test, ["baseline", "dp", "dynamic_threshold", "random"], ["tabddpm", "tvae"], [0],
               tmp_path / "g", epochs=3, epsilons=(2.0,), device="cpu",
               model_params={"tabddpm": dict(TINY), "tvae": {"epochs": 1}},
               dynamic={"check_every": 1, "n_samples": 100}, privacy=dict(ADULT))
    assert (res["status"] == "ok").all(), res["error"].tolist()
    assert checks == {"config": 1, "privacy": 1}    # the DP cell trains with the settings parsed at the door (was 8)
    assert set(zip(res["method"], res["model"])) == {("baseline", "tabddpm"), ("dp@2", "tabddpm"),
                                                     ("dynamic_threshold", "tabddpm"), ("random", "tabddpm"),
                                                     ("baseline", "tvae"), ("random", "tvae")}
    by = res[res["model"] == "tabddpm"].set_index("method")
    dp = by.loc["dp@2"]
    assert dp["epsilon"] == 2.0 and 2.0 - 0.01 < dp["epsilon_spent"] <= 2.0
    assert dp["delta"] == pytest.approx(0.1 / len(train)) and dp["noise_multiplier"] > 0
    assert np.isnan(by.loc["baseline", "epsilon"]) and by.loc["baseline", "row_epochs_left_out"] == 0
    for m in ("dp@2", "dynamic_threshold", "baseline"):                    # measured like every arm
        for c in ("mem_ratio", "floor", "excess", "shape", "trend", "trend_report", "mle", "dcr_share",
                  "dcr_median_train", "wasserstein_mean", "jsd_max", "total_seconds"):
            assert np.isfinite(by.loc[m, c]) or c == "trend_report", (m, c)
    dyn = by.loc["dynamic_threshold"]
    n = len(train)
    # checks at epochs 1 and 2 (not 3 = E); epoch 2 leaves out ceil(p(1) N), epoch 3 ceil(p(2) N)
    p = [0.1 * 0.5 * (1 + math.cos(math.pi * e / 3)) for e in (1, 2)]
    assert dyn["row_epochs_left_out"] == sum(math.ceil(round(x * n, 9)) for x in p)
    assert 0 < dyn["rows_left_out"] <= dyn["row_epochs_left_out"] and dyn["n_removed"] == 0
    assert by.loc["random", "row_epochs_left_out"] == by.loc["random", "n_removed"] * 3
    fid = pd.read_csv(tmp_path / "g" / "column_fidelity.csv")
    assert set(fid["method"]) == set(res["method"]) and set(fid["column"]) == set(train.schema.columns)
    assert set(fid["reference"]) == {0.1, 0.05}
    manifest = json.loads((tmp_path / "g" / "experiment.json").read_text())
    assert set(manifest["skipped"]) == {"dp@2 x tvae", "dynamic_threshold x tvae"}
    again = grid(train, test, ["baseline", "dp", "dynamic_threshold", "random"], ["tabddpm", "tvae"], [0],
                 tmp_path / "g", epochs=3, epsilons=(2.0,), device="cpu",
                 model_params={"tabddpm": dict(TINY), "tvae": {"epochs": 1}},
                 dynamic={"check_every": 1, "n_samples": 100}, privacy=dict(ADULT))
    assert again.equals(res)                                             # a rerun recomputes nothing
    assert len(pd.read_csv(tmp_path / "g" / "column_fidelity.csv")) == len(fid)


def test_cli_dp_warmup_and_compare(files, tmp_path, capsys):
    meta = tmp_path / "meta.json"      # the schema declares Adult's bounds and categories public
    meta.write_text(json.dumps({**json.loads(META.read_text()), "public": ADULT}))
    out = tmp_path / "warm"
    code = main(["warmup", "--train", str(files / "train.csv"), "--schema", str(meta), "--out", str(out),
                 "--epochs", "2", "--check-every", "1", "--device", "cpu", "--epsilon", "4", "--quiet",
                 "--model-params", json.dumps(dict(TINY))])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    said = json.loads(cap.out.strip().splitlines()[-1])["privacy"]      # the CLI's JSON states the guarantee
    assert said["epsilon"] == 4.0 and said["epsilon_spent"] <= 4.0 and "whole pipeline" in said["covers"]
    m = json.loads((out / "manifest.json").read_text())
    assert m["config"]["model_params"]["privacy"] == {"epsilon": 4.0}
    eps = [c["epsilon_spent"] for c in m["checks"]]
    assert 0 < eps[0] < eps[1] <= 4.0 and eps[1] > 4.0 - 0.01
    priv = m["summary"]["privacy"]          # the manifest states ε, δ, their parts, what they cover and assume
    assert priv["epsilon_spent"] == pytest.approx(eps[1])
    assert priv["epsilon_spent"] == pytest.approx(priv["epsilon_preprocessing"] + priv["epsilon_sgd"])
    assert priv["delta_spent"] == pytest.approx(priv["delta_preprocessing"] + priv["delta_sgd"])
    assert "whole pipeline" in priv["covers"] and "schema" in priv["assumes_public"]
    assert priv["preprocessing"]["public"]["categories"] and priv["composition"].startswith("basic sequential")
    res = tmp_path / "cmp"
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                 "--schema", str(meta), "--methods", "baseline,dp", "--epsilons", "1,10", "--models", "tabddpm",
                 "--seeds", "0", "--epochs", "1", "--device", "cpu", "--out", str(res), "--quiet",
                 "--model-params", json.dumps({"tabddpm": dict(TINY)})])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    csv = pd.read_csv(res / "results.csv")
    assert list(csv["method"]) == ["baseline", "dp@1", "dp@10"] and (csv["status"] == "ok").all()
    assert csv["epsilon_spent"].iloc[1] <= 1 and csv["epsilon_spent"].iloc[2] <= 10
    code = main(["warmup", "--train", str(files / "train.csv"), "--schema", str(META), "--out",
                 str(tmp_path / "bad"), "--epochs", "2", "--device", "cpu", "--epsilon", "1", "--delta", "0.5",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "not below 1/N" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "bad").exists()                               # refused before any work


def test_an_arm_that_cannot_run_costs_no_other_cell(tables, tmp_path, monkeypatch):
    """Issue 50: without Opacus a comparison of four methods lost all its cells; now the DP arm is recorded
    failed with its one line and the others finish."""
    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *a: None if name == "opacus" else real(name, *a))
    train, test = tables
    res = grid(train, test, ["baseline", "dp@3", "random"], ["tabddpm"], [0], tmp_path / "g", epochs=1,
               device="cpu", model_params={"tabddpm": dict(TINY)}, privacy=dict(ADULT))
    by = res.set_index("method")
    assert by.loc["baseline", "status"] == by.loc["random", "status"] == "ok"
    assert np.isfinite(by.loc["baseline", "mem_ratio"]) and np.isfinite(by.loc["random", "mem_ratio"])
    assert by.loc["dp@3", "status"] == "failed"
    assert by.loc["dp@3", "error"] == "privacy: private training needs Opacus: pip install 'memviz[dp]'"
    assert "dp" not in offered_methods()                  # and the page does not offer it


def test_epsilon_is_kept_exactly_as_given(tables, tmp_path):
    eps = 0.123456789
    checked = CompareConfig(methods=("dp",), models=("tabddpm",), epsilons=(eps,)).checked()
    cfg = checked.settings
    assert cfg.methods == ("dp@0.123456789",) and DPArm.parse(cfg.methods[0]) == DPArm(eps)
    assert method_label("dp@0.123456789") == "DP-SGD ε = 0.123456789" and DPArm(3.0).name == "dp@3"
    assert CompareConfig.from_dict(cfg.to_dict()).checked() == checked   # old "dp@3" reads the same
    assert [a.epsilon for a in checked.arms] == [eps] and DPArm(checked.arms[0].epsilon).name == cfg.methods[0]


def test_the_page_lists_a_failed_arm_with_its_reason():
    res = pd.DataFrame({"method": ["baseline", "dp@3"], "model": ["tabddpm", "tabddpm"], "seed": [0, 0],
                        "status": ["ok", "failed"], "error": ["", "privacy: private training needs Opacus: pip x"]})
    assert failed_cells(res) == ["DP-SGD ε = 3 × TabDDPM, seed 0: failed, privacy: private training needs Opacus: pip x"]


def test_the_bundled_sample_declares_the_studys_public_knowledge():
    """sample_data/meta.json's "public" is memviz.study.public.ADULT (one list, not two drifting apart), and every
    category of the sample is in it."""
    meta = json.loads(META.read_text())
    assert meta["public"] == ADULT
    train = pd.read_csv(sample_data_dir() / "train.csv")
    for col, values in ADULT["categories"].items():
        assert set(train[col].dropna()) <= set(values), col


def test_one_method_label_feeds_both_tables_of_the_compare_page():
    """Issue 53 item 3: the results table (memviz.viz.compare.results_display) and the three-way table read two
    different method_label functions (one in viz.style with a by-letters fallback, one in compare.methods);
    there is one now, and the dashboard's face hands on the same."""
    assert vc.method_label is method_label and viz.method_label is method_label
    assert not hasattr(style, "method_label")
    assert [method_label(m) for m in ("dp@3", "dynamiccut", "DynamicCut", "smote_nc", "custom")] == [
        "DP-SGD ε = 3", "DynamicCut", "DynamicCut", "SMOTE-NC", "custom"]
