"""The CLI contract that scripts rely on."""
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from helpers import TINY_MODEL
from memviz.cli import main

from conftest import ROOT

SAMPLE = ROOT / "sample_data"


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture()
def small_files(tmp_path, sample):
    train, test = sample
    tr = train.data.iloc[:200].reset_index(drop=True)
    syn = pd.concat([test.data.iloc[:40], tr.iloc[[7, 3]]], ignore_index=True)  # two planted copies at the end
    tr.to_csv(tmp_path / "train.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    return tmp_path


def test_memorize_contract(capsys, small_files):
    out_csv = small_files / "out.csv"
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(small_files / "syn.csv"),
                             "--out", str(out_csv), "--device", "cpu", "--quiet")
    assert code == 0, err
    summary = last_json(out)
    assert {"mem_ratio", "mem_auc", "n_train", "n_synthetic", "seconds"} <= set(summary)
    assert summary["n_train"] == 200 and summary["n_synthetic"] == 42
    res = pd.read_csv(out_csv)
    assert list(res.columns[:6]) == ["nn1", "nn2", "d1", "d2", "ratio", "memorized"]
    assert len(res) == 42
    assert res["nn1"].iloc[-2:].tolist() == [7, 3] and res["memorized"].iloc[-2:].all()
    assert summary["mem_ratio"] == pytest.approx(res["memorized"].mean())
    assert ((res["nn1"] >= 0) & (res["nn1"] < 200)).all()


@pytest.mark.parametrize("mutate, needle", [
    (lambda p: p.write_text(""), "empty"),
    (lambda p: p.write_bytes("age,workclass\n30,caf\xe9\n".encode("latin-1")), "encoding"),
    (lambda p: p.write_text("a,b\n1,2\n"), "not in"),
    (lambda p: p.write_bytes(b"\xef\xbb\xbf\n"), "empty"),  # only a UTF-8 BOM
])
def test_memorize_user_errors_exit_2_with_one_line(capsys, small_files, mutate, needle):
    bad = small_files / "bad.csv"
    mutate(bad)
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(bad), "--out",
                             str(small_files / "o.csv"), "--quiet")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err and "bad.csv" in err
    assert not (small_files / "o.csv").exists()  # no half-written output


def test_usage_error_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["memorize", "--train", "x.csv"])
    assert e.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_warmup_inspect_prune_contract(capsys, small_files):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--out", str(run), "--epochs", "4", "--check-every", "2",
                             "--n-samples", "50", "--seed", "1", "--device", "cpu", "--quiet",
                             "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    w = last_json(out)
    assert {"run_dir", "checks", "final_mem_ratio", "seconds"} <= set(w) and w["checks"] == 2
    assert 0.0 <= w["final_mem_ratio"] <= 1.0

    code, out, err = run_cli(capsys, "inspect", str(run), "--json")
    assert code == 0, err
    info = last_json(out)
    assert info["checks"] == 2 and "concentration" in info["summary"]

    code, out, err = run_cli(capsys, "prune", str(run), "--p", "0.1", "--k", "2", "--out",
                             str(small_files / "pruned.csv"))
    assert code == 0, err
    pr = last_json(out)
    assert pr["removed"] == 20 and pr["kept"] == 180
    pruned = pd.read_csv(small_files / "pruned.csv")
    assert len(pruned) == 180 and "row_id" not in pruned.columns

    code, out, err = run_cli(capsys, "inspect", str(small_files))
    assert code == 2 and "not a memviz run" in err


def test_console_script_runs_as_a_module(small_files):
    proc = subprocess.run([sys.executable, "-m", "memviz", "memorize", "--train", str(small_files / "train.csv"),
                           "--synthetic", str(small_files / "syn.csv"), "--out", str(small_files / "m.csv"),
                           "--device", "cpu", "--quiet"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1])["n_synthetic"] == 42


@pytest.mark.parametrize("argv, needle", [
    (["warmup", "--model-params", "{bad"], "not valid JSON"),
    (["warmup", "--model-params", '{"foo": 1}'], "'foo'"),
    (["warmup", "--model-params", '{"layers": "ab"}'], "invalid value"),
    (["warmup", "--model-params", '{"seed": 3}'], "'seed'"),
    (["compare", "--test", "TEST", "--methods", "baseline,dynamiccut", "--p", "2"], "p must be"),
])
def test_bad_options_exit_2_before_any_work(capsys, small_files, argv, needle):
    out_dir = small_files / "out_dir"
    argv = [str(small_files / "syn.csv") if a == "TEST" else a for a in argv]
    code, out, err = run_cli(capsys, *argv, "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--out", str(out_dir), "--device", "cpu", "--quiet")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert not out_dir.exists()  # nothing created for a rejected command


