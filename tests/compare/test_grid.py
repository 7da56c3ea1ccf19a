import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from memviz.cli import main
from memviz.compare import format_summary, results_frame, summary_table
from memviz.compare.methods import METHODS, apply_method
from memviz.compare.ranking import selections_from_run
from memviz.dynamics.dynamiccut import DynamicCutParams
from memviz.errors import MemvizError
from memviz.tables.data import fingerprint, load_table, sample_data_dir

from .stubs import TINY, grid

META = sample_data_dir() / "meta.json"


def added_ids(res):
    """The row ids of the rows a mitigation appended (the last ``res.added`` of its table)."""
    ids = res.table.row_ids
    return ids[len(ids) - res.added:]


# ------------------------------------------------------------------ methods
def test_methods_registry(tables):
    train = tables[0]
    before = train.data.copy()
    sel = np.random.default_rng(1).choice(train.row_ids, size=20, replace=False)
    out = {m: apply_method(m, train, selection=sel, seed=3) for m in METHODS}
    pd.testing.assert_frame_equal(train.data, before)                          # inputs not mutated
    for m, res in out.items():
        assert res.method == m
        assert list(res.table.data.columns) == list(train.schema.columns) and res.table.schema == train.schema
        assert len(res.table) == len(train) - len(res.removed) + res.added
    pd.testing.assert_frame_equal(out["baseline"].table.data, train.data)
    assert np.array_equal(out["dynamiccut"].removed, np.sort(sel))
    assert np.array_equal(out["dynamiccut"].table.row_ids, train.drop(sel).row_ids)
    assert len(out["random"].removed) == len(sel) and set(out["random"].removed) <= set(train.row_ids)
    assert not set(out["random"].removed) <= set(sel)                          # uniform draw, not the ranking
    mix = out["dynamiccutmix"]                                                  # prune, then TabCutMix on kept rows
    kept = train.drop(sel)
    n_kept = len(train) - len(sel)
    pd.testing.assert_frame_equal(mix.table.data.iloc[:n_kept], kept.data)
    assert mix.added == math.floor(0.3 * n_kept + 0.5) and np.array_equal(mix.removed, np.sort(sel))
    assert added_ids(mix).min() > train.row_ids.max()                           # no id of a pruned row reused
    assert set(mix.sources["a"]) | set(mix.sources["b"]) <= set(kept.row_ids)
    for m in ("tabcutmix", "tabcutmixplus", "tabcutmixplus_dtype", "smote", "smote_nc"):
        assert out[m].added == math.floor(0.3 * len(train) + 0.5) and len(out[m].removed) == 0
    minority = train.data["income"].value_counts().idxmin()
    assert (out["smote"].table.data.loc[added_ids(out["smote"]), "income"] == minority).all()   # the reference's
    assert out["smote_nc"].table.data.loc[added_ids(out["smote_nc"]), "income"].nunique() == 2   # every class
    assert np.array_equal(out["dynamiccut_excess"].removed, np.sort(sel))
    # without a ranking: random drops DynamicCut's budget ceil(p N); dynamiccut refuses
    assert len(apply_method("random", train, p=0.13).removed) == math.ceil(0.13 * len(train))
    with pytest.raises(MemvizError, match="ranking"):
        apply_method("dynamiccut", train)
    with pytest.raises(MemvizError, match="unknown method"):
        apply_method("dropout", train)


def test_summary_relative_reduction_by_hand():
    rec = [dict(method=me, model="m", seed=s, mem_ratio=v, mem_auc=v / 2, status="ok")
           for me, s, v in [("baseline", 0, 0.4), ("baseline", 1, 0.5), ("dynamiccut", 0, 0.3),
                            ("dynamiccut", 1, 0.45), ("random", 0, 0.38)]]
    rec.append(dict(method="random", model="m", seed=1, status="failed", error="boom"))
    res = results_frame(rec)
    rr = dict(zip(zip(res["method"], res["seed"]), res["relative_reduction"]))
    assert rr[("baseline", 0)] == 0 and rr[("dynamiccut", 0)] == pytest.approx(0.25)
    assert rr[("dynamiccut", 1)] == pytest.approx(0.1) and np.isnan(rr[("random", 1)])
    s = summary_table(res).set_index("method")
    assert list(s.index) == ["baseline", "dynamiccut", "random"]
    assert s.loc["dynamiccut", "relative_reduction_mean"] == pytest.approx(0.175)
    assert s.loc["dynamiccut", "mem_ratio_std"] == pytest.approx(np.std([0.3, 0.45], ddof=1))
    assert s.loc["random", "n_seeds"] == 1 and np.isnan(s.loc["random", "mem_ratio_std"])
    text = format_summary(summary_table(res))
    assert "dynamiccut" in text and "+17.5%" in text


