"""A fast version of the study (tiny subsample, 1 seed) so that the command cannot silently break."""
import json

import pytest

from memviz.cli import main
from conftest import SHARED

pytestmark = pytest.mark.skipif(not (SHARED / "shoppers" / "train.csv").exists(),
                                reason="../shared/datasets is not here")


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
    html = (tmp_path / "shoppers" / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") or "<html" in html[:200]


def test_study_bad_data_dir_is_a_user_error(tmp_path, capsys):
    code = main(["study", "--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "o"), "--scale", "tiny"])
    assert code == 2 and "not found" in capsys.readouterr().err