def test_study_bad_seeds_exit_2(capsys, tmp_path):
    code, out, err = run_cli(capsys, "study", "--data-dir", str(tmp_path), "--out", str(tmp_path / "o"),
                             "--seeds", "a,b")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--seeds" in err


# ------------------------------------------------------------------ the floor
@pytest.fixture()
def holdout_csv(small_files, sample):
    """300 real rows outside the 200 training rows of ``small_files`` (sample rows 1000-1299)."""
    train, _ = sample
    train.data.iloc[1000:1300].to_csv(small_files / "holdout.csv", index=False)
    return small_files / "holdout.csv"


def test_memorize_with_a_holdout_reports_the_floor_and_each_rows_null(capsys, small_files, holdout_csv):
    rows_csv = small_files / "rows.csv"
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--synthetic", str(small_files / "syn.csv"),
                             "--holdout", str(holdout_csv), "--rows-out", str(rows_csv),
                             "--out", str(small_files / "out.csv"), "--device", "cpu", "--quiet")
    assert code == 0, err
    s = last_json(out)
    assert s["n_holdout"] == 300 and 0 <= s["floor"] <= 1
    lo, hi = s["floor_ci"]
    assert lo <= s["floor"] <= hi
    assert s["excess"] == pytest.approx(s["mem_ratio"] - s["floor"])
    assert s["excess_ci"][0] <= s["excess"] <= s["excess_ci"][1]
    rows = pd.read_csv(rows_csv)
    assert list(rows.columns) == ["row_id", "copies", "holdout_hits", "expected", "excess", "p_value", "q_value",
                                  "over_copied"]
    assert len(rows) == 200 and rows["copies"].sum() == round(s["mem_ratio"] * s["n_synthetic"])
    assert rows.set_index("row_id").loc[[7, 3], "copies"].min() >= 1          # the two planted copies
    np.testing.assert_allclose(rows["excess"], rows["copies"] - rows["expected"])
    res = pd.read_csv(small_files / "out.csv")                                 # how close each row really is
    assert list(res.columns[6:]) == ["exact", "near_exact", "zero_by_scaling", "max_gap"]
    assert res["exact"].iloc[-2:].all() and s["n_identical"] == int(res["exact"].sum()) >= 2
    assert s["identical_share"] == pytest.approx(res["exact"].mean())


def test_memorize_rows_out_needs_a_holdout(capsys, small_files):
    code, out, err = run_cli(capsys, "memorize", "--train", str(small_files / "train.csv"), "--synthetic",
                             str(small_files / "syn.csv"), "--rows-out", str(small_files / "r.csv"),
                             "--out", str(small_files / "o.csv"), "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--holdout" in err
    assert not (small_files / "o.csv").exists()


def test_warmup_with_a_holdout_then_inspect_shows_the_floor_in_plain_words(capsys, small_files, holdout_csv):
    run = small_files / "run"
    code, out, err = run_cli(capsys, "warmup", "--train", str(small_files / "train.csv"), "--schema",
                             str(SAMPLE / "meta.json"), "--holdout", str(holdout_csv), "--out", str(run),
                             "--epochs", "4", "--check-every", "2", "--n-samples", "50", "--device", "cpu",
                             "--quiet", "--model-params", json.dumps(TINY_MODEL))
    assert code == 0, err
    code, out, err = run_cli(capsys, "inspect", str(run), "--json")
    assert code == 0, err
    info = last_json(out)
    f = info["floor"]
    assert f["n_holdout"] == 300 and f["floor_ci"][0] <= f["floor"] <= f["floor_ci"][1]
    pc = info["per_check"]
    assert len(pc["excess"]) == 2 and all(a <= x <= b for x, a, b in zip(pc["excess"], pc["excess_low"],
                                                                         pc["excess_high"]))
    assert info["final_excess"]["excess"] == pytest.approx(pc["excess"][-1])
    code, out, err = run_cli(capsys, "inspect", str(run))
    text = out.strip().splitlines()[:-1]
    assert any(line.startswith("floor: real rows the model never saw (300 hold-out rows)") for line in text)
    assert any(line.startswith("Real rows the model never saw are flagged at") for line in text)
    assert any(line.startswith("points above the floor per check: e2:") for line in text)
    from memviz.app import runs                                               # the dashboard finds its hold-out
    assert runs.run_holdout(runs.load_run(run)) is not None                   # again from the floor's source


def test_inspect_of_a_run_without_holdout_says_there_is_no_floor(capsys, small_files, tmp_path):
    from dash_helpers import copier_run
    from memviz.data import load_table

    train = load_table(small_files / "train.csv", SAMPLE / "meta.json")
    copier_run(train, tmp_path / "run")
    code, out, err = run_cli(capsys, "inspect", str(tmp_path / "run"))
    assert code == 0, err
    assert any(line.startswith("no floor: this run was given no hold-out") for line in out.splitlines())
    assert last_json(out)["floor"] is None and "excess" not in last_json(out)["per_check"]