# --------------------------------------------------------------------- grid
def test_grid_resumable(tables, tmp_path, stub):
    train, test = tables
    kw = dict(device="cpu", p=0.1, threads=1)
    cells = (["baseline", "tabcutmix", "random"], ["ctgan"], [0])
    res = grid(train, test, *cells, tmp_path, **kw)
    assert len(stub.fits) == 3 and (res["status"] == "ok").all()
    csv = pd.read_csv(tmp_path / "results.csv")
    for c in ("method", "model", "seed", "mem_ratio", "mem_ratio_pruned", "mem_auc", "shape", "trend", "mle",
              "dcr_share", "relative_reduction", "mle_real", "fit_seconds", "sample_seconds", "evaluate_seconds"):
        assert c in csv.columns, c
    for c in ("mem_ratio", "mem_ratio_pruned", "mem_auc", "shape", "trend", "mle", "mle_real", "dcr_share"):
        assert csv[c].between(0, 1).all(), c
    assert (csv["mem_ratio"] > 0.5).all()                                          # the stub copies rows
    assert (csv.loc[csv.method == "random", "n_removed"] == 20).all()
    assert (csv.loc[csv.method == "random", "n_train_used"] == 180).all()
    assert (csv.loc[csv.method == "tabcutmix", "n_added"] == 60).all()
    assert (csv.loc[csv.method == "baseline", "relative_reduction"] == 0).all()
    assert csv["mle_real"].nunique() == 1                                          # one reference per seed
    for _, r in csv.iterrows():
        syn = pd.read_parquet(tmp_path / r["synthetic"])
        assert len(syn) == len(train) and list(syn.columns) == list(train.schema.columns)
    # a rerun skips every finished cell and gives the same table
    again = grid(train, test, *cells, tmp_path, **kw)
    assert len(stub.fits) == 3
    pd.testing.assert_frame_equal(again, res)
    # a lost cell, and a setting that changes only the augmenting cell, are recomputed
    next((tmp_path / "cells").glob("baseline_ctgan_0_*.json")).unlink()
    grid(train, test, *cells, tmp_path, ratio=0.2, **kw)
    assert [n for _, n in stub.fits[3:]] == [200, 240]                            # baseline, tabcutmix 20 %


def test_auto_warmup_and_transfer(tables, tmp_path, stub):
    train, test = tables
    res = grid(train, None, ["dynamiccut", "random"], ["tvae", "ctgan"], [0], tmp_path,
                              epochs=2, device="cpu", model_params={"tabddpm": TINY}, threads=1)
    assert (tmp_path / "warmup" / "manifest.json").exists()
    sel = pd.read_csv(tmp_path / "selection.csv")
    removed = set(sel.loc[sel["removed"], "row_id"])
    assert len(removed) == 20 and (res["n_removed"] == 20).all()
    # the same TabDDPM ranking prunes the data of every model
    assert [n for _, n in stub.fits] == [180] * 4
    assert res["mle"].isna().all() and res["dcr_share"].isna().all()              # no test split
    m = json.loads((tmp_path / "warmup" / "manifest.json").read_text())
    grid(train, None, ["dynamiccut", "random"], ["tvae", "ctgan"], [0], tmp_path,
                        epochs=2, device="cpu", model_params={"tabddpm": TINY}, threads=1)
    assert len(stub.fits) == 4 and json.loads((tmp_path / "warmup" / "manifest.json").read_text()) == m


def test_run_of_another_table_is_refused(tables, files, run_dir):
    other = load_table(files / "other.csv", META)
    assert fingerprint(other) != fingerprint(tables[0])
    with pytest.raises(MemvizError, match="another table"):
        selections_from_run(run_dir, other)
    sel = selections_from_run(run_dir, tables[0], params=DynamicCutParams(0.1))["raw"]
    assert len(sel.removed) == 20


# ---------------------------------------------------------------------- CLI
def test_cli_compare_contract(files, run_dir, tmp_path, capsys):
    out = tmp_path / "res"
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                 "--schema", str(META), "--run", str(run_dir), "--methods", "baseline,dynamiccut",
                 "--models", "tabddpm", "--seeds", "0", "--epochs", "1", "--device", "cpu", "--out", str(out),
                 "--quiet"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    lines = cap.out.strip().splitlines()
    last = json.loads(lines[-1])
    assert last["cells"] == 2 and last["failed"] == 0 and last["n_removed"] == 20
    assert set(last["mem_ratio"]) == {"baseline", "dynamiccut"}
    assert any("dynamiccut" in line for line in lines[:-1])                       # the summary table
    head = lines[0]
    for col in ("floor", "excess", "mem vs kept", "floor vs kept", "control"):
        assert col in head, col
    csv = pd.read_csv(last["results_csv"])
    assert len(csv) == 2 and (csv["status"] == "ok").all() and csv["mem_ratio"].between(0, 1).all()
    assert csv.loc[csv["method"] == "dynamiccut", "n_train_used"].tolist() == [180]
    assert csv["floor"].between(0, 1).all() and (csv["n_holdout"] == 100).all()
    assert (csv["excess"] - (csv["mem_ratio"] - csv["floor"])).abs().max() < 1e-12
    assert last["floor"] == pytest.approx(csv["floor"].iloc[0])                    # the JSON line says it too
    assert last["excess"] == pytest.approx(dict(zip(csv["method"], csv["excess"])))
    cut = csv[csv["method"] == "dynamiccut"].iloc[0]
    for c in ("mem_ratio_kept", "floor_kept", "control_kept", "n_flagged_removed"):
        assert np.isfinite(cut[c]) and np.isnan(csv.loc[csv["method"] == "baseline", c]).all(), c


