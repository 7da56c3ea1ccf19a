import json
import math

import numpy as np
import pandas as pd
import pytest

import memviz.compare.cell as cell
from memviz.cli import main
from memviz.compare import CompareConfig, format_summary, results_frame, run_grid, summary_table
from memviz.compare.methods import METHODS, apply_method
from memviz.compare.ranking import selection_from_run
from memviz.data import load_dataset, load_table, sample_data_dir
from memviz.errors import MemvizError
from memviz.store import fingerprint
from memviz.warmup import WarmupConfig, run_warmup

TINY = {"layers": (32, 32), "dim_t": 16, "n_timesteps": 10, "batch_size": 64}
META = sample_data_dir() / "meta.json"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """200 training rows, another 200 training rows and 100 test rows of the Adult sample, as CSV."""
    d = tmp_path_factory.mktemp("data")
    train = pd.read_csv(sample_data_dir() / "train.csv")
    test = pd.read_csv(sample_data_dir() / "test.csv")
    train.iloc[:200].to_csv(d / "train.csv", index=False)
    train.iloc[200:400].to_csv(d / "other.csv", index=False)
    test.iloc[:100].to_csv(d / "test.csv", index=False)
    return d


@pytest.fixture(scope="module")
def tables(files):
    train = load_table(files / "train.csv", META)
    test = load_table(files / "test.csv", train.schema, role="test")
    return train, test


@pytest.fixture(scope="module")
def run_dir(tables, tmp_path_factory):
    """A finished tiny warm-up on the 200-row training table."""
    path = tmp_path_factory.mktemp("runs") / "warm"
    run_warmup(tables[0], WarmupConfig(epochs=3, check_every=1, device="cpu", model_params=TINY, seed=0), path)
    return path


class Stub:
    """A 'generator' that resamples its training rows (a perfect copier); counts fits."""

    fits = []

    def __init__(self, name, epochs=None, device="cpu", seed=0, **params):
        self.name, self.epochs, self.seed = name, epochs, seed

    def fit(self, table, callbacks=()):
        Stub.fits.append((self.name, len(table)))
        self.table_, self.epoch_, self.device_ = table, self.epochs or 1, "cpu"
        return self

    def sample(self, n, seed=None):
        rng = np.random.default_rng(seed)
        return self.table_.data.iloc[rng.integers(0, len(self.table_), n)].reset_index(drop=True)


@pytest.fixture
def stub(monkeypatch):
    Stub.fits = []
    monkeypatch.setattr(cell, "make_model", lambda name, **kw: Stub(name, **kw))
    return Stub


def grid(train, test, methods, models, seeds, out, **settings):
    """run_grid with a CompareConfig of these settings (one cell at a time unless given)."""
    settings.setdefault("n_jobs", 1)
    return run_grid(train, test, CompareConfig(methods=tuple(methods), models=tuple(models), seeds=tuple(seeds),
                                               **settings), out)


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
    assert mix.added_ids.min() > train.row_ids.max()                           # no id of a pruned row reused
    assert set(mix.sources["a"]) | set(mix.sources["b"]) <= set(kept.row_ids)
    for m in ("tabcutmix", "tabcutmixplus", "smote"):
        assert out[m].added == math.floor(0.3 * len(train) + 0.5) and len(out[m].removed) == 0
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
        selection_from_run(run_dir, other)
    sel = selection_from_run(run_dir, tables[0], p=0.1)
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
    csv = pd.read_csv(last["results_csv"])
    assert len(csv) == 2 and (csv["status"] == "ok").all() and csv["mem_ratio"].between(0, 1).all()
    assert csv.loc[csv["method"] == "dynamiccut", "n_train_used"].tolist() == [180]


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
