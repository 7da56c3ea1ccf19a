"""A fast version of the study (tiny subsample, 1 seed) so that the command cannot silently break."""
import json

import numpy as np
import pandas as pd
import pytest

from memviz.cli import main
from memviz.study.findings import _verdict_pair, findings, paired_difference
from conftest import SHARED

needs_shared = pytest.mark.skipif(not (SHARED / "shoppers" / "train.csv").exists(),
                                  reason="../shared/datasets is not here")


@needs_shared
def test_tiny_study_writes_every_part(tmp_path, capsys):
    code = main(["study", "--data-dir", str(SHARED), "--out", str(tmp_path), "--scale", "tiny",
                 "--datasets", "shoppers", "--device", "cpu"])
    out, err = capsys.readouterr()
    assert code == 0, err
    last = json.loads(out.strip().splitlines()[-1])
    assert last["datasets"] == ["shoppers"]
    study = json.loads((tmp_path / "shoppers" / "study.json").read_text())
    assert study["n_train"] == 200 and study["warmup"]["checks"] == 3
    assert set(study["heavy_tail"]["summary"]["concentration"]) == {"0.01", "0.05", "0.1"}
    assert sum(study["heavy_tail"]["histogram"]["counts"]) == 200
    assert study["early_identification"] and all(0 <= e["precision"] <= 1 for e in study["early_identification"])
    cells = {(r["method"], r["model"]) for r in study["comparison"]}
    assert cells == {(m, mo) for m in ("baseline", "dynamiccut", "random") for mo in ("tabddpm", "tvae")}
    for r in study["comparison"]:
        assert 0 <= r["shape_mean"] <= 1 and 0 <= r["mem_ratio_mean"] <= 1
    md = (tmp_path / "study.md").read_text()
    for heading in ("Heavy tail", "Top vs Non-Top", "Early identification", "Comparison", "Transferability"):
        assert heading in md
    assert "31.37" in md  # the published figure sits beside ours
    assert "Which of the paper's findings hold at this scale" in md and "### Findings" in md
    assert [p["model"] for p in study["paired"]] == ["tabddpm", "tvae"]
    verdicts = {f["claim"]: f["verdict"] for f in findings(study)}
    assert len(verdicts) >= 7 and all(f"**{v}**" in md for v in verdicts.values())
    html = (tmp_path / "shoppers" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]


@needs_shared
def test_study_bad_data_dir_is_a_user_error(tmp_path, capsys):
    code = main(["study", "--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "o"), "--scale", "tiny"])
    assert code == 2 and "not found" in capsys.readouterr().err


def _results(red_a, red_b, model="tabddpm", a="dynamiccut", b="random"):
    rows = []
    for seed, (ra, rb) in enumerate(zip(red_a, red_b)):
        rows += [{"model": model, "method": a, "seed": seed, "relative_reduction": ra, "status": "ok"},
                 {"model": model, "method": b, "seed": seed, "relative_reduction": rb, "status": "ok"},
                 {"model": model, "method": "baseline", "seed": seed, "relative_reduction": np.nan, "status": "ok"}]
    return pd.DataFrame(rows)


def test_paired_difference_is_seed_by_seed():
    # seed effects cancel: a beats b by 0.02, 0.03, 0.04 whatever the seed's level
    pr = paired_difference(_results([0.10, -0.20, 0.30], [0.08, -0.23, 0.26]), "tabddpm", "dynamiccut", "random")
    assert pr["seeds"] == [0, 1, 2] and pr["n_positive"] == 3
    assert pr["mean"] == pytest.approx(0.03) and pr["std"] == pytest.approx(0.01)
    from scipy.stats import ttest_1samp
    assert pr["p"] == pytest.approx(ttest_1samp([0.02, 0.03, 0.04], 0).pvalue)
    assert _verdict_pair(pr)[0] == "holds"
    # a failed cell drops its seed from the pairing
    res = _results([0.1, 0.2, 0.3], [0.0, 0.0, 0.0])
    res.loc[(res["seed"] == 1) & (res["method"] == "random"), "status"] = "failed"
    assert paired_difference(res, "tabddpm", "dynamiccut", "random")["seeds"] == [0, 2]


@pytest.mark.parametrize("a, b, verdict", [
    ([0.1, 0.1, 0.1], [0.2, 0.2, 0.2], "reversed"),
    ([0.1, 0.3, 0.1], [0.2, 0.2, 0.2], "not shown"),
    ([0.3, 0.3], [0.2, 0.2], "not shown"),                 # two seeds are not enough
])
def test_pair_verdicts(a, b, verdict):
    assert _verdict_pair(paired_difference(_results(a, b), "tabddpm", "dynamiccut", "random"))[0] == verdict


def test_findings_apply_their_criteria():
    study = {
        "heavy_tail": {"summary": {
            "concentration": {"0.01": 0.1, "0.05": 0.2, "0.1": 0.29}, "heavy_tail": {"gini": 0.5},
            "top": {"median_first_epoch": 10, "forgetting_rate": 3.0, "early_mem_auc": 0.9},
            "non_top": {"median_first_epoch": 50, "forgetting_rate": 1.0, "early_mem_auc": 0.1},
            "p_first_epoch": 1e-5, "p_forgetting": 0.02, "p_early_mem_auc": 1e-9}},
        "early_identification": [{"T": 20, "precision": 0.15, "random_precision": 0.1},
                                 {"T": 50, "precision": 0.25, "random_precision": 0.1},
                                 {"T": 100, "precision": 0.05, "random_precision": 0.1}],
        "warmup": {"config": {"epochs": 100}},
        "paired": [paired_difference(_results([0.3, 0.3, 0.3], [0.1, 0.1, 0.1]), "tabddpm", "dynamiccut", "random")],
        "comparison": [{"model": "tabddpm", "method": "baseline", "shape_mean": 0.95, "trend_mean": 0.90, "mle_mean": 0.88},
                       {"model": "tabddpm", "method": "dynamiccut", "shape_mean": 0.945, "trend_mean": 0.88,
                        "mle_mean": 0.89}],
    }
    v = {f["claim"]: f["verdict"] for f in findings(study)}
    assert v["heavy tail: a small Top group gets most copies"] == "does not hold"      # 29 % < 30 %
    assert v["Top rows are memorized earlier"] == "holds"
    assert v["Top rows are memorized more erratically (forgetting events)"] == "does not hold"  # p = 0.02
    assert v["Top rows have a higher early Mem-AUC"] == "holds"
    assert v["the first half of the warm-up identifies the final Top group"] == "holds"  # T = 50: 0.25 >= 0.2
    assert v["DynamicCut reduces TabDDPM memorization more than random pruning of as many rows"] == "holds"
    assert v["DynamicCut keeps TabDDPM's quality (Shape, Trend, MLE)"] == "does not hold"  # Trend -2 pts