def test_cli_compare_bad_run(files, run_dir, tmp_path, capsys):
    code = main(["compare", "--train", str(files / "other.csv"), "--test", str(files / "test.csv"),
                 "--schema", str(META), "--run", str(run_dir), "--methods", "baseline,dynamiccut",
                 "--models", "tabddpm", "--out", str(tmp_path / "res"), "--quiet"])
    cap = capsys.readouterr()
    assert code == 2 and cap.out == ""
    assert len(cap.err.strip().splitlines()) == 1 and "another table" in cap.err


def test_cli_compare_bad_lists(files, tmp_path, capsys):
    base = ["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"), "--schema",
            str(META), "--out", str(tmp_path / "res"), "--quiet"]
    assert main(base + ["--methods", "baseline,dropout"]) == 2
    assert main(base + ["--models", "gpt"]) == 2
    assert main(base + ["--seeds", "0,x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "dropout" in err[0] and "gpt" in err[1] and "seeds" in err[2]


@pytest.mark.parametrize("params, words", [({"tabddpm": {"epochs": 0}}, "epochs"),
                                           ({"ctgan": {"epochs": 0}}, "epochs"),
                                           ({"tvae": {"batch_size": -1}}, "batch_size"),
                                           ({"tabddpm": {"layerz": [8]}}, "layerz")])
def test_cli_compare_bad_model_params_fail_before_any_work(files, tmp_path, capsys, params, words):
    code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"), "--schema",
                 str(META), "--out", str(tmp_path / "res"), "--quiet", "--model-params", json.dumps(params)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and words in err[0], err
    assert not (tmp_path / "res").exists()


# --------------------------------------------------------------------- dask
@pytest.mark.slow
def test_dask_local_cluster_matches_local(tables, tmp_path):
    distributed = pytest.importorskip("distributed")
    train, test = tables
    kw = dict(epochs=2, device="cpu", model_params={"tabddpm": TINY}, threads=1)
    cells = (["baseline", "tabcutmix"], ["tabddpm"], [0])
    local = grid(train, test, *cells, tmp_path / "local", **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        remote = grid(train, test, *cells, tmp_path / "dask", backend="dask", scheduler=cluster, **kw)
    assert (remote["status"] == "ok").all() and len(remote) == 2
    figures = ["mem_ratio", "mem_ratio_pruned", "mem_auc", "shape", "trend", "mle", "mle_real", "dcr_share",
               "n_train_used", "n_added"]
    pd.testing.assert_frame_equal(local[figures], remote[figures])
    for name in ("baseline_tabddpm_0", "tabcutmix_tabddpm_0"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "local" / "synthetic" / f"{name}.parquet"),
                                      pd.read_parquet(tmp_path / "dask" / "synthetic" / f"{name}.parquet"))


# ------------------------------------------------------------- one writer
def _hold_lock(folder):
    """Another process holding the comparison folder's writer lock (as a running `memviz compare`)."""
    folder.mkdir(parents=True, exist_ok=True)
    code = ("import fcntl, sys, time; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(folder / "writer.lock")], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_writer_of_a_comparison_folder_is_refused(tables, tmp_path, stub):
    """Two `memviz compare` runs into one --out overwrote each other's results.csv."""
    train, test = tables
    proc = _hold_lock(tmp_path)
    try:
        with pytest.raises(MemvizError, match="another process is writing"):
            grid(train, test, ["baseline"], ["ctgan"], [0], tmp_path, device="cpu", threads=1)
        assert stub.fits == [] and not (tmp_path / "results.csv").exists()
    finally:
        proc.kill()
        proc.wait()
    res = grid(train, test, ["baseline"], ["ctgan"], [0], tmp_path, device="cpu", threads=1)  # the lock is free again
    assert (res["status"] == "ok").all()
    grid(train, test, ["baseline"], ["ctgan"], [0], tmp_path, device="cpu", threads=1)     # and released after a run


def test_cli_compare_into_a_folder_being_written_is_one_line(files, tmp_path, capsys):
    proc = _hold_lock(tmp_path / "res")
    try:
        code = main(["compare", "--train", str(files / "train.csv"), "--test", str(files / "test.csv"),
                     "--schema", str(META), "--methods", "baseline", "--models", "ctgan", "--epochs", "1",
                     "--device", "cpu", "--out", str(tmp_path / "res"), "--quiet"])
    finally:
        proc.kill()
        proc.wait()
    cap = capsys.readouterr()
    assert code == 2 and len(cap.err.strip().splitlines()) == 1 and "another process is writing" in cap.err
    assert not (tmp_path / "res" / "results.csv").exists()
