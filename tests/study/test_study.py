"""The study at the tiny scale (so that the command cannot silently break), and its statistics."""
import json

import pytest
from conftest import SHARED

import memviz.study.run as run
from memviz.cli import main

needs_shared = pytest.mark.skipif(not (SHARED / "shoppers" / "train.csv").exists(),
                                  reason="../shared/datasets is not here")


@needs_shared
def test_tiny_study_writes_every_part(tmp_path, capsys):
    md = tmp_path / "doc" / "study.md"
    code = main(["study", "--data-dir", str(SHARED), "--out", str(tmp_path / "o"), "--scales", "tiny",
                 "--datasets", "shoppers", "--device", "cpu", "--markdown", str(md)])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out.strip().splitlines()[-1])["scales"] == ["tiny"]
    floors = {(r["dataset"], r["distance"]): r for r in
              (json.loads(f.read_text()) for f in (tmp_path / "o" / "floors").glob("*.json"))}
    assert set(floors) == {("shoppers", "paper"), ("shoppers", "standardized")}
    assert all(r["low"] <= r["floor"] <= r["high"] and r["n_holdout"] == 1233 for r in floors.values())
    s = json.loads((tmp_path / "o" / "tiny" / "shoppers" / "summary.json").read_text())
    assert s["n_train"] == 200 and [w["seed"] for w in s["warmups"]] == [0, 1]
    for w in s["warmups"]:  # every check carries its excess over the warm-up's own floor
        pc = w["per_check"]
        assert all(lo <= x <= hi for x, lo, hi in zip(pc["excess"], pc["excess_low"], pc["excess_high"]))
        assert set(w["T"]) == {"0.25", "0.5"} and w["T"]["0.25"] <= w["T"]["0.5"]
    names = {f["name"] for f in s["null"]}
    assert {"first_epoch_split", "forgetting_rate_split", "early_identification_after"} <= names
    assert all(f["n_seeds"] == 2 for f in s["null"])
    assert any(o["between"] == "warm-up seeds" and o["pairs"] == 1 for o in s["overlap"])
    cells = {(r["model"], r["method"], r["n_seeds"]) for r in s["summary"]}
    assert cells == {("tabddpm", m, 2) for m in ("baseline", "dynamiccut", "dynamiccut_excess", "random", "early_stop")}
    by = {r["method"]: r for r in s["summary"]}
    assert by["baseline"]["floor_mean"] == pytest.approx(s["floors"]["paper"]["floor"])   # the same floor
    assert by["dynamiccut"]["control_kept_mean"] is not None and by["baseline"].get("control_kept_mean") is None
    assert {t["key"] for t in s["tests"]} >= {"dc_vs_random", "dcx_vs_random", "dc_kept_vs_control"}
    assert all(t["min_p"] == 0.25 or t["n"] < 2 for t in s["tests"])   # 2 seeds: 2^-2
    text = md.read_text()
    for heading in ("The floor in two sentences", "## 1. The floor", "## 2. Excess", "## 3. The dynamics",
                    "## 4. Mitigation", "## 5. T truly early", "## 6. CTGAN and TVAE", "## 9. The GPU plan"):
        assert heading in text
    assert "31.37 %" in text and "../o/figures.html" in text
    assert (tmp_path / "o" / "figures.html").read_text().startswith("<!DOCTYPE html>")
    # a rerun reuses everything (no new cell, no new warm-up) and rewrites the figures byte for byte
    before = (tmp_path / "o" / "tiny" / "shoppers" / "results.csv").read_text()
    figures = (tmp_path / "o" / "figures.html").read_bytes()
    assert main(["study", "--data-dir", str(SHARED), "--out", str(tmp_path / "o"), "--scales", "tiny",
                 "--datasets", "shoppers", "--device", "cpu", "--parts", "warmups"]) == 0
    assert (tmp_path / "o" / "tiny" / "shoppers" / "results.csv").read_text() == before
    assert (tmp_path / "o" / "figures.html").read_bytes() == figures


def test_study_bad_input_is_a_user_error(tmp_path, capsys):
    code = main(["study", "--data-dir", str(tmp_path / "nope"), "--out", str(tmp_path / "o"), "--scales", "tiny"])
    assert code == 2 and "not found" in capsys.readouterr().err
    (tmp_path / "d").mkdir()
    code = main(["study", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o"), "--scales", "huge"])
    assert code == 2 and "huge" in capsys.readouterr().err


def test_memviz_study_defaults_to_auto_and_keys_its_runs_by_the_resolved_device(tmp_path, monkeypatch):
    """`memviz study` uses a GPU when one is visible (device auto, like every other command) and
    resolves it before anything is keyed, so a CPU machine's auto reuses runs made with --device cpu."""
    import torch  # lazy: torch is optional (memviz[train])

    seen = []
    monkeypatch.setattr(run, "dataset_study", lambda name, folder, sc, out, parts, device, n_jobs, progress:
                        seen.append(device) or {"dataset": name})
    monkeypatch.setattr(run, "write_figures", lambda study, out: None)
    monkeypatch.setattr(run, "render_markdown", lambda study, out, md: "")
    data = tmp_path / "data" / "t"
    data.mkdir(parents=True)
    (data / "train.csv").write_text("a\n1\n")
    args = ["study", "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "o"), "--scales", "tiny",
            "--datasets", "t", "--parts", "main"]
    for gpu, extra, expected in ((True, [], "cuda"), (False, [], "cpu"), (True, ["--device", "cpu"], "cpu")):
        monkeypatch.setattr(torch.cuda, "is_available", lambda gpu=gpu: gpu)
        seen.clear()
        assert main(args + extra) == 0
        assert seen == [expected]                                 # never "auto": keys stay those of the device
